/*
 * broker/broker.c — the daemon's half of a session's network (see broker/broker.h).
 *
 * One broker per session: the control socket to each of the session's
 * boxy-nets (one per queue of tap0, struct helper), watched by the daemon's
 * libev loop, each with its table of flows (dialling, waiting for their
 * name, open); and for the session as a whole the binding table that DNS
 * answers fill, the resolver, the dial limits and the net-log. The kernel
 * keeps every flow on one queue of tap0, so a flow belongs to one boxy-net
 * from its first packet to its last (and its ids are that boxy-net's); a
 * name resolved through one boxy-net binds the address for flows of all. The broker reads only boxy-net's messages, never a
 * byte the payload sent, and validates every field of every one of them
 * before acting: boxy-net runs the code that parses hostile packets, so a
 * boxy-net that says something impossible is assumed taken over, and the
 * session loses its network rather than trusting it further.
 *
 * Policy is policy/decide.h's pure function, called with the session's
 * run-spec and the bindings; the broker's part is the I/O around it —
 * non-blocking connects from the daemon's namespace (the verdict goes back
 * when the connect completes, with the socket), connected UDP sockets, and
 * the events and net-log rows that say what was decided and why.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/dnscache.h"
#include "broker/dnsexfil.h"
#include "parse/tripwire.h"
#include "proto/msg.h"
#include "policy/addr.h"
#include "policy/bind.h"
#include "parse/dns.h"
#include "parse/http.h"
#include "policy/decide.h"
#include "policy/http-rules.h"
#include "common/tlsca.h"
#include "broker/netlog.h"
#include "proto/netproto.h"
#include "proto/outq.h"
#include "broker/resolver.h"
#include "common/util.h"
#include "proto/wire.h"

#define FLOW_BUCKETS   1024
/*
 * Refused flow ids remembered for their FLOW_CLOSE. An id is forgotten when
 * its close comes, so the list only holds refusals boxy-net has not closed
 * yet, which are among its open flows: at most GW_MAX_FLOWS (8192). With
 * 1024, three thousand half ClientHellos timing out together were refused
 * faster than their closes came back; the oldest ids were overwritten, and
 * their (honest) closes ended the session's network as a compromise.
 */
#define REFUSED_KEPT   8192
#define READ_BATCH     64           /* messages per wakeup, so one session cannot hog the loop */
#define LOG_LINES_MAX  200          /* NET_LOG lines per session written to the daemon's log */
/*
 * Upstream connects in progress per session. Each holds a descriptor of the
 * daemon's for up to BROKER_DIAL_TIMEOUT: a payload dialling a thousand
 * addresses that drop SYNs (boxy-net lets 1024 flows wait for the broker)
 * took the daemon to 981 of its 1024 descriptors, which every other session,
 * the resolver and the control socket share. Past the cap a TCP flow waits
 * (FLOW_QUEUED) for a connect to finish; boxy-net holds its SYN meanwhile
 * and gives up on it after its own 30 s, closing the flow.
 */
#define DIALS_MAX      256
#define HELPER_GRACE_MS 100         /* boxy-net's time to exit on EOF at a session's end */

enum flow_state {
	FLOW_NAME,                  /* waiting for NET_FLOW_NAME */
	FLOW_QUEUED,                /* waiting for a dial slot (DIALS_MAX) */
	FLOW_DIAL,                  /* upstream connect in progress */
	FLOW_OPEN,                  /* socket handed over; counting bytes */
	FLOW_REFUSING,              /* refused; the verdict waits for its attribution */
};

struct who_q;

struct flow {
	struct flow *next;          /* bucket chain */
	struct flow *qnext;         /* FLOW_QUEUED: the next in the broker's dial queue */
	struct broker *b;
	struct helper *h;           /* the boxy-net whose flow it is (its id is that one's) */
	uint32_t id;
	enum net_proto proto;
	struct net_addr dst, src;
	uint16_t dport, sport;
	enum flow_state state;
	const char *layer;          /* the layer whose decision let it through */
	char *host;                 /* the permitted name it was matched to */
	char *sni;                  /* SNI / Host seen on the wire */
	char *exception;            /* the range exception that applied, verbatim */
	int fd;                     /* upstream socket while dialling */
	ev_timer dial_t;
	size_t nl;                  /* its net-log row (FLOW_OPEN) */
	uint64_t up, down;          /* totals last reported */
	uint64_t seq;               /* the broker's number for it (events' flow): ids are reused */
	uint8_t gate;               /* NETVF_* sent with its verdict: its requests are gated */
	uint64_t nreq;              /* requests boxy-net recorded on it */
	bool tls_failed;            /* NET_TLS_FAIL came: its inspection failed, once */
	bool req_refused;           /* ... the last of which was refused: no more may come */
	struct who_q *wq;           /* its attribution, NULL without */
	bool tripped;               /* boxy-net found a decoy token in it (NET_TRIPWIRE, once) */
};

/* The DNS names under one parent domain, as one stream for the decoy tokens. */
struct tw_domain {
	char parent[256];           /* dnsexfil_parent's, which writes at most 255 */
	struct tw_stream st;
	uint64_t last_ms;
	bool tripped;               /* a token went by: every name under it is refused */
	uint64_t refused;           /* ... how many since */
};

/* A DNS query from boxy-net, until its answer is sent. */
struct query {
	struct query *next;
	struct broker *b;
	struct helper *h;           /* the boxy-net that asked (its id is that one's) */
	uint32_t id;
	uint16_t qtype;
	char name[DNS_NAME_BUF];
	bool upstream;              /* a lookup is in flight (counted in nlookups) */
	struct who_q *wq;           /* its attribution, NULL without */
	bool held;                  /* the answer below waits for the attribution */
	uint64_t held_at;           /* since when (monotonic ms) */
	bool refused;               /* that answer refuses the name (for the net-log) */
	uint8_t rcode;
	uint32_t ttl;
	struct net_addr addrs[DNS_ANSWER_MAX];
	size_t naddrs;
};

/*
 * One question of attribution (broker/broker.h, struct broker_attrib), and
 * what waits for its answer: the events about its flow or query (held, in
 * order), a refused flow's verdict, a query's answer. Owned by its flow or
 * query while that lives and by the waiting list while it waits: a flow
 * closed before the answer came leaves it behind, to be answered (its
 * events emitted, its net-log row named) and freed alone.
 */
struct held_event {
	struct held_event *next;
	struct event_copy c;
};

enum who_owner { WHO_NONE, WHO_FLOW, WHO_QUERY };

struct who_q {
	struct who_q *hnext;                /* the token's hash chain */
	struct who_q *wprev, *wnext;        /* the waiting list: oldest, so earliest deadline, first */
	uint64_t token;
	uint64_t deadline;                  /* monotonic ms */
	bool waiting;
	struct event_copy answer;           /* answer.who, once answered (its strings owned) */
	struct held_event *held, **held_tail;
	enum who_owner owner_kind;
	void *owner;                        /* its flow or query; NULL once that is gone */
	size_t nl_conn;                     /* its flow's net-log row, SIZE_MAX: none */
};

#define WHO_BUCKETS 256

struct broker {
	struct ev_loop *loop;
	const struct runspec *rs;
	const struct event_sink *sink;
	char *session;
	struct net_policy policy;
	struct http_rules rules;    /* --allow-http, parsed: the same ones boxy-net gates by */
	uint32_t http_seq;          /* the last request number recorded, over the session */
	struct net_bind *binds;
	struct dns_cache *cache;    /* upstream answers, this session's only */
	struct dnsexfil *exfil;     /* does its DNS look like a tunnel? (broker/dnsexfil.h) */
	struct resolver *res;
	struct netlog *log;
	uint64_t start_ms;          /* monotonic, for net-log times */
	bool pcap;
	struct tls_ca *tls_ca;      /* the session CA until NET_TLS_CA took its key to every boxy-net */
	size_t tls_ca_for;          /* how many boxy-nets get it (broker_opts.helpers) */
	size_t tls_ca_sent;         /* ... and how many have */

	struct helper *helpers[BROKER_MAX_HELPERS];
	size_t nhelpers;
	/*
	 * Dialling sockets are watched by an epoll set of our own, not by the
	 * loop: a socket handed to boxy-net stays open there, and libev never
	 * takes a stopped watcher's fd out of its epoll set, so the set kept
	 * reporting sockets the daemon no longer had, and libev rebuilt its
	 * whole set each time (one rebuild per seven connections, measured).
	 * Here each socket leaves the set (EPOLL_CTL_DEL) before it is sent.
	 */
	int dial_ep;
	ev_io dial_ep_w;
	unsigned log_lines;

	size_t nflows;              /* over every boxy-net: BROKER_MAX_FLOWS */
	size_t ndials;              /* flows in FLOW_DIAL: each holds a connecting socket */
	struct flow *dialq, **dialq_tail;   /* FLOW_QUEUED flows, first come first dialled */
	struct query *queries;      /* every query not answered yet */
	size_t nqueries;
	size_t nlookups;            /* of those, upstream lookups in flight */

	struct broker_attrib attrib;    /* .ask NULL: no attribution */
	struct who_q *who_hash[WHO_BUCKETS];
	struct who_q *who_first, *who_last;     /* waiting for their answer */
	size_t nwho;                /* waiting */
	uint64_t who_seq;
	ev_timer who_t;             /* no later than the first waiting one's deadline */
	uint64_t who_t_at;          /* when it fires (monotonic ms), while active */
	/* What attribution cost the session, for one line in the daemon's log at its end. */
	uint64_t who_found, who_unknown;        /* answers: a process, or none (or too late) */
	uint64_t held_answers, held_answer_ms;  /* permitted names' answers that waited, how long */

	bool dead;
	bool finishing;             /* broker_finish: reading boxy-net's last counts, asking nothing */
	bool frozen;                /* frozen: nothing read, boxy-net stopped */
	struct query *frozen_q;     /* the query whose alert froze the session, kept for a resume */
	uint64_t flow_seq;
	char *failure;

	/* --tripwires (see broker/broker.h) */
	char **tw_tokens, **tw_labels;
	size_t tw_n;
	struct tw_matcher *tw;
	struct tw_domain tw_dns[BROKER_TRIPWIRE_DOMAINS];
	uint8_t tw_alerted[TW_TOKENS_MAX];  /* per token: bit 0 DNS, bit 1 a flow */
	unsigned tw_alerts;
	uint64_t tw_over_cap;
	void (*alert_now)(void *ctx, const struct event *ev);  /* broker_opts' */
	void *alert_ctx;
};

/* One boxy-net of the session (one queue of tap0) and what is its alone. */
struct helper {
	struct broker *b;
	unsigned idx;               /* in b->helpers */
	int fd;                     /* control socket to boxy-net, -1 once ended */
	ev_io rw, ww;
	bool hello;
	struct outq outq;           /* frames for boxy-net (proto/outq.h) */
	pid_t pid;                  /* boxy-net, -1 once reaped (or never started) */
	int pidfd;                  /* the same process, immune to pid reuse */
	ev_child child_w;           /* its exit, on the default loop */
	struct flow *flows[FLOW_BUCKETS];
	uint32_t refused[REFUSED_KEPT]; /* recently refused ids: boxy-net may still close them */
	size_t nrefused, refused_next;
	uint32_t http_seq;          /* the last request number this boxy-net sent */
};

