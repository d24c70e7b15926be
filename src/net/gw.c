/*
 * net/gw.c — boxy-net's gateway: lwIP over the TAP device, driven from one
 * libev loop, with every flow put to the broker (see net/gw.h and
 * doc/internals-net.md).
 *
 * The shape of it:
 *   - a TAP frame is captured (pcap), filtered (gw_filter_frame), then ARP
 *     and neighbour solicitations are answered here and IP goes to lwIP;
 *   - lwIP only accepts packets for its own address, so before each packet
 *     the netif's address is overwritten with the packet's destination and
 *     restored after (the "address swap"); one listening pcb per port, of
 *     IP_ANY_TYPE, then serves every address, and replies carry the address
 *     the payload dialled as their source with no rewriting;
 *   - a SYN that opens a new connection is held, not fed, until the broker
 *     answers FLOW_OPEN: refused → we answer it with a RST ourselves and
 *     lwIP never sees it; dialled or need_name → it is fed to lwIP;
 *   - lwIP callbacks only record what happened and mark the flow dirty; the
 *     work (writes upstream, window updates, closes) happens in gw_service
 *     from an ev_prepare watcher, once per loop iteration, outside lwIP's
 *     call stack. That batches upstream writes per batch of TAP frames and
 *     keeps every tcp_close/tcp_abort away from lwIP's own callbacks.
 *
 * lwIP runs single-threaded: lwip_init() and never tcpip_init(), timers via
 * sys_check_timeouts() (NETWORK-NOTES.md). A flow's life is separate from
 * its pcb's: lwIP may free the pcb (tcp_err) while bytes the sandbox sent
 * are still waiting for the upstream socket to take them.
 */
#include <config.h>

#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>

/* lwIP's arch.h typedefs ssize_t as int unless SSIZE_MAX is defined. */
#include <limits.h>
#ifndef SSIZE_MAX
#define SSIZE_MAX PTRDIFF_MAX
#endif

#include "lwip/inet_chksum.h"
#include "lwip/init.h"
#include "lwip/ip.h"
#include "lwip/ip4.h"
#include "lwip/ip6.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/timeouts.h"
#include "lwip/udp.h"

#include "proto/msg.h"
#include "policy/addr.h"
#include "parse/dns.h"
#include "net/gw.h"
#include "parse/http.h"
#include "policy/decide.h"
#include "parse/sni.h"
#include "proto/netproto.h"
#include "common/bytes.h"
#include "common/util.h"
#include "proto/wire.h"

/* ---- addresses --------------------------------------------------------------- */

static const uint8_t sandbox4[4] = { 10, 0, 2, 15 };
static const uint8_t gateway4[4] = { 10, 0, 2, 2 };
static const uint8_t sandbox6[16] = { 0xfd, 0x00, 0xb0, 0xc5, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 0x15 };
static const uint8_t gateway6[16] = { 0xfd, 0x00, 0xb0, 0xc5, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 0x02 };
/* What the IPv6 swap slot holds between packets: an address nobody uses. */
static const uint8_t idle6[16] = { 0xfd, 0x00, 0xb0, 0xc5, 0, 0, 0, 0,
				   0, 0, 0, 0, 0, 0, 0xff, 0xff };
static const uint8_t gw_mac[6] = GW_MAC;

/* ---- limits ------------------------------------------------------------------ */

#define GW_MAX_FLOWS        8192    /* concurrent flows; beyond, new SYNs get a RST */
#define GW_MAX_HELD         1024    /* flows waiting for the broker */
#define GW_FD_RESERVE       32      /* descriptors that are not flows' (0-5, epoll, libev) */
#define GW_MAX_QUERIES      256     /* DNS queries waiting for NET_ANSWER */
#define GW_UDP_QUEUE        16      /* datagrams held while the broker decides */
#define GW_TAP_BATCH        64      /* frames read per wake-up */
#define GW_SERVICE_EVERY    16      /* frames between two services of the dirty flows, */
#define GW_SERVICE_BYTES    65536   /* ... or bytes */
#define GW_FRAME_MAX        65536
/* A TAP read: the vnet header, Ethernet, and an IP packet of at most 64 KiB (a TSO segment). */
#define GW_TAP_READ         (GW_VNET_HLEN + GW_ETH_HLEN + 40 + 65535)
#define GW_HASH             4096
#define GW_NAME_PEEK        (SNI_HELLO_MAX + 1024)   /* room for the records around it */
#define GW_DNS_TCP_MAX      4096    /* a DNS query over TCP longer than this is refused */
#define GW_DNS_TCP_PENDING  16
#define GW_STATS_PERIOD     (1.0 / 3)
#define GW_HELD_TIMEOUT     30.0    /* the broker did not answer */
#define GW_ADMIT_TIMEOUT    30.0    /* the handshake did not complete */
#define GW_NAME_TIMEOUT     5.0     /* stop waiting for a name: NONE if no byte, else MALFORMED */
#define GW_UDP_IDLE         60.0
#define GW_UDP_REFUSED_KEEP 10.0    /* remember a refusal so the broker is not asked per datagram */
#define GW_DNS_TIMEOUT      10.0
/*
 * lwIP's send buffer is compiled in at 64 KiB (TCP_SND_BUF), which makes a
 * download stop and wait once per 64 KiB frame. A pcb's snd_buf starts at
 * GW_SND_BUF instead (lwIP only ever adds acked bytes back to it), so
 * several segments are in flight to the sandbox; bench/net.sh measured
 * 2.1-2.9 Gbit/s become 3.7-4.9. The same trick the other way (returning
 * the receive window before upstream took the bytes) measured slower: the
 * sandbox's sender then competes for the two cores with the upstream path.
 */
#define GW_SND_BUF          (256 * 1024)
/*
 * ... and over all flows, bytes lwIP holds for the sandbox (written, not
 * yet acked) stay under GW_DOWN_BUDGET: past it no upstream socket is
 * read. Without it, a payload that opens thousands of connections to a
 * fast server and reads none of them would have boxy-net hold
 * GW_SND_BUF for each. (The other way is bounded by lwIP's 64 KiB
 * receive window per flow, returned only as upstream takes the bytes.)
 */
#define GW_DOWN_BUDGET      (32u << 20)

/* ---- pure parts: checksums, the filter, the frames we build ------------------ */

/* Add a buffer to a ones'-complement sum as big-endian 16-bit words. */
static uint32_t csum_add(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;

	while (len > 1) {
		sum += (uint32_t)(p[0] << 8 | p[1]);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)(p[0] << 8);
	return sum;
}

