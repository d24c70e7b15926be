/*
 * spec/http-rule.c — reading one HTTP allow rule (spec/http-rule.h).
 *
 * The text is read left to right, pair by pair, and the first thing that
 * is wrong is reported with its column, so `boxy run --allow-http` and
 * `boxy profile check` can point at it. Nothing is guessed: a key given
 * twice, an empty value, a wildcard inside a label or a segment, a port in
 * a domain, a dot segment in a path pattern are each refused with words
 * that say what to write instead. Domains go through --allow-host's own
 * validator (spec/values.c), so a rule's domain and a host entry accept
 * exactly the same names.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/gettext.h"
#include "common/util.h"
#include "spec/http-rule.h"
#include "spec/values.h"

/* RFC 9110 tchar: the characters of a method. */
static bool is_tchar(char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
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

/* RFC 3986 unreserved: decoded when percent-encoded. */
static bool is_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* A character a path pattern may hold as itself: pchar without ',' (the list's separator). */
static bool is_pattern_char(char c)
{
	return is_unreserved((unsigned char)c) || (c != '\0' && strchr("!$&'()+;=:@", c) != NULL);
}

/* Normalises a path's percent-encodings (see the header). */
int http_path_normalize(const char *in, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = in[i];

		if (o + 4 > cap)
			return -1;
		if (c != '%') {
			out[o++] = c;
			continue;
		}
		if (i + 2 >= len)
			return -1;
		if (!is_hex(in[i + 1]) || !is_hex(in[i + 2]))
			return -1;
		{
			unsigned char v = (unsigned char)(hex_val(in[i + 1]) * 16 + hex_val(in[i + 2]));

			if (is_unreserved(v)) {
				out[o++] = (char)v;
			} else {
				static const char hex[] = "0123456789ABCDEF";

				out[o++] = '%';
				out[o++] = hex[v >> 4];
				out[o++] = hex[v & 15];
			}
		}
		i += 2;
	}
	if (o + 1 > cap)
		return -1;
	out[o] = '\0';
	return 0;
}

/* The parser's position and what it found wrong. */
struct cursor {
	const char *text;
	struct http_rule_error *e;
};

/* Records the error at p and returns -1. */
static int bad(struct cursor *c, const char *p, const char *why)
{
	c->e->column = (size_t)(p - c->text) + 1;
	c->e->why = why;
	return -1;
}

/* Methods that have a standard upper-case name: a lower-case one is a mistake. */
static bool is_standard_method_ci(const char *m, size_t n)
{
	static const char *const std[] = {
		"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
	};

	for (size_t i = 0; i < ARRAY_SIZE(std); i++)
		if (strlen(std[i]) == n && strncasecmp(std[i], m, n) == 0 && strncmp(std[i], m, n))
			return true;
	return false;
}

/* method=GET,HEAD — the value from v to end. */
static int parse_methods(struct cursor *c, const char *v, const char *end, struct http_rule *r)
{
	const char *p = v;

	for (;;) {
		const char *s = p;
		size_t n;
		bool dup = false;

		while (p < end && *p != ',')
			p++;
		n = (size_t)(p - s);
		if (n == 0)
			return bad(c, s, N_("an empty method (two commas, or one at an end)"));
		if (n > HTTP_RULE_METHOD_MAX)
			return bad(c, s, N_("a method longer than 32 characters"));
		if (!(n == 1 && *s == '*')) {
			for (size_t i = 0; i < n; i++)
				if (!is_tchar(s[i]) || s[i] == '*')
					/* xgettext:no-c-format */
					return bad(c, s + i, N_("not a method (letters, digits and "
								"!#$%&'+-.^_`|~; or * alone)"));
			if (is_standard_method_ci(s, n))
				return bad(c, s, N_("HTTP's methods are case-sensitive: write this "
						    "one in capitals"));
		}
		for (size_t i = 0; i < r->nmethods; i++)
			if (strlen(r->methods[i]) == n && strncmp(r->methods[i], s, n) == 0)
				dup = true;
		if (!dup) {
			if (r->nmethods == HTTP_RULE_METHODS_MAX)
				return bad(c, s, N_("more than 16 methods in one rule"));
			*(char **)xappend(&r->methods, &r->nmethods, sizeof(char *)) =
				xstrndup(s, n);
		}
		if (p == end)
			return 0;
		p++;
	}
}

/* domain=api.test, *.github.com, or * — the value from v to end. */
static int parse_domain(struct cursor *c, const char *v, const char *end, struct http_rule *r)
{
	size_t n = (size_t)(end - v);
	struct host_spec h = { 0 };
	char *name, *err = NULL;
	const char *colon = memchr(v, ':', n);

	if (n == 1 && *v == '*')
		return 0;               /* any host */
	if (colon)
		return bad(c, colon, N_("a domain has no port (give ports with --allow-host "
					"NAME:PORT)"));
	for (size_t i = 0; i < n; i++)
		if (v[i] == '*' && !(i == 0 && n > 2 && v[1] == '.'))
			return bad(c, v + i, N_("a wildcard only as the whole first label "
						"(\"*.example.com\")"));
	name = xstrndup(v, n);
	if (parse_host_spec(name, &h, &err) < 0) {
		free(name);
		free(err);
		return bad(c, v, N_("not a host name (letters, digits, '-' and '.'; an IP "
				    "address belongs to --allow-cidr)"));
	}
	free(name);
	r->domain = h.name;
	h.name = NULL;
	host_spec_free(&h);
	return 0;
}

/* One path pattern from s to e (no commas): checks it and appends it normalised. */
static int parse_one_path(struct cursor *c, const char *s, const char *e, struct http_rule *r)
{
	const char *seg = s + 1;
	char *norm;
	size_t cap;

	if (s == e)
		return bad(c, s, N_("an empty path pattern (two commas, or one at an end)"));
	if (*s != '/')
		return bad(c, s, N_("a path pattern starts with '/'"));
	for (const char *p = s + 1;; p++) {
		if (p == e || *p == '/') {
			size_t n = (size_t)(p - seg);

			if (n == 0 && p != e)
				return bad(c, seg, N_("an empty segment (\"//\"): requests with "
						      "one are refused anyway"));
			if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return bad(c, seg, N_("a dot segment (\".\" or \"..\"): requests "
						      "with one are refused anyway"));
			if (memchr(seg, '*', n) && n != 1)
				return bad(c, (const char *)memchr(seg, '*', n),
					   N_("a wildcard is a whole segment (\"/a/*/b\")"));
			if (p == e)
				break;
			seg = p + 1;
			continue;
		}
		if (*p == '?')
			return bad(c, p, N_("a query string: rules match the path only"));
		if (*p == '%') {
			if (e - p < 3 || !is_hex(p[1]) || !is_hex(p[2]))
				/* xgettext:no-c-format */
				return bad(c, p, N_("'%' is not followed by two hex digits"));
			p += 2;
			continue;
		}
		if (*p != '*' && !is_pattern_char(*p))
			/* xgettext:no-c-format */
			return bad(c, p, N_("not allowed in a path (letters, digits, "
					    "-._~!$&'()+;=:@ and %XX)"));
	}
	if (r->npaths == HTTP_RULE_PATHS_MAX)
		return bad(c, s, N_("more than 32 path patterns in one rule"));
	cap = (size_t)(e - s) * 3 + 1;
	norm = xmalloc(cap);
	if (http_path_normalize(s, (size_t)(e - s), norm, cap) < 0)
		fatal("http rule: a checked pattern does not normalise");
	/* Decoding %2E could make a dot segment of what was none. */
	for (const char *q = norm; *q; q++) {
		size_t n;

		if (*q != '/')
			continue;
		n = strcspn(q + 1, "/");
		if ((n == 1 && q[1] == '.') || (n == 2 && q[1] == '.' && q[2] == '.')) {
			free(norm);
			return bad(c, s, N_("a dot segment (\".\" or \"..\"): requests with one "
					    "are refused anyway"));
		}
	}
	*(char **)xappend(&r->paths, &r->npaths, sizeof(char *)) = norm;
	return 0;
}

/* path=/v1/x,/v2 — the value from v to end. */
static int parse_paths(struct cursor *c, const char *v, const char *end, struct http_rule *r)
{
	const char *p = v;

	for (;;) {
		const char *s = p;

		while (p < end && *p != ',')
			p++;
		if (parse_one_path(c, s, p, r) < 0)
			return -1;
		if (p == end)
			return 0;
		p++;
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Reads one rule (see the header). */
int http_rule_parse(const char *text, struct http_rule *out, struct http_rule_error *e)
{
	struct cursor c = { .text = text, .e = e };
	struct http_rule r = { 0 };
	bool seen[3] = { false, false, false };
	const char *p = text;
	size_t len = strlen(text);

	e->column = 0;
	e->why = NULL;
	if (len > HTTP_RULE_TEXT_MAX)
		return bad(&c, text + HTTP_RULE_TEXT_MAX, N_("a rule longer than 1024 characters"));
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 && text[i] != '\t')
			return bad(&c, text + i, N_("a control character"));
		else if ((unsigned char)text[i] >= 0x7f)
			return bad(&c, text + i, N_("a character outside ASCII"));
	while (is_blank(*p))
		p++;
	if (*p == '\0')
		return bad(&c, p, N_("an empty rule (write method=…, domain=… and path=…, each "
				     "at most once)"));
	while (*p) {
		static const char *const keys[] = { "method", "domain", "path" };
		const char *eq = p, *v, *end;
		int k = -1, rc;

		while (*eq && *eq != '=' && !is_blank(*eq))
			eq++;
		for (int i = 0; i < 3; i++)
			if ((size_t)(eq - p) == strlen(keys[i]) && strncmp(p, keys[i], eq - p) == 0)
				k = i;
		if (k < 0) {
			http_rule_free(&r);
			return bad(&c, p, *eq == '=' ? N_("an unknown key (the keys are method, "
							  "domain and path)") :
				   N_("expected KEY=VALUE (method=…, domain=…, path=…)"));
		}
		if (*eq != '=') {
			http_rule_free(&r);
			return bad(&c, eq, N_("expected '=' after the key"));
		}
		if (seen[k]) {
			http_rule_free(&r);
			return bad(&c, p, N_("a key given twice in one rule (a rule is one "
					     "method=, domain= and path=; give two rules instead)"));
		}
		seen[k] = true;
		v = eq + 1;
		for (end = v; *end && !is_blank(*end); end++)
			;
		if (v == end) {
			http_rule_free(&r);
			return bad(&c, v, N_("an empty value"));
		}
		rc = k == 0 ? parse_methods(&c, v, end, &r) :
		     k == 1 ? parse_domain(&c, v, end, &r) : parse_paths(&c, v, end, &r);
		if (rc < 0) {
			http_rule_free(&r);
			return -1;
		}
		p = end;
		while (is_blank(*p))
			p++;
	}
	*out = r;
	return 0;
}

void http_rule_free(struct http_rule *r)
{
	for (size_t i = 0; i < r->nmethods; i++)
		free(r->methods[i]);
	free(r->methods);
	free(r->domain);
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	free(r->paths);
	memset(r, 0, sizeof(*r));
}

/* Appends "key=a,b" to w, with a space before it unless it is the first pair. */
static void text_list(struct wbuf *w, const char *key, char *const *v, size_t n)
{
	if (w->len)
		wbuf_put(w, " ", 1);
	wbuf_put(w, key, strlen(key));
	wbuf_put(w, "=", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			wbuf_put(w, ",", 1);
		wbuf_put(w, v[i], strlen(v[i]));
	}
}

char *http_rule_text(const struct http_rule *r)
{
	struct wbuf w;
	char *s;

	wbuf_init(&w);
	if (r->nmethods)
		text_list(&w, "method", r->methods, r->nmethods);
	if (r->domain)
		text_list(&w, "domain", &r->domain, 1);
	if (r->npaths)
		text_list(&w, "path", r->paths, r->npaths);
	if (!w.len)
		wbuf_put(&w, "domain=*", 8);
	s = xstrndup((const char *)w.p, w.len);
	wbuf_free(&w);
	return s;
}

char *http_rule_error_line(const char *text, const struct http_rule_error *e)
{
	(void)text;
	return xasprintf(_("column %zu: %s"), e->column, _(e->why));
}
