/*
 * test-dnsexfil.c — the DNS tunnel scorer: parent domains, entropy, each
 * rule firing on the pattern it is for (a file hex-encoded into 60-character
 * labels, base32 subdomains, a stream of NXDOMAIN, TXT queries, a slow
 * tunnel), once per domain, and the names an ordinary install asks for
 * (registries, CDNs with hashed names, retries) firing nothing; then tunnels
 * shaped to pass under the rules, each measured (the bytes that leave before
 * the alert; doc/network-policy.md §7 quotes them), and the one false alarm
 * the documentation names.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "broker/dnsexfil.h"
#include "common/util.h"

#define T_A   1
#define T_TXT 16

static void test_parent(void **state)
{
	static const char *const rows[][2] = {
		{ "registry.npmjs.org", "npmjs.org" },
		{ "a.b.c.example.com", "example.com" },
		{ "x.evil.co.uk", "evil.co.uk" },
		{ "bbc.co.uk", "bbc.co.uk" },
		{ "deadbeef.x9.io", "x9.io" },          /* not a second-level label: two labels */
		{ "www.example.com.au", "example.com.au" },
		{ "localhost", "localhost" },
		{ "example.test", "example.test" },
		{ "", "" },
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		dnsexfil_parent(rows[i][0], out, sizeof(out));
		assert_string_equal(out, rows[i][1]);
	}
}

static void test_entropy(void **state)
{
	(void)state;
	assert_true(dnsexfil_entropy("aaaa", 4) == 0);
	assert_true(dnsexfil_entropy("abcd", 4) > 1.99 && dnsexfil_entropy("abcd", 4) < 2.01);
	assert_true(dnsexfil_entropy("ab.cd", 5) > 1.99);     /* dots do not count */
	assert_true(dnsexfil_entropy("", 0) == 0);
}

/* A credentials file as a stealer would send it: hex, 60 characters a label. */
static void test_hex_file_in_long_labels(void **state)
{
	static const char creds[] =
		"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n";
	struct dnsexfil *x = dnsexfil_new();
	char hex[2 * sizeof(creds) + 1], name[128];
	const char *parent = NULL;
	char *why = NULL;
	size_t nhex = 0, fired_at = 0, chunks = 0;

	(void)state;
	for (size_t i = 0; i + 1 < sizeof(creds); i++)
		nhex += (size_t)snprintf(hex + nhex, 3, "%02x", (unsigned char)creds[i]);
	for (size_t off = 0; off < nhex; off += 60, chunks++) {
		snprintf(name, sizeof(name), "%.60s.%zu.exfil.test", hex + off, chunks);
		if (dnsexfil_query(x, name, T_A, 1000 + chunks * 200, &parent, &why)) {
			assert_int_equal(fired_at, 0);
			fired_at = chunks + 1;
			assert_string_equal(parent, "exfil.test");
			assert_non_null(strstr(why, "exfil.test looks like a tunnel: 3 queries"));
			free(why);
		}
	}
	assert_int_equal(fired_at, DNSEXFIL_LONG_QUERIES);
	dnsexfil_free(x);
}

/* base32 chunks of 26 characters, 15 distinct in a minute. */
static void test_many_random_subdomains(void **state)
{
	static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[128], *why = NULL;
	unsigned seed = 7;
	int fired = 0;

	(void)state;
	for (int q = 0; q < 40; q++) {
		char label[27];

		for (int i = 0; i < 26; i++) {
			seed = seed * 1103515245u + 12345u;
			label[i] = b32[(seed >> 16) % 32];
		}
		label[26] = '\0';
		snprintf(name, sizeof(name), "%s.t.evil.example", label);
		if (dnsexfil_query(x, name, T_A, 5000 + (uint64_t)q * 1000, &parent, &why)) {
			fired++;
			assert_int_equal(q + 1, DNSEXFIL_MANY_SUBDOMAINS);
			assert_string_equal(parent, "evil.example");
			free(why);
		}
	}
	assert_int_equal(fired, 1);     /* once per domain */
	dnsexfil_free(x);
}

static void test_nxdomain_stream_and_retries(void **state)
{
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[128], *why = NULL;
	int fired = 0;

	(void)state;
	/* the same missing name asked again and again: a retry loop, not a tunnel */
	for (int i = 0; i < 100; i++)
		assert_false(dnsexfil_answer(x, "missing.example.org", true, 1000 + i, &parent, &why));
	/* thirty distinct short names, all NXDOMAIN */
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "q%d.nx.example.net", i);
		assert_false(dnsexfil_query(x, name, T_A, 2000 + (uint64_t)i, &parent, &why));
		if (dnsexfil_answer(x, name, true, 2000 + (uint64_t)i, &parent, &why)) {
			fired++;
			assert_string_equal(parent, "example.net");
			assert_non_null(strstr(why, "NXDOMAIN"));
			free(why);
		}
	}
	assert_int_equal(fired, 1);
	dnsexfil_free(x);
}

