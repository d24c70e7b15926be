/*
 * parse/http-req.h — every request of an HTTP/1.x stream a sandboxed client
 * sends, for the gate (net/http-gate.h): one head at a time, and enough of
 * each body (Content-Length or chunked) to find where the next request
 * starts on a keep-alive or pipelined connection.
 *
 * Incremental and bounded: bytes are fed as they come, split anywhere, and
 * the parser keeps at most one head (HTTP_HEAD_MAX) and a chunk-size line.
 * Each head is read by parse/http.c's strict http_parse (CRLF only, no
 * folding, no control bytes, one Host, an absolute or CONNECT target naming
 * the same host and port as Host), and then framed. Whatever a server and
 * boxy could read differently is refused, never guessed at (doc/http-rules.md):
 * Content-Length and Transfer-Encoding together; a Transfer-Encoding that is
 * not exactly `chunked`, or on HTTP/1.0; two Content-Length headers, or one
 * that is not plain digits; a chunk size with anything but hex digits (no
 * extensions, no spaces), or a chunk not followed by CRLF; trailers that
 * break the header rules; a head or trailers over 8 KiB; a NUL anywhere; a
 * body on GET, HEAD, DELETE or TRACE (a server that does not read it takes
 * it for the next request); two Upgrade headers; Content_Length or
 * Transfer_Encoding spelled with an underscore (servers that fold `_` into
 * `-` would frame the body by it, boxy would not).
 *
 * After a head that switches protocols (an Upgrade request, or CONNECT) the
 * parser stops reading: everything later is opaque, and what to do with it
 * is the gate's decision. Pure, no allocation; one struct per connection.
 */
#ifndef BOXY_PARSE_HTTP_REQ_H
#define BOXY_PARSE_HTTP_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/http.h"         /* HTTP_HEAD_MAX, DNS_NAME_BUF */

#define HTTP_REQ_METHOD_MAX  32     /* a longer method is malformed */
#define HTTP_REQ_CHUNK_LINE  20     /* a chunk-size line: 16 hex digits and CRLF, with room */
#define HTTP_REQ_CHUNK_MAX   (1ull << 60)

enum http_req_status {
	HTTP_REQ_MORE,          /* every byte fed was taken; feed more when it comes */
	HTTP_REQ_HEAD,          /* a request head ended with the last byte taken: p->req
				 * describes it; decide before feeding on */
	HTTP_REQ_BAD,           /* the stream broke the rules (p->why); from now on nothing
				 * is taken */
};

enum http_req_body {
	HTTP_BODY_NONE,
	HTTP_BODY_LENGTH,       /* Content-Length > 0 */
	HTTP_BODY_CHUNKED,
};

/* One request head, as the gate needs it. Strings are NUL-terminated. */
struct http_req {
	char method[HTTP_REQ_METHOD_MAX + 1];
	const char *path;               /* the target's path up to `?` ("/" for an absolute
					 * target without one; "" for CONNECT and `*`); points
					 * into the parser's head, valid until the next feed */
	const char *query;              /* after the `?`, "" if none; the same */
	bool has_host;
	bool host_is_ip;
	char host[DNS_NAME_BUF];        /* lower-case, port and brackets removed */
	uint16_t port;                  /* written after the host; 0: none */
	bool absolute;                  /* an absolute-form target ("http://h/p") */
	bool connect;                   /* CONNECT */
	bool upgrade;                   /* an Upgrade header */
	bool websocket;                 /* ... and it asks for exactly "websocket" */
	bool http11;
	enum http_req_body body;
	uint64_t length;                /* HTTP_BODY_LENGTH: the Content-Length */
	size_t head_len;                /* bytes of the head, request line to blank line */
	uint64_t index;                 /* 0 for the connection's first request */
};

struct http_req_parser {
	int state;                      /* parse/http-req.c's */
	uint8_t head[HTTP_HEAD_MAX];    /* the head being read */
	size_t head_len;
	uint8_t line[HTTP_REQ_CHUNK_LINE];
	size_t line_len;
	uint64_t left;                  /* body bytes (Content-Length or chunk) still to come */
	size_t trailer_len;
	uint64_t nreq;                  /* heads returned so far */
	struct http_req req;            /* the last head returned */
	const char *why;                /* HTTP_REQ_BAD: what was wrong (constant, untranslated) */
};

void http_req_init(struct http_req_parser *p);

/*
 * Take bytes of the client's stream, which continue the last call's. Sets
 * *st and returns how many were taken: all n for MORE; up to the end of a
 * head for HEAD (feed the rest after deciding); for BAD the bytes before
 * the fault. Body bytes and, after a switching head, all bytes are taken
 * without a status of their own.
 */
size_t http_req_feed(struct http_req_parser *p, const uint8_t *buf, size_t n,
		     enum http_req_status *st);

/*
 * Bytes the parser will take next without looking at them (the rest of a
 * Content-Length body or of a chunk's data; UINT64_MAX after a switching
 * head), so a caller may skip them with http_req_skip instead of copying
 * them in. 0 when it must see the bytes.
 */
uint64_t http_req_opaque(const struct http_req_parser *p);
void http_req_skip(struct http_req_parser *p, uint64_t n);

/* True between requests: no head, body or trailer started. */
bool http_req_idle(const struct http_req_parser *p);
/* Bytes of a head taken but not yet complete (they must wait for its decision). */
size_t http_req_held(const struct http_req_parser *p);

#endif
