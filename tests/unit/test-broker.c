/*
 * test-broker.c — the broker against a fake boxy-net over a socketpair.
 *
 * Two halves. Hostile messages: every row is something a compromised
 * boxy-net could send (a field out of range, a truncated or padded payload,
 * an unknown type, a flow it never opened, an oversized name, a descriptor)
 * and each must end the session's network with an event saying so. Policy
 * glue: flows and names go through the decision function and come back as
 * verdicts, answers and events — refusals without a single packet leaving
 * the machine, and permitted flows dialled to a listener on loopback (made
 * reachable by --allow-cidr 127.0.0.0/8, the only way policy lets loopback
 * through). Upstream DNS is a fake server on loopback in the same loop,
 * which counts the queries it sees: a refused name must never reach it.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "parse/tripwire.h"
#include "proto/msg.h"
#include "policy/addr.h"
#include "parse/dns.h"
#include "proto/netproto.h"
#include "policy/http-rules.h"
#include "broker/netlog.h"
#include "spec/values.h"
#include "broker/resolver.h"
#include "spec/runspec.h"
#include "ui/dests.h"
#include "common/tlsca.h"
#include "common/util.h"
#include "proto/wire.h"

/* ---- recorded events -------------------------------------------------------- */

struct rec {
	char *kind, *verdict, *layer, *subject, *detail, *host, *sni, *path;
	uint64_t up, down;
	uint32_t seq;
	int32_t rule;
	bool who, found;            /* the event said who made it; and that it was found */
	char *package;
	uint32_t pid;
};

static struct rec recs[512];
static size_t nrecs;

/*
 * NET_VERDICT is a code: the layer that decided is worded on the flow's
 * event, which the broker emits just before it sends the verdict (deny on
 * refusal, allow on a dialled flow). So the layers of those events, in
 * order, are the layers of the REFUSED and DIALLED verdicts, in order:
 * read_verdict takes the next one, whatever record() had room to keep.
 */
static char verdict_layers[8192][16];
static size_t vl_head, vl_tail;

/* Called from record(): a tcp/udp deny or allow event announces a verdict. */
static void verdict_layer_push(const struct event *ev)
{
	if ((strcmp(ev->kind, "tcp") != 0 && strcmp(ev->kind, "udp") != 0) ||
	    (strcmp(ev->verdict, "deny") != 0 && strcmp(ev->verdict, "allow") != 0))
		return;
	assert_true(vl_tail - vl_head < ARRAY_SIZE(verdict_layers));
	snprintf(verdict_layers[vl_tail++ % ARRAY_SIZE(verdict_layers)], 16, "%s",
		 ev->layer ? ev->layer : "");
}

/* The layer of the next REFUSED or DIALLED verdict (caller frees). */
static char *verdict_layer_take(void)
{
	assert_true(vl_head < vl_tail);
	return xstrdup(verdict_layers[vl_head++ % ARRAY_SIZE(verdict_layers)]);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void record(void *ctx, const struct event *ev)
{
	struct rec *r;

	(void)ctx;
	verdict_layer_push(ev);
	if (nrecs >= ARRAY_SIZE(recs))
		return;
	r = &recs[nrecs++];
	r->kind = dup_or_null(ev->kind);
	r->verdict = dup_or_null(ev->verdict);
	r->layer = dup_or_null(ev->layer);
	r->subject = dup_or_null(ev->subject);
	r->detail = dup_or_null(ev->detail);
	r->host = dup_or_null(ev->host);
	r->sni = dup_or_null(ev->sni);
	r->path = dup_or_null(ev->path);
	r->seq = ev->seq;
	r->rule = ev->rule;
	r->up = ev->up;
	r->down = ev->down;
	r->who = ev->who != NULL;
	r->found = ev->who && ev->who->found;
	r->pid = ev->who ? ev->who->pid : 0;
	r->package = ev->who ? dup_or_null(ev->who->package) : NULL;
}

static void recs_clear(void)
{
	for (size_t i = 0; i < nrecs; i++) {
		free(recs[i].kind);
		free(recs[i].verdict);
		free(recs[i].layer);
		free(recs[i].subject);
		free(recs[i].detail);
		free(recs[i].host);
		free(recs[i].sni);
		free(recs[i].path);
		free(recs[i].package);
	}
	nrecs = 0;
}

/* The last event of kind/verdict, or NULL. */
static const struct rec *find_rec(const char *kind, const char *verdict)
{
	for (size_t i = nrecs; i-- > 0;)
		if (strcmp(recs[i].kind, kind) == 0 && strcmp(recs[i].verdict, verdict) == 0)
			return &recs[i];
	return NULL;
}

static struct event_sink sink = { .emit = record };

/* ---- the fake upstream DNS server ------------------------------------------ */

struct fake_dns {
	int fd;
	uint16_t port;
	ev_io w;
	unsigned queries;
	char last[DNS_NAME_BUF];
};

static struct fake_dns dns, tail;

/* Answer from a fixed table: example.test and www.example.test are on loopback,
 * rebind.test answers a private address, docrange.test a documentation one,
 * everything else NXDOMAIN. */
static void dns_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	uint8_t in[1500], out[1500];
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	struct dns_question q;
	struct net_addr a;
	ssize_t n;
	size_t len;

	struct fake_dns *d = w->data;

	(void)loop;
	(void)revents;
	n = recvfrom(d->fd, in, sizeof(in), 0, (struct sockaddr *)&from, &flen);
	if (n <= 0 || dns_query_parse(in, (size_t)n, &q) != DNS_OK)
		return;
	d->queries++;
	snprintf(d->last, sizeof(d->last), "%s", q.name);
	if ((strcmp(q.name, "db.tail0a1b2.ts.net") == 0 ||
	     strcmp(q.name, "nas.tail0a1b2.ts.net") == 0) && q.qtype == DNS_TYPE_A)
		net_addr_parse("100.101.102.103", &a);
	else if (strcmp(q.name, "example.test") == 0 || strcmp(q.name, "www.example.test") == 0)
		net_addr_parse(q.qtype == DNS_TYPE_AAAA ? "::1" : "127.0.0.1", &a);
	else if (strcmp(q.name, "rebind.test") == 0)
		net_addr_parse(q.qtype == DNS_TYPE_AAAA ? "fd00::5" : "10.0.0.5", &a);
	else if (strcmp(q.name, "docrange.test") == 0 && q.qtype == DNS_TYPE_A)
		net_addr_parse("203.0.113.80", &a);
	else
		a.family = 0;
	if (a.family)
		len = dns_build_answer(&q, &a, 1, 60, out, sizeof(out));
	else
		len = dns_build_rcode(&q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
	sendto(d->fd, out, len, 0, (struct sockaddr *)&from, flen);
}

static void dns_start_one(struct ev_loop *loop, struct fake_dns *d)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(d->fd >= 0);
	assert_int_equal(bind(d->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(d->fd, (struct sockaddr *)&sin, &len), 0);
	d->port = ntohs(sin.sin_port);
	d->queries = 0;
	d->last[0] = '\0';
	ev_io_init(&d->w, dns_readable, d->fd, EV_READ);
	d->w.data = d;
	ev_io_start(loop, &d->w);
}

/* The upstream resolver, and a fake MagicDNS resolver for --tailscale. */
static void dns_start(struct ev_loop *loop)
{
	dns_start_one(loop, &dns);
	dns_start_one(loop, &tail);
}

/* ---- the fixture ------------------------------------------------------------- */

struct fx {
	struct ev_loop *loop;
	struct runspec rs;
	struct broker *b;
	int net;                    /* the fake boxy-net's end */
	int listener;               /* a TCP listener on 127.0.0.1 */
	uint16_t lport;
};

static void add_host(struct runspec *rs, const char *spec)
{
	struct host_spec *h = xappend(&rs->hosts, &rs->nhosts, sizeof(*rs->hosts));
	char *err = NULL;

	assert_int_equal(parse_host_spec(spec, h, &err), 0);
}

static void add_cidr(struct runspec *rs, const char *spec)
{
	struct cidr *c = xappend(&rs->cidrs, &rs->ncidrs, sizeof(*rs->cidrs));
	char *err = NULL;

	assert_int_equal(parse_cidr(spec, c, &err), 0);
}

/* Run the loop until fd has something to read (or 3 s pass). */
static void pump_until_readable(struct fx *x, int fd)
{
	for (int i = 0; i < 3000; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		ev_run(x->loop, EVRUN_NOWAIT);
		if (poll(&p, 1, 1) > 0)
			return;
	}
	fail_msg("nothing arrived from the broker");
}

static void pump(struct fx *x, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		ev_run(x->loop, EVRUN_NOWAIT);
		usleep(1000);
	}
}

/* ---- a fake attribution hook: it records the questions; the test answers them ---- */

struct asked_q {
	uint64_t token;
	uint8_t proto;
	uint16_t sport, dport;
};
static struct asked_q asked[64];
static size_t nasked;
static bool attrib_fails;               /* the hook says it cannot ask */
static bool fx_attrib;                  /* fx_open gives the broker the hook */

static bool fake_ask(void *ctx, uint64_t token, uint8_t proto, const struct net_addr *src,
		     uint16_t sport, const struct net_addr *dst, uint16_t dport)
{
	(void)ctx;
	(void)src;
	(void)dst;
	if (attrib_fails)
		return false;
	assert_true(nasked < ARRAY_SIZE(asked));
	asked[nasked++] = (struct asked_q){ token, proto, sport, dport };
	return true;
}

static struct broker_attrib fake_attrib = {
	.ask = fake_ask, .hold_ms = 300, .answer_hold_ms = 40, .record_hold_ms = 1500,
};

static void fx_open(struct fx *x, enum net_mode mode)
{
	int sp[2];
	char servers[64], *err = NULL;
	struct broker_opts o = { 0 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);

	memset(x, 0, sizeof(*x));
	recs_clear();
	vl_head = vl_tail = 0;
	x->loop = ev_loop_new(EVFLAG_AUTO);
	runspec_init(&x->rs);
	x->rs.net = mode;
	if (mode == NET_ALLOWLIST) {
		add_host(&x->rs, "example.test");
		add_host(&x->rs, "rebind.test");
		add_host(&x->rs, "docrange.test");
		add_host(&x->rs, "ssh.example.test:22");
	}
	add_cidr(&x->rs, "127.0.0.0/8");
	dns_start(x->loop);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	o.dns_servers = servers;
	o.attrib = fx_attrib ? &fake_attrib : NULL;
	nasked = 0;
	attrib_fails = false;
	x->b = broker_create(x->loop, &x->rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x->b);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(broker_attach(x->b, sp[0], &err), 0);
	x->net = sp[1];

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	x->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(x->listener, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(x->listener, 16), 0);
	assert_int_equal(getsockname(x->listener, (struct sockaddr *)&sin, &len), 0);
	x->lport = ntohs(sin.sin_port);
}

static void fx_close(struct fx *x)
{
	broker_free(x->b);
	ev_io_stop(x->loop, &dns.w);
	close(dns.fd);
	ev_io_stop(x->loop, &tail.w);
	close(tail.fd);
	close(x->net);
	close(x->listener);
	runspec_free(&x->rs);
	ev_loop_destroy(x->loop);
	recs_clear();
}

static void send_frame(struct fx *x, uint16_t type, const struct wbuf *w)
{
	assert_int_equal(msg_send(x->net, type, w ? w->p : NULL, w ? w->len : 0, NULL, 0), 0);
}

static void recv_frame(struct fx *x, struct msg *m)
{
	char *err = NULL;

	pump_until_readable(x, x->net);
	assert_int_equal(msg_recv(x->net, m, &err), 1);
}

static void hello(struct fx *x, uint8_t want_mode)
{
	struct wbuf w;
	struct msg m;
	struct net_config cfg;

	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION);
	send_frame(x, NET_HELLO, &w);
	wbuf_free(&w);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_CONFIG);
	assert_int_equal(netproto_config_decode(m.payload, m.len, &cfg, NULL), 0);
	assert_int_equal(cfg.mode, want_mode);
	/* Public mode asks boxy-net to name flows for the record; allowlist names them anyway. */
	assert_int_equal(cfg.flags, want_mode == NET_PUBLIC ? NETCFG_OBSERVE : 0);
	assert_int_equal(cfg.ntokens, 0);
	netproto_config_free(&cfg);
	msg_free(&m);
}

static void put_addr(struct wbuf *w, const char *text)
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(text, &a), 0);
	wire_put_u8(w, a.family == AF_INET ? 4 : 6);
	for (int i = 0; i < 16; i++)
		wire_put_u8(w, a.a[i]);
}

static void flow_open(struct fx *x, uint32_t id, uint8_t proto, const char *dst, uint16_t port)
{
	struct wbuf w;
	bool v6 = strchr(dst, ':') != NULL;

	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_u8(&w, proto);
	put_addr(&w, dst);
	wire_put_u16(&w, port);
	put_addr(&w, v6 ? "fd00:b0c5::15" : "10.0.2.15");
	wire_put_u16(&w, 40000);
	send_frame(x, NET_FLOW_OPEN, &w);
	wbuf_free(&w);
}

static void flow_name(struct fx *x, uint32_t id, uint8_t kind, bool ech, const char *name)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_u8(&w, kind);
	wire_put_u8(&w, ech);
	wire_put_str(&w, name);
	send_frame(x, NET_FLOW_NAME, &w);
	wbuf_free(&w);
}

