/*
 * net/pcap.c — the pcap writer behind --pcap (see net/pcap.h).
 *
 * Fields are written in the host's byte order, as the format intends: the
 * magic number tells a reader which order that was. Each frame goes out in
 * one writev() of record header plus frame, so a reader of a file that
 * stopped mid-run never sees a header without its bytes unless the disk
 * itself filled mid-write (then the state is FAILED and nothing follows).
 */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "net/pcap.h"
#include "common/util.h"

/* Classic pcap global header, host byte order. */
void net_pcap_file_header(uint8_t out[PCAP_FILE_HEADER])
{
	uint32_t magic = PCAP_MAGIC_USEC, snaplen = PCAP_SNAPLEN, link = PCAP_LINKTYPE_ETH;
	uint16_t major = 2, minor = 4;
	int32_t zone = 0;
	uint32_t sigfigs = 0;

	memcpy(out, &magic, 4);
	memcpy(out + 4, &major, 2);
	memcpy(out + 6, &minor, 2);
	memcpy(out + 8, &zone, 4);
	memcpy(out + 12, &sigfigs, 4);
	memcpy(out + 16, &snaplen, 4);
	memcpy(out + 20, &link, 4);
}

/* A record header: seconds, microseconds, captured = original length. */
void net_pcap_record_header(uint8_t out[PCAP_REC_HEADER], size_t len, uint64_t usec)
{
	uint32_t sec = (uint32_t)(usec / 1000000u), frac = (uint32_t)(usec % 1000000u);
	uint32_t l = (uint32_t)len;

	memcpy(out, &sec, 4);
	memcpy(out + 4, &frac, 4);
	memcpy(out + 8, &l, 4);           /* captured length: never truncated */
	memcpy(out + 12, &l, 4);          /* original length */
}

/* Write all of iov (short writes to a regular file are rare but legal). */
static int pcap_writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Check the cap and write the file header. */
int net_pcap_open(struct net_pcap *pc, int fd, uint64_t cap, char **err)
{
	uint8_t hdr[PCAP_FILE_HEADER];
	struct iovec iov = { hdr, sizeof(hdr) };

	memset(pc, 0, sizeof(*pc));
	pc->fd = fd;
	pc->cap = cap;
	if (cap < PCAP_FILE_HEADER) {
		pc->state = PCAP_FULL;
		return set_err(err, "pcap size cap %llu is smaller than the file header",
			       (unsigned long long)cap);
	}
	net_pcap_file_header(hdr);
	if (pcap_writev_all(fd, &iov, 1) < 0) {
		pc->state = PCAP_FAILED;
		pc->saved_errno = errno;
		return set_err_errno(err, "cannot write the pcap header");
	}
	pc->written = PCAP_FILE_HEADER;
	return 0;
}

/* One record, or stop for good (full or failed). */
int net_pcap_write(struct net_pcap *pc, const void *frame, size_t len, uint64_t usec)
{
	uint8_t rec[PCAP_REC_HEADER];
	struct iovec iov[2];

	if (pc->state != PCAP_WRITING)
		return -1;
	if (len > PCAP_SNAPLEN || pc->written + PCAP_REC_HEADER + len > pc->cap) {
		pc->state = PCAP_FULL;
		return -1;
	}
	net_pcap_record_header(rec, len, usec);
	iov[0] = (struct iovec){ rec, sizeof(rec) };
	iov[1] = (struct iovec){ (void *)frame, len };
	if (pcap_writev_all(pc->fd, iov, 2) < 0) {
		pc->state = PCAP_FAILED;
		pc->saved_errno = errno;
		return -1;
	}
	pc->written += PCAP_REC_HEADER + len;
	pc->frames++;
	return 0;
}
