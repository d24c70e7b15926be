/*
 * test-http-rules.c — the --allow-http language row by row with the peer's
 * semantics (doc/http-rules.md): reading rules and refusing bad ones at their
 * column, domain wildcards, path segments, the trailing wildcard, methods
 * and case, what needs inspection, the decision on a request against the
 * connection's bound name and port, the paths no rule with paths may match,
 * and the rule a refusal suggests.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "policy/http-rules.h"
#include "spec/http-rule.h"

/* ---- reading ------------------------------------------------------------------------ */

struct parse_row {
	const char *text;
	const char *canon;      /* NULL: refused */
	size_t column;          /* refused: the column reported */
};

static const struct parse_row parse_rows[] = {
	{ "method=GET,HEAD domain=github.com path=/api/*",
	  "method=GET,HEAD domain=github.com path=/api/*", 0 },
	{ "  path=/a,/b/*   domain=API.Example.COM.  ", "domain=api.example.com path=/a,/b/*", 0 },
	{ "domain=*.github.com", "domain=*.github.com", 0 },
	{ "method=*", "method=*", 0 },
	{ "domain=*", "domain=*", 0 },
	{ "method=GET,GET", "method=GET", 0 },
	{ "method=PURGE", "method=PURGE", 0 },
	{ "path=/", "path=/", 0 },
	{ "path=/api/", "path=/api/", 0 },
	{ "path=/a/*/c", "path=/a/*/c", 0 },
	{ "path=/%7euser/%2fx", "path=/~user/%2Fx", 0 },
	{ "path=/@scope%2fname", "path=/@scope%2Fname", 0 },
	{ "domain=a.test\tmethod=POST", "method=POST domain=a.test", 0 },
	/* refused, at the column of the bad token */
	{ "", NULL, 1 },
	{ "   ", NULL, 4 },
	{ "host=a.test", NULL, 1 },
	{ "domain=a.test host=b", NULL, 15 },
	{ "domain", NULL, 7 },
	{ "domain=", NULL, 8 },
	{ "domain=a.test domain=b.test", NULL, 15 },
	{ "method=get", NULL, 8 },
	{ "method=GET,,HEAD", NULL, 12 },
	{ "method=GET,", NULL, 12 },
	{ "method=G(T", NULL, 9 },
	{ "method=GE*", NULL, 10 },
	{ "domain=a.test:8080", NULL, 14 },
	{ "domain=api.*.com", NULL, 12 },
	{ "domain=*github.com", NULL, 8 },
	{ "domain=a..b", NULL, 8 },
	{ "domain=93.184.216.34", NULL, 8 },
	{ "path=api", NULL, 6 },
	{ "path=/a//b", NULL, 9 },
	{ "path=/a/../b", NULL, 9 },
	{ "path=/a/%2e%2e/b", NULL, 6 },
	{ "path=/a*", NULL, 8 },
	{ "path=/a?x=1", NULL, 8 },
	{ "path=/a%zz", NULL, 8 },
	{ "path=/a\"b", NULL, 8 },
	{ "path=/a,", NULL, 9 },
	{ "path=/a\x01", NULL, 8 },
	{ "method=GET domain=a.test path=/\xc3\xa9", NULL, 32 },
};

static void test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(parse_rows); i++) {
		const struct parse_row *row = &parse_rows[i];
		struct http_rule r;
		struct http_rule_error e;
		int rc = http_rule_parse(row->text, &r, &e);

		if (row->canon) {
			char *t;

			if (rc != 0)
				fail_msg("'%s' refused at %zu: %s", row->text, e.column, e.why);
			t = http_rule_text(&r);
			if (strcmp(t, row->canon) != 0)
				fail_msg("'%s' reads as '%s', want '%s'", row->text, t, row->canon);
			free(t);
			http_rule_free(&r);
		} else {
			if (rc == 0)
				fail_msg("'%s' accepted", row->text);
			if (e.column != row->column)
				fail_msg("'%s': column %zu (%s), want %zu", row->text, e.column, e.why,
					 row->column);
		}
	}
}

/* The user's line names the column and says what to write. */
static void test_error_line(void **state)
{
	struct http_rule r;
	struct http_rule_error e;
	char *line;

	(void)state;
	assert_int_equal(http_rule_parse("method=GET host=a.test", &r, &e), -1);
	line = http_rule_error_line("method=GET host=a.test", &e);
	assert_string_equal(line, "column 12: an unknown key (the keys are method, domain and path)");
	free(line);
	{
		char big[HTTP_RULE_TEXT_MAX + 10];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(http_rule_parse(big, &r, &e), -1);
		assert_int_equal(e.column, HTTP_RULE_TEXT_MAX + 1);
	}
}

/* ---- matching -------------------------------------------------------------------------- */

