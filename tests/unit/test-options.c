/*
 * test-options.c — the option table (spec/options.h) is the one place a
 * run-spec option is described: every row goes the whole way. Walking the
 * table, each row's sample value is given as a flag (long and, if it has
 * one, short) through the table-made getopt, applied, finished, encoded as
 * MSG_RUN by the client's encoder and decoded by the daemon's decoder; the
 * decoded run-spec must equal the sent one (JSON, and the bytes re-encoded),
 * the row must change both the wire and the JSON, and the same value written
 * under the row's profile key must give the same run-spec. A row without a
 * flag or without a profile key must be on the list of deliberate ones
 * below, so a row added half-way fails here (doc/internals-spec.md).
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg-run.h"
#include "spec/options.h"
#include "spec/profile.h"
#include "spec/runspec.h"
#include "common/util.h"

/* Rows that are deliberately not command-line flags: the command, and two profile-only keys. */
static const char *const no_flag[] = { "argv", "filesystem.mkdir", "env.set", "audit-log" };
/* Flags deliberately not in profiles: the profile itself, the run's place, files, the session. */
static const char *const no_key[] = {
	"profile", "argv", "workdir", "audit-log", "net-log", "pcap", "pcap-max", "tty", "verbose",
	"detach", "report", "no-attribution",
};

/* A value of the row's kind that the validator accepts, and that differs from the base run. */
static const char *sample(const struct spec_option *o)
{
	switch (o->kind) {
	case SPEC_ARGV: return "true";
	case SPEC_SWITCH: return NULL;
	case SPEC_NAME: return "node";
	case SPEC_DIR: return "/w/sub";
	case SPEC_FILE: return "/w/out.log";
	case SPEC_AUDIT_LOG: return "/w/audit.log";
	case SPEC_JOURNAL: return "journal";
	case SPEC_SIZE: return "2GiB";
	case SPEC_DURATION: return "90s";
	case SPEC_COUNT: return "512";
	case SPEC_CPUS: return "1.5";
	case SPEC_NET_MODE: return "public";
	case SPEC_SECCOMP: return "compat";
	case SPEC_ONOFF: return "on";
	case SPEC_MOUNT: return "/w/m";
	case SPEC_COPY: return "/w/c:/d";
	case SPEC_HOST: return "example.com:443";
	case SPEC_PORT: return "8443";
	case SPEC_CIDR: return "10.0.0.0/8";
	case SPEC_ENV: return "TOKEN";
	case SPEC_ENV_SET: return "TOKEN=v";
	case SPEC_FAIL_ON: return "deny,alert";
	case SPEC_HTTP_RULE: return "method=GET,HEAD domain=api.example.com path=/v1/x";
	case SPEC_ON_ALERT: return "log,tripwire=freeze";
	}
	return NULL;
}

