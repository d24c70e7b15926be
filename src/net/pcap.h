/*
 * net/pcap.h — the --pcap capture: every Ethernet frame that crossed the
 * sandbox's TAP device, in the classic pcap format (microsecond stamps,
 * link type Ethernet), never truncated.
 *
 * The file is created by the daemon before boxy-net starts; boxy-net only
 * receives its descriptor and appends to it. The capture stops, for good,
 * at the first frame that would take the file past its cap, and at the
 * first write error: a capture is either a faithful prefix of the traffic
 * or it says where it stopped, never a file with holes.
 */
#ifndef BOXY_NET_PCAP_H
#define BOXY_NET_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCAP_MAGIC_USEC   0xa1b2c3d4u
#define PCAP_LINKTYPE_ETH 1
#define PCAP_SNAPLEN      262144u   /* what tshark expects; boxy's frames are far shorter */
#define PCAP_FILE_HEADER  24
#define PCAP_REC_HEADER   16

enum pcap_state {
	PCAP_WRITING = 0,
	PCAP_FULL,          /* the next frame would have exceeded the cap */
	PCAP_FAILED,        /* a write failed (errno saved) */
};

struct net_pcap {
	int fd;
	uint64_t cap;               /* bytes, file header included */
	uint64_t written;           /* bytes in the file so far */
	uint64_t frames;            /* frames written */
	enum pcap_state state;
	int saved_errno;
};

/*
 * Start a capture on fd (owned by the caller) with a size cap in bytes:
 * writes the file header. Returns 0, or -1 with *err set (the cap is too
 * small for the header, or the write failed).
 */
int net_pcap_open(struct net_pcap *pc, int fd, uint64_t cap, char **err);

/*
 * Append one frame with its time stamp (microseconds since the epoch).
 * Returns 0 when written, -1 when the capture is stopped (full or failed),
 * now or before; the caller reports the first stop once.
 */
int net_pcap_write(struct net_pcap *pc, const void *frame, size_t len, uint64_t usec);

/* Encode the 24-byte file header (pure; for the writer and its tests). */
void net_pcap_file_header(uint8_t out[PCAP_FILE_HEADER]);
/* Encode one 16-byte record header (pure). */
void net_pcap_record_header(uint8_t out[PCAP_REC_HEADER], size_t len, uint64_t usec);

#endif
