/*
 * net/http-gate.c — the HTTP gate (net/http-gate.h): every request of a
 * gated flow decided before a byte of it goes upstream, and recorded.
 *
 * The decision is policy/http-rules.h's http_decide, with boxy-net's copy of
 * the rules; nothing waits for the broker, which only hears of each request
 * (NET_HTTP_REQUEST) and checks it decided the same way.
 *
 * The plain-HTTP path keeps the sandbox's bytes in the flow's queue (lwIP's
 * pbufs) until the gate lets them go: a head is held until it is complete
 * and decided, its body passes as it comes. The gate's counters are stream
 * offsets, and so is f->up_bytes (what went upstream), so the bytes at the
 * front of the queue that may go are http_gate_allowed() - f->up_bytes. A
 * head must be complete within gw->head_timeout of its first byte (a
 * slowloris payload holds a flow and a head's buffer for as long as it
 * likes otherwise): past it, it is refused with a 408.
 *
 * A refusal: what was allowed before it is still written upstream, the
 * refused request and everything after it never is. When the refused
 * request was the connection's first, the upstream socket is closed and
 * the 403 goes back at once. Otherwise earlier requests may still be
 * waiting for their answers (pipelining): the gate frames the server's
 * answers (parse/http-resp.h) and appends the 403 right after the last
 * byte of the last one, then closes both ways; upstream is half-closed
 * meanwhile, and a server silent for GW_GATE_DRAIN seconds is cut off. An
 * answer that ends only with the server's close (no length, not chunked),
 * or one the framer cannot read, can be followed by nothing: the client
 * would read the 403 as its body. Then the connection ends when the server
 * closes, without the 403 (the refusal is recorded all the same); an
 * answer cut short by the drain ends in a reset, so the client sees that
 * it is short.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "net/flow.h"
#include "net/http-gate.h"
#include "common/netaddr.h"
#include "parse/dns.h"
#include "parse/http-req.h"
#include "parse/http-resp.h"
#include "proto/netproto.h"

#define GW_GATE_DRAIN 5.0       /* seconds a server may fall silent before a refusal */

struct http_gate {
	struct gw *gw;
	struct flow *f;
	char bound[DNS_NAME_BUF];
	enum http_gate_transport t;
	enum http_gate_state state;
	enum http_deny deny;            /* the refusal's code */
	uint64_t nreq;                  /* requests decided on this flow */
	uint64_t fed, allowed;          /* stream offsets */
	bool sw_connect, sw_websocket;  /* the switching request was CONNECT / a websocket */
	char status[16];                /* the server's first bytes, after a switching request */
	size_t status_len;
	struct http_gate_refusal refusal;
	bool ended;                     /* plain: upstream closed or half-closed after a stop */
	bool answered;                  /* plain: the refusal was queued for the sandbox (or
					 * dropped: it could not follow the server's answer) */
	bool queued;                    /* plain: ... queued, to go before the FIN */
	ev_tstamp drain_deadline;       /* plain: GW_GATE_DRAIN after the server's last byte */
	ev_tstamp head_since;           /* when the head being read began */
	struct http_resp_framer resp;   /* where the server's answers end */
	struct http_req_parser parser;  /* last: the big one */
};

const struct http_rules *http_gate_rules(struct gw *gw)
{
	return &gw->http_rules;
}

void http_gate_set_rules(struct gw *gw, struct http_rules *rs)
{
	http_rules_free(&gw->http_rules);
	gw->http_rules = *rs;
	memset(rs, 0, sizeof(*rs));
}

struct http_gate *http_gate_create(struct gw *gw, struct flow *f, const char *bound_host,
				   enum http_gate_transport t)
{
	struct http_gate *g = xcalloc(1, sizeof(*g));

	g->gw = gw;
	g->f = f;
	snprintf(g->bound, sizeof(g->bound), "%s", bound_host ? bound_host : "");
	g->t = t;
	g->state = HTTP_GATE_OPEN;
	http_req_init(&g->parser);
	http_resp_init(&g->resp);
	return g;
}

void http_gate_free(struct http_gate *g)
{
	free(g);
}

