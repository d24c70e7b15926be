/*
 * net/gw.h — boxy-net's gateway: the sandbox's side of the network, run
 * inside the hardened boxy-net process on top of Debian's lwIP.
 *
 * The sandbox sees one Ethernet link (tap0) with one router on it. Every
 * frame it sends is read here, filtered, and handed to lwIP, which
 * terminates its TCP connections and UDP flows whatever address they were
 * aimed at. Each new flow is put to the broker (proto/netproto.h) before the
 * handshake completes; a permitted flow arrives as a connected socket and
 * is spliced to the lwIP connection in both directions with backpressure.
 * Port 53 is answered here from the broker's NET_ANSWER, never forwarded.
 * doc/internals-net.md follows one packet through all of this.
 *
 * Addresses, fixed for every session (stage 1 configures the same):
 *   sandbox 10.0.2.15/24 and fd00:b0c5::15/64, gateway 10.0.2.2 and
 *   fd00:b0c5::2, gateway MAC 02:b0:c5:00:00:02. The gateway answers ARP
 *   and neighbour solicitations for every on-link address but the sandbox's.
 *
 * Only net/lwip.c includes lwIP's headers; net/flow.h lists the parts.
 */
#ifndef BOXY_NET_GW_H
#define BOXY_NET_GW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/dns.h"
#include "net/pcap.h"
#include "parse/name.h"

#define GW_SANDBOX_V4   "10.0.2.15"
#define GW_GATEWAY_V4   "10.0.2.2"
#define GW_PREFIX_V4    24
#define GW_SANDBOX_V6   "fd00:b0c5::15"
#define GW_GATEWAY_V6   "fd00:b0c5::2"
#define GW_PREFIX_V6    64
#define GW_MAC          { 0x02, 0xb0, 0xc5, 0x00, 0x00, 0x02 }
/*
 * tap0's MTU, and the gateway's. A virtual link has no wire to fragment
 * for: large frames let the sandbox's kernel send 64 KiB segments (the
 * MSS option in lwIP's SYN-ACK is raised to match, see gw_raise_synack_mss)
 * and let lwIP send the same back, so a TAP read or write moves 40 times the
 * bytes of a 1500-byte frame. Must equal SANDBOX_NET_MTU.
 */
#define GW_MTU          65520
/* The largest TCP payload one frame carries, per family. */
#define GW_MSS_V4       (GW_MTU - 40)
#define GW_MSS_V6       (GW_MTU - 60)

#define GW_ETH_HLEN     14
#define GW_ETH_ARP      0x0806
#define GW_ETH_IPV4     0x0800
#define GW_ETH_IPV6     0x86dd

/* What the ingress filter decided about one frame from the sandbox. */
enum gw_verdict {
	GW_PASS = 0,                /* a TCP/UDP (or echo-to-gateway) packet for lwIP */
	GW_ARP_REQUEST,             /* an ARP request the gateway answers */
	GW_NEIGHBOUR_SOLICIT,       /* an IPv6 neighbour solicitation it answers */
	GW_DROP_SHORT,              /* shorter than its headers say */
	GW_DROP_ETHERTYPE,          /* not ARP, IPv4 or IPv6 (VLAN tags included) */
	GW_DROP_MALFORMED,          /* a header field out of range */
	GW_DROP_FRAGMENT,           /* IPv4 fragment, or an IPv6 extension header */
	GW_DROP_SPOOFED,            /* source is not the sandbox's address */
	GW_DROP_DST_UNSPECIFIED,    /* 0.0.0.0/8, :: */
	GW_DROP_DST_LOOPBACK,       /* 127.0.0.0/8, ::1 */
	GW_DROP_DST_MULTICAST,      /* 224.0.0.0/4, ff00::/8 */
	GW_DROP_DST_BROADCAST,      /* 255.255.255.255, the subnet's .0 and .255 */
	GW_DROP_DST_LINK_LOCAL,     /* fe80::/10 (nothing there but the two ends) */
	GW_DROP_DST_MAPPED,         /* ::ffff:0:0/96: never on a wire, and lwIP drops it */
	GW_DROP_SELF,               /* destination == source */
	GW_DROP_PROTOCOL,           /* not TCP, UDP or ICMP */
	GW_DROP_ICMP,               /* ICMP other than an echo request to the gateway */
	GW_DROP_ARP,                /* ARP that needs no answer (reply, probe, for the sandbox) */
	GW_DROP_VNET,               /* a virtio-net header boxy-net does not take, or that lies */
	GW_VERDICT_COUNT
};

