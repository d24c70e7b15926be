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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sqlite3.h>

#include "common/chain.h"
#include "common/event.h"
#include "common/json.h"
#include "store/store.h"
#include "store/store-internal.h"
#include "common/util.h"

/*
 * The chains (doc/verify.md): each decision row's hash, and per session the
 * audit log's head and length and the signed seal. A step of its own, named,
 * so that it can be ordered against other steps when branches meet.
 */
#define MIGRATION_CHAINS \
	"ALTER TABLE decisions ADD COLUMN hash TEXT;" \
	"CREATE TABLE chains (" \
	"  session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE," \
	"  audit_lines INTEGER NOT NULL DEFAULT 0," \
	"  audit_head  TEXT," \
	"  seal        TEXT" \
	");"

/*
 * What changed since last time (doc/store.md): the digest of the work
 * directory's lockfiles when the run began, and the session it is compared
 * with — the previous completed run of the same command in the same
 * directory, one with the same lockfiles first. A step of its own, named, so
 * that it can be ordered against other steps when branches meet.
 */
#define MIGRATION_BASELINE \
	"ALTER TABLE sessions ADD COLUMN lockfile TEXT;" \
	"ALTER TABLE sessions ADD COLUMN baseline TEXT;" \
	"CREATE INDEX sessions_command ON sessions(cwd, argv, started_ms);"

/*
 * Where each session's --audit-log was (doc/verify.md): the file's path as the
 * daemon resolved it when the run began, so that `boxy verify FILE` can tell
 * a file some session wrote to but whose lines are all gone (the payload
 * renamed another log over it), and `boxy verify ID` can open the session's
 * log. A step of its own, named, so that it can be ordered against other
 * steps when branches meet.
 */
#define MIGRATION_AUDIT_PATH \
	"ALTER TABLE chains ADD COLUMN audit_path TEXT;" \
	"CREATE INDEX chains_audit_path ON chains(audit_path);"

/*
 * The HTTP requests of gated connections (doc/http-rules.md): one row per
 * request, counted like every network row past STORE_AGG_FIRST of a key and
 * capped with them (STORE_SESSION_ROWS); refused ones join the denials.
 * A step of its own, named, so that it can be ordered against other steps
 * when branches meet.
 */
#define MIGRATION_HTTP \
	"CREATE TABLE requests (" \
	"  id          INTEGER PRIMARY KEY," \
	"  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE," \
	"  t_ms        INTEGER NOT NULL," \
	"  t_rel_ms    INTEGER NOT NULL," \
	"  seq         INTEGER NOT NULL," \
	"  method      TEXT," \
	"  host        TEXT," \
	"  port        INTEGER," \
	"  path        TEXT," \
	"  query       TEXT," \
	"  addr        TEXT," \
	"  verdict     TEXT NOT NULL," \
	"  reason      TEXT," \
	"  layer       TEXT NOT NULL," \
	"  rule        INTEGER," \
	"  rule_text   TEXT," \
	"  count       INTEGER NOT NULL DEFAULT 1," \
	"  last_ms     INTEGER NOT NULL" \
	");" \
	"CREATE INDEX requests_session ON requests(session_id, t_ms);" \
	"DROP VIEW denials;" \
	"CREATE VIEW denials AS" \
	"  SELECT session_id, t_ms, layer, 'connect' AS what," \
	"         proto || '://' || CASE WHEN host IS NULL AND instr(addr, ':') > 0" \
	"           THEN '[' || addr || ']' ELSE coalesce(host, addr) END || ':' || port AS subject," \
	"         reason, t_rel_ms, count, last_ms" \
	"    FROM connections WHERE verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT session_id, t_ms, coalesce(layer, 'net.dns'), 'resolve', name, reason, t_rel_ms," \
	"         count, last_ms" \
	"    FROM resolutions WHERE verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT session_id, t_ms, layer, 'policy', subject, reason, t_rel_ms, count, last_ms" \
	"    FROM decisions WHERE verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT session_id, t_ms, layer, 'request'," \
	"         coalesce(method, 'HTTP') || ' ' || coalesce(host, addr, '-') ||" \
	"         CASE WHEN port IS NULL OR port IN (80, 443) THEN '' ELSE ':' || port END ||" \
	"         coalesce(path, '')," \
	"         reason, t_rel_ms, count, last_ms" \
	"    FROM requests WHERE verdict = 'deny';"

/*
 * Who did it (doc/attribution.md): on every row of the network (connections,
 * resolutions, HTTP requests) and every decision, the process that made it — pid as the sandbox sees it (NULL: not
 * looked for; 0: looked for and not found, "unknown"), comm, argv0 and the
 * command line — and the package a package manager ran it for, with the
 * script, the outer package whose script ran that manager (via), and
 * whether the package is only the process's own claim. The packages view
 * groups a session's record by package. A step of its own, named, so that it
 * can be ordered against other steps when branches meet.
 */
#define MIGRATION_ATTRIBUTION \
	"ALTER TABLE connections ADD COLUMN pid INTEGER;" \
	"ALTER TABLE connections ADD COLUMN comm TEXT;" \
	"ALTER TABLE connections ADD COLUMN argv0 TEXT;" \
	"ALTER TABLE connections ADD COLUMN cmdline TEXT;" \
	"ALTER TABLE connections ADD COLUMN package TEXT;" \
	"ALTER TABLE connections ADD COLUMN package_version TEXT;" \
	"ALTER TABLE connections ADD COLUMN package_script TEXT;" \
	"ALTER TABLE connections ADD COLUMN package_via TEXT;" \
	"ALTER TABLE connections ADD COLUMN package_claimed INTEGER;" \
	"ALTER TABLE resolutions ADD COLUMN pid INTEGER;" \
	"ALTER TABLE resolutions ADD COLUMN comm TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN argv0 TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN cmdline TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN package TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN package_version TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN package_script TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN package_via TEXT;" \
	"ALTER TABLE resolutions ADD COLUMN package_claimed INTEGER;" \
	"ALTER TABLE decisions ADD COLUMN pid INTEGER;" \
	"ALTER TABLE decisions ADD COLUMN comm TEXT;" \
	"ALTER TABLE decisions ADD COLUMN argv0 TEXT;" \
	"ALTER TABLE decisions ADD COLUMN cmdline TEXT;" \
	"ALTER TABLE decisions ADD COLUMN package TEXT;" \
	"ALTER TABLE decisions ADD COLUMN package_version TEXT;" \
	"ALTER TABLE decisions ADD COLUMN package_script TEXT;" \
	"ALTER TABLE decisions ADD COLUMN package_via TEXT;" \
	"ALTER TABLE decisions ADD COLUMN package_claimed INTEGER;" \
	"ALTER TABLE requests ADD COLUMN pid INTEGER;" \
	"ALTER TABLE requests ADD COLUMN comm TEXT;" \
	"ALTER TABLE requests ADD COLUMN argv0 TEXT;" \
	"ALTER TABLE requests ADD COLUMN cmdline TEXT;" \
	"ALTER TABLE requests ADD COLUMN package TEXT;" \
	"ALTER TABLE requests ADD COLUMN package_version TEXT;" \
	"ALTER TABLE requests ADD COLUMN package_script TEXT;" \
	"ALTER TABLE requests ADD COLUMN package_via TEXT;" \
	"ALTER TABLE requests ADD COLUMN package_claimed INTEGER;" \
	"DROP VIEW denials;" \
	"CREATE VIEW denials AS" \
	"  SELECT session_id, t_ms, layer, 'connect' AS what," \
	"         proto || '://' || CASE WHEN host IS NULL AND instr(addr, ':') > 0" \
	"           THEN '[' || addr || ']' ELSE coalesce(host, addr) END || ':' || port AS subject," \
	"         reason, t_rel_ms, count, last_ms, " \
	"         pid, comm, argv0, cmdline, package, package_version, package_script," \
	"         package_via, package_claimed" \
	"    FROM connections WHERE verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT session_id, t_ms, coalesce(layer, 'net.dns'), 'resolve', name, reason, t_rel_ms," \
	"         count, last_ms, " \
	"         pid, comm, argv0, cmdline, package, package_version, package_script," \
	"         package_via, package_claimed" \
	"    FROM resolutions WHERE verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT session_id, t_ms, layer, 'policy', subject, reason, t_rel_ms, count, last_ms, " \
	"         pid, comm, argv0, cmdline, package, package_version, package_script," \
	"         package_via, package_claimed" \
	"    FROM decisions WHERE verdict = 'deny'" \
	"  UNION ALL" \
	"  SELECT session_id, t_ms, layer, 'request'," \
	"         coalesce(method, 'HTTP') || ' ' || coalesce(host, addr, '-') ||" \
	"         CASE WHEN port IS NULL OR port IN (80, 443) THEN '' ELSE ':' || port END ||" \
	"         coalesce(path, '')," \
	"         reason, t_rel_ms, count, last_ms, " \
	"         pid, comm, argv0, cmdline, package, package_version, package_script," \
	"         package_via, package_claimed" \
	"    FROM requests WHERE verdict = 'deny';" \
	"CREATE VIEW packages AS" \
	"  SELECT session_id, package, package_version AS version, package_script AS script," \
	"         package_claimed AS claimed, package_via AS via," \
	"         CASE WHEN package IS NULL THEN comm END AS comm," \
	"         sum(CASE WHEN what = 'connect' THEN n ELSE 0 END) AS conns," \
	"         sum(CASE WHEN verdict = 'deny' THEN n ELSE 0 END) AS denied," \
	"         sum(CASE WHEN what = 'resolve' THEN n ELSE 0 END) AS lookups," \
	"         count(DISTINCT dest) AS destinations," \
	"         group_concat(DISTINCT dest) AS dest_list" \
	"  FROM (" \
	"    SELECT session_id, package, package_version, package_script, package_claimed," \
	"           package_via, comm, 'connect' AS what, verdict, count AS n," \
	"           CASE WHEN host IS NULL AND sni IS NULL AND instr(addr, ':') > 0" \
	"             THEN '[' || addr || ']' ELSE coalesce(host, sni, addr) END || ':' || port" \
	"             AS dest" \
	"      FROM connections WHERE pid IS NOT NULL" \
	"    UNION ALL" \
	"    SELECT session_id, package, package_version, package_script, package_claimed," \
	"           package_via, comm, 'resolve', verdict, count," \
	"           CASE WHEN verdict = 'deny' AND addr IS NULL THEN name END" \
	"      FROM resolutions WHERE pid IS NOT NULL" \
	"    UNION ALL" \
	"    SELECT session_id, package, package_version, package_script, package_claimed," \
	"           package_via, comm, 'policy', verdict, count, NULL" \
	"      FROM decisions WHERE pid IS NOT NULL" \
	"    UNION ALL" \
	"    SELECT session_id, package, package_version, package_script, package_claimed," \
	"           package_via, comm, 'request', verdict, count, NULL" \
	"      FROM requests WHERE pid IS NOT NULL" \
	"  ) GROUP BY session_id, package, package_version, package_script, package_claimed," \
	"    package_via, CASE WHEN package IS NULL THEN comm END;"

