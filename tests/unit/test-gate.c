/*
 * test-gate.c — the CI gate's pieces that need no session: the XML escaping
 * of payload-chosen strings (markup, a CDATA end, quotes, control bytes,
 * invalid and overlong UTF-8, the non-characters XML 1.0 forbids) and the
 * --fail-on words (tripwire among them, unknown ones refused), and the status rule
 * of a run the client did not see end.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "client/gate.h"
#include "common/util.h"
#include "spec/values.h"

#define FFFD "\xef\xbf\xbd"

/* Is out something XML 1.0 takes as character data and as an attribute value? */
static bool xml_safe(const char *out)
{
	const unsigned char *p = (const unsigned char *)out;
	size_t n = strlen(out);

	if (strstr(out, "]]>") || strchr(out, '<') || strchr(out, '>') || strchr(out, '"') ||
	    strchr(out, '\''))
		return false;
	for (const char *a = strchr(out, '&'); a; a = strchr(a + 1, '&'))
		if (strncmp(a, "&amp;", 5) && strncmp(a, "&lt;", 4) && strncmp(a, "&gt;", 4) &&
		    strncmp(a, "&quot;", 6) && strncmp(a, "&apos;", 6) && strncmp(a, "&#9;", 4) &&
		    strncmp(a, "&#10;", 5) && strncmp(a, "&#13;", 5))
			return false;
	while (n) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		if (len == 0 || cp < 0x20 || cp == 0xfffe || cp == 0xffff)
			return false;
		p += len;
		n -= len;
	}
	return true;
}

static void test_xml_escape(void **state)
{
	static const char *const rows[][2] = {
		{ "registry.npmjs.org:443", "registry.npmjs.org:443" },
		{ "<script>&\"'", "&lt;script&gt;&amp;&quot;&apos;" },
		{ "a]]>b", "a]]&gt;b" },
		{ "&amp;", "&amp;amp;" },
		{ "tab\tnl\ncr\r", "tab&#9;nl&#10;cr&#13;" },
		{ "\x1b[31mred\x7f", FFFD "[31mred\x7f" },   /* DEL is an XML 1.0 character */
		{ "nul\x01\x02\x1f", "nul" FFFD FFFD FFFD },
		{ "\xff\xfe", FFFD FFFD },                     /* not UTF-8 at all */
		{ "\xc0\xbc", FFFD FFFD },                     /* an overlong '<' */
		{ "\xe0\x80\xbc", FFFD FFFD FFFD },            /* overlong in three bytes */
		{ "\xed\xa0\x80", FFFD FFFD FFFD },            /* a surrogate */
		{ "\xef\xbf\xbe\xef\xbf\xbf", FFFD FFFD },     /* U+FFFE, U+FFFF */
		{ "cut\xe2\x82", "cut" FFFD FFFD },            /* a truncated sequence */
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\xa6", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\xa6" },
		{ "", "" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *out = gate_xml_escape(rows[i][0]);

		assert_string_equal(out, rows[i][1]);
		assert_true(xml_safe(out));
		free(out);
	}
	{
		char *out = gate_xml_escape(NULL);

		assert_string_equal(out, "");
		free(out);
	}
}

/* Every byte string of length 1 and 2 comes out safe (a small exhaustive sweep). */
static void test_xml_escape_every_pair(void **state)
{
	char in[3];

	(void)state;
	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			char *out;

			in[0] = (char)a;
			in[1] = (char)b;
			in[2] = '\0';
			out = gate_xml_escape(in);
			assert_true(xml_safe(out));
			free(out);
		}
}

static void test_fail_on_words(void **state)
{
	static const struct { const char *in; int rc; unsigned bits; const char *canon; } rows[] = {
		{ "deny", 0, FAIL_ON_DENY, "deny" },
		{ "alert,deny", 0, FAIL_ON_DENY | FAIL_ON_ALERT, "deny,alert" },
		{ "new-destination,new-destination", 0, FAIL_ON_NEW, "new-destination" },
		{ "deny,new-destination,alert", 0, FAIL_ON_DENY | FAIL_ON_NEW | FAIL_ON_ALERT,
		  "deny,new-destination,alert" },
		{ "tripwire", 0, FAIL_ON_TRIPWIRE, "tripwire" },
		{ "alert,tripwire,deny", 0, FAIL_ON_DENY | FAIL_ON_TRIPWIRE | FAIL_ON_ALERT,
		  "deny,tripwire,alert" },
		{ "tripwires", -1, 0, NULL },
		{ "bogus", -1, 0, NULL },
		{ "Deny", -1, 0, NULL },
		{ "deny,", -1, 0, NULL },
		{ "", -1, 0, NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		unsigned bits = 0;
		char *err = NULL;

		assert_int_equal(parse_fail_on(rows[i].in, &bits, &err), rows[i].rc);
		if (rows[i].rc == 0) {
			char *canon = fail_on_text(bits);

			assert_int_equal(bits, rows[i].bits);
			assert_string_equal(canon, rows[i].canon);
			free(canon);
		} else {
			assert_non_null(err);
		}
		free(err);
	}
}

/* No end of the run seen (no findings kept): a gate asked for fails, a failure wins. */
static void test_status_without_an_end(void **state)
{
	static char *argv[] = { "true", NULL };
	static const struct { unsigned fail_on; int code, want; } rows[] = {
		{ FAIL_ON_DENY, 0, EXIT_BOXY_GATE },
		{ FAIL_ON_DENY, 3, 3 },
		{ FAIL_ON_ALERT, 124, 124 },
		{ 0, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *xml, *json;

		assert_int_equal(gate_finish(rows[i].fail_on, argv, rows[i].code, &xml, &json),
				 rows[i].want);
		assert_non_null(strstr(xml, "<testcase classname=\"boxy.gate\" name=\"end-of-run\">"));
		assert_true((strstr(xml, "type=\"end-of-run\"") != NULL) == (rows[i].fail_on != 0));
		assert_non_null(strstr(json, "\"ended\":false"));
		free(xml);
		free(json);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_escape),
		cmocka_unit_test(test_xml_escape_every_pair),
		cmocka_unit_test(test_fail_on_words),
		cmocka_unit_test(test_status_without_an_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
