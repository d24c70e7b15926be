/*
 * test-net-http.c — the Host of a plain-HTTP request: the good forms, every
 * truncation, and each ambiguity a payload could use to make boxy read one
 * host while the server acts on another.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "parse/http.h"

struct row {
	const char *what;
	const char *req;
	enum http_status want;
	const char *host;       /* OK: expected host ("" when none) */
	unsigned port;
	bool is_ip;
};

static const struct row rows[] = {
	/* good */
	{ "simple GET", "GET / HTTP/1.1\r\nHost: Example.COM\r\n\r\n", HTTP_OK, "example.com", 0, 0 },
	{ "port stripped", "GET /x HTTP/1.1\r\nHost: example.com:8080\r\n\r\n", HTTP_OK,
	  "example.com", 8080, 0 },
	{ "empty port", "GET / HTTP/1.1\r\nHost: example.com:\r\n\r\n", HTTP_OK, "example.com", 0, 0 },
	{ "whitespace around the value", "GET / HTTP/1.1\r\nhOsT: \t example.com \t\r\n\r\n",
	  HTTP_OK, "example.com", 0, 0 },
	{ "trailing dot", "GET / HTTP/1.1\r\nHost: example.com.\r\n\r\n", HTTP_OK, "example.com", 0, 0 },
	{ "other headers around", "POST /p?q=1 HTTP/1.1\r\nUser-Agent: x\r\nHost: a.example\r\n"
	  "Content-Length: 0\r\n\r\n", HTTP_OK, "a.example", 0, 0 },
	{ "IPv4 literal", "GET / HTTP/1.1\r\nHost: 192.0.2.1:80\r\n\r\n", HTTP_OK, "192.0.2.1", 80, 1 },
	{ "IPv6 literal", "GET / HTTP/1.1\r\nHost: [2001:DB8::1]:8080\r\n\r\n", HTTP_OK,
	  "2001:db8::1", 8080, 1 },
	{ "absolute-form agreeing with Host",
	  "GET http://Example.com/a HTTP/1.1\r\nHost: example.com\r\n\r\n", HTTP_OK,
	  "example.com", 0, 0 },
	{ "HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", HTTP_OK, "", 0, 0 },
	{ "HTTP/1.0 absolute-form without Host", "GET http://a.example:81/ HTTP/1.0\r\n\r\n",
	  HTTP_OK, "a.example", 81, 0 },
	{ "CONNECT authority-form", "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
	  HTTP_OK, "a.example", 443, 0 },
	{ "OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: a.example\r\n\r\n", HTTP_OK, "a.example", 0, 0 },
	{ "unknown method is still HTTP", "PURGE / HTTP/1.1\r\nHost: a.example\r\n\r\n", HTTP_OK,
	  "a.example", 0, 0 },
	{ "lower-case method is still HTTP", "get / HTTP/1.1\r\nHost: a.example\r\n\r\n", HTTP_OK,
	  "a.example", 0, 0 },
	{ "body bytes after the head are ignored",
	  "POST / HTTP/1.1\r\nHost: a.example\r\nContent-Length: 3\r\n\r\nabc", HTTP_OK,
	  "a.example", 0, 0 },

	/* not HTTP */
	{ "TLS record", "\x16\x03\x01\x00\x05hello", HTTP_NOT_HTTP, NULL, 0, 0 },
	{ "SSH banner with a comment", "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", HTTP_NOT_HTTP, NULL, 0, 0 },
	{ "SSH banner", "SSH-2.0-OpenSSH_9.2p1\r\n", HTTP_NOT_HTTP, NULL, 0, 0 },
	{ "binary", "\0\0\0\x08\x04\xd2\x16\x2f", HTTP_NOT_HTTP, NULL, 0, 0 },

	{ "tab after an unknown word", "HELLO\tworld\r\n", HTTP_NOT_HTTP, NULL, 0, 0 },
	{ "unknown long word, no version", "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ x\r\n",
	  HTTP_NOT_HTTP, NULL, 0, 0 },

	/* malformed: each an ambiguity between parsers */
	{ "tab after the method (some servers split on any whitespace)",
	  "GET\t/\tHTTP/1.1\r\nHost: evil.example\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "CR after the method", "GET\r/ HTTP/1.1\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "leading empty line (servers skip it)",
	  "\r\nGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "leading bare LF", "\nGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	/* Python's http.server splits the request line with str.split(): these reached it. */
	{ "leading space (stripped by str.split())",
	  " GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "leading \\x1c (whitespace to str.split())",
	  "\x1cGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "leading tab and \\xa0", "\t\xa0POST / HTTP/1.1\r\nHost: evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "\\x1f after the method", "GET\x1f/hello.txt HTTP/1.1\r\nHost: evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "\\x85 after the method", "GET\x85/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "leading space, then not a method", " hello world\r\n", HTTP_NOT_HTTP, NULL, 0, 0 },
	/* Request lines with a method and a version boxy does not know: node's http module reads
	 * each as a request and keeps the connection, so NOT_HTTP (ungated) would let the next
	 * request through unread. HTTP, and malformed. */
	{ "an RTSP version", "DESCRIBE /v1/x RTSP/1.1\r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "an ICE version", "SOURCE /v1/x ICE/1.1\r\nHost: a.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "an rtsp:// target", "ANNOUNCE rtsp://a.example/ RTSP/1.1\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "HTTP/1.01 (nginx reads it as 1.1)", "PURGE /x HTTP/1.01\r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "HTTP/0.9 with an unknown method", "PURGE /x\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "a space after the version (nginx skips it)", "PURGE /x HTTP/1.1 \r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "two spaces after an unknown method", "DESCRIBE  /x RTSP/1.1\r\n", HTTP_MALFORMED, NULL,
	  0, 0 },
	{ "a tab after an unknown method, then a path", "DESCRIBE\t/x RTSP/1.1\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "leading space, an unknown method and a path", " DESCRIBE /x RTSP/1.1\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "an unknown method, * as the target", "M-SEARCH * SSDP/1.0\r\n", HTTP_MALFORMED, NULL,
	  0, 0 },
	{ "a word and a scheme not yet complete", "HELLO\tht", HTTP_NEED_MORE, NULL, 0, 0 },
	{ "a word and a name with a colon", "HELLO a.example:1\r\n", HTTP_NOT_HTTP, NULL, 0, 0 },
	{ "HTTP/01.1 after any target (Python reads it as 1.1)", "FOO x HTTP/01.1\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "a word and a word", "HELLO world x/1.0\r\n", HTTP_NOT_HTTP, NULL, 0, 0 },
	{ "leading space, half a method", " GE", HTTP_NEED_MORE, NULL, 0, 0 },
	{ "a long unknown method is still HTTP",
	  "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ / HTTP/1.1\r\nHost: evil.example\r\n\r\n",
	  HTTP_OK, "evil.example", 0, 0 },
	{ "two Host headers", "GET / HTTP/1.1\r\nHost: good.example\r\nHost: evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "two Host headers, different case",
	  "GET / HTTP/1.1\r\nHost: good.example\r\nhost: evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "absolute-form naming another host",
	  "GET http://evil.example/ HTTP/1.1\r\nHost: good.example\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "absolute-form with another port",
	  "GET http://good.example:81/ HTTP/1.1\r\nHost: good.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "userinfo in the absolute-form",
	  "GET http://good.example@evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "CONNECT to another host", "CONNECT evil.example:443 HTTP/1.1\r\nHost: good.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "bare LF in the request line", "GET / HTTP/1.1\nHost: a.example\n\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "bare LF in a header", "GET / HTTP/1.1\r\nHost: a.example\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "folded Host", "GET / HTTP/1.1\r\nHost: good.example\r\n evil.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "space before the colon", "GET / HTTP/1.1\r\nHost : evil.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "NUL in a value", "GET / HTTP/1.1\r\nHost: good.example\0evil\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "bare CR in a value", "GET / HTTP/1.1\r\nX: a\rHost: evil\r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "HTTP/1.1 without Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "Host with a path", "GET / HTTP/1.1\r\nHost: a.example/x\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "Host with userinfo", "GET / HTTP/1.1\r\nHost: a@b.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "Host with two ports", "GET / HTTP/1.1\r\nHost: a.example:80:81\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "Host with port 0", "GET / HTTP/1.1\r\nHost: a.example:0\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "Host with port 65536", "GET / HTTP/1.1\r\nHost: a.example:65536\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	/* held: a target is visible ASCII, so no path reaches a terminal with an escape in it */
	{ "an escape in the target", "GET /\x1b[2J HTTP/1.1\r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "DEL in the target", "GET /\x7f HTTP/1.1\r\nHost: a.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "UTF-8 in the target", "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	/* held: what a server could read as another host or port */
	{ "Host with a port written with a zero", "GET / HTTP/1.1\r\nHost: a.example:080\r\n\r\n",
	  HTTP_OK, "a.example", 80, 0 },
	{ "Host with a dot after the port", "GET / HTTP/1.1\r\nHost: a.example:80.\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "Host percent-encoded", "GET / HTTP/1.1\r\nHost: a%2eexample\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "Host with two trailing dots", "GET / HTTP/1.1\r\nHost: a.example..\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "absolute-form with userinfo and a port", "GET http://a.example:80@b.example/ HTTP/1.1\r\n"
	  "Host: b.example\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "absolute-form with a fragment before the host's end",
	  "GET http://a.example#@b.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "IPv6 literal with a zone", "GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "Host with a long port", "GET / HTTP/1.1\r\nHost: a.example:000080\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "bad IPv6 literal", "GET / HTTP/1.1\r\nHost: [zz::1]\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "IPv6 literal without ]", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "junk after ]", "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "HTTP/0.9", "GET /\r\n\r\n", HTTP_MALFORMED, NULL, 0, 0 },
	{ "HTTP/2.0 in a request line", "GET / HTTP/2.0\r\nHost: a.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "space in the target", "GET /a b HTTP/1.1\r\nHost: a.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },
	{ "target that is not a path", "GET a.example HTTP/1.1\r\nHost: a.example\r\n\r\n",
	  HTTP_MALFORMED, NULL, 0, 0 },
	{ "empty header name", "GET / HTTP/1.1\r\n: x\r\nHost: a.example\r\n\r\n", HTTP_MALFORMED,
	  NULL, 0, 0 },

	/* incomplete */
	{ "nothing yet", "", HTTP_NEED_MORE, NULL, 0, 0 },
	{ "half a method", "GE", HTTP_NEED_MORE, NULL, 0, 0 },
	{ "no blank line yet", "GET / HTTP/1.1\r\nHost: a.example\r\n", HTTP_NEED_MORE, NULL, 0, 0 },
};

/* Runs one row on exactly the row's bytes (a heap copy, so ASan sees overreads). */
static enum http_status run(const char *req, size_t len, struct http_result *r)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum http_status st;

	assert_non_null(copy);
	memcpy(copy, req, len);
	st = http_parse(copy, len, r);
	free(copy);
	return st;
}

/* Rows whose bytes contain a NUL give their length via the string table below. */
static size_t row_len(const struct row *r)
{
	if (strcmp(r->what, "NUL in a value") == 0)
		return strlen(r->req) + 1 + strlen(r->req + strlen(r->req) + 1);
	if (strcmp(r->what, "binary") == 0)
		return 8;
	return strlen(r->req);
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		struct http_result r;
		enum http_status st = run(w->req, row_len(w), &r);

		if (st != w->want)
			fail_msg("%s: got '%s', want '%s' (%s)", w->what, http_status_words(st),
				 http_status_words(w->want), r.why ? r.why : "");
		if (st == HTTP_MALFORMED)
			assert_non_null(r.why);
		if (st != HTTP_OK)
			continue;
		assert_int_equal(r.has_host, w->host[0] != '\0');
		assert_string_equal(r.host, w->host);
		assert_int_equal(r.port, w->port);
		assert_int_equal(r.host_is_ip, w->is_ip);
	}
}

/* Every prefix of good requests is NEED_MORE (never OK early, never a read past). */
static void test_truncated_everywhere(void **state)
{
	static const char *const good[] = {
		"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET http://a.example/ HTTP/1.1\r\nUser-Agent: curl/8\r\nHost: a.example\r\n\r\n",
	};

	(void)state;
	for (size_t g = 0; g < 2; g++) {
		size_t n = strlen(good[g]);
		struct http_result r;

		for (size_t k = 0; k < n; k++) {
			enum http_status st = run(good[g], k, &r);
			if (st != HTTP_NEED_MORE)
				fail_msg("'%s' cut at %zu: %s", good[g], k, http_status_words(st));
		}
		assert_int_equal(run(good[g], n, &r), HTTP_OK);
		assert_int_equal(r.head_len, n);
	}
}

/* The 8 KiB bound on the head. */
static void test_head_bound(void **state)
{
	static char big[HTTP_HEAD_MAX + 101];
	size_t cap = HTTP_HEAD_MAX + 100;
	struct http_result r;
	const char *start = "GET / HTTP/1.1\r\nHost: a.example\r\nX: ";
	size_t s = strlen(start);

	(void)state;
	/* exactly HTTP_HEAD_MAX bytes including the blank line: accepted */
	memcpy(big, start, s);
	memset(big + s, 'a', HTTP_HEAD_MAX - s - 4);
	memcpy(big + HTTP_HEAD_MAX - 4, "\r\n\r\n", 4);
	assert_int_equal(http_parse((uint8_t *)big, HTTP_HEAD_MAX, &r), HTTP_OK);
	assert_int_equal(r.head_len, HTTP_HEAD_MAX);
	/* one more byte of header: refused once 8 KiB arrived without the end */
	memset(big + s, 'a', HTTP_HEAD_MAX - s - 3);
	memcpy(big + HTTP_HEAD_MAX - 3, "\r\n\r\n", 4);
	assert_int_equal(http_parse((uint8_t *)big, HTTP_HEAD_MAX + 1, &r), HTTP_MALFORMED);
	assert_int_equal(http_parse((uint8_t *)big, HTTP_HEAD_MAX - 1, &r), HTTP_NEED_MORE);
	/* a request line that never ends */
	memcpy(big, "GET /", 5);
	memset(big + 5, 'a', cap - 5);
	assert_int_equal(http_parse((uint8_t *)big, cap, &r), HTTP_MALFORMED);
	/* a token that never ends */
	memset(big, 'A', cap);
	assert_int_equal(http_parse((uint8_t *)big, cap, &r), HTTP_NOT_HTTP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_head_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
