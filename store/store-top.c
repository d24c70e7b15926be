/*
 * store-top.c — the dashboard's queries (see store-top.h).
 *
 * A connection of its own, read-only, with a busy timeout: the daemon's
 * writer holds the write lock in short batches, and WAL lets this reader
 * go on meanwhile. Each query is shaped so that SQLite answers it from an
 * index whatever the store holds: the sessions shown are a LIMITed walk
 * down sessions_started (the running ones, few, added first), and the
 * per-session totals are summed only for those rows, over the per-session
 * indexes of connections and the refusal tables.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "common/event.h"
#include "common/util.h"
#include "store/store.h"
#include "store/store-internal.h"
#include "store/store-top.h"

struct store_top {
	sqlite3 *db;
	sqlite3_int64 data_version;     /* -1 before the first look */
};

static int fail(struct store_top *st, char **err, const char *what)
{
	return set_err(err, "%s: %s", what, sqlite3_errmsg(st->db));
}

int store_top_open(const char *path, struct store_top **out, char **err)
{
	struct store_top *st = xcalloc(1, sizeof(*st));
	sqlite3_stmt *q = NULL;
	int version = -1;

	*out = NULL;
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) !=
	    SQLITE_OK) {
		set_err(err, _("cannot open the session store %s: %s"), path,
			st->db ? sqlite3_errmsg(st->db) : "out of memory");
		store_top_close(st);
		return -1;
	}
	sqlite3_busy_timeout(st->db, 2000);
	st->data_version = -1;
	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		version = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	if (version < 0) {
		set_err(err, _("%s is not a session store this build can read"), path);
		store_top_close(st);
		return -1;
	}
	if (version > STORE_SCHEMA_VERSION) {
		set_err(err, _("the session store %s has schema %d, newer than this build's %d: "
			  "use the boxy that wrote it"), path, version, STORE_SCHEMA_VERSION);
		store_top_close(st);
		return -1;
	}
	if (version < STORE_SCHEMA_VERSION) {
		set_err(err, _("the session store %s has schema %d; a daemon of this build upgrades it "
			  "when it starts (boxy daemon restart)"), path, version);
		store_top_close(st);
		return -1;
	}
	*out = st;
	return 0;
}

bool store_top_changed(struct store_top *st)
{
	sqlite3_stmt *q;
	sqlite3_int64 v = -2;

	if (sqlite3_prepare_v2(st->db, "PRAGMA data_version", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (v == st->data_version)
		return false;
	st->data_version = v;
	return true;
}

void store_top_close(struct store_top *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st);
}

static const char *text(sqlite3_stmt *q, int col)
{
	const unsigned char *t = sqlite3_column_text(q, col);

	return t ? (const char *)t : "";
}

static uint64_t u64(sqlite3_stmt *q, int col)
{
	sqlite3_int64 v = sqlite3_column_int64(q, col);

	return v < 0 ? 0 : (uint64_t)v;
}

/* "%text%" for LIKE, with LIKE's own characters escaped. */
static char *like_pattern(const char *s)
{
	size_t n = strlen(s), j = 0;
	char *out = xmalloc(2 * n + 3);

	out[j++] = '%';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' || s[i] == '_' || s[i] == '\\')
			out[j++] = '\\';
		out[j++] = s[i];
	}
	out[j++] = '%';
	out[j] = '\0';
	return out;
}

/*
 * A session's refusals: the denials view's three tables asked directly. Asked
 * through the view, SQLite runs the union as a co-routine per session, a
 * hundred times slower than these three index lookups (measured: 0.5 s
 * against 9 ms for 200 sessions of a 2,000,000-row store).
 */
#define DENIED_OF(id) \
	"((SELECT coalesce(sum(count), 0) FROM connections WHERE session_id = " id \
	"   AND verdict = 'deny')" \
	" + (SELECT coalesce(sum(count), 0) FROM resolutions WHERE session_id = " id \
	"   AND verdict = 'deny')" \
	" + (SELECT coalesce(sum(count), 0) FROM decisions WHERE session_id = " id \
	"   AND verdict = 'deny')" \
	" + (SELECT coalesce(sum(count), 0) FROM requests WHERE session_id = " id \
	"   AND verdict = 'deny'))"

