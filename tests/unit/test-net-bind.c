/*
 * test-net-bind.c — the binding table: expiry to the millisecond, several
 * names per address, TTL clamping, eviction of the soonest-expiring.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/bind.h"

static struct net_addr addr(const char *s)
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(s, &a), 0);
	return a;
}

/* A binding is live from now until now + ttl, exclusive. */
static void test_expiry_exact(void **state)
{
	struct net_bind *t = net_bind_create(16);
	struct net_addr a = addr("104.16.0.34");
	uint64_t t0 = 1000000;

	(void)state;
	assert_int_equal(net_bind_add(t, &a, "registry.npmjs.org", 300, t0), 0);
	assert_true(net_bind_has(t, &a, "registry.npmjs.org", t0));
	assert_true(net_bind_has(t, &a, "registry.npmjs.org", t0 + 300 * 1000 - 1));
	assert_false(net_bind_has(t, &a, "registry.npmjs.org", t0 + 300 * 1000));
	/* other name, other address, other family with the same bytes */
	assert_false(net_bind_has(t, &a, "registry.npmjs.com", t0));
	struct net_addr b = addr("104.16.0.35");
	assert_false(net_bind_has(t, &b, "registry.npmjs.org", t0));
	struct net_addr m = addr("::ffff:104.16.0.34");
	assert_false(net_bind_has(t, &m, "registry.npmjs.org", t0));
	net_bind_free(t);
}

/* TTLs are clamped to [NET_BIND_TTL_MIN_S, NET_BIND_TTL_MAX_S]. */
static void test_ttl_clamp(void **state)
{
	struct net_bind *t = net_bind_create(16);
	struct net_addr a = addr("192.0.2.1"), b = addr("192.0.2.2");

	(void)state;
	net_bind_add(t, &a, "zero.example", 0, 0);
	assert_true(net_bind_has(t, &a, "zero.example", NET_BIND_TTL_MIN_S * 1000 - 1));
	assert_false(net_bind_has(t, &a, "zero.example", NET_BIND_TTL_MIN_S * 1000));
	net_bind_add(t, &b, "long.example", UINT32_MAX, 0);
	assert_true(net_bind_has(t, &b, "long.example", (uint64_t)NET_BIND_TTL_MAX_S * 1000 - 1));
	assert_false(net_bind_has(t, &b, "long.example", (uint64_t)NET_BIND_TTL_MAX_S * 1000));
	/* a time near the end of uint64 does not wrap around */
	net_bind_add(t, &b, "late.example", 60, UINT64_MAX - 10);
	assert_true(net_bind_has(t, &b, "late.example", UINT64_MAX - 1));
	net_bind_free(t);
}

/* Re-adding extends and never shortens. */
static void test_extend_not_shorten(void **state)
{
	struct net_bind *t = net_bind_create(16);
	struct net_addr a = addr("2606:4700::1");

	(void)state;
	net_bind_add(t, &a, "example.com", 600, 0);
	net_bind_add(t, &a, "example.com", 60, 100000);     /* would end at 160 s */
	assert_true(net_bind_has(t, &a, "example.com", 599999));
	net_bind_add(t, &a, "example.com", 600, 500000);    /* now ends at 1100 s */
	assert_true(net_bind_has(t, &a, "example.com", 1099999));
	assert_false(net_bind_has(t, &a, "example.com", 1100000));
	assert_int_equal(net_bind_count(t), 1);
	net_bind_free(t);
}

/* A CDN address carries several names; each is listed while live. */
static void test_many_names(void **state)
{
	struct net_bind *t = net_bind_create(16);
	struct net_addr a = addr("104.16.0.34"), other = addr("1.1.1.1");
	const char *names[4];

	(void)state;
	net_bind_add(t, &a, "a.example", 100, 0);
	net_bind_add(t, &a, "b.example", 200, 0);
	net_bind_add(t, &other, "c.example", 300, 0);
	net_bind_add(t, &a, "d.example", 300, 0);
	assert_int_equal(net_bind_names(t, &a, 0, names, 4), 3);
	assert_string_equal(names[0], "a.example");
	assert_string_equal(names[1], "b.example");
	assert_string_equal(names[2], "d.example");
	/* more names than room: the count is still exact */
	assert_int_equal(net_bind_names(t, &a, 0, names, 1), 3);
	assert_string_equal(names[0], "a.example");
	/* a.example expired at 100 s */
	assert_int_equal(net_bind_names(t, &a, 150000, names, 4), 2);
	assert_string_equal(names[0], "b.example");
	assert_int_equal(net_bind_names(t, &a, 300000, names, 4), 0);
	net_bind_free(t);
}

static bool permit_only(const char *name, void *arg)
{
	return strcmp(name, (const char *)arg) == 0;
}

/* The policy question: bound to a name that permit() accepts. */
static void test_find(void **state)
{
	struct net_bind *t = net_bind_create(16);
	struct net_addr a = addr("104.16.0.34");
	const char *which = NULL;

	(void)state;
	net_bind_add(t, &a, "evil.example", 100, 0);
	net_bind_add(t, &a, "good.example", 100, 0);
	assert_true(net_bind_find(t, &a, 0, permit_only, "good.example", &which));
	assert_string_equal(which, "good.example");
	assert_false(net_bind_find(t, &a, 0, permit_only, "other.example", &which));
	assert_false(net_bind_find(t, &a, 100000, permit_only, "good.example", NULL));
	assert_true(net_bind_find(t, &a, 0, NULL, NULL, &which));
	assert_string_equal(which, "evil.example");
	net_bind_free(t);
}

