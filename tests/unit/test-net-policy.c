/*
 * test-net-policy.c — the decision function, one row per situation a
 * payload can create: hardcoded addresses, unlisted names on shared CDN
 * addresses, SNI and Host that disagree with the binding, ECH, QUIC,
 * private ranges behind every encoding, and the exceptions.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/decide.h"
#include "spec/values.h"

static uint16_t nas_ports[] = { 22 };
static uint16_t db_ports[] = { 5432 };
static uint16_t global_ports[] = { 8080 };
static struct host_spec hosts[] = {
	{ .name = "registry.npmjs.org" },
	{ .name = "*.example.com" },
	{ .name = "nas", .ports = nas_ports, .nports = 1 },
	{ .name = "db.tail0a1b2.ts.net", .ports = db_ports, .nports = 1 },
	{ .name = "printer.local" },
};

/* The scenario's policy; cidrs parsed in setup. */
static struct cidr cidrs[1];
static struct net_policy pol;
static struct net_bind *binds;

static struct net_addr addr(const char *s)
{
	struct net_addr a;

	if (net_addr_parse(s, &a) != 0)
		fail_msg("bad address in test: %s", s);
	return a;
}

static void bind(const char *a, const char *name)
{
	struct net_addr x = addr(a);

	assert_int_equal(net_bind_add(binds, &x, name, 300, 0), 0);
}

static int setup(void **state)
{
	char *err = NULL;

	(void)state;
	if (parse_cidr("192.168.4.0/24", &cidrs[0], &err) != 0)
		return -1;
	memset(&pol, 0, sizeof(pol));
	pol.mode = NET_ALLOWLIST;
	pol.hosts = hosts;
	pol.nhosts = sizeof(hosts) / sizeof(hosts[0]);
	pol.ports = global_ports;
	pol.nports = 1;
	pol.cidrs = cidrs;
	pol.ncidrs = 1;
	pol.tailscale = true;

	binds = net_bind_create(64);
	bind("104.16.0.34", "registry.npmjs.org");
	bind("104.16.0.34", "evil.example.net");        /* same CDN address, unlisted */
	bind("93.184.216.34", "www.example.com");
	bind("1.2.3.4", "unlisted.example.org");
	bind("100.101.1.2", "nas");
	bind("192.168.4.7", "printer.local");
	bind("2606:4700::6810:22", "registry.npmjs.org");
	bind("10.0.0.5", "registry.npmjs.org");         /* a rebinding that slipped through */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	net_bind_free(binds);
	cidr_free(&cidrs[0]);
	return 0;
}

struct flow_row {
	const char *what;
	enum net_mode mode;             /* 0: the scenario's (allowlist) */
	enum net_proto proto;
	const char *dst;
	uint16_t port;
	enum net_name_kind kind;
	const char *name;
	bool ech;
	uint64_t now_ms;
	/* expected */
	bool allow;
	bool need_name;
	const char *layer;
	enum net_deny deny;
	enum net_range range;           /* for NET_DENY_RANGE */
	const char *host;               /* matched host, NULL for none */
	const char *exception;          /* exception text, NULL for none */
};

#define TCP NET_PROTO_TCP
#define UDP NET_PROTO_UDP

