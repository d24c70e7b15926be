/*
 * test-chain.c — the audit log's chain and seal against every kind of
 * tampering (each found at the right line), the exact bytes hashed (fixed
 * vectors), the store's decisions chain, and the key file's refusals.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/verify.h"
#include "common/chain.h"
#include "common/json.h"
#include "common/event.h"
#include "common/sign.h"
#include "common/util.h"
#include "daemon/audit.h"
#include "daemon/seal.h"
#include "store/store.h"
#include "store/store-chain.h"

#define ID  "0123456789abcdef"
#define ID2 "fedcba9876543210"
#define NLINES 6        /* five decisions and the seal */

static char statedir[64];

/* Lines of a log, each with its '\n'. */
struct log {
	char *l[32];
	size_t n;
};

static void log_free(struct log *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->l[i]);
	g->n = 0;
}

/* A real log of session id: five decisions through the writer, then the daemon's seal. */
static void log_make(struct log *g, const char *id)
{
	static const char *const what[][4] = {
		{ "seccomp", "info", "mode", "strict" },
		{ "landlock", "info", "abi", "Landlock ABI 7" },
		{ "net.ip", "deny", "tcp://169.254.169.254:80", "link-local / cloud metadata" },
		{ "mount", "info", ".git", ".git/hooks read-only" },
		{ "cgroup", "degraded", "pids", "--pids falls back to RLIMIT_NPROC" },
	};
	char path[96], *buf = NULL, *err = NULL, *p;
	struct audit_log *al;
	struct event_sink sink;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/log.%s", statedir, id);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	al = audit_log_create(fd);
	sink = audit_log_sink(al);
	for (size_t i = 0; i < ARRAY_SIZE(what); i++) {
		struct event ev = { .kind = "audit", .session = id, .t_ms = 1700000000000 + i,
				    .layer = what[i][0], .verdict = what[i][1],
				    .subject = what[i][2], .detail = what[i][3] };

		sink.emit(sink.ctx, &ev);
	}
	assert_int_equal(seal_session(NULL, id, al, 1700000000999, &err), 0);
	audit_log_free(al);
	assert_int_equal(read_file(path, 1 << 20, &buf, &len), 0);
	g->n = 0;
	for (p = buf; *p;) {
		char *nl = strchr(p, '\n');

		assert_non_null(nl);
		g->l[g->n++] = strndup(p, (size_t)(nl - p + 1));
		p = nl + 1;
	}
	assert_int_equal(g->n, NLINES);
	free(buf);
	unlink(path);
}

static char *log_join(const struct log *g)
{
	struct jbuf b;

	jbuf_init(&b);
	for (size_t i = 0; i < g->n; i++)
		jbuf_raw(&b, g->l[i]);
	return jbuf_steal(&b);
}

/* Replace the first `from` in line i by `to`. */
static void line_sub(struct log *g, size_t i, const char *from, const char *to)
{
	char *at = strstr(g->l[i], from), *s;

	assert_non_null(at);
	s = xasprintf("%.*s%s%s", (int)(at - g->l[i]), g->l[i], to, at + strlen(from));
	free(g->l[i]);
	g->l[i] = s;
}

static void line_drop(struct log *g, size_t i)
{
	free(g->l[i]);
	memmove(&g->l[i], &g->l[i + 1], (g->n - i - 1) * sizeof(g->l[0]));
	g->n--;
}

static void line_insert(struct log *g, size_t i, const char *s)
{
	memmove(&g->l[i + 1], &g->l[i], (g->n - i) * sizeof(g->l[0]));
	g->l[i] = xstrdup(s);
	g->n++;
}

/* Line i's "prev" set to the hash of line j (what a forger recomputing the chain does). */
static void line_relink(struct log *g, size_t i, size_t j)
{
	unsigned char h[CHAIN_HASH_LEN];
	char hex[CHAIN_HEX_LEN + 1], *at = strstr(g->l[i], "\"prev\":\"");

	chain_sha256(g->l[j], strlen(g->l[j]), h);
	chain_hex(h, CHAIN_HASH_LEN, hex);
	assert_non_null(at);
	memcpy(at + 8, hex, CHAIN_HEX_LEN);
}

/* ---- the tamperings ---------------------------------------------------------------- */