static void test_txt_queries(void **state)
{
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[128], *why = NULL;
	int fired = 0;

	(void)state;
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "c%d.cmd.evil.example", i);
		if (dnsexfil_query(x, name, T_TXT, 1000 + (uint64_t)i, &parent, &why)) {
			fired = i + 1;
			free(why);
		}
	}
	assert_int_equal(fired, DNSEXFIL_RARE_QUERIES);
	dnsexfil_free(x);
}

/* One long label every two minutes: never three in a window, caught by the session total. */
static void test_slow_tunnel(void **state)
{
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[128], *why = NULL;
	int fired = 0;

	(void)state;
	for (int i = 1; i <= 70; i++) {
		snprintf(name, sizeof(name), "%08x%08x%08x%08x%08x.slow.example", i * 2654435761u,
			 i * 40503u + 7, i * 2246822519u, i * 3266489917u, i * 668265263u);
		if (dnsexfil_query(x, name, T_A, (uint64_t)i * 120000, &parent, &why)) {
			assert_int_equal(fired, 0);
			fired = i;
			assert_non_null(strstr(why, "slow tunnel"));
			free(why);
		}
	}
	assert_int_equal(fired, DNSEXFIL_SLOW_TOTAL);
	dnsexfil_free(x);
}

/* What an npm, pip or git run asks for: nothing fires. */
static void test_ordinary_names(void **state)
{
	static const char *const names[] = {
		"registry.npmjs.org", "registry.yarnpkg.com", "codeload.github.com", "github.com",
		"objects.githubusercontent.com", "pypi.org", "files.pythonhosted.org",
		"deb.debian.org", "nodejs.org", "static.crates.io", "index.crates.io",
		"proxy.golang.org", "sum.golang.org", "storage.googleapis.com",
		"d3c33hcgiwev3.cloudfront.net", "d1o5k2i6v2yz5z.cloudfront.net",
		"dl2ka8bcb8kq9.cloudfront.net", "ec2-52-1-2-3.compute-1.amazonaws.com",
		"r4---sn-ab5l6nzr.googlevideo.com", "fonts.gstatic.com",
	};
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char *why = NULL;

	(void)state;
	for (int round = 0; round < 50; round++)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			uint64_t t = (uint64_t)round * 1000 + i;

			assert_false(dnsexfil_query(x, names[i], T_A, t, &parent, &why));
			assert_false(dnsexfil_query(x, names[i], 28, t, &parent, &why));
			assert_false(dnsexfil_answer(x, names[i], false, t, &parent, &why));
		}
	dnsexfil_free(x);
}

/* More domains than the table holds: the oldest are forgotten, an alerted one kept. */
static void test_bounded(void **state)
{
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[128], *why = NULL;

	(void)state;
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%060d.k.kept.example", i);
		memset(name, 'a' + i, 20);
		if (dnsexfil_query(x, name, T_A, 10 + (uint64_t)i, &parent, &why))
			free(why);
	}
	for (int i = 0; i < 3 * DNSEXFIL_DOMAINS_MAX; i++) {
		snprintf(name, sizeof(name), "www.d%d.example", i);
		assert_false(dnsexfil_query(x, name, T_A, 100 + (uint64_t)i, &parent, &why));
	}
	/* kept.example alerted once and stays alerted */
	snprintf(name, sizeof(name), "%060d.k.kept.example", 99);
	memset(name, 'q', 30);
	assert_false(dnsexfil_query(x, name, T_A, 5000, &parent, &why));
	dnsexfil_free(x);
}

/*
 * Review: real tunnels against the scorer, measured — how many bytes of data
 * each carries out before the first alert (doc/network-policy.md §7 quotes
 * these). Each sends a stream of random bytes, encoded in its alphabet,
 * label length and rate, under the domains it names; "passes" means no alert
 * in its whole budget. The assertions pin what the scorer promises; the
 * figures are printed as TAP comments.
 */
struct tunnel {
	const char *what;
	const char *alphabet;
	unsigned label, labels;         /* data characters a label, labels a query */
	const char *pad;                /* a label of padding after the data, NULL, or
					 * LONGDECOYS: the decoys carry 200 characters each */
	uint64_t every_ms;              /* one query per */
	unsigned parents;               /* domains it rotates through (registered: cost) */
	unsigned decoys;                /* names under distinct made-up parents between queries */
	const char *suffix;             /* the domain it sends under ("dN-" before it: the Nth) */
	size_t budget;                  /* data bytes it tries to send */
	size_t max_passed;              /* the scorer must alert before more than this passes */
};