/* The ones'-complement checksum of IP, TCP, UDP and ICMP. */
uint16_t gw_checksum(const void *p, size_t len, uint32_t sum)
{
	sum = csum_add(p, len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* True when n bytes are all zero. */
static bool is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static const char *const verdict_words[GW_VERDICT_COUNT] = {
	[GW_PASS] = "passed to the stack",
	[GW_ARP_REQUEST] = "ARP request answered",
	[GW_NEIGHBOUR_SOLICIT] = "neighbour solicitation answered",
	[GW_DROP_SHORT] = "shorter than its headers",
	[GW_DROP_ETHERTYPE] = "not ARP, IPv4 or IPv6",
	[GW_DROP_MALFORMED] = "malformed header",
	[GW_DROP_FRAGMENT] = "fragment or IPv6 extension header",
	[GW_DROP_SPOOFED] = "source is not the sandbox's address",
	[GW_DROP_DST_UNSPECIFIED] = "destination is unspecified",
	[GW_DROP_DST_LOOPBACK] = "destination is loopback",
	[GW_DROP_DST_MULTICAST] = "destination is multicast",
	[GW_DROP_DST_BROADCAST] = "destination is broadcast",
	[GW_DROP_DST_LINK_LOCAL] = "destination is link-local",
	[GW_DROP_DST_MAPPED] = "destination is IPv4-mapped",
	[GW_DROP_SELF] = "destination equals source",
	[GW_DROP_PROTOCOL] = "not TCP, UDP or ICMP",
	[GW_DROP_ICMP] = "ICMP other than an echo request to the gateway",
	[GW_DROP_ARP] = "ARP needing no answer",
	[GW_DROP_VNET] = "virtio-net header refused",
};

/* Words for a filter verdict, for logs and test failures. */
const char *gw_verdict_words(enum gw_verdict v)
{
	return (unsigned)v < GW_VERDICT_COUNT ? verdict_words[v] : "unknown";
}

/* ARP: only requests from the sandbox's address for some other address are answered. */
static enum gw_verdict filter_arp(const uint8_t *p, size_t n, struct gw_packet *pkt)
{
	if (n < 28)
		return GW_DROP_SHORT;
	if (get16(p) != 1 || get16(p + 2) != GW_ETH_IPV4 || p[4] != 6 || p[5] != 4)
		return GW_DROP_MALFORMED;
	pkt->family = 4;
	memcpy(pkt->src, p + 14, 4);
	memcpy(pkt->dst, p + 24, 4);
	memcpy(pkt->src_mac, p + 8, 6);   /* the ARP sender, which we answer */
	if (get16(p + 6) != 1)
		return GW_DROP_ARP;
	if (memcmp(pkt->src, sandbox4, 4) != 0)
		return is_zero(pkt->src, 4) ? GW_DROP_ARP : GW_DROP_SPOOFED;
	if (memcmp(pkt->dst, sandbox4, 4) == 0 || is_zero(pkt->dst, 4))
		return GW_DROP_ARP;
	return GW_ARP_REQUEST;
}

/* The transport header of a packet whose IP header has been checked. */
static enum gw_verdict filter_l4(struct gw_packet *pkt)
{
	const uint8_t *l4 = pkt->ip + pkt->l4_off;
	size_t n = pkt->ip_len - pkt->l4_off;

	switch (pkt->proto) {
	case IPPROTO_TCP: {
		size_t doff;

		if (n < 20)
			return GW_DROP_SHORT;
		doff = (size_t)(l4[12] >> 4) * 4;
		if (doff < 20 || doff > n)
			return GW_DROP_MALFORMED;
		pkt->sport = get16(l4);
		pkt->dport = get16(l4 + 2);
		pkt->tcp_seq = get32(l4 + 4);
		pkt->tcp_flags = l4[13];
		pkt->tcp_payload = n - doff;
		if (pkt->sport == 0 || pkt->dport == 0)
			return GW_DROP_MALFORMED;
		return GW_PASS;
	}
	case IPPROTO_UDP: {
		uint16_t ulen;

		if (n < 8)
			return GW_DROP_SHORT;
		ulen = get16(l4 + 4);
		if (ulen < 8 || ulen > n)
			return GW_DROP_MALFORMED;
		pkt->sport = get16(l4);
		pkt->dport = get16(l4 + 2);
		if (pkt->sport == 0 || pkt->dport == 0)
			return GW_DROP_MALFORMED;
		return GW_PASS;
	}
	case IPPROTO_ICMP:
		if (n < 8)
			return GW_DROP_SHORT;
		if (l4[0] == 8 && l4[1] == 0 && memcmp(pkt->dst, gateway4, 4) == 0)
			return GW_PASS;
		return GW_DROP_ICMP;
	case IPPROTO_ICMPV6:
		if (n < 8)
			return GW_DROP_SHORT;
		if (l4[0] == 128 && l4[1] == 0 && memcmp(pkt->dst, gateway6, 16) == 0)
			return GW_PASS;
		return GW_DROP_ICMP;
	}
	return GW_DROP_PROTOCOL;
}

/* IPv4: the sandbox's address as source, a unicast non-loopback destination. */
static enum gw_verdict filter_ipv4(const uint8_t *p, size_t n, struct gw_packet *pkt)
{
	size_t ihl, tot;
	const uint8_t *d;

	if (n < 20)
		return GW_DROP_SHORT;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	if (p[0] >> 4 != 4 || ihl != 20)    /* IP options are refused, not interpreted */
		return GW_DROP_MALFORMED;
	tot = get16(p + 2);
	if (tot > n)
		return GW_DROP_SHORT;
	if (tot < ihl)
		return GW_DROP_MALFORMED;
	if (get16(p + 6) & 0x3fff)          /* MF or a fragment offset */
		return GW_DROP_FRAGMENT;
	pkt->family = 4;
	pkt->proto = p[9];
	pkt->ip = p;
	pkt->ip_len = tot;
	pkt->l4_off = ihl;
	memcpy(pkt->src, p + 12, 4);
	memcpy(pkt->dst, p + 16, 4);
	d = pkt->dst;
	if (memcmp(pkt->src, sandbox4, 4) != 0)
		return GW_DROP_SPOOFED;
	if (d[0] == 0)
		return GW_DROP_DST_UNSPECIFIED;
	if (d[0] == 127)
		return GW_DROP_DST_LOOPBACK;
	if ((d[0] & 0xf0) == 0xe0)
		return GW_DROP_DST_MULTICAST;
	if ((d[0] == 255 && d[1] == 255 && d[2] == 255 && d[3] == 255) ||
	    (memcmp(d, sandbox4, 3) == 0 && (d[3] == 255 || d[3] == 0)))
		return GW_DROP_DST_BROADCAST;
	if (memcmp(d, pkt->src, 4) == 0)
		return GW_DROP_SELF;
	return filter_l4(pkt);
}

/* IPv6: neighbour solicitations are answered; else as IPv4, with no extension headers. */
static enum gw_verdict filter_ipv6(const uint8_t *p, size_t n, struct gw_packet *pkt)
{
	static const uint8_t loop6[16] = { [15] = 1 };
	size_t plen;
	const uint8_t *l4;

	if (n < 40)
		return GW_DROP_SHORT;
	if (p[0] >> 4 != 6)
		return GW_DROP_MALFORMED;
	plen = get16(p + 4);
	if (40 + plen > n)
		return GW_DROP_SHORT;
	pkt->family = 6;
	pkt->proto = p[6];
	pkt->ip = p;
	pkt->ip_len = 40 + plen;
	pkt->l4_off = 40;
	memcpy(pkt->src, p + 8, 16);
	memcpy(pkt->dst, p + 24, 16);
	l4 = p + 40;
	if (pkt->proto == IPPROTO_ICMPV6 && plen >= 24 && l4[0] == 135) {
		bool ll_src = pkt->src[0] == 0xfe && (pkt->src[1] & 0xc0) == 0x80;

		if (l4[1] != 0 || p[7] != 255)
			return GW_DROP_MALFORMED;
		memcpy(pkt->dst, l4 + 8, 16);   /* the target being asked about */
		if (is_zero(pkt->src, 16))
			return GW_DROP_ARP;         /* duplicate address detection */
		if (!ll_src && memcmp(pkt->src, sandbox6, 16) != 0)
			return GW_DROP_SPOOFED;
		if (pkt->dst[0] == 0xff)
			return GW_DROP_MALFORMED;
		if (memcmp(pkt->dst, sandbox6, 16) == 0 || memcmp(pkt->dst, pkt->src, 16) == 0)
			return GW_DROP_ARP;
		return GW_NEIGHBOUR_SOLICIT;
	}
	switch (pkt->proto) {
	case IPPROTO_TCP: case IPPROTO_UDP: case IPPROTO_ICMPV6:
		break;
	case 0: case 43: case 44: case 50: case 51: case 60: case 135: case 139: case 140:
		return GW_DROP_FRAGMENT;
	default:
		return GW_DROP_PROTOCOL;
	}
	if (memcmp(pkt->src, sandbox6, 16) != 0)
		return GW_DROP_SPOOFED;
	if (is_zero(pkt->dst, 16))
		return GW_DROP_DST_UNSPECIFIED;
	if (memcmp(pkt->dst, loop6, 16) == 0)
		return GW_DROP_DST_LOOPBACK;
	if (pkt->dst[0] == 0xff)
		return GW_DROP_DST_MULTICAST;
	if (pkt->dst[0] == 0xfe && (pkt->dst[1] & 0xc0) == 0x80)
		return GW_DROP_DST_LINK_LOCAL;
	/* Linux sends a socket's mapped destination as IPv4; one on the wire is
	 * hand-made, and lwIP would drop it after the broker had dialled. */
	if (is_zero(pkt->dst, 10) && pkt->dst[10] == 0xff && pkt->dst[11] == 0xff)
		return GW_DROP_DST_MAPPED;
	if (memcmp(pkt->dst, pkt->src, 16) == 0)
		return GW_DROP_SELF;
	return filter_l4(pkt);
}

/* Dispatch on the ethertype (the destination MAC is not checked: the link is point to point). */
enum gw_verdict gw_filter_frame(const uint8_t *frame, size_t len, struct gw_packet *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	if (len < GW_ETH_HLEN)
		return GW_DROP_SHORT;
	memcpy(pkt->src_mac, frame + 6, 6);
	switch (get16(frame + 12)) {
	case GW_ETH_ARP:
		return filter_arp(frame + GW_ETH_HLEN, len - GW_ETH_HLEN, pkt);
	case GW_ETH_IPV4:
		return filter_ipv4(frame + GW_ETH_HLEN, len - GW_ETH_HLEN, pkt);
	case GW_ETH_IPV6:
		return filter_ipv6(frame + GW_ETH_HLEN, len - GW_ETH_HLEN, pkt);
	}
	return GW_DROP_ETHERTYPE;
}

/* struct virtio_net_hdr's values (linux/virtio_net.h), spelled here so the pure part needs no kernel header. */
#define VNET_F_NEEDS_CSUM   1
#define VNET_F_DATA_VALID   2
#define VNET_GSO_NONE       0
#define VNET_GSO_TCPV4      1
#define VNET_GSO_TCPV6      4
#define VNET_GSO_ECN        0x80

/* Little-endian 16 bits (the header's order on every architecture boxy builds for, see TUNSETVNETLE). */
static uint16_t get16le(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

enum gw_verdict gw_filter_vnet(const uint8_t *buf, size_t len, struct gw_packet *pkt)
{
	uint8_t flags, gso;
	size_t hdr_len, gso_size, cs_start, cs_off, l4;
	enum gw_verdict v;

	if (len < GW_VNET_HLEN) {
		memset(pkt, 0, sizeof(*pkt));
		return GW_DROP_SHORT;
	}
	v = gw_filter_frame(buf + GW_VNET_HLEN, len - GW_VNET_HLEN, pkt);
	if (v != GW_PASS && v != GW_ARP_REQUEST && v != GW_NEIGHBOUR_SOLICIT)
		return v;
	flags = buf[0];
	gso = buf[1];
	hdr_len = get16le(buf + 2);
	gso_size = get16le(buf + 4);
	cs_start = get16le(buf + 6);
	cs_off = get16le(buf + 8);
	if (flags & ~(VNET_F_NEEDS_CSUM | VNET_F_DATA_VALID))
		return GW_DROP_VNET;
	if (hdr_len > len - GW_VNET_HLEN)
		return GW_DROP_VNET;
	if (gso != VNET_GSO_NONE) {
		uint8_t type = gso & (uint8_t)~VNET_GSO_ECN;

		if (v != GW_PASS || pkt->proto != IPPROTO_TCP || gso_size == 0 ||
		    type != (pkt->family == 4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6))
			return GW_DROP_VNET;
	} else if (gso_size != 0) {
		return GW_DROP_VNET;
	}
	if (!(flags & VNET_F_NEEDS_CSUM)) {
		/* A GSO segment always comes with a partial checksum. */
		return gso != VNET_GSO_NONE ? GW_DROP_VNET : v;
	}
	if (v != GW_PASS || (pkt->proto != IPPROTO_TCP && pkt->proto != IPPROTO_UDP))
		return GW_DROP_VNET;
	/* The checksum must sit where this packet's transport header says it is. */
	l4 = GW_ETH_HLEN + pkt->l4_off;
	if (cs_start != l4 || cs_off != (pkt->proto == IPPROTO_TCP ? 16u : 6u) ||
	    pkt->l4_off + cs_off + 2 > pkt->ip_len)
		return GW_DROP_VNET;
	pkt->csum_partial = true;
	return v;
}

/* The Ethernet header of a frame from the gateway to the sandbox. */
static void eth_header(uint8_t *out, const uint8_t dst_mac[6], uint16_t type)
{
	memcpy(out, dst_mac, 6);
	memcpy(out + 6, gw_mac, 6);
	put16(out + 12, type);
}

/* The pseudo-header sum for a transport checksum. */
static uint32_t pseudo_sum(int family, const uint8_t *src, const uint8_t *dst,
			   uint8_t proto, size_t len)
{
	size_t alen = family == 4 ? 4 : 16;
	uint32_t sum = csum_add(src, alen, 0);

	sum = csum_add(dst, alen, sum);
	return sum + proto + (uint32_t)len;
}

/* An IP header (gateway → sandbox) at out; returns its length. */
static size_t ip_header(uint8_t *out, int family, const uint8_t *src, const uint8_t *dst,
			uint8_t proto, size_t payload, uint8_t ttl)
{
	if (family == 4) {
		memset(out, 0, 20);
		out[0] = 0x45;
		put16(out + 2, (uint16_t)(20 + payload));
		put16(out + 6, 0x4000);             /* DF */
		out[8] = ttl;
		out[9] = proto;
		memcpy(out + 12, src, 4);
		memcpy(out + 16, dst, 4);
		put16(out + 10, gw_checksum(out, 20, 0));
		return 20;
	}
	memset(out, 0, 40);
	out[0] = 0x60;
	put16(out + 4, (uint16_t)payload);
	out[6] = proto;
	out[7] = ttl;
	memcpy(out + 8, src, 16);
	memcpy(out + 24, dst, 16);
	return 40;
}

/* RST|ACK for a held SYN: sequence 0, ack = the SYN's sequence + its length. */
size_t gw_build_rst(const struct gw_packet *syn, const uint8_t sandbox_mac[6],
		    uint8_t *out, size_t cap)
{
	size_t iplen = syn->family == 4 ? 20 : 40, total = GW_ETH_HLEN + iplen + 20;
	uint32_t ack = syn->tcp_seq + (uint32_t)syn->tcp_payload;
	uint8_t *tcp;

	if (cap < total)
		return 0;
	if (syn->tcp_flags & GW_TCP_SYN)
		ack++;
	if (syn->tcp_flags & GW_TCP_FIN)
		ack++;
	eth_header(out, sandbox_mac, syn->family == 4 ? GW_ETH_IPV4 : GW_ETH_IPV6);
	ip_header(out + GW_ETH_HLEN, syn->family, syn->dst, syn->src, IPPROTO_TCP, 20, 64);
	tcp = out + GW_ETH_HLEN + iplen;
	memset(tcp, 0, 20);
	put16(tcp, syn->dport);
	put16(tcp + 2, syn->sport);
	put32(tcp + 8, ack);
	tcp[12] = 5 << 4;
	tcp[13] = GW_TCP_RST | GW_TCP_ACK;
	put16(tcp + 16, gw_checksum(tcp, 20, pseudo_sum(syn->family, syn->dst, syn->src,
							IPPROTO_TCP, 20)));
	return total;
}

/* Where the MSS option's value sits in a TCP header, or NULL. */
static const uint8_t *tcp_mss_field(const uint8_t *tcp, size_t len)
{
	size_t hlen, i;

	if (len < 20)
		return NULL;
	hlen = (size_t)(tcp[12] >> 4) * 4;
	if (hlen < 20 || hlen > len)
		return NULL;
	for (i = 20; i < hlen;) {
		if (tcp[i] == 0)                /* end of options */
			return NULL;
		if (tcp[i] == 1) {              /* no-op */
			i++;
			continue;
		}
		if (i + 1 >= hlen || tcp[i + 1] < 2 || i + tcp[i + 1] > hlen)
			return NULL;
		if (tcp[i] == 2)
			return tcp[i + 1] == 4 ? tcp + i + 2 : NULL;
		i += tcp[i + 1];
	}
	return NULL;
}

uint16_t gw_tcp_mss_option(const uint8_t *tcp, size_t len)
{
	const uint8_t *m = tcp_mss_field(tcp, len);

	return m ? get16(m) : 0;
}

bool gw_raise_synack_mss(uint8_t *frame, size_t len)
{
	size_t ip_len, l4;
	uint16_t want, old;
	uint8_t *tcp, *m;
	uint32_t sum;
	int family;

	if (len < GW_ETH_HLEN + 20)
		return false;
	switch (get16(frame + 12)) {
	case GW_ETH_IPV4:
		family = 4;
		l4 = (size_t)(frame[GW_ETH_HLEN] & 0x0f) * 4;
		if (frame[GW_ETH_HLEN + 9] != IPPROTO_TCP || l4 < 20)
			return false;
		break;
	case GW_ETH_IPV6:
		family = 6;
		l4 = 40;
		if (len < GW_ETH_HLEN + 40 || frame[GW_ETH_HLEN + 6] != IPPROTO_TCP)
			return false;
		break;
	default:
		return false;
	}
	ip_len = len - GW_ETH_HLEN;
	if (ip_len < l4 + 20)
		return false;
	tcp = frame + GW_ETH_HLEN + l4;
	if ((tcp[13] & (GW_TCP_SYN | GW_TCP_ACK | GW_TCP_RST)) != (GW_TCP_SYN | GW_TCP_ACK))
		return false;
	m = (uint8_t *)tcp_mss_field(tcp, ip_len - l4);
	want = family == 4 ? GW_MSS_V4 : GW_MSS_V6;
	if (!m || (old = get16(m)) >= want)
		return false;
	/* RFC 1624's incremental update: HC' = ~(~HC + ~m + m'). */
	sum = (uint16_t)~get16(tcp + 16);
	sum += (uint16_t)~old;
	sum += want;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(m, want);
	put16(tcp + 16, (uint16_t)~sum);
	return true;
}

/* The ARP reply: "target is at the gateway's MAC". */
static size_t build_arp_reply(const struct gw_packet *req, uint8_t *out)
{
	uint8_t *a = out + GW_ETH_HLEN;

	eth_header(out, req->src_mac, GW_ETH_ARP);
	put16(a, 1);
	put16(a + 2, GW_ETH_IPV4);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 2);
	memcpy(a + 8, gw_mac, 6);
	memcpy(a + 14, req->dst, 4);
	memcpy(a + 18, req->src_mac, 6);
	memcpy(a + 24, req->src, 4);
	return GW_ETH_HLEN + 28;
}

/* The neighbour advertisement answering a solicitation (router, solicited, override). */
static size_t build_neighbour_advert(const struct gw_packet *ns, uint8_t *out)
{
	uint8_t *icmp = out + GW_ETH_HLEN + 40;

	eth_header(out, ns->src_mac, GW_ETH_IPV6);
	ip_header(out + GW_ETH_HLEN, 6, ns->dst, ns->src, IPPROTO_ICMPV6, 32, 255);
	memset(icmp, 0, 32);
	icmp[0] = 136;
	icmp[4] = 0xe0;
	memcpy(icmp + 8, ns->dst, 16);
	icmp[24] = 2;           /* target link-layer address option */
	icmp[25] = 1;
	memcpy(icmp + 26, gw_mac, 6);
	put16(icmp + 2, gw_checksum(icmp, 32, pseudo_sum(6, ns->dst, ns->src,
							 IPPROTO_ICMPV6, 32)));
	return GW_ETH_HLEN + 40 + 32;
}

/* ---- state ------------------------------------------------------------------- */

enum flow_kind {
	FLOW_TCP,           /* a TCP connection spliced to a broker socket */
	FLOW_UDP,           /* a UDP flow (one 4-tuple) spliced to a connected socket */
	FLOW_DNS,           /* DNS over TCP, answered here */
};

enum flow_state {
	FS_HELD,            /* FLOW_OPEN sent, the SYN (or first datagrams) held */
	FS_ADMITTED,        /* TCP: SYN fed to lwIP, waiting for the handshake to complete */
	FS_NAMING,          /* TCP: reading the first bytes for the SNI or Host */
	FS_NAME_SENT,       /* TCP: FLOW_NAME sent, waiting for the verdict */
	FS_OPEN,            /* splicing (or answering DNS) */
	FS_REFUSED,         /* UDP: refused; datagrams dropped until the entry expires */
	FS_DEAD,            /* torn down, waiting to be freed outside every callback */
};

struct udp_dgram {
	struct udp_dgram *next;
	size_t len;
	uint8_t data[];
};

struct gw;

/* One flow, from its first packet to FLOW_CLOSE; outlives its lwIP pcb when it must. */
struct flow {
	struct gw *gw;
	uint32_t id;
	enum flow_kind kind;
	enum flow_state state;
	uint8_t proto;
	int family;
	uint8_t src[16], dst[16];       /* src: the sandbox; dst: what it dialled */
	uint16_t sport, dport;
	bool opened;                    /* FLOW_OPEN sent: one FLOW_CLOSE is owed */
	bool need_name;
	bool name_timeout;
	bool late_name;                 /* sent as NONE with no byte: the first bytes must be unnamed */
	bool observed;                  /* observe mode: the first bytes were looked at */
	uint16_t syn_mss;               /* the MSS the sandbox's SYN offered, 0 if none */
	struct gw_packet syn;           /* the held SYN's fields, to refuse it (ip unset) */
	uint8_t *held;                  /* the held SYN, as an IP packet */
	size_t held_len;

	struct tcp_pcb *pcb;            /* NULL before accept and after lwIP freed it */
	bool pcb_gone;                  /* lwIP freed the pcb (tcp_err) */
	bool pcb_clean;                 /* ... after a normal close (ERR_CLSD), not a reset */
	bool reset;                     /* tear down now, dropping what is queued */
	int fd;                         /* the upstream socket, -1 until dialled */
	ev_io rio, wio;

	struct pbuf *upq, *upq_tail;    /* sandbox → upstream, not yet written (chains linked) */
	size_t upq_off, upq_len;
	uint8_t *down;                  /* upstream → sandbox, read but refused by lwIP */
	size_t down_len;
	bool up_eof, up_shut, down_eof, down_fin;
	uint64_t up_bytes, down_bytes, rep_up, rep_down;
	size_t down_held;               /* written into lwIP, not yet acked by the sandbox */

	struct udp_dgram *udpq, **udpq_tail;
	size_t udpq_n;
	unsigned dns_pending;
	ev_tstamp deadline;

	struct flow *next_id, *next_tuple;      /* hash chains */
	struct flow *prev, *next;               /* every live flow */
	struct flow *next_dirty;
	bool dirty;
};

/* A DNS query waiting for NET_ANSWER, with where its answer goes. */
struct dns_pending {
	bool used;
	uint32_t id;
	bool tcp;
	uint32_t flow_id;               /* tcp */
	int family;                     /* udp: the client and the server it asked */
	uint8_t client[16], server[16];
	uint16_t cport;
	ev_tstamp deadline;
	struct dns_question q;
};

struct gw {
	struct ev_loop *loop;
	int broker_fd, tap_fd;
	struct net_pcap *pcap;
	bool pcap_reported, tap_dead, flows_full_reported;
	bool observe;                   /* NETCFG_OBSERVE: name open flows for the record */
	int exit_status;

	struct netif nif;
	uint8_t sandbox_mac[6];

	ev_io tap_io, broker_io;
	ev_timer lwip_timer, stats_timer;
	ev_prepare prepare;

	uint32_t next_flow, next_query;
	size_t nflows, nheld;
	size_t max_flows;               /* GW_MAX_FLOWS, or fewer if descriptors are short */
	size_t down_held;               /* the flows' down_held, summed */
	bool down_starved;              /* a flow stopped reading upstream for the budget */
	struct flow *by_id[GW_HASH], *by_tuple[GW_HASH];
	struct flow *all, *dirty, *dead;
	struct tcp_pcb *tcp_listeners[65536];
	struct udp_pcb *udp_bound[65536];
	struct dns_pending queries[GW_MAX_QUERIES];
	uint64_t dropped[GW_VERDICT_COUNT];

	uint8_t rbuf[GW_FRAME_MAX];                 /* upstream bytes, or a peek at them */
	uint8_t tbuf[GW_TAP_READ];                  /* a TAP read: vnet header, frame */
	uint8_t frame[GW_ETH_HLEN + GW_FRAME_MAX];  /* a frame going to the TAP */
	uint8_t dgram[GW_FRAME_MAX];                /* a datagram either way */
};

static void flow_dirty(struct flow *f);
static void flow_kill(struct flow *f, bool reset);
static void gw_service(struct gw *gw);

/* ---- small helpers ----------------------------------------------------------- */

static void addr_to_lwip(ip_addr_t *out, int family, const uint8_t *b)
{
	memset(out, 0, sizeof(*out));
	if (family == 4) {
		memcpy(&ip_2_ip4(out)->addr, b, 4);
		IP_SET_TYPE_VAL(*out, IPADDR_TYPE_V4);
	} else {
		memcpy(ip_2_ip6(out)->addr, b, 16);
		ip6_addr_clear_zone(ip_2_ip6(out));
		IP_SET_TYPE_VAL(*out, IPADDR_TYPE_V6);
	}
}

/* An lwIP address as 16 bytes; returns the family (4 or 6). */
static int addr_from_lwip(const ip_addr_t *a, uint8_t b[16])
{
	memset(b, 0, 16);
	if (IP_IS_V6(a)) {
		memcpy(b, ip_2_ip6(a)->addr, 16);
		return 6;
	}
	memcpy(b, &ip_2_ip4(a)->addr, 4);
	return 4;
}

/* True if an lwIP address is this family and these bytes. */
static bool lwip_addr_is(const ip_addr_t *a, int family, const uint8_t *b)
{
	uint8_t x[16];

	return addr_from_lwip(a, x) == family && memcmp(x, b, family == 4 ? 4 : 16) == 0;
}

/* proto/netproto.h's address: family byte, then 16 bytes (IPv4 in the first 4, zeros after). */
static void wire_put_addr(struct wbuf *w, int family, const uint8_t *a)
{
	wire_put_u8(w, (uint8_t)family);
	for (size_t i = 0; i < 16; i++)
		wire_put_u8(w, family == 4 && i >= 4 ? 0 : a[i]);
}

/* Wall-clock microseconds, for pcap time stamps. */
static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- the broker -------------------------------------------------------------- */

/* Send a frame; a broker that cannot be written to ends the process's purpose. */
static void broker_send(struct gw *gw, uint16_t type, struct wbuf *w)
{
	if (msg_send(gw->broker_fd, type, w->p, w->len, NULL, 0) < 0 && gw->exit_status == 0) {
		gw->exit_status = errno == EPIPE || errno == ECONNRESET ? 0 : 1;
		ev_break(gw->loop, EVBREAK_ALL);
	}
	wbuf_free(w);
}

/* A line about boxy-net's own health, for the daemon's log. */
static void broker_log(struct gw *gw, const char *words)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_str(&w, words);
	broker_send(gw, NET_LOG, &w);
}

/* NET_FLOW_OPEN: from now on one NET_FLOW_CLOSE is owed for this flow. */
static void send_flow_open(struct gw *gw, struct flow *f)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, f->proto);
	wire_put_addr(&w, f->family, f->dst);
	wire_put_u16(&w, f->dport);
	wire_put_addr(&w, f->family, f->src);
	wire_put_u16(&w, f->sport);
	broker_send(gw, NET_FLOW_OPEN, &w);
	f->opened = true;
}

