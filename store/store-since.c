/*
 * store/store-since.c — one session's record against another's (see
 * store-since.h).
 *
 * A destination is its name (the one its address was resolved from, else
 * the one on the wire) or, without one, its address — so a run that reached
 * a CDN by address alone can show a "new" address the next time. Only
 * flows that were allowed count as destinations; a refused one is a
 * refusal, grouped as `boxy show` groups them (store-internal.h). A host
 * never reached before comes before new ports of known hosts.
 */
#include <config.h>

#include "store/store-internal.h"
#include "store/store-since.h"
#include "common/util.h"

#define DEST_KEY "coalesce(host, sni, addr)"

static const char since_sql[] =
	"WITH cur AS (SELECT proto, " DEST_KEY " AS dest, port, sum(count) AS n, min(t_ms) AS t"
	"   FROM connections WHERE session_id = ?1 AND verdict = 'allow' GROUP BY 1, 2, 3),"
	" old AS (SELECT DISTINCT proto, " DEST_KEY " AS dest, port FROM connections"
	"   WHERE session_id = ?2 AND verdict = 'allow'),"
	" ref AS (SELECT subject, layer, reason, sum(count) AS n, min(t_ms) AS t FROM ("
	    STORE_REFUSAL_ROWS("?1") ") GROUP BY subject, layer, reason),"
	" oref AS (SELECT DISTINCT subject, layer, reason FROM (" STORE_REFUSAL_ROWS("?2") "))"
	" SELECT kind, subject, detail, n FROM ("
	"  SELECT 0 AS o, 'destination' AS kind, c.proto || ' ' ||"
	"   CASE WHEN instr(c.dest, ':') > 0 THEN '[' || c.dest || ']' ELSE c.dest END"
	"   || ':' || c.port AS subject,"
	"   CASE WHEN EXISTS (SELECT 1 FROM old o WHERE o.dest = c.dest) THEN 'new port'"
	"    ELSE 'new destination' END AS detail, c.n AS n, c.t AS t FROM cur c"
	"   WHERE NOT EXISTS (SELECT 1 FROM old o WHERE o.proto = c.proto AND o.dest = c.dest"
	"    AND o.port = c.port)"
	"  UNION ALL"
	"  SELECT 1, 'refusal', r.subject, r.layer || ': ' || r.reason, r.n, r.t FROM ref r"
	"   WHERE NOT EXISTS (SELECT 1 FROM oref o WHERE o.subject = r.subject"
	"    AND o.layer = r.layer AND o.reason = r.reason)"
	"  UNION ALL"
	"  SELECT 2, 'finding', coalesce(d.subject, '-'), coalesce(d.reason, ''), sum(d.count),"
	"   min(d.t_ms) FROM decisions d WHERE d.session_id = ?1 AND d.layer = 'git'"
	"   AND d.verdict = 'alert' AND NOT EXISTS (SELECT 1 FROM decisions o"
	"    WHERE o.session_id = ?2 AND o.layer = 'git' AND o.verdict = 'alert'"
	"    AND o.subject IS d.subject)"
	"   GROUP BY d.subject, d.reason"
	" ) ORDER BY o, detail = 'new port', n DESC, t, subject";

int store_since_query(struct store *st, const char *id, const char *base,
		      void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
		      char **err)
{
	if (!id || !base)
		return set_err(err, _("session store: two sessions are needed to compare"));
	return store_rows(st, since_sql, id, base, 0, row, ctx, err);
}
