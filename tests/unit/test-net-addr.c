/*
 * test-net-addr.c — the range denylist, row by row.
 *
 * Every range is tested at its first and last address and one address
 * outside on each side, and every IPv6 decoding with an embedded IPv4 that
 * changes the verdict. The rows are the threat model: each refused row is
 * an address a payload might dial to reach something private.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <sys/socket.h>

#include "policy/addr.h"
#include "spec/values.h"

struct class_row {
	const char *addr;
	enum net_range range;
	enum net_embed via;
	const char *judged;     /* the decoded address when via != NONE */
};

#define PUB(a) { a, NET_RANGE_PUBLIC, NET_EMBED_NONE, NULL }
#define REF(a, r) { a, r, NET_EMBED_NONE, NULL }
#define DEC(a, r, v, j) { a, r, v, j }

static const struct class_row class_rows[] = {
	/* 0.0.0.0/8 "this network" — 0.0.0.0 reaches the host itself on Linux */
	REF("0.0.0.0", NET_RANGE_THIS_NETWORK),
	REF("0.255.255.255", NET_RANGE_THIS_NETWORK),
	PUB("1.0.0.0"),
	/* 10.0.0.0/8 */
	PUB("9.255.255.255"),
	REF("10.0.0.0", NET_RANGE_PRIVATE),
	REF("10.255.255.255", NET_RANGE_PRIVATE),
	PUB("11.0.0.0"),
	/* 100.64.0.0/10 */
	PUB("100.63.255.255"),
	REF("100.64.0.0", NET_RANGE_CGNAT),
	REF("100.127.255.255", NET_RANGE_CGNAT),
	PUB("100.128.0.0"),
	/* 127.0.0.0/8 */
	PUB("126.255.255.255"),
	REF("127.0.0.0", NET_RANGE_LOOPBACK),
	REF("127.0.0.1", NET_RANGE_LOOPBACK),
	REF("127.255.255.255", NET_RANGE_LOOPBACK),
	PUB("128.0.0.0"),
	/* 169.254.0.0/16, with the cloud metadata address */
	PUB("169.253.255.255"),
	REF("169.254.0.0", NET_RANGE_LINK_LOCAL),
	REF("169.254.169.254", NET_RANGE_LINK_LOCAL),
	REF("169.254.255.255", NET_RANGE_LINK_LOCAL),
	PUB("169.255.0.0"),
	/* 172.16.0.0/12 */
	PUB("172.15.255.255"),
	REF("172.16.0.0", NET_RANGE_PRIVATE),
	REF("172.31.255.255", NET_RANGE_PRIVATE),
	PUB("172.32.0.0"),
	/* 192.0.0.0/24 */
	PUB("191.255.255.255"),
	REF("192.0.0.0", NET_RANGE_IETF_PROTOCOL),
	REF("192.0.0.9", NET_RANGE_IETF_PROTOCOL),
	REF("192.0.0.255", NET_RANGE_IETF_PROTOCOL),
	PUB("192.0.1.0"),
	/* 192.0.2.0/24 TEST-NET-1 */
	PUB("192.0.1.255"),
	REF("192.0.2.0", NET_RANGE_DOCUMENTATION),
	REF("192.0.2.255", NET_RANGE_DOCUMENTATION),
	PUB("192.0.3.0"),
	/* 192.31.196.0/24 AS112 */
	PUB("192.31.195.255"),
	REF("192.31.196.0", NET_RANGE_AS112),
	REF("192.31.196.255", NET_RANGE_AS112),
	PUB("192.31.197.0"),
	/* 192.52.193.0/24 AMT */
	PUB("192.52.192.255"),
	REF("192.52.193.0", NET_RANGE_AMT),
	REF("192.52.193.255", NET_RANGE_AMT),
	PUB("192.52.194.0"),
	/* 192.88.99.0/24 6to4 relay anycast */
	PUB("192.88.98.255"),
	REF("192.88.99.0", NET_RANGE_6TO4_RELAY),
	REF("192.88.99.255", NET_RANGE_6TO4_RELAY),
	PUB("192.88.100.0"),
	/* 192.168.0.0/16 */
	PUB("192.167.255.255"),
	REF("192.168.0.0", NET_RANGE_PRIVATE),
	REF("192.168.255.255", NET_RANGE_PRIVATE),
	PUB("192.169.0.0"),
	/* 192.175.48.0/24 AS112 direct delegation */
	PUB("192.175.47.255"),
	REF("192.175.48.0", NET_RANGE_AS112),
	REF("192.175.48.255", NET_RANGE_AS112),
	PUB("192.175.49.0"),
	/* 198.18.0.0/15 */
	PUB("198.17.255.255"),
	REF("198.18.0.0", NET_RANGE_BENCHMARKING),
	REF("198.19.255.255", NET_RANGE_BENCHMARKING),
	PUB("198.20.0.0"),
	/* 198.51.100.0/24 TEST-NET-2 */
	PUB("198.51.99.255"),
	REF("198.51.100.0", NET_RANGE_DOCUMENTATION),
	REF("198.51.100.255", NET_RANGE_DOCUMENTATION),
	PUB("198.51.101.0"),
	/* 203.0.113.0/24 TEST-NET-3 */
	PUB("203.0.112.255"),
	REF("203.0.113.0", NET_RANGE_DOCUMENTATION),
	REF("203.0.113.255", NET_RANGE_DOCUMENTATION),
	PUB("203.0.114.0"),
	/* 224.0.0.0/4, 240.0.0.0/4, 255.255.255.255 */
	PUB("223.255.255.255"),
	REF("224.0.0.0", NET_RANGE_MULTICAST),
	REF("239.255.255.255", NET_RANGE_MULTICAST),
	REF("240.0.0.0", NET_RANGE_RESERVED),
	REF("255.255.255.254", NET_RANGE_RESERVED),
	REF("255.255.255.255", NET_RANGE_BROADCAST),
	/* ordinary public addresses */
	PUB("8.8.8.8"),
	PUB("1.1.1.1"),
	PUB("104.16.0.34"),

	/* IPv6 without embedded IPv4 */
	REF("::", NET_RANGE_UNSPECIFIED),
	REF("::1", NET_RANGE_LOOPBACK),
	REF("100::", NET_RANGE_DISCARD),
	REF("100::ffff:ffff:ffff:ffff", NET_RANGE_DISCARD),
	REF("100:0:0:1::", NET_RANGE_DUMMY),
	REF("100:0:0:1:ffff:ffff:ffff:ffff", NET_RANGE_DUMMY),
	REF("100:0:0:2::", NET_RANGE_NOT_GLOBAL),
	REF("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_NOT_GLOBAL),
	PUB("2000::"),
	REF("2001:1::", NET_RANGE_IETF_PROTOCOL),
	REF("2001:1::1", NET_RANGE_IETF_PROTOCOL),
	REF("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_IETF_PROTOCOL),
	PUB("2001:200::"),
	REF("2001:2::", NET_RANGE_BENCHMARKING),
	REF("2001:2:0:ffff:ffff:ffff:ffff:ffff", NET_RANGE_BENCHMARKING),
	REF("2001:2:1::", NET_RANGE_IETF_PROTOCOL),
	REF("2001:20::1", NET_RANGE_IETF_PROTOCOL),
	PUB("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"),
	REF("2001:db8::", NET_RANGE_DOCUMENTATION),
	REF("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_DOCUMENTATION),
	PUB("2001:db9::"),
	PUB("2620:4f:7fff:ffff:ffff:ffff:ffff:ffff"),
	REF("2620:4f:8000::", NET_RANGE_AS112),
	REF("2620:4f:8000:ffff:ffff:ffff:ffff:ffff", NET_RANGE_AS112),
	PUB("2620:4f:8001::"),
	PUB("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
	REF("3fff::", NET_RANGE_DOCUMENTATION),
	REF("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_DOCUMENTATION),
	PUB("3fff:1000::"),
	REF("4000::", NET_RANGE_NOT_GLOBAL),
	REF("5f00::1", NET_RANGE_SRV6),
	REF("5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_SRV6),
	REF("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_NOT_GLOBAL),
	REF("fc00::", NET_RANGE_UNIQUE_LOCAL),
	REF("fd7a:115c:a1e0::1", NET_RANGE_UNIQUE_LOCAL),
	REF("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_UNIQUE_LOCAL),
	REF("fe00::", NET_RANGE_NOT_GLOBAL),
	REF("fe80::", NET_RANGE_LINK_LOCAL),
	REF("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_LINK_LOCAL),
	REF("fec0::", NET_RANGE_SITE_LOCAL),
	REF("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NET_RANGE_SITE_LOCAL),
	REF("ff00::", NET_RANGE_MULTICAST),
	REF("ff02::1", NET_RANGE_MULTICAST),
	PUB("2606:4700::1111"),
	PUB("2a00:1450:4001:800::200e"),

	/* IPv4-mapped ::ffff:0:0/96: judged exactly as the IPv4 */
	PUB("::ffff:8.8.8.8"),
	DEC("::ffff:10.0.0.1", NET_RANGE_PRIVATE, NET_EMBED_MAPPED, "10.0.0.1"),
	DEC("::ffff:127.0.0.1", NET_RANGE_LOOPBACK, NET_EMBED_MAPPED, "127.0.0.1"),
	DEC("::ffff:169.254.169.254", NET_RANGE_LINK_LOCAL, NET_EMBED_MAPPED, "169.254.169.254"),
	DEC("::ffff:0.0.0.0", NET_RANGE_THIS_NETWORK, NET_EMBED_MAPPED, "0.0.0.0"),
	/* IPv4-compatible ::/96 (deprecated): refused even with a public IPv4 */
	DEC("::2", NET_RANGE_THIS_NETWORK, NET_EMBED_COMPAT, "0.0.0.2"),
	DEC("::192.168.1.1", NET_RANGE_PRIVATE, NET_EMBED_COMPAT, "192.168.1.1"),
	REF("::8.8.8.8", NET_RANGE_V4_COMPAT),
	/* SIIT ::ffff:0:0:0/96 */
	DEC("::ffff:0:10.0.0.1", NET_RANGE_PRIVATE, NET_EMBED_TRANSLATED, "10.0.0.1"),
	REF("::ffff:0:8.8.8.8", NET_RANGE_V4_TRANSLATED),
	/* NAT64 well-known 64:ff9b::/96: last 32 bits */
	PUB("64:ff9b::8.8.8.8"),
	DEC("64:ff9b::192.168.1.1", NET_RANGE_PRIVATE, NET_EMBED_NAT64, "192.168.1.1"),
	DEC("64:ff9b::7f00:1", NET_RANGE_LOOPBACK, NET_EMBED_NAT64, "127.0.0.1"),
	DEC("64:ff9b::a9fe:a9fe", NET_RANGE_LINK_LOCAL, NET_EMBED_NAT64, "169.254.169.254"),
	DEC("64:ff9b::100.64.0.1", NET_RANGE_CGNAT, NET_EMBED_NAT64, "100.64.0.1"),
	/* next to 64:ff9b::/96 but outside it and outside 64:ff9b:1::/48 */
	REF("64:ff9b::1:0:0:1", NET_RANGE_NOT_GLOBAL),
	/*
	 * NAT64 local-use 64:ff9b:1::/48, RFC 6052 /48 layout: IPv4 in bytes
	 * 6,7 then 9,10, byte 8 (u) skipped. 192.0.2.1 is documentation; a
	 * decoder reading bytes 6..9 would see 192.0.0.2 (IETF protocol),
	 * one reading the last 32 bits would see 0.0.0.0.
	 */
	DEC("64:ff9b:1:c000:2:100::", NET_RANGE_DOCUMENTATION, NET_EMBED_NAT64_LOCAL, "192.0.2.1"),
	DEC("64:ff9b:1:c000:ff02:100::", NET_RANGE_DOCUMENTATION, NET_EMBED_NAT64_LOCAL,
	    "192.0.2.1"),
	DEC("64:ff9b:1:c0a8:1:100::", NET_RANGE_PRIVATE, NET_EMBED_NAT64_LOCAL, "192.168.1.1"),
	DEC("64:ff9b:1:a9fe:a9:fe00::", NET_RANGE_LINK_LOCAL, NET_EMBED_NAT64_LOCAL,
	    "169.254.169.254"),
	REF("64:ff9b:1:808:8:800::", NET_RANGE_NAT64_LOCAL),
	DEC("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", NET_RANGE_BROADCAST, NET_EMBED_NAT64_LOCAL,
	    "255.255.255.255"),
	REF("64:ff9b:2::808:808", NET_RANGE_NOT_GLOBAL),
	/* 6to4 2002::/16: bytes 2..5 */
	PUB("2002:808:808::1"),
	DEC("2002:c0a8:101::1", NET_RANGE_PRIVATE, NET_EMBED_6TO4, "192.168.1.1"),
	DEC("2002:7f00:1::", NET_RANGE_LOOPBACK, NET_EMBED_6TO4, "127.0.0.1"),
	DEC("2002:a9fe:a9fe::", NET_RANGE_LINK_LOCAL, NET_EMBED_6TO4, "169.254.169.254"),
	DEC("2002::", NET_RANGE_THIS_NETWORK, NET_EMBED_6TO4, "0.0.0.0"),
	/* Teredo 2001::/32: server bytes 4..7, client = last 32 bits inverted */
	DEC("2001:0:4136:e378:8000:63bf:3fff:fdd2", NET_RANGE_DOCUMENTATION,
	    NET_EMBED_TEREDO_CLIENT, "192.0.2.45"),         /* RFC 4380's example */
	DEC("2001:0:a00:1::f7f7:f7f7", NET_RANGE_PRIVATE, NET_EMBED_TEREDO_SERVER, "10.0.0.1"),
	DEC("2001:0:808:808::f5ff:fffe", NET_RANGE_PRIVATE, NET_EMBED_TEREDO_CLIENT, "10.0.0.1"),
	DEC("2001:0:808:808::80ff:fffe", NET_RANGE_LOOPBACK, NET_EMBED_TEREDO_CLIENT, "127.0.0.1"),
	PUB("2001:0:808:808::f7f7:f7f7"),
	/* client 0xffffffff inverted is 0.0.0.0 */
	DEC("2001:0:808:808::ffff:ffff", NET_RANGE_THIS_NETWORK, NET_EMBED_TEREDO_CLIENT,
	    "0.0.0.0"),
};

/* Every row: classification, the decoding named, the address judged. */
static void test_classify_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(class_rows) / sizeof(class_rows[0]); i++) {
		const struct class_row *r = &class_rows[i];
		struct net_addr a, j;
		struct net_addr_class c;
		char text[NET_ADDR_STRLEN];
		bool pub;

		assert_int_equal(net_addr_parse(r->addr, &a), 0);
		pub = net_addr_classify(&a, &c);
		if (c.range != r->range || c.via != r->via)
			fail_msg("%s: got %s via '%s', want %s via '%s'", r->addr,
				 net_range_code(c.range), net_embed_words(c.via),
				 net_range_code(r->range), net_embed_words(r->via));
		assert_int_equal(pub, r->range == NET_RANGE_PUBLIC);
		assert_null(c.exception);
		if (r->judged != NULL) {
			assert_int_equal(net_addr_parse(r->judged, &j), 0);
			if (!net_addr_equal(&c.judged, &j))
				fail_msg("%s: judged %s, want %s", r->addr,
					 net_addr_format(&c.judged, text), r->judged);
		} else {
			assert_true(net_addr_equal(&c.judged, &a));
		}
	}
}

struct check_row {
	const char *what;
	const char *addr;
	const char *cidrs[3];   /* --allow-cidr, NULL-terminated */
	bool tailscale;
	bool allowed;
	const char *exception;  /* expected exception text, NULL for none */
	enum net_range range;   /* when refused */
};

static const struct check_row check_rows[] = {
	{ "private refused without exceptions", "10.1.2.3", { NULL }, false,
	  false, NULL, NET_RANGE_PRIVATE },
	{ "--allow-cidr admits its range, named verbatim", "10.1.2.3", { "10.0.0.0/8" }, false,
	  true, "10.0.0.0/8", 0 },
	{ "an exception for another range does not", "10.1.2.3", { "192.168.0.0/16" }, false,
	  false, NULL, NET_RANGE_PRIVATE },
	{ "the second exception matches", "192.168.4.7", { "10.0.0.0/8", "192.168.4.0/24" },
	  false, true, "192.168.4.0/24", 0 },
	{ "one address outside the exception", "192.168.5.1", { "192.168.4.0/24" }, false,
	  false, NULL, NET_RANGE_PRIVATE },
	{ "a public address needs no exception", "8.8.8.8", { "10.0.0.0/8" }, false,
	  true, NULL, 0 },
	{ "exception matches the decoded IPv4 of a mapped address", "::ffff:10.1.2.3",
	  { "10.0.0.0/8" }, false, true, "10.0.0.0/8", 0 },
	{ "exception matches the decoded IPv4 of NAT64", "64:ff9b::10.1.2.3",
	  { "10.0.0.0/8" }, false, true, "10.0.0.0/8", 0 },
	{ "exception as written for a mapped address", "::ffff:10.1.2.3",
	  { "::ffff:10.0.0.0/104" }, false, true, "::ffff:10.0.0.0/104", 0 },
	{ "decoded exception does not lift local-use NAT64 itself", "64:ff9b:1:a01:2:300::",
	  { "10.0.0.0/8" }, false, false, NULL, NET_RANGE_NAT64_LOCAL },
	{ "the local-use NAT64 prefix as written lifts everything", "64:ff9b:1:a01:2:300::",
	  { "64:ff9b:1::/48" }, false, true, "64:ff9b:1::/48", 0 },
	{ "Teredo: covering the server leaves the private client refused",
	  "2001:0:a00:1::f5ff:fffd", { "10.0.0.1/32" }, false, false, NULL, NET_RANGE_PRIVATE },
	{ "IPv6 exception", "fd00:1::5", { "fd00::/8" }, false, true, "fd00::/8", 0 },
	{ "--tailscale admits 100.64.0.0/10", "100.101.102.103", { NULL }, true,
	  true, "100.64.0.0/10 (--tailscale)", 0 },
	{ "CGNAT refused without --tailscale", "100.101.102.103", { NULL }, false,
	  false, NULL, NET_RANGE_CGNAT },
	{ "--tailscale never admits MagicDNS 100.100.100.100", "100.100.100.100", { NULL }, true,
	  false, NULL, NET_RANGE_CGNAT },
	{ "--tailscale admits its ULA /48", "fd7a:115c:a1e0:ab12:4843:cd96:626b:430b",
	  { NULL }, true, true, "fd7a:115c:a1e0::/48 (--tailscale)", 0 },
	{ "--tailscale never admits MagicDNS fd7a:115c:a1e0::53", "fd7a:115c:a1e0::53",
	  { NULL }, true, false, NULL, NET_RANGE_UNIQUE_LOCAL },
	{ "--tailscale: one past its ULA /48", "fd7a:115c:a1e1::1", { NULL }, true,
	  false, NULL, NET_RANGE_UNIQUE_LOCAL },
	{ "--tailscale: one before 100.64.0.0/10", "100.63.255.255", { NULL }, true,
	  true, NULL, 0 },
	{ "--tailscale does not open RFC 1918", "192.168.1.1", { NULL }, true,
	  false, NULL, NET_RANGE_PRIVATE },
	{ "--tailscale applies to a decoded address", "::ffff:100.64.0.1", { NULL }, true,
	  true, "100.64.0.0/10 (--tailscale)", 0 },
	{ "--allow-cidr can name MagicDNS deliberately", "100.100.100.100",
	  { "100.100.100.100/32" }, true, true, "100.100.100.100/32", 0 },
};

/* Exceptions: which apply, and that the text reported is the user's. */
static void test_check_exceptions(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(check_rows) / sizeof(check_rows[0]); i++) {
		const struct check_row *r = &check_rows[i];
		struct cidr cidrs[3];
		size_t n = 0;
		struct net_addr a;
		struct net_addr_class c;
		bool ok;

		memset(cidrs, 0, sizeof(cidrs));
		for (; n < 3 && r->cidrs[n]; n++) {
			char *err = NULL;
			if (parse_cidr(r->cidrs[n], &cidrs[n], &err) != 0)
				fail_msg("%s: parse_cidr(%s): %s", r->what, r->cidrs[n], err);
		}
		assert_int_equal(net_addr_parse(r->addr, &a), 0);
		ok = net_addr_check(&a, cidrs, n, r->tailscale, &c);
		if (ok != r->allowed)
			fail_msg("%s: %s %s", r->what, r->addr, ok ? "allowed" : "refused");
		if (r->exception == NULL)
			assert_null(c.exception);
		else if (c.exception == NULL || strcmp(c.exception, r->exception) != 0)
			fail_msg("%s: exception '%s', want '%s'", r->what,
				 c.exception ? c.exception : "(none)", r->exception);
		if (!r->allowed)
			assert_int_equal(c.range, r->range);
		for (size_t k = 0; k < n; k++)
			cidr_free(&cidrs[k]);
	}
}

struct parse_row {
	const char *in;
	const char *out;        /* canonical form, NULL if it must be refused */
};

static const struct parse_row parse_rows[] = {
	{ "192.0.2.1", "192.0.2.1" },
	{ "0.0.0.0", "0.0.0.0" },
	{ "255.255.255.255", "255.255.255.255" },
	{ "2001:DB8::1", "2001:db8::1" },
	{ "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1" },
	{ "::ffff:1.2.3.4", "::ffff:1.2.3.4" },
	{ "::", "::" },
	{ "", NULL },
	{ "1.2.3", NULL },
	{ "1.2.3.4.5", NULL },
	{ "256.1.1.1", NULL },
	{ "010.0.0.1", NULL },           /* no octal */
	{ "0x7f.0.0.1", NULL },
	{ "2130706433", NULL },          /* no integer form */
	{ " 1.2.3.4", NULL },
	{ "1.2.3.4 ", NULL },
	{ "fe80::1%eth0", NULL },        /* no zone */
	{ "[::1]", NULL },
	{ "1::2::3", NULL },
	{ "12345::", NULL },
};

/* Parsing is strict and formatting canonical. */
static void test_parse_format(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		struct net_addr a;
		char text[NET_ADDR_STRLEN];
		int rc = net_addr_parse(parse_rows[i].in, &a);

		if (parse_rows[i].out == NULL) {
			if (rc != -1)
				fail_msg("'%s' accepted", parse_rows[i].in);
			continue;
		}
		if (rc != 0)
			fail_msg("'%s' refused", parse_rows[i].in);
		assert_string_equal(net_addr_format(&a, text), parse_rows[i].out);
	}
	assert_int_equal(net_addr_parse(NULL, &(struct net_addr){ 0 }), -1);
}

/* Family matters for equality and containment; bad cidrs match nothing. */
static void test_equal_and_cidr(void **state)
{
	struct net_addr v4, mapped, v6;
	struct cidr c = { .family = AF_INET, .addr = { 10 }, .prefix = 8, .text = "10.0.0.0/8" };
	struct cidr bad = { .family = AF_INET, .addr = { 10 }, .prefix = 33, .text = "bad" };
	struct cidr all = { .family = AF_INET6, .prefix = 0, .text = "::/0" };
	char text[NET_ADDR_STRLEN];

	(void)state;
	assert_int_equal(net_addr_parse("10.0.0.1", &v4), 0);
	assert_int_equal(net_addr_parse("::ffff:10.0.0.1", &mapped), 0);
	assert_int_equal(net_addr_parse("2001:db8::1", &v6), 0);
	assert_false(net_addr_equal(&v4, &mapped));
	assert_true(net_addr_equal(&v4, &v4));
	assert_true(net_addr_in_cidr(&v4, &c));
	assert_false(net_addr_in_cidr(&mapped, &c));
	assert_false(net_addr_in_cidr(&v4, &bad));
	assert_true(net_addr_in_cidr(&v6, &all));
	assert_false(net_addr_in_cidr(&v4, &all));
	v4.family = 12345;
	assert_string_equal(net_addr_format(&v4, text), "?");
}

/* Every range has a code and words; the spec's wording is kept. */
static void test_words(void **state)
{
	(void)state;
	for (int r = 0; r < NET_RANGE_COUNT; r++) {
		assert_non_null(net_range_code(r));
		assert_true(strlen(net_range_words(r)) > 0);
		assert_string_not_equal(net_range_code(r), "unknown");
	}
	assert_string_equal(net_range_words(NET_RANGE_LINK_LOCAL), "link-local / cloud metadata");
	assert_string_equal(net_range_words(NET_RANGE_PRIVATE), "private (RFC 1918)");
	assert_string_equal(net_range_words(NET_RANGE_CGNAT), "carrier-grade NAT (RFC 6598)");
	assert_string_equal(net_range_code(NET_RANGE_COUNT), "unknown");
	assert_string_equal(net_embed_words(NET_EMBED_NAT64), "NAT64");
	assert_string_equal(net_embed_words(NET_EMBED_NONE), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_table),
		cmocka_unit_test(test_check_exceptions),
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_equal_and_cidr),
		cmocka_unit_test(test_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
