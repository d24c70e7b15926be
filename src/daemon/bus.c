/*
 * daemon/bus.c — the event bus: every event of a session goes to the store (in
 * batches, off the hot path), to the session's --audit-log, and to its
 * watchers (pushed, with bounded queues).
 *
 * A watcher that cannot keep up loses events and is told how many; it
 * never slows the session, because nothing here ever waits on a client.
 * The store is written from a timer in one transaction per batch; a store
 * that cannot be written is logged once and the runs go on.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/audit.h"
#include "proto/place.h"
#include "daemon/log.h"
#include "daemon/seal.h"
#include "common/json.h"
#include "daemon/bus.h"
#include "daemon/clients.h"
#include "proto/daemon-msg.h"
#include "store/store.h"
#include "store/store-chain.h"
#include "common/util.h"
#include "proto/wire.h"

#define PENDING_MAX  100000     /* events held for the store before they are dropped */

struct pending_event {
	struct pending_event *next;
	struct event_copy c;        /* the event, its strings and its who's (common/event.h) */
};

static struct dest *dest_find(struct session *s, const char *name)
{
	for (size_t i = 0; i < s->ndests; i++)
		if (strcmp(s->dests[i].name, name) == 0)
			return &s->dests[i];
	return NULL;
}

/* Per-destination arithmetic, so a watcher joining late sees the same totals as show. */
static void count(struct session *s, const struct event *ev)
{
	const char *name;
	struct dest *d = NULL;
	bool seen = false;

	if (strcmp(ev->kind, "tcp") != 0 && strcmp(ev->kind, "udp") != 0)
		return;
	name = ev->host ? ev->host : ev->addr;
	if (!name)
		return;
	d = dest_find(s, name);
	/*
	 * Bounded: a payload dialling thousands of distinct addresses would
	 * otherwise make this scan, and every watcher's snapshot, grow without
	 * limit. Past the cap, new names share one row; the store keeps every
	 * connection, so boxy show and the views stay exact.
	 */
	if (!d && s->ndests >= SESSION_DESTS_MAX - 1) {
		name = DEST_OTHER;
		d = dest_find(s, name);
	}
	if (!d) {
		d = xappend(&s->dests, &s->ndests, sizeof(*s->dests));
		d->name = xstrdup(name);
	}
	if (strcmp(ev->verdict, "allow") == 0 || strcmp(ev->verdict, "deny") == 0) {
		d->conns++;
		s->conns++;
		if (strcmp(ev->verdict, "deny") == 0) {
			d->denied++;
			s->denied++;
		}
	}
	if (strcmp(ev->verdict, "close") == 0 || strcmp(ev->verdict, "bytes") == 0) {
		d->up += ev->up;
		d->down += ev->down;
		s->up += ev->up;
		s->down += ev->down;
	}
	if (ev->addr) {
		for (size_t i = 0; d->addrs && d->addrs[i]; i++)
			if (strcmp(d->addrs[i], ev->addr) == 0)
				seen = true;
		if (!seen && strv_len(d->addrs) < 256)
			strv_push(&d->addrs, ev->addr);
	}
}

/* A copy of ev that outlives it, without its told (told once, live: never kept). */
static void keep(struct event_copy *c, const struct event *ev)
{
	struct event e = *ev;

	e.told = NULL;
	event_copy_init(c, &e);
}

static void remember(struct session *s, const struct event *ev)
{
	struct event_copy *r = &s->recent[s->recent_next];

	event_copy_free(r);
	keep(r, ev);
	s->recent_next = (s->recent_next + 1) % SESSION_RECENT;
	if (s->nrecent < SESSION_RECENT)
		s->nrecent++;
	if (ev->verdict && strcmp(ev->verdict, "alert") == 0 && s->nalerts < SESSION_ALERTS)
		keep(&s->alerts[s->nalerts++], ev);
}