static void t_none(struct log *g) { (void)g; }
static void t_edit_byte(struct log *g) { line_sub(g, 2, "cloud", "cloue"); }
static void t_edit_prev(struct log *g) { line_relink(g, 3, 0); }
static void t_edit_seq(struct log *g) { line_sub(g, 1, "\"seq\":2", "\"seq\":7"); }
static void t_drop_first(struct log *g) { line_drop(g, 0); }
static void t_drop_middle(struct log *g) { line_drop(g, 2); }
static void t_drop_last(struct log *g) { line_drop(g, 4); }
static void t_drop_seal(struct log *g) { line_drop(g, 5); }
static void t_swap(struct log *g)
{
	char *t = g->l[1];

	g->l[1] = g->l[2];
	g->l[2] = t;
}
static void t_repeat(struct log *g) { line_insert(g, 3, g->l[2]); }
static void t_after_seal(struct log *g)
{
	line_insert(g, 6, g->l[4]);
	line_sub(g, 6, "\"seq\":5", "\"seq\":7");
	line_relink(g, 6, 5);
}
static void t_forged_sig(struct log *g)
{
	char *at = strstr(g->l[5], "\"sig\":\"");

	at[7] = at[7] == '0' ? '1' : '0';
}
static void t_seal_count(struct log *g) { line_sub(g, 5, "\"lines\":5", "\"lines\":4"); }
static void t_garbage(struct log *g) { line_insert(g, 2, "not json at all\n"); }
static void t_unchained(struct log *g)
{
	line_insert(g, 0, "{\"t\":1,\"session\":\"" ID "\",\"layer\":\"x\",\"verdict\":\"info\"}\n");
}
/* Line 2 edited and every later prev recomputed: only the seal can tell. */
static void t_rechained(struct log *g)
{
	line_sub(g, 1, "ABI 7", "ABI 9");
	for (size_t i = 2; i < g->n; i++)
		line_relink(g, i, i - 1);
}
static void t_reason_sealword(struct log *g)
{
	/* A decision whose text looks like a seal is still a decision: its bytes are hashed. */
	line_sub(g, 3, "read-only", "\\\"verdict\\\":\\\"seal\\\"");
}

/* Review: the seal's words, and a member given twice (another JSON reader takes the
 * last), are bytes its signature does not cover; a copy has no store to hold them. */
static void t_seal_words(struct log *g) { line_sub(g, 5, "signed\"", "signed by the CI\""); }
static void t_seal_twice(struct log *g) { line_sub(g, 5, "\"lines\":5,", "\"lines\":5,\"lines\":2,"); }

struct tamper_case {
	const char *what;
	void (*tamper)(struct log *g);
	size_t line;            /* 0: intact */
	const char *words;      /* in the first break's text */
	size_t cut;             /* bytes cut off the end after tamper (truncation mid-line) */
};

static const struct tamper_case tamper_cases[] = {
	{ "untouched", t_none, 0, NULL, 0 },
	{ "one byte of line 3 edited", t_edit_byte, 3, "line 3 was changed", 0 },
	{ "line 4's prev edited", t_edit_prev, 4, "line 4 was changed", 0 },
	{ "line 2's seq edited", t_edit_seq, 2, "missing before line 2", 0 },
	{ "line 1 dropped", t_drop_first, 1, "missing before line 1", 0 },
	{ "line 3 dropped", t_drop_middle, 3, "missing before line 3", 0 },
	{ "line 5, the last before the seal, dropped", t_drop_last, 5, "missing before line 5", 0 },
	{ "the seal dropped (truncated after line 5)", t_drop_seal, 5, "no seal", 0 },
	{ "cut inside the seal", t_none, 6, "line 6 is cut short", 40 },
	{ "lines 2 and 3 swapped", t_swap, 2, "line 2 is out of order", 0 },
	{ "line 3 repeated", t_repeat, 4, "line 4 is out of order or repeated", 0 },
	{ "a line appended after the seal", t_after_seal, 7, "after the seal", 0 },
	{ "the seal's signature forged", t_forged_sig, 6, "does not verify", 0 },
	{ "the seal's count edited", t_seal_count, 6, "counts 4 lines", 0 },
	{ "a line that is not JSON", t_garbage, 3, "not a JSON object", 0 },
	{ "a line without chain fields", t_unchained, 1, "carries no chain", 0 },
	{ "line 2 edited, the chain recomputed", t_rechained, 6, "does not verify", 0 },
	{ "a decision quoting seal words, edited", t_reason_sealword, 4, "line 4 was changed", 0 },
	{ "the seal's words edited", t_seal_words, 6, "where its signature does not reach", 0 },
	{ "the seal's count given twice", t_seal_twice, 6, "where its signature does not reach",
	  0 },
};

