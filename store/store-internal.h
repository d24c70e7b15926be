/*
 * store-internal.h — what store.c lends the other files of store/ (never
 * included outside store/: SQL and sqlite3.h stay here).
 */
#ifndef BOXY_STORE_INTERNAL_H
#define BOXY_STORE_INTERNAL_H

#include <sqlite3.h>

#include "common/json.h"
#include "store/store.h"

/* A refused flow's subject as proto/refusals.c writes it: host or [v6] or v4, then :port. */
#define FLOW_SUBJECT \
	"CASE WHEN host IS NULL AND instr(addr, ':') > 0 THEN '[' || addr || ']'" \
	" ELSE coalesce(host, addr) END || ':' || port"

/* A request's subject, as the broker's events write it: "GET api.test:8081/v2/x". */
#define REQUEST_SUBJECT \
	"coalesce(method, 'HTTP') || ' ' || coalesce(host, addr, '-') ||" \
	" CASE WHEN port IS NULL OR port IN (80, 443) THEN '' ELSE ':' || port END ||" \
	" coalesce(path, '')"

/*
 * A row's who (MIGRATION_ATTRIBUTION), as the queries that show it select
 * it: these nine columns, in this order (event_who_from_row reads them).
 */
#define STORE_WHO_COLUMNS \
	"pid, comm, argv0, cmdline, package, package_version, package_script, package_via," \
	" package_claimed"

/*
 * A row's package in words, as event_who_package_words writes them ("claims "
 * when claimed, then "SCRIPT of NAME@VERSION"; no "via"), or NULL without one.
 */
#define STORE_PKG_WORDS \
	"CASE WHEN package IS NULL THEN NULL ELSE" \
	" CASE WHEN package_claimed = 1 THEN 'claims ' ELSE '' END ||" \
	" coalesce(package_script || ' of ', '') || package || coalesce('@' || package_version, '')" \
	" END"

/*
 * Every refusal of session P (an SQL parameter such as "?1") as rows of
 * subject, layer, reason, count, t_ms and who made it (STORE_WHO_COLUMNS) —
 * the rows `boxy show` groups (git and limits have sections of their own,
 * so they are not among them).
 */
#define STORE_REFUSAL_ROWS(P) \
	"  SELECT " FLOW_SUBJECT " AS subject, coalesce(layer, '-') AS layer," \
	"   coalesce(reason, '') AS reason, count, t_ms, " STORE_WHO_COLUMNS " FROM connections" \
	"   WHERE session_id = " P " AND verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT name, coalesce(layer, 'net.dns'), coalesce(reason, ''), count, t_ms, " \
	STORE_WHO_COLUMNS \
	"   FROM resolutions WHERE session_id = " P " AND verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT coalesce(subject, '-'), layer, coalesce(reason, ''), count, t_ms, " \
	STORE_WHO_COLUMNS \
	"   FROM decisions WHERE session_id = " P " AND verdict = 'deny'" \
	"   AND layer NOT IN ('git', 'cgroup', 'limits')" \
	"  UNION ALL" \
	"  SELECT " REQUEST_SUBJECT ", layer, coalesce(reason, ''), count, t_ms, " \
	STORE_WHO_COLUMNS \
	"   FROM requests WHERE session_id = " P " AND verdict = 'deny'"

/* The open database, every count still in memory written first; NULL and err on failure. */
sqlite3 *store_db(struct store *st, char **err);

/*
 * A statement for sql, prepared the first time and kept until the store
 * closes (the since report, the seal and the writable roots run at every
 * session's start or end: preparing them again cost more than running them).
 * Given back with store_stmt_done, which resets it (or finalizes one prepared
 * past the cache's room, or while the same text is still in use). NULL and
 * err when SQLite refuses the text.
 */
sqlite3_stmt *store_stmt(struct store *st, const char *sql, char **err);
void store_stmt_done(struct store *st, sqlite3_stmt *s);

/* Each row of sql (?1 bound to id) appended to b under key as an object by column name. */
int store_rows_json(struct store *st, struct jbuf *b, const char *key, const char *sql,
		    const char *id, char **err);

#define STORE_ROW_COLS_MAX 32

/*
 * Each row of sql → row, as strings (NULL for SQL NULL), at most STORE_ROW_COLS_MAX columns:
 * ?1 bound to id, ?2 to id2 when not NULL, and the next parameter, when the
 * statement has it, to limit.
 */
int store_rows(struct store *st, const char *sql, const char *id, const char *id2,
	       int64_t limit, void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
	       char **err);

#endif
