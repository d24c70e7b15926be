/*
 * test-parse.c — every value parser of spec/values.c, table-driven: each row is
 * one input a user could write, what it must become, or the words its
 * refusal must contain. A refusal must always quote the offending value.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "spec/values.h"
#include "common/util.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

/* A refusal: -1, one line, contains `want`, and quotes the value (when given). */
static void assert_refusal(int rc, char *err, const char *value, const char *want)
{
	assert_int_equal(rc, -1);
	assert_non_null(err);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	if (strchr(err, '\n'))
		fail_msg("error \"%s\" is more than one line", err);
	if (value) {
		char *quoted = xasprintf("'%s'", value);

		if (!strstr(err, quoted))
			fail_msg("error \"%s\" does not name the value %s", err, quoted);
		free(quoted);
	}
	free(err);
}

struct u64_row {
	const char *in;
	uint64_t want;          /* 0: must be refused */
	const char *err;        /* words the refusal contains */
};

static const struct u64_row size_rows[] = {
	{ "1048576", 1048576, NULL },           /* plain bytes */
	{ "1", 1, NULL },
	{ "100B", 100, NULL },
	{ "2GiB", 2 * GiB, NULL },              /* the specification's example */
	{ "512M", 512 * MiB, NULL },            /* M is binary */
	{ "512MB", 512 * MiB, NULL },
	{ "512mib", 512 * MiB, NULL },          /* unit is case-insensitive */
	{ "4k", 4 * KiB, NULL },
	{ "4KB", 4 * KiB, NULL },
	{ "1.5G", GiB + GiB / 2, NULL },        /* decimals */
	{ "0.5KiB", 512, NULL },
	{ "1.3K", 1331, NULL },                 /* 1331.2 bytes: fraction of a byte dropped */
	{ "2T", 2 * TiB, NULL },
	{ "16777215TiB", 16777215 * TiB, NULL },        /* just fits 64 bits */
	{ "007M", 7 * MiB, NULL },
	{ "", 0, "expected a number" },
	{ "0", 0, "greater than zero" },
	{ "0G", 0, "greater than zero" },
	{ "0.0000001K", 0, "greater than zero" },       /* rounds to nothing */
	{ "-5M", 0, "negative" },
	{ "+5M", 0, "expected a number" },
	{ "12XB", 0, "unknown unit" },
	{ "2GiB ", 0, "unknown unit" },         /* trailing garbage */
	{ " 2GiB", 0, "expected a number" },    /* leading blank */
	{ "2 GiB", 0, "unknown unit" },
	{ "2GiBx", 0, "unknown unit" },
	{ "G", 0, "expected a number" },
	{ "1.5", 0, "fraction of a byte" },
	{ "1.", 0, "expected a number" },
	{ ".5G", 0, "expected a number" },
	{ "1.2.3G", 0, "unknown unit" },
	{ "16777216TiB", 0, "too large" },      /* 2^64: overflow */
	{ "99999999999999999999", 0, "too large" },
	{ "18446744073709551616", 0, "too large" },
	{ "1.0000000001G", 0, "decimal places" },
	{ "0x10", 0, "unknown unit" },
};

static void test_parse_size(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(size_rows); i++) {
		const struct u64_row *r = &size_rows[i];
		uint64_t v = 0xdead;
		char *err = NULL;
		int rc = parse_size(r->in, &v, &err);

		print_message("size \"%s\"\n", r->in);
		if (r->want) {
			assert_int_equal(rc, 0);
			assert_null(err);
			assert_int_equal(v, r->want);
		} else {
			assert_refusal(rc, err, r->in, r->err);
			assert_int_equal(v, 0xdead);    /* output untouched on failure */
		}
	}
}

