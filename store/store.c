/*
 * store.c — the SQLite session store: schema, forward migrations keyed by
 * PRAGMA user_version, prepared statements, batched writes.
 *
 * Migrations follow the freebsd-pkg pattern: a full schema for a new file is
 * the sum of the ordered upgrade steps, each applied in its own transaction
 * with the version bump, so a crash mid-upgrade leaves the previous version
 * intact. A database newer than this build is refused: downgrading a schema
 * silently would lose data a newer boxy wrote.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sqlite3.h>

#include "json.h"
#include "store.h"
#include "util.h"

/* Each step takes the schema from version i to i+1. Append; never edit a step that shipped. */
static const char *const migrations[] = {
	/* 0 → 1: the initial schema. */
	"CREATE TABLE sessions ("
	"  id          TEXT PRIMARY KEY CHECK (length(id) = 16),"
	"  argv        TEXT NOT NULL,"
	"  profile     TEXT,"
	"  policy      TEXT NOT NULL,"
	"  cwd         TEXT NOT NULL,"
	"  started_ms  INTEGER NOT NULL,"
	"  ended_ms    INTEGER,"
	"  state       TEXT NOT NULL CHECK (state IN ('running','exited','failed','lost')),"
	"  exit_code   INTEGER,"
	"  memory      INTEGER, pids INTEGER, cpus_milli INTEGER, timeout_ms INTEGER,"
	"  build       TEXT"
	");"
	"CREATE INDEX sessions_started ON sessions(started_ms);"
	"CREATE TABLE connections ("
	"  id          INTEGER PRIMARY KEY,"
	"  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  t_ms        INTEGER NOT NULL,"
	"  proto       TEXT NOT NULL CHECK (proto IN ('tcp','udp')),"
	"  verdict     TEXT NOT NULL CHECK (verdict IN ('allow','deny')),"
	"  addr        TEXT NOT NULL,"
	"  port        INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),"
	"  host        TEXT, sni TEXT, reason TEXT, layer TEXT,"
	"  up          INTEGER NOT NULL DEFAULT 0,"
	"  down        INTEGER NOT NULL DEFAULT 0"
	");"
	"CREATE INDEX connections_session ON connections(session_id, t_ms);"
	"CREATE TABLE resolutions ("
	"  id          INTEGER PRIMARY KEY,"
	"  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  t_ms        INTEGER NOT NULL,"
	"  name        TEXT NOT NULL,"
	"  addr        TEXT,"
	"  ttl         INTEGER,"
	"  verdict     TEXT NOT NULL CHECK (verdict IN ('allow','deny')),"
	"  reason      TEXT"
	");"
	"CREATE INDEX resolutions_session ON resolutions(session_id, t_ms);"
	"CREATE TABLE decisions ("
	"  id          INTEGER PRIMARY KEY,"
	"  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	"  t_ms        INTEGER NOT NULL,"
	"  layer       TEXT NOT NULL,"
	"  verdict     TEXT NOT NULL,"
	"  subject     TEXT,"
	"  reason      TEXT"
	");"
	"CREATE INDEX decisions_session ON decisions(session_id, t_ms);"
	/* The specification's destinations table: one row per session and destination. */
	"CREATE VIEW destinations AS"
	"  SELECT session_id,"
	"         coalesce(host, addr) AS destination,"
	"         count(*) AS conns,"
	"         sum(verdict = 'deny') AS denied,"
	"         count(DISTINCT addr) AS addrs,"
	"         sum(up) AS sent,"
	"         sum(down) AS received"
	"  FROM connections GROUP BY session_id, destination;"
	/* Every refusal, whichever layer made it, in one place. */
	"CREATE VIEW denials AS"
	"  SELECT session_id, t_ms, layer, 'connect' AS what,"
	"         proto || '://' || coalesce(host, addr) || ':' || port AS subject, reason"
	"    FROM connections WHERE verdict = 'deny'"
	"  UNION ALL"
	"  SELECT session_id, t_ms, 'net.dns', 'resolve', name, reason"
	"    FROM resolutions WHERE verdict = 'deny'"
	"  UNION ALL"
	"  SELECT session_id, t_ms, layer, 'policy', subject, reason"
	"    FROM decisions WHERE verdict = 'deny';"
	/* One line per session, as boxy ps -a prints it. */
	"CREATE VIEW session_summary AS"
	"  SELECT s.id, substr(s.id, 1, 8) AS short_id, s.state, s.exit_code, s.started_ms,"
	"         s.ended_ms, s.argv, s.cwd,"
	"         (SELECT count(*) FROM connections c WHERE c.session_id = s.id) AS conns,"
	"         (SELECT count(*) FROM denials d WHERE d.session_id = s.id) AS denied,"
	"         (SELECT coalesce(sum(up), 0) FROM connections c WHERE c.session_id = s.id) AS sent,"
	"         (SELECT coalesce(sum(down), 0) FROM connections c WHERE c.session_id = s.id)"
	"           AS received"
	"  FROM sessions s;",
};

