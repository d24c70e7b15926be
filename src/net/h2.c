/*
 * net/h2.c — HTTP/2 between an inspected client and its server (net/tls.h),
 * with Debian's libnghttp2 on both sides: a server session reads the
 * sandbox's frames, a client session speaks to the upstream. No frame is
 * passed through: each request is rebuilt from the headers the gate
 * checked, so what the server receives is what the gate saw.
 *
 * A request's header block is decided by the gate (http_gate_check, with
 * :method, :authority — Host only when :authority is absent — and :path,
 * read by parse/h2req.c, which refuses a target a server could read as
 * another host's; such a refusal, or one by HTTP/2's own rules in nghttp2,
 * resets the stream and is recorded as a malformed request);
 * allowed, it is submitted upstream as a new stream with the same pseudo
 * headers and every other field but Host; refused, it is answered here with
 * the gate's 403 (or 400) and nothing of it goes up. A refusal ends that
 * stream alone (an HTTP/2 gate decides each stream afresh): the other
 * streams, and the ones the client opens next, go on, so one refused gRPC
 * method does not take its channel down. A refused request whose body is
 * still coming is reset (NO_ERROR) once its 403 is out (RFC 9113 §8.1).
 *
 * Bodies move with flow control end to end: neither session returns window
 * to its peer (nghttp2's automatic WINDOW_UPDATE is off) until the bytes
 * were handed to the other session, so what is held is bounded by the
 * connection windows (a stream's emptied buffer is freed), and a slow
 * reader slows its writer. Header blocks are
 * bounded (H2_HEADERS_MAX fields, H2_HEADER_BYTES_MAX bytes: a bigger block
 * resets its stream), and so are streams (H2_STREAMS_MAX at once),
 * SETTINGS, CONTINUATION frames and resets (nghttp2's own limits).
 * Extended CONNECT (RFC 8441) is never offered, server push never enabled.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "common/util.h"
#include "net/http-gate.h"
#include "net/tls.h"
#include "parse/h2req.h"

#define H2_HEADERS_MAX      256             /* fields in one header block */
#define H2_HEADER_BYTES_MAX (64 * 1024)     /* bytes of names and values in one block */
#define H2_STREAMS_MAX      100             /* streams the client may have open at once */
#define H2_READ_MAX         TLS_RECORD_MAX  /* one read of either side's plaintext */

/* A header block as received: copies of every name and value. */
struct h2_hdrs {
	nghttp2_nv *v;
	size_t n, bytes;
};

/* One request: its stream on each side, what waits to cross, how far each end is. */
struct h2_stream {
	struct h2_proxy *h;
	struct h2_stream *prev, *next;
	int32_t down_id;                /* the client's stream */
	int32_t up_id;                  /* the upstream's, 0 before (or without) one */
	struct h2_hdrs hdrs;            /* the block being received (request, response) */
	struct h2_hdrs trailers_up;     /* the client's trailers, sent after its body */
	struct h2_hdrs trailers_down;   /* the server's, sent after its body */
	struct tls_buf to_up, to_down;  /* body bytes the other session has not taken */
	bool req_end;                   /* the client ended its request */
	bool resp_end;                  /* the response is complete (or is our 403) */
	bool resp_sent;                 /* the final response's headers went to the client */
	bool refused;                   /* answered here by the gate */
	bool recorded;                  /* the gate recorded the request (decided or malformed) */
	bool down_closed, up_closed;    /* the stream ended on that session */
};

struct h2_proxy {
	struct gw *gw;
	struct tls_flow *t;
	nghttp2_session *down, *up;
	struct tls_buf down_out, up_out;        /* frames SSL_write has not taken yet */
	struct h2_stream *streams;
	bool any_stream;                /* the client opened a stream at all */
	bool down_over, up_over;        /* the session has nothing more to read or write */
};

/* ---- header blocks ----------------------------------------------------------------------- */

/* Free every field of a block and empty it. */
static void hdrs_clear(struct h2_hdrs *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		free(hs->v[i].name);
		free(hs->v[i].value);
	}
	free(hs->v);
	memset(hs, 0, sizeof(*hs));
}

