/*
 * parse/http.h — read the Host of a plain-HTTP request off the wire.
 *
 * Given the first bytes a sandboxed client sent on a TCP connection, say
 * whether they are the head of an HTTP/1.x request and, if so, which host
 * it names. Strict on purpose: where servers differ (bare LF, folded
 * headers, space before the colon, two Host headers, a request-target
 * naming another host, an empty line or a tab in the request line) the
 * head is MALFORMED and policy refuses it, so the name boxy checks is the
 * name any server would act on. NOT_HTTP is kept for bytes no server would
 * take for a request, since policy lets those through without a name.
 *
 * Here only the first request of a connection is named (net/name.c);
 * parse/http-req.c reads every request with this parser, for the gate
 * (doc/http-rules.md). Pure, no allocation.
 */
#ifndef BOXY_NET_HTTP_H
#define BOXY_NET_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/dns.h"   /* DNS_NAME_BUF */

#define HTTP_HEAD_MAX 8192      /* request line + headers + the blank line */

enum http_status {
	HTTP_OK = 0,
	HTTP_NEED_MORE,     /* a prefix of a plausible request head: read more */
	HTTP_NOT_HTTP,      /* does not start like an HTTP request line */
	HTTP_MALFORMED,     /* starts like HTTP but breaks the rules, or too large */
};

struct http_result {
	size_t head_len;            /* OK: bytes up to and including the blank line */
	bool has_host;              /* OK: a host was named (Host header or absolute target) */
	bool host_is_ip;            /* OK: the host is an IPv4 or [IPv6] literal */
	char host[DNS_NAME_BUF];    /* OK: lower-case, port and brackets removed */
	uint16_t port;              /* OK: the port written after the host, 0 if none */
	const char *why;            /* MALFORMED: what was wrong (constant) */
};

/* Parse the first len bytes of a client's stream. */
enum http_status http_parse(const uint8_t *p, size_t len, struct http_result *r);

const char *http_status_words(enum http_status s);

#endif
