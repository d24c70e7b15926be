/*
 * test-path-guard.c — the walker that keeps planted symlinks inside the
 * tree a sandbox could write, and the output-file opener built on it.
 * Each row builds a small tree in a scratch directory (the "host"), names
 * which directories are writable roots, and says whether the path opens
 * (and to which file) or fails with which errno. No namespaces needed.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path-guard.h"
#include "store/store.h"
#include "common/util.h"

static char top[PATH_MAX];      /* the scratch tree, realpath'd */

/* top/rel, in a static buffer (one at a time is enough per call site). */
static const char *at(const char *rel, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", top, rel);
	return buf;
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f = fopen(at(rel, p), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void link_to(const char *target, const char *rel)
{
	char p[PATH_MAX], t[PATH_MAX];

	/* A target starting with '@' is absolute below top. */
	assert_int_equal(symlink(target[0] == '@' ? at(target + 1, t) : target, at(rel, p)), 0);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/boxy-guard.XXXXXX";
	char p[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, top));
	/*
	 * home/.ssh/id        the secret
	 * home/proj           a writable root (a sandbox's work directory)
	 * home/proj/sub       a nested writable root (--rw)
	 * home/other          a directory no sandbox could write
	 */
	mkdir(at("home", p), 0700);
	mkdir(at("home/.ssh", p), 0700);
	mkdir(at("home/proj", p), 0700);
	mkdir(at("home/proj/sub", p), 0700);
	mkdir(at("home/proj/inner", p), 0700);
	mkdir(at("home/other", p), 0700);
	put("home/.ssh/id", "SECRET");
	put("home/proj/real.txt", "inside");
	put("home/proj/inner/x.txt", "inner");
	put("home/other/dot.txt", "dotfile");
	link_to("@home/.ssh", "home/proj/dist");                 /* absolute, out */
	link_to("@home/.ssh/id", "home/proj/config.json");       /* absolute, out */
	link_to("../.ssh/id", "home/proj/rel.json");             /* relative, out */
	link_to("real.txt", "home/proj/inside.link");            /* stays inside */
	link_to("inner", "home/proj/indir");                     /* a directory inside */
	link_to("../real.txt", "home/proj/sub/up.link");         /* out of sub, into proj */
	link_to("@home/other/dot.txt", "home/dot.link");         /* not in a root: followed */
	link_to("@home/proj", "home/projlink");                  /* the user's own alias */
	link_to("../../.ssh", "home/proj/inner/deep");           /* a second hop, out */
	link_to("indir/../../.ssh/id", "home/proj/dotdot");      /* ".." above the root */
	link_to("sub", "home/proj/tosub");                       /* into the nested root */
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

static void roots_fill(struct path_roots *r)
{
	char p[PATH_MAX];

	path_roots_init(r);
	path_roots_add(r, at("home/proj", p));
	path_roots_add(r, at("home/proj/sub", p));
}

/* Read the opened file: "" when it is not a readable regular file. */
static void read_fd(int fd, char *buf, size_t n)
{
	ssize_t got = read(fd, buf, n - 1);

	buf[got > 0 ? got : 0] = '\0';
}

static void test_guard_rows(void **state)
{
	static const struct {
		const char *path;       /* below top */
		int err;                /* 0: opens */
		const char *content;    /* when it opens */
		const char *why;
	} rows[] = {
		{ "home/proj/config.json", EXDEV, NULL, "an absolute link in a root leads out" },
		{ "home/proj/rel.json", EXDEV, NULL, "a relative link in a root climbs out" },
		{ "home/proj/dist/id", EXDEV, NULL, "a planted directory link, then a file" },
		{ "home/projlink/dist/id", EXDEV, NULL, "reached through the user's own alias" },
		{ "home/projlink/config.json", EXDEV, NULL, "the same for a file" },
		{ "home/proj/inner/deep/id", EXDEV, NULL, "a link deeper in the root" },
		{ "home/proj/dotdot", EXDEV, NULL, "'..' above the root inside a link" },
		{ "home/proj/sub/up.link", EXDEV, NULL, "out of the nested root (into its parent)" },
		{ "home/proj/tosub/up.link", EXDEV, NULL, "the nested root limits its own link, "
		  "even after a link of the outer root led there" },
		{ "home/proj/inside.link", 0, "inside", "a link that stays inside works" },
		{ "home/proj/indir/x.txt", 0, "inner", "a directory link inside works" },
		{ "home/dot.link", 0, "dotfile", "links outside every root are followed" },
		{ "home/projlink/real.txt", 0, "inside", "an alias outside the roots is followed" },
		{ "home/proj/../.ssh/id", 0, "SECRET", "'..' the user typed is not a planted link" },
		{ "home/proj/missing", ENOENT, NULL, "a missing file" },
	};
	struct path_roots roots;
	int rootfd = open("/", O_PATH | O_DIRECTORY);

	(void)state;
	roots_fill(&roots);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char p[PATH_MAX], buf[64], *why = NULL;
		int fd;

		fd = path_guard_open(rootfd, at(rows[i].path, p), O_RDONLY, 0, &roots, 0, &why);
		if (rows[i].err) {
			if (fd >= 0 || errno != rows[i].err)
				fail_msg("row %zu (%s): %s: got fd %d errno %d, want errno %d", i,
					 rows[i].why, rows[i].path, fd, errno, rows[i].err);
			if (rows[i].err == EXDEV) {
				assert_non_null(why);
				assert_non_null(strstr(why, "leads out of"));
			}
		} else {
			if (fd < 0)
				fail_msg("row %zu (%s): %s: errno %d", i, rows[i].why, rows[i].path,
					 errno);
			read_fd(fd, buf, sizeof(buf));
			assert_string_equal(buf, rows[i].content);
			close(fd);
		}
		free(why);
	}
	/* Without roots the same links are followed: the rule is the roots, nothing else. */
	{
		char p[PATH_MAX], buf[64];
		int fd = path_guard_open(rootfd, at("home/proj/config.json", p), O_RDONLY, 0,
					 NULL, 0, NULL);

		assert_true(fd >= 0);
		read_fd(fd, buf, sizeof(buf));
		assert_string_equal(buf, "SECRET");
		close(fd);
	}
	path_roots_free(&roots);
	close(rootfd);
}

static void test_guard_nofollow_last(void **state)
{
	char p[PATH_MAX];
	int rootfd = open("/", O_PATH | O_DIRECTORY), fd;

	(void)state;
	/* Outside every root too: an output file is never written through a link. */
	fd = path_guard_open(rootfd, at("home/dot.link", p), O_RDONLY, 0, NULL,
			     PATH_GUARD_NOFOLLOW_LAST, NULL);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, ELOOP);
	close(rootfd);
}