/*
 * Read a verdict; returns its code, fills layer (caller frees: the layer its
 * event named, "" for NEED_NAME, which has no event) and *fd (or -1).
 */
static uint8_t read_verdict(struct fx *x, uint32_t id, char **layer, int *fd)
{
	struct msg m;
	struct rbuf r;
	uint8_t v;

	recv_frame(x, &m);
	assert_int_equal(m.type, NET_VERDICT);
	rbuf_init(&r, m.payload, m.len);
	assert_int_equal(wire_get_u32(&r), id);
	v = wire_get_u8(&r);
	assert_int_equal(wire_get_u8(&r), 0);   /* flags: no gate in these runs */
	assert_true(wire_done(&r));
	*layer = v == NETV_NEED_NAME ? xstrdup("") : verdict_layer_take();
	*fd = -1;
	if (v == NETV_DIALLED) {
		assert_int_equal(m.nfds, 1);
		*fd = m.fds[0];
		m.fds[0] = -1;
	} else {
		assert_int_equal(m.nfds, 0);
	}
	msg_free(&m);
	return v;
}

/* NET_FLOW_STATS or NET_FLOW_CLOSE for a flow, with its byte totals. */
static void flow_counts(struct fx *x, uint16_t type, uint32_t id, uint64_t up, uint64_t down)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_u64(&w, up);
	wire_put_u64(&w, down);
	send_frame(x, type, &w);
	wbuf_free(&w);
}

static void expect_refused(struct fx *x, uint32_t id, const char *layer)
{
	char *got;
	int fd;

	assert_int_equal(read_verdict(x, id, &got, &fd), NETV_REFUSED);
	assert_string_equal(got, layer);
	free(got);
}

/* NET_RESOLVE's tail: the query's socket, a UDP one from the sandbox to the gateway. */
static void put_resolve_from(struct wbuf *w)
{
	wire_put_u8(w, 17);
	put_addr(w, "10.0.2.15");
	wire_put_u16(w, 40001);
	put_addr(w, "10.0.2.2");
	wire_put_u16(w, 53);
}

/* Resolve name/qtype; returns the rcode and the number of addresses. */
static uint8_t resolve(struct fx *x, uint32_t id, const char *name, uint16_t qtype, uint32_t *n)
{
	struct wbuf w;
	struct msg m;
	struct rbuf r;
	uint8_t rcode;

	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_str(&w, name);
	wire_put_u16(&w, qtype);
	put_resolve_from(&w);
	send_frame(x, NET_RESOLVE, &w);
	wbuf_free(&w);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_ANSWER);
	rbuf_init(&r, m.payload, m.len);
	assert_int_equal(wire_get_u32(&r), id);
	rcode = wire_get_u8(&r);
	(void)wire_get_u32(&r);
	*n = wire_get_u32(&r);
	for (uint32_t i = 0; i < *n; i++) {
		assert_int_equal(wire_get_u8(&r), 4);
		for (int j = 0; j < 16; j++)
			(void)wire_get_u8(&r);
	}
	assert_true(wire_done(&r));
	msg_free(&m);
	return rcode;
}

/* NET_FLOW_SEEN: id, kind, name. */
static void flow_seen(struct fx *x, uint32_t id, uint8_t kind, const char *name)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_u8(&w, kind);
	wire_put_str(&w, name);
	send_frame(x, NET_FLOW_SEEN, &w);
	wbuf_free(&w);
}

/* ---- hostile messages ------------------------------------------------------------ */

struct hostile {
	const char *what;
	bool after_hello;
	void (*build)(struct fx *x);
};

static void h_before_hello(struct fx *x)
{
	flow_open(x, 1, 6, "127.0.0.1", 80);
}

static void h_bad_version(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION + 1);
	send_frame(x, NET_HELLO, &w);
	wbuf_free(&w);
}

static void h_hello_twice(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION);
	send_frame(x, NET_HELLO, &w);
	wbuf_free(&w);
}

static void h_unknown_type(struct fx *x)
{
	send_frame(x, 0x05ff, NULL);
}

static void h_broker_type(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_u8(&w, NETV_DIALLED);
	send_frame(x, NET_VERDICT, &w);
	wbuf_free(&w);
}

static void h_proto_icmp(struct fx *x)
{
	flow_open(x, 1, 1, "127.0.0.1", 80);
}

static void h_family_5(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_u8(&w, 6);
	wire_put_u8(&w, 5);
	for (int i = 0; i < 16; i++)
		wire_put_u8(&w, 0);
	wire_put_u16(&w, 80);
	put_addr(&w, "10.0.2.15");
	wire_put_u16(&w, 40000);
	send_frame(x, NET_FLOW_OPEN, &w);
	wbuf_free(&w);
}

static void h_v4_padding(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_u8(&w, 6);
	wire_put_u8(&w, 4);
	for (int i = 0; i < 16; i++)
		wire_put_u8(&w, i == 15 ? 1 : 8);
	wire_put_u16(&w, 80);
	put_addr(&w, "10.0.2.15");
	wire_put_u16(&w, 40000);
	send_frame(x, NET_FLOW_OPEN, &w);
	wbuf_free(&w);
}

static void h_truncated(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_u8(&w, 6);
	put_addr(&w, "127.0.0.1");
	send_frame(x, NET_FLOW_OPEN, &w);
	wbuf_free(&w);
}

static void h_trailing(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_u8(&w, 6);
	put_addr(&w, "127.0.0.1");
	wire_put_u16(&w, 80);
	put_addr(&w, "10.0.2.15");
	wire_put_u16(&w, 40000);
	wire_put_u8(&w, 0);
	send_frame(x, NET_FLOW_OPEN, &w);
	wbuf_free(&w);
}

static void h_mixed_families(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_u8(&w, 6);
	put_addr(&w, "127.0.0.1");
	wire_put_u16(&w, 80);
	put_addr(&w, "fd00:b0c5::15");
	wire_put_u16(&w, 40000);
	send_frame(x, NET_FLOW_OPEN, &w);
	wbuf_free(&w);
}

/* Flow 7, to a resolved address in allowlist mode, admitted and waiting for its name. */
static void flow_7_waiting(struct fx *x)
{
	char *layer;
	int fd;
	uint32_t n;

	assert_int_equal(resolve(x, 70, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	flow_open(x, 7, 6, "127.0.0.1", 443);
	assert_int_equal(read_verdict(x, 7, &layer, &fd), NETV_NEED_NAME);
	free(layer);
}

/* Flow 7 is kept (waiting for its name); opening 7 again is impossible for a sane boxy-net. */
static void h_duplicate_flow(struct fx *x)
{
	flow_7_waiting(x);
	flow_open(x, 7, 6, "127.0.0.1", 443);
}

static void h_name_unknown_flow(struct fx *x)
{
	flow_name(x, 99, NET_NAME_SNI, false, "example.test");
}

static void h_stats_unknown_flow(struct fx *x)
{
	flow_counts(x, NET_FLOW_STATS, 99, 1, 1);
}

static void h_oversized_name(struct fx *x)
{
	char name[300];
	struct wbuf w;

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_str(&w, name);
	wire_put_u16(&w, DNS_TYPE_A);
	put_resolve_from(&w);
	send_frame(x, NET_RESOLVE, &w);
	wbuf_free(&w);
}

static void h_uppercase_name(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "Example.test");
	wire_put_u16(&w, DNS_TYPE_A);
	put_resolve_from(&w);
	send_frame(x, NET_RESOLVE, &w);
	wbuf_free(&w);
}

static void h_control_in_name(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "exa\x1bmple.test");
	wire_put_u16(&w, DNS_TYPE_A);
	put_resolve_from(&w);
	send_frame(x, NET_RESOLVE, &w);
	wbuf_free(&w);
}

static void h_absent_name(struct fx *x)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, 1);
	wire_put_str(&w, NULL);
	wire_put_u16(&w, DNS_TYPE_A);
	put_resolve_from(&w);
	send_frame(x, NET_RESOLVE, &w);
	wbuf_free(&w);
}

static void h_descriptor(struct fx *x)
{
	struct wbuf w;
	int fd = dup(0);

	wbuf_init(&w);
	wire_put_str(&w, "hello");
	assert_int_equal(msg_send(x->net, NET_LOG, w.p, w.len, &fd, 1), 0);
	close(fd);
	wbuf_free(&w);
}

static void h_log_too_long(struct fx *x)
{
	char words[BROKER_LOG_MAX + 2];
	struct wbuf w;

	memset(words, 'x', sizeof(words) - 1);
	words[sizeof(words) - 1] = '\0';
	wbuf_init(&w);
	wire_put_str(&w, words);
	send_frame(x, NET_LOG, &w);
	wbuf_free(&w);
}

static void h_bad_frame(struct fx *x)
{
	/* A header announcing more than MSG_MAX_LEN. */
	uint8_t hdr[8] = { 0xff, 0xff, 0xff, 0x7f, 0x03, 0x05, 0, 0 };

	assert_int_equal(write(x->net, hdr, sizeof(hdr)), 8);
}

static void h_name_kind_past_last(struct fx *x)
{
	flow_7_waiting(x);
	flow_name(x, 7, NET_NAME_MALFORMED + 1, false, "example.test");
}

/* PENDING is the policy's "nothing read yet": a name kind, but never one boxy-net may send. */
static void h_name_kind_pending(struct fx *x)
{
	flow_7_waiting(x);
	flow_name(x, 7, NET_NAME_PENDING, false, "");
}

/* MALFORMED, like NONE, is sent without a name and without the ECH flag. */
static void h_malformed_with(struct fx *x, bool ech, const char *name)
{
	flow_7_waiting(x);
	flow_name(x, 7, NET_NAME_MALFORMED, ech, name);
}

static void h_malformed_with_name(struct fx *x)
{
	h_malformed_with(x, false, "example.test");
}

static void h_malformed_with_ech(struct fx *x)
{
	h_malformed_with(x, true, "");
}

static void h_none_with_name(struct fx *x)
{
	flow_7_waiting(x);
	flow_name(x, 7, NET_NAME_NONE, false, "example.test");
}

static void h_seen_in_allowlist(struct fx *x)
{
	flow_seen(x, 1, NET_NAME_SNI, "example.test");
}

static void h_close_refused_twice(struct fx *x)
{
	flow_open(x, 5, 6, "192.168.1.1", 80);
	expect_refused(x, 5, "net.ip");
	for (int i = 0; i < 2; i++) {
		flow_counts(x, NET_FLOW_CLOSE, 5, 0, 0);
	}
}

static void h_close_refused_bytes(struct fx *x)
{
	flow_open(x, 5, 6, "192.168.1.1", 80);
	expect_refused(x, 5, "net.ip");
	flow_counts(x, NET_FLOW_CLOSE, 5, 10, 0);
}

static const struct hostile hostile_rows[] = {
	{ "a flow before NET_HELLO", false, h_before_hello },
	{ "another protocol version", false, h_bad_version },
	{ "NET_HELLO twice", true, h_hello_twice },
	{ "an unknown message type", true, h_unknown_type },
	{ "a type only the broker sends", true, h_broker_type },
	{ "protocol 1 (ICMP)", true, h_proto_icmp },
	{ "address family 5", true, h_family_5 },
	{ "IPv4 with bytes in the unused twelve", true, h_v4_padding },
	{ "a truncated FLOW_OPEN", true, h_truncated },
	{ "a FLOW_OPEN with a trailing byte", true, h_trailing },
	{ "v4 destination, v6 source", true, h_mixed_families },
	{ "a flow id already open", true, h_duplicate_flow },
	{ "a name for a flow never opened", true, h_name_unknown_flow },
	{ "counters for a flow never opened", true, h_stats_unknown_flow },
	{ "a 299-byte name", true, h_oversized_name },
	{ "an upper-case name", true, h_uppercase_name },
	{ "an escape byte in a name", true, h_control_in_name },
	{ "an absent name", true, h_absent_name },
	{ "a descriptor from boxy-net", true, h_descriptor },
	{ "an over-long log line", true, h_log_too_long },
	{ "a frame over the size cap", true, h_bad_frame },
	{ "a name kind past the last", true, h_name_kind_past_last },
	{ "name kind PENDING", true, h_name_kind_pending },
	{ "kind malformed with a name", true, h_malformed_with_name },
	{ "kind malformed with the ECH flag", true, h_malformed_with_ech },
	{ "kind none with a name", true, h_none_with_name },
	{ "a refused flow closed twice", true, h_close_refused_twice },
	{ "NET_FLOW_SEEN outside public mode", true, h_seen_in_allowlist },
	{ "a refused flow closed with bytes", true, h_close_refused_bytes },
};

static void test_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(hostile_rows); i++) {
		const struct hostile *h = &hostile_rows[i];
		struct fx x;
		const struct rec *r;
		char c;

		fx_open(&x, NET_ALLOWLIST);
		if (h->after_hello)
			hello(&x, NET_ALLOWLIST);
		h->build(&x);
		pump(&x, 50);
		if (broker_alive(x.b))
			fail_msg("row '%s': the broker still trusts boxy-net", h->what);
		r = find_rec("audit", "degraded");
		if (!r || strcmp(r->layer, "net") != 0 || !strstr(r->detail, "network was ended"))
			fail_msg("row '%s': no event says the network was ended", h->what);
		/* The fake's end sees EOF: the broker hung up. */
		pump_until_readable(&x, x.net);
		while (read(x.net, &c, 1) > 0)
			;
		assert_int_equal(read(x.net, &c, 1), 0);
		assert_int_equal(broker_flows(x.b), 0);
		fx_close(&x);
	}
}