static const struct flow_row flow_rows[] = {
	/* allowlist: the normal path, at SYN time and after the ClientHello */
	{ "listed host at SYN time: provisional, name needed", 0, TCP, "104.16.0.34", 443,
	  NET_NAME_PENDING, NULL, false, 0,
	  true, true, NET_LAYER_DNS, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "listed host with its SNI", 0, TCP, "104.16.0.34", 443, NET_NAME_SNI,
	  "registry.npmjs.org", false, 1000,
	  true, false, NET_LAYER_SNI, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "IPv6 address bound to the listed host", 0, TCP, "2606:4700::6810:22", 443, NET_NAME_SNI,
	  "registry.npmjs.org", false, 0,
	  true, false, NET_LAYER_SNI, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "wildcard entry", 0, TCP, "93.184.216.34", 443, NET_NAME_SNI, "www.example.com", false, 0,
	  true, false, NET_LAYER_SNI, NET_DENY_NONE, 0, "www.example.com", NULL },
	{ "plain HTTP with the listed Host", 0, TCP, "104.16.0.34", 80, NET_NAME_HOST,
	  "registry.npmjs.org", false, 0,
	  true, false, NET_LAYER_SNI, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "neither TLS nor HTTP: address and port decide", 0, TCP, "104.16.0.34", 443,
	  NET_NAME_NONE, NULL, false, 0,
	  true, false, NET_LAYER_DNS, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "--allow-port adds a port for hosts without their own", 0, TCP, "104.16.0.34", 8080,
	  NET_NAME_PENDING, NULL, false, 0,
	  true, true, NET_LAYER_DNS, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },

	/* the name on the wire */
	{ "shared CDN address, SNI of the unlisted name bound there", 0, TCP, "104.16.0.34", 443,
	  NET_NAME_SNI, "evil.example.net", false, 0,
	  false, false, NET_LAYER_SNI, NET_DENY_SNI_MISMATCH, 0, NULL, NULL },
	{ "SNI of a listed name not bound to this address", 0, TCP, "104.16.0.34", 443,
	  NET_NAME_SNI, "www.example.com", false, 0,
	  false, false, NET_LAYER_SNI, NET_DENY_SNI_MISMATCH, 0, NULL, NULL },
	{ "Host of an unlisted name", 0, TCP, "104.16.0.34", 80, NET_NAME_HOST, "evil.example.net",
	  false, 0, false, false, NET_LAYER_SNI, NET_DENY_SNI_MISMATCH, 0, NULL, NULL },
	{ "Encrypted ClientHello", 0, TCP, "104.16.0.34", 443, NET_NAME_SNI, "registry.npmjs.org",
	  true, 0, false, false, NET_LAYER_SNI, NET_DENY_ECH, 0, NULL, NULL },
	{ "ClientHello without SNI", 0, TCP, "104.16.0.34", 443, NET_NAME_SNI, NULL, false, 0,
	  false, false, NET_LAYER_SNI, NET_DENY_NO_SNI, 0, NULL, NULL },
	{ "HTTP without Host", 0, TCP, "104.16.0.34", 80, NET_NAME_HOST, NULL, false, 0,
	  false, false, NET_LAYER_SNI, NET_DENY_NO_HOST, 0, NULL, NULL },
	{ "malformed ClientHello", 0, TCP, "104.16.0.34", 443, NET_NAME_MALFORMED, NULL, false, 0,
	  false, false, NET_LAYER_SNI, NET_DENY_MALFORMED, 0, NULL, NULL },
	{ "malformed HTTP head (two Host headers)", 0, TCP, "104.16.0.34", 80, NET_NAME_MALFORMED,
	  NULL, false, 0, false, false, NET_LAYER_SNI, NET_DENY_MALFORMED, 0, NULL, NULL },
	{ "ECH without SNI: refused as ECH", 0, TCP, "104.16.0.34", 443, NET_NAME_SNI, NULL, true,
	  0, false, false, NET_LAYER_SNI, NET_DENY_ECH, 0, NULL, NULL },

	/* no name on the wire (NONE): only a bound listed name on a port it may use */
	{ "NONE to an unbound address", 0, TCP, "8.8.8.8", 443, NET_NAME_NONE, NULL, false, 0,
	  false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, NULL },
	{ "NONE to an address bound only to an unlisted name", 0, TCP, "1.2.3.4", 443,
	  NET_NAME_NONE, NULL, false, 0,
	  false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, NULL },
	{ "NONE to a listed host on another host's port (nas:22 is not global)", 0, TCP,
	  "104.16.0.34", 22, NET_NAME_NONE, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_PORT, 0, NULL, NULL },
	{ "NONE to a host with its own ports, on a default port", 0, TCP, "100.101.1.2", 443,
	  NET_NAME_NONE, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_PORT, 0, NULL, "100.64.0.0/10 (--tailscale)" },
	{ "NONE to a host with its own ports, on --allow-port", 0, TCP, "100.101.1.2", 8080,
	  NET_NAME_NONE, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_PORT, 0, NULL, "100.64.0.0/10 (--tailscale)" },

	/* bindings and ports */
	{ "hardcoded public IP: no binding", 0, TCP, "8.8.8.8", 443, NET_NAME_PENDING, NULL,
	  false, 0, false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, NULL },
	{ "address bound only to an unlisted name", 0, TCP, "1.2.3.4", 443, NET_NAME_PENDING, NULL,
	  false, 0, false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, NULL },
	{ "binding expired", 0, TCP, "104.16.0.34", 443, NET_NAME_PENDING, NULL, false, 300000,
	  false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, NULL },
	{ "binding still live 1 ms before expiry", 0, TCP, "104.16.0.34", 443, NET_NAME_PENDING,
	  NULL, false, 299999,
	  true, true, NET_LAYER_DNS, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "port not in the run's list", 0, TCP, "104.16.0.34", 22, NET_NAME_PENDING, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_PORT, 0, NULL, NULL },
	{ "port 0", 0, TCP, "104.16.0.34", 0, NET_NAME_PENDING, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_PORT_ZERO, 0, NULL, NULL },

	/* UDP */
	{ "UDP/443 (QUIC) in allowlist mode", 0, UDP, "104.16.0.34", 443, NET_NAME_NONE, NULL,
	  false, 0, false, false, NET_LAYER_IP, NET_DENY_QUIC, 0, NULL, NULL },
	{ "UDP to a bound address and allowed port", 0, UDP, "104.16.0.34", 8080, NET_NAME_NONE,
	  NULL, false, 0, true, false, NET_LAYER_DNS, NET_DENY_NONE, 0, "registry.npmjs.org", NULL },
	{ "UDP to an unbound address", 0, UDP, "8.8.4.4", 8080, NET_NAME_NONE, NULL, false, 0,
	  false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, NULL },

	/* ranges come first, whatever the bindings say */
	{ "cloud metadata", 0, TCP, "169.254.169.254", 80, NET_NAME_PENDING, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_RANGE, NET_RANGE_LINK_LOCAL, NULL, NULL },
	{ "NAT64 to the LAN", 0, TCP, "64:ff9b::192.168.1.1", 443, NET_NAME_PENDING, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_RANGE, NET_RANGE_PRIVATE, NULL, NULL },
	{ "a private address bound to a listed name", 0, TCP, "10.0.0.5", 443, NET_NAME_SNI,
	  "registry.npmjs.org", false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_RANGE, NET_RANGE_PRIVATE, NULL, NULL },
	{ "MagicDNS resolver even with --tailscale", 0, UDP, "100.100.100.100", 53, NET_NAME_NONE,
	  NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_RANGE, NET_RANGE_CGNAT, NULL, NULL },

	/* exceptions: allowed, and the exception is named */
	{ "--allow-cidr with a bound listed name", 0, TCP, "192.168.4.7", 443, NET_NAME_PENDING,
	  NULL, false, 0,
	  true, true, NET_LAYER_DNS, NET_DENY_NONE, 0, "printer.local", "192.168.4.0/24" },
	{ "--tailscale host on its own port, SSH (no name on the wire)", 0, TCP, "100.101.1.2", 22,
	  NET_NAME_NONE, NULL, false, 0,
	  true, false, NET_LAYER_DNS, NET_DENY_NONE, 0, "nas", "100.64.0.0/10 (--tailscale)" },
	{ "--tailscale host on a port it was not given", 0, TCP, "100.101.1.2", 443,
	  NET_NAME_PENDING, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_PORT, 0, NULL, "100.64.0.0/10 (--tailscale)" },
	/* the range objection is lifted (and says so), the binding is still missing */
	{ "hardcoded tailnet address nobody resolved", 0, TCP, "100.101.9.9", 22, NET_NAME_NONE,
	  NULL, false, 0,
	  false, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, 0, NULL, "100.64.0.0/10 (--tailscale)" },

	/* public mode */
	{ "public: any public address", NET_PUBLIC, TCP, "8.8.8.8", 443, NET_NAME_PENDING, NULL,
	  false, 0, true, false, NET_LAYER_IP, NET_DENY_NONE, 0, NULL, NULL },
	{ "public: any port", NET_PUBLIC, TCP, "8.8.8.8", 22, NET_NAME_NONE, NULL, false, 0,
	  true, false, NET_LAYER_IP, NET_DENY_NONE, 0, NULL, NULL },
	{ "public: QUIC allowed", NET_PUBLIC, UDP, "8.8.8.8", 443, NET_NAME_NONE, NULL, false, 0,
	  true, false, NET_LAYER_IP, NET_DENY_NONE, 0, NULL, NULL },
	{ "public: names unchecked, ECH too", NET_PUBLIC, TCP, "8.8.8.8", 443, NET_NAME_SNI,
	  "anything.example", true, 0, true, false, NET_LAYER_IP, NET_DENY_NONE, 0, NULL, NULL },
	{ "public: private still refused", NET_PUBLIC, TCP, "10.0.0.1", 443, NET_NAME_PENDING, NULL,
	  false, 0, false, false, NET_LAYER_IP, NET_DENY_RANGE, NET_RANGE_PRIVATE, NULL, NULL },
	{ "public: 6to4 to loopback refused", NET_PUBLIC, TCP, "2002:7f00:1::", 80,
	  NET_NAME_PENDING, NULL, false, 0,
	  false, false, NET_LAYER_IP, NET_DENY_RANGE, NET_RANGE_LOOPBACK, NULL, NULL },

	/* none */
	{ "none: everything refused", NET_NONE, TCP, "8.8.8.8", 443, NET_NAME_PENDING, NULL, false,
	  0, false, false, NET_LAYER_IP, NET_DENY_MODE_NONE, 0, NULL, NULL },
	{ "unset mode is refused too", NET_UNSET + 100, TCP, "8.8.8.8", 443, NET_NAME_PENDING, NULL,
	  false, 0, false, false, NET_LAYER_IP, NET_DENY_MODE_NONE, 0, NULL, NULL },
};

