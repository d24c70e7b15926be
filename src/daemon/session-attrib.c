/*
 * daemon/session-attrib.c — a session's attribution on the daemon's loop (see
 * daemon/session-attrib.h): the worker of sandbox/attrib.h, an ev_io on its
 * eventfd, and the answers handed out by token — the broker's tokens as they
 * are (the broker numbers its own questions from 1), everyone else's with
 * the top bit set, each with the callback it came with.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "common/util.h"
#include "daemon/daemon.h"
#include "daemon/session-attrib.h"

/*
 * How long a refusal (its RST, a refused name's NXDOMAIN) and the events
 * about a flow or a query wait for the answer: the worker answers in a
 * millisecond or two on an idle machine; this is the bound on a loaded one.
 * A permitted name's DNS answer waits much less: that wait is the payload's
 * own, and at a load of 16 on two cores the 250 ms made an npm install of 159
 * packages 19 % slower (bench/npm.sh); its asker is then "unknown" instead.
 * A permitted flow's verdict never waits.
 */
#define SESSION_ATTRIB_HOLD_MS        250
#define SESSION_ATTRIB_ANSWER_HOLD_MS 20
/* A permitted flow's events wait longer: nothing of the payload's waits with them. */
#define SESSION_ATTRIB_RECORD_HOLD_MS 2000
#define OTHER_TOKEN            (1ULL << 63)
#define TAKE_BATCH             64

/* A question of someone's other than the broker's, until its answer. */
struct asked {
	struct asked *next;
	uint64_t token;
	session_attrib_done done;
	void *ctx;
};

struct session_attrib {
	struct attrib *a;
	ev_io w;
	struct broker_attrib hook;
	struct asked *asked;
	uint64_t seq;
};

/* The broker asks: who owns this flow's (or query's) socket? */
static bool broker_ask(void *ctx, uint64_t token, uint8_t proto, const struct net_addr *src,
		       uint16_t sport, const struct net_addr *dst, uint16_t dport)
{
	struct session *s = ctx;
	struct attrib_query q = {
		.kind = ATTRIB_Q_SOCKET, .token = token, .proto = proto, .local = *src,
		.lport = sport, .remote = *dst, .rport = dport,
	};

	return s->attrib && attrib_ask(s->attrib->a, &q);
}

/* Answer one of the others' questions and forget it. */
static void answer_other(struct session_attrib *sa, uint64_t token, const struct event_who *who)
{
	for (struct asked **pp = &sa->asked; *pp; pp = &(*pp)->next) {
		struct asked *q = *pp;

		if (q->token != token)
			continue;
		*pp = q->next;
		q->done(q->ctx, who);
		free(q);
		return;
	}
}

/* The worker has answers: each to whoever asked. */
static void answers_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct session *s = w->data;
	struct attrib_result r[TAKE_BATCH];
	size_t n;

	(void)loop;
	(void)revents;
	while (s->attrib && (n = attrib_take(s->attrib->a, r, TAKE_BATCH)) > 0) {
		for (size_t i = 0; i < n && s->attrib; i++) {
			struct event_who who;

			attrib_proc_who(&r[i].who, &who);
			if (r[i].token & OTHER_TOKEN)
				answer_other(s->attrib, r[i].token, &who);
			else if (s->net)
				broker_attributed(s->net, r[i].token, &who);
		}
		if (n < TAKE_BATCH)
			break;
	}
}

void session_attrib_start(struct session *s)
{
	struct session_attrib *sa;
	char *err = NULL;

	if (s->attrib || s->rs.no_attribution || s->pid <= 0)
		return;
	sa = xcalloc(1, sizeof(*sa));
	sa->a = attrib_create(s->pid, &err);
	if (!sa->a) {
		/* The run goes on; its events say "unknown", and the audit log why. */
		char *words = xasprintf("attribution is off for this session: %s", err);

		event_audit(&s->sink, "attrib", "degraded", "attribution", words);
		free(words);
		free(err);
		free(sa);
		return;
	}
	sa->hook = (struct broker_attrib){
		.ask = broker_ask, .ctx = s, .hold_ms = SESSION_ATTRIB_HOLD_MS,
		.answer_hold_ms = SESSION_ATTRIB_ANSWER_HOLD_MS,
		.record_hold_ms = SESSION_ATTRIB_RECORD_HOLD_MS,
	};
	if (s->rs.net == NET_PUBLIC || s->rs.net == NET_ALLOWLIST)
		attrib_prepare_net(sa->a);      /* its sock_diag socket before the first flow */
	ev_io_init(&sa->w, answers_ready, attrib_fd(sa->a), EV_READ);
	sa->w.data = s;
	ev_io_start(s->srv->loop, &sa->w);
	s->attrib = sa;
}

void session_attrib_end(struct session *s)
{
	struct session_attrib *sa = s->attrib;
	static const struct event_who unknown;

	if (!sa)
		return;
	ev_io_stop(s->srv->loop, &sa->w);
	{
		uint64_t n, us;

		attrib_cost(sa->a, &n, &us);
		if (n)
			fprintf(stderr, "boxy-daemon: session %.8s: attribution's worker: %llu "
				"look-ups, %llu µs of CPU (%llu µs each)\n", s->id,
				(unsigned long long)n, (unsigned long long)us,
				(unsigned long long)(us / n));
	}
	attrib_free(sa->a);
	s->attrib = NULL;
	while (sa->asked) {
		struct asked *q = sa->asked;

		sa->asked = q->next;
		q->done(q->ctx, &unknown);
		free(q);
	}
	free(sa);
}

/* Ask the worker q for someone other than the broker. */
static void ask_other(struct session *s, struct attrib_query *q, session_attrib_done done,
		      void *ctx)
{
	static const struct event_who unknown;
	struct session_attrib *sa = s->attrib;
	struct asked *a;

	if (!sa) {
		done(ctx, NULL);
		return;
	}
	q->token = OTHER_TOKEN | ++sa->seq;
	if (!attrib_ask(sa->a, q)) {
		done(ctx, &unknown);
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->token = q->token;
	a->done = done;
	a->ctx = ctx;
	a->next = sa->asked;
	sa->asked = a;
}

void session_attrib_pid(struct session *s, pid_t host_pid, session_attrib_done done, void *ctx)
{
	struct attrib_query q = { .kind = ATTRIB_Q_PID, .host_pid = host_pid };

	ask_other(s, &q, done, ctx);
}

void session_attrib_socket(struct session *s, const struct attrib_query *q,
			   session_attrib_done done, void *ctx)
{
	struct attrib_query mine = *q;

	mine.kind = ATTRIB_Q_SOCKET;
	ask_other(s, &mine, done, ctx);
}

const struct broker_attrib *session_attrib_broker(struct session *s)
{
	return s->attrib ? &s->attrib->hook : NULL;
}
