/*
 * test-json.c — every JSON encoder boxy writes for scripts (common/json.c, the
 * --audit-log lines of daemon/audit.c, the --net-log document of broker/netlog.c, a
 * stored row re-embedded by `boxy show --json`) given the hostile names a
 * payload can choose: ESC sequences, C1 controls, overlong UTF-8, bidi
 * overrides, surrogates, truncated sequences, long names. The output is
 * checked with a JSON validator of the test's own: well-formed JSON, in
 * well-formed UTF-8, and no control character raw (every C0, DEL, C1 and
 * bidi/format character \u-escaped), whatever the encoder thinks it did.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/audit.h"
#include "common/json.h"
#include "broker/netlog.h"
#include "common/util.h"

static const char *const hostile[] = {
	"evil\x1b]52;c;Y3VybCBldmlsfHNo\x07.com",      /* OSC 52 clipboard */
	"a\x1b[2J\x1b[6nb",                             /* clear, cursor report */
	"\xc2\x9b" "31m",                               /* C1 CSI */
	"\xc2\x85\xc2\x90\xc2\x9c\xc2\x9d\xc2\x9e\xc2\x9f",   /* NEL DCS ST OSC PM APC */
	"\xc0\x9b" "31m",                               /* overlong CSI */
	"\xe0\x80\x9b" "31m",                           /* 3-byte overlong */
	"\xf0\x80\x80\x9b",                             /* 4-byte overlong */
	"x\xe2\x80\xae" "gpj.exe",                      /* U+202E */
	"\xe2\x81\xa6" "i\xe2\x81\xa9\xe2\x80\x8b\xef\xbb\xbf",  /* isolates, ZWSP, BOM */
	"\xf3\xa0\x80\x81tag",                          /* a tag character */
	"\xed\xa0\x80\xed\xbf\xbf",                     /* surrogates */
	"\xf4\x90\x80\x80",                             /* past U+10FFFF */
	"trunc\xe2\x80",                                /* truncated */
	"q\"uo\\te\x01\x7f",                            /* quote, backslash, C0, DEL */
	"$(cd;id>x)\n`id`",                             /* a payload's directory name */
	"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80",          /* must survive */
};

struct cursor {
	const unsigned char *p, *end;
};

/* One code point of well-formed UTF-8; fails the test otherwise. */
static uint32_t take_utf8(struct cursor *c)
{
	const unsigned char *p = c->p;
	uint32_t cp;
	size_t n;

	if (p[0] < 0x80) {
		n = 1;
		cp = p[0];
	} else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1fu;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0fu;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07u;
	} else {
		fail_msg("invalid UTF-8 lead byte 0x%02x", p[0]);
		return 0;
	}
	if ((size_t)(c->end - p) < n)
		fail_msg("truncated UTF-8");
	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			fail_msg("bad UTF-8 continuation");
		cp = cp << 6 | (p[k] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		fail_msg("overlong or invalid code point U+%04X", (unsigned)cp);
	c->p += n;
	return cp;
}

/* Raw in the output bytes, these would reach whoever cats the file. */
static bool raw_forbidden(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0xfeff || (cp >= 0xe0000 && cp <= 0xe007f);
}

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
}

static void json_value(struct cursor *c);

static void json_string(struct cursor *c)
{
	assert_true(c->p < c->end && *c->p == '"');
	c->p++;
	for (;;) {
		uint32_t cp;

		if (c->p >= c->end)
			fail_msg("unterminated string");
		if (*c->p == '"') {
			c->p++;
			return;
		}
		if (*c->p == '\\') {
			c->p++;
			if (c->p >= c->end)
				fail_msg("truncated escape");
			if (strchr("\"\\/bfnrt", *c->p)) {
				c->p++;
			} else if (*c->p == 'u') {
				for (int k = 1; k <= 4; k++)
					if (c->p + k >= c->end || !strchr("0123456789abcdefABCDEF",
									   c->p[k]))
						fail_msg("bad \\u escape");
				c->p += 5;
			} else {
				fail_msg("bad escape \\%c", *c->p);
			}
			continue;
		}
		cp = take_utf8(c);
		if (raw_forbidden(cp))
			fail_msg("raw control U+%04X inside a string", (unsigned)cp);
	}
}

