/*
 * test-doctor.c — `boxy doctor`'s output: the specification's line format
 * exactly (mark, name in ten columns, status, detail), notes indented under
 * it, the JSON shape, and "can run" meaning no check failed. The probes
 * themselves depend on the host and are run by tests/e2e/cli-contract.sh.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/doctor.h"
#include "common/util.h"

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
	static const char *const names[] = { "kernel", "landlock", "seccomp", "userns", "apparmor",
					     "tun", "cgroup2", "memory", "attrib", "tripwires",
					     "freeze" };
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

/* Write text to root/rel, making the directories. */
static void fake_file(const char *root, const char *rel, const char *text)
{
	char *path = xasprintf("%s%s", root, rel);
	char *cmd = xasprintf("mkdir -p \"$(dirname '%s')\"", path);
	FILE *f;

	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(cmd);
	free(path);
}

/* Ubuntu 24.04's restriction, faked: detected, the fix printed, a confined boxy is fine. */
static void test_apparmor_fake_proc(void **state)
{
	static const struct {
		const char *restrict_val;   /* NULL: the sysctl is absent */
		const char *label;          /* NULL: no attr file (no AppArmor) */
		const char *old_label;      /* /proc/self/attr/current, pre-5.8 kernels */
		enum doctor_status want;
		const char *detail_has, *note_has;
	} rows[] = {
		{ NULL, NULL, NULL, DOCTOR_OK, "no user-namespace restriction", NULL },
		{ "0\n", "unconfined\n", NULL, DOCTOR_OK, "= 0", NULL },
		{ "1\n", "unconfined\n", NULL, DOCTOR_FAIL, "refused", "/etc/apparmor.d/boxy" },
		{ "1\n", NULL, NULL, DOCTOR_FAIL, "unconfined", "apparmor_parser -r" },
		{ "1\n", NULL, "unconfined\n", DOCTOR_FAIL, "refused", "/apparmor/boxy" },
		{ "1\n", "boxy (unconfined)\n", NULL, DOCTOR_OK, "profile boxy (unconfined)", NULL },
		{ "1\n", NULL, "boxy (enforce)\n", DOCTOR_OK, "profile boxy (enforce)", NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char root[] = "/tmp/boxy-test-doctor-XXXXXX";
		struct doctor_check c;
		char *cmd;

		assert_non_null(mkdtemp(root));
		if (rows[i].restrict_val)
			fake_file(root, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
				  rows[i].restrict_val);
		if (rows[i].label)
			fake_file(root, "/proc/self/attr/apparmor/current", rows[i].label);
		if (rows[i].old_label)
			fake_file(root, "/proc/self/attr/current", rows[i].old_label);
		doctor_check_apparmor_at(&c, root);
		assert_string_equal(c.name, "apparmor");
		if (c.status != rows[i].want || !strstr(c.detail, rows[i].detail_has))
			fail_msg("row %zu: status %d, detail \"%s\"", i, c.status, c.detail);
		if (rows[i].note_has) {
			bool found = false;

			for (size_t k = 0; c.notes && c.notes[k]; k++)
				found |= strstr(c.notes[k], rows[i].note_has) != NULL;
			if (!found)
				fail_msg("row %zu: no note has \"%s\"", i, rows[i].note_has);
			/* Both fixes, the profile and the sysctl. */
			assert_non_null(c.notes[1]);
			assert_non_null(strstr(c.notes[1], "sysctl"));
		}
		doctor_check_free(&c);
		cmd = xasprintf("rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
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
		cmocka_unit_test(test_apparmor_fake_proc),
		cmocka_unit_test(test_text_wrap_and_color),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