static void test_flows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(flow_rows) / sizeof(flow_rows[0]); i++) {
		const struct flow_row *r = &flow_rows[i];
		struct net_policy p = pol;
		struct net_flow f = {
			.proto = r->proto, .dst = addr(r->dst), .port = r->port,
			.name_kind = r->kind, .name = r->name, .ech = r->ech,
		};
		struct net_verdict v;
		bool ok;

		if (r->mode)
			p.mode = r->mode;
		ok = net_policy_decide(&p, binds, &f, r->now_ms, &v);
		if (ok != r->allow || v.allow != r->allow || v.deny != r->deny ||
		    strcmp(v.layer, r->layer) != 0 || v.need_name != r->need_name)
			fail_msg("%s: got %s %s '%s'%s, want %s %s '%s'%s", r->what,
				 v.allow ? "allow" : "deny", v.layer, net_deny_code(v.deny),
				 v.need_name ? " need-name" : "",
				 r->allow ? "allow" : "deny", r->layer, net_deny_code(r->deny),
				 r->need_name ? " need-name" : "");
		if (r->deny == NET_DENY_RANGE) {
			assert_int_equal(v.addr.range, r->range);
			assert_string_equal(net_verdict_words(&v), net_range_words(r->range));
		}
		if (r->host == NULL)
			assert_null(v.host);
		else if (v.host == NULL || strcmp(v.host, r->host) != 0)
			fail_msg("%s: host '%s', want '%s'", r->what, v.host ? v.host : "(none)",
				 r->host);
		if (r->exception == NULL ? v.addr.exception != NULL :
		    v.addr.exception == NULL || strcmp(v.addr.exception, r->exception) != 0)
			fail_msg("%s: exception '%s', want '%s'", r->what,
				 v.addr.exception ? v.addr.exception : "(none)",
				 r->exception ? r->exception : "(none)");
	}
}