/* Record one request with the broker (NET_HTTP_REQUEST). */
static void gate_record(struct http_gate *g, enum http_deny d, size_t rule, uint8_t flags,
			const char *method, const char *host, uint16_t port, const char *path,
			const char *query, const char *why)
{
	struct http_record r = {
		.seq = ++g->gw->http_seq, .deny = (uint8_t)d,
		.rule = (uint16_t)(rule == HTTP_RULE_NONE ? HTTP_RULE_NONE : rule),
		.flags = flags, .method = method ? method : "", .host = host ? host : "",
		.port = port, .path = path ? path : "", .why = why ? why : "",
	};
	char q[NETPROTO_QUERY_MAX + 1];
	size_t ql = query ? strlen(query) : 0;

	if (g->t != HTTP_GATE_PLAIN)
		r.flags |= HTTPREQ_TLS;
	if (g->t == HTTP_GATE_H2)
		r.flags |= HTTPREQ_H2;
	if (ql > NETPROTO_QUERY_MAX) {
		ql = NETPROTO_QUERY_MAX;
		r.flags |= HTTPREQ_QUERY_CUT;
	}
	if (ql)
		memcpy(q, query, ql);
	q[ql] = '\0';
	r.query = q;
	send_http_request(g->gw, g->f, &r);
}

/* The refusal's text: what was refused, why, and the rule that would allow it. */
static void gate_refusal_set(struct http_gate *g, enum http_deny d, const char *method,
			     const char *host, uint16_t port, const char *path, const char *why)
{
	struct http_gate_refusal *r = &g->refusal;
	char *fix = http_rule_suggest(d, method, host, path);
	char where[DNS_NAME_BUF + 8];
	int n;

	if (port)
		snprintf(where, sizeof(where), "%s:%u", host && *host ? host : "-", port);
	else
		snprintf(where, sizeof(where), "%s", host && *host ? host : "-");
	r->status = d == HTTP_DENY_MALFORMED ? 400 : 403;
	if (d == HTTP_DENY_MALFORMED)
		n = snprintf(r->body, sizeof(r->body), "boxy: malformed HTTP request refused (%s)\n",
			     why && *why ? why : http_deny_words(d));
	else if (fix)
		n = snprintf(r->body, sizeof(r->body),
			     "boxy: %s %s%s refused; allow it with --allow-http '%s'\n", method,
			     where, path, fix);
	else
		n = snprintf(r->body, sizeof(r->body), "boxy: %s %s%s refused (%s)\n", method,
			     where, path, http_deny_words(d));
	if (n < 0 || (size_t)n >= sizeof(r->body)) {
		/* A long path: say less rather than cut a line in the middle. */
		n = snprintf(r->body, sizeof(r->body), "boxy: %s request refused (%s)\n",
			     method && *method ? method : "HTTP", http_deny_words(d));
	}
	r->body_len = (size_t)n;
	free(fix);
}

static void gate_malformed(struct http_gate *g, const char *why);

static bool is_tchar(char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Visible ASCII, at most max bytes. */
static bool visible(const char *s, size_t max)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f || n >= max)
			return false;
	return true;
}

/*
 * What the record may carry, as the broker checks it: a request from a
 * parser other than this file's (HTTP/2, the TLS path's) that breaks it is
 * malformed here rather than a lie there. NULL, or why not.
 */
static const char *gate_request_bad(const struct http_gate_req *q)
{
	size_t n = q->method ? strlen(q->method) : 0;
	char norm[DNS_NAME_BUF];
	struct net_addr a;

	if (n == 0 || n > HTTP_REQ_METHOD_MAX)
		return "a method that is not 1 to 32 characters";
	for (size_t i = 0; i < n; i++)
		if (!is_tchar(q->method[i]))
			return "a method that is not a token";
	if (q->host && q->host[0] && net_addr_parse(q->host, &a) != 0 &&
	    (dns_name_normalize(q->host, strlen(q->host), norm) != 0 ||
	     strcmp(norm, q->host) != 0))
		return "a host that is not a lower-case name or an address";
	if (q->path && !visible(q->path, HTTP_HEAD_MAX - 1))
		return "a path of more than 8 KiB or with a byte outside visible ASCII";
	if (q->query && !visible(q->query, HTTP_HEAD_MAX - 1))
		return "a query with a byte outside visible ASCII";
	return NULL;
}

