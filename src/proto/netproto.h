/*
 * proto/netproto.h — the messages between boxy-net (the hardened per-session
 * network stack) and the broker (in the daemon), over a SOCK_SEQPACKET
 * socketpair, one proto/msg.h frame per record (msg_read_packet: one system call
 * per message, which a short connection pays four times). Types 0x05xx.
 *
 * boxy-net only asks; the broker decides and dials. boxy-net never opens a
 * socket: a permitted flow arrives as a connected descriptor (SCM_RIGHTS)
 * on the verdict. Every field is validated by the receiver; a malformed
 * message from boxy-net is treated as a compromised boxy-net: the broker
 * records it and ends the session's network.
 *
 * Addresses are 1 byte family (4 or 6) + 16 bytes (IPv4 in the first 4, the
 * other twelve zero), written and read only by netproto_put_addr and
 * netproto_get_addr (proto/netproto.c), which refuses any other form.
 *
 * TCP, public mode:    FLOW_OPEN (at the SYN)       → VERDICT dialled+fd | refused
 * TCP, allowlist mode: FLOW_OPEN (at the SYN)       → VERDICT need_name | refused
 *                      (boxy-net completes the handshake, reads the first bytes)
 *                      FLOW_NAME (SNI / Host / none / malformed)
 *                                                   → VERDICT dialled+fd | refused
 *                      (with NETVF_GATE: every request of the flow is gated in
 *                      boxy-net, net/http-gate.h, and recorded: HTTP_REQUEST each)
 * UDP:                 FLOW_OPEN proto 17           → VERDICT dialled+fd (connected) | refused
 * Then:                FLOW_STATS about 3×/s, FLOW_CLOSE once.
 * At the end:          the broker shuts its sending half; boxy-net, at EOF, sends
 *                      FLOW_CLOSE with the final totals of every open flow, and exits.
 * DNS (port 53, any address, UDP and TCP): RESOLVE → ANSWER; boxy-net builds
 *                      the DNS response itself from the answer's fields.
 * Tripwires:           NET_CONFIG carries the session's decoy tokens; a flow
 *                      whose first bytes hold one is reset (TCP) or stopped
 *                      (UDP) before they are sent, and TRIPWIRE says so.
 */
#ifndef BOXY_NETPROTO_H
#define BOXY_NETPROTO_H

#include <stdbool.h>

#include "common/netaddr.h"
#include "parse/name.h"
#include "proto/wire.h"

/*
 * Bumped whenever a message's fields or meaning change: 5, the HTTP gate and
 * TLS inspection; 7, NET_RESOLVE with the query's socket (attribution),
 * NET_CONFIG with the decoy tokens and NET_TRIPWIRE, and NET_HTTP_REQUEST
 * numbered per boxy-net (one per queue of tap0). Two branches each called
 * their half 6; none of them shipped alone.
 */
#define NETPROTO_VERSION 7

enum netproto_type {
	NET_HELLO = 0x0501,     /* net→broker: u32 version */
	NET_CONFIG,             /* broker→net: struct net_config (netproto_config_encode); with
				 *             NETCFG_RULES, NET_HTTP_RULES comes next */
	NET_FLOW_OPEN,          /* net→broker: u32 flow, u8 proto (6|17), addr dst, u16 dport,
				 *             addr src, u16 sport */
	NET_VERDICT,            /* broker→net: u32 flow, u8 verdict (NETV_*), u8 flags (NETVF_*,
				 *             only with NETV_DIALLED); 1 descriptor with
				 *             NETV_DIALLED. The layer and the reason are the
				 *             broker's to word (events, audit log, net-log). */
	NET_FLOW_NAME,          /* net→broker: u32 flow, u8 kind (enum net_name_kind, never
				 *             PENDING), u8 ech, str name */
	NET_FLOW_STATS,         /* net→broker: u32 flow, u64 up, u64 down (totals so far) */
	NET_FLOW_CLOSE,         /* net→broker: u32 flow, u64 up, u64 down */
	NET_RESOLVE,            /* net→broker: u32 query, str name, u16 qtype, u8 proto (6|17),
				 *             addr src, u16 sport, addr dst, u16 dport — the
				 *             query's own socket, for its attribution */
	NET_ANSWER,             /* broker→net: u32 query, u8 rcode, u32 ttl, u32 n, n × addr */
	NET_LOG,                /* net→broker: str words (boxy-net's own health, for the daemon log) */
	NET_FLOW_SEEN,          /* net→broker, public mode only: u32 flow, u8 kind (NET_NAME_SNI
				 *             or NET_NAME_HOST), str name — what an open flow's
				 *             first bytes named; recorded, never a decision */
	NET_HTTP_RULES,         /* broker→net, right after NET_CONFIG when NETCFG_RULES:
				 *             u32 n (1..HTTP_RULES_MAX), n × str rule text (each
				 *             must parse: spec/http-rule.h) */
	NET_HTTP_REQUEST,       /* net→broker, one per request of a gated flow:
				 *             u32 flow, u32 seq (1, 2, … over this boxy-net;
				 *             the broker numbers them over the session),
				 *             u8 deny (enum http_deny, 0 allowed), u16 rule
				 *             (HTTP_RULE_NONE: none), u8 flags (HTTPREQ_*),
				 *             str method, str host, u16 port (0: none written),
				 *             str path (up to the `?`), str query (at most
				 *             NETPROTO_QUERY_MAX bytes), str why (HTTP_DENY_MALFORMED:
				 *             the parser's words; else empty) */
	NET_TLS_CA,             /* broker→net, with NETCFG_TLS, after NET_CONFIG (and
				 *             NET_HTTP_RULES): bytes certificate (DER), bytes key
				 *             (DER) — the session CA, read before the lockdown */
	NET_TLS_FAIL,           /* net→broker, once per inspected flow that failed: u32 flow,
				 *             u8 code (NETTLS_*), str detail (OpenSSL's or the
				 *             alert's words, at most NETPROTO_TLS_DETAIL_MAX printable
				 *             ASCII bytes; may be empty) */
	NET_TRIPWIRE,           /* net→broker: u32 flow, u8 token (its index in NET_CONFIG's
				 *             list), u8 encoding (enum tw_encoding) — a decoy token
				 *             in the flow's first bytes; they were not sent, the
				 *             flow is reset (at most one per flow) */
};

