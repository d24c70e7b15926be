/*
 * test-refusals.c — grouping what a session was refused: one refusal per
 * refused flow (its audit twin not counted again), groups by subject, layer
 * and reason, a bounded table, the wire form, and the fix each group gets.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/refusals.h"
#include "ui/summary.h"
#include "common/util.h"

static struct event flow_deny(const char *host, const char *addr, uint16_t port,
			      const char *layer, const char *why)
{
	return (struct event){ .kind = "tcp", .verdict = "deny", .layer = layer,
			       .subject = "tcp://x", .detail = why, .addr = addr, .port = port,
			       .host = host };
}

/* A refused flow arrives as an audit event and a tcp event: it counts once. */
static void test_once_per_flow(void **state)
{
	struct refusals t;
	struct event audit = { .kind = "audit", .verdict = "deny", .layer = "net.ip",
			       .subject = "tcp://169.254.169.254:80",
			       .detail = "link-local / cloud metadata" };
	struct event flow = flow_deny(NULL, "169.254.169.254", 80, "net.ip",
				      "link-local / cloud metadata");
	struct event allow = { .kind = "tcp", .verdict = "allow", .layer = "net.ip" };
	struct event dns = { .kind = "audit", .verdict = "deny", .layer = "net.dns",
			     .subject = "c2.example.net", .detail = "hostname not on the allowlist" };

	(void)state;
	refusals_init(&t);
	assert_false(refusals_add_event(&t, &audit));
	assert_true(refusals_add_event(&t, &flow));
	assert_false(refusals_add_event(&t, &allow));
	assert_true(refusals_add_event(&t, &dns));
	assert_true(refusals_add_event(&t, &dns));
	assert_int_equal(t.total, 3);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.v[0].subject, "169.254.169.254:80");
	assert_int_equal(t.v[0].count, 1);
	assert_string_equal(t.v[1].subject, "c2.example.net");
	assert_int_equal(t.v[1].count, 2);
	/* A name the flow was bound to names it; IPv6 gets brackets. */
	flow = flow_deny("api.example.com", "93.184.216.34", 8443, "net.ip",
			 "port not allowed for this host");
	refusals_add_event(&t, &flow);
	assert_string_equal(t.v[2].subject, "api.example.com:8443");
	flow = flow_deny(NULL, "fd00::1", 22, "net.ip", "unique local (RFC 4193)");
	refusals_add_event(&t, &flow);
	assert_string_equal(t.v[3].subject, "[fd00::1]:22");
	refusals_free(&t);
}

/* The table is bounded: past the cap a refusal is counted, not kept. */
static void test_bounded(void **state)
{
	struct refusals t;
	char name[64];

	(void)state;
	refusals_init(&t);
	for (int i = 0; i < REFUSALS_GROUPS_MAX + 10; i++) {
		struct event ev = { .kind = "audit", .verdict = "deny", .layer = "net.dns",
				    .subject = name, .detail = "hostname not on the allowlist" };

		snprintf(name, sizeof(name), "n%d.example.net", i);
		refusals_add_event(&t, &ev);
	}
	assert_int_equal(t.n, REFUSALS_GROUPS_MAX);
	assert_int_equal(t.other, 10);
	assert_int_equal(t.total, REFUSALS_GROUPS_MAX + 10);
	refusals_free(&t);
}

/*
 * Decoys fill the table first: a refusal of a kind no group holds still gets
 * one (the metadata address dialled once after a hundred refused names), a
 * second of a kind held does not, reasons that differ only by the address
 * they name are one kind, and the extra groups are bounded too.
 */
