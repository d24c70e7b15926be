/*
 * store/store-learn.c — the queries of `boxy profile learn` (see store-learn.h).
 *
 * Counted rows (schema 2: one row can stand for many connections) are
 * summed, so a flood the store aggregated learns as what it was.
 */
#include <config.h>

#include "store/store-internal.h"
#include "store/store-learn.h"
#include "common/util.h"

/* Who made a row, for a comment: its package in words, else its command (NULL: not known). */
#define WHO_LABEL "coalesce(" STORE_PKG_WORDS ", comm)"

static const char *const learn_sql[STORE_LEARN__COUNT] = {
	[STORE_LEARN_CONNS] =
		"SELECT proto, verdict, host, sni, addr, port, coalesce(reason, ''), sum(count),"
		" " WHO_LABEL " AS who"
		" FROM connections WHERE session_id = ?1"
		" GROUP BY proto, verdict, host, sni, CASE WHEN host IS NULL AND sni IS NULL"
		"  THEN addr END, port, CASE WHEN verdict = 'deny' THEN reason END, who"
		" ORDER BY min(t_ms), min(id)",
	[STORE_LEARN_NAMES] =
		"SELECT name, verdict, coalesce(reason, ''), sum(count), " WHO_LABEL " AS who"
		" FROM resolutions"
		" WHERE session_id = ?1 GROUP BY name, verdict,"
		"  CASE WHEN verdict = 'deny' THEN reason END, who ORDER BY min(t_ms), min(id)",
	[STORE_LEARN_CIDRS] =
		"SELECT c.value FROM sessions AS s, json_each(s.policy, '$.net.cidrs') AS c"
		" WHERE s.id = ?1 AND json_valid(s.policy)",
	[STORE_LEARN_POLICY] =
		"SELECT coalesce(json_extract(policy, '$.net.tailscale'), 0),"
		" coalesce(json_extract(policy, '$.net.mode'), '')"
		" FROM sessions WHERE id = ?1 AND json_valid(policy)",
};

int store_learn_query(struct store *st, enum store_learn_query q, const char *id,
		      void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
		      char **err)
{
	if ((unsigned)q >= STORE_LEARN__COUNT)
		return set_err(err, "session store: no such query");
	return store_rows(st, learn_sql[q], id, NULL, 0, row, ctx, err);
}