static bool listed(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The run every row is added to: a command, allowlist mode, a capture (for --pcap-max). */
static void base_run(struct runspec *rs)
{
	runspec_init(rs);
	strv_push(&rs->argv, "true");
	rs->net = NET_ALLOWLIST;
	rs->pcap = xstrdup("/w/base.pcap");
}

/* base with top over it, finished against /w. */
static void finish_over_base(const struct runspec *top, struct runspec *out)
{
	char *err = NULL;

	base_run(out);
	runspec_merge(out, top);
	if (runspec_finish(out, "/w", &err) < 0)
		fail_msg("runspec_finish: %s", err);
}

/* rs as MSG_RUN bytes (no descriptors but stdio). malloc'd, *len set. */
static uint8_t *encode(const struct runspec *rs, size_t *len)
{
	struct run_request q;
	struct wbuf w;
	int fds[MSG_MAX_FDS];
	size_t nfds;

	run_request_init(&q);
	q.rs = *rs;                 /* borrowed */
	strv_push(&q.env, "PATH=/bin");
	q.cwd = xstrdup("/w");
	q.home = xstrdup("/h");
	for (int i = RUN_FD_STDIN; i <= RUN_FD_STDERR; i++)
		q.fd[i] = rs->detach ? -1 : i;
	wbuf_init(&w);
	run_request_encode(&q, &w, fds, &nfds);
	strv_free(q.env);
	free(q.cwd);
	free(q.home);
	*len = w.len;
	return (uint8_t *)w.p;
}

/* Through the wire and back: the decoded run-spec, which must re-encode to the same bytes. */
static void wire_round_trip(const struct runspec *rs, struct runspec *out)
{
	static const int fds[3] = { 0, 1, 2 };
	struct run_request q;
	size_t len, len2;
	uint8_t *p = encode(rs, &len), *p2;
	char *err = NULL;

	if (run_request_decode(p, len, fds, rs->detach ? 0 : 3, &q, &err) < 0)
		fail_msg("decode: %s", err);
	p2 = encode(&q.rs, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(p, p2, len);
	*out = q.rs;
	runspec_init(&q.rs);
	run_request_free(&q);
	free(p);
	free(p2);
}

/* The row's sample as a flag (long, or short when shortf): the run-spec of that flag alone. */
static void from_flag(const struct spec_option *o, bool shortf, struct runspec *rs)
{
	struct option table[128];
	char shortopts[64] = "+:", *argv[5];
	int argc = 0, opt;
	const char *v = sample(o);
	char *word;

	spec_options_getopt(table, ARRAY_SIZE(table));
	spec_options_shortopts(shortopts + 2, sizeof(shortopts) - 2);
	word = shortf ? xasprintf("-%c", o->short_flag) : xasprintf("--%s", o->flag);
	argv[argc++] = "run";
	argv[argc++] = word;
	if (v)
		argv[argc++] = (char *)v;
	argv[argc++] = "true";
	argv[argc] = NULL;
	runspec_init(rs);
	opterr = 0;
	optind = 0;
	opt = getopt_long(argc, argv, shortopts, table, NULL);
	assert_true(spec_option_by_getopt(opt) == o);
	{
		char *err = NULL;

		if (spec_option_apply(o, rs, optarg ? optarg : "", &err) < 0)
			fail_msg("--%s: %s", o->flag, err);
	}
	assert_int_equal(getopt_long(argc, argv, shortopts, table, NULL), -1);
	free(word);
}

/* The row's sample under its profile key: the run-spec of that document. */
static void from_key(const struct spec_option *o, struct runspec *rs)
{
	const char *dot = strchr(o->key, '.'), *v = sample(o);
	const char *key = dot ? dot + 1 : o->key;
	struct profile_ctx ctx = { "/h", "/w" };
	char *value, *doc, *err = NULL;

	if (o->kind == SPEC_SWITCH)
		value = xstrdup("true");
	else if (o->kind == SPEC_ENV_SET)
		value = xstrdup("\n    TOKEN: v");
	else if (spec_kind_is_list(o->kind))
		value = xasprintf("[\"%s\"]", v);
	else
		value = xasprintf("\"%s\"", v);
	if (dot)
		doc = xasprintf("%.*s:\n  %s: %s\n", (int)(dot - o->key), o->key, key, value);
	else
		doc = xasprintf("%s: %s\n", key, value);
	runspec_init(rs);
	if (profile_yaml_apply(doc, strlen(doc), "t.yaml", &ctx, rs, NULL, NULL, &err) < 0)
		fail_msg("%s: %s", doc, err);
	free(value);
	free(doc);
}

/* The row's sample applied directly (for the rows without a flag). */
static void from_apply(const struct spec_option *o, struct runspec *rs)
{
	char *err = NULL;

	runspec_init(rs);
	if (spec_option_apply(o, rs, sample(o), &err) < 0)
		fail_msg("%s: %s", o->json, err);
}

static void assert_same_run(const struct runspec *a, const struct runspec *b)
{
	char *ja = runspec_to_json(a), *jb = runspec_to_json(b);
	size_t la, lb;
	uint8_t *pa = encode(a, &la), *pb = encode(b, &lb);

	assert_string_equal(ja, jb);
	assert_int_equal(la, lb);
	assert_memory_equal(pa, pb, la);
	free(ja);
	free(jb);
	free(pa);
	free(pb);
}

static void test_every_row_goes_the_whole_way(void **state)
{
	struct runspec base, empty;
	char *base_json;
	size_t base_len;
	uint8_t *base_wire;

	(void)state;
	runspec_init(&empty);
	finish_over_base(&empty, &base);
	base_json = runspec_to_json(&base);
	base_wire = encode(&base, &base_len);
	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];
		const char *name = o->flag ? o->flag : o->key ? o->key : o->json;
		struct runspec one, run, back, other;
		char *json;
		size_t len;
		uint8_t *wire;

		print_message("# %s\n", name);
		assert_non_null(o->json);
		if (!o->flag)
			assert_true(listed(no_flag, ARRAY_SIZE(no_flag), o->key ? o->key : o->json));
		if (!o->key)
			assert_true(listed(no_key, ARRAY_SIZE(no_key), o->flag ? o->flag : o->json));
		if (o->kind == SPEC_ARGV)
			continue;       /* the command: every run has one (base_run) */

		/* CLI -> run-spec, finished over the base */
		if (o->flag)
			from_flag(o, false, &one);
		else
			from_apply(o, &one);
		finish_over_base(&one, &run);

		/* the row shows: in the JSON and on the wire */
		json = runspec_to_json(&run);
		assert_string_not_equal(json, base_json);
		free(json);
		wire = encode(&run, &len);
		assert_false(len == base_len && memcmp(wire, base_wire, len) == 0);
		free(wire);

		/* -> wire -> run-spec: the same run */
		wire_round_trip(&run, &back);
		assert_same_run(&run, &back);
		runspec_free(&back);

		/* the short flag is the same row */
		if (o->short_flag) {
			from_flag(o, true, &other);
			finish_over_base(&other, &back);
			assert_same_run(&run, &back);
			runspec_free(&other);
			runspec_free(&back);
		}
		/* -> profile key: the same value under the key gives the same run */
		if (o->key) {
			from_key(o, &other);
			finish_over_base(&other, &back);
			assert_same_run(&run, &back);
			runspec_free(&other);
			runspec_free(&back);
		}
		runspec_free(&one);
		runspec_free(&run);
	}
	free(base_json);
	free(base_wire);
	runspec_free(&base);
}

/* Every profile key and flag is unique, and lookups find their own row. */
static void test_names_unique(void **state)
{
	(void)state;
	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];

		if (o->flag)
			assert_ptr_equal(spec_option_by_flag(o->flag), o);
		if (o->short_flag)
			assert_ptr_equal(spec_option_by_short(o->short_flag), o);
		if (o->key)
			assert_ptr_equal(spec_option_by_key(o->key), o);
		/* rows sharing a field share its kind's shape: a list of one type, or the
		 * audit log's string (a file or the journal from the flag, the journal
		 * alone from a profile) */
		for (size_t j = 0; j < i; j++)
			if (spec_options[j].field == o->field)
				assert_true((spec_kind_is_list(o->kind) &&
					     spec_kind_is_list(spec_options[j].kind) &&
					     spec_options[j].count == o->count) ||
					    (spec_options[j].kind == SPEC_AUDIT_LOG &&
					     o->kind == SPEC_JOURNAL));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_goes_the_whole_way),
		cmocka_unit_test(test_names_unique),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
