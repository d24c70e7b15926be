/*
 * net/dns.c — port 53, whatever address the sandbox sent to, over UDP and
 * TCP: the query is parsed here (parse/dns.c), asked of the broker by name
 * (NET_RESOLVE), and the response built here from NET_ANSWER's fields,
 * never from upstream bytes. A query the broker does not answer in time
 * gets SERVFAIL.
 */
#include <config.h>

#include <string.h>

#include "common/bytes.h"
#include "net/flow.h"

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
		if (!f->pcb || stack_tcp_sndbuf(f) < n + 2)
			return;
		put16(len, (uint16_t)n);
		stack_tcp_write(f, len, 2, true);
		stack_tcp_write(f, resp, n, false);
		stack_tcp_output(f);
		return;
	}
	stack_udp_send(gw, 53, q->family, q->client, q->cport, q->server, resp, n);
}

/*
 * A query from the sandbox, to whatever address it was sent: parsed here,
 * asked of the broker by name. Returns true if it is now pending (a TCP
 * flow counts it); false when it was answered (FORMERR, SERVFAIL) or dropped.
 */
bool dns_query_in(struct gw *gw, const struct dns_pending *how, const uint8_t *p, size_t len)
{
	struct dns_pending *slot = NULL;
	struct dns_question q;
	uint8_t resp[DNS_HEADER_LEN + DNS_NAME_BUF + 16];
	enum dns_status s = dns_query_parse(p, len, &q);
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
	{
		struct dns_source from = { .proto = 17, .family = how->family, .sport = how->cport,
					   .dport = 53 };
		struct flow *f = how->tcp ? flow_find_id(gw, how->flow_id) : NULL;

		if (f) {
			from.proto = 6;
			from.family = f->family;
			memcpy(from.src, f->src, 16);
			memcpy(from.dst, f->dst, 16);
			from.sport = f->sport;
			from.dport = f->dport;
		} else {
			memcpy(from.src, how->client, 16);
			memcpy(from.dst, how->server, 16);
		}
		send_resolve(gw, slot->id, q.name, q.qtype, &from);
	}
	return true;
}

/* DNS over TCP: two-byte length, then a query; several may be in flight. */
void dns_tcp_service(struct gw *gw, struct flow *f)
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

		stack_upq_peek(f, buf, 2);
		len = get16(buf);
		if (len == 0 || len > GW_DNS_TCP_MAX) {
			flow_kill(f, true);
			return;
		}
		if (f->upq_len < 2 + len)
			break;
		stack_upq_peek(f, buf, 2 + len);
		stack_upq_consume(f, 2 + len);
		stack_tcp_recved(f, 2 + len);
		if (dns_query_in(gw, &how, buf + 2, len))
			f->dns_pending++;
	}
	if (f->up_eof && f->dns_pending == 0)
		flow_kill(f, false);
}

/* NET_ANSWER for query id: the response built from its fields, sent the way the query came. */
void dns_answer(struct gw *gw, uint32_t id, uint8_t rcode, uint32_t ttl,
		const struct net_addr *addrs, size_t n)
{
	uint8_t resp[DNS_EDNS_MAX];
	struct dns_pending *q = NULL;
	size_t len;

	for (size_t i = 0; i < GW_MAX_QUERIES && !q; i++)
		if (gw->queries[i].used && gw->queries[i].id == id)
			q = &gw->queries[i];
	if (!q)
		return;                 /* timed out and answered SERVFAIL already */
	if (rcode != DNS_RCODE_NOERROR)
		len = dns_build_rcode(&q->q, rcode, resp, sizeof(resp));
	else
		len = dns_build_answer(&q->q, addrs, n, ttl, resp, sizeof(resp));
	if (len)
		dns_reply(gw, q, resp, len);
	q->used = false;
}

/* Queries the broker did not answer in time get SERVFAIL. */
void dns_expire(struct gw *gw, ev_tstamp now)
{
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
