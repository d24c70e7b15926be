/*
 * parse/http-req.c — the requests of an HTTP/1.x stream, one head at a time,
 * with their bodies framed (parse/http-req.h).
 *
 * A state machine fed arbitrary chunks: a head is gathered into the
 * parser's buffer (a bare CR or LF, or a NUL, is refused the moment it
 * arrives), read by parse/http.c's strict http_parse once its blank line
 * is in, and then framed by its Content-Length or chunked coding so the
 * next head is found where a server would find it. Body bytes are counted,
 * never copied. Every way two readers of the same bytes could disagree
 * about where a request ends is refused (see the header); the tests feed
 * every request at every split point (tests/unit/test-http-req.c).
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "parse/http-req.h"

enum {
	ST_HEAD,                /* gathering a head */
	ST_BODY,                /* Content-Length bytes to pass */
	ST_CHUNK_SIZE,          /* a chunk-size line */
	ST_CHUNK_DATA,          /* a chunk's bytes */
	ST_CHUNK_END,           /* the CRLF after a chunk's bytes */
	ST_TRAILER,             /* trailer lines after the last chunk, to the blank one */
	ST_OPAQUE,              /* after a switching head: not HTTP any more */
	ST_BAD,
};

void http_req_init(struct http_req_parser *p)
{
	memset(p, 0, sizeof(*p));
	p->state = ST_HEAD;
}

/* Refuse the stream from here on; returns taken for the caller's convenience. */
static size_t fail(struct http_req_parser *p, const char *why, size_t taken,
		   enum http_req_status *st)
{
	p->state = ST_BAD;
	p->why = why;
	*st = HTTP_REQ_BAD;
	return taken;
}

