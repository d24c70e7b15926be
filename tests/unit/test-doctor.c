/*
 * test-doctor.c — `boxy doctor`'s output: the specification's line format
 * exactly (mark, name in ten columns, status, detail), notes indented under
 * it, the JSON shape, and "can run" meaning no check failed. The probes
 * themselves depend on the host and are run by tests/cli.sh.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "util.h"

/* A report of two checks built by hand. */
static void sample(struct doctor_report *r, enum doctor_status second)
{
	memset(r, 0, sizeof(*r));
	r->checks[0].name = "kernel";
	r->checks[0].status = DOCTOR_OK;
	r->checks[0].detail = xstrdup("6.18.44");
	r->checks[1].name = "tun";
	r->checks[1].status = second;
	r->checks[1].detail = xstrdup("/dev/net/tun is not writable");
	strv_push(&r->checks[1].notes, "needed for --net public/allowlist");
	r->n = 2;
}

static void test_text_format(void **state)
{
	static const struct {
		enum doctor_status s;
		const char *want;
	} rows[] = {
		{ DOCTOR_OK, " + kernel    ok  6.18.44\n"
			     " + tun       ok  /dev/net/tun is not writable\n"
			     "                needed for --net public/allowlist\n" },
		{ DOCTOR_WARN, " + kernel    ok  6.18.44\n"
			       " ! tun       warn  /dev/net/tun is not writable\n"
			       "                needed for --net public/allowlist\n" },
		{ DOCTOR_FAIL, " + kernel    ok  6.18.44\n"
			       " x tun       fail  /dev/net/tun is not writable\n"
			       "                needed for --net public/allowlist\n" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct doctor_report r;
		char *got;

		sample(&r, rows[i].s);
		got = doctor_format_text(&r);
		assert_string_equal(got, rows[i].want);
		/* warnings still run; a failure does not */
		assert_int_equal(doctor_can_run(&r), rows[i].s != DOCTOR_FAIL);
		free(got);
		doctor_report_free(&r);
	}
}

static void test_json_format(void **state)
{
	struct doctor_report r;
	char *got;

	(void)state;
	sample(&r, DOCTOR_WARN);
	got = doctor_format_json(&r);
	assert_string_equal(got,
		"[{\"check\":\"kernel\",\"status\":\"ok\",\"detail\":\"6.18.44\",\"notes\":[]},"
		"{\"check\":\"tun\",\"status\":\"warn\",\"detail\":\"/dev/net/tun is not writable\","
		"\"notes\":[\"needed for --net public/allowlist\"]}]");
	free(got);
	doctor_report_free(&r);
}

static void test_real_run_is_well_formed(void **state)
{
	static const char *const names[] = { "kernel", "landlock", "seccomp", "userns", "tun",
					     "cgroup2" };
	struct doctor_report r;

	(void)state;
	doctor_run(&r);
	assert_int_equal(r.n, ARRAY_SIZE(names));
	for (size_t i = 0; i < r.n; i++) {
		assert_string_equal(r.checks[i].name, names[i]);
		assert_non_null(r.checks[i].detail);
		/* a warning or a failure always says why */
		if (r.checks[i].status != DOCTOR_OK && strcmp(names[i], "kernel") != 0)
			assert_true(r.checks[i].notes && r.checks[i].notes[0]);
	}
	doctor_report_free(&r);
}

/* Long details and notes wrap at 80 columns under their column; colour only on the mark. */
static void test_text_wrap_and_color(void **state)
{
	struct doctor_report r;
	char *got;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.checks[0].name = "landlock";
	r.checks[0].status = DOCTOR_WARN;
	r.checks[0].detail = xstrdup("ABI 7 (ABI 9 wanted: see below)");
	strv_push(&r.checks[0].notes, "connect() to unix sockets under a --ro path is not "
		  "restricted (needs ABI 9); replaced by masking the sockets present there when "
		  "the run starts");
	strv_push(&r.checks[0].notes, "a-word-wider-than-the-line-" "0123456789012345678901234"
		  "567890123456789012345678901234567890 stays whole");
	r.n = 1;
	got = doctor_format_text(&r);
	assert_string_equal(got,
		" ! landlock  warn  ABI 7 (ABI 9 wanted: see below)\n"
		"                connect() to unix sockets under a --ro path is not restricted\n"
		"                  (needs ABI 9); replaced by masking the sockets present there\n"
		"                  when the run starts\n"
		"                a-word-wider-than-the-line-0123456789012345678901234567890123456789"
		"012345678901234567890\n"
		"                  stays whole\n");
	free(got);
	got = doctor_format_text_color(&r, true);
	{
		const char *want = " \x1b[33m!\x1b[0m landlock  warn  ABI 7 (ABI 9 wanted";

		assert_true(strncmp(got, want, strlen(want)) == 0);
	}
	free(got);
	doctor_report_free(&r);

	/* This host's real report: no line past 80 columns. */
	doctor_run(&r);
	got = doctor_format_text(&r);
	for (char *line = got, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		if (nl - line > 80)
			print_error("too wide: %.*s\n", (int)(nl - line), line);
		assert_true(nl - line <= 80);
	}
	free(got);
	doctor_report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_format),
		cmocka_unit_test(test_json_format),
		cmocka_unit_test(test_real_run_is_well_formed),
		cmocka_unit_test(test_text_wrap_and_color),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