enum stmt_id {
	ST_SESSION_BEGIN,
	ST_SESSION_END,
	ST_MARK_LOST,
	ST_CONN,
	ST_RESOLUTION,
	ST_DECISION,
	ST_PRUNE,
	ST_FIND,
	ST_FIND_RUNNING,
	ST__COUNT,
};

/* Every statement boxy runs, prepared once, in one table. */
static const char *const stmt_sql[ST__COUNT] = {
	[ST_SESSION_BEGIN] =
		"INSERT INTO sessions (id, argv, profile, policy, cwd, started_ms, state,"
		" memory, pids, cpus_milli, timeout_ms, build)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10, ?11)",
	[ST_SESSION_END] =
		"UPDATE sessions SET ended_ms = ?2, state = ?3, exit_code = ?4 WHERE id = ?1",
	[ST_MARK_LOST] =
		"UPDATE sessions SET state = 'lost', ended_ms = ?1 WHERE state = 'running'",
	[ST_CONN] =
		"INSERT INTO connections (session_id, t_ms, proto, verdict, addr, port, host, sni,"
		" reason, layer, up, down) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
	[ST_RESOLUTION] =
		"INSERT INTO resolutions (session_id, t_ms, name, addr, ttl, verdict, reason)"
		" VALUES (?1,?2,?3,?4,?5,?6,?7)",
	[ST_DECISION] =
		"INSERT INTO decisions (session_id, t_ms, layer, verdict, subject, reason)"
		" VALUES (?1,?2,?3,?4,?5,?6)",
	[ST_PRUNE] =
		"DELETE FROM sessions WHERE state <> 'running' AND ended_ms IS NOT NULL"
		" AND ended_ms < ?1",
	[ST_FIND] =
		"SELECT id, argv, profile, policy, cwd, started_ms, coalesce(ended_ms, 0), state,"
		" coalesce(exit_code, -1), coalesce(memory, 0), coalesce(pids, 0),"
		" coalesce(cpus_milli, 0), coalesce(timeout_ms, 0), build FROM sessions"
		" WHERE ?1 IS NULL OR substr(id, 1, length(?1)) = ?1"
		" ORDER BY started_ms DESC, id",
	[ST_FIND_RUNNING] =
		"SELECT id, argv, profile, policy, cwd, started_ms, coalesce(ended_ms, 0), state,"
		" coalesce(exit_code, -1), coalesce(memory, 0), coalesce(pids, 0),"
		" coalesce(cpus_milli, 0), coalesce(timeout_ms, 0), build FROM sessions"
		" WHERE (?1 IS NULL OR substr(id, 1, length(?1)) = ?1) AND state = 'running'"
		" ORDER BY started_ms DESC, id",
};

struct store {
	sqlite3 *db;
	sqlite3_stmt *stmt[ST__COUNT];
};

static int db_err(struct store *st, char **err, const char *what)
{
	return set_err(err, "session store: %s: %s", what, sqlite3_errmsg(st->db));
}

static int exec_sql(struct store *st, const char *sql, char **err)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		set_err(err, "session store: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int user_version(struct store *st, int *out, char **err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		return db_err(st, err, "reading the schema version");
	rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
	sqlite3_finalize(s);
	if (*out < 0)
		return db_err(st, err, "reading the schema version");
	return 0;
}

/* Apply every step above the file's version, each in its own transaction. */
static int migrate(struct store *st, char **err)
{
	int have = 0;
	const int want = (int)ARRAY_SIZE(migrations);

	_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION,
		       "one migration step per schema version");
	if (user_version(st, &have, err) < 0)
		return -1;
	if (have > want)
		return set_err(err, "session store has schema version %d, newer than this "
			       "build's %d: refusing to use it (upgrade boxy)", have, want);
	for (int v = have; v < want; v++) {
		char *bump;

		if (exec_sql(st, "BEGIN IMMEDIATE", err) < 0)
			return -1;
		if (exec_sql(st, migrations[v], err) < 0) {
			exec_sql(st, "ROLLBACK", NULL);
			return -1;
		}
		bump = xasprintf("PRAGMA user_version = %d", v + 1);
		if (exec_sql(st, bump, err) < 0 || exec_sql(st, "COMMIT", err) < 0) {
			free(bump);
			exec_sql(st, "ROLLBACK", NULL);
			return -1;
		}
		free(bump);
	}
	return 0;
}

