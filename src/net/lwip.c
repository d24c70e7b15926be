/*
 * net/lwip.c — the one file of boxy-net that talks to lwIP: the netif and
 * its output to the TAP, feeding packets in (the "address swap"), the
 * ip_chksum_pseudo override, the listening pcbs, the callbacks of every
 * connection, the pbuf queues, lwIP's timers. The rest of the gateway asks
 * through the stack_* calls of net/flow.h and never sees an lwIP type.
 *
 * lwIP only accepts packets for its own address, so before each packet the
 * netif's address is overwritten with the packet's destination and restored
 * after; one listening pcb per port, of IP_ANY_TYPE, then serves every
 * address, and replies carry the address the payload dialled as their
 * source with no rewriting. lwIP runs single-threaded: lwip_init() and never
 * tcpip_init(), timers via sys_check_timeouts() (NETWORK-NOTES.md). The
 * callbacks here only record what happened and mark the flow dirty; the
 * work happens in gw_service, outside lwIP's call stack.
 */
#include <config.h>

#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/uio.h>
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

#include "common/util.h"
#include "net/flow.h"

/* What the IPv6 swap slot holds between packets: an address nobody uses. */
static const uint8_t idle6[16] = { 0xfd, 0x00, 0xb0, 0xc5, 0, 0, 0, 0,
				   0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* ---- addresses --------------------------------------------------------------- */

/* An address as lwIP's type. */
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


/* ---- the netif ---------------------------------------------------------------- */

/* A virtio-net header for a TCP segment whose checksum is partial from offset hl of its IP packet. */
static void vnet_partial(uint8_t vnet[GW_VNET_HLEN], size_t hl)
{
	size_t start = GW_ETH_HLEN + hl;

	vnet[0] = VNET_F_NEEDS_CSUM;
	vnet[6] = (uint8_t)start;           /* csum_start, little-endian */
	vnet[7] = (uint8_t)(start >> 8);
	vnet[8] = 16;                       /* csum_offset: the TCP checksum field */
	vnet[9] = 0;
}

/*
 * lwIP's output for both families: prepend the Ethernet header and write the
 * frame. Every TCP segment leaves CHECKSUM_PARTIAL: the checksum field holds
 * the pseudo-header's sum and the virtio-net header says NEEDS_CSUM from the
 * TCP header on. The sandbox's kernel takes such a segment as verified on
 * local delivery (it would complete the sum only to forward it, and would
 * then complete it right), so the segment's bytes are never summed, here or
 * in lwIP (lwip_chksum_copy below): that pass was a fifth of boxy-net's time
 * in a download.
 */
static err_t netif_output_frame(struct gw *gw, struct pbuf *p, uint16_t type)
{
	const uint8_t *ip = p->payload;
	size_t hdrs = type == GW_ETH_IPV4 ? 40 : 60;
	bool tcp = p->len >= hdrs && ip[type == GW_ETH_IPV4 ? 9 : 6] == IPPROTO_TCP;
	uint8_t vnet[GW_VNET_HLEN] = { 0 };
	size_t hl;

	/* The common case, a data segment with nothing to capture: gather the
	 * pbuf chain straight into the TAP, saving a 64 KiB copy per frame.
	 * lwIP's IPv4 header is always 20 bytes; the SYN test only needs to
	 * be right for SYNs, which take the copying path below. */
	if (!gw->pcap && tcp && !(ip[hdrs - 20 + 13] & GW_TCP_SYN)) {
		struct iovec iov[2 + 16];
		int n = 2;
		const struct pbuf *q;

		hl = gw_tcp_checksum_partial(p->payload, p->tot_len);
		if (hl)
			vnet_partial(vnet, hl);
		gw_eth_header(gw->frame, gw->sandbox_mac, type);
		iov[0] = (struct iovec){ vnet, sizeof(vnet) };
		iov[1] = (struct iovec){ gw->frame, GW_ETH_HLEN };
		for (q = p; q && n < (int)ARRAY_SIZE(iov); q = q->next)
			iov[n++] = (struct iovec){ q->payload, q->len };
		if (!q && hl) {
			if (writev(gw->tap_fd, iov, n) < 0 && errno != EAGAIN && errno != EIO &&
			    !gw->tap_dead) {
				gw->tap_dead = true;
				broker_log(gw, "TAP write failed");
			}
			return ERR_OK;
		}
	}
	gw_eth_header(gw->frame, gw->sandbox_mac, type);
	pbuf_copy_partial(p, gw->frame + GW_ETH_HLEN, p->tot_len, 0);
	/* On the copy: lwIP keeps p to retransmit, and rewrites nothing itself.
	 * The MSS first: the partial checksum written after it covers no option. */
	gw_raise_synack_mss(gw->frame, GW_ETH_HLEN + p->tot_len);
	memset(vnet, 0, sizeof(vnet));
	hl = tcp ? gw_tcp_checksum_partial(gw->frame + GW_ETH_HLEN, p->tot_len) : 0;
	if (hl)
		vnet_partial(vnet, hl);
	tap_send_vnet(gw, vnet, gw->frame, GW_ETH_HLEN + p->tot_len);
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

/*
 * While stack_tcp_write_recv runs, tcp_write's "copies" from its buffer are
 * reads from the upstream socket straight into the segment (the buffer is
 * real, so nothing else lwIP might do with it could fault; it holds only
 * the bytes read out of order: see stream_copy).
 */
static struct {
	const uint8_t *base;    /* the buffer tcp_write was given; NULL: no stream */
	size_t len;             /* its length: bytes the socket certainly has */
	size_t done;            /* read from the socket so far */
	size_t gap_lo, gap_hi;  /* what was read into the buffer itself (one range) */
	int fd;
	bool failed;            /* a read came back short: the segments hold garbage */
} stream;

/*
 * tcp_write copies in order except for the tail of the last unsent segment
 * (its "oversize", filled last): bytes asked for past what was read are read
 * into the buffer first, at their own offsets, and copied from there when
 * asked for.
 */
static void stream_copy(void *dst, size_t off, size_t len)
{
	ssize_t n;

	if (off < stream.done) {
		if (off >= stream.gap_lo && off + len <= stream.gap_hi)
			memcpy(dst, stream.base + off, len);
		else
			stream.failed = true;   /* asked twice, or across a read: never, but */
		return;
	}
	if (off > stream.done) {
		if (stream.gap_hi > stream.gap_lo)
			stream.failed = true;   /* a second hole: never, but */
		n = recv(stream.fd, (uint8_t *)stream.base + stream.done, off - stream.done,
			 MSG_DONTWAIT);
		if (n != (ssize_t)(off - stream.done))
			stream.failed = true;
		stream.gap_lo = stream.done;
		stream.gap_hi = off;
		stream.done = off;
	}
	n = recv(stream.fd, dst, len, MSG_DONTWAIT);
	if (n != (ssize_t)len)
		stream.failed = true;
	stream.done += len;
}

/*
 * Debian's lwIP sums data as tcp_write copies it into a segment
 * (LWIP_CHECKSUM_ON_COPY), through liblwip's PLT like ip_chksum_pseudo
 * below. Every TCP segment leaves CHECKSUM_PARTIAL (netif_output_frame), so
 * that sum is never used: the copy alone — or, for a download, the read
 * from the upstream socket (stream_copy). (lwIP's only other callers are
 * its sockets API and pbuf_fill_chksum, neither of which boxy-net calls.)
 */
u16_t lwip_chksum_copy(void *dst, const void *src, u16_t len)
{
	const uint8_t *s = src;

	if (stream.base && s >= stream.base && s + len <= stream.base + stream.len)
		stream_copy(dst, (size_t)(s - stream.base), len);
	else
		memcpy(dst, src, len);
	return 0;
}

/* lwIP's pseudo-header checksum, answering "verified" once for the segment being fed. */
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

/* The pbuf the next TAP read lands in (stack_rx_buffer), until lwIP is handed it. */
static struct pbuf *rx_spare;

/*
 * Hand an IP packet to lwIP, as if it were addressed to lwIP itself: the
 * netif's address becomes the packet's destination for the duration of the
 * call. The field is written directly: netif_set_ipaddr would abort every
 * pcb bound to the old address.
 */
void stack_feed(struct gw *gw, int family, const uint8_t *ip, size_t len, const uint8_t *dst)
{
	bool tcp = len >= 40 && (family == 4 ? ip[9] : ip[6]) == IPPROTO_TCP;
	struct pbuf *p;

	if (len > 0xffff)
		return;
	if (rx_spare && tcp && len >= GW_RX_ADOPT && ip >= (uint8_t *)rx_spare->payload &&
	    ip + len <= (uint8_t *)rx_spare->payload + rx_spare->len) {
		/* The frame was read into rx_spare: lwIP takes that pbuf, trimmed to the packet. */
		p = rx_spare;
		rx_spare = NULL;
		if (ip != (uint8_t *)p->payload &&
		    pbuf_remove_header(p, (size_t)(ip - (uint8_t *)p->payload)) != 0) {
			pbuf_free(p);
			return;
		}
		pbuf_realloc(p, (u16_t)len);
	} else {
		p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
		if (!p)
			return;
		pbuf_take(p, ip, (u16_t)len);
	}
	if (tcp)
		csum_trusted = p;
	if (family == 4) {
		ip4_addr_t saved = *ip_2_ip4(&gw->nif->ip_addr);

		memcpy(&ip_2_ip4(&gw->nif->ip_addr)->addr, dst, 4);
		ip4_input(p, gw->nif);
		*ip_2_ip4(&gw->nif->ip_addr) = saved;
	} else {
		ip6_addr_t *slot = ip_2_ip6(&gw->nif->ip6_addr[1]);

		memcpy(slot->addr, dst, 16);
		ip6_addr_clear_zone(slot);
		ip6_input(p, gw->nif);
		memcpy(slot->addr, idle6, 16);
	}
	csum_trusted = NULL;
}

/*
 * Where the next TAP read goes (see net/flow.h); a fresh pbuf once lwIP took
 * the last. Its payload is room for an IP packet of up to 64 KiB (a pbuf's
 * length is a u16), and the virtio-net and Ethernet headers are read into the
 * headroom lwIP leaves before it (PBUF_TRANSPORT: more than they need), so a
 * well-formed frame's IP packet starts exactly at the payload.
 */
uint8_t *stack_rx_buffer(size_t *cap)
{
	const size_t lead = GW_VNET_HLEN + GW_ETH_HLEN;

	if (!rx_spare) {
		rx_spare = pbuf_alloc(PBUF_TRANSPORT, 0xffff, PBUF_RAM);
		if (rx_spare && (uint8_t *)rx_spare->payload - lead < (uint8_t *)(rx_spare + 1)) {
			pbuf_free(rx_spare);    /* less headroom than lwIP documents: copy instead */
			rx_spare = NULL;
		}
	}
	if (!rx_spare)
		return NULL;
	*cap = lead + rx_spare->len;
	return (uint8_t *)rx_spare->payload - lead;
}

/* ---- the sandbox→upstream queue: pbuf chains as lwIP delivered them ------------ */

/*
 * The memory a pbuf holds, for the upload budget: lwIP allocates every pbuf
 * with malloc (MEM_LIBC_MALLOC), the struct at the start of the block, and
 * its pbuf_realloc never shrinks one.
 */
static size_t pbuf_held(const struct pbuf *p)
{
	return malloc_usable_size((void *)p);
}

/* Free the queue's head pbuf (its bytes are consumed). */
static void upq_free_head(struct flow *f)
{
	struct pbuf *h = f->upq;

	f->upq = h->next;
	h->next = NULL;
	f->gw->up_queued -= pbuf_held(h);
	pbuf_free(h);
	f->upq_off = 0;
}

/* Append a chain received from lwIP to the sandbox→upstream queue. */
static void upq_push(struct flow *f, struct pbuf *p)
{
	struct pbuf *last = p;

	/* Chains are linked through ->next but never pbuf_cat'ed: the head's
	 * u16 tot_len would overflow; upq_len is the length that counts. */
	f->gw->up_queued += pbuf_held(p);
	while (last->next) {
		last = last->next;
		f->gw->up_queued += pbuf_held(last);
	}
	f->upq_len += p->tot_len;
	if (f->upq_tail)
		f->upq_tail->next = p;
	else
		f->upq = p;
	f->upq_tail = last;
}

/* Free the whole queue. */
void stack_upq_clear(struct flow *f)
{
	while (f->upq)
		upq_free_head(f);
	f->upq_tail = NULL;
	f->upq_off = f->upq_len = 0;
}

/* Drop n bytes from the front of the queue. */
void stack_upq_consume(struct flow *f, size_t n)
{
	f->upq_len -= n;
	while (n && f->upq) {
		size_t avail = f->upq->len - f->upq_off;

		if (n < avail) {
			f->upq_off += n;
			return;
		}
		n -= avail;
		upq_free_head(f);
	}
	if (f->upq_len == 0)
		stack_upq_clear(f);
}

/* Copy up to cap bytes from the front of the queue. */
size_t stack_upq_peek(const struct flow *f, uint8_t *out, size_t cap)
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

/* The next sequence number the flow's pcb expects from the sandbox; false without a pcb. */
bool stack_tcp_rcv_nxt(const struct flow *f, uint32_t *nxt)
{
	if (!f->pcb)
		return false;
	*nxt = f->pcb->rcv_nxt;
	return true;
}

/* Copy up to cap bytes of the queue starting off bytes past its front. */
size_t stack_upq_copy(const struct flow *f, size_t off, uint8_t *out, size_t cap)
{
	size_t skip = f->upq_off + off, got = 0;

	for (const struct pbuf *p = f->upq; p && got < cap; p = p->next) {
		size_t n;

		if (skip >= p->len) {
			skip -= p->len;
			continue;
		}
		n = p->len - skip;
		if (n > cap - got)
			n = cap - got;
		memcpy(out + got, (const uint8_t *)p->payload + skip, n);
		got += n;
		skip = 0;
	}
	return got;
}

/* Give lwIP back n bytes of receive window (tcp_recved takes a u16). */
void stack_tcp_recved(struct flow *f, size_t n)
{
	while (f->pcb && n) {
		u16_t c = n > 0xffff ? 0xffff : (u16_t)n;

		tcp_recved(f->pcb, c);
		n -= c;
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


/* ---- TCP ---------------------------------------------------------------------- */

/* lwIP delivered bytes from the sandbox (NULL: its FIN): queue them for upstream. */
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
	f = tcp_flow_accepting(gw, family, src, pcb->remote_port, dst, pcb->local_port);
	if (!f) {
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
	tcp_flow_accepted(f);
	return ERR_OK;
}

/* The listening pcb for a port, created on the first SYN to it (IP_ANY_TYPE: every address). */
bool stack_tcp_listen(struct gw *gw, uint16_t port)
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

/* ---- UDP ---------------------------------------------------------------------- */

/* A datagram from the sandbox (lwIP's callback; the destination is the packet's). */
static void udp_on_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr,
			u16_t port)
{
	struct gw *gw = arg;
	struct gw_packet key = { .proto = IPPROTO_UDP };
	size_t len = p->tot_len;

	key.family = addr_from_lwip(addr, key.src);
	addr_from_lwip(ip_current_dest_addr(), key.dst);
	key.sport = port;
	key.dport = pcb->local_port;
	pbuf_copy_partial(p, gw->dgram, p->tot_len, 0);
	pbuf_free(p);
	udp_datagram_in(gw, &key, len);
}

/* The UDP pcb for a port, bound on the first datagram to it (every address). */
bool stack_udp_listen(struct gw *gw, uint16_t port)
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

/* ---- what the rest of the gateway asks ----------------------------------------- */

/* A new SYN's tuple: drop a TIME_WAIT pcb holding it; true when a live pcb does. */
bool stack_tcp_syn_known(const struct gw_packet *pkt)
{
	struct tcp_pcb *tw = pcb_find(tcp_tw_pcbs, pkt);

	if (tw)
		time_wait_drop(tw);
	return pcb_find(tcp_active_pcbs, pkt) != NULL;
}

/* Close (or, with reset, abort) the flow's pcb, if it has one, without callbacks. */
void stack_tcp_close(struct flow *f, bool reset)
{
	struct tcp_pcb *pcb = f->pcb;

	if (!pcb)
		return;
	f->pcb = NULL;
	pcb_detach(pcb);
	if (reset || tcp_close(pcb) != ERR_OK)
		tcp_abort(pcb);
}

/* Room in the pcb's send buffer. */
size_t stack_tcp_sndbuf(const struct flow *f)
{
	return tcp_sndbuf(f->pcb);
}

/* True when the pcb's segment queue is too full to take more. */
bool stack_tcp_queue_full(const struct flow *f)
{
	return tcp_sndqueuelen(f->pcb) >= TCP_SND_QUEUELEN - 8;
}

/*
 * The most one segment to the sandbox carries: the MSS lwIP segments by
 * (tcp_write's mss_local: the pcb's MSS, at most half the largest window the
 * sandbox offered). A write of more ends in a segment of the rest on its
 * own: 64 KiB written as 65480 + 55 bytes sent every other frame as a
 * 55-byte one, a TAP write and a trip through the sandbox's stack each.
 */
size_t stack_tcp_seg_max(const struct flow *f)
{
	u16_t mss = (u16_t)LWIP_MIN(f->pcb->mss, TCPWND_MIN16(f->pcb->snd_wnd_max / 2));

	return mss ? mss : f->pcb->mss;
}

/* Copy n bytes (at most 64 KiB) into the pcb's send queue; more: others follow at once. */
enum stack_write stack_tcp_write(struct flow *f, const void *p, size_t n, bool more)
{
	err_t e = tcp_write(f->pcb, p, (u16_t)n,
			    TCP_WRITE_FLAG_COPY | (more ? TCP_WRITE_FLAG_MORE : 0));

	return e == ERR_OK ? STACK_WROTE : e == ERR_MEM ? STACK_FULL : STACK_FAILED;
}

/*
 * Queue n bytes the upstream socket fd holds (a peek said so) without
 * copying them through buf: tcp_write's copy of each segment is a recv into
 * it (lwip_chksum_copy). STACK_FULL: nothing was read. A write that failed
 * after reading, or a read that came back short (the segments would carry
 * garbage), is STACK_FAILED: the bytes cannot be put back, so the flow is
 * reset, and lwIP's pcb has to be aborted before it sends anything.
 */
enum stack_write stack_tcp_write_recv(struct flow *f, int fd, void *buf, size_t n)
{
	err_t e;

	stream.base = buf;
	stream.len = n;
	stream.done = 0;
	stream.gap_lo = stream.gap_hi = 0;
	stream.fd = fd;
	stream.failed = false;
	e = tcp_write(f->pcb, buf, (u16_t)n, TCP_WRITE_FLAG_COPY);
	stream.base = NULL;
	if (e == ERR_OK && !stream.failed && stream.done == n)
		return STACK_WROTE;
	if (e == ERR_MEM && stream.done == 0)
		return STACK_FULL;
	return STACK_FAILED;
}

/* Send what is queued. */
void stack_tcp_output(struct flow *f)
{
	tcp_output(f->pcb);
}

/* Queue the FIN (lwIP sets it on the last unsent segment). */
void stack_tcp_shutdown(struct flow *f)
{
	tcp_shutdown(f->pcb, 0, 1);
}

/* The queue's bytes as at most max iovecs, for one sendmsg; returns the count. */
int stack_upq_iov(const struct flow *f, struct iovec *iov, int max)
{
	size_t off = f->upq_off;
	int n = 0;

	for (const struct pbuf *p = f->upq; p && n < max; p = p->next) {
		if (p->len > off)
			iov[n++] = (struct iovec){ (uint8_t *)p->payload + off, p->len - off };
		off = 0;
	}
	return n;
}

/* A datagram to the sandbox from the pcb bound to lport; false when lwIP had no memory. */
bool stack_udp_send(struct gw *gw, uint16_t lport, int family, const uint8_t *to, uint16_t tport,
		    const uint8_t *from, const void *data, size_t n)
{
	struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)n, PBUF_RAM);
	ip_addr_t t, fr;

	if (!p)
		return false;
	pbuf_take(p, data, (u16_t)n);
	addr_to_lwip(&t, family, to);
	addr_to_lwip(&fr, family, from);
	udp_sendto_if_src(gw->udp_bound[lport], p, &t, tport, gw->nif, &fr);
	pbuf_free(p);
	return true;
}

/* lwIP's timers, then every TIME_WAIT pcb dropped. */
void stack_timers(void)
{
	sys_check_timeouts();
	time_wait_drop_all();
}

/* Seconds until lwIP's next timer, or -1 when none is set. */
double stack_sleep(void)
{
	u32_t ms = sys_timeouts_sleeptime();

	return ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE ? -1 : ms / 1000.0;
}

/* lwip_init and the gateway's interface, for both families. */
void stack_create(struct gw *gw)
{
	ip4_addr_t ip, mask, none;
	ip6_addr_t a6;

	gw->nif = xcalloc(1, sizeof(*gw->nif));
	lwip_init();
	memcpy(&ip.addr, gw_gateway4, 4);
	IP4_ADDR(&mask, 255, 255, 255, 0);
	ip4_addr_set_zero(&none);
	if (!netif_add(gw->nif, &ip, &mask, &none, gw, netif_setup, ip_input))
		fatal("lwIP refused the gateway's interface");
	gw->nif->mtu6 = GW_MTU;
	netif_set_default(gw->nif);
	netif_set_up(gw->nif);
	netif_set_link_up(gw->nif);
	/* Slot 0: the gateway's own IPv6 address; slot 1: the swap slot. Both set
	 * PREFERRED directly, which skips duplicate address detection. */
	memcpy(a6.addr, gw_gateway6, 16);
	ip6_addr_clear_zone(&a6);
	netif_ip6_addr_set(gw->nif, 0, &a6);
	netif_ip6_addr_set_state(gw->nif, 0, IP6_ADDR_PREFERRED);
	memcpy(a6.addr, idle6, 16);
	netif_ip6_addr_set(gw->nif, 1, &a6);
	netif_ip6_addr_set_state(gw->nif, 1, IP6_ADDR_PREFERRED);
}