/* Add a field; false when the block is over its bounds. */
static bool hdrs_add(struct h2_hdrs *hs, const uint8_t *name, size_t nlen, const uint8_t *value,
		     size_t vlen)
{
	nghttp2_nv *nv;

	if (hs->n >= H2_HEADERS_MAX || hs->bytes + nlen + vlen > H2_HEADER_BYTES_MAX)
		return false;
	nv = xappend(&hs->v, &hs->n, sizeof(*nv));
	nv->name = (uint8_t *)xstrndup((const char *)name, nlen);
	nv->value = (uint8_t *)xstrndup((const char *)value, vlen);
	nv->namelen = nlen;
	nv->valuelen = vlen;
	nv->flags = NGHTTP2_NV_FLAG_NONE;
	hs->bytes += nlen + vlen;
	return true;
}

/* The value of the field named name (NUL-terminated copy, or NULL). */
static const char *hdrs_get(const struct h2_hdrs *hs, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < hs->n; i++)
		if (hs->v[i].namelen == n && memcmp(hs->v[i].name, name, n) == 0)
			return (const char *)hs->v[i].value;
	return NULL;
}

/* Move a block (its fields now belong to dst). */
static void hdrs_move(struct h2_hdrs *dst, struct h2_hdrs *src)
{
	hdrs_clear(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

/* ---- streams -------------------------------------------------------------------------------- */

static struct h2_stream *stream_new(struct h2_proxy *h, int32_t down_id)
{
	struct h2_stream *s = xcalloc(1, sizeof(*s));

	s->h = h;
	s->down_id = down_id;
	s->next = h->streams;
	if (h->streams)
		h->streams->prev = s;
	h->streams = s;
	return s;
}

/* Unlink a stream and free it with what it holds. */
static void stream_free(struct h2_stream *s)
{
	struct h2_proxy *h = s->h;

	if (s->prev)
		s->prev->next = s->next;
	else
		h->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	hdrs_clear(&s->hdrs);
	hdrs_clear(&s->trailers_up);
	hdrs_clear(&s->trailers_down);
	free(s->to_up.p);
	free(s->to_down.p);
	free(s);
}

/* Free the stream once neither session knows it. */
static void stream_maybe_free(struct h2_stream *s)
{
	struct h2_proxy *h = s->h;

	if (!s->down_closed || (s->up_id > 0 && !s->up_closed))
		return;
	nghttp2_session_set_stream_user_data(h->down, s->down_id, NULL);
	if (s->up_id > 0)
		nghttp2_session_set_stream_user_data(h->up, s->up_id, NULL);
	stream_free(s);
}

/* Add n body bytes to a stream's buffer. */
static void buf_put(struct tls_buf *b, const uint8_t *p, size_t n)
{
	if (n == 0)
		return;
	if (b->off && b->off + b->len + n > b->cap) {
		memmove(b->p, b->p + b->off, b->len);
		b->off = 0;
	}
	if (b->off + b->len + n > b->cap) {
		b->cap = b->off + b->len + n;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->off + b->len, p, n);
	b->len += n;
}

/*
 * Take up to n bytes from the front of a buffer into out; how many. An
 * emptied buffer is freed: what a stream's buffers hold is then what the
 * connection windows let in (at most 64 KiB each way), not the most each of
 * a hundred streams ever held.
 */
static size_t buf_take(struct tls_buf *b, uint8_t *out, size_t n)
{
	if (n > b->len)
		n = b->len;
	if (n == 0)
		return 0;       /* b->p may be NULL: memcpy's arguments must not be */
	memcpy(out, b->p + b->off, n);
	b->off += n;
	b->len -= n;
	if (b->len == 0) {
		free(b->p);
		memset(b, 0, sizeof(*b));
	}
	return n;
}

/* ---- bodies: each session's data provider reads the other's bytes ---------------------------- */

/* The request body for the upstream; window goes back to the client as bytes leave. */
static ssize_t up_body_read(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
			    uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct h2_stream *s = src->ptr;
	struct h2_proxy *h = user;
	size_t n = buf_take(&s->to_up, buf, length);

	if (n && !s->down_closed)
		nghttp2_session_consume(h->down, s->down_id, n);
	else if (n)
		nghttp2_session_consume_connection(h->down, n);
	if (s->to_up.len == 0 && s->req_end) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (s->trailers_up.n) {
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			nghttp2_submit_trailer(session, id, s->trailers_up.v, s->trailers_up.n);
		}
		return (ssize_t)n;
	}
	return n ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
}

/* The response body for the client; window goes back to the upstream as bytes leave. */
static ssize_t down_body_read(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
			      uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct h2_stream *s = src->ptr;
	struct h2_proxy *h = user;
	size_t n = buf_take(&s->to_down, buf, length);

	if (n && s->up_id > 0 && !s->up_closed)
		nghttp2_session_consume(h->up, s->up_id, n);
	else if (n && s->up_id > 0)
		nghttp2_session_consume_connection(h->up, n);
	if (s->to_down.len == 0 && s->resp_end) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (s->trailers_down.n) {
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			nghttp2_submit_trailer(session, id, s->trailers_down.v, s->trailers_down.n);
		}
		return (ssize_t)n;
	}
	return n ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
}