/* The words the user reads for the spec's examples. */
static void test_words(void **state)
{
	struct net_verdict v;
	struct net_flow f = { .proto = TCP, .dst = addr("169.254.169.254"), .port = 80 };

	(void)state;
	net_policy_decide(&pol, binds, &f, 0, &v);
	assert_string_equal(net_verdict_words(&v), "link-local / cloud metadata");
	net_policy_resolve(&pol, "c2.5f3a1.example.net", &v);
	assert_string_equal(net_verdict_words(&v), "hostname not on the allowlist");
	assert_string_equal(v.layer, "net.dns");
	for (int d = 0; d < NET_DENY_COUNT; d++)
		assert_string_not_equal(net_deny_code(d), "unknown");
	assert_string_equal(net_deny_code(NET_DENY_COUNT), "unknown");
}

/* No bindings at all: allowlist refuses, public does not care. */
static void test_no_table(void **state)
{
	struct net_verdict v;
	struct net_flow f = { .proto = TCP, .dst = addr("8.8.8.8"), .port = 443 };
	struct net_policy p = pol;

	(void)state;
	assert_false(net_policy_decide(&p, NULL, &f, 0, &v));
	assert_int_equal(v.deny, NET_DENY_NO_BINDING);
	p.mode = NET_PUBLIC;
	assert_true(net_policy_decide(&p, NULL, &f, 0, &v));
}

struct resolve_row {
	enum net_mode mode;
	const char *name;
	bool allow;
	enum net_deny deny;
};