static void queue_for_store(struct server *srv, const struct event *ev)
{
	struct pending_event *p;

	if (!srv->store)
		return;
	if (srv->npending >= PENDING_MAX) {
		if (!srv->store_warned)
			fprintf(stderr, "boxy-daemon: store writer is behind; dropping events\n");
		srv->store_warned = true;
		return;
	}
	p = xcalloc(1, sizeof(*p));
	keep(&p->c, ev);
	if (srv->pending_tail)
		srv->pending_tail->next = p;
	else
		srv->pending = p;
	srv->pending_tail = p;
	srv->npending++;
}

/* Send ev to one subscriber, or count it lost when its queue is full. */
void bus_send_event(struct client *c, const struct event *ev)
{
	struct wbuf w;

	if (c->outq_bytes >= CLIENT_OUTQ_MAX) {
		c->lost++;
		c->lost_reported = false;
		return;
	}
	if (c->lost && !c->lost_reported) {
		wbuf_init(&w);
		dmsg_encode_loss(&w, c->lost);
		client_send(c, MSG_LOSS, w.p, w.len);
		wbuf_free(&w);
		c->lost_reported = true;
	}
	wbuf_init(&w);
	dmsg_encode_event(&w, ev);
	client_send(c, MSG_EVENT, w.p, w.len);
	wbuf_free(&w);
}

/*
 * Send a finding (an alert, or a "new since the last run") to the client that
 * runs the session, whatever its queue holds: the end-of-run summary prints
 * them and the CI gate judges them, so losing one to a queue the payload
 * filled (a flood of events under -v, a burst of terminal output) would let
 * a run pass its gate. Their number is bounded by what the session records.
 */
static void bus_send_finding(struct client *c, const struct event *ev)
{
	struct wbuf w;

	wbuf_init(&w);
	dmsg_encode_event(&w, ev);
	client_send(c, MSG_EVENT, w.p, w.len);
	wbuf_free(&w);
}

void bus_publish(struct session *s, const struct event *in)
{
	struct event ev = *in;
	bool finding;

	ev.session = s->id;
	if (ev.t_ms == 0)
		ev.t_ms = now_real_ms();
	ev.t_rel_ms = ev.t_ms >= s->started_ms ? ev.t_ms - s->started_ms : 0;
	if (s->audit) {
		struct event_sink a = audit_log_sink(s->audit);

		a.emit(a.ctx, &ev);
	}
	count(s, &ev);
	refusals_add_event(&s->refusals, &ev);
	remember(s, &ev);
	queue_for_store(s->srv, &ev);
	/* A session's reaction to an alert (doc/react.md) is told to its run like a finding:
	 * a frozen run that never heard why would only seem to hang. */
	finding = (ev.verdict && (!strcmp(ev.verdict, "alert") || !strcmp(ev.verdict, "new"))) ||
		  (ev.layer && !strcmp(ev.layer, "react"));
	for (struct client *c = s->srv->clients; c; c = c->next) {
		struct event out = ev;

		if (c->session != s)
			continue;
		/* The words told in the run's language go to the clients that read it. */
		if (c->role == CLIENT_WATCHING || c->lang != s->lang)
			out.told = NULL;
		if (c->role == CLIENT_WATCHING)
			bus_send_event(c, &out);
		else if (finding && (c->role == CLIENT_RUN || c->role == CLIENT_ATTACHED))
			bus_send_finding(c, &out);
		else if (s->verbose && (c->role == CLIENT_RUN || c->role == CLIENT_ATTACHED))
			bus_send_event(c, &out);
	}
}

static void store_warn(struct server *srv, char *err)
{
	if (!srv->store_warned)
		fprintf(stderr, "boxy-daemon: session store write failed: %s (runs go on; "
			"further failures are not logged)\n", err);
	srv->store_warned = true;
	free(err);
}

static int store_one(struct server *srv, const struct event *ev, char **err)
{
	return store_add_event(srv->store, ev, err);
}

/* The pending events into the store's open transaction (ok), or dropped (!ok: none could be opened). */
static void bus_add_pending(struct server *srv, bool ok)
{
	char *err = NULL;

	while (srv->pending) {
		struct pending_event *p = srv->pending;

		srv->pending = p->next;
		if (ok && store_one(srv, &p->c.ev, &err) < 0) {
			store_warn(srv, err);
			err = NULL;
		}
		event_copy_free(&p->c);
		free(p);
	}
	srv->pending_tail = NULL;
	srv->npending = 0;
}

