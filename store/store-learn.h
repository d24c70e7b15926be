/*
 * store/store-learn.h — the store as `boxy profile learn` reads a session:
 * its connections and resolutions grouped by what a profile can say (proto,
 * names, address, port, verdict), and the address exceptions and tailscale
 * switch of its recorded policy.
 *
 * Rows come back through a callback as strings (NULL for SQL NULL), in the
 * column order each query's comment gives; the session id is bound as a
 * parameter, never spliced into SQL.
 */
#ifndef BOXY_STORE_LEARN_H
#define BOXY_STORE_LEARN_H

#include "store/store.h"

enum store_learn_query {
	/* proto, verdict, host, sni, addr, port, reason, count, who (its package in words,
	 * else its command; NULL: not known): connections grouped */
	STORE_LEARN_CONNS,
	/* name, verdict, reason, count, who: resolutions grouped by name, verdict and who */
	STORE_LEARN_NAMES,
	/* cidr: one row per --allow-cidr of the recorded policy */
	STORE_LEARN_CIDRS,
	/* tailscale (0 or 1), mode: one row */
	STORE_LEARN_POLICY,
	STORE_LEARN__COUNT,
};

/* Run query q for the session id (a full id); each row → row. */
int store_learn_query(struct store *st, enum store_learn_query q, const char *id,
		      void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
		      char **err);

#endif