static void test_decoys_do_not_hide(void **state)
{
	struct refusals t, back;
	struct event meta = flow_deny(NULL, "169.254.169.254", 80, "net.ip",
				      "link-local / cloud metadata");
	struct event meta2 = flow_deny(NULL, "169.254.0.9", 80, "net.ip",
				       "link-local / cloud metadata");
	char name[64], why[160], *text = NULL;
	size_t len = 0;
	struct wbuf w;
	struct rbuf r;
	FILE *f;

	(void)state;
	refusals_init(&t);
	for (int i = 0; i < 100; i++) {
		struct event ev = { .kind = "audit", .verdict = "deny", .layer = "net.dns",
				    .subject = name, .detail = "hostname not on the allowlist" };

		snprintf(name, sizeof(name), "decoy%d.example.net", i);
		refusals_add_event(&t, &ev);
		refusals_add_event(&t, &ev);     /* twice each: more frequent than the probe */
	}
	assert_int_equal(t.n, REFUSALS_GROUPS_MAX);
	assert_true(refusals_add_event(&t, &meta));
	assert_int_equal(t.n, REFUSALS_GROUPS_MAX + 1);
	assert_string_equal(t.v[REFUSALS_GROUPS_MAX].subject, "169.254.169.254:80");
	assert_true(refusals_add_event(&t, &meta2));
	assert_int_equal(t.n, REFUSALS_GROUPS_MAX + 1);       /* its kind is held */
	/* Answers naming a thousand addresses: one kind, one extra group. */
	for (int i = 0; i < 1000; i++) {
		struct event ev = { .kind = "audit", .verdict = "deny", .layer = "net.ip",
				    .subject = name, .detail = why };

		snprintf(name, sizeof(name), "r%d.example.net", i);
		snprintf(why, sizeof(why), "answered with 10.0.%d.%d, in the private range: dropped "
			 "(to allow it: --allow-cidr 10.0.%d.%d/32)", i / 256, i % 256, i / 256,
			 i % 256);
		refusals_add_event(&t, &ev);
	}
	assert_int_equal(t.n, REFUSALS_GROUPS_MAX + 2);
	/* Layers a payload makes up do not exist, but the extra room is bounded anyway. */
	for (int i = 0; i < 100; i++) {
		struct event ev = { .kind = "audit", .verdict = "deny", .layer = name,
				    .subject = "x", .detail = "y" };

		snprintf(name, sizeof(name), "layer%d", i);
		refusals_add_event(&t, &ev);
	}
	assert_int_equal(t.n, REFUSALS_GROUPS_MAX + REFUSALS_KINDS_MAX);
	/* The full table crosses the wire. */
	wbuf_init(&w);
	refusals_encode(&w, &t);
	rbuf_init(&r, w.p, w.len);
	assert_int_equal(refusals_decode(&r, &back), 0);
	assert_int_equal(back.n, t.n);
	refusals_free(&back);
	wbuf_free(&w);
	/* The summary's ten rows show every kind before a kind twice: the probe is named. */
	f = open_memstream(&text, &len);
	summary_print_refusals(f, &t, false, NULL);
	fclose(f);
	assert_non_null(strstr(text, "169.254.169.254:80"));
	assert_non_null(strstr(text, "decoy0.example.net"));
	assert_non_null(strstr(text, "answered with 10.0.0.0"));
	free(text);
	refusals_free(&t);
}

/* Encoded and decoded: the same table; every truncation refused. */
static void test_wire(void **state)
{
	struct refusals t, back;
	struct event dns = { .kind = "audit", .verdict = "deny", .layer = "net.dns",
			     .subject = "c2.example.net", .detail = "hostname not on the allowlist" };
	struct wbuf w;
	struct rbuf r;

	(void)state;
	refusals_init(&t);
	refusals_add_event(&t, &dns);
	wbuf_init(&w);
	refusals_encode(&w, &t);
	rbuf_init(&r, w.p, w.len);
	assert_int_equal(refusals_decode(&r, &back), 0);
	assert_true(wire_done(&r));
	assert_int_equal(back.n, 1);
	assert_string_equal(back.v[0].reason, "hostname not on the allowlist");
	refusals_free(&back);
	for (size_t cut = 0; cut < w.len; cut++) {
		rbuf_init(&r, w.p, cut);
		if (refusals_decode(&r, &back) == 0) {
			assert_false(wire_done(&r));
			refusals_free(&back);
		}
	}
	wbuf_free(&w);
	refusals_free(&t);
}

