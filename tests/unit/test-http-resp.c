/*
 * test-http-resp.c — where a server's answers end (parse/http-resp.h), fed
 * whole, split at every byte, and byte by byte: each way must find the same
 * ends at the same offsets. Rows for every framing a client reads (length,
 * chunked with extensions and trailers, HEAD, 1xx, 204, 304) and for the
 * answers that can be followed by nothing (close-delimited, unreadable): a
 * refusal's 403 is written after an answer only where this says it ended.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "parse/http-resp.h"

struct row {
	const char *what;
	const char *reqs;       /* one letter a request that went up: G (any method), H (HEAD) */
	const char *stream;     /* the server's bytes */
	const char *ends;       /* "OFFSET;" where each answer ended */
	char how;               /* at the end: c complete, a answering, u unframed */
};

#define OK200(body) "HTTP/1.1 200 OK\r\nContent-Length: " #body "\r\n\r\n"

static const struct row rows[] = {
	{ "one answer by length", "G", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "43;", 'c' },
	{ "pipelined: two by length", "GG",
	  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nab"
	  "HTTP/1.1 404 Not Found\r\ncontent-length:  3 \r\n\r\nxyz", "40;90;", 'c' },
	{ "the first of two, the second still coming", "GG",
	  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabHTTP/1.1 200 OK\r\nContent-Le", "40;", 'a' },
	{ "half a body", "G", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", "", 'a' },
	{ "chunked with extensions and trailers", "G",
	  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5;x=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\n", "91;", 'c' },
	{ "chunked after gzip", "G", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
	  "1\r\nx\r\n0\r\n\r\n", "64;", 'c' },
	{ "a HEAD answer has no body", "HG",
	  "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" OK200(1) "z", "41;80;", 'c' },
	{ "100 Continue, then the answer", "G",
	  "HTTP/1.1 100 Continue\r\n\r\n" OK200(0), "63;", 'c' },
	{ "204 and 304 have no body", "GG",
	  "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n",
	  "46;75;", 'c' },
	{ "bare LF line ends", "G", "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", "36;", 'c' },
	{ "HTTP/1.0 without a length: to the close", "GG",
	  "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nanything, HTTP/1.1 200 OK\r\n\r\n", "", 'u' },
	{ "HTTP/1.1 without a length: to the close", "G",
	  "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody", "", 'u' },
	{ "a coding other than chunked: to the close", "G",
	  "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx", "", 'u' },
	{ "Content-Length and Transfer-Encoding", "G",
	  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "", 'u' },
	{ "two lengths that differ", "G",
	  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "", 'u' },
	{ "two equal lengths", "G",
	  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", "60;", 'c' },
	{ "a length that is not a number", "G", "HTTP/1.1 200 OK\r\nContent-Length: 3x\r\n\r\nabc", "", 'u' },
	{ "not a status line", "G", "SSH-2.0-x\r\n\r\n", "", 'u' },
	{ "a 101 nobody switched on", "G", "HTTP/1.1 101 Switching Protocols\r\n\r\n" OK200(0), "", 'u' },
	{ "a chunk size of 16 digits", "G", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "1000000000000000\r\n", "", 'u' },
	{ "a chunk not followed by CRLF", "G", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "1\r\nxy\r\n0\r\n\r\n", "", 'u' },
	{ "nothing asked, nothing answered", "", "", "", 'c' },
};

/* Feed the row cut at cuts[] (ncuts of them); the ends found, and how it stands at the end. */
static char run(const struct row *row, const size_t *cuts, size_t ncuts, char *ends, size_t cap)
{
	static struct http_resp_framer fr;
	const uint8_t *s = (const uint8_t *)row->stream;
	size_t len = strlen(row->stream), start = 0;

	ends[0] = '\0';
	http_resp_init(&fr);
	for (const char *r = row->reqs; *r; r++)
		http_resp_expect(&fr, *r == 'H');
	for (size_t c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : len, off = start;

		while (off < end) {
			uint64_t before = fr.answered;
			size_t k = http_resp_feed(&fr, s + off, end - off);

			assert_true(k > 0 && k <= end - off);
			off += k;
			if (fr.answered != before)
				snprintf(ends + strlen(ends), cap - strlen(ends), "%zu;", off);
			else
				assert_int_equal(off, end);
		}
		start = end;
	}
	return http_resp_unframed(&fr) ? 'u' : http_resp_complete(&fr) ? 'c' : 'a';
}

static void check(const struct row *row, const size_t *cuts, size_t ncuts, const char *how)
{
	char ends[256];
	char st = run(row, cuts, ncuts, ends, sizeof(ends));

	if (strcmp(ends, row->ends) != 0 || st != row->how)
		fail_msg("%s (%s): ends '%s' %c, want '%s' %c", row->what, how, ends, st, row->ends,
			 row->how);
}

static void test_every_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		size_t len = strlen(rows[i].stream), *all = xmalloc((len + 1) * sizeof(size_t));

		check(&rows[i], NULL, 0, "whole");
		for (size_t k = 1; k < len; k++) {
			char how[32];

			snprintf(how, sizeof(how), "cut at %zu", k);
			check(&rows[i], &k, 1, how);
		}
		for (size_t k = 0; k + 1 < len; k++)
			all[k] = k + 1;
		check(&rows[i], all, len ? len - 1 : 0, "byte by byte");
		free(all);
	}
}

/* More HEAD requests outstanding than the framer follows: unframed, never a guess. */
static void test_bounds(void **state)
{
	static struct http_resp_framer fr;
	static char big[HTTP_RESP_HEAD_MAX + 64];

	(void)state;
	http_resp_init(&fr);
	for (int i = 0; i < HTTP_RESP_HEADS; i++)
		http_resp_expect(&fr, true);
	assert_false(http_resp_unframed(&fr));
	http_resp_expect(&fr, true);
	assert_true(http_resp_unframed(&fr));

	/* a head past HTTP_RESP_HEAD_MAX cannot be read */
	http_resp_init(&fr);
	http_resp_expect(&fr, false);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'a', sizeof(big) - 20);
	http_resp_feed(&fr, (const uint8_t *)big, sizeof(big));
	assert_true(http_resp_unframed(&fr));

	/* a long header line that is not framing is counted, not kept */
	http_resp_init(&fr);
	http_resp_expect(&fr, false);
	memset(big + 20, 'a', 4000);
	memcpy(big + 4020, "\r\nContent-Length: 1\r\n\r\nz", 24);
	assert_int_equal(http_resp_feed(&fr, (const uint8_t *)big, 4044), 4044);
	assert_true(http_resp_complete(&fr));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
