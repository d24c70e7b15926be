/*
 * test-net-gw.c — boxy-net's pure parts: the ingress filter in front of
 * lwIP (every frame the sandbox can send that must never reach the stack),
 * the RST that refuses a held SYN, the checksum, and the pcap writer.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <openssl/x509v3.h>

#include "common/tlsca.h"
#include "net/flow.h"
#include "net/gw.h"
#include "net/http-gate.h"
#include "net/pcap.h"
#include "net/tls.h"
#include "proto/msg.h"
#include "proto/netproto.h"
#include "proto/wire.h"
#include "proto/netproto.h"
#include "common/util.h"

/* A sanitizer build does without leak checks in this test, whose children lock
 * themselves down: common/no-leak-check.c. */

static const uint8_t sb_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t gw_mac_c[6] = GW_MAC;

/* ---- frame builders ---------------------------------------------------------- */

static size_t eth(uint8_t *f, uint16_t type)
{
	memcpy(f, gw_mac_c, 6);
	memcpy(f + 6, sb_mac, 6);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
	return 14;
}

/* An L4 header for proto: TCP SYN, UDP with 4 bytes, or ICMP echo request. */
static size_t l4(uint8_t *p, uint8_t proto, bool v6)
{
	switch (proto) {
	case 6:
		memset(p, 0, 20);
		p[0] = 0x9c; p[1] = 0x40;       /* 40000 */
		p[2] = 0x01; p[3] = 0xbb;       /* 443 */
		p[4] = 0; p[5] = 0; p[6] = 0x03; p[7] = 0xe8;    /* seq 1000 */
		p[12] = 5 << 4;
		p[13] = GW_TCP_SYN;
		return 20;
	case 17:
		memset(p, 0, 12);
		p[0] = 0x9c; p[1] = 0x41;
		p[3] = 53;
		p[5] = 12;
		return 12;
	default:
		memset(p, 0, 8);
		p[0] = v6 ? 128 : 8;
		return 8;
	}
}

static size_t ipv4(uint8_t *f, const char *src, const char *dst, uint8_t proto)
{
	size_t off = eth(f, GW_ETH_IPV4), n;
	uint8_t *ip = f + off;

	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[8] = 64;
	ip[9] = proto;
	inet_pton(AF_INET, src, ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	n = l4(ip + 20, proto, false);
	ip[2] = (uint8_t)((20 + n) >> 8);
	ip[3] = (uint8_t)(20 + n);
	return off + 20 + n;
}

static size_t ipv6(uint8_t *f, const char *src, const char *dst, uint8_t proto)
{
	size_t off = eth(f, GW_ETH_IPV6), n;
	uint8_t *ip = f + off;

	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[6] = proto;
	ip[7] = 64;
	inet_pton(AF_INET6, src, ip + 8);
	inet_pton(AF_INET6, dst, ip + 24);
	n = l4(ip + 40, proto, true);
	ip[4] = (uint8_t)(n >> 8);
	ip[5] = (uint8_t)n;
	return off + 40 + n;
}

static size_t arp(uint8_t *f, uint16_t op, const char *sender, const char *target)
{
	size_t off = eth(f, GW_ETH_ARP);
	uint8_t *a = f + off;

	memset(a, 0, 28);
	a[1] = 1;
	a[2] = 0x08;
	a[4] = 6;
	a[5] = 4;
	a[7] = (uint8_t)op;
	memcpy(a + 8, sb_mac, 6);
	inet_pton(AF_INET, sender, a + 14);
	inet_pton(AF_INET, target, a + 24);
	return off + 28;
}

static size_t ns(uint8_t *f, const char *src, const char *target, uint8_t hop)
{
	size_t off = eth(f, GW_ETH_IPV6);
	uint8_t *ip = f + off, *icmp = ip + 40;

	memset(ip, 0, 40 + 24);
	ip[0] = 0x60;
	ip[5] = 24;
	ip[6] = 58;
	ip[7] = hop;
	inet_pton(AF_INET6, src, ip + 8);
	inet_pton(AF_INET6, "ff02::1:ff00:2", ip + 24);
	icmp[0] = 135;
	inet_pton(AF_INET6, target, icmp + 8);
	return off + 40 + 24;
}

/* ---- the filter table ---------------------------------------------------------- */

enum mutation {
	M_NONE,
	M_FRAGMENT,         /* IPv4 MF flag */
	M_OPTIONS,          /* IHL 6 */
	M_TOTLEN_LONG,      /* total length past the frame */
	M_TCP_DOFF,         /* data offset past the segment */
	M_SPORT_ZERO,
	M_UDP_LEN,          /* UDP length past the datagram */
	M_VLAN,             /* 802.1Q ethertype */
	M_RUNT,             /* 10 bytes */
	M_V6_EXT,           /* next header 44 (fragment) */
	M_V6_HBH,           /* next header 0 (hop-by-hop) */
};

struct filter_row {
	const char *what;
	char kind;          /* '4', '6', 'a' (ARP), 'n' (neighbour solicitation) */
	const char *src, *dst;
	int proto_or_op;    /* IP protocol; ARP op; NS hop limit */
	enum mutation m;
	enum gw_verdict want;
};

static const struct filter_row filter_rows[] = {
	{ "TCP SYN to a public address passes", '4', "10.0.2.15", "93.184.216.34", 6, M_NONE, GW_PASS },
	{ "UDP to a public address passes", '4', "10.0.2.15", "8.8.8.8", 17, M_NONE, GW_PASS },
	{ "TCP to the gateway passes (the broker refuses it)", '4', "10.0.2.15", "10.0.2.2", 6, M_NONE, GW_PASS },
	{ "TCP to 240.0.0.1 passes (the broker refuses it)", '4', "10.0.2.15", "240.0.0.1", 6, M_NONE, GW_PASS },
	{ "spoofed source in the subnet", '4', "10.0.2.99", "93.184.216.34", 6, M_NONE, GW_DROP_SPOOFED },
	{ "spoofed source: the gateway's own address", '4', "10.0.2.2", "10.0.2.2", 6, M_NONE, GW_DROP_SPOOFED },
	{ "unspecified source", '4', "0.0.0.0", "93.184.216.34", 17, M_NONE, GW_DROP_SPOOFED },
	{ "src == dst (the SYN that aborted lwIP)", '4', "10.0.2.15", "10.0.2.15", 6, M_NONE, GW_DROP_SELF },
	{ "loopback destination", '4', "10.0.2.15", "127.0.0.1", 6, M_NONE, GW_DROP_DST_LOOPBACK },
	{ "loopback destination, not .1", '4', "10.0.2.15", "127.8.9.10", 17, M_NONE, GW_DROP_DST_LOOPBACK },
	{ "unspecified destination", '4', "10.0.2.15", "0.0.0.0", 6, M_NONE, GW_DROP_DST_UNSPECIFIED },
	{ "this-network destination", '4', "10.0.2.15", "0.1.2.3", 17, M_NONE, GW_DROP_DST_UNSPECIFIED },
	{ "multicast destination", '4', "10.0.2.15", "224.0.0.251", 17, M_NONE, GW_DROP_DST_MULTICAST },
	{ "multicast destination, top", '4', "10.0.2.15", "239.255.255.250", 17, M_NONE, GW_DROP_DST_MULTICAST },
	{ "limited broadcast", '4', "10.0.2.15", "255.255.255.255", 17, M_NONE, GW_DROP_DST_BROADCAST },
	{ "subnet broadcast .255", '4', "10.0.2.15", "10.0.2.255", 6, M_NONE, GW_DROP_DST_BROADCAST },
	{ "subnet network address .0", '4', "10.0.2.15", "10.0.2.0", 17, M_NONE, GW_DROP_DST_BROADCAST },
	{ "a .255 in another /24 is unicast to us", '4', "10.0.2.15", "198.51.100.255", 6, M_NONE, GW_PASS },
	{ "ICMP echo to the gateway passes", '4', "10.0.2.15", "10.0.2.2", 1, M_NONE, GW_PASS },
	{ "ICMP echo anywhere else is dropped", '4', "10.0.2.15", "1.1.1.1", 1, M_NONE, GW_DROP_ICMP },
	{ "GRE is not TCP or UDP", '4', "10.0.2.15", "93.184.216.34", 47, M_NONE, GW_DROP_PROTOCOL },
	{ "IPv4 fragment", '4', "10.0.2.15", "93.184.216.34", 17, M_FRAGMENT, GW_DROP_FRAGMENT },
	{ "IPv4 options", '4', "10.0.2.15", "93.184.216.34", 6, M_OPTIONS, GW_DROP_MALFORMED },
	{ "total length past the frame", '4', "10.0.2.15", "93.184.216.34", 6, M_TOTLEN_LONG, GW_DROP_SHORT },
	{ "TCP data offset past the segment", '4', "10.0.2.15", "93.184.216.34", 6, M_TCP_DOFF, GW_DROP_MALFORMED },
	{ "TCP source port 0", '4', "10.0.2.15", "93.184.216.34", 6, M_SPORT_ZERO, GW_DROP_MALFORMED },
	{ "UDP length past the datagram", '4', "10.0.2.15", "8.8.8.8", 17, M_UDP_LEN, GW_DROP_MALFORMED },
	{ "VLAN-tagged frame", '4', "10.0.2.15", "93.184.216.34", 6, M_VLAN, GW_DROP_ETHERTYPE },
	{ "runt frame", '4', "10.0.2.15", "93.184.216.34", 6, M_RUNT, GW_DROP_SHORT },

	{ "IPv6 TCP to a public address passes", '6', "fd00:b0c5::15", "2001:db8::1", 6, M_NONE, GW_PASS },
	{ "IPv6 UDP passes", '6', "fd00:b0c5::15", "2606:4700::1111", 17, M_NONE, GW_PASS },
	{ "IPv6 to a mapped address (only hand-made frames have one)", '6', "fd00:b0c5::15", "::ffff:10.0.0.1", 6, M_NONE, GW_DROP_DST_MAPPED },
	{ "IPv6 to NAT64 passes (the broker decodes it)", '6', "fd00:b0c5::15", "64:ff9b::a00:1", 6, M_NONE, GW_PASS },
	{ "IPv6 spoofed source", '6', "fd00:b0c5::99", "2001:db8::1", 6, M_NONE, GW_DROP_SPOOFED },
	{ "IPv6 link-local source for TCP", '6', "fe80::1", "2001:db8::1", 6, M_NONE, GW_DROP_SPOOFED },
	{ "IPv6 src == dst", '6', "fd00:b0c5::15", "fd00:b0c5::15", 6, M_NONE, GW_DROP_SELF },
	{ "IPv6 loopback destination", '6', "fd00:b0c5::15", "::1", 6, M_NONE, GW_DROP_DST_LOOPBACK },
	{ "IPv6 unspecified destination", '6', "fd00:b0c5::15", "::", 17, M_NONE, GW_DROP_DST_UNSPECIFIED },
	{ "IPv6 multicast destination", '6', "fd00:b0c5::15", "ff02::fb", 17, M_NONE, GW_DROP_DST_MULTICAST },
	{ "IPv6 link-local destination", '6', "fd00:b0c5::15", "fe80::2", 6, M_NONE, GW_DROP_DST_LINK_LOCAL },
	{ "IPv6 echo to the gateway passes", '6', "fd00:b0c5::15", "fd00:b0c5::2", 58, M_NONE, GW_PASS },
	{ "IPv6 echo elsewhere is dropped", '6', "fd00:b0c5::15", "2001:db8::1", 58, M_NONE, GW_DROP_ICMP },
	{ "IPv6 fragment header", '6', "fd00:b0c5::15", "2001:db8::1", 6, M_V6_EXT, GW_DROP_FRAGMENT },
	{ "IPv6 hop-by-hop header", '6', "fd00:b0c5::15", "2001:db8::1", 6, M_V6_HBH, GW_DROP_FRAGMENT },

	{ "ARP for the gateway is answered", 'a', "10.0.2.15", "10.0.2.2", 1, M_NONE, GW_ARP_REQUEST },
	{ "ARP for any other on-link address is answered", 'a', "10.0.2.15", "10.0.2.77", 1, M_NONE, GW_ARP_REQUEST },
	{ "ARP for the sandbox itself is not", 'a', "10.0.2.15", "10.0.2.15", 1, M_NONE, GW_DROP_ARP },
	{ "ARP probe (sender 0.0.0.0) is not", 'a', "0.0.0.0", "10.0.2.15", 1, M_NONE, GW_DROP_ARP },
	{ "ARP from a spoofed sender", 'a', "10.0.2.16", "10.0.2.2", 1, M_NONE, GW_DROP_SPOOFED },
	{ "ARP reply is not answered", 'a', "10.0.2.15", "10.0.2.2", 2, M_NONE, GW_DROP_ARP },

	{ "NS for the gateway is answered", 'n', "fd00:b0c5::15", "fd00:b0c5::2", 255, M_NONE, GW_NEIGHBOUR_SOLICIT },
	{ "NS from the sandbox's link-local address", 'n', "fe80::5054:ff:fe12:3456", "fe80::2", 255, M_NONE, GW_NEIGHBOUR_SOLICIT },
	{ "NS for the sandbox's own address", 'n', "fd00:b0c5::15", "fd00:b0c5::15", 255, M_NONE, GW_DROP_ARP },
	{ "NS for DAD (source ::)", 'n', "::", "fd00:b0c5::2", 255, M_NONE, GW_DROP_ARP },
	{ "NS from a spoofed global source", 'n', "2001:db8::66", "fd00:b0c5::2", 255, M_NONE, GW_DROP_SPOOFED },
	{ "NS with hop limit below 255 (routed)", 'n', "fd00:b0c5::15", "fd00:b0c5::2", 64, M_NONE, GW_DROP_MALFORMED },
};

static size_t build_row(const struct filter_row *r, uint8_t *f)
{
	size_t n;

	switch (r->kind) {
	case '4': n = ipv4(f, r->src, r->dst, (uint8_t)r->proto_or_op); break;
	case '6': n = ipv6(f, r->src, r->dst, (uint8_t)r->proto_or_op); break;
	case 'a': return arp(f, (uint16_t)r->proto_or_op, r->src, r->dst);
	default: return ns(f, r->src, r->dst, (uint8_t)r->proto_or_op);
	}
	switch (r->m) {
	case M_FRAGMENT: f[14 + 6] |= 0x20; break;
	case M_OPTIONS: f[14] = 0x46; break;
	case M_TOTLEN_LONG: f[14 + 3] += 4; break;
	case M_TCP_DOFF: f[14 + 20 + 12] = 15 << 4; break;
	case M_SPORT_ZERO: f[14 + 20] = f[14 + 20 + 1] = 0; break;
	case M_UDP_LEN: f[14 + 20 + 5] = 200; break;
	case M_VLAN: f[12] = 0x81; f[13] = 0x00; break;
	case M_RUNT: n = 10; break;
	case M_V6_EXT: f[14 + 6] = 44; break;
	case M_V6_HBH: f[14 + 6] = 0; break;
	case M_NONE: break;
	}
	return n;
}

static void test_filter_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(filter_rows) / sizeof(filter_rows[0]); i++) {
		const struct filter_row *r = &filter_rows[i];
		uint8_t f[256];
		struct gw_packet pkt;
		size_t n = build_row(r, f);
		enum gw_verdict got = gw_filter_frame(f, n, &pkt);

		if (got != r->want)
			fail_msg("%s: got \"%s\", want \"%s\"", r->what, gw_verdict_words(got),
				 gw_verdict_words(r->want));
	}
}

