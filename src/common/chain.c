/*
 * common/chain.c — SHA-256 chains over the audit log's lines and the store's
 * decision rows (the exact bytes hashed are in common/chain.h and
 * doc/verify.md). Pure: no files, no clock; OpenSSL's libcrypto hashes.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "common/chain.h"
#include "common/util.h"

void chain_sha256(const void *p, size_t n, unsigned char out[CHAIN_HASH_LEN])
{
	unsigned int len = 0;

	if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1 || len != CHAIN_HASH_LEN)
		fatal("SHA-256 failed (libcrypto)");
}

void chain_hex(const unsigned char *h, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[h[i] >> 4];
		out[2 * i + 1] = digits[h[i] & 15];
	}
	out[2 * n] = '\0';
}

/* One lower-case hex digit's value, or -1. */
static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int chain_unhex(const char *s, unsigned char *out, size_t n)
{
	if (!s || strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/* head = SHA-256(domain " " id): a chain bound to its id from its first link. */
static void chain_genesis(struct chain *c, const char *domain, const char *id)
{
	char *g = xasprintf("%s %s", domain, id ? id : "");

	c->n = 0;
	chain_sha256(g, strlen(g), c->head);
	free(g);
}

void chain_audit_init(struct chain *c, const char *id)
{
	chain_genesis(c, "boxy audit-log chain v1", id);
}

void chain_audit_step(struct chain *c, const void *line, size_t len)
{
	chain_sha256(line, len, c->head);
	c->n++;
}

void chain_decisions_init(struct chain *c, const char *id)
{
	chain_genesis(c, "boxy decisions chain v1", id);
}

/* Append one field, length first ("LEN:BYTES", NULL as "-:"), so fields never run together. */
static void canon_add(EVP_MD_CTX *md, const char *v)
{
	char len[24];

	snprintf(len, sizeof(len), v ? "%zu:" : "-:", v ? strlen(v) : (size_t)0);
	EVP_DigestUpdate(md, len, strlen(len));
	if (v)
		EVP_DigestUpdate(md, v, strlen(v));
}

void chain_decisions_step(struct chain *c, const struct chain_decision *d)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char t[24], rel[24];
	unsigned int len = 0;

	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		fatal("SHA-256 failed (libcrypto)");
	snprintf(t, sizeof(t), "%lld", (long long)d->t_ms);
	snprintf(rel, sizeof(rel), "%lld", (long long)d->t_rel_ms);
	EVP_DigestUpdate(md, c->head, CHAIN_HASH_LEN);
	canon_add(md, d->session_id);
	canon_add(md, t);
	canon_add(md, rel);
	canon_add(md, d->layer);
	canon_add(md, d->verdict);
	canon_add(md, d->subject);
	canon_add(md, d->reason);
	if (EVP_DigestFinal_ex(md, c->head, &len) != 1 || len != CHAIN_HASH_LEN)
		fatal("SHA-256 failed (libcrypto)");
	EVP_MD_CTX_free(md);
	c->n++;
}
