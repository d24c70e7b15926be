/*
 * proto/outq.h — the one output queue of framed messages (proto/msg.h), for a
 * loop that must never block on a slow peer: the daemon's clients
 * (daemon/server.c) and its boxy-net control sockets (broker/broker.c).
 * A frame is packed once when queued, header and payload together, and
 * written later as far as the socket takes it; a descriptor passed with a
 * frame rides on its first byte and is closed here once it is sent.
 */
#ifndef BOXY_OUTQ_H
#define BOXY_OUTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct outq_frame {
	struct outq_frame *next;
	int fd;                     /* descriptor to send with the first byte, or -1 */
	bool secret;                /* wiped before it is freed (outq_push_secret) */
	size_t len, off;            /* bytes in the frame; bytes already written */
	uint8_t bytes[];
};

struct outq {
	struct outq_frame *head, *tail;
	size_t bytes;               /* queued and not yet written */
};

/* An empty queue. */
void outq_init(struct outq *q);
/* Queue one frame of type with len payload bytes, taking fd (-1: none). */
void outq_push(struct outq *q, uint16_t type, const void *payload, size_t len, int fd);
/* The same for a frame holding a secret (a key): its bytes are wiped once written or dropped. */
void outq_push_secret(struct outq *q, uint16_t type, const void *payload, size_t len);
/*
 * Write what the queue holds to sock without blocking. Returns 0 when the
 * queue is empty, 1 when the socket is full and frames remain, -1 (errno set)
 * when the socket failed.
 */
int outq_flush(struct outq *q, int sock);
/* Drop every frame, closing the descriptors not yet sent. */
void outq_clear(struct outq *q);

#endif