static const struct u64_row duration_rows[] = {
	{ "10m", 600000, NULL },
	{ "90s", 90000, NULL },
	{ "250ms", 250, NULL },
	{ "2", 2000, NULL },                    /* bare number is seconds */
	{ "1h30m", 5400000, NULL },             /* combinations */
	{ "1h30m15s", 5415000, NULL },
	{ "1d", 86400000, NULL },
	{ "2d12h", 216000000, NULL },
	{ "1m500ms", 60500, NULL },
	{ "1.5s", 1500, NULL },
	{ "0.5h", 1800000, NULL },
	{ "1ms", 1, NULL },
	{ "", 0, "expected a number" },
	{ "0", 0, "at least 1ms" },
	{ "0s", 0, "at least 1ms" },
	{ "0.1ms", 0, "at least 1ms" },
	{ "-5s", 0, "negative" },
	{ "10x", 0, "unknown unit" },
	{ "10S", 0, "unknown unit" },
	{ "1h30", 0, "unknown unit" },          /* 30 what? */
	{ "30m1h", 0, "largest to smallest" },
	{ "1m1m", 0, "largest to smallest" },
	{ "10s ", 0, "expected a number" },     /* trailing garbage */
	{ " 10s", 0, "expected a number" },
	{ "s", 0, "expected a number" },
	{ "10 s", 0, "unknown unit" },
	{ "213503982335d", 0, "too long" },     /* × 86400000 overflows 64 bits */
	{ "99999999999999999999s", 0, "too long" },
};

static void test_parse_duration(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(duration_rows); i++) {
		const struct u64_row *r = &duration_rows[i];
		uint64_t v = 0xdead;
		char *err = NULL;
		int rc = parse_duration(r->in, &v, &err);

		print_message("duration \"%s\"\n", r->in);
		if (r->want) {
			assert_int_equal(rc, 0);
			assert_null(err);
			assert_int_equal(v, r->want);
		} else {
			assert_refusal(rc, err, r->in, r->err);
			assert_int_equal(v, 0xdead);
		}
	}
}

static const struct u64_row count_rows[] = {
	{ "512", 512, NULL },
	{ "1", 1, NULL },
	{ "2147483648", 2147483648ULL, NULL },
	{ "0", 0, "from 1 to 2147483648" },
	{ "2147483649", 0, "from 1 to" },
	{ "-1", 0, "from 1 to" },
	{ "12k", 0, "from 1 to" },
	{ "", 0, "from 1 to" },
	{ "99999999999999999999999", 0, "from 1 to" },
};

static void test_parse_count(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(count_rows); i++) {
		const struct u64_row *r = &count_rows[i];
		uint64_t v = 0;
		char *err = NULL;
		int rc = parse_count(r->in, &v, &err);

		print_message("count \"%s\"\n", r->in);
		if (r->want) {
			assert_int_equal(rc, 0);
			assert_int_equal(v, r->want);
		} else {
			assert_refusal(rc, err, r->in, r->err);
		}
	}
}

static const struct u64_row cpus_rows[] = {
	{ "2", 2000, NULL },
	{ "0.5", 500, NULL },
	{ "1.25", 1250, NULL },
	{ "0.001", 1, NULL },
	{ "1024", 1024000, NULL },
	{ "0", 0, "greater than zero" },
	{ "0.000", 0, "greater than zero" },
	{ "0.0005", 0, "three decimal places" },
	{ "1025", 0, "at most 1024" },
	{ "-1", 0, "expected a number of CPUs" },
	{ "2x", 0, "expected a number of CPUs" },
	{ "", 0, "expected a number of CPUs" },
};

static void test_parse_cpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cpus_rows); i++) {
		const struct u64_row *r = &cpus_rows[i];
		uint32_t v = 0;
		char *err = NULL;
		int rc = parse_cpus(r->in, &v, &err);

		print_message("cpus \"%s\"\n", r->in);
		if (r->want) {
			assert_int_equal(rc, 0);
			assert_int_equal(v, r->want);
		} else {
			assert_refusal(rc, err, r->in, r->err);
		}
	}
}

static const struct u64_row port_rows[] = {
	{ "443", 443, NULL },
	{ "1", 1, NULL },
	{ "65535", 65535, NULL },
	{ "0", 0, "1 to 65535" },
	{ "65536", 0, "1 to 65535" },
	{ "-1", 0, "1 to 65535" },
	{ "https", 0, "1 to 65535" },
	{ "44 3", 0, "1 to 65535" },
	{ "", 0, "1 to 65535" },
};