static void test_tamper(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tamper_cases); i++) {
		const struct tamper_case *tc = &tamper_cases[i];
		struct verify_opts o = { 0 };
		struct verify_result r;
		struct log g;
		char *buf;
		size_t len;

		log_make(&g, ID);
		tc->tamper(&g);
		buf = log_join(&g);
		len = strlen(buf) - tc->cut;
		verify_audit_log(buf, len, &o, &r);
		if (tc->line == 0) {
			if (r.nbreaks)
				fail_msg("%s: want intact, got line %zu: %s", tc->what,
					 r.breaks[0].line, r.breaks[0].why);
			assert_int_equal(r.sealed, 1);
		} else {
			if (!r.nbreaks)
				fail_msg("%s: want a break at line %zu, got intact", tc->what,
					 tc->line);
			if (r.breaks[0].line != tc->line || !strstr(r.breaks[0].why, tc->words))
				fail_msg("%s: want line %zu (\"%s\"), got line %zu: %s", tc->what,
					 tc->line, tc->words, r.breaks[0].line, r.breaks[0].why);
		}
		verify_result_free(&r);
		free(buf);
		log_free(&g);
	}
}

/* The trusted key: the log's own passes, any other is a break at the seal. */
static void test_trusted_key(void **state)
{
	unsigned char other[SIGN_PUB_LEN];
	struct verify_opts o = { 0 };
	struct verify_result r;
	struct seal s;
	uint64_t seq;
	unsigned char prev[CHAIN_HASH_LEN];
	struct log g;
	char *buf;

	(void)state;
	log_make(&g, ID);
	buf = log_join(&g);
	assert_int_equal(verify_parse_seal(g.l[5], strlen(g.l[5]), &s, &seq, prev), 0);
	o.trusted_key = s.key;
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 0);
	assert_true(r.key_trusted);
	verify_result_free(&r);
	memcpy(other, s.key, SIGN_PUB_LEN);
	other[0] ^= 1;
	o.trusted_key = other;
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 1);
	assert_int_equal(r.breaks[0].line, 6);
	assert_non_null(strstr(r.breaks[0].why, "not by the trusted key"));
	verify_result_free(&r);
	free(buf);
	log_free(&g);
}

/* What the store says of the chain (test lookup). */
static struct verify_known known;
static void fake_lookup(void *ctx, const char *id, struct verify_known *out)
{
	(void)ctx;
	*out = strcmp(id, ID) == 0 ? known : (struct verify_known){ 0 };
}

/* Whole lines cut off the end, seal included, are found against the store's length. */
static void test_store_length(void **state)
{
	struct verify_opts o = { .lookup = fake_lookup };
	struct verify_result r;
	struct log g;
	char *buf;

	(void)state;
	log_make(&g, ID);
	known = (struct verify_known){ .found = true, .audit.n = NLINES };
	buf = log_join(&g);
	chain_sha256(g.l[5], strlen(g.l[5]), known.audit.head);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 0);
	verify_result_free(&r);
	free(buf);
	line_drop(&g, 5);
	line_drop(&g, 4);
	buf = log_join(&g);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 1);
	assert_int_equal(r.breaks[0].line, 4);
	assert_non_null(strstr(r.breaks[0].why, "truncated after line 4: the store records 6 lines"));
	verify_result_free(&r);
	free(buf);
	/* A whole log re-signed by a forger's key, checked with no trusted key: the store's head differs. */
	known = (struct verify_known){ .found = true, .audit.n = NLINES };
	memset(known.audit.head, 0x5a, CHAIN_HASH_LEN);
	log_free(&g);
	log_make(&g, ID);
	buf = log_join(&g);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 1);
	assert_int_equal(r.breaks[0].line, 6);
	assert_non_null(strstr(r.breaks[0].why, "differs from the store's record"));
	verify_result_free(&r);
	free(buf);
	line_drop(&g, 5);
	line_drop(&g, 4);
	/* A running session the store has no seal for yet: no seal is no fault. */
	known = (struct verify_known){ .running = true };
	buf = log_join(&g);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 0);
	assert_int_equal(r.running, 1);
	verify_result_free(&r);
	free(buf);
	log_free(&g);
}