/* ---- a request ------------------------------------------------------------------------------- */

/* Answer a refused request with the gate's response, on its stream alone. */
static void request_refuse(struct h2_proxy *h, struct h2_stream *s)
{
	struct http_gate_refusal r;
	char status[8], len[24];
	nghttp2_nv nv[3];
	nghttp2_data_provider prd = { .source.ptr = s, .read_callback = down_body_read };

	http_gate_refusal(h->t->gate, &r);
	snprintf(status, sizeof(status), "%u", r.status);
	snprintf(len, sizeof(len), "%zu", r.body_len);
	nv[0] = (nghttp2_nv){ (uint8_t *)":status", (uint8_t *)status, 7, strlen(status), 0 };
	nv[1] = (nghttp2_nv){ (uint8_t *)"content-type", (uint8_t *)"text/plain; charset=utf-8",
			      12, 25, 0 };
	nv[2] = (nghttp2_nv){ (uint8_t *)"content-length", (uint8_t *)len, 14, strlen(len), 0 };
	s->refused = true;
	buf_put(&s->to_down, (const uint8_t *)r.body, r.body_len);
	s->resp_end = true;
	s->resp_sent = true;
	nghttp2_submit_response(h->down, s->down_id, nv, 3, &prd);
}

/*
 * A framing field spelled with an underscore, which an HTTP/1 hop behind the
 * server that folds '_' into '-' would frame the body by: why, or NULL.
 */
static const char *hdrs_underscored(const struct h2_hdrs *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		const nghttp2_nv *v = &hs->v[i];

		if (v->namelen == 14 && memcmp(v->name, "content_length", 14) == 0)
			return "Content_Length (a server may read the underscore as a hyphen)";
		if (v->namelen == 17 && memcmp(v->name, "transfer_encoding", 17) == 0)
			return "Transfer_Encoding (a server may read the underscore as a hyphen)";
	}
	return NULL;
}

/*
 * A request's header block is complete: decide it, and pass it up or answer
 * it. What goes up is rebuilt from what was decided: the four pseudo
 * headers, then every field but Host (the :authority carries the name that
 * was checked, and a server could prefer a different Host).
 */
