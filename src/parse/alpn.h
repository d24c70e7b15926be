/*
 * parse/alpn.h — which application protocol an inspected TLS connection may
 * speak (RFC 7301), from the list the sandbox's client offered and the one
 * the upstream server chose.
 *
 * boxy-net inspects HTTP/1.x and HTTP/2 and nothing else: every request must
 * pass the HTTP gate, so a protocol the gate cannot read must never be
 * selected. The sandbox's client speaks first (its ClientHello); boxy-net
 * then offers upstream only what it can inspect, in the client's order
 * (alpn_filter), and once the upstream has chosen, answers the client with
 * that same protocol (alpn_choose) — so the two sides always speak the same
 * protocol and boxy-net never translates between them. A client that offers
 * only protocols boxy cannot inspect (spdy/3, h2c, h3, acme-tls/1, imap…)
 * gets the no_application_protocol alert. Pure.
 */
#ifndef BOXY_PARSE_ALPN_H
#define BOXY_PARSE_ALPN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an inspected connection speaks. */
enum alpn_proto {
	ALPN_REFUSE = -1,   /* nothing both sides and the gate can speak: refuse the handshake */
	ALPN_HTTP1 = 1,     /* HTTP/1.1 or 1.0, by ALPN or without it */
	ALPN_H2 = 2,        /* HTTP/2 */
};

/* The largest filtered offer: "\x02h2\x08http/1.1\x08http/1.0". */
#define ALPN_OFFER_MAX 32

/*
 * Read the body of the client's ALPN extension (u16 list length, then
 * entries of u8 length + bytes; RFC 7301 §3.1: at least one entry, none
 * empty, nothing after the list) and write, in wire form, the protocols boxy
 * can inspect in the order the client listed them, each once, into offer
 * (ALPN_OFFER_MAX bytes). Returns the offer's length (0: the client offered
 * nothing boxy inspects), or -1 when the extension is malformed.
 */
int alpn_filter(const uint8_t *ext, size_t len, uint8_t offer[ALPN_OFFER_MAX]);

/*
 * What the connection speaks, once the upstream answered. client_alpn: the
 * client sent the extension at all; offer/offer_len: alpn_filter's result
 * (what went upstream); sel/sel_len: the upstream's choice (sel_len 0: none).
 * No ALPN from the client: HTTP/1 (upstream was offered nothing). The
 * upstream's choice must be in the offer. No choice from the upstream: it
 * speaks HTTP/1.1, so HTTP/1 if the client offered http/1.1 or http/1.0,
 * else ALPN_REFUSE (an h2-only client and an HTTP/1-only server).
 * name and name_len: what to answer the client with (NULL and 0: no ALPN).
 */
enum alpn_proto alpn_choose(bool client_alpn, const uint8_t *offer, size_t offer_len,
			    const uint8_t *sel, size_t sel_len, const uint8_t **name,
			    size_t *name_len);

#endif