/* Two sessions writing one file, interleaved: each chain holds on its own. */
static void test_interleaved(void **state)
{
	struct verify_opts o = { 0 };
	struct verify_result r;
	struct log a, b, m = { 0 };
	char *buf;

	(void)state;
	log_make(&a, ID);
	log_make(&b, ID2);
	for (size_t i = 0; i < NLINES; i++) {
		m.l[m.n++] = xstrdup(a.l[i]);
		m.l[m.n++] = xstrdup(b.l[i]);
	}
	buf = log_join(&m);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 0);
	assert_int_equal(r.chains, 2);
	assert_int_equal(r.sealed, 2);
	verify_result_free(&r);
	free(buf);
	/* Both chains broken: each break is reported, in line order. */
	line_drop(&m, 11);      /* ID2's seal */
	line_drop(&m, 2);       /* ID's line 2 */
	buf = log_join(&m);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 2);
	assert_int_equal(r.breaks[0].line, 4);  /* ID's line 3, now the file's line 4 */
	assert_int_equal(r.breaks[1].line, 9);  /* ID2's line 5, the file's last of it */
	verify_result_free(&r);
	free(buf);
	log_free(&m);
	for (size_t i = 0; i < NLINES; i++) {
		m.l[m.n++] = xstrdup(a.l[i]);
		m.l[m.n++] = xstrdup(b.l[i]);
	}
	/* Line 5 of the file is ID's line 3: once dropped, ID's next line (now line 6) misses it. */
	line_drop(&m, 4);
	buf = log_join(&m);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 1);
	assert_int_equal(r.breaks[0].line, 6);
	verify_result_free(&r);
	free(buf);
	log_free(&a);
	log_free(&b);
	log_free(&m);
}

/*
 * A file that holds every chain intact can still have lost one whole: the
 * payload renamed an older log over its own. The sessions the store records
 * as writing to the file must each be in it (found at line 0, the file).
 */
static void test_expected(void **state)
{
	struct verify_expected ex[] = { { ID, NLINES }, { ID2, NLINES } };
	struct verify_opts o = { .expect = ex, .nexpect = 2 };
	struct verify_result r;
	struct log a;
	char *buf;

	(void)state;
	log_make(&a, ID);
	buf = log_join(&a);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 1);
	assert_int_equal(r.breaks[0].line, 0);
	assert_non_null(strstr(r.breaks[0].why, "session " ID2 " wrote 6 lines"));
	verify_result_free(&r);
	o.nexpect = 1;          /* only ID recorded there: intact */
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 0);
	verify_result_free(&r);
	/* Past a line that cannot be read the chain may follow: that line is the break. */
	o.nexpect = 2;
	line_insert(&a, 3, "not json\n");
	free(buf);
	buf = log_join(&a);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 1);
	assert_int_equal(r.breaks[0].line, 4);
	verify_result_free(&r);
	free(buf);
	log_free(&a);
}

/*
 * Held (review): another session's seal replayed in place of this one's, and
 * a log of one line that is a seal over nothing (as a session without
 * --audit-log is sealed in the store) checked against the store's record.
 */
static void test_seal_replay(void **state)
{
	struct verify_opts o = { 0 };
	struct verify_result r;
	struct log a, b;
	char *buf;

	(void)state;
	log_make(&a, ID);
	log_make(&b, ID2);
	free(b.l[NLINES - 1]);
	b.l[NLINES - 1] = xstrdup(a.l[NLINES - 1]);     /* ID's seal at the end of ID2's log */
	buf = log_join(&b);
	verify_audit_log(buf, strlen(buf), &o, &r);
	assert_int_equal(r.nbreaks, 2);         /* ID2 unsealed; ID's seal out of its place */
	verify_result_free(&r);
	free(buf);
	log_free(&a);
	log_free(&b);
	/* A seal over an empty chain, alone in a file: the store says the session wrote no log. */
	{
		struct seal s = { .t_ms = 1 };
		struct sign_key *k = NULL;
		char *err = NULL, path[128], *line;

		snprintf(path, sizeof(path), "%s/boxy/signing.key", statedir);
		assert_int_equal(sign_key_load(path, true, &k, &err), 0);
		snprintf(s.id, sizeof(s.id), "%s", ID);
		chain_audit_init(&s.audit, ID);
		chain_decisions_init(&s.decisions, ID);
		assert_int_equal(sign_seal(k, &s, &err), 0);
		line = seal_line(&s, false, 1);
		known = (struct verify_known){ .found = true };         /* 0 lines, as recorded */
		o.lookup = fake_lookup;
		verify_audit_log(line, strlen(line), &o, &r);
		assert_int_equal(r.nbreaks, 1);
		assert_non_null(strstr(r.breaks[0].why, "differs from the store"));
		verify_result_free(&r);
		free(line);
		sign_key_free(k);
	}
}

