/*
 * proto/msg.c — frames and descriptors on a SOCK_STREAM unix socket (and, one
 * frame per record, on a SOCK_SEQPACKET one: msg_read_packet).
 *
 * Descriptors ride on the first byte of their frame (the header), sent in
 * the same sendmsg; the kernel never merges data across a control message
 * boundary on receive, so the receiver finds them with the header. Anything
 * unexpected — too many descriptors, descriptors on a frame that announced
 * none, a length over the cap — ends the connection: a confused peer is
 * worth less than the daemon's state.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/msg.h"
#include "common/util.h"

/* The 8-byte frame header: u32 length, u16 type, u16 descriptors. */
void msg_put_header(uint8_t *h, uint32_t len, uint16_t type, uint16_t nfds)
{
	for (int i = 0; i < 4; i++)
		h[i] = (uint8_t)(len >> (8 * i));
	h[4] = (uint8_t)type;
	h[5] = (uint8_t)(type >> 8);
	h[6] = (uint8_t)nfds;
	h[7] = (uint8_t)(nfds >> 8);
}

static int wait_writable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, -1) < 0 && errno != EINTR ? -1 : 0;
}

int msg_send(int fd, uint16_t type, const void *payload, size_t len,
	     const int *fds, size_t nfds)
{
	uint8_t hdr[MSG_HEADER_LEN];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * MSG_MAX_FDS)];
	} ctl;
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t total = MSG_HEADER_LEN + len, sent = 0;
	bool fds_sent = false;

	if (len > MSG_MAX_LEN || nfds > MSG_MAX_FDS) {
		errno = EMSGSIZE;
		return -1;
	}
	msg_put_header(hdr, (uint32_t)len, type, (uint16_t)nfds);
	while (sent < total) {
		ssize_t n;

		if (sent < MSG_HEADER_LEN) {
			iov[0].iov_base = hdr + sent;
			iov[0].iov_len = MSG_HEADER_LEN - sent;
			iov[1].iov_base = (void *)payload;
			iov[1].iov_len = len;
			mh.msg_iovlen = len ? 2 : 1;
		} else {
			iov[0].iov_base = (uint8_t *)payload + (sent - MSG_HEADER_LEN);
			iov[0].iov_len = total - sent;
			mh.msg_iovlen = 1;
		}
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
		if (nfds && !fds_sent) {
			struct cmsghdr *c;

			memset(&ctl, 0, sizeof(ctl));
			mh.msg_control = ctl.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
			memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
		}
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && wait_writable(fd) == 0)
				continue;
			return -1;
		}
		fds_sent = true;
		sent += (size_t)n;
	}
	return 0;
}

void msg_reader_init(struct msg_reader *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < MSG_MAX_FDS; i++)
		r->cur.fds[i] = -1;
}

void msg_free(struct msg *m)
{
	free(m->payload);
	m->payload = NULL;
	for (size_t i = 0; i < m->nfds; i++) {
		if (m->fds[i] >= 0)
			close(m->fds[i]);
		m->fds[i] = -1;
	}
	m->nfds = 0;
}

void msg_reader_reset(struct msg_reader *r)
{
	msg_free(&r->cur);
	msg_reader_init(r);
}

/* Take the descriptors of a control message; -1 if they break the rules. */
static int take_fds(struct msg_reader *r, struct msghdr *mh, char **err)
{
	int bad = 0;

	if (mh->msg_flags & MSG_CTRUNC)
		bad = 1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;
		int *fds;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(c);
		for (size_t i = 0; i < n; i++) {
			/* Only with the header, and never more than the cap. */
			if (r->hdr_got > 0 || r->cur.nfds >= MSG_MAX_FDS) {
				close(fds[i]);
				bad = 1;
				continue;
			}
			r->cur.fds[r->cur.nfds++] = fds[i];
		}
	}
	if (bad)
		return set_err(err, _("descriptors sent out of place or too many"));
	return 0;
}