/* One frame as the filter parsed it (pointers into the frame). */
struct gw_packet {
	int family;                 /* 4 or 6; for ARP 4 */
	uint8_t proto;              /* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6 */
	const uint8_t *ip;          /* the IP packet, trimmed to its stated length */
	size_t ip_len;
	size_t l4_off;              /* offset of the TCP/UDP/ICMP header in ip */
	uint8_t src[16], dst[16];   /* IPv4 in the first 4 bytes; ARP: sender, target */
	uint8_t src_mac[6];
	uint16_t sport, dport;      /* TCP and UDP */
	uint8_t tcp_flags;
	uint32_t tcp_seq;
	size_t tcp_payload;         /* TCP bytes after the header (a SYN may carry some) */
	bool csum_partial;          /* vnet: the TCP/UDP checksum holds only the pseudo-header sum */
};

#define GW_TCP_FIN 0x01
#define GW_TCP_SYN 0x02
#define GW_TCP_RST 0x04
#define GW_TCP_ACK 0x10

/*
 * The ingress filter: a pure function of the frame. Everything lwIP would
 * act on that the sandbox could abuse is refused here (NETWORK-NOTES.md:
 * one src == dst SYN aborted lwIP). Fills *pkt for GW_PASS and the two
 * answerable requests.
 */
enum gw_verdict gw_filter_frame(const uint8_t *frame, size_t len, struct gw_packet *pkt);

/*
 * The TAP carries a virtio-net header (struct virtio_net_hdr, GW_VNET_HLEN
 * bytes, little-endian) before every frame. gw_filter_vnet parses it
 * strictly, then the frame behind it with gw_filter_frame: flags only
 * NEEDS_CSUM or DATA_VALID; gso_type only none, TCPv4 or TCPv6 (ECN bit
 * allowed) and then only on a TCP packet of that family, gso_size > 0 (the
 * segment is taken whole: lwIP's window, not an MTU, bounds it); hdr_len
 * within the frame; NEEDS_CSUM only on TCP or UDP with csum_start at the
 * transport header and csum_offset at its checksum field. Anything else is
 * GW_DROP_VNET; a frame gw_filter_frame refuses keeps that verdict.
 */
#define GW_VNET_HLEN    10
/* struct virtio_net_hdr's values (linux/virtio_net.h), spelled here so no part needs a kernel header. */
#define VNET_F_NEEDS_CSUM   1
#define VNET_F_DATA_VALID   2
#define VNET_GSO_NONE       0
#define VNET_GSO_TCPV4      1
#define VNET_GSO_TCPV6      4
#define VNET_GSO_ECN        0x80

enum gw_verdict gw_filter_vnet(const uint8_t *buf, size_t len, struct gw_packet *pkt);
/* Words for a verdict ("destination is loopback"). */
const char *gw_verdict_words(enum gw_verdict v);

/*
 * Build the RST|ACK that refuses a held SYN, as a whole Ethernet frame
 * (gateway → sandbox, from the address and port the SYN was aimed at).
 * Returns the length, or 0 if cap is too small. Pure.
 */
size_t gw_build_rst(const struct gw_packet *syn, const uint8_t sandbox_mac[6],
		    uint8_t *out, size_t cap);

/*
 * Allowlist mode: what the first n bytes a sandboxed client sent on a held
 * TCP flow name, as the kind for NET_FLOW_NAME, or -1 to wait for
 * more. give_up says the gateway will not wait (name timeout, client EOF,
 * peek buffer full). Fills name (DNS_NAME_BUF bytes, "" when none) and *ech.
 * Nothing a payload can arrange comes out as NONE, which policy allows on
 * address and port alone, unless it really has no name on the wire:
 *   - TLS or HTTP the parser refused → MALFORMED (two Host headers, say);
 *   - TLS without server_name → SNI with "" (refused as no-SNI), ECH flagged
 *     (refused as ECH whatever the name);
 *   - a ClientHello or request head still incomplete at give_up → MALFORMED
 *     (else: half a ClientHello, a pause past the timeout, the rest with any
 *     SNI);
 *   - NONE only for bytes that are neither TLS nor HTTP, or zero bytes at
 *     give_up (ssh and other protocols where the server speaks first).
 * Pure.
 */
int gw_name_classify(const uint8_t *p, size_t n, bool give_up, char name[DNS_NAME_BUF],
		     bool *ech);

/*
 * Classify the first len bytes a sandboxed TCP client sent (gw_name_classify's
 * reading): NET_NAME_PENDING while the ClientHello or request head is
 * incomplete (*need, if not NULL, is then the stream length to wait for, or
 * 0 when unknown), NET_NAME_SNI / NET_NAME_HOST with the name copied into
 * name (DNS_NAME_BUF bytes; "" when absent; an HTTP Host may be an IP
 * literal, which no binding will match) and *ech set, NET_NAME_MALFORMED, or
 * NET_NAME_NONE for bytes that are neither TLS nor HTTP. Pure; calls
 * sni_parse then http_parse.
 */
