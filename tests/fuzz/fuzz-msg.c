/*
 * fuzz-msg.c — libFuzzer target for the daemon's frame reader
 * (src/proto/msg.c: msg_read, what every client byte goes through first)
 * and the output queue that writes frames back (src/proto/outq.c).
 *
 * The input's first byte chooses a chunk size; the rest is what a client
 * writes to its socket, fed to a non-blocking socketpair in those chunks
 * and read back with msg_read after each. Besides not crashing: every
 * frame read is within MSG_MAX_LEN and carries no descriptor; the frames,
 * packed again (msg_put_header), are exactly the input's first bytes; and
 * the same frames queued on an outq and flushed come out as those bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/msg.h"
#include "proto/outq.h"
#include "proto/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every frame now available on fd into the packed form and the queue. */
static int drain(struct msg_reader *rd, int fd, struct wbuf *packed, struct outq *q)
{
	for (;;) {
		struct msg m;
		char *err = NULL;
		uint8_t h[MSG_HEADER_LEN];
		int rc = msg_read(rd, fd, &m, &err);

		free(err);
		if (rc <= 0)
			return rc;
		if (m.len > MSG_MAX_LEN || m.nfds != 0)
			abort();
		msg_put_header(h, (uint32_t)m.len, m.type, 0);
		wbuf_put(packed, h, sizeof(h));
		wbuf_put(packed, m.payload, m.len);
		outq_push(q, m.type, m.payload, m.len, -1);
		msg_free(&m);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg_reader rd;
	struct wbuf packed;
	struct outq q;
	int sv[2], out[2], rc = 0;
	size_t chunk;
	uint8_t *back;
	ssize_t got;

	if (size == 0 || size > 65536)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, out) < 0)
		abort();
	msg_reader_init(&rd);
	wbuf_init(&packed);
	outq_init(&q);
	for (size_t i = 0; i < size && rc == 0; i += chunk) {
		size_t k = size - i < chunk ? size - i : chunk;

		if (write(sv[0], data + i, k) != (ssize_t)k)
			abort();
		rc = drain(&rd, sv[1], &packed, &q);
	}
	if (rc == 0) {
		shutdown(sv[0], SHUT_WR);
		drain(&rd, sv[1], &packed, &q);
	}
	if (packed.len > size || (packed.len && memcmp(packed.p, data, packed.len) != 0))
		abort();
	/* The queue writes the same bytes (they fit the socket's buffer: at most 64 KiB). */
	if (outq_flush(&q, out[0]) != 0 || q.bytes != 0)
		abort();
	back = malloc(packed.len + 1);
	if (!back)
		abort();
	got = read(out[1], back, packed.len + 1);
	if (packed.len ? got != (ssize_t)packed.len || memcmp(back, packed.p, packed.len) != 0
		       : got != -1)
		abort();
	free(back);
	outq_clear(&q);
	msg_reader_reset(&rd);
	wbuf_free(&packed);
	close(sv[0]);
	close(sv[1]);
	close(out[0]);
	close(out[1]);
	return 0;
}