static void broker_end(struct broker *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- events ---------------------------------------------------------------- */

/* Stamp an event with the session and send it to the sink. */
static void emit(struct broker *b, struct event *ev)
{
	ev->session = b->session;
	event_emit(b->sink, ev);
}

/*
 * An event about a flow or query with attribution wq: held while its
 * question waits (so that it goes out naming who), else sent with the
 * answer. NULL wq: not attributed, sent as it is.
 */
static void who_emit(struct broker *b, struct who_q *wq, struct event *ev)
{
	struct held_event *h;

	if (wq && wq->waiting) {
		ev->session = b->session;
		if (ev->t_ms == 0)
			ev->t_ms = now_real_ms();       /* when it happened, not when it is sent */
		h = xcalloc(1, sizeof(*h));
		event_copy_init(&h->c, ev);
		*wq->held_tail = h;
		wq->held_tail = &h->next;
		return;
	}
	if (wq)
		ev->who = &wq->answer.who;
	emit(b, ev);
}

/* "tcp://93.184.216.34:443", "udp://[2001:db8::1]:53" */
static char *flow_subject(const struct flow *f, char *addr)
{
	return xasprintf(f->dst.family == AF_INET6 ? "%s://[%s]:%u" : "%s://%s:%u",
			 f->proto == NET_PROTO_TCP ? "tcp" : "udp", addr, f->dport);
}

/* One event about a flow: its kind is its protocol. */
static void emit_flow(struct broker *b, const struct flow *f, const char *verdict,
		      const char *layer, const char *detail, uint64_t up, uint64_t down)
{
	char addr[NET_ADDR_STRLEN], *subject;
	struct event ev = { 0 };

	net_addr_format(&f->dst, addr);
	subject = flow_subject(f, addr);
	ev.kind = f->proto == NET_PROTO_TCP ? "tcp" : "udp";
	ev.verdict = verdict;
	ev.layer = layer;
	ev.subject = subject;
	ev.detail = detail;
	ev.addr = addr;
	ev.port = f->dport;
	ev.host = f->host;
	ev.sni = f->sni;
	ev.up = up;
	ev.down = down;
	ev.flow = f->seq;
	who_emit(b, f->wq, &ev);
	free(subject);
}

/*
 * A policy decision for the audit log (kind "audit", which is what
 * --audit-log records): refusals, with their layer, and allows that needed
 * a range exception, which the audit log must name verbatim. Each is a
 * mirror of a flow event, which is what the store keeps (one row per
 * refusal, not two).
 */
static void emit_audit(struct broker *b, struct who_q *wq, const char *layer,
		       const char *verdict, const char *subject, const char *detail)
{
	struct event ev = event_audit_make(layer, verdict, subject, detail);

	ev.mirror = true;
	who_emit(b, wq, &ev);
}

/*
 * A decision about a name (refused, or an answer of it dropped, with addr):
 * its audit line, which is also the store's resolution row (host is the
 * name), so not a mirror, and one line in boxy watch.
 */
static void emit_audit_name(struct broker *b, struct who_q *wq, const char *layer,
			    const char *name, const char *detail, const char *addr)
{
	struct event ev = event_audit_make(layer, "deny", name, detail);

	ev.host = name;
	ev.addr = addr;
	who_emit(b, wq, &ev);
}

/*
 * A finding the user must act on (verdict "alert"): printed at the end of
 * the run even without -v, kept by the store and the audit log as it is.
 */
static void emit_alert(struct broker *b, struct who_q *wq, const char *layer,
		       const char *subject, const char *detail, const char *told)
{
	struct event ev = {
		.kind = "audit", .verdict = "alert", .layer = layer, .subject = subject,
		.detail = detail, .told = told,
	};

	/* Held for its who: reacted to now all the same (broker_opts.alert_now). */
	if (b->alert_now && wq && wq->waiting) {
		ev.session = b->session;
		ev.t_ms = now_real_ms();
		b->alert_now(b->alert_ctx, &ev);
		ev.reacted = true;
	}
	who_emit(b, wq, &ev);
}

/* The tunnel scorer's word on a query or an answer: an alert the first time it fires. */
static void exfil_judged(struct broker *b, struct who_q *wq, bool fired, const char *parent,
			 char *why)
{
	char *told;

	if (!fired)
		return;
	told = dnsexfil_told(b->exfil);
	emit_alert(b, wq, NET_LAYER_DNS, parent, why, told);
	free(why);
	free(told);
}

/* The audit line for a flow: subject "tcp://addr:port". */
static void emit_flow_audit(struct broker *b, const struct flow *f, const char *layer,
			    const char *verdict, const char *detail)
{
	char addr[NET_ADDR_STRLEN], *subject;

	net_addr_format(&f->dst, addr);
	subject = flow_subject(f, addr);
	emit_audit(b, f->wq, layer, verdict, subject, detail);
	free(subject);
}

/* One "dns" event about name. */
static void emit_dns(struct broker *b, struct who_q *wq, const char *verdict, const char *layer,
		     const char *name, const char *detail, const char *addr, uint32_t ttl)
{
	struct event ev = {
		.kind = "dns", .verdict = verdict, .layer = layer, .subject = name,
		.detail = detail, .addr = addr, .host = name, .ttl = ttl,
	};

	who_emit(b, wq, &ev);
}

/* ---- output to boxy-net ------------------------------------------------------ */

static void broker_flush(struct helper *h);

/* The control socket has room again: write the queue. */
static void broker_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	broker_flush(w->data);
}

/* Write the queue until the socket is full; a descriptor rides on its frame's first byte. */
static void broker_flush(struct helper *h)
{
	int rc = h->fd < 0 ? 0 : outq_flush(&h->outq, h->fd);

	if (rc > 0) {
		ev_io_start(h->b->loop, &h->ww);
		return;
	}
	if (rc < 0) {
		broker_end(h->b, "boxy-net's control socket failed: %s", strerror(errno));
		return;
	}
	ev_io_stop(h->b->loop, &h->ww);
}

/* Queue one frame (header and payload, proto/msg.h's format), taking fd (-1: none). */
static void broker_send(struct helper *h, uint16_t type, const struct wbuf *w, int fd)
{
	if (h->fd < 0 || h->b->finishing) {
		if (fd >= 0)
			close(fd);
		return;
	}
	outq_push(&h->outq, type, w ? w->p : NULL, w ? w->len : 0, fd);
	if (h->outq.bytes > BROKER_OUTQ_MAX) {
		broker_end(h->b, "boxy-net stopped reading its control socket (%zu bytes queued)",
			   h->outq.bytes);
		return;
	}
	broker_flush(h);
}

/* NET_VERDICT for flow, with the connected socket when fd >= 0: a code and flags, no words. */
static void send_verdict(struct helper *h, uint32_t flow, uint8_t verdict, uint8_t flags, int fd)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, flow);
	wire_put_u8(&w, verdict);
	wire_put_u8(&w, flags);
	broker_send(h, NET_VERDICT, &w, fd);
	wbuf_free(&w);
}

/* NET_ANSWER for query: boxy-net builds the DNS response from these fields. */
static void send_answer(struct helper *h, uint32_t query, uint8_t rcode, uint32_t ttl,
			const struct net_addr *addrs, size_t n)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_u32(&w, query);
	wire_put_u8(&w, rcode);
	wire_put_u32(&w, ttl);
	wire_put_u32(&w, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		netproto_put_addr(&w, &addrs[i]);
	broker_send(h, NET_ANSWER, &w, -1);
	wbuf_free(&w);
}

/* ---- attribution ------------------------------------------------------------------ */

static void flow_refuse_finish(struct broker *b, struct flow *f);
static void query_send(struct broker *b, struct query *q);

/* The link that points at the question token (or at the NULL where it would go). */
static struct who_q **who_slot(struct broker *b, uint64_t token)
{
	struct who_q **pp = &b->who_hash[token % WHO_BUCKETS];

	while (*pp && (*pp)->token != token)
		pp = &(*pp)->hnext;
	return pp;
}

/* Free a question and whatever it still holds. */
static void who_free(struct who_q *wq)
{
	while (wq->held) {
		struct held_event *h = wq->held;

		wq->held = h->next;
		event_copy_free(&h->c);
		free(h);
	}
	event_copy_free(&wq->answer);
	free(wq);
}

/* Its flow or query is gone: a question still waiting stays, to be answered alone. */
static void who_release(struct who_q *wq)
{
	if (!wq)
		return;
	wq->owner = NULL;
	if (!wq->waiting)
		who_free(wq);
}

/* Make the timer fire by deadline at the latest (it may fire earlier: who_expired re-arms). */
static void who_timer_by(struct broker *b, uint64_t deadline)
{
	uint64_t now;

	if (ev_is_active(&b->who_t) && b->who_t_at <= deadline)
		return;
	now = now_mono_ms();
	ev_timer_stop(b->loop, &b->who_t);
	ev_timer_set(&b->who_t, deadline > now ? (double)(deadline - now) / 1000.0 : 0.0, 0.0);
	ev_timer_start(b->loop, &b->who_t);
	b->who_t_at = deadline;
}

/*
 * Set the timer to the earliest deadline of the waiting questions, or stop
 * it: a walk over all of them, so only when the timer fires. An answer or a
 * later deadline leaves the timer as it is (it fires early and comes here);
 * an earlier one moves it (who_timer_by). Walking on every answer cost 15 %
 * of the daemon's loop in short connections (perf), with a few dozen waiting.
 */
static void who_timer_arm(struct broker *b)
{
	uint64_t first = UINT64_MAX;

	ev_timer_stop(b->loop, &b->who_t);
	for (struct who_q *wq = b->who_first; wq; wq = wq->wnext)
		if (wq->deadline < first)
			first = wq->deadline;
	if (first != UINT64_MAX)
		who_timer_by(b, first);
}

/* Let wq wait up to ms from now (a permitted flow's events: attrib's record_hold_ms). */
static void who_extend(struct broker *b, struct who_q *wq, unsigned ms)
{
	uint64_t by = now_mono_ms() + ms;

	if (!wq || !wq->waiting || wq->deadline >= by)
		return;
	wq->deadline = by;
}

/* Make wq wait at most ms from now (a permitted name's answer: attrib's answer_hold_ms). */
static void who_shorten(struct broker *b, struct who_q *wq, unsigned ms)
{
	uint64_t by = now_mono_ms() + ms;

	if (!wq || !wq->waiting || wq->deadline <= by)
		return;
	wq->deadline = by;
	who_timer_by(b, by);
}

/*
 * Ask who made a flow or a query (its socket: proto src:sport → dst:dport);
 * NULL when attribution is off. A question that cannot be asked is
 * answered at once, "unknown".
 */
static struct who_q *who_ask(struct broker *b, enum who_owner kind, void *owner, uint8_t proto,
			     const struct net_addr *src, uint16_t sport,
			     const struct net_addr *dst, uint16_t dport)
{
	struct who_q *wq;

	if (!b->attrib.ask)
		return NULL;
	wq = xcalloc(1, sizeof(*wq));
	wq->token = ++b->who_seq;
	wq->owner_kind = kind;
	wq->owner = owner;
	wq->nl_conn = SIZE_MAX;
	wq->held_tail = &wq->held;
	if (!b->attrib.ask(b->attrib.ctx, wq->token, proto, src, sport, dst, dport)) {
		b->who_unknown++;
		return wq;
	}
	wq->waiting = true;
	wq->deadline = now_mono_ms() + b->attrib.hold_ms;
	*who_slot(b, wq->token) = wq;
	wq->wprev = b->who_last;
	if (b->who_last)
		b->who_last->wnext = wq;
	else
		b->who_first = wq;
	b->who_last = wq;
	b->nwho++;
	who_timer_by(b, wq->deadline);
	return wq;
}

/*
 * The answer is in (or the wait is over: who NULL or not found): the events
 * that waited go out naming who, in their order, the net-log row is named,
 * then what waited — a refused flow's verdict, a query's answer — is sent.
 * That comes last: a send that overflows ends the network (and frees the
 * flow and, through it, wq).
 */
static void who_resolve(struct broker *b, struct who_q *wq, const struct event_who *who)
{
	*who_slot(b, wq->token) = wq->hnext;
	wq->hnext = NULL;
	if (wq->wprev)
		wq->wprev->wnext = wq->wnext;
	else
		b->who_first = wq->wnext;
	if (wq->wnext)
		wq->wnext->wprev = wq->wprev;
	else
		b->who_last = wq->wprev;
	wq->wprev = wq->wnext = NULL;
	wq->waiting = false;
	b->nwho--;
	if (who && who->found)
		b->who_found++;
	else
		b->who_unknown++;
	if (who && who->found) {
		struct event just_who = { .who = who };

		event_copy_init(&wq->answer, &just_who);
	}
	while (wq->held) {
		struct held_event *h = wq->held;

		wq->held = h->next;
		h->c.ev.who = &wq->answer.who;
		event_emit(b->sink, &h->c.ev);
		event_copy_free(&h->c);
		free(h);
	}
	wq->held_tail = &wq->held;
	if (wq->nl_conn != SIZE_MAX)
		netlog_set_who(b->log, wq->nl_conn, &wq->answer.who);
	if (!wq->owner) {
		who_free(wq);
		return;
	}
	if (wq->owner_kind == WHO_FLOW) {
		struct flow *f = wq->owner;

		if (f->state == FLOW_REFUSING)
			flow_refuse_finish(b, f);
	} else {
		struct query *q = wq->owner;

		if (q->held)
			query_send(b, q);
	}
}

/* Waiting questions past their deadline: "unknown", and on. */
static void who_expired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct broker *b = w->data;
	uint64_t now = now_mono_ms();
	struct who_q *wq = b->who_first;

	(void)loop;
	(void)revents;
	while (wq) {
		struct who_q *next = wq->wnext;

		if (wq->deadline <= now) {
			/* Resolving may free others (a flow's end): start over from the first. */
			who_resolve(b, wq, NULL);
			wq = b->who_first;
			continue;
		}
		wq = next;
	}
	who_timer_arm(b);
}

void broker_attributed(struct broker *b, uint64_t token, const struct event_who *who)
{
	struct who_q *wq = *who_slot(b, token);

	if (!wq || !wq->waiting)
		return;         /* too late (answered "unknown" already), or never asked */
	who_resolve(b, wq, who);
	if (!b->nwho)
		ev_timer_stop(b->loop, &b->who_t);
}

size_t broker_attrib_waiting(const struct broker *b)
{
	return b->nwho;
}

/* Answer every question still waiting, "unknown" (the session's network ends). */
static void who_flush_all(struct broker *b)
{
	while (b->who_first)
		who_resolve(b, b->who_first, NULL);
	ev_timer_stop(b->loop, &b->who_t);
}

/* ---- flows ------------------------------------------------------------------------- */

