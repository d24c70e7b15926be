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

/*
 * A destination's package is its first connection's (SQLite takes bare
 * columns from min()'s row). A package with network is one whose processes
 * connected or asked a name; it is new when the other session had none of
 * that package and script (another version is the same package: a bump
 * shows as its new destinations).
 */
static const char since_sql[] =
	"WITH cur AS (SELECT proto, " DEST_KEY " AS dest, port, sum(count) AS n, min(t_ms) AS t,"
	"   " STORE_PKG_WORDS " AS pkg"
	"   FROM connections WHERE session_id = ?1 AND verdict = 'allow' GROUP BY 1, 2, 3),"
	" net AS (SELECT package, package_script, package_version, package_claimed, count, t_ms,"
	"   CASE WHEN verdict = 'allow' THEN proto || ' ' END ||"
	"   CASE WHEN host IS NULL AND sni IS NULL AND instr(addr, ':') > 0"
	"    THEN '[' || addr || ']' ELSE " DEST_KEY " END || ':' || port AS dest, session_id"
	"   FROM connections WHERE package IS NOT NULL AND session_id IN (?1, ?2)"
	"   UNION ALL SELECT package, package_script, package_version, package_claimed, count,"
	"   t_ms, name, session_id FROM resolutions"
	"   WHERE package IS NOT NULL AND session_id IN (?1, ?2)),"
	" pcur AS (SELECT " STORE_PKG_WORDS " AS pkg, package, package_script, sum(count) AS n,"
	"   min(t_ms) AS t, group_concat(DISTINCT dest) AS dests FROM net WHERE session_id = ?1"
	"   GROUP BY package, package_script, package_claimed),"
	" pold AS (SELECT DISTINCT package, package_script FROM net WHERE session_id = ?2),"
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
	"    ELSE 'new destination' END || coalesce(', ' || c.pkg, '') AS detail, c.n AS n,"
	"   c.t AS t FROM cur c"
	"   WHERE NOT EXISTS (SELECT 1 FROM old o WHERE o.proto = c.proto AND o.dest = c.dest"
	"    AND o.port = c.port)"
	"  UNION ALL"
	"  SELECT 1, 'package', p.pkg, 'new package with network: ' || p.dests, p.n, p.t FROM pcur p"
	"   WHERE NOT EXISTS (SELECT 1 FROM pold o WHERE o.package = p.package"
	"    AND o.package_script IS p.package_script)"
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
