/*
 * net/broker-msg.c — every message between boxy-net and the broker
 * (proto/netproto.h), encoded and decoded here and nowhere else. boxy-net
 * only asks; what the broker says is checked field by field, and anything
 * malformed or unexpected ends boxy-net (exit status 1): nothing the broker
 * says can be trusted any more.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/util.h"
#include "net/flow.h"
#include "common/netaddr.h"
#include "proto/msg.h"
#include "proto/netproto.h"
#include "proto/wire.h"

/* A flow's address (the frame filter's family 4 or 6 and bytes) for netproto_put_addr. */
static void put_flow_addr(struct wbuf *w, int family, const uint8_t *b)
{
	struct net_addr a;

	if (family == 4)
		net_addr_set_v4(&a, b);
	else
		net_addr_set_v6(&a, b);
	netproto_put_addr(w, &a);
}

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
void broker_log(struct gw *gw, const char *words)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_str(&w, words);
	broker_send(gw, NET_LOG, &w);
}

/* NET_FLOW_OPEN: from now on one NET_FLOW_CLOSE is owed for this flow. */
void send_flow_open(struct gw *gw, struct flow *f)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, f->proto);
	put_flow_addr(&w, f->family, f->dst);
	wire_put_u16(&w, f->dport);
	put_flow_addr(&w, f->family, f->src);
	wire_put_u16(&w, f->sport);
	broker_send(gw, NET_FLOW_OPEN, &w);
	f->opened = true;
}

/* NET_FLOW_STATS or NET_FLOW_CLOSE: the totals so far. */
void send_flow_counts(struct gw *gw, struct flow *f, uint16_t type)
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

/* NET_FLOW_NAME: what the first bytes of a flow waiting for its name named. */
void send_flow_name(struct gw *gw, struct flow *f, enum net_name_kind kind, bool ech,
		    const char *name)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, (uint8_t)kind);
	wire_put_u8(&w, ech ? 1 : 0);
	wire_put_str(&w, name);
	broker_send(gw, NET_FLOW_NAME, &w);
}

/* NET_FLOW_SEEN (public mode): what an open flow's first bytes named, for the record. */
void send_flow_seen(struct gw *gw, struct flow *f, enum net_name_kind kind, const char *name)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, (uint8_t)kind);
	wire_put_str(&w, name);
	broker_send(gw, NET_FLOW_SEEN, &w);
}

/* NET_TRIPWIRE: a decoy token in the flow's first bytes (sent once per flow). */
void send_tripwire(struct gw *gw, struct flow *f, const struct tw_hit *hit)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, (uint8_t)hit->token);
	wire_put_u8(&w, (uint8_t)hit->enc);
	broker_send(gw, NET_TRIPWIRE, &w);
}

/*
 * NET_RESOLVE: a query the sandbox asked, by name, and the socket it came
 * from (protocol, both ends), by which the daemon finds who asked.
 */
void send_resolve(struct gw *gw, uint32_t id, const char *name, uint16_t qtype,
		  const struct dns_source *from)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_str(&w, name);
	wire_put_u16(&w, qtype);
	wire_put_u8(&w, from->proto);
	put_flow_addr(&w, from->family, from->src);
	wire_put_u16(&w, from->sport);
	put_flow_addr(&w, from->family, from->dst);
	wire_put_u16(&w, from->dport);
	broker_send(gw, NET_RESOLVE, &w);
}

/* NET_TLS_FAIL: an inspected flow failed, and why. */
void send_tls_fail(struct gw *gw, struct flow *f, uint8_t code, const char *detail)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u8(&w, code);
	wire_put_str(&w, detail);
	broker_send(gw, NET_TLS_FAIL, &w);
}

/* NET_HTTP_REQUEST: one request a gate decided, for the record (the broker checks it). */
void send_http_request(struct gw *gw, struct flow *f, const struct http_record *r)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, f->id);
	wire_put_u32(&w, r->seq);
	wire_put_u8(&w, r->deny);
	wire_put_u16(&w, r->rule);
	wire_put_u8(&w, r->flags);
	wire_put_str(&w, r->method);
	wire_put_str(&w, r->host);
	wire_put_u16(&w, r->port);
	wire_put_str(&w, r->path);
	wire_put_str(&w, r->query);
	wire_put_str(&w, r->why);
	broker_send(gw, NET_HTTP_REQUEST, &w);
}

/* NET_VERDICT: refuse (RST / drop), admit for naming, or splice to the socket attached. */
static int on_verdict(struct gw *gw, struct msg *m)
{
	struct rbuf r;
	uint32_t id;
	uint8_t v, flags;
	struct flow *f;
	int fd = -1;

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	v = wire_get_u8(&r);
	flags = wire_get_u8(&r);
	if (!wire_done(&r) || v > NETV_NEED_NAME || (v == NETV_DIALLED) != (m->nfds == 1))
		return -1;
	if ((flags & ~(NETVF_GATE | NETVF_TLS)) || (flags && v != NETV_DIALLED) ||
	    (flags & NETVF_TLS && !(flags & NETVF_GATE)) ||
	    /* inspection without the session CA it was promised (NETCFG_TLS) */
	    ((flags & NETVF_TLS) && !gw->tls))
		return -1;
	f = flow_find_id(gw, id);
	if (!f)
		return 0;           /* the flow ended meanwhile; msg_free closes the socket */
	if (v == NETV_DIALLED) {
		fd = m->fds[0];
		m->fds[0] = -1;
	}
	if (f->state == FS_HELD) {
		if (flags) {
			if (fd >= 0)
				close(fd);
			return -1;      /* a gate needs a name: only a named flow has one */
		}
		gw->nheld--;
		f->state = FS_ADMITTED;     /* provisional: udp_verdict and tcp_admit set the real one */
		if (f->kind == FLOW_UDP)
			udp_verdict(gw, f, v, fd);
		else
			tcp_admit(gw, f, v, fd);
		return 0;
	}
	return tcp_named(gw, f, v, fd, flags);  /* -1: a verdict the flow was not waiting for */
}

/* NET_ANSWER: the fields net/dns.c builds the response from (never upstream bytes). */
static int on_answer(struct gw *gw, struct msg *m)
{
	struct net_addr addrs[DNS_ANSWER_MAX];
	struct rbuf r;
	uint32_t id, ttl, n;
	uint8_t rcode;

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	rcode = wire_get_u8(&r);
	ttl = wire_get_u32(&r);
	n = wire_get_u32(&r);
	if (n > DNS_ANSWER_MAX)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (!netproto_get_addr(&r, &addrs[i]))
			return -1;
	if (!wire_done(&r) || rcode > 15)
		return -1;
	dns_answer(gw, id, rcode, ttl, addrs, n);
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
void broker_cb(struct ev_loop *loop, ev_io *w, int revents)
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
