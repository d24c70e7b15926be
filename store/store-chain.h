/*
 * store/store-chain.h — the store's half of the chains (doc/verify.md): the
 * decisions chain recomputed from the rows, and per session the audit log's
 * head and length and the seal line the daemon signed at its end.
 */
#ifndef BOXY_STORE_CHAIN_H
#define BOXY_STORE_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/chain.h"

struct store;

/* A session's chains row. */
struct store_chain {
	bool found;             /* the session's end was recorded (sealed, or its head kept) */
	struct chain audit;     /* its --audit-log: lines written (the seal's included), head */
	char *seal;             /* the seal line, as written to the log; NULL: none */
	char *audit_path;       /* where its --audit-log file was when it began; NULL: none */
};

/* Record where id's audit log is (its resolved path), when the session begins. */
int store_chain_begin(struct store *st, const char *id, const char *audit_path, char **err);
/* Record id's chains row at its end (the path kept); audit NULL: the session had no audit log. */
int store_chain_save(struct store *st, const char *id, const struct chain *audit,
		     const char *seal, char **err);
/* id's chains row (out->found false when none). */
int store_chain_get(struct store *st, const char *id, struct store_chain *out, char **err);
void store_chain_free(struct store_chain *c);
/*
 * The sessions recorded as writing their audit log to path (resolved), oldest
 * first: row(ctx, id, lines written, state) for each.
 */
int store_chain_at_path(struct store *st, const char *path,
			void (*row)(void *ctx, const char *id, uint64_t lines, const char *state),
			void *ctx, char **err);

/*
 * Recompute id's decisions chain from its rows in insertion order into out;
 * *bad is the position (1-based) of the first row whose stored hash differs
 * from the recomputed one, 0 when every row matches; *bad_rowid its rowid.
 */
int store_decisions_check(struct store *st, const char *id, struct chain *out, uint64_t *bad,
			  int64_t *bad_rowid, char **err);

#endif