/* mkdir -p with mode 0700 for the directories that do not exist yet. */
static int make_parent_dirs(const char *path, char **err)
{
	char *dir = xstrdup(path);

	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			set_err_errno(err, "session store: creating %s", dir);
			free(dir);
			return -1;
		}
		*p = '/';
	}
	free(dir);
	return 0;
}

int store_open(const char *path, struct store **out, char **err)
{
	struct store *st = xcalloc(1, sizeof(*st));
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
		    SQLITE_OPEN_NOFOLLOW;     /* a planted link never redirects the store */

	*out = NULL;
	if (strcmp(path, ":memory:") != 0 && make_parent_dirs(path, err) < 0)
		goto fail;
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		db_err(st, err, path);
		goto fail;
	}
	if (strcmp(path, ":memory:") != 0)
		chmod(path, 0600);
	sqlite3_busy_timeout(st->db, 5000);
	sqlite3_extended_result_codes(st->db, 1);
	if (exec_sql(st, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
		     "PRAGMA foreign_keys = ON;", err) < 0)
		goto fail;
	if (migrate(st, err) < 0)
		goto fail;
	for (int i = 0; i < ST__COUNT; i++) {
		if (sqlite3_prepare_v3(st->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &st->stmt[i], NULL) != SQLITE_OK) {
			db_err(st, err, "preparing statements");
			goto fail;
		}
	}
	*out = st;
	return 0;
fail:
	store_close(st);
	return -1;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	sqlite3_close(st->db);
	free(st);
}

char *store_default_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (state && state[0] == '/')
		return xasprintf("%s/boxy/sessions.db", state);
	if (home && home[0] == '/')
		return xasprintf("%s/.local/state/boxy/sessions.db", home);
	return NULL;
}

int store_begin(struct store *st, char **err)
{
	return exec_sql(st, "BEGIN IMMEDIATE", err);
}

int store_commit(struct store *st, char **err)
{
	return exec_sql(st, "COMMIT", err);
}

void store_rollback(struct store *st)
{
	exec_sql(st, "ROLLBACK", NULL);
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

static void bind_opt_int(sqlite3_stmt *s, int i, int64_t v)
{
	if (v)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

/* Step a write statement to completion and reset it for the next use. */
static int step_done(struct store *st, sqlite3_stmt *s, char **err, const char *what)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return db_err(st, err, what);
	return 0;
}

int store_session_begin(struct store *st, const struct store_session *ss, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_SESSION_BEGIN];

	bind_text(s, 1, ss->id);
	bind_text(s, 2, ss->argv_json);
	bind_text(s, 3, ss->profile);
	bind_text(s, 4, ss->policy_json);
	bind_text(s, 5, ss->cwd);
	sqlite3_bind_int64(s, 6, ss->started_ms);
	bind_opt_int(s, 7, ss->memory);
	bind_opt_int(s, 8, ss->pids);
	bind_opt_int(s, 9, ss->cpus_milli);
	bind_opt_int(s, 10, ss->timeout_ms);
	bind_text(s, 11, ss->build);
	return step_done(st, s, err, "recording a session");
}

int store_session_end(struct store *st, const char *id, int64_t ended_ms, const char *state,
		      int exit_code, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_SESSION_END];

	bind_text(s, 1, id);
	sqlite3_bind_int64(s, 2, ended_ms);
	bind_text(s, 3, state);
	sqlite3_bind_int(s, 4, exit_code);
	return step_done(st, s, err, "recording a session's end");
}

int store_mark_lost(struct store *st, int64_t now_ms, int *count, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_MARK_LOST];

	sqlite3_bind_int64(s, 1, now_ms);
	if (step_done(st, s, err, "marking lost sessions") < 0)
		return -1;
	if (count)
		*count = sqlite3_changes(st->db);
	return 0;
}