enum http_deny http_gate_check(struct http_gate *g, const struct http_gate_req *q)
{
	const char *bad = gate_request_bad(q);
	struct http_bound b = {
		.host = g->bound, .port = g->f->dport,
		.default_port = g->t == HTTP_GATE_PLAIN ? 80 : 443,
	};
	struct http_request req = {
		.method = q->method, .host = q->host && *q->host ? q->host : NULL,
		.port = q->port, .path = q->path ? q->path : "", .first = g->nreq == 0,
		.upgrade = q->upgrade, .has_body = q->has_body,
	};
	size_t rule;
	enum http_deny d;

	if (g->state == HTTP_GATE_REFUSED)
		return g->deny;
	if (bad) {
		gate_malformed(g, bad);
		return HTTP_DENY_MALFORMED;
	}
	/* HTTP/2 streams are each their own request; "first" is the connection's first. */
	d = http_decide(&g->gw->http_rules, &b, &req, &rule);
	gate_record(g, d, rule, (uint8_t)((q->upgrade ? HTTPREQ_UPGRADE : 0) |
					  (q->has_body ? HTTPREQ_BODY : 0)),
		    q->method, req.host, q->port, req.path, q->query, NULL);
	g->nreq++;
	if (d != HTTP_ALLOWED) {
		/* HTTP/1: the connection ends with its refusal. HTTP/2: only that stream does. */
		if (g->t != HTTP_GATE_H2)
			g->state = HTTP_GATE_REFUSED;
		g->deny = d;
		gate_refusal_set(g, d, q->method, req.host, q->port, req.path, NULL);
	}
	return d;
}

/* The stream broke HTTP's rules: record it and refuse with a 400. */
static void gate_malformed(struct http_gate *g, const char *why)
{
	char w[NETPROTO_WHY_MAX + 1];

	snprintf(w, sizeof(w), "%s", why ? why : "malformed");
	gate_record(g, HTTP_DENY_MALFORMED, HTTP_RULE_NONE, 0, NULL, NULL, 0, NULL, NULL, w);
	g->nreq++;
	if (g->t != HTTP_GATE_H2)
		g->state = HTTP_GATE_REFUSED;
	g->deny = HTTP_DENY_MALFORMED;
	gate_refusal_set(g, HTTP_DENY_MALFORMED, NULL, NULL, 0, NULL, w);
}

enum http_deny http_gate_malformed(struct http_gate *g, const char *why)
{
	if (g->state == HTTP_GATE_REFUSED)
		return g->deny;
	gate_malformed(g, why);
	return HTTP_DENY_MALFORMED;
}

void http_gate_refusal(const struct http_gate *g, struct http_gate_refusal *out)
{
	*out = g->refusal;
}

