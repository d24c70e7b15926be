/*
 * fuzz-msgrun.c — libFuzzer target for the daemon's MSG_RUN decoder
 * (src/proto/msg-run.c run_request_decode), the first code that reads a
 * client's run request.
 *
 * The first byte says how many descriptors came with the message (0-6, fake
 * numbers: the decoder only assigns them to slots); the rest is the payload.
 * Besides not crashing or leaking: a refused request leaves the struct
 * empty; an accepted one has a command, absolute normal paths, every
 * descriptor in exactly one slot, and encodes back to the very same bytes
 * and descriptors (one layout, one encoder, one decoder).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/msg-run.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() unless q is what run_request_init leaves. */
static void check_empty(const struct run_request *q)
{
	struct run_request e;

	run_request_init(&e);
	if (memcmp(&e, q, sizeof(e)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int fake[MSG_MAX_FDS] = { 100, 101, 102, 103, 104, 105 };
	struct run_request q;
	struct wbuf w;
	int fds[MSG_MAX_FDS];
	size_t nfds, given;
	char *err = NULL;

	if (size < 1)
		return 0;
	given = data[0] % (MSG_MAX_FDS + 1);
	if (run_request_decode(data + 1, size - 1, fake, given, &q, &err) < 0) {
		if (!err || strncmp(err, "malformed run request: ", 23) != 0)
			abort();
		free(err);
		check_empty(&q);
		return 0;
	}
	if (err || !q.rs.argv || !q.rs.argv[0] || !path_is_normal(q.rs.workdir))
		abort();
	for (size_t i = 0; i < q.rs.nmounts; i++)
		if (!path_is_normal(q.rs.mounts[i].src))
			abort();
	wbuf_init(&w);
	run_request_encode(&q, &w, fds, &nfds);
	if (w.len != size - 1 || memcmp(w.p, data + 1, w.len) != 0)
		abort();
	if (nfds != given || memcmp(fds, fake, nfds * sizeof(int)) != 0)
		abort();
	wbuf_free(&w);
	run_request_free(&q);
	return 0;
}