static const struct resolve_row resolve_rows[] = {
	{ NET_ALLOWLIST, "registry.npmjs.org", true, NET_DENY_NONE },
	{ NET_ALLOWLIST, "www.example.com", true, NET_DENY_NONE },
	{ NET_ALLOWLIST, "a.b.example.com", true, NET_DENY_NONE },
	{ NET_ALLOWLIST, "example.com", false, NET_DENY_NAME },        /* "*." needs a label */
	{ NET_ALLOWLIST, "badexample.com", false, NET_DENY_NAME },
	{ NET_ALLOWLIST, "evil.registry.npmjs.org", false, NET_DENY_NAME },
	{ NET_ALLOWLIST, "registry.npmjs.org.evil.net", false, NET_DENY_NAME },
	{ NET_ALLOWLIST, "c2.5f3a1.example.net", false, NET_DENY_NAME },
	{ NET_ALLOWLIST, "Registry.npmjs.org", false, NET_DENY_NAME_INVALID },
	{ NET_ALLOWLIST, "", false, NET_DENY_NAME_INVALID },
	{ NET_ALLOWLIST, "a..b", false, NET_DENY_NAME_INVALID },
	{ NET_ALLOWLIST, NULL, false, NET_DENY_NAME_INVALID },
	{ NET_PUBLIC, "anything.example", true, NET_DENY_NONE },
	{ NET_PUBLIC, "bad name", false, NET_DENY_NAME_INVALID },
	{ NET_NONE, "registry.npmjs.org", false, NET_DENY_MODE_NONE },
};

static void test_resolve(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(resolve_rows) / sizeof(resolve_rows[0]); i++) {
		const struct resolve_row *r = &resolve_rows[i];
		struct net_policy p = pol;
		struct net_verdict v;

		p.mode = r->mode;
		if (net_policy_resolve(&p, r->name, &v) != r->allow || v.deny != r->deny)
			fail_msg("resolve '%s' (%s): got %s", r->name ? r->name : "(null)",
				 net_mode_name(r->mode), net_deny_code(v.deny));
		assert_string_equal(v.layer, NET_LAYER_DNS);
	}
}

/* Ports: a host's own list replaces the run's; several entries give the union. */
static void test_ports(void **state)
{
	static uint16_t only22[] = { 22 };
	struct host_spec h[] = {
		{ .name = "a.example.com", .ports = only22, .nports = 1 },
		{ .name = "*.example.com" },
		{ .name = "ssh.example.org", .ports = only22, .nports = 1 },
	};
	struct net_policy p = { .mode = NET_ALLOWLIST, .hosts = h, .nhosts = 3 };

	(void)state;
	assert_true(net_policy_port_ok(&p, "a.example.com", 22));
	assert_true(net_policy_port_ok(&p, "a.example.com", 443));      /* via the wildcard */
	assert_true(net_policy_port_ok(&p, "b.example.com", 80));
	assert_false(net_policy_port_ok(&p, "b.example.com", 22));
	assert_true(net_policy_port_ok(&p, "ssh.example.org", 22));
	assert_false(net_policy_port_ok(&p, "ssh.example.org", 443));
	assert_false(net_policy_port_ok(&p, "other.example.org", 443));
	assert_true(net_policy_port_ok(&p, NULL, 443));
	assert_false(net_policy_port_ok(&p, NULL, 8080));
	assert_false(net_policy_port_ok(&p, NULL, 0));
	assert_true(net_policy_host_listed(&p, "x.y.example.com"));
	assert_false(net_policy_host_listed(&p, "example.com"));
}

/* ---- the tailnet alias: "nas.SUFFIX" is the listed "nas" under --tailscale ---- */

#define SUFFIX "tail0a1b2.ts.net"

/* The scenario's policy with tailscaled's suffix known, as the broker sets it. */
static struct net_policy tailnet_policy(bool tailscale, const char *suffix)
{
	struct net_policy p = pol;

	p.tailscale = tailscale;
	p.tailnet = suffix;
	return p;
}

struct alias_row {
	const char *what;
	bool tailscale;
	const char *suffix;
	const char *name;
	/* expected */
	bool allow;                 /* net_policy_resolve, and net_policy_host_listed */
	enum net_deny deny;
	const char *host;           /* the entry it was allowed as */
	bool port22, port443;       /* net_policy_port_ok (nas has only 22) */
};

