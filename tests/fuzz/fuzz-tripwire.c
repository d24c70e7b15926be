/*
 * fuzz-tripwire.c — libFuzzer target for the decoy-token matcher
 * (src/parse/tripwire.c) and NET_CONFIG's decoder (src/proto/netproto.c),
 * the two places that read bytes a payload (or a compromised boxy-net) chose
 * while looking for a session's tokens.
 *
 * Besides not crashing: the input scanned in one call or cut in two at any
 * point finds a token or not alike (a stream carries what a match needs
 * across calls), and a NET_CONFIG the decoder accepts encodes back to the
 * same bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "parse/tripwire.h"
#include "proto/netproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *const tokens[] = {
	"AKIAJ4ZQ2XLM7PVR3TWE", "q7VbT2xKp9Lm4RzW8cYdN3fHs6JgA1eUoP5iXtEk",
	"diJuWhfg2j2n2l1ngIk7AB7hQHiQVUTZ3T8vNqJocYA+iW/HnXn+A2dJagGLWofdy",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tw_matcher *m;
	struct tw_stream whole = { 0 }, cut = { 0 };
	struct tw_hit h1, h2;
	struct net_config c;
	bool one, two;
	size_t at;

	if (!m)
		m = tw_matcher_new(tokens, 3, NULL);
	if (!m)
		abort();
	at = size ? data[0] % (size + 1) : 0;
	one = tw_scan(m, &whole, data, size, &h1);
	two = tw_scan(m, &cut, data, at, &h2) || tw_scan(m, &cut, data + at, size - at, &h2);
	if (one != two)
		abort();
	if (one && (h1.token >= 3 || h1.enc >= TW_ENC_COUNT))
		abort();
	if (netproto_config_decode(data, size, &c, NULL) == 0) {
		struct wbuf w;

		wbuf_init(&w);
		netproto_config_encode(&w, &c);
		if (w.len != size || memcmp(w.p, data, size) != 0)
			abort();
		wbuf_free(&w);
		netproto_config_free(&c);
	}
	return 0;
}