static const struct tunnel tunnels[] = {
	{ "hex, 3 labels of 60, 1 query/s", "0123456789abcdef", 60, 3, NULL, 1000, 1, 0,
	  "t.evil.example", 65536, 300 },
	{ "base32, 3 labels of 63, 1 query/s", "abcdefghijklmnopqrstuvwxyz234567", 63, 3, NULL,
	  1000, 1, 0, "t.evil.example", 65536, 400 },
	{ "base32, 4 labels of 39 (under 40), 1 query/s", "abcdefghijklmnopqrstuvwxyz234567", 39, 4,
	  NULL, 1000, 1, 0, "t.evil.example", 65536, 1500 },
	{ "hex, 4 labels of 39, 14 queries/min", "0123456789abcdef", 39, 4, NULL, 4300, 1, 0,
	  "t.evil.example", 65536, 2200 },
	{ "hex, 1 label of 39, one query every 5 min", "0123456789abcdef", 39, 1, NULL, 300000, 1, 0,
	  "t.evil.example", 65536, 2200 },
	{ "decimal digits, 3 labels of 63, 1 query/s", "0123456789", 63, 3, NULL, 1000, 1, 0,
	  "t.evil.example", 65536, 2000 },
	{ "decimal digits, 4 labels of 30, 1 query/s", "0123456789", 30, 4, NULL, 1000, 1, 0,
	  "t.evil.example", 65536, 2000 },
	{ "8 letters (3 bits), 3 labels of 63, 1 query/s", "abcdefgh", 63, 3, NULL, 1000, 1, 0,
	  "t.evil.example", 65536, 2000 },
	{ "hex, 60 and a padding label of 60 a's, 1 query/s", "0123456789abcdef", 60, 1,
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1000, 1, 0,
	  "t.evil.example", 65536, 1200 },
	{ "hex, 1 label of 60 straight under com.ws (owned), 1 query/s", "0123456789abcdef", 60,
	  1, NULL, 1000, 1, 0, "com.ws", 65536, 200 },
	{ "hex, 3 labels of 60, 1 query/s, over 300 registered domains", "0123456789abcdef", 60,
	  3, NULL, 1000, 300, 0, "evil.example", 65536, 32768 },
	{ "hex, 3 labels of 60, 1 query/s, 300 made-up parents between", "0123456789abcdef", 60,
	  3, NULL, 1000, 1, 300, "t.evil.example", 65536, 300 },
	{ "hex, 3 labels of 60, 1 query/s, 300 long made-up parents between",
	  "0123456789abcdef", 60, 3, "LONGDECOYS", 1000, 1, 300, "t.evil.example", 65536, 300 },
	{ "an AWS key pair (60 bytes), hex, in one query of 2 labels of 60", "0123456789abcdef",
	  60, 2, NULL, 1000, 1, 0, "t.evil.example", 60, 0 },
	{ "hex, 1 label of 16 (under 20), 1 query/s", "0123456789abcdef", 16, 1, NULL, 1000, 1, 0,
	  "t.evil.example", 65536, 2400 },
};

/* Data bytes one query of t carries: its characters times log2 of its alphabet. */
static size_t tunnel_bytes(const struct tunnel *t)
{
	double bits = 0;

	for (size_t a = strlen(t->alphabet); a > 1; a /= 2)
		bits += 1;
	if (strlen(t->alphabet) == 10)
		bits = 3.32;
	return (size_t)((double)(t->label * t->labels) * bits / 8);
}

/* Run t; the data bytes sent before the first alert (budget when none). */
static size_t tunnel_run(const struct tunnel *t, bool *alerted)
{
	struct dnsexfil *x = dnsexfil_new();
	size_t per = tunnel_bytes(t), sent = 0, alen = strlen(t->alphabet);
	unsigned seed = 12345;
	uint64_t now = 1000;

	*alerted = false;
	for (unsigned q = 0; sent < t->budget; q++, now += t->every_ms) {
		char name[300], domain[64], *o = name, *why = NULL;
		const char *parent;

		for (unsigned l = 0; l < t->labels; l++) {
			for (unsigned i = 0; i < t->label; i++) {
				seed = seed * 1103515245u + 12345u;
				*o++ = t->alphabet[(seed >> 16) % alen];
			}
			*o++ = '.';
		}
		if (t->pad && strcmp(t->pad, "LONGDECOYS") != 0)
			o += sprintf(o, "%s.", t->pad);
		if (t->parents > 1)
			snprintf(domain, sizeof(domain), "d%u-%s", q % t->parents, t->suffix);
		else
			snprintf(domain, sizeof(domain), "%s", t->suffix);
		snprintf(o, sizeof(name) - (size_t)(o - name), "%s", domain);
		/* Decoys first: names under parents made up for the purpose, one query each. */
		for (unsigned k = 0; k < t->decoys && !*alerted; k++) {
			char decoy[256];

			if (t->pad && strcmp(t->pad, "LONGDECOYS") == 0)
				snprintf(decoy, sizeof(decoy), "%0200d.q%u-%u.example", 0, q, k);
			else
				snprintf(decoy, sizeof(decoy), "www.q%u-%u.example", q, k);
			if (dnsexfil_query(x, decoy, T_A, now, &parent, &why)) {
				free(why);
				*alerted = true;
			}
		}
		if (*alerted)
			break;
		sent += per;    /* the query that alerts has left the machine too */
		if (dnsexfil_query(x, name, T_A, now, &parent, &why) ||
		    dnsexfil_answer(x, name, false, now, &parent, &why)) {
			free(why);
			*alerted = true;
			break;
		}
	}
	dnsexfil_free(x);
	return sent;
}