static const struct alias_row alias_rows[] = {
	{ "listed bare name asked with the suffix: the listed nas", true, SUFFIX,
	  "nas." SUFFIX, true, NET_DENY_NONE, "nas", true, false },
	{ "the bare name itself", true, SUFFIX, "nas", true, NET_DENY_NONE, "nas", true, false },
	{ "a listed FQDN under the suffix is its own entry", true, SUFFIX,
	  "db." SUFFIX, true, NET_DENY_NONE, "db." SUFFIX, false, false },
	{ "an unlisted label with the suffix", true, SUFFIX,
	  "secret." SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "a label listed only with a domain (printer.local) is not a bare entry", true, SUFFIX,
	  "printer." SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "ends in the suffix text, no dot boundary before the label", true, SUFFIX,
	  "evilnas." SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "no dot between the label and the suffix", true, SUFFIX,
	  "nas" SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "two labels in front: not what a search domain completes", true, SUFFIX,
	  "x.nas." SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "the suffix alone", true, SUFFIX, SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "the suffix in the middle", true, SUFFIX,
	  "nas." SUFFIX ".evil.example", false, NET_DENY_NAME, NULL, false, false },
	{ "another tailnet's suffix", true, SUFFIX,
	  "nas.tail9z9z9.ts.net", false, NET_DENY_NAME, NULL, false, false },
	{ "without --tailscale the rule does not apply", false, SUFFIX,
	  "nas." SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "--tailscale without a known suffix (tailscaled down): no rule", true, NULL,
	  "nas." SUFFIX, false, NET_DENY_NAME, NULL, false, false },
	{ "an empty suffix: no rule", true, "", "nas.", false, NET_DENY_NAME_INVALID, NULL,
	  false, false },
};

static void test_tailnet_alias(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(alias_rows) / sizeof(alias_rows[0]); i++) {
		const struct alias_row *r = &alias_rows[i];
		struct net_policy p = tailnet_policy(r->tailscale, r->suffix);
		struct net_verdict v;
		bool ok;

		print_message("alias: %s\n", r->what);
		ok = net_policy_resolve(&p, r->name, &v);
		if (ok != r->allow || v.deny != r->deny)
			fail_msg("%s: resolve '%s' got %s", r->what, r->name, net_deny_code(v.deny));
		assert_string_equal(v.layer, NET_LAYER_DNS);
		if (r->host == NULL)
			assert_null(v.host);
		else
			assert_string_equal(v.host, r->host);
		if (r->deny != NET_DENY_NAME_INVALID)
			assert_int_equal(net_policy_host_listed(&p, r->name), r->allow);
		assert_int_equal(net_policy_port_ok(&p, r->name, 22), r->port22);
		assert_int_equal(net_policy_port_ok(&p, r->name, 443), r->port443);
	}
	/* The alias is the policy's own entry, never a copy of the asked name. */
	{
		struct net_policy p = tailnet_policy(true, SUFFIX);

		assert_ptr_equal(net_policy_tailnet_alias(&p, "nas." SUFFIX), hosts[2].name);
		assert_null(net_policy_tailnet_alias(&p, "nas"));
		assert_null(net_policy_tailnet_alias(&p, NULL));
	}
}