static void request_begin(struct h2_proxy *h, struct h2_stream *s, bool end_stream)
{
	const char *method = hdrs_get(&s->hdrs, ":method"), *path = hdrs_get(&s->hdrs, ":path");
	const char *authority = hdrs_get(&s->hdrs, ":authority");
	struct h2_target tg;
	struct http_gate_req req = { 0 };
	nghttp2_data_provider prd = { .source.ptr = s, .read_callback = up_body_read };
	nghttp2_nv *nv;
	size_t n = 0;
	char *pathonly;
	int32_t id;

	s->req_end = end_stream;
	s->recorded = true;
	if (h2_target_parse(method, path, authority, hdrs_get(&s->hdrs, "host"), &tg) < 0 ||
	    (tg.why = hdrs_underscored(&s->hdrs)) != NULL) {
		/* Not a request the gate can decide, but a request: recorded as malformed. */
		http_gate_malformed(h->t->gate, tg.why);
		nghttp2_submit_rst_stream(h->down, NGHTTP2_FLAG_NONE, s->down_id,
					  NGHTTP2_PROTOCOL_ERROR);
		s->refused = true;
		return;
	}
	if (!authority)
		authority = hdrs_get(&s->hdrs, "host");
	pathonly = tg.connect ? xstrdup("") : xstrndup(path, tg.path_len);
	req.method = method;
	req.host = tg.has_host ? tg.host : NULL;
	req.port = tg.port;
	req.path = pathonly;
	req.query = tg.query;
	req.upgrade = tg.connect;
	req.has_body = !end_stream;
	if (http_gate_check(h->t->gate, &req) != HTTP_ALLOWED) {
		free(pathonly);
		request_refuse(h, s);
		return;
	}
	free(pathonly);
	nv = xcalloc(s->hdrs.n + 1, sizeof(*nv));
	/* pseudo headers first, in the order received; then the rest but Host */
	for (size_t i = 0; i < s->hdrs.n; i++)
		if (s->hdrs.v[i].namelen && s->hdrs.v[i].name[0] == ':')
			nv[n++] = s->hdrs.v[i];
	if (!hdrs_get(&s->hdrs, ":authority") && authority)
		nv[n++] = (nghttp2_nv){ (uint8_t *)":authority", (uint8_t *)authority,
					10, strlen(authority), 0 };
	for (size_t i = 0; i < s->hdrs.n; i++)
		if (s->hdrs.v[i].namelen && s->hdrs.v[i].name[0] != ':' &&
		    !(s->hdrs.v[i].namelen == 4 && memcmp(s->hdrs.v[i].name, "host", 4) == 0))
			nv[n++] = s->hdrs.v[i];
	id = nghttp2_submit_request(h->up, NULL, nv, n, end_stream ? NULL : &prd, s);
	free(nv);
	if (id < 0) {
		nghttp2_submit_rst_stream(h->down, NGHTTP2_FLAG_NONE, s->down_id,
					  NGHTTP2_REFUSED_STREAM);
		s->refused = true;
		return;
	}
	s->up_id = id;
}

/* ---- the client's session (we are its server) ----------------------------------------------- */

/* A request's header block begins: a stream of ours for it. */
static int down_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct h2_proxy *h = user;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	h->any_stream = true;
	nghttp2_session_set_stream_user_data(session, frame->hd.stream_id,
					     stream_new(h, frame->hd.stream_id));
	return 0;
}

/* A request the gate never decides (HTTP/2's rules or our bounds broke it): malformed. */
static void request_malformed(struct h2_proxy *h, struct h2_stream *s, const char *why)
{
	if (s->recorded)
		return;
	s->recorded = true;
	s->refused = true;
	http_gate_malformed(h->t->gate, why);
}

/* A field of a block from either side; a block past its bounds resets its stream. */
static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		     void *user)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);

	(void)flags;
	if (!s)
		return 0;
	if (!hdrs_add(&s->hdrs, name, namelen, value, valuelen)) {
		if (session == s->h->down && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
			request_malformed(user, s, "an HTTP/2 header block over 256 fields or 64 KiB");
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return 0;
}

/*
 * A frame from the client that nghttp2 refused by HTTP/2's own rules (a
 * :path that is not a path, :protocol, a field with a CR or LF, two :paths):
 * when it was a request's header block, the request is recorded, like
 * every other; nghttp2 resets its stream.
 */
static int down_invalid_frame(nghttp2_session *session, const nghttp2_frame *frame, int code,
			      void *user)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	char why[96];

	if (!s || frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	snprintf(why, sizeof(why), "HTTP/2: %s", nghttp2_strerror(code));
	request_malformed(user, s, why);
	return 0;
}

/* A whole frame from the client: a request (decided), its trailers, its end. */
static int down_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct h2_proxy *h = user;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;

	if (!s)
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS) {
		if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
			request_begin(h, s, end);
			hdrs_clear(&s->hdrs);
		} else if (!s->refused && s->up_id > 0) {
			hdrs_move(&s->trailers_up, &s->hdrs);       /* the client's trailers */
			s->req_end = true;
			nghttp2_session_resume_data(h->up, s->up_id);
		} else {
			hdrs_clear(&s->hdrs);
		}
	} else if (frame->hd.type == NGHTTP2_DATA && end) {
		s->req_end = true;
		if (!s->refused && s->up_id > 0)
			nghttp2_session_resume_data(h->up, s->up_id);
	}
	return 0;
}

