/*
 * net/tcp.c — boxy-net's TCP flows. A SYN that opens a new connection is
 * held, not fed to lwIP, until the broker answers FLOW_OPEN: refused → the
 * gateway answers it with a RST itself and lwIP never sees it; dialled or
 * need_name → it is fed to lwIP. In allowlist mode the first bytes are read
 * for their name (net/name.c) and put to the broker before one byte goes
 * upstream. An open flow is spliced to its upstream socket both ways, with
 * backpressure: lwIP's window opens only as upstream takes the bytes, and
 * upstream is read only while lwIP has room (and the gateway's budget).
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"
#include "net/flow.h"
#include "net/http-gate.h"
#include "net/tls.h"
#include "proto/netproto.h"

/* Refuse a SYN with a RST written straight to the TAP (lwIP never saw it). */
static void send_rst(struct gw *gw, const struct gw_packet *syn)
{
	uint8_t out[GW_ETH_HLEN + 60];
	size_t n = gw_build_rst(syn, gw->sandbox_mac, out, sizeof(out));

	if (n)
		tap_send(gw, out, n);
}

/*
 * A TCP segment from the sandbox. Everything but a new connection's SYN
 * goes straight to lwIP (which resets what it does not know). A new SYN is
 * held and put to the broker; port 53 is ours and is admitted at once.
 */