static void test_empty(void **state)
{
	struct verify_opts o = { 0 };
	struct verify_result r;

	(void)state;
	verify_audit_log("", 0, &o, &r);
	assert_int_equal(r.nbreaks, 1);
	verify_result_free(&r);
}

/* The exact bytes hashed, pinned (doc/verify.md). */
static void test_vectors(void **state)
{
	struct chain c;
	char hex[CHAIN_HEX_LEN + 1];

	(void)state;
	chain_audit_init(&c, ID);
	chain_hex(c.head, CHAIN_HASH_LEN, hex);
	assert_string_equal(hex, "fc46ef68c409a2b237d01cc3f135269ab068642380fb257eed2c4536830cf450");
	chain_decisions_init(&c, ID);
	chain_hex(c.head, CHAIN_HASH_LEN, hex);
	assert_string_equal(hex, "ec1f2b1893ed89945e17ca24c008d49aeb279aeef4964a916243dd4ee2b2a910");
	chain_decisions_step(&c, &(struct chain_decision){ .session_id = ID, .t_ms = 1000,
		.t_rel_ms = 5, .layer = "seccomp", .verdict = "deny", .subject = "ptrace" });
	chain_hex(c.head, CHAIN_HASH_LEN, hex);
	assert_string_equal(hex, "ea71ed7119fbe5275af84c1fb770fe0d2b3e3e795e0bb385454ef184eb1b9ba4");
	assert_int_equal(c.n, 1);
}

/* A store with session ID and three decisions. */
static struct store *store_with_decisions(void)
{
	struct store_session ss = { .id = ID, .argv_json = "[\"true\"]", .policy_json = "{}",
				    .cwd = "/w", .started_ms = 1000 };
	struct store *st = NULL;
	char *err = NULL;