/* Body bytes from the client, for the upstream stream (nothing goes up unbid). */
static int down_data(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data,
		     size_t len, void *user)
{
	struct h2_proxy *h = user;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, id);

	(void)flags;
	if (!s || s->refused || s->up_id <= 0 || s->up_closed) {
		/* nobody will take it: give the window back at once */
		nghttp2_session_consume(session, id, len);
		return 0;
	}
	buf_put(&s->to_up, data, len);
	nghttp2_session_resume_data(h->up, s->up_id);
	return 0;
}

/* Our 403 is out while the client still sends its body: stop it, without error. */
static int down_frame_sent(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);

	(void)user;
	if (s && s->refused && !s->req_end && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
	    (frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS))
		nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
					  NGHTTP2_NO_ERROR);
	return 0;
}

/* The client's stream ended: the upstream one is cancelled if it is still going. */
static int down_stream_close(nghttp2_session *session, int32_t id, uint32_t code, void *user)
{
	struct h2_proxy *h = user;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, id);

	if (!s)
		return 0;
	s->down_closed = true;
	if (s->up_id > 0 && !s->up_closed && (code != NGHTTP2_NO_ERROR || !s->resp_end))
		nghttp2_submit_rst_stream(h->up, NGHTTP2_FLAG_NONE, s->up_id,
					  code != NGHTTP2_NO_ERROR ? code : NGHTTP2_CANCEL);
	stream_maybe_free(s);
	return 0;
}

/* ---- the upstream's session (we are its client) ----------------------------------------------- */

/* A whole frame from the server: informational, final, trailers, end. */
static int up_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct h2_proxy *h = user;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
	nghttp2_data_provider prd;

	if (!s)
		return 0;
	if (frame->hd.type == NGHTTP2_HEADERS) {
		const char *status = hdrs_get(&s->hdrs, ":status");

		if (s->down_closed) {
			hdrs_clear(&s->hdrs);
		} else if (frame->headers.cat == NGHTTP2_HCAT_RESPONSE && status &&
			   status[0] == '1') {
			/* informational (100, 103): passed on, the final one follows */
			nghttp2_submit_headers(h->down, NGHTTP2_FLAG_NONE, s->down_id, NULL,
					       s->hdrs.v, s->hdrs.n, NULL);
			hdrs_clear(&s->hdrs);
		} else if (!s->resp_sent) {
			prd = (nghttp2_data_provider){ .source.ptr = s,
						       .read_callback = down_body_read };
			s->resp_sent = true;
			s->resp_end = end;
			nghttp2_submit_response(h->down, s->down_id, s->hdrs.v, s->hdrs.n,
						end ? NULL : &prd);
			hdrs_clear(&s->hdrs);
		} else {
			hdrs_move(&s->trailers_down, &s->hdrs);     /* the server's trailers */
			s->resp_end = true;
			nghttp2_session_resume_data(h->down, s->down_id);
		}
	} else if (frame->hd.type == NGHTTP2_DATA && end) {
		s->resp_end = true;
		if (!s->down_closed)
			nghttp2_session_resume_data(h->down, s->down_id);
	}
	return 0;
}

/* A response block begins (its stream was ours from the request). */
static int up_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	(void)session;
	(void)frame;
	(void)user;
	return 0;
}

/* Body bytes from the server, for the client's stream. */
static int up_data(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data,
		   size_t len, void *user)
{
	struct h2_proxy *h = user;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, id);

	(void)flags;
	if (!s || s->down_closed) {
		nghttp2_session_consume(session, id, len);
		return 0;
	}
	buf_put(&s->to_down, data, len);
	nghttp2_session_resume_data(h->down, s->down_id);
	return 0;
}

/* The server's stream ended: the client's ends the same way. */
static int up_stream_close(nghttp2_session *session, int32_t id, uint32_t code, void *user)
{
	struct h2_proxy *h = user;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(session, id);

	if (!s)
		return 0;
	s->up_closed = true;
	if (!s->down_closed) {
		if (code != NGHTTP2_NO_ERROR || !s->resp_sent) {
			nghttp2_submit_rst_stream(h->down, NGHTTP2_FLAG_NONE, s->down_id,
						  code != NGHTTP2_NO_ERROR ? code :
						  NGHTTP2_INTERNAL_ERROR);
		} else {
			s->resp_end = true;
			nghttp2_session_resume_data(h->down, s->down_id);
		}
	}
	stream_maybe_free(s);
	return 0;
}

