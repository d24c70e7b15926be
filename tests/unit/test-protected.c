/*
 * test-protected.c — the registry of directories no sandbox may write
 * (src/common/protected.c): a table of writable paths against registered
 * directories, by name, through symlinks resolved by the caller, for paths
 * that do not exist yet, and by (device, inode) when the same directory is
 * reached under another name (as a bind mount would show it: here the
 * directory is renamed between its registration and the check).
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
#include <sys/stat.h>
#include <unistd.h>

#include "common/protected.h"
#include "common/util.h"

static char root[64];

static char *at(const char *rel)
{
	return xasprintf("%s/%s", root, rel);
}

/* The registry: the daemon's state and socket directories. */
static void register_dirs(void)
{
	char *s = at("state/boxy"), *r = at("run/boxy");

	protected_reset();
	protected_add_dir(s);
	protected_add_dir(r);
	free(s);
	free(r);
}

static int setup(void **state)
{
	const char *dirs[] = { "state", "state/boxy", "state/boxy/sub", "run", "run/boxy",
			       "proj", "proj/deep", "state-x", "stately" };

	(void)state;
	snprintf(root, sizeof(root), "/tmp/boxy-test-protected.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *p = at(dirs[i]);

		mkdir(p, 0700);
		free(p);
	}
	register_dirs();
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", root);

	(void)state;
	protected_reset();
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", root);
	free(cmd);
	return 0;
}

static const struct row {
	const char *rel;        /* relative to root; "/" for the root directory */
	bool conflict;
} rows[] = {
	{ "state/boxy", true },             /* the directory itself */
	{ "state", true },                  /* its parent */
	{ "", true },                       /* an ancestor of both */
	{ "/", true },                      /* / */
	{ "state/boxy/sub", true },         /* inside */
	{ "state/boxy/sessions.db", true }, /* a file inside, missing yet */
	{ "state/boxy/new/deeper", true },  /* missing, inside */
	{ "run", true },                    /* the socket directory's parent */
	{ "run/boxy", true },
	{ "proj", false },                  /* beside */
	{ "proj/deep", false },
	{ "state-x", false },               /* a name sharing the prefix */
	{ "stately", false },
	{ "state/other", false },           /* a sibling of the protected directory */
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *p = strcmp(rows[i].rel, "/") == 0 ? xstrdup("/") :
			  rows[i].rel[0] ? at(rows[i].rel) : xstrdup(root);
		const char *hit = protected_find_conflict(p);

		print_message("# %s: %s\n", p, hit ? hit : "(none)");
		assert_int_equal(hit != NULL, rows[i].conflict);
		free(p);
	}
}

/* The registered directory renamed: the old name is gone, the inode says it is the same. */
static void test_renamed_alias(void **state)
{
	char *from = at("run/boxy"), *to = at("proj/moved"), *inside = at("proj/moved/x");
	char *beside = at("proj/deep");

	(void)state;
	assert_int_equal(rename(from, to), 0);
	assert_non_null(protected_find_conflict(to));        /* is X, by another name */
	assert_non_null(protected_find_conflict(inside));    /* inside X, by another name */
	assert_null(protected_find_conflict(beside));
	assert_int_equal(rename(to, from), 0);
	free(from);
	free(to);
	free(inside);
	free(beside);
}

/* The protected directory's parent renamed: a mount of it would cover the directory. */
static void test_renamed_ancestor(void **state)
{
	char *from = at("run"), *to = at("proj/moved-run");

	(void)state;
	assert_int_equal(rename(from, to), 0);
	assert_non_null(protected_find_conflict(to));
	assert_int_equal(rename(to, from), 0);
	free(from);
	free(to);
}

/* Nothing registered: nothing conflicts; a relative or NULL path never does. */
static void test_empty_and_hostile(void **state)
{
	(void)state;
	assert_null(protected_find_conflict(NULL));
	assert_null(protected_find_conflict("relative/path"));
	protected_reset();
	assert_null(protected_find_conflict("/"));
	register_dirs();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_renamed_alias),
		cmocka_unit_test(test_renamed_ancestor),
		cmocka_unit_test(test_empty_and_hostile),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