/* NET_FLOW_STATS or NET_FLOW_CLOSE: the totals so far. */
static void send_flow_counts(struct gw *gw, struct flow *f, uint16_t type)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u64(&w, f->up_bytes);
	wire_put_u64(&w, f->down_bytes);
	broker_send(gw, type, &w);
	f->rep_up = f->up_bytes;
	f->rep_down = f->down_bytes;
}

/* ---- the TAP side ------------------------------------------------------------ */

static void capture(struct gw *gw, const uint8_t *frame, size_t len)
{
	if (!gw->pcap || net_pcap_write(gw->pcap, frame, len, now_usec()) == 0 || gw->pcap_reported)
		return;
	gw->pcap_reported = true;
	if (gw->pcap->state == PCAP_FULL) {
		broker_log(gw, "pcap capture stopped: the size cap was reached");
	} else {
		char *s = xasprintf("pcap capture stopped: %s", strerror(gw->pcap->saved_errno));

		broker_log(gw, s);
		free(s);
	}
}

/* Write one frame to the sandbox. A full TAP queue drops it, as a link would. */
static void tap_send(struct gw *gw, const uint8_t *frame, size_t len)
{
	static const uint8_t vnet_none[GW_VNET_HLEN];
	struct iovec iov[2] = { { (void *)vnet_none, sizeof(vnet_none) }, { (void *)frame, len } };

	capture(gw, frame, len);
	if (writev(gw->tap_fd, iov, 2) < 0 && errno != EAGAIN && errno != EIO && !gw->tap_dead) {
		gw->tap_dead = true;
		broker_log(gw, "TAP write failed");
	}
}

