/*
 * parse/h2req.h — what an HTTP/2 request's header block asks for, read the
 * way the gate needs it (net/h2.c): the host and port its :authority names
 * (Host only when :authority is absent), the path and query of its :path,
 * and whether its target is one boxy may pass on at all.
 *
 * nghttp2 has already checked the block's shape (pseudo headers once each,
 * before the rest, no connection-specific fields). What is left is what a
 * server and boxy could read differently, and each is refused, never
 * guessed at: a :path that is not a path ("http://other/x", "//other/x"),
 * "*" for anything but OPTIONS, CONNECT with a :path, an :authority with
 * userinfo ("user@host") or a port that is not a number, a host that is
 * empty or longer than a DNS name. Pure, no allocation.
 */
#ifndef BOXY_PARSE_H2REQ_H
#define BOXY_PARSE_H2REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/dns.h"          /* DNS_NAME_BUF */

struct h2_target {
	bool connect;               /* CONNECT: no path, the authority is the target */
	bool has_host;              /* an :authority (or Host) was given */
	char host[DNS_NAME_BUF];    /* lower-case, without the port ("[::1]" kept bracketed) */
	uint16_t port;              /* written after the host; 0: none */
	size_t path_len;            /* bytes of :path before the '?' (0 for CONNECT) */
	const char *query;          /* after the '?' in :path, or NULL */
	const char *why;            /* refused: what was wrong (constant, untranslated) */
};

/*
 * Read a request's :method, :path, :authority and Host (each NUL-terminated,
 * NULL when absent). 0 with *t filled, or -1 with t->why.
 */
int h2_target_parse(const char *method, const char *path, const char *authority,
		    const char *host, struct h2_target *t);

#endif