	assert_int_equal(store_open(":memory:", &st, &err), 0);
	assert_int_equal(store_session_begin(st, &ss, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	for (int i = 0; i < 3; i++) {
		char subj[16];
		struct store_decision d = { .session_id = ID, .t_ms = 1000 + i, .t_rel_ms = i,
					    .layer = "seccomp", .verdict = "deny", .subject = subj,
					    .reason = "not allowed" };

		snprintf(subj, sizeof(subj), "call%d", i);
		assert_int_equal(store_add_decision(st, &d, &err), 0);
	}
	assert_int_equal(store_commit(st, &err), 0);
	return st;
}

/* The store's decisions chain: intact; an edited row, a removed row each found at their place. */
static void test_store_decisions(void **state)
{
	static const struct {
		const char *sql;
		uint64_t bad, n;
	} cases[] = {
		{ NULL, 0, 3 },
		{ "UPDATE decisions SET reason = 'allowed' WHERE subject = 'call1'", 2, 3 },
		{ "UPDATE decisions SET t_ms = t_ms + 1 WHERE subject = 'call0'", 1, 3 },
		{ "DELETE FROM decisions WHERE subject = 'call1'", 2, 2 },
		{ "UPDATE decisions SET hash = NULL WHERE subject = 'call2'", 3, 3 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct store *st = store_with_decisions();
		struct chain c;
		uint64_t bad = 99;
		int64_t rowid;
		char *err = NULL;

		if (cases[i].sql)
			assert_int_equal(store_exec(st, cases[i].sql, NULL, NULL, &err), 0);
		assert_int_equal(store_decisions_check(st, ID, &c, &bad, &rowid, &err), 0);
		if (bad != cases[i].bad || c.n != cases[i].n)
			fail_msg("%s: want bad %llu of %llu, got %llu of %llu",
				 cases[i].sql ? cases[i].sql : "untouched",
				 (unsigned long long)cases[i].bad, (unsigned long long)cases[i].n,
				 (unsigned long long)bad, (unsigned long long)c.n);
		store_close(st);
	}
}

/* The seal kept in the store verifies, and names the decisions chain the rows give. */
static size_t at_path_n;
static void at_path_count(void *ctx, const char *id, uint64_t lines, const char *state)
{
	(void)ctx;
	(void)lines;
	(void)state;
	assert_string_equal(id, ID);
	at_path_n++;
}

static void test_store_seal(void **state)
{
	struct store *st = store_with_decisions();
	struct store_chain sc;
	struct chain dec;
	struct seal s;
	uint64_t seq, bad;
	int64_t rowid;
	unsigned char prev[CHAIN_HASH_LEN];
	char *err = NULL;

	(void)state;
	/* The start records where the log is: not yet an end (found), and the seal keeps it. */
	assert_int_equal(store_chain_begin(st, ID, "/w/audit.jsonl", &err), 0);
	assert_int_equal(store_chain_get(st, ID, &sc, &err), 0);
	assert_false(sc.found);
	assert_string_equal(sc.audit_path, "/w/audit.jsonl");
	store_chain_free(&sc);
	assert_int_equal(seal_session(st, ID, NULL, 2000, &err), 0);
	assert_int_equal(store_chain_get(st, ID, &sc, &err), 0);
	assert_true(sc.found);
	assert_string_equal(sc.audit_path, "/w/audit.jsonl");
	at_path_n = 0;
	assert_int_equal(store_chain_at_path(st, "/w/audit.jsonl", at_path_count, NULL, &err), 0);
	assert_int_equal(at_path_n, 1);
	assert_non_null(sc.seal);
	assert_int_equal(verify_parse_seal(sc.seal, strlen(sc.seal), &s, &seq, prev), 0);
	assert_true(seal_verify(&s));
	assert_int_equal(store_decisions_check(st, ID, &dec, &bad, &rowid, &err), 0);
	assert_int_equal(s.decisions.n, 3);
	assert_memory_equal(s.decisions.head, dec.head, CHAIN_HASH_LEN);
	s.decisions.n = 2;      /* a seal claiming fewer rows no longer verifies */
	assert_false(seal_verify(&s));
	store_chain_free(&sc);
	store_close(st);
}

/* A key file is refused unless a regular file of mine with no group/other bits. */
static void test_key_stat(void **state)
{
	static const struct {
		mode_t mode;
		uid_t uid;
		bool ok;
		const char *words;
	} cases[] = {
		{ S_IFREG | 0600, 1000, true, NULL },
		{ S_IFREG | 0400, 1000, true, NULL },
		{ S_IFREG | 0640, 1000, false, "mode 0640" },
		{ S_IFREG | 0604, 1000, false, "mode 0604" },
		{ S_IFREG | 0200, 1000, false, "mode 0200" },
		{ S_IFREG | 0600, 0, false, "belongs to uid 0" },
		{ S_IFDIR | 0700, 1000, false, "not a regular file" },
		{ S_IFIFO | 0600, 1000, false, "not a regular file" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct stat st = { .st_mode = cases[i].mode, .st_uid = cases[i].uid };
		char *err = NULL;
		int rc = sign_key_check_stat("k", &st, 1000, &err);

		assert_int_equal(rc == 0, cases[i].ok);
		if (!cases[i].ok) {
			assert_non_null(err);
			if (!strstr(err, cases[i].words))
				fail_msg("case %zu: want \"%s\" in \"%s\"", i, cases[i].words, err);
		}
		free(err);
	}
}

/* The key file on disk: created 0600, a link refused, a widened mode refused, junk refused. */
static void test_key_file(void **state)
{
	char path[96], link[96], junk[96], *err = NULL;
	struct sign_key *k = NULL;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/k/signing.key", statedir);
	assert_int_equal(sign_key_load(path, false, &k, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(sign_key_load(path, true, &k, &err), 0);
	sign_key_free(k);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	snprintf(link, sizeof(link), "%s/k/link.key", statedir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(sign_key_load(link, true, &k, &err), -1);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	err = NULL;
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(sign_key_load(path, true, &k, &err), -1);
	assert_non_null(strstr(err, "mode 0644"));
	free(err);
	err = NULL;
	snprintf(junk, sizeof(junk), "%s/k/junk.key", statedir);
	assert_int_equal(write_file(junk, "hello\n", 6, 0600), 0);
	assert_int_equal(sign_key_load(junk, true, &k, &err), -1);
	assert_non_null(strstr(err, "not an ed25519"));
	free(err);
	unlink(link);
	unlink(junk);
	unlink(path);
	snprintf(link, sizeof(link), "%s/k", statedir);
	rmdir(link);
}

/*
 * The daemon's kept key (sign_key_reload): kept while the file is unchanged,
 * dropped when the file is refused, read again when it was replaced — and
 * seal_session, which keeps it between sessions, signs with the key on disk.
 */
static void test_key_reload(void **state)
{
	char path[96], other[96], dir[96], *err = NULL;
	unsigned char pub1[SIGN_PUB_LEN], pub2[SIGN_PUB_LEN];
	struct sign_key *k = NULL, *k2 = NULL, *kept;
	struct store *st = store_with_decisions();
	struct store_chain sc;
	struct seal s;
	uint64_t seq;
	unsigned char prev[CHAIN_HASH_LEN];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/r", statedir);
	snprintf(path, sizeof(path), "%s/signing.key", dir);
	snprintf(other, sizeof(other), "%s/other.key", dir);
	assert_int_equal(sign_key_reload(path, true, &k, &err), 0);
	sign_key_public(k, pub1);
	kept = k;
	assert_int_equal(sign_key_reload(path, true, &k, &err), 0);
	assert_ptr_equal(k, kept);
	/* widened: refused, the kept key dropped */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(sign_key_reload(path, true, &k, &err), -1);
	assert_null(k);
	assert_non_null(strstr(err, "mode 0644"));
	free(err);
	err = NULL;
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(sign_key_reload(path, true, &k, &err), 0);
	sign_key_public(k, pub2);
	assert_memory_equal(pub1, pub2, SIGN_PUB_LEN);
	/* replaced by another key: that one */
	assert_int_equal(sign_key_load(other, true, &k2, &err), 0);
	sign_key_free(k2);
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(sign_key_reload(path, true, &k, &err), 0);
	sign_key_public(k, pub2);
	assert_memory_not_equal(pub1, pub2, SIGN_PUB_LEN);
	/* replaced by a link: refused */
	assert_int_equal(rename(path, other), 0);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(sign_key_reload(path, true, &k, &err), -1);
	assert_null(k);
	free(err);
	err = NULL;
	unlink(path);
	unlink(other);
	rmdir(dir);

	/* seal_session's kept key follows the file too: two sessions, the key replaced between */
	snprintf(path, sizeof(path), "%s/boxy/signing.key", statedir);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(seal_session(st, ID, NULL, 2000 + i, &err), 0);
		assert_int_equal(store_chain_get(st, ID, &sc, &err), 0);
		assert_int_equal(verify_parse_seal(sc.seal, strlen(sc.seal), &s, &seq, prev), 0);
		assert_true(seal_verify(&s));
		assert_int_equal(sign_key_load(path, false, &k2, &err), 0);
		sign_key_public(k2, pub1);
		sign_key_free(k2);
		assert_memory_equal(s.key, pub1, SIGN_PUB_LEN);
		store_chain_free(&sc);
		if (i == 0) {
			assert_int_equal(unlink(path), 0);      /* the next seal makes a new key */
		}
	}
	seal_forget_key();
	store_close(st);
}

static int setup(void **state)
{
	char key[96];

	(void)state;
	snprintf(statedir, sizeof(statedir), "/tmp/test-chain.XXXXXX");
	if (!mkdtemp(statedir))
		return -1;
	setenv("XDG_STATE_HOME", statedir, 1);
	snprintf(key, sizeof(key), "%s/boxy", statedir);
	return mkdir(key, 0700);
}

static int teardown(void **state)
{
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/boxy/signing.key", statedir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/boxy", statedir);
	rmdir(p);
	return rmdir(statedir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_tamper),
		cmocka_unit_test(test_trusted_key),
		cmocka_unit_test(test_store_length),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_expected),
		cmocka_unit_test(test_seal_replay),
		cmocka_unit_test(test_store_decisions),
		cmocka_unit_test(test_store_seal),
		cmocka_unit_test(test_key_stat),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_key_reload),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