/* The totals of one session row, summed over its own rows only. */
#define SESSION_COLUMNS \
	"s.id, " STORE_STATE_SHOWN ", coalesce(s.profile, '')," \
	" coalesce(json_extract(s.policy, '$.net.mode'), '')," \
	" s.argv, s.cwd, s.started_ms, coalesce(s.ended_ms, 0), coalesce(s.exit_code, 0)," \
	" (SELECT coalesce(sum(count), 0) FROM connections c WHERE c.session_id = s.id)," \
	" " DENIED_OF("s.id") " + s.overflow_denied," \
	" (SELECT coalesce(sum(up), 0) FROM connections c WHERE c.session_id = s.id)," \
	" (SELECT coalesce(sum(down), 0) FROM connections c WHERE c.session_id = s.id)," \
	" coalesce(s.frozen_reason, '')"

#define SESSION_MATCH \
	"(?1 = '' OR s.argv LIKE ?2 ESCAPE '\\' OR s.cwd LIKE ?2 ESCAPE '\\'" \
	" OR (" STORE_STATE_SHOWN ") LIKE ?2 ESCAPE '\\'" \
	" OR coalesce(s.profile, '') LIKE ?2 ESCAPE '\\'" \
	" OR s.id LIKE substr(?2, 2))" \
	" AND (?3 = 0 OR s.overflow_denied > 0" \
	"  OR EXISTS (SELECT 1 FROM connections d WHERE d.session_id = s.id AND verdict = 'deny')" \
	"  OR EXISTS (SELECT 1 FROM resolutions d WHERE d.session_id = s.id AND verdict = 'deny')" \
	"  OR EXISTS (SELECT 1 FROM decisions d WHERE d.session_id = s.id AND verdict = 'deny')" \
	"  OR EXISTS (SELECT 1 FROM requests d WHERE d.session_id = s.id AND verdict = 'deny'))"