/* lwIP's output for both families: prepend the Ethernet header and write the frame. */
static err_t netif_output_frame(struct gw *gw, struct pbuf *p, uint16_t type)
{
	const uint8_t *tcp = (const uint8_t *)p->payload + (type == GW_ETH_IPV4 ? 20 : 40);

	/* The common case, a data segment with nothing to capture: gather the
	 * pbuf chain straight into the TAP, saving a 64 KiB copy per frame.
	 * lwIP's IPv4 header is always 20 bytes; the SYN test only needs to
	 * be right for SYNs, which take the copying path below. */
	if (!gw->pcap && p->len >= (type == GW_ETH_IPV4 ? 40 : 60) &&
	    !(tcp[13] & GW_TCP_SYN)) {
		struct iovec iov[2 + 16];
		int n = 2;
		const struct pbuf *q;
		uint8_t vnet[GW_VNET_HLEN] = { 0 };
		uint16_t start = GW_ETH_HLEN + (type == GW_ETH_IPV4 ? 20 : 40);

		/* lwIP's checksum is complete; NEEDS_CSUM makes the sandbox's
		 * kernel take it as verified (CHECKSUM_PARTIAL is trusted on
		 * local delivery) instead of summing the segment again. */
		if (((const uint8_t *)p->payload)[type == GW_ETH_IPV4 ? 9 : 6] == IPPROTO_TCP) {
			vnet[0] = VNET_F_NEEDS_CSUM;
			vnet[6] = (uint8_t)start;
			vnet[7] = (uint8_t)(start >> 8);
			vnet[8] = 16;
		}
		eth_header(gw->frame, gw->sandbox_mac, type);
		iov[0] = (struct iovec){ vnet, sizeof(vnet) };
		iov[1] = (struct iovec){ gw->frame, GW_ETH_HLEN };
		for (q = p; q && n < (int)ARRAY_SIZE(iov); q = q->next)
			iov[n++] = (struct iovec){ q->payload, q->len };
		if (!q) {
			if (writev(gw->tap_fd, iov, n) < 0 && errno != EAGAIN && errno != EIO &&
			    !gw->tap_dead) {
				gw->tap_dead = true;
				broker_log(gw, "TAP write failed");
			}
			return ERR_OK;
		}
	}
	eth_header(gw->frame, gw->sandbox_mac, type);
	pbuf_copy_partial(p, gw->frame + GW_ETH_HLEN, p->tot_len, 0);
	/* On the copy: lwIP keeps p to retransmit, and rewrites nothing itself. */
	gw_raise_synack_mss(gw->frame, GW_ETH_HLEN + p->tot_len);
	tap_send(gw, gw->frame, GW_ETH_HLEN + p->tot_len);
	return ERR_OK;
}

/* lwIP's IPv4 output (no ARP: the sandbox's MAC is known). */
static err_t netif_output4(struct netif *nif, struct pbuf *p, const ip4_addr_t *next)
{
	if (ip4_addr_ismulticast(next))
		return ERR_OK;
	return netif_output_frame(nif->state, p, GW_ETH_IPV4);
}

/* lwIP's own MLD reports and router solicitations (multicast) never reach the sandbox. */
static err_t netif_output6(struct netif *nif, struct pbuf *p, const ip6_addr_t *dst)
{
	if (ip6_addr_ismulticast(dst))
		return ERR_OK;
	return netif_output_frame(nif->state, p, GW_ETH_IPV6);
}

/* netif init callback: a pure L3 interface whose output is ours. */
static err_t netif_setup(struct netif *nif)
{
	nif->name[0] = 'b';
	nif->name[1] = 'x';
	nif->mtu = GW_MTU;
	nif->output = netif_output4;
	nif->output_ip6 = netif_output6;
	/* No ETHARP (we answer ARP ourselves), no BROADCAST (a .255 destination
	 * must not look like broadcast to lwIP), no MLD6. */
	nif->flags = 0;
	return ERR_OK;
}

/*
 * lwIP verifies every received TCP segment's checksum (CHECKSUM_CHECK_TCP is
 * compiled in, with no per-netif switch): a full pass over every uploaded
 * byte, a fifth of an upload's time on the one core boxy-net has. The frames
 * come from the sandbox's kernel through memory, with no wire to corrupt
 * them, and a checksum is no defence against a hostile sender (it can
 * always compute a right one), so the pass buys nothing. tcp_input calls
 * ip_chksum_pseudo through liblwip's PLT before it looks at anything else in
 * the segment; boxy-net defines the symbol, so the dynamic linker binds
 * lwIP's call here: for the one pbuf lwip_feed is handing to lwIP as a TCP
 * segment, the first call answers "verified" (0); every other call (UDP,
 * lwIP's own output, ACKs and RSTs) is computed as lwIP's own dispatcher
 * does. tests/net.sh's transfers fail if output checksums went wrong.
 */
static struct pbuf *csum_trusted;

u16_t ip_chksum_pseudo(struct pbuf *p, u8_t proto, u16_t proto_len, const ip_addr_t *src,
		       const ip_addr_t *dest)
{
	if (p && p == csum_trusted && proto == IP_PROTO_TCP) {
		csum_trusted = NULL;
		return 0;
	}
	if (IP_IS_V6(dest))
		return ip6_chksum_pseudo(p, proto, proto_len, ip_2_ip6(src), ip_2_ip6(dest));
	return inet_chksum_pseudo(p, proto, proto_len, ip_2_ip4(src), ip_2_ip4(dest));
}

/*
 * Hand an IP packet to lwIP, as if it were addressed to lwIP itself: the
 * netif's address becomes the packet's destination for the duration of the
 * call. The field is written directly: netif_set_ipaddr would abort every
 * pcb bound to the old address.
 */
static void lwip_feed(struct gw *gw, int family, const uint8_t *ip, size_t len, const uint8_t *dst)
{
	struct pbuf *p;

	if (len > 0xffff)
		return;
	p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
	if (!p)
		return;
	pbuf_take(p, ip, (u16_t)len);
	if (len >= 40 && (family == 4 ? ip[9] : ip[6]) == IPPROTO_TCP)
		csum_trusted = p;
	if (family == 4) {
		ip4_addr_t saved = *ip_2_ip4(&gw->nif.ip_addr);

		memcpy(&ip_2_ip4(&gw->nif.ip_addr)->addr, dst, 4);
		ip4_input(p, &gw->nif);
		*ip_2_ip4(&gw->nif.ip_addr) = saved;
	} else {
		ip6_addr_t *slot = ip_2_ip6(&gw->nif.ip6_addr[1]);

		memcpy(slot->addr, dst, 16);
		ip6_addr_clear_zone(slot);
		ip6_input(p, &gw->nif);
		memcpy(slot->addr, idle6, 16);
	}
	csum_trusted = NULL;
}

/* ---- flow table -------------------------------------------------------------- */

static unsigned tuple_hash(uint8_t proto, int family, const uint8_t *src, uint16_t sport,
			   const uint8_t *dst, uint16_t dport)
{
	uint32_t h = 2166136261u;
	uint8_t key[38];

	key[0] = proto;
	key[1] = (uint8_t)family;
	memcpy(key + 2, src, 16);
	memcpy(key + 18, dst, 16);
	put16(key + 34, sport);
	put16(key + 36, dport);
	for (size_t i = 0; i < sizeof(key); i++)
		h = (h ^ key[i]) * 16777619u;
	return h % GW_HASH;
}

/* The live flow for a 4-tuple (as the sandbox sees it), or NULL. */
static struct flow *flow_find_tuple(struct gw *gw, uint8_t proto, int family, const uint8_t *src,
				    uint16_t sport, const uint8_t *dst, uint16_t dport)
{
	struct flow *f = gw->by_tuple[tuple_hash(proto, family, src, sport, dst, dport)];

	for (; f; f = f->next_tuple)
		if (f->proto == proto && f->family == family && f->sport == sport &&
		    f->dport == dport && memcmp(f->src, src, 16) == 0 &&
		    memcmp(f->dst, dst, 16) == 0)
			return f;
	return NULL;
}

/* The live flow with this id, or NULL. */
static struct flow *flow_find_id(struct gw *gw, uint32_t id)
{
	struct flow *f = gw->by_id[id % GW_HASH];

	for (; f; f = f->next_id)
		if (f->id == id)
			return f;
	return NULL;
}

/* A new flow for the packet's tuple, in every table; the caller sets its state. */
static struct flow *flow_new(struct gw *gw, enum flow_kind kind, const struct gw_packet *pkt)
{
	struct flow *f = xcalloc(1, sizeof(*f));
	unsigned h;

	f->gw = gw;
	do
		f->id = ++gw->next_flow;
	while (f->id == 0 || flow_find_id(gw, f->id));
	f->kind = kind;
	f->proto = pkt->proto;
	f->family = pkt->family;
	memcpy(f->src, pkt->src, 16);
	memcpy(f->dst, pkt->dst, 16);
	f->sport = pkt->sport;
	f->dport = pkt->dport;
	if (pkt->proto == IPPROTO_TCP && pkt->ip)
		f->syn_mss = gw_tcp_mss_option(pkt->ip + pkt->l4_off, pkt->ip_len - pkt->l4_off);
	f->fd = -1;
	f->udpq_tail = &f->udpq;
	h = tuple_hash(f->proto, f->family, f->src, f->sport, f->dst, f->dport);
	f->next_tuple = gw->by_tuple[h];
	gw->by_tuple[h] = f;
	f->next_id = gw->by_id[f->id % GW_HASH];
	gw->by_id[f->id % GW_HASH] = f;
	f->next = gw->all;
	if (gw->all)
		gw->all->prev = f;
	gw->all = f;
	gw->nflows++;
	return f;
}

/* Take a flow out of every table (it is then only on the dead list). */
static void flow_unhash(struct flow *f)
{
	struct gw *gw = f->gw;
	struct flow **pp;

	pp = &gw->by_tuple[tuple_hash(f->proto, f->family, f->src, f->sport, f->dst, f->dport)];
	while (*pp && *pp != f)
		pp = &(*pp)->next_tuple;
	if (*pp)
		*pp = f->next_tuple;
	pp = &gw->by_id[f->id % GW_HASH];
	while (*pp && *pp != f)
		pp = &(*pp)->next_id;
	if (*pp)
		*pp = f->next_id;
	if (f->prev)
		f->prev->next = f->next;
	else
		gw->all = f->next;
	if (f->next)
		f->next->prev = f->prev;
	gw->nflows--;
}

/* Queue the flow for gw_service (once per loop iteration, outside lwIP's callbacks). */
static void flow_dirty(struct flow *f)
{
	if (f->dirty || f->state == FS_DEAD)
		return;
	f->dirty = true;
	f->next_dirty = f->gw->dirty;
	f->gw->dirty = f;
}

