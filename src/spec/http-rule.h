/*
 * spec/http-rule.h — one HTTP allow rule, `method=… domain=… path=…`, as
 * `--allow-http RULE` and the profile key `network.http:` write it
 * (doc/http-rules.md is the language's reference, with every decision).
 *
 * A rule is up to three KEY=VALUE pairs separated by spaces or tabs, each
 * key at most once, in any order; a missing key means any:
 *
 *   method=GET,HEAD     methods, comma-separated, matched exactly (HTTP's
 *                       methods are case-sensitive); `*` alone is any method
 *                       but CONNECT, which a rule must name
 *   domain=api.test     one host, exact; `*.github.com` is any name under
 *                       github.com at any depth, never github.com itself;
 *                       `*` alone is any host. Lower-cased, trailing dot
 *                       removed; no port (ports are --allow-host's)
 *   path=/v2/x,/v3      path patterns, comma-separated, each starting with
 *                       `/`; `*` is one whole segment, and a last `*`
 *                       matches every remaining segment (at least one,
 *                       possibly empty); no query string
 *
 * This file only reads the text (it is the run-spec's validator, and
 * boxy-net's reader of the rules the broker sends); matching is
 * policy/http-rules.h's. Pure, no I/O.
 */
#ifndef BOXY_SPEC_HTTP_RULE_H
#define BOXY_SPEC_HTTP_RULE_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_RULE_TEXT_MAX      1024    /* bytes of one rule's text */
#define HTTP_RULE_METHODS_MAX   16      /* methods in one rule */
#define HTTP_RULE_METHOD_MAX    32      /* bytes of one method */
#define HTTP_RULE_PATHS_MAX     32      /* path patterns in one rule */
#define HTTP_RULES_MAX          256     /* rules in one run */

struct http_rule {
	char **methods;         /* exact tokens; NULL (n 0): any method but CONNECT */
	size_t nmethods;
	char *domain;           /* "api.test", "*.github.com"; NULL: any host */
	char **paths;           /* normalised patterns ("/v1/x"); NULL (n 0): any path */
	size_t npaths;
};

/* Why a rule was refused: the 1-based column of the bad token and constant words. */
struct http_rule_error {
	size_t column;
	const char *why;        /* untranslated; N_() marked, _() where shown */
};

/*
 * Read one rule. 0 and *out filled (free with http_rule_free), or -1 with
 * *e set and *out untouched.
 */
int http_rule_parse(const char *text, struct http_rule *out, struct http_rule_error *e);
void http_rule_free(struct http_rule *r);

/* The rule written back in canonical form ("method=GET,HEAD domain=api.test path=/v1/x"). malloc'd. */
char *http_rule_text(const struct http_rule *r);

/*
 * The one line the user sees for a refused rule, without the flag's or the
 * key's name: "column 8: unknown key 'host' (keys: method, domain, path)".
 * Translated. malloc'd.
 */
char *http_rule_error_line(const char *text, const struct http_rule_error *e);

/*
 * Normalise a request's path (or a pattern's, with pattern true) for
 * matching: percent-encodings of unreserved characters decoded (%7E is ~),
 * every other one with upper-case hex digits (%2f is %2F). Writes at most
 * cap bytes with the NUL; -1 when a `%` is not followed by two hex digits
 * or out is too small.
 */
int http_path_normalize(const char *in, size_t len, char *out, size_t cap);

#endif