/*
 * A frozen session (doc/react.md): when it was frozen and the alert that froze
 * it, NULL while it is not. The state stays 'running' — every rule keyed on a
 * running session (never pruned, marked lost when its daemon dies, listed by
 * boxy ps) holds for a frozen one — and readers show 'frozen' where
 * frozen_ms is set on a running session (STATE_SHOWN). A session that ended
 * while frozen keeps both. A step of its own, named, so that it can be
 * ordered against other steps when branches meet.
 */
#define MIGRATION_FREEZE \
	"ALTER TABLE sessions ADD COLUMN frozen_ms INTEGER;" \
	"ALTER TABLE sessions ADD COLUMN frozen_reason TEXT;"

/*
 * The CI gate's verdict on a run (doc/ci.md): the words --fail-on failed on,
 * as the client that judged the run reported them after its end. A run whose
 * gate failed is never a baseline, so running a failed job again compares it
 * with the last run that passed, and a new destination stays new until a
 * person lets a run pass. A step of its own, named, so that it can be
 * ordered against other steps when branches meet.
 */
#define MIGRATION_GATE \
	"ALTER TABLE sessions ADD COLUMN gate TEXT;"

/*
 * The directories some sandbox could write (store_writable_roots), kept in a
 * table of their own: reading them from every session's policy JSON at each
 * start cost 7 ms with 1,000 sessions in the store and grew with every run
 * (21 ms at 10,000). `session_roots` holds each session's roots (its work
 * directory, its rw and mkdir mounts: what the policy names, absolute paths
 * only), filled by a trigger when the session's row is written and deleted
 * with it; `roots` holds each distinct path once with the latest session's
 * start, kept by triggers on `session_roots`. A step of its own, named, so
 * that it can be ordered against other steps when branches meet.
 */