void tcp_segment_in(struct gw *gw, const struct gw_packet *pkt)
{
	struct flow *f;

	if ((pkt->tcp_flags & (GW_TCP_SYN | GW_TCP_ACK | GW_TCP_RST)) != GW_TCP_SYN) {
		if (pkt->tcp_payload && !flow_up_admit(gw, pkt))
			return;         /* the upload budget (GW_UP_BUDGET): it is sent again */
		stack_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	if (stack_tcp_syn_known(pkt)) {
		stack_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	f = flow_find_tuple(gw, IPPROTO_TCP, pkt->family, pkt->src, pkt->sport, pkt->dst,
			    pkt->dport);
	if (f) {
		/* HELD: the broker is still deciding (the client retransmits).
		 * ADMITTED without a pcb: lwIP dropped its half-open pcb; feed again.
		 * Later states: the previous connection on this tuple is still draining. */
		if (f->state == FS_ADMITTED)
			stack_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
		return;
	}
	if (flows_full(gw) || !stack_tcp_listen(gw, pkt->dport)) {
		send_rst(gw, pkt);
		return;
	}
	if (pkt->dport == 53) {
		f = flow_new(gw, FLOW_DNS, pkt);
		f->state = FS_ADMITTED;
		f->deadline = ev_now(gw->loop) + GW_ADMIT_TIMEOUT;
		stack_feed(gw, pkt->family, pkt->ip, pkt->ip_len, pkt->dst);
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
void tcp_upstream_readable(struct gw *gw, struct flow *f)
{
	bool wrote = false;

	for (int i = 0; i < 4; i++) {
		size_t space;
		ssize_t n;
		enum stack_write e;
		bool direct;

		if (!f->pcb || f->down_len || f->down_eof) {
			ev_io_stop(gw->loop, &f->rio);
			break;
		}
		space = stack_tcp_sndbuf(f);
		if (stack_tcp_queue_full(f))
			space = 0;
		if (gw->down_held >= GW_DOWN_BUDGET) {
			space = 0;
			gw->down_starved = true;        /* gw_service wakes every flow later */
		}
		if (space == 0) {
			ev_io_stop(gw->loop, &f->rio);     /* tcp_on_sent starts it again */
			break;
		}
		/* One whole segment a read, not 64 KiB cut into one and a sliver. */
		if (space > stack_tcp_seg_max(f))
			space = stack_tcp_seg_max(f);
		if (space > 0xffff)
			space = 0xffff;
		/*
		 * A flow with no gate reads into lwIP's segments directly: a peek
		 * (MSG_TRUNC: nothing copied) says how much there is, and tcp_write's
		 * copy of each segment is the read (stack_tcp_write_recv). Gated flows
		 * read into rbuf: the gate reads the bytes before lwIP has them.
		 */
		direct = !f->gate;
		n = recv(f->fd, gw->rbuf, space, MSG_DONTWAIT | (direct ? MSG_PEEK | MSG_TRUNC : 0));
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
			if (f->gate && http_gate_plain_eof(gw, f)) {
				flow_dirty(f);          /* a refusal goes out before the FIN */
				break;
			}
			/* Queued before tcp_output: lwIP sets FIN on the last unsent segment. */
			stack_tcp_shutdown(f);
			f->down_fin = true;
			flow_dirty(f);
			break;
		}
		if (direct) {
			e = stack_tcp_write_recv(f, f->fd, gw->rbuf, (size_t)n);
			if (e == STACK_FULL) {
				ev_io_stop(gw->loop, &f->rio);  /* nothing read: tcp_on_sent starts it */
				break;
			}
			if (e != STACK_WROTE) {
				flow_kill(f, true);     /* bytes read and lost, or garbage queued */
				return;
			}
			f->down_bytes += (uint64_t)n;
			flow_held(f, n);
			wrote = true;
			if ((size_t)n < space && i > 0)
				break;
			continue;
		}
		f->down_bytes += (uint64_t)n;
		if (f->gate) {
			/* Framed: after a refusal, nothing past the answers it waits for. */
			n = (ssize_t)http_gate_plain_down(gw, f, gw->rbuf, (size_t)n);
			if (n == 0) {
				if (http_gate_plain_answer(gw, f))
					break;
				continue;
			}
		}
		e = stack_tcp_write(f, gw->rbuf, (size_t)n, false);
		if (e == STACK_WROTE)
			flow_held(f, n);
		if (e == STACK_FULL) {
			f->down = xmalloc((size_t)n);
			memcpy(f->down, gw->rbuf, (size_t)n);
			f->down_len = (size_t)n;
			ev_io_stop(gw->loop, &f->rio);
			if (f->gate)
				http_gate_plain_answer(gw, f);  /* queued behind them */
			break;
		} else if (e != STACK_WROTE) {
			f->reset = true;
			flow_dirty(f);
			return;
		}
		wrote = true;
		if (f->gate && http_gate_plain_answer(gw, f))
			break;          /* the refusal follows what just went down */
		if ((size_t)n < space && i > 0)
			break;          /* a short read after a full one: likely drained */
	}
	if (f->pcb && (wrote || f->down_fin))
		stack_tcp_output(f);
}

/* Write the queue upstream; 0, or -1 when the upstream socket failed. */
static int tcp_flush_up(struct gw *gw, struct flow *f)
{
	while (f->upq_len) {
		struct iovec iov[64];
		struct msghdr mh = { .msg_iov = iov };
		/* A gated flow sends only what its gate let through (net/http-gate.c). */
		size_t limit = f->gate ? http_gate_plain_sendable(f) : f->upq_len, sum = 0;
		ssize_t w;

		if (limit == 0)
			break;
		mh.msg_iovlen = (size_t)stack_upq_iov(f, iov, (int)ARRAY_SIZE(iov));
		for (size_t i = 0; i < mh.msg_iovlen; i++) {
			if (sum + iov[i].iov_len >= limit) {
				iov[i].iov_len = limit - sum;
				mh.msg_iovlen = i + 1;
				break;
			}
			sum += iov[i].iov_len;
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
		stack_upq_consume(f, (size_t)w);
		f->up_bytes += (uint64_t)w;
		stack_tcp_recved(f, (size_t)w);     /* the window opens only as upstream takes bytes */
	}
	ev_io_stop(gw->loop, &f->wio);
	return 0;
}

/* Allowlist mode: name the flow from its first bytes once they say enough. */
static void tcp_name_flow(struct gw *gw, struct flow *f)
{
	size_t n = stack_upq_peek(f, gw->rbuf, GW_NAME_PEEK);
	bool give_up = f->up_eof || f->name_timeout || n >= GW_NAME_PEEK;
	char name[DNS_NAME_BUF];
	bool ech;
	int kind = gw_name_classify(gw->rbuf, n, give_up, name, &ech);

	if (kind < 0)
		return;
	send_flow_name(gw, f, (enum net_name_kind)kind, ech, name);
	free(f->name);
	f->name = name[0] ? xstrdup(name) : NULL;
	f->late_name = kind == NET_NAME_NONE && n == 0;
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
	size_t n = stack_upq_peek(f, gw->rbuf, GW_NAME_PEEK);
	char name[DNS_NAME_BUF];
	bool ech;
	int kind = gw_name_classify(gw->rbuf, n, true, name, &ech);

	f->observed = true;
	if ((kind != NET_NAME_SNI && kind != NET_NAME_HOST) || !name[0])
		return;
	send_flow_seen(gw, f, (enum net_name_kind)kind, name);
}

/*
 * The decoy tokens in what the sandbox queued for upstream, the part not
 * looked at yet and within the budget: true when one was there (the flow
 * must be reset before any of it is written).
 */
static bool tcp_tripwire(struct gw *gw, struct flow *f)
{
	size_t skip, want, got;

	if (!gw->tw || f->tw_scanned >= NETPROTO_TRIPWIRE_SCAN || !f->upq_len ||
	    f->tw_scanned < f->up_bytes)        /* never: nothing is sent unscanned */
		return f->tw_tripped;
	/* The queue starts at byte up_bytes of the stream; what was scanned of it is skipped. */
	skip = (size_t)(f->tw_scanned - f->up_bytes);
	want = f->upq_len;
	if (want > NETPROTO_TRIPWIRE_SCAN - f->up_bytes)
		want = (size_t)(NETPROTO_TRIPWIRE_SCAN - f->up_bytes);
	if (want > sizeof(gw->rbuf))
		want = sizeof(gw->rbuf);
	if (want <= skip)
		return false;
	got = stack_upq_peek(f, gw->rbuf, want);
	return got > skip && flow_tripwire_scan(gw, f, gw->rbuf + skip, got - skip);
}

/* One spliced TCP flow: move bytes both ways, propagate half-closes, end it when done. */
void tcp_service(struct gw *gw, struct flow *f)
{
	if (f->reset || (f->pcb_gone && !f->pcb_clean) ||
	    (f->pcb_gone && f->state != FS_OPEN)) {
		if (f->tls)
			tls_flow_reset(gw, f);
		flow_kill(f, true);
		return;
	}
	if (f->state == FS_NAMING) {
		tcp_name_flow(gw, f);
		return;
	}
	if (f->state != FS_OPEN)
		return;
	if (f->tls) {
		tls_service(gw, f);
		return;
	}
	if (f->gate) {
		http_gate_plain_service(gw, f);
		if (f->reset) {
			flow_kill(f, true);
			return;
		}
	}
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
		size_t n = stack_upq_peek(f, gw->rbuf, GW_NAME_PEEK);
		char name[DNS_NAME_BUF];
		bool ech;
		int kind = gw_name_classify(gw->rbuf, n, f->up_eof || n >= GW_NAME_PEEK, name,
					    &ech);

		if (kind >= 0 && kind != NET_NAME_NONE) {
			broker_log(gw, "a flow allowed without a name (silent past the name "
				   "timeout) then sent TLS or HTTP: reset");
			flow_kill(f, true);
			return;
		}
		if (kind == NET_NAME_NONE)
			f->late_name = false;
	}
	if (gw->observe && !f->observed && f->upq_len)
		tcp_observe_flow(gw, f);
	if (!f->late_name && tcp_tripwire(gw, f)) {
		/* A decoy token in what it was about to send: it never leaves. */
		flow_kill(f, true);
		return;
	}
	if (!f->late_name && f->upq_len && tcp_flush_up(gw, f) < 0) {
		flow_kill(f, true);
		return;
	}
	/* The bytes a stopped gate still let through are upstream now: it acts. */
	if (f->gate && f->upq_len && !http_gate_plain_sendable(f)) {
		http_gate_plain_service(gw, f);
		if (f->reset) {
			flow_kill(f, true);
			return;
		}
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
		enum stack_write e = stack_tcp_write(f, f->down, f->down_len, false);

		if (e == STACK_WROTE) {
			flow_held(f, (ssize_t)f->down_len);
			free(f->down);
			f->down = NULL;
			f->down_len = 0;
			stack_tcp_output(f);
		} else if (e != STACK_FULL) {
			flow_kill(f, true);
			return;
		}
	}
	if (!f->down_len && f->down_eof && !f->down_fin) {
		stack_tcp_shutdown(f);
		f->down_fin = true;
	}
	if (!f->down_eof && !f->down_len && stack_tcp_sndbuf(f) > 0 &&
	    gw->down_held < GW_DOWN_BUDGET)
		ev_io_start(gw->loop, &f->rio);
	if (f->up_shut && f->down_fin)
		flow_kill(f, false);
}

/* lwIP completed a handshake on this tuple: the flow admitted for it, or NULL (abort it). */
struct flow *tcp_flow_accepting(struct gw *gw, int family, const uint8_t *src, uint16_t sport,
				const uint8_t *dst, uint16_t dport)
{
	struct flow *f = flow_find_tuple(gw, IPPROTO_TCP, family, src, sport, dst, dport);

	if (!f || f->state != FS_ADMITTED || f->pcb)
		return NULL;
	return f;
}

/* The flow has its pcb: name it first (allowlist mode), or splice it. */
void tcp_flow_accepted(struct flow *f)
{
	if (f->need_name) {
		f->state = FS_NAMING;
		f->deadline = ev_now(f->gw->loop) + GW_NAME_TIMEOUT;
	} else {
		f->state = FS_OPEN;
	}
	flow_dirty(f);
}

/* The broker's verdict on a held SYN: refuse it with a RST, or feed it to lwIP (fd: dialled, or -1). */
void tcp_admit(struct gw *gw, struct flow *f, uint8_t v, int fd)
{
	if (v == NETV_REFUSED) {
		send_rst(gw, &f->syn);
		flow_kill(f, false);
		return;
	}
	if (fd >= 0)
		flow_attach_fd(gw, f, fd);
	f->need_name = v == NETV_NEED_NAME;
	f->deadline = ev_now(gw->loop) + GW_ADMIT_TIMEOUT;
	stack_feed(gw, f->family, f->held, f->held_len, f->dst);
	free(f->held);
	f->held = NULL;
}

/*
 * The broker's verdict on a named flow: splice it to fd (with NETVF_GATE,
 * through an HTTP gate bound to the name it sent; with NETVF_TLS too, after
 * TLS inspection ends its TLS), or reset it. -1: not one it waited for.
 */
int tcp_named(struct gw *gw, struct flow *f, uint8_t v, int fd, uint8_t flags)
{
	if (f->state == FS_NAME_SENT && v == NETV_DIALLED && (flags & NETVF_TLS)) {
		/* Inspected: TLS is ended here, and the gate sees its plaintext (net/tls.c). */
		flow_attach_fd(gw, f, fd);
		f->state = FS_OPEN;
		tls_flow_start(gw, f);
		flow_dirty(f);
		return 0;
	}
	if (f->state == FS_NAME_SENT && v == NETV_DIALLED) {
		if (flags & NETVF_GATE)
			f->gate = http_gate_create(gw, f, f->name, HTTP_GATE_PLAIN);
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
	return -1;
}
