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

#include "sandbox-mount.h"
#include "util.h"

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
		cmocka_unit_test(test_bool_true),
	};

	return cmocka_run_group_tests_name("mount", tests, NULL, NULL);
}
