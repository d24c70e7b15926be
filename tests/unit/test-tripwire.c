/*
 * test-tripwire.c — the decoy-token matcher (src/parse/tripwire.c): a token
 * is found as it is and hex, base32, base64, base64url and base64-twice
 * encoded, at every alignment inside a larger file, in upper or lower case,
 * split over DNS labels, wrapped over lines, percent- or JSON-escaped, and
 * cut across two scans of a stream; and nothing is found in a megabyte of
 * random bytes, in ordinary text, or in another session's token.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "parse/tripwire.h"

/* Two tokens of the shapes the decoys use: an AWS secret and a GitHub token's random part. */
static char *const toks[] = {
	"q7VbT2xKp9Lm4RzW8cYdN3fHs6JgA1eUoP5iXtEk",
	"Zr4Wm8QpX2nB6vLc9TkH3sJd7FyG5aRe1uYiO0",
};

/* A credentials file holding the first token, as a stealer reads it. */
static const char creds[] =
	"[default]\naws_access_key_id = AKIAJ4ZQ2XLM7PVR3TWE\n"
	"aws_secret_access_key = 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\n";

static char *b64(const char *p, size_t n, bool url)
{
	const char *a = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
			    : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc(4 * (n + 2) / 3 + 4);
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)p[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)p[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)p[i + 2];
		out[o++] = a[v >> 18];
		out[o++] = a[(v >> 12) & 63];
		out[o++] = i + 1 < n ? a[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

static char *b32(const char *p, size_t n)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	char *out = xmalloc(8 * (n + 4) / 5 + 2);
	size_t o = 0, bits = 0;
	unsigned v = 0;

	for (size_t i = 0; i < n; i++) {
		v = (v << 8) | (unsigned char)p[i];
		bits += 8;
		while (bits >= 5) {
			out[o++] = a[(v >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits)
		out[o++] = a[(v << (5 - bits)) & 31];
	out[o] = '\0';
	return out;
}

static char *hex(const char *p, size_t n, bool upper, const char *sep)
{
	char *out = xmalloc(n * (2 + strlen(sep)) + 1);
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		o += (size_t)sprintf(out + o, upper ? "%s%02X" : "%s%02x", i ? sep : "",
				     (unsigned char)p[i]);
	}
	out[o] = '\0';
	return out;
}

/* Scan s in one go with a fresh stream: the token found, or -1. */
static int find(const struct tw_matcher *m, const char *s, enum tw_encoding *enc)
{
	struct tw_stream st = { 0 };
	struct tw_hit h;

	if (!tw_scan(m, &st, (const uint8_t *)s, strlen(s), &h))
		return -1;
	if (enc)
		*enc = h.enc;
	return (int)h.token;
}

static void test_tokens_ok(void **state)
{
	(void)state;
	assert_true(tw_token_ok(toks[0]));
	assert_true(tw_token_ok("abcdefghijkl"));
	assert_true(tw_token_ok("a+b/c=d_e.f-ghij"));
	assert_false(tw_token_ok("abcdefghijk"));               /* 11: too short */
	assert_false(tw_token_ok("abcdefghijkl mnop"));         /* a space */
	assert_false(tw_token_ok("abcdefghijkl\nmnop"));
	assert_false(tw_token_ok("abcdefghijkl\"mnop"));
	{
		char longer[TW_TOKEN_MAX + 2];

		memset(longer, 'a', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = '\0';
		assert_false(tw_token_ok(longer));
		longer[TW_TOKEN_MAX] = '\0';
		assert_true(tw_token_ok(longer));
	}
}

static void test_matcher_refuses(void **state)
{
	char *bad[] = { "short" };
	char *many[TW_TOKENS_MAX + 1];
	char *err = NULL;

	(void)state;
	assert_null(tw_matcher_new(bad, 1, &err));
	assert_non_null(err);
	free(err);
	err = NULL;
	for (size_t i = 0; i < TW_TOKENS_MAX + 1; i++)
		many[i] = toks[0];
	assert_null(tw_matcher_new(many, TW_TOKENS_MAX + 1, &err));
	free(err);
}

/* Every encoding of the whole file, which holds the token at some alignment. */
static void test_encodings_of_the_file(void **state)
{
	struct tw_matcher *m = tw_matcher_new(toks, 2, NULL);
	enum tw_encoding enc;
	char *s, *t;

	(void)state;
	assert_int_equal(find(m, creds, &enc), 0);
	assert_int_equal(enc, TW_ENC_RAW);
	s = hex(creds, strlen(creds), false, "");
	assert_int_equal(find(m, s, &enc), 0);
	assert_int_equal(enc, TW_ENC_HEX);
	free(s);
	s = hex(creds, strlen(creds), true, "%");       /* percent-encoded, every byte */
	assert_int_equal(find(m, s, &enc), 0);
	assert_int_equal(enc, TW_ENC_HEX);
	free(s);
	s = hex(creds, strlen(creds), false, ":");
	assert_int_equal(find(m, s, NULL), 0);
	free(s);
	/* base64 at each of the three alignments: the file with 0, 1 and 2 bytes before it */
	for (size_t pad = 0; pad < 3; pad++) {
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s%s", (int)pad, "xy", creds);
		s = b64(buf, strlen(buf), false);
		assert_int_equal(find(m, s, &enc), 0);
		assert_int_equal(enc, TW_ENC_BASE64);
		free(s);
		s = b64(buf, strlen(buf), true);
		assert_int_equal(find(m, s, NULL), 0);
		free(s);
		t = b64(buf, strlen(buf), false);
		s = b64(t, strlen(t), false);
		assert_int_equal(find(m, s, &enc), 0);
		assert_int_equal(enc, TW_ENC_BASE64X2);
		free(s);
		free(t);
	}
	for (size_t pad = 0; pad < 5; pad++) {
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s%s", (int)pad, "wxyz", creds);
		s = b32(buf, strlen(buf));
		assert_int_equal(find(m, s, &enc), 0);
		assert_int_equal(enc, TW_ENC_BASE32);
		free(s);
	}
	tw_matcher_free(m);
}

/* The way a DNS tunnel sends it: hex in 60-character labels, lower-cased, split over names. */
static void test_dns_labels_and_streams(void **state)
{
	struct tw_matcher *m = tw_matcher_new(toks, 2, NULL);
	char *h = hex(creds, strlen(creds), false, ""), name[256];
	struct tw_stream st = { 0 };
	struct tw_hit hit;
	bool found = false;
	size_t n = strlen(h);

	(void)state;
	/* one query per 60 characters, each scanned on its own but as one stream */
	for (size_t off = 0; off < n && !found; off += 60) {
		snprintf(name, sizeof(name), "%.60s.%zu.exfil.test", h + off, off / 60);
		found = tw_scan(m, &st, (const uint8_t *)name, strlen(name), &hit);
	}
	assert_true(found);
	assert_int_equal(hit.token, 0);
	assert_int_equal(hit.enc, TW_ENC_HEX);
	/* a token cut in two halves, each far shorter than a window, across two calls */
	{
		const char *tok = toks[1];
		char a[64], b[64];

		memset(&st, 0, sizeof(st));
		snprintf(a, sizeof(a), "GET /?q=%.10s", tok);
		snprintf(b, sizeof(b), "%.10s HTTP/1.1\r\n", tok + 10);
		assert_false(tw_scan(m, &st, (const uint8_t *)a, strlen(a), &hit));
		assert_true(tw_scan(m, &st, (const uint8_t *)b, strlen(b), &hit));
		assert_int_equal(hit.token, 1);
		/* and the same stretch is not found again from the carry */
		assert_false(tw_scan(m, &st, (const uint8_t *)" ", 1, &hit));
	}
	/* in labels of 10, with the case a resolver may change */
	{
		char up[128], dotted[256];
		size_t o = 0;

		for (size_t i = 0; toks[1][i]; i++) {
			if (i && i % 10 == 0)
				dotted[o++] = '.';
			dotted[o++] = toks[1][i];
		}
		dotted[o] = '\0';
		for (size_t i = 0; i <= strlen(dotted); i++)
			up[i] = (char)(dotted[i] >= 'a' && dotted[i] <= 'z' ? dotted[i] - 32 : dotted[i]);
		assert_int_equal(find(m, dotted, NULL), 1);
		assert_int_equal(find(m, up, NULL), 1);
	}
	free(h);
	tw_matcher_free(m);
}

/* Wrapped, escaped, embedded in a larger body of more than one chunk. */
static void test_wrapped_escaped_large(void **state)
{
	struct tw_matcher *m = tw_matcher_new(toks, 2, NULL);
	char *s = b64(creds, strlen(creds), false), wrapped[512], json[256];
	size_t o = 0;
	char *big;

	(void)state;
	for (size_t i = 0; s[i]; i++) {
		if (i && i % 19 == 0)
			wrapped[o++] = '\n';
		wrapped[o++] = s[i];
	}
	wrapped[o] = '\0';
	assert_int_equal(find(m, wrapped, NULL), 0);
	free(s);
	snprintf(json, sizeof(json), "{\"k\":\"q7VbT2xKp9L\\u006d4RzW8cYd\\/N3fHs6JgA1e\"}");
	/* "\u006d" breaks the stretch at 11 characters: the rest, 17 and more, still matches */
	assert_int_equal(find(m, json, NULL), 0);
	/* 3 MiB of filler with the token at the end: found across chunks and calls */
	big = xmalloc(3u << 20);
	memset(big, '.', (3u << 20) - 64);
	memcpy(big + (3u << 20) - 64, toks[1], strlen(toks[1]) + 1);
	{
		struct tw_stream st = { 0 };
		struct tw_hit hit;
		bool f = false;

		for (size_t off = 0; off < (3u << 20) && !f; off += 1000) {
			size_t n = strlen(big + off) < 1000 ? strlen(big + off) : 1000;

			f = tw_scan(m, &st, (const uint8_t *)big + off, n, &hit);
		}
		assert_true(f);
		assert_int_equal(hit.token, 1);
	}
	free(big);
	tw_matcher_free(m);
}

/* What must not match: random bytes, ordinary text, another token, a short stretch. */
static void test_no_false_hits(void **state)
{
	char *other[] = { "Hk3Lm9Pq2Rs7Tv4Wx8Yz1Ab5Cd6Ef0Gh" };
	struct tw_matcher *m = tw_matcher_new(toks, 2, NULL);
	struct tw_matcher *o = tw_matcher_new(other, 1, NULL);
	struct tw_stream st = { 0 };
	struct tw_hit hit;
	uint8_t *rnd = xmalloc(1u << 20);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char part[32];

	(void)state;
	for (size_t i = 0; i < (1u << 20); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		rnd[i] = (uint8_t)x;
	}
	assert_false(tw_scan(m, &st, rnd, 1u << 20, &hit));
	/* random text of the tokens' own alphabet */
	for (size_t i = 0; i < (1u << 20); i++)
		rnd[i] = (uint8_t)"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[rnd[i] % 62];
	assert_false(tw_scan(m, &st, rnd, 1u << 20, &hit));
	assert_int_equal(find(m, "GET /registry/express HTTP/1.1\r\nHost: registry.npmjs.org\r\n"
			     "User-Agent: npm/10.8.2 node/v20.11.0 linux x64\r\n\r\n", NULL), -1);
	assert_int_equal(find(o, creds, NULL), -1);
	/* 13 characters of a token (less than the raw window) are not enough */
	snprintf(part, sizeof(part), "x%.13sx", toks[0] + 5);
	assert_int_equal(find(m, part, NULL), -1);
	snprintf(part, sizeof(part), "x%.14sx", toks[0] + 5);
	assert_int_equal(find(m, part, NULL), 0);
	free(rnd);
	tw_matcher_free(m);
	tw_matcher_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens_ok),
		cmocka_unit_test(test_matcher_refuses),
		cmocka_unit_test(test_encodings_of_the_file),
		cmocka_unit_test(test_dns_labels_and_streams),
		cmocka_unit_test(test_wrapped_escaped_large),
		cmocka_unit_test(test_no_false_hits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
