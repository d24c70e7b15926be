/*
 * fuzz-termfilter.c — libFuzzer target for the terminal output filter
 * (src/client/termfilter.c).
 *
 * The input is fed in chunks whose sizes its first byte chooses, and its top
 * bit the 8-bit terminal mode. Besides not
 * crashing: the output is never longer than the input fed so far, each
 * chunk's output fits the documented bound, the same input fed whole gives
 * the same output (state carries across chunks), and the output contains no
 * control string introducer (ESC ] P X ^ _ k), no 8-bit or encoded C1 control,
 * no ENQ, no DSR/DA query, and never ends inside an escape sequence.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/termfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() unless out[0..n) is output the filter may produce. */
static void check_output(const uint8_t *out, size_t n, bool legacy)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = out[i];

		if (c == 0x05 || c == 0x00 || c == 0x18 || c == 0x1a || c == 0x7f)
			abort();
		if (legacy && c >= 0x80 && c < 0xa0)
			abort();        /* any C1 byte, to an 8-bit terminal */
		if (!legacy && c >= 0x80 && c < 0xa0 && (i == 0 || out[i - 1] < 0x80))
			abort();        /* an 8-bit C1 standing alone */
		if (!legacy && c == 0xc2 && i + 1 < n && out[i + 1] < 0xa0)
			abort();        /* an encoded C1 */
		if (c != 0x1b)
			continue;
		if (i + 1 == n)
			abort();        /* ends inside a sequence */
		switch (out[i + 1]) {
		case ']': case 'P': case 'X': case '^': case '_': case 'k': case 'Z': case '\\':
			abort();
		case '[': {
			size_t j = i + 2;

			while (j < n && out[j] >= 0x20 && out[j] < 0x40)
				j++;
			if (j == n)
				abort();            /* unfinished CSI */
			if (out[j] == 'n' || out[j] == 'c' || out[j] == 't' || out[j] == 'x')
				abort();            /* DSR, DA, window reports, DECREQTPARM */
			if (out[j] == 'p' && j > i + 2 && out[j - 1] == '$')
				abort();            /* DECRQM */
			if (out[j] == 'q' && out[i + 2] == '>')
				abort();            /* XTVERSION */
			break;
		}
		default:
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct termfilter f, g;
	uint8_t *out, *whole, fin[TERMFILTER_FINISH_MAX];
	size_t chunk, o = 0, w, fed = 0;
	bool legacy;

	if (size == 0)
		return 0;
	chunk = (size_t)(data[0] & 0x7f) % 17 + 1;
	legacy = (data[0] & 0x80) != 0;
	data++;
	size--;
	out = malloc(size + TERMFILTER_SEQ_MAX + 1);
	whole = malloc(size + TERMFILTER_SEQ_MAX + 1);
	if (!out || !whole)
		abort();
	termfilter_init(&f);
	if (legacy)
		termfilter_set_8bit(&f);
	for (size_t i = 0; i < size; i += chunk) {
		size_t k = size - i < chunk ? size - i : chunk, got;
		uint8_t tmp[17 + TERMFILTER_SEQ_MAX];

		got = termfilter_feed(&f, data + i, k, tmp);
		fed += k;
		if (got > k + TERMFILTER_SEQ_MAX || o + got > fed)
			abort();
		memcpy(out + o, tmp, got);
		o += got;
	}
	termfilter_init(&g);
	if (legacy)
		termfilter_set_8bit(&g);
	w = termfilter_feed(&g, data, size, whole);
	if (w != o || memcmp(out, whole, o) != 0)
		abort();
	check_output(out, o, legacy);
	if (termfilter_finish(&f, fin) > TERMFILTER_FINISH_MAX)
		abort();
	free(out);
	free(whole);
	return 0;
}
