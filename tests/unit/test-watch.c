/*
 * test-watch.c — boxy watch's lines and model: the specification's RECENT
 * lines reproduced, hostile names neutralised before they reach a
 * terminal, snapshots decoded (and malformed ones refused).
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
#include "watch.h"
#include "wire.h"

static void test_sanitize(void **state)
{
	static const struct { const char *in, *want; } rows[] = {
		{ "registry.npmjs.org", "registry.npmjs.org" },
		{ "evil\x1b]0;pwned\x07.com", "evil?]0;pwned?.com" },    /* OSC title injection */
		{ "a\x1b[2Jb", "a?[2Jb" },                                 /* clear screen */
		{ "\xc2\x9b" "31m", "??31m" },                             /* C1 CSI */
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "\xff\xfe", "??" },
		{ "line\nbreak\r", "line?break?" },
		{ NULL, "" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *got = watch_sanitize(rows[i].in);

		assert_string_equal(got, rows[i].want);
		free(got);
	}
}

static void test_spec_lines(void **state)
{
	struct event dns = {
		.kind = "dns", .verdict = "resolve", .subject = "registry.npmjs.org",
		.detail = "104.16.0.35 104.16.1.35", .t_rel_ms = 104,
	};
	struct event allow = {
		.kind = "tcp", .verdict = "allow", .addr = "104.16.0.35", .port = 443,
		.host = "registry.npmjs.org", .t_rel_ms = 118,
	};
	struct event close_ = {
		.kind = "tcp", .verdict = "close", .addr = "104.16.0.35", .port = 443,
		.host = "registry.npmjs.org", .up = 1434, .down = 2202010, .t_rel_ms = 2905,
	};
	struct event dnsdeny = {
		.kind = "dns", .verdict = "deny", .layer = "net.dns",
		.subject = "c2.5f3a1.example.net", .detail = "hostname not on the allowlist",
		.t_rel_ms = 7914,
	};
	struct event tcpdeny = {
		.kind = "tcp", .verdict = "deny", .layer = "net.ip", .addr = "169.254.169.254",
		.port = 80, .detail = "link-local / cloud metadata", .t_rel_ms = 8002,
	};
	struct event audit = {
		.kind = "audit", .verdict = "degraded", .layer = "cgroup", .subject = "memory",
		.detail = "not enforced", .t_rel_ms = 61234,
	};
	char *l;

	(void)state;
	l = watch_format_event(&dns);
	assert_string_equal(l, "00:00.104 dns      resolve registry.npmjs.org"
			    "                 104.16.0.35 104.16.1.35");
	free(l);
	l = watch_format_event(&allow);
	assert_string_equal(l, "00:00.118 tcp      allow   registry.npmjs.org:443");
	free(l);
	l = watch_format_event(&close_);
	assert_string_equal(l, "00:02.905 tcp      close   registry.npmjs.org:443"
			    "             up 1.4KiB  down 2.1MiB");
	free(l);
	l = watch_format_event(&dnsdeny);
	assert_string_equal(l, "00:07.914 net.dns  deny    c2.5f3a1.example.net"
			    "               hostname not on the allowlist");
	assert_true(watch_event_is_deny(&dnsdeny));
	free(l);
	l = watch_format_event(&tcpdeny);
	assert_string_equal(l, "00:08.002 tcp      deny    169.254.169.254:80"
			    "                 link-local / cloud metadata");
	free(l);
	l = watch_format_event(&audit);
	assert_string_equal(l, "01:01.234 cgroup   degraded memory"
			    "                             not enforced");
	free(l);
}

static void test_snapshot(void **state)
{
	char *argv[] = { "npm", "ci", NULL };
	struct watch_model m;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wire_put_str(&w, "9f3c1ba2aaaaaaaa");
	wire_put_str(&w, "running");
	wire_put_strv(&w, argv);
	wire_put_u64(&w, 9000);
	wire_put_u64(&w, 15);
	wire_put_u64(&w, 2);
	wire_put_u64(&w, 39322);
	wire_put_u64(&w, 6396314);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "registry.npmjs.org");
	for (int i = 0; i < 5; i++)
		wire_put_u64(&w, (uint64_t)i + 1);
	/* What was refused, grouped: 3 in all, 1 past the table, one group of 2. */
	wire_put_u64(&w, 3);
	wire_put_u64(&w, 1);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "other.example.test");
	wire_put_str(&w, "net.dns");
	wire_put_str(&w, "hostname not on the allowlist");
	wire_put_u64(&w, 2);
	watch_model_init(&m);
	assert_int_equal(watch_model_snapshot(&m, w.p, w.len), 0);
	assert_int_equal(m.refusals.total, 3);
	assert_int_equal(m.refusals.n, 1);
	assert_string_equal(m.refusals.v[0].layer, "net.dns");
	assert_string_equal(m.cmdline, "npm ci");
	assert_int_equal(m.ndests, 1);
	assert_int_equal(m.dests[0].received, 5);
	/* Every truncation is refused and leaves the model as it was. */
	for (size_t cut = 0; cut < w.len; cut++)
		assert_int_equal(watch_model_snapshot(&m, w.p, cut), -1);
	assert_string_equal(m.cmdline, "npm ci");
	watch_model_free(&m);
	wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_spec_lines),
		cmocka_unit_test(test_snapshot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