/* Append a chain received from lwIP to the sandbox→upstream queue. */
static void upq_push(struct flow *f, struct pbuf *p)
{
	struct pbuf *last = p;

	/* Chains are linked through ->next but never pbuf_cat'ed: the head's
	 * u16 tot_len would overflow; upq_len is the length that counts. */
	while (last->next)
		last = last->next;
	f->upq_len += p->tot_len;
	if (f->upq_tail)
		f->upq_tail->next = p;
	else
		f->upq = p;
	f->upq_tail = last;
}

/* Free the whole queue. */
static void upq_clear(struct flow *f)
{
	while (f->upq) {
		struct pbuf *h = f->upq;

		f->upq = h->next;
		h->next = NULL;
		pbuf_free(h);
	}
	f->upq_tail = NULL;
	f->upq_off = f->upq_len = 0;
}

/* Drop n bytes from the front of the queue. */
static void upq_consume(struct flow *f, size_t n)
{
	f->upq_len -= n;
	while (n && f->upq) {
		struct pbuf *h = f->upq;
		size_t avail = h->len - f->upq_off;

		if (n < avail) {
			f->upq_off += n;
			return;
		}
		n -= avail;
		f->upq = h->next;
		h->next = NULL;
		pbuf_free(h);
		f->upq_off = 0;
	}
	if (f->upq_len == 0)
		upq_clear(f);
}

/* Copy up to cap bytes from the front of the queue. */
static size_t upq_peek(const struct flow *f, uint8_t *out, size_t cap)
{
	size_t off = f->upq_off, got = 0;

	for (const struct pbuf *p = f->upq; p && got < cap; p = p->next) {
		size_t n = p->len - off;

		if (n > cap - got)
			n = cap - got;
		memcpy(out + got, (const uint8_t *)p->payload + off, n);
		got += n;
		off = 0;
	}
	return got;
}

/* Give lwIP back n bytes of receive window (tcp_recved takes a u16). */
static void flow_recved(struct flow *f, size_t n)
{
	while (f->pcb && n) {
		u16_t c = n > 0xffff ? 0xffff : (u16_t)n;

		tcp_recved(f->pcb, c);
		n -= c;
	}
}

/* Count bytes handed to lwIP for the sandbox (n > 0), or acked or dropped (n < 0). */
static void flow_held(struct flow *f, ssize_t n)
{
	size_t d = n < 0 ? (size_t)-n : (size_t)n;

	if (n < 0) {
		if (d > f->down_held)
			d = f->down_held;
		f->down_held -= d;
		f->gw->down_held -= d;
	} else {
		f->down_held += d;
		f->gw->down_held += d;
	}
}

/* Forget the pcb without letting lwIP call back into a flow that is going away. */
static void pcb_detach(struct tcp_pcb *pcb)
{
	tcp_arg(pcb, NULL);
	tcp_recv(pcb, NULL);
	tcp_sent(pcb, NULL);
	tcp_err(pcb, NULL);
}

/*
 * End a flow: close (or, with reset, abort) its pcb and its upstream socket,
 * report FLOW_CLOSE if FLOW_OPEN was sent, and queue it to be freed. Never
 * called from inside an lwIP callback for that pcb.
 */
static void flow_kill(struct flow *f, bool reset)
{
	struct gw *gw = f->gw;

	if (f->state == FS_DEAD)
		return;
	if (f->pcb) {
		struct tcp_pcb *pcb = f->pcb;

		f->pcb = NULL;
		pcb_detach(pcb);
		if (reset || tcp_close(pcb) != ERR_OK)
			tcp_abort(pcb);
	}
	if (f->fd >= 0) {
		ev_io_stop(gw->loop, &f->rio);
		ev_io_stop(gw->loop, &f->wio);
		close(f->fd);
		f->fd = -1;
	}
	upq_clear(f);
	flow_held(f, -(ssize_t)f->down_held);
	free(f->down);
	f->down = NULL;
	free(f->held);
	f->held = NULL;
	while (f->udpq) {
		struct udp_dgram *d = f->udpq;

		f->udpq = d->next;
		free(d);
	}
	if (f->state == FS_HELD)
		gw->nheld--;
	if (f->opened)
		send_flow_counts(gw, f, NET_FLOW_CLOSE);
	flow_unhash(f);
	f->state = FS_DEAD;
	f->next = gw->dead;
	gw->dead = f;
}

/* ---- TCP --------------------------------------------------------------------- */

static err_t tcp_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct flow *f = arg;

	(void)pcb;
	(void)err;
	if (!p) {
		f->up_eof = true;
	} else if (f->up_eof) {
		pbuf_free(p);   /* data after FIN: lwIP does not deliver it, but be safe */
	} else {
		upq_push(f, p);
	}
	flow_dirty(f);
	return ERR_OK;
}

/* lwIP freed send buffer: more upstream bytes may be read. */
static err_t tcp_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
	(void)pcb;
	flow_held(arg, -(ssize_t)len);
	flow_dirty(arg);
	return ERR_OK;
}

/* lwIP freed the pcb: remember whether the connection ended cleanly. */
static void tcp_on_err(void *arg, err_t err)
{
	struct flow *f = arg;

	if (!f)
		return;
	f->pcb = NULL;
	f->pcb_gone = true;
	f->pcb_clean = err == ERR_CLSD;
	flow_held(f, -(ssize_t)f->down_held);  /* what was unacked went with the pcb */
	flow_dirty(f);
}

/* The handshake completed: bind the new pcb to the flow admitted for its tuple. */
static err_t tcp_on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	struct gw *gw = arg;
	uint8_t src[16], dst[16];
	int family;
	struct flow *f;

	if (err != ERR_OK || !pcb)
		return ERR_VAL;
	family = addr_from_lwip(&pcb->remote_ip, src);
	addr_from_lwip(&pcb->local_ip, dst);
	f = flow_find_tuple(gw, IPPROTO_TCP, family, src, pcb->remote_port, dst, pcb->local_port);
	if (!f || f->state != FS_ADMITTED || f->pcb) {
		tcp_abort(pcb);
		return ERR_ABRT;
	}
	f->pcb = pcb;
	tcp_arg(pcb, f);
	tcp_recv(pcb, tcp_on_recv);
	tcp_sent(pcb, tcp_on_sent);
	tcp_err(pcb, tcp_on_err);
	tcp_nagle_disable(pcb);
	if (f->kind == FLOW_TCP)
		pcb->snd_buf = GW_SND_BUF;      /* nothing written yet: see GW_SND_BUF */
	/* lwIP capped the SYN's MSS at its compiled-in 1460; the link carries
	 * what the sandbox offered (its tap0 MTU). Set before lwIP computes
	 * the initial congestion window from it, right after this callback. */
	if (f->syn_mss > pcb->mss)
		pcb->mss = (u16_t)(f->syn_mss < (f->family == 4 ? GW_MSS_V4 : GW_MSS_V6) ?
				   f->syn_mss : (f->family == 4 ? GW_MSS_V4 : GW_MSS_V6));
	if (f->need_name) {
		f->state = FS_NAMING;
		f->deadline = ev_now(gw->loop) + GW_NAME_TIMEOUT;
	} else {
		f->state = FS_OPEN;
	}
	flow_dirty(f);
	return ERR_OK;
}

/* The listening pcb for a port, created on the first SYN to it (IP_ANY_TYPE: every address). */
static bool tcp_listener(struct gw *gw, uint16_t port)
{
	struct tcp_pcb *pcb, *l;

	if (gw->tcp_listeners[port])
		return true;
	pcb = tcp_new_ip_type(IPADDR_TYPE_ANY);
	if (!pcb)
		return false;
	ip_set_option(pcb, SOF_REUSEADDR);
	if (tcp_bind(pcb, IP_ANY_TYPE, port) != ERR_OK) {
		tcp_abort(pcb);
		return false;
	}
	l = tcp_listen(pcb);
	if (!l) {
		tcp_abort(pcb);
		return false;
	}
	tcp_arg(l, gw);
	tcp_accept(l, tcp_on_accept);
	gw->tcp_listeners[port] = l;
	return true;
}

/* Drop a TIME_WAIT pcb at once, telling its flow (if any) that the pcb is gone. */
static void time_wait_drop(struct tcp_pcb *pcb)
{
	struct flow *f = pcb->callback_arg;

	if (f) {
		f->pcb = NULL;
		f->pcb_gone = true;
		f->pcb_clean = true;
		flow_dirty(f);
	}
	pcb_detach(pcb);
	tcp_abandon(pcb, 0);
}

/*
 * lwIP keeps TIME_WAIT pcbs for 2 MSL, never reuses one for a new SYN from
 * the same 4-tuple (Linux reuses ports fast), and looks pcbs up in linear
 * lists. On a virtual link with no reordering, TIME_WAIT protects nothing:
 * every TIME_WAIT pcb is dropped once per loop iteration, without a RST.
 */
static void time_wait_drop_all(void)
{
	while (tcp_tw_pcbs)
		time_wait_drop(tcp_tw_pcbs);
}

/* The pcb in list for the packet's 4-tuple, or NULL. */
static struct tcp_pcb *pcb_find(struct tcp_pcb *list, const struct gw_packet *pkt)
{
	for (struct tcp_pcb *pcb = list; pcb; pcb = pcb->next)
		if (pcb->remote_port == pkt->sport && pcb->local_port == pkt->dport &&
		    lwip_addr_is(&pcb->remote_ip, pkt->family, pkt->src) &&
		    lwip_addr_is(&pcb->local_ip, pkt->family, pkt->dst))
			return pcb;
	return NULL;
}

/* Refuse a SYN with a RST written straight to the TAP (lwIP never saw it). */
static void send_rst(struct gw *gw, const struct gw_packet *syn)
{
	uint8_t out[GW_ETH_HLEN + 60];
	size_t n = gw_build_rst(syn, gw->sandbox_mac, out, sizeof(out));

	if (n)
		tap_send(gw, out, n);
}

/* True when no new flow may be opened (said once to the daemon's log). */
static bool flows_full(struct gw *gw)
{
	if (gw->nflows < gw->max_flows && gw->nheld < GW_MAX_HELD)
		return false;
	if (!gw->flows_full_reported) {
		gw->flows_full_reported = true;
		broker_log(gw, "flow table full: new connections are refused until flows end");
	}
	return true;
}

/*
 * A TCP segment from the sandbox. Everything but a new connection's SYN
 * goes straight to lwIP (which resets what it does not know). A new SYN is
 * held and put to the broker; port 53 is ours and is admitted at once.
 */
