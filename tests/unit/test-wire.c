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

#include "util.h"
#include "wire.h"

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
		{ "over the per-field cap", { 10, 0, 0, 0, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
					      'a', 'a' }, 14, 0 },
		{ "strv count larger than the bytes could hold", { 0, 0, 0, 1 }, 4, 1 },
		{ "strv count over the cap", { 11, 0, 0, 0 }, 4, 1 },
		{ "strv entry absent", { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff }, 8, 1 },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct rbuf r;

		rbuf_init(&r, rows[i].bytes, rows[i].len);
		if (rows[i].kind == 0)
			assert_null(wire_get_str(&r, 8));
		else
			assert_null(wire_get_strv(&r, 10, 8));
		if (!r.failed)
			fail_msg("accepted: %s", rows[i].what);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_truncation_fails),
		cmocka_unit_test(test_hostile_fields),
		cmocka_unit_test(test_trailing_bytes_detected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
