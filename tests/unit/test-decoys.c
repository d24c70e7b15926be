/*
 * test-decoys.c — the decoy credentials (src/sandbox/decoys.c) have the
 * shapes stealers' expressions look for (AKIA keys whose account decodes
 * to 12 digits, 40-character secrets,
 * ghp_/gho_ tokens with a valid checksum, an OpenSSH key whose public half
 * is the private seed's, a JWT that decodes, Docker's user:dckr_pat_ auth),
 * plausible ages, nothing in common between two sessions, and each token
 * the detectors get is in its file and found there by the matcher, and not
 * in another session's files.
 */
#include <config.h>

#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "common/util.h"
#include "parse/tripwire.h"
#include "sandbox/decoys.h"

#define NOW 1767225600  /* 2026-01-01 */

static const struct decoy *find_decoy(const struct decoy_set *d, const char *path)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].path, path) == 0)
			return &d->v[i];
	return NULL;
}

/* Does the extended regular expression re match somewhere in s? */
static bool matches(const char *re, const char *s)
{
	regex_t r;
	bool m;

	assert_int_equal(regcomp(&r, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

/* base64 (standard or url, padding optional) into out; returns the length, or -1. */
static int unb64(const char *s, size_t n, uint8_t *out)
{
	int len = 0;
	unsigned v = 0, bits = 0;

	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *p = strchr(a, s[i]);
		int c = p ? (int)(p - a) : s[i] == '-' ? 62 : s[i] == '_' ? 63 : -1;

		if (c < 0 || !s[i])
			return -1;
		v = (v << 6) | (unsigned)c;
		bits += 6;
		if (bits >= 8) {
			out[len++] = (uint8_t)(v >> (bits - 8));
			bits -= 8;
		}
	}
	return len;
}

static void test_github_checksum(void **state)
{
	char out[7];

	(void)state;
	decoys_github_checksum("123456789", 9, out);    /* CRC-32 0xcbf43926 in base62 */
	assert_string_equal(out, "3jZRME");
}

/*
 * The AWS account an access key id encodes (the 16 base32 characters after
 * AKIA: the first 48 bits, less their top and low 7): what offline tools
 * decode from a key, and what must be a 12-digit account of a key made
 * since 2019, whose first character after AKIA has that top bit set.
 */
static bool aws_key_plausible(const char *id)
{
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	uint64_t z = 0;

	for (int i = 0; i < 10; i++) {         /* 50 bits: the first 48 are the field */
		const char *c = strchr(b32, id[i]);

		if (!id[i] || !c)
			return false;
		z = (z << 5) | (uint64_t)(c - b32);
	}
	z >>= 2;
	return (z >> 47) == 1 && ((z & 0x7fffffffff80ull) >> 7) < 1000000000000ull;
}

/* Two hundred sets: every AWS key id decodes to a 12-digit account, as a real one would. */
static void test_aws_account(void **state)
{
	(void)state;
	for (int i = 0; i < 200; i++) {
		struct decoy_set d;
		const char *id;

		decoys_make(&d, "alice", NOW);
		id = strstr(find_decoy(&d, ".aws/credentials")->content, "AKIA");
		assert_non_null(id);
		assert_true(aws_key_plausible(id + 4));
		decoys_free(&d);
	}
}

static void test_shapes(void **state)
{
	struct decoy_set d;
	const struct decoy *x;

	(void)state;
	decoys_make(&d, "alice", NOW);
	assert_true(d.n >= 8 && d.n <= DECOYS_MAX);
	x = find_decoy(&d, ".aws/credentials");
	assert_non_null(x);
	assert_true(matches("^aws_access_key_id = AKIA[A-Z2-7]{16}$", x->content));
	assert_true(matches("^aws_secret_access_key = [A-Za-z0-9/+]{40}$", x->content));
	assert_true(matches("^\\[default\\]$", x->content));
	x = find_decoy(&d, ".git-credentials");
	assert_non_null(x);
	assert_true(matches("^https://alice:ghp_[A-Za-z0-9]{36}@github\\.com$", x->content));
	{
		const char *t = strstr(x->content, "ghp_") + 4;
		char sum[7];

		decoys_github_checksum(t, 30, sum);
		assert_memory_equal(sum, t + 30, 6);
	}
	x = find_decoy(&d, ".config/gh/hosts.yml");
	assert_non_null(x);
	assert_true(matches("oauth_token: gho_[A-Za-z0-9]{36}$", x->content));
	x = find_decoy(&d, ".config/gcloud/application_default_credentials.json");
	assert_non_null(x);
	assert_true(matches("\"refresh_token\": \"1//0[A-Za-z0-9_-]{100}\"", x->content));
	assert_true(matches("\"client_secret\": \"GOCSPX-[A-Za-z0-9_-]{28}\"", x->content));
	assert_true(matches("\"type\": \"authorized_user\"", x->content));
	x = find_decoy(&d, ".pypirc");
	assert_non_null(x);
	assert_true(matches("^password = pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{100,}$", x->content));
	for (size_t i = 0; i < d.n; i++) {
		assert_true(d.v[i].mtime <= NOW - 40 * 86400 && d.v[i].mtime > NOW - 401 * 86400);
		assert_int_equal(d.v[i].mode, 0600);
		assert_true(strlen(d.v[i].content) <= DECOY_CONTENT_MAX);
		assert_true(strlen(d.v[i].path) <= DECOY_PATH_MAX && d.v[i].path[0] != '/');
	}
	decoys_free(&d);
}

/* The SSH key: openssh-key-v1, unencrypted, ed25519, its public key the seed's. */
static void test_ssh_key(void **state)
{
	struct decoy_set d;
	const struct decoy *x;
	uint8_t blob[1024], pub[32];
	char body[2048];
	size_t o = 0, plen = 32;
	const char *p;
	int n;
	EVP_PKEY *k;

	(void)state;
	decoys_make(&d, "alice", NOW);
	x = find_decoy(&d, ".ssh/id_ed25519_github");
	assert_non_null(x);
	assert_true(matches("^-----BEGIN OPENSSH PRIVATE KEY-----$", x->content));
	assert_true(matches("^-----END OPENSSH PRIVATE KEY-----$", x->content));
	assert_false(matches("^[A-Za-z0-9+/=]{71,}$", x->content));      /* 70 a line */
	p = strchr(x->content, '\n') + 1;
	for (; *p && *p != '-'; p++)
		if (*p != '\n')
			body[o++] = *p;
	n = unb64(body, o, blob);
	assert_true(n > 200);
	assert_memory_equal(blob, "openssh-key-v1\0\0\0\0\4none\0\0\0\4none\0\0\0\0\0\0\0\1", 39);
	/* the public key blob at 39: len, "ssh-ed25519", len, 32 bytes */
	assert_memory_equal(blob + 43, "\0\0\0\13ssh-ed25519\0\0\0\40", 19);
	/* the private section: its seed at a fixed place, then the public key again */
	{
		const uint8_t *sec = blob + 39 + 4 + 51 + 4;
		const uint8_t *seed = sec + 8 + 4 + 11 + 4 + 32 + 4;

		assert_memory_equal(sec, sec + 4, 4);                   /* the check ints */
		assert_memory_equal(seed + 32, blob + 62, 32);
		k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
		assert_non_null(k);
		assert_int_equal(EVP_PKEY_get_raw_public_key(k, pub, &plen), 1);
		EVP_PKEY_free(k);
		assert_memory_equal(pub, blob + 62, 32);
		assert_non_null(memmem(sec, (size_t)(blob + n - sec), "alice@dev-", 10));
		assert_int_equal((size_t)(blob + n - sec) % 8, 0);
	}
	decoys_free(&d);
}

static void test_jwt_and_docker(void **state)
{
	struct decoy_set d;
	const struct decoy *x;
	uint8_t out[2048];
	const char *t, *dot1, *dot2;
	int n;

	(void)state;
	decoys_make(&d, "alice", NOW);
	x = find_decoy(&d, ".kube/config");
	assert_non_null(x);
	t = strstr(x->content, "token: ") + 7;
	assert_memory_equal(t, "eyJhbGciOiJSUzI1NiIs", 20);
	dot1 = strchr(t, '.');
	dot2 = strchr(dot1 + 1, '.');
	n = unb64(dot1 + 1, (size_t)(dot2 - dot1 - 1), out);
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(strstr((char *)out, "\"sub\":\"system:serviceaccount:default:deployer\""));
	assert_true(matches("server: https://[0-9A-F]{32}\\.gr7\\.eu-west-1\\.eks\\.amazonaws\\.com$",
			    x->content));
	x = find_decoy(&d, ".docker/config.json");
	assert_non_null(x);
	t = strstr(x->content, "\"auth\": \"") + 9;
	n = unb64(t, strcspn(t, "\""), out);
	assert_true(n > 0);
	out[n] = '\0';
	assert_true(matches("^[a-z][a-z0-9]{8}:dckr_pat_[A-Za-z0-9_-]{27}$", (char *)out));
	decoys_free(&d);
}

/* Each token is in its file, found there by the matcher, and unknown to another session. */
static void test_tokens(void **state)
{
	struct decoy_set a, b;
	char **ta, **tb;
	struct tw_matcher *ma, *mb;

	(void)state;
	decoys_make(&a, "alice", NOW);
	decoys_make(&b, "alice", NOW);
	assert_true(a.ntokens >= 8 && a.ntokens <= TW_TOKENS_MAX);
	ta = decoys_token_texts(&a);
	tb = decoys_token_texts(&b);
	ma = tw_matcher_new(ta, a.ntokens, NULL);
	mb = tw_matcher_new(tb, b.ntokens, NULL);
	assert_non_null(ma);
	assert_non_null(mb);
	for (size_t i = 0; i < a.ntokens; i++) {
		const char *file = a.v[a.tokens[i].decoy].content;
		struct tw_stream st = { 0 };
		struct tw_hit hit;

		assert_true(tw_token_ok(a.tokens[i].text));
		assert_non_null(strstr(file, a.tokens[i].text));
		assert_non_null(strstr(a.tokens[i].label, a.v[a.tokens[i].decoy].path));
		assert_true(tw_scan(ma, &st, (const uint8_t *)file, strlen(file), &hit));
		assert_int_equal(a.tokens[hit.token].decoy, a.tokens[i].decoy);
		assert_string_not_equal(a.tokens[i].text, b.tokens[i].text);
	}
	for (size_t i = 0; i < a.n; i++) {
		struct tw_stream st = { 0 };
		struct tw_hit hit;

		assert_false(tw_scan(mb, &st, (const uint8_t *)a.v[i].content,
				     strlen(a.v[i].content), &hit));
	}
	free(ta);
	free(tb);
	tw_matcher_free(ma);
	tw_matcher_free(mb);
	decoys_free(&a);
	decoys_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_github_checksum),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_aws_account),
		cmocka_unit_test(test_ssh_key),
		cmocka_unit_test(test_jwt_and_docker),
		cmocka_unit_test(test_tokens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