static void test_tunnels_measured(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tunnels) / sizeof(tunnels[0]); i++) {
		const struct tunnel *t = &tunnels[i];
		bool alerted;
		size_t sent = tunnel_run(t, &alerted);

		if (alerted)
			printf("# tunnel %-62s alerts after %5zu bytes (%zu queries)\n", t->what, sent,
			       sent / tunnel_bytes(t));
		else
			printf("# tunnel %-62s PASSES: %zu bytes, no alert\n", t->what, sent);
		if (t->max_passed)
			assert_true(alerted && sent <= t->max_passed);
		else
			assert_false(alerted);  /* the limit doc/network-policy.md §7 names */
	}
}

/*
 * Review: names real installs ask for under one parent in bulk must stay
 * quiet under the volume rule too: a registry's tarball CDN, object stores
 * with bucket names, a lockfile of 300 packages on one registry.
 */
static void test_ordinary_volume(void **state)
{
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[160], *why = NULL;

	(void)state;
	for (int i = 0; i < 300; i++) {
		/* 300 packages from one registry: one name, asked again and again */
		assert_false(dnsexfil_query(x, "registry.npmjs.org", T_A, 1000 + (uint64_t)i * 50,
					    &parent, &why));
		/* a few dozen CloudFront distributions, hashed names of 14 characters */
		snprintf(name, sizeof(name), "d%013x.cloudfront.net", (unsigned)(i % 40) * 2654435761u);
		assert_false(dnsexfil_query(x, name, T_A, 1000 + (uint64_t)i * 50, &parent, &why));
		/* S3 buckets by virtual host, 12 of them, each asked many times */
		snprintf(name, sizeof(name), "release-artifacts-%d.s3.us-east-1.amazonaws.com", i % 12);
		assert_false(dnsexfil_query(x, name, T_A, 1000 + (uint64_t)i * 50, &parent, &why));
	}
	dnsexfil_free(x);
}

/*
 * The false positive doc/network-policy.md §7 names: object stores that give
 * each bucket a hashed name of its own (R2's pub-<32 hex>.r2.dev), fifteen
 * different ones asked in a minute. No npm or pip pattern found does this
 * (their registries are one name each); a job that fetches prebuilt binaries
 * from that many buckets would.
 */
static void test_known_false_positive(void **state)
{
	struct dnsexfil *x = dnsexfil_new();
	const char *parent;
	char name[128], *why = NULL;
	int fired = 0;

	(void)state;
	for (unsigned i = 0; i < 15; i++) {
		snprintf(name, sizeof(name), "pub-%08x%08x%08x%08x.r2.dev", i * 2654435761u,
			 i * 40503u + 1, i * 2246822519u + 3, i * 3266489917u + 5);
		if (dnsexfil_query(x, name, T_A, 1000 + (uint64_t)i * 3000, &parent, &why)) {
			fired = (int)i + 1;
			assert_string_equal(parent, "r2.dev");
			free(why);
		}
	}
	assert_int_equal(fired, DNSEXFIL_MANY_SUBDOMAINS);
	dnsexfil_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parent),
		cmocka_unit_test(test_entropy),
		cmocka_unit_test(test_hex_file_in_long_labels),
		cmocka_unit_test(test_many_random_subdomains),
		cmocka_unit_test(test_nxdomain_stream_and_retries),
		cmocka_unit_test(test_txt_queries),
		cmocka_unit_test(test_slow_tunnel),
		cmocka_unit_test(test_ordinary_names),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_tunnels_measured),
		cmocka_unit_test(test_ordinary_volume),
		cmocka_unit_test(test_known_false_positive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