/* ---- the HTTP gate's records (NET_HTTP_RULES, the verdict's flags, NET_HTTP_REQUEST) ---- */

/*
 * An allowlist broker with HTTP rules and the listener's port allowed, after
 * HELLO (NET_CONFIG says NETCFG_RULES, NET_HTTP_RULES follows with the texts)
 * and with example.test resolved, so a flow to 127.0.0.1 can be named.
 */
static void fx_open_http(struct fx *x)
{
	static const char *const rules[] = { "method=GET domain=example.test path=/v1/*",
					     "method=POST domain=www.example.test" };
	struct wbuf w;
	struct msg m;
	struct rbuf r;
	struct net_config cfg;
	int sp[2];
	char servers[64], *err = NULL;
	struct broker_opts o = { 0 };
	uint32_t n;

	fx_open(x, NET_ALLOWLIST);
	broker_free(x->b);
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		*(char **)xappend(&x->rs.http_rules, &x->rs.nhttp_rules, sizeof(char *)) =
			xstrdup(rules[i]);
	*(uint16_t *)xappend(&x->rs.ports, &x->rs.nports, sizeof(uint16_t)) = x->lport;
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	o.dns_servers = servers;
	x->b = broker_create(x->loop, &x->rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x->b);
	close(x->net);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(broker_attach(x->b, sp[0], &err), 0);
	x->net = sp[1];

	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION);
	send_frame(x, NET_HELLO, &w);
	wbuf_free(&w);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_CONFIG);
	assert_int_equal(netproto_config_decode(m.payload, m.len, &cfg, NULL), 0);
	assert_int_equal(cfg.mode, NET_ALLOWLIST);
	assert_int_equal(cfg.flags, NETCFG_RULES);
	netproto_config_free(&cfg);
	msg_free(&m);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_HTTP_RULES);
	rbuf_init(&r, m.payload, m.len);
	assert_int_equal(wire_get_u32(&r), ARRAY_SIZE(rules));
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		char *t = wire_get_str(&r, 2048);

		assert_string_equal(t, rules[i]);
		free(t);
	}
	assert_true(wire_done(&r));
	msg_free(&m);
	assert_int_equal(resolve(x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
}

/* Open flow id to the listener, named kind/name; returns the verdict's flags (dialled). */
static uint8_t gated_flow(struct fx *x, uint32_t id, uint8_t kind, const char *name)
{
	struct msg m;
	struct rbuf r;
	uint8_t v, flags;
	char *layer;
	int fd;

	flow_open(x, id, 6, "127.0.0.1", x->lport);
	assert_int_equal(read_verdict(x, id, &layer, &fd), NETV_NEED_NAME);
	free(layer);
	flow_name(x, id, kind, false, name);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_VERDICT);
	rbuf_init(&r, m.payload, m.len);
	assert_int_equal(wire_get_u32(&r), id);
	v = wire_get_u8(&r);
	flags = wire_get_u8(&r);
	assert_true(wire_done(&r));
	assert_int_equal(v, NETV_DIALLED);
	assert_int_equal(m.nfds, 1);
	free(verdict_layer_take());
	msg_free(&m);
	return flags;
}

struct req_msg {
	uint32_t flow, seq;
	uint8_t deny;
	uint16_t rule;
	uint8_t flags;
	const char *method, *host;
	uint16_t port;
	const char *path, *query, *why;
};

static void send_request(struct fx *x, const struct req_msg *q)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, q->flow);
	wire_put_u32(&w, q->seq);
	wire_put_u8(&w, q->deny);
	wire_put_u16(&w, q->rule);
	wire_put_u8(&w, q->flags);
	wire_put_str(&w, q->method);
	wire_put_str(&w, q->host);
	wire_put_u16(&w, q->port);
	wire_put_str(&w, q->path);
	wire_put_str(&w, q->query);
	wire_put_str(&w, q->why);
	send_frame(x, NET_HTTP_REQUEST, &w);
	wbuf_free(&w);
}

/* Which flows are gated, and what one request's record becomes. */
static void test_http_records(void **state)
{
	struct fx x;
	const struct rec *r;

	(void)state;
	fx_open_http(&x);
	/* plain HTTP: gated; TLS to a host whose rule restricts the path: gated and inspected */
	assert_int_equal(gated_flow(&x, 30, NET_NAME_HOST, "example.test"), NETVF_GATE);
	assert_int_equal(gated_flow(&x, 31, NET_NAME_SNI, "example.test"),
			 NETVF_GATE | NETVF_TLS);
	recs_clear();
	send_request(&x, &(struct req_msg){ 30, 1, HTTP_ALLOWED, 0, 0, "GET", "example.test",
					    x.lport, "/v1/x", "a=1", "" });
	send_request(&x, &(struct req_msg){ 30, 2, HTTP_DENY_NO_RULE, HTTP_RULE_NONE, 0, "GET",
					    "example.test", x.lport, "/v2/x", "", "" });
	pump(&x, 30);
	assert_true(broker_alive(x.b));
	r = find_rec("http", "allow");
	assert_non_null(r);
	assert_string_equal(r->layer, "net.http");
	assert_string_equal(r->path, "/v1/x");
	assert_int_equal(r->seq, 1);
	assert_int_equal(r->rule, 0);
	assert_non_null(strstr(r->detail, "rule 1: method=GET domain=example.test"));
	r = find_rec("http", "deny");
	assert_non_null(r);
	assert_int_equal(r->seq, 2);
	assert_int_equal(r->rule, -1);
	assert_string_equal(r->detail, "no --allow-http rule allows this request");
	/* the audit line names the rule that would allow it */
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_non_null(strstr(r->detail, "allow it with --allow-http 'method=GET "
				      "domain=example.test path=/v2/x'"));
	{
		char *json = netlog_to_json(broker_netlog(x.b));

		assert_non_null(strstr(json, "\"requests\":[["));
		free(json);
	}
	fx_close(&x);
}

/* ---- TLS inspection ------------------------------------------------------------------------ */

/*
 * A fake boxy-net's hello to a broker with --allow-http rules and a session
 * CA: NET_CONFIG says NETCFG_RULES | NETCFG_TLS, then the rules, then
 * NET_TLS_CA with the CA's certificate (its fingerprint fp) and key, which
 * must be the CA's.
 */
static void tls_hello(struct fx *x, const char *fp)
{
	struct tls_ca back;
	struct wbuf w;
	struct msg m;
	struct rbuf r;
	struct net_config cfg;
	char fb[65], *err = NULL;

	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION);
	send_frame(x, NET_HELLO, &w);
	wbuf_free(&w);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_CONFIG);
	assert_int_equal(netproto_config_decode(m.payload, m.len, &cfg, NULL), 0);
	assert_int_equal(cfg.mode, NET_ALLOWLIST);
	assert_int_equal(cfg.flags, NETCFG_RULES | NETCFG_TLS);
	netproto_config_free(&cfg);
	msg_free(&m);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_HTTP_RULES);
	msg_free(&m);
	recv_frame(x, &m);
	assert_int_equal(m.type, NET_TLS_CA);
	rbuf_init(&r, m.payload, m.len);
	{
		uint32_t cn = wire_get_u32(&r), kn;
		const uint8_t *cert = (const uint8_t *)r.p + r.off;

		r.off += cn;
		kn = wire_get_u32(&r);
		assert_false(r.failed);
		assert_int_equal(tls_ca_decode(cert, cn, (const uint8_t *)r.p + r.off, kn, &back,
					       &err), 0);
	}
	tls_cert_fingerprint(back.cert, fb);
	assert_string_equal(fp, fb);
	tls_ca_clear(&back);
	msg_free(&m);
}

/*
 * fx_open_http with a session CA for helpers boxy-nets (0: one), the first
 * of which has said hello (tls_hello). The CA's fingerprint goes to fp.
 */
static void fx_open_tls_for(struct fx *x, size_t helpers, char fp[65])
{
	static const char *const names[] = { "example.test" };
	struct tls_ca *ca = calloc(1, sizeof(*ca));
	struct broker_opts o = { 0 };
	int sp[2];
	char servers[64], *err = NULL;
	uint32_t n;

	fx_open_http(x);
	broker_free(x->b);
	assert_int_equal(tls_ca_create(names, 1, "test", time(NULL), ca, &err), 0);
	tls_cert_fingerprint(ca->cert, fp);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	o.dns_servers = servers;
	o.tls_ca = ca;                  /* the broker's now */
	o.helpers = helpers;
	x->b = broker_create(x->loop, &x->rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x->b);
	close(x->net);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(broker_attach(x->b, sp[0], &err), 0);
	x->net = sp[1];
	tls_hello(x, fp);
	assert_int_equal(resolve(x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
}

static void fx_open_tls(struct fx *x)
{
	char fp[65];

	fx_open_tls_for(x, 0, fp);
}

static void send_tls_fail(struct fx *x, uint32_t flow, uint8_t code, const char *detail)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, flow);
	wire_put_u8(&w, code);
	wire_put_str(&w, detail);
	send_frame(x, NET_TLS_FAIL, &w);
	wbuf_free(&w);
}

/* The CA goes to boxy-net; a failed inspection is one net.tls refusal, worded here. */
static void test_tls_fail(void **state)
{
	struct fx x;
	const struct rec *r;
	char *subject;

	(void)state;
	fx_open_tls(&x);
	assert_int_equal(gated_flow(&x, 31, NET_NAME_SNI, "example.test"),
			 NETVF_GATE | NETVF_TLS);
	recs_clear();
	send_tls_fail(&x, 31, NETTLS_UPSTREAM_CERT, "self-signed certificate");
	pump(&x, 30);
	assert_true(broker_alive(x.b));
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_string_equal(r->layer, "net.tls");
	subject = xasprintf("example.test:%u", x.lport);
	assert_string_equal(r->subject, subject);
	free(subject);
	assert_string_equal(r->detail, "TLS inspection: the server's certificate was refused "
			    "(self-signed certificate); the client was sent an alert");
	fx_close(&x);
}