static void tcp_segment_in(struct gw *gw, const struct gw_packet *pkt)
{
	struct tcp_pcb *tw;
	struct flow *f;

	if ((pkt->tcp_flags & (GW_TCP_SYN | GW_TCP_ACK | GW_TCP_RST)) != GW_TCP_SYN) {
		lwip_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	tw = pcb_find(tcp_tw_pcbs, pkt);
	if (tw)
		time_wait_drop(tw);
	if (pcb_find(tcp_active_pcbs, pkt)) {
		lwip_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	f = flow_find_tuple(gw, IPPROTO_TCP, pkt->family, pkt->src, pkt->sport, pkt->dst,
			    pkt->dport);
	if (f) {
		/* HELD: the broker is still deciding (the client retransmits).
		 * ADMITTED without a pcb: lwIP dropped its half-open pcb; feed again.
		 * Later states: the previous connection on this tuple is still draining. */
		if (f->state == FS_ADMITTED)
			lwip_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	if (flows_full(gw) || !tcp_listener(gw, pkt->dport)) {
		send_rst(gw, pkt);
		return;
	}
	if (pkt->dport == 53) {
		f = flow_new(gw, FLOW_DNS, pkt);
		f->state = FS_ADMITTED;
		f->deadline = ev_now(gw->loop) + GW_ADMIT_TIMEOUT;
		lwip_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	f = flow_new(gw, FLOW_TCP, pkt);
	f->syn = *pkt;
	f->syn.ip = NULL;
	f->held = xmalloc(pkt->ip_len);
	memcpy(f->held, pkt->ip, pkt->ip_len);
	f->held_len = pkt->ip_len;
	f->state = FS_HELD;
	f->deadline = ev_now(gw->loop) + GW_HELD_TIMEOUT;
	gw->nheld++;
	send_flow_open(gw, f);
}

/*
 * Upstream readable: move what lwIP's send buffer has room for
 * (backpressure), reading until the socket is drained. Draining matters for
 * short connections: a server that answers and closes has its FIN seen here
 * in the same pass, so the FIN rides on the last data segment and the
 * sandbox's client sees "reply + end" at once. Sent apart, the client
 * often closes first and keeps a TIME_WAIT port per connection, which at a
 * few thousand connections a second exhausts its ephemeral ports.
 */
static void tcp_upstream_readable(struct gw *gw, struct flow *f)
{
	bool wrote = false;

	for (int i = 0; i < 4; i++) {
		size_t space;
		ssize_t n;
		err_t e;

		if (!f->pcb || f->down_len || f->down_eof) {
			ev_io_stop(gw->loop, &f->rio);
			break;
		}
		space = tcp_sndbuf(f->pcb);
		if (tcp_sndqueuelen(f->pcb) >= TCP_SND_QUEUELEN - 8)
			space = 0;
		if (gw->down_held >= GW_DOWN_BUDGET) {
			space = 0;
			gw->down_starved = true;        /* gw_service wakes every flow later */
		}
		if (space == 0) {
			ev_io_stop(gw->loop, &f->rio);     /* tcp_on_sent starts it again */
			break;
		}
		if (space > 0xffff)
			space = 0xffff;
		n = recv(f->fd, gw->rbuf, space, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			f->reset = true;
			ev_io_stop(gw->loop, &f->rio);
			flow_dirty(f);
			return;
		}
		if (n == 0) {
			f->down_eof = true;
			ev_io_stop(gw->loop, &f->rio);
			/* Queued before tcp_output: lwIP sets FIN on the last unsent segment. */
			tcp_shutdown(f->pcb, 0, 1);
			f->down_fin = true;
			flow_dirty(f);
			break;
		}
		f->down_bytes += (uint64_t)n;
		e = tcp_write(f->pcb, gw->rbuf, (u16_t)n, TCP_WRITE_FLAG_COPY);
		if (e == ERR_OK)
			flow_held(f, n);
		if (e == ERR_MEM) {
			f->down = xmalloc((size_t)n);
			memcpy(f->down, gw->rbuf, (size_t)n);
			f->down_len = (size_t)n;
			ev_io_stop(gw->loop, &f->rio);
			break;
		} else if (e != ERR_OK) {
			f->reset = true;
			flow_dirty(f);
			return;
		}
		wrote = true;
		if ((size_t)n < space && i > 0)
			break;          /* a short read after a full one: likely drained */
	}
	if (f->pcb && (wrote || f->down_fin))
		tcp_output(f->pcb);
}

/* Write the queue upstream; 0, or -1 when the upstream socket failed. */
static int tcp_flush_up(struct gw *gw, struct flow *f)
{
	while (f->upq_len) {
		struct iovec iov[64];
		struct msghdr mh = { .msg_iov = iov };
		size_t off = f->upq_off;
		ssize_t w;

		for (struct pbuf *p = f->upq; p && mh.msg_iovlen < 64; p = p->next) {
			if (p->len > off)
				iov[mh.msg_iovlen++] = (struct iovec){
					(uint8_t *)p->payload + off, p->len - off };
			off = 0;
		}
		w = sendmsg(f->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				ev_io_start(gw->loop, &f->wio);
				return 0;
			}
			return -1;
		}
		upq_consume(f, (size_t)w);
		f->up_bytes += (uint64_t)w;
		flow_recved(f, (size_t)w);     /* the window opens only as upstream takes bytes */
	}
	ev_io_stop(gw->loop, &f->wio);
	return 0;
}

/* What the first bytes name, for NET_FLOW_NAME (see net/gw.h for the rules and why). */
int gw_name_classify(const uint8_t *p, size_t n, bool give_up, char name[DNS_NAME_BUF],
		     bool *ech)
{
	int kind;

	name[0] = '\0';
	*ech = false;
	if (n == 0)
		return give_up ? NETNAME_NONE : -1;
	switch (net_flow_read_name(p, n, name, ech, NULL)) {
	case NET_NAME_PENDING:
		if (!give_up)
			return -1;
		kind = NETNAME_MALFORMED;
		break;
	case NET_NAME_SNI:
		return NETNAME_SNI;             /* "" without server_name; ech as offered */
	case NET_NAME_HOST:
		kind = NETNAME_HOST;
		break;
	case NET_NAME_NONE:
		kind = NETNAME_NONE;
		break;
	default:
		kind = NETNAME_MALFORMED;
		break;
	}
	/* The protocol: only SNI carries the ECH flag; NONE and MALFORMED no name. */
	*ech = false;
	if (kind != NETNAME_HOST)
		name[0] = '\0';
	return kind;
}

/* Allowlist mode: name the flow from its first bytes once they say enough. */
static void tcp_name_flow(struct gw *gw, struct flow *f)
{
	size_t n = upq_peek(f, gw->rbuf, GW_NAME_PEEK);
	bool give_up = f->up_eof || f->name_timeout || n >= GW_NAME_PEEK;
	char name[DNS_NAME_BUF];
	bool ech;
	int kind = gw_name_classify(gw->rbuf, n, give_up, name, &ech);
	struct wbuf w;

	if (kind < 0)
		return;
	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, (uint8_t)kind);
	wire_put_u8(&w, ech ? 1 : 0);
	wire_put_str(&w, name);
	broker_send(gw, NET_FLOW_NAME, &w);
	f->late_name = kind == NETNAME_NONE && n == 0;
	f->state = FS_NAME_SENT;
	f->deadline = ev_now(gw->loop) + GW_HELD_TIMEOUT;
}

/*
 * Public mode: say what the flow's first bytes name, for the record. Looked
 * at once, in what the first service pass finds queued, and never waited
 * for: a policy that allows on the address must not delay a byte to name
 * it. A ClientHello split across the first writes goes unnamed (rare: the
 * sandbox's tap0 MTU fits any hello in one segment).
 */
static void tcp_observe_flow(struct gw *gw, struct flow *f)
{
	size_t n = upq_peek(f, gw->rbuf, GW_NAME_PEEK);
	char name[DNS_NAME_BUF];
	bool ech;
	int kind = gw_name_classify(gw->rbuf, n, true, name, &ech);
	struct wbuf w;

	f->observed = true;
	if ((kind != NETNAME_SNI && kind != NETNAME_HOST) || !name[0])
		return;
	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, (uint8_t)kind);
	wire_put_str(&w, name);
	broker_send(gw, NET_FLOW_SEEN, &w);
}

/* One spliced TCP flow: move bytes both ways, propagate half-closes, end it when done. */
static void tcp_service(struct gw *gw, struct flow *f)
{
	if (f->reset || (f->pcb_gone && !f->pcb_clean) ||
	    (f->pcb_gone && f->state != FS_OPEN)) {
		flow_kill(f, true);
		return;
	}
	if (f->state == FS_NAMING) {
		tcp_name_flow(gw, f);
		return;
	}
	if (f->state != FS_OPEN)
		return;
	/*
	 * A flow named NONE because it sent nothing before the name timeout
	 * (a server that speaks first) was allowed on its address and port
	 * alone. Its first bytes are still classified before any is written
	 * upstream: a payload could otherwise stay silent for 5 s and then send
	 * a ClientHello or a Host naming any host that shares the address (a
	 * CDN). Anything that names, or could name, a host ends the flow;
	 * bytes that are still undecided wait, as they would have while naming.
	 */
	if (f->late_name && f->upq_len) {
		size_t n = upq_peek(f, gw->rbuf, GW_NAME_PEEK);
		char name[DNS_NAME_BUF];
		bool ech;
		int kind = gw_name_classify(gw->rbuf, n, f->up_eof || n >= GW_NAME_PEEK, name,
					    &ech);

		if (kind >= 0 && kind != NETNAME_NONE) {
			broker_log(gw, "a flow allowed without a name (silent past the name "
				   "timeout) then sent TLS or HTTP: reset");
			flow_kill(f, true);
			return;
		}
		if (kind == NETNAME_NONE)
			f->late_name = false;
	}
	if (gw->observe && !f->observed && f->upq_len)
		tcp_observe_flow(gw, f);
	if (!f->late_name && f->upq_len && tcp_flush_up(gw, f) < 0) {
		flow_kill(f, true);
		return;
	}
	if (!f->upq_len && f->up_eof && !f->up_shut) {
		/* Both ways done (the upstream's EOF was read, so nothing is
		 * left unread that would turn close() into a RST): close()
		 * sends the FIN, and a shutdown() first would only cost a call. */
		if (f->down_fin && !f->down_len) {
			flow_kill(f, false);
			return;
		}
		shutdown(f->fd, SHUT_WR);
		f->up_shut = true;
	}
	if (!f->pcb) {                  /* closed cleanly by lwIP: finish once drained */
		if (!f->upq_len)
			flow_kill(f, false);
		return;
	}
	if (f->down_len) {
		err_t e = tcp_write(f->pcb, f->down, (u16_t)f->down_len, TCP_WRITE_FLAG_COPY);

		if (e == ERR_OK) {
			flow_held(f, (ssize_t)f->down_len);
			free(f->down);
			f->down = NULL;
			f->down_len = 0;
			tcp_output(f->pcb);
		} else if (e != ERR_MEM) {
			flow_kill(f, true);
			return;
		}
	}
	if (!f->down_len && f->down_eof && !f->down_fin) {
		tcp_shutdown(f->pcb, 0, 1);
		f->down_fin = true;
	}
	if (!f->down_eof && !f->down_len && tcp_sndbuf(f->pcb) > 0 &&
	    gw->down_held < GW_DOWN_BUDGET)
		ev_io_start(gw->loop, &f->rio);
	if (f->up_shut && f->down_fin)
		flow_kill(f, false);
}

/* ---- DNS --------------------------------------------------------------------- */

/* Send a DNS response back the way its query came. */
static void dns_reply(struct gw *gw, const struct dns_pending *q, const uint8_t *resp, size_t n)
{
	if (q->tcp) {
		struct flow *f = flow_find_id(gw, q->flow_id);
		uint8_t len[2];

		if (!f || f->state == FS_DEAD)
			return;
		if (f->dns_pending)
			f->dns_pending--;
		flow_dirty(f);
		if (!f->pcb || tcp_sndbuf(f->pcb) < n + 2)
			return;
		put16(len, (uint16_t)n);
		tcp_write(f->pcb, len, 2, TCP_WRITE_FLAG_COPY | TCP_WRITE_FLAG_MORE);
		tcp_write(f->pcb, resp, (u16_t)n, TCP_WRITE_FLAG_COPY);
		tcp_output(f->pcb);
		return;
	}
	{
		struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)n, PBUF_RAM);
		ip_addr_t to, from;

		if (!p)
			return;
		pbuf_take(p, resp, (u16_t)n);
		addr_to_lwip(&to, q->family, q->client);
		addr_to_lwip(&from, q->family, q->server);
		udp_sendto_if_src(gw->udp_bound[53], p, &to, q->cport, &gw->nif, &from);
		pbuf_free(p);
	}
}

/*
 * A query from the sandbox, to whatever address it was sent: parsed here,
 * asked of the broker by name. Returns true if it is now pending (a TCP
 * flow counts it); false when it was answered (FORMERR, SERVFAIL) or dropped.
 */
