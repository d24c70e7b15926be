/*
 * net/tls.h — TLS inspection inside boxy-net, private to src/net/: the
 * terminator (net/tls.c: the sandbox's TLS ended with a certificate the
 * session CA mints, the upstream's TLS spoken and verified, HTTP/1.x
 * through the gate) and the HTTP/2 proxy between the two (net/h2.c).
 * doc/http-inspection.md tells the whole story; the gate is net/http-gate.h.
 *
 * One inspected flow, from the broker's verdict (NETV_DIALLED with
 * NETVF_GATE | NETVF_TLS) to its end:
 *
 *   HELLO     the ClientHello is still in the flow's queue (the naming read
 *             it, nothing consumed it). The sandbox side's SSL reads it from
 *             the queue; OpenSSL's ClientHello callback checks its server
 *             name is the one the broker allowed, reads its ALPN list, starts
 *             the upstream handshake, and suspends the sandbox's handshake.
 *   UPSTREAM  the upstream handshake: SNI the name, ALPN what the client
 *             offered and the gate can read, the server verified against the
 *             host's trust store and the name. A failure resumes the sandbox's
 *             handshake only to send it an alert, and is recorded (NET_TLS_FAIL).
 *   CLIENT    the sandbox's handshake resumes with the upstream's protocol as
 *             its ALPN answer; a client that refuses the certificate (it pins,
 *             or trusts its own bundle) sends an alert, which is recorded.
 *   OPEN      HTTP/1.x: the sandbox's plaintext through the gate (http_gate_feed),
 *             what it allows up, everything from upstream down. HTTP/2: two
 *             nghttp2 sessions, each request's headers through the gate
 *             (http_gate_check).
 *
 * Bytes are moved without copies beyond what TLS needs: the sandbox side's
 * BIO reads straight from lwIP's pbufs and writes straight into lwIP's send
 * queue; the upstream's BIO is the socket. Backpressure is tcp.c's: the
 * sandbox's ciphertext stays in lwIP's window until a record's plaintext has
 * room to go, and upstream is read only while lwIP can take what it decrypts.
 */
#ifndef BOXY_NET_TLS_H
#define BOXY_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "net/flow.h"
#include "parse/alpn.h"
#include "parse/dns.h"

#define TLS_PLAIN_MAX   (32 * 1024)     /* decrypted bytes held per direction and flow */
#define TLS_RECORD_MAX  16384           /* one record's plaintext */
#define TLS_MAX_FLOWS   1024            /* inspected flows at once; beyond, new ones are reset */
#define TLS_MINT_CACHE  256             /* leaf certificates kept, by name */
#define TLS_DETAIL_MAX  200             /* the words of a failure, as sent (NET_TLS_FAIL) */
#define TLS_DRAIN       5.0             /* seconds a server has to answer before a refusal */
#define TLS_LINGER      5.0             /* seconds a closed flow waits for the client's close */

enum tls_state {
	TLS_HELLO,          /* the ClientHello is queued; nothing started */
	TLS_UPSTREAM,       /* the upstream handshake runs; the sandbox's waits in its callback */
	TLS_CLIENT,         /* the sandbox's handshake runs */
	TLS_OPEN,           /* both up: HTTP flows through the gate */
	TLS_FAILING,        /* a failure is being told to the sandbox (an alert, a close) */
};

/* A byte buffer of one direction: data at p + off, len bytes of it. */
struct tls_buf {
	uint8_t *p;
	size_t off, len, cap;
};

struct h2_proxy;

struct tls_flow {
	struct flow *f;
	enum tls_state state;
	SSL *down;                      /* the sandbox's side: boxy-net is the server */
	SSL *up;                        /* the upstream's side: boxy-net is the client */
	char name[DNS_NAME_BUF];        /* the server name the broker allowed */
	uint8_t offer[ALPN_OFFER_MAX];  /* what went upstream in ALPN */
	size_t offer_len;
	bool client_alpn;               /* the client sent ALPN at all */
	const uint8_t *answer;          /* the ALPN answer to the client (static), or NULL */
	size_t answer_len;
	enum alpn_proto proto;
	uint8_t fail_code;              /* NETTLS_*: why the flow is failing */
	int fail_alert;                 /* the alert the sandbox gets (SSL_AD_*), 0: a close */
	int client_alert;               /* the alert the sandbox sent us, -1: none */
	bool wrote_down;                /* bytes went into lwIP this pass: tcp_output */
	bool down_eof, up_eof;          /* the sandbox / the upstream sent all it will */
	bool sock_eof;                  /* the upstream socket read its FIN */
	bool down_notify, up_notify;    /* ... and that side's end came with close_notify */
	bool up_heard;                  /* the upstream sent plaintext (its handshake is behind it) */
	bool down_closed, up_closed;    /* our close_notify (and FIN) went to the sandbox / upstream */
	/* HTTP/1 */
	struct http_gate *gate;
	struct tls_buf upb;             /* the sandbox's plaintext, not yet upstream */
	uint64_t up_fed, up_sent;       /* stream offsets: fed to the gate, written upstream */
	struct tls_buf downb;           /* plaintext for the sandbox SSL_write has not taken */
	bool lingering;                 /* both closed: waiting for the client to close too */
	bool refusing;                  /* the gate refused: the 403 is queued after what is due */
	bool refusal_queued;
	bool cut;                       /* ... or it cannot follow the answers: cut, no 403 */
	ev_tstamp drain_deadline;       /* TLS_DRAIN after the server's last byte */
	/* HTTP/2 */
	struct h2_proxy *h2;
};

