/*
 * proto/msg.h — framed messages on the daemon's unix socket, with file
 * descriptors passed alongside (SCM_RIGHTS).
 *
 * A frame is an 8-byte header — u32 payload length, u16 type, u16 number of
 * descriptors — then the payload (proto/wire.h fields). Payloads are capped at
 * MSG_MAX_LEN and descriptors at MSG_MAX_FDS; a peer that exceeds either,
 * sends an unknown type or a malformed payload is disconnected, never
 * trusted and never fatal.
 *
 * Types are numbered by phase: 0x01xx handshake, 0x02xx requests,
 * 0x03xx replies, 0x04xx session streams.
 */
#ifndef BOXY_MSG_H
#define BOXY_MSG_H

#include <stddef.h>
#include <stdint.h>

#define MSG_PROTOCOL    1
#define MSG_HEADER_LEN  8
#define MSG_MAX_LEN     (1u << 20)
#define MSG_MAX_FDS     6           /* a run: stdio, audit log, net-log, pcap */

enum msg_type {
	/* handshake */
	MSG_HELLO = 0x0101,         /* u32 protocol, str build */
	MSG_WELCOME,                /* str build, u32 pid, u64 started_ms, u32 sessions, u32 subscribers,
	                               str state directory (its store: sessions.db there) */
	MSG_REFUSE,                 /* u16 reason code, str words */

	/* requests */
	MSG_RUN = 0x0201,           /* proto/msg-run.h; fds: named slots */
	MSG_STOP,                   /* str id-prefix, u8 kill-now */
	MSG_WATCH,                  /* str id-prefix (may be absent: the only running one) */
	MSG_ATTACH,                 /* str id-prefix */
	MSG_STATUS,                 /* nothing */
	MSG_SHUTDOWN,               /* nothing: stop the daemon (refused while sessions run) */
	MSG_LANG,                   /* str language, str locale: the words this client reads (common/lang.h) */
	MSG_RESUME,                 /* str id-prefix, u8 log-only: resume a frozen session */
	MSG_GATE,                   /* str session id, str words: its CI gate failed on them */

	/* replies */
	MSG_OK = 0x0301,            /* str words (may be absent) */
	MSG_ERROR,                  /* u16 exit code, str words */
	MSG_STARTED,                /* str session id */

	/* session streams */
	MSG_INPUT = 0x0401,         /* bytes for the payload's terminal */
	MSG_OUTPUT,                 /* bytes from the payload's terminal */
	MSG_WINSIZE,                /* u16 rows, u16 cols */
	MSG_DETACH,                 /* client leaves, session keeps running */
	MSG_EXIT,                   /* u32 exit code, str reason (may be absent) */
	MSG_EVENT,                  /* one event (common/event.h fields) */
	MSG_SNAPSHOT,               /* counters and destinations, once a second (daemon/session.c) */
	MSG_LOSS,                   /* u64 events this subscriber lost */
};

enum msg_refusal {
	REFUSE_PROTOCOL = 1,        /* a different protocol version */
	REFUSE_BUILD,               /* a different build: boxy run replaces an idle daemon */
	REFUSE_UID,                 /* not the daemon's user */
};

struct msg {
	uint16_t type;
	uint8_t *payload;           /* malloc'd, len bytes */
	size_t len;
	int fds[MSG_MAX_FDS];
	size_t nfds;
};

/* Pack a frame header (MSG_HEADER_LEN bytes at h): the one place its layout is written. */
void msg_put_header(uint8_t *h, uint32_t len, uint16_t type, uint16_t nfds);
/* Send one frame (blocking until written; the socket may be non-blocking: EAGAIN is waited out). */
int msg_send(int fd, uint16_t type, const void *payload, size_t len,
	     const int *fds, size_t nfds);

/* Incremental receiver for one connection. */
struct msg_reader {
	uint8_t hdr[MSG_HEADER_LEN];
	size_t hdr_got;
	struct msg cur;
	size_t want;                /* payload length from the header */
	size_t want_fds;
};

void msg_reader_init(struct msg_reader *r);
/* Close any descriptors and free what a half-read message holds. */
void msg_reader_reset(struct msg_reader *r);
/*
 * Read what is available on fd. Returns 1 with *out filled (the caller owns
 * it: msg_free) when a whole frame arrived, 0 when more is needed (EAGAIN),
 * -1 on EOF (with *err NULL) or a protocol violation (with *err set).
 */
int msg_read(struct msg_reader *r, int fd, struct msg *out, char **err);
/*
 * The same frames on a SOCK_SEQPACKET socket (the broker and boxy-net):
 * one record is one frame, read with one recvmsg, descriptors and all, so a
 * frame costs one system call instead of two. Frames there are capped at
 * MSG_PACKET_MAX. Same returns as msg_read; no reader state is needed.
 */
#define MSG_PACKET_MAX  (64u << 10)
int msg_read_packet(int fd, struct msg *out, char **err);
/* Blocking: read exactly one frame (either socket type). Same returns as msg_read but never 0. */
int msg_recv(int fd, struct msg *out, char **err);
/* Free the payload and close any descriptors not taken (set to -1 to take one). */
void msg_free(struct msg *m);

#endif
