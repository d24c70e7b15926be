/*
 * test-wire.c — the protocol field codec: round trips, and hostile input
 * (every truncation, lying lengths, embedded NULs, trailing bytes) failing
 * cleanly.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "proto/wire.h"

static void encode_sample(struct wbuf *w)
{
	char *argv[] = { "npm", "ci", "", NULL };

	wbuf_init(w);
	wire_put_u8(w, 7);
	wire_put_u16(w, 0xbeef);
	wire_put_u32(w, 0xdeadbeef);
	wire_put_u64(w, 0x0123456789abcdefULL);
	wire_put_str(w, "hello");
	wire_put_str(w, NULL);
	wire_put_strv(w, argv);
}

static void test_round_trip(void **state)
{
	struct wbuf w;
	struct rbuf r;
	char *s, *absent, **v;

	(void)state;
	encode_sample(&w);
	rbuf_init(&r, w.p, w.len);
	assert_int_equal(wire_get_u8(&r), 7);
	assert_int_equal(wire_get_u16(&r), 0xbeef);
	assert_int_equal(wire_get_u32(&r), 0xdeadbeef);
	assert_true(wire_get_u64(&r) == 0x0123456789abcdefULL);
	s = wire_get_str(&r, 100);
	absent = wire_get_str(&r, 100);
	v = wire_get_strv(&r, 10, 100);
	assert_true(wire_done(&r));
	assert_string_equal(s, "hello");
	assert_null(absent);
	assert_non_null(v);
	assert_string_equal(v[0], "npm");
	assert_string_equal(v[2], "");
	assert_null(v[3]);
	free(s);
	strv_free(v);
	wbuf_free(&w);
}

/* Every strict prefix of a valid encoding must fail, never crash or over-read. */
static void test_every_truncation_fails(void **state)
{
	struct wbuf w;

	(void)state;
	encode_sample(&w);
	for (size_t cut = 0; cut < w.len; cut++) {
		uint8_t *copy = xmalloc(cut ? cut : 1);
		struct rbuf r;
		char *s, *a, **v;

		memcpy(copy, w.p, cut);
		rbuf_init(&r, copy, cut);
		wire_get_u8(&r);
		wire_get_u16(&r);
		wire_get_u32(&r);
		wire_get_u64(&r);
		s = wire_get_str(&r, 100);
		a = wire_get_str(&r, 100);
		v = wire_get_strv(&r, 10, 100);
		assert_false(wire_done(&r));
		free(s);
		free(a);
		strv_free(v);
		free(copy);
	}
	wbuf_free(&w);
}

static void test_hostile_fields(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
		int kind;       /* 0: str, 1: strv */
	} rows[] = {
		{ "length beyond the buffer", { 0xff, 0xff, 0xff, 0x7f, 'a' }, 5, 0 },
		{ "embedded NUL", { 3, 0, 0, 0, 'a', 0, 'b' }, 7, 0 },
		{ "over the per-field cap", { 9, 0, 0, 0, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
					      'a' }, 13, 0 },
		{ "strv count larger than the bytes could hold", { 0, 0, 0, 1 }, 4, 1 },
		{ "strv count over the cap", { 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 16, 1 },
		{ "strv entry absent", { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff }, 8, 1 },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct rbuf r;

		uint8_t *copy = xmalloc(rows[i].len);

		memcpy(copy, rows[i].bytes, rows[i].len);
		rbuf_init(&r, copy, rows[i].len);
		if (rows[i].kind == 0)
			assert_null(wire_get_str(&r, 8));
		else
			assert_null(wire_get_strv(&r, 10, 8));
		if (!r.failed)
			fail_msg("accepted: %s", rows[i].what);
		free(copy);
	}
}

static void test_trailing_bytes_detected(void **state)
{
	uint8_t b[] = { 1, 2 };
	struct rbuf r;

	(void)state;
	rbuf_init(&r, b, sizeof(b));
	wire_get_u8(&r);
	assert_false(wire_done(&r));
}

/* A string field of len bytes ('s'), or a vector of count empty strings, in an exact-size buffer. */
static uint8_t *encode_field(int kind, size_t n, size_t *len)
{
	struct wbuf w;
	uint8_t *copy;

	wbuf_init(&w);
	if (kind == 0) {
		char *str = xmalloc(n + 1);

		memset(str, 's', n);
		str[n] = '\0';
		wire_put_str(&w, str);
		free(str);
	} else {
		wire_put_u32(&w, (uint32_t)n);
		for (size_t i = 0; i < n; i++)
			wire_put_str(&w, "");
	}
	copy = xmalloc(w.len);
	memcpy(copy, w.p, w.len);
	*len = w.len;
	wbuf_free(&w);
	return copy;
}

/* Every cap, at the limit (accepted) and one past it (refused). */
static void test_limits(void **state)
{
	static const struct {
		const char *what;
		int kind;               /* 0: str, 1: strv */
		size_t n;               /* bytes of the string, entries of the vector */
		size_t max;             /* the caller's cap (entries for a vector) */
		bool ok;
	} rows[] = {
		{ "string at the caller's cap", 0, 8, 8, true },
		{ "string one past the caller's cap", 0, 9, 8, false },
		{ "string at WIRE_MAX_STRING", 0, WIRE_MAX_STRING, SIZE_MAX, true },
		{ "string one past WIRE_MAX_STRING", 0, WIRE_MAX_STRING + 1, SIZE_MAX, false },
		{ "empty string", 0, 0, 0, true },
		{ "vector at the caller's cap", 1, 10, 10, true },
		{ "vector one past the caller's cap", 1, 11, 10, false },
		{ "vector at WIRE_MAX_STRV", 1, WIRE_MAX_STRV, SIZE_MAX, true },
		{ "vector one past WIRE_MAX_STRV", 1, WIRE_MAX_STRV + 1, SIZE_MAX, false },
		{ "empty vector", 1, 0, 0, true },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		size_t len;
		uint8_t *b = encode_field(rows[i].kind, rows[i].n, &len);
		struct rbuf r;
		bool got;

		rbuf_init(&r, b, len);
		if (rows[i].kind == 0) {
			char *str = wire_get_str(&r, rows[i].max);

			got = str != NULL && strlen(str) == rows[i].n;
			free(str);
		} else {
			char **v = wire_get_strv(&r, rows[i].max, 8);

			got = v != NULL && strv_len(v) == rows[i].n;
			strv_free(v);
		}
		if (got != rows[i].ok || wire_done(&r) != rows[i].ok)
			fail_msg("%s: %s", rows[i].what, got ? "accepted" : "refused");
		free(b);
	}
}

/* A vector count the remaining bytes could just hold passes the count check; one more fails. */
static void test_strv_count_vs_bytes(void **state)
{
	uint8_t b[4 + 3 * 4] = { 3, 0, 0, 0 };
	struct rbuf r;
	char **v;

	(void)state;
	rbuf_init(&r, b, sizeof(b));
	v = wire_get_strv(&r, 10, 8);
	assert_non_null(v);
	assert_int_equal(strv_len(v), 3);
	assert_true(wire_done(&r));
	strv_free(v);
	b[0] = 4;
	rbuf_init(&r, b, sizeof(b));
	assert_null(wire_get_strv(&r, 10, 8));
	assert_true(r.failed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_truncation_fails),
		cmocka_unit_test(test_hostile_fields),
		cmocka_unit_test(test_trailing_bytes_detected),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_strv_count_vs_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