static void test_parse_port(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(port_rows); i++) {
		const struct u64_row *r = &port_rows[i];
		uint16_t v = 0;
		char *err = NULL;
		int rc = parse_port(r->in, &v, &err);

		print_message("port \"%s\"\n", r->in);
		if (r->want) {
			assert_int_equal(rc, 0);
			assert_int_equal(v, r->want);
		} else {
			assert_refusal(rc, err, r->in, r->err);
		}
	}
}

static void test_parse_modes(void **state)
{
	enum net_mode n = NET_UNSET;
	enum seccomp_mode m = SECCOMP_UNSET;
	char *err = NULL;
	int rc;

	(void)state;
	assert_int_equal(parse_net_mode("public", &n, &err), 0);
	assert_int_equal(n, NET_PUBLIC);
	assert_int_equal(parse_net_mode("allowlist", &n, &err), 0);
	assert_int_equal(n, NET_ALLOWLIST);
	assert_int_equal(parse_net_mode("none", &n, &err), 0);
	assert_int_equal(n, NET_NONE);
	rc = parse_net_mode("wifi", &n, &err);
	assert_refusal(rc, err, "wifi",
		       "expected public, allowlist or none");
	err = NULL;
	rc = parse_net_mode("None", &n, &err);
	assert_refusal(rc, err, "None", "expected public");
	err = NULL;
	rc = parse_net_mode("", &n, &err);
	assert_refusal(rc, err, "", "expected public");
	err = NULL;
	assert_int_equal(parse_seccomp_mode("strict", &m, &err), 0);
	assert_int_equal(m, SECCOMP_STRICT);
	assert_int_equal(parse_seccomp_mode("compat", &m, &err), 0);
	assert_int_equal(m, SECCOMP_COMPAT);
	rc = parse_seccomp_mode("lax", &m, &err);
	assert_refusal(rc, err, "lax",
		       "expected strict or compat");
}

struct host_row {
	const char *in;
	const char *name;       /* NULL: must be refused */
	const char *ports;      /* expected ports joined with ',' (good rows), or error words */
};

static const struct host_row host_rows[] = {
	{ "registry.npmjs.org", "registry.npmjs.org", "" },
	{ "Registry.NPMJS.org", "registry.npmjs.org", "" },     /* lower-cased */
	{ "example.com.", "example.com", "" },                  /* trailing dot dropped */
	{ "nas:22", "nas", "22" },                              /* single label, a tailnet name */
	{ "db.tail0a1b2.ts.net:5432", "db.tail0a1b2.ts.net", "5432" },
	{ "example.com:443,8443", "example.com", "443,8443" },
	{ "*.example.com", "*.example.com", "" },               /* wildcard as first label */
	{ "*.example.com:443", "*.example.com", "443" },
	{ "a-b.c-d.example", "a-b.c-d.example", "" },
	{ "xn--bcher-kva.example", "xn--bcher-kva.example", "" },
	{ "1password.com", "1password.com", "" },               /* digits first is fine */
	{ "", NULL, "is empty" },
	{ "bad host", NULL, "' ' is not allowed" },
	{ "bad_host.com", NULL, "'_' is not allowed" },
	{ "a..b", NULL, "empty label" },
	{ ".example.com", NULL, "empty label" },
	{ "-a.com", NULL, "start or end with '-'" },
	{ "a-.com", NULL, "start or end with '-'" },
	{ "foo.*.com", NULL, "whole first label" },
	{ "*example.com", NULL, "whole first label" },
	{ "*", NULL, "whole first label" },
	{ "*.", NULL, "whole first label" },        /* "*" once the dot is dropped */
	{ "10.0.0.1", NULL, "use --allow-cidr" },               /* IP literals are not hosts */
	{ "10.0.0.1:80", NULL, "use --allow-cidr" },
	{ "1.2.3", NULL, "use --allow-cidr" },                  /* numeric last label */
	{ "::1", NULL, "use --allow-cidr" },
	{ "fd00::1", NULL, "use --allow-cidr" },
	{ "[::1]:443", NULL, "use --allow-cidr" },
	{ "a:b:c", NULL, "expected HOST[:PORT" },
	{ "example.com:", NULL, "empty port" },
	{ "example.com:443,", NULL, "empty port" },
	{ "example.com:,443", NULL, "empty port" },
	{ "example.com:0", NULL, "1 to 65535" },
	{ "example.com:65536", NULL, "1 to 65535" },
	{ "example.com:https", NULL, "1 to 65535" },
	{ "example.com:443,443", NULL, "port 443 twice" },
	{ ":443", NULL, "has no name" },
	{ "a\x1b[2J.com", NULL, "\\x1b is not allowed" },       /* escapes never echoed raw */
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", NULL,
	  "longer than 63" },
};