/* The virtio-net header in front of every TAP read: what is taken, what is refused. */
struct vnet_row {
	const char *what;
	char family;            /* '4' or '6' */
	uint8_t proto;
	uint8_t flags, gso;
	uint16_t hdr_len, gso_size, cs_start, cs_off;
	size_t cut;             /* bytes of the read kept (0: all) */
	enum gw_verdict want;
	bool partial;
};

#define L4V4 (14 + 20)
#define L4V6 (14 + 40)
static const struct vnet_row vnet_rows[] = {
	{ "zero header, TCP", '4', 6, 0, 0, 0, 0, 0, 0, 0, GW_PASS, false },
	{ "zero header, UDP v6", '6', 17, 0, 0, 0, 0, 0, 0, 0, GW_PASS, false },
	{ "partial TCP v4", '4', 6, 1, 0, 54, 0, L4V4, 16, 0, GW_PASS, true },
	{ "partial UDP v6", '6', 17, 1, 0, 0, 0, L4V6, 6, 0, GW_PASS, true },
	{ "data valid", '4', 6, 2, 0, 0, 0, 0, 0, 0, GW_PASS, false },
	{ "TSO v4 segment", '4', 6, 1, 1, 54, 1448, L4V4, 16, 0, GW_PASS, true },
	{ "TSO v6 segment, ECN", '6', 6, 1, 4 | 0x80, 74, 1428, L4V6, 16, 0, GW_PASS, true },
	{ "unknown flag", '4', 6, 4, 0, 0, 0, 0, 0, 0, GW_DROP_VNET, false },
	{ "GSO type UDP (USO not offered)", '4', 17, 1, 3, 0, 1400, L4V4, 6, 0, GW_DROP_VNET, false },
	{ "GSO UDP_L4", '4', 17, 1, 5, 0, 1400, L4V4, 6, 0, GW_DROP_VNET, false },
	{ "GSO TCPv4 on IPv6", '6', 6, 1, 1, 0, 1400, L4V6, 16, 0, GW_DROP_VNET, false },
	{ "GSO TCPv6 on IPv4", '4', 6, 1, 4, 0, 1400, L4V4, 16, 0, GW_DROP_VNET, false },
	{ "GSO TCP on a UDP packet", '4', 17, 1, 1, 0, 1400, L4V4, 6, 0, GW_DROP_VNET, false },
	{ "GSO with gso_size 0", '4', 6, 1, 1, 0, 0, L4V4, 16, 0, GW_DROP_VNET, false },
	{ "GSO without a partial checksum", '4', 6, 0, 1, 0, 1400, 0, 0, 0, GW_DROP_VNET, false },
	{ "gso_size without GSO", '4', 6, 0, 0, 0, 1400, 0, 0, 0, GW_DROP_VNET, false },
	{ "hdr_len past the frame", '4', 6, 0, 0, 4000, 0, 0, 0, 0, GW_DROP_VNET, false },
	{ "hdr_len the whole frame", '4', 6, 0, 0, 54, 0, 0, 0, 0, GW_PASS, false },
	{ "hdr_len one past the frame", '4', 6, 0, 0, 55, 0, 0, 0, 0, GW_DROP_VNET, false },
	{ "csum_start before the transport header", '4', 6, 1, 0, 0, 0, 14, 16, 0, GW_DROP_VNET, false },
	{ "csum_start past the frame", '4', 6, 1, 0, 0, 0, 0xfff0, 16, 0, GW_DROP_VNET, false },
	{ "csum_offset not TCP's field", '4', 6, 1, 0, 0, 0, L4V4, 6, 0, GW_DROP_VNET, false },
	{ "csum_offset not UDP's field", '6', 17, 1, 0, 0, 0, L4V6, 16, 0, GW_DROP_VNET, false },
	{ "csum_offset huge", '4', 6, 1, 0, 0, 0, L4V4, 0xffff, 0, GW_DROP_VNET, false },
	{ "partial checksum on ICMP", '4', 1, 1, 0, 0, 0, L4V4, 2, 0, GW_DROP_VNET, false },
	{ "header cut short", '4', 6, 0, 0, 0, 0, 0, 0, 6, GW_DROP_SHORT, false },
	{ "header alone", '4', 6, 0, 0, 0, 0, 0, 0, GW_VNET_HLEN, GW_DROP_SHORT, false },
};