/* Connections: an address bound to either form of the name serves both, with nas's ports. */
static void test_tailnet_alias_flows(void **state)
{
	static const struct {
		const char *what;
		bool tailscale;
		const char *dst;
		uint16_t port;
		enum net_name_kind kind;
		const char *name;
		/* expected */
		bool allow;
		const char *layer;
		enum net_deny deny;
		const char *host;
	} rows[] = {
		{ "ssh nas: bound as nas.SUFFIX (the search domain's query), port 22", true,
		  "9.9.9.9", 22, NET_NAME_NONE, NULL, true, NET_LAYER_DNS, NET_DENY_NONE,
		  "nas." SUFFIX },
		{ "nas.SUFFIX on a port nas was not given", true, "9.9.9.9", 443, NET_NAME_NONE,
		  NULL, false, NET_LAYER_IP, NET_DENY_PORT, NULL },
		{ "curl http://nas:22/: Host nas over the nas.SUFFIX binding", true, "9.9.9.9", 22,
		  NET_NAME_HOST, "nas", true, NET_LAYER_SNI, NET_DENY_NONE, "nas" },
		{ "Host nas.SUFFIX over the nas.SUFFIX binding", true, "9.9.9.9", 22,
		  NET_NAME_HOST, "nas." SUFFIX, true, NET_LAYER_SNI, NET_DENY_NONE, "nas." SUFFIX },
		{ "Host nas.SUFFIX over a bare nas binding (MagicDNS via the bare path)", true,
		  "9.9.9.8", 22, NET_NAME_HOST, "nas." SUFFIX, true, NET_LAYER_SNI, NET_DENY_NONE,
		  "nas." SUFFIX },
		{ "Host evilnas.SUFFIX over the nas.SUFFIX binding", true, "9.9.9.9", 22,
		  NET_NAME_HOST, "evilnas." SUFFIX, false, NET_LAYER_SNI, NET_DENY_SNI_MISMATCH,
		  NULL },
		{ "Host nas over an address bound to another name only", true, "9.9.9.7", 443,
		  NET_NAME_HOST, "nas", false, NET_LAYER_SNI, NET_DENY_SNI_MISMATCH, NULL },
		{ "evilnas.SUFFIX bound: not a permitted name", true, "9.9.9.10", 22, NET_NAME_NONE,
		  NULL, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, NULL },
		{ "nastail0a1b2.ts.net bound: not a permitted name", true, "9.9.9.11", 22,
		  NET_NAME_NONE, NULL, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, NULL },
		{ "without --tailscale nas.SUFFIX is just an unlisted name", false, "9.9.9.9", 22,
		  NET_NAME_NONE, NULL, false, NET_LAYER_DNS, NET_DENY_NO_BINDING, NULL },
	};
	struct net_bind *tb = net_bind_create(16);
	struct net_addr a;

	(void)state;
	assert_int_equal(net_addr_parse("9.9.9.9", &a), 0);
	assert_int_equal(net_bind_add(tb, &a, "nas." SUFFIX, 300, 0), 0);
	assert_int_equal(net_addr_parse("9.9.9.8", &a), 0);
	assert_int_equal(net_bind_add(tb, &a, "nas", 300, 0), 0);
	assert_int_equal(net_addr_parse("9.9.9.7", &a), 0);
	assert_int_equal(net_bind_add(tb, &a, "registry.npmjs.org", 300, 0), 0);
	assert_int_equal(net_addr_parse("9.9.9.10", &a), 0);
	assert_int_equal(net_bind_add(tb, &a, "evilnas." SUFFIX, 300, 0), 0);
	assert_int_equal(net_addr_parse("9.9.9.11", &a), 0);
	assert_int_equal(net_bind_add(tb, &a, "nas" SUFFIX, 300, 0), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct net_policy p = tailnet_policy(rows[i].tailscale, SUFFIX);
		struct net_flow f = {
			.proto = TCP, .dst = addr(rows[i].dst), .port = rows[i].port,
			.name_kind = rows[i].kind, .name = rows[i].name,
		};
		struct net_verdict v;

		if (net_policy_decide(&p, tb, &f, 1000, &v) != rows[i].allow ||
		    v.deny != rows[i].deny || strcmp(v.layer, rows[i].layer) != 0)
			fail_msg("%s: got %s %s '%s'", rows[i].what, v.allow ? "allow" : "deny",
				 v.layer, net_deny_code(v.deny));
		if (rows[i].host == NULL)
			assert_null(v.host);
		else
			assert_string_equal(v.host, rows[i].host);
	}
	net_bind_free(tb);
}

/* Rebinding: private addresses leave an upstream answer, exceptions stay. */
static void test_filter(void **state)
{
	struct net_addr a[6] = {
		addr("8.8.8.8"), addr("10.0.0.1"), addr("192.168.4.9"),
		addr("::ffff:127.0.0.1"), addr("2606:4700::1"), addr("64:ff9b::a9fe:a9fe"),
	};
	uint32_t ttl[6] = { 1, 2, 3, 4, 5, 6 };
	struct net_addr_class dropped[2];
	size_t nd = 0, kept;
	char text[NET_ADDR_STRLEN];

	(void)state;
	kept = net_policy_filter_addrs(&pol, a, ttl, 6, dropped, 2, &nd);
	assert_int_equal(kept, 3);
	assert_int_equal(nd, 3);
	assert_string_equal(net_addr_format(&a[0], text), "8.8.8.8");
	assert_string_equal(net_addr_format(&a[1], text), "192.168.4.9");
	assert_string_equal(net_addr_format(&a[2], text), "2606:4700::1");
	assert_int_equal(ttl[0], 1);
	assert_int_equal(ttl[1], 3);
	assert_int_equal(ttl[2], 5);
	assert_int_equal(dropped[0].range, NET_RANGE_PRIVATE);
	assert_int_equal(dropped[1].range, NET_RANGE_LOOPBACK);
	assert_int_equal(dropped[1].via, NET_EMBED_MAPPED);
	/* no ttls, no dropped list */
	assert_int_equal(net_policy_filter_addrs(&pol, a, NULL, 3, NULL, 0, NULL), 3);
}

