/*
 * test-journal.c — the journal entry of a decision (daemon/journal.c): the
 * fields in their order, empty package and rule, one MESSAGE_ID per kind
 * (distinct, 128-bit, and the ones doc/journal.md lists), priorities, long
 * values cut, a newline kept inside its value.
 */
#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "daemon/journal.h"

/* The field NAME=... of f, or NULL. */
static const char *get(char **f, size_t n, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; i < n; i++)
		if (strncmp(f[i], name, l) == 0 && f[i][l] == '=')
			return f[i] + l + 1;
	return NULL;
}

static const struct event_who evil = {
	.found = true, .pid = 14, .comm = "node", .argv0 = "node", .cmdline = "node evil.js",
	.package = "evil-pkg", .version = "1.2.3", .script = "postinstall",
};
static const struct event_who liar = {
	.found = true, .pid = 90, .comm = "node", .package = "innocent", .version = "9.9.9",
	.script = "postinstall", .claimed = true,
};
static const struct event_who nobody = { .found = false };

static void test_fields(void **state)
{
	static const struct {
		struct event ev;
		const char *want[8][2];
	} cases[] = {
		{ { .kind = "audit", .session = "0123456789abcdef", .t_ms = 1700000000123,
		    .layer = "net.ip", .verdict = "deny", .subject = "tcp://169.254.169.254:80",
		    .detail = "link-local / cloud metadata" },
		  { { "BOXY_SESSION", "0123456789abcdef" }, { "BOXY_LAYER", "net.ip" },
		    { "BOXY_VERDICT", "deny" }, { "BOXY_SUBJECT", "tcp://169.254.169.254:80" },
		    { "BOXY_PACKAGE", "" }, { "BOXY_RULE", "" }, { "PRIORITY", "4" },
		    { "MESSAGE", "boxy: net.ip deny tcp://169.254.169.254:80: link-local / cloud "
				 "metadata" } } },
		{ { .kind = "audit", .session = "0123456789abcdef", .layer = "git",
		    .verdict = "alert", .subject = ".git/hooks/pre-commit", .detail = "written" },
		  { { "PRIORITY", "2" }, { "BOXY_VERDICT", "alert" },
		    { "MESSAGE_ID", "bdb21d4a1de04c78bd3231c0cac1576a" },
		    { "SYSLOG_IDENTIFIER", "boxy" }, { "BOXY_REASON", "written" } } },
		{ { .kind = "audit", .layer = "net.dns", .verdict = "deny", .subject = "x.test",
		    .host = "x.test", .addr = "10.0.0.1", .detail = "answer dropped" },
		  { { "BOXY_SESSION", "" }, { "BOXY_HOST", "x.test" }, { "BOXY_ADDR", "10.0.0.1" } } },
		/* Who made it: the package, its script, whether it is only claimed, the pid. */
		{ { .kind = "audit", .session = "0123456789abcdef", .layer = "net.ip",
		    .verdict = "deny", .subject = "tcp://169.254.169.254:80", .who = &evil },
		  { { "BOXY_PACKAGE", "evil-pkg@1.2.3" }, { "BOXY_PACKAGE_SCRIPT", "postinstall" },
		    { "BOXY_PID", "14" }, { "BOXY_COMM", "node" } } },
		{ { .kind = "audit", .layer = "net.ip", .verdict = "deny", .subject = "x", .who = &liar },
		  { { "BOXY_PACKAGE", "innocent@9.9.9" }, { "BOXY_PACKAGE_CLAIMED", "1" } } },
		{ { .kind = "audit", .layer = "net.ip", .verdict = "deny", .subject = "x",
		    .who = &nobody },
		  { { "BOXY_PACKAGE", "" }, { "BOXY_PID", "unknown" } } },
		/* A hostile subject with a newline stays inside its field's value. */
		{ { .kind = "audit", .session = "0123456789abcdef", .layer = "mount",
		    .verdict = "skipped", .subject = "/w/a\nBOXY_VERDICT=allow", .detail = "gone" },
		  { { "BOXY_SUBJECT", "/w/a\nBOXY_VERDICT=allow" }, { "BOXY_VERDICT", "skipped" },
		    { "PRIORITY", "6" } } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *f[JOURNAL_FIELDS_MAX];
		size_t n = 0;

		journal_fields(&cases[i].ev, f, &n);
		assert_true(n <= JOURNAL_FIELDS_MAX);
		assert_int_equal(strncmp(f[0], "MESSAGE=", 8), 0);     /* MESSAGE first */
		for (size_t j = 0; j < ARRAY_SIZE(cases[i].want) && cases[i].want[j][0]; j++) {
			const char *v = get(f, n, cases[i].want[j][0]);

			if (!v || strcmp(v, cases[i].want[j][1]) != 0)
				fail_msg("case %zu: %s: want \"%s\", got \"%s\"", i, cases[i].want[j][0],
					 cases[i].want[j][1], v ? v : "(absent)");
		}
		/* Every field a name journald accepts: A-Z, 0-9, _ and not starting with _. */
		for (size_t j = 0; j < n; j++) {
			size_t k = strcspn(f[j], "=");

			assert_true(k > 0 && f[j][0] != '_' && f[j][k] == '=');
			assert_int_equal(strspn(f[j], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"), k);
		}
		journal_fields_free(f, n);
	}
}

/* A value longer than JOURNAL_VALUE_MAX is cut there. */
static void test_long_value(void **state)
{
	char *big = xmalloc(JOURNAL_VALUE_MAX * 2 + 1), *f[JOURNAL_FIELDS_MAX];
	struct event ev = { .kind = "audit", .layer = "x", .verdict = "info", .subject = big };
	size_t n;

	(void)state;
	memset(big, 'a', JOURNAL_VALUE_MAX * 2);
	big[JOURNAL_VALUE_MAX * 2] = '\0';
	journal_fields(&ev, f, &n);
	assert_int_equal(strlen(get(f, n, "BOXY_SUBJECT")), JOURNAL_VALUE_MAX);
	journal_fields_free(f, n);
	/* Review: one byte, then two-byte characters: the cut falls inside one, and backs off. */
	big[0] = 'a';
	for (size_t i = 1; i + 2 <= JOURNAL_VALUE_MAX * 2; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[JOURNAL_VALUE_MAX * 2 - 1] = '\0';
	ev.detail = "x=y\nBOXY_LAYER=forged";     /* an '=' and a newline stay in the value */
	journal_fields(&ev, f, &n);
	assert_int_equal(strlen(get(f, n, "BOXY_SUBJECT")), JOURNAL_VALUE_MAX - 1);
	assert_int_equal((unsigned char)get(f, n, "BOXY_SUBJECT")[JOURNAL_VALUE_MAX - 2], 0xa9);
	assert_string_equal(get(f, n, "BOXY_REASON"), "x=y\nBOXY_LAYER=forged");
	assert_string_equal(get(f, n, "BOXY_LAYER"), "x");
	journal_fields_free(f, n);
	free(big);
}

/* One MESSAGE_ID per kind: 32 hex digits each, all distinct, as doc/journal.md lists them. */
static void test_message_ids(void **state)
{
	static const char *const kinds[] = { "deny", "allow", "degraded", "alert", "info",
					     "action", "skipped", "something-else" };
	const char *src = getenv("BOXY_SRCDIR");
	char *path, *doc = NULL;
	size_t len;

	(void)state;
	assert_non_null(src);
	path = xasprintf("%s/doc/journal.md", src);
	assert_int_equal(read_file(path, 1 << 20, &doc, &len), 0);
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		const char *id = journal_message_id(kinds[i]);
		char *row;

		assert_int_equal(strlen(id), 32);
		assert_int_equal(strspn(id, "0123456789abcdef"), 32);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(id, journal_message_id(kinds[j]));
		row = i + 1 < ARRAY_SIZE(kinds) ? xasprintf("| `%s` | `%s` |", kinds[i], id) :
		      xasprintf("| any other | `%s` |", id);
		if (!strstr(doc, row))
			fail_msg("doc/journal.md has no row \"%s\"", row);
		free(row);
	}
	free(doc);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_long_value),
		cmocka_unit_test(test_message_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
