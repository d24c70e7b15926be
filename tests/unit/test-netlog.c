/*
 * test-netlog.c — the --net-log encoder: the exact document for a small run,
 * interning, merged resolutions, the summary's counting and order, and a
 * hostile name that must come out escaped.
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

#include "broker/netlog.h"

static struct net_addr addr(const char *s)
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(s, &a), 0);
	return a;
}

/* The specification's example, byte for byte, with who made what (version 2). */
static void test_exact_document(void **state)
{
	struct netlog *nl = netlog_create();
	struct event_who evil = {
		.found = true, .pid = 812, .comm = "node", .argv0 = "node", .cmdline = "node evil.js",
		.package = "evil-pkg", .version = "1.2.3", .script = "postinstall",
	};
	struct net_addr res[2] = { addr("104.16.0.34"), addr("104.16.1.34") };
	struct netlog_conn c = {
		.t_ms = 289, .proto = NET_PROTO_TCP, .allowed = true, .addr = addr("104.16.1.34"),
		.port = 443, .host = "registry.npmjs.org", .sni = "registry.npmjs.org",
		.up = 2941, .down = 24212,
	};
	struct netlog_conn d = {
		.t_ms = 8002, .proto = NET_PROTO_TCP, .allowed = false,
		.addr = addr("169.254.169.254"), .port = 80,
		.reason = "link-local / cloud metadata", .who = &evil,
	};
	struct netlog_request q = {
		.t_ms = 301, .seq = 1, .conn = 0, .allowed = true, .method = "GET",
		.host = "registry.npmjs.org", .path = "/v1/x", .query = "a=1", .rule = 0,
	};
	char *json;

	(void)state;
	netlog_add_resolution(nl, "registry.npmjs.org", res, 2);
	assert_int_equal(netlog_add_conn(nl, &c), 0);
	assert_int_equal(netlog_add_conn(nl, &d), 1);
	netlog_add_query(nl, 8000, "evil.example", "A", false, &evil);
	netlog_add_request(nl, &q);
	json = netlog_to_json(nl);
	assert_string_equal(json,
		"{\"version\":3,"
		"\"conn_fields\":[\"t_ms\",\"proto\",\"verdict\",\"addr\",\"port\",\"host\",\"sni\","
		"\"reason\",\"up\",\"down\",\"pid\",\"comm\",\"argv0\",\"package\",\"version\","
		"\"script\",\"via\",\"claimed\"],"
		"\"query_fields\":[\"t_ms\",\"name\",\"type\",\"verdict\",\"pid\",\"comm\",\"argv0\","
		"\"package\",\"version\",\"script\",\"via\",\"claimed\"],"
		"\"strings\":[\"registry.npmjs.org\",\"104.16.0.34\",\"104.16.1.34\","
		"\"169.254.169.254\",\"link-local / cloud metadata\",\"node\",\"evil-pkg\",\"1.2.3\","
		"\"postinstall\",\"evil.example\",\"A\",\"GET\",\"/v1/x\",\"a=1\"],"
		"\"conns\":[[289,\"tcp\",\"allow\",2,443,0,0,-1,2941,24212,null,-1,-1,-1,-1,-1,-1,false],"
		"[8002,\"tcp\",\"deny\",3,80,-1,-1,4,0,0,812,5,5,6,7,8,-1,false]],"
		"\"queries\":[[8000,9,10,\"deny\",812,5,5,6,7,8,-1,false]],"
		"\"resolutions\":{\"registry.npmjs.org\":[\"104.16.0.34\",\"104.16.1.34\"]},"
		"\"request_fields\":[\"t_ms\",\"seq\",\"conn\",\"method\",\"host\",\"port\","
		"\"path\",\"query\",\"verdict\",\"reason\",\"rule\"],"
		"\"requests\":[[301,1,0,11,0,0,12,13,\"allow\",-1,0]],\"requests_dropped\":0,"
		"\"summary\":["
		"{\"destination\":\"169.254.169.254\",\"conns\":1,\"denied\":1,\"addrs\":1,"
		"\"sent\":0,\"received\":0},"
		"{\"destination\":\"registry.npmjs.org\",\"conns\":1,\"denied\":0,\"addrs\":1,"
		"\"sent\":2941,\"received\":24212}]}");
	free(json);
	netlog_free(nl);
}