int store_top_sessions(struct store_top *st, const char *filter, bool denied_only, size_t limit,
		       void (*row)(void *ctx, const struct store_top_session *r), void *ctx,
		       char **err)
{
	static const char *const sql[] = {
		/* The running ones first: few, whatever the store's size. */
		"SELECT " SESSION_COLUMNS " FROM sessions s"
		" WHERE s.state IN ('running', 'frozen') AND " SESSION_MATCH
		" ORDER BY s.started_ms DESC",
		/* Then history, down the started_ms index until limit rows matched. */
		"SELECT " SESSION_COLUMNS " FROM sessions s"
		" WHERE s.state NOT IN ('running', 'frozen') AND " SESSION_MATCH
		" ORDER BY s.started_ms DESC LIMIT ?4",
	};
	char *pat = like_pattern(filter ? filter : "");
	size_t n = 0;
	int rc = 0;

	for (size_t k = 0; k < ARRAY_SIZE(sql) && rc == 0; k++) {
		sqlite3_stmt *q;

		if (sqlite3_prepare_v2(st->db, sql[k], -1, &q, NULL) != SQLITE_OK) {
			rc = fail(st, err, "listing sessions");
			break;
		}
		sqlite3_bind_text(q, 1, filter ? filter : "", -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 2, pat, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(q, 3, denied_only);
		sqlite3_bind_int64(q, 4, (sqlite3_int64)(limit > n ? limit - n : 0));
		while (sqlite3_step(q) == SQLITE_ROW && n < limit) {
			struct store_top_session r = {
				.id = text(q, 0), .state = text(q, 1), .profile = text(q, 2),
				.net = text(q, 3), .argv_json = text(q, 4), .cwd = text(q, 5),
				.started_ms = sqlite3_column_int64(q, 6),
				.ended_ms = sqlite3_column_int64(q, 7),
				.exit_code = sqlite3_column_int(q, 8), .conns = u64(q, 9),
				.denied = u64(q, 10), .up = u64(q, 11), .down = u64(q, 12),
				.frozen_reason = text(q, 13),
			};

			row(ctx, &r);
			n++;
		}
		sqlite3_finalize(q);
	}
	free(pat);
	return rc;
}

int store_top_totals(struct store_top *st, int64_t since_ms, uint64_t *running,
		     uint64_t *denied, char **err)
{
	sqlite3_stmt *q;

	*running = *denied = 0;
	/* Refusals since since_ms, of the sessions started a day before it (the
	 * sessions_started index; a run older than that is not counted here). */
#define RECENT_DENIED(table) \
	" (SELECT coalesce(sum(count), 0) FROM " table " WHERE verdict = 'deny' AND t_ms >= ?1" \
	"   AND session_id IN (SELECT id FROM sessions WHERE started_ms >= ?1 - 86400000))"
	if (sqlite3_prepare_v2(st->db,
			       "SELECT (SELECT count(*) FROM sessions WHERE state = 'running'),"
			       RECENT_DENIED("connections") " + " RECENT_DENIED("resolutions") " + "
			       RECENT_DENIED("decisions") " + " RECENT_DENIED("requests"), -1, &q,
			       NULL) != SQLITE_OK)
		return fail(st, err, "counting sessions");
	sqlite3_bind_int64(q, 1, since_ms);
	if (sqlite3_step(q) == SQLITE_ROW) {
		*running = u64(q, 0);
		*denied = u64(q, 1);
	}
	sqlite3_finalize(q);
	return 0;
}

int store_top_dests(struct store_top *st, int64_t since_ms, size_t limit,
		    void (*row)(void *ctx, const struct store_top_dest *r), void *ctx, char **err)
{
	sqlite3_stmt *q;

	/* Connections (allowed and refused) and the names refused before any connection. */
	if (sqlite3_prepare_v2(st->db,
			       "WITH recent AS (SELECT id FROM sessions WHERE started_ms >= ?1),"
			       " tried AS ("
			       "  SELECT coalesce(host, addr) AS name, session_id, count,"
			       "   CASE WHEN verdict = 'deny' THEN count ELSE 0 END AS denied,"
			       "   up, down, t_ms, coalesce(last_ms, t_ms) AS last"
			       "  FROM connections WHERE session_id IN recent"
			       "  UNION ALL"
			       "  SELECT name, session_id, 0, count, 0, 0, t_ms, coalesce(last_ms, t_ms)"
			       "  FROM resolutions WHERE verdict = 'deny' AND session_id IN recent)"
			       " SELECT name, count(DISTINCT session_id), sum(count), sum(denied),"
			       "  sum(up), sum(down), min(t_ms), max(last)"
			       " FROM tried GROUP BY name ORDER BY sum(count) + sum(denied) DESC, name"
			       " LIMIT ?2", -1, &q, NULL) != SQLITE_OK)
		return fail(st, err, "listing destinations");
	sqlite3_bind_int64(q, 1, since_ms);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)limit);
	while (sqlite3_step(q) == SQLITE_ROW) {
		struct store_top_dest r = {
			.name = text(q, 0), .sessions = u64(q, 1), .conns = u64(q, 2),
			.denied = u64(q, 3), .up = u64(q, 4), .down = u64(q, 5),
			.first_ms = sqlite3_column_int64(q, 6), .last_ms = sqlite3_column_int64(q, 7),
		};

		row(ctx, &r);
	}
	sqlite3_finalize(q);
	return 0;
}

int store_top_denials(struct store_top *st, size_t limit,
		      void (*row)(void *ctx, const struct store_top_denial *r), void *ctx,
		      char **err)
{
	sqlite3_stmt *q;

	/* The denials view's rows, of the 200 newest sessions, each table on its index. */
#define NEWEST " session_id IN (SELECT id FROM sessions ORDER BY started_ms DESC LIMIT 200)"
	if (sqlite3_prepare_v2(st->db,
			       "SELECT d.session_id, s.argv, d.layer, d.subject, d.reason, d.t_ms,"
			       " d.count FROM ("
			       "  SELECT session_id, layer, proto || '://' || CASE WHEN host IS NULL"
			       "   AND instr(addr, ':') > 0 THEN '[' || addr || ']'"
			       "   ELSE coalesce(host, addr) END || ':' || port AS subject, reason,"
			       "   t_ms, count FROM connections WHERE verdict = 'deny' AND" NEWEST
			       "  UNION ALL SELECT session_id, coalesce(layer, 'net.dns'), name, reason,"
			       "   t_ms, count FROM resolutions WHERE verdict = 'deny' AND" NEWEST
			       "  UNION ALL SELECT session_id, layer, subject, reason, t_ms, count"
			       "   FROM decisions WHERE verdict = 'deny' AND" NEWEST
			       "  UNION ALL SELECT session_id, layer, " REQUEST_SUBJECT ", reason, t_ms,"
			       "   count FROM requests WHERE verdict = 'deny' AND" NEWEST
			       " ) d JOIN sessions s ON s.id = d.session_id"
			       " ORDER BY d.t_ms DESC LIMIT ?1", -1, &q, NULL) != SQLITE_OK)
		return fail(st, err, "listing denials");
	sqlite3_bind_int64(q, 1, (sqlite3_int64)limit);
	while (sqlite3_step(q) == SQLITE_ROW) {
		struct store_top_denial r = {
			.session_id = text(q, 0), .argv_json = text(q, 1), .layer = text(q, 2),
			.subject = text(q, 3), .reason = text(q, 4),
			.t_ms = sqlite3_column_int64(q, 5), .count = u64(q, 6),
		};

		row(ctx, &r);
	}
	sqlite3_finalize(q);
	return 0;
}

