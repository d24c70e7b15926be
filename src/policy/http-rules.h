/*
 * policy/http-rules.h — the HTTP rules of a run and the decision on one
 * request, as pure functions: the broker and boxy-net call the same ones
 * (boxy-net to gate each request, the broker to check what boxy-net says
 * it decided), and so will the TLS path for requests it decrypts.
 *
 * A request is allowed when it names the host and port its connection was
 * allowed for (the bound name), and, when any rule covers that host, when
 * one rule matches its method, host and path. A host no rule covers keeps
 * --allow-host's meaning: every request, on its bound name. Default deny:
 * every path that is not an allow is a refusal with a code.
 *
 * doc/http-rules.md has the language, the decisions (percent-encoding,
 * dot segments, query strings, case, CONNECT, Upgrade) and examples;
 * tests/unit/test-http-rules.c has a row for each.
 */
#ifndef BOXY_POLICY_HTTP_RULES_H
#define BOXY_POLICY_HTTP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/http-rule.h"

#define HTTP_RULE_NONE  0xffffu         /* no rule matched (the wire's u16 too) */

/* A run's rules, parsed; the index of a rule is its place on the command line and profile. */
struct http_rules {
	struct http_rule *v;
	size_t n;
};

/*
 * Parse texts[0..n) into rs (every text must parse: they were validated by
 * the run-spec, or come from the broker). 0, or -1 with *bad the index of
 * the first text refused; rs is then empty.
 */
int http_rules_parse(struct http_rules *rs, const char *const *texts, size_t n, size_t *bad);
void http_rules_free(struct http_rules *rs);

/* Does rule r's domain match host (lower-case, no trailing dot)? */
bool http_rule_host_matches(const struct http_rule *r, const char *host);

/* Does any rule cover host, i.e. restrict what may be asked of it? */
bool http_rules_cover_host(const struct http_rules *rs, const char *host);

/*
 * Must boxy see the requests to host to enforce the rules (TLS inspection)?
 * True when some rule covers host and none of those allows every request
 * of it (any method, any path: `method=*`-like and no path); a host only
 * `domain=api.test` rules cover, or none, needs no inspection.
 */
bool http_rules_inspect_host(const struct http_rules *rs, const char *host);

/*
 * The first rule matching method, host and path (the path is the request
 * target's path, up to the `?`, as sent), or HTTP_RULE_NONE. A path that
 * could mean different things to different servers (a dot segment, also
 * encoded or with ";params", an empty segment, a backslash, a NUL or a
 * control byte, once or twice percent-decoded) matches no rule that has
 * path patterns.
 */
size_t http_rules_match(const struct http_rules *rs, const char *method, const char *host,
			const char *path);

/* Is path ambiguous in the sense above? */
bool http_path_ambiguous(const char *path);

/* Why a request was refused; 0: allowed. The wire's u8 (NET_HTTP_REQUEST). */
enum http_deny {
	HTTP_ALLOWED = 0,
	HTTP_DENY_NO_RULE,      /* rules cover the host and none matches */
	HTTP_DENY_OTHER_HOST,   /* Host (or the absolute target) names another host than the
				 * connection was allowed for */
	HTTP_DENY_OTHER_PORT,   /* ... another port than the one it was dialled on */
	HTTP_DENY_NO_HOST,      /* no Host at all (HTTP/1.0) */
	HTTP_DENY_CONNECT,      /* CONNECT that no rule names */
	HTTP_DENY_SWITCH_LATE,  /* Upgrade or CONNECT after a connection's first request */
	HTTP_DENY_SWITCH_BODY,  /* Upgrade or CONNECT with a body */
	HTTP_DENY_MALFORMED,    /* the bytes broke HTTP's rules: smuggling, a head too long, … */
	HTTP_DENY_COUNT
};

/* The connection a request came on: what it was allowed for. */
struct http_bound {
	const char *host;       /* the name the connection was allowed for (Host or SNI) */
	uint16_t port;          /* the port it was dialled on */
	uint16_t default_port;  /* the scheme's: 80 (plain) or 443 (TLS) */
};

/* One decoded request, however it arrived (HTTP/1 plain or in TLS, an HTTP/2 stream). */
struct http_request {
	const char *method;     /* the token as sent */
	const char *host;       /* Host / :authority, lower-case, no port; NULL: none */
	uint16_t port;          /* the port written after the host; 0: none written */
	const char *path;       /* the target's path up to the `?`; CONNECT: "" */
	bool first;             /* the connection's first request */
	bool upgrade;           /* an Upgrade request (or CONNECT) */
	bool has_body;          /* Content-Length > 0 or chunked */
};

/*
 * Decide one request. Returns HTTP_ALLOWED or the refusal's code; *rule is
 * the matching rule's index, or HTTP_RULE_NONE (also when allowed because no
 * rule covers the host).
 */
enum http_deny http_decide(const struct http_rules *rs, const struct http_bound *b,
			   const struct http_request *q, size_t *rule);

/* Stable code ("no-rule") and words ("no --allow-http rule allows this request"). */
const char *http_deny_code(enum http_deny d);
const char *http_deny_words(enum http_deny d);

/*
 * The rule that would allow a refused request, for the 403 body and the
 * end-of-run summary: "method=GET domain=api.test path=/v2/x". NULL when
 * no rule can (the refusal is not about rules), or when the rule would not
 * read back as itself or would hold a quote (it is shown inside '…' for a
 * shell). malloc'd.
 */
char *http_rule_suggest(enum http_deny d, const char *method, const char *host,
			const char *path);

#endif