static bool dns_query_in(struct gw *gw, const struct dns_pending *how, const uint8_t *p, size_t len)
{
	struct dns_pending *slot = NULL;
	struct dns_question q;
	uint8_t resp[DNS_HEADER_LEN + DNS_NAME_BUF + 16];
	enum dns_status s = dns_query_parse(p, len, &q);
	struct wbuf w;
	size_t n;

	if (s != DNS_OK) {
		if (s == DNS_ERR_NOT_QUERY || len < 2)
			return false;
		n = dns_build_formerr(q.id, resp, sizeof(resp));
		dns_reply(gw, how, resp, n);
		return false;
	}
	for (size_t i = 0; i < GW_MAX_QUERIES && !slot; i++)
		if (!gw->queries[i].used)
			slot = &gw->queries[i];
	if (!slot) {
		n = dns_build_rcode(&q, DNS_RCODE_SERVFAIL, resp, sizeof(resp));
		if (n)
			dns_reply(gw, how, resp, n);
		return false;
	}
	*slot = *how;
	slot->used = true;
	slot->q = q;
	do
		slot->id = ++gw->next_query;
	while (slot->id == 0);
	slot->deadline = ev_now(gw->loop) + GW_DNS_TIMEOUT;
	wbuf_init(&w);
	wire_put_u32(&w, slot->id);
	wire_put_str(&w, q.name);
	wire_put_u16(&w, q.qtype);
	broker_send(gw, NET_RESOLVE, &w);
	return true;
}

/* DNS over TCP: two-byte length, then a query; several may be in flight. */
static void dns_tcp_service(struct gw *gw, struct flow *f)
{
	uint8_t buf[2 + GW_DNS_TCP_MAX];

	if (f->reset || f->pcb_gone) {
		flow_kill(f, !f->pcb_clean);
		return;
	}
	if (f->state != FS_OPEN)
		return;
	while (f->upq_len >= 2 && f->dns_pending < GW_DNS_TCP_PENDING) {
		struct dns_pending how = { .tcp = true, .flow_id = f->id };
		size_t len;

		upq_peek(f, buf, 2);
		len = get16(buf);
		if (len == 0 || len > GW_DNS_TCP_MAX) {
			flow_kill(f, true);
			return;
		}
		if (f->upq_len < 2 + len)
			break;
		upq_peek(f, buf, 2 + len);
		upq_consume(f, 2 + len);
		flow_recved(f, 2 + len);
		if (dns_query_in(gw, &how, buf + 2, len))
			f->dns_pending++;
	}
	if (f->up_eof && f->dns_pending == 0)
		flow_kill(f, false);
}

/* ---- UDP --------------------------------------------------------------------- */

static void udp_send_up(struct flow *f, const uint8_t *p, size_t len)
{
	if (send(f->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		f->up_bytes += len;
}

/* A datagram from the sandbox (lwIP's callback; the destination is the packet's). */
static void udp_on_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr,
			u16_t port)
{
	struct gw *gw = arg;
	struct gw_packet key = { .proto = IPPROTO_UDP };
	size_t len = p->tot_len;
	struct flow *f;

	key.family = addr_from_lwip(addr, key.src);
	addr_from_lwip(ip_current_dest_addr(), key.dst);
	key.sport = port;
	key.dport = pcb->local_port;
	pbuf_copy_partial(p, gw->dgram, p->tot_len, 0);
	pbuf_free(p);
	if (key.dport == 53) {
		struct dns_pending how = { .family = key.family, .cport = key.sport };

		memcpy(how.client, key.src, 16);
		memcpy(how.server, key.dst, 16);
		dns_query_in(gw, &how, gw->dgram, len);
		return;
	}
	f = flow_find_tuple(gw, IPPROTO_UDP, key.family, key.src, key.sport, key.dst, key.dport);
	if (!f) {
		if (flows_full(gw))
			return;
		f = flow_new(gw, FLOW_UDP, &key);
		f->state = FS_HELD;
		f->deadline = ev_now(gw->loop) + GW_HELD_TIMEOUT;
		gw->nheld++;
		send_flow_open(gw, f);
	}
	switch (f->state) {
	case FS_HELD:
		if (f->udpq_n < GW_UDP_QUEUE) {
			struct udp_dgram *d = xmalloc(sizeof(*d) + len);

			d->next = NULL;
			d->len = len;
			memcpy(d->data, gw->dgram, len);
			*f->udpq_tail = d;
			f->udpq_tail = &d->next;
			f->udpq_n++;
		}
		break;
	case FS_OPEN:
		udp_send_up(f, gw->dgram, len);
		f->deadline = ev_now(gw->loop) + GW_UDP_IDLE;
		break;
	default:
		break;
	}
}

/* The UDP pcb for a port, bound on the first datagram to it (every address). */
static bool udp_listener(struct gw *gw, uint16_t port)
{
	struct udp_pcb *pcb;

	if (gw->udp_bound[port])
		return true;
	pcb = udp_new_ip_type(IPADDR_TYPE_ANY);
	if (!pcb)
		return false;
	if (udp_bind(pcb, IP_ANY_TYPE, port) != ERR_OK) {
		udp_remove(pcb);
		return false;
	}
	udp_recv(pcb, udp_on_recv, gw);
	gw->udp_bound[port] = pcb;
	return true;
}

/* Datagrams from upstream go back from the address and port the sandbox sent to. */
static void udp_upstream_readable(struct gw *gw, struct flow *f)
{
	for (int i = 0; i < 16; i++) {
		ssize_t n = recv(f->fd, gw->dgram, 65507, MSG_DONTWAIT);
		ip_addr_t to, from;
		struct pbuf *p;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			continue;       /* ECONNREFUSED from an ICMP error: the flow stays */
		}
		p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)n, PBUF_RAM);
		if (!p)
			return;
		pbuf_take(p, gw->dgram, (u16_t)n);
		addr_to_lwip(&to, f->family, f->src);
		addr_to_lwip(&from, f->family, f->dst);
		udp_sendto_if_src(gw->udp_bound[f->dport], p, &to, f->sport, &gw->nif, &from);
		pbuf_free(p);
		f->down_bytes += (uint64_t)n;
		f->deadline = ev_now(gw->loop) + GW_UDP_IDLE;
	}
}

/* ---- watchers ---------------------------------------------------------------- */

static void upstream_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct flow *f = w->data;

	(void)loop;
	(void)revents;
	if (f->kind == FLOW_UDP)
		udp_upstream_readable(f->gw, f);
	else
		tcp_upstream_readable(f->gw, f);
}

/* Upstream writable again: the queue is flushed by gw_service. */
static void upstream_write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct flow *f = w->data;

	(void)revents;
	ev_io_stop(loop, w);
	flow_dirty(f);
}

/* Adopt the upstream socket the broker dialled. */
static void flow_attach_fd(struct gw *gw, struct flow *f, int fd)
{
	(void)gw;
	f->fd = fd;
	ev_io_init(&f->rio, upstream_read_cb, fd, EV_READ);
	ev_io_init(&f->wio, upstream_write_cb, fd, EV_WRITE);
	f->rio.data = f->wio.data = f;
}

/* A frame from the sandbox: capture, filter, answer ARP/ND, or give it to lwIP. */
static void frame_in(struct gw *gw, uint8_t *buf, size_t len)
{
	struct gw_packet pkt;
	enum gw_verdict v;
	uint8_t out[GW_ETH_HLEN + 72];

	if (len > GW_VNET_HLEN)
		capture(gw, buf + GW_VNET_HLEN, len - GW_VNET_HLEN);
	v = gw_filter_vnet(buf, len, &pkt);
	if (v != GW_PASS && v != GW_ARP_REQUEST && v != GW_NEIGHBOUR_SOLICIT) {
		gw->dropped[v]++;
		return;
	}
	/* A partial UDP checksum is completed here (lwIP checks UDP's); a
	 * partial TCP one needs nothing: lwIP's TCP check is skipped (see
	 * ip_chksum_pseudo). The field already holds the pseudo-header sum. */
	if (pkt.csum_partial && pkt.proto == IPPROTO_UDP) {
		uint8_t *l4 = (uint8_t *)pkt.ip + pkt.l4_off;
		uint16_t c = gw_checksum(l4, pkt.ip_len - pkt.l4_off, 0);

		put16(l4 + 6, c ? c : 0xffff);
	}
	if (!(pkt.src_mac[0] & 1))
		memcpy(gw->sandbox_mac, pkt.src_mac, 6);
	if (v == GW_ARP_REQUEST) {
		tap_send(gw, out, build_arp_reply(&pkt, out));
		return;
	}
	if (v == GW_NEIGHBOUR_SOLICIT) {
		tap_send(gw, out, build_neighbour_advert(&pkt, out));
		return;
	}
	if (pkt.proto == IPPROTO_TCP) {
		tcp_segment_in(gw, &pkt);
		return;
	}
	if (pkt.proto == IPPROTO_UDP && !udp_listener(gw, pkt.dport))
		return;
	lwip_feed(gw, pkt.family, pkt.ip, pkt.ip_len, pkt.dst);
}

/* TAP readable: a batch of frames, servicing the dirty flows every few. */
static void tap_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct gw *gw = w->data;

	size_t since = 0;

	(void)revents;
	for (int i = 0; i < GW_TAP_BATCH; i++) {
		ssize_t n = read(gw->tap_fd, gw->tbuf, sizeof(gw->tbuf));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* The sandbox's namespace is gone; the broker will close us. */
			ev_io_stop(loop, w);
			gw->tap_dead = true;
			return;
		}
		frame_in(gw, gw->tbuf, (size_t)n);
		/* Flush upstream (and reopen lwIP's window) every few frames or
		 * every 64 KiB, not once per batch: waiting for the batch end
		 * stalls the sandbox's sender once per window. */
		since += (size_t)n;
		if (i % GW_SERVICE_EVERY == GW_SERVICE_EVERY - 1 || since >= GW_SERVICE_BYTES) {
			gw_service(gw);
			since = 0;
		}
	}
}

/* ---- the broker's messages --------------------------------------------------- */

static bool rbuf_get_addr(struct rbuf *r, struct net_addr *a)
{
	uint8_t fam = wire_get_u8(r), b[16];

	for (size_t i = 0; i < 16; i++)
		b[i] = wire_get_u8(r);
	if (fam == 4)
		net_addr_set_v4(a, b);
	else if (fam == 6)
		net_addr_set_v6(a, b);
	else
		return false;
	return !r->failed;
}

/* NET_VERDICT: refuse (RST / drop), admit for naming, or splice to the socket attached. */
static int on_verdict(struct gw *gw, struct msg *m)
{
	struct rbuf r;
	uint32_t id;
	uint8_t v;
	char *layer, *reason;
	struct flow *f;
	int fd = -1;

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	v = wire_get_u8(&r);
	layer = wire_get_str(&r, 256);
	reason = wire_get_str(&r, 4096);
	free(layer);
	free(reason);
	if (!wire_done(&r) || v > NETV_NEED_NAME || (v == NETV_DIALLED) != (m->nfds == 1))
		return -1;
	f = flow_find_id(gw, id);
	if (!f)
		return 0;           /* the flow ended meanwhile; msg_free closes the socket */
	if (v == NETV_DIALLED) {
		fd = m->fds[0];
		m->fds[0] = -1;
	}
	if (f->state == FS_HELD) {
		gw->nheld--;
		f->state = FS_ADMITTED;     /* provisional: each branch below sets the real one */
		if (f->kind == FLOW_UDP) {
			if (v != NETV_DIALLED) {
				f->state = FS_REFUSED;
				f->deadline = ev_now(gw->loop) + GW_UDP_REFUSED_KEEP;
				while (f->udpq) {
					struct udp_dgram *d = f->udpq;

					f->udpq = d->next;
					free(d);
				}
				f->udpq_tail = &f->udpq;
				f->udpq_n = 0;
				return 0;
			}
			flow_attach_fd(gw, f, fd);
			f->state = FS_OPEN;
			f->deadline = ev_now(gw->loop) + GW_UDP_IDLE;
			while (f->udpq) {
				struct udp_dgram *d = f->udpq;

				f->udpq = d->next;
				udp_send_up(f, d->data, d->len);
				free(d);
			}
			f->udpq_tail = &f->udpq;
			f->udpq_n = 0;
			ev_io_start(gw->loop, &f->rio);
			return 0;
		}
		if (v == NETV_REFUSED) {
			send_rst(gw, &f->syn);
			flow_kill(f, false);
			return 0;
		}
		if (fd >= 0)
			flow_attach_fd(gw, f, fd);
		f->need_name = v == NETV_NEED_NAME;
		f->deadline = ev_now(gw->loop) + GW_ADMIT_TIMEOUT;
		lwip_feed(gw, f->family, f->held, f->held_len, f->dst);
		free(f->held);
		f->held = NULL;
		return 0;
	}
	if (f->state == FS_NAME_SENT && v == NETV_DIALLED) {
		flow_attach_fd(gw, f, fd);
		f->state = FS_OPEN;
		flow_dirty(f);
		return 0;
	}
	if (f->state == FS_NAME_SENT && v == NETV_REFUSED) {
		flow_kill(f, true);
		return 0;
	}
	if (fd >= 0)
		close(fd);
	return -1;                  /* a verdict the flow was not waiting for */
}

