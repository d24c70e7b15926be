/*
 * parse/tripwire.h — does a stream of bytes carry one of a session's decoy
 * tokens, in any of the encodings a credential stealer sends them in?
 *
 * A session with tripwires gets decoy credentials in its $HOME whose random
 * parts (the tokens) exist nowhere else (sandbox/decoys.h). If one of them
 * shows up in a DNS name, an HTTP request or the first bytes of a flow, the
 * payload read a decoy and is sending it out. The broker looks at every DNS
 * name, boxy-net at the first bytes of every flow; both ask this matcher.
 *
 * Encodings: the token as it is, hex, base32, base64 (and base64url), and
 * base64 of base64 — at every alignment the token can have inside a longer
 * encoded text (a file of which it is a part). Both the stream and the
 * encoded tokens are first reduced to their letters and digits, letters in
 * lower case: dots between DNS labels, '%' of URL encoding, newlines of
 * wrapped base64, quotes and backslashes of JSON, the case a DNS name lost,
 * the '+' and '/' that tell base64 from base64url all fall away, so none of
 * them hides a token. A match is TW_SEED reduced characters found in a table
 * of every encoded token's TW_SEED-grams, extended both ways to at least the
 * encoding's window (TW_WINDOW_*): about 60 bits or more of the token's
 * randomness, so that no ordinary traffic matches by chance and a token cut
 * across two DNS queries or two TCP segments is still found (a stream keeps
 * the last TW_CARRY reduced characters of what it saw).
 *
 * What it cannot see: a token encrypted, compressed, XORed, reversed or
 * split into pieces shorter than a window, and anything inside TLS.
 * Pure and bounded: building a matcher allocates once; scanning allocates
 * nothing and costs O(bytes).
 */
#ifndef BOXY_PARSE_TRIPWIRE_H
#define BOXY_PARSE_TRIPWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TW_TOKENS_MAX   32      /* tokens a session has, at most */
#define TW_TOKEN_MIN    12      /* characters of a token, at least */
#define TW_TOKEN_MAX    128     /* ... and at most */
#define TW_SEED         8       /* reduced characters a match is found by */
#define TW_CARRY        64      /* reduced characters a stream keeps between calls */

/* Reduced characters a match must span, by encoding (never more than TW_CARRY). */
#define TW_WINDOW_RAW     14
#define TW_WINDOW_HEX     24
#define TW_WINDOW_BASE32  20
#define TW_WINDOW_BASE64  18
#define TW_WINDOW_BASE64X2 22

enum tw_encoding {
	TW_ENC_RAW,             /* as written in the decoy (URL or JSON escaping included) */
	TW_ENC_HEX,             /* either case, with or without separators (%41, 41:4b) */
	TW_ENC_BASE32,
	TW_ENC_BASE64,          /* and base64url */
	TW_ENC_BASE64X2,        /* base64 of base64 */
	TW_ENC_COUNT,
};

struct tw_hit {
	unsigned token;         /* index into the tokens the matcher was made of */
	enum tw_encoding enc;
};

/* One stream's state between calls (zero it to start). */
struct tw_stream {
	uint8_t carry[TW_CARRY];        /* the last reduced characters seen */
	size_t ncarry;
};

struct tw_matcher;

/* A token this module takes: TW_TOKEN_MIN..TW_TOKEN_MAX of [A-Za-z0-9+/=_.-]. */
bool tw_token_ok(const char *s);

/*
 * A matcher for tokens[0..n) (n ≤ TW_TOKENS_MAX, each tw_token_ok). NULL
 * with *err when one is not. The tokens are copied.
 */
struct tw_matcher *tw_matcher_new(char *const *tokens, size_t n, char **err);
void tw_matcher_free(struct tw_matcher *m);

/*
 * Scan the next n bytes of stream s. True with *hit for the first token
 * found (in what came before as far as the carry reaches, and in p); the
 * rest of p is then not looked at and the carry starts afresh. False when
 * none, the carry holding the end of p.
 */
bool tw_scan(const struct tw_matcher *m, struct tw_stream *s, const uint8_t *p, size_t n,
	     struct tw_hit *hit);

/* "hex-encoded", "as it is", ...: how a hit's token was written. */
const char *tw_encoding_words(enum tw_encoding e);

#endif
