/*
 * net/udp.c — boxy-net's UDP flows: one per 4-tuple, put to the broker at
 * its first datagram (the first few are held meanwhile), then spliced to a
 * connected socket; datagrams from upstream go back from the address and
 * port the sandbox sent to. A refusal is remembered for a while so the
 * broker is not asked per datagram. Port 53 goes to net/dns.c instead.
 */
#include <config.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"
#include "net/flow.h"
#include "proto/netproto.h"

/*
 * One datagram to the upstream socket (a failed send is a lost datagram);
 * one holding a decoy token, and every datagram of the flow after it, is
 * dropped instead.
 */
static void udp_send_up(struct gw *gw, struct flow *f, const uint8_t *p, size_t len)
{
	if (flow_tripwire_scan(gw, f, p, len))
		return;
	if (send(f->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		f->up_bytes += len;
}

/* A datagram from the sandbox, len bytes in gw->dgram (net/lwip.c's callback; key: its tuple). */
void udp_datagram_in(struct gw *gw, const struct gw_packet *key, size_t len)
{
	struct flow *f;

	if (key->dport == 53) {
		struct dns_pending how = { .family = key->family, .cport = key->sport };

		memcpy(how.client, key->src, 16);
		memcpy(how.server, key->dst, 16);
		dns_query_in(gw, &how, gw->dgram, len);
		return;
	}
	f = flow_find_tuple(gw, IPPROTO_UDP, key->family, key->src, key->sport, key->dst,
			    key->dport);
	if (!f) {
		if (flows_full(gw))
			return;
		f = flow_new(gw, FLOW_UDP, key);
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
		udp_send_up(gw, f, gw->dgram, len);
		f->deadline = ev_now(gw->loop) + GW_UDP_IDLE;
		break;
	default:
		break;
	}
}

/* Datagrams from upstream go back from the address and port the sandbox sent to. */
void udp_upstream_readable(struct gw *gw, struct flow *f)
{
	for (int i = 0; i < 16; i++) {
		ssize_t n = recv(f->fd, gw->dgram, 65507, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			continue;       /* ECONNREFUSED from an ICMP error: the flow stays */
		}
		if (!stack_udp_send(gw, f->dport, f->family, f->src, f->sport, f->dst, gw->dgram,
				    (size_t)n))
			return;
		f->down_bytes += (uint64_t)n;
		f->deadline = ev_now(gw->loop) + GW_UDP_IDLE;
	}
}

/* Drop the datagrams held while the broker decided. */
void udp_queue_drop(struct flow *f)
{
	while (f->udpq) {
		struct udp_dgram *d = f->udpq;

		f->udpq = d->next;
		free(d);
	}
	f->udpq_tail = &f->udpq;
	f->udpq_n = 0;
}

/* The broker's verdict on a held UDP flow: drop it for a while, or splice it to fd. */
void udp_verdict(struct gw *gw, struct flow *f, uint8_t v, int fd)
{
	if (v != NETV_DIALLED) {
		f->state = FS_REFUSED;
		f->deadline = ev_now(gw->loop) + GW_UDP_REFUSED_KEEP;
		udp_queue_drop(f);
		return;
	}
	flow_attach_fd(gw, f, fd);
	f->state = FS_OPEN;
	f->deadline = ev_now(gw->loop) + GW_UDP_IDLE;
	while (f->udpq) {
		struct udp_dgram *d = f->udpq;

		f->udpq = d->next;
		udp_send_up(gw, f, d->data, d->len);
		free(d);
	}
	f->udpq_tail = &f->udpq;
	f->udpq_n = 0;
	ev_io_start(gw->loop, &f->rio);
}
