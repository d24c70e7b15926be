/*
 * test-http-req.c — every request of an HTTP/1.x stream (parse/http-req.h),
 * fed whole, split at every byte boundary, and byte by byte: each split must
 * find the same heads and the same fault. Rows for keep-alive and pipelining,
 * bodies framed by Content-Length and chunked coding (a request hidden in a
 * body is never read as one), and every ambiguity a server and boxy could
 * read differently (request smuggling), which is refused.
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
#include "parse/http-req.h"

struct row {
	const char *what;
	const char *stream;
	const char *heads;      /* "METHOD PATH HOST PORT BODY;" per head (BODY n, l, c; +u websocket
				 * upgrade, +U other upgrade, +C connect) */
	const char *bad;        /* NULL: no fault; else a word of p->why */
};

#define H11(m, t) m " " t " HTTP/1.1\r\nHost: a.test\r\n"

static const struct row rows[] = {
	{ "one GET", H11("GET", "/") "\r\n", "GET / a.test 0 n;", NULL },
	{ "pipelined", H11("GET", "/1") "\r\n" H11("HEAD", "/2") "\r\n", "GET /1 a.test 0 n;HEAD /2 a.test 0 n;",
	  NULL },
	{ "a request inside a body is a body",
	  "POST /p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 33\r\n\r\n"
	  "GET /hidden HTTP/1.1\r\nHost: b\r\n\r\n" H11("GET", "/after") "\r\n",
	  "POST /p a.test 0 l;GET /after a.test 0 n;", NULL },
	{ "chunked with trailers, then the next",
	  "POST /c HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5\r\nhello\r\n00A\r\n0123456789\r\n0\r\nX-Sum: 1\r\n\r\n" H11("GET", "/n") "\r\n",
	  "POST /c a.test 0 c;GET /n a.test 0 n;", NULL },
	{ "Transfer-Encoding's case and spaces",
	  "POST /c HTTP/1.1\r\nHost: a.test\r\ntransfer-encoding:  CHUNKED \r\n\r\n0\r\n\r\n",
	  "POST /c a.test 0 c;", NULL },
	{ "Content-Length 0 is no body", "POST /z HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n"
	  H11("GET", "/y") "\r\n", "POST /z a.test 0 n;GET /y a.test 0 n;", NULL },
	{ "absolute target and query", "GET http://a.test:81/p/q?x=1&y HTTP/1.1\r\nHost: a.test:81\r\n\r\n",
	  "GET /p/q a.test 81 n;", NULL },
	{ "absolute target without a path", "GET http://a.test HTTP/1.1\r\nHost: a.test\r\n\r\n",
	  "GET / a.test 0 n;", NULL },
	{ "HTTP/1.0 keep-alive", "GET /a HTTP/1.0\r\nHost: a.test\r\n\r\nGET /b HTTP/1.0\r\n\r\n",
	  "GET /a a.test 0 n;GET /b - 0 n;", NULL },
	{ "a websocket upgrade, then opaque bytes",
	  "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
	  "GET /not-a-head HTTP/1.1\r\n\r\n\x81\x05hello",
	  "GET /ws a.test 0 n+u;", NULL },
	{ "another upgrade", "GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: h2c\r\n\r\n",
	  "GET / a.test 0 n+U;", NULL },
	{ "CONNECT", "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\nanything",
	  "CONNECT  a.test 443 n+C;", NULL },
	/* smuggling and other ambiguity: refused */
	{ "CL and TE", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "", "both" },
	{ "TE and CL", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
	  "Content-Length: 5\r\n\r\n", "", "both" },
	{ "two Content-Lengths", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n"
	  "Content-Length: 6\r\n\r\n", "", "two Content-Length" },
	{ "two equal Content-Lengths", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n"
	  "Content-length: 5\r\n\r\n", "", "two Content-Length" },
	{ "a list in Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5, 5\r\n\r\n",
	  "", "plain number" },
	{ "a sign in Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: +5\r\n\r\n",
	  "", "plain number" },
	{ "a huge Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Content-Length: 99999999999999999999\r\n\r\n", "", "plain number" },
	{ "gzip, chunked", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	  "", "other than chunked" },
	{ "chunked, chunked", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n", "", "two Transfer-Encoding" },
	{ "TE on HTTP/1.0", "POST / HTTP/1.0\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "", "HTTP/1.0" },
	{ "a chunk extension", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5;x=y\r\nhello\r\n0\r\n\r\n", "POST / a.test 0 c;", "extensions" },
	{ "a space in a chunk size", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5 \r\nhello\r\n0\r\n\r\n", "POST / a.test 0 c;", "plain hex" },
	{ "a bare LF after a chunk size", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked"
	  "\r\n\r\n5\nhello\r\n0\r\n\r\n", "POST / a.test 0 c;", "plain hex" },
	{ "a chunk not ended by CRLF", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5\r\nhelloX\r\n0\r\n\r\n", "POST / a.test 0 c;", "CRLF" },
	{ "an empty chunk size", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "\r\n", "POST / a.test 0 c;", "empty chunk size" },
	{ "a chunk size too long", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "00000000000000001\r\n", "POST / a.test 0 c;", "longer than 16" },
	{ "a malformed trailer", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "0\r\nno colon\r\n\r\n", "POST / a.test 0 c;", "trailer" },
	{ "a folded trailer", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "0\r\nX: a\r\n b\r\n\r\n", "POST / a.test 0 c;", "trailer" },
	{ "obs-fold", "GET / HTTP/1.1\r\nHost: a.test\r\nX: a\r\n b\r\n\r\n", "", "folded" },
	{ "a bare LF in a head", "GET / HTTP/1.1\nHost: a.test\r\n\r\n", "", "bare LF" },
	{ "a bare CR in a head", "GET / HTTP/1.1\r\nHost: a.test\rX: y\r\n\r\n", "", "bare CR" },
	{ "a NUL in a head", "GET / HTTP/1.1\r\nHost: a.test\r\nX: \0\r\n\r\n", "", "NUL" },
	{ "two Hosts", "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", "", "two Host" },
	{ "an empty line between requests", H11("GET", "/") "\r\n\r\n" H11("GET", "/2") "\r\n",
	  "GET / a.test 0 n;", "empty line" },
	{ "not HTTP after a request", H11("GET", "/") "\r\nSSH-2.0-x\r\n\r\n", "GET / a.test 0 n;",
	  "not an HTTP request" },
	{ "an absolute target naming another host",
	  "GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "", "different hosts" },
	{ "a method longer than 32", "GETGETGETGETGETGETGETGETGETGETGETGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	  "", "longer than 32" },
	/* A body on a method whose body a server may not read: Python's http.server (HTTP/1.1)
	 * serves the "body" below as a second request, which the gate would have passed unread. */
	/* held: framing variants servers read differently, each refused (or read the one way) */
	{ "chunked, identity", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Transfer-Encoding: chunked, identity\r\n\r\n", "", "other than chunked" },
	{ "a space before the colon of Transfer-Encoding", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Transfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc", "", "bad header name" },
	/* underscores that servers folding '_' into '-' read as framing (CGI, WSGI, proxies) */
	{ "Content_Length", "POST / HTTP/1.1\r\nHost: a.test\r\nContent_Length: 5\r\n\r\nhello",
	  "", "Content_Length" },
	{ "content_length beside Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Content-Length: 3\r\ncontent_length: 40\r\n\r\nabc", "", "Content_Length" },
	{ "CONTENT_LENGTH on a GET", "GET / HTTP/1.1\r\nHost: a.test\r\nCONTENT_LENGTH: 0\r\n\r\n",
	  "", "Content_Length" },
	{ "Content-Length_ is not Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Content-Length_: 5\r\n\r\n", "POST / a.test 0 n;", NULL },
	{ "Transfer_Encoding", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n"
	  "Transfer_Encoding: chunked\r\n\r\n0\r\n\r\n", "", "Transfer_Encoding" },
	{ "transfer_encoding alone", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "transfer_encoding: chunked\r\n\r\n", "", "Transfer_Encoding" },
	{ "Transfer-Encoding_Extra is another header", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Transfer-Encoding_Extra: x\r\n\r\n", "POST / a.test 0 n;", NULL },
	{ "a space before the colon of Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Content-Length : 5\r\n\r\nhello", "", "bad header name" },
	{ "a tab before the colon of Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Content-Length\t: 5\r\n\r\nhello", "", "bad header name" },
	{ "two Content-Lengths with other values, on a second request", H11("GET", "/1") "\r\n"
	  "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\n",
	  "GET /1 a.test 0 n;", "two Content-Length" },
	{ "a folded Transfer-Encoding", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding:\r\n"
	  " chunked\r\n\r\n", "", "folded" },
	{ "a hex Content-Length", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0x10\r\n\r\n",
	  "", "plain number" },
	{ "a chunk over 2^60", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "1000000000000001\r\n", "POST / a.test 0 c;", "chunk too large" },
	{ "leading zeros in a chunk size are its value", "POST / HTTP/1.1\r\nHost: a.test\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n0000000000000003\r\nabc\r\n0\r\n\r\n" H11("GET", "/n") "\r\n",
	  "POST / a.test 0 c;GET /n a.test 0 n;", NULL },
	{ "a request line as a trailer", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
	  "\r\n0\r\nGET /smuggled HTTP/1.1\r\n\r\n", "POST / a.test 0 c;", "trailer" },
	{ "HTTP/0.9 after a request", H11("GET", "/") "\r\nGET /smuggled\r\n\r\n", "GET / a.test 0 n;",
	  "without an HTTP version" },
	/* Go's h2c handler switches when any Upgrade names h2c; boxy read the last one */
	{ "two Upgrade headers", "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: h2c\r\n"
	  "Upgrade: websocket\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n", "", "two Upgrade" },
	{ "a list of upgrades is not a websocket", "GET /ws HTTP/1.1\r\nHost: a.test\r\n"
	  "Upgrade: websocket, h2c\r\n\r\n", "GET /ws a.test 0 n+U;", NULL },
	{ "a body on GET", "GET /v1/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 36\r\n\r\n"
	  "GET /v2/secret HTTP/1.1\r\nHost: a\r\n\r\n", "", "a body on GET" },
	{ "a chunked body on HEAD", "HEAD /v1/x HTTP/1.1\r\nHost: a.test\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "", "a body on HEAD" },
	{ "a body on DELETE", "DELETE /v1/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\n\r\n"
	  "{}", "", "a body on DELETE" },
	{ "a body on TRACE", "TRACE / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx", "",
	  "a body on TRACE" },
	{ "GET with Content-Length 0 has no body",
	  "GET /a HTTP/1.1\r\nHost: a.test\r\nContent-Length: 00\r\n\r\n" H11("GET", "/b") "\r\n",
	  "GET /a a.test 0 n;GET /b a.test 0 n;", NULL },
	{ "a body on OPTIONS or a lower-case get is framed",
	  "OPTIONS /o HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\n\r\n{}"
	  "get /g HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx",
	  "OPTIONS /o a.test 0 l;get /g a.test 0 l;", NULL },
};

/* Appends one head's description to out. */
static void describe(char *out, size_t cap, const struct http_req *q)
{
	char one[HTTP_HEAD_MAX + 128];

	snprintf(one, sizeof(one), "%s %s %s %u %c%s;", q->method, q->path,
		 q->has_host ? q->host : "-", q->port,
		 q->body == HTTP_BODY_NONE ? 'n' : q->body == HTTP_BODY_LENGTH ? 'l' : 'c',
		 q->connect ? "+C" : q->websocket ? "+u" : q->upgrade ? "+U" : "");
	if (strlen(out) + strlen(one) + 1 < cap)
		strcat(out, one);
}

/*
 * Feed the stream in the pieces cut at the cut points (n of them, ascending);
 * skip: take opaque bytes with http_req_skip, as the gate does. Fills heads
 * and returns the fault's words (NULL: none).
 */
static const char *run(const uint8_t *s, size_t len, const size_t *cuts, size_t ncuts,
		       bool skip, char *heads, size_t cap)
{
	static struct http_req_parser p;
	size_t start = 0;

	http_req_init(&p);
	heads[0] = '\0';
	for (size_t c = 0; c <= ncuts; c++) {
		size_t end = c < ncuts ? cuts[c] : len, off = start;

		while (off < end) {
			enum http_req_status st;
			uint64_t op = skip ? http_req_opaque(&p) : 0;
			size_t k;

			if (op) {
				size_t take = op < end - off ? (size_t)op : end - off;

				http_req_skip(&p, take);
				off += take;
				continue;
			}
			k = http_req_feed(&p, s + off, end - off, &st);
			assert_true(k <= end - off);
			off += k;
			if (st == HTTP_REQ_BAD)
				return p.why;
			if (st == HTTP_REQ_HEAD) {
				describe(heads, cap, &p.req);
				assert_int_equal(http_req_held(&p), 0);
			} else {
				assert_int_equal(off, end);
			}
		}
		start = end;
	}
	return NULL;
}

/* One row, one way of cutting it: the same heads and the same fault. */
static void check(const struct row *row, size_t len, const size_t *cuts, size_t ncuts, bool skip,
		  const char *how)
{
	static char heads[16384];
	const char *why = run((const uint8_t *)row->stream, len, cuts, ncuts, skip, heads,
			      sizeof(heads));

	if (strcmp(heads, row->heads) != 0)
		fail_msg("%s (%s): heads '%s', want '%s'", row->what, how, heads, row->heads);
	if (!row->bad != !why || (why && !strstr(why, row->bad)))
		fail_msg("%s (%s): fault '%s', want '%s'", row->what, how, why ? why : "none",
			 row->bad ? row->bad : "none");
}

/* The stream's length: rows hold a NUL on purpose, so not strlen for that one. */
static size_t stream_len(const struct row *row)
{
	if (strstr(row->what, "NUL"))
		return strlen(row->stream) + 1 + strlen(row->stream + strlen(row->stream) + 1);
	return strlen(row->stream);
}

static void test_every_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		size_t len = stream_len(&rows[i]), *all = xmalloc((len + 1) * sizeof(size_t));

		check(&rows[i], len, NULL, 0, false, "whole");
		check(&rows[i], len, NULL, 0, true, "whole, skipping bodies");
		for (size_t k = 1; k < len; k++) {
			char how[32];

			snprintf(how, sizeof(how), "cut at %zu", k);
			check(&rows[i], len, &k, 1, false, how);
			check(&rows[i], len, &k, 1, true, how);
		}
		for (size_t k = 0; k + 1 < len; k++)
			all[k] = k + 1;
		check(&rows[i], len, all, len ? len - 1 : 0, false, "byte by byte");
		check(&rows[i], len, all, len ? len - 1 : 0, true, "byte by byte, skipping");
		free(all);
	}
}

/* The query is kept apart from the path; a head's held bytes are counted until it ends. */
static void test_fields(void **state)
{
	static struct http_req_parser p;
	const char *r = "GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: A.Test:8080\r\n\r\n";
	enum http_req_status st;
	size_t k;

	(void)state;
	http_req_init(&p);
	assert_true(http_req_idle(&p));
	k = http_req_feed(&p, (const uint8_t *)r, 10, &st);
	assert_int_equal(k, 10);
	assert_int_equal(st, HTTP_REQ_MORE);
	assert_int_equal(http_req_held(&p), 10);
	assert_false(http_req_idle(&p));
	k = http_req_feed(&p, (const uint8_t *)r + 10, strlen(r) - 10, &st);
	assert_int_equal(st, HTTP_REQ_HEAD);
	assert_int_equal(k, strlen(r) - 10);
	assert_string_equal(p.req.method, "GET");
	assert_string_equal(p.req.path, "/a/b");
	assert_string_equal(p.req.query, "x=1&y=%20");
	assert_string_equal(p.req.host, "a.test");
	assert_int_equal(p.req.port, 8080);
	assert_int_equal(p.req.index, 0);
	assert_int_equal(p.req.head_len, strlen(r));
	assert_true(http_req_idle(&p));
}

/* A head may be 8 KiB and no more; a body's length is not a limit. */
static void test_bounds(void **state)
{
	static struct http_req_parser p;
	static uint8_t buf[3 * HTTP_HEAD_MAX];
	const char *start = "GET / HTTP/1.1\r\nHost: a.test\r\nX: ";
	size_t n = strlen(start), pad;
	enum http_req_status st;

	(void)state;
	/* exactly HTTP_HEAD_MAX bytes with the blank line: accepted */
	memcpy(buf, start, n);
	pad = HTTP_HEAD_MAX - n - 4;
	memset(buf + n, 'a', pad);
	memcpy(buf + n + pad, "\r\n\r\n", 4);
	http_req_init(&p);
	assert_int_equal(http_req_feed(&p, buf, HTTP_HEAD_MAX, &st), HTTP_HEAD_MAX);
	assert_int_equal(st, HTTP_REQ_HEAD);
	/* one more byte: refused when the byte past the limit comes, not before */
	memset(buf + n, 'a', pad + 1);
	memcpy(buf + n + pad + 1, "\r\n\r\n", 4);
	http_req_init(&p);
	assert_int_equal(http_req_feed(&p, buf, HTTP_HEAD_MAX, &st), HTTP_HEAD_MAX);
	assert_int_equal(st, HTTP_REQ_MORE);
	assert_int_equal(http_req_feed(&p, buf + HTTP_HEAD_MAX, 1, &st), 0);
	assert_int_equal(st, HTTP_REQ_BAD);
	/* nothing is taken after a fault */
	assert_int_equal(http_req_feed(&p, buf, 10, &st), 0);
	assert_int_equal(st, HTTP_REQ_BAD);
	/* a body of 2^40 bytes is counted, not held */
	http_req_init(&p);
	{
		const char *big = "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 1099511627776\r\n\r\n";

		assert_int_equal(http_req_feed(&p, (const uint8_t *)big, strlen(big), &st),
				 strlen(big));
		assert_int_equal(st, HTTP_REQ_HEAD);
		assert_true(http_req_opaque(&p) == 1099511627776ull);
		http_req_skip(&p, 1099511627775ull);
		assert_int_equal(http_req_opaque(&p), 1);
		assert_int_equal(http_req_feed(&p, (const uint8_t *)"x", 1, &st), 1);
		assert_true(http_req_idle(&p));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
