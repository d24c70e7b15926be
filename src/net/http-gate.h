/*
 * net/http-gate.h — boxy-net's HTTP gate: every request of a gated flow is
 * checked before a byte of it goes upstream, against the name and port the
 * flow was allowed for and against the run's HTTP rules
 * (policy/http-rules.h), and recorded (NET_HTTP_REQUEST, one per request).
 * A refused request gets a 403 naming the rule that would allow it, and the
 * connection ends; none of its bytes leave.
 *
 * THIS HEADER IS THE CONTRACT WITH THE TLS PATH. The plain-HTTP path (net/tcp.c)
 * and the TLS inspection path (requests decrypted from TLS, HTTP/1.1 or HTTP/2
 * streams) call the same gate. Keep it stable; change it only compatibly
 * (new fields at the end, new functions). Two ways in:
 *
 *   - a decoded request (an HTTP/2 stream, or a head parsed elsewhere):
 *     http_gate_check(g, &req) → HTTP_ALLOWED or the refusal's code, and
 *     http_gate_refusal() for the response to answer it with;
 *   - an HTTP/1.x byte stream from the client (plain TCP, or the plaintext
 *     of an inspected TLS connection): http_gate_feed() the bytes as they
 *     come, forward http_gate_allowed() of them, and act on
 *     http_gate_state(); http_gate_server() the server's bytes (a switching
 *     request is decided by its answer).
 *
 * The broker sets the gate on a flow with NETVF_GATE in NET_VERDICT (and
 * NETVF_TLS when the flow must be inspected first), and sends the rules at
 * the start in NET_HTTP_RULES (proto/netproto.h). The rules a gate uses
 * are boxy-net's copy, http_gate_rules(); nothing here asks the broker, so
 * a request is decided the moment its head is complete.
 */
#ifndef BOXY_NET_HTTP_GATE_H
#define BOXY_NET_HTTP_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/http-rules.h"

struct gw;
struct flow;
struct http_gate;

/* How the requests of a flow arrive (recorded with each request). */
enum http_gate_transport {
	HTTP_GATE_PLAIN = 0,    /* HTTP/1.x over TCP */
	HTTP_GATE_TLS = 1,      /* HTTP/1.x decrypted from TLS */
	HTTP_GATE_H2 = 2,       /* HTTP/2 streams decrypted from TLS */
};

/* boxy-net's copy of the run's rules (NET_HTTP_RULES); empty until they came. */
const struct http_rules *http_gate_rules(struct gw *gw);
/* Take the rules (NET_HTTP_RULES, at the start): the gateway owns them from now on. */
void http_gate_set_rules(struct gw *gw, struct http_rules *rs);

/*
 * A gate for flow f, allowed for bound_host (the Host or SNI the broker
 * checked; copied) on the port f was dialled on. Owned by the caller
 * (the flow), freed with http_gate_free.
 */
struct http_gate *http_gate_create(struct gw *gw, struct flow *f, const char *bound_host,
				   enum http_gate_transport t);
void http_gate_free(struct http_gate *g);

/* ---- a decoded request ------------------------------------------------------------- */

struct http_gate_req {
	const char *method;     /* the token as sent ("GET") */
	const char *host;       /* Host or :authority, lower-case, without the port; NULL: none */
	uint16_t port;          /* the port written after it; 0: none written */
	const char *path;       /* the target's path up to the `?` ("/v1/x"); "" for CONNECT */
	const char *query;      /* after the `?`, without it; NULL or "": none */
	bool upgrade;           /* switches protocols (Upgrade, CONNECT, h2's extended CONNECT) */
	bool has_body;          /* a body follows the head */
};

/*
 * Decide one request of the flow and record it (NET_HTTP_REQUEST, with the
 * session's next sequence number). HTTP_ALLOWED, or why it was refused;
 * then http_gate_refusal() says what to answer. An HTTP/1 gate that refused
 * once refuses everything after (the connection is to end); an HTTP/2 gate
 * (HTTP_GATE_H2) refuses only that stream and decides the next one afresh
 * (the broker accepts more records after a refusal only for HTTP/2).
 */
enum http_deny http_gate_check(struct http_gate *g, const struct http_gate_req *q);

/*
 * Record a request the caller's own reading refused before it could be
 * decided (an HTTP/2 target parse/h2req.c refuses: "//other/x", userinfo),
 * as malformed, with why (the reader's words): every request is recorded,
 * decided or not. HTTP_DENY_MALFORMED; an HTTP/2 gate goes on with the next
 * stream, like after any refusal.
 */
enum http_deny http_gate_malformed(struct http_gate *g, const char *why);