/* The Landlock backstop's ports: every port any host may use, and 53; not runspec.ports. */
static void test_landlock_ports(void **state)
{
	static uint16_t only22[] = { 22, 443 };
	static uint16_t global[] = { 8080, 80 };
	struct host_spec h[] = {
		{ .name = "registry.npmjs.org" },
		{ .name = "nas", .ports = only22, .nports = 2 },
		{ .name = "db", .ports = db_ports, .nports = 1 },
	};
	struct net_policy p = { .mode = NET_ALLOWLIST, .hosts = h, .nhosts = 3,
				.ports = global, .nports = 2 };
	static const uint16_t want[] = { 80, 443, 8080, 22, 5432, 53 };
	uint16_t *ports;
	size_t n;

	(void)state;
	n = net_policy_landlock_ports(&p, &ports);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_memory_equal(ports, want, sizeof(want));
	free(ports);
	/* The policy still keeps the host ports to their hosts. */
	assert_false(net_policy_port_ok(&p, "registry.npmjs.org", 22));
	assert_false(net_policy_port_ok(&p, NULL, 5432));
	assert_true(net_policy_port_ok(&p, "nas", 22));
	/* No hosts, no --allow-port: the defaults and DNS. */
	p.nhosts = 0;
	p.nports = 0;
	n = net_policy_landlock_ports(&p, &ports);
	assert_int_equal(n, 3);
	assert_int_equal(ports[0], 80);
	assert_int_equal(ports[1], 443);
	assert_int_equal(ports[2], 53);
	free(ports);
	/* Public and none: the policy restricts no port, so neither does Landlock. */
	p.mode = NET_PUBLIC;
	p.nports = 2;
	assert_int_equal(net_policy_landlock_ports(&p, &ports), 0);
	assert_null(ports);
	p.mode = NET_NONE;
	assert_int_equal(net_policy_landlock_ports(&p, &ports), 0);
	assert_null(ports);
}

/* The policy borrows the runspec's lists. */
static void test_from_runspec(void **state)
{
	struct runspec rs;
	struct net_policy p;

	(void)state;
	memset(&rs, 0, sizeof(rs));
	rs.net = NET_ALLOWLIST;
	rs.hosts = hosts;
	rs.nhosts = 2;
	rs.tailscale = true;
	net_policy_from_runspec(&p, &rs);
	assert_int_equal(p.mode, NET_ALLOWLIST);
	assert_ptr_equal(p.hosts, hosts);
	assert_int_equal(p.nhosts, 2);
	assert_true(p.tailscale);
	assert_int_equal(p.nports, 0);
}

/*
 * Many names on one address: a wildcard-listed name answered by one IP lets a
 * payload bind as many names as it likes to that address. The one listed
 * name is bound last, behind count - 1 unlisted ones: every name must be
 * examined (an early version copied 64 into a stack array and stopped
 * there, or, without its clamp, read past the array).
 */
static void test_many_names(void **state)
{
	static const size_t counts[] = { 1, 63, 64, 65, 1000 };
	struct net_addr a = addr("93.184.216.80");

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct net_bind *tb = net_bind_create(2048);
		struct net_flow f = { .proto = TCP, .dst = a, .port = 443,
				      .name_kind = NET_NAME_NONE };
		struct net_verdict v;
		char name[64];

		for (size_t i = 0; i + 1 < counts[c]; i++) {
			snprintf(name, sizeof(name), "n%zu.unlisted.example.net", i);
			assert_int_equal(net_bind_add(tb, &a, name, 300, 0), 0);
		}
		/* Unlisted names only: no binding. */
		if (net_policy_decide(&pol, tb, &f, 0, &v) || v.deny != NET_DENY_NO_BINDING)
			fail_msg("%zu unlisted names: got %s", counts[c] - 1,
				 net_deny_code(v.deny));
		assert_int_equal(net_bind_add(tb, &a, "last.example.com", 300, 0), 0);
		assert_int_equal(net_bind_names(tb, &a, 0, NULL, 0), counts[c]);
		if (!net_policy_decide(&pol, tb, &f, 0, &v) || v.host == NULL ||
		    strcmp(v.host, "last.example.com") != 0)
			fail_msg("%zu names, listed one last: got %s", counts[c],
				 v.allow ? "allow, other host" : net_deny_code(v.deny));
		/* Listed, but not on this port: refused for the port, not the binding. */
		f.port = 22;
		if (net_policy_decide(&pol, tb, &f, 0, &v) || v.deny != NET_DENY_PORT)
			fail_msg("%zu names, port 22: got %s", counts[c],
				 v.allow ? "allow" : net_deny_code(v.deny));
		net_bind_free(tb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_no_table),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_tailnet_alias),
		cmocka_unit_test(test_tailnet_alias_flows),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_from_runspec),
		cmocka_unit_test(test_landlock_ports),
		cmocka_unit_test(test_many_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