static void put16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void test_filter_vnet(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vnet_rows) / sizeof(vnet_rows[0]); i++) {
		const struct vnet_row *r = &vnet_rows[i];
		uint8_t b[GW_VNET_HLEN + 256];
		struct gw_packet pkt;
		size_t n;
		enum gw_verdict got;

		if (r->family == '4')
			n = ipv4(b + GW_VNET_HLEN, "10.0.2.15", "93.184.216.34", r->proto);
		else
			n = ipv6(b + GW_VNET_HLEN, "fd00:b0c5::15", "2001:db8::1", r->proto);
		if (r->proto == 1 && r->family == '4') {
			/* an echo request to the gateway, which the filter passes */
			inet_pton(AF_INET, "10.0.2.2", b + GW_VNET_HLEN + 14 + 16);
			b[GW_VNET_HLEN + 14 + 20] = 8;
		}
		b[0] = r->flags;
		b[1] = r->gso;
		put16le(b + 2, r->hdr_len);
		put16le(b + 4, r->gso_size);
		put16le(b + 6, r->cs_start);
		put16le(b + 8, r->cs_off);
		n += GW_VNET_HLEN;
		if (r->cut)
			n = r->cut;
		got = gw_filter_vnet(b, n, &pkt);
		if (got != r->want)
			fail_msg("%s: got \"%s\", want \"%s\"", r->what, gw_verdict_words(got),
				 gw_verdict_words(r->want));
		if (got == GW_PASS && pkt.csum_partial != r->partial)
			fail_msg("%s: csum_partial %d, want %d", r->what, pkt.csum_partial, r->partial);
	}
}

/* Every frame the plain filter refuses keeps its verdict behind a zero or a well-formed header. */
static void test_filter_vnet_keeps_drops(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(filter_rows) / sizeof(filter_rows[0]); i++) {
		const struct filter_row *r = &filter_rows[i];
		uint8_t b[GW_VNET_HLEN + 256];
		struct gw_packet pkt;
		size_t n = build_row(r, b + GW_VNET_HLEN);
		enum gw_verdict plain = gw_filter_frame(b + GW_VNET_HLEN, n, &pkt), got;

		memset(b, 0, GW_VNET_HLEN);
		got = gw_filter_vnet(b, n + GW_VNET_HLEN, &pkt);
		if (got != plain)
			fail_msg("%s: behind a zero header \"%s\", plain \"%s\"", r->what,
				 gw_verdict_words(got), gw_verdict_words(plain));
		/* a partial-checksum header never turns a refusal into a pass */
		b[0] = 1;
		put16le(b + 6, 14 + 20);
		put16le(b + 8, 16);
		got = gw_filter_vnet(b, n + GW_VNET_HLEN, &pkt);
		if (plain != GW_PASS && plain != GW_ARP_REQUEST && plain != GW_NEIGHBOUR_SOLICIT &&
		    got != plain)
			fail_msg("%s: behind a partial header \"%s\", plain \"%s\"", r->what,
				 gw_verdict_words(got), gw_verdict_words(plain));
	}
}

/* A passing SYN is parsed into the fields the SYN hold and the broker need. */
static void test_filter_fields(void **state)
{
	uint8_t f[256];
	struct gw_packet pkt;
	size_t n = ipv4(f, "10.0.2.15", "93.184.216.34", 6);

	(void)state;
	assert_int_equal(gw_filter_frame(f, n + 7, &pkt), GW_PASS);     /* Ethernet padding ignored */
	assert_int_equal(pkt.family, 4);
	assert_int_equal(pkt.proto, 6);
	assert_int_equal(pkt.sport, 40000);
	assert_int_equal(pkt.dport, 443);
	assert_int_equal(pkt.tcp_seq, 1000);
	assert_int_equal(pkt.tcp_flags, GW_TCP_SYN);
	assert_int_equal(pkt.ip_len, 40);
	assert_int_equal(pkt.tcp_payload, 0);
	assert_memory_equal(pkt.src_mac, sb_mac, 6);
	{
		static const uint8_t want[4] = { 93, 184, 216, 34 };

		assert_memory_equal(pkt.dst, want, 4);
	}
}

/* RFC 1071's example: the sum of 0001 f203 f4f5 f6f7 is ddf2, so the checksum is 220d. */
static void test_checksum(void **state)
{
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	(void)state;
	assert_int_equal(gw_checksum(b, sizeof(b), 0), 0x220d);
	assert_int_equal(gw_checksum(b, 0, 0), 0xffff);
}