/* What to answer the last refused request with. */
#define HTTP_GATE_BODY_MAX 1024
struct http_gate_refusal {
	unsigned status;                /* 403, or 400 for a malformed request */
	char body[HTTP_GATE_BODY_MAX];  /* one line of text and a newline */
	size_t body_len;
};
void http_gate_refusal(const struct http_gate *g, struct http_gate_refusal *out);
/* The refusal as a whole HTTP/1.1 response (Connection: close) in out; its length. */
size_t http_gate_refusal_h1(const struct http_gate_refusal *r, char *out, size_t cap);
#define HTTP_GATE_RESPONSE_MAX (HTTP_GATE_BODY_MAX + 256)

/* ---- an HTTP/1.x byte stream ------------------------------------------------------- */

enum http_gate_state {
	HTTP_GATE_OPEN,         /* requests are being read and decided */
	HTTP_GATE_SWITCHING,    /* a switching request went up: nothing more until the
				 * server's answer (http_gate_server) */
	HTTP_GATE_TUNNEL,       /* the server switched (101 to a websocket, 2xx to CONNECT):
				 * every later byte passes, unread */
	HTTP_GATE_DECLINED,     /* the server declined the switch: let its answer through,
				 * send nothing more up, end the connection */
	HTTP_GATE_REFUSED,      /* a request was refused: forward what was allowed before
				 * it, then answer with http_gate_refusal and end */
	HTTP_GATE_RESET,        /* switched to a protocol boxy cannot read (h2c): reset */
};

/*
 * Take the client's next bytes (they continue the stream). Returns how many
 * were read; fewer than n only when the gate stopped reading (any state but
 * OPEN and TUNNEL), and the bytes not taken must never go upstream.
 */
size_t http_gate_feed(struct http_gate *g, const uint8_t *p, size_t n);
/* Bytes the gate would take without looking (a body's rest), to skip copying them. */
uint64_t http_gate_opaque(const struct http_gate *g);
void http_gate_skip(struct http_gate *g, uint64_t n);
/* Stream bytes, counted from the stream's first, that may go upstream now. */
uint64_t http_gate_allowed(const struct http_gate *g);
/* Stream bytes taken so far (the next feed starts there). */
uint64_t http_gate_fed(const struct http_gate *g);
enum http_gate_state http_gate_state(const struct http_gate *g);
/*
 * Bytes the server sent, in order: after a switching request its answer
 * decides; otherwise they are framed (parse/http-resp.h). Returns how many
 * of them go to the client: all, or, once a request was refused, only up to
 * the end of the last answer the refusal waits for (the rest is dropped).
 */
size_t http_gate_server(struct http_gate *g, const uint8_t *p, size_t n);
/* The client's stream ended (all of it fed): a head left incomplete is refused as malformed. */
void http_gate_client_eof(struct http_gate *g);

/* Where the server's answers to the allowed requests stand (a refusal waits for them). */
enum http_gate_answers {
	HTTP_GATE_ANSWERING,    /* some are still on their way */
	HTTP_GATE_ANSWERED,     /* every one is whole: a refusal may follow now */
	HTTP_GATE_UNFRAMED,     /* one ends only with the server's close (no length, not
				 * chunked), or could not be read: nothing may follow it */
};
enum http_gate_answers http_gate_answers(const struct http_gate *g);

/*
 * A request head must be complete within the gateway's head timeout of its
 * first byte (GW_HEAD_TIMEOUT). When the head being read must be complete
 * (an ev_tstamp), or HUGE_VAL when none is being read; at or past it,
 * http_gate_head_expire refuses the request (408 Request Timeout, recorded
 * as malformed with why) and returns true.
 */
double http_gate_head_deadline(const struct http_gate *g);
bool http_gate_head_expire(struct http_gate *g, double now);

/* ---- the plain-HTTP path's glue (net/tcp.c) -------------------------------------------- */

/* Read what the sandbox queued, decide, and act on a refusal or a switch. */
void http_gate_plain_service(struct gw *gw, struct flow *f);
/* Bytes at the front of f's queue the gate lets go upstream now. */
size_t http_gate_plain_sendable(const struct flow *f);
/* The server's n bytes at p were read: how many of them go to the sandbox. */
size_t http_gate_plain_down(struct gw *gw, struct flow *f, const uint8_t *p, size_t n);
/* ... and went: true when a refusal follows them now (read nothing more upstream). */
bool http_gate_plain_answer(struct gw *gw, struct flow *f);
/* The server closed: true when the gate has the last word (a refusal to append before the FIN). */
bool http_gate_plain_eof(struct gw *gw, struct flow *f);
/* The flow's deadline passed: a head too slow (408), or a server silent after a refusal. */
void http_gate_plain_timeout(struct gw *gw, struct flow *f);

#endif