/* Full: the soonest-expiring binding goes, the new one is kept. */
static void test_eviction(void **state)
{
	struct net_bind *t = net_bind_create(3);
	struct net_addr a = addr("192.0.2.1"), b = addr("192.0.2.2"), c = addr("192.0.2.3"),
			d = addr("192.0.2.4");

	(void)state;
	net_bind_add(t, &a, "a.example", 300, 0);
	net_bind_add(t, &b, "b.example", 100, 0);   /* soonest */
	net_bind_add(t, &c, "c.example", 200, 0);
	net_bind_add(t, &d, "d.example", 50, 0);    /* evicts b */
	assert_int_equal(net_bind_count(t), 3);
	assert_true(net_bind_has(t, &a, "a.example", 0));
	assert_false(net_bind_has(t, &b, "b.example", 0));
	assert_true(net_bind_has(t, &c, "c.example", 0));
	assert_true(net_bind_has(t, &d, "d.example", 0));
	/* d is now the soonest */
	net_bind_add(t, &b, "b.example", 1000, 0);
	assert_false(net_bind_has(t, &d, "d.example", 0));
	assert_true(net_bind_has(t, &b, "b.example", 0));
	net_bind_free(t);
}

/* A hostile resolver cannot grow the table past its bound. */
static void test_bounded(void **state)
{
	struct net_bind *t = net_bind_create(64);
	char name[32];

	(void)state;
	for (unsigned i = 0; i < 10000; i++) {
		struct net_addr a = { 0 };
		a.family = 2;   /* AF_INET */
		a.a[0] = 8;
		a.a[2] = (uint8_t)(i >> 8);
		a.a[3] = (uint8_t)i;
		snprintf(name, sizeof(name), "h%u.example", i);
		net_bind_add(t, &a, name, 60 + i, 0);
	}
	assert_int_equal(net_bind_count(t), 64);
	net_bind_free(t);
	t = net_bind_create(0);     /* the default bound */
	assert_int_equal(net_bind_count(t), 0);
	net_bind_free(t);
}

/* Expiry compacts; names that are not names are refused. */
static void test_expire_and_bad_names(void **state)
{
	struct net_bind *t = net_bind_create(8);
	struct net_addr a = addr("192.0.2.1");
	char longname[300];

	(void)state;
	net_bind_add(t, &a, "one.example", 60, 0);
	net_bind_add(t, &a, "two.example", 120, 0);
	net_bind_add(t, &a, "three.example", 180, 0);
	assert_int_equal(net_bind_expire(t, 120000), 2);
	assert_int_equal(net_bind_count(t), 1);
	assert_true(net_bind_has(t, &a, "three.example", 120000));

	assert_int_equal(net_bind_add(t, &a, "", 60, 0), -1);
	assert_int_equal(net_bind_add(t, &a, NULL, 60, 0), -1);
	memset(longname, 'a', sizeof(longname));
	longname[NET_BIND_NAME_MAX] = '\0';
	assert_int_equal(net_bind_add(t, &a, longname, 60, 0), 0);
	longname[NET_BIND_NAME_MAX] = 'a';
	longname[NET_BIND_NAME_MAX + 1] = '\0';
	assert_int_equal(net_bind_add(t, &a, longname, 60, 0), -1);
	net_bind_free(t);
	net_bind_free(NULL);
}

/*
 * 63, 64, 65 and 1000 live names on one address (a wildcard-listed name
 * answered by one IP lets a payload bind as many as it likes): the count is
 * exact, names[] is filled up to max and never past it (a sentinel follows),
 * and net_bind_find reaches the last name bound.
 */
static void test_names_limit(void **state)
{
	static const size_t counts[] = { 63, 64, 65, 1000 };
	struct net_addr a = addr("104.16.0.34");
	const char *names[64 + 1];
	const char *which = NULL;
	char name[64];

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct net_bind *t = net_bind_create(2048);
		size_t filled = counts[c] < 64 ? counts[c] : 64;

		for (size_t i = 0; i < counts[c]; i++) {
			snprintf(name, sizeof(name), "n%zu.example", i);
			assert_int_equal(net_bind_add(t, &a, name, 300, 0), 0);
		}
		names[64] = "sentinel";
		assert_int_equal(net_bind_names(t, &a, 0, names, 64), counts[c]);
		assert_string_equal(names[64], "sentinel");
		assert_string_equal(names[0], "n0.example");
		snprintf(name, sizeof(name), "n%zu.example", filled - 1);
		assert_string_equal(names[filled - 1], name);
		snprintf(name, sizeof(name), "n%zu.example", counts[c] - 1);
		assert_true(net_bind_find(t, &a, 0, permit_only, name, &which));
		assert_string_equal(which, name);
		net_bind_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expiry_exact),
		cmocka_unit_test(test_ttl_clamp),
		cmocka_unit_test(test_extend_not_shorten),
		cmocka_unit_test(test_many_names),
		cmocka_unit_test(test_names_limit),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_expire_and_bad_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