static void test_parse_host_spec(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(host_rows); i++) {
		const struct host_row *r = &host_rows[i];
		struct host_spec h = { 0 };
		char *err = NULL;
		int rc = parse_host_spec(r->in, &h, &err);

		print_message("host \"%s\"\n", r->in);
		if (r->name) {
			char joined[64] = "";

			assert_int_equal(rc, 0);
			assert_string_equal(h.name, r->name);
			for (size_t j = 0; j < h.nports; j++)
				snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined),
					 "%s%u", j ? "," : "", h.ports[j]);
			assert_string_equal(joined, r->ports);
			host_spec_free(&h);
		} else {
			/* values with control bytes are shown escaped, so do not look for them raw */
			assert_refusal(rc, err, strchr(r->in, '\x1b') ? NULL : r->in, r->ports);
			assert_null(h.name);
		}
	}
}

static void test_parse_host_length(void **state)
{
	char name[300], *err = NULL;
	struct host_spec h = { 0 };

	(void)state;
	/* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253: the longest name DNS can carry */
	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	name[253] = '\0';
	assert_int_equal(parse_host_spec(name, &h, &err), 0);
	assert_int_equal(strlen(h.name), 253);
	host_spec_free(&h);
	name[253] = 'a';
	name[254] = '\0';
	assert_int_equal(parse_host_spec(name, &h, &err), -1);
	assert_non_null(strstr(err, "longer than 253"));
	free(err);
}

struct cidr_row {
	const char *in;
	int family;             /* 0: must be refused */
	const char *addr;       /* network address as inet_ntop prints it, or error words */
	int prefix;
};

static const struct cidr_row cidr_rows[] = {
	{ "10.0.0.0/8", AF_INET, "10.0.0.0", 8 },
	{ "192.168.4.0/24", AF_INET, "192.168.4.0", 24 },
	{ "192.168.1.7", AF_INET, "192.168.1.7", 32 },          /* bare address = /32 */
	{ "192.168.1.7/32", AF_INET, "192.168.1.7", 32 },
	{ "100.64.0.0/10", AF_INET, "100.64.0.0", 10 },         /* tailscale CGNAT */
	{ "172.16.0.0/12", AF_INET, "172.16.0.0", 12 },
	{ "fd00::/8", AF_INET6, "fd00::", 8 },
	{ "fd7a:115c:a1e0::/48", AF_INET6, "fd7a:115c:a1e0::", 48 },
	{ "::1", AF_INET6, "::1", 128 },
	{ "2001:db8::/32", AF_INET6, "2001:db8::", 32 },
	{ "10.0.0.1/8", 0, "has host bits set; did you mean 10.0.0.0/8?", 0 },
	{ "192.168.1.7/24", 0, "did you mean 192.168.1.0/24?", 0 },
	{ "172.31.0.0/12", 0, "did you mean 172.16.0.0/12?", 0 },
	{ "fd00::1/8", 0, "did you mean fd00::/8?", 0 },
	{ "10.0.0.0/33", 0, "from 1 to 32", 0 },
	{ "fd00::/129", 0, "from 1 to 128", 0 },
	{ "10.0.0.0/", 0, "from 1 to 32", 0 },
	{ "10.0.0.0/-1", 0, "from 1 to 32", 0 },
	{ "10.0.0.0/8x", 0, "from 1 to 32", 0 },
	{ "0.0.0.0/0", 0, "every address", 0 },
	{ "::/0", 0, "every address", 0 },
	{ "10.0.0/8", 0, "expected an IPv4 or IPv6 prefix", 0 },
	{ "256.0.0.0/8", 0, "expected an IPv4 or IPv6 prefix", 0 },
	{ "example.com/24", 0, "expected an IPv4 or IPv6 prefix", 0 },
	{ "", 0, "expected an IPv4 or IPv6 prefix", 0 },
	{ "fe80::1%eth0/64", 0, "expected an IPv4 or IPv6 prefix", 0 },
};