/* The link that points at h's flow id (or at the NULL where it would go). */
static struct flow **flow_slot(struct helper *h, uint32_t id)
{
	struct flow **pp = &h->flows[id % FLOW_BUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

/* h's open flow with this id, or NULL. */
static struct flow *flow_find(struct helper *h, uint32_t id)
{
	return *flow_slot(h, id);
}

/* Stop a flow's watchers, close its upstream socket if still ours, free it. */
static void flow_free(struct flow *f)
{
	ev_timer_stop(f->b->loop, &f->dial_t);
	if (f->fd >= 0)
		close(f->fd);
	free(f->host);
	free(f->sni);
	free(f->exception);
	who_release(f->wq);
	free(f);
}

static void flow_dial(struct broker *b, struct flow *f);

/* Dial the flows waiting for a slot, as many as there are slots (none while frozen). */
static void dial_queue_run(struct broker *b)
{
	while (!b->dead && !b->frozen && b->dialq != NULL && b->ndials < DIALS_MAX) {
		struct flow *f = b->dialq;

		b->dialq = f->qnext;
		if (b->dialq == NULL)
			b->dialq_tail = &b->dialq;
		f->qnext = NULL;
		f->state = FLOW_NAME;   /* off the queue, not dialling yet: what flow_dial expects */
		flow_dial(b, f);
	}
}

/* A connect finished or was abandoned: dial the flows that were waiting for the slot. */
static void dial_slot_free(struct broker *b)
{
	b->ndials--;
	dial_queue_run(b);
}

/*
 * Take a flow out of the dial queue, or end its connect and give its slot
 * back; its state is FLOW_NAME after (neither): the caller says what it is.
 */
static void flow_unqueue(struct broker *b, struct flow *f)
{
	bool slot = f->state == FLOW_DIAL;

	if (f->state == FLOW_QUEUED) {
		struct flow **q = &b->dialq;

		while (*q != f)
			q = &(*q)->qnext;
		*q = f->qnext;
		if (b->dialq_tail == &f->qnext)
			b->dialq_tail = q;
		f->qnext = NULL;
	}
	if (slot) {
		ev_timer_stop(b->loop, &f->dial_t);
		if (f->fd >= 0) {
			epoll_ctl(b->dial_ep, EPOLL_CTL_DEL, f->fd, NULL);
			close(f->fd);
			f->fd = -1;
		}
	}
	f->state = FLOW_NAME;
	if (slot)
		dial_slot_free(b);
}

/* Unlink a flow from the table and free it. */
static void flow_remove(struct broker *b, struct flow *f)
{
	struct flow **pp = flow_slot(f->h, f->id);

	if (*pp == f) {
		*pp = f->next;
		b->nflows--;
	}
	if (f->state == FLOW_QUEUED || f->state == FLOW_DIAL)
		flow_unqueue(b, f);
	flow_free(f);
}

/* Milliseconds since the session's network started (net-log times). */
static uint64_t rel_ms(const struct broker *b)
{
	return now_mono_ms() - b->start_ms;
}

/* Add the flow's row to the net-log; returns the row for later byte counts. */
static size_t log_conn(struct broker *b, const struct flow *f, bool allowed, const char *reason)
{
	struct netlog_conn c = {
		.t_ms = rel_ms(b), .proto = f->proto, .allowed = allowed, .addr = f->dst,
		.port = f->dport, .host = f->host, .sni = f->sni, .reason = reason,
		.who = f->wq && !f->wq->waiting ? &f->wq->answer.who : NULL,
	};
	size_t row = netlog_add_conn(b->log, &c);

	/* Named once the answer comes. */
	if (f->wq && f->wq->waiting)
		f->wq->nl_conn = row;
	return row;
}

/* Was h's id refused recently? take: forget it (its FLOW_CLOSE came, or the id is reused). */
static bool refused_seen(struct helper *h, uint32_t id, bool take)
{
	for (size_t i = 0; i < h->nrefused; i++) {
		if (h->refused[i] != id)
			continue;
		if (take)
			h->refused[i] = h->refused[--h->nrefused];
		return true;
	}
	return false;
}

/* Remember h's refused id; when full, overwrite one slot in turn (the oldest, roughly). */
static void refused_add(struct helper *h, uint32_t id)
{
	if (h->nrefused < REFUSED_KEPT) {
		h->refused[h->nrefused++] = id;
		return;
	}
	h->refused[h->refused_next] = id;
	h->refused_next = (h->refused_next + 1) % REFUSED_KEPT;
}

/* Refuse a flow: event, net-log row, verdict, forget it. */
static void flow_refuse(struct broker *b, struct flow *f, const char *layer, const char *words)
{
	emit_flow_audit(b, f, layer, "deny", words);
	emit_flow(b, f, "deny", layer, words, 0, 0);
	log_conn(b, f, false, words);
	if (f->wq && f->wq->waiting) {
		/*
		 * The RST would make the sandbox's kernel drop the socket from its
		 * table at once, and the owner could no longer be found: the verdict
		 * waits for the answer (hold_ms at most; the decision is made).
		 */
		if (f->state == FLOW_DIAL || f->state == FLOW_QUEUED)
			flow_unqueue(b, f);
		f->state = FLOW_REFUSING;
		return;
	}
	flow_refuse_finish(b, f);
}

/* A refusal's end: forget the flow, answer boxy-net. */
static void flow_refuse_finish(struct broker *b, struct flow *f)
{
	uint32_t id = f->id;
	struct helper *h = f->h;

	flow_remove(b, f);
	/* boxy-net may still report the flow closed (no bytes): remember the id. */
	refused_add(h, id);
	/* Last: a send that overflows ends the network, which frees every flow. */
	send_verdict(h, id, NETV_REFUSED, 0, -1);
}

/* The upstream socket is connected: hand it over. */
static void flow_dialled(struct broker *b, struct flow *f)
{
	int fd = f->fd;
	bool slot = f->state == FLOW_DIAL;    /* a connect in progress, not an instant one */

	epoll_ctl(b->dial_ep, EPOLL_CTL_DEL, fd, NULL);
	ev_timer_stop(b->loop, &f->dial_t);
	f->fd = -1;
	f->state = FLOW_OPEN;
	/* Dialled: what still waits for who is the record alone, which can wait longer. */
	who_extend(b, f->wq, b->attrib.record_hold_ms);
	if (f->exception)
		emit_flow_audit(b, f, NET_LAYER_IP, "allow", f->exception);
	emit_flow(b, f, "allow", f->layer, f->exception, 0, 0);
	f->nl = log_conn(b, f, true, NULL);
	send_verdict(f->h, f->id, NETV_DIALLED, f->gate, fd);
	/* Last, and without f: a send that overflows ends the network and frees it. */
	if (slot)
		dial_slot_free(b);
}

/* The upstream connect failed: refuse the flow, saying why. */
static void flow_dial_failed(struct broker *b, struct flow *f, int errnum)
{
	char *words = xasprintf("upstream connect failed: %s", strerror(errnum));

	flow_refuse(b, f, "upstream", words);
	free(words);
}

/* The non-blocking connect finished: its result is in SO_ERROR. */
static void flow_dial_ready(struct flow *f)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		e = errno;
	if (e == 0)
		flow_dialled(f->b, f);
	else
		flow_dial_failed(f->b, f, e);
}

/* The dialling set is readable: the connects that finished, by flow id. */
static void dial_set_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct broker *b = w->data;
	struct epoll_event ev[64];
	int n = epoll_wait(b->dial_ep, ev, (int)ARRAY_SIZE(ev), 0);

	(void)loop;
	(void)revents;
	for (int i = 0; i < n && !b->dead; i++) {
		/* Gone (an earlier one ended the network) or no longer dialling: skip. */
		uint64_t key = ev[i].data.u64;
		struct flow *f = (key >> 32) < b->nhelpers ?
				 flow_find(b->helpers[key >> 32], (uint32_t)key) : NULL;

		if (f && f->state == FLOW_DIAL && f->fd >= 0)
			flow_dial_ready(f);
	}
}

/* The upstream did not answer within BROKER_DIAL_TIMEOUT. */
static void flow_dial_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct flow *f = w->data;

	(void)loop;
	(void)revents;
	flow_dial_failed(f->b, f, ETIMEDOUT);
}

/*
 * Dial the flow's destination from the daemon's own namespace. TCP connects
 * are non-blocking (the verdict waits for the connect, not the loop); UDP
 * sockets are connected at once, so boxy-net can only send to the address
 * policy allowed.
 */
static void flow_dial(struct broker *b, struct flow *f)
{
	struct sockaddr_storage ss;
	socklen_t slen;
	int type = f->proto == NET_PROTO_TCP ? SOCK_STREAM : SOCK_DGRAM;

	memset(&ss, 0, sizeof(ss));
	if (f->dst.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(f->dport);
		memcpy(&sin->sin_addr, f->dst.a, 4);
		slen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(f->dport);
		memcpy(&sin6->sin6_addr, f->dst.a, 16);
		slen = sizeof(*sin6);
	}
	if (f->proto == NET_PROTO_TCP && b->ndials >= DIALS_MAX) {
		f->state = FLOW_QUEUED;
		f->qnext = NULL;
		*b->dialq_tail = f;
		b->dialq_tail = &f->qnext;
		return;
	}
	f->fd = socket(f->dst.family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->fd < 0) {
		flow_dial_failed(b, f, errno);
		return;
	}
	if (connect(f->fd, (struct sockaddr *)&ss, slen) == 0) {
		flow_dialled(b, f);
		return;
	}
	if (errno != EINPROGRESS) {
		flow_dial_failed(b, f, errno);
		return;
	}
	{
		/* Which boxy-net's flow, and its id there. */
		struct epoll_event e = { .events = EPOLLOUT,
					 .data.u64 = (uint64_t)f->h->idx << 32 | f->id };

		if (epoll_ctl(b->dial_ep, EPOLL_CTL_ADD, f->fd, &e) < 0) {
			flow_dial_failed(b, f, errno);
			return;
		}
	}
	f->state = FLOW_DIAL;
	b->ndials++;
	ev_timer_set(&f->dial_t, BROKER_DIAL_TIMEOUT, 0.0);
	ev_timer_start(b->loop, &f->dial_t);
}

/* Ask policy about a flow and act on the answer. */
static void flow_decide(struct broker *b, struct flow *f, enum net_name_kind kind,
			const char *name, bool ech)
{
	struct net_flow nf = {
		.proto = f->proto, .dst = f->dst, .port = f->dport,
		.name_kind = kind, .name = name, .ech = ech,
	};
	struct net_verdict v;

	net_policy_decide(&b->policy, b->binds, &nf, now_mono_ms(), &v);
	if (!v.allow) {
		flow_refuse(b, f, v.layer, net_verdict_words(&v));
		return;
	}
	if (v.addr.exception && !f->exception)
		f->exception = xasprintf("range exception: %s", v.addr.exception);
	if (v.need_name) {
		f->state = FLOW_NAME;
		send_verdict(f->h, f->id, NETV_NEED_NAME, 0, -1);
		return;
	}
	free(f->host);
	f->host = v.host ? xstrdup(v.host) : NULL;
	if (!f->host && b->policy.mode == NET_PUBLIC) {
		/* Public mode decides on the address alone, but the record still
		 * names it: the name the sandbox resolved it from, if it did — and
		 * only if that is one name. With two (a CDN address), which one
		 * the payload resolved first says nothing about where the flow
		 * goes; its SNI or Host may name it later (on_flow_seen). */
		const char *names[2];

		if (net_bind_names(b->binds, &f->dst, now_mono_ms(), names, 2) == 1)
			f->host = xstrdup(names[0]);
	}
	f->layer = v.layer;
	/*
	 * Allowlist mode gates every request of a plain-HTTP flow (Host and
	 * port must name what the flow was allowed for; rules where they cover
	 * the host), and inspects the TLS of a flow whose host rules restrict
	 * by method or path (net/http-gate.h, doc/http-rules.md).
	 */
	if (b->policy.mode == NET_ALLOWLIST && kind == NET_NAME_HOST && f->sni)
		f->gate = NETVF_GATE;
	else if (b->policy.mode == NET_ALLOWLIST && kind == NET_NAME_SNI && f->sni &&
		 http_rules_inspect_host(&b->rules, f->sni))
		f->gate = NETVF_GATE | NETVF_TLS;
	if (kind == NET_NAME_SNI || kind == NET_NAME_HOST)
		emit_flow(b, f, "sni", NET_LAYER_SNI, kind == NET_NAME_SNI ? "TLS server name" :
			  "HTTP Host", 0, 0);
	flow_dial(b, f);
}

/* ---- the session's network ends ------------------------------------------------ */

/*
 * Kill and reap boxy-net. Through its pidfd: libev's SIGCHLD handler reaps
 * any child of the daemon, so by now the pid may have been reaped and even
 * reused by a sandbox; the pidfd still means this process and no other.
 */
static void helper_stop(struct helper *h)
{
	siginfo_t si;

	if (h->pid > 0 && ev_is_active(&h->child_w))
		ev_child_stop(h->b->loop, &h->child_w);
	if (h->pidfd >= 0) {
		if (h->pid > 0 && syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0) == 0) {
			while (waitid(P_PIDFD, (id_t)h->pidfd, &si, WEXITED) < 0 && errno == EINTR)
				;
		}
		close(h->pidfd);
		h->pidfd = -1;
	}
	h->pid = -1;
}

/*
 * boxy-net after its session, when it need not be waited for. Its exit is
 * slow: the TAP it holds is the sandbox's last reference to tap0, and closing
 * it unregisters the device, which waits for RCU grace periods (10 ms and
 * more measured, the pidfd turning readable only after). The daemon used to
 * wait for it in its loop, between the payload's exit and `boxy run`
 * returning, and stalled every other session meanwhile. Now the grace runs
 * here: the pidfd watched, SIGKILL when HELPER_GRACE_MS pass first. (libev's
 * SIGCHLD handler reaps it, as every child of the daemon.)
 */
struct helper_reaper {
	ev_io exited;
	ev_timer grace;
	int pidfd;
};

