/*
 * test-store.c — the session store: migrations from an empty file and from
 * a version 1 file (its rows carried forward), a newer schema refused in one
 * line, every table and view answering what the docs say, the writer's
 * aggregation and per-session cap under a flood (rows bounded, counts
 * exact), byte counts reaching their connection rows, lost sessions,
 * pruning, prefix lookup, and the SQL examples of doc/store.md executed as
 * written (tests/e2e/store-record.sh checks their answers on a real run).
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/event.h"
#include "store/store.h"
#include "store/store-since.h"
#include "store/store-top.h"
#include "common/util.h"

static char dbpath[256];

static int setup(void **state)
{
	char dir[] = "/tmp/boxy-test-store.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(dbpath, sizeof(dbpath), "%s/sub/sessions.db", dir);
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%.*s'", (int)(strrchr(dbpath, '/') - dbpath - 4), dbpath);

	(void)state;
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
	free(cmd);
	return 0;
}

/* Collects the first column of each row, joined by '|'. */
static int collect(void *ctx, int ncol, char **vals, char **names)
{
	char *buf = ctx;

	(void)names;
	for (int i = 0; i < ncol; i++) {
		if (buf[0] && strlen(buf) < 4000)
			strcat(buf, "|");
		strncat(buf, vals[i] ? vals[i] : "NULL", 4000 - strlen(buf));
	}
	return 0;
}

static struct store *open_ok(void)
{
	struct store *st = NULL;
	char *err = NULL;

	if (store_open(dbpath, &st, &err) < 0)
		fail_msg("store_open: %s", err);
	return st;
}

static void add_session(struct store *st, const char *id, int64_t started)
{
	struct store_session s = {
		.id = (char *)id, .argv_json = "[\"npm\",\"ci\"]", .policy_json = "{}",
		.cwd = "/home/u/p", .started_ms = started, .pids = 512,
	};
	char *err = NULL;

	assert_int_equal(store_session_begin(st, &s, &err), 0);
}

static void test_fresh_file_migrates(void **state)
{
	struct store *st = open_ok();
	char buf[4096] = "";
	char *err = NULL;

	(void)state;
	assert_int_equal(store_exec(st, "PRAGMA user_version", collect, buf, &err), 0);
	assert_int_equal(atoi(buf), STORE_SCHEMA_VERSION);
	buf[0] = '\0';
	assert_int_equal(store_exec(st, "PRAGMA journal_mode", collect, buf, &err), 0);
	assert_string_equal(buf, "wal");
	store_close(st);
	/* Reopening an up-to-date file changes nothing. */
	st = open_ok();
	store_close(st);
}

static void test_newer_schema_refused(void **state)
{
	struct store *st = open_ok();
	char *err = NULL;

	(void)state;
	assert_int_equal(store_exec(st, "PRAGMA user_version = 99", NULL, NULL, &err), 0);
	store_close(st);
	assert_int_equal(store_open(dbpath, &st, &err), -1);
	assert_non_null(strstr(err, "schema version 99"));
	assert_null(strchr(err, '\n'));                            /* one line */
	free(err);
	assert_null(st);
}

static void test_bad_session_rejected(void **state)
{
	struct store *st = open_ok();
	struct store_session s = {
		.id = "short", .argv_json = "[]", .policy_json = "{}", .cwd = "/",
		.started_ms = 1,
	};
	struct store_conn c = {
		.session_id = "nosuchsession000", .proto = "tcp", .verdict = "allow",
		.addr = "1.2.3.4", .port = 443,
	};
	char *err = NULL;

	(void)state;
	assert_int_equal(store_session_begin(st, &s, &err), -1);     /* id length checked */
	free(err);
	err = NULL;
	assert_int_equal(store_add_conn(st, &c, &err), -1);         /* foreign key */
	free(err);
	err = NULL;
	add_session(st, "0123456789abcdef", 1000);
	c.session_id = "0123456789abcdef";
	c.proto = "icmp";
	assert_int_equal(store_add_conn(st, &c, &err), -1);         /* proto checked */
	free(err);
	store_close(st);
}