#define MIGRATION_ROOTS \
	"CREATE TABLE session_roots (" \
	"  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE," \
	"  path        TEXT NOT NULL," \
	"  started_ms  INTEGER NOT NULL," \
	"  PRIMARY KEY (session_id, path)" \
	") WITHOUT ROWID;" \
	"CREATE INDEX session_roots_path ON session_roots(path, started_ms);" \
	"CREATE TABLE roots (" \
	"  path        TEXT PRIMARY KEY," \
	"  started_ms  INTEGER NOT NULL" \
	") WITHOUT ROWID;" \
	"CREATE TRIGGER session_roots_added AFTER INSERT ON session_roots BEGIN" \
	"  INSERT INTO roots (path, started_ms) VALUES (NEW.path, NEW.started_ms)" \
	"   ON CONFLICT (path) DO UPDATE SET started_ms = max(started_ms, excluded.started_ms);" \
	"END;" \
	"CREATE TRIGGER session_roots_dropped AFTER DELETE ON session_roots BEGIN" \
	"  DELETE FROM roots WHERE path = OLD.path" \
	"   AND NOT EXISTS (SELECT 1 FROM session_roots WHERE path = OLD.path);" \
	"  UPDATE roots SET started_ms =" \
	"   (SELECT max(started_ms) FROM session_roots WHERE path = OLD.path)" \
	"   WHERE path = OLD.path;" \
	"END;" \
	"CREATE TRIGGER sessions_roots AFTER INSERT ON sessions WHEN json_valid(NEW.policy) BEGIN" \
	"  INSERT OR IGNORE INTO session_roots (session_id, path, started_ms)" \
	"   SELECT NEW.id, p, NEW.started_ms FROM (" \
	"    SELECT json_extract(NEW.policy, '$.workdir') AS p" \
	"    UNION ALL" \
	"    SELECT CASE WHEN m.type = 'object' THEN json_extract(m.value, '$.src') END" \
	"     FROM json_each(NEW.policy, '$.mounts') AS m" \
	"     WHERE CASE WHEN m.type = 'object' THEN json_extract(m.value, '$.kind') END" \
	"      IN ('rw', 'mkdir'))" \
	"   WHERE typeof(p) = 'text' AND substr(p, 1, 1) = '/';" \
	"END;" \
	"INSERT OR IGNORE INTO session_roots (session_id, path, started_ms)" \
	" SELECT s.id, r.path, s.started_ms FROM sessions AS s, (" \
	"  SELECT id, json_extract(policy, '$.workdir') AS path FROM sessions" \
	"   WHERE json_valid(policy)" \
	"  UNION ALL" \
	"  SELECT s2.id, CASE WHEN m.type = 'object' THEN json_extract(m.value, '$.src') END" \
	"   FROM sessions AS s2, json_each(CASE WHEN json_valid(s2.policy) THEN s2.policy" \
	"    ELSE '{}' END, '$.mounts') AS m" \
	"   WHERE json_valid(s2.policy)" \
	"    AND CASE WHEN m.type = 'object' THEN json_extract(m.value, '$.kind') END" \
	"     IN ('rw', 'mkdir')) AS r" \
	" WHERE r.id = s.id AND typeof(r.path) = 'text' AND substr(r.path, 1, 1) = '/';"

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
	/*
	 * 1 → 2: one time unit (t_ms Unix ms everywhere, t_rel_ms beside it),
	 * counted rows (count, last_ms) and the per-session overflow, the layer
	 * of a resolution, one row per answered address, one denial per refused
	 * flow, `boxy stop` an action. Version 1's rows are carried forward.
	 */
	"ALTER TABLE sessions ADD COLUMN overflow INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sessions ADD COLUMN overflow_denied INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE connections ADD COLUMN t_rel_ms INTEGER;"
	"ALTER TABLE connections ADD COLUMN count INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE connections ADD COLUMN last_ms INTEGER;"
	"ALTER TABLE resolutions ADD COLUMN t_rel_ms INTEGER;"
	"ALTER TABLE resolutions ADD COLUMN count INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE resolutions ADD COLUMN last_ms INTEGER;"
	"ALTER TABLE resolutions ADD COLUMN layer TEXT;"
	"ALTER TABLE decisions ADD COLUMN t_rel_ms INTEGER;"
	"ALTER TABLE decisions ADD COLUMN count INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE decisions ADD COLUMN last_ms INTEGER;"
	/* Version 1 wrote connections' and resolutions' t_ms relative to the session's start. */
	"UPDATE connections SET t_rel_ms = t_ms, t_ms = t_ms + coalesce("
	"  (SELECT started_ms FROM sessions s WHERE s.id = connections.session_id), 0);"
	"UPDATE connections SET last_ms = t_ms;"
	"UPDATE resolutions SET t_rel_ms = t_ms, t_ms = t_ms + coalesce("
	"  (SELECT started_ms FROM sessions s WHERE s.id = resolutions.session_id), 0),"
	"  layer = 'net.dns';"
	"UPDATE resolutions SET last_ms = t_ms;"
	"UPDATE decisions SET t_rel_ms = max(0, t_ms - coalesce("
	"  (SELECT started_ms FROM sessions s WHERE s.id = decisions.session_id), t_ms)),"
	"  last_ms = t_ms;"
	/* Version 1 put a resolution's addresses in its reason, space-separated: a row each. */
	"INSERT INTO resolutions (session_id, t_ms, t_rel_ms, name, addr, ttl, verdict, reason,"
	"  layer, count, last_ms)"
	"  WITH RECURSIVE split(src, one, rest) AS ("
	"    SELECT id, NULL, reason || ' ' FROM resolutions WHERE verdict = 'allow'"
	"      AND addr IS NULL AND reason IS NOT NULL AND reason NOT IN ('', 'NXDOMAIN', 'SERVFAIL')"
	"    UNION ALL"
	"    SELECT src, substr(rest, 1, instr(rest, ' ') - 1), substr(rest, instr(rest, ' ') + 1)"
	"      FROM split WHERE rest <> '')"
	"  SELECT r.session_id, r.t_ms, r.t_rel_ms, r.name, split.one, r.ttl, 'allow', NULL,"
	"    'net.dns', 1, r.t_ms"
	"  FROM split JOIN resolutions r ON r.id = split.src"
	"  WHERE split.one IS NOT NULL AND split.one <> '' ORDER BY r.id;"
	"DELETE FROM resolutions WHERE verdict = 'allow' AND addr IS NULL AND reason IS NOT NULL"
	"  AND reason NOT IN ('', 'NXDOMAIN', 'SERVFAIL');"
	/* Refused names and dropped answers were decisions only: resolutions now. */
	"INSERT INTO resolutions (session_id, t_ms, t_rel_ms, name, addr, ttl, verdict, reason,"
	"  layer, count, last_ms)"
	"  SELECT session_id, t_ms, t_rel_ms, subject,"
	"    CASE WHEN reason LIKE 'answer % dropped %'"
	"      THEN substr(reason, 8, instr(reason, ' dropped') - 8) END,"
	"    NULL, 'deny', reason, layer, 1, t_ms"
	"  FROM decisions WHERE verdict = 'deny' AND layer IN ('net.dns', 'net.ip')"
	"    AND subject IS NOT NULL AND subject NOT LIKE '%://%' ORDER BY id;"
	"DELETE FROM decisions WHERE verdict = 'deny' AND layer IN ('net.dns', 'net.ip')"
	"  AND subject IS NOT NULL AND subject NOT LIKE '%://%';"
	/* A refused flow was a connection row and a decision: the connection row stays. */
	"DELETE FROM decisions WHERE verdict = 'deny' AND subject LIKE '%://%'"
	"  AND layer IN ('net.ip', 'net.dns', 'net.sni', 'upstream')"
	"  AND EXISTS (SELECT 1 FROM connections c WHERE c.session_id = decisions.session_id"
	"    AND c.verdict = 'deny' AND c.layer IS decisions.layer"
	"    AND c.reason IS decisions.reason);"
	"UPDATE decisions SET verdict = 'action'"
	"  WHERE layer = 'session' AND subject = 'stop' AND verdict = 'deny';"
	"UPDATE resolutions SET ttl = NULL WHERE addr IS NULL OR verdict = 'deny';"
	"DROP VIEW destinations; DROP VIEW denials; DROP VIEW session_summary;"
	"CREATE VIEW destinations AS"
	"  SELECT session_id,"
	"         coalesce(host, addr) AS destination,"
	"         sum(count) AS conns,"
	"         sum(CASE WHEN verdict = 'deny' THEN count ELSE 0 END) AS denied,"
	"         count(DISTINCT addr) AS addrs,"
	"         sum(up) AS sent,"
	"         sum(down) AS received"
	"  FROM connections GROUP BY session_id, destination;"
	"CREATE VIEW denials AS"
	"  SELECT session_id, t_ms, layer, 'connect' AS what,"
	"         proto || '://' || CASE WHEN host IS NULL AND instr(addr, ':') > 0"
	"           THEN '[' || addr || ']' ELSE coalesce(host, addr) END || ':' || port AS subject,"
	"         reason, t_rel_ms, count, last_ms"
	"    FROM connections WHERE verdict = 'deny'"
	"  UNION ALL"
	"  SELECT session_id, t_ms, coalesce(layer, 'net.dns'), 'resolve', name, reason, t_rel_ms,"
	"         count, last_ms"
	"    FROM resolutions WHERE verdict = 'deny'"
	"  UNION ALL"
	"  SELECT session_id, t_ms, layer, 'policy', subject, reason, t_rel_ms, count, last_ms"
	"    FROM decisions WHERE verdict = 'deny';"
	"CREATE VIEW session_summary AS"
	"  SELECT s.id, substr(s.id, 1, 8) AS short_id, s.state, s.exit_code, s.started_ms,"
	"         s.ended_ms, s.argv, s.cwd,"
	"         (SELECT coalesce(sum(count), 0) FROM connections c WHERE c.session_id = s.id)"
	"           AS conns,"
	"         (SELECT coalesce(sum(count), 0) FROM denials d WHERE d.session_id = s.id)"
	"           + s.overflow_denied AS denied,"
	"         (SELECT coalesce(sum(up), 0) FROM connections c WHERE c.session_id = s.id) AS sent,"
	"         (SELECT coalesce(sum(down), 0) FROM connections c WHERE c.session_id = s.id)"
	"           AS received,"
	"         s.overflow"
	"  FROM sessions s;",
	/* 2 → 3: the chains. */
	MIGRATION_CHAINS,
	/* 3 → 4: the baseline of each run. */
	MIGRATION_BASELINE,
	/* 4 → 5: the path of each session's audit log. */
	MIGRATION_AUDIT_PATH,
	/* 5 → 6: the HTTP requests of gated connections. */
	MIGRATION_HTTP,
	/* 6 → 7: who did it. */
	MIGRATION_ATTRIBUTION,
	/* 7 → 8: frozen sessions. */
	MIGRATION_FREEZE,
	/* 8 → 9: the writable roots, kept instead of read from every policy. */
	MIGRATION_ROOTS,
	/* 9 → 10: the gate's verdict; a failed one is never a baseline. */
	MIGRATION_GATE,
};

/* A row's who (STORE_WHO_COLUMNS, bind_who's order) as parameters: SQLite numbers each
 * bare "?" one past the largest so far (n, the first's number, is for the reader). */
#define WHO_PARAMS(n) "?,?,?,?,?,?,?,?,?"

enum stmt_id {
	ST_SESSION_BEGIN,
	ST_SESSION_END,
	ST_MARK_LOST,
	ST_CONN,
	ST_RESOLUTION,
	ST_DECISION,
	ST_PRUNE,
	ST_FIND,
	ST_FIND_PREFIX,
	ST_FIND_RUNNING,
	ST_BUMP_CONN,
	ST_BUMP_RESOLUTION,
	ST_BUMP_DECISION,
	ST_OVERFLOW,
	ST_PRUNE_PREVIEW,
	ST_NAME_CONN,
	ST_REQUEST,
	ST_BUMP_REQUEST,
	ST_FROZEN,
	ST_GATE,
	ST__COUNT,
};