static void check_rst(const char *src, const char *dst, bool v6)
{
	uint8_t f[256], out[128];
	struct gw_packet syn;
	size_t n = v6 ? ipv6(f, src, dst, 6) : ipv4(f, src, dst, 6), iplen = v6 ? 40 : 20;
	const uint8_t *ip = out + 14, *tcp = out + 14 + iplen;
	uint32_t sum = 0;

	assert_int_equal(gw_filter_frame(f, n, &syn), GW_PASS);
	assert_int_equal(gw_build_rst(&syn, sb_mac, out, 10), 0);        /* too small */
	n = gw_build_rst(&syn, sb_mac, out, sizeof(out));
	assert_int_equal(n, 14 + iplen + 20);
	assert_memory_equal(out, sb_mac, 6);
	assert_memory_equal(out + 6, gw_mac_c, 6);
	/* ports swapped, ack = seq + 1 (the SYN), RST|ACK */
	assert_int_equal(tcp[0] << 8 | tcp[1], 443);
	assert_int_equal(tcp[2] << 8 | tcp[3], 40000);
	assert_int_equal(tcp[8] << 24 | tcp[9] << 16 | tcp[10] << 8 | tcp[11], 1001);
	assert_int_equal(tcp[13], GW_TCP_RST | GW_TCP_ACK);
	/* from the address the SYN was aimed at, to the sandbox */
	if (v6) {
		assert_memory_equal(ip + 8, syn.dst, 16);
		assert_memory_equal(ip + 24, syn.src, 16);
		for (int i = 8; i < 40; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	} else {
		assert_int_equal(gw_checksum(ip, 20, 0), 0);            /* header checksum valid */
		assert_memory_equal(ip + 12, syn.dst, 4);
		assert_memory_equal(ip + 16, syn.src, 4);
		for (int i = 12; i < 20; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	}
	sum += 6 + 20;
	assert_int_equal(gw_checksum(tcp, 20, sum), 0);                 /* TCP checksum valid */
	/* and the reply passes nobody's filter as if it came from the sandbox */
	assert_int_equal(gw_filter_frame(out, n, &syn), GW_DROP_SPOOFED);
}

static void test_rst(void **state)
{
	(void)state;
	check_rst("10.0.2.15", "93.184.216.34", false);
	check_rst("fd00:b0c5::15", "2001:db8::1", true);
}

/* ---- pcap -------------------------------------------------------------------------- */

static int tmpfile_fd(char *path)
{
	int fd;

	strcpy(path, "/tmp/test-net-gw-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	return fd;
}

static void test_pcap_format(void **state)
{
	char path[64], *err = NULL;
	struct net_pcap pc;
	uint8_t frame[1514], buf[4096];
	int fd = tmpfile_fd(path);
	uint32_t v32;
	uint16_t v16;
	ssize_t n;

	(void)state;
	memset(frame, 0xab, sizeof(frame));
	assert_int_equal(net_pcap_open(&pc, fd, 1 << 20, &err), 0);
	assert_int_equal(net_pcap_write(&pc, frame, 60, 1700000000123456ull), 0);
	assert_int_equal(net_pcap_write(&pc, frame, 1514, 1700000001000000ull), 0);
	assert_int_equal(pc.frames, 2);
	assert_int_equal(pc.written, 24 + 16 + 60 + 16 + 1514);
	n = pread(fd, buf, sizeof(buf), 0);
	assert_int_equal(n, 24 + 16 + 60 + 16 + 1514);
	memcpy(&v32, buf, 4);
	assert_int_equal(v32, 0xa1b2c3d4);
	memcpy(&v16, buf + 4, 2);
	assert_int_equal(v16, 2);
	memcpy(&v16, buf + 6, 2);
	assert_int_equal(v16, 4);
	memcpy(&v32, buf + 20, 4);
	assert_int_equal(v32, 1);                       /* Ethernet */
	memcpy(&v32, buf + 24, 4);
	assert_int_equal(v32, 1700000000);
	memcpy(&v32, buf + 28, 4);
	assert_int_equal(v32, 123456);
	memcpy(&v32, buf + 32, 4);
	assert_int_equal(v32, 60);                      /* captured: never truncated */
	memcpy(&v32, buf + 36, 4);
	assert_int_equal(v32, 60);                      /* original */
	memcpy(&v32, buf + 24 + 16 + 60 + 8, 4);
	assert_int_equal(v32, 1514);
	assert_int_equal(buf[24 + 16 + 60 + 16 + 1513], 0xab);
	close(fd);
	unlink(path);
}

static void test_pcap_cap(void **state)
{
	char path[64], *err = NULL;
	struct net_pcap pc;
	uint8_t frame[100] = { 0 };
	int fd = tmpfile_fd(path);
	struct stat st;

	(void)state;
	/* room for the header and exactly two 100-byte frames */
	assert_int_equal(net_pcap_open(&pc, fd, 24 + 2 * 116, &err), 0);
	assert_int_equal(net_pcap_write(&pc, frame, 100, 0), 0);
	assert_int_equal(net_pcap_write(&pc, frame, 100, 0), 0);
	assert_int_equal(net_pcap_write(&pc, frame, 1, 0), -1);     /* would pass the cap */
	assert_int_equal(pc.state, PCAP_FULL);
	assert_int_equal(net_pcap_write(&pc, frame, 0, 0), -1);     /* stopped for good */
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 24 + 2 * 116);
	close(fd);
	unlink(path);

	/* a cap too small for the header is an error, not an empty capture */
	fd = tmpfile_fd(path);
	assert_int_equal(net_pcap_open(&pc, fd, 10, &err), -1);
	assert_non_null(err);
	free(err);
	close(fd);
	unlink(path);
}

static void test_pcap_write_error(void **state)
{
	char *err = NULL;
	struct net_pcap pc;
	int p[2];
	uint8_t frame[10] = { 0 };

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(net_pcap_open(&pc, p[1], 1 << 20, &err), 0);
	close(p[0]);                                    /* the reader is gone: EPIPE */
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(net_pcap_write(&pc, frame, 10, 0), -1);
	assert_int_equal(pc.state, PCAP_FAILED);
	assert_int_equal(pc.saved_errno, EPIPE);
	close(p[1]);
}

/* ---- the broker's messages --------------------------------------------------- */

/* A NET_ANSWER as the broker might send it: one address, written byte by byte. */
struct answer_row {
	const char *what;
	uint8_t family;
	uint8_t addr[16];
	int want;                       /* boxy-net's exit status: 0 still running, 1 ended */
};

static const struct answer_row answer_rows[] = {
	{ "an IPv4 answer", 4, { 192, 0, 2, 10 }, 0 },
	{ "an IPv6 answer", 6, { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 }, 0 },
	{ "an IPv4 address with a byte in its unused twelve", 4, { 192, 0, 2, 10, [15] = 1 }, 1 },
	{ "an IPv4 address with its fifth byte set", 4, { 192, 0, 2, 10, 7 }, 1 },
	{ "family 0", 0, { 192, 0, 2, 10 }, 1 },
	{ "family 5", 5, { 192, 0, 2, 10 }, 1 },
};

/* Feed one NET_ANSWER to a gateway in a child; return its exit status afterwards. */
static int answer_child(const struct answer_row *r)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int sv[2], tap = open("/dev/null", O_RDWR);
		struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
		struct wbuf w;
		struct gw *gw;

		if (tap < 0 || !loop || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0 ||
		    fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
			_exit(90);
		gw = gw_create(loop, sv[0], tap, NULL);
		gw_start(gw);
		wbuf_init(&w);
		wire_put_u32(&w, 1);            /* a query nobody asked: dropped if well-formed */
		wire_put_u8(&w, 0);
		wire_put_u32(&w, 60);
		wire_put_u32(&w, 1);
		wire_put_u8(&w, r->family);
		for (size_t i = 0; i < 16; i++)
			wire_put_u8(&w, r->addr[i]);
		if (msg_send(sv[1], NET_ANSWER, w.p, w.len, NULL, 0) < 0)
			_exit(91);
		wbuf_free(&w);
		for (int i = 0; i < 3; i++)
			ev_run(loop, EVRUN_NOWAIT);
		_exit(gw_exit_status(gw));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* boxy-net reads the broker's addresses as strictly as the broker reads its own. */
static void test_answer_addr_strict(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(answer_rows); i++) {
		int got = answer_child(&answer_rows[i]);

		if (got != answer_rows[i].want)
			fail_msg("%s: exit status %d, want %d", answer_rows[i].what, got,
				 answer_rows[i].want);
	}
}

/* A NET_VERDICT for a flow boxy-net does not have: its fields are checked before the lookup. */
struct verdict_row {
	const char *what;
	uint8_t verdict, flags;
	bool no_flags;                  /* the version 4 form, without the flags byte */
	int want;                       /* boxy-net's exit status: 0 still running, 1 ended */
};

static const struct verdict_row verdict_rows[] = {
	{ "refused", NETV_REFUSED, 0, false, 0 },
	{ "dialled, gated", NETV_DIALLED, NETVF_GATE, false, 0 },
	/* inspection needs the session CA, which only NETCFG_TLS brings: a broker that asks
	 * for it without having sent one is not speaking the protocol (this gateway has none) */
	{ "dialled and inspected, without a session CA", NETV_DIALLED, NETVF_GATE | NETVF_TLS,
	  false, 1 },
	{ "refused with a gate", NETV_REFUSED, NETVF_GATE, false, 1 },
	{ "need the name with a gate", NETV_NEED_NAME, NETVF_GATE, false, 1 },
	{ "an unknown flag", NETV_DIALLED, 0x80, false, 1 },
	{ "inspection without a gate", NETV_DIALLED, NETVF_TLS, false, 1 },
	{ "no flags byte (protocol 4)", NETV_REFUSED, 0, true, 1 },
};

static int verdict_child(const struct verdict_row *r)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int sv[2], tap = open("/dev/null", O_RDWR), sock = open("/dev/null", O_RDWR);
		struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
		struct wbuf w;
		struct gw *gw;
		bool dialled = r->verdict == NETV_DIALLED;

		if (tap < 0 || sock < 0 || !loop || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0 ||
		    fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
			_exit(90);
		gw = gw_create(loop, sv[0], tap, NULL);
		gw_start(gw);
		wbuf_init(&w);
		wire_put_u32(&w, 77);
		wire_put_u8(&w, r->verdict);
		if (!r->no_flags)
			wire_put_u8(&w, r->flags);
		if (msg_send(sv[1], NET_VERDICT, w.p, w.len, dialled ? &sock : NULL,
			     dialled ? 1 : 0) < 0)
			_exit(91);
		wbuf_free(&w);
		for (int i = 0; i < 3; i++)
			ev_run(loop, EVRUN_NOWAIT);
		_exit(gw_exit_status(gw));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* The verdict's flags (protocol 5): only with DIALLED, only known ones, TLS only with a gate. */
static void test_verdict_flags(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(verdict_rows); i++) {
		int got = verdict_child(&verdict_rows[i]);

		if (got != verdict_rows[i].want)
			fail_msg("%s: exit status %d, want %d", verdict_rows[i].what, got,
				 verdict_rows[i].want);
	}
}

/* ---- lockdown -------------------------------------------------------------------- */

enum attempt { TRY_NOTHING, TRY_SOCKET, TRY_OPEN, TRY_EXEC, TRY_MMAP_EXEC, TRY_EPOLL_CLOEXEC,
	       TRY_EPOLL_PLAIN, TRY_GETPID, TRY_TLS };

/* TRY_TLS: the session CA boxy-net would get in NET_TLS_CA (made once, in the parent). */
static uint8_t *lock_ca, *lock_key;
static size_t lock_ca_len, lock_key_len;

/* Lock a child down, try one thing; return how the child ended (exit code or -signal). */
static int locked_child(enum attempt what)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		char *note = NULL, *err = NULL;
		struct tls_engine *e = NULL;
		int fd;

		/* As boxy-net does: the engine (OpenSSL's files, the trust store) before. */
		if (what == TRY_TLS &&
		    !(e = tls_engine_create(lock_ca, lock_ca_len, lock_key, lock_key_len, &note,
					    &err)))
			_exit(95);
		if (net_lockdown(&note, &err) < 0)
			_exit(90);
		switch (what) {
		case TRY_NOTHING:
			_exit(write(1, "", 0) == 0 ? 0 : 91);   /* allowed calls still work */
		case TRY_SOCKET:
			fd = socket(AF_INET, SOCK_STREAM, 0);
			_exit(fd >= 0 ? 92 : 93);
		case TRY_OPEN:
			fd = open("/etc/hostname", O_RDONLY);
			_exit(fd >= 0 ? 92 : 93);
		case TRY_EXEC:
			execl("/bin/true", "true", (char *)NULL);
			_exit(93);
		case TRY_MMAP_EXEC:
			_exit(mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0) == MAP_FAILED ? 93 : 92);
		case TRY_EPOLL_CLOEXEC:         /* what libev's epoll_fork() calls */
			_exit(epoll_create1(EPOLL_CLOEXEC) >= 0 ? 0 : 93);
		case TRY_EPOLL_PLAIN:
			_exit(epoll_create1(0) >= 0 ? 92 : 93);
		case TRY_GETPID:                /* OpenSSL's fork check, before each random draw */
			_exit(getpid() > 0 ? 0 : 93);
		case TRY_TLS:
			/* After the lockdown: mint a leaf, a whole handshake, both directions, a
			 * chain verified — everything inspection does, with the filter's calls. */
			_exit(tls_engine_selftest(e, &err) == 0 ? 0 : 96);
		}
		_exit(94);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? -WTERMSIG(st) : WEXITSTATUS(st);
}

