/*
 * test-mount.c — the pure parts of the mount stage's git protection: the
 * small git config reader that finds core.worktree (where a submodule's
 * checkout and its .git file are) and extensions.worktreeConfig (whether
 * config.worktree must be locked too). The config is text a previous
 * sandbox may have written, so odd input must give NULL, never a crash.
 * The mounts themselves need namespaces: the escape suite covers them.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "init/mount.h"
#include "common/util.h"

static void test_config_value(void **state)
{
	static const struct {
		const char *what, *text, *section, *key, *want;   /* want NULL: absent */
	} rows[] = {
		{ "plain key", "[core]\n\tworktree = ../../../libs/a\n",
		  "core", "worktree", "../../../libs/a" },
		{ "no spaces around =", "[core]\nworktree=/w\n", "core", "worktree", "/w" },
		{ "quoted value", "[core]\n\tworktree = \"/a b\"\n", "core", "worktree", "/a b" },
		{ "trailing blanks and CR dropped", "[core]\r\n\tworktree = /w \t\r\n",
		  "core", "worktree", "/w" },
		{ "section and key without case", "[CORE]\n\tWorkTree = /w\n",
		  "core", "worktree", "/w" },
		{ "last one wins", "[core]\nworktree = /a\n[core]\nworktree = /b\n",
		  "core", "worktree", "/b" },
		{ "bare key is true", "[extensions]\n\tworktreeConfig\n",
		  "extensions", "worktreeconfig", "true" },
		{ "bare key before a comment", "[extensions]\n\tworktreeConfig # on\n",
		  "extensions", "worktreeConfig", "true" },
		{ "other section", "[remote]\n\tworktree = /w\n", "core", "worktree", NULL },
		{ "subsection is not the section", "[core \"x\"]\n\tworktree = /w\n",
		  "core", "worktree", NULL },
		{ "section name prefix only", "[corex]\n\tworktree = /w\n", "core", "worktree", NULL },
		{ "longer key", "[core]\n\tworktreeX = /w\n", "core", "worktree", NULL },
		{ "key before any section", "worktree = /w\n[core]\n", "core", "worktree", NULL },
		{ "empty text", "", "core", "worktree", NULL },
		{ "garbage", "\x01\x02[[[==\n]]\n=\n", "core", "worktree", NULL },
		{ "empty value", "[core]\n\tworktree =\n", "core", "worktree", "" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *got = mount_git_config_value(rows[i].text, rows[i].section, rows[i].key);

		if (!rows[i].want) {
			if (got)
				fail_msg("%s: want absent, got \"%s\"", rows[i].what, got);
		} else {
			if (!got)
				fail_msg("%s: want \"%s\", got absent", rows[i].what, rows[i].want);
			if (strcmp(got, rows[i].want) != 0)
				fail_msg("%s: want \"%s\", got \"%s\"", rows[i].what, rows[i].want, got);
		}
		free(got);
	}
}

/* Every value of a key, and subsections only when asked (includeIf.*.path). */
static void test_config_values(void **state)
{
	static const struct {
		const char *what, *text, *section, *key;
		bool any_sub;
		const char *want;       /* values joined with '|', NULL: none */
	} rows[] = {
		{ "include paths in order", "[include]\n\tpath = a\n\tpath = ../b\n",
		  "include", "path", false, "a|../b" },
		{ "includeIf with a condition", "[includeIf \"gitdir:~/w/\"]\n\tpath = ../.gitconfig\n",
		  "includeIf", "path", true, "../.gitconfig" },
		{ "includeIf over two sections", "[includeIf \"a\"]\npath=x\n[core]\npath=n\n"
		  "[includeif \"b\"]\npath = \"y z\"\n", "includeIf", "path", true, "x|y z" },
		{ "subsection refused without any_sub", "[include \"x\"]\n\tpath = a\n",
		  "include", "path", false, NULL },
		{ "old dotted subsection with any_sub", "[includeIf.x]\n\tpath = a\n",
		  "includeIf", "path", true, "a" },
		{ "prefix section is not includeIf", "[includeIfx \"a\"]\n\tpath = a\n",
		  "includeIf", "path", true, NULL },
		{ "hooksPath any case", "[core]\n\thookspath = .husky/_\n",
		  "core", "hooksPath", false, ".husky/_" },
		{ "none", "[core]\n\tbare = false\n", "core", "hooksPath", false, NULL },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char **got = mount_git_config_values(rows[i].text, rows[i].section, rows[i].key,
						     rows[i].any_sub);
		char *joined = NULL;

		for (size_t j = 0; got && got[j]; j++) {
			char *n = joined ? xasprintf("%s|%s", joined, got[j]) : xstrdup(got[j]);

			free(joined);
			joined = n;
		}
		if (!rows[i].want && joined)
			fail_msg("%s: want none, got \"%s\"", rows[i].what, joined);
		if (rows[i].want && (!joined || strcmp(joined, rows[i].want) != 0))
			fail_msg("%s: want \"%s\", got \"%s\"", rows[i].what, rows[i].want,
				 joined ? joined : "(none)");
		free(joined);
		strv_free(got);
	}
}

static void test_bool_true(void **state)
{
	static const struct { const char *in; bool want; } rows[] = {
		{ "true", true }, { "TRUE", true }, { "yes", true }, { "on", true }, { "1", true },
		{ "false", false }, { "no", false }, { "off", false }, { "0", false },
		{ "", false }, { "truex", false }, { NULL, false },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (mount_git_bool_true(rows[i].in) != rows[i].want)
			fail_msg("\"%s\": want %d", rows[i].in ? rows[i].in : "(null)",
				 rows[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_value),
		cmocka_unit_test(test_config_values),
		cmocka_unit_test(test_bool_true),
	};

	return cmocka_run_group_tests_name("mount", tests, NULL, NULL);
}