int msg_read(struct msg_reader *r, int fd, struct msg *out, char **err)
{
	for (;;) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int) * MSG_MAX_FDS)];
		} ctl;
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (r->hdr_got < MSG_HEADER_LEN) {
			iov.iov_base = r->hdr + r->hdr_got;
			iov.iov_len = MSG_HEADER_LEN - r->hdr_got;
		} else {
			iov.iov_base = r->cur.payload + r->cur.len;
			iov.iov_len = r->want - r->cur.len;
		}
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return set_err_errno(err, _("reading from peer"));
		}
		/* take_fds checks the descriptors came with the frame's first byte. */
		if (mh.msg_controllen && take_fds(r, &mh, err) < 0)
			return -1;
		if (n == 0) {
			if (r->hdr_got || r->cur.nfds)
				return set_err(err, _("peer closed the connection mid-message"));
			return -1;
		}
		if (r->hdr_got < MSG_HEADER_LEN) {
			r->hdr_got += (size_t)n;
			if (r->hdr_got < MSG_HEADER_LEN)
				continue;
			r->want = (size_t)r->hdr[0] | (size_t)r->hdr[1] << 8 |
				  (size_t)r->hdr[2] << 16 | (size_t)r->hdr[3] << 24;
			r->cur.type = (uint16_t)(r->hdr[4] | r->hdr[5] << 8);
			r->want_fds = (size_t)(r->hdr[6] | r->hdr[7] << 8);
			if (r->want > MSG_MAX_LEN)
				return set_err(err, _("message of %zu bytes is over the %u limit"),
					       r->want, MSG_MAX_LEN);
			if (r->want_fds != r->cur.nfds)
				return set_err(err, _("message announced %zu descriptors, carried %zu"),
					       r->want_fds, r->cur.nfds);
			r->cur.payload = xmalloc(r->want ? r->want : 1);
			r->cur.len = 0;
		} else {
			r->cur.len += (size_t)n;
		}
		if (r->hdr_got == MSG_HEADER_LEN && r->cur.len == r->want) {
			*out = r->cur;
			msg_reader_init(r);
			return 1;
		}
	}
}

int msg_read_packet(int fd, struct msg *out, char **err)
{
	/* One frame at a time, and the daemon and boxy-net are single-threaded. */
	static uint8_t buf[MSG_PACKET_MAX];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * MSG_MAX_FDS)];
	} ctl;
	uint8_t hdr[MSG_HEADER_LEN];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { buf, sizeof(buf) } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	struct msg_reader r;
	ssize_t n;

	do {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN)
			return 0;
		return set_err_errno(err, _("reading from peer"));
	}
	msg_reader_init(&r);
	/* The descriptors first, so that every error path below closes them. */
	if (mh.msg_controllen && take_fds(&r, &mh, err) < 0) {
		msg_reader_reset(&r);
		return -1;
	}
	if (n == 0 && !r.cur.nfds)
		return -1;
	if (mh.msg_flags & MSG_TRUNC) {
		msg_reader_reset(&r);
		return set_err(err, _("frame over the %u-byte limit of a packet socket"),
			       MSG_PACKET_MAX);
	}
	if ((size_t)n < MSG_HEADER_LEN) {
		msg_reader_reset(&r);
		return set_err(err, _("frame of %zd bytes is shorter than its header"), n);
	}
	r.want = (size_t)hdr[0] | (size_t)hdr[1] << 8 | (size_t)hdr[2] << 16 |
		 (size_t)hdr[3] << 24;
	r.cur.type = (uint16_t)(hdr[4] | hdr[5] << 8);
	r.want_fds = (size_t)(hdr[6] | hdr[7] << 8);
	if (r.want != (size_t)n - MSG_HEADER_LEN || r.want_fds != r.cur.nfds) {
		size_t want = r.want, want_fds = r.want_fds, nfds = r.cur.nfds;

		msg_reader_reset(&r);
		if (want != (size_t)n - MSG_HEADER_LEN)
			return set_err(err, _("frame announced %zu bytes, carried %zu"), want,
				       (size_t)n - MSG_HEADER_LEN);
		return set_err(err, _("message announced %zu descriptors, carried %zu"),
			       want_fds, nfds);
	}
	r.cur.payload = xmalloc(r.want ? r.want : 1);
	memcpy(r.cur.payload, buf, r.want);
	/* The payload is the caller's now; no copy of it stays behind for the
	 * process's life (NET_TLS_CA carries the session CA's key, which the
	 * caller wipes from its copy: doc/http-inspection.md). */
	explicit_bzero(buf, r.want);
	r.cur.len = r.want;
	*out = r.cur;
	return 1;
}

int msg_recv(int fd, struct msg *out, char **err)
{
	struct msg_reader r;
	int type = 0;
	socklen_t tl = sizeof(type);
	bool packet = getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
		      type == SOCK_SEQPACKET;

	msg_reader_init(&r);
	for (;;) {
		int rc = packet ? msg_read_packet(fd, out, err) : msg_read(&r, fd, out, err);

		if (rc == 1)
			return 1;
		if (rc < 0) {
			msg_reader_reset(&r);
			return -1;
		}
		/* EAGAIN on a non-blocking socket: wait for more. */
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			msg_reader_reset(&r);
			return set_err_errno(err, _("waiting for the daemon"));
		}
	}
}