static void test_lockdown(void **state)
{
	(void)state;
	assert_int_equal(locked_child(TRY_NOTHING), 0);
	assert_int_equal(locked_child(TRY_SOCKET), -SIGSYS);
	assert_int_equal(locked_child(TRY_OPEN), -SIGSYS);
	assert_int_equal(locked_child(TRY_EXEC), -SIGSYS);
	assert_int_equal(locked_child(TRY_MMAP_EXEC), -SIGSYS);
	assert_int_equal(locked_child(TRY_EPOLL_CLOEXEC), 0);
	assert_int_equal(locked_child(TRY_EPOLL_PLAIN), -SIGSYS);
	assert_int_equal(locked_child(TRY_GETPID), 0);
}

/* Leaves: one per name, minted once, kept up to TLS_MINT_CACHE, each verifying under the CA. */
static void test_tls_leaves(void **state)
{
	const char *names[] = { "*.api.test" };
	struct tls_ca ca;
	struct tls_engine *e;
	uint8_t *cd, *kd;
	size_t cn, kn;
	char *err = NULL, *note = NULL, name[64];
	X509 *a, *b, *first;
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "test", time(NULL), &ca, &err), 0);
	assert_int_equal(tls_ca_encode(&ca, &cd, &cn, &kd, &kn, &err), 0);
	e = tls_engine_create(cd, cn, kd, kn, &note, &err);
	assert_non_null(e);
	first = tls_engine_leaf(e, "n0.api.test", &err);
	assert_non_null(first);
	X509_up_ref(first);             /* as an SSL would: the cache may let go of it */
	a = tls_engine_leaf(e, "a.api.test", &err);
	b = tls_engine_leaf(e, "a.api.test", &err);
	assert_ptr_equal(a, b);         /* minted once */
	assert_true(X509_check_host(a, "a.api.test", 0, 0, NULL) == 1);
	assert_true(X509_check_host(a, "b.api.test", 0, 0, NULL) != 1);
	/* the same leaf key for every name */
	assert_int_equal(EVP_PKEY_eq(X509_get0_pubkey(a),
				     X509_get0_pubkey(tls_engine_leaf(e, "c.api.test", &err))), 1);
	X509_STORE_add_cert(st, ca.cert);
	X509_STORE_CTX_init(vc, st, a, NULL);
	X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(vc), "a.api.test", 0);
	assert_int_equal(X509_verify_cert(vc), 1);
	/* past the cache: the oldest goes (still valid for whoever holds it) */
	for (int i = 1; i <= TLS_MINT_CACHE; i++) {
		snprintf(name, sizeof(name), "n%d.api.test", i);
		assert_non_null(tls_engine_leaf(e, name, &err));
	}
	assert_ptr_not_equal(tls_engine_leaf(e, "n0.api.test", &err), first);
	assert_true(X509_check_host(first, "n0.api.test", 0, 0, NULL) == 1);
	/* no leaf for a wildcard or a name with syntax in it */
	assert_null(tls_engine_leaf(e, "*.api.test", &err));
	free(err);
	err = NULL;
	assert_null(tls_engine_leaf(e, "a.api.test\nx", &err));
	free(err);
	X509_free(first);
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	tls_engine_free(e);
	free(cd);
	tls_wipe_free(kd, kn);
	tls_ca_clear(&ca);
	free(note);
}

/* TLS inspection needs no call the lockdown forbids (a SIGSYS here is a crash in a session). */
static void test_lockdown_tls(void **state)
{
	const char *names[] = { "api.test" };
	struct tls_ca ca;
	char *err = NULL;

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "test", time(NULL), &ca, &err), 0);
	assert_int_equal(tls_ca_encode(&ca, &lock_ca, &lock_ca_len, &lock_key, &lock_key_len,
				       &err), 0);
	tls_ca_clear(&ca);
	assert_int_equal(locked_child(TRY_TLS), 0);
	free(lock_ca);
	tls_wipe_free(lock_key, lock_key_len);
}

/* ---- the MSS option ---------------------------------------------------------- */

struct mss_row {
	const char *what;
	uint8_t doff;                   /* data offset, in words */
	uint8_t opts[20];
	size_t len;                     /* bytes given to the parser */
	uint16_t want;
};

static const struct mss_row mss_rows[] = {
	{ "MSS first", 6, { 2, 4, 0x05, 0xb4 }, 24, 1460 },
	{ "after NOPs and window scale", 8, { 1, 1, 3, 3, 7, 2, 4, 0xff, 0xc8 }, 32, 65480 },
	{ "no options", 5, { 0 }, 20, 0 },
	{ "end of options before it", 6, { 0, 2, 4, 5 }, 24, 0 },
	{ "length 3 is not an MSS", 6, { 2, 3, 5, 0 }, 24, 0 },
	{ "an option running past the header", 6, { 1, 8, 40, 0 }, 24, 0 },
	{ "zero-length option", 6, { 8, 0, 2, 4 }, 24, 0 },
	{ "MSS cut by the header's end", 6, { 1, 1, 2, 4 }, 24, 0 },
	{ "data offset under 5", 4, { 2, 4, 5, 0xb4 }, 24, 0 },
	{ "data offset past the bytes", 8, { 2, 4, 5, 0xb4 }, 24, 0 },
	{ "shorter than a header", 5, { 0 }, 19, 0 },
};

static void test_mss_option(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(mss_rows); i++) {
		const struct mss_row *r = &mss_rows[i];
		uint8_t tcp[40] = { 0 };

		tcp[12] = (uint8_t)(r->doff << 4);
		memcpy(tcp + 20, r->opts, sizeof(r->opts));
		if (gw_tcp_mss_option(tcp, r->len) != r->want)
			fail_msg("%s: got %u, want %u", r->what, gw_tcp_mss_option(tcp, r->len),
				 r->want);
	}
}

