/*
 * fuzz-httpreq.c — libFuzzer target for the incremental request parser
 * (src/parse/http-req.c), which reads every request of a gated connection.
 *
 * Besides not crashing: the input fed in one piece and fed in pieces cut where
 * the input's first byte says (a different split per input, every split over
 * the run) finds the same heads and the same fault; a call never takes more
 * than it was given, never holds more than a head's bound, and takes nothing
 * after a fault.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/http-req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed data in pieces of at most step bytes (0: whole); a digest of what was found. */
static uint64_t feed(struct http_req_parser *p, const uint8_t *d, size_t n, size_t step,
		     const char **why)
{
	uint64_t digest = 1469598103934665603ULL;
	size_t off = 0;

	http_req_init(p);
	*why = NULL;
	while (off < n) {
		size_t end = step && n - off > step ? off + step : n;

		while (off < end) {
			enum http_req_status st;
			size_t k = http_req_feed(p, d + off, end - off, &st);

			if (k > end - off || http_req_held(p) > HTTP_HEAD_MAX)
				abort();
			off += k;
			if (st == HTTP_REQ_BAD) {
				enum http_req_status again;

				if (!p->why || http_req_feed(p, d, n, &again) != 0 ||
				    again != HTTP_REQ_BAD)
					abort();
				*why = p->why;
				return digest;
			}
			if (st == HTTP_REQ_HEAD) {
				const struct http_req *q = &p->req;

				if (q->head_len == 0 || q->head_len > HTTP_HEAD_MAX ||
				    strlen(q->method) > HTTP_REQ_METHOD_MAX)
					abort();
				for (const char *c = q->method; *c; c++)
					digest = (digest ^ (uint8_t)*c) * 1099511628211ULL;
				for (const char *c = q->path; *c; c++)
					digest = (digest ^ (uint8_t)*c) * 1099511628211ULL;
				digest = (digest ^ q->body ^ (q->length << 2) ^ q->upgrade) *
					 1099511628211ULL;
			} else if (off != end) {
				abort();
			}
		}
	}
	return digest;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_req_parser a, b;
	const char *wa, *wb;
	size_t step;
	uint64_t da, db;

	if (size < 1)
		return 0;
	step = (size_t)data[0] % 17 + 1;
	data++;
	size--;
	da = feed(&a, data, size, 0, &wa);
	db = feed(&b, data, size, step, &wb);
	if (da != db || !wa != !wb || (wa && strcmp(wa, wb) != 0) || a.nreq != b.nreq)
		abort();
	return 0;
}
