/*
 * proto/outq.c — frames queued for a non-blocking socket (proto/outq.h).
 * One sendmsg per attempt: the kernel never merges data across a control
 * message on receive, so a descriptor sent with a frame's first byte is
 * found with its header (proto/msg.c's reader relies on that).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "proto/msg.h"
#include "proto/outq.h"

/* An empty queue. */
void outq_init(struct outq *q)
{
	memset(q, 0, sizeof(*q));
}

/* Pack one frame, header and payload, at the queue's tail. */
void outq_push(struct outq *q, uint16_t type, const void *payload, size_t len, int fd)
{
	struct outq_frame *f = xmalloc(sizeof(*f) + MSG_HEADER_LEN + len);

	f->next = NULL;
	f->fd = fd;
	f->secret = false;
	f->off = 0;
	f->len = MSG_HEADER_LEN + len;
	msg_put_header(f->bytes, (uint32_t)len, type, fd >= 0 ? 1 : 0);
	if (len)
		memcpy(f->bytes + MSG_HEADER_LEN, payload, len);
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
	q->bytes += f->len;
}

/* A frame holding a key: the same, marked to be wiped. */
void outq_push_secret(struct outq *q, uint16_t type, const void *payload, size_t len)
{
	outq_push(q, type, payload, len, -1);
	q->tail->secret = true;
}

/* Free a frame, wiping it first when it held a secret. */
static void frame_free(struct outq_frame *f)
{
	if (f->secret)
		explicit_bzero(f->bytes, f->len);
	free(f);
}

/* Attach f's descriptor to mh as SCM_RIGHTS, in ctl (room for one int). */
static void put_fd(struct msghdr *mh, char *ctl, size_t ctl_len, int fd)
{
	struct cmsghdr *c;

	memset(ctl, 0, ctl_len);
	mh->msg_control = ctl;
	mh->msg_controllen = ctl_len;
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

/* Send frames until the queue is empty or the socket is full. */
int outq_flush(struct outq *q, int sock)
{
	while (q->head) {
		struct outq_frame *f = q->head;
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} ctl;
		struct iovec iov = { .iov_base = f->bytes + f->off, .iov_len = f->len - f->off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (f->fd >= 0)
			put_fd(&mh, ctl.buf, sizeof(ctl.buf), f->fd);
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 1;
		if (n < 0)
			return -1;
		if (f->fd >= 0) {
			/* It is the peer's now; our copy goes. */
			close(f->fd);
			f->fd = -1;
		}
		f->off += (size_t)n;
		q->bytes -= (size_t)n;
		if (f->off < f->len)
			continue;
		q->head = f->next;
		if (!q->head)
			q->tail = NULL;
		frame_free(f);
	}
	return 0;
}

/* Free every frame, closing descriptors not sent. */
void outq_clear(struct outq *q)
{
	while (q->head) {
		struct outq_frame *f = q->head;

		q->head = f->next;
		if (f->fd >= 0)
			close(f->fd);
		frame_free(f);
	}
	outq_init(q);
}