enum net_name_kind net_flow_read_name(const uint8_t *p, size_t len, char *name, bool *ech,
				      size_t *need);

/*
 * The MSS option of a TCP header (tcp: len bytes from the TCP header on),
 * or 0 when it has none or the header is malformed. Pure.
 */
uint16_t gw_tcp_mss_option(const uint8_t *tcp, size_t len);

/*
 * lwIP advertises its compiled-in TCP_MSS (1460) in every SYN-ACK. For a
 * SYN-ACK frame going to the sandbox, raise that option to the link's
 * MSS (GW_MSS_V4/V6) and fix the checksum; any other frame is left alone.
 * Returns true when the frame was changed. Pure.
 */
bool gw_raise_synack_mss(uint8_t *frame, size_t len);

/*
 * An IPv4 or IPv6 TCP packet of len bytes (its length field must say so; only
 * its headers are read, and they must lie at ip) made CHECKSUM_PARTIAL, the
 * form a virtio-net header with NEEDS_CSUM promises:
 * the TCP checksum field holds the pseudo-header's sum, folded, not
 * complemented, so that whoever completes it sums the segment from the TCP
 * header on (field included) and stores the complement. Returns the TCP
 * header's offset in ip (csum_start less the Ethernet header), or 0 when ip
 * is not such a packet (then nothing is written). Pure.
 */
size_t gw_tcp_checksum_partial(uint8_t *ip, size_t len);

/* Internet checksum of a buffer, folded, with a starting sum (pure). */
uint16_t gw_checksum(const void *p, size_t len, uint32_t sum);

/* The gateway's own addresses (GW_GATEWAY_V4, GW_GATEWAY_V6) as bytes. */
extern const uint8_t gw_gateway4[4];
extern const uint8_t gw_gateway6[16];
/* The Ethernet header of a frame from the gateway to dst_mac (pure). */
void gw_eth_header(uint8_t *out, const uint8_t dst_mac[6], uint16_t type);
/* The ARP reply to a request, and the neighbour advertisement answering a
 * solicitation, as whole frames at out (GW_ETH_HLEN + 72 bytes will do);
 * return the length. Pure. */
size_t gw_build_arp_reply(const struct gw_packet *req, uint8_t *out);
size_t gw_build_neighbour_advert(const struct gw_packet *ns, uint8_t *out);

struct gw;
struct ev_loop;

/*
 * Set up lwIP (lwip_init, the netif) and the gateway for the broker socket
 * and the TAP descriptor (both owned by the gateway from now on), writing
 * a capture to pcap when it is not NULL. Nothing is read yet: call
 * gw_start after the process has locked itself down.
 */
struct gw *gw_create(struct ev_loop *loop, int broker_fd, int tap_fd, struct net_pcap *pcap);
/* Public mode: report what each open TCP flow's first bytes name (NET_FLOW_SEEN). */
void gw_set_observe(struct gw *gw, bool on);
/* TLS inspection (NETCFG_TLS): the engine net/tls.c made before the lockdown; the gateway owns it. */
struct tls_engine;
void gw_set_tls(struct gw *gw, struct tls_engine *e);
/*
 * The session's decoy tokens (parse/tripwire.h): the first NETPROTO_TRIPWIRE_SCAN
 * bytes the sandbox sends on each flow are scanned before they go; one that
 * holds a token is reset (TCP) or stopped (UDP), and NET_TRIPWIRE tells the
 * broker. None: nothing scanned. 0, or -1 with *err (a token the matcher refuses).
 */
int gw_set_tripwires(struct gw *gw, char *const *tokens, size_t n, char **err);
/* Start reading the TAP device and the broker. */
void gw_start(struct gw *gw);
/* For the fuzz target and tests: one TAP read (vnet header, then the frame)
 * as if read from the TAP device, and the work the loop does before it
 * sleeps (timers, dirty flows). */
void gw_frame_input(struct gw *gw, const uint8_t *buf, size_t len);
void gw_housekeeping(struct gw *gw);
/* The process's exit status once the loop returned (0: the broker closed). */
int gw_exit_status(const struct gw *gw);

/*
 * Lock boxy-net down for good (net/lockdown.c): not dumpable, no new
 * privileges, Landlock handling every filesystem (and network) right with
 * no rule, and a seccomp allowlist without socket(), connect(), open() or
 * execve(). Call after every descriptor is in place and before the first
 * frame is read. Returns 0 (with *note set, malloc'd, when Landlock is
 * unavailable and only seccomp confines), or -1 with *err set.
 */
int net_lockdown(char **note, char **err);

#endif
