/*
 * fuzz-httpresp.c — libFuzzer target for the gate's reader of server answers
 * (parse/http-resp.c). The input's first byte is how many requests went up
 * (its low six bits), the next eight a mask of which were HEAD, the rest the
 * server's bytes.
 *
 * Besides not crashing: every feed takes at least one byte and at most what
 * it was given; the count of answers never falls; a stream once unframed
 * stays so; and the same bytes fed whole, one at a time, or in cuts the
 * input itself chooses leave the framer in the same state — where the
 * server's bytes were split by the network must not change where the gate
 * thinks an answer ends.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/http-resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed p[0..n) in cuts of at most step bytes (0: as the framer stops), checking as it goes. */
static void feed_all(struct http_resp_framer *fr, const uint8_t *p, size_t n, size_t step,
		     const uint8_t *cuts, size_t ncuts)
{
	size_t k = 0;

	while (n) {
		size_t want = n, took;
		uint64_t before = fr->answered;
		bool was_unframed = http_resp_unframed(fr);

		if (step)
			want = step;
		else if (ncuts)
			want = (size_t)cuts[k++ % ncuts] + 1;
		if (want > n)
			want = n;
		took = http_resp_feed(fr, p, want);
		if (took == 0 || took > want)
			abort();
		if (fr->answered < before || (was_unframed && !http_resp_unframed(fr)))
			abort();
		p += took;
		n -= took;
	}
}

static void setup(struct http_resp_framer *fr, unsigned sent, uint64_t heads)
{
	http_resp_init(fr);
	for (unsigned i = 0; i < sent; i++)
		http_resp_expect(fr, (heads >> i) & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_resp_framer whole, bytes, cut;
	uint64_t heads = 0;
	unsigned sent;

	if (size < 9)
		return 0;
	sent = data[0] & 63;
	for (int i = 0; i < 8; i++)
		heads |= (uint64_t)data[1 + i] << (8 * i);
	data += 9;
	size -= 9;
	setup(&whole, sent, heads);
	setup(&bytes, sent, heads);
	setup(&cut, sent, heads);
	feed_all(&whole, data, size, 0, NULL, 0);
	feed_all(&bytes, data, size, 1, NULL, 0);
	feed_all(&cut, data, size, 0, data, size < 16 ? size : 16);
	if (whole.answered != bytes.answered || whole.answered != cut.answered ||
	    whole.state != bytes.state || whole.state != cut.state ||
	    http_resp_complete(&whole) != http_resp_complete(&bytes) ||
	    http_resp_complete(&whole) != http_resp_complete(&cut) ||
	    whole.nheads != bytes.nheads || whole.nheads != cut.nheads)
		abort();
	return 0;
}
