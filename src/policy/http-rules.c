/*
 * policy/http-rules.c — matching requests against a run's HTTP rules, and
 * the decision on one request (policy/http-rules.h). Pure: boxy-net calls
 * it for every request of a gated flow, the broker again for every record
 * boxy-net sends, to check that the two agree.
 *
 * Paths are compared segment by segment after their percent-encodings are
 * normalised (unreserved characters decoded, hex in capitals), never after
 * dot segments are resolved: a path whose meaning depends on the server
 * (`/v1/../v2`, `/v1/%2e%2e/v2`, `/v1/..;/v2`, `/v1//x`, a backslash,
 * `%252e%252e` for a server that decodes twice, an encoded `?`, an overlong
 * UTF-8 `%C0%AE`) matches no path pattern,
 * so a rule that names paths refuses it, whatever a server would make of it.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "policy/http-rules.h"

int http_rules_parse(struct http_rules *rs, const char *const *texts, size_t n, size_t *bad)
{
	memset(rs, 0, sizeof(*rs));
	if (n > HTTP_RULES_MAX) {
		*bad = HTTP_RULES_MAX;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct http_rule r;
		struct http_rule_error e;

		if (http_rule_parse(texts[i], &r, &e) < 0) {
			http_rules_free(rs);
			*bad = i;
			return -1;
		}
		*(struct http_rule *)xappend(&rs->v, &rs->n, sizeof(r)) = r;
	}
	return 0;
}

void http_rules_free(struct http_rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		http_rule_free(&rs->v[i]);
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}

bool http_rule_host_matches(const struct http_rule *r, const char *host)
{
	size_t hl, sl;

	if (!r->domain)
		return true;
	if (!host)
		return false;
	if (strncmp(r->domain, "*.", 2) != 0)
		return strcmp(r->domain, host) == 0;
	/* "*.github.com": a dot and the suffix at the end, at least one label before. */
	hl = strlen(host);
	sl = strlen(r->domain + 1);             /* ".github.com" */
	return hl > sl && strcmp(host + hl - sl, r->domain + 1) == 0;
}

bool http_rules_cover_host(const struct http_rules *rs, const char *host)
{
	for (size_t i = 0; rs && i < rs->n; i++)
		if (http_rule_host_matches(&rs->v[i], host))
			return true;
	return false;
}

/* Does the rule allow every method but CONNECT (no method key, or `*`)? */
static bool rule_any_method(const struct http_rule *r)
{
	if (r->nmethods == 0)
		return true;
	for (size_t i = 0; i < r->nmethods; i++)
		if (strcmp(r->methods[i], "*") == 0)
			return true;
	return false;
}

bool http_rules_inspect_host(const struct http_rules *rs, const char *host)
{
	bool covered = false;

	for (size_t i = 0; rs && i < rs->n; i++) {
		const struct http_rule *r = &rs->v[i];

		if (!http_rule_host_matches(r, host))
			continue;
		if (rule_any_method(r) && r->npaths == 0)
			return false;
		covered = true;
	}
	return covered;
}

