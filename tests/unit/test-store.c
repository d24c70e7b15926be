/*
 * test-store.c — the session store: migrations from an empty file, a newer
 * schema refused, every table and view answering what the docs say, lost
 * sessions, pruning, prefix lookup, and the SQL examples of doc/store.md
 * executed as written.
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

#include "store.h"
#include "util.h"

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
	assert_string_equal(buf, "1");
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
		.session_id = id, .t_ms = 8002, .proto = "tcp", .verdict = "deny",
		.addr = "169.254.169.254", .port = 80, .reason = "link-local / cloud metadata",
		.layer = "net.ip",
	};
	struct store_resolution r = {
		.session_id = id, .t_ms = 7914, .name = "c2.example.net", .verdict = "deny",
		.reason = "hostname not on the allowlist",
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_file_migrates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_session_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_and_prune, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doc_examples_run, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