/* Every statement boxy runs, prepared once, in one table. */
static const char *const stmt_sql[ST__COUNT] = {
	[ST_SESSION_BEGIN] =
		"INSERT INTO sessions (id, argv, profile, policy, cwd, started_ms, state,"
		" memory, pids, cpus_milli, timeout_ms, build, lockfile, baseline)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10, ?11, ?12,"
		"  (SELECT p.id FROM sessions p WHERE p.cwd = ?5 AND p.argv = ?2"
		"   AND p.state = 'exited' AND p.gate IS NULL AND p.id <> ?1"
		"   ORDER BY (p.lockfile IS ?12) DESC, p.started_ms DESC LIMIT 1))",
	[ST_SESSION_END] =
		"UPDATE sessions SET ended_ms = ?2, state = ?3, exit_code = ?4 WHERE id = ?1",
	[ST_MARK_LOST] =
		"UPDATE sessions SET state = 'lost', ended_ms = ?1 WHERE state = 'running'",
	[ST_CONN] =
		"INSERT INTO connections (session_id, t_ms, proto, verdict, addr, port, host, sni,"
		" reason, layer, up, down, t_rel_ms, count, last_ms, " STORE_WHO_COLUMNS ")"
		" VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,1,?2," WHO_PARAMS(14) ")",
	[ST_RESOLUTION] =
		"INSERT INTO resolutions (session_id, t_ms, name, addr, ttl, verdict, reason, layer,"
		" t_rel_ms, count, last_ms, " STORE_WHO_COLUMNS ")"
		" VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,1,?2," WHO_PARAMS(10) ")",
	[ST_DECISION] =
		"INSERT INTO decisions (session_id, t_ms, layer, verdict, subject, reason, t_rel_ms,"
		" count, last_ms, hash, " STORE_WHO_COLUMNS ")"
		" VALUES (?1,?2,?3,?4,?5,?6,?7,1,?2,?8," WHO_PARAMS(9) ")",
	[ST_PRUNE] =
		"DELETE FROM sessions WHERE state <> 'running' AND ended_ms IS NOT NULL"
		" AND ended_ms < ?1",
	/* The same condition as ST_PRUNE: what a prune would delete. */
	[ST_PRUNE_PREVIEW] =
		"SELECT id FROM sessions WHERE state <> 'running' AND ended_ms IS NOT NULL"
		" AND ended_ms < ?1 ORDER BY ended_ms",
	[ST_FIND] =
		"SELECT id, argv, profile, policy, cwd, started_ms, coalesce(ended_ms, 0),"
		" " STORE_STATE_SHOWN ","
		" coalesce(exit_code, -1), coalesce(memory, 0), coalesce(pids, 0),"
		" coalesce(cpus_milli, 0), coalesce(timeout_ms, 0), build, lockfile, baseline,"
		" coalesce(frozen_ms, 0), frozen_reason, gate"
		" FROM sessions WHERE ?1 IS NULL OR substr(id, 1, length(?1)) = ?1"
		" ORDER BY started_ms DESC, id",
	/*
	 * ST_FIND for one prefix, through the primary key: every id with the
	 * prefix sorts at or after it and before it with '~' appended (an id is
	 * 16 hex digits, all below '~'). ST_FIND's test scans every session, and
	 * the daemon looks two up at every session's end.
	 */
	[ST_FIND_PREFIX] =
		"SELECT id, argv, profile, policy, cwd, started_ms, coalesce(ended_ms, 0),"
		" " STORE_STATE_SHOWN ","
		" coalesce(exit_code, -1), coalesce(memory, 0), coalesce(pids, 0),"
		" coalesce(cpus_milli, 0), coalesce(timeout_ms, 0), build, lockfile, baseline,"
		" coalesce(frozen_ms, 0), frozen_reason, gate"
		" FROM sessions WHERE id >= ?1 AND id < ?1 || '~' AND substr(id, 1, length(?1)) = ?1"
		" ORDER BY started_ms DESC, id",
	[ST_FIND_RUNNING] =
		"SELECT id, argv, profile, policy, cwd, started_ms, coalesce(ended_ms, 0),"
		" " STORE_STATE_SHOWN ","
		" coalesce(exit_code, -1), coalesce(memory, 0), coalesce(pids, 0),"
		" coalesce(cpus_milli, 0), coalesce(timeout_ms, 0), build, lockfile, baseline,"
		" coalesce(frozen_ms, 0), frozen_reason, gate"
		" FROM sessions WHERE (?1 IS NULL OR substr(id, 1, length(?1)) = ?1)"
		" AND state = 'running'"
		" ORDER BY started_ms DESC, id",
	[ST_BUMP_CONN] =
		"UPDATE connections SET count = count + ?2, last_ms = max(last_ms, ?3),"
		" up = up + ?4, down = down + ?5 WHERE id = ?1",
	[ST_BUMP_RESOLUTION] =
		"UPDATE resolutions SET count = count + ?2, last_ms = max(last_ms, ?3) WHERE id = ?1",
	[ST_BUMP_DECISION] =
		"UPDATE decisions SET count = count + ?2, last_ms = max(last_ms, ?3) WHERE id = ?1",
	[ST_OVERFLOW] =
		"UPDATE sessions SET overflow = ?2, overflow_denied = ?3 WHERE id = ?1",
	[ST_NAME_CONN] =
		"UPDATE connections SET sni = ?2, host = coalesce(?3, host) WHERE id = ?1",
	[ST_REQUEST] =
		"INSERT INTO requests (session_id, t_ms, t_rel_ms, seq, method, host, port, path,"
		" query, addr, verdict, reason, layer, rule, rule_text, count, last_ms, "
		STORE_WHO_COLUMNS ")"
		" VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,1,?2," WHO_PARAMS(16) ")",
	[ST_BUMP_REQUEST] =
		"UPDATE requests SET count = count + ?2, last_ms = max(last_ms, ?3) WHERE id = ?1",
	[ST_FROZEN] =
		"UPDATE sessions SET frozen_ms = ?2, frozen_reason = ?3 WHERE id = ?1",
	/* Once: a verdict is not rewritten. */
	[ST_GATE] =
		"UPDATE sessions SET gate = ?2 WHERE id = ?1 AND gate IS NULL",
};

enum row_table { ROW_CONN, ROW_RESOLUTION, ROW_DECISION, ROW_REQUEST };

/*
 * A row whose counters are kept in memory until the next commit: a counted
 * row (its key's later arrivals), or a flow's row (its byte counts).
 */
struct pend {
	struct pend *next_dirty;
	enum row_table table;
	int64_t rowid;
	int64_t count, last_ms, up, down;   /* not yet written */
	bool dirty;
	bool shared;        /* a key's counted row: the key owns it, flows only borrow it */
	bool orphan;        /* its flow closed while dirty: freed once written */
};

/* An entry of a string-keyed chained hash table. */
struct hent {
	struct hent *next;
	char *key;
	unsigned rows;      /* aggregation keys: rows stored one by one so far */
	struct pend *p;
};

struct hmap {
	struct hent **b;
	size_t nb, n;
	uint64_t seed;
};

/* What the writer remembers about one session while it runs. */
struct sess {
	struct sess *next;
	char *id;
	int64_t rows[2];                /* rows stored: the network's, and decisions */
	int64_t overflow, overflow_denied;
	int64_t kind_rows;              /* refusals kept past the cap, one per kind */
	bool dirty;                     /* overflow counts not yet written */
	struct hmap keys;               /* aggregation key → rows so far, counted row */
	struct hmap flows;              /* flow number → its row */
	struct chain decisions;         /* the chain of its decision rows (common/chain.h) */
};

/* Statements of store/'s other files, prepared on first use and kept (store_stmt). */
#define STMT_CACHE 16

struct stmt_ent {
	const char *sql;        /* the caller's text, only compared, never read */
	sqlite3_stmt *s;
	bool busy;              /* handed out and not yet given back */
};

struct store {
	sqlite3 *db;
	sqlite3_stmt *stmt[ST__COUNT];
	struct stmt_ent cache[STMT_CACHE];
	struct sess *sessions;
	struct pend *dirty;
	bool dirty_sessions;
};

static int store_flush(struct store *st, char **err);
static void sess_forget(struct store *st, const char *id);