static void test_views(void **state)
{
	struct store *st = open_ok();
	const char *id = "9f3c1ba200000001";
	char buf[4096] = "";
	char *err = NULL;
	struct store_conn c = {
		.session_id = id, .proto = "tcp", .verdict = "allow", .addr = "104.16.0.35",
		.port = 443, .host = "registry.npmjs.org", .sni = "registry.npmjs.org",
		.up = 1000, .down = 20000,
	};
	struct store_conn denied = {
		.session_id = id, .t_ms = 1700000008002, .t_rel_ms = 8002, .proto = "tcp",
		.verdict = "deny",
		.addr = "169.254.169.254", .port = 80, .reason = "link-local / cloud metadata",
		.layer = "net.ip",
	};
	struct store_resolution r = {
		.session_id = id, .t_ms = 1700000007914, .t_rel_ms = 7914, .name = "c2.example.net",
		.verdict = "deny", .reason = "hostname not on the allowlist", .layer = "net.dns",
	};
	struct store_decision d = {
		.session_id = id, .t_ms = 1, .layer = "cgroup", .verdict = "degraded",
		.subject = "memory", .reason = "no memory controller delegated",
	};

	(void)state;
	assert_int_equal(store_begin(st, &err), 0);
	add_session(st, id, 1700000000000);
	assert_int_equal(store_add_conn(st, &c, &err), 0);
	c.addr = "104.16.1.35";
	assert_int_equal(store_add_conn(st, &c, &err), 0);
	assert_int_equal(store_add_conn(st, &denied, &err), 0);
	assert_int_equal(store_add_resolution(st, &r, &err), 0);
	assert_int_equal(store_add_decision(st, &d, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);

	assert_int_equal(store_exec(st, "SELECT destination, conns, denied, addrs, sent, received "
				   "FROM destinations ORDER BY destination", collect, buf, &err), 0);
	assert_string_equal(buf, "169.254.169.254|1|1|1|0|0|registry.npmjs.org|2|0|2|2000|40000");
	buf[0] = '\0';
	assert_int_equal(store_exec(st, "SELECT layer, what, subject, reason FROM denials "
				   "ORDER BY t_ms", collect, buf, &err), 0);
	assert_string_equal(buf, "net.dns|resolve|c2.example.net|hostname not on the allowlist|"
			    "net.ip|connect|tcp://169.254.169.254:80|link-local / cloud metadata");
	buf[0] = '\0';
	assert_int_equal(store_exec(st, "SELECT short_id, state, conns, denied, sent, received "
				   "FROM session_summary", collect, buf, &err), 0);
	assert_string_equal(buf, "9f3c1ba2|running|3|2|2000|40000");
	buf[0] = '\0';
	/* One time unit: t_ms is Unix ms in every table, t_rel_ms the session's. */
	assert_int_equal(store_exec(st, "SELECT t_ms, t_rel_ms FROM denials ORDER BY t_ms",
				    collect, buf, &err), 0);
	assert_string_equal(buf, "1700000007914|7914|1700000008002|8002");
	store_close(st);
}

static void begin(struct store *st)
{
	char *err = NULL;

	if (store_begin(st, &err) < 0)
		fail_msg("%s", err);
}

static void commit(struct store *st)
{
	char *err = NULL;

	if (store_commit(st, &err) < 0)
		fail_msg("%s", err);
}

static void event_ok(struct store *st, const struct event *ev)
{
	char *err = NULL;

	if (store_add_event(st, ev, &err) < 0)
		fail_msg("store_add_event: %s", err);
}

/* One integer a query answers. */
static long long query_int(struct store *st, const char *sql)
{
	char buf[4096] = "";
	char *err = NULL;

	if (store_exec(st, sql, collect, buf, &err) < 0)
		fail_msg("%s: %s", sql, err);
	return strtoll(buf, NULL, 10);
}

/*
 * Issue 8 item 13: 100,000 identical refusals and 10,000 distinct ones,
 * through the writer as the bus hands them over (batches of 1,000): the
 * rows stay bounded, every count is exact, and the views answer the real
 * numbers.
 */
static void test_flood_bounded_and_exact(void **state)
{
	const char *id = "f100d00000000001";
	struct store *st = open_ok();
	struct event ev = {
		.session = id, .kind = "tcp", .verdict = "deny", .layer = "net.ip",
		.detail = "link-local / cloud metadata", .addr = "169.254.169.254", .port = 80,
	};
	char addr[32];
	uint64_t t0;
	long long rows;

	(void)state;
	add_session(st, id, 1700000000000);
	t0 = now_mono_ms();
	begin(st);
	for (int i = 0; i < 100000; i++) {
		ev.t_ms = 1700000000000 + (uint64_t)i;
		ev.t_rel_ms = (uint64_t)i;
		event_ok(st, &ev);
		if (i % 1000 == 999) {
			commit(st);
			begin(st);
		}
	}
	commit(st);
	begin(st);
	ev.detail = "private address (RFC 1918)";
	for (int i = 0; i < 10000; i++) {
		snprintf(addr, sizeof(addr), "10.%d.%d.1", i / 256, i % 256);
		ev.addr = addr;
		ev.t_ms = 1700000100000 + (uint64_t)i;
		event_ok(st, &ev);
	}
	commit(st);
	print_message("# 110000 refusals written in %llu ms\n",
		      (unsigned long long)(now_mono_ms() - t0));

	rows = query_int(st, "SELECT count(*) FROM connections");
	assert_true(rows <= STORE_SESSION_ROWS);
	assert_int_equal(rows, STORE_SESSION_ROWS);
	/* The identical ones: STORE_AGG_FIRST rows of their own, then one counted row. */
	assert_int_equal(query_int(st, "SELECT count(*) FROM connections WHERE addr = "
				   "'169.254.169.254'"), STORE_AGG_FIRST + 1);
	assert_int_equal(query_int(st, "SELECT count FROM connections WHERE addr = "
				   "'169.254.169.254' AND count > 1"), 100000 - STORE_AGG_FIRST);
	assert_int_equal(query_int(st, "SELECT t_ms FROM connections WHERE count > 1"),
			 1700000000000 + STORE_AGG_FIRST);
	assert_int_equal(query_int(st, "SELECT last_ms FROM connections WHERE count > 1"),
			 1700000099999);
	/* The distinct ones: as many as the cap leaves room for, the rest counted. */
	assert_int_equal(query_int(st, "SELECT overflow FROM sessions"),
			 10000 - (STORE_SESSION_ROWS - STORE_AGG_FIRST - 1));
	assert_int_equal(query_int(st, "SELECT overflow_denied FROM sessions"),
			 10000 - (STORE_SESSION_ROWS - STORE_AGG_FIRST - 1));
	assert_int_equal(query_int(st, "SELECT sum(count) FROM denials"),
			 110000 - (10000 - (STORE_SESSION_ROWS - STORE_AGG_FIRST - 1)));
	assert_int_equal(query_int(st, "SELECT denied FROM session_summary"), 110000);
	assert_int_equal(query_int(st, "SELECT denied FROM destinations WHERE destination = "
				   "'169.254.169.254'"), 100000);
	/* Past the cap, a counted row still counts. */
	ev.addr = "169.254.169.254";
	ev.detail = "link-local / cloud metadata";
	event_ok(st, &ev);
	assert_int_equal(query_int(st, "SELECT denied FROM session_summary"), 110001);
	/* The flood cannot crowd out what the session finds later: decisions have a budget apart. */
	{
		struct event warn = {
			.session = id, .kind = "audit", .verdict = "warn", .layer = "git",
			.subject = "/p/.git/hooks/pre-commit", .detail = "quarantined",
		};

		event_ok(st, &warn);
	}
	assert_int_equal(query_int(st, "SELECT count(*) FROM decisions WHERE verdict = 'warn'"), 1);
	/*
	 * Decoys filled the cap: a refusal of a kind not kept yet still gets its
	 * row (the first of its kind), a second of that kind does not, and one of a
	 * kind kept before the cap (another private address) does not either.
	 */
	ev.addr = "198.18.0.7";
	ev.detail = "benchmarking range (RFC 2544)";
	event_ok(st, &ev);
	ev.addr = "198.18.0.8";
	event_ok(st, &ev);
	ev.addr = "10.200.0.1";
	ev.detail = "private address (RFC 1918)";
	event_ok(st, &ev);
	assert_int_equal(query_int(st, "SELECT count(*) FROM connections WHERE addr = '198.18.0.7'"),
			 1);
	assert_int_equal(query_int(st, "SELECT count(*) FROM connections WHERE addr IN "
				   "('198.18.0.8', '10.200.0.1')"), 0);
	assert_int_equal(query_int(st, "SELECT count(*) FROM connections"), STORE_SESSION_ROWS + 1);
	/* The kinds kept past the cap are bounded too. */
	for (int i = 0; i < STORE_KIND_ROWS * 2; i++) {
		char why[64];

		snprintf(why, sizeof(why), "made-up reason %c%c", 'a' + i / 26, 'a' + i % 26);
		ev.detail = why;
		event_ok(st, &ev);
	}
	assert_int_equal(query_int(st, "SELECT count(*) FROM connections"),
			 STORE_SESSION_ROWS + STORE_KIND_ROWS);
	store_close(st);
}

/* Decisions and resolutions aggregate the same way; a mirror is not a second row. */
static void test_aggregation_every_table(void **state)
{
	const char *id = "a9900000000000a1";
	struct store *st = open_ok();
	struct event seccomp = {
		.session = id, .kind = "audit", .verdict = "deny", .layer = "seccomp",
		.subject = "ptrace", .detail = "EPERM",
	};
	struct event dns = {
		.session = id, .kind = "dns", .verdict = "deny", .layer = "net.dns",
		.subject = "c2.example.net", .detail = "hostname not on the allowlist",
	};
	struct event mirror = {
		.session = id, .kind = "audit", .verdict = "deny", .layer = "net.dns",
		.subject = "c2.example.net", .detail = "hostname not on the allowlist",
		.mirror = true,
	};

	(void)state;
	add_session(st, id, 1700000000000);
	begin(st);
	for (int i = 0; i < 500; i++) {
		seccomp.t_ms = dns.t_ms = mirror.t_ms = 1700000000000 + (uint64_t)i;
		event_ok(st, &seccomp);
		event_ok(st, &dns);
		event_ok(st, &mirror);
	}
	commit(st);
	assert_int_equal(query_int(st, "SELECT count(*) FROM decisions"), STORE_AGG_FIRST + 1);
	assert_int_equal(query_int(st, "SELECT sum(count) FROM decisions"), 500);
	assert_int_equal(query_int(st, "SELECT count(*) FROM resolutions"), STORE_AGG_FIRST + 1);
	assert_int_equal(query_int(st, "SELECT sum(count) FROM resolutions"), 500);
	assert_int_equal(query_int(st, "SELECT sum(count) FROM denials"), 1000);
	assert_int_equal(query_int(st, "SELECT denied FROM session_summary"), 1000);
	/* Rows differ by their text however it is split between fields: never counted together. */
	seccomp.subject = "a\x1f" "b";
	seccomp.detail = "c";
	for (int i = 0; i < STORE_AGG_FIRST + 5; i++)
		event_ok(st, &seccomp);
	seccomp.subject = "a";
	seccomp.detail = "b\x1f" "c";
	event_ok(st, &seccomp);
	assert_int_equal(query_int(st, "SELECT count(*) FROM decisions WHERE subject = 'a'"), 1);
	store_close(st);
}

/* An answer's row: its address, the TTL as answered, the layer; a refusal has neither. */
static void test_resolution_columns(void **state)
{
	const char *id = "d45000000000000d";
	struct store *st = open_ok();
	struct event answer = {
		.session = id, .kind = "dns", .verdict = "resolve", .layer = "net.dns",
		.subject = "www.example.test", .detail = "93.184.216.34", .addr = "93.184.216.34",
		.ttl = 300, .t_ms = 1700000000123, .t_rel_ms = 123,
	};
	struct event dropped = {
		.session = id, .kind = "dns", .verdict = "deny", .layer = "net.ip",
		.subject = "rebind.example.test", .detail = "answer 10.9.0.5 dropped",
		.addr = "10.9.0.5", .ttl = 60, .t_ms = 1700000000200, .t_rel_ms = 200,
	};
	struct event none = {
		.session = id, .kind = "dns", .verdict = "resolve", .layer = "net.dns",
		.subject = "gone.example.test", .detail = "NXDOMAIN", .t_ms = 1700000000300,
		.t_rel_ms = 300,
	};
	char buf[4096] = "";
	char *err = NULL;

	(void)state;
	add_session(st, id, 1700000000000);
	event_ok(st, &answer);
	event_ok(st, &dropped);
	event_ok(st, &none);
	/* The broker's audit line about a name is that name's row (not a decision). */
	{
		struct event refused = {
			.session = id, .kind = "audit", .verdict = "deny", .layer = "net.dns",
			.subject = "c2.example.net", .host = "c2.example.net",
			.detail = "hostname not on the allowlist", .t_ms = 1700000000400,
			.t_rel_ms = 400,
		};

		event_ok(st, &refused);
	}
	assert_int_equal(query_int(st, "SELECT count(*) FROM decisions"), 0);
	assert_int_equal(store_exec(st, "SELECT name, addr, ttl, verdict, reason, layer, t_ms,"
				    " t_rel_ms FROM resolutions ORDER BY id", collect, buf, &err), 0);
	assert_string_equal(buf,
			    "www.example.test|93.184.216.34|300|allow|NULL|net.dns|1700000000123|123|"
			    "rebind.example.test|10.9.0.5|NULL|deny|answer 10.9.0.5 dropped|net.ip|"
			    "1700000000200|200|"
			    "gone.example.test|NULL|NULL|allow|NXDOMAIN|net.dns|1700000000300|300|"
			    "c2.example.net|NULL|NULL|deny|hostname not on the allowlist|net.dns|"
			    "1700000000400|400");
	store_close(st);
}

/* Issue 10 item 1: a flow's byte reports reach its row, also when the row is a counted one. */
static void test_bytes_reach_rows(void **state)
{
	const char *id = "b7e5000000000001";
	struct store *st = open_ok();
	struct event allow = {
		.session = id, .kind = "tcp", .verdict = "allow", .layer = "net.sni",
		.addr = "93.184.216.34", .port = 443, .host = "www.example.test",
		.sni = "www.example.test",
	};
	struct event bytes = { .session = id, .kind = "tcp", .addr = "93.184.216.34", .port = 443 };
	long long up = 0, down = 0;

	(void)state;
	add_session(st, id, 1700000000000);
	begin(st);
	/* 30 flows to one destination: 20 rows of their own, then one counted row. */
	for (uint64_t f = 1; f <= 30; f++) {
		allow.flow = f;
		allow.t_ms = 1700000000000 + f;
		event_ok(st, &allow);
	}
	for (uint64_t f = 1; f <= 30; f++) {
		bytes.flow = f;
		bytes.verdict = "bytes";
		bytes.up = 100 * f;
		bytes.down = 1000 * f;
		event_ok(st, &bytes);
		up += (long long)bytes.up;
		down += (long long)bytes.down;
		if (f == 15)
			commit(st), begin(st);
		bytes.verdict = "close";
		bytes.up = 1;
		bytes.down = 2;
		event_ok(st, &bytes);
		up += 1;
		down += 2;
	}
	/* A report after the close, or of a flow never allowed, counts nowhere. */
	bytes.flow = 3;
	bytes.verdict = "bytes";
	event_ok(st, &bytes);
	bytes.flow = 99;
	event_ok(st, &bytes);
	commit(st);
	assert_int_equal(query_int(st, "SELECT count(*) FROM connections"), STORE_AGG_FIRST + 1);
	assert_int_equal(query_int(st, "SELECT sum(up) FROM connections"), up);
	assert_int_equal(query_int(st, "SELECT sum(down) FROM connections"), down);
	assert_int_equal(query_int(st, "SELECT up FROM connections WHERE id = 1"), 101);
	assert_int_equal(query_int(st, "SELECT down FROM connections WHERE id = 2"), 2002);
	assert_int_equal(query_int(st, "SELECT conns FROM destinations"), 30);
	assert_int_equal(query_int(st, "SELECT received FROM session_summary"), down);
	store_close(st);
}

/* The version 1 schema exactly as it shipped (store.c's first migration step). */
static const char v1_schema[] =
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
	"  FROM sessions s;";

/*
 * A store written by version 1 opens with this build: every row carried
 * forward, in the new units, readable through the new views, and the
 * double-counted refusals counted once.
 */
static void test_migrate_from_v1(void **state)
{
	static const char rows[] =
		"INSERT INTO sessions (id, argv, policy, cwd, started_ms, ended_ms, state,"
		" exit_code) VALUES ('0123456789abcdef', '[\"npm\",\"ci\"]', '{}', '/p',"
		" 1700000000000, 1700000009000, 'exited', 143);"
		"INSERT INTO connections (session_id, t_ms, proto, verdict, addr, port, host, sni,"
		" reason, layer, up, down) VALUES"
		" ('0123456789abcdef', 47, 'tcp', 'allow', '93.184.216.34', 443, 'www.example.test',"
		"  'www.example.test', NULL, 'net.sni', 0, 0),"
		" ('0123456789abcdef', 90, 'tcp', 'deny', '169.254.169.254', 80, NULL, NULL,"
		"  'link-local / cloud metadata', 'net.ip', 0, 0);"
		"INSERT INTO resolutions (session_id, t_ms, name, addr, ttl, verdict, reason) VALUES"
		" ('0123456789abcdef', 40, 'www.example.test', NULL, 60, 'allow',"
		"  '93.184.216.34 93.184.216.35'),"
		" ('0123456789abcdef', 41, 'gone.example.test', NULL, 0, 'allow', 'NXDOMAIN');"
		"INSERT INTO decisions (session_id, t_ms, layer, verdict, subject, reason) VALUES"
		" ('0123456789abcdef', 1700000000010, 'cgroup', 'degraded', 'memory', 'none'),"
		" ('0123456789abcdef', 1700000000090, 'net.ip', 'deny', 'tcp://169.254.169.254:80',"
		"  'link-local / cloud metadata'),"
		" ('0123456789abcdef', 1700000000100, 'net.dns', 'deny', 'c2.example.net',"
		"  'hostname not on the allowlist'),"
		" ('0123456789abcdef', 1700000000200, 'net.ip', 'deny', 'rebind.example.test',"
		"  'answer 10.9.0.5 dropped (DNS rebinding): private address'),"
		" ('0123456789abcdef', 1700000008000, 'session', 'deny', 'stop', 'boxy stop');"
		"PRAGMA user_version = 1;";
	struct store *st = open_ok();
	char buf[4096] = "";
	char *err = NULL;

	(void)state;
	/* Make the file a version 1 store: drop the schema, then version 1's and its rows. */
	assert_int_equal(store_exec(st, "DROP VIEW destinations; DROP VIEW denials;"
				    "DROP VIEW session_summary; DROP VIEW packages;"
				    "DROP TABLE connections;"
				    "DROP TABLE resolutions; DROP TABLE decisions;"
				    "DROP TABLE chains; DROP TABLE requests;"
				    "DROP TABLE session_roots; DROP TABLE roots;"
				    "DROP TABLE sessions; PRAGMA user_version = 0", NULL, NULL,
				    &err), 0);
	assert_int_equal(store_exec(st, v1_schema, NULL, NULL, &err), 0);
	assert_int_equal(store_exec(st, rows, NULL, NULL, &err), 0);
	store_close(st);

	st = open_ok();
	assert_int_equal(query_int(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(store_exec(st, "SELECT t_ms, t_rel_ms, last_ms, count FROM connections"
				    " ORDER BY id", collect, buf, &err), 0);
	assert_string_equal(buf, "1700000000047|47|1700000000047|1|1700000000090|90|"
			    "1700000000090|1");
	buf[0] = '\0';
	/* One row per address, the names refused and the answer dropped as resolutions. */
	assert_int_equal(store_exec(st, "SELECT name, addr, ttl, verdict, layer, t_ms, t_rel_ms"
				    " FROM resolutions ORDER BY t_ms, addr", collect, buf, &err), 0);
	assert_string_equal(buf,
			    "www.example.test|93.184.216.34|60|allow|net.dns|1700000000040|40|"
			    "www.example.test|93.184.216.35|60|allow|net.dns|1700000000040|40|"
			    "gone.example.test|NULL|NULL|allow|net.dns|1700000000041|41|"
			    "c2.example.net|NULL|NULL|deny|net.dns|1700000000100|100|"
			    "rebind.example.test|10.9.0.5|NULL|deny|net.ip|1700000000200|200");
	buf[0] = '\0';
	/* Each refusal once: the flow's, the name's, the dropped answer's; the stop is not one. */
	assert_int_equal(store_exec(st, "SELECT layer, what, subject FROM denials ORDER BY t_ms",
				    collect, buf, &err), 0);
	assert_string_equal(buf, "net.ip|connect|tcp://169.254.169.254:80|"
			    "net.dns|resolve|c2.example.net|net.ip|resolve|rebind.example.test");
	buf[0] = '\0';
	assert_int_equal(store_exec(st, "SELECT layer, verdict, subject, t_rel_ms FROM decisions"
				    " ORDER BY t_ms", collect, buf, &err), 0);
	assert_string_equal(buf, "cgroup|degraded|memory|10|session|action|stop|8000");
	buf[0] = '\0';
	assert_int_equal(store_exec(st, "SELECT short_id, state, exit_code, conns, denied,"
				    " overflow FROM session_summary", collect, buf, &err), 0);
	assert_string_equal(buf, "01234567|exited|143|2|3|0");
	store_close(st);
	/* And once migrated, reopening changes nothing. */
	st = open_ok();
	assert_int_equal(query_int(st, "SELECT count(*) FROM resolutions"), 5);
	store_close(st);
}

/*
 * A frozen session (doc/react.md): still a running one for every rule (listed
 * as running, never pruned, marked lost), shown "frozen" with its reason; a
 * thaw clears both columns; one that ends frozen keeps them.
 */
static void test_frozen(void **state)
{
	struct store *st = open_ok();
	struct store_sessions ss;
	char *err = NULL, *json;
	int n = -1;

	(void)state;
	add_session(st, "cccc000000000001", 1000);
	add_session(st, "cccc000000000002", 2000);
	assert_int_equal(store_session_frozen(st, "cccc000000000001", 1200,
					      "tripwire: ~/.aws/credentials: opened", &err), 0);
	assert_int_equal(store_sessions_find(st, "cccc000000000001", true, &ss, &err), 0);
	assert_int_equal(ss.n, 1);                 /* a running one, for boxy ps */
	assert_string_equal(ss.v[0].state, "frozen");
	assert_int_equal(ss.v[0].frozen_ms, 1200);
	assert_string_equal(ss.v[0].frozen_reason, "tripwire: ~/.aws/credentials: opened");
	json = store_session_json(&ss.v[0]);
	assert_non_null(strstr(json, "\"state\":\"frozen\""));
	assert_non_null(strstr(json, "\"frozen_ms\":1200,\"frozen_reason\":\"tripwire: "));
	free(json);
	store_sessions_free(&ss);
	/* Never pruned while frozen: it has not ended. */
	assert_int_equal(store_prune(st, 1 << 30, &n, &err), 0);
	assert_int_equal(n, 0);
	/* Thawed: running again, the columns cleared (and no frozen key in its JSON). */
	assert_int_equal(store_session_frozen(st, "cccc000000000001", 0, NULL, &err), 0);
	assert_int_equal(store_sessions_find(st, "cccc000000000001", false, &ss, &err), 0);
	assert_string_equal(ss.v[0].state, "running");
	assert_int_equal(ss.v[0].frozen_ms, 0);
	assert_null(ss.v[0].frozen_reason);
	json = store_session_json(&ss.v[0]);
	assert_null(strstr(json, "frozen"));
	free(json);
	store_sessions_free(&ss);
	/* Frozen again and ended (boxy stop): "exited", and the freeze kept. */
	assert_int_equal(store_session_frozen(st, "cccc000000000001", 1300, "dns: x: tunnel", &err), 0);
	assert_int_equal(store_session_end(st, "cccc000000000001", 1400, "exited", 137, &err), 0);
	/* The other one frozen when its daemon dies: lost, like any running one. */
	assert_int_equal(store_session_frozen(st, "cccc000000000002", 2100, "dns: y: tunnel", &err), 0);
	assert_int_equal(store_mark_lost(st, 5000, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_sessions_find(st, "cccc", false, &ss, &err), 0);
	assert_int_equal(ss.n, 2);
	assert_string_equal(ss.v[0].state, "lost");
	assert_int_equal(ss.v[0].frozen_ms, 2100);
	assert_string_equal(ss.v[1].state, "exited");
	assert_int_equal(ss.v[1].exit_code, 137);
	assert_int_equal(ss.v[1].frozen_ms, 1300);
	assert_string_equal(ss.v[1].frozen_reason, "dns: x: tunnel");
	store_sessions_free(&ss);
	store_close(st);
}

static void test_lost_and_prune(void **state)
{
	struct store *st = open_ok();
	struct store_sessions ss;
	char *err = NULL;
	int n = -1;

	(void)state;
	add_session(st, "aaaa000000000001", 1000);
	add_session(st, "aaaa000000000002", 2000);
	add_session(st, "bbbb000000000003", 3000);
	assert_int_equal(store_session_end(st, "aaaa000000000001", 1500, "exited", 0, &err), 0);

	assert_int_equal(store_mark_lost(st, 5000, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_sessions_find(st, "aaaa", false, &ss, &err), 0);
	assert_int_equal(ss.n, 2);
	assert_string_equal(ss.v[0].id, "aaaa000000000002");     /* newest first */
	assert_string_equal(ss.v[0].state, "lost");
	assert_string_equal(ss.v[1].state, "exited");
	assert_int_equal(ss.v[1].exit_code, 0);
	assert_int_equal(ss.v[1].pids, 512);
	store_sessions_free(&ss);

	assert_int_equal(store_sessions_find(st, NULL, true, &ss, &err), 0);
	assert_int_equal(ss.n, 0);                                 /* nothing running now */
	store_sessions_free(&ss);

	{
		char **ids;
		size_t np;

		/* The preview names exactly what the prune below deletes, and deletes nothing. */
		assert_int_equal(store_prune_preview(st, 1600, &ids, &np, &err), 0);
		assert_int_equal(np, 1);
		assert_string_equal(ids[0], "aaaa000000000001");
		free(ids[0]);
		free(ids);
		assert_int_equal(store_sessions_find(st, NULL, false, &ss, &err), 0);
		assert_int_equal(ss.n, 3);
		store_sessions_free(&ss);
	}
	assert_int_equal(store_prune(st, 1600, &n, &err), 0);
	assert_int_equal(n, 1);                                    /* only the one ended before */
	assert_int_equal(store_sessions_find(st, NULL, false, &ss, &err), 0);
	assert_int_equal(ss.n, 2);
	store_sessions_free(&ss);
	store_close(st);
}

/* Run every ```sql block of doc/store.md as written: documentation that cannot rot. */
static void test_doc_examples_run(void **state)
{
	const char *srcdir = getenv("BOXY_SRCDIR");
	char *path = xasprintf("%s/doc/store.md", srcdir ? srcdir : ".");
	char *text = NULL, *p;
	struct store *st = open_ok();
	char *err = NULL;
	int blocks = 0;

	(void)state;
	add_session(st, "9f3c000000000009", 1700000000000);
	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	for (p = strstr(text, "```sql\n"); p; p = strstr(p, "```sql\n")) {
		char *start = p + 7, *end = strstr(start, "```");
		char *sql;

		assert_non_null(end);
		sql = xstrndup(start, (size_t)(end - start));
		if (store_exec(st, sql, NULL, NULL, &err) < 0)
			fail_msg("doc example failed: %s\n%s", err, sql);
		free(sql);
		blocks++;
		p = end + 3;
	}
	assert_true(blocks >= 5);
	free(text);
	free(path);
	store_close(st);
}


/* Begin a session of cmd in cwd with lockfile lf, one allowed flow to name:port, and end it. */
static void run_one(struct store *st, const char *id, const char *cmd, const char *cwd,
		    const char *lf, int64_t t, const char *name, int port, const char *state)
{
	struct store_session s = {
		.id = (char *)id, .argv_json = (char *)cmd, .policy_json = "{}", .cwd = (char *)cwd,
		.started_ms = t, .lockfile = (char *)lf,
	};
	struct store_conn c = {
		.session_id = id, .t_ms = t + 1, .proto = "tcp", .verdict = "allow",
		.addr = "192.0.2.1", .port = port, .host = name,
	};
	char *err = NULL;

	assert_int_equal(store_session_begin(st, &s, &err), 0);
	if (name)
		assert_int_equal(store_add_conn(st, &c, &err), 0);
	assert_int_equal(store_session_end(st, id, t + 5, state, 0, &err), 0);
}

/* The baseline of a session: its id, or "-". */
static const char *baseline_of(struct store *st, const char *id, char *buf, size_t len)
{
	struct store_sessions ss;
	char *err = NULL;

	assert_int_equal(store_sessions_find(st, id, false, &ss, &err), 0);
	assert_int_equal(ss.n, 1);
	snprintf(buf, len, "%s", ss.v[0].baseline ? ss.v[0].baseline : "-");
	store_sessions_free(&ss);
	return buf;
}

static void since_collect(void *ctx, int ncol, const char *const *v)
{
	char *buf = ctx;

	assert_true(ncol >= 4);
	snprintf(buf + strlen(buf), 4000 - strlen(buf), "%s%s %s %s %s", buf[0] ? "|" : "", v[0],
		 v[1], v[2], v[3]);
}

static void top_collect(void *ctx, const char *text, bool deny)
{
	char *buf = ctx;

	(void)deny;
	snprintf(buf + strlen(buf), 8000 - strlen(buf), "%s\n", text);
}

/*
 * The baseline: the last completed run of the same command in the same
 * directory, one with the same lockfile first; never a failed or lost run,
 * never one whose CI gate failed, never another directory's. And what is new
 * against it, in show and top.
 */
static void test_baseline_and_since(void **state)
{
	struct store *st = open_ok();
	struct store_top *top = NULL;
	struct store_decision d = {
		.session_id = "0000000000000005", .t_ms = 5001, .layer = "since", .verdict = "new",
		.subject = "tcp new.example:443", .reason = "new destination, since 00000000",
	};
	char b[32], buf[8000] = "", *err = NULL;
	const char *npm = "[\"npm\",\"ci\"]";

	(void)state;
	run_one(st, "0000000000000001", npm, "/p", "sha256:aa", 1000, "reg.example", 443, "exited");
	run_one(st, "0000000000000002", npm, "/other", "sha256:aa", 2000, "x.example", 443, "exited");
	run_one(st, "0000000000000003", npm, "/p", "sha256:bb", 3000, "reg.example", 443, "failed");
	run_one(st, "0000000000000004", "[\"make\"]", "/p", "sha256:aa", 3500, NULL, 0, "exited");
	assert_string_equal(baseline_of(st, "0000000000000001", b, sizeof(b)), "-");
	assert_string_equal(baseline_of(st, "0000000000000002", b, sizeof(b)), "-");
	assert_string_equal(baseline_of(st, "0000000000000003", b, sizeof(b)), "0000000000000001");
	/* a new lockfile: no run had it, so the latest completed run of npm ci in /p */
	run_one(st, "0000000000000005", npm, "/p", "sha256:cc", 4000, "new.example", 443, "exited");
	assert_string_equal(baseline_of(st, "0000000000000005", b, sizeof(b)), "0000000000000001");
	/* lockfile aa again: 1 (same lockfile) wins over 5, the latest */
	run_one(st, "0000000000000006", npm, "/p", "sha256:aa", 6000, "reg.example", 8443, "exited");
	assert_string_equal(baseline_of(st, "0000000000000006", b, sizeof(b)), "0000000000000001");

	/*
	 * a run whose gate failed is never a baseline (doc/ci.md): 7's failed, so 8
	 * (the same job and lockfile again) compares with 6, as 7 did; the verdict
	 * is written once
	 */
	run_one(st, "0000000000000007", npm, "/p", "sha256:dd", 7000, "evil.example", 443, "exited");
	assert_string_equal(baseline_of(st, "0000000000000007", b, sizeof(b)), "0000000000000006");
	{
		int changed = -1;

		assert_int_equal(store_session_gate(st, "0000000000000007", "new-destination",
						    &changed, &err), 0);
		assert_int_equal(changed, 1);
		assert_int_equal(store_session_gate(st, "0000000000000007", "deny", &changed, &err), 0);
		assert_int_equal(changed, 0);
		assert_int_equal(store_session_gate(st, "00000000000000ff", "deny", &changed, &err), 0);
		assert_int_equal(changed, 0);
	}
	run_one(st, "0000000000000008", npm, "/p", "sha256:dd", 8000, "evil.example", 443, "exited");
	assert_string_equal(baseline_of(st, "0000000000000008", b, sizeof(b)), "0000000000000006");
	{
		struct store_sessions ss = { 0 };

		assert_int_equal(store_sessions_find(st, "0000000000000007", false, &ss, &err), 0);
		assert_int_equal(ss.n, 1);
		assert_string_equal(ss.v[0].gate, "new-destination");
		store_sessions_free(&ss);
	}

	assert_int_equal(store_since_query(st, "0000000000000005", "0000000000000001",
					   since_collect, buf, &err), 0);
	assert_string_equal(buf, "destination tcp new.example:443 new destination 1");
	buf[0] = '\0';
	assert_int_equal(store_since_query(st, "0000000000000006", "0000000000000001",
					   since_collect, buf, &err), 0);
	assert_string_equal(buf, "destination tcp reg.example:8443 new port 1");
	buf[0] = '\0';
	assert_int_equal(store_since_query(st, "0000000000000001", "0000000000000001",
					   since_collect, buf, &err), 0);
	assert_string_equal(buf, "");

	/* boxy top's record of the session has the new items in a section of their own */
	assert_int_equal(store_add_decision(st, &d, &err), 0);
	store_close(st);
	assert_int_equal(store_top_open(dbpath, &top, &err), 0);
	buf[0] = '\0';
	assert_int_equal(store_top_record(top, "0000000000000005", top_collect, buf, &err), 0);
	assert_non_null(strstr(buf, "NEW SINCE THE LAST RUN\n  since    new       tcp new.example:443"));
	assert_null(strstr(strstr(buf, "DECISIONS"), "new.example"));
	store_top_close(top);
}

/* store_writable_roots' callback: the paths, space-separated. */
static void roots_collect(void *ctx, const char *path)
{
	char *buf = ctx;

	snprintf(buf + strlen(buf), 4000 - strlen(buf), "%s%s", buf[0] ? " " : "", path);
}

/* since_nested's context: the store, and what the inner query found. */
struct nested {
	struct store *st;
	char inner[4000];
	int rows;
};

/* A row of the outer since query: the same query run again while the outer one is open. */
static void since_nested(void *ctx, int ncol, const char *const *v)
{
	struct nested *n = ctx;
	char *err = NULL;

	(void)ncol;
	(void)v;
	n->rows++;
	assert_int_equal(store_since_query(n->st, "0000000000000006", "0000000000000001",
					   since_collect, n->inner, &err), 0);
}

/*
 * The statements kept between calls (store_stmt): the same query run many
 * times answers the same with each call's own parameters, one run while the
 * same statement is still being stepped gets a statement of its own, and the
 * writable roots are read again after a new session added one.
 */
static void test_statements_kept(void **state)
{
	struct store *st = open_ok();
	struct store_session s = {
		.id = "0000000000000009", .argv_json = "[\"make\"]", .cwd = "/q",
		.policy_json = "{\"workdir\":\"/q\"}", .started_ms = 9000,
	};
	struct nested n = { .st = st };
	const char *npm = "[\"npm\",\"ci\"]";
	char buf[4000], *err = NULL;

	(void)state;
	run_one(st, "0000000000000001", npm, "/p", "sha256:aa", 1000, "reg.example", 443, "exited");
	run_one(st, "0000000000000005", npm, "/p", "sha256:cc", 4000, "new.example", 443, "exited");
	run_one(st, "0000000000000006", npm, "/p", "sha256:aa", 6000, "reg.example", 8443, "exited");
	for (int i = 0; i < 40; i++) {
		const char *id = i % 2 ? "0000000000000005" : "0000000000000006";

		buf[0] = '\0';
		assert_int_equal(store_since_query(st, id, "0000000000000001", since_collect, buf,
						   &err), 0);
		assert_string_equal(buf, i % 2 ? "destination tcp new.example:443 new destination 1"
					       : "destination tcp reg.example:8443 new port 1");
	}
	n.inner[0] = '\0';
	assert_int_equal(store_since_query(st, "0000000000000005", "0000000000000001",
					   since_nested, &n, &err), 0);
	assert_int_equal(n.rows, 1);
	assert_string_equal(n.inner, "destination tcp reg.example:8443 new port 1");
	for (int round = 0; round < 2; round++) {
		buf[0] = '\0';
		assert_int_equal(store_writable_roots(st, roots_collect, buf, &err), 0);
		assert_string_equal(buf, round ? "/q" : "");
		if (round)
			break;
		assert_int_equal(store_session_begin(st, &s, &err), 0);
	}
	store_close(st);
}

/* A 64 KiB buffer's worth of lines, for the roots test. */
struct lines {
	char buf[65536];
};

/* store_writable_roots' callback: one path a line. */
static void lines_root(void *ctx, const char *path)
{
	struct lines *l = ctx;

	snprintf(l->buf + strlen(l->buf), sizeof(l->buf) - strlen(l->buf), "%s\n", path);
}

/* store_exec's callback: the first column, a line. */
static int lines_row(void *ctx, int ncol, char **vals, char **names)
{
	struct lines *l = ctx;

	(void)names;
	if (ncol > 0)
		snprintf(l->buf + strlen(l->buf), sizeof(l->buf) - strlen(l->buf), "%s\n",
			 vals[0] ? vals[0] : "NULL");
	return 0;
}

/* What every session's policy names, the way the roots were read before MIGRATION_ROOTS. */
static const char roots_from_policies[] =
	"SELECT path FROM ("
	" SELECT json_extract(policy, '$.workdir') AS path, started_ms FROM sessions"
	"  WHERE json_valid(policy)"
	" UNION ALL"
	" SELECT json_extract(m.value, '$.src'), s.started_ms"
	"  FROM sessions AS s, json_each(s.policy, '$.mounts') AS m"
	"  WHERE json_valid(s.policy)"
	"   AND json_extract(m.value, '$.kind') IN ('rw', 'mkdir')"
	") WHERE typeof(path) = 'text' AND substr(path, 1, 1) = '/'"
	" GROUP BY path ORDER BY MAX(started_ms) DESC, path";

/* The roots kept in their table and the roots every policy names: the same, in the same order. */
static void roots_agree(struct store *st, const char *when)
{
	static struct lines kept, named;
	char *err = NULL;

	kept.buf[0] = named.buf[0] = '\0';
	assert_int_equal(store_writable_roots(st, lines_root, &kept, &err), 0);
	assert_int_equal(store_exec(st, roots_from_policies, lines_row, &named, &err), 0);
	if (strcmp(kept.buf, named.buf) != 0)
		fail_msg("%s: the roots table says\n%s\nthe policies say\n%s", when, kept.buf,
			 named.buf);
	assert_true(kept.buf[0] != '\0');
}

/* Add n sessions from seed on: work directories, rw/mkdir/ro mounts, relative and odd values. */
static void roots_sessions(struct store *st, int seed, int n)
{
	char *err = NULL;

	assert_int_equal(store_begin(st, &err), 0);
	for (int i = seed; i < seed + n; i++) {
		char id[17], policy[512];
		struct store_session s = {
			.id = id, .argv_json = "[\"make\"]", .policy_json = policy, .cwd = "/w",
			.started_ms = 1000 + (i * 7919) % 5000,
		};

		snprintf(id, sizeof(id), "%016x", i);
		switch (i % 6) {
		case 0:
			snprintf(policy, sizeof(policy), "{\"workdir\":\"/w/%d\"}", i % 13);
			break;
		case 1:
			snprintf(policy, sizeof(policy), "{\"workdir\":\"/w/%d\",\"mounts\":["
				 "{\"kind\":\"rw\",\"src\":\"/m/%d\"},{\"kind\":\"ro\","
				 "\"src\":\"/ro/%d\"},{\"kind\":\"mkdir\",\"src\":\"/k/%d\"}]}",
				 i % 13, i % 5, i % 3, i % 4);
			break;
		case 2:
			snprintf(policy, sizeof(policy), "{\"workdir\":\"relative/%d\","
				 "\"mounts\":[{\"kind\":\"rw\",\"src\":7}]}", i);
			break;
		case 3:
			snprintf(policy, sizeof(policy), "{\"workdir\":\"/w/%d\",\"mounts\":["
				 "{\"kind\":\"copy\",\"src\":\"/c/%d\"},{\"kind\":\"rw\","
				 "\"src\":\"/w/%d\"}]}", i % 13, i, i % 13);
			break;
		case 4:
			snprintf(policy, sizeof(policy), "{}");
			break;
		default:
			snprintf(policy, sizeof(policy), "{\"workdir\":\"/w/%d\",\"mounts\":[]}",
				 i % 17);
			break;
		}
		if (store_session_begin(st, &s, &err) < 0)
			fail_msg("session %s: %s", id, err);
	}
	assert_int_equal(store_commit(st, &err), 0);
}

/*
 * The writable roots (MIGRATION_ROOTS): kept in a table of their own and
 * always what the sessions' policies name, in the same order, as sessions
 * are added and pruned; an older store's roots are filled from its
 * sessions when it is opened; the table holds each path once, however many
 * sessions name it, so reading it does not grow with the sessions recorded.
 */
static void test_roots_table(void **state)
{
	struct store *st = open_ok();
	char buf[4096] = "", *err = NULL;
	int pruned = 0;

	(void)state;
	roots_sessions(st, 0, 600);
	roots_agree(st, "600 sessions");
	assert_int_equal(store_exec(st, "SELECT count(*) FROM roots", collect, buf, &err), 0);
	assert_string_equal(buf, "24");     /* /w/0-16, /m/0-4, /k/1 and /k/3: 600 sessions, 24 paths */
	/* prune a third (the session_roots rows go with them, and their paths when unnamed) */
	assert_int_equal(store_exec(st, "UPDATE sessions SET state = 'exited', ended_ms = started_ms",
				    NULL, NULL, &err), 0);
	assert_int_equal(store_prune(st, 2700, &pruned, &err), 0);
	assert_true(pruned > 100);
	roots_agree(st, "pruned below 2700");
	assert_int_equal(store_prune(st, 6000, &pruned, &err), 0);
	buf[0] = '\0';
	assert_int_equal(store_exec(st, "SELECT (SELECT count(*) FROM roots) +"
				    " (SELECT count(*) FROM session_roots)", collect, buf, &err), 0);
	assert_string_equal(buf, "0");
	roots_sessions(st, 1000, 50);
	roots_agree(st, "all pruned, 50 new");

	/*
	 * a store of the version before MIGRATION_ROOTS (version 8; the steps after
	 * it undone too): its roots come from the sessions already there
	 */
	snprintf(buf, sizeof(buf), "DROP TRIGGER sessions_roots; DROP TABLE session_roots;"
		 "DROP TABLE roots; PRAGMA user_version = 8");
	assert_int_equal(store_exec(st, buf, NULL, NULL, &err), 0);
	roots_sessions(st, 2000, 100);
	assert_int_equal(store_exec(st, "ALTER TABLE sessions DROP COLUMN gate", NULL, NULL, &err), 0);
	store_close(st);
	st = open_ok();
	assert_int_equal(query_int(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	roots_agree(st, "migrated from the version before");
	roots_sessions(st, 3000, 100);
	roots_agree(st, "migrated, then 100 new");
	store_close(st);
}

/*
 * Looking sessions up by a prefix of their id (ST_FIND_PREFIX, through the
 * primary key): the same sessions as filtering them all, for prefixes of
 * every length, an empty one, one longer than an id, and ones no id has.
 */
static void test_prefix_lookup(void **state)
{
	static const char *const prefixes[] = {
		"", "0", "00", "0000000000000001", "00000000000000010", "1", "a", "ab", "f",
		"~", "g", "%", "_", "0%", "0_", "A", "\x7f", "\xc3\xa9",
	};
	struct store *st = open_ok();
	struct store_sessions all;
	char *err = NULL;

	(void)state;
	for (int i = 0; i < 40; i++) {
		char id[17];

		snprintf(id, sizeof(id), "%016llx", (unsigned long long)(i * 0x0123456789abcULL) +
			 (i % 3 == 0 ? 1 : 0));
		add_session(st, id, 1000 + i);
	}
	assert_int_equal(store_sessions_find(st, NULL, false, &all, &err), 0);
	assert_int_equal(all.n, 40);
	for (size_t k = 0; k < ARRAY_SIZE(prefixes); k++) {
		struct store_sessions got;
		size_t want = 0, j = 0;

		assert_int_equal(store_sessions_find(st, prefixes[k], false, &got, &err), 0);
		for (size_t i = 0; i < all.n; i++) {
			if (strncmp(all.v[i].id, prefixes[k], strlen(prefixes[k])) != 0)
				continue;
			want++;
			/* same order: newest first */
			if (j >= got.n || strcmp(got.v[j].id, all.v[i].id) != 0)
				fail_msg("prefix \"%s\": session %s missing or out of order", prefixes[k],
					 all.v[i].id);
			j++;
		}
		if (got.n != want)
			fail_msg("prefix \"%s\": %zu sessions, want %zu", prefixes[k], got.n, want);
		store_sessions_free(&got);
	}
	store_sessions_free(&all);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_file_migrates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_session_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_and_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frozen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doc_examples_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_bounded_and_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aggregation_every_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bytes_reach_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolution_columns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_and_since, setup, teardown),
		cmocka_unit_test_setup_teardown(test_statements_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roots_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefix_lookup, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
