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

/* One new item, as store_since_query gave it. */
struct since_item {
	char *kind, *subject, *detail;
	bool shown;
};

struct since_ctx {
	struct since_item *v;
	size_t n;
};

/* Keep every row: which are shown is decided once all are known (since_pick). */
static void since_row(void *arg, int ncol, const char *const *v)
{
	struct since_ctx *c = arg;
	struct since_item *it;

	if (ncol < 4 || !v[0] || !v[1])
		return;
	it = xappend(&c->v, &c->n, sizeof(*c->v));
	it->kind = xstrdup(v[0]);
	it->subject = xstrdup(v[1]);
	it->detail = xstrdup(v[2] ? v[2] : "");
	it->shown = false;
}

/* Do items a and b say the same kind of thing (kind, and detail up to its first digit)? */
static bool same_kind(const struct since_item *a, const struct since_item *b, bool by_detail)
{
	size_t n = event_reason_kind_len(a->detail);

	return strcmp(a->kind, b->kind) == 0 &&
	       (!by_detail || (n == event_reason_kind_len(b->detail) &&
			       strncmp(a->detail, b->detail, n) == 0));
}

/*
 * Which items are shown, SINCE_EVENTS_MAX at most. The query's order puts the
 * many before the few, which a payload sets by repeating decoys: so first the
 * first item of each kind (a destination, a refusal, a finding), then the first
 * of each kind of words (25 refused ports of one host are one), then the rest
 * in order. Returns how many are left out.
 */
static size_t since_pick(struct since_ctx *c)
{
	size_t shown = 0;

	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < c->n && shown < SINCE_EVENTS_MAX; i++) {
			bool first = true;

			if (c->v[i].shown)
				continue;
			for (size_t j = 0; j < i && first && pass < 2; j++)
				first = !(c->v[j].shown && same_kind(&c->v[i], &c->v[j], pass == 1));
			if (first) {
				c->v[i].shown = true;
				shown++;
			}
		}
	}
	return c->n - shown;
}

/* The shown items → events, in the query's order. */
static void since_publish(struct session *s, const struct since_ctx *c, const char *why)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct since_item *it = &c->v[i];
		struct event ev = { .kind = "audit", .verdict = "new", .layer = "since" };
		char *detail;

		if (!it->shown)
			continue;
		if (strcmp(it->kind, "destination") == 0 || strcmp(it->kind, "package") == 0)
			detail = xasprintf("%s, %s", *it->detail ? it->detail : "new", why);
		else
			detail = xasprintf("new %s (%s), %s", it->kind, it->detail, why);
		ev.what = it->kind;     /* "destination", "package", "refusal", "finding": the gate
					 * reads this */
		ev.subject = it->subject;
		ev.detail = detail;
		bus_publish(s, &ev);
		free(detail);
	}
}

void since_report(struct session *s)
{
	struct server *srv = s->srv;
	struct store_sessions me = { 0 }, base = { 0 };
	struct since_ctx c = { 0 };
	struct event ev = { .kind = "audit", .verdict = "new", .layer = "since" };
	char *err = NULL, *why = NULL, *more;
	size_t left_out;
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
	if (store_since_query(srv->store, s->id, base.v[0].id, since_row, &c, &err) < 0)
		goto out;
	left_out = since_pick(&c);
	since_publish(s, &c, why);
	if (left_out) {
		more = xasprintf("%zu more new %s, %s: boxy diff %.8s %.8s", left_out,
				 left_out == 1 ? "item" : "items", why,
				 base.v[0].id, s->id);
		ev.subject = "…";
		ev.detail = more;
		ev.what = "more";
		bus_publish(s, &ev);
		free(more);
	}
out:
	if (err) {
		fprintf(stderr, "boxy-daemon: session %.8s: comparing with the last run: %s\n",
			s->id, err);
		free(err);
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.v[i].kind);
		free(c.v[i].subject);
		free(c.v[i].detail);
	}
	free(c.v);
	free(why);
	store_sessions_free(&me);
	store_sessions_free(&base);
}