static int db_err(struct store *st, char **err, const char *what)
{
	return set_err(err, _("session store: %s: %s"), what, sqlite3_errmsg(st->db));
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
		return db_err(st, err, _("reading the schema version"));
	rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
	sqlite3_finalize(s);
	if (*out < 0)
		return db_err(st, err, _("reading the schema version"));
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
		return set_err(err, _("session store has schema version %d, newer than this "
				 "build's %d: refusing to use it (upgrade boxy)"), have, want);
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
			set_err_errno(err, _("session store: creating %s"), dir);
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
			db_err(st, err, _("preparing statements"));
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
	if (st->stmt[ST__COUNT - 1])
		store_flush(st, NULL);
	while (st->sessions)
		sess_forget(st, st->sessions->id);
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	for (int i = 0; i < STMT_CACHE; i++)
		sqlite3_finalize(st->cache[i].s);
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
	if (store_flush(st, err) < 0)
		return -1;
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

/*
 * A row's who from parameter i on (STORE_WHO_COLUMNS): pid NULL when it was not
 * looked for, 0 when it was and was not found; claimed only with a package.
 */
static void bind_who(sqlite3_stmt *s, int i, const struct event_who *w)
{
	bool pkg = w && w->found && w->package && w->package[0];

	if (!w) {
		for (int j = 0; j < 9; j++)
			sqlite3_bind_null(s, i + j);
		return;
	}
	sqlite3_bind_int64(s, i, w->found ? (int64_t)w->pid : 0);
	bind_text(s, i + 1, w->found ? w->comm : NULL);
	bind_text(s, i + 2, w->found ? w->argv0 : NULL);
	bind_text(s, i + 3, w->found ? w->cmdline : NULL);
	bind_text(s, i + 4, pkg ? w->package : NULL);
	bind_text(s, i + 5, pkg && w->version && w->version[0] ? w->version : NULL);
	bind_text(s, i + 6, pkg && w->script && w->script[0] ? w->script : NULL);
	bind_text(s, i + 7, pkg && w->via && w->via[0] ? w->via : NULL);
	if (pkg)
		sqlite3_bind_int(s, i + 8, w->claimed ? 1 : 0);
	else
		sqlite3_bind_null(s, i + 8);
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
	bind_text(s, 12, ss->lockfile);
	return step_done(st, s, err, "recording a session");
}

int store_session_end(struct store *st, const char *id, int64_t ended_ms, const char *state,
		      int exit_code, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_SESSION_END];

	if (store_flush(st, err) < 0)
		return -1;
	sess_forget(st, id);
	bind_text(s, 1, id);
	sqlite3_bind_int64(s, 2, ended_ms);
	bind_text(s, 3, state);
	sqlite3_bind_int(s, 4, exit_code);
	return step_done(st, s, err, "recording a session's end");
}

int store_session_frozen(struct store *st, const char *id, int64_t frozen_ms, const char *reason,
			 char **err)
{
	sqlite3_stmt *s = st->stmt[ST_FROZEN];

	bind_text(s, 1, id);
	bind_opt_int(s, 2, frozen_ms);
	bind_text(s, 3, frozen_ms ? reason : NULL);
	return step_done(st, s, err, "recording a session's freeze");
}