/* What boxy-net may not say about TLS: each ends the session's network. */
static void test_tls_fail_lies(void **state)
{
	static const struct {
		const char *what;
		uint32_t flow;
		uint8_t code;
		const char *detail;
	} rows[] = {
		{ "code 0", 31, 0, "" },
		{ "a code past the last", 31, NETTLS_CODE_MAX + 1, "" },
		{ "a control byte in the words", 31, NETTLS_UPSTREAM, "bad\nline" },
		{ "a flow that is not inspected (plain HTTP, gated)", 30, NETTLS_UPSTREAM, "x" },
		{ "a flow that does not exist", 99, NETTLS_UPSTREAM, "x" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fx x;

		print_message("# %s\n", rows[i].what);
		fx_open_tls(&x);
		assert_int_equal(gated_flow(&x, 30, NET_NAME_HOST, "example.test"), NETVF_GATE);
		assert_int_equal(gated_flow(&x, 31, NET_NAME_SNI, "example.test"),
				 NETVF_GATE | NETVF_TLS);
		send_tls_fail(&x, rows[i].flow, rows[i].code, rows[i].detail);
		pump(&x, 30);
		if (broker_alive(x.b))
			fail_msg("%s: accepted", rows[i].what);
		fx_close(&x);
	}
	{
		/* a second failure for the same flow */
		struct fx x;

		fx_open_tls(&x);
		assert_int_equal(gated_flow(&x, 31, NET_NAME_SNI, "example.test"),
				 NETVF_GATE | NETVF_TLS);
		send_tls_fail(&x, 31, NETTLS_CLIENT, "x");
		pump(&x, 20);
		assert_true(broker_alive(x.b));
		send_tls_fail(&x, 31, NETTLS_CLIENT, "x");
		pump(&x, 20);
		assert_false(broker_alive(x.b));
		fx_close(&x);
	}
}

/* Every lie boxy-net could tell about a request ends the session's network. */
static void test_http_lies(void **state)
{
	struct { const char *what; struct req_msg q; } rows[] = {
		{ "a sequence number skipped", { 30, 2, 0, 0, 0, "GET", "example.test", 0, "/v1/x", "",
						 "" } },
		{ "allowed, says boxy-net; refused, says the policy",
		  { 30, 1, 0, 0, 0, "GET", "example.test", 0, "/v2/x", "", "" } },
		{ "refused, says boxy-net; allowed, says the policy",
		  { 30, 1, HTTP_DENY_NO_RULE, HTTP_RULE_NONE, 0, "GET", "example.test", 0, "/v1/x",
		    "", "" } },
		{ "the wrong rule", { 30, 1, 0, 1, 0, "GET", "example.test", 0, "/v1/x", "", "" } },
		{ "a rule that does not exist", { 30, 1, 0, 7, 0, "GET", "example.test", 0, "/v1/x",
						  "", "" } },
		{ "another host allowed", { 30, 1, 0, HTTP_RULE_NONE, 0, "GET", "evil.test", 0, "/",
					    "", "" } },
		{ "a flow that is not gated", { 32, 1, 0, 0, 0, "GET", "example.test", 0, "/v1/x", "",
						"" } },
		{ "a flow never opened", { 99, 1, 0, 0, 0, "GET", "example.test", 0, "/v1/x", "",
					   "" } },
		{ "TLS on a plain flow", { 30, 1, 0, 0, HTTPREQ_TLS, "GET", "example.test", 0,
					   "/v1/x", "", "" } },
		{ "an unknown flag", { 30, 1, 0, 0, 0x80, "GET", "example.test", 0, "/v1/x", "", "" } },
		{ "a deny code past the last", { 30, 1, HTTP_DENY_COUNT, HTTP_RULE_NONE, 0, "GET",
						 "example.test", 0, "/v1/x", "", "" } },
		{ "a method with a space", { 30, 1, 0, 0, 0, "G T", "example.test", 0, "/v1/x", "",
					     "" } },
		{ "an empty method", { 30, 1, 0, 0, 0, "", "example.test", 0, "/v1/x", "", "" } },
		{ "a host that is no name", { 30, 1, 0, 0, 0, "GET", "Example..test", 0, "/v1/x", "",
					      "" } },
		{ "a control byte in the path", { 30, 1, 0, 0, 0, "GET", "example.test", 0,
						  "/v1/\x1b[2J", "", "" } },
		{ "a space in the query", { 30, 1, 0, 0, 0, "GET", "example.test", 0, "/v1/x", "a b",
					    "" } },
		{ "words on an allowed request", { 30, 1, 0, 0, 0, "GET", "example.test", 0, "/v1/x",
						   "", "why" } },
		{ "malformed with a method", { 30, 1, HTTP_DENY_MALFORMED, HTTP_RULE_NONE, 0, "GET",
					       "", 0, "", "", "bare LF" } },
		{ "malformed without words", { 30, 1, HTTP_DENY_MALFORMED, HTTP_RULE_NONE, 0, "", "",
					       0, "", "", "" } },
		{ "malformed with a control byte", { 30, 1, HTTP_DENY_MALFORMED, HTTP_RULE_NONE, 0,
						     "", "", 0, "", "", "bare\nLF" } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fx x;
		const struct rec *r;

		fx_open_http(&x);
		assert_int_equal(gated_flow(&x, 30, NET_NAME_HOST, "example.test"), NETVF_GATE);
		/* an allowed flow with no gate: TLS to a host without rules of its own… none here,
		 * so a name-less flow: boxy-net says NONE, the broker dials it ungated */
		flow_open(&x, 32, 6, "127.0.0.1", x.lport);
		{
			char *layer;
			int fd;

			assert_int_equal(read_verdict(&x, 32, &layer, &fd), NETV_NEED_NAME);
			free(layer);
			flow_name(&x, 32, NET_NAME_NONE, false, "");
			assert_int_equal(read_verdict(&x, 32, &layer, &fd), NETV_DIALLED);
			free(layer);
			close(fd);
		}
		{
			/* The port the flow was dialled on, so only the row's lie is a lie. */
			struct req_msg q = rows[i].q;

			if (q.deny != HTTP_DENY_MALFORMED && !q.port)
				q.port = x.lport;
			send_request(&x, &q);
		}
		pump(&x, 30);
		if (broker_alive(x.b))
			fail_msg("row '%s': the broker still trusts boxy-net", rows[i].what);
		r = find_rec("audit", "degraded");
		if (!r || !strstr(r->detail, "network was ended"))
			fail_msg("row '%s': no event says the network was ended", rows[i].what);
		fx_close(&x);
	}
}

/* After a refusal nothing more may come on that flow: the gate ends the connection. */
static void test_http_after_refusal(void **state)
{
	struct fx x;

	(void)state;
	fx_open_http(&x);
	assert_int_equal(gated_flow(&x, 30, NET_NAME_HOST, "example.test"), NETVF_GATE);
	send_request(&x, &(struct req_msg){ 30, 1, HTTP_DENY_OTHER_HOST, HTTP_RULE_NONE, 0, "GET",
					    "evil.test", 0, "/", "", "" });
	pump(&x, 20);
	assert_true(broker_alive(x.b));
	send_request(&x, &(struct req_msg){ 30, 2, HTTP_ALLOWED, 0, 0, "GET", "example.test",
					    x.lport, "/v1/x", "", "" });
	pump(&x, 20);
	assert_false(broker_alive(x.b));
	fx_close(&x);

	/* HTTP/2: a refused stream ends alone; the next stream of the flow is its own request */
	fx_open_http(&x);
	assert_int_equal(gated_flow(&x, 31, NET_NAME_SNI, "example.test"), NETVF_GATE | NETVF_TLS);
	send_request(&x, &(struct req_msg){ 31, 1, HTTP_DENY_NO_RULE, HTTP_RULE_NONE,
					    HTTPREQ_TLS | HTTPREQ_H2, "GET", "example.test",
					    x.lport, "/v2/x", "", "" });
	send_request(&x, &(struct req_msg){ 31, 2, HTTP_ALLOWED, 0, HTTPREQ_TLS | HTTPREQ_H2,
					    "GET", "example.test", x.lport, "/v1/x", "", "" });
	pump(&x, 20);
	assert_true(broker_alive(x.b));
	/* … but an HTTP/1 record after a refusal on it is still a lie */
	send_request(&x, &(struct req_msg){ 31, 3, HTTP_ALLOWED, 0, HTTPREQ_TLS, "GET",
					    "example.test", x.lport, "/v1/x", "", "" });
	pump(&x, 20);
	assert_false(broker_alive(x.b));
	fx_close(&x);
}

/* ---- policy glue ------------------------------------------------------------------- */

static void test_hello_config(void **state)
{
	struct fx x;

	(void)state;
	fx_open(&x, NET_PUBLIC);
	hello(&x, NET_PUBLIC);
	assert_true(broker_alive(x.b));
	fx_close(&x);
}

/* Refusals that need no DNS: each is decided at the SYN and nothing is dialled. */
static void test_refusals(void **state)
{
	static const struct {
		const char *what, *dst;
		uint8_t proto;
		uint16_t port;
		const char *layer;
	} rows[] = {
		{ "hardcoded public IP, no binding", "93.184.216.34", 6, 443, "net.dns" },
		{ "cloud metadata", "169.254.169.254", 6, 80, "net.ip" },
		{ "RFC 1918", "192.168.1.1", 6, 80, "net.ip" },
		{ "NAT64 of a private address", "64:ff9b::c0a8:101", 6, 80, "net.ip" },
		{ "6to4 of a private address", "2002:c0a8:101::1", 6, 80, "net.ip" },
		{ "IPv4-mapped private address", "::ffff:10.0.0.1", 6, 80, "net.ip" },
		{ "Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", 6, 80, "net.ip" },
		{ "UDP/443 (QUIC)", "93.184.216.34", 17, 443, "net.ip" },
		{ "port 0", "93.184.216.34", 6, 0, "net.ip" },
	};
	struct fx x;

	(void)state;
	fx_open(&x, NET_ALLOWLIST);
	hello(&x, NET_ALLOWLIST);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct rec *r;
		char *layer;
		int fd;

		recs_clear();
		flow_open(&x, (uint32_t)i + 1, rows[i].proto, rows[i].dst, rows[i].port);
		if (read_verdict(&x, (uint32_t)i + 1, &layer, &fd) != NETV_REFUSED)
			fail_msg("row '%s': not refused", rows[i].what);
		if (strcmp(layer, rows[i].layer) != 0)
			fail_msg("row '%s': layer %s, want %s", rows[i].what, layer, rows[i].layer);
		free(layer);
		r = find_rec(rows[i].proto == 6 ? "tcp" : "udp", "deny");
		if (!r || strcmp(r->layer, rows[i].layer) != 0 || !r->detail || !r->detail[0])
			fail_msg("row '%s': no deny event with the layer and a reason", rows[i].what);
		/* And the audit log's line: the layer, the flow, the reason. */
		r = find_rec("audit", "deny");
		if (!r || strcmp(r->layer, rows[i].layer) != 0 || strncmp(r->subject,
		    rows[i].proto == 6 ? "tcp://" : "udp://", 6) != 0)
			fail_msg("row '%s': no audit deny with the layer and the flow", rows[i].what);
		/* boxy-net closing the refused flow is accepted once, silently. */
		{
			struct wbuf w;

			wbuf_init(&w);
			wire_put_u32(&w, (uint32_t)i + 1);
			wire_put_u64(&w, 0);
			wire_put_u64(&w, 0);
			send_frame(&x, NET_FLOW_CLOSE, &w);
			wbuf_free(&w);
		}
	}
	pump(&x, 20);
	assert_true(broker_alive(x.b));
	assert_int_equal(broker_flows(x.b), 0);
	fx_close(&x);
}

/*
 * Refusals can outrun their closes: boxy-net reports every refused flow
 * closed, but a burst of thousands (half ClientHellos timing out together)
 * is refused before the first close comes back. Every close must still be
 * recognised; with 1024 ids remembered, the oldest were overwritten and
 * their honest closes ended the network as a compromised boxy-net.
 */
static void test_refused_burst(void **state)
{
	const uint32_t n = 3000;
	struct fx x;

	(void)state;
	fx_open(&x, NET_ALLOWLIST);
	hello(&x, NET_ALLOWLIST);
	for (uint32_t id = 1; id <= n; id++) {
		flow_open(&x, id, 6, "192.168.1.1", 80);
		expect_refused(&x, id, "net.ip");
		if (id % 256 == 0)
			recs_clear();
	}
	for (uint32_t id = 1; id <= n; id++) {
		flow_counts(&x, NET_FLOW_CLOSE, id, 0, 0);
		if (id % 32 == 0)
			pump(&x, 1);
	}
	pump(&x, 20);
	assert_true(broker_alive(x.b));
	assert_null(find_rec("audit", "degraded"));
	assert_int_equal(broker_flows(x.b), 0);
	fx_close(&x);
}

static void test_dns(void **state)
{
	struct fx x;
	uint32_t n;
	const struct rec *r;

	(void)state;
	fx_open(&x, NET_ALLOWLIST);
	hello(&x, NET_ALLOWLIST);

	/* Unlisted: NXDOMAIN from the broker, and upstream never hears of it. */
	assert_int_equal(resolve(&x, 1, "unlisted.test", DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	assert_int_equal(n, 0);
	assert_int_equal(dns.queries, 0);
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_string_equal(r->layer, "net.dns");
	assert_string_equal(r->subject, "unlisted.test");

	/* Listed: resolved upstream; the loopback answer survives (--allow-cidr). */
	assert_int_equal(resolve(&x, 2, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 1);
	assert_int_equal(dns.queries, 1);
	assert_string_equal(dns.last, "example.test");
	r = find_rec("dns", "resolve");
	assert_non_null(r);
	assert_string_equal(r->detail, "A 127.0.0.1");

	/* Asked again: answered from the session's cache, and said so. */
	assert_int_equal(resolve(&x, 20, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 1);
	assert_int_equal(dns.queries, 1);
	r = find_rec("dns", "resolve");
	assert_non_null(r);
	assert_string_equal(r->detail, "A 127.0.0.1 (cached)");
	/* The other type is another question. */
	assert_int_equal(resolve(&x, 21, "example.test", DNS_TYPE_AAAA, &n), DNS_RCODE_NOERROR);
	assert_int_equal(dns.queries, 2);
	dns.queries--;          /* the counts below were written before the AAAA */

	/* Rebinding: the private answer is dropped and said so. */
	recs_clear();
	assert_int_equal(resolve(&x, 3, "rebind.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 0);
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_string_equal(r->layer, "net.ip");
	assert_string_equal(r->subject, "rebind.test");
	assert_non_null(strstr(r->detail, "10.0.0.5"));
	/* The words say what happened, not "rebinding" — and suggest no --allow-cidr for
	 * an address of the user's own network: the name that answered may be the
	 * payload's own, asking for a hole to the LAN in boxy's voice. */
	assert_non_null(strstr(r->detail, "answered with 10.0.0.5, in the private"));
	assert_null(strstr(r->detail, "--allow-cidr"));
	assert_null(strstr(r->detail, "rebinding"));
	/* A documentation address is no host of the user's: there the hint stays. */
	recs_clear();
	assert_int_equal(resolve(&x, 31, "docrange.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 0);
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_non_null(strstr(r->detail, "(to allow it: --allow-cidr 203.0.113.80/32)"));
	dns.queries--;          /* the counts below were written before docrange.test */
	/* A cached answer is judged exactly as the fresh one was. */
	recs_clear();
	assert_int_equal(resolve(&x, 30, "rebind.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 0);
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_string_equal(r->layer, "net.ip");

	/* Other record types of a permitted name: no data, and no upstream query. */
	assert_int_equal(resolve(&x, 4, "example.test", 16 /* TXT */, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 0);
	assert_int_equal(dns.queries, 2);
	assert_true(broker_alive(x.b));
	fx_close(&x);
}

/* Allowlist TCP: binding, then the name; a matching SNI is dialled. */
static void test_allowlist_dial(void **state)
{
	struct fx x;
	uint32_t n;
	char *layer;
	int fd, peer;
	const struct rec *r;

	(void)state;
	fx_open(&x, NET_ALLOWLIST);
	hello(&x, NET_ALLOWLIST);
	assert_int_equal(resolve(&x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);

	/* SNI mismatch: a name not bound to the address. */
	flow_open(&x, 10, 6, "127.0.0.1", 443);
	assert_int_equal(read_verdict(&x, 10, &layer, &fd), NETV_NEED_NAME);
	free(layer);
	flow_name(&x, 10, NET_NAME_SNI, false, "other.test");
	expect_refused(&x, 10, "net.sni");

	/* ECH refused even with the right outer name. */
	flow_open(&x, 11, 6, "127.0.0.1", 443);
	assert_int_equal(read_verdict(&x, 11, &layer, &fd), NETV_NEED_NAME);
	free(layer);
	flow_name(&x, 11, NET_NAME_SNI, true, "example.test");
	expect_refused(&x, 11, "net.sni");

	/* A port the host was not given: the port is an address-layer objection. */
	flow_open(&x, 12, 6, "127.0.0.1", 22);
	expect_refused(&x, 12, "net.ip");

	/* The right name: dialled, and the socket reaches the listener. Port 443 is
	 * the default list; the listener's port is not, so allow it: */
	fx_close(&x);
	fx_open(&x, NET_ALLOWLIST);
	{
		uint16_t *p = xappend(&x.rs.ports, &x.rs.nports, sizeof(*x.rs.ports));

		*p = x.lport;
	}
	/* The policy borrowed the lists at create: make a broker that sees the port. */
	broker_free(x.b);
	{
		int sp[2];
		char servers[64], *err = NULL;
		struct broker_opts o = { 0 };

		snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
		o.dns_servers = servers;
		x.b = broker_create(x.loop, &x.rs, &sink, "0123456789abcdef", &o, &err);
		assert_non_null(x.b);
		close(x.net);
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		assert_int_equal(broker_attach(x.b, sp[0], &err), 0);
		x.net = sp[1];
	}
	hello(&x, NET_ALLOWLIST);
	assert_int_equal(resolve(&x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	recs_clear();
	flow_open(&x, 20, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 20, &layer, &fd), NETV_NEED_NAME);
	free(layer);
	flow_name(&x, 20, NET_NAME_SNI, false, "example.test");
	assert_int_equal(read_verdict(&x, 20, &layer, &fd), NETV_DIALLED);
	assert_string_equal(layer, "net.sni");
	free(layer);
	assert_true(fd >= 0);
	peer = accept(x.listener, NULL, NULL);
	assert_true(peer >= 0);
	assert_int_equal(write(fd, "hi", 2), 2);
	{
		char buf[4];

		assert_int_equal(read(peer, buf, sizeof(buf)), 2);
		assert_memory_equal(buf, "hi", 2);
	}
	close(peer);
	close(fd);
	r = find_rec("tcp", "sni");
	assert_non_null(r);
	assert_string_equal(r->sni, "example.test");
	r = find_rec("tcp", "allow");
	assert_non_null(r);
	assert_string_equal(r->host, "example.test");

	/* Counters: events carry the increase, close the rest. */
	flow_counts(&x, NET_FLOW_STATS, 20, 100, 1000);
	flow_counts(&x, NET_FLOW_CLOSE, 20, 150, 3000);
	pump(&x, 30);
	r = find_rec("tcp", "bytes");
	assert_non_null(r);
	assert_int_equal(r->up, 100);
	assert_int_equal(r->down, 1000);
	r = find_rec("tcp", "close");
	assert_non_null(r);
	assert_int_equal(r->up, 50);
	assert_int_equal(r->down, 2000);
	assert_int_equal(broker_flows(x.b), 0);
	assert_true(broker_alive(x.b));

	/* The net-log has the connection with its bytes and the resolution. */
	{
		char *json = netlog_to_json(broker_netlog(x.b));

		assert_non_null(strstr(json, "\"example.test\""));
		assert_non_null(strstr(json, "3000"));
		assert_non_null(strstr(json, "\"resolutions\""));
		free(json);
	}
	fx_close(&x);
}

/*
 * The naming bypasses: what boxy-net reports when the first bytes do not name
 * the flow must be refused at net.sni with words that say why, and must not
 * end the session (the payload's doing, not boxy-net's). Before the fix each
 * of these arrived as NONE and was dialled on address and port alone.
 */
static void test_name_refusals(void **state)
{
	static const struct {
		const char *what;
		uint8_t kind;
		bool ech;
		const char *name;
		const char *words;
	} rows[] = {
		{ "malformed ClientHello or HTTP head (two Host headers)", NET_NAME_MALFORMED,
		  false, "", "malformed or incomplete ClientHello or HTTP request head" },
		{ "half a ClientHello when the gateway stopped waiting", NET_NAME_MALFORMED,
		  false, "", "malformed or incomplete ClientHello or HTTP request head" },
		{ "TLS without SNI", NET_NAME_SNI, false, "",
		  "TLS ClientHello without a server name" },
		{ "ECH without SNI", NET_NAME_SNI, true, "", "Encrypted ClientHello refused" },
		{ "ECH with the right outer name", NET_NAME_SNI, true, "example.test",
		  "Encrypted ClientHello refused" },
		{ "HTTP without Host", NET_NAME_HOST, false, "", "HTTP request without a Host" },
		{ "an IPv6 literal as Host", NET_NAME_HOST, false, "::1",
		  "malformed or incomplete ClientHello or HTTP request head" },
	};
	struct fx x;
	uint32_t n;

	(void)state;
	fx_open(&x, NET_ALLOWLIST);
	hello(&x, NET_ALLOWLIST);
	assert_int_equal(resolve(&x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint32_t id = 100 + (uint32_t)i;
		const struct rec *r;
		char *layer;
		int fd;

		flow_open(&x, id, 6, "127.0.0.1", 443);
		assert_int_equal(read_verdict(&x, id, &layer, &fd), NETV_NEED_NAME);
		free(layer);
		recs_clear();
		flow_name(&x, id, rows[i].kind, rows[i].ech, rows[i].name);
		if (read_verdict(&x, id, &layer, &fd) != NETV_REFUSED)
			fail_msg("row '%s': not refused", rows[i].what);
		if (strcmp(layer, "net.sni") != 0)
			fail_msg("row '%s': layer %s, want net.sni", rows[i].what, layer);
		free(layer);
		r = find_rec("tcp", "deny");
		if (!r || strcmp(r->layer, "net.sni") != 0 || !r->detail ||
		    strcmp(r->detail, rows[i].words) != 0)
			fail_msg("row '%s': deny event '%s', want '%s'", rows[i].what,
				 r && r->detail ? r->detail : "(none)", rows[i].words);
		if (!broker_alive(x.b))
			fail_msg("row '%s': the session's network was ended", rows[i].what);
	}
	fx_close(&x);
}

/* --pcap-max reaches boxy-net in NET_CONFIG; unset, or without a capture, it is 0. */
static void test_config_pcap_max(void **state)
{
	static const struct {
		bool pcap;
		uint64_t max;
		bool sent;
	} rows[] = {
		{ true, 12345, true },          /* --pcap-max 12345 */
		{ true, 1ull << 30, true },     /* runspec_finish's default, sent as given */
		{ true, 0, false },             /* unset: 0, boxy-net's own 1 GiB */
		{ false, 12345, false },        /* no capture, nothing to limit */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fx x;
		struct broker_opts o = { 0 };
		char servers[64], *err = NULL;
		int sp[2];
		struct wbuf w;
		struct msg m;
		struct net_config cfg;

		fx_open(&x, NET_PUBLIC);
		broker_free(x.b);
		x.rs.pcap_max = rows[i].max;
		o.pcap = rows[i].pcap;
		snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
		o.dns_servers = servers;
		x.b = broker_create(x.loop, &x.rs, &sink, "0123456789abcdef", &o, &err);
		assert_non_null(x.b);
		close(x.net);
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		assert_int_equal(broker_attach(x.b, sp[0], &err), 0);
		x.net = sp[1];

		wbuf_init(&w);
		wire_put_u32(&w, NETPROTO_VERSION);
		send_frame(&x, NET_HELLO, &w);
		wbuf_free(&w);
		recv_frame(&x, &m);
		assert_int_equal(m.type, NET_CONFIG);
		assert_int_equal(netproto_config_decode(m.payload, m.len, &cfg, NULL), 0);
		assert_int_equal(cfg.mode, NET_PUBLIC);
		assert_int_equal(cfg.flags, (rows[i].pcap ? NETCFG_PCAP : 0) | NETCFG_OBSERVE);
		assert_int_equal(cfg.pcap_max, rows[i].sent ? rows[i].max : 0);
		netproto_config_free(&cfg);
		msg_free(&m);
		fx_close(&x);
	}
}

/*
 * Public mode names what it allows, for the record: the host from the name
 * the address was resolved from, the SNI/Host from NET_FLOW_SEEN. A claimed
 * name becomes the host only when the address was resolved from it.
 */
static void test_public_names(void **state)
{
	struct fx x;
	const struct rec *r;
	char *layer;
	uint32_t n;
	int fd, peer;

	(void)state;
	fx_open(&x, NET_PUBLIC);
	hello(&x, NET_PUBLIC);
	assert_int_equal(resolve(&x, 1, "www.example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 1);
	recs_clear();
	flow_open(&x, 1, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 1, &layer, &fd), NETV_DIALLED);
	free(layer);
	peer = accept(x.listener, NULL, NULL);
	assert_true(peer >= 0);
	r = find_rec("tcp", "allow");
	assert_non_null(r);
	assert_non_null(r->host);
	assert_string_equal(r->host, "www.example.test");

	flow_seen(&x, 1, NET_NAME_SNI, "www.example.test");
	pump(&x, 4);
	r = find_rec("tcp", "sni");
	assert_non_null(r);
	assert_string_equal(r->sni, "www.example.test");
	assert_string_equal(r->host, "www.example.test");
	flow_counts(&x, NET_FLOW_CLOSE, 1, 10, 20);
	pump(&x, 4);
	r = find_rec("tcp", "close");
	assert_non_null(r);
	assert_string_equal(r->sni, "www.example.test");
	close(peer);
	close(fd);

	/* A name the address was never resolved from: recorded as the claim only. */
	flow_open(&x, 2, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 2, &layer, &fd), NETV_DIALLED);
	free(layer);
	peer = accept(x.listener, NULL, NULL);
	recs_clear();
	flow_seen(&x, 2, NET_NAME_HOST, "elsewhere.test");
	pump(&x, 4);
	r = find_rec("tcp", "sni");
	assert_non_null(r);
	assert_string_equal(r->sni, "elsewhere.test");
	assert_string_equal(r->host, "www.example.test");
	assert_true(broker_alive(x.b));

	/* Named twice is impossible: boxy-net is not trusted further. */
	flow_seen(&x, 2, NET_NAME_HOST, "elsewhere.test");
	pump(&x, 4);
	assert_false(broker_alive(x.b));
	close(peer);
	close(fd);
	fx_close(&x);
}

/* Public mode: no binding or name needed, private ranges still refused, UDP connected. */
static void test_public(void **state)
{
	struct fx x;
	char *layer;
	int fd, peer;

	(void)state;
	fx_open(&x, NET_PUBLIC);
	hello(&x, NET_PUBLIC);
	flow_open(&x, 1, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 1, &layer, &fd), NETV_DIALLED);
	free(layer);
	peer = accept(x.listener, NULL, NULL);
	assert_true(peer >= 0);
	close(peer);
	close(fd);
	flow_open(&x, 2, 6, "10.1.2.3", 80);
	expect_refused(&x, 2, "net.ip");
	flow_open(&x, 3, 17, "127.0.0.1", 5353);
	assert_int_equal(read_verdict(&x, 3, &layer, &fd), NETV_DIALLED);
	free(layer);
	{
		struct sockaddr_in sin;
		socklen_t len = sizeof(sin);
		int type = 0;
		socklen_t tl = sizeof(type);

		/* Connected: it has a peer, and it is a datagram socket. */
		assert_int_equal(getpeername(fd, (struct sockaddr *)&sin, &len), 0);
		assert_int_equal(ntohs(sin.sin_port), 5353);
		assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl), 0);
		assert_int_equal(type, SOCK_DGRAM);
	}
	close(fd);
	/* A closed port: refused by the far end, said so. */
	{
		struct sockaddr_in sin = { .sin_family = AF_INET };
		int s = socket(AF_INET, SOCK_STREAM, 0);
		socklen_t len = sizeof(sin);

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
		assert_int_equal(getsockname(s, (struct sockaddr *)&sin, &len), 0);
		close(s);
		flow_open(&x, 4, 6, "127.0.0.1", ntohs(sin.sin_port));
		expect_refused(&x, 4, "upstream");
	}
	assert_true(broker_alive(x.b));
	fx_close(&x);
}

/* ---- tripwires --------------------------------------------------------------- */

static char *const tw_tokens[] = { "AKIAJ4ZQ2XLM7PVR3TWE", "q7VbT2xKp9Lm4RzW8cYdN3fHs6JgA1eUoP5iXtEk" };
static char *const tw_labels[] = { "AWS access key id in ~/.aws/credentials",
				   "AWS secret access key in ~/.aws/credentials" };

/* A public session with the two decoy tokens above. */
static void fx_tripwire(struct fx *x)
{
	struct broker_opts o = { 0 };
	char servers[64], *err = NULL;
	int sp[2];
	struct wbuf w;
	struct msg m;
	struct net_config cfg;

	fx_open(x, NET_PUBLIC);
	broker_free(x->b);
	close(x->net);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	o.dns_servers = servers;
	o.tokens = tw_tokens;
	o.token_labels = tw_labels;
	o.ntokens = 2;
	x->b = broker_create(x->loop, &x->rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x->b);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(broker_attach(x->b, sp[0], &err), 0);
	x->net = sp[1];
	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION);
	send_frame(x, NET_HELLO, &w);
	wbuf_free(&w);
	recv_frame(x, &m);
	/* boxy-net gets the tokens, to look for them in the flows' first bytes */
	assert_int_equal(netproto_config_decode(m.payload, m.len, &cfg, NULL), 0);
	assert_int_equal(cfg.ntokens, 2);
	assert_string_equal(cfg.tokens[1], tw_tokens[1]);
	netproto_config_free(&cfg);
	msg_free(&m);
}

/* The tripwire alerts recorded so far whose subject has subject_part. */
static size_t tw_alerts(const char *subject_part)
{
	size_t n = 0;

	for (size_t i = 0; i < nrecs; i++)
		n += strcmp(recs[i].layer ? recs[i].layer : "", "tripwire") == 0 &&
		     strcmp(recs[i].verdict, "alert") == 0 && strstr(recs[i].subject, subject_part);
	return n;
}

/* A lower-case copy of n characters of s into out (a DNS name as boxy-net sends it). */
static void lower(char *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	out[n] = '\0';
}

/*
 * A name carrying a token (hex, in a long label) is answered NXDOMAIN here and
 * never asked upstream, nor is any later name under its domain; one alert; a
 * token cut across two queries' labels is found too; other names go upstream
 * as before.
 */
static void test_tripwire_dns(void **state)
{
	struct fx x;
	uint32_t n;
	unsigned before;
	char hex[128], name[256], part[16];

	(void)state;
	fx_tripwire(&x);
	before = dns.queries;
	assert_int_equal(resolve(&x, 1, "www.example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(dns.queries, before + 1);
	for (size_t i = 0; tw_tokens[1][i]; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)tw_tokens[1][i]);
	snprintf(name, sizeof(name), "%.60s.0.exfil.test", hex);
	before = dns.queries;
	assert_int_equal(resolve(&x, 2, name, DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	assert_int_equal(resolve(&x, 3, "harmless-looking.exfil.test", DNS_TYPE_A, &n),
			 DNS_RCODE_NXDOMAIN);
	assert_int_equal(dns.queries, before);
	assert_int_equal(tw_alerts("exfil.test"), 1);
	{
		const struct rec *r = find_rec("audit", "alert");

		assert_non_null(strstr(r->detail, "AWS secret access key in ~/.aws/credentials"));
		assert_non_null(strstr(r->detail, "hex-encoded"));
	}
	/* cut in two (10 characters each, too few alone), across two queries */
	lower(part, tw_tokens[0] + 2, 10);
	snprintf(name, sizeof(name), "%s.a.cut.test", part);
	assert_int_equal(resolve(&x, 4, name, DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	assert_int_equal(tw_alerts("cut.test"), 0);
	lower(part, tw_tokens[0] + 12, 8);
	snprintf(name, sizeof(name), "%s.b.cut.test", part);
	assert_int_equal(resolve(&x, 5, name, DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	assert_int_equal(tw_alerts("cut.test"), 1);
	assert_true(broker_alive(x.b));
	fx_close(&x);
}

static void send_tripwire_msg(struct fx *x, uint32_t flow, uint8_t token, uint8_t enc)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, flow);
	wire_put_u8(&w, token);
	wire_put_u8(&w, enc);
	send_frame(x, NET_TRIPWIRE, &w);
	wbuf_free(&w);
}

/*
 * NET_TRIPWIRE: an alert naming the flow, the token and the encoding; a
 * second one for the same flow, one for a flow never opened, a token or an
 * encoding out of range is a compromised boxy-net.
 */
static void test_tripwire_flow(void **state)
{
	static const struct { uint32_t flow; uint8_t token, enc; const char *what; } bad[] = {
		{ 1, 0, TW_ENC_HEX, "told twice" },
		{ 99, 0, TW_ENC_HEX, "a flow never opened" },
		{ 1, 2, TW_ENC_HEX, "a token past the list" },
		{ 1, 0, TW_ENC_COUNT, "an encoding past the list" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct fx x;
		char *layer;
		int fd, peer;

		fx_tripwire(&x);
		flow_open(&x, 1, 6, "127.0.0.1", x.lport);
		assert_int_equal(read_verdict(&x, 1, &layer, &fd), NETV_DIALLED);
		free(layer);
		peer = accept(x.listener, NULL, NULL);
		if (i == 0) {
			send_tripwire_msg(&x, 1, 1, TW_ENC_BASE64);
			pump(&x, 20);
			assert_int_equal(tw_alerts("tcp://127.0.0.1:"), 1);
			assert_non_null(strstr(find_rec("audit", "alert")->detail,
					       "base64-encoded"));
			assert_true(broker_alive(x.b));
		}
		send_tripwire_msg(&x, bad[i].flow, bad[i].token, bad[i].enc);
		pump(&x, 20);
		if (broker_alive(x.b))
			fail_msg("NET_TRIPWIRE with %s: the session's network was not ended",
				 bad[i].what);
		close(peer);
		close(fd);
		fx_close(&x);
	}
}

/* NET_CONFIG as boxy-net reads it: strict about every field. */
static void test_config_decode(void **state)
{
	static const struct { const char *what; const uint8_t *p; size_t n; int rc; } rows[] = {
		{ "public, no tokens", (const uint8_t *)"\1\2\0\0\0\0\0\0\0\0\0", 11, 0 },
		{ "allowlist, pcap", (const uint8_t *)"\2\1\0\0\0\1\0\0\0\0\0", 11, 0 },
		{ "no mode", (const uint8_t *)"\0\0\0\0\0\0\0\0\0\0\0", 11, -1 },
		{ "mode past none", (const uint8_t *)"\4\0\0\0\0\0\0\0\0\0\0", 11, -1 },
		{ "rules and TLS", (const uint8_t *)"\2\14\0\0\0\0\0\0\0\0\0", 11, 0 },
		{ "unknown flag", (const uint8_t *)"\1\20\0\0\0\0\0\0\0\0\0", 11, -1 },
		{ "short", (const uint8_t *)"\1\0\0\0", 4, -1 },
		{ "a byte too many", (const uint8_t *)"\1\0\0\0\0\0\0\0\0\0\0\0", 12, -1 },
		{ "a token promised", (const uint8_t *)"\1\0\0\0\0\0\0\0\0\0\1", 11, -1 },
		{ "33 tokens", (const uint8_t *)"\1\0\0\0\0\0\0\0\0\0\41", 11, -1 },
		{ "a short token", (const uint8_t *)"\1\0\0\0\0\0\0\0\0\0\1\3\0\0\0abc", 18, -1 },
		{ "a token with a space",
		  (const uint8_t *)"\1\0\0\0\0\0\0\0\0\0\1\14\0\0\0abcdef ghijk", 27, -1 },
		{ "a good token", (const uint8_t *)"\1\0\0\0\0\0\0\0\0\0\1\14\0\0\0abcdefghijkl", 27, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct net_config c;
		char *err = NULL;
		int rc = netproto_config_decode(rows[i].p, rows[i].n, &c, &err);

		if (rc != rows[i].rc)
			fail_msg("NET_CONFIG '%s': %d (%s)", rows[i].what, rc, err ? err : "");
		if (rc == 0)
			netproto_config_free(&c);
		free(err);
	}
}

/* --net none: nothing resolves, nothing connects. */
static void test_none(void **state)
{
	struct fx x;
	uint32_t n;

	(void)state;
	fx_open(&x, NET_NONE);
	hello(&x, NET_NONE);
	assert_int_equal(resolve(&x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	flow_open(&x, 1, 6, "127.0.0.1", x.lport);
	expect_refused(&x, 1, "net.ip");
	assert_int_equal(dns.queries, 0);
	fx_close(&x);
}

/* A new broker on the fixture's (changed) run-spec, with a tailnet when suffix is set. */
static void fx_rebroker(struct fx *x, const char *suffix)
{
	char servers[64], tservers[64], *err = NULL;
	struct broker_opts o = { 0 };
	int sp[2];

	broker_free(x->b);
	close(x->net);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	snprintf(tservers, sizeof(tservers), "127.0.0.1:%u", tail.port);
	o.dns_servers = servers;
	o.tailnet = suffix;
	o.tailnet_servers = tservers;
	x->b = broker_create(x->loop, &x->rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x->b);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(broker_attach(x->b, sp[0], &err), 0);
	x->net = sp[1];
}

/* An allowlist session with --tailscale, these hosts, and the tailnet suffix. */
static void fx_tailnet(struct fx *x, const char *const *hosts)
{
	fx_open(x, NET_ALLOWLIST);
	for (; *hosts; hosts++)
		add_host(&x->rs, *hosts);
	x->rs.tailscale = true;
	fx_rebroker(x, "tail0a1b2.ts.net");
	hello(x, NET_ALLOWLIST);
}

/* A flow permitted up to the name stage (a CGNAT address is never dialled here), then closed. */
static void expect_need_name(struct fx *x, uint32_t id, const char *dst, uint16_t port)
{
	char *layer;
	int fd;

	flow_open(x, id, 6, dst, port);
	assert_int_equal(read_verdict(x, id, &layer, &fd), NETV_NEED_NAME);
	free(layer);
	flow_counts(x, NET_FLOW_CLOSE, id, 0, 0);
}

/*
 * --tailscale: names under the MagicDNS suffix go to the tailnet's resolver
 * (never upstream), its CGNAT answer survives the range check, and reaching
 * the address still needs the binding and the host's port.
 */
static void test_tailnet(void **state)
{
	static const char *const hosts[] = { "db.tail0a1b2.ts.net:5432", NULL };
	struct fx x;
	uint32_t n;

	(void)state;
	fx_tailnet(&x, hosts);
	assert_int_equal(resolve(&x, 1, "db.tail0a1b2.ts.net", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 1);
	assert_int_equal(tail.queries, 1);
	assert_string_equal(tail.last, "db.tail0a1b2.ts.net");
	assert_int_equal(dns.queries, 0);
	expect_need_name(&x, 1, "100.101.102.103", 5432);
	/* Another port of the same host, and a tailnet address nobody resolved. */
	flow_open(&x, 2, 6, "100.101.102.103", 22);
	expect_refused(&x, 2, "net.ip");
	flow_open(&x, 3, 6, "100.101.102.104", 5432);
	expect_refused(&x, 3, "net.dns");
	assert_true(broker_alive(x.b));
	assert_int_equal(broker_flows(x.b), 0);
	fx_close(&x);
}

/*
 * --tailscale and a bare name ("ssh nas"): asked of MagicDNS as nas.SUFFIX,
 * bound to "nas" (the name the user permitted); a short name the tailnet does
 * not know goes upstream as it was asked; without a tailnet nothing changes.
 */
static void test_tailnet_bare(void **state)
{
	static const char *const hosts[] = { "nas:22", "printer", NULL };
	struct fx x;
	uint32_t n;

	(void)state;
	fx_tailnet(&x, hosts);
	assert_int_equal(resolve(&x, 1, "nas", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 1);
	assert_int_equal(tail.queries, 1);
	assert_string_equal(tail.last, "nas.tail0a1b2.ts.net");
	assert_int_equal(dns.queries, 0);
	expect_need_name(&x, 1, "100.101.102.103", 22);
	flow_open(&x, 2, 6, "100.101.102.103", 443);
	expect_refused(&x, 2, "net.ip");

	/* Not a tailnet machine: NXDOMAIN there, then the host's resolver, as asked. */
	assert_int_equal(resolve(&x, 3, "printer", DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	assert_int_equal(n, 0);
	assert_int_equal(tail.queries, 2);
	assert_string_equal(tail.last, "printer.tail0a1b2.ts.net");
	assert_int_equal(dns.queries, 1);
	assert_string_equal(dns.last, "printer");

	/* A dotted name outside the suffix is never expanded. */
	assert_int_equal(resolve(&x, 4, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(tail.queries, 2);
	assert_int_equal(dns.queries, 2);

	/* No tailnet (tailscaled gave no suffix): "nas" is asked upstream as it is. */
	fx_rebroker(&x, NULL);
	hello(&x, NET_ALLOWLIST);
	assert_int_equal(resolve(&x, 5, "nas", DNS_TYPE_A, &n), DNS_RCODE_NXDOMAIN);
	assert_int_equal(tail.queries, 2);
	assert_string_equal(dns.last, "nas");
	assert_true(broker_alive(x.b));
	fx_close(&x);
}

/* tailscaled's LocalAPI: the suffix from its status, or one line saying why not. */
static void test_tailscale_suffix(void **state)
{
	static const char reply[] = "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"
				    "{\"Version\":\"1.0\",\"MagicDNSSuffix\": \"Tail0a1b2.ts.net.\"}";
	char path[] = "/tmp/test-broker-ts.XXXXXX", sock[96], *err = NULL, *sfx;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l, st;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(path));
	snprintf(sock, sizeof(sock), "%s/tailscaled.sock", path);
	assert_null(resolver_tailscale_suffix(sock, &err));
	assert_non_null(strstr(err, "not reachable"));
	free(err);
	err = NULL;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	pid = fork();
	if (pid == 0) {
		char req[512];
		int c = accept(l, NULL, NULL);

		if (c < 0 || read(c, req, sizeof(req)) <= 0 ||
		    strncmp(req, "GET /localapi/v0/status ", 24) != 0)
			_exit(1);
		_exit(write(c, reply, sizeof(reply) - 1) == (ssize_t)sizeof(reply) - 1 ? 0 : 1);
	}
	sfx = resolver_tailscale_suffix(sock, &err);
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_non_null(sfx);
	assert_string_equal(sfx, "tail0a1b2.ts.net");
	free(sfx);
	close(l);
	unlink(sock);
	rmdir(path);
}

/* The end-of-run table, byte for byte as the specification prints it. */
/* Is a message from the broker waiting (after running the loop for ms of real time)? */
static bool broker_said(struct fx *x, int ms)
{
	struct pollfd p = { .fd = x->net, .events = POLLIN };
	uint64_t until = now_mono_ms() + (uint64_t)ms;

	while (now_mono_ms() < until) {
		ev_run(x->loop, EVRUN_NOWAIT);
		if (poll(&p, 1, 1) == 1)
			return true;
	}
	return false;
}

/* The evidence waits for the answer: a refusal's verdict and events, a name's answer. */
static void test_attrib_holds(void **state)
{
	struct fx x;
	struct event_who evil = {
		.found = true, .pid = 14, .comm = "node", .package = "evil-pkg", .version = "1.2.3",
		.script = "postinstall",
	};
	const struct rec *r;
	char *layer;
	int fd;
	uint32_t n;

	(void)state;
	fx_attrib = true;
	fx_open(&x, NET_ALLOWLIST);
	hello(&x, NET_ALLOWLIST);

	/* A refused flow: asked at once; neither its verdict nor its events before the answer. */
	flow_open(&x, 1, NET_PROTO_TCP, "169.254.169.254", 80);
	pump(&x, 5);
	assert_int_equal(nasked, 1);
	assert_int_equal(asked[0].sport, 40000);
	assert_int_equal(asked[0].dport, 80);
	assert_false(broker_said(&x, 30));
	assert_null(find_rec("tcp", "deny"));
	assert_int_equal(broker_attrib_waiting(x.b), 1);
	broker_attributed(x.b, asked[0].token, &evil);
	assert_int_equal(read_verdict(&x, 1, &layer, &fd), NETV_REFUSED);
	free(layer);
	r = find_rec("tcp", "deny");
	assert_non_null(r);
	assert_true(r->who && r->found);
	assert_int_equal(r->pid, 14);
	assert_string_equal(r->package, "evil-pkg");
	r = find_rec("audit", "deny");
	assert_non_null(r);
	assert_string_equal(r->package, "evil-pkg");
	/* A second answer, and an answer to nothing: ignored. */
	broker_attributed(x.b, asked[0].token, &evil);
	broker_attributed(x.b, 999, &evil);

	/* Nobody answers: the refusal goes after hold_ms, "unknown". */
	flow_open(&x, 2, NET_PROTO_TCP, "10.0.0.7", 80);
	assert_false(broker_said(&x, 100));
	assert_int_equal(read_verdict(&x, 2, &layer, &fd), NETV_REFUSED);
	free(layer);
	r = find_rec("tcp", "deny");
	assert_true(r->who && !r->found);
	/* Its answer, late: dropped. */
	broker_attributed(x.b, asked[1].token, &evil);
	assert_int_equal(broker_attrib_waiting(x.b), 0);

	/* A refused name: its NXDOMAIN waits too; a permitted one at most answer_hold_ms. */
	{
		struct wbuf w;
		struct msg m;
		uint64_t t0;

		wbuf_init(&w);
		wire_put_u32(&w, 7);
		wire_put_str(&w, "unlisted.test");
		wire_put_u16(&w, DNS_TYPE_A);
		put_resolve_from(&w);
		send_frame(&x, NET_RESOLVE, &w);
		wbuf_free(&w);
		pump(&x, 5);
		assert_false(broker_said(&x, 50));
		broker_attributed(x.b, asked[nasked - 1].token, &evil);
		recv_frame(&x, &m);
		assert_int_equal(m.type, NET_ANSWER);
		msg_free(&m);
		r = find_rec("audit", "deny");
		assert_string_equal(r->subject, "unlisted.test");
		assert_string_equal(r->package, "evil-pkg");

		/* The cache answers example.test at once after a first lookup: its answer
		 * then waits for nobody longer than answer_hold_ms. */
		assert_int_equal(resolve(&x, 8, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
		t0 = now_mono_ms();
		assert_int_equal(resolve(&x, 9, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
		assert_true(now_mono_ms() - t0 < fake_attrib.hold_ms);
		r = find_rec("dns", "resolve");
		assert_true(r->who && !r->found);
	}

	/* The hook cannot ask: nothing waits, "unknown" at once. */
	attrib_fails = true;
	flow_open(&x, 3, NET_PROTO_TCP, "169.254.169.254", 81);
	assert_int_equal(read_verdict(&x, 3, &layer, &fd), NETV_REFUSED);
	free(layer);
	r = find_rec("tcp", "deny");
	assert_true(r->who && !r->found);
	fx_close(&x);
	fx_attrib = false;
}

/* A permitted flow is dialled and handed over without waiting; its events wait. */
static void test_attrib_allow_never_waits(void **state)
{
	struct fx x;
	struct event_who curl = { .found = true, .pid = 7, .comm = "curl", .cmdline = "curl x" };
	struct msg m;
	struct rbuf r;

	(void)state;
	fx_attrib = true;
	fx_open(&x, NET_PUBLIC);
	hello(&x, NET_PUBLIC);
	flow_open(&x, 1, NET_PROTO_TCP, "127.0.0.1", x.lport);
	/* The verdict comes before its event: read it by hand, not with read_verdict. */
	recv_frame(&x, &m);
	assert_int_equal(m.type, NET_VERDICT);
	rbuf_init(&r, m.payload, m.len);
	assert_int_equal(wire_get_u32(&r), 1);
	assert_int_equal(wire_get_u8(&r), NETV_DIALLED);
	assert_int_equal(m.nfds, 1);
	msg_free(&m);
	assert_null(find_rec("tcp", "allow"));
	assert_int_equal(broker_attrib_waiting(x.b), 1);
	broker_attributed(x.b, asked[0].token, &curl);
	assert_non_null(find_rec("tcp", "allow"));
	assert_int_equal(find_rec("tcp", "allow")->pid, 7);
	vl_head = vl_tail;      /* the allow announced a verdict already read */

	/* A late answer, past hold_ms but within record_hold_ms: its events still named. */
	recs_clear();
	flow_open(&x, 2, NET_PROTO_TCP, "127.0.0.1", x.lport);
	recv_frame(&x, &m);
	assert_int_equal(m.type, NET_VERDICT);
	msg_free(&m);
	pump(&x, fake_attrib.hold_ms + 200);
	assert_null(find_rec("tcp", "allow"));
	assert_int_equal(broker_attrib_waiting(x.b), 1);
	broker_attributed(x.b, asked[1].token, &curl);
	assert_non_null(find_rec("tcp", "allow"));
	assert_true(find_rec("tcp", "allow")->found);
	vl_head = vl_tail;
	fx_close(&x);
	fx_attrib = false;
}

static void test_summary(void **state)
{
	static const char want[] =
		"\nboxy: network destinations (2)\n"
		"  DESTINATION         CONNS  DENIED  ADDRS  SENT    RECEIVED\n"
		"  registry.npmjs.org  2      0       1      5.0KiB  30.2KiB\n"
		"  169.254.169.254     1      1       1      0B      0B\n"
		"\nboxy: 1 refused\n"
		"  169.254.169.254:80  1  net.ip  link-local / cloud metadata\n";
	char *const argv[] = { (char *)"npm", (char *)"install", NULL };
	struct wbuf w;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	wbuf_init(&w);
	wire_put_str(&w, "0123456789abcdef");
	wire_put_str(&w, "exited");
	wire_put_strv(&w, argv);
	wire_put_u64(&w, 545);
	wire_put_u64(&w, 3);
	wire_put_u64(&w, 1);
	wire_put_u64(&w, 5120);
	wire_put_u64(&w, 30924);
	wire_put_u32(&w, 2);
	wire_put_str(&w, "registry.npmjs.org");
	wire_put_u64(&w, 2);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, 1);
	wire_put_u64(&w, 5120);
	wire_put_u64(&w, 30924);
	wire_put_str(&w, "169.254.169.254");
	wire_put_u64(&w, 1);
	wire_put_u64(&w, 1);
	wire_put_u64(&w, 1);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, 1);            /* refused: 1, none past the table, one group */
	wire_put_u64(&w, 0);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "169.254.169.254:80");
	wire_put_str(&w, "net.ip");
	wire_put_str(&w, "link-local / cloud metadata");
	wire_put_u64(&w, 1);
	wire_put_str(&w, NULL);         /* who: not looked for */
	wire_put_u8(&w, 0);
	f = open_memstream(&text, &len);
	assert_int_equal(net_summary_print(f, w.p, w.len), 0);
	fclose(f);
	assert_string_equal(text, want);
	free(text);

	/* A malformed snapshot: -1, and nothing printed. */
	text = NULL;
	f = open_memstream(&text, &len);
	assert_int_equal(net_summary_print(f, w.p, 2), -1);
	fclose(f);
	assert_string_equal(text, "");
	free(text);
	wbuf_free(&w);
}

/*
 * broker_finish (issue 10: every connection's bytes were 0 in the store and
 * racy in the net-log): the totals boxy-net sends at its EOF are taken in,
 * and the wait is bounded even against a boxy-net that never stops sending.
 */
static void test_finish(void **state)
{
	const struct rec *r;
	struct fx x;
	char *layer, *json;
	int fd, peer;
	uint64_t t0, took;
	pid_t pid;

	(void)state;
	fx_open(&x, NET_PUBLIC);
	hello(&x, NET_PUBLIC);
	flow_open(&x, 1, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 1, &layer, &fd), NETV_DIALLED);
	free(layer);
	peer = accept(x.listener, NULL, NULL);
	flow_counts(&x, NET_FLOW_STATS, 1, 10, 100);
	pump(&x, 5);
	/* What boxy-net says at the broker's EOF: the final totals, then its own EOF. */
	flow_counts(&x, NET_FLOW_CLOSE, 1, 15, 4000);
	shutdown(x.net, SHUT_WR);
	t0 = now_mono_ms();
	broker_finish(x.b);
	took = now_mono_ms() - t0;
	assert_true(took < BROKER_FINISH_MS);            /* it returned at EOF, not at its deadline */
	r = find_rec("tcp", "close");
	assert_non_null(r);
	assert_int_equal(r->up, 5);                      /* events carry the increase */
	assert_int_equal(r->down, 3900);
	json = netlog_to_json(broker_netlog(x.b));
	assert_non_null(strstr(json, ",15,4000,"));      /* the net-log has the totals */
	free(json);
	assert_true(broker_alive(x.b));
	close(peer);
	close(fd);
	fx_close(&x);

	fx_open(&x, NET_PUBLIC);
	hello(&x, NET_PUBLIC);
	flow_open(&x, 1, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 1, &layer, &fd), NETV_DIALLED);
	free(layer);
	peer = accept(x.listener, NULL, NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* A boxy-net gone wrong: counters, valid and endless. */
		for (uint64_t i = 1;; i++) {
			struct wbuf w;

			wbuf_init(&w);
			wire_put_u32(&w, 1);
			wire_put_u64(&w, i);
			wire_put_u64(&w, i);
			if (msg_send(x.net, NET_FLOW_STATS, w.p, w.len, NULL, 0) < 0)
				_exit(0);
			wbuf_free(&w);
		}
	}
	t0 = now_mono_ms();
	broker_finish(x.b);
	took = now_mono_ms() - t0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_true(took >= BROKER_FINISH_MS - 5);
	assert_true(took < BROKER_FINISH_MS + 250);
	close(peer);
	close(fd);
	fx_close(&x);
}

/*
 * Two boxy-nets for one session (a multi-queue tap0, one per queue): each
 * has its own flow and query ids, both share the session's bindings (a name
 * resolved through one binds the address for flows of the other), the
 * session's flow count and net-log; finishing reads both; one that breaks
 * the protocol ends the network of both.
 */
static void test_two_boxy_nets(void **state)
{
	struct fx x;
	int net[2], sp[2], fd, peer;
	char servers[64], *layer, *err = NULL, *json;
	struct broker_opts o = { 0 };
	uint32_t n;

	(void)state;
	fx_open(&x, NET_ALLOWLIST);
	{
		uint16_t *p = xappend(&x.rs.ports, &x.rs.nports, sizeof(*x.rs.ports));

		*p = x.lport;
	}
	/* A broker that sees the listener's port, with two boxy-nets. */
	broker_free(x.b);
	close(x.net);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	o.dns_servers = servers;
	x.b = broker_create(x.loop, &x.rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x.b);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		assert_int_equal(broker_attach(x.b, sp[0], &err), 0);
		net[i] = sp[1];
		x.net = net[i];
		hello(&x, NET_ALLOWLIST);
	}
	assert_int_equal(broker_helpers(x.b), 2);

	/* The name resolved through the second, the flow opened through the first. */
	x.net = net[1];
	assert_int_equal(resolve(&x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	x.net = net[0];
	flow_open(&x, 7, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 7, &layer, &fd), NETV_NEED_NAME);
	free(layer);
	flow_name(&x, 7, NET_NAME_SNI, false, "example.test");
	assert_int_equal(read_verdict(&x, 7, &layer, &fd), NETV_DIALLED);
	free(layer);
	peer = accept(x.listener, NULL, NULL);
	assert_true(peer >= 0);
	/* The same id on the second is another flow (and the same query id, answered from the
	 * session's cache, is the second's query). */
	x.net = net[1];
	flow_open(&x, 7, 6, "127.0.0.1", x.lport);
	assert_int_equal(read_verdict(&x, 7, &layer, &sp[0]), NETV_NEED_NAME);
	free(layer);
	assert_int_equal(resolve(&x, 1, "example.test", DNS_TYPE_A, &n), DNS_RCODE_NOERROR);
	assert_int_equal(n, 1);
	assert_int_equal(broker_flows(x.b), 2);
	/* The first's flow closes with its bytes; the second's is still waiting for its name. */
	x.net = net[0];
	flow_counts(&x, NET_FLOW_CLOSE, 7, 5, 50);
	pump(&x, 20);
	assert_int_equal(broker_flows(x.b), 1);
	assert_true(broker_alive(x.b));
	json = netlog_to_json(broker_netlog(x.b));
	assert_non_null(strstr(json, ",5,50,"));       /* the bytes, then the who (none here) */
	assert_non_null(strstr(json, "\"example.test\""));
	free(json);
	/* A message the second may not send ends the network of both. */
	x.net = net[1];
	flow_counts(&x, NET_FLOW_STATS, 99, 1, 1);
	pump(&x, 20);
	assert_false(broker_alive(x.b));
	assert_int_equal(broker_flows(x.b), 0);
	{
		char c;

		/* Both control sockets were closed by the broker. */
		assert_int_equal(read(net[0], &c, 1), 0);
		assert_int_equal(read(net[1], &c, 1), 0);
	}
	close(peer);
	close(fd);
	close(net[1]);
	x.net = net[0];
	fx_close(&x);
}

/*
 * Two boxy-nets (two queues of tap0) under --allow-http with TLS inspection:
 * each gets the rules and the session CA (not only the first), each numbers
 * its requests 1, 2, … and the record numbers them over the session; a
 * boxy-net that repeats its own number still ends the network.
 */
static void test_two_boxy_nets_gated(void **state)
{
	struct fx x;
	int net[2], sp[2];
	char fp[65], *err = NULL;
	uint32_t seqs[2];
	size_t got = 0;

	(void)state;
	fx_open_tls_for(&x, 2, fp);
	net[0] = x.net;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(broker_attach(x.b, sp[0], &err), 0);
	net[1] = x.net = sp[1];
	tls_hello(&x, fp);
	assert_int_equal(broker_helpers(x.b), 2);

	/* The same flow id on each: two flows, one plain, one inspected. */
	x.net = net[0];
	assert_int_equal(gated_flow(&x, 30, NET_NAME_HOST, "example.test"), NETVF_GATE);
	x.net = net[1];
	assert_int_equal(gated_flow(&x, 30, NET_NAME_SNI, "example.test"),
			 NETVF_GATE | NETVF_TLS);
	recs_clear();
	x.net = net[0];
	send_request(&x, &(struct req_msg){ 30, 1, HTTP_ALLOWED, 0, 0, "GET", "example.test",
					    x.lport, "/v1/a", "", "" });
	pump(&x, 30);
	x.net = net[1];
	send_request(&x, &(struct req_msg){ 30, 1, HTTP_ALLOWED, 0, HTTPREQ_TLS, "GET",
					    "example.test", x.lport, "/v1/b", "", "" });
	pump(&x, 30);
	assert_true(broker_alive(x.b));
	for (size_t i = 0; i < nrecs; i++)
		if (strcmp(recs[i].kind, "http") == 0 && got < 2)
			seqs[got++] = recs[i].seq;
	assert_int_equal(got, 2);
	assert_int_equal(seqs[0], 1);
	assert_int_equal(seqs[1], 2);
	/* Its own number again: a lying boxy-net, whose network ends (both). */
	send_request(&x, &(struct req_msg){ 30, 1, HTTP_ALLOWED, 0, HTTPREQ_TLS, "GET",
					    "example.test", x.lport, "/v1/c", "", "" });
	pump(&x, 30);
	assert_false(broker_alive(x.b));
	close(net[1]);
	x.net = net[0];
	fx_close(&x);
}

/* The one message waiting on fd, read now (none: fails). */
static void recv_on(struct fx *x, int fd, struct msg *m)
{
	int keep = x->net;

	x->net = fd;
	recv_frame(x, m);
	x->net = keep;
}

/* Did the broker send anything on fd within ms? */
static bool said_on(struct fx *x, int fd, int ms)
{
	int keep = x->net;
	bool said;

	x->net = fd;
	said = broker_said(x, ms);
	x->net = keep;
	return said;
}

/*
 * Issue 14's detectors over two boxy-nets (two queues of tap0): each gets the
 * decoy tokens in its NET_CONFIG; a refusal or a DNS answer held for its
 * attribution goes back to the boxy-net whose flow or query it is (the same
 * ids on both), when its own question is answered; NET_TRIPWIRE names the
 * sender's flow, with that flow's who; a held network reads neither, and
 * both again once let go.
 */
static void test_two_boxy_nets_detectors(void **state)
{
	static struct broker_attrib slow = {
		.ask = fake_ask, .hold_ms = 5000, .answer_hold_ms = 5000, .record_hold_ms = 5000,
	};
	struct event_who evil = { .found = true, .pid = 14, .comm = "node", .package = "evil-pkg" };
	struct event_who curl = { .found = true, .pid = 7, .comm = "curl", .package = "fine-pkg" };
	struct broker_opts o = { 0 };
	struct fx x;
	int net[2], sp[2], fd[2], peer[2];
	char servers[64], hex[128], name[256], *layer, *err = NULL;
	struct msg m;
	struct rbuf r;
	const struct rec *rec;

	(void)state;
	fx_open(&x, NET_PUBLIC);
	broker_free(x.b);
	close(x.net);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u", dns.port);
	o.dns_servers = servers;
	o.tokens = tw_tokens;
	o.token_labels = tw_labels;
	o.ntokens = 2;
	o.attrib = &slow;
	x.b = broker_create(x.loop, &x.rs, &sink, "0123456789abcdef", &o, &err);
	assert_non_null(x.b);
	for (int i = 0; i < 2; i++) {
		struct wbuf w;
		struct net_config cfg;

		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		assert_int_equal(broker_attach(x.b, sp[0], &err), 0);
		net[i] = x.net = sp[1];
		wbuf_init(&w);
		wire_put_u32(&w, NETPROTO_VERSION);
		send_frame(&x, NET_HELLO, &w);
		wbuf_free(&w);
		recv_frame(&x, &m);
		assert_int_equal(m.type, NET_CONFIG);
		assert_int_equal(netproto_config_decode(m.payload, m.len, &cfg, NULL), 0);
		if (cfg.ntokens != 2)
			fail_msg("boxy-net %d of 2 got %zu decoy tokens, not 2", i + 1, cfg.ntokens);
		assert_string_equal(cfg.tokens[0], tw_tokens[0]);
		netproto_config_free(&cfg);
		msg_free(&m);
	}
	assert_int_equal(broker_helpers(x.b), 2);

	/* Flow 1 refused on each, the second's asked about first: held, then each to its own. */
	x.net = net[1];
	flow_open(&x, 1, NET_PROTO_TCP, "169.254.169.254", 80);
	pump(&x, 5);
	x.net = net[0];
	flow_open(&x, 1, NET_PROTO_TCP, "169.254.169.254", 81);
	pump(&x, 5);
	assert_int_equal(nasked, 2);
	assert_int_equal(asked[0].dport, 80);
	assert_false(said_on(&x, net[0], 20));
	assert_false(said_on(&x, net[1], 20));
	broker_attributed(x.b, asked[0].token, &evil);
	assert_false(said_on(&x, net[0], 20));
	x.net = net[1];
	assert_int_equal(read_verdict(&x, 1, &layer, &fd[0]), NETV_REFUSED);
	free(layer);
	rec = find_rec("tcp", "deny");
	assert_non_null(strstr(rec->subject, ":80"));
	assert_string_equal(rec->package, "evil-pkg");
	broker_attributed(x.b, asked[1].token, &curl);
	x.net = net[0];
	assert_int_equal(read_verdict(&x, 1, &layer, &fd[0]), NETV_REFUSED);
	free(layer);
	rec = find_rec("tcp", "deny");
	assert_non_null(strstr(rec->subject, ":81"));
	assert_string_equal(rec->package, "fine-pkg");

	/* Query 3 on each, refused here (a token, then its tripped domain): held the same way. */
	for (size_t i = 0; tw_tokens[1][i]; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)tw_tokens[1][i]);
	snprintf(name, sizeof(name), "%.60s.0.exfil.test", hex);
	for (int i = 1; i >= 0; i--) {
		struct wbuf w;

		wbuf_init(&w);
		wire_put_u32(&w, 3);
		wire_put_str(&w, i ? name : "harmless-looking.exfil.test");
		wire_put_u16(&w, DNS_TYPE_A);
		put_resolve_from(&w);
		x.net = net[i];
		send_frame(&x, NET_RESOLVE, &w);
		wbuf_free(&w);
		pump(&x, 5);
	}
	assert_int_equal(nasked, 4);
	assert_int_equal(tw_alerts("exfil.test"), 0);       /* held for its who */
	assert_false(said_on(&x, net[0], 20));
	assert_false(said_on(&x, net[1], 20));
	broker_attributed(x.b, asked[2].token, &evil);
	assert_false(said_on(&x, net[0], 20));
	recv_on(&x, net[1], &m);
	assert_int_equal(m.type, NET_ANSWER);
	rbuf_init(&r, m.payload, m.len);
	assert_int_equal(wire_get_u32(&r), 3);
	assert_int_equal(wire_get_u8(&r), DNS_RCODE_NXDOMAIN);
	msg_free(&m);
	assert_int_equal(tw_alerts("exfil.test"), 1);
	assert_string_equal(find_rec("audit", "alert")->package, "evil-pkg");
	broker_attributed(x.b, asked[3].token, &curl);
	recv_on(&x, net[0], &m);
	assert_int_equal(m.type, NET_ANSWER);
	msg_free(&m);

	/* Flow 2 dialled on each; the second's first bytes carry a token: its flow, its who. */
	for (int i = 0; i < 2; i++) {
		x.net = net[i];
		flow_open(&x, 2, NET_PROTO_TCP, "127.0.0.1", x.lport);
		recv_frame(&x, &m);
		assert_int_equal(m.type, NET_VERDICT);
		assert_int_equal(m.nfds, 1);
		fd[i] = m.fds[0];
		m.fds[0] = -1;
		msg_free(&m);
		peer[i] = accept(x.listener, NULL, NULL);
	}
	broker_attributed(x.b, asked[4].token, &curl);
	broker_attributed(x.b, asked[5].token, &evil);
	vl_head = vl_tail;      /* the allows announced verdicts already read */
	x.net = net[1];
	send_tripwire_msg(&x, 2, 0, TW_ENC_RAW);
	pump(&x, 20);
	assert_true(broker_alive(x.b));
	assert_int_equal(tw_alerts("tcp://127.0.0.1:"), 1);
	rec = find_rec("audit", "alert");
	assert_string_equal(rec->package, "evil-pkg");
	/* The first's flow 2 was not told: a tripwire there is news, not a repeat. */
	x.net = net[0];
	send_tripwire_msg(&x, 2, 1, TW_ENC_RAW);
	pump(&x, 20);
	assert_true(broker_alive(x.b));
	assert_int_equal(tw_alerts("tcp://127.0.0.1:"), 2);
	assert_string_equal(find_rec("audit", "alert")->package, "fine-pkg");

	/* Held (a frozen session): neither is read; let go, both are. */
	attrib_fails = true;
	broker_hold(x.b, true);
	for (int i = 0; i < 2; i++) {
		x.net = net[i];
		flow_open(&x, 5, NET_PROTO_TCP, "169.254.169.254", 80);
	}
	assert_false(said_on(&x, net[0], 50));
	assert_false(said_on(&x, net[1], 50));
	broker_hold(x.b, false);
	for (int i = 0; i < 2; i++) {
		x.net = net[i];
		assert_int_equal(read_verdict(&x, 5, &layer, &sp[0]), NETV_REFUSED);
		free(layer);
	}
	assert_true(broker_alive(x.b));
	for (int i = 0; i < 2; i++) {
		close(fd[i]);
		close(peer[i]);
	}
	close(net[1]);
	x.net = net[0];
	fx_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_config),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_two_boxy_nets),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_refused_burst),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_allowlist_dial),
		cmocka_unit_test(test_name_refusals),
		cmocka_unit_test(test_config_pcap_max),
		cmocka_unit_test(test_public),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_public_names),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_attrib_holds),
		cmocka_unit_test(test_attrib_allow_never_waits),
		cmocka_unit_test(test_tailnet),
		cmocka_unit_test(test_tailnet_bare),
		cmocka_unit_test(test_tailscale_suffix),
		cmocka_unit_test(test_http_records),
		cmocka_unit_test(test_http_lies),
		cmocka_unit_test(test_http_after_refusal),
		cmocka_unit_test(test_tls_fail),
		cmocka_unit_test(test_tls_fail_lies),
		cmocka_unit_test(test_two_boxy_nets_gated),
		cmocka_unit_test(test_two_boxy_nets_detectors),
		cmocka_unit_test(test_tripwire_dns),
		cmocka_unit_test(test_tripwire_flow),
		cmocka_unit_test(test_config_decode),
	};

	/* The hosts file must not answer for the test names. */
	setenv("CARES_HOSTS", "/dev/null", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
