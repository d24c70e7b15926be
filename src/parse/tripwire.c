/*
 * parse/tripwire.c — finding a session's decoy tokens in bytes leaving it
 * (see parse/tripwire.h for what is found and why).
 *
 * Each token is written out in every encoding and alignment once, when the
 * matcher is made: a "needle" is the part of an encoded text that depends on
 * the token alone (at the edges an encoding mixes the token's bits with its
 * neighbours'; those characters are left out), reduced to letters and
 * digits. Every TW_SEED-gram of every needle goes into one open-addressed
 * table. Scanning reduces the stream the same way and looks up each
 * TW_SEED-gram; a hit is extended backwards and forwards against its needle,
 * and counts when the common stretch reaches the needle's window.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "parse/tripwire.h"

#define TW_CHUNK 4096           /* reduced characters scanned at once */

struct needle {
	uint8_t *s;             /* reduced characters */
	size_t len;
	size_t window;          /* a match must span this much of it */
	unsigned token;
	enum tw_encoding enc;
};

struct seed {
	uint64_t key;           /* TW_SEED reduced characters, packed; 0: an empty slot */
	uint32_t needle;
	uint32_t off;
};

struct tw_matcher {
	struct needle *needles;
	size_t nneedles;
	struct seed *table;
	size_t mask;            /* table size - 1, a power of two less one */
};

/* The reduced form of a byte: its letter in lower case, a digit, or 0 (dropped). */
static uint8_t tw_reduce(uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return (uint8_t)(c - 'A' + 'a');
	if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return c;
	return 0;
}

bool tw_token_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < TW_TOKEN_MIN || n > TW_TOKEN_MAX)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!tw_reduce(c) && c != '+' && c != '/' && c != '=' && c != '_' && c != '.' &&
		    c != '-')
			return false;
	}
	return true;
}

const char *tw_encoding_words(enum tw_encoding e)
{
	switch (e) {
	case TW_ENC_RAW:
		return "as it is";
	case TW_ENC_HEX:
		return "hex-encoded";
	case TW_ENC_BASE32:
		return "base32-encoded";
	case TW_ENC_BASE64:
		return "base64-encoded";
	case TW_ENC_BASE64X2:
		return "base64-encoded twice";
	case TW_ENC_COUNT:
		break;
	}
	return "encoded";
}

/* ---- the needles --------------------------------------------------------------- */

/*
 * The characters of an encoding of p[0..n) placed `shift` bytes into a
 * longer text that depend on p alone, in radix-2^bits digits (6: base64,
 * 5: base32), as text in out (NUL-terminated, malloc'd). Digit k covers
 * bits [bits*k, bits*k + bits) of the text; it is p's when those lie within
 * p's bits [8*shift, 8*(shift + n)).
 */
static char *tw_radix_core(const uint8_t *p, size_t n, unsigned shift, unsigned bits)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	const char *alpha = bits == 6 ? b64 : b32;
	size_t total = 8 * ((size_t)shift + n), out_n = 0;
	char *out = xmalloc(total / bits + 2);

	for (size_t k = 0; bits * (k + 1) <= total; k++) {
		size_t first = bits * k;
		unsigned v = 0;

		if (first < 8u * shift)
			continue;
		for (unsigned b = 0; b < bits; b++) {
			size_t bit = first + b, byte = bit / 8 - shift;

			v = (v << 1) | ((p[byte] >> (7 - bit % 8)) & 1u);
		}
		out[out_n++] = alpha[v];
	}
	out[out_n] = '\0';
	return out;
}

/* Add the reduced form of text as a needle of token t, encoding e. */
static void tw_add_needle(struct tw_matcher *m, const char *text, unsigned t, enum tw_encoding e,
			  size_t window)
{
	struct needle nd = { .token = t, .enc = e };
	size_t n = strlen(text);

	nd.s = xmalloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = tw_reduce((uint8_t)text[i]);

		if (c)
			nd.s[nd.len++] = c;
	}
	/* A short token's needle is its own window; too short to be told from noise: none. */
	nd.window = nd.len < window ? nd.len : window;
	if (nd.len < TW_SEED + 4) {
		free(nd.s);
		return;
	}
	*(struct needle *)xappend(&m->needles, &m->nneedles, sizeof(nd)) = nd;
}