/* boxy-net exited: nothing left to hold. */
static void reaper_exited(struct ev_loop *loop, ev_io *w, int revents)
{
	struct helper_reaper *r = w->data;

	(void)revents;
	ev_io_stop(loop, &r->exited);
	ev_timer_stop(loop, &r->grace);
	close(r->pidfd);
	free(r);
}

/* The grace is over: kill it (reaper_exited follows at its exit). */
static void reaper_grace(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct helper_reaper *r = w->data;

	(void)loop;
	(void)revents;
	syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
}

/* Hand boxy-net's pidfd to a reaper on the loop; the broker forgets the process. */
static void helper_reap_later(struct helper *h)
{
	struct helper_reaper *r = xcalloc(1, sizeof(*r));

	if (ev_is_active(&h->child_w))
		ev_child_stop(h->b->loop, &h->child_w);
	r->pidfd = h->pidfd;
	ev_io_init(&r->exited, reaper_exited, r->pidfd, EV_READ);
	ev_timer_init(&r->grace, reaper_grace, HELPER_GRACE_MS / 1000.0, 0.);
	r->exited.data = r->grace.data = r;
	ev_io_start(h->b->loop, &r->exited);
	ev_timer_start(h->b->loop, &r->grace);
	h->pidfd = -1;
	h->pid = -1;
}

/* Close every control socket, drop what was queued for them, free every flow. */
static void broker_disconnect(struct broker *b)
{
	for (size_t k = 0; k < b->nhelpers; k++) {
		struct helper *h = b->helpers[k];

		if (h->fd >= 0) {
			ev_io_stop(b->loop, &h->rw);
			ev_io_stop(b->loop, &h->ww);
			close(h->fd);
			h->fd = -1;
		}
		outq_clear(&h->outq);
		for (size_t i = 0; i < FLOW_BUCKETS; i++) {
			while (h->flows[i]) {
				struct flow *f = h->flows[i];

				h->flows[i] = f->next;
				flow_free(f);
			}
		}
	}
	b->nflows = 0;
	b->ndials = 0;
	b->dialq = NULL;
	b->dialq_tail = &b->dialq;
}

/* Stop talking to boxy-net, close every flow, reap it; record why. */
static void broker_end(struct broker *b, const char *fmt, ...)
{
	struct event ev = { .kind = "audit", .verdict = "degraded", .layer = "net",
			    .subject = "boxy-net" };
	va_list ap;
	char *why;

	if (b->dead)
		return;
	va_start(ap, fmt);
	why = xvasprintf(fmt, ap);
	va_end(ap);
	b->dead = true;
	b->failure = xasprintf("%s; the session's network was ended", why);
	free(why);
	ev.detail = b->failure;
	emit(b, &ev);
	broker_disconnect(b);
	/* Whatever they are doing now, none is to be trusted with the TAP: one
	 * boxy-net broke the rules, and a session's network ends whole. */
	for (size_t k = 0; k < b->nhelpers; k++)
		helper_stop(b->helpers[k]);
}

/* ---- messages from boxy-net ------------------------------------------------------ */

/*
 * NET_TLS_CA: the session CA's certificate and key, to one boxy-net, before
 * its lockdown. Each boxy-net of the session (one per queue of tap0) gets
 * them; once the last of them has (tls_ca_for), the daemon forgets the key:
 * the encoding is wiped, the frame's copy is wiped once written
 * (outq_push_secret), and OpenSSL clears the key's own memory when it is
 * freed. From then on it is in boxy-net's memory only, which nothing but
 * boxy-net can read (not dumpable).
 */
static void send_tls_ca(struct helper *h)
{
	struct broker *b = h->b;
	uint8_t *cert, *key;
	size_t cn, kn;
	char *err = NULL;
	struct wbuf w;

	if (tls_ca_encode(b->tls_ca, &cert, &cn, &key, &kn, &err) < 0) {
		broker_end(b, "the session CA: %s", err);
		free(err);
		return;
	}
	wbuf_init(&w);
	wire_put_bytes(&w, cert, cn);
	wire_put_bytes(&w, key, kn);
	tls_wipe_free(key, kn);
	free(cert);
	if (h->fd >= 0 && !b->finishing) {
		outq_push_secret(&h->outq, NET_TLS_CA, w.p, w.len);
		broker_flush(h);
	}
	OPENSSL_cleanse(w.p, w.len);
	wbuf_free(&w);
	/* broker_flush may have ended the network, which frees the CA. */
	if (b->tls_ca && ++b->tls_ca_sent >= b->tls_ca_for) {
		tls_ca_clear(b->tls_ca);
		free(b->tls_ca);
		b->tls_ca = NULL;
	}
}

/* NET_HELLO: check the version, answer with the mode (NET_CONFIG). */
static void on_hello(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t version = wire_get_u32(r);
	struct wbuf w;

	if (!wire_done(r)) {
		broker_end(b, "malformed NET_HELLO from boxy-net");
		return;
	}
	if (version != NETPROTO_VERSION) {
		broker_end(b, "boxy-net speaks protocol %u, the daemon %u", version,
			   NETPROTO_VERSION);
		return;
	}
	h->hello = true;
	{
		struct net_config cfg = {
			.mode = (uint8_t)b->policy.mode,
			.flags = (b->pcap ? NETCFG_PCAP : 0) |
				 (b->policy.mode == NET_PUBLIC ? NETCFG_OBSERVE : 0) |
				 (b->rules.n ? NETCFG_RULES : 0) | (b->tls_ca ? NETCFG_TLS : 0),
			/* --pcap-max; 0 when unset, which boxy-net reads as its 1 GiB default */
			.pcap_max = b->pcap && b->rs ? b->rs->pcap_max : 0,
			.tokens = b->tw_tokens, .ntokens = b->tw_n,
		};

		wbuf_init(&w);
		netproto_config_encode(&w, &cfg);
	}
	broker_send(h, NET_CONFIG, &w, -1);
	wbuf_free(&w);
	if (b->rules.n) {
		/* The texts the run-spec holds; boxy-net reads them with the same parser. */
		wbuf_init(&w);
		wire_put_u32(&w, (uint32_t)b->rs->nhttp_rules);
		for (size_t i = 0; i < b->rs->nhttp_rules; i++)
			wire_put_str(&w, b->rs->http_rules[i]);
		broker_send(h, NET_HTTP_RULES, &w, -1);
		wbuf_free(&w);
	}
	if (b->tls_ca)
		send_tls_ca(h);
}

/* NET_FLOW_OPEN: a SYN (or a first UDP datagram) to decide on. */
static void on_flow_open(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	uint8_t proto = wire_get_u8(r);
	struct net_addr dst, src;
	uint16_t dport, sport;
	bool ok_dst = netproto_get_addr(r, &dst);
	struct flow *f;

	dport = wire_get_u16(r);
	ok_dst = netproto_get_addr(r, &src) && ok_dst;
	sport = wire_get_u16(r);
	if (!wire_done(r) || !ok_dst) {
		broker_end(b, "malformed NET_FLOW_OPEN from boxy-net");
		return;
	}
	if (proto != NET_PROTO_TCP && proto != NET_PROTO_UDP) {
		broker_end(b, "NET_FLOW_OPEN with protocol %u from boxy-net", proto);
		return;
	}
	if (dst.family != src.family || sport == 0) {
		broker_end(b, "NET_FLOW_OPEN with an impossible source from boxy-net");
		return;
	}
	if (flow_find(h, id)) {
		broker_end(b, "NET_FLOW_OPEN reuses open flow %u", id);
		return;
	}
	refused_seen(h, id, true);     /* a refused id may be used again */
	f = xcalloc(1, sizeof(*f));
	f->b = b;
	f->h = h;
	f->id = id;
	f->proto = proto;
	f->dst = dst;
	f->src = src;
	f->dport = dport;
	f->sport = sport;
	f->fd = -1;
	f->layer = NET_LAYER_IP;
	f->seq = ++b->flow_seq;
	ev_timer_init(&f->dial_t, flow_dial_timeout, BROKER_DIAL_TIMEOUT, 0.0);
	f->dial_t.data = f;
	*flow_slot(h, id) = f;
	b->nflows++;
	if (b->nflows > BROKER_MAX_FLOWS) {
		/* The payload's doing, not boxy-net's: refuse this one, keep going. */
		flow_refuse(b, f, NET_LAYER_IP, "too many open connections in this session");
		return;
	}
	/* Who: asked now, while the socket is certainly there; the decision does not wait. */
	f->wq = who_ask(b, WHO_FLOW, f, proto, &src, sport, &dst, dport);
	flow_decide(b, f, proto == NET_PROTO_TCP ? NET_NAME_PENDING : NET_NAME_NONE, NULL, false);
}

/* Printable ASCII without spaces: what any name boxy-net may send is made of. */
static bool name_chars_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* NET_FLOW_NAME: the SNI or Host boxy-net read, for the second decision. */
static void on_flow_name(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	uint8_t kind = wire_get_u8(r), ech = wire_get_u8(r);
	char *name = wire_get_str(r, NETPROTO_MAX_NAME), norm[DNS_NAME_BUF];
	enum net_name_kind nk;
	struct flow *f;
	const char *use = NULL;

	if (!wire_done(r) || kind == NET_NAME_PENDING || kind > NET_NAME_WIRE_MAX || ech > 1 ||
	    (name && !name_chars_ok(name))) {
		broker_end(b, "malformed NET_FLOW_NAME from boxy-net");
		goto out;
	}
	f = flow_find(h, id);
	if (!f || f->state != FLOW_NAME) {
		broker_end(b, "NET_FLOW_NAME for flow %u, which is not waiting for a name", id);
		goto out;
	}
	if ((kind == NET_NAME_NONE || kind == NET_NAME_MALFORMED) && ((name && name[0]) || ech)) {
		broker_end(b, "NET_FLOW_NAME without a name carries one");
		goto out;
	}
	/* TLS without server_name arrives as SNI with "": use stays NULL and the
	 * policy refuses it as no-SNI (or as ECH when ECH was offered). */
	nk = (enum net_name_kind)kind;
	if (name && name[0]) {
		free(f->sni);
		f->sni = xstrdup(name);
		/* boxy-net sends validated lower-case names; anything else is refused
		 * as malformed (an IPv6 literal Host, say), never trusted. */
		if (dns_name_normalize(name, strlen(name), norm) == 0 && strcmp(norm, name) == 0)
			use = name;
		else
			nk = NET_NAME_MALFORMED;
	}
	flow_decide(b, f, nk, use, ech != 0);
out:
	free(name);
}

/*
 * NET_FLOW_SEEN, public mode: the SNI or Host an open flow's first bytes
 * carried. Recorded only (the flow was allowed on its address): the name
 * is what the client claimed, and it becomes the flow's host only when the
 * address was resolved from that very name.
 */
static void on_flow_seen(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	uint8_t kind = wire_get_u8(r);
	char *name = wire_get_str(r, NETPROTO_MAX_NAME), norm[DNS_NAME_BUF];
	struct flow *f;

	if (!wire_done(r) || (kind != NET_NAME_SNI && kind != NET_NAME_HOST) || !name ||
	    !name[0] || !name_chars_ok(name)) {
		broker_end(b, "malformed NET_FLOW_SEEN from boxy-net");
		goto out;
	}
	if (b->policy.mode != NET_PUBLIC) {
		broker_end(b, "NET_FLOW_SEEN outside public mode");
		goto out;
	}
	f = flow_find(h, id);
	if (!f || f->state != FLOW_OPEN || f->sni) {
		broker_end(b, "NET_FLOW_SEEN for flow %u, which is not open or was named", id);
		goto out;
	}
	/* An address literal in Host, say: not a name to record as one. A dotted
	 * quad is a valid run of labels, so also refuse an all-digit last label
	 * (no top-level domain is one). */
	if (dns_name_normalize(name, strlen(name), norm) < 0 || strcmp(norm, name) != 0)
		goto out;
	{
		const char *last = strrchr(name, '.');

		last = last ? last + 1 : name;
		if (strspn(last, "0123456789") == strlen(last))
			goto out;
	}
	f->sni = xstrdup(name);
	if (net_bind_has(b->binds, &f->dst, name, now_mono_ms())) {
		free(f->host);
		f->host = xstrdup(name);
		emit_flow(b, f, "sni", NET_LAYER_SNI, kind == NET_NAME_SNI ?
			  "TLS server name (recorded; public mode)" :
			  "HTTP Host (recorded; public mode)", 0, 0);
	} else {
		/*
		 * Any client can claim any name: one the sandbox never resolved to
		 * this address is shown as a claim, with where the flow really went,
		 * so a line never passes a payload's "registry.npmjs.org" off as
		 * the destination.
		 */
		char a[NET_ADDR_STRLEN], *words;
		bool v6;

		net_addr_format(&f->dst, a);
		v6 = strchr(a, ':') != NULL;
		words = xasprintf("%s claimed by the client, sent to %s%s%s:%u, an address not "
				  "resolved from it (recorded; public mode)",
				  kind == NET_NAME_SNI ? "TLS server name" : "HTTP Host",
				  v6 ? "[" : "", a, v6 ? "]" : "", f->dport);
		emit_flow(b, f, "sni", NET_LAYER_SNI, words, 0, 0);
		free(words);
	}
	netlog_set_names(b->log, f->nl, f->host, f->sni);
out:
	free(name);
}

