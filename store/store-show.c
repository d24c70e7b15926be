/*
 * store-show.c — the queries of `boxy show` (see store-show.h).
 *
 * The refusal groups are the same as the end-of-run summary's
 * (proto/refusals.c): a refused flow is one row named by its host (or address)
 * and port, a refused name by the name, any other refusal by its subject;
 * grouped by subject, layer and reason, their counts summed. The git and
 * limits layers are shown in their own sections, so they are not repeated
 * among the refusals.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "store/store-internal.h"
#include "store/store-show.h"
#include "common/util.h"


static const char *const show_sql[STORE_SHOW__COUNT] = {
	[STORE_SHOW_REACT] =
		"SELECT verdict, subject, reason, count FROM decisions WHERE session_id = ?1"
		" AND layer = 'react' AND verdict <> 'alert' ORDER BY t_ms, id",
	[STORE_SHOW_SINCE] =
		"SELECT subject, reason FROM decisions WHERE session_id = ?1 AND layer = 'since'"
		" AND verdict = 'new' ORDER BY t_ms, id",
	[STORE_SHOW_POLICY] =
		"SELECT json_extract(policy, '$.net.mode'),"
		" (SELECT group_concat(json_extract(h.value, '$.name') ||"
		"   CASE WHEN json_array_length(h.value, '$.ports') > 0 THEN ':' ||"
		"   (SELECT group_concat(p.value, ',') FROM json_each(h.value, '$.ports') AS p)"
		"   ELSE '' END, ' ') FROM json_each(policy, '$.net.hosts') AS h),"
		" (SELECT group_concat(c.value, ' ') FROM json_each(policy, '$.net.cidrs') AS c),"
		" json_extract(policy, '$.seccomp'), overflow, overflow_denied,"
		" coalesce(json_array_length(policy, '$.net.http'), 0)"
		" FROM sessions WHERE id = ?1 AND json_valid(policy)",
	[STORE_SHOW_REQ_TOTALS] =
		"SELECT coalesce(sum(count), 0),"
		" coalesce(sum(CASE WHEN verdict = 'deny' THEN count ELSE 0 END), 0)"
		" FROM requests WHERE session_id = ?1",
	[STORE_SHOW_LIMITS] =
		"SELECT subject, verdict, reason FROM decisions"
		" WHERE session_id = ?1 AND layer IN ('cgroup', 'limits') ORDER BY t_ms, id",
	[STORE_SHOW_DEST_TOTALS] =
		"SELECT count(*), coalesce(sum(conns), 0), coalesce(sum(denied), 0),"
		" coalesce(sum(sent), 0), coalesce(sum(received), 0)"
		" FROM destinations WHERE session_id = ?1",
	[STORE_SHOW_DESTS] =
		"SELECT destination, conns, denied, addrs, sent, received FROM destinations"
		" WHERE session_id = ?1 ORDER BY conns DESC, sent + received DESC, destination"
		" LIMIT ?2",
	/* The who of each group's first refusal (SQLite takes bare columns from min()'s row). */
	[STORE_SHOW_REFUSALS] =
		"SELECT subject, layer, reason, sum(count) AS count, min(t_ms) AS first_ms, "
		STORE_WHO_COLUMNS ", count(DISTINCT coalesce(package, comm, '?')) AS makers"
		" FROM (" STORE_REFUSAL_ROWS("?1")
		" ) GROUP BY subject, layer, reason ORDER BY sum(count) DESC, min(t_ms), subject",
	[STORE_SHOW_PACKAGES] =
		"SELECT package, version, script, claimed, via, comm, conns, denied, lookups,"
		" destinations, dest_list FROM packages WHERE session_id = ?1"
		" ORDER BY package IS NULL, denied DESC, conns DESC, package, comm",
	[STORE_SHOW_GIT] =
		"SELECT verdict, subject, reason, count, layer FROM decisions"
		" WHERE session_id = ?1 AND (layer = 'git' OR verdict = 'alert') ORDER BY t_ms, id",
	[STORE_SHOW_EVENTS] =
		"SELECT t_ms, t_rel_ms, what, verdict, layer, subject, reason, count, detail, "
		STORE_WHO_COLUMNS " FROM ("
		"  SELECT t_ms, t_rel_ms, proto AS what, verdict, layer,"
		"   " FLOW_SUBJECT " || CASE WHEN host IS NOT NULL THEN ' (' || addr || ')' ELSE '' END"
		"   AS subject, reason, count,"
		"   CASE WHEN sni IS NOT NULL THEN 'sni ' || sni || ' ' ELSE '' END ||"
		"   'sent ' || up || ' received ' || down AS detail, 0 AS tab, id, " STORE_WHO_COLUMNS
		"   FROM connections WHERE session_id = ?1"
		"  UNION ALL"
		"  SELECT t_ms, t_rel_ms, 'dns', verdict, coalesce(layer, 'net.dns'), name, reason,"
		"   count, CASE WHEN addr IS NOT NULL THEN addr ||"
		"   coalesce(' ttl ' || ttl, '') END, 1, id, " STORE_WHO_COLUMNS
		"   FROM resolutions WHERE session_id = ?1"
		"  UNION ALL"
		"  SELECT t_ms, t_rel_ms, 'audit', verdict, layer, subject, reason, count, NULL, 2, id, "
		STORE_WHO_COLUMNS " FROM decisions WHERE session_id = ?1"
		"  UNION ALL"
		"  SELECT t_ms, t_rel_ms, 'http', verdict, layer, " REQUEST_SUBJECT ", reason, count,"
		"   '#' || seq || CASE WHEN query IS NOT NULL THEN ' ?' || query ELSE '' END, 3, id, "
		STORE_WHO_COLUMNS " FROM requests WHERE session_id = ?1"
		" ) ORDER BY t_ms, tab, id",
};