/* Does the rule name method? CONNECT only by name, never through `*`. */
static bool rule_method_matches(const struct http_rule *r, const char *method)
{
	bool connect = strcmp(method, "CONNECT") == 0;

	if (r->nmethods == 0)
		return !connect;
	for (size_t i = 0; i < r->nmethods; i++) {
		if (strcmp(r->methods[i], method) == 0)
			return true;
		if (!connect && strcmp(r->methods[i], "*") == 0)
			return true;
	}
	return false;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

/*
 * Is s[i] the start of an overlong UTF-8 form (an ASCII character in two
 * bytes, or any character in more than it needs)? Decoders that accept them
 * (IIS's "Unicode" traversal, old Java) read %C0%AE as '.' and %C0%AF as '/'.
 */
static bool overlong_at(const char *s, size_t n, size_t i)
{
	unsigned char c = (unsigned char)s[i], d = i + 1 < n ? (unsigned char)s[i + 1] : 0;

	return c == 0xc0 || c == 0xc1 || (c == 0xe0 && d >= 0x80 && d < 0xa0) ||
	       (c == 0xf0 && d >= 0x80 && d < 0x90);
}

/*
 * One reading of a path: does it hold anything a server could take for
 * structure boxy does not see (see the file's comment)? strict: a '%' must
 * start an encoding (the path as sent); after decoding, a '%' is a byte, and
 * a '?' ends the path for a server that decodes before it splits off the
 * query (nginx passing a decoded capture to proxy_pass).
 */
static bool reading_ambiguous(const char *s, size_t n, bool strict)
{
	size_t seg = 1;                 /* the current segment starts here */

	if (n == 0 || s[0] != '/')
		return true;
	for (size_t i = 1; i <= n; i++) {
		unsigned char c = i < n ? (unsigned char)s[i] : '/';

		if (i < n && (c < 0x20 || c == 0x7f || c == '\\' || c == '#'))
			return true;
		if (i < n && !strict && (c == '?' || overlong_at(s, n, i)))
			return true;
		if (i < n && strict && c == '%' && (i + 2 >= n || !is_hex(s[i + 1]) ||
						    !is_hex(s[i + 2])))
			return true;
		if (c != '/')
			continue;
		{
			size_t len = i - seg;
			const char *semi = memchr(s + seg, ';', len);

			if (semi)
				len = (size_t)(semi - (s + seg));   /* "..;x" is ".." to some servers */
			if (i - seg == 0 && i < n)
				return true;                        /* "//" */
			if ((len == 1 && s[seg] == '.') ||
			    (len == 2 && s[seg] == '.' && s[seg + 1] == '.'))
				return true;
		}
		seg = i + 1;
	}
	return false;
}

/* Decode every %XX of in (n bytes) into out (n + 1 bytes); the decoded length. */
static size_t decode_all(const char *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (in[i] == '%' && i + 2 < n && is_hex(in[i + 1]) && is_hex(in[i + 2])) {
			out[o++] = (char)(hex_val(in[i + 1]) * 16 + hex_val(in[i + 2]));
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	return o;
}

bool http_path_ambiguous(const char *path)
{
	size_t n = strlen(path);
	char *once, *twice;
	bool amb;

	if (reading_ambiguous(path, n, true))
		return true;
	if (!memchr(path, '%', n))
		return false;
	/* As a server that decodes once, and one that decodes twice, would read it. */
	once = xmalloc(n + 1);
	twice = xmalloc(n + 1);
	n = decode_all(path, n, once);
	amb = reading_ambiguous(once, n, false) || memchr(once, '\0', n) != NULL;
	if (!amb) {
		size_t m = decode_all(once, n, twice);

		amb = reading_ambiguous(twice, m, false) || memchr(twice, '\0', m) != NULL;
	}
	free(once);
	free(twice);
	return amb;
}

/* Does the normalised path match the normalised pattern, segment by segment? */
static bool path_matches(const char *pat, const char *path)
{
	const char *p = pat + 1, *q = path + 1;

	for (;;) {
		size_t pl = strcspn(p, "/"), ql = strcspn(q, "/");
		bool plast = p[pl] == '\0', qlast = q[ql] == '\0';

		if (pl == 1 && p[0] == '*' && plast)
			return true;            /* a last `*`: this segment and every one after */
		if (!(pl == 1 && p[0] == '*') && (pl != ql || strncmp(p, q, pl) != 0))
			return false;
		if (plast || qlast)
			return plast && qlast;
		p += pl + 1;
		q += ql + 1;
	}
}

size_t http_rules_match(const struct http_rules *rs, const char *method, const char *host,
			const char *path)
{
	char *norm = NULL;
	bool norm_done = false, norm_ok = false;
	size_t found = HTTP_RULE_NONE;

	for (size_t i = 0; rs && i < rs->n && found == HTTP_RULE_NONE; i++) {
		const struct http_rule *r = &rs->v[i];

		if (!rule_method_matches(r, method) || !http_rule_host_matches(r, host))
			continue;
		if (r->npaths == 0) {
			found = i;
			break;
		}
		if (!norm_done) {
			size_t n = strlen(path), cap = n * 3 + 1;

			norm_done = true;
			norm = xmalloc(cap);
			norm_ok = !http_path_ambiguous(path) &&
				  http_path_normalize(path, n, norm, cap) == 0;
		}
		if (!norm_ok)
			continue;
		for (size_t j = 0; j < r->npaths; j++)
			if (path_matches(r->paths[j], norm)) {
				found = i;
				break;
			}
	}
	free(norm);
	return found;
}

enum http_deny http_decide(const struct http_rules *rs, const struct http_bound *b,
			   const struct http_request *q, size_t *rule)
{
	uint16_t port = q->port ? q->port : b->default_port;

	*rule = HTTP_RULE_NONE;
	if (!q->host || !q->host[0])
		return HTTP_DENY_NO_HOST;
	if (!b->host || strcmp(q->host, b->host) != 0)
		return HTTP_DENY_OTHER_HOST;
	if (port != b->port)
		return HTTP_DENY_OTHER_PORT;
	if (q->upgrade && !q->first)
		return HTTP_DENY_SWITCH_LATE;
	if (q->upgrade && q->has_body)
		return HTTP_DENY_SWITCH_BODY;
	if (strcmp(q->method, "CONNECT") == 0) {
		*rule = http_rules_match(rs, q->method, q->host, q->path);
		return *rule == HTTP_RULE_NONE ? HTTP_DENY_CONNECT : HTTP_ALLOWED;
	}
	if (!http_rules_cover_host(rs, q->host))
		return HTTP_ALLOWED;
	*rule = http_rules_match(rs, q->method, q->host, q->path);
	return *rule == HTTP_RULE_NONE ? HTTP_DENY_NO_RULE : HTTP_ALLOWED;
}

const char *http_deny_code(enum http_deny d)
{
	switch (d) {
	case HTTP_ALLOWED: return "allowed";
	case HTTP_DENY_NO_RULE: return "no-rule";
	case HTTP_DENY_OTHER_HOST: return "other-host";
	case HTTP_DENY_OTHER_PORT: return "other-port";
	case HTTP_DENY_NO_HOST: return "no-host";
	case HTTP_DENY_CONNECT: return "connect";
	case HTTP_DENY_SWITCH_LATE: return "switch-late";
	case HTTP_DENY_SWITCH_BODY: return "switch-body";
	case HTTP_DENY_MALFORMED: return "malformed";
	case HTTP_DENY_COUNT: break;
	}
	return "unknown";
}

const char *http_deny_words(enum http_deny d)
{
	switch (d) {
	case HTTP_ALLOWED: return "allowed";
	case HTTP_DENY_NO_RULE: return "no --allow-http rule allows this request";
	case HTTP_DENY_OTHER_HOST:
		return "names another host than the connection was allowed for";
	case HTTP_DENY_OTHER_PORT:
		return "names another port than the connection was dialled on";
	case HTTP_DENY_NO_HOST: return "a request without a Host";
	case HTTP_DENY_CONNECT: return "CONNECT, which no --allow-http rule names";
	case HTTP_DENY_SWITCH_LATE:
		return "a protocol switch (Upgrade or CONNECT) after the connection's "
		       "first request";
	case HTTP_DENY_SWITCH_BODY: return "a protocol switch with a body";
	case HTTP_DENY_MALFORMED: return "a malformed or ambiguous HTTP request";
	case HTTP_DENY_COUNT: break;
	}
	return "refused";
}

char *http_rule_suggest(enum http_deny d, const char *method, const char *host,
			const char *path)
{
	struct http_rule r;
	struct http_rule_error e;
	char *text, *back;
	bool same;

	if ((d != HTTP_DENY_NO_RULE && d != HTTP_DENY_CONNECT) || !method || !host || !path)
		return NULL;
	/*
	 * A literal '*' or ',' would read back as a wildcard or a second pattern
	 * (method=* is every method); a '!' is history expansion to csh even
	 * inside the single quotes the rule is shown in.
	 */
	if (strpbrk(path, "*,'!") || strpbrk(method, "*!"))
		return NULL;
	if (d == HTTP_DENY_CONNECT || !path[0])
		text = xasprintf("method=%s domain=%s", method, host);
	else
		text = xasprintf("method=%s domain=%s path=%s", method, host, path);
	if (strchr(text, '\'') || http_rule_parse(text, &r, &e) < 0) {
		free(text);
		return NULL;
	}
	back = http_rule_text(&r);
	same = strcmp(back, text) == 0 && r.domain && strcmp(r.domain, host) == 0;
	http_rule_free(&r);
	free(back);
	if (!same) {
		free(text);
		return NULL;
	}
	return text;
}
