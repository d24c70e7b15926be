/*
 * test-dnscache.c — the session's DNS answer cache: TTLs honoured to the
 * millisecond, TTL 0 never reused, negative answers kept briefly, failures
 * never, and the table bounded with the soonest expiry evicted first.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "broker/dnscache.h"
#include "parse/dns.h"
#include "common/util.h"

static struct net_addr addr(const char *text)
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(text, &a), 0);
	return a;
}

/* A hit returns the answer with its TTLs counted down; past the smallest TTL it is gone. */
static void test_ttl(void **state)
{
	struct dns_cache *c = dns_cache_create(0);
	struct net_addr a[2] = { addr("93.184.216.34"), addr("93.184.216.35") };
	uint32_t t[2] = { 60, 300 };
	struct dns_cache_answer out;

	(void)state;
	dns_cache_put(c, "example.com", DNS_TYPE_A, DNS_RCODE_NOERROR, a, t, 2, 1000);
	assert_true(dns_cache_get(c, "example.com", DNS_TYPE_A, 1000, &out));
	assert_int_equal(out.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(out.n, 2);
	assert_memory_equal(&out.addrs[1], &a[1], sizeof(a[1]));
	assert_int_equal(out.ttls[0], 60);
	/* 10.5 s later: ten whole seconds held. */
	assert_true(dns_cache_get(c, "example.com", DNS_TYPE_A, 11500, &out));
	assert_int_equal(out.ttls[0], 50);
	assert_int_equal(out.ttls[1], 290);
	/* The other type, another name: misses. */
	assert_false(dns_cache_get(c, "example.com", DNS_TYPE_AAAA, 11500, &out));
	assert_false(dns_cache_get(c, "www.example.com", DNS_TYPE_A, 11500, &out));
	/* The last millisecond of the smallest TTL, then gone (and dropped). */
	assert_true(dns_cache_get(c, "example.com", DNS_TYPE_A, 60999, &out));
	assert_true(out.ttls[0] >= 1);
	assert_false(dns_cache_get(c, "example.com", DNS_TYPE_A, 61000, &out));
	assert_int_equal(dns_cache_count(c), 0);
	/* A clock that went backwards is not trusted either. */
	dns_cache_put(c, "example.com", DNS_TYPE_A, DNS_RCODE_NOERROR, a, t, 2, 5000);
	assert_false(dns_cache_get(c, "example.com", DNS_TYPE_A, 4999, &out));
	dns_cache_free(c);
}

/* What is never kept: TTL 0 anywhere in the answer, SERVFAIL, an overlong name. */
static void test_not_kept(void **state)
{
	struct dns_cache *c = dns_cache_create(0);
	struct net_addr a[2] = { addr("93.184.216.34"), addr("2606:2800:220:1::1") };
	uint32_t t[2] = { 60, 0 };
	struct dns_cache_answer out;
	char longname[DNS_NAME_BUF + 8];

	(void)state;
	dns_cache_put(c, "zero.example", DNS_TYPE_A, DNS_RCODE_NOERROR, a, t, 2, 0);
	assert_false(dns_cache_get(c, "zero.example", DNS_TYPE_A, 0, &out));
	dns_cache_put(c, "fail.example", DNS_TYPE_A, DNS_RCODE_SERVFAIL, NULL, NULL, 0, 0);
	assert_false(dns_cache_get(c, "fail.example", DNS_TYPE_A, 0, &out));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	dns_cache_put(c, longname, DNS_TYPE_A, DNS_RCODE_NOERROR, a, t, 1, 0);
	assert_int_equal(dns_cache_count(c), 0);
	dns_cache_free(c);
}

/* NXDOMAIN and empty answers: kept DNS_CACHE_NEGATIVE_S, no longer. */
static void test_negative(void **state)
{
	struct dns_cache *c = dns_cache_create(0);
	struct dns_cache_answer out;

	(void)state;
	dns_cache_put(c, "nope.example", DNS_TYPE_A, DNS_RCODE_NXDOMAIN, NULL, NULL, 0, 0);
	assert_true(dns_cache_get(c, "nope.example", DNS_TYPE_A, DNS_CACHE_NEGATIVE_S * 1000 - 1,
				  &out));
	assert_int_equal(out.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(out.n, 0);
	assert_false(dns_cache_get(c, "nope.example", DNS_TYPE_A, DNS_CACHE_NEGATIVE_S * 1000,
				   &out));
	dns_cache_free(c);
}

/* A newer answer replaces the older; the table holds max and evicts the soonest expiry. */
static void test_bounded(void **state)
{
	struct dns_cache *c = dns_cache_create(4);
	struct net_addr a = addr("93.184.216.34"), b = addr("93.184.216.99");
	uint32_t t;
	struct dns_cache_answer out;
	char name[32];

	(void)state;
	for (unsigned i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "n%u.example", i);
		t = 100 + i * 100;      /* n0 expires first */
		dns_cache_put(c, name, DNS_TYPE_A, DNS_RCODE_NOERROR, &a, &t, 1, 0);
	}
	assert_int_equal(dns_cache_count(c), 4);
	t = 50;
	dns_cache_put(c, "n3.example", DNS_TYPE_A, DNS_RCODE_NOERROR, &b, &t, 1, 0);
	assert_int_equal(dns_cache_count(c), 4);
	assert_true(dns_cache_get(c, "n3.example", DNS_TYPE_A, 0, &out));
	assert_memory_equal(&out.addrs[0], &b, sizeof(b));
	assert_int_equal(out.ttls[0], 50);
	t = 1000;
	dns_cache_put(c, "n4.example", DNS_TYPE_A, DNS_RCODE_NOERROR, &a, &t, 1, 0);
	assert_int_equal(dns_cache_count(c), 4);
	/* n3 (now 50 s) went, not n0 (100 s). */
	assert_false(dns_cache_get(c, "n3.example", DNS_TYPE_A, 0, &out));
	assert_true(dns_cache_get(c, "n0.example", DNS_TYPE_A, 0, &out));
	assert_true(dns_cache_get(c, "n4.example", DNS_TYPE_A, 0, &out));
	dns_cache_free(c);
}

/* An answer with more addresses than the cache holds keeps the first DNS_CACHE_ADDRS_MAX. */
static void test_many_addrs(void **state)
{
	struct dns_cache *c = dns_cache_create(0);
	struct net_addr a[DNS_CACHE_ADDRS_MAX + 1];
	uint32_t t[DNS_CACHE_ADDRS_MAX + 1];
	struct dns_cache_answer out;
	char text[32];

	(void)state;
	for (unsigned i = 0; i <= DNS_CACHE_ADDRS_MAX; i++) {
		snprintf(text, sizeof(text), "93.184.%u.1", i);
		a[i] = addr(text);
		t[i] = 60;
	}
	dns_cache_put(c, "big.example", DNS_TYPE_A, DNS_RCODE_NOERROR, a, t,
		      DNS_CACHE_ADDRS_MAX + 1, 0);
	assert_true(dns_cache_get(c, "big.example", DNS_TYPE_A, 0, &out));
	assert_int_equal(out.n, DNS_CACHE_ADDRS_MAX);
	assert_memory_equal(&out.addrs[DNS_CACHE_ADDRS_MAX - 1], &a[DNS_CACHE_ADDRS_MAX - 1],
			    sizeof(a[0]));
	dns_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_not_kept),
		cmocka_unit_test(test_negative),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_many_addrs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