/* A method as boxy-net may report it: 1..32 tchars. */
static bool method_ok(const char *m)
{
	size_t n = strlen(m);

	if (n == 0 || n > HTTP_RULE_METHOD_MAX)
		return false;
	for (; *m; m++)
		if (!(((*m | 0x20) >= 'a' && (*m | 0x20) <= 'z') || (*m >= '0' && *m <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *m)))
			return false;
	return true;
}

/* Visible ASCII (0x21..0x7e) only, or also space when spaces: what a target or words hold. */
static bool visible_ok(const char *s, bool spaces)
{
	for (; *s; s++)
		if (!(((unsigned char)*s > 0x20 && (unsigned char)*s < 0x7f) || (spaces && *s == ' ')))
			return false;
	return true;
}

/* A request's host as the gate reports it: a lower-case name, or an address literal. */
static bool req_host_ok(const char *h)
{
	char norm[DNS_NAME_BUF];
	struct net_addr a;

	if (!h[0])
		return true;
	if (net_addr_parse(h, &a) == 0)
		return true;
	return dns_name_normalize(h, strlen(h), norm) == 0 && strcmp(norm, h) == 0;
}

/*
 * The record of one request (events, audit line, net-log): subject
 * "GET api.test/v2/x", the words, and for a refusal the rule that would
 * allow it, which the audit line carries.
 */
static void emit_request(struct broker *b, const struct flow *f, uint32_t seq,
			 enum http_deny d, size_t rule, const char *method, const char *host,
			 uint16_t port, const char *path, const char *query, const char *why)
{
	char addr[NET_ADDR_STRLEN], *subject, *detail, *audit, *fix = NULL;
	const char *rule_text = rule != HTTP_RULE_NONE ? b->rs->http_rules[rule] : NULL;
	struct event ev = { 0 };

	net_addr_format(&f->dst, addr);
	{
		/* The store writes the same subject from its columns (REQUEST_SUBJECT). */
		uint16_t ep = port ? port : f->dport;
		const char *who = host[0] ? host : f->sni ? f->sni : addr;
		char ports[8] = "";

		if (ep != 80 && ep != 443)
			snprintf(ports, sizeof(ports), ":%u", ep);
		subject = xasprintf("%s %s%s%s", method[0] ? method : "HTTP", who, ports, path);
	}
	if (d == HTTP_DENY_MALFORMED)
		detail = xasprintf("%s: %s", http_deny_words(d), why);
	else if (d != HTTP_ALLOWED)
		detail = xstrdup(http_deny_words(d));
	else if (rule_text)
		detail = xasprintf("rule %zu: %s", rule + 1, rule_text);
	else
		detail = xasprintf("%s: no --allow-http rule covers it", host);
	if (d != HTTP_DENY_MALFORMED)
		fix = http_rule_suggest(d, method, host, path);
	ev.kind = "http";
	ev.verdict = d == HTTP_ALLOWED ? "allow" : "deny";
	ev.layer = NET_LAYER_HTTP;
	ev.subject = subject;
	ev.detail = detail;
	ev.addr = addr;
	ev.port = port ? port : f->dport;
	ev.host = host[0] ? host : f->sni ? f->sni : NULL;
	ev.sni = f->sni;
	ev.flow = f->seq;
	ev.method = method[0] ? method : NULL;
	ev.path = d == HTTP_DENY_MALFORMED ? NULL : path;
	ev.query = query[0] ? query : NULL;
	ev.seq = seq;
	ev.rule = rule != HTTP_RULE_NONE ? (int32_t)rule : -1;
	ev.rule_text = rule_text;
	who_emit(b, f->wq, &ev);
	/* The audit line: every request, the refusal with the rule that would allow it. */
	audit = fix ? xasprintf("%s; allow it with --allow-http '%s'", detail, fix) : NULL;
	ev.kind = "audit";
	ev.mirror = true;
	ev.detail = audit ? audit : detail;
	who_emit(b, f->wq, &ev);
	{
		struct netlog_request nr = {
			.t_ms = rel_ms(b), .seq = seq, .conn = f->nl, .allowed = d == HTTP_ALLOWED,
			.method = method, .host = host, .port = port, .path = path, .query = query,
			.reason = d == HTTP_ALLOWED ? NULL : detail, .rule = ev.rule,
		};

		netlog_add_request(b->log, &nr);
	}
	free(subject);
	free(detail);
	free(audit);
	free(fix);
}

/*
 * NET_HTTP_REQUEST: one request a gate in boxy-net decided. Every field is
 * checked, and so is the decision itself: the broker decides the request
 * again with the same rules (policy/http-rules.h) and a boxy-net that says
 * otherwise is lying. Each boxy-net numbers its requests 1, 2, …; the
 * record numbers them over the session (a session has one boxy-net per queue
 * of tap0). Nothing may follow a refusal on its flow (the gate ends the
 * connection), but another HTTP/2 stream (a refused stream ends alone).
 */
static void on_http_request(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r), seq = wire_get_u32(r);
	uint8_t deny = wire_get_u8(r);
	uint16_t rule = wire_get_u16(r);
	uint8_t flags = wire_get_u8(r);
	char *method = wire_get_str(r, HTTP_RULE_METHOD_MAX);
	char *host = wire_get_str(r, NETPROTO_MAX_NAME);
	uint16_t port = wire_get_u16(r);
	char *path = wire_get_str(r, HTTP_HEAD_MAX);
	char *query = wire_get_str(r, NETPROTO_QUERY_MAX);
	char *why = wire_get_str(r, NETPROTO_WHY_MAX);
	struct flow *f;
	bool malformed = deny == HTTP_DENY_MALFORMED;

	if (!wire_done(r) || !method || !host || !path || !query || !why ||
	    deny >= HTTP_DENY_COUNT || (rule != HTTP_RULE_NONE && rule >= b->rules.n) ||
	    (flags & ~HTTPREQ_FLAGS) || ((flags & HTTPREQ_H2) && !(flags & HTTPREQ_TLS)) ||
	    (malformed ? (method[0] || host[0] || path[0] || query[0] || port || !why[0] ||
			  rule != HTTP_RULE_NONE || !visible_ok(why, true)) :
	     (!method_ok(method) || why[0] || !req_host_ok(host) || !visible_ok(path, false) ||
	      !visible_ok(query, false)))) {
		broker_end(b, "malformed NET_HTTP_REQUEST from boxy-net");
		goto out;
	}
	f = flow_find(h, id);
	if (!f || f->state != FLOW_OPEN || !f->gate ||
	    (f->req_refused && !(flags & HTTPREQ_H2)) ||
	    ((flags & HTTPREQ_TLS) != 0) != ((f->gate & NETVF_TLS) != 0)) {
		broker_end(b, "NET_HTTP_REQUEST for flow %u, which is not gated or was refused", id);
		goto out;
	}
	if (seq != h->http_seq + 1) {
		broker_end(b, "NET_HTTP_REQUEST numbered %u after %u", seq, h->http_seq);
		goto out;
	}
	if (!malformed) {
		struct http_bound bound = {
			.host = f->sni, .port = f->dport,
			.default_port = (f->gate & NETVF_TLS) ? 443 : 80,
		};
		struct http_request q = {
			.method = method, .host = host[0] ? host : NULL, .port = port, .path = path,
			.first = f->nreq == 0, .upgrade = (flags & HTTPREQ_UPGRADE) != 0,
			.has_body = (flags & HTTPREQ_BODY) != 0,
		};
		size_t again;

		if (http_decide(&b->rules, &bound, &q, &again) != deny ||
		    (again == HTTP_RULE_NONE ? HTTP_RULE_NONE : again) != rule) {
			broker_end(b, "NET_HTTP_REQUEST %u: boxy-net's decision is not the policy's",
				   seq);
			goto out;
		}
	}
	h->http_seq = seq;
	f->nreq++;
	if (deny != HTTP_ALLOWED)
		f->req_refused = true;
	emit_request(b, f, ++b->http_seq, (enum http_deny)deny, rule, method, host, port, path, query,
		     why);
out:
	free(method);
	free(host);
	free(path);
	free(query);
	free(why);
}

/* NET_FLOW_STATS and NET_FLOW_CLOSE: counters as events, and the end of a flow. */
static void on_flow_bytes(struct helper *h, struct rbuf *r, bool close_it)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	uint64_t up = wire_get_u64(r), down = wire_get_u64(r);
	struct flow *f;

	if (!wire_done(r)) {
		broker_end(b, "malformed %s from boxy-net", close_it ? "NET_FLOW_CLOSE" :
			   "NET_FLOW_STATS");
		return;
	}
	f = flow_find(h, id);
	if (!f && close_it && !up && !down && refused_seen(h, id, true))
		return;         /* boxy-net closing what the broker refused: nothing to count */
	if (f && f->state == FLOW_REFUSING && close_it && !up && !down) {
		/* It gave up before its refusal was sent: nothing to send now (its
		 * events still wait for their answer, which it leaves behind). */
		flow_remove(b, f);
		return;
	}
	if (!f || (!close_it && f->state != FLOW_OPEN)) {
		broker_end(b, "%s for flow %u, which is not open",
			   close_it ? "NET_FLOW_CLOSE" : "NET_FLOW_STATS", id);
		return;
	}
	if (f->state != FLOW_OPEN) {
		/* The payload went away before the flow was dialled or named. */
		if (up || down) {
			broker_end(b, "NET_FLOW_CLOSE counts bytes on flow %u, never connected", id);
			return;
		}
		emit_flow(b, f, "close", f->layer, f->state == FLOW_NAME ?
			  "closed before naming a host" : "closed while dialling", 0, 0);
		flow_remove(b, f);
		return;
	}
	if (up < f->up || down < f->down) {
		broker_end(b, "byte counters of flow %u went backwards", id);
		return;
	}
	if (close_it || up != f->up || down != f->down) {
		char *words = close_it ? xasprintf("up %llu down %llu", (unsigned long long)up,
						   (unsigned long long)down) : NULL;

		/* Events carry the increase: the bus adds them up per destination. */
		emit_flow(b, f, close_it ? "close" : "bytes", f->layer, words, up - f->up,
			  down - f->down);
		free(words);
		netlog_set_bytes(b->log, f->nl, up, down);
		f->up = up;
		f->down = down;
	}
	if (close_it)
		flow_remove(b, f);
}

/* The link that points at q in the list of queries not answered yet. */
static struct query **query_slot(struct broker *b, struct query *q)
{
	struct query **pp = &b->queries;

	while (*pp && *pp != q)
		pp = &(*pp)->next;
	return pp;
}

/* "A", "AAAA": the query type as events name it. */
static const char *qtype_name(uint16_t qtype)
{
	return qtype == DNS_TYPE_AAAA ? "AAAA" : "A";
}

/* h's query, in the list until its answer is sent. */
static struct query *query_new(struct helper *h, uint32_t id, const char *name, uint16_t qtype)
{
	struct broker *b = h->b;
	struct query *q = xcalloc(1, sizeof(*q));

	q->b = b;
	q->h = h;
	q->id = id;
	q->qtype = qtype;
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->next = b->queries;
	b->queries = q;
	b->nqueries++;
	return q;
}

/* Unlink and free a query (a lookup still in flight is the resolver's to drop first). */
static void query_free(struct broker *b, struct query *q)
{
	*query_slot(b, q) = q->next;
	b->nqueries--;
	if (q->upstream)
		b->nlookups--;
	who_release(q->wq);
	free(q);
}

/* Send the query's answer (its net-log row first) and forget the query. */
static void query_send(struct broker *b, struct query *q)
{
	char type[16];
	uint32_t id = q->id;
	struct helper *h = q->h;

	if (q->qtype == DNS_TYPE_A || q->qtype == DNS_TYPE_AAAA)
		snprintf(type, sizeof(type), "%s", qtype_name(q->qtype));
	else
		snprintf(type, sizeof(type), "TYPE%u", q->qtype);
	netlog_add_query(b->log, rel_ms(b), q->name[0] ? q->name : ".", type, !q->refused,
			 q->wq ? &q->wq->answer.who : NULL);
	if (q->held && !q->refused) {
		b->held_answers++;
		b->held_answer_ms += now_mono_ms() - q->held_at;
	}
	{
		uint8_t rcode = q->rcode;
		uint32_t ttl = q->ttl;
		struct net_addr addrs[DNS_ANSWER_MAX];
		size_t n = q->naddrs;

		if (n)
			memcpy(addrs, q->addrs, n * sizeof(*addrs));
		query_free(b, q);
		/* Last: a send that overflows ends the network. */
		send_answer(h, id, rcode, ttl, addrs, n);
	}
}

/*
 * Answer a query with NET_ANSWER's fields: now, or — while who asked is
 * still being looked for — once that is known (the client closes its socket
 * when it has its answer, and the socket is how its owner is found).
 */
static void query_answer(struct broker *b, struct query *q, bool refused, int rcode,
			 uint32_t ttl, const struct net_addr *addrs, size_t n)
{
	q->refused = refused;
	q->rcode = (uint8_t)rcode;
	q->ttl = ttl;
	q->naddrs = n > DNS_ANSWER_MAX ? DNS_ANSWER_MAX : n;
	if (q->naddrs)          /* a refusal has none, and no array: memcpy(NULL) is undefined */
		memcpy(q->addrs, addrs, q->naddrs * sizeof(*addrs));
	if (q->wq && q->wq->waiting) {
		q->held = true;
		q->held_at = now_mono_ms();
		if (!refused)
			who_shorten(b, q->wq, b->attrib.answer_hold_ms);
		return;
	}
	query_send(b, q);
}