/* Open a transaction on the store: false (warned) when it cannot be. */
static bool bus_begin(struct server *srv)
{
	char *err = NULL;

	if (store_begin(srv->store, &err) < 0) {
		store_warn(srv, err);
		return false;
	}
	return true;
}

/* Commit the transaction bus_begin opened; rolled back (warned) when that fails. */
static void bus_commit(struct server *srv)
{
	char *err = NULL;

	if (store_commit(srv->store, &err) < 0) {
		store_warn(srv, err);
		store_rollback(srv->store);
	}
}

void bus_flush(struct server *srv)
{
	bool ok;

	if (!srv->pending)
		return;
	ok = bus_begin(srv);
	bus_add_pending(srv, ok);
	if (ok)
		bus_commit(srv);
}

void bus_session_begin(struct session *s)
{
	struct server *srv = s->srv;
	struct jbuf b;
	char *argv_json, *policy, *audit_path, *err = NULL;
	struct store_session row;

	if (!srv->store)
		return;
	jbuf_init(&b);
	json_arr_begin(&b);
	for (size_t i = 0; s->rs.argv[i]; i++)
		json_str(&b, s->rs.argv[i]);
	json_arr_end(&b);
	argv_json = jbuf_steal(&b);
	policy = runspec_to_json(&s->rs);
	row = (struct store_session){
		.id = s->id, .argv_json = argv_json, .profile = s->rs.profile,
		.policy_json = policy, .cwd = s->cwd, .started_ms = (int64_t)s->started_ms,
		.memory = (int64_t)s->rs.memory, .pids = (int64_t)s->rs.pids,
		.cpus_milli = s->rs.cpus_milli, .timeout_ms = (int64_t)s->rs.timeout_ms,
		.build = (char *)build_id(), .lockfile = s->lockfile,
	};
	if (store_session_begin(srv->store, &row, &err) < 0) {
		store_warn(srv, err);
		err = NULL;
	}
	/* Where its audit log is: `boxy verify` finds a log replaced under the same name. */
	if ((audit_path = audit_log_path(s->audit)) != NULL &&
	    store_chain_begin(srv->store, s->id, audit_path, &err) < 0)
		store_warn(srv, err);
	free(audit_path);
	free(argv_json);
	free(policy);
}

void bus_session_frozen(struct session *s)
{
	struct server *srv = s->srv;
	char *err = NULL;

	if (!srv->store)
		return;
	/* The alert's rows first, so a reader that sees the session frozen finds why. */
	bus_flush(srv);
	if (store_session_frozen(srv->store, s->id, s->frozen ? (int64_t)s->frozen_ms : 0,
				 s->frozen_reason, &err) < 0)
		store_warn(srv, err);
}

void bus_session_end(struct session *s)
{
	struct server *srv = s->srv;
	char *err = NULL;
	bool tx = false;

	/*
	 * The session's last events, its seal and its end in one transaction:
	 * three commits were 0.3 ms between the payload's exit and `boxy run`
	 * returning (each a WAL append and its locks). Without a transaction
	 * (none could be opened) the events are dropped as bus_flush does, and
	 * the seal and the end are written on their own.
	 */
	if (srv->store) {
		tx = bus_begin(srv);
		bus_add_pending(srv, tx);
	}
	if (seal_session(srv->store, s->id, s->audit, now_real_ms(), &err) < 0) {
		dlog_msg("session %s: not sealed: %s", s->id, err ? err : "?");
		free(err);
		err = NULL;
	}
	if (!srv->store)
		return;
	if (store_session_end(srv->store, s->id, (int64_t)now_real_ms(),
			      s->failure && s->exit_code >= 125 && s->pid <= 0 ? "failed" : "exited",
			      s->exit_code, &err) < 0)
		store_warn(srv, err);
	if (tx)
		bus_commit(srv);
}
