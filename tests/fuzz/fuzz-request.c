/*
 * fuzz-request.c — libFuzzer target for the daemon's decoders of what a
 * client sends, besides MSG_RUN (src/proto/daemon-msg.c): the hello, the
 * attach, stop and watch requests, a terminal's size and the gate's verdict.
 *
 * The first byte of the input picks the decoder, the rest is the payload
 * of one frame. Besides not crashing: a payload that decodes re-encodes to
 * exactly the same bytes (the stop request's flag normalised to 0 or 1), so
 * nothing is accepted that the encoder could not have written; an accepted
 * prefix is at most a session id long, and the attach and stop prefixes are
 * lower-case hex, as the daemon's session lookup assumes; a gate verdict's id
 * is a whole one.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/daemon-msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() unless w holds exactly the n bytes at p. */
static void same(const struct wbuf *w, const uint8_t *p, size_t n)
{
	if (w->len != n || (n && memcmp(w->p, p, n) != 0))
		abort();
}

/* abort() unless prefix is a plausible session id prefix (hex when hex is set). */
static void check_prefix(const char *prefix, bool hex)
{
	if (strlen(prefix) > DMSG_ID_LEN)
		abort();
	if (hex && strspn(prefix, "0123456789abcdef") != strlen(prefix))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wbuf w;
	char *s = NULL, *words = NULL;
	uint32_t u32;
	uint16_t rows, cols;
	bool now;
	const uint8_t *p = data + 1;
	size_t n;

	if (size == 0)
		return 0;
	n = size - 1;
	wbuf_init(&w);
	switch (data[0] % 6) {
	case 0:
		if (dmsg_decode_hello(p, n, &u32, &s) == 0) {
			if (!s || strlen(s) > DMSG_BUILD_MAX)
				abort();
			dmsg_encode_hello(&w, u32, s);
			same(&w, p, n);
		} else if (s) {
			abort();        /* a failed decode leaves nothing to free */
		}
		break;
	case 1:
		if (dmsg_decode_attach(p, n, &s) == 0) {
			if (!s)
				abort();
			check_prefix(s, true);
			dmsg_encode_target(&w, s);
			same(&w, p, n);
		} else if (s) {
			abort();
		}
		break;
	case 2:
		if (dmsg_decode_watch(p, n, &s) == 0) {
			if (s)
				check_prefix(s, false);
			dmsg_encode_target(&w, s);
			same(&w, p, n);
		} else if (s) {
			abort();
		}
		break;
	case 3:
		if (dmsg_decode_stop(p, n, &s, &now) == 0) {
			if (!s || n == 0 || now != (p[n - 1] != 0))
				abort();
			check_prefix(s, true);
			dmsg_encode_stop(&w, s, now);
			if (w.len != n || memcmp(w.p, p, n - 1) != 0)
				abort();
		} else if (s) {
			abort();
		}
		break;
	case 4:
		if (dmsg_decode_winsize(p, n, &rows, &cols) == 0) {
			dmsg_encode_winsize(&w, rows, cols);
			same(&w, p, n);
		}
		break;
	case 5:
		if (dmsg_decode_gate(p, n, &s, &words) == 0) {
			if (!s || !words || strlen(s) != DMSG_ID_LEN ||
			    strlen(words) > DMSG_GATE_WORDS_MAX)
				abort();
			check_prefix(s, true);
			dmsg_encode_gate(&w, s, words);
			same(&w, p, n);
		} else if (s || words) {
			abort();
		}
		break;
	}
	free(words);
	free(s);
	wbuf_free(&w);
	return 0;
}
