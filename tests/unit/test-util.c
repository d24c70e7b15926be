/*
 * test-util.c — path arithmetic, size formatting, string vectors and the
 * JSON writer's escaping (the last line of defence between a hostile name
 * and a terminal or a parser), and SHA-256 against the standard's examples
 * and lengths around the padding's block boundary.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/sha256.h"
#include "common/util.h"

static void test_path_absolute(void **state)
{
	static const struct { const char *in, *base, *want; } rows[] = {
		{ "/a/b/c", NULL, "/a/b/c" },
		{ "/a//b/./c/", NULL, "/a/b/c" },
		{ "/a/b/../c", NULL, "/a/c" },
		{ "/../../x", NULL, "/x" },          /* never above the root */
		{ "/", NULL, "/" },
		{ "x/y", "/base", "/base/x/y" },
		{ "../y", "/base/dir", "/base/y" },
		{ ".", "/base", "/base" },
		{ "..", "/", "/" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *got = path_absolute(rows[i].in, rows[i].base);

		assert_non_null(got);
		assert_string_equal(got, rows[i].want);
		free(got);
	}
}

static void test_path_has_prefix(void **state)
{
	(void)state;
	assert_true(path_has_prefix("/home/u/proj", "/home/u"));
	assert_true(path_has_prefix("/home/u", "/home/u"));
	assert_false(path_has_prefix("/home/user", "/home/u"));   /* not a path prefix */
	assert_true(path_has_prefix("/anything", "/"));
	assert_false(path_has_prefix("/home", "/home/u"));
}

static void test_format_size(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(format_size(0, buf, sizeof(buf)), "0B");
	assert_string_equal(format_size(1023, buf, sizeof(buf)), "1023B");
	assert_string_equal(format_size(1024, buf, sizeof(buf)), "1.0KiB");
	assert_string_equal(format_size(39322, buf, sizeof(buf)), "38.4KiB");
	assert_string_equal(format_size(6396314, buf, sizeof(buf)), "6.1MiB");
}

static void test_strv(void **state)
{
	char **v = NULL, **d;

	(void)state;
	assert_int_equal(strv_len(v), 0);
	strv_push(&v, "a");
	strv_push(&v, "b");
	assert_int_equal(strv_len(v), 2);
	d = strv_dup(v);
	assert_string_equal(d[1], "b");
	assert_null(d[2]);
	strv_free(v);
	strv_free(d);
}

static char *json_of_string(const char *s)
{
	struct jbuf b;

	jbuf_init(&b);
	json_str(&b, s);
	return jbuf_steal(&b);
}

static void test_json_escaping(void **state)
{
	static const struct { const char *in, *want; } rows[] = {
		{ "plain", "\"plain\"" },
		{ "q\"b\\", "\"q\\\"b\\\\\"" },
		{ "\x1b[31mred", "\"\\u001b[31mred\"" },        /* terminal escape neutralised */
		{ "a\nb\tc", "\"a\\u000ab\\u0009c\"" },
		{ "\x7f", "\"\\u007f\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },             /* valid UTF-8 kept */
		{ "bad\xff", "\"bad\\ufffd\"" },                   /* invalid byte replaced */
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },              /* overlong '/' refused */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },   /* surrogate refused */
		{ "\xe2\x82", "\"\\ufffd\\ufffd\"" },              /* truncated sequence */
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *got = json_of_string(rows[i].in);

		assert_string_equal(got, rows[i].want);
		free(got);
	}
}

static void test_json_structure(void **state)
{
	struct jbuf b;
	char *s;

	(void)state;
	jbuf_init(&b);
	json_obj_begin(&b);
	json_kv_str(&b, "a", "x");
	json_kv_int(&b, "n", -3);
	json_key(&b, "list");
	json_arr_begin(&b);
	json_uint(&b, 1);
	json_bool(&b, true);
	json_null(&b);
	json_obj_begin(&b);
	json_obj_end(&b);
	json_arr_end(&b);
	json_kv_str(&b, "z", NULL);
	json_obj_end(&b);
	s = jbuf_steal(&b);
	assert_string_equal(s, "{\"a\":\"x\",\"n\":-3,\"list\":[1,true,null,{}],\"z\":null}");
	free(s);
}

/* SHA-256 of FIPS 180-4's examples, the empty string, and 55/56/64/119/120 bytes (padding edges). */
static void test_sha256(void **state)
{
	static const struct { const char *in; size_t repeat; const char *hex; } rows[] = {
		{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "x", 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072" },
		{ "x", 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e" },
		{ "x", 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c" },
		{ "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = strlen(rows[i].in), len = n * rows[i].repeat;
		char *buf = malloc(len + 1), hex[2 * SHA256_LEN + 1];
		uint8_t d[SHA256_LEN];

		assert_non_null(buf);
		for (size_t k = 0; k < rows[i].repeat; k++)
			memcpy(buf + k * n, rows[i].in, n);
		sha256_digest(buf, len, d);
		for (size_t k = 0; k < SHA256_LEN; k++)
			snprintf(hex + 2 * k, 3, "%02x", d[k]);
		assert_string_equal(hex, rows[i].hex);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_absolute),
		cmocka_unit_test(test_path_has_prefix),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_strv),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_json_structure),
		cmocka_unit_test(test_sha256),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