int store_session_gate(struct store *st, const char *id, const char *failed, int *changed,
		       char **err)
{
	sqlite3_stmt *s = st->stmt[ST_GATE];

	bind_text(s, 1, id);
	bind_text(s, 2, failed);
	if (step_done(st, s, err, "recording the gate's verdict") < 0)
		return -1;
	*changed = sqlite3_changes(st->db);
	return 0;
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

/* ---- aggregation and the per-session cap ------------------------------------- */

/*
 * FNV-1a from a secret basis, then mixed (splitmix64's finalizer): keys hold
 * addresses and names the payload chooses, and with a known plain hash it
 * could put every key of its session into one chain and make each of its
 * refusals cost the daemon a scan of thousands.
 */
static uint64_t hash_str(const struct hmap *m, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ m->seed;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 1099511628211ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* The entry for key, or NULL. */
static struct hent *hmap_get(const struct hmap *m, const char *key)
{
	if (!m->nb)
		return NULL;
	for (struct hent *e = m->b[hash_str(m, key) & (m->nb - 1)]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* A new entry for key (not present), growing the table at two entries a bucket. */
static struct hent *hmap_add(struct hmap *m, const char *key)
{
	struct hent *e;
	size_t i;

	if (m->n >= m->nb * 2) {
		size_t nb = m->nb ? m->nb * 4 : 64;
		struct hent **b = xcalloc(nb, sizeof(*b));

		for (i = 0; i < m->nb; i++) {
			while (m->b[i]) {
				e = m->b[i];
				m->b[i] = e->next;
				e->next = b[hash_str(m, e->key) & (nb - 1)];
				b[hash_str(m, e->key) & (nb - 1)] = e;
			}
		}
		free(m->b);
		m->b = b;
		m->nb = nb;
	}
	e = xcalloc(1, sizeof(*e));
	e->key = xstrdup(key);
	i = hash_str(m, key) & (m->nb - 1);
	e->next = m->b[i];
	m->b[i] = e;
	m->n++;
	return e;
}

/* Unlink and return key's entry (the caller frees it), or NULL. */
static struct hent *hmap_take(struct hmap *m, const char *key)
{
	struct hent **pp;

	if (!m->nb)
		return NULL;
	for (pp = &m->b[hash_str(m, key) & (m->nb - 1)]; *pp; pp = &(*pp)->next) {
		struct hent *e = *pp;

		if (strcmp(e->key, key) == 0) {
			*pp = e->next;
			m->n--;
			return e;
		}
	}
	return NULL;
}

/* Free every entry; owned pends go with them (free_pends), borrowed ones stay. */
static void hmap_clear(struct hmap *m, bool free_pends)
{
	for (size_t i = 0; i < m->nb; i++) {
		while (m->b[i]) {
			struct hent *e = m->b[i];

			m->b[i] = e->next;
			if (free_pends || (e->p && !e->p->shared))
				free(e->p);
			free(e->key);
			free(e);
		}
	}
	free(m->b);
	m->b = NULL;
	m->nb = m->n = 0;
}

/* The writer's memory of a session, made on first use. */
static struct sess *sess_get(struct store *st, const char *id)
{
	struct sess *ss;

	for (ss = st->sessions; ss; ss = ss->next)
		if (strcmp(ss->id, id) == 0)
			return ss;
	ss = xcalloc(1, sizeof(*ss));
	ss->id = xstrdup(id);
	if (getrandom(&ss->keys.seed, sizeof(ss->keys.seed), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(ss->keys.seed))
		ss->keys.seed = now_mono_ms() * 0x9e3779b97f4a7c15ULL ^ (uintptr_t)ss;
	ss->flows.seed = ss->keys.seed;
	chain_decisions_init(&ss->decisions, id);
	ss->next = st->sessions;
	st->sessions = ss;
	return ss;
}

/* Write one pending row's counters. */
static int pend_write(struct store *st, struct pend *p, char **err)
{
	static const enum stmt_id which[] = {
		[ROW_CONN] = ST_BUMP_CONN, [ROW_RESOLUTION] = ST_BUMP_RESOLUTION,
		[ROW_DECISION] = ST_BUMP_DECISION, [ROW_REQUEST] = ST_BUMP_REQUEST,
	};
	sqlite3_stmt *s = st->stmt[which[p->table]];

	sqlite3_bind_int64(s, 1, p->rowid);
	sqlite3_bind_int64(s, 2, p->count);
	sqlite3_bind_int64(s, 3, p->last_ms);
	if (p->table == ROW_CONN) {
		sqlite3_bind_int64(s, 4, p->up);
		sqlite3_bind_int64(s, 5, p->down);
	}
	p->count = p->up = p->down = 0;
	return step_done(st, s, err, "recording counted rows");
}

/* Queue a row's counters for the next commit. */
static void pend_mark(struct store *st, struct pend *p)
{
	if (p->dirty)
		return;
	p->dirty = true;
	p->next_dirty = st->dirty;
	st->dirty = p;
}

/* Write every counter kept in memory: counted rows, flows' bytes, overflows. */
static int store_flush(struct store *st, char **err)
{
	int rc = 0;

	while (st->dirty) {
		struct pend *p = st->dirty;

		st->dirty = p->next_dirty;
		p->dirty = false;
		if (rc == 0 && pend_write(st, p, err) < 0)
			rc = -1;
		if (p->orphan)
			free(p);
	}
	if (!st->dirty_sessions)
		return rc;
	st->dirty_sessions = false;
	for (struct sess *ss = st->sessions; ss; ss = ss->next) {
		sqlite3_stmt *s = st->stmt[ST_OVERFLOW];

		if (!ss->dirty)
			continue;
		ss->dirty = false;
		bind_text(s, 1, ss->id);
		sqlite3_bind_int64(s, 2, ss->overflow);
		sqlite3_bind_int64(s, 3, ss->overflow_denied);
		if (rc == 0 && step_done(st, s, err, "recording a session's overflow") < 0)
			rc = -1;
	}
	return rc;
}

/* Forget a session (after a flush: nothing of it is pending). */
static void sess_forget(struct store *st, const char *id)
{
	for (struct sess **pp = &st->sessions; *pp; pp = &(*pp)->next) {
		struct sess *ss = *pp;

		if (strcmp(ss->id, id) != 0)
			continue;
		*pp = ss->next;
		hmap_clear(&ss->flows, false);
		hmap_clear(&ss->keys, true);
		free(ss->id);
		free(ss);
		return;
	}
}

/*
 * Append one field of an aggregation key, length first, so that no two
 * different rows share a key whatever their strings hold (a payload names
 * the paths some decisions are about). NULL and "" differ.
 */
static void key_add(struct jbuf *k, const char *v)
{
	char len[24];

	snprintf(len, sizeof(len), v ? "%zu:" : "-:", v ? strlen(v) : (size_t)0);
	jbuf_raw(k, len);
	if (v)
		jbuf_raw(k, v);
}

/*
 * The who part of an aggregation key: rows of different processes' packages
 * (or commands) are counted apart; the pid is not part of it (a payload that
 * forks for every refusal would otherwise defeat the counting).
 */
static void key_add_who(struct jbuf *k, const struct event_who *w)
{
	bool pkg = w && w->found && w->package && w->package[0];

	if (!w) {
		key_add(k, NULL);
		return;
	}
	key_add(k, w->found ? "f" : "u");
	key_add(k, w->found && !pkg ? w->comm : NULL);
	key_add(k, pkg ? w->package : NULL);
	key_add(k, pkg ? w->version : NULL);
	key_add(k, pkg ? w->script : NULL);
	key_add(k, pkg ? w->via : NULL);
	key_add(k, pkg && w->claimed ? "c" : NULL);
}

enum admit { ADMIT_ROW, ADMIT_COUNTED, ADMIT_DROPPED };

/*
 * Note a refusal's kind (its table, layer and reason words, see
 * event_reason_kind_len) as kept; returns whether it was new. Past the session's
 * cap the first refusal of a kind not kept yet still gets its row, up to
 * STORE_KIND_ROWS of them: a payload that fills the cap with decoys first
 * (five thousand names it knows are refused) cannot keep the one attempt
 * that matters, the metadata address dialled once, out of the record.
 */
static bool kind_note(struct sess *ss, const char *tag, const char *layer, const char *reason)
{
	struct jbuf k;
	bool first;

	jbuf_init(&k);
	key_add(&k, "K");
	key_add(&k, tag);
	key_add(&k, layer);
	if (reason) {
		char *words = xstrndup(reason, event_reason_kind_len(reason));

		key_add(&k, words);
		free(words);
	} else {
		key_add(&k, NULL);
	}
	first = hmap_get(&ss->keys, k.p) == NULL;
	if (first)
		hmap_add(&ss->keys, k.p);
	jbuf_free(&k);
	return first;
}

/*
 * Decide what a new row of key becomes: a row of its own (ADMIT_ROW), a
 * count in the key's counted row (ADMIT_COUNTED; (*out)->p->rowid is 0 when
 * that row is still to be inserted, by the caller, with count 1), or nothing
 * past the session's cap (ADMIT_DROPPED, counted in the overflow) — unless
 * it is a refusal of a kind not kept yet (kind_first). layer and reason
 * name the refusal's kind; both are ignored for rows that are not refusals.
 */
static enum admit admit(struct store *st, struct sess *ss, const char *key, enum row_table t,
			bool denied, const char *layer, const char *reason, int64_t t_ms,
			struct hent **out)
{
	static const char *const tags[] = { [ROW_CONN] = "c", [ROW_RESOLUTION] = "r",
					    [ROW_DECISION] = "d", [ROW_REQUEST] = "q" };
	struct hent *e = hmap_get(&ss->keys, key);
	int64_t *rows = &ss->rows[t == ROW_DECISION];

	*out = e;
	if (e && e->p) {
		/* Counted already: counts stay exact past the cap. */
		e->p->count++;
		if (t_ms > e->p->last_ms)
			e->p->last_ms = t_ms;
		pend_mark(st, e->p);
		return ADMIT_COUNTED;
	}
	if (*rows >= STORE_SESSION_ROWS && !(denied && !e && ss->kind_rows < STORE_KIND_ROWS &&
					     kind_note(ss, tags[t], layer, reason))) {
		ss->overflow++;
		if (denied)
			ss->overflow_denied++;
		ss->dirty = true;
		st->dirty_sessions = true;
		return ADMIT_DROPPED;
	}
	if (*rows >= STORE_SESSION_ROWS)
		ss->kind_rows++;        /* kept by kind_note: the first of its kind */
	else if (denied && !e)
		kind_note(ss, tags[t], layer, reason);
	if (!e)
		e = hmap_add(&ss->keys, key);
	*out = e;
	(*rows)++;
	if (e->rows < STORE_AGG_FIRST) {
		e->rows++;
		return ADMIT_ROW;
	}
	/* The first past the threshold: the key's counted row, inserted by the caller. */
	e->p = xcalloc(1, sizeof(*e->p));
	e->p->table = t;
	e->p->shared = true;
	e->p->last_ms = t_ms;
	return ADMIT_COUNTED;
}

/* After the insert admit() asked for: remember a new counted row's id; undo a failed one. */
static int admitted(struct store *st, struct sess *ss, struct hent *e, enum row_table t, int rc)
{
	if (rc < 0) {
		ss->rows[t == ROW_DECISION]--;
		if (e->p && !e->p->rowid) {
			free(e->p);
			e->p = NULL;
		} else if (e->rows) {
			e->rows--;
		}
		return -1;
	}
	if (e->p && !e->p->rowid)
		e->p->rowid = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/* Remember flow's row (a counted row is its key's, borrowed) for its byte counts. */
static void flow_remember(struct sess *ss, uint64_t flow, struct pend *shared, int64_t rowid)
{
	char key[24];
	struct hent *e;

	snprintf(key, sizeof(key), "%llu", (unsigned long long)flow);
	e = hmap_take(&ss->flows, key);
	if (e) {
		/* A flow number seen twice: the newer row wins (a dirty pend is freed at flush). */
		if (e->p && !e->p->shared && e->p->dirty)
			e->p->orphan = true;
		else if (e->p && !e->p->shared)
			free(e->p);
		free(e->key);
		free(e);
	}
	e = hmap_add(&ss->flows, key);
	if (shared) {
		e->p = shared;
		return;
	}
	e->p = xcalloc(1, sizeof(*e->p));
	e->p->table = ROW_CONN;
	e->p->rowid = rowid;
}

int store_add_conn(struct store *st, const struct store_conn *c, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_CONN];
	struct sess *ss = sess_get(st, c->session_id);
	struct hent *e;
	struct jbuf k;
	char port[8];
	enum admit a;
	int rc;

	snprintf(port, sizeof(port), "%d", c->port);
	jbuf_init(&k);
	key_add(&k, "c");
	key_add(&k, c->proto);
	key_add(&k, c->verdict);
	key_add(&k, c->layer);
	key_add(&k, c->addr);
	key_add(&k, port);
	key_add(&k, c->host);
	key_add(&k, c->sni);
	key_add(&k, c->reason);
	key_add_who(&k, c->who);
	a = admit(st, ss, k.p, ROW_CONN, c->verdict && strcmp(c->verdict, "deny") == 0, c->layer,
		  c->reason, c->t_ms, &e);
	jbuf_free(&k);
	if (a == ADMIT_DROPPED)
		return 0;
	if (a == ADMIT_COUNTED && e->p->rowid) {
		/* Counted into the key's row: the flow's later bytes go there too. */
		e->p->up += c->up;
		e->p->down += c->down;
		if (c->flow)
			flow_remember(ss, c->flow, e->p, 0);
		return 0;
	}
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
	sqlite3_bind_int64(s, 13, c->t_rel_ms);
	bind_who(s, 14, c->who);
	rc = admitted(st, ss, e, ROW_CONN, step_done(st, s, err, "recording a connection"));
	if (rc == 0 && c->flow)
		flow_remember(ss, c->flow, a == ADMIT_COUNTED ? e->p : NULL,
			      sqlite3_last_insert_rowid(st->db));
	return rc;
}

int store_add_bytes(struct store *st, const char *session_id, uint64_t flow, int64_t up,
		    int64_t down, bool closed, char **err)
{
	struct sess *ss = sess_get(st, session_id);
	char key[24];
	struct hent *e;

	(void)err;
	snprintf(key, sizeof(key), "%llu", (unsigned long long)flow);
	e = closed ? hmap_take(&ss->flows, key) : hmap_get(&ss->flows, key);
	if (!e)
		return 0;       /* a flow past the cap, or never allowed: no row to count on */
	if (up || down) {
		e->p->up += up;
		e->p->down += down;
		pend_mark(st, e->p);
	}
	if (!closed)
		return 0;
	/* Its own row's memory goes with the flow, once its last counts are written. */
	if (!e->p->shared && e->p->dirty)
		e->p->orphan = true;
	else if (!e->p->shared)
		free(e->p);
	free(e->key);
	free(e);
	return 0;
}

/*
 * Public mode names a flow after its row was written (NET_FLOW_SEEN): the SNI
 * or Host, and the host when the address was resolved from it, go onto the
 * flow's own row. A counted row stands for many flows and keeps its key's.
 */
static int store_name_flow(struct store *st, const struct event *ev, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_NAME_CONN];
	struct sess *ss = sess_get(st, ev->session);
	char key[24];
	struct hent *e;

	snprintf(key, sizeof(key), "%llu", (unsigned long long)ev->flow);
	e = hmap_get(&ss->flows, key);
	if (!e || !e->p || e->p->shared || !e->p->rowid)
		return 0;       /* not stored (past the cap), or named before its row (allowlist) */
	sqlite3_bind_int64(s, 1, e->p->rowid);
	bind_text(s, 2, ev->sni);
	bind_text(s, 3, ev->host);
	return step_done(st, s, err, "naming a connection");
}

int store_add_resolution(struct store *st, const struct store_resolution *r, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_RESOLUTION];
	struct sess *ss = sess_get(st, r->session_id);
	struct hent *e;
	struct jbuf k;
	enum admit a;

	jbuf_init(&k);
	key_add(&k, "r");
	key_add(&k, r->name);
	key_add(&k, r->addr);
	key_add(&k, r->verdict);
	key_add(&k, r->layer);
	key_add(&k, r->reason);
	key_add_who(&k, r->who);
	a = admit(st, ss, k.p, ROW_RESOLUTION, r->verdict && strcmp(r->verdict, "deny") == 0,
		  r->layer, r->reason, r->t_ms, &e);
	jbuf_free(&k);
	if (a == ADMIT_DROPPED || (a == ADMIT_COUNTED && e->p->rowid))
		return 0;
	bind_text(s, 1, r->session_id);
	sqlite3_bind_int64(s, 2, r->t_ms);
	bind_text(s, 3, r->name);
	bind_text(s, 4, r->addr);
	/* A TTL belongs to an answered address; a refusal or an answer without one has none. */
	if (r->addr && r->verdict && strcmp(r->verdict, "allow") == 0)
		sqlite3_bind_int64(s, 5, r->ttl);
	else
		sqlite3_bind_null(s, 5);
	bind_text(s, 6, r->verdict);
	bind_text(s, 7, r->reason);
	bind_text(s, 8, r->layer);
	sqlite3_bind_int64(s, 9, r->t_rel_ms);
	bind_who(s, 10, r->who);
	return admitted(st, ss, e, ROW_RESOLUTION,
			step_done(st, s, err, "recording a resolution"));
}

int store_add_decision(struct store *st, const struct store_decision *d, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_DECISION];
	struct sess *ss = sess_get(st, d->session_id);
	struct hent *e;
	struct jbuf k;
	enum admit a;
	struct chain next;
	char hash[CHAIN_HEX_LEN + 1];
	int rc;

	jbuf_init(&k);
	key_add(&k, "d");
	key_add(&k, d->layer);
	key_add(&k, d->verdict);
	key_add(&k, d->subject);
	key_add(&k, d->reason);
	key_add_who(&k, d->who);
	a = admit(st, ss, k.p, ROW_DECISION, d->verdict && strcmp(d->verdict, "deny") == 0,
		  d->layer, d->reason, d->t_ms, &e);
	jbuf_free(&k);
	if (a == ADMIT_DROPPED || (a == ADMIT_COUNTED && e->p->rowid))
		return 0;
	bind_text(s, 1, d->session_id);
	sqlite3_bind_int64(s, 2, d->t_ms);
	bind_text(s, 3, d->layer);
	bind_text(s, 4, d->verdict);
	bind_text(s, 5, d->subject);
	bind_text(s, 6, d->reason);
	sqlite3_bind_int64(s, 7, d->t_rel_ms);
	next = ss->decisions;
	chain_decisions_step(&next, &(struct chain_decision){
		.session_id = d->session_id, .t_ms = d->t_ms, .t_rel_ms = d->t_rel_ms,
		.layer = d->layer, .verdict = d->verdict, .subject = d->subject,
		.reason = d->reason });
	chain_hex(next.head, CHAIN_HASH_LEN, hash);
	bind_text(s, 8, hash);
	bind_who(s, 9, d->who);
	rc = admitted(st, ss, e, ROW_DECISION, step_done(st, s, err, "recording a decision"));
	if (rc == 0)
		ss->decisions = next;   /* the chain advances only by a row that was stored */
	return rc;
}

/*
 * One HTTP request (kind "http"): a requests row, counted and capped with
 * the session's other network rows, so a payload that sends a million
 * requests cannot fill the disk with them.
 */
static int store_add_request(struct store *st, const struct event *ev, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_REQUEST];
	struct sess *ss = sess_get(st, ev->session);
	bool deny = strcmp(ev->verdict, "deny") == 0;
	struct hent *e;
	struct jbuf k;
	char num[24];
	enum admit a;

	jbuf_init(&k);
	key_add(&k, "q");
	key_add(&k, ev->method);
	key_add(&k, ev->host);
	snprintf(num, sizeof(num), "%u", ev->port);
	key_add(&k, num);
	key_add(&k, ev->path);
	key_add(&k, ev->query);
	key_add(&k, ev->addr);
	key_add(&k, ev->verdict);
	key_add(&k, ev->detail);
	key_add(&k, ev->layer);
	snprintf(num, sizeof(num), "%d", ev->rule);
	key_add(&k, num);
	key_add_who(&k, ev->who);
	a = admit(st, ss, k.p, ROW_REQUEST, deny, ev->layer, ev->detail, (int64_t)ev->t_ms, &e);
	jbuf_free(&k);
	if (a == ADMIT_DROPPED || (a == ADMIT_COUNTED && e->p->rowid))
		return 0;
	bind_text(s, 1, ev->session);
	sqlite3_bind_int64(s, 2, (int64_t)ev->t_ms);
	sqlite3_bind_int64(s, 3, (int64_t)ev->t_rel_ms);
	sqlite3_bind_int64(s, 4, ev->seq);
	bind_text(s, 5, ev->method);
	bind_text(s, 6, ev->host);
	bind_opt_int(s, 7, ev->port);
	bind_text(s, 8, ev->path);
	bind_text(s, 9, ev->query);
	bind_text(s, 10, ev->addr);
	bind_text(s, 11, ev->verdict);
	bind_text(s, 12, ev->detail);
	bind_text(s, 13, ev->layer);
	if (ev->rule >= 0)
		sqlite3_bind_int64(s, 14, ev->rule);
	else
		sqlite3_bind_null(s, 14);
	bind_text(s, 15, ev->rule_text);
	bind_who(s, 16, ev->who);
	return admitted(st, ss, e, ROW_REQUEST, step_done(st, s, err, "recording a request"));
}

/* True when s is one of the words in the NULL-terminated list. */
static bool is_one_of(const char *s, const char *const *words)
{
	for (; s && *words; words++)
		if (strcmp(s, *words) == 0)
			return true;
	return false;
}

int store_add_event(struct store *st, const struct event *ev, char **err)
{
	static const char *const flows[] = { "tcp", "udp", NULL };
	static const char *const decided[] = { "allow", "deny", NULL };
	static const char *const counted[] = { "bytes", "close", NULL };
	bool deny = ev->verdict && strcmp(ev->verdict, "deny") == 0;

	if (!ev->session || !ev->kind || !ev->verdict)
		return 0;
	if (strcmp(ev->kind, "audit") == 0) {
		struct store_decision d = {
			.session_id = ev->session, .t_ms = (int64_t)ev->t_ms,
			.t_rel_ms = (int64_t)ev->t_rel_ms, .layer = ev->layer,
			.verdict = ev->verdict, .subject = ev->subject, .reason = ev->detail,
			.who = ev->who,
		};

		if (ev->mirror || !ev->layer)
			return 0;       /* its flow event is the row */
		if (ev->host) {
			/* About a name: refused, or one of its answers dropped (addr). */
			struct store_resolution r = {
				.session_id = ev->session, .t_ms = (int64_t)ev->t_ms,
				.t_rel_ms = (int64_t)ev->t_rel_ms, .name = ev->host,
				.addr = ev->addr, .verdict = deny ? "deny" : "allow",
				.reason = ev->detail, .layer = ev->layer, .who = ev->who,
			};

			return store_add_resolution(st, &r, err);
		}
		return store_add_decision(st, &d, err);
	}
	if (is_one_of(ev->kind, flows) && is_one_of(ev->verdict, decided) && ev->addr) {
		struct store_conn c = {
			.session_id = ev->session, .t_ms = (int64_t)ev->t_ms,
			.t_rel_ms = (int64_t)ev->t_rel_ms, .proto = ev->kind,
			.verdict = ev->verdict, .addr = ev->addr, .port = ev->port,
			.host = ev->host, .sni = ev->sni, .reason = ev->detail,
			.layer = ev->layer ? ev->layer : "net.ip", .up = (int64_t)ev->up,
			.down = (int64_t)ev->down, .flow = ev->flow, .who = ev->who,
		};

		return store_add_conn(st, &c, err);
	}
	if (is_one_of(ev->kind, flows) && strcmp(ev->verdict, "sni") == 0 && ev->flow && ev->sni)
		return store_name_flow(st, ev, err);
	if (is_one_of(ev->kind, flows) && is_one_of(ev->verdict, counted)) {
		if (!ev->flow)
			return 0;
		return store_add_bytes(st, ev->session, ev->flow, (int64_t)ev->up,
				       (int64_t)ev->down, strcmp(ev->verdict, "close") == 0, err);
	}
	if (strcmp(ev->kind, "http") == 0 && is_one_of(ev->verdict, decided) && ev->layer)
		return store_add_request(st, ev, err);
	if (strcmp(ev->kind, "dns") == 0 && ev->subject) {
		struct store_resolution r = {
			.session_id = ev->session, .t_ms = (int64_t)ev->t_ms,
			.t_rel_ms = (int64_t)ev->t_rel_ms, .name = ev->subject,
			.addr = ev->addr, .ttl = ev->ttl, .verdict = deny ? "deny" : "allow",
			/* An answered address needs no reason; its absence does. */
			.reason = ev->addr && !deny ? NULL : ev->detail,
			.layer = ev->layer ? ev->layer : "net.dns", .who = ev->who,
		};

		return store_add_resolution(st, &r, err);
	}
	return 0;
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
	sqlite3_stmt *s = st->stmt[running_only ? ST_FIND_RUNNING : prefix ? ST_FIND_PREFIX : ST_FIND];
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
		r->lockfile = col_dup(s, 14);
		r->baseline = col_dup(s, 15);
		r->frozen_ms = sqlite3_column_int64(s, 16);
		r->frozen_reason = col_dup(s, 17);
		r->gate = col_dup(s, 18);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE) {
		store_sessions_free(out);
		return db_err(st, err, _("reading sessions"));
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
		free(r->lockfile);
		free(r->baseline);
		free(r->frozen_reason);
		free(r->gate);
	}
	free(ss->v);
	ss->v = NULL;
	ss->n = 0;
}