size_t http_gate_refusal_h1(const struct http_gate_refusal *r, char *out, size_t cap)
{
	int n = snprintf(out, cap,
			 "HTTP/1.1 %u %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%.*s",
			 r->status, r->status == 400 ? "Bad Request" : r->status == 408 ?
			 "Request Timeout" : "Forbidden", r->body_len,
			 (int)r->body_len, r->body);

	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

/* ---- the HTTP/1.x stream ------------------------------------------------------------- */

size_t http_gate_feed(struct http_gate *g, const uint8_t *p, size_t n)
{
	size_t taken = 0;

	while (taken < n) {
		enum http_req_status st;
		const struct http_req *q = &g->parser.req;
		size_t k, held;

		if (g->state == HTTP_GATE_TUNNEL) {
			g->fed += n - taken;
			g->allowed = g->fed;
			return n;
		}
		if (g->state != HTTP_GATE_OPEN)
			return taken;
		held = http_req_held(&g->parser);
		k = http_req_feed(&g->parser, p + taken, n - taken, &st);
		taken += k;
		g->fed += k;
		if (held == 0 && http_req_held(&g->parser) > 0)
			g->head_since = ev_now(g->gw->loop);    /* a head began */
		if (st == HTTP_REQ_BAD) {
			gate_malformed(g, g->parser.why);
			return taken;
		}
		if (st == HTTP_REQ_MORE) {
			g->allowed = g->fed - http_req_held(&g->parser);
			continue;
		}
		{
			struct http_gate_req r = {
				.method = q->method, .host = q->has_host ? q->host : NULL,
				.port = q->port, .path = q->path, .query = q->query,
				.upgrade = q->upgrade, .has_body = q->body != HTTP_BODY_NONE,
			};

			if (http_gate_check(g, &r) != HTTP_ALLOWED)
				return taken;
		}
		g->allowed = g->fed;
		if (!q->upgrade)
			http_resp_expect(&g->resp, strcmp(q->method, "HEAD") == 0);
		if (q->upgrade) {
			g->state = HTTP_GATE_SWITCHING;
			g->sw_connect = q->connect;
			g->sw_websocket = q->websocket;
			return taken;
		}
	}
	return taken;
}

void http_gate_client_eof(struct http_gate *g)
{
	if (g->state == HTTP_GATE_OPEN && http_req_held(&g->parser) > 0)
		gate_malformed(g, "request head incomplete at the end of the stream");
}

uint64_t http_gate_opaque(const struct http_gate *g)
{
	if (g->state == HTTP_GATE_TUNNEL)
		return UINT64_MAX;
	if (g->state != HTTP_GATE_OPEN)
		return 0;
	return http_req_opaque(&g->parser);
}

void http_gate_skip(struct http_gate *g, uint64_t n)
{
	if (g->state == HTTP_GATE_OPEN) {
		uint64_t max = http_req_opaque(&g->parser);

		if (n > max)
			n = max;
		http_req_skip(&g->parser, n);
	} else if (g->state != HTTP_GATE_TUNNEL) {
		return;
	}
	g->fed += n;
	g->allowed = g->fed - (g->state == HTTP_GATE_OPEN ? http_req_held(&g->parser) : 0);
}

uint64_t http_gate_allowed(const struct http_gate *g)
{
	return g->allowed;
}

uint64_t http_gate_fed(const struct http_gate *g)
{
	return g->fed;
}

enum http_gate_state http_gate_state(const struct http_gate *g)
{
	return g->state;
}

/*
 * After a switching request, the server's status line decides: 101 to a
 * websocket or 2xx to CONNECT hands the connection over; 101 to anything
 * else (h2c) is a protocol boxy cannot read on; any other answer declines.
 */
static void gate_switch_answer(struct http_gate *g, const uint8_t *p, size_t n)
{
	const char *s = g->status;
	unsigned code;

	while (n && g->status_len < 12) {
		g->status[g->status_len++] = (char)*p++;
		n--;
	}
	if (g->status_len < 12)
		return;
	if (memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
	    s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' || s[11] < '0' ||
	    s[11] > '9') {
		g->state = HTTP_GATE_DECLINED;
		return;
	}
	code = (unsigned)(s[9] - '0') * 100 + (unsigned)(s[10] - '0') * 10 +
	       (unsigned)(s[11] - '0');
	if (g->sw_connect)
		g->state = code / 100 == 2 ? HTTP_GATE_TUNNEL : HTTP_GATE_DECLINED;
	else if (code != 101)
		g->state = HTTP_GATE_DECLINED;
	else
		g->state = g->sw_websocket ? HTTP_GATE_TUNNEL : HTTP_GATE_RESET;
}

size_t http_gate_server(struct http_gate *g, const uint8_t *p, size_t n)
{
	size_t off = 0;

	if (g->state == HTTP_GATE_SWITCHING) {
		gate_switch_answer(g, p, n);
		return n;
	}
	if (g->state != HTTP_GATE_OPEN && g->state != HTTP_GATE_REFUSED)
		return n;
	/* Framed as they come; after a refusal, nothing past the last answer it waits for. */
	while (off < n) {
		if (g->state == HTTP_GATE_REFUSED && http_resp_complete(&g->resp))
			return off;
		off += http_resp_feed(&g->resp, p + off, n - off);
	}
	return n;
}

enum http_gate_answers http_gate_answers(const struct http_gate *g)
{
	if (http_resp_unframed(&g->resp))
		return HTTP_GATE_UNFRAMED;
	return http_resp_complete(&g->resp) ? HTTP_GATE_ANSWERED : HTTP_GATE_ANSWERING;
}

double http_gate_head_deadline(const struct http_gate *g)
{
	if (g->state != HTTP_GATE_OPEN || http_req_held(&g->parser) == 0)
		return HUGE_VAL;
	return g->head_since + g->gw->head_timeout;
}

bool http_gate_head_expire(struct http_gate *g, double now)
{
	struct http_gate_refusal *r = &g->refusal;
	char why[NETPROTO_WHY_MAX + 1];
	int n;

	if (now < http_gate_head_deadline(g))
		return false;
	snprintf(why, sizeof(why), "request head not complete within %g s", g->gw->head_timeout);
	gate_malformed(g, why);
	r->status = 408;
	n = snprintf(r->body, sizeof(r->body), "boxy: request refused (%s)\n", why);
	r->body_len = n > 0 && (size_t)n < sizeof(r->body) ? (size_t)n : 0;
	return true;
}

/* ---- the plain-HTTP path ----------------------------------------------------------- */

size_t http_gate_plain_sendable(const struct flow *f)
{
	uint64_t ok = f->gate->allowed > f->up_bytes ? f->gate->allowed - f->up_bytes : 0;

	return ok < f->upq_len ? (size_t)ok : f->upq_len;
}

/* Queue bytes for the sandbox behind what is parked (f->down), to be written by tcp_service. */
static void down_append(struct flow *f, const char *p, size_t n)
{
	f->down = xrealloc(f->down, f->down_len + n);
	memcpy(f->down + f->down_len, p, n);
	f->down_len += n;
}

/* Queue the refusal for the sandbox once; the FIN follows it (f->down_eof is set). */
static void gate_answer(struct flow *f)
{
	struct http_gate *g = f->gate;
	char resp[HTTP_GATE_RESPONSE_MAX];
	size_t n;

	if (g->answered || g->state != HTTP_GATE_REFUSED)
		return;
	g->answered = true;
	n = http_gate_refusal_h1(&g->refusal, resp, sizeof(resp));
	if (n) {
		down_append(f, resp, n);
		g->queued = true;
	}
}

/* Close the upstream socket now: nothing more goes up, nothing more comes down. */
static void gate_close_upstream(struct gw *gw, struct flow *f)
{
	if (f->fd >= 0) {
		ev_io_stop(gw->loop, &f->rio);
		ev_io_stop(gw->loop, &f->wio);
		close(f->fd);
		f->fd = -1;
	}
	f->up_shut = true;
	f->down_eof = true;
}

/* The refusal after earlier requests, once the server's answers to them are through. */
static void gate_end_refused(struct gw *gw, struct flow *f)
{
	struct http_gate *g = f->gate;

	if (g->answered || g->state != HTTP_GATE_REFUSED)
		return;
	if (http_gate_answers(g) == HTTP_GATE_ANSWERED) {
		/* Every answer is whole: the 403 follows the last byte of the last, and
		 * nothing more of the server's is read. */
		gate_close_upstream(gw, f);
		gate_answer(f);
	} else if (f->down_eof) {
		/* The server closed after an answer that ends with its close, or one the
		 * client has not had whole: a 403 would be read as part of it. */
		g->answered = true;
	}
}

/* The flow's timer: the head being read, or the server's silence after a refusal. */
static void gate_arm(struct flow *f)
{
	struct http_gate *g = f->gate;
	ev_tstamp t = http_gate_head_deadline(g);

	if (g->ended && !g->answered && g->drain_deadline < t)
		t = g->drain_deadline;
	f->deadline = t;
}

/* http_gate_plain_service, without the timer. */
static void gate_plain_service(struct gw *gw, struct flow *f)
{
	struct http_gate *g = f->gate;

	/* Read what the sandbox queued and the gate has not seen. */
	while (g->state == HTTP_GATE_OPEN || g->state == HTTP_GATE_TUNNEL) {
		uint64_t off = g->fed - f->up_bytes, skip;
		size_t avail, n;

		if (off >= f->upq_len)
			break;
		avail = f->upq_len - (size_t)off;
		skip = http_gate_opaque(g);
		if (skip) {
			http_gate_skip(g, skip < avail ? skip : avail);
			continue;
		}
		n = stack_upq_copy(f, (size_t)off, gw->rbuf, avail < sizeof(gw->rbuf) ?
				   avail : sizeof(gw->rbuf));
		if (http_gate_feed(g, gw->rbuf, n) < n && g->state == HTTP_GATE_OPEN)
			break;
	}
	/* The sandbox half-closed with a head half sent: it can never be decided. */
	if (f->up_eof && g->fed - f->up_bytes >= f->upq_len)
		http_gate_client_eof(g);
	if (g->state == HTTP_GATE_RESET) {
		broker_log(gw, "an HTTP connection switched to a protocol boxy cannot read (not "
			   "a websocket): reset");
		f->reset = true;
		return;
	}
	if (g->state != HTTP_GATE_REFUSED && g->state != HTTP_GATE_DECLINED)
		return;
	/* What was allowed before the stop still goes up first (tcp_flush_up). */
	if (http_gate_plain_sendable(f) > 0)
		return;
	/* Nothing after it ever does: drop it, and give lwIP its window back. */
	if (f->upq_len) {
		size_t n = f->upq_len;

		stack_upq_consume(f, n);
		stack_tcp_recved(f, n);
	}
	if (g->ended)
		return;
	g->ended = true;
	if (g->state == HTTP_GATE_REFUSED && g->nreq == 1) {
		/* The connection's first request: nothing upstream waits for an answer. */
		gate_close_upstream(gw, f);
		gate_answer(f);
		return;
	}
	/* Earlier requests may still be answered: let the server finish (it reads the
	 * half-close as the end of the requests), then the refusal follows. */
	g->drain_deadline = ev_now(gw->loop) + GW_GATE_DRAIN;
	gate_end_refused(gw, f);
	if (f->fd >= 0 && !f->up_shut) {
		shutdown(f->fd, SHUT_WR);
		f->up_shut = true;
	}
}

void http_gate_plain_service(struct gw *gw, struct flow *f)
{
	gate_plain_service(gw, f);
	gate_arm(f);
}

size_t http_gate_plain_down(struct gw *gw, struct flow *f, const uint8_t *p, size_t n)
{
	struct http_gate *g = f->gate;
	bool switching = g->state == HTTP_GATE_SWITCHING;
	size_t k = http_gate_server(g, p, n);

	if (switching)
		flow_dirty(f);          /* the server's answer decides what the client may send */
	if (g->ended && !g->answered) {
		/* GW_GATE_DRAIN counts from the server's last byte. */
		g->drain_deadline = ev_now(gw->loop) + GW_GATE_DRAIN;
		gate_arm(f);
	}
	return k;
}

bool http_gate_plain_answer(struct gw *gw, struct flow *f)
{
	struct http_gate *g = f->gate;

	if (!g->ended || g->answered)
		return false;
	gate_end_refused(gw, f);
	if (!g->answered)
		return false;
	flow_dirty(f);
	return true;
}

bool http_gate_plain_eof(struct gw *gw, struct flow *f)
{
	struct http_gate *g = f->gate;

	if (g->state != HTTP_GATE_REFUSED)
		return false;
	g->ended = true;
	gate_end_refused(gw, f);
	/* The gate has the last word only when its 403 is queued before the FIN. */
	return g->queued;
}

void http_gate_plain_timeout(struct gw *gw, struct flow *f)
{
	struct http_gate *g = f->gate;

	if (http_gate_head_expire(g, ev_now(gw->loop))) {
		/* A slowloris head: refused (408) like any other, by the next service. */
		flow_dirty(f);
		gate_arm(f);
		return;
	}
	if (!g->ended || g->answered || ev_now(gw->loop) < g->drain_deadline) {
		gate_arm(f);
		return;
	}
	if (g->state == HTTP_GATE_DECLINED) {
		flow_kill(f, false);
		return;
	}
	/*
	 * The server fell silent in the middle of an answer, or after one that only
	 * its close would end (or the client stopped reading and the answer waits):
	 * a 403 now would be read as part of that answer. Reset instead, so the
	 * client sees that the answer is short; the refusal is recorded.
	 */
	g->answered = true;
	f->reset = true;
	flow_dirty(f);
}
