/*
 * test-memwatch.c — the watchdog's parsers of /proc text: the "Key: N kB"
 * lines of status and smaps_rollup (a malformed or absent line counts
 * nothing, never garbage), and mountinfo's tmpfs lines (device, unescaped
 * mount point; any other filesystem, or a mount point with a NUL, is not
 * one). The sampling itself needs a sandbox: tests/e2e/memory-limit.sh.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "sandbox/memwatch.h"
#include "common/util.h"

static void test_parse_kb(void **state)
{
	static const struct {
		const char *text, *key;
		uint64_t want;
		const char *what;
	} rows[] = {
		{ "Name:\tx\nRssAnon:\t  1234 kB\nRssShmem:\t 5 kB\n", "RssAnon", 1234, "a status line" },
		{ "Name:\tx\nRssAnon:\t  1234 kB\nRssShmem:\t 5 kB\n", "RssShmem", 5, "the last line" },
		{ "RssAnonX:\t9 kB\nRssAnon:\t7 kB\n", "RssAnon", 7, "a longer key is another key" },
		{ "Pss_Anon:            524288 kB\n", "Pss_Anon", 524288, "smaps_rollup's spacing" },
		{ "RssAnon:\t12 MB\n", "RssAnon", 0, "a unit that is not kB counts nothing" },
		{ "RssAnon:\t-1 kB\n", "RssAnon", 0, "a sign is malformed" },
		{ "RssAnon:\t99999999999999999999999 kB\n", "RssAnon", 0, "an overflow counts nothing" },
		{ "Name:\tRssAnon: 5 kB\n", "RssAnon", 0, "the key inside another line's value" },
		{ "", "RssAnon", 0, "empty" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("%s\n", rows[i].what);
		assert_int_equal(memwatch_parse_kb(rows[i].text, rows[i].key), rows[i].want);
	}
}

static void test_parse_tmpfs(void **state)
{
	static const struct {
		const char *line;
		bool tmpfs;
		unsigned maj, min;
		const char *mountpoint, *what;
	} rows[] = {
		{ "120 99 0:52 / /tmp rw,nosuid,nodev relatime - tmpfs tmpfs rw,size=262144k",
		  true, 0, 52, "/tmp", "the sandbox's /tmp" },
		{ "121 99 0:53 / /home/a\\040b rw shared:4 - tmpfs tmpfs rw", true, 0, 53,
		  "/home/a b", "an escaped space, an optional field" },
		{ "122 99 8:1 /src /home/a/proj rw - ext4 /dev/sda1 rw", false, 0, 0, NULL,
		  "a bind of the work directory is no tmpfs" },
		{ "123 99 0:54 / /x\\000y rw - tmpfs tmpfs rw", false, 0, 0, NULL,
		  "a NUL in a mount point is refused" },
		{ "124 99 0:55 / tmp rw - tmpfs tmpfs rw", false, 0, 0, NULL, "a relative mount point" },
		{ "garbage - tmpfs", false, 0, 0, NULL, "too few fields" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *mp = NULL;
		dev_t dev = 0;
		bool got;

		print_message("%s\n", rows[i].what);
		got = memwatch_parse_tmpfs(rows[i].line, &dev, &mp);
		assert_int_equal(got, rows[i].tmpfs);
		if (got) {
			assert_int_equal(major(dev), rows[i].maj);
			assert_int_equal(minor(dev), rows[i].min);
			assert_string_equal(mp, rows[i].mountpoint);
		}
		free(mp);
	}
}

static void test_total(void **state)
{
	struct memwatch_usage u = { .procs = 1, .tmpfs = 2, .memfd = 4, .sysv = 8, .nprocs = 100 };

	(void)state;
	/* every kind of memory counts; the process count is no memory */
	assert_int_equal(memwatch_usage_total(&u), 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_kb),
		cmocka_unit_test(test_parse_tmpfs),
		cmocka_unit_test(test_total),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