int store_exec(struct store *st, const char *sql,
	       int (*cb)(void *ctx, int ncol, char **vals, char **names), void *ctx, char **err)
{
	char *msg = NULL;

	/* What is still counted in memory is written first: a query sees every row's count. */
	if (store_flush(st, err) < 0)
		return -1;
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
	json_kv_str(b, "lockfile", s->lockfile);
	json_kv_str(b, "baseline", s->baseline);
	json_kv_str(b, "gate", s->gate);
	if (s->frozen_ms) {
		json_kv_int(b, "frozen_ms", s->frozen_ms);
		json_kv_str(b, "frozen_reason", s->frozen_reason);
	}
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
	sqlite3_stmt *s = store_stmt(st, sql, NULL);
	int rc;

	if (!s)
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
	if (rc != SQLITE_DONE)
		db_err(st, err, key);
	store_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : -1;
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
		set_err(err, _("no session '%s'"), prefix);
		goto out;
	}
	if (ss.n > 1 && strcmp(ss.v[0].id, prefix) != 0) {
		set_err(err, _("session id '%s' is ambiguous: it matches %zu sessions"), prefix, ss.n);
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
		      "SELECT t_ms, t_rel_ms, layer, what, subject, reason, count, last_ms"
		      " FROM denials WHERE session_id = ?1 ORDER BY t_ms", id, err) < 0 ||
	    rows_json(st, &b, "decisions",
		      "SELECT t_ms, t_rel_ms, layer, verdict, subject, reason, count, last_ms"
		      " FROM decisions WHERE session_id = ?1 ORDER BY t_ms, id", id, err) < 0) {
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
 * and its --rw and mkdir mounts, as the policy each session row keeps names
 * them (the policy column, runspec_to_json: "workdir", "mounts"[].kind/src),
 * newest first, each once — the `roots` table MIGRATION_ROOTS keeps, so the
 * cost does not grow with the sessions recorded. Links planted there by one
 * run must not carry a later run's sources or output files out
 * (common/path-guard.h). A session pruned from the store is forgotten here too.
 */
int store_writable_roots(struct store *st, void (*cb)(void *ctx, const char *path), void *ctx,
			 char **err)
{
	static const char sql[] = "SELECT path FROM roots ORDER BY started_ms DESC, path";
	sqlite3_stmt *s = store_stmt(st, sql, NULL);
	int rc;

	if (!s)
		return db_err(st, err, _("writable roots"));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		cb(ctx, (const char *)sqlite3_column_text(s, 0));
	if (rc != SQLITE_DONE)
		db_err(st, err, _("writable roots"));
	store_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : -1;
}

sqlite3_stmt *store_stmt(struct store *st, const char *sql, char **err)
{
	struct stmt_ent *slot = NULL;
	sqlite3_stmt *s;

	for (int i = 0; i < STMT_CACHE; i++) {
		struct stmt_ent *e = &st->cache[i];

		if (!e->s) {
			if (!slot)
				slot = e;
		} else if (!e->busy && e->sql == sql && strcmp(sqlite3_sql(e->s), sql) == 0) {
			e->busy = true;
			return e->s;
		}
	}
	if (sqlite3_prepare_v3(st->db, sql, -1, slot ? SQLITE_PREPARE_PERSISTENT : 0, &s,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		set_err(err, "session store: %s", sqlite3_errmsg(st->db));
		return NULL;
	}
	if (slot)
		*slot = (struct stmt_ent){ .sql = sql, .s = s, .busy = true };
	return s;
}

void store_stmt_done(struct store *st, sqlite3_stmt *s)
{
	for (int i = 0; i < STMT_CACHE; i++) {
		if (st->cache[i].s == s) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			st->cache[i].busy = false;
			return;
		}
	}
	sqlite3_finalize(s);
}

/* The database handle, pending counts written first: for store/'s own other files only. */
sqlite3 *store_db(struct store *st, char **err)
{
	return store_flush(st, err) < 0 ? NULL : st->db;
}

int store_rows(struct store *st, const char *sql, const char *id, const char *id2,
	       int64_t limit, void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
	       char **err)
{
	int lim_at = id2 ? 3 : 2;

	sqlite3 *db = store_db(st, err);
	sqlite3_stmt *s;
	int rc;

	if (!db)
		return -1;
	if (!(s = store_stmt(st, sql, NULL)))
		return set_err(err, "session store: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	if (id2)
		sqlite3_bind_text(s, 2, id2, -1, SQLITE_TRANSIENT);
	if (sqlite3_bind_parameter_count(s) >= lim_at)
		sqlite3_bind_int64(s, lim_at, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *vals[STORE_ROW_COLS_MAX];
		int n = sqlite3_column_count(s);

		n = n > STORE_ROW_COLS_MAX ? STORE_ROW_COLS_MAX : n;
		for (int i = 0; i < n; i++)
			vals[i] = (const char *)sqlite3_column_text(s, i);
		row(ctx, n, vals);
	}
	if (rc != SQLITE_DONE)
		set_err(err, "session store: %s", sqlite3_errmsg(db));
	store_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* rows_json for store/'s other files (store-show.c). */
int store_rows_json(struct store *st, struct jbuf *b, const char *key, const char *sql,
		    const char *id, char **err)
{
	return rows_json(st, b, key, sql, id, err);
}

/* The ids store_prune(cutoff_ms) would delete, oldest first; nothing is changed. */
int store_prune_preview(struct store *st, int64_t cutoff_ms, char ***ids, size_t *n, char **err)
{
	sqlite3_stmt *s = st->stmt[ST_PRUNE_PREVIEW];
	int rc;

	*ids = NULL;
	*n = 0;
	sqlite3_bind_int64(s, 1, cutoff_ms);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		char **slot = xappend(ids, n, sizeof(**ids));

		*slot = col_dup(s, 0);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE) {
		for (size_t i = 0; i < *n; i++)
			free((*ids)[i]);
		free(*ids);
		*ids = NULL;
		*n = 0;
		return db_err(st, err, _("listing sessions to prune"));
	}
	return 0;
}