static void test_parse_cidr(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cidr_rows); i++) {
		const struct cidr_row *r = &cidr_rows[i];
		struct cidr c = { 0 };
		char *err = NULL, text[INET6_ADDRSTRLEN];
		int rc = parse_cidr(r->in, &c, &err);

		print_message("cidr \"%s\"\n", r->in);
		if (r->family) {
			assert_int_equal(rc, 0);
			assert_int_equal(c.family, r->family);
			assert_non_null(inet_ntop(c.family, c.addr, text, sizeof(text)));
			assert_string_equal(text, r->addr);
			assert_int_equal(c.prefix, r->prefix);
			assert_string_equal(c.text, r->in);     /* verbatim for the audit log */
			cidr_free(&c);
		} else {
			assert_refusal(rc, err, r->in, r->addr);
			assert_null(c.text);
		}
	}
}

struct env_row {
	const char *in;
	const char *name;       /* NULL: refused */
	const char *value;      /* NULL: pass the caller's */
};

static const struct env_row env_rows[] = {
	{ "ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY", NULL },
	{ "GOMAXPROCS=4", "GOMAXPROCS", "4" },
	{ "_X=", "_X", "" },                    /* set to empty is not the same as pass */
	{ "A=b=c", "A", "b=c" },                /* only the first '=' separates */
	{ "lower_case9", "lower_case9", NULL },
	{ "1BAD", NULL, NULL },
	{ "", NULL, NULL },
	{ "=x", NULL, NULL },
	{ "A-B=1", NULL, NULL },
	{ "A B", NULL, NULL },
};

static void test_parse_env_spec(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(env_rows); i++) {
		const struct env_row *r = &env_rows[i];
		struct env_spec e = { 0 };
		char *err = NULL;
		int rc = parse_env_spec(r->in, &e, &err);

		print_message("env \"%s\"\n", r->in);
		if (r->name) {
			assert_int_equal(rc, 0);
			assert_string_equal(e.name, r->name);
			if (r->value)
				assert_string_equal(e.value, r->value);
			else
				assert_null(e.value);
			env_spec_free(&e);
		} else {
			assert_refusal(rc, err, NULL, "expected a letter or '_'");
		}
	}
}

static void test_parse_copy_spec(void **state)
{
	struct mount_spec m = { 0 };
	char *err = NULL;
	int rc;

	(void)state;
	assert_int_equal(parse_copy_spec("mcp.json", MOUNT_COPY, &m, &err), 0);
	assert_int_equal(m.kind, MOUNT_COPY);
	assert_string_equal(m.src, "mcp.json");
	assert_null(m.dst);
	mount_spec_free(&m);

	assert_int_equal(parse_copy_spec("/p/mcp.json:/home/u/.claude.json", MOUNT_COPY_RO,
					 &m, &err), 0);
	assert_int_equal(m.kind, MOUNT_COPY_RO);
	assert_string_equal(m.src, "/p/mcp.json");
	assert_string_equal(m.dst, "/home/u/.claude.json");
	mount_spec_free(&m);

	rc = parse_copy_spec("", MOUNT_COPY, &m, &err);
	assert_refusal(rc, err, "", "no source");
	err = NULL;
	rc = parse_copy_spec(":/x", MOUNT_COPY, &m, &err);
	assert_refusal(rc, err, ":/x", "no source");
	err = NULL;
	rc = parse_copy_spec("a:", MOUNT_COPY, &m, &err);
	assert_refusal(rc, err, "a:",
		       "empty destination");
	err = NULL;
	rc = parse_copy_spec("a:rel/b", MOUNT_COPY, &m, &err);
	assert_refusal(rc, err, "a:rel/b",
		       "absolute path");
	assert_null(m.src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_count),
		cmocka_unit_test(test_parse_cpus),
		cmocka_unit_test(test_parse_port),
		cmocka_unit_test(test_parse_modes),
		cmocka_unit_test(test_parse_host_spec),
		cmocka_unit_test(test_parse_host_length),
		cmocka_unit_test(test_parse_cidr),
		cmocka_unit_test(test_parse_env_spec),
		cmocka_unit_test(test_parse_copy_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