/* Every needle of one token. */
static void tw_add_token(struct tw_matcher *m, const char *tok, unsigned t)
{
	const uint8_t *p = (const uint8_t *)tok;
	size_t n = strlen(tok);
	char *hex = xmalloc(2 * n + 1);

	tw_add_needle(m, tok, t, TW_ENC_RAW, TW_WINDOW_RAW);
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = "0123456789abcdef"[p[i] >> 4];
		hex[2 * i + 1] = "0123456789abcdef"[p[i] & 15];
	}
	hex[2 * n] = '\0';
	tw_add_needle(m, hex, t, TW_ENC_HEX, TW_WINDOW_HEX);
	free(hex);
	for (unsigned s = 0; s < 5; s++) {
		char *c = tw_radix_core(p, n, s, 5);

		tw_add_needle(m, c, t, TW_ENC_BASE32, TW_WINDOW_BASE32);
		free(c);
	}
	for (unsigned s = 0; s < 3; s++) {
		char *c = tw_radix_core(p, n, s, 6);

		tw_add_needle(m, c, t, TW_ENC_BASE64, TW_WINDOW_BASE64);
		/* base64 of a text holding that: the core is part of the inner text as written */
		for (unsigned s2 = 0; s2 < 3; s2++) {
			char *c2 = tw_radix_core((const uint8_t *)c, strlen(c), s2, 6);

			tw_add_needle(m, c2, t, TW_ENC_BASE64X2, TW_WINDOW_BASE64X2);
			free(c2);
		}
		free(c);
	}
}

/* ---- the seed table ------------------------------------------------------------ */

static uint64_t tw_pack(const uint8_t *s)
{
	uint64_t k = 0;

	for (size_t i = 0; i < TW_SEED; i++)
		k = (k << 8) | s[i];
	return k;
}

static size_t tw_slot(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & mask;
}

struct tw_matcher *tw_matcher_new(char *const *tokens, size_t n, char **err)
{
	struct tw_matcher *m;
	size_t seeds = 0, size = 16;

	if (n > TW_TOKENS_MAX) {
		set_err(err, "more than %d decoy tokens", TW_TOKENS_MAX);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!tokens[i] || !tw_token_ok(tokens[i])) {
			set_err(err, "decoy token %zu is not one the matcher takes", i);
			return NULL;
		}
	m = xcalloc(1, sizeof(*m));
	for (size_t i = 0; i < n; i++)
		tw_add_token(m, tokens[i], (unsigned)i);
	for (size_t i = 0; i < m->nneedles; i++)
		seeds += m->needles[i].len - TW_SEED + 1;
	while (size < 2 * seeds)
		size *= 2;
	m->table = xcalloc(size, sizeof(*m->table));
	m->mask = size - 1;
	for (size_t i = 0; i < m->nneedles; i++) {
		const struct needle *nd = &m->needles[i];

		for (size_t o = 0; o + TW_SEED <= nd->len; o++) {
			uint64_t key = tw_pack(nd->s + o);
			size_t at = tw_slot(key, m->mask);

			while (m->table[at].key)
				at = (at + 1) & m->mask;
			m->table[at] = (struct seed){ key, (uint32_t)i, (uint32_t)o };
		}
	}
	return m;
}

void tw_matcher_free(struct tw_matcher *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nneedles; i++)
		free(m->needles[i].s);
	free(m->needles);
	free(m->table);
	free(m);
}

/* ---- scanning ------------------------------------------------------------------ */

/* Is buf[at..at+TW_SEED) the seed of a long enough stretch of a needle? */
static bool tw_seed_hit(const struct tw_matcher *m, const uint8_t *buf, size_t len, size_t at,
			struct tw_hit *hit)
{
	uint64_t key = tw_pack(buf + at);

	for (size_t slot = tw_slot(key, m->mask); m->table[slot].key; slot = (slot + 1) & m->mask) {
		const struct seed *sd = &m->table[slot];
		const struct needle *nd;
		size_t back = 0, fwd = 0;

		if (sd->key != key)
			continue;
		nd = &m->needles[sd->needle];
		while (back < at && back < sd->off && buf[at - back - 1] == nd->s[sd->off - back - 1])
			back++;
		while (at + TW_SEED + fwd < len && sd->off + TW_SEED + fwd < nd->len &&
		       buf[at + TW_SEED + fwd] == nd->s[sd->off + TW_SEED + fwd])
			fwd++;
		if (back + TW_SEED + fwd >= nd->window) {
			hit->token = nd->token;
			hit->enc = nd->enc;
			return true;
		}
	}
	return false;
}

bool tw_scan(const struct tw_matcher *m, struct tw_stream *s, const uint8_t *p, size_t n,
	     struct tw_hit *hit)
{
	uint8_t buf[TW_CARRY + TW_CHUNK];
	bool found = false;
	size_t i = 0;

	if (!m || !m->nneedles)
		return false;
	while (i < n) {
		size_t len = s->ncarry;

		memcpy(buf, s->carry, s->ncarry);
		while (i < n && len < sizeof(buf)) {
			uint8_t c = tw_reduce(p[i++]);

			if (c)
				buf[len++] = c;
		}
		for (size_t at = 0; !found && at + TW_SEED <= len; at++)
			found = tw_seed_hit(m, buf, len, at, hit);
		s->ncarry = len < TW_CARRY ? len : TW_CARRY;
		memcpy(s->carry, buf + len - s->ncarry, s->ncarry);
		if (found) {
			s->ncarry = 0;  /* the next call does not find the same stretch again */
			break;
		}
	}
	return found;
}