enum netproto_verdict {
	NETV_REFUSED = 0,       /* answer the payload with RST (TCP) or drop (UDP) */
	NETV_DIALLED = 1,       /* a connected socket is attached */
	NETV_NEED_NAME = 2,     /* complete the handshake, then send NET_FLOW_NAME */
};

#define NETCFG_PCAP      0x01   /* a pcap descriptor was given to boxy-net */
#define NETCFG_OBSERVE   0x02   /* public mode: report each TCP flow's SNI/Host (NET_FLOW_SEEN) */
#define NETCFG_RULES     0x04   /* NET_HTTP_RULES follows NET_CONFIG */
#define NETCFG_TLS       0x08   /* NET_TLS_CA follows (after NET_HTTP_RULES): inspection */
#define NETCFG_ALL       (NETCFG_PCAP | NETCFG_OBSERVE | NETCFG_RULES | NETCFG_TLS)

#define NETVF_GATE       0x01   /* gate every HTTP request of the flow (net/http-gate.h) */
#define NETVF_TLS        0x02   /* ... inside its TLS, which boxy-net terminates (inspection) */

#define HTTPREQ_TLS       0x01  /* the request came inside TLS */
#define HTTPREQ_H2        0x02  /* ... as an HTTP/2 stream */
#define HTTPREQ_QUERY_CUT 0x04  /* the query string was longer than NETPROTO_QUERY_MAX */
#define HTTPREQ_UPGRADE   0x08  /* it asked to switch protocols (Upgrade, CONNECT) */
#define HTTPREQ_BODY      0x10  /* a body followed its head */
#define HTTPREQ_FLAGS     0x1f
#define NETPROTO_QUERY_MAX 256
#define NETPROTO_WHY_MAX   80
#define NETPROTO_MAX_NAME 253
/* Bytes of a flow (each way it is read: the sandbox's) looked at for the decoy tokens, at most. */
#define NETPROTO_TRIPWIRE_SCAN (64u << 10)

/*
 * NET_CONFIG: u8 mode (enum net_mode; boxy-net serves public and allowlist), u8 flags (NETCFG_ALL),
 * u64 pcap size cap (0: none asked; boxy-net's default then), u8 n, n × str
 * decoy tokens (parse/tripwire.h's tw_token_ok, at most TW_TOKENS_MAX).
 */
struct net_config {
	uint8_t mode, flags;
	uint64_t pcap_max;
	char **tokens;          /* NULL-terminated, or NULL when none */
	size_t ntokens;
};

void netproto_config_encode(struct wbuf *w, const struct net_config *c);
/* Strict: any field out of range, a bad token, a byte too many is an error. */
int netproto_config_decode(const void *p, size_t len, struct net_config *c, char **err);
void netproto_config_free(struct net_config *c);

/* Why an inspected flow failed (NET_TLS_FAIL); the broker words them. */
enum net_tls_fail {
	NETTLS_UPSTREAM_CERT = 1,       /* the upstream's certificate did not verify (detail: why) */
	NETTLS_UPSTREAM,                /* the upstream's handshake failed otherwise */
	NETTLS_CLIENT_ALERT,            /* the sandbox's client refused the session's certificate
					 * (detail: its alert): it pins, or trusts its own bundle */
	NETTLS_CLIENT,                  /* the sandbox's handshake failed otherwise */
	NETTLS_NO_PROTOCOL,             /* no application protocol both sides and the gate speak */
	NETTLS_NAME,                    /* the ClientHello TLS read names another server than
					 * the one the broker allowed */
	NETTLS_BUSY,                    /* too many inspected flows at once */
	NETTLS_CLIENT_QUIET,            /* the client ended right after the handshake, before any
					 * request (pinning does this; detail: its alert, if any) */
	NETTLS_CODE_MAX = NETTLS_CLIENT_QUIET,
};
#define NETPROTO_TLS_DETAIL_MAX 200

/* The address field, both ways; get is strict (false: malformed, the peer is lying). */
void netproto_put_addr(struct wbuf *w, const struct net_addr *a);
bool netproto_get_addr(struct rbuf *r, struct net_addr *a);

#endif