/* ---- setup ------------------------------------------------------------------------------------ */

struct h2_proxy *h2_proxy_create(struct gw *gw, struct tls_flow *t, char **err)
{
	struct h2_proxy *h = xcalloc(1, sizeof(*h));
	nghttp2_session_callbacks *cd = NULL, *cu = NULL;
	nghttp2_option *opt = NULL;
	nghttp2_settings_entry down_set[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_STREAMS_MAX },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_HEADER_BYTES_MAX },
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
	};
	nghttp2_settings_entry up_set[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_HEADER_BYTES_MAX },
	};

	h->gw = gw;
	h->t = t;
	t->gate = http_gate_create(gw, t->f, t->name, HTTP_GATE_H2);
	if (nghttp2_session_callbacks_new(&cd) || nghttp2_session_callbacks_new(&cu) ||
	    nghttp2_option_new(&opt))
		goto fail;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cd, down_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cd, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cd, down_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cd, down_data);
	nghttp2_session_callbacks_set_on_frame_send_callback(cd, down_frame_sent);
	nghttp2_session_callbacks_set_on_stream_close_callback(cd, down_stream_close);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cd, down_invalid_frame);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cu, up_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cu, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cu, up_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cu, up_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cu, up_stream_close);
	/* Window goes back only as bytes reach the other side (backpressure end to end). */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_continuations(opt, 8);
	nghttp2_option_set_stream_reset_rate_limit(opt, 1000, 33);
	if (nghttp2_session_server_new2(&h->down, cd, h, opt) ||
	    nghttp2_session_client_new2(&h->up, cu, h, opt) ||
	    nghttp2_submit_settings(h->down, NGHTTP2_FLAG_NONE, down_set, ARRAY_SIZE(down_set)) ||
	    nghttp2_submit_settings(h->up, NGHTTP2_FLAG_NONE, up_set, ARRAY_SIZE(up_set)))
		goto fail;
	nghttp2_session_callbacks_del(cd);
	nghttp2_session_callbacks_del(cu);
	nghttp2_option_del(opt);
	return h;
fail:
	nghttp2_session_callbacks_del(cd);
	nghttp2_session_callbacks_del(cu);
	nghttp2_option_del(opt);
	h2_proxy_free(h);
	set_err(err, "cannot set up an HTTP/2 session");
	return NULL;
}

/* Free both sessions and every stream (no callback runs). */
void h2_proxy_free(struct h2_proxy *h)
{
	if (!h)
		return;
	nghttp2_session_del(h->down);
	nghttp2_session_del(h->up);
	while (h->streams)
		stream_free(h->streams);
	free(h->down_out.p);
	free(h->up_out.p);
	free(h);
}

/* Both sessions over and every frame written. */
bool h2_proxy_done(const struct h2_proxy *h)
{
	return h->down_over && h->up_over && h->down_out.len == 0 && h->up_out.len == 0;
}

/* ---- moving frames ------------------------------------------------------------------------------ */

/*
 * Write one session's frames to its TLS side: what is left from last time
 * first, then what the session has to send, while the side takes it (and,
 * for the sandbox, while lwIP has room). 1 moved, 0 not, -1 broken.
 */
static int flush_side(struct h2_proxy *h, nghttp2_session *sess, SSL *s, struct tls_buf *out,
		      bool to_sandbox)
{
	struct tls_flow *t = h->t;
	int moved = 0;

	for (int guard = 0; guard < 64; guard++) {
		const uint8_t *data;
		ssize_t n, w;

		if (out->len) {
			w = tls_write_side(t, s, out->p + out->off, out->len);
			if (w == TLS_IO_AGAIN)
				return moved;
			if (w < 0)
				return -1;
			out->off += (size_t)w;
			out->len -= (size_t)w;
			if (out->len == 0)
				out->off = 0;
			moved = 1;
			continue;
		}
		if (to_sandbox && tls_down_room(t) == 0)
			return moved;
		n = nghttp2_session_mem_send(sess, &data);
		if (n < 0)
			return -1;
		if (n == 0)
			return moved;
		w = tls_write_side(t, s, data, (size_t)n);
		if (w < 0 && w != TLS_IO_AGAIN)
			return -1;
		if (w < n) {
			size_t k = w > 0 ? (size_t)w : 0;

			buf_put(out, data + k, (size_t)n - k);
		}
		moved = 1;
	}
	return moved;
}

