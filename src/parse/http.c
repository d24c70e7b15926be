/*
 * parse/http.c — HTTP/1.x request head parser (see parse/http.h).
 *
 * Lines are taken one at a time as they complete, so a violation is
 * reported as soon as its line has arrived rather than after 8 KiB of
 * waiting. The request line decides between NOT_HTTP and the rest: a line
 * that ends in " HTTP/x.y", that starts with a method name HTTP defines,
 * that is a token and then a target ("/…", "*", "scheme://…"), or that holds
 * " HTTP/" anywhere is HTTP and must then be perfect; anything else (an SSH banner, a binary protocol) is
 * NOT_HTTP and policy treats the connection as unnamed (and ungated: so
 * nothing a server would take for a request line may be NOT_HTTP).
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "parse/http.h"

/* Words for a status. */
const char *http_status_words(enum http_status s)
{
	switch (s) {
	case HTTP_OK: return "ok";
	case HTTP_NEED_MORE: return "incomplete request head";
	case HTTP_NOT_HTTP: return "not HTTP";
	case HTTP_MALFORMED: return "malformed request head";
	}
	return "unknown";
}

/* RFC 9110 tchar: the characters of a token (method, field name). */
static bool is_tchar(uint8_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Sets the MALFORMED reason and returns the status. */
static enum http_status malformed(struct http_result *r, const char *why)
{
	r->why = why;
	r->has_host = false;
	r->host[0] = '\0';
	return HTTP_MALFORMED;
}

/* Whitespace to some server's request-line splitter (Python's str.split() on Latin-1). */
static bool is_http_space(uint8_t c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == 0x85 ||
	       c == 0xa0;
}

/* A separator between a request line's parts to some server (CR and LF end the line). */
static bool is_line_space(uint8_t c)
{
	return is_http_space(c) && c != '\r' && c != '\n';
}

static bool is_alpha(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * Does the line at p (lim bytes, starting with a token of mlen bytes) go on
 * as a request line does: separators, then a target as servers read one
 * ('/', '*', or a URI scheme and "://")? Servers take methods and versions
 * boxy does not know (node's reads "DESCRIBE /x RTSP/1.1" and "SOURCE /x
 * ICE/1.1" as requests and keeps the connection open), so a line shaped
 * like this is HTTP whatever its method and version, and must be perfect.
 * 1 yes, 0 no, -1 not decidable in lim bytes.
 */
static int request_line_shaped(const uint8_t *p, size_t lim, size_t mlen)
{
	size_t i = mlen, s;

	while (i < lim && is_line_space(p[i]))
		i++;
	if (i == mlen)
		return 0;
	if (i == lim)
		return -1;
	if (p[i] == '/' || p[i] == '*')
		return 1;
	if (!is_alpha(p[i]))
		return 0;
	for (s = i + 1; s < lim && (is_alpha(p[s]) || (p[s] >= '0' && p[s] <= '9') ||
				    p[s] == '+' || p[s] == '-' || p[s] == '.'); s++)
		;
	if (lim - s < 3)
		return memcmp(p + s, "://", lim - s) == 0 ? -1 : 0;
	return memcmp(p + s, "://", 3) == 0;
}

/* Methods HTTP defines: a request line starting with one is HTTP even if broken. */
static bool known_method(const uint8_t *m, size_t n)
{
	static const char *const methods[] = {
		"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
	};

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strlen(methods[i]) == n && memcmp(methods[i], m, n) == 0)
			return true;
	return false;
}

/* The host and port of an authority ("host", "host:port", "[v6]:port"). */
struct authority {
	bool is_ip;
	char host[DNS_NAME_BUF];
	uint16_t port;
};

/* Parses an authority; -1 if it is not one boxy can check. */
static int parse_authority(const uint8_t *s, size_t n, struct authority *a)
{
	size_t hostlen, i;
	const uint8_t *port = NULL;
	size_t portlen = 0;
	char tmp[DNS_NAME_BUF];
	uint8_t bin[16];

	memset(a, 0, sizeof(*a));
	if (n == 0)
		return -1;
	if (s[0] == '[') {
		const uint8_t *close = memchr(s, ']', n);
		if (close == NULL)
			return -1;
		hostlen = (size_t)(close - s) - 1;
		if (hostlen == 0 || hostlen >= INET6_ADDRSTRLEN)
			return -1;
		for (i = 0; i < hostlen; i++) {
			uint8_t c = s[1 + i];
			tmp[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		}
		tmp[hostlen] = '\0';
		if (inet_pton(AF_INET6, tmp, bin) != 1)
			return -1;
		memcpy(a->host, tmp, hostlen + 1);
		a->is_ip = true;
		i = hostlen + 2;
		if (i < n) {
			if (s[i] != ':')
				return -1;
			port = s + i + 1;
			portlen = n - i - 1;
		}
	} else {
		const uint8_t *colon = memchr(s, ':', n);
		hostlen = colon ? (size_t)(colon - s) : n;
		if (colon) {
			port = colon + 1;
			portlen = n - hostlen - 1;
		}
		if (memchr(s, '\0', hostlen) != NULL ||
		    dns_name_normalize((const char *)s, hostlen, a->host) != 0)
			return -1;
		a->is_ip = inet_pton(AF_INET, a->host, bin) == 1;
	}
	if (port != NULL && portlen > 0) {
		unsigned v = 0;
		if (portlen > 5)
			return -1;
		for (i = 0; i < portlen; i++) {
			if (port[i] < '0' || port[i] > '9')
				return -1;
			v = v * 10 + (unsigned)(port[i] - '0');
		}
		if (v == 0 || v > 65535)
			return -1;
		a->port = (uint16_t)v;
	}
	return 0;
}

/* Finds the authority of an absolute-form target ("http://host:port/..."). */
static bool absolute_authority(const uint8_t *t, size_t n, const uint8_t **auth, size_t *alen)
{
	size_t skip, i;

	if (n >= 7 && strncasecmp((const char *)t, "http://", 7) == 0)
		skip = 7;
	else if (n >= 8 && strncasecmp((const char *)t, "https://", 8) == 0)
		skip = 8;
	else
		return false;
	for (i = skip; i < n && t[i] != '/' && t[i] != '?' && t[i] != '#'; i++)
		;
	*auth = t + skip;
	*alen = i - skip;
	return true;
}

/* Parses the request head (see the header). */
enum http_status http_parse(const uint8_t *p, size_t len, struct http_result *r)
{
	size_t lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	size_t i, mlen, line_end, tstart, tlen, off;
	const uint8_t *target, *host_val = NULL, *auth = NULL;
	size_t host_len = 0, alen = 0;
	bool http11, is_connect;
	struct authority ha, ta;

	memset(r, 0, sizeof(*r));

	/*
	 * Servers skip empty lines before the request line (RFC 9112 §2.2), so
	 * "\r\nGET ..." is HTTP to them: calling it not-HTTP would let its Host
	 * through unchecked. Refuse it instead.
	 */
	if (len >= 1 && (p[0] == '\r' || p[0] == '\n'))
		return malformed(r, "empty line before the request line");
	/*
	 * Some servers split the request line on any whitespace and strip it
	 * first (Python's http.server uses str.split(), for which \x1c-\x1f,
	 * \x85 and \xa0 are whitespace too), so " GET / HTTP/1.1" or
	 * "\x1cGET ..." is a request to them. A method after leading
	 * whitespace is HTTP and refused; anything else there is not HTTP.
	 */
	if (len >= 1 && is_http_space(p[0])) {
		size_t ws, tok;

		for (ws = 0; ws < lim && is_http_space(p[ws]); ws++)
			;
		for (tok = 0; ws + tok < lim && is_tchar(p[ws + tok]); tok++)
			;
		if (ws + tok == lim)    /* the method may not have arrived yet */
			return len >= HTTP_HEAD_MAX ? HTTP_NOT_HTTP : HTTP_NEED_MORE;
		if (known_method(p + ws, tok))
			return malformed(r, "whitespace before the request line");
		switch (tok ? request_line_shaped(p + ws, lim - ws, tok) : 0) {
		case 1:
			return malformed(r, "whitespace before the request line");
		case -1:
			return len >= HTTP_HEAD_MAX ? malformed(r, "request line too long") :
				HTTP_NEED_MORE;
		}
		return HTTP_NOT_HTTP;
	}

	/* The method token, and the decision whether this can be HTTP at all. */
	for (mlen = 0; mlen < lim && is_tchar(p[mlen]); mlen++)
		;
	if (mlen == lim)
		return len >= HTTP_HEAD_MAX ? HTTP_NOT_HTTP : HTTP_NEED_MORE;
	if (mlen == 0)
		return HTTP_NOT_HTTP;
	if (p[mlen] != ' ') {
		/*
		 * Some servers split the request line on any whitespace, and what
		 * counts as whitespace differs (Python's str.split() takes \x1c-\x1f
		 * too): a method followed by any separator but a space is refused.
		 */
		if (known_method(p, mlen))
			return malformed(r, "request line not separated by single spaces");
		switch (request_line_shaped(p, lim, mlen)) {
		case 1:
			return malformed(r, "request line not separated by single spaces");
		case -1:
			return len >= HTTP_HEAD_MAX ? malformed(r, "request line too long") :
				HTTP_NEED_MORE;
		}
		return HTTP_NOT_HTTP;
	}

	/* The whole request line. */
	target = memchr(p, '\n', lim);
	if (target == NULL)
		return len >= HTTP_HEAD_MAX ? malformed(r, "request line too long") : HTTP_NEED_MORE;
	line_end = (size_t)(target - p);            /* index of the '\n' */
	{
		static const char ver[] = " HTTP/";
		size_t body = line_end > 0 && p[line_end - 1] == '\r' ? line_end - 1 : line_end;
		bool has_version = body >= mlen + 1 + 1 + 8 &&
			memcmp(p + body - 9, ver, 6) == 0;
		/* " HTTP/" anywhere is a version some server reads ("HTTP/01.1" is 1.1 to Python) */
		if (!has_version && !known_method(p, mlen) &&
		    request_line_shaped(p, body, mlen) != 1 &&
		    memmem(p + mlen, body - mlen, ver, 6) == NULL)
			return HTTP_NOT_HTTP;
		if (!has_version)
			return malformed(r, "request line without an HTTP version");
		if (body == line_end)
			return malformed(r, "bare LF");
		if (p[body - 3] != '1' || p[body - 2] != '.' ||
		    (p[body - 1] != '0' && p[body - 1] != '1'))
			return malformed(r, "unsupported HTTP version");
		http11 = p[body - 1] == '1';
		tstart = mlen + 1;
		tlen = body - 9 - tstart;
		if (tlen == 0)
			return malformed(r, "empty request-target");
		for (i = 0; i < tlen; i++)
			if (p[tstart + i] < 0x21 || p[tstart + i] > 0x7e)
				return malformed(r, "bad byte in request-target");
		target = p + tstart;
	}
	is_connect = mlen == 7 && memcmp(p, "CONNECT", 7) == 0;

	/* Header lines until the empty one. */
	off = line_end + 1;
	for (;;) {
		const uint8_t *nl = off < lim ? memchr(p + off, '\n', lim - off) : NULL;
		size_t end, name_len, vs, ve;

		if (nl == NULL)
			return len >= HTTP_HEAD_MAX ? malformed(r, "request head too large") :
				HTTP_NEED_MORE;
		end = (size_t)(nl - p);
		if (end == off || p[end - 1] != '\r')
			return malformed(r, "bare LF");
		if (end - 1 == off) {           /* the empty line */
			off = end + 1;
			break;
		}
		if (p[off] == ' ' || p[off] == '\t')
			return malformed(r, "folded header line");
		for (name_len = 0; off + name_len < end - 1 && is_tchar(p[off + name_len]);
		     name_len++)
			;
		if (name_len == 0 || p[off + name_len] != ':')
			return malformed(r, "bad header name");
		vs = off + name_len + 1;
		ve = end - 1;
		for (i = vs; i < ve; i++)
			if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
				return malformed(r, "control byte in a header value");
		while (vs < ve && (p[vs] == ' ' || p[vs] == '\t'))
			vs++;
		while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
			ve--;
		if (name_len == 4 && strncasecmp((const char *)p + off, "host", 4) == 0) {
			if (host_val != NULL)
				return malformed(r, "two Host headers");
			host_val = p + vs;
			host_len = ve - vs;
		}
		off = end + 1;
	}
	r->head_len = off;

	/* Which host the request names, and that both places agree. */
	if (is_connect) {
		auth = target;
		alen = tlen;
	} else if (!absolute_authority(target, tlen, &auth, &alen)) {
		auth = NULL;
		if (target[0] != '/' && !(tlen == 1 && target[0] == '*'))
			return malformed(r, "bad request-target");
	}
	if (auth != NULL && parse_authority(auth, alen, &ta) != 0)
		return malformed(r, "bad authority in request-target");
	if (host_val == NULL) {
		if (http11)
			return malformed(r, "HTTP/1.1 request without Host");
		if (auth == NULL)
			return HTTP_OK;         /* HTTP/1.0, no name anywhere */
		ha = ta;
	} else {
		if (parse_authority(host_val, host_len, &ha) != 0)
			return malformed(r, "bad Host header");
		if (auth != NULL && (strcmp(ha.host, ta.host) != 0 || ha.port != ta.port))
			return malformed(r, "request-target and Host name different hosts");
	}
	r->has_host = true;
	r->host_is_ip = ha.is_ip;
	r->port = ha.port;
	memcpy(r->host, ha.host, sizeof(r->host));
	return HTTP_OK;
}