/* Thousands of connections to a few hosts intern to a few strings. */
static void test_interning_and_summary(void **state)
{
	struct netlog *nl = netlog_create();
	struct netlog_dest *d;
	size_t n;
	char *json;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		char a[32];
		snprintf(a, sizeof(a), "104.16.%d.34", i % 3);
		struct netlog_conn c = {
			.t_ms = (uint64_t)i, .proto = NET_PROTO_TCP, .allowed = true,
			.addr = addr(a), .port = 443,
			.host = i % 2 ? "registry.npmjs.org" : "github.com",
			.sni = i % 2 ? "registry.npmjs.org" : "github.com",
			.up = 10, .down = 100,
		};
		size_t idx = netlog_add_conn(nl, &c);
		if (i == 0)
			netlog_set_bytes(nl, idx, 1000, 5000);      /* updated later */
	}
	struct netlog_conn udp = {
		.t_ms = 5, .proto = NET_PROTO_UDP, .allowed = false, .addr = addr("2606:4700::1"),
		.port = 443, .reason = "UDP/443 (QUIC) refused in allowlist mode",
	};
	netlog_add_conn(nl, &udp);
	netlog_set_bytes(nl, 99999, 1, 1);                  /* ignored */

	n = netlog_summary(nl, &d);
	assert_int_equal(n, 3);
	/* 1500 each: tie broken by name */
	assert_string_equal(d[0].destination, "github.com");
	assert_int_equal(d[0].conns, 1500);
	assert_int_equal(d[0].addrs, 3);
	assert_int_equal(d[0].sent, 1499 * 10 + 1000);
	assert_int_equal(d[0].received, 1499 * 100 + 5000);
	assert_string_equal(d[1].destination, "registry.npmjs.org");
	assert_int_equal(d[1].denied, 0);
	assert_string_equal(d[2].destination, "2606:4700::1");
	assert_int_equal(d[2].denied, 1);
	free(d);

	json = netlog_to_json(nl);
	/* strings: 3 addresses, 2 names, 1 v6, 1 reason */
	assert_non_null(strstr(json, "\"strings\":[\"104.16.0.34\",\"github.com\","
				     "\"104.16.1.34\",\"registry.npmjs.org\",\"104.16.2.34\","
				     "\"2606:4700::1\",\"UDP/443 (QUIC) refused in allowlist mode\"],"));
	assert_non_null(strstr(json, "[5,\"udp\",\"deny\",5,443,-1,-1,6,0,0,null,"));
	free(json);
	netlog_free(nl);
}

/* Answers for one name merge without duplicates, in first-seen order. */
static void test_resolutions(void **state)
{
	struct netlog *nl = netlog_create();
	struct net_addr first[2] = { addr("192.0.2.1"), addr("192.0.2.2") };
	struct net_addr second[3] = { addr("192.0.2.2"), addr("2001:db8::1"), addr("192.0.2.1") };
	char *json;

	(void)state;
	netlog_add_resolution(nl, "a.example", first, 2);
	netlog_add_resolution(nl, "b.example", NULL, 0);
	netlog_add_resolution(nl, "a.example", second, 3);
	netlog_add_resolution(nl, NULL, first, 2);          /* ignored */
	json = netlog_to_json(nl);
	assert_non_null(strstr(json, "\"resolutions\":{\"a.example\":[\"192.0.2.1\",\"192.0.2.2\","
				     "\"2001:db8::1\"],\"b.example\":[]}"));
	assert_non_null(strstr(json, "\"conns\":[],"));
	assert_non_null(strstr(json, "\"summary\":[]}"));
	free(json);
	netlog_free(nl);
	netlog_free(NULL);
}

/* A name with quotes and control bytes cannot break the document. */
static void test_hostile_strings(void **state)
{
	struct netlog *nl = netlog_create();
	struct netlog_conn c = {
		.proto = NET_PROTO_TCP, .allowed = false, .addr = addr("192.0.2.1"), .port = 443,
		.sni = "evil\",\"x\n\x1b[31m", .reason = "r",
	};
	char *json;

	(void)state;
	netlog_add_conn(nl, &c);
	json = netlog_to_json(nl);
	assert_null(strchr(json, '\n'));
	assert_null(strchr(json, '\x1b'));
	assert_non_null(strstr(json, "evil\\\",\\\"x\\u000a\\u001b[31m"));
	free(json);
	netlog_free(nl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_document),
		cmocka_unit_test(test_interning_and_summary),
		cmocka_unit_test(test_resolutions),
		cmocka_unit_test(test_hostile_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