/*
 * An answer for a permitted name, fresh from upstream or from the cache:
 * filter, bind, record, answer. The same path for both, so a cached answer
 * is judged exactly as the one it copies.
 */
static void answer_deliver(struct broker *b, struct query *q, int rcode,
			   const struct net_addr *addrs, const uint32_t *ttls, size_t n, bool cached)
{
	struct net_addr kept[DNS_ANSWER_MAX];
	uint32_t kttl[DNS_ANSWER_MAX], ttl = NET_BIND_TTL_MAX_S;
	struct net_addr_class dropped[8];
	size_t ndropped = 0, nk;
	uint64_t now = now_mono_ms();
	const char *cached_words = cached ? " (cached)" : "", *name = q->name;
	uint16_t qtype = q->qtype;

	n = n > DNS_ANSWER_MAX ? DNS_ANSWER_MAX : n;
	if (n) {        /* both callers pass arrays, but an answer of none needs none */
		memcpy(kept, addrs, n * sizeof(*addrs));
		memcpy(kttl, ttls, n * sizeof(*ttls));
	}
	nk = net_policy_filter_addrs(&b->policy, kept, kttl, n, dropped, ARRAY_SIZE(dropped),
				     &ndropped);
	for (size_t i = 0; i < ndropped && i < ARRAY_SIZE(dropped); i++) {
		char a[NET_ADDR_STRLEN], *words;

		/*
		 * judged may be the decoded IPv4. Say what happened — the name the
		 * sandbox asked for answered an address boxy refuses — and how to
		 * allow it; whether that is rebinding or a host on a documentation
		 * range is for the user to judge, not for the wording to assume.
		 */
		net_addr_format(&dropped[i].judged, a);
		/* No hint for an address of the user's own machine or network: the
		 * name that answered may be the payload's own (net_range_fix_ok). */
		if (net_range_fix_ok(dropped[i].range))
			words = xasprintf("answered with %s, in the %s range: dropped (to allow it: "
					  "--allow-cidr %s/%u)",
					  a, net_range_words(dropped[i].range), a,
					  dropped[i].judged.family == AF_INET6 ? 128 : 32);
		else
			words = xasprintf("answered with %s, in the %s range: dropped", a,
					  net_range_words(dropped[i].range));
		emit_audit_name(b, q->wq, NET_LAYER_IP, name, words, a);
		free(words);
	}
	for (size_t i = 0; i < nk; i++) {
		char a[NET_ADDR_STRLEN], *detail;

		net_bind_add(b->binds, &kept[i], name, kttl[i], now);
		if (kttl[i] < ttl)
			ttl = kttl[i];
		/* One event per address, with the TTL the upstream gave that address,
		 * the query type, and whether the session's cache answered. */
		net_addr_format(&kept[i], a);
		detail = xasprintf("%s %s%s", qtype_name(qtype), a, cached_words);
		emit_dns(b, q->wq, "resolve", NET_LAYER_DNS, name, detail, a, kttl[i]);
		free(detail);
	}
	if (!nk)
		ttl = 0;
	if (nk)
		netlog_add_resolution(b->log, name, kept, nk);
	if (!nk && !ndropped) {
		char *detail = xasprintf("%s %s%s", qtype_name(qtype),
					 rcode == DNS_RCODE_NXDOMAIN ? "NXDOMAIN" :
					 rcode != DNS_RCODE_NOERROR ? "SERVFAIL" : "no address",
					 cached_words);

		emit_dns(b, q->wq, "resolve", NET_LAYER_DNS, name, detail, NULL, 0);
		free(detail);
	}
	{
		const char *parent;
		char *why;
		bool fired = dnsexfil_answer(b->exfil, name, rcode == DNS_RCODE_NXDOMAIN, now, &parent,
					     &why);

		exfil_judged(b, q->wq, fired, parent, fired ? why : NULL);
	}
	query_answer(b, q, false, rcode, ttl, kept, nk);
}

/* The resolver answered a permitted name: keep the answer, then deliver it. */
static void on_resolved(void *arg, int rcode, const struct net_addr *addrs,
			const uint32_t *ttls, size_t n)
{
	struct query *q = arg;
	struct broker *b = q->b;

	q->upstream = false;
	b->nlookups--;
	dns_cache_put(b->cache, q->name, q->qtype, rcode, addrs, ttls, n, now_mono_ms());
	answer_deliver(b, q, rcode, addrs, ttls, n, false);
}

/* ---- tripwires ------------------------------------------------------------------ */

/* A tripwire alert, once per token and channel (bit), within the session's cap. */
static void tw_alert(struct broker *b, struct who_q *wq, unsigned token, uint8_t bit,
		     const char *subject, char *detail)
{
	if (b->tw_alerted[token] & bit) {
		free(detail);
		return;
	}
	b->tw_alerted[token] |= bit;
	if (b->tw_alerts >= BROKER_TRIPWIRE_ALERTS) {
		b->tw_over_cap++;
		free(detail);
		return;
	}
	b->tw_alerts++;
	emit_alert(b, wq, "tripwire", subject, detail, NULL);
	free(detail);
}

/* The stream of names under parent: found, or made (the least recently used one replaced). */
static struct tw_domain *tw_domain_get(struct broker *b, const char *parent)
{
	struct tw_domain *old = &b->tw_dns[0];

	for (size_t i = 0; i < BROKER_TRIPWIRE_DOMAINS; i++) {
		struct tw_domain *d = &b->tw_dns[i];

		if (d->parent[0] && strcmp(d->parent, parent) == 0)
			return d;
		if (!d->parent[0] || (old->parent[0] && d->last_ms < old->last_ms))
			old = d;
	}
	/* A tripped domain is never forgotten while an untripped one can go. */
	if (old->tripped)
		for (size_t i = 0; i < BROKER_TRIPWIRE_DOMAINS; i++)
			if (!b->tw_dns[i].tripped) {
				old = &b->tw_dns[i];
				break;
			}
	memset(old, 0, sizeof(*old));
	snprintf(old->parent, sizeof(old->parent), "%s", parent);
	return old;
}

/*
 * A name the sandbox asked for, looked at for the decoy tokens twice: the
 * whole name on its own (labels of any length, the parent domain too), and
 * its long labels left of the parent domain as one stream with the names
 * asked under that parent before (the short ones, counters and "www",
 * skipped, so a token cut across the long labels of successive queries
 * stays one stretch). True when it must be answered here and not asked
 * upstream.
 */
static bool tw_dns_name(struct broker *b, struct who_q *wq, const char *name)
{
	char parent[256];
	struct tw_domain *d;
	size_t n, plen, sub;
	struct tw_hit hit;
	bool found = false;

	if (!b->tw || !name[0])
		return false;
	dnsexfil_parent(name, parent, sizeof(parent));
	d = tw_domain_get(b, parent);
	d->last_ms = now_mono_ms();
	if (d->tripped) {
		d->refused++;
		return true;
	}
	n = strlen(name);
	plen = strlen(parent);
	sub = n > plen ? n - plen - 1 : 0;
	{
		struct tw_stream alone = { 0 };

		found = tw_scan(b->tw, &alone, (const uint8_t *)name, n, &hit);
	}
	for (size_t at = 0; at < sub && !found;) {
		size_t len = strcspn(name + at, ".");

		if (len > sub - at)
			len = sub - at;
		if (len >= TW_SEED)
			found = tw_scan(b->tw, &d->st, (const uint8_t *)name + at, len, &hit);
		at += len + 1;
	}
	if (!found)
		return false;
	d->tripped = true;
	tw_alert(b, wq, hit.token, 1, parent,
		 xasprintf("the decoy token of the %s was sent out %s in the DNS names under %s "
			   "(%s): a credential stealer's exfiltration. Answered NXDOMAIN here, "
			   "never asked upstream, and so is every later name under %s",
			   b->tw_labels[hit.token], tw_encoding_words(hit.enc), parent, name,
			   parent));
	return true;
}

/* NET_TRIPWIRE: boxy-net found a token in a flow's first bytes, and reset the flow. */
static void on_tripwire(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	uint8_t token = wire_get_u8(r), enc = wire_get_u8(r);
	struct flow *f;
	char a[NET_ADDR_STRLEN], *subject;

	if (!wire_done(r) || token >= b->tw_n || enc >= TW_ENC_COUNT) {
		broker_end(b, "malformed NET_TRIPWIRE from boxy-net");
		return;
	}
	f = flow_find(h, id);
	if (!f || f->tripped) {
		broker_end(b, "NET_TRIPWIRE for flow %u, which is not open or was told already", id);
		return;
	}
	f->tripped = true;
	net_addr_format(&f->dst, a);
	subject = flow_subject(f, a);
	tw_alert(b, f->wq, token, 2, subject,
		 xasprintf("the decoy token of the %s was in the first bytes of a %s flow to %s%s%s "
			   "(%s): a credential stealer's exfiltration. The flow was %s before those "
			   "bytes were sent", b->tw_labels[token],
			   f->proto == NET_PROTO_TCP ? "TCP" : "UDP", f->host ? f->host : a,
			   f->sni && (!f->host || strcmp(f->sni, f->host)) ? ", named " : "",
			   f->sni && (!f->host || strcmp(f->sni, f->host)) ? f->sni : "",
			   tw_encoding_words((enum tw_encoding)enc),
			   f->proto == NET_PROTO_TCP ? "reset" : "stopped"));
	free(subject);
}

static void resolve_decide(struct broker *b, struct query *q);

/* NET_RESOLVE: refuse here, answer "no data" here, or look up upstream. */
static void on_resolve(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	char *name = wire_get_str(r, NETPROTO_MAX_NAME), norm[DNS_NAME_BUF];
	uint16_t qtype = wire_get_u16(r), sport, dport;
	uint8_t proto = wire_get_u8(r);
	struct net_addr src, dst;
	bool ok = netproto_get_addr(r, &src);
	struct query *q;

	sport = wire_get_u16(r);
	ok = netproto_get_addr(r, &dst) && ok;
	dport = wire_get_u16(r);
	if (!wire_done(r) || !ok || !name || !name_chars_ok(name) ||
	    (name[0] && (dns_name_normalize(name, strlen(name), norm) < 0 ||
			 strcmp(norm, name) != 0))) {
		broker_end(b, "malformed NET_RESOLVE from boxy-net");
		goto out;
	}
	if ((proto != NET_PROTO_TCP && proto != NET_PROTO_UDP) || src.family != dst.family ||
	    sport == 0) {
		broker_end(b, "NET_RESOLVE with an impossible source from boxy-net");
		goto out;
	}
	for (q = b->queries; q; q = q->next) {
		if (q->h == h && q->id == id) {
			broker_end(b, "NET_RESOLVE reuses query %u in flight", id);
			goto out;
		}
	}
	if (b->nqueries >= BROKER_MAX_QUERIES * 4) {
		/* More than boxy-net may have waiting: answered now, held for nobody. */
		send_answer(h, id, DNS_RCODE_SERVFAIL, 0, NULL, 0);
		goto out;
	}
	q = query_new(h, id, name, qtype);
	/* Who asked: its socket is there while it waits for this answer. */
	q->wq = who_ask(b, WHO_QUERY, q, proto, &src, sport, &dst, dport);
	if (tw_dns_name(b, q->wq, name)) {
		/* A decoy token in the name: it never leaves the machine. */
		query_answer(b, q, true, DNS_RCODE_NXDOMAIN, 0, NULL, 0);
		goto out;
	}
	{
		const char *parent;
		char *why;
		bool fired = dnsexfil_query(b->exfil, name, qtype, now_mono_ms(), &parent, &why);

		exfil_judged(b, q->wq, fired, parent, fired ? why : NULL);
	}
	if (b->frozen) {
		/*
		 * The alert this query raised froze the session (broker_hold): the
		 * query waits with it, unanswered, and is acted on only if the session
		 * is resumed. One at most: nothing more is read while frozen.
		 */
		if (b->frozen_q)
			query_answer(b, q, false, DNS_RCODE_SERVFAIL, 0, NULL, 0);
		else
			b->frozen_q = q;
		goto out;
	}
	resolve_decide(b, q);
out:
	free(name);
}

/* A query the detectors have seen: refuse it here, answer "no data" here, or look it up. */
static void resolve_decide(struct broker *b, struct query *q)
{
	const char *name = q->name;
	uint16_t qtype = q->qtype;
	struct net_verdict v;

	if (!net_policy_resolve(&b->policy, name, &v)) {
		/* Answered here: the name never leaves the machine. */
		emit_audit_name(b, q->wq, v.layer, name[0] ? name : ".", net_verdict_words(&v), NULL);
		query_answer(b, q, true, DNS_RCODE_NXDOMAIN, 0, NULL, 0);
		return;
	}
	if (qtype != DNS_TYPE_A && qtype != DNS_TYPE_AAAA) {
		/* Only addresses are ever answered: no data for the rest. */
		query_answer(b, q, false, DNS_RCODE_NOERROR, 0, NULL, 0);
		return;
	}
	{
		struct dns_cache_answer hit;

		if (dns_cache_get(b->cache, name, qtype, now_mono_ms(), &hit)) {
			answer_deliver(b, q, hit.rcode, hit.addrs, hit.ttls, hit.n, true);
			return;
		}
	}
	if (b->nlookups >= BROKER_MAX_QUERIES) {
		query_answer(b, q, false, DNS_RCODE_SERVFAIL, 0, NULL, 0);
		return;
	}
	q->upstream = true;
	b->nlookups++;
	if (resolver_query(b->res, name, qtype == DNS_TYPE_A ? AF_INET : AF_INET6, on_resolved,
			   q) < 0) {
		q->upstream = false;
		b->nlookups--;
		query_answer(b, q, false, DNS_RCODE_SERVFAIL, 0, NULL, 0);
	}
}