static void test_output_refusals(void **state)
{
	struct path_roots roots;
	char p[PATH_MAX], q[PATH_MAX], *err = NULL, buf[64];
	struct stat st;
	int fd;

	(void)state;
	roots_fill(&roots);
	put("home/.bashrc", "# rc\n");
	link_to("@home/.bashrc", "home/proj/audit.jsonl");
	fd = path_guard_open_output("--audit-log", at("home/proj/audit.jsonl", p), true, &roots,
				    &err);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "symlink"));
	free(err);
	err = NULL;
	/* The same link outside any root: still refused (last component). */
	link_to("@home/.bashrc", "home/other/audit.jsonl");
	fd = path_guard_open_output("--audit-log", at("home/other/audit.jsonl", p), true, NULL,
				    &err);
	assert_int_equal(fd, -1);
	free(err);
	err = NULL;
	/* A planted directory link on the way: refused inside a root. */
	fd = path_guard_open_output("--net-log", at("home/proj/dist/out.json", p), false, &roots,
				    &err);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "leads out of"));
	free(err);
	err = NULL;
	assert_int_equal(stat(at("home/.ssh/out.json", p), &st), -1);
	/* A hard link to another file of the user's. */
	assert_int_equal(link(at("home/.bashrc", p), at("home/proj/hard.json", q)), 0);
	fd = path_guard_open_output("--net-log", q, false, &roots, &err);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "hard link"));
	free(err);
	err = NULL;
	/* A FIFO: refused without blocking, with no reader and with one. */
	assert_int_equal(mkfifo(at("home/proj/fifo", p), 0600), 0);
	fd = path_guard_open_output("--pcap", p, false, &roots, &err);
	assert_int_equal(fd, -1);
	free(err);
	err = NULL;
	{
		int rd = open(p, O_RDONLY | O_NONBLOCK);

		assert_true(rd >= 0);
		fd = path_guard_open_output("--pcap", p, false, &roots, &err);
		assert_int_equal(fd, -1);
		assert_non_null(strstr(err, "not a regular file"));
		free(err);
		err = NULL;
		close(rd);
	}
	/* Nothing was truncated or appended on the way. */
	fd = open(at("home/.bashrc", p), O_RDONLY);
	read_fd(fd, buf, sizeof(buf));
	close(fd);
	assert_string_equal(buf, "# rc\n");
	/* A file of another user (as root, the suite's case: chown works). */
	if (geteuid() == 0) {
		put("home/proj/theirs.json", "x");
		assert_int_equal(chown(at("home/proj/theirs.json", p), 1, 1), 0);
		fd = path_guard_open_output("--net-log", p, false, &roots, &err);
		assert_int_equal(fd, -1);
		assert_non_null(strstr(err, "not by you"));
		free(err);
		err = NULL;
	}
	/* A new file is created 0600; an existing one is truncated only now. */
	fd = path_guard_open_output("--net-log", at("home/proj/new.json", p), false, &roots, &err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	close(fd);
	put("home/proj/old.json", "old contents");
	fd = path_guard_open_output("--net-log", at("home/proj/old.json", p), false, &roots, &err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	path_roots_free(&roots);
}

static void test_roots_holding(void **state)
{
	struct path_roots r;

	(void)state;
	path_roots_init(&r);
	path_roots_add(&r, "/h/p");
	path_roots_add(&r, "/h/p/sub");
	path_roots_add(&r, "/h/p");             /* once */
	path_roots_add(&r, "relative");         /* ignored */
	path_roots_add(&r, "/");                /* ignored: it would hold everything */
	assert_int_equal(r.n, 2);
	assert_string_equal(path_roots_holding(&r, "/h/p/sub/x"), "/h/p/sub");
	assert_string_equal(path_roots_holding(&r, "/h/p/x"), "/h/p");
	assert_string_equal(path_roots_holding(&r, "/h/p"), "/h/p");
	assert_null(path_roots_holding(&r, "/h/px"));
	assert_null(path_roots_holding(&r, "/h"));
	path_roots_free(&r);
}

/*
 * The store remembers each session's writable roots: its work directory and
 * its --rw and mkdir sources, not --ro or --copy ones, newest first, once.
 */
static void test_roots_from_store(void **state)
{
	static const struct { const char *id, *policy; } rows[] = {
		{ "00000000000000a1", "{\"workdir\":\"/h/u/proj\",\"mounts\":["
		  "{\"kind\":\"rw\",\"src\":\"/h/u/cache\",\"dst\":\"/h/u/cache\"},"
		  "{\"kind\":\"ro\",\"src\":\"/h/u/.ssh\",\"dst\":\"/h/u/.ssh\"},"
		  "{\"kind\":\"copy\",\"src\":\"/h/u/.npmrc\",\"dst\":\"/x\"}]}" },
		{ "00000000000000a2", "{\"workdir\":\"/h/u/other\",\"mounts\":["
		  "{\"kind\":\"mkdir\",\"src\":\"/h/u/proj/.venv\",\"dst\":\"/h/u/proj/.venv\"}]}" },
		{ "00000000000000a3", "{\"workdir\":\"/h/u/proj\",\"mounts\":[]}" },
		{ "00000000000000a4", "not json" },                        /* skipped, not fatal */
		{ "00000000000000a5", "{\"workdir\":\"relative\",\"mounts\":[]}" },
	};
	char db[PATH_MAX], *err = NULL;
	struct store *st = NULL;
	struct path_roots r;

	(void)state;
	snprintf(db, sizeof(db), "%s/sessions.db", top);
	if (store_open(db, &st, &err) < 0)
		fail_msg("store_open: %s", err);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct store_session s = {
			.id = (char *)rows[i].id, .argv_json = "[\"x\"]",
			.policy_json = (char *)rows[i].policy, .cwd = "/h/u", .started_ms = 1000 + i,
		};

		assert_int_equal(store_session_begin(st, &s, &err), 0);
	}
	path_roots_init(&r);
	path_roots_add_store(&r, st);
	store_close(st);
	assert_int_equal(r.n, 4);
	assert_string_equal(r.v[0], "/h/u/proj");          /* newest first, once */
	assert_string_equal(r.v[1], "/h/u/other");
	assert_string_equal(r.v[2], "/h/u/proj/.venv");
	assert_string_equal(r.v[3], "/h/u/cache");
	assert_null(path_roots_holding(&r, "/h/u/.ssh"));   /* --ro is not writable */
	path_roots_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guard_rows),
		cmocka_unit_test(test_guard_nofollow_last),
		cmocka_unit_test(test_output_refusals),
		cmocka_unit_test(test_roots_holding),
		cmocka_unit_test(test_roots_from_store),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