/* ---- net/tls.c -------------------------------------------------------------------- */

struct tls_engine;

/*
 * Before the lockdown: OpenSSL's configuration and RNG, the session CA
 * (DER certificate and key, from NET_TLS_CA), one leaf key, the sandbox
 * side's context and the upstream side's with the host's trust store
 * (SSL_CERT_FILE and SSL_CERT_DIR of boxy-net's environment, or OpenSSL's
 * default paths, read whole now: no file can be opened later), and one
 * handshake in memory so that everything OpenSSL sets up lazily is set up.
 * NULL with *err. *note, when set (malloc'd), is said in the daemon's log.
 */
struct tls_engine *tls_engine_create(const uint8_t *ca, size_t ca_len, const uint8_t *key,
				     size_t key_len, char **note, char **err);
void tls_engine_free(struct tls_engine *e);
/*
 * The handshake in memory tls_engine_create runs: a leaf minted, a TLS 1.3
 * handshake between the two contexts, bytes both ways, a chain verified.
 * 0, or -1 with *err. (The lockdown's test runs it after the lockdown.)
 */
int tls_engine_selftest(struct tls_engine *e, char **err);
/*
 * The leaf for name: minted at its first use with the session's one leaf key
 * and kept (TLS_MINT_CACHE names, the oldest replaced), so every later
 * connection to the name costs no signature. Borrowed (an SSL using it takes
 * its own reference); NULL with *err for a name no certificate may carry.
 */
X509 *tls_engine_leaf(struct tls_engine *e, const char *name, char **err);

/* Inspect f: its upstream socket is attached and its ClientHello queued. */
void tls_flow_start(struct gw *gw, struct flow *f);
/* The flow's work: handshakes, bytes both ways, closes (from tcp_service). */
void tls_service(struct gw *gw, struct flow *f);
/* The upstream socket is readable (or writable, while a write was blocked). */
void tls_upstream_ready(struct gw *gw, struct flow *f);
/* The flow is being reset (the client's RST, say): read what it left (an alert), record why. */
void tls_flow_reset(struct gw *gw, struct flow *f);
/* Free the flow's TLS state (flow_kill). */
void tls_flow_free(struct flow *f);

/* Reading and writing one side, for net/h2.c: bytes (> 0), or one of these. */
#define TLS_IO_AGAIN  (-1)      /* nothing now: the side's watcher or lwIP will call back */
#define TLS_IO_EOF    (-2)      /* the peer closed (close_notify, or its FIN) */
#define TLS_IO_ERROR  (-3)      /* broken: reset the flow */
ssize_t tls_read_side(struct tls_flow *t, SSL *s, void *buf, size_t n);
ssize_t tls_write_side(struct tls_flow *t, SSL *s, const void *buf, size_t n);
/* Room lwIP has for the sandbox now, less what TLS adds to a record. */
size_t tls_down_room(const struct tls_flow *t);
/* The client ended right after the handshake, before any request: recorded (pinning?). */
void tls_client_quiet(struct tls_flow *t);

/* ---- net/h2.c ----------------------------------------------------------------------- */

/* An HTTP/2 proxy for t (both handshakes done, h2 on both sides); NULL with *err. */
struct h2_proxy *h2_proxy_create(struct gw *gw, struct tls_flow *t, char **err);
void h2_proxy_free(struct h2_proxy *h);
/*
 * Move frames both ways as far as each side lets them. Returns 1 when
 * something moved, 0 when nothing could, -1 when the flow must be reset;
 * sets t->down_eof/up_eof when a side is done, and asks for the end when
 * both sessions are over (h2_proxy_done).
 */
int h2_pump(struct gw *gw, struct tls_flow *t);
bool h2_proxy_done(const struct h2_proxy *h);

#endif
