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

#define NETPROTO_VERSION 6

enum netproto_type {
	NET_HELLO = 0x0501,     /* net→broker: u32 version */
	NET_CONFIG,             /* broker→net: struct net_config (netproto_config_encode) */
	NET_FLOW_OPEN,          /* net→broker: u32 flow, u8 proto (6|17), addr dst, u16 dport,
				 *             addr src, u16 sport */
	NET_VERDICT,            /* broker→net: u32 flow, u8 verdict (NETV_*); 1 descriptor with
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
#define NETCFG_ALL       (NETCFG_PCAP | NETCFG_OBSERVE)
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

/* The address field, both ways; get is strict (false: malformed, the peer is lying). */
void netproto_put_addr(struct wbuf *w, const struct net_addr *a);
bool netproto_get_addr(struct rbuf *r, struct net_addr *a);

#endif