static bool is_tchar(uint8_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int hex_val(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* Header names compared as HTTP does (case-insensitively). */
static bool name_is(const uint8_t *name, size_t n, const char *want)
{
	return strlen(want) == n && strncasecmp((const char *)name, want, n) == 0;
}

/*
 * A header name that is want once every '_' is read as '-' (case aside):
 * Content_Length to the servers that fold the two (CGI's and WSGI's
 * HTTP_CONTENT_LENGTH is both, and some proxies rewrite one to the other).
 */
static bool name_is_underscored(const uint8_t *name, size_t n, const char *want)
{
	if (strlen(want) != n || !memchr(name, '_', n))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = name[i] == '_' ? '-' : name[i];

		if ((c | 0x20) != (uint8_t)want[i] && c != (uint8_t)want[i])
			return false;
	}
	return true;
}

/*
 * Splits the request target (t, n bytes, inside the parser's head, which
 * nothing reads again) into path and query, NUL-terminating both in place:
 * the `?` and the space after the target become the ends.
 */
static void split_target(struct http_req *q, uint8_t *t, size_t n)
{
	size_t i = 0;
	uint8_t *qm;

	t[n] = '\0';                   /* the space before " HTTP/1.x" */
	if (q->connect || (n == 1 && t[0] == '*')) {
		q->path = q->query = "";
		return;
	}
	if (q->absolute) {
		size_t skip = n >= 8 && strncasecmp((const char *)t, "https://", 8) == 0 ? 8 : 7;

		for (i = skip; i < n && t[i] != '/' && t[i] != '?' && t[i] != '#'; i++)
			;
	}
	qm = memchr(t + i, '?', n - i);
	q->query = "";
	if (qm) {
		*qm = '\0';
		q->query = (const char *)qm + 1;
	}
	/* "http://h" and "http://h?x" ask for "/" */
	q->path = t[i] ? (const char *)t + i : "/";
}

/*
 * Why a body on this method is refused, or NULL. RFC 9110 gives content in
 * a GET, HEAD or DELETE no meaning and warns that it is a smuggling vector;
 * TRACE may not have any. Servers that do not read it (Python's http.server
 * on a kept-alive connection) take the body for the next request, which boxy
 * would have passed unread as the body of an allowed one.
 */
static const char *bodyless_method(const char *m)
{
	static const char *const why[][2] = {
		{ "GET", "a body on GET (a server that ignores it reads it as the next request)" },
		{ "HEAD", "a body on HEAD (a server that ignores it reads it as the next request)" },
		{ "DELETE", "a body on DELETE (a server that ignores it reads it as the next "
			    "request)" },
		{ "TRACE", "a body on TRACE (a server that ignores it reads it as the next "
			   "request)" },
	};

	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		if (strcmp(m, why[i][0]) == 0)
			return why[i][1];
	return NULL;
}

/*
 * The head is in p->head: read it with http_parse, then find its framing.
 * 0, or -1 with p->why.
 */
static int head_done(struct http_req_parser *p)
{
	struct http_result hr;
	struct http_req *q = &p->req;
	uint8_t *h = p->head;
	size_t mlen, off, cl_count = 0, te_count = 0, up_count = 0;
	uint8_t *t, *sp;
	bool chunked = false;
	uint64_t cl = 0;

	memset(q, 0, sizeof(*q));
	q->index = p->nreq;
	switch (http_parse(h, p->head_len, &hr)) {
	case HTTP_OK:
		break;
	case HTTP_MALFORMED:
		p->why = hr.why;
		return -1;
	default:
		p->why = "not an HTTP request";
		return -1;
	}
	if (hr.head_len != p->head_len) {
		p->why = "request head not where it seems to end";
		return -1;
	}
	for (mlen = 0; is_tchar(h[mlen]); mlen++)
		;
	if (mlen > HTTP_REQ_METHOD_MAX) {
		p->why = "method longer than 32 characters";
		return -1;
	}
	memcpy(q->method, h, mlen);
	q->method[mlen] = '\0';
	q->connect = strcmp(q->method, "CONNECT") == 0;
	t = h + mlen + 1;
	sp = memchr(t, ' ', p->head_len - mlen - 1);   /* http_parse: exactly one */
	q->http11 = sp[8] == '1';
	q->absolute = !q->connect && (size_t)(sp - t) >= 7 &&
		      (strncasecmp((const char *)t, "http://", 7) == 0 ||
		       strncasecmp((const char *)t, "https://", 8) == 0);
	split_target(q, t, (size_t)(sp - t));
	q->has_host = hr.has_host;
	q->host_is_ip = hr.host_is_ip;
	memcpy(q->host, hr.host, sizeof(q->host));
	q->port = hr.port;
	q->head_len = p->head_len;

	/* The framing headers; http_parse has checked every line's shape. */
	off = (size_t)((const uint8_t *)memchr(h, '\n', p->head_len) - h) + 1;
	while (off + 2 <= p->head_len && h[off] != '\r') {
		const uint8_t *nl = memchr(h + off, '\n', p->head_len - off);
		const uint8_t *colon = memchr(h + off, ':', (size_t)(nl - (h + off)));
		const uint8_t *v = colon + 1, *ve = nl - 1;     /* ve: the '\r' */
		size_t nlen = (size_t)(colon - (h + off));

		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (name_is(h + off, nlen, "content-length")) {
			if (++cl_count > 1) {
				p->why = "two Content-Length headers";
				return -1;
			}
			if (v == ve || ve - v > 18) {
				p->why = "Content-Length not a plain number";
				return -1;
			}
			for (const uint8_t *d = v; d < ve; d++) {
				if (*d < '0' || *d > '9') {
					p->why = "Content-Length not a plain number";
					return -1;
				}
				cl = cl * 10 + (uint64_t)(*d - '0');
			}
		} else if (name_is(h + off, nlen, "transfer-encoding")) {
			if (++te_count > 1) {
				p->why = "two Transfer-Encoding headers";
				return -1;
			}
			if (!name_is(v, (size_t)(ve - v), "chunked")) {
				p->why = "Transfer-Encoding other than chunked";
				return -1;
			}
			chunked = true;
		} else if (name_is_underscored(h + off, nlen, "content-length")) {
			p->why = "Content_Length (a server may read the underscore as a hyphen)";
			return -1;
		} else if (name_is_underscored(h + off, nlen, "transfer-encoding")) {
			p->why = "Transfer_Encoding (a server may read the underscore as a hyphen)";
			return -1;
		} else if (name_is(h + off, nlen, "upgrade")) {
			/*
			 * Servers read two differently: Go's h2c handler switches when
			 * any of them names h2c, so "h2c" then "websocket" would be a
			 * websocket here and HTTP/2 there, passed unread.
			 */
			if (++up_count > 1) {
				p->why = "two Upgrade headers";
				return -1;
			}
			q->upgrade = true;
			q->websocket = name_is(v, (size_t)(ve - v), "websocket");
		}
		off = (size_t)(nl - h) + 1;
	}
	if (cl_count && te_count) {
		p->why = "both Content-Length and Transfer-Encoding";
		return -1;
	}
	if (chunked && !q->http11) {
		p->why = "Transfer-Encoding on HTTP/1.0";
		return -1;
	}
	if (q->connect)
		q->upgrade = true;
	if ((chunked || cl) && bodyless_method(q->method)) {
		p->why = bodyless_method(q->method);
		return -1;
	}
	if (chunked) {
		q->body = HTTP_BODY_CHUNKED;
	} else if (cl) {
		q->body = HTTP_BODY_LENGTH;
		q->length = cl;
	}
	return 0;
}

/* The state that follows the head just read. */
static void after_head(struct http_req_parser *p)
{
	p->nreq++;
	p->head_len = 0;
	if (p->req.body == HTTP_BODY_LENGTH) {
		p->state = ST_BODY;
		p->left = p->req.length;
	} else if (p->req.body == HTTP_BODY_CHUNKED) {
		p->state = ST_CHUNK_SIZE;
		p->line_len = 0;
	} else {
		p->state = p->req.upgrade ? ST_OPAQUE : ST_HEAD;
	}
}

/* The request's body ended: the next head, or nothing more after a switch. */
static void body_done(struct http_req_parser *p)
{
	p->state = p->req.upgrade ? ST_OPAQUE : ST_HEAD;
}

/* Is the trailer line (without its CRLF) a well-formed header line? */
static bool trailer_line_ok(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_tchar(s[i]))
		i++;
	if (i == 0 || i == n || s[i] != ':')
		return false;
	for (i++; i < n; i++)
		if ((s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return false;
	return true;
}

size_t http_req_feed(struct http_req_parser *p, const uint8_t *buf, size_t n,
		     enum http_req_status *st)
{
	size_t i = 0;

	*st = HTTP_REQ_MORE;
	while (i < n) {
		uint8_t c;

		switch (p->state) {
		case ST_BAD:
			*st = HTTP_REQ_BAD;
			return i;
		case ST_OPAQUE:
			return n;
		case ST_BODY:
		case ST_CHUNK_DATA: {
			uint64_t take = n - i < p->left ? n - i : p->left;

			i += (size_t)take;
			p->left -= take;
			if (p->left == 0) {
				if (p->state == ST_BODY)
					body_done(p);
				else {
					p->state = ST_CHUNK_END;
					p->line_len = 0;
				}
			}
			continue;
		}
		case ST_HEAD:
			c = buf[i];
			if (p->head_len == HTTP_HEAD_MAX)
				return fail(p, "request head too large", i, st);
			if (c == 0)
				return fail(p, "NUL in a request head", i, st);
			if (c == '\n' && (p->head_len == 0 || p->head[p->head_len - 1] != '\r'))
				return fail(p, "bare LF", i, st);
			if (p->head_len && p->head[p->head_len - 1] == '\r' && c != '\n')
				return fail(p, "bare CR", i, st);
			p->head[p->head_len++] = c;
			i++;
			if (c == '\n' && p->head_len >= 4 &&
			    memcmp(p->head + p->head_len - 4, "\r\n\r\n", 4) == 0) {
				if (head_done(p) < 0)
					return fail(p, p->why, i, st);
				after_head(p);
				*st = HTTP_REQ_HEAD;
				return i;
			}
			if (p->head_len == 2 && p->head[0] == '\r')
				return fail(p, "empty line before the request line", i, st);
			continue;
		case ST_CHUNK_SIZE:
			c = buf[i];
			if (p->line_len && p->line[p->line_len - 1] == '\r') {
				uint64_t size = 0;

				if (c != '\n')
					return fail(p, "bare CR after a chunk size", i, st);
				i++;
				for (size_t k = 0; k + 1 < p->line_len; k++)
					size = size * 16 + (uint64_t)hex_val(p->line[k]);
				p->line_len = 0;
				if (size > HTTP_REQ_CHUNK_MAX)
					return fail(p, "chunk too large", i, st);
				if (size == 0) {
					p->state = ST_TRAILER;
					p->trailer_len = 0;
				} else {
					p->state = ST_CHUNK_DATA;
					p->left = size;
				}
				continue;
			}
			if (c == '\r' && p->line_len == 0)
				return fail(p, "empty chunk size", i, st);
			if (c != '\r' && hex_val(c) < 0)
				return fail(p, "chunk size not plain hex digits and CRLF (no "
					    "extensions)", i, st);
			if (c != '\r' && p->line_len == 16)
				return fail(p, "chunk size longer than 16 digits", i, st);
			p->line[p->line_len++] = c;
			i++;
			continue;
		case ST_CHUNK_END:
			c = buf[i++];
			if (c != (p->line_len == 0 ? '\r' : '\n'))
				return fail(p, "chunk data not followed by CRLF", i - 1, st);
			if (++p->line_len == 2) {
				p->state = ST_CHUNK_SIZE;
				p->line_len = 0;
			}
			continue;
		case ST_TRAILER:
			c = buf[i++];
			if (p->trailer_len == HTTP_HEAD_MAX)
				return fail(p, "trailers too large", i - 1, st);
			if (c == 0)
				return fail(p, "NUL in a trailer", i - 1, st);
			if (c == '\n' && (p->head_len == 0 || p->head[p->head_len - 1] != '\r'))
				return fail(p, "bare LF", i - 1, st);
			if (p->head_len && p->head[p->head_len - 1] == '\r' && c != '\n')
				return fail(p, "bare CR", i - 1, st);
			p->head[p->head_len++] = c;
			p->trailer_len++;
			if (c != '\n')
				continue;
			if (p->head_len == 2) {                 /* the blank line: the end */
				p->head_len = 0;
				body_done(p);
				continue;
			}
			if (p->head[0] == ' ' || p->head[0] == '\t' ||
			    !trailer_line_ok(p->head, p->head_len - 2))
				return fail(p, "malformed trailer", i - 1, st);
			p->head_len = 0;
			continue;
		}
	}
	return i;
}

uint64_t http_req_opaque(const struct http_req_parser *p)
{
	switch (p->state) {
	case ST_BODY:
	case ST_CHUNK_DATA:
		return p->left;
	case ST_OPAQUE:
		return UINT64_MAX;
	default:
		return 0;
	}
}

void http_req_skip(struct http_req_parser *p, uint64_t n)
{
	if (p->state == ST_OPAQUE || n == 0)
		return;
	if (n > p->left)
		n = p->left;
	p->left -= n;
	if (p->left == 0) {
		if (p->state == ST_BODY) {
			body_done(p);
		} else {
			p->state = ST_CHUNK_END;
			p->line_len = 0;
		}
	}
}

bool http_req_idle(const struct http_req_parser *p)
{
	return p->state == ST_HEAD && p->head_len == 0;
}

size_t http_req_held(const struct http_req_parser *p)
{
	return p->state == ST_HEAD ? p->head_len : 0;
}