static void json_value(struct cursor *c)
{
	skip_ws(c);
	if (c->p >= c->end)
		fail_msg("value expected");
	if (*c->p == '"') {
		json_string(c);
	} else if (*c->p == '{' || *c->p == '[') {
		char close = *c->p == '{' ? '}' : ']';
		bool obj = close == '}';

		c->p++;
		skip_ws(c);
		if (c->p < c->end && *c->p == close) {
			c->p++;
			return;
		}
		for (;;) {
			skip_ws(c);
			if (obj) {
				json_string(c);
				skip_ws(c);
				if (c->p >= c->end || *c->p != ':')
					fail_msg("':' expected");
				c->p++;
			}
			json_value(c);
			skip_ws(c);
			if (c->p < c->end && *c->p == ',') {
				c->p++;
				continue;
			}
			if (c->p < c->end && *c->p == close) {
				c->p++;
				return;
			}
			fail_msg("',' or '%c' expected", close);
		}
	} else if (strncmp((const char *)c->p, "true", 4) == 0) {
		c->p += 4;
	} else if (strncmp((const char *)c->p, "false", 5) == 0) {
		c->p += 5;
	} else if (strncmp((const char *)c->p, "null", 4) == 0) {
		c->p += 4;
	} else if (*c->p == '-' || (*c->p >= '0' && *c->p <= '9')) {
		c->p++;
		while (c->p < c->end && strchr("0123456789.eE+-", *c->p))
			c->p++;
	} else {
		fail_msg("unexpected byte 0x%02x", *c->p);
	}
}

/* text is exactly one JSON document (plus optional trailing newline). */
static void assert_json_clean(const char *text)
{
	struct cursor c = { (const unsigned char *)text,
			    (const unsigned char *)text + strlen(text) };

	json_value(&c);
	skip_ws(&c);
	if (c.p != c.end)
		fail_msg("trailing bytes after the document: %s", (const char *)c.p);
}

/* json_str and json_key directly. */
static void test_json_str_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		struct jbuf b;
		char *out;

		jbuf_init(&b);
		json_obj_begin(&b);
		json_kv_str(&b, hostile[i], hostile[i]);
		json_obj_end(&b);
		out = jbuf_steal(&b);
		assert_json_clean(out);
		free(out);
	}
}

/* The exact escapes: C1 as \u00XX, U+202E as \u202e, invalid bytes as \ufffd. */
static void test_json_exact(void **state)
{
	static const struct { const char *in, *want; } rows[] = {
		{ "\xc2\x9b" "31m", "\"\\u009b31m\"" },
		{ "\x1b[0m", "\"\\u001b[0m\"" },
		{ "\x7f", "\"\\u007f\"" },
		{ "\xc0\x9b", "\"\\ufffd\\ufffd\"" },
		{ "x\xe2\x80\xaey", "\"x\\u202ey\"" },
		{ "\xf3\xa0\x80\x81", "\"\\udb40\\udc01\"" },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct jbuf b;
		char *out;

		jbuf_init(&b);
		json_str(&b, rows[i].in);
		out = jbuf_steal(&b);
		assert_string_equal(out, rows[i].want);
		free(out);
	}
}

/* --audit-log: each line one clean JSON object, however hostile the event. */
static void test_audit_hostile(void **state)
{
	char path[] = "/tmp/boxy-audit.XXXXXX";
	char line[65536];
	int fd = mkstemp(path);
	struct audit_log *al;
	struct event_sink sink;
	FILE *f;
	size_t lines = 0;

	(void)state;
	assert_true(fd >= 0);
	al = audit_log_create(fd);
	sink = audit_log_sink(al);
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		struct event ev = {
			.t_ms = 1, .session = hostile[i], .kind = "audit", .layer = hostile[i],
			.verdict = hostile[i], .subject = hostile[i], .detail = hostile[i],
		};

		sink.emit(sink.ctx, &ev);
	}
	audit_log_free(al);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		assert_json_clean(line);
		lines++;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(lines, ARRAY_SIZE(hostile));
}

/* --net-log: the whole document, with hostile host, SNI, reason and names. */
static void test_netlog_hostile(void **state)
{
	struct netlog *nl = netlog_create();
	struct net_addr a;
	char *json;

	(void)state;
	assert_int_equal(net_addr_parse("104.16.0.34", &a), 0);
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		struct netlog_conn c = {
			.t_ms = i, .proto = NET_PROTO_TCP, .allowed = i % 2, .addr = a, .port = 443,
			.host = hostile[i], .sni = hostile[i], .reason = i % 2 ? NULL : hostile[i],
		};

		netlog_add_conn(nl, &c);
		netlog_add_resolution(nl, hostile[i], &a, 1);
	}
	json = netlog_to_json(nl);
	assert_json_clean(json);
	free(json);
	netlog_free(nl);
}

/* A stored row an older build wrote with raw bytes, embedded again by show --json. */
static void test_raw_json_reescaped(void **state)
{
	static const char *const rows[] = {
		"[\"npm\",\"\xc2\x9b" "31m\",\"x\xe2\x80\xae" "y\",\"\xc0\x9b\"]",
		"{\"workdir\":\"/h/\x1b]0;t\x07\",\"mounts\":[]}",
		"[\"a\\\"\xc2\x9b\\\\\",\"trunc\xe2\x80\"]",
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct jbuf b;
		char *out;

		jbuf_init(&b);
		jbuf_raw_json(&b, rows[i]);
		out = jbuf_steal(&b);
		assert_json_clean(out);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_str_hostile),
		cmocka_unit_test(test_json_exact),
		cmocka_unit_test(test_audit_hostile),
		cmocka_unit_test(test_netlog_hostile),
		cmocka_unit_test(test_raw_json_reescaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