int store_show_query(struct store *st, enum store_show_query q, const char *id, int64_t limit,
		     void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
		     char **err)
{
	if ((unsigned)q >= STORE_SHOW__COUNT)
		return set_err(err, "session store: no such query");
	return store_rows(st, show_sql[q], id, NULL, limit, row, ctx, err);
}

/* The policy row's overflow counts as two keys of the record. */
static void overflow_kv(void *ctx, int ncol, const char *const *vals)
{
	struct jbuf *b = ctx;

	if (ncol < 6)
		return;
	json_kv_int(b, "overflow", vals[4] ? strtoll(vals[4], NULL, 10) : 0);
	json_kv_int(b, "overflow_denied", vals[5] ? strtoll(vals[5], NULL, 10) : 0);
}

int store_show_record_json(struct store *st, const char *prefix, char **json, char **err)
{
	struct store_sessions ss;
	char *base = NULL;
	struct jbuf b;
	size_t len;
	int rc = -1;

	*json = NULL;
	if (store_show_json(st, prefix, &base, err) < 0)
		return -1;
	len = strlen(base);
	if (len < 2 || base[len - 1] != '}') {
		free(base);
		return set_err(err, "session store: malformed record");
	}
	base[len - 1] = '\0';           /* the object goes on: more keys follow */
	if (store_sessions_find(st, prefix, false, &ss, err) < 0 || ss.n == 0) {
		free(base);
		return -1;
	}
	jbuf_init(&b);
	jbuf_raw(&b, base);
	b.need_comma = true;
	free(base);
	if (store_show_query(st, STORE_SHOW_POLICY, ss.v[0].id, 0, overflow_kv, &b, err) < 0 ||
	    store_rows_json(st, &b, "connections",
			    "SELECT t_ms, t_rel_ms, proto, verdict, addr, port, host, sni, reason,"
			    " layer, up, down, count, last_ms, " STORE_WHO_COLUMNS " FROM connections"
			    " WHERE session_id = ?1 ORDER BY t_ms, id", ss.v[0].id, err) < 0 ||
	    store_rows_json(st, &b, "resolutions",
			    "SELECT t_ms, t_rel_ms, name, addr, ttl, verdict, reason, layer, count,"
			    " last_ms, " STORE_WHO_COLUMNS " FROM resolutions WHERE session_id = ?1"
			    " ORDER BY t_ms, id", ss.v[0].id, err) < 0 ||
	    store_rows_json(st, &b, "requests",
			    "SELECT t_ms, t_rel_ms, seq, method, host, port, path, query, addr,"
			    " verdict, reason, layer, rule, rule_text, count, last_ms, "
			    STORE_WHO_COLUMNS " FROM requests"
			    " WHERE session_id = ?1 ORDER BY seq, id", ss.v[0].id, err) < 0 ||
	    store_rows_json(st, &b, "refusals", show_sql[STORE_SHOW_REFUSALS], ss.v[0].id,
			    err) < 0 ||
	    store_rows_json(st, &b, "packages", show_sql[STORE_SHOW_PACKAGES], ss.v[0].id,
			    err) < 0) {
		jbuf_free(&b);
		goto out;
	}
	jbuf_raw(&b, "}");
	*json = jbuf_steal(&b);
	rc = 0;
out:
	store_sessions_free(&ss);
	return rc;
}