/* NET_ANSWER: build the response from the broker's fields (never from upstream bytes). */
static int on_answer(struct gw *gw, struct msg *m)
{
	struct net_addr addrs[DNS_ANSWER_MAX];
	uint8_t resp[DNS_EDNS_MAX];
	struct dns_pending *q = NULL;
	struct rbuf r;
	uint32_t id, ttl, n;
	uint8_t rcode;
	size_t len;

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	rcode = wire_get_u8(&r);
	ttl = wire_get_u32(&r);
	n = wire_get_u32(&r);
	if (n > DNS_ANSWER_MAX)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (!rbuf_get_addr(&r, &addrs[i]))
			return -1;
	if (!wire_done(&r) || rcode > 15)
		return -1;
	for (size_t i = 0; i < GW_MAX_QUERIES && !q; i++)
		if (gw->queries[i].used && gw->queries[i].id == id)
			q = &gw->queries[i];
	if (!q)
		return 0;               /* timed out and answered SERVFAIL already */
	if (rcode != DNS_RCODE_NOERROR)
		len = dns_build_rcode(&q->q, rcode, resp, sizeof(resp));
	else
		len = dns_build_answer(&q->q, addrs, n, ttl, resp, sizeof(resp));
	if (len)
		dns_reply(gw, q, resp, len);
	q->used = false;
	return 0;
}

/*
 * The broker's EOF ends the session: the final totals of every flow still
 * open, as its FLOW_CLOSE (the broker waits for them, broker_finish), so
 * the last third of a second of traffic is counted too.
 */
static void gw_report_final(struct gw *gw)
{
	for (struct flow *f = gw->all; f && gw->exit_status == 0; f = f->next) {
		if (f->opened && f->state != FS_DEAD) {
			send_flow_counts(gw, f, NET_FLOW_CLOSE);
			f->opened = false;
		}
	}
}

/* Broker readable: every whole message, in order. */
static void broker_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct gw *gw = w->data;

	(void)revents;
	for (;;) {
		struct msg m;
		char *err = NULL;
		int r = msg_read_packet(gw->broker_fd, &m, &err), bad = 0;

		if (r == 0)
			return;
		if (r < 0) {
			/* EOF: the session is over. A protocol violation: nothing the
			 * broker says can be trusted any more; end, and be recorded. */
			if (err)
				fprintf(stderr, "boxy-net: broker: %s\n", err);
			else
				gw_report_final(gw);
			gw->exit_status = err ? 1 : 0;
			free(err);
			ev_break(loop, EVBREAK_ALL);
			return;
		}
		switch (m.type) {
		case NET_VERDICT:
			bad = on_verdict(gw, &m);
			break;
		case NET_ANSWER:
			bad = on_answer(gw, &m);
			break;
		default:
			bad = -1;
		}
		msg_free(&m);
		if (bad) {
			fprintf(stderr, "boxy-net: malformed or unexpected message 0x%04x "
				"from the broker\n", m.type);
			gw->exit_status = 1;
			ev_break(loop, EVBREAK_ALL);
			return;
		}
	}
}

/* ---- the loop's housekeeping ------------------------------------------------- */

/* Service every dirty flow, then free the flows that ended. */
static void gw_service(struct gw *gw)
{
	/* Back under the budget with half of it to spare: every flow may read again. */
	if (gw->down_starved && gw->down_held < GW_DOWN_BUDGET / 2) {
		gw->down_starved = false;
		for (struct flow *f = gw->all; f; f = f->next)
			if (f->kind == FLOW_TCP)
				flow_dirty(f);
	}
	while (gw->dirty) {
		struct flow *list = gw->dirty;

		gw->dirty = NULL;
		while (list) {
			struct flow *f = list;

			list = f->next_dirty;
			f->dirty = false;
			if (f->state == FS_DEAD)
				continue;
			if (f->kind == FLOW_DNS)
				dns_tcp_service(gw, f);
			else if (f->kind == FLOW_TCP)
				tcp_service(gw, f);
		}
	}
	while (gw->dead) {
		struct flow *f = gw->dead;

		gw->dead = f->next;
		free(f);
	}
}

/*
 * Before the loop sleeps: lwIP's timers, TIME_WAIT pcbs, the dirty flows;
 * then sleep no longer than lwIP's next timer.
 */
static void prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct gw *gw = w->data;
	u32_t ms;

	(void)revents;
	sys_check_timeouts();
	time_wait_drop_all();
	gw_service(gw);
	ms = sys_timeouts_sleeptime();
	ev_timer_stop(loop, &gw->lwip_timer);
	if (ms != SYS_TIMEOUTS_SLEEPTIME_INFINITE) {
		ev_timer_set(&gw->lwip_timer, ms / 1000.0, 0.);
		ev_timer_start(loop, &gw->lwip_timer);
	}
}

/* lwIP's next timer is due. */
static void lwip_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;      /* waking up is the point: prepare_cb runs the timers */
}

/* About three times a second: byte counters, and the flows and queries that timed out. */
static void stats_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct gw *gw = w->data;
	ev_tstamp now = ev_now(loop);
	struct flow *next;

	(void)revents;
	for (struct flow *f = gw->all; f; f = next) {
		next = f->next;
		if (f->opened && (f->up_bytes != f->rep_up || f->down_bytes != f->rep_down))
			send_flow_counts(gw, f, NET_FLOW_STATS);
		if (now < f->deadline)
			continue;
		switch (f->state) {
		case FS_NAMING:
			f->name_timeout = true;
			flow_dirty(f);
			break;
		case FS_HELD: case FS_REFUSED:
			flow_kill(f, false);
			break;
		case FS_ADMITTED: case FS_NAME_SENT:
			flow_kill(f, true);
			break;
		case FS_OPEN:
			if (f->kind == FLOW_UDP)
				flow_kill(f, false);
			break;
		case FS_DEAD:
			break;
		}
	}
	for (size_t i = 0; i < GW_MAX_QUERIES; i++) {
		struct dns_pending *q = &gw->queries[i];
		uint8_t resp[DNS_HEADER_LEN + DNS_NAME_BUF + 16];
		size_t n;

		if (!q->used || now < q->deadline)
			continue;
		q->used = false;
		n = dns_build_rcode(&q->q, DNS_RCODE_SERVFAIL, resp, sizeof(resp));
		if (n)
			dns_reply(gw, q, resp, n);
	}
}

/* ---- setup ------------------------------------------------------------------- */

/*
 * Every dialled flow holds one descriptor, which arrives with its verdict by
 * SCM_RIGHTS. At the usual soft limit of 1024 the kernel drops the
 * descriptor of the 1018th and flags the message MSG_CTRUNC, which boxy-net
 * must treat as a broken broker and exit: a payload holding a thousand
 * connections open ended its own session's network. So raise the soft
 * limit to what the flow table needs (the hard limit permitting; setrlimit
 * is not allowed after the lockdown), and admit only as many flows as
 * there are descriptors for.
 */
static size_t gw_fd_flows(void)
{
	const rlim_t want = GW_MAX_FLOWS + GW_FD_RESERVE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024 - GW_FD_RESERVE;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return 1024 - GW_FD_RESERVE;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return GW_MAX_FLOWS;
	return rl.rlim_cur > 2 * GW_FD_RESERVE ? (size_t)rl.rlim_cur - GW_FD_RESERVE :
		GW_FD_RESERVE;
}

void gw_set_observe(struct gw *gw, bool on)
{
	gw->observe = on;
}

struct gw *gw_create(struct ev_loop *loop, int broker_fd, int tap_fd, struct net_pcap *pcap)
{
	struct gw *gw = xcalloc(1, sizeof(*gw));
	ip4_addr_t ip, mask, none;
	ip6_addr_t a6;

	gw->loop = loop;
	gw->broker_fd = broker_fd;
	gw->tap_fd = tap_fd;
	gw->pcap = pcap;
	memset(gw->sandbox_mac, 0xff, 6);   /* broadcast until the sandbox's first frame */
	gw->max_flows = gw_fd_flows();

	lwip_init();
	memcpy(&ip.addr, gateway4, 4);
	IP4_ADDR(&mask, 255, 255, 255, 0);
	ip4_addr_set_zero(&none);
	if (!netif_add(&gw->nif, &ip, &mask, &none, gw, netif_setup, ip_input))
		fatal("lwIP refused the gateway's interface");
	gw->nif.mtu6 = GW_MTU;
	netif_set_default(&gw->nif);
	netif_set_up(&gw->nif);
	netif_set_link_up(&gw->nif);
	/* Slot 0: the gateway's own IPv6 address; slot 1: the swap slot. Both set
	 * PREFERRED directly, which skips duplicate address detection. */
	memcpy(a6.addr, gateway6, 16);
	ip6_addr_clear_zone(&a6);
	netif_ip6_addr_set(&gw->nif, 0, &a6);
	netif_ip6_addr_set_state(&gw->nif, 0, IP6_ADDR_PREFERRED);
	memcpy(a6.addr, idle6, 16);
	netif_ip6_addr_set(&gw->nif, 1, &a6);
	netif_ip6_addr_set_state(&gw->nif, 1, IP6_ADDR_PREFERRED);

	ev_io_init(&gw->tap_io, tap_cb, tap_fd, EV_READ);
	ev_io_init(&gw->broker_io, broker_cb, broker_fd, EV_READ);
	ev_timer_init(&gw->lwip_timer, lwip_timer_cb, 0., 0.);
	ev_timer_init(&gw->stats_timer, stats_cb, GW_STATS_PERIOD, GW_STATS_PERIOD);
	ev_prepare_init(&gw->prepare, prepare_cb);
	gw->tap_io.data = gw->broker_io.data = gw->stats_timer.data = gw->prepare.data = gw;
	return gw;
}

/* Start the watchers (the process is locked down by now). */
void gw_start(struct gw *gw)
{
	ev_io_start(gw->loop, &gw->broker_io);
	ev_io_start(gw->loop, &gw->tap_io);
	ev_timer_start(gw->loop, &gw->stats_timer);
	ev_prepare_start(gw->loop, &gw->prepare);
}

/* One frame, as if read from the TAP (fuzzing and tests). */
void gw_frame_input(struct gw *gw, const uint8_t *buf, size_t len)
{
	if (len > sizeof(gw->tbuf))
		return;
	memcpy(gw->tbuf, buf, len);
	frame_in(gw, gw->tbuf, len);
}

/* What prepare_cb does, without the loop (fuzzing and tests). */
void gw_housekeeping(struct gw *gw)
{
	sys_check_timeouts();
	time_wait_drop_all();
	gw_service(gw);
}

/* 0 when the broker closed, 1 after a broker protocol error. */
int gw_exit_status(const struct gw *gw)
{
	return gw->exit_status;
}