/* The words of a failed inspection (NETTLS_*), with boxy-net's detail. */
static char *tls_fail_words(uint8_t code, const char *detail)
{
	switch (code) {
	case NETTLS_UPSTREAM_CERT:
		return xasprintf("TLS inspection: the server's certificate was refused (%s); the "
				 "client was sent an alert", detail);
	case NETTLS_UPSTREAM:
		return xasprintf("TLS inspection: the handshake with the server failed (%s)",
				 detail[0] ? detail : "no reason given");
	case NETTLS_CLIENT_ALERT:
		return xasprintf("TLS inspection: the client refused this session's certificate "
				 "(its alert: %s): it pins certificates or trusts its own CA bundle, "
				 "not the sandbox's", detail[0] ? detail : "unknown");
	case NETTLS_CLIENT:
		return xasprintf("TLS inspection: the client's handshake failed (%s)",
				 detail[0] ? detail : "no reason given");
	case NETTLS_NO_PROTOCOL:
		return xasprintf("TLS inspection: no protocol boxy can inspect (%s)", detail);
	case NETTLS_NAME:
		return xasprintf("TLS inspection: %s than the one allowed", detail);
	case NETTLS_CLIENT_QUIET:
		return xasprintf("TLS inspection: the client closed the connection right after the "
				 "handshake, before any request%s%s%s: it may pin another certificate",
				 detail[0] ? " (its alert: " : "", detail, detail[0] ? ")" : "");
	default:
		return xstrdup("TLS inspection: too many inspected connections at once");
	}
}

/*
 * NET_TLS_FAIL: an inspected flow failed (the server's certificate, the
 * client's alert, …). One refusal, in the audit log and the store (a
 * decision, layer net.tls), and in the end-of-run summary.
 */
static void on_tls_fail(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	uint32_t id = wire_get_u32(r);
	uint8_t code = wire_get_u8(r);
	char *detail = wire_get_str(r, NETPROTO_TLS_DETAIL_MAX), *words, *subject;
	struct flow *f;

	if (!wire_done(r) || !detail || code < NETTLS_UPSTREAM_CERT || code > NETTLS_CODE_MAX ||
	    !visible_ok(detail, true)) {
		broker_end(b, "malformed NET_TLS_FAIL from boxy-net");
		free(detail);
		return;
	}
	f = flow_find(h, id);
	if (!f || f->state != FLOW_OPEN || !(f->gate & NETVF_TLS) || f->tls_failed) {
		broker_end(b, "NET_TLS_FAIL for flow %u, which is not inspected or failed already",
			   id);
		free(detail);
		return;
	}
	f->tls_failed = true;
	words = tls_fail_words(code, detail);
	subject = xasprintf("%s:%u", f->sni ? f->sni : "?", f->dport);
	{
		struct event ev = event_audit_make(NET_LAYER_TLS, "deny", subject, words);

		ev.flow = f->seq;
		who_emit(b, f->wq, &ev);
	}
	free(subject);
	free(words);
	free(detail);
}

/* NET_LOG: one line of boxy-net's health for the daemon's log, sanitised. */
static void on_log(struct helper *h, struct rbuf *r)
{
	struct broker *b = h->b;
	char *words = wire_get_str(r, BROKER_LOG_MAX);

	if (!wire_done(r) || !words) {
		broker_end(b, "malformed NET_LOG from boxy-net");
		free(words);
		return;
	}
	for (char *p = words; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = '?';
	/* Bounded: a boxy-net gone wrong must not fill the disk through the daemon's log. */
	if (b->log_lines < LOG_LINES_MAX)
		fprintf(stderr, "boxy-net[%.8s]: %s\n", b->session, words);
	else if (b->log_lines == LOG_LINES_MAX)
		fprintf(stderr, "boxy-net[%.8s]: further lines suppressed\n", b->session);
	b->log_lines++;
	free(words);
}

/* One message from boxy-net, any type: check it may be sent now, then handle it. */
static void broker_dispatch(struct helper *h, const struct msg *m)
{
	struct broker *b = h->b;
	struct rbuf r;

	if (m->nfds) {
		broker_end(b, "boxy-net sent a descriptor (message type %#x)", m->type);
		return;
	}
	rbuf_init(&r, m->payload, m->len);
	if (!h->hello && m->type != NET_HELLO) {
		broker_end(b, "boxy-net sent message type %#x before NET_HELLO", m->type);
		return;
	}
	switch (m->type) {
	case NET_HELLO:
		if (h->hello)
			broker_end(b, "boxy-net sent NET_HELLO twice");
		else
			on_hello(h, &r);
		break;
	case NET_FLOW_OPEN:
		on_flow_open(h, &r);
		break;
	case NET_FLOW_NAME:
		on_flow_name(h, &r);
		break;
	case NET_FLOW_STATS:
		on_flow_bytes(h, &r, false);
		break;
	case NET_FLOW_CLOSE:
		on_flow_bytes(h, &r, true);
		break;
	case NET_RESOLVE:
		on_resolve(h, &r);
		break;
	case NET_LOG:
		on_log(h, &r);
		break;
	case NET_FLOW_SEEN:
		on_flow_seen(h, &r);
		break;
	case NET_HTTP_REQUEST:
		on_http_request(h, &r);
		break;
	case NET_TLS_FAIL:
		on_tls_fail(h, &r);
		break;
	case NET_TRIPWIRE:
		on_tripwire(h, &r);
		break;
	default:
		/* NET_CONFIG, NET_HTTP_RULES, NET_VERDICT and NET_ANSWER are ours to send. */
		broker_end(b, "boxy-net sent message type %#x, which it may not send", m->type);
		break;
	}
}

/* Words for a wait status of boxy-net. */
static char *helper_words(int code, int status)
{
	if (code == CLD_KILLED || code == CLD_DUMPED)
		return xasprintf("boxy-net was killed by signal %d (%s)", status, strsignal(status));
	return xasprintf("boxy-net exited with status %d", status);
}

/* boxy-net ended (the default loop's child watcher): the session's network goes with it. */
static void helper_exited(struct ev_loop *loop, ev_child *w, int revents)
{
	struct helper *h = w->data;
	char *why;

	(void)revents;
	ev_child_stop(loop, w);
	why = WIFSIGNALED(w->rstatus) ? helper_words(CLD_KILLED, WTERMSIG(w->rstatus)) :
	      helper_words(CLD_EXITED, WEXITSTATUS(w->rstatus));
	h->pid = -1;                /* reaped: nothing left to signal */
	broker_end(h->b, "%s", why);
	free(why);
}

/*
 * How boxy-net ended, when its socket failed: its exit status if it has
 * exited, else NULL. A dying process closes its descriptors before it
 * becomes a zombie, so the daemon can read the reset first: give the exit
 * a moment (the pidfd turns readable) before calling it alive.
 */
static char *helper_status(struct helper *h)
{
	struct pollfd p = { .fd = h->pidfd, .events = POLLIN };
	siginfo_t si = { 0 };

	if (h->pid <= 0 || h->pidfd < 0)
		return NULL;
	poll(&p, 1, HELPER_GRACE_MS);
	if (waitid(P_PIDFD, (id_t)h->pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid > 0) {
		ev_child_stop(h->b->loop, &h->child_w);
		h->pid = -1;
		return helper_words(si.si_code, si.si_status);
	}
	return NULL;
}

/* Read and handle what boxy-net sent, a bounded batch per wakeup. */
static void broker_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct helper *h = w->data;
	struct broker *b = h->b;

	(void)loop;
	(void)revents;
	for (int i = 0; i < READ_BATCH && !b->dead && !b->frozen; i++) {
		struct msg m;
		char *err = NULL;
		int rc = msg_read_packet(h->fd, &m, &err);

		if (rc == 0)
			return;
		if (rc < 0) {
			/* A killed boxy-net resets the socket: say it was killed, and how. */
			char *why = helper_status(h);

			if (why)
				broker_end(b, "%s", why);
			else if (err)
				broker_end(b, "boxy-net broke the framing: %s", err);
			else
				broker_end(b, "boxy-net closed its control socket");
			free(why);
			free(err);
			return;
		}
		broker_dispatch(h, &m);
		msg_free(&m);
	}
}

/* ---- life ---------------------------------------------------------------------- */

struct broker *broker_create(struct ev_loop *loop, const struct runspec *rs,
			     const struct event_sink *sink, const char *session,
			     const struct broker_opts *opts, char **err)
{
	struct broker *b = xcalloc(1, sizeof(*b));

	b->loop = loop;
	b->rs = rs;
	b->sink = sink;
	b->tls_ca = opts ? opts->tls_ca : NULL;
	b->tls_ca_for = opts && opts->helpers ? opts->helpers : 1;
	b->session = xstrdup(session ? session : "");
	b->dialq_tail = &b->dialq;
	b->dial_ep = epoll_create1(EPOLL_CLOEXEC);
	if (b->dial_ep < 0) {
		set_err_errno(err, "epoll_create1");
		if (b->tls_ca) {
			tls_ca_clear(b->tls_ca);
			free(b->tls_ca);
		}
		free(b->session);
		free(b);
		return NULL;
	}
	ev_io_init(&b->dial_ep_w, dial_set_ready, b->dial_ep, EV_READ);
	b->dial_ep_w.data = b;
	ev_io_start(loop, &b->dial_ep_w);
	b->start_ms = now_mono_ms();
	b->pcap = opts && opts->pcap;
	if (opts) {
		b->alert_now = opts->alert_now;
		b->alert_ctx = opts->alert_ctx;
	}
	if (opts && opts->attrib && opts->attrib->ask)
		b->attrib = *opts->attrib;
	ev_init(&b->who_t, who_expired);
	b->who_t.data = b;
	net_policy_from_runspec(&b->policy, rs);
	if (rs && rs->nhttp_rules) {
		size_t bad;

		/* MSG_RUN's decoder read every rule with the same parser. */
		if (http_rules_parse(&b->rules, (const char *const *)rs->http_rules,
				     rs->nhttp_rules, &bad) < 0)
			fatal("broker: --allow-http rule %zu was validated but does not read",
			      bad + 1);
	}
	b->binds = net_bind_create(0);
	b->cache = dns_cache_create(0);
	b->exfil = dnsexfil_new();
	dnsexfil_set_lang(b->exfil, opts ? opts->lang : (locale_t)0);
	b->log = netlog_create();
	if (opts && opts->ntokens) {
		b->tw = tw_matcher_new(opts->tokens, opts->ntokens, err);
		if (!b->tw) {
			broker_free(b);
			return NULL;
		}
		b->tw_n = opts->ntokens;
		b->tw_tokens = xcalloc(b->tw_n + 1, sizeof(char *));
		b->tw_labels = xcalloc(b->tw_n + 1, sizeof(char *));
		for (size_t i = 0; i < b->tw_n; i++) {
			b->tw_tokens[i] = xstrdup(opts->tokens[i]);
			b->tw_labels[i] = xstrdup(opts->token_labels ? opts->token_labels[i] :
						  "a decoy credential");
		}
	}
	b->res = resolver_create(loop, opts ? opts->dns_servers : NULL, err);
	if (!b->res) {
		broker_free(b);
		return NULL;
	}
	if (opts && opts->tailnet &&
	    resolver_set_tailnet(b->res, opts->tailnet, opts->tailnet_servers, err) < 0) {
		broker_free(b);
		return NULL;
	}
	/* The resolver's copy, canonical and as long-lived as the policy: "nas.SUFFIX" is "nas". */
	b->policy.tailnet = resolver_tailnet_suffix(b->res);
	return b;
}

/* A new boxy-net connection of the broker's (none running yet), or NULL past BROKER_MAX_HELPERS. */
static struct helper *helper_new(struct broker *b)
{
	struct helper *h;

	if (b->nhelpers >= BROKER_MAX_HELPERS || b->dead)
		return NULL;
	h = xcalloc(1, sizeof(*h));
	h->b = b;
	h->idx = (unsigned)b->nhelpers;
	h->fd = -1;
	h->pid = -1;
	h->pidfd = -1;
	ev_child_init(&h->child_w, helper_exited, 0, 0);
	h->child_w.data = h;
	b->helpers[b->nhelpers++] = h;
	return h;
}

/* Talk to h's boxy-net over fd (see broker_attach). */
static int helper_attach(struct helper *h, int fd, char **err)
{
	{
		int type = 0;
		socklen_t tl = sizeof(type);

		/* One frame per record (msg_read_packet): a stream socket would misframe. */
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET) {
			close(fd);
			return set_err(err, "the boxy-net socket is not a SOCK_SEQPACKET socket");
		}
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		close(fd);
		return set_err_errno(err, "boxy-net socket");
	}
	h->fd = fd;
	ev_io_init(&h->rw, broker_readable, fd, EV_READ);
	h->rw.data = h;
	ev_io_init(&h->ww, broker_writable, fd, EV_WRITE);
	h->ww.data = h;
	ev_io_start(h->b->loop, &h->rw);
	return 0;
}

