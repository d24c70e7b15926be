/*
 * parse/h2req.c — an HTTP/2 request's target, for the gate (parse/h2req.h).
 */
#include <config.h>

#include <string.h>

#include "parse/h2req.h"

/* Refuse, saying why; 0 fields are left as they were. */
static int bad(struct h2_target *t, const char *why)
{
	t->why = why;
	return -1;
}

/* A port: 1-5 digits, at most 65535; 0 and a leading '+' or space are not ports. */
static bool port_parse(const char *p, size_t n, uint16_t *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

/* host[:port] or [v6][:port], into t; -1 when it is not one. */
static int authority_parse(const char *a, struct h2_target *t)
{
	size_t n = strlen(a), hlen;
	const char *colon;

	if (n == 0)
		return bad(t, "an empty :authority");
	if (memchr(a, '@', n))
		return bad(t, "userinfo in :authority");
	if (a[0] == '[') {
		const char *end = memchr(a, ']', n);

		if (!end)
			return bad(t, "an unclosed IPv6 literal in :authority");
		hlen = (size_t)(end + 1 - a);
		if (end[1] == ':') {
			if (!port_parse(end + 2, n - hlen - 1, &t->port))
				return bad(t, "a port that is not a number in :authority");
		} else if (end[1] != '\0') {
			return bad(t, "bytes after an IPv6 literal in :authority");
		}
	} else {
		colon = memchr(a, ':', n);
		hlen = colon ? (size_t)(colon - a) : n;
		if (colon && !port_parse(colon + 1, n - hlen - 1, &t->port))
			return bad(t, "a port that is not a number in :authority");
	}
	if (hlen == 0 || hlen >= DNS_NAME_BUF)
		return bad(t, "an empty or overlong host in :authority");
	for (size_t i = 0; i < hlen; i++) {
		unsigned char c = (unsigned char)a[i];

		if (c <= 0x20 || c >= 0x7f || c == '/' || c == '\\' || c == '?' || c == '#')
			return bad(t, "a byte a host name cannot hold in :authority");
		t->host[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	t->host[hlen] = '\0';
	t->has_host = true;
	return 0;
}

/* Read a request's target (parse/h2req.h). */
int h2_target_parse(const char *method, const char *path, const char *authority,
		    const char *host, struct h2_target *t)
{
	const char *q;

	memset(t, 0, sizeof(*t));
	if (!method || !*method)
		return bad(t, "no :method");
	t->connect = strcmp(method, "CONNECT") == 0;
	if (t->connect) {
		if (path)
			return bad(t, "CONNECT with a :path");
		if (!authority)
			return bad(t, "CONNECT without an :authority");
	} else {
		if (!path || !*path)
			return bad(t, "no :path");
		if (strcmp(path, "*") == 0) {
			if (strcmp(method, "OPTIONS") != 0)
				return bad(t, "\"*\" as the :path of another method than OPTIONS");
		} else if (path[0] != '/' || path[1] == '/') {
			/* an absolute URI or a scheme-relative one could name another host */
			return bad(t, "a :path that is not a path");
		}
		q = strchr(path, '?');
		t->path_len = q ? (size_t)(q - path) : strlen(path);
		t->query = q ? q + 1 : NULL;
	}
	if (!authority)
		authority = host;
	return authority ? authority_parse(authority, t) : 0;
}