/* Read one side's plaintext into its session. 1 moved, 0 not, -1 broken; *eof at its end. */
static int read_side(struct h2_proxy *h, nghttp2_session *sess, SSL *s, bool *eof)
{
	uint8_t *buf = h->gw->rbuf;
	int moved = 0;

	for (int guard = 0; guard < 16 && !*eof; guard++) {
		ssize_t n = tls_read_side(h->t, s, buf, H2_READ_MAX), used;

		if (n == TLS_IO_AGAIN)
			break;
		if (n == TLS_IO_EOF) {
			*eof = true;
			return 1;
		}
		if (n < 0)
			return -1;
		used = nghttp2_session_mem_recv(sess, buf, (size_t)n);
		if (used < 0)
			return -1;      /* a protocol error: nghttp2 queued its GOAWAY; end here */
		moved = 1;
	}
	return moved;
}

/* Move frames both ways; end the sessions when a side is gone (net/tls.h). */
int h2_pump(struct gw *gw, struct tls_flow *t)
{
	struct h2_proxy *h = t->h2;
	struct flow *f = t->f;
	int moved = 0, r;
	bool down_eof = t->down_eof, up_eof = t->up_eof;

	/* out first: what is written frees window for what is read */
	if ((r = flush_side(h, h->down, t->down, &h->down_out, true)) < 0)
		return -1;
	moved |= r;
	if (!t->up_closed) {
		if ((r = flush_side(h, h->up, t->up, &h->up_out, false)) < 0)
			return -1;
		moved |= r;
	}
	/* the client is read only while its answers leave (else it could queue without end) */
	if (!h->down_over && h->down_out.len == 0 && nghttp2_session_want_read(h->down)) {
		r = read_side(h, h->down, t->down, &down_eof);
		if ((r < 0 || down_eof) && !h->any_stream)
			tls_client_quiet(t);
		if (r < 0)
			return -1;
		moved |= r;
	}
	if (!h->up_over && h->up_out.len == 0 && nghttp2_session_want_read(h->up) &&
	    tls_down_room(t) > 0) {
		if ((r = read_side(h, h->up, t->up, &up_eof)) < 0)
			return -1;
		moved |= r;
	} else if (f->fd >= 0 && tls_down_room(t) == 0) {
		ev_io_stop(gw->loop, &f->rio);      /* tcp_on_sent brings us back */
	}
	/* One side gone: the other is told (GOAWAY) and finishes what it can. */
	if (down_eof && !h->down_over) {
		h->down_over = true;
		nghttp2_session_terminate_session(h->up, NGHTTP2_NO_ERROR);
		moved = 1;
	}
	if (up_eof && !h->up_over) {
		h->up_over = true;
		nghttp2_session_terminate_session(h->down, NGHTTP2_NO_ERROR);
		moved = 1;
	}
	if (!h->down_over && !nghttp2_session_want_read(h->down) &&
	    !nghttp2_session_want_write(h->down) && h->down_out.len == 0) {
		h->down_over = true;
		nghttp2_session_terminate_session(h->up, NGHTTP2_NO_ERROR);
		moved = 1;
	}
	if (!h->up_over && !nghttp2_session_want_read(h->up) &&
	    !nghttp2_session_want_write(h->up) && h->up_out.len == 0) {
		h->up_over = true;
		nghttp2_session_terminate_session(h->down, NGHTTP2_NO_ERROR);
		moved = 1;
	}
	if (h->down_over && h->up_over && h->down_out.len == 0 && h->up_out.len == 0 &&
	    !nghttp2_session_want_write(h->down) && !nghttp2_session_want_write(h->up)) {
		t->down_eof = true;
		t->up_eof = true;
	} else if (h->down_over && h->up_over && !moved) {
		/* a GOAWAY the side cannot take any more (closed): nothing left to say */
		t->down_eof = true;
		t->up_eof = true;
	}
	return moved;
}