int broker_attach(struct broker *b, int fd, char **err)
{
	struct helper *h = helper_new(b);

	if (!h) {
		close(fd);
		return set_err(err, "the broker has all the boxy-nets it takes");
	}
	return helper_attach(h, fd, err);
}

char *broker_helper_path(void)
{
	char *dir = util_exe_dir();

	if (dir) {
		char *path = xasprintf("%s/boxy-net", dir);

		free(dir);
		if (access(path, X_OK) == 0)
			return path;
		free(path);
	}
	return xstrdup(PKGLIBEXECDIR "/boxy-net");
}

/* Put fd at target in a child about to exec (async-signal-safe). */
static int child_place(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, target) < 0 ? -1 : 0;
}

int broker_spawn(struct broker *b, const char *path, int tap_fd, int pcap_fd, char **err)
{
	int sp[2], hi[3] = { -1, -1, -1 };
	pid_t parent;
	char *const argv[] = { (char *)"boxy-net", NULL };
	char *envp[6] = { (char *)"PATH=/usr/bin:/bin", NULL };
	const char *head_timeout = getenv("BOXY_NET_HEAD_TIMEOUT");
	size_t nenv = 1;
	struct helper *h;
	pid_t pid;

	if (b->nhelpers >= BROKER_MAX_HELPERS || b->dead)
		return set_err(err, "the broker has all the boxy-nets it takes");
	if (access(path, X_OK) < 0)
		return set_err_errno(err, "boxy-net (%s)", path);
	/*
	 * TLS inspection reads the host's trust store and OpenSSL's configuration
	 * where the daemon would: its SSL_CERT_FILE, SSL_CERT_DIR and OPENSSL_CONF
	 * (a test makes boxy trust its own CA with SSL_CERT_FILE). Nothing else of
	 * the daemon's environment reaches boxy-net.
	 */
	for (const char *const *v = (const char *const[]){ "SSL_CERT_FILE", "SSL_CERT_DIR",
			"OPENSSL_CONF", NULL }; *v && b->tls_ca; v++) {
		const char *val = getenv(*v);

		if (val)
			envp[nenv++] = xasprintf("%s=%s", *v, val);
	}
	/* The gate's request-head timeout, shortened by the test suite (net/flow.h). */
	if (head_timeout && strlen(head_timeout) < 32)
		envp[nenv++] = xasprintf("BOXY_NET_HEAD_TIMEOUT=%s", head_timeout);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		set_err_errno(err, "socketpair");
		goto out_env;
	}
	/* Move the child's descriptors above 5 first, so placing one cannot clobber another. */
	hi[0] = fcntl(sp[1], F_DUPFD_CLOEXEC, 10);
	hi[1] = fcntl(tap_fd, F_DUPFD_CLOEXEC, 10);
	hi[2] = pcap_fd >= 0 ? fcntl(pcap_fd, F_DUPFD_CLOEXEC, 10) : -1;
	close(sp[1]);
	if (hi[0] < 0 || hi[1] < 0 || (pcap_fd >= 0 && hi[2] < 0)) {
		set_err_errno(err, "preparing boxy-net's descriptors");
		goto fail;
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		set_err_errno(err, "fork");
		goto fail;
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (int s = 1; s < 32; s++)
			if (s != SIGKILL && s != SIGSTOP)
				signal(s, SIG_DFL);
		/*
		 * It dies with the daemon. It would anyway, at the EOF on its socket —
		 * unless it is stopped, as a frozen session's is (broker_hold), and a
		 * stopped process reads nothing: a daemon killed then left it behind.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		if (child_place(hi[0], 3) < 0 || child_place(hi[1], 4) < 0 ||
		    (hi[2] >= 0 && child_place(hi[2], 5) < 0))
			_exit(127);
		/* Everything else the daemon holds (clients, other sessions) stays behind. */
		if (syscall(SYS_close_range, hi[2] >= 0 ? 6 : 5, ~0U, 0) < 0)
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	for (int i = 0; i < 3; i++)
		if (hi[i] >= 0)
			close(hi[i]);
	h = helper_new(b);
	h->pid = pid;
	h->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (ev_is_default_loop(b->loop)) {
		/* libev reaps every child of the daemon: hear about ours from it. */
		ev_child_set(&h->child_w, pid, 0);
		ev_child_start(b->loop, &h->child_w);
	}
	for (size_t i = 1; i < nenv; i++)
		free(envp[i]);
	return helper_attach(h, sp[0], err);
fail:
	for (int i = 0; i < 3; i++)
		if (hi[i] >= 0)
			close(hi[i]);
	close(sp[0]);
out_env:
	for (size_t i = 1; i < nenv; i++)
		free(envp[i]);
	return -1;
}

void broker_hold(struct broker *b, bool hold)
{
	struct query *q;

	if (hold) {
		if (b->frozen)
			return;
		b->frozen = true;
		/* Every boxy-net of the session (one per queue of tap0): a queue left
		 * running would go on moving its flows' bytes. */
		for (size_t k = 0; k < b->nhelpers; k++) {
			struct helper *h = b->helpers[k];

			ev_io_stop(b->loop, &h->rw);
			if (h->pid > 0 && h->pidfd >= 0)
				syscall(SYS_pidfd_send_signal, h->pidfd, SIGSTOP, NULL, 0);
		}
		return;
	}
	if (!b->frozen)
		return;
	b->frozen = false;
	q = b->frozen_q;
	b->frozen_q = NULL;
	if (q && !b->dead)
		resolve_decide(b, q);
	/* What was let go may have raised an alert that froze the session again. */
	if (b->frozen)
		return;
	dial_queue_run(b);
	if (b->frozen)
		return;
	for (size_t k = 0; k < b->nhelpers && !b->dead; k++) {
		struct helper *h = b->helpers[k];

		if (h->pid > 0 && h->pidfd >= 0)
			syscall(SYS_pidfd_send_signal, h->pidfd, SIGCONT, NULL, 0);
		if (h->fd >= 0 && !b->finishing)
			ev_io_start(b->loop, &h->rw);
	}
}

bool broker_held(const struct broker *b)
{
	return b->frozen;
}

pid_t broker_helper_pid(const struct broker *b, size_t i)
{
	return i < b->nhelpers ? b->helpers[i]->pid : -1;
}

size_t broker_helpers(const struct broker *b)
{
	return b->nhelpers;
}

bool broker_alive(const struct broker *b)
{
	return !b->dead;
}

const char *broker_failure(const struct broker *b)
{
	return b->failure;
}

const struct netlog *broker_netlog(const struct broker *b)
{
	return b->log;
}

size_t broker_flows(const struct broker *b)
{
	return b->nflows;
}

/*
 * boxy-net reports counters about three times a second, so its last report
 * of a flow open at the end is up to a third of a second old, and reports
 * still in the socket were never read: every connections row said 0 bytes
 * and the net-log's totals changed from run to run. So at the end the
 * broker shuts its sending half (boxy-net reads EOF, sends FLOW_CLOSE with
 * the final totals of every flow it still has, and exits) and reads what
 * comes until EOF, for at most BROKER_FINISH_MS: only counters, nothing is
 * asked of boxy-net or answered any more.
 */
static void finish_read(struct broker *b);

/* At the end: what the tripwires only counted. */
static void tw_finish(struct broker *b)
{
	for (size_t i = 0; i < BROKER_TRIPWIRE_DOMAINS; i++) {
		struct tw_domain *d = &b->tw_dns[i];
		char *s;

		if (!d->tripped || !d->refused)
			continue;
		s = xasprintf("%llu more DNS name(s) under %s were answered NXDOMAIN here after a "
			      "decoy token went by in one", (unsigned long long)d->refused, d->parent);
		emit_audit_name(b, NULL, "tripwire", d->parent, s, NULL);
		free(s);
		d->refused = 0;
	}
	if (b->tw_over_cap) {
		char *s = xasprintf("%llu more tripwire alert(s) past the %d a session shows were "
				    "counted, not kept", (unsigned long long)b->tw_over_cap,
				    BROKER_TRIPWIRE_ALERTS);
		struct event ev = event_audit_make("tripwire", "info", "network", s);

		emit(b, &ev);
		free(s);
		b->tw_over_cap = 0;
	}
}

void broker_finish(struct broker *b)
{
	finish_read(b);
	/* The sandbox is gone: what still waits for who is answered now, "unknown", so
	 * the net-log and the store get every event before the session's record closes. */
	who_flush_all(b);
}

/* broker_finish's reading of boxy-net's last counts. */
static void finish_read(struct broker *b)
{
	uint64_t deadline = now_mono_ms() + BROKER_FINISH_MS;
	bool open[BROKER_MAX_HELPERS] = { false };
	size_t nopen = 0;

	tw_finish(b);
	/* Frozen (a frozen session ends): the boxy-nets stay stopped and are killed,
	 * never continued, so no byte they hold leaves; their counters are their
	 * last reports. */
	if (b->dead || b->finishing || b->frozen)
		return;
	b->finishing = true;
	for (size_t k = 0; k < b->nhelpers; k++) {
		struct helper *h = b->helpers[k];

		ev_io_stop(b->loop, &h->rw);
		ev_io_stop(b->loop, &h->ww);
		if (h->fd >= 0 && h->hello && shutdown(h->fd, SHUT_WR) == 0) {
			open[k] = true;
			nopen++;
		}
	}
	/* The deadline holds even against a boxy-net that never stops sending. */
	for (uint64_t now = now_mono_ms(); !b->dead && nopen && now < deadline;
	     now = now_mono_ms()) {
		struct pollfd p[BROKER_MAX_HELPERS];
		nfds_t np = 0;
		bool got = false;

		for (size_t k = 0; k < b->nhelpers && !b->dead; k++) {
			struct helper *h = b->helpers[k];
			struct msg m;
			char *err = NULL;
			int rc;

			if (!open[k])
				continue;
			rc = msg_read_packet(h->fd, &m, &err);
			free(err);
			if (rc == 0) {
				p[np++] = (struct pollfd){ .fd = h->fd, .events = POLLIN };
				continue;
			}
			if (rc < 0) {
				open[k] = false;        /* EOF: this boxy-net said everything */
				nopen--;
				continue;
			}
			if (m.type == NET_FLOW_STATS || m.type == NET_FLOW_CLOSE)
				broker_dispatch(h, &m);
			msg_free(&m);
			got = true;
		}
		if (!got && np && !b->dead)
			poll(p, np, (int)(deadline - now));
	}
}

int broker_write_netlog(const struct broker *b, int fd, char **err)
{
	char *json = netlog_to_json(b->log);
	int rc = 0;

	if (write_all(fd, json, strlen(json)) < 0 || write_all(fd, "\n", 1) < 0)
		rc = set_err_errno(err, "writing the net-log");
	free(json);
	return rc;
}

void broker_free(struct broker *b)
{
	if (!b)
		return;
	/* What waits for its attribution goes out now, "unknown" (answers held included). */
	who_flush_all(b);
	if (b->attrib.ask && (b->who_found || b->who_unknown))
		fprintf(stderr, "boxy-daemon: session %.8s: attribution: %llu found, %llu unknown; "
			"%llu answers to permitted names waited %llu ms in all\n", b->session,
			(unsigned long long)b->who_found, (unsigned long long)b->who_unknown,
			(unsigned long long)b->held_answers, (unsigned long long)b->held_answer_ms);
	/* Queries next: the resolver drops their callbacks, then their memory goes. */
	resolver_free(b->res);
	b->res = NULL;
	while (b->queries)
		query_free(b, b->queries);
	if (!b->dead) {
		/* A quiet end: no event, it is the session ending. */
		b->dead = true;
		broker_disconnect(b);
		/* The sockets are closed: each boxy-net sees EOF and may finish its
		 * capture; a short grace (the pidfd turns readable at its exit), then
		 * SIGKILL. Waited for here only with a capture, which must be whole
		 * when the run ends; otherwise off the loop (helper_reap_later).
		 * Neither when frozen: a stopped boxy-net cannot exit, and is not
		 * continued; helper_stop kills it below. */
		for (size_t k = 0; k < b->nhelpers && !b->frozen; k++) {
			struct helper *h = b->helpers[k];

			if (h->pid > 0 && h->pidfd >= 0 && b->pcap) {
				struct pollfd p = { .fd = h->pidfd, .events = POLLIN };

				poll(&p, 1, HELPER_GRACE_MS);
			} else if (h->pid > 0 && h->pidfd >= 0) {
				helper_reap_later(h);
			}
		}
	}
	for (size_t k = 0; k < b->nhelpers; k++) {
		helper_stop(b->helpers[k]);
		free(b->helpers[k]);
	}
	ev_io_stop(b->loop, &b->dial_ep_w);
	close(b->dial_ep);
	net_bind_free(b->binds);
	http_rules_free(&b->rules);
	if (b->tls_ca) {
		tls_ca_clear(b->tls_ca);
		free(b->tls_ca);
	}
	dns_cache_free(b->cache);
	dnsexfil_free(b->exfil);
	netlog_free(b->log);
	tw_matcher_free(b->tw);
	strv_free(b->tw_tokens);
	strv_free(b->tw_labels);
	free(b->failure);
	free(b->session);
	free(b);
}