int store_add_conn(struct store *st, const struct store_conn *c, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_CONN];

	bind_text(s, 1, c->session_id);
	sqlite3_bind_int64(s, 2, c->t_ms);
	bind_text(s, 3, c->proto);
	bind_text(s, 4, c->verdict);
	bind_text(s, 5, c->addr);
	sqlite3_bind_int(s, 6, c->port);
	bind_text(s, 7, c->host);
	bind_text(s, 8, c->sni);
	bind_text(s, 9, c->reason);
	bind_text(s, 10, c->layer);
	sqlite3_bind_int64(s, 11, c->up);
	sqlite3_bind_int64(s, 12, c->down);
	return step_done(st, s, err, "recording a connection");
}

int store_add_resolution(struct store *st, const struct store_resolution *r, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_RESOLUTION];

	bind_text(s, 1, r->session_id);
	sqlite3_bind_int64(s, 2, r->t_ms);
	bind_text(s, 3, r->name);
	bind_text(s, 4, r->addr);
	sqlite3_bind_int64(s, 5, r->ttl);
	bind_text(s, 6, r->verdict);
	bind_text(s, 7, r->reason);
	return step_done(st, s, err, "recording a resolution");
}

int store_add_decision(struct store *st, const struct store_decision *d, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_DECISION];

	bind_text(s, 1, d->session_id);
	sqlite3_bind_int64(s, 2, d->t_ms);
	bind_text(s, 3, d->layer);
	bind_text(s, 4, d->verdict);
	bind_text(s, 5, d->subject);
	bind_text(s, 6, d->reason);
	return step_done(st, s, err, "recording a decision");
}

int store_prune(struct store *st, int64_t cutoff_ms, int *count, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_PRUNE];

	sqlite3_bind_int64(s, 1, cutoff_ms);
	if (step_done(st, s, err, "pruning sessions") < 0)
		return -1;
	if (count)
		*count = sqlite3_changes(st->db);
	return 0;
}

static char *col_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? xstrdup((const char *)t) : NULL;
}

int store_sessions_find(struct store *st, const char *prefix, bool running_only,
			struct store_sessions *out, char **err)
{
	sqlite3_stmt *s = st->stmt[running_only ? ST_FIND_RUNNING : ST_FIND];
	int rc;

	out->v = NULL;
	out->n = 0;
	bind_text(s, 1, prefix);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct store_session *r = xappend(&out->v, &out->n, sizeof(*out->v));

		r->id = col_dup(s, 0);
		r->argv_json = col_dup(s, 1);
		r->profile = col_dup(s, 2);
		r->policy_json = col_dup(s, 3);
		r->cwd = col_dup(s, 4);
		r->started_ms = sqlite3_column_int64(s, 5);
		r->ended_ms = sqlite3_column_int64(s, 6);
		r->state = col_dup(s, 7);
		r->exit_code = sqlite3_column_int(s, 8);
		r->memory = sqlite3_column_int64(s, 9);
		r->pids = sqlite3_column_int64(s, 10);
		r->cpus_milli = sqlite3_column_int64(s, 11);
		r->timeout_ms = sqlite3_column_int64(s, 12);
		r->build = col_dup(s, 13);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE) {
		store_sessions_free(out);
		return db_err(st, err, "reading sessions");
	}
	return 0;
}

void store_sessions_free(struct store_sessions *ss)
{
	for (size_t i = 0; i < ss->n; i++) {
		struct store_session *r = &ss->v[i];

		free(r->id);
		free(r->argv_json);
		free(r->profile);
		free(r->policy_json);
		free(r->cwd);
		free(r->state);
		free(r->build);
	}
	free(ss->v);
	ss->v = NULL;
	ss->n = 0;
}

