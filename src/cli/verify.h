/*
 * cli/verify.h — checking an audit log's chains and seals (doc/verify.md),
 * the logic behind `boxy verify`, pure: a buffer in, findings out.
 */
#ifndef BOXY_VERIFY_H
#define BOXY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/chain.h"
#include "common/sign.h"

/* What the store knows of a chain (verify_opts.lookup). */
struct verify_known {
	bool found;             /* the store has the session's chains row */
	bool running;           /* the session has not ended: no seal yet is no fault */
	struct chain audit;     /* the log's length and head as the daemon wrote it */
};

/* A chain the store records as written to the very file being checked. */
struct verify_expected {
	const char *id;
	uint64_t lines;         /* as the store recorded them at the session's end */
};

struct verify_opts {
	const unsigned char *trusted_key;       /* --key or the user's own; NULL: none */
	/* The store's record of chain id, or NULL (a copy checked elsewhere). */
	void (*lookup)(void *ctx, const char *id, struct verify_known *out);
	void *ctx;
	/*
	 * The chains that must be in the file: every ended session the store
	 * records as writing to it. One that is not was removed whole — or the
	 * file replaced by another log, which a payload that can write the
	 * directory can do with one rename, every other chain in it intact.
	 */
	const struct verify_expected *expect;
	size_t nexpect;
};

/* One break: the line (1-based) it is found at, and what it is, in words. */
struct verify_break {
	size_t line;
	char *why;
};

struct verify_result {
	struct verify_break *breaks;    /* sorted by line; none: intact */
	size_t nbreaks;
	size_t lines, chains, sealed, running;
	bool key_trusted;               /* every seal was checked against a trusted key */
	unsigned char key[SIGN_PUB_LEN]; /* the (last) sealing key seen */
	bool have_key;
};

/* Check buf (an audit log's bytes). */
void verify_audit_log(const char *buf, size_t len, const struct verify_opts *o,
		      struct verify_result *r);
void verify_result_free(struct verify_result *r);

/*
 * Parse a seal line (as the log and the store's chains table carry it) into
 * s, its seq and prev; -1 when it is not one.
 */
int verify_parse_seal(const char *line, size_t len, struct seal *s, uint64_t *seq,
		      unsigned char prev[CHAIN_HASH_LEN]);

#endif