/* A TCP segment from the gateway with the MSS option, its checksum set; returns the frame length. */
static size_t segment(uint8_t *f, bool v6, uint8_t flags, uint16_t mss)
{
	size_t n = v6 ? ipv6(f, "2001:db8::1", "fd00:b0c5::15", 6) :
			ipv4(f, "93.184.216.34", "10.0.2.15", 6);
	size_t iplen = v6 ? 40 : 20;
	uint8_t *ip = f + 14, *tcp = ip + iplen;
	uint32_t sum = 0;

	/* Four bytes of options after the 20-byte header. */
	tcp[12] = 6 << 4;
	tcp[13] = flags;
	tcp[20] = 2;
	tcp[21] = 4;
	tcp[22] = (uint8_t)(mss >> 8);
	tcp[23] = (uint8_t)mss;
	n += 4;
	if (v6) {
		ip[5] = 24;
		for (int i = 8; i < 40; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	} else {
		ip[3] = 44;
		for (int i = 12; i < 20; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	}
	tcp[16] = tcp[17] = 0;
	sum += 6 + 24;
	{
		uint16_t c = gw_checksum(tcp, 24, sum);

		tcp[16] = (uint8_t)(c >> 8);
		tcp[17] = (uint8_t)c;
	}
	return n;
}

/* True when the segment's TCP checksum verifies. */
static bool segment_sum_ok(const uint8_t *f, bool v6)
{
	const uint8_t *ip = f + 14, *tcp = ip + (v6 ? 40 : 20);
	uint32_t sum = 6 + 24;

	for (int i = v6 ? 8 : 12; i < (v6 ? 40 : 20); i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	return gw_checksum(tcp, 24, sum) == 0;
}

static void check_raise(bool v6)
{
	uint8_t f[128], before[128];
	size_t n = segment(f, v6, GW_TCP_SYN | GW_TCP_ACK, 1460), iplen = v6 ? 40 : 20;
	const uint8_t *tcp = f + 14 + iplen;

	assert_true(segment_sum_ok(f, v6));
	assert_true(gw_raise_synack_mss(f, n));
	assert_int_equal(gw_tcp_mss_option(tcp, 24), v6 ? GW_MSS_V6 : GW_MSS_V4);
	assert_true(segment_sum_ok(f, v6));             /* the checksum was fixed, not broken */
	assert_false(gw_raise_synack_mss(f, n));        /* already raised: left alone */

	/* Not a SYN-ACK, or not TCP, or cut short: unchanged. */
	static const uint8_t other[] = { GW_TCP_SYN, GW_TCP_ACK, GW_TCP_SYN | GW_TCP_ACK | GW_TCP_RST };

	for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
		n = segment(f, v6, other[i], 1460);
		memcpy(before, f, n);
		assert_false(gw_raise_synack_mss(f, n));
		assert_memory_equal(f, before, n);
	}
	n = segment(f, v6, GW_TCP_SYN | GW_TCP_ACK, 1460);
	memcpy(before, f, n);
	assert_false(gw_raise_synack_mss(f, 14 + iplen + 19));
	assert_memory_equal(f, before, n);
	f[14 + (v6 ? 6 : 9)] = 17;                      /* UDP */
	memcpy(before, f, n);
	assert_false(gw_raise_synack_mss(f, n));
	assert_memory_equal(f, before, n);
}

static void test_raise_synack_mss(void **state)
{
	(void)state;
	check_raise(false);
	check_raise(true);
}

/*
 * gw_tcp_checksum_partial: a segment (payload of odd length included) made
 * partial and then completed as the sandbox's kernel would (the sum from the
 * TCP header on, field included, complemented) has the checksum it had when
 * fully summed; what is not a TCP packet of its stated length is left alone.
 */
static void check_partial(bool v6)
{
	uint8_t f[256], before[256];
	size_t n = segment(f, v6, GW_TCP_ACK, 1460), iplen = v6 ? 40 : 20, tlen;
	uint8_t *ip = f + 14, *tcp = ip + iplen;
	uint32_t pseudo = 6;
	uint16_t full, done;

	for (int i = 0; i < 37; i++)
		f[n + i] = (uint8_t)(i * 29 + 3);
	n += 37;
	tlen = n - 14 - iplen;
	if (v6) {
		ip[4] = (uint8_t)(tlen >> 8);
		ip[5] = (uint8_t)tlen;
	} else {
		ip[2] = (uint8_t)((tlen + 20) >> 8);
		ip[3] = (uint8_t)(tlen + 20);
	}
	for (size_t i = v6 ? 8 : 12; i < iplen; i += 2)
		pseudo += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	pseudo += (uint32_t)tlen;
	tcp[16] = tcp[17] = 0;
	full = gw_checksum(tcp, tlen, pseudo);
	assert_int_equal(gw_tcp_checksum_partial(ip, n - 14), iplen);
	done = gw_checksum(tcp, tlen, 0);
	assert_int_equal(done, full);
	/* Not TCP, a length field that is not the packet's, too short: untouched. */
	ip[v6 ? 6 : 9] = 17;
	memcpy(before, f, n);
	assert_int_equal(gw_tcp_checksum_partial(ip, n - 14), 0);
	assert_memory_equal(f, before, n);
	ip[v6 ? 6 : 9] = 6;
	memcpy(before, f, n);
	assert_int_equal(gw_tcp_checksum_partial(ip, n - 15), 0);
	assert_int_equal(gw_tcp_checksum_partial(ip, iplen + 19), 0);
	assert_memory_equal(f, before, n);
}

static void test_checksum_partial(void **state)
{
	(void)state;
	check_partial(false);
	check_partial(true);
}

/* ---- naming a held flow ------------------------------------------------------ */

/*
 * A ClientHello record: server_name host (NULL: none), the ECH extension if
 * asked, and always supported_versions so the extension list is not empty.
 */
static size_t hello(uint8_t *b, const char *host, bool ech)
{
	size_t hl = host ? strlen(host) : 0, n = 0;
	size_t ext_len = 7 + (host ? 9 + hl : 0) + (ech ? 6 : 0);
	size_t body = 2 + 32 + 1 + 4 + 2 + 2 + ext_len;

	b[n++] = 0x16; b[n++] = 3; b[n++] = 1;
	b[n++] = (uint8_t)((body + 4) >> 8); b[n++] = (uint8_t)(body + 4);
	b[n++] = 1; b[n++] = 0; b[n++] = (uint8_t)(body >> 8); b[n++] = (uint8_t)body;
	b[n++] = 3; b[n++] = 3;
	memset(b + n, 7, 32); n += 32;
	b[n++] = 0;                                     /* session id */
	b[n++] = 0; b[n++] = 2; b[n++] = 0x13; b[n++] = 0x01;
	b[n++] = 1; b[n++] = 0;                         /* compression */
	b[n++] = (uint8_t)(ext_len >> 8); b[n++] = (uint8_t)ext_len;
	if (host) {
		b[n++] = 0; b[n++] = 0;                 /* server_name */
		b[n++] = (uint8_t)((hl + 5) >> 8); b[n++] = (uint8_t)(hl + 5);
		b[n++] = (uint8_t)((hl + 3) >> 8); b[n++] = (uint8_t)(hl + 3);
		b[n++] = 0; b[n++] = (uint8_t)(hl >> 8); b[n++] = (uint8_t)hl;
		memcpy(b + n, host, hl); n += hl;
	}
	b[n++] = 0x00; b[n++] = 0x2b; b[n++] = 0; b[n++] = 3;   /* supported_versions */
	b[n++] = 2; b[n++] = 0x03; b[n++] = 0x04;
	if (ech) {
		b[n++] = 0xfe; b[n++] = 0x0d; b[n++] = 0; b[n++] = 2; b[n++] = 0; b[n++] = 0;
	}
	return n;
}

enum hello_kind { H_TEXT, H_SNI, H_NO_SNI, H_ECH_NO_SNI, H_ECH_SNI };

/* The gateway's first-bytes helper: TLS, HTTP, other, incomplete, broken. */
static void test_read_name(void **state)
{
	static const struct {
		const char *what;
		const char *bytes;
		enum net_name_kind kind;
		const char *name;
	} rows[] = {
		{ "HTTP", "GET / HTTP/1.1\r\nHost: Registry.npmjs.org:80\r\n\r\n", NET_NAME_HOST,
		  "registry.npmjs.org" },
		{ "HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", NET_NAME_HOST, "" },
		{ "HTTP with an IP literal", "GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", NET_NAME_HOST,
		  "::1" },
		{ "two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", NET_NAME_MALFORMED, "" },
		{ "SSH", "SSH-2.0-OpenSSH_9.2\r\n", NET_NAME_NONE, "" },
		{ "half a request", "GET / HTTP/1.1\r\n", NET_NAME_PENDING, "" },
		{ "nothing", "", NET_NAME_PENDING, "" },
		{ "a ServerHello", "\x16\x03\x01\x01\x10\x02", NET_NAME_MALFORMED, "" },
	};
	uint8_t b[512];
	char name[DNS_NAME_BUF];
	bool ech = true;
	size_t need = 99, n;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum net_name_kind k = net_flow_read_name((const uint8_t *)rows[i].bytes,
							  strlen(rows[i].bytes), name, &ech, &need);
		if (k != rows[i].kind || strcmp(name, rows[i].name) != 0)
			fail_msg("%s: kind %d name '%s'", rows[i].what, (int)k, name);
		assert_false(ech);
	}
	assert_int_equal(net_flow_read_name((const uint8_t *)"", 0, name, &ech, &need),
			 NET_NAME_PENDING);
	assert_int_equal(need, 5);

	n = hello(b, "registry.npmjs.org", false);
	assert_int_equal(net_flow_read_name(b, n, name, &ech, NULL), NET_NAME_SNI);
	assert_string_equal(name, "registry.npmjs.org");
	assert_false(ech);
	assert_int_equal(net_flow_read_name(b, n - 1, name, &ech, &need), NET_NAME_PENDING);
	assert_int_equal(need, n);
	n = hello(b, "public.example", true);
	assert_int_equal(net_flow_read_name(b, n, name, &ech, NULL), NET_NAME_SNI);
	assert_true(ech);
	assert_string_equal(name, "public.example");
}

/*
 * What a held flow is reported as. The bypass rows: each used to reach the
 * broker as NONE, which policy allows on address and port alone.
 */
static void test_name_classify(void **state)
{
	static const struct {
		const char *what;
		enum hello_kind hk;
		const char *text;       /* H_TEXT: the bytes */
		size_t cut;             /* send only this many bytes (0: all) */
		bool give_up;
		int kind;               /* -1: wait */
		const char *name;
		bool ech;
	} rows[] = {
		{ "no byte yet: wait", H_TEXT, "", 0, false, -1, "", false },
		{ "no byte at the timeout (ssh: the server speaks first)", H_TEXT, "", 0, true,
		  NET_NAME_NONE, "", false },
		{ "SSH banner: neither TLS nor HTTP", H_TEXT, "SSH-2.0-OpenSSH_9.2\r\n", 0, false,
		  NET_NAME_NONE, "", false },
		{ "ClientHello with SNI", H_SNI, NULL, 0, false, NET_NAME_SNI,
		  "registry.npmjs.org", false },
		{ "half a ClientHello: wait", H_SNI, NULL, 20, false, -1, "", false },
		{ "bypass: half a ClientHello at the timeout", H_SNI, NULL, 20, true,
		  NET_NAME_MALFORMED, "", false },
		{ "bypass: one handshake byte at the timeout", H_SNI, NULL, 1, true,
		  NET_NAME_MALFORMED, "", false },
		{ "bypass: TLS without SNI", H_NO_SNI, NULL, 0, false, NET_NAME_SNI, "", false },
		{ "bypass: ECH without SNI", H_ECH_NO_SNI, NULL, 0, false, NET_NAME_SNI, "", true },
		{ "ECH with an outer SNI", H_ECH_SNI, NULL, 0, false, NET_NAME_SNI,
		  "registry.npmjs.org", true },
		{ "bypass: a ServerHello", H_TEXT, "\x16\x03\x01\x01\x10\x02", 0, false,
		  NET_NAME_MALFORMED, "", false },
		{ "HTTP with Host", H_TEXT, "GET / HTTP/1.1\r\nHost: Registry.npmjs.org\r\n\r\n",
		  0, false, NET_NAME_HOST, "registry.npmjs.org", false },
		{ "HTTP/1.0 without Host", H_TEXT, "GET / HTTP/1.0\r\n\r\n", 0, false,
		  NET_NAME_HOST, "", false },
		{ "bypass: two Host headers", H_TEXT,
		  "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", 0, false,
		  NET_NAME_MALFORMED, "", false },
		{ "half a request head: wait", H_TEXT, "GET / HTTP/1.1\r\nHost: a.te", 0, false,
		  -1, "", false },
		{ "bypass: half a request head at the timeout", H_TEXT,
		  "GET / HTTP/1.1\r\nHost: a.te", 0, true, NET_NAME_MALFORMED, "", false },
		/* NONE is allowed on the address, ungated: node reads these as requests and keeps
		 * the connection, so the next request would reach it unread */
		{ "bypass: an RTSP request line node takes for a request", H_TEXT,
		  "DESCRIBE /v1/x RTSP/1.1\r\nHost: a.test\r\n\r\n", 0, false, NET_NAME_MALFORMED,
		  "", false },
		{ "bypass: an ICE request line", H_TEXT, "SOURCE /x ICE/1.1\r\n", 0, false,
		  NET_NAME_MALFORMED, "", false },
		{ "bypass: an unknown method and half a target at the timeout", H_TEXT,
		  "DESCRIBE rtsp:", 0, true, NET_NAME_MALFORMED, "", false },
		{ "SSH banner with a comment: neither TLS nor HTTP", H_TEXT,
		  "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", 0, false, NET_NAME_NONE, "", false },
	};
	uint8_t b[1024];
	char name[DNS_NAME_BUF];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n;
		bool ech = !rows[i].ech;
		int k;

		switch (rows[i].hk) {
		case H_TEXT:
			n = strlen(rows[i].text);
			memcpy(b, rows[i].text, n);
			break;
		case H_SNI:
			n = hello(b, "registry.npmjs.org", false);
			break;
		case H_NO_SNI:
			n = hello(b, NULL, false);
			break;
		case H_ECH_NO_SNI:
			n = hello(b, NULL, true);
			break;
		default:
			n = hello(b, "registry.npmjs.org", true);
			break;
		}
		if (rows[i].cut)
			n = rows[i].cut;
		strcpy(name, "stale");
		k = gw_name_classify(b, n, rows[i].give_up, name, &ech);
		if (k != rows[i].kind || strcmp(name, rows[i].name) != 0 || ech != rows[i].ech)
			fail_msg("%s: kind %d name '%s' ech %d, want %d '%s' %d", rows[i].what, k,
				 name, ech, rows[i].kind, rows[i].name, rows[i].ech);
	}
}