/* Run sql (one ?1 = id) and hand each row, formatted by fmt over its text columns, to line. */
static int record_part(struct store_top *st, const char *id, const char *sql,
		       void (*format)(sqlite3_stmt *q, char *buf, size_t len, bool *deny),
		       void (*line)(void *ctx, const char *text, bool deny), void *ctx, char **err)
{
	sqlite3_stmt *q;
	int n = 0;

	if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
		return fail(st, err, "reading the session");
	sqlite3_bind_text(q, 1, id, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(q) == SQLITE_ROW) {
		char buf[1024];
		bool deny = false;

		format(q, buf, sizeof(buf), &deny);
		line(ctx, buf, deny);
		n++;
	}
	sqlite3_finalize(q);
	return n;
}

static void fmt_dest(sqlite3_stmt *q, char *buf, size_t len, bool *deny)
{
	char a[32], b[32];

	*deny = sqlite3_column_int64(q, 2) > 0 && sqlite3_column_int64(q, 1) ==
		sqlite3_column_int64(q, 2);
	snprintf(buf, len, "  %-34.200s %6lld %6lld %5lld %10s %10s", text(q, 0),
		 (long long)sqlite3_column_int64(q, 1), (long long)sqlite3_column_int64(q, 2),
		 (long long)sqlite3_column_int64(q, 3), format_size(u64(q, 4), a, sizeof(a)),
		 format_size(u64(q, 5), b, sizeof(b)));
}

/* The words for the who in columns from.. (STORE_WHO_COLUMNS), or NULL when not looked for. */
static char *who_words(sqlite3_stmt *q, int from)
{
	const char *v[9];
	struct event_who w;

	for (int i = 0; i < 9; i++)
		v[i] = (const char *)sqlite3_column_text(q, from + i);
	return event_who_from_row(&w, v) ? event_who_words(&w) : NULL;
}

static void fmt_denial(sqlite3_stmt *q, char *buf, size_t len, bool *deny)
{
	char *by = who_words(q, 5);

	*deny = true;
	snprintf(buf, len, "  %-34.200s %5lld  %-8.32s %.300s%s%.200s", text(q, 0),
		 (long long)sqlite3_column_int64(q, 1), text(q, 2), text(q, 3), by ? "  by " : "",
		 by ? by : "");
	free(by);
}

/* A package of the record: its words (or its command), counts, where it went. */
static void fmt_package(sqlite3_stmt *q, char *buf, size_t len, bool *deny)
{
	char *name;

	*deny = sqlite3_column_int64(q, 7) > 0;
	if (sqlite3_column_type(q, 0) != SQLITE_NULL) {
		struct event_who w = {
			.found = true, .package = text(q, 0), .version = text(q, 1),
			.script = text(q, 2), .via = text(q, 4),
			.claimed = sqlite3_column_int(q, 3) == 1,
		};

		name = event_who_package_words(&w);
	} else {
		name = xstrdup(sqlite3_column_type(q, 5) != SQLITE_NULL ? text(q, 5) : "unknown");
	}
	snprintf(buf, len, "  %-40.200s %6lld %6lld %7lld  %.300s", name,
		 (long long)sqlite3_column_int64(q, 6), (long long)sqlite3_column_int64(q, 7),
		 (long long)sqlite3_column_int64(q, 8), text(q, 10));
	free(name);
}

