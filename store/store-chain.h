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
	bool found;             /* the session has a row (it was sealed) */
	struct chain audit;     /* its --audit-log: lines written (the seal's included), head */
	char *seal;             /* the seal line, as written to the log; NULL: none */
};

/* Record (replace) id's chains row; audit NULL: the session had no audit log. */
int store_chain_save(struct store *st, const char *id, const struct chain *audit,
		     const char *seal, char **err);
/* id's chains row (out->found false when none). */
int store_chain_get(struct store *st, const char *id, struct store_chain *out, char **err);
void store_chain_free(struct store_chain *c);

/*
 * Recompute id's decisions chain from its rows in insertion order into out;
 * *bad is the position (1-based) of the first row whose stored hash differs
 * from the recomputed one, 0 when every row matches; *bad_rowid its rowid.
 */
int store_decisions_check(struct store *st, const char *id, struct chain *out, uint64_t *bad,
			  int64_t *bad_rowid, char **err);

#endif