/* ---- the HTTP gate on a byte stream (net/http-gate.h) ------------------------------- */

struct gate_row {
	const char *what;
	const char *stream;
	const char *pass;       /* the prefix that may go upstream once all is fed */
	enum http_gate_state state;
	unsigned records;       /* NET_HTTP_REQUEST messages sent */
};

static const struct gate_row gate_rows[] = {
	{ "two allowed, keep-alive",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\nGET /v1/b HTTP/1.1\r\nHost: api.test\r\n\r\n",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\nGET /v1/b HTTP/1.1\r\nHost: api.test\r\n\r\n",
	  HTTP_GATE_OPEN, 2 },
	{ "allowed, then refused by the rules",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\nGET /v2/b HTTP/1.1\r\nHost: api.test\r\n\r\n",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\n", HTTP_GATE_REFUSED, 2 },
	{ "a second request for another host",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\nGET /v1/b HTTP/1.1\r\nHost: other.test\r\n\r\n",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\n", HTTP_GATE_REFUSED, 2 },
	{ "a body passes as it comes, the hidden request in it is body",
	  "POST /v1/p HTTP/1.1\r\nHost: api.test\r\nContent-Length: 38\r\n\r\n"
	  "GET /v2/x HTTP/1.1\r\nHost: api.test\r\n\r\n",
	  "POST /v1/p HTTP/1.1\r\nHost: api.test\r\nContent-Length: 38\r\n\r\n"
	  "GET /v2/x HTTP/1.1\r\nHost: api.test\r\n\r\n", HTTP_GATE_OPEN, 1 },
	{ "smuggling: nothing of it passes",
	  "POST /v1/p HTTP/1.1\r\nHost: api.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n"
	  "\r\n0\r\n\r\n", "", HTTP_GATE_REFUSED, 1 },
	{ "an incomplete head waits",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\nGET /v1/b HTTP/1.1\r\nHost: api",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\n", HTTP_GATE_OPEN, 1 },
	{ "a body on GET (python's http.server reads it as a request): nothing of it passes",
	  "GET /v1/a HTTP/1.1\r\nHost: api.test\r\nContent-Length: 38\r\n\r\n"
	  "GET /v2/x HTTP/1.1\r\nHost: api.test\r\n\r\n", "", HTTP_GATE_REFUSED, 1 },
	{ "two Upgrade headers: nothing of it passes",
	  "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: h2c\r\nUpgrade: websocket\r\n\r\n"
	  "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "", HTTP_GATE_REFUSED, 1 },
	{ "a websocket holds what follows until the server answers",
	  "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\nframes",
	  "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\n",
	  HTTP_GATE_SWITCHING, 1 },
};

/* A gateway just big enough for a gate: its broker socket is our end of a socketpair. */
static struct gw *gate_gw(int *peer)
{
	static const char *const texts[] = { "method=GET,POST domain=api.test path=/v1/*" };
	struct gw *gw = xcalloc(1, sizeof(*gw));
	struct http_rules rs;
	size_t bad;
	int sp[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	gw->broker_fd = sp[0];
	*peer = sp[1];
	gw->loop = ev_loop_new(EVFLAG_AUTO);
	assert_int_equal(http_rules_parse(&rs, texts, 1, &bad), 0);
	http_gate_set_rules(gw, &rs);
	return gw;
}

static void gate_gw_free(struct gw *gw, int peer)
{
	http_rules_free(&gw->http_rules);
	ev_loop_destroy(gw->loop);
	close(gw->broker_fd);
	close(peer);
	free(gw);
}

/* Count the records waiting on the broker's end (and check they are requests). */
static unsigned gate_records(int peer)
{
	unsigned n = 0;
	struct msg m;
	char *err = NULL;

	for (;;) {
		struct pollfd p = { .fd = peer, .events = POLLIN };

		if (poll(&p, 1, 0) != 1 || msg_recv(peer, &m, &err) != 1)
			break;
		assert_int_equal(m.type, NET_HTTP_REQUEST);
		msg_free(&m);
		n++;
	}
	return n;
}

/*
 * Each row fed whole and cut at every byte: what may pass is the same, and at
 * no moment does it reach into a request that is refused or not yet decided.
 */
static void test_gate_stream(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(gate_rows); i++) {
		const struct gate_row *row = &gate_rows[i];
		size_t len = strlen(row->stream), plen = strlen(row->pass);

		for (size_t cut = 0; cut < len; cut++) {
			int peer;
			struct gw *gw = gate_gw(&peer);
			struct flow f = { .gw = gw, .id = 1, .dport = 80 };
			struct http_gate *g = http_gate_create(gw, &f, "api.test", HTTP_GATE_PLAIN);
			size_t k;
			unsigned recs;

			k = cut ? http_gate_feed(g, (const uint8_t *)row->stream, cut) : 0;
			if (http_gate_allowed(g) > plen)
				fail_msg("%s, cut %zu: %llu bytes pass before the rest came", row->what,
					 cut, (unsigned long long)http_gate_allowed(g));
			if (k == cut)
				http_gate_feed(g, (const uint8_t *)row->stream + cut, len - cut);
			if (http_gate_allowed(g) != plen || http_gate_state(g) != row->state)
				fail_msg("%s, cut %zu: %llu bytes pass in state %d, want %zu in %d",
					 row->what, cut, (unsigned long long)http_gate_allowed(g),
					 (int)http_gate_state(g), plen, (int)row->state);
			recs = gate_records(peer);
			if (recs != row->records)
				fail_msg("%s, cut %zu: %u records, want %u", row->what, cut, recs,
					 row->records);
			http_gate_free(g);
			gate_gw_free(gw, peer);
		}
	}
}

/* The server's answer to a switch: 101 to a websocket hands over, anything else declines. */
static void test_gate_switch(void **state)
{
	static const struct { const char *req, *answer; enum http_gate_state want; } rows[] = {
		{ "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\n",
		  "HTTP/1.1 101 Switching Protocols\r\n", HTTP_GATE_TUNNEL },
		{ "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\n",
		  "HTTP/1.1 200 OK\r\n", HTTP_GATE_DECLINED },
		{ "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: h2c\r\n\r\n",
		  "HTTP/1.1 101 Switching Protocols\r\n", HTTP_GATE_RESET },
		{ "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\n",
		  "SSH-2.0-OpenSSH\r\n", HTTP_GATE_DECLINED },
		/* held: an interim answer is not the switch (what follows it is not read) */
		{ "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\n",
		  "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\n",
		  HTTP_GATE_DECLINED },
		{ "GET /v1/ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n\r\n",
		  "HTTP/2 101\r\n", HTTP_GATE_DECLINED },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		int peer;
		struct gw *gw = gate_gw(&peer);
		struct flow f = { .gw = gw, .id = 1, .dport = 80 };
		struct http_gate *g = http_gate_create(gw, &f, "api.test", HTTP_GATE_PLAIN);
		const char *more = "after";

		http_gate_feed(g, (const uint8_t *)rows[i].req, strlen(rows[i].req));
		assert_int_equal(http_gate_state(g), HTTP_GATE_SWITCHING);
		assert_int_equal(http_gate_feed(g, (const uint8_t *)more, 5), 0);
		/* the status line in pieces */
		for (const char *p = rows[i].answer; *p; p++)
			http_gate_server(g, (const uint8_t *)p, 1);
		assert_int_equal(http_gate_state(g), rows[i].want);
		if (rows[i].want == HTTP_GATE_TUNNEL) {
			assert_int_equal(http_gate_feed(g, (const uint8_t *)more, 5), 5);
			assert_int_equal(http_gate_allowed(g), strlen(rows[i].req) + 5);
		}
		http_gate_free(g);
		gate_gw_free(gw, peer);
	}
}

/*
 * Held: a server that says 101 to a request that asked for no switch does not
 * make a tunnel; the gate reads on, and a later request for another host is
 * refused.
 */
static void test_gate_unasked_switch(void **state)
{
	int peer;
	struct gw *gw = gate_gw(&peer);
	struct flow f = { .gw = gw, .id = 1, .dport = 80 };
	struct http_gate *g = http_gate_create(gw, &f, "api.test", HTTP_GATE_PLAIN);
	const char *one = "GET /v1/a HTTP/1.1\r\nHost: api.test\r\n\r\n";
	const char *two = "GET /v1/b HTTP/1.1\r\nHost: other.test\r\n\r\n";
	const char *ans = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";

	(void)state;
	assert_int_equal(http_gate_feed(g, (const uint8_t *)one, strlen(one)), strlen(one));
	http_gate_server(g, (const uint8_t *)ans, strlen(ans));
	assert_int_equal(http_gate_state(g), HTTP_GATE_OPEN);
	http_gate_feed(g, (const uint8_t *)two, strlen(two));
	assert_int_equal(http_gate_state(g), HTTP_GATE_REFUSED);
	assert_int_equal(http_gate_allowed(g), strlen(one));
	assert_int_equal(gate_records(peer), 2);
	http_gate_free(g);
	gate_gw_free(gw, peer);
}

/* The refusal's words: the rule that would allow it, or why none would. */
static void test_gate_refusal(void **state)
{
	int peer;
	struct gw *gw = gate_gw(&peer);
	struct flow f = { .gw = gw, .id = 1, .dport = 80 };
	struct http_gate *g = http_gate_create(gw, &f, "api.test", HTTP_GATE_PLAIN);
	struct http_gate_refusal r;
	char resp[HTTP_GATE_RESPONSE_MAX];
	size_t n;

	(void)state;
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "api.test", .path = "/v2/x" }), HTTP_DENY_NO_RULE);
	http_gate_refusal(g, &r);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.body, "boxy: GET api.test/v2/x refused; allow it with "
			    "--allow-http 'method=GET domain=api.test path=/v2/x'\n");
	n = http_gate_refusal_h1(&r, resp, sizeof(resp));
	assert_true(n > 0);
	assert_non_null(strstr(resp, "HTTP/1.1 403 Forbidden\r\n"));
	assert_non_null(strstr(resp, "Connection: close\r\n"));
	/* refused once, refused for good */
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "api.test", .path = "/v1/x" }), HTTP_DENY_NO_RULE);
	assert_int_equal(gate_records(peer), 1);
	http_gate_free(g);
	g = http_gate_create(gw, &f, "api.test", HTTP_GATE_PLAIN);
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "other.test", .path = "/v1/x" }), HTTP_DENY_OTHER_HOST);
	http_gate_refusal(g, &r);
	assert_string_equal(r.body, "boxy: GET other.test/v1/x refused (names another host than "
			    "the connection was allowed for)\n");
	http_gate_free(g);
	assert_int_equal(gate_records(peer), 1);
	/* a decoded request the broker could not take (from another parser): malformed here */
	g = http_gate_create(gw, &f, "api.test", HTTP_GATE_H2);
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "G T",
		.host = "api.test", .path = "/v1/x" }), HTTP_DENY_MALFORMED);
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "Api.Test", .path = "/v1/x" }), HTTP_DENY_MALFORMED);
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "api.test", .path = "/v1/\x1b[2J" }), HTTP_DENY_MALFORMED);
	/* HTTP/2: each stream on its own, a refused one ends alone */
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "api.test", .port = 80, .path = "/v2/x" }), HTTP_DENY_NO_RULE);
	assert_int_equal(http_gate_check(g, &(struct http_gate_req){ .method = "GET",
		.host = "api.test", .port = 80, .path = "/v1/x" }), HTTP_ALLOWED);
	assert_int_equal(gate_records(peer), 5);
	http_gate_free(g);
	/* a head the client never finished: refused when its stream ends, nothing passes */
	g = http_gate_create(gw, &f, "api.test", HTTP_GATE_PLAIN);
	assert_int_equal(http_gate_feed(g, (const uint8_t *)"GET /v1/x HTTP/1.1\r\nHo", 22), 22);
	assert_int_equal(http_gate_allowed(g), 0);
	http_gate_client_eof(g);
	assert_int_equal(http_gate_state(g), HTTP_GATE_REFUSED);
	http_gate_refusal(g, &r);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "incomplete at the end of the stream"));
	http_gate_free(g);
	gate_gw_free(gw, peer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_table),
		cmocka_unit_test(test_filter_fields),
		cmocka_unit_test(test_filter_vnet),
		cmocka_unit_test(test_filter_vnet_keeps_drops),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_rst),
		cmocka_unit_test(test_pcap_format),
		cmocka_unit_test(test_pcap_cap),
		cmocka_unit_test(test_pcap_write_error),
		cmocka_unit_test(test_lockdown),
		cmocka_unit_test(test_lockdown_tls),
		cmocka_unit_test(test_tls_leaves),
		cmocka_unit_test(test_answer_addr_strict),
		cmocka_unit_test(test_mss_option),
		cmocka_unit_test(test_raise_synack_mss),
		cmocka_unit_test(test_checksum_partial),
		cmocka_unit_test(test_read_name),
		cmocka_unit_test(test_verdict_flags),
		cmocka_unit_test(test_gate_stream),
		cmocka_unit_test(test_gate_switch),
		cmocka_unit_test(test_gate_unasked_switch),
		cmocka_unit_test(test_gate_refusal),
		cmocka_unit_test(test_name_classify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