/* One request: its number, what was asked, the verdict and why (refusals red). */
static void fmt_request(sqlite3_stmt *q, char *buf, size_t len, bool *deny)
{
	*deny = strcmp(text(q, 2), "deny") == 0;
	snprintf(buf, len, "  #%-5lld %-40.300s %-6.8s %.300s", (long long)sqlite3_column_int64(q, 0),
		 text(q, 1), text(q, 2), text(q, 3));
}

static void fmt_decision(sqlite3_stmt *q, char *buf, size_t len, bool *deny)
{
	*deny = strcmp(text(q, 1), "deny") == 0;
	snprintf(buf, len, "  %-8.32s %-9.16s %-24.200s %.400s", text(q, 0), text(q, 1), text(q, 2),
		 text(q, 3));
}

/* An alert: red, first in the record, its layer, subject and reason on one line. */
static void fmt_alert(sqlite3_stmt *q, char *buf, size_t len, bool *deny)
{
	*deny = true;
	snprintf(buf, len, "  ALERT %-8.32s %.200s: %.600s", text(q, 0), text(q, 1), text(q, 2));
}

int store_top_record(struct store_top *st, const char *id,
		     void (*line)(void *ctx, const char *text, bool deny), void *ctx, char **err)
{
	sqlite3_stmt *q;
	char buf[1024];
	int found = 0;

	if (sqlite3_prepare_v2(st->db,
			       "SELECT argv, cwd, coalesce(profile, '-'),"
			       " coalesce(json_extract(policy, '$.net.mode'), '-'), " STORE_STATE_SHOWN ","
			       " coalesce(exit_code, 0), started_ms, coalesce(ended_ms, 0), overflow,"
			       " coalesce(frozen_ms, 0), coalesce(frozen_reason, '')"
			       " FROM sessions WHERE id = ?1", -1, &q, NULL) != SQLITE_OK)
		return fail(st, err, "reading the session");
	sqlite3_bind_text(q, 1, id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(q) == SQLITE_ROW) {
		int64_t started = sqlite3_column_int64(q, 6), ended = sqlite3_column_int64(q, 7);

		found = 1;
		snprintf(buf, sizeof(buf), "command   %.900s", text(q, 0));
		line(ctx, buf, false);
		snprintf(buf, sizeof(buf), "workdir   %.900s", text(q, 1));
		line(ctx, buf, false);
		snprintf(buf, sizeof(buf), "profile   %.100s   network %.40s", text(q, 2), text(q, 3));
		line(ctx, buf, false);
		if (ended)
			snprintf(buf, sizeof(buf), "state     %.20s, exit %d after %.1fs", text(q, 4),
				 sqlite3_column_int(q, 5), (double)(ended - started) / 1000.0);
		else
			snprintf(buf, sizeof(buf), "state     %.20s", text(q, 4));
		line(ctx, buf, strcmp(text(q, 4), "failed") == 0 || strcmp(text(q, 4), "lost") == 0 ||
		     strcmp(text(q, 4), "frozen") == 0);
		if (sqlite3_column_int64(q, 9)) {
			/* Why it is frozen (or was, when it ended frozen), and what decides. */
			snprintf(buf, sizeof(buf), "%s %.700s", ended ? "ended frozen:" : "frozen:  ",
				 text(q, 10));
			line(ctx, buf, true);
			if (!ended) {
				snprintf(buf, sizeof(buf), "          r resume, s stop, K kill "
					 "(boxy resume %.8s / boxy stop %.8s)", id, id);
				line(ctx, buf, true);
			}
		}
		if (sqlite3_column_int64(q, 8) > 0) {
			snprintf(buf, sizeof(buf), "          %lld rows past the store's per-session cap "
				 "were counted, not kept", (long long)sqlite3_column_int64(q, 8));
			line(ctx, buf, false);
		}
	}
	sqlite3_finalize(q);
	if (!found)
		return set_err(err, _("no session %s in the store"), id);
	{
		/* The findings to act on (a tripwire, a planted repository), before anything else. */
		static const char alerts_sql[] =
			"SELECT layer, coalesce(subject, ''), coalesce(reason, '') FROM decisions"
			" WHERE session_id = ?1 AND verdict = 'alert' ORDER BY t_ms, id LIMIT 50";
		sqlite3_stmt *a;
		bool any = false;

		if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM decisions WHERE session_id = ?1 AND "
				       "verdict = 'alert' LIMIT 1", -1, &a, NULL) == SQLITE_OK) {
			sqlite3_bind_text(a, 1, id, -1, SQLITE_TRANSIENT);
			any = sqlite3_step(a) == SQLITE_ROW;
			sqlite3_finalize(a);
		}
		if (any) {
			line(ctx, "", false);
			line(ctx, "ALERTS: act on these", true);
			record_part(st, id, alerts_sql, fmt_alert, line, ctx, err);
		}
	}
	line(ctx, "", false);
	snprintf(buf, sizeof(buf), "  %-34s %6s %6s %5s %10s %10s", "DESTINATION", "CONNS", "DENIED",
		 "ADDRS", "SENT", "RECEIVED");
	line(ctx, buf, false);
	if (record_part(st, id, "SELECT destination, conns, denied, addrs, sent, received"
			" FROM destinations WHERE session_id = ?1 ORDER BY conns DESC LIMIT 200",
			fmt_dest, line, ctx, err) == 0)
		line(ctx, "  (no connection)", false);
	line(ctx, "", false);
	line(ctx, "PACKAGES (by what ran them; a package name is the process's claim)", false);
	snprintf(buf, sizeof(buf), "  %-40s %6s %6s %7s  %s", "PACKAGE", "CONNS", "DENIED",
		 "LOOKUPS", "DESTINATIONS");
	line(ctx, buf, false);
	if (record_part(st, id, "SELECT package, version, script, claimed, via, comm, conns, denied,"
			" lookups, destinations, dest_list FROM packages WHERE session_id = ?1"
			" ORDER BY package IS NULL, denied DESC, conns DESC LIMIT 200", fmt_package,
			line, ctx, err) == 0)
		line(ctx, "  (no process was looked for: --no-attribution, or nothing on the network)",
		     false);
	line(ctx, "", false);
	line(ctx, "REFUSED", false);
	/* The who of each group's first (SQLite takes bare columns from min()'s row). */
	if (record_part(st, id, "SELECT subject, sum(count), layer, reason, min(t_ms), "
			STORE_WHO_COLUMNS " FROM denials WHERE session_id = ?1"
			" GROUP BY subject, layer, reason ORDER BY sum(count) DESC LIMIT 200",
			fmt_denial, line, ctx, err) == 0)
		line(ctx, "  (nothing)", false);
	line(ctx, "", false);
	line(ctx, "HTTP REQUESTS (gated connections, newest last)", false);
	if (record_part(st, id, "SELECT seq, subject, verdict, reason FROM ("
			"SELECT seq, " REQUEST_SUBJECT " AS subject, verdict,"
			" coalesce(reason, '') || CASE WHEN count > 1 THEN ' (x' || count || ')'"
			" ELSE '' END AS reason, id FROM requests WHERE session_id = ?1"
			" ORDER BY seq DESC, id DESC LIMIT 200) ORDER BY seq, id",
			fmt_request, line, ctx, err) == 0)
		line(ctx, "  (none)", false);
	line(ctx, "", false);
	line(ctx, "NEW SINCE THE LAST RUN", false);
	if (record_part(st, id, "SELECT layer, verdict, coalesce(subject, ''), coalesce(reason, '')"
			" FROM decisions WHERE session_id = ?1 AND layer = 'since' AND verdict = 'new'"
			" ORDER BY t_ms, id LIMIT 200", fmt_decision, line, ctx, err) == 0)
		line(ctx, "  (nothing, or no earlier run of this command here)", false);
	line(ctx, "", false);
	line(ctx, "DECISIONS (limits, layers, git)", false);
	record_part(st, id, "SELECT layer, verdict, coalesce(subject, ''), coalesce(reason, '')"
		    " FROM decisions WHERE session_id = ?1 AND verdict <> 'deny' AND layer <> 'since'"
		    " ORDER BY t_ms, id LIMIT 500", fmt_decision, line, ctx, err);
	return 0;
}