int store_exec(struct store *st, const char *sql,
	       int (*cb)(void *ctx, int ncol, char **vals, char **names), void *ctx, char **err)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, cb, ctx, &msg) != SQLITE_OK) {
		set_err(err, "session store: %s", msg ? msg : sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Embed text that is already JSON (written by boxy itself); anything else as a string. */
static void json_raw_or_str(struct jbuf *b, const char *key, const char *text)
{
	json_key(b, key);
	if (text && (text[0] == '[' || text[0] == '{')) {
		if (b->need_comma)
			jbuf_raw(b, ",");
		jbuf_raw_json(b, text);         /* re-escaped: a row an older build wrote */
		b->need_comma = true;
	} else {
		json_str(b, text);
	}
}

static void session_fields(struct jbuf *b, const struct store_session *s)
{
	json_kv_str(b, "id", s->id);
	json_raw_or_str(b, "argv", s->argv_json);
	json_kv_str(b, "profile", s->profile);
	json_kv_str(b, "cwd", s->cwd);
	json_kv_str(b, "state", s->state);
	json_kv_int(b, "started_ms", s->started_ms);
	if (s->ended_ms)
		json_kv_int(b, "ended_ms", s->ended_ms);
	if (s->ended_ms && strcmp(s->state, "lost") != 0)
		json_kv_int(b, "exit_code", s->exit_code);
	json_kv_str(b, "build", s->build);
	json_raw_or_str(b, "policy", s->policy_json);
}

char *store_session_json(const struct store_session *s)
{
	struct jbuf b;

	jbuf_init(&b);
	json_obj_begin(&b);
	session_fields(&b, s);
	json_obj_end(&b);
	return jbuf_steal(&b);
}

/* Append each row of a query as an object keyed by column name. */
static int rows_json(struct store *st, struct jbuf *b, const char *key, const char *sql,
		     const char *id, char **err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_err(st, err, key);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	json_key(b, key);
	json_arr_begin(b);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_obj_begin(b);
		for (int i = 0; i < sqlite3_column_count(s); i++) {
			const char *name = sqlite3_column_name(s, i);

			switch (sqlite3_column_type(s, i)) {
			case SQLITE_INTEGER:
				json_kv_int(b, name, sqlite3_column_int64(s, i));
				break;
			case SQLITE_NULL:
				json_key(b, name);
				json_null(b);
				break;
			default:
				json_kv_str(b, name, (const char *)sqlite3_column_text(s, i));
				break;
			}
		}
		json_obj_end(b);
	}
	json_arr_end(b);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_err(st, err, key);
	return 0;
}

int store_show_json(struct store *st, const char *prefix, char **json, char **err)
{
	struct store_sessions ss;
	struct jbuf b;
	const char *id;
	int rc = -1;

	*json = NULL;
	if (store_sessions_find(st, prefix, false, &ss, err) < 0)
		return -1;
	if (ss.n == 0) {
		set_err(err, "no session '%s'", prefix);
		goto out;
	}
	if (ss.n > 1 && strcmp(ss.v[0].id, prefix) != 0) {
		set_err(err, "session id '%s' is ambiguous: it matches %zu sessions", prefix, ss.n);
		goto out;
	}
	id = ss.v[0].id;
	jbuf_init(&b);
	json_obj_begin(&b);
	session_fields(&b, &ss.v[0]);
	if (rows_json(st, &b, "destinations",
		      "SELECT destination, conns, denied, addrs, sent, received FROM destinations"
		      " WHERE session_id = ?1 ORDER BY conns DESC, destination", id, err) < 0 ||
	    rows_json(st, &b, "denials",
		      "SELECT t_ms, layer, what, subject, reason FROM denials"
		      " WHERE session_id = ?1 ORDER BY t_ms", id, err) < 0 ||
	    rows_json(st, &b, "decisions",
		      "SELECT t_ms, layer, verdict, subject, reason FROM decisions"
		      " WHERE session_id = ?1 ORDER BY t_ms, id", id, err) < 0) {
		jbuf_free(&b);
		goto out;
	}
	json_obj_end(&b);
	*json = jbuf_steal(&b);
	rc = 0;
out:
	store_sessions_free(&ss);
	return rc;
}

/*
 * Every host directory a recorded session could write: its work directory
 * and its --rw and mkdir mounts, read from the policy each session row
 * keeps (the policy column, runspec_to_json: "workdir", "mounts"[].kind/src), newest first,
 * each once. Links planted there by one run must not carry a later run's
 * sources or output files out (path-guard.h). A session pruned from the
 * store is forgotten here too.
 */
int store_writable_roots(struct store *st, void (*cb)(void *ctx, const char *path), void *ctx,
			 char **err)
{
	static const char sql[] =
		"SELECT path, MAX(started_ms) AS t FROM ("
		" SELECT json_extract(policy, '$.workdir') AS path, started_ms FROM sessions"
		"  WHERE json_valid(policy)"
		" UNION ALL"
		" SELECT json_extract(m.value, '$.src'), s.started_ms"
		"  FROM sessions AS s, json_each(s.policy, '$.mounts') AS m"
		"  WHERE json_valid(s.policy)"
		"   AND json_extract(m.value, '$.kind') IN ('rw', 'mkdir')"
		") WHERE typeof(path) = 'text' AND substr(path, 1, 1) = '/'"
		" GROUP BY path ORDER BY t DESC, path";
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_err(st, err, "writable roots");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		cb(ctx, (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_err(st, err, "writable roots");
	return 0;
}