/* The fix: suggested where allowing it is a choice, never for what an attack dials. */
static void test_fix(void **state)
{
	static const struct {
		const char *subject, *layer, *reason, *fix;
	} rows[] = {
		{ "c2.example.net", "net.dns", "hostname not on the allowlist",
		  "--allow-host c2.example.net" },
		{ "registry.npmjs.org", "net.ip", "answered with 203.0.113.80, in the documentation "
		  "range: dropped (to allow it: --allow-cidr 203.0.113.80/32)",
		  "--allow-cidr 203.0.113.80/32" },
		{ "1.2.3.4:80", "net.ip", "network disabled (--net none)", "--net public" },
		{ "api.example.com:8443", "net.ip", "port not allowed for this host",
		  "--allow-host api.example.com:8443" },
		{ "93.184.216.34:8443", "net.ip", "port not allowed for this host", NULL },
		{ "169.254.169.254:80", "net.ip", "link-local / cloud metadata", NULL },
		{ "10.0.0.1:22", "net.ip", "private (RFC 1918)", NULL },
		{ "payload", "seccomp", "the payload was killed by the seccomp filter", NULL },
		{ "x", "net.ip", "broken (to allow it: )", NULL },
		/* A hint a store kept from before: never one that opens the user's own
		 * machine or network, whichever name answered it. */
		{ "metadata.example.test", "net.ip", "answered with 169.254.169.254, in the "
		  "link-local / cloud metadata range: dropped (to allow it: --allow-cidr "
		  "169.254.169.254/32)", NULL },
		{ "lan.example.test", "net.ip", "answered with 192.168.1.1, in the private (RFC 1918) "
		  "range: dropped (to allow it: --allow-cidr 192.168.1.1/32)", NULL },
		{ "v6.example.test", "net.ip", "answered with ::1, in the loopback range: dropped "
		  "(to allow it: --allow-cidr ::1/128)", NULL },
		{ "x", "net.ip", "odd (to allow it: --allow-cidr not-an-address/32)", NULL },
		{ "bench.example.test", "net.ip", "answered with 198.18.0.7, in the benchmarking range: "
		  "dropped (to allow it: --allow-cidr 198.18.0.7/32)", "--allow-cidr 198.18.0.7/32" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct refusal_group g = { .subject = (char *)rows[i].subject,
					   .layer = (char *)rows[i].layer,
					   .reason = (char *)rows[i].reason, .count = 1 };
		char *fix = refusal_fix(&g);

		if (!rows[i].fix) {
			if (fix)
				fail_msg("row %zu: want no fix, got '%s'", i, fix);
		} else {
			assert_non_null(fix);
			assert_string_equal(fix, rows[i].fix);
		}
		free(fix);
	}
}

/* The printed summary: most frequent first, hostile names sanitized, the fix shown once. */
static void test_print(void **state)
{
	struct refusals t;
	struct event a = { .kind = "audit", .verdict = "deny", .layer = "net.dns",
			   .subject = "evil\x1b]52;c;Y3VybHxzaA==\x07.example",
			   .detail = "hostname not on the allowlist" };
	struct event b = { .kind = "audit", .verdict = "deny", .layer = "net.ip",
			   .subject = "registry.npmjs.org",
			   .detail = "answered with 203.0.113.80, in the documentation range: dropped "
				     "(to allow it: --allow-cidr 203.0.113.80/32)" };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	refusals_init(&t);
	refusals_add_event(&t, &a);
	refusals_add_event(&t, &b);
	refusals_add_event(&t, &b);
	f = open_memstream(&text, &len);
	summary_print_refusals(f, &t, false, NULL);
	fclose(f);
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\x07'));
	assert_non_null(strstr(text, "boxy: 3 refused\n"));
	/* b (twice) before a; its reason without the hint, the fix after it. */
	assert_true(strstr(text, "registry.npmjs.org") < strstr(text, "example"));
	assert_non_null(strstr(text, "in the documentation range: dropped  fix: --allow-cidr "
				     "203.0.113.80/32\n"));
	assert_null(strstr(text, "(to allow it"));
	free(text);
	/* Nothing refused: nothing printed. */
	refusals_free(&t);
	text = NULL;
	f = open_memstream(&text, &len);
	summary_print_refusals(f, &t, true, NULL);
	fclose(f);
	assert_string_equal(text, "");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once_per_flow),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_decoys_do_not_hide),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_fix),
		cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
