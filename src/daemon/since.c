/*
 * daemon/since.c — what a run did that the last one did not (see
 * daemon/since.h).
 *
 * The store picked the baseline when the session began (store_session_begin);
 * here the session's rows are written out first (bus_flush), then compared.
 * Every event names the baseline and whether the lockfiles changed in its
 * reason, so a line read alone ("new since 3f2a9c1e, lockfile changed")
 * says what it was compared with. The store being unavailable or the
 * comparison failing costs this report only, never the run.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/event.h"
#include "common/util.h"
#include "daemon/bus.h"
#include "daemon/session.h"
#include "daemon/since.h"
#include "store/store.h"
#include "store/store-since.h"

struct since_ctx {
	struct session *s;
	const char *why;        /* "since ID (lockfile ...)" */
	size_t n, left_out;
};

/* One new item → one event (past SINCE_EVENTS_MAX only counted). */
static void since_row(void *arg, int ncol, const char *const *v)
{
	struct since_ctx *c = arg;
	struct event ev = { .kind = "audit", .verdict = "new", .layer = "since" };
	char *detail;

	if (ncol < 4 || !v[0] || !v[1])
		return;
	if (c->n >= SINCE_EVENTS_MAX) {
		c->left_out++;
		return;
	}
	c->n++;
	if (strcmp(v[0], "destination") == 0 || strcmp(v[0], "package") == 0)
		detail = xasprintf("%s, %s", v[2] ? v[2] : "new", c->why);
	else
		detail = xasprintf("new %s (%s), %s", v[0], v[2] ? v[2] : "", c->why);
	ev.subject = v[1];
	ev.detail = detail;
	bus_publish(c->s, &ev);
	free(detail);
}

void since_report(struct session *s)
{
	struct server *srv = s->srv;
	struct store_sessions me = { 0 }, base = { 0 };
	struct since_ctx c = { .s = s };
	struct event ev = { .kind = "audit", .verdict = "new", .layer = "since" };
	char *err = NULL, *why = NULL, *more;
	bool same;

	if (!srv->store)
		return;
	bus_flush(srv);
	if (store_sessions_find(srv->store, s->id, false, &me, &err) < 0 || me.n != 1 ||
	    !me.v[0].baseline)
		goto out;
	if (store_sessions_find(srv->store, me.v[0].baseline, false, &base, &err) < 0 ||
	    base.n != 1)
		goto out;
	same = (!me.v[0].lockfile && !base.v[0].lockfile) ||
	       (me.v[0].lockfile && base.v[0].lockfile &&
		strcmp(me.v[0].lockfile, base.v[0].lockfile) == 0);
	why = xasprintf("since %.8s%s", base.v[0].id,
			!me.v[0].lockfile && !base.v[0].lockfile ? ""
			: same ? ", same lockfiles" : ", lockfiles changed");
	c.why = why;
	if (store_since_query(srv->store, s->id, base.v[0].id, since_row, &c, &err) < 0)
		goto out;
	if (c.left_out) {
		more = xasprintf("%zu more new item(s), %s: boxy diff %.8s %.8s", c.left_out, why,
				 base.v[0].id, s->id);
		ev.subject = "…";
		ev.detail = more;
		bus_publish(s, &ev);
		free(more);
	}
out:
	if (err) {
		fprintf(stderr, "boxy-daemon: session %.8s: comparing with the last run: %s\n",
			s->id, err);
		free(err);
	}
	free(why);
	store_sessions_free(&me);
	store_sessions_free(&base);
}
