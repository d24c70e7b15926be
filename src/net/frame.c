/*
 * net/frame.c — boxy-net's pure frame code: the ingress filter every frame
 * from the sandbox passes first (gw_filter_vnet, gw_filter_frame), the
 * checksums, and the frames the gateway builds itself (the RST that refuses
 * a held SYN, ARP replies, neighbour advertisements, the SYN-ACK's MSS).
 *
 * Plain functions over bytes: no lwIP, no sockets, no state, so
 * tests/unit/test-net-gw.c checks them row by row and tests/fuzz/fuzz-frame.c
 * drives them with hostile frames. Everything lwIP would act on that the
 * sandbox could abuse is refused here (NETWORK-NOTES.md: one src == dst SYN
 * aborted lwIP).
 */
#include <config.h>

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/bytes.h"
#include "net/gw.h"

/* ---- addresses --------------------------------------------------------------- */

static const uint8_t sandbox4[4] = { 10, 0, 2, 15 };
static const uint8_t sandbox6[16] = { 0xfd, 0x00, 0xb0, 0xc5, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 0x15 };
const uint8_t gw_gateway4[4] = { 10, 0, 2, 2 };
const uint8_t gw_gateway6[16] = { 0xfd, 0x00, 0xb0, 0xc5, 0, 0, 0, 0,
				  0, 0, 0, 0, 0, 0, 0, 0x02 };
static const uint8_t gw_mac[6] = GW_MAC;

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
		if (l4[0] == 8 && l4[1] == 0 && memcmp(pkt->dst, gw_gateway4, 4) == 0)
			return GW_PASS;
		return GW_DROP_ICMP;
	case IPPROTO_ICMPV6:
		if (n < 8)
			return GW_DROP_SHORT;
		if (l4[0] == 128 && l4[1] == 0 && memcmp(pkt->dst, gw_gateway6, 16) == 0)
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

/* Little-endian 16 bits (the header's order on every architecture boxy builds for, see TUNSETVNETLE). */
static uint16_t get16le(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* The virtio-net header, then the frame behind it (the rules are in net/gw.h). */
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
void gw_eth_header(uint8_t *out, const uint8_t dst_mac[6], uint16_t type)
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
/* See net/gw.h: the pseudo-header's sum in the TCP checksum field; the TCP header's offset. */
size_t gw_tcp_checksum_partial(uint8_t *ip, size_t len)
{
	size_t hl;
	uint32_t sum;

	if (len < 20)
		return 0;
	if ((ip[0] >> 4) == 4) {
		hl = (size_t)(ip[0] & 0x0f) * 4;
		if (hl < 20 || ip[9] != IPPROTO_TCP || get16(ip + 2) != len || len < hl + 20)
			return 0;
		sum = pseudo_sum(4, ip + 12, ip + 16, IPPROTO_TCP, len - hl);
	} else if ((ip[0] >> 4) == 6) {
		hl = 40;
		if (len < hl + 20 || ip[6] != IPPROTO_TCP || (size_t)get16(ip + 4) + 40 != len)
			return 0;
		sum = pseudo_sum(6, ip + 8, ip + 24, IPPROTO_TCP, len - hl);
	} else {
		return 0;
	}
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + hl + 16, (uint16_t)sum);
	return hl;
}

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
	gw_eth_header(out, sandbox_mac, syn->family == 4 ? GW_ETH_IPV4 : GW_ETH_IPV6);
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

/* The MSS option's value, or 0. */
uint16_t gw_tcp_mss_option(const uint8_t *tcp, size_t len)
{
	const uint8_t *m = tcp_mss_field(tcp, len);

	return m ? get16(m) : 0;
}

/* A SYN-ACK to the sandbox offers the link's MSS, not lwIP's 1460 (see net/gw.h). */
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
size_t gw_build_arp_reply(const struct gw_packet *req, uint8_t *out)
{
	uint8_t *a = out + GW_ETH_HLEN;

	gw_eth_header(out, req->src_mac, GW_ETH_ARP);
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
size_t gw_build_neighbour_advert(const struct gw_packet *ns, uint8_t *out)
{
	uint8_t *icmp = out + GW_ETH_HLEN + 40;

	gw_eth_header(out, ns->src_mac, GW_ETH_IPV6);
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
