/*
 * net/flow.c — boxy-net's flow table: one entry per TCP connection, UDP
 * 4-tuple or DNS-over-TCP stream the sandbox opened, found by tuple (as the
 * sandbox sees it) or by the id the broker knows it by. A flow's life is
 * separate from its pcb's: lwIP may free the pcb (tcp_err) while bytes the
 * sandbox sent are still waiting for the upstream socket to take them, so
 * a flow ends only here (flow_kill), never inside an lwIP callback, and is
 * freed by gw_service once no callback can reach it.
 */
#include <config.h>

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/util.h"
#include "net/flow.h"
#include "net/http-gate.h"
#include "net/tls.h"
#include "proto/netproto.h"

/* A tuple's bucket in the flow table. */
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
struct flow *flow_find_tuple(struct gw *gw, uint8_t proto, int family, const uint8_t *src,
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
struct flow *flow_find_id(struct gw *gw, uint32_t id)
{
	struct flow *f = gw->by_id[id % GW_HASH];

	for (; f; f = f->next_id)
		if (f->id == id)
			return f;
	return NULL;
}

/* A new flow for the packet's tuple, in every table; the caller sets its state. */
struct flow *flow_new(struct gw *gw, enum flow_kind kind, const struct gw_packet *pkt)
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
void flow_dirty(struct flow *f)
{
	if (f->dirty || f->state == FS_DEAD)
		return;
	f->dirty = true;
	f->next_dirty = f->gw->dirty;
	f->gw->dirty = f;
}

/* Count bytes handed to lwIP for the sandbox (n > 0), or acked or dropped (n < 0). */
void flow_held(struct flow *f, ssize_t n)
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

/*
 * A TCP segment carrying data from the sandbox, before lwIP sees it: false
 * when it must not be fed (GW_UP_BUDGET; the sandbox's kernel resends it).
 * Never fed: bytes past a hole in the flow's sequence (lwIP would hold
 * them out of order, uncounted). Past the budget: bytes the flow has not
 * received yet. Always fed: what has no pcb to ask (lwIP answers it), and
 * resent old bytes (lwIP acknowledges them again, so a sender whose ACK was
 * lost is not left waiting).
 */
bool flow_up_admit(struct gw *gw, const struct gw_packet *pkt)
{
	struct flow *f = flow_find_tuple(gw, IPPROTO_TCP, pkt->family, pkt->src, pkt->sport,
					 pkt->dst, pkt->dport);
	uint32_t nxt;
	int32_t ahead;

	if (!f)
		return true;
	if (!stack_tcp_rcv_nxt(f, &nxt)) {
		/* The handshake's last ACK may carry data: lwIP expects the byte after the SYN. */
		if (f->kind != FLOW_TCP || f->state != FS_ADMITTED)
			return true;
		nxt = f->syn.tcp_seq + 1;
	}
	ahead = (int32_t)(pkt->tcp_seq - nxt);
	if (ahead <= 0 && (int64_t)ahead + (int64_t)pkt->tcp_payload <= 0)
		return true;
	if (ahead <= 0 && gw->up_queued < GW_UP_BUDGET)
		return true;
	gw->up_refused++;
	if (ahead <= 0 && !gw->up_full_reported) {
		gw->up_full_reported = true;
		broker_log(gw, "upload budget reached: the sandbox's senders wait until upstream "
			   "takes what is queued");
	}
	return false;
}

/*
 * End a flow: close (or, with reset, abort) its pcb and its upstream socket,
 * report FLOW_CLOSE if FLOW_OPEN was sent, and queue it to be freed. Never
 * called from inside an lwIP callback for that pcb.
 */
void flow_kill(struct flow *f, bool reset)
{
	struct gw *gw = f->gw;

	if (f->state == FS_DEAD)
		return;
	stack_tcp_close(f, reset);
	tls_flow_free(f);
	if (f->fd >= 0) {
		ev_io_stop(gw->loop, &f->rio);
		ev_io_stop(gw->loop, &f->wio);
		close(f->fd);
		f->fd = -1;
	}
	stack_upq_clear(f);
	flow_held(f, -(ssize_t)f->down_held);
	free(f->down);
	f->down = NULL;
	free(f->held);
	f->held = NULL;
	udp_queue_drop(f);
	if (f->state == FS_HELD)
		gw->nheld--;
	if (f->opened)
		send_flow_counts(gw, f, NET_FLOW_CLOSE);
	flow_unhash(f);
	f->state = FS_DEAD;
	f->next = gw->dead;
	gw->dead = f;
}

/* True when no new flow may be opened (said once to the daemon's log). */
bool flows_full(struct gw *gw)
{
	if (gw->nflows < gw->max_flows && gw->nheld < GW_MAX_HELD)
		return false;
	if (!gw->flows_full_reported) {
		gw->flows_full_reported = true;
		broker_log(gw, "flow table full: new connections are refused until flows end");
	}
	return true;
}

/* Upstream readable: TCP or UDP bytes for the sandbox. */
static void upstream_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct flow *f = w->data;

	(void)loop;
	(void)revents;
	if (f->kind == FLOW_UDP)
		udp_upstream_readable(f->gw, f);
	else if (f->tls)
		tls_upstream_ready(f->gw, f);
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
void flow_attach_fd(struct gw *gw, struct flow *f, int fd)
{
	(void)gw;
	f->fd = fd;
	ev_io_init(&f->rio, upstream_read_cb, fd, EV_READ);
	ev_io_init(&f->wio, upstream_write_cb, fd, EV_WRITE);
	f->rio.data = f->wio.data = f;
}

/* Service every dirty flow, then free the flows that ended. */
void gw_service(struct gw *gw)
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
		if (f->gate)
			http_gate_free(f->gate);
		free(f->name);
		free(f);
	}
}

/*
 * The decoy tokens in what the sandbox sends on f: the first
 * NETPROTO_TRIPWIRE_SCAN bytes, as one stream (a token cut across two
 * segments is found). Scanned before they are sent; a hit is told once.
 */
bool flow_tripwire_scan(struct gw *gw, struct flow *f, const uint8_t *p, size_t n)
{
	struct tw_hit hit;

	if (f->tw_tripped)
		return true;
	if (!gw->tw || f->tw_scanned >= NETPROTO_TRIPWIRE_SCAN || n == 0)
		return false;
	if (n > NETPROTO_TRIPWIRE_SCAN - f->tw_scanned)
		n = (size_t)(NETPROTO_TRIPWIRE_SCAN - f->tw_scanned);
	f->tw_scanned += n;
	if (!tw_scan(gw->tw, &f->tw, p, n, &hit))
		return false;
	f->tw_tripped = true;
	send_tripwire(gw, f, &hit);
	return true;
}