static void rules_of(struct http_rules *rs, const char *const *texts)
{
	size_t n = 0, bad;

	while (texts[n])
		n++;
	if (http_rules_parse(rs, texts, n, &bad) < 0)
		fail_msg("rule %zu does not read", bad);
}

struct match_row {
	const char *rule;
	const char *method, *host, *path;
	bool want;
};

static const struct match_row match_rows[] = {
	/* domains: exact, case already folded by the parsers, wildcard any depth but not itself */
	{ "domain=github.com", "GET", "github.com", "/", true },
	{ "domain=github.com", "GET", "api.github.com", "/", false },
	{ "domain=github.com", "GET", "xgithub.com", "/", false },
	{ "domain=*.github.com", "GET", "api.github.com", "/", true },
	{ "domain=*.github.com", "GET", "v1.api.github.com", "/", true },
	{ "domain=*.github.com", "GET", "github.com", "/", false },
	{ "domain=*.github.com", "GET", "evilgithub.com", "/", false },
	{ "domain=*.github.com", "GET", "github.com.evil.test", "/", false },
	{ "domain=*", "GET", "anything.test", "/", true },
	{ "method=GET", "GET", "anything.test", "/", true },
	/* methods: exact, case-sensitive; * is every method but CONNECT */
	{ "method=GET,HEAD", "HEAD", "a.test", "/", true },
	{ "method=GET,HEAD", "POST", "a.test", "/", false },
	{ "method=GET", "get", "a.test", "/", false },
	{ "method=*", "DELETE", "a.test", "/", true },
	{ "method=*", "CONNECT", "a.test", "", false },
	{ "domain=a.test", "CONNECT", "a.test", "", false },
	{ "method=CONNECT domain=a.test", "CONNECT", "a.test", "", true },
	{ "method=*,CONNECT domain=a.test", "CONNECT", "a.test", "", true },
	/* paths: whole segments, a last * is the rest (at least one segment) */
	{ "path=/api/*", "GET", "a.test", "/api/v1/users", true },
	{ "path=/api/*", "GET", "a.test", "/api/x", true },
	{ "path=/api/*", "GET", "a.test", "/api/", true },
	{ "path=/api/*", "GET", "a.test", "/api", false },
	{ "path=/api/*", "GET", "a.test", "/apiv2/x", false },
	{ "path=/api/*", "GET", "a.test", "/API/x", false },
	{ "path=/api", "GET", "a.test", "/api", true },
	{ "path=/api", "GET", "a.test", "/api/", false },
	{ "path=/api", "GET", "a.test", "/api/x", false },
	{ "path=/api/", "GET", "a.test", "/api/", true },
	{ "path=/", "GET", "a.test", "/", true },
	{ "path=/", "GET", "a.test", "/x", false },
	{ "path=/*", "GET", "a.test", "/", true },
	{ "path=/*", "GET", "a.test", "/x/y/z", true },
	{ "path=/a/*/c", "GET", "a.test", "/a/b/c", true },
	{ "path=/a/*/c", "GET", "a.test", "/a/b/x/c", false },
	{ "path=/a/*/c", "GET", "a.test", "/a/b/c/d", false },
	{ "path=/a/*/c/*", "GET", "a.test", "/a/b/c/d/e", true },
	{ "path=/x,/v1/*", "GET", "a.test", "/v1/q", true },
	/* percent-encoding: unreserved decoded on both sides, the rest compared encoded */
	{ "path=/~u/x", "GET", "a.test", "/%7Eu/x", true },
	{ "path=/%7eu/x", "GET", "a.test", "/~u/x", true },
	{ "path=/@s%2Fn", "GET", "a.test", "/@s%2fn", true },
	{ "path=/@s/n", "GET", "a.test", "/@s%2Fn", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/a%20b", true },
	/* what no rule with paths matches: dot segments, also encoded or with params, "//" */
	{ "path=/v1/*", "GET", "a.test", "/v1/../v2/x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/./x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%2e%2e/v2/x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/.%2E/v2/x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/..%2Fv2/x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%252e%252e/v2", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/..;x=1/v2", false },
	{ "path=/v1/*", "GET", "a.test", "/v1//x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/a\\..\\x", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%5C..%5Cx", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%00", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%zz", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/x#frag", false },
	{ "path=/v1/*", "GET", "a.test", "*", false },
	/* an encoded '?' ends the path to a server that decodes before it splits the query
	 * (nginx passing a decoded capture upstream): "/v1/..%3F" is "/v1/.." there */
	{ "path=/v1/*", "GET", "a.test", "/v1/..%3F/x", false },
	{ "path=/*/public", "GET", "a.test", "/admin%3f/public", false },
	{ "path=/*/public", "GET", "a.test", "/admin%253F/public", false },
	/* overlong UTF-8: '.' and '/' to the decoders that accept it (IIS, old Java) */
	{ "path=/v1/*", "GET", "a.test", "/v1/%c0%ae%c0%ae/v2", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/..%c0%afv2", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%e0%80%ae", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%f0%80%80%ae", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/%25c0%25ae%25c0%25ae/v2", false },
	{ "path=/v1/*", "GET", "a.test", "/v1/caf%C3%A9", true },       /* UTF-8 as it should be */
	{ "path=/v1/*", "GET", "a.test", "/v1/%E2%82%AC", true },
	{ "domain=a.test", "GET", "a.test", "/v1/../x", true },      /* no paths: not asked */
};

static void test_match(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(match_rows); i++) {
		const struct match_row *row = &match_rows[i];
		const char *texts[] = { row->rule, NULL };
		struct http_rules rs;
		size_t got;

		rules_of(&rs, texts);
		got = http_rules_match(&rs, row->method, row->host, row->path);
		if ((got == 0) != row->want)
			fail_msg("'%s' vs %s %s%s: %s, want %s", row->rule, row->method, row->host,
				 row->path, got == 0 ? "match" : "none", row->want ? "match" : "none");
		http_rules_free(&rs);
	}
}

/* The first matching rule wins, and its index is its place. */
static void test_match_order(void **state)
{
	const char *texts[] = { "method=POST domain=a.test", "method=GET domain=a.test path=/x",
				"method=GET,POST domain=*.test", NULL };
	struct http_rules rs;

	(void)state;
	rules_of(&rs, texts);
	assert_int_equal(http_rules_match(&rs, "POST", "a.test", "/"), 0);
	assert_int_equal(http_rules_match(&rs, "GET", "a.test", "/x"), 1);
	assert_int_equal(http_rules_match(&rs, "GET", "a.test", "/y"), 2);
	assert_int_equal(http_rules_match(&rs, "PUT", "a.test", "/y"), HTTP_RULE_NONE);
	http_rules_free(&rs);
}

/* Which hosts must be inspected (TLS) for their rules to be enforced. */
static void test_inspect(void **state)
{
	const char *texts[] = { "method=GET domain=api.test path=/v1/*", "domain=open.test",
				"method=* domain=star.test", "domain=*.mixed.test path=/x",
				"domain=all.mixed.test", NULL };
	struct http_rules rs;

	(void)state;
	rules_of(&rs, texts);
	assert_true(http_rules_inspect_host(&rs, "api.test"));
	assert_false(http_rules_inspect_host(&rs, "open.test"));
	assert_false(http_rules_inspect_host(&rs, "star.test"));
	assert_false(http_rules_inspect_host(&rs, "other.test"));       /* no rule covers it */
	assert_true(http_rules_inspect_host(&rs, "a.mixed.test"));
	assert_false(http_rules_inspect_host(&rs, "all.mixed.test"));   /* an open rule too */
	assert_true(http_rules_cover_host(&rs, "open.test"));
	assert_false(http_rules_cover_host(&rs, "other.test"));
	http_rules_free(&rs);
}

/* ---- the decision on one request ---------------------------------------------------- */

struct decide_row {
	const char *what;
	const char *method, *host;
	uint16_t port;
	const char *path;
	bool first, upgrade, body;
	enum http_deny want;
	size_t rule;
};

static const struct decide_row decide_rows[] = {
	{ "allowed by a rule", "GET", "api.test", 0, "/v1/x", true, false, false, HTTP_ALLOWED, 0 },
	{ "the dialled port written", "GET", "api.test", 80, "/v1/x", true, false, false,
	  HTTP_ALLOWED, 0 },
	{ "no rule matches", "GET", "api.test", 0, "/v2/x", true, false, false, HTTP_DENY_NO_RULE,
	  HTTP_RULE_NONE },
	{ "another host on the connection", "GET", "evil.test", 0, "/v1/x", false, false, false,
	  HTTP_DENY_OTHER_HOST, HTTP_RULE_NONE },
	{ "a subdomain is another host", "GET", "x.api.test", 0, "/v1/x", false, false, false,
	  HTTP_DENY_OTHER_HOST, HTTP_RULE_NONE },
	{ "another port in Host", "GET", "api.test", 8080, "/v1/x", false, false, false,
	  HTTP_DENY_OTHER_PORT, HTTP_RULE_NONE },
	{ "no Host", "GET", NULL, 0, "/v1/x", false, false, false, HTTP_DENY_NO_HOST,
	  HTTP_RULE_NONE },
	{ "CONNECT no rule names", "CONNECT", "api.test", 80, "", true, true, false,
	  HTTP_DENY_CONNECT, HTTP_RULE_NONE },
	{ "an upgrade first", "GET", "api.test", 0, "/v1/ws", true, true, false, HTTP_ALLOWED, 0 },
	{ "an upgrade later", "GET", "api.test", 0, "/v1/ws", false, true, false,
	  HTTP_DENY_SWITCH_LATE, HTTP_RULE_NONE },
	{ "an upgrade with a body", "GET", "api.test", 0, "/v1/ws", true, true, true,
	  HTTP_DENY_SWITCH_BODY, HTTP_RULE_NONE },
	{ "an ambiguous path", "GET", "api.test", 0, "/v1/../v2/x", true, false, false,
	  HTTP_DENY_NO_RULE, HTTP_RULE_NONE },
};

static void test_decide(void **state)
{
	const char *texts[] = { "method=GET domain=api.test path=/v1/*", NULL };
	struct http_rules rs;
	struct http_bound b = { .host = "api.test", .port = 80, .default_port = 80 };

	(void)state;
	rules_of(&rs, texts);
	for (size_t i = 0; i < ARRAY_SIZE(decide_rows); i++) {
		const struct decide_row *row = &decide_rows[i];
		struct http_request q = {
			.method = row->method, .host = row->host, .port = row->port,
			.path = row->path, .first = row->first, .upgrade = row->upgrade,
			.has_body = row->body,
		};
		size_t rule;
		enum http_deny d = http_decide(&rs, &b, &q, &rule);

		if (d != row->want || rule != row->rule)
			fail_msg("%s: %s rule %zu, want %s rule %zu", row->what, http_deny_code(d),
				 rule, http_deny_code(row->want), row->rule);
	}
	http_rules_free(&rs);
}

/* A host no rule covers keeps --allow-host's meaning: every request, on its bound name. */
static void test_decide_uncovered(void **state)
{
	const char *texts[] = { "method=GET domain=api.test path=/v1/*", NULL };
	struct http_rules rs, none = { 0 };
	struct http_bound b = { .host = "open.test", .port = 8080, .default_port = 80 };
	struct http_request q = { .method = "DELETE", .host = "open.test", .port = 8080,
				  .path = "/anything", .first = true };
	size_t rule;

	(void)state;
	rules_of(&rs, texts);
	assert_int_equal(http_decide(&rs, &b, &q, &rule), HTTP_ALLOWED);
	assert_int_equal(rule, HTTP_RULE_NONE);
	assert_int_equal(http_decide(&none, &b, &q, &rule), HTTP_ALLOWED);
	q.port = 0;     /* no port written: the scheme's 80, not the 8080 dialled */
	assert_int_equal(http_decide(&none, &b, &q, &rule), HTTP_DENY_OTHER_PORT);
	http_rules_free(&rs);
}

/* ---- the rule a refusal suggests --------------------------------------------------------- */

static void test_suggest(void **state)
{
	struct { enum http_deny d; const char *m, *h, *p, *want; } rows[] = {
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/v2/x",
		  "method=GET domain=api.test path=/v2/x" },
		{ HTTP_DENY_CONNECT, "CONNECT", "api.test", "", "method=CONNECT domain=api.test" },
		{ HTTP_DENY_OTHER_HOST, "GET", "evil.test", "/", NULL },
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/a'b", NULL },        /* a quote */
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/a/*", NULL },        /* a wildcard */
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/a,/b", NULL },       /* two patterns */
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/v1/../x", NULL },    /* a dot segment */
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/a;$(id)", NULL },    /* ( ) $ are fine… */
		{ HTTP_DENY_NO_RULE, "get", "api.test", "/x", NULL },          /* lower-case GET */
		{ HTTP_DENY_NO_RULE, "GET", "93.184.216.34", "/x", NULL },     /* an address */
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/x%2f", NULL },       /* reads back as %2F */
		{ HTTP_DENY_NO_RULE, "*", "api.test", "/x", NULL },            /* method=* is every one */
		{ HTTP_DENY_NO_RULE, "G*T", "api.test", "/x", NULL },
		{ HTTP_DENY_NO_RULE, "GET", "api.test", "/x!rm", NULL },       /* csh expands '!' */
		{ HTTP_DENY_NO_RULE, "!rm", "api.test", "/x", NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *got = http_rule_suggest(rows[i].d, rows[i].m, rows[i].h, rows[i].p);

		if (i == 7) {
			/* …inside single quotes; the rule reads back as itself. */
			assert_non_null(got);
			assert_string_equal(got, "method=GET domain=api.test path=/a;$(id)");
		} else if (!rows[i].want) {
			if (got)
				fail_msg("row %zu: suggested '%s'", i, got);
		} else {
			assert_non_null(got);
			assert_string_equal(got, rows[i].want);
		}
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_error_line),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_match_order),
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_uncovered),
		cmocka_unit_test(test_suggest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
