/*
 * ui/top-live.c — `boxy top`'s view of a running session: the watch model
 * (what the daemon streams) as the session view's lines, the header, the
 * destinations, what was refused with its fix, and the recent events. The
 * lines go into the top model; ui/top-view.c lays them out, ui/top.c draws.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "proto/refusals.h"
#include "ui/top-live.h"
#include "ui/watch.h"
#include "common/util.h"

/* The watch model as the session view's lines: header, destinations, what was refused, recent. */
void top_live_lines(struct top_model *m, const struct watch_model *w, const char *live_id)
{
	char buf[512], a[32], b[32], *totals;

	top_model_clear_detail(m);
	snprintf(buf, sizeof(buf), _("session %.16s  %s  %.1fs  %s"), w->id ? w->id : live_id,
		 w->state ? w->state : "running", (double)w->elapsed_ms / 1000.0,
		 w->cmdline ? w->cmdline : "");
	top_model_detail_add(m, buf, TOP_A_BOLD);
	totals = watch_totals_line(w->ndests, w->conns, w->denied);
	snprintf(buf, sizeof(buf), _("%s   up %s  down %s"), totals, format_size(w->up, a, sizeof(a)),
		 format_size(w->down, b, sizeof(b)));
	free(totals);
	top_model_detail_add(m, buf, w->denied ? TOP_A_RED : 0);
	if (w->lost) {
		snprintf(buf, sizeof(buf), ngettext("(this screen fell behind: %llu event lost; the "
						    "totals are the daemon's)",
						    "(this screen fell behind: %llu events lost; the "
						    "totals are the daemon's)", w->lost),
			 (unsigned long long)w->lost);
		top_model_detail_add(m, buf, TOP_A_DIM);
	}
	if (w->nalerts) {
		top_model_detail_add(m, "", 0);
		top_model_detail_add(m, "ALERTS: act on these", TOP_A_RED | TOP_A_BOLD);
		for (size_t i = 0; i < w->nalerts; i++)
			top_model_detail_add(m, w->alerts[i].text, TOP_A_RED | TOP_A_BOLD);
		if (w->more_alerts) {
			snprintf(buf, sizeof(buf), "… and %llu more alert(s)",
				 (unsigned long long)w->more_alerts);
			top_model_detail_add(m, buf, TOP_A_RED);
		}
	}
	top_model_detail_add(m, "", 0);
	snprintf(buf, sizeof(buf), "  %-34s %6s %6s %5s %10s %10s", "DESTINATION", "CONNS", "DENIED",
		 "ADDRS", "SENT", "RECEIVED");
	top_model_detail_add(m, buf, TOP_A_REVERSE);
	for (size_t i = 0; i < w->ndests; i++) {
		const struct watch_dest *x = &w->dests[i];

		snprintf(buf, sizeof(buf), "  %-34.200s %6llu %6llu %5llu %10s %10s", x->name,
			 (unsigned long long)x->conns, (unsigned long long)x->denied,
			 (unsigned long long)x->addrs, format_size(x->sent, a, sizeof(a)),
			 format_size(x->received, b, sizeof(b)));
		top_model_detail_add(m, buf, x->denied && x->denied == x->conns ? TOP_A_RED : 0);
	}
	if (w->refusals.total) {
		top_model_detail_add(m, "", 0);
		snprintf(buf, sizeof(buf), "REFUSED (%llu)", (unsigned long long)w->refusals.total);
		top_model_detail_add(m, buf, TOP_A_RED | TOP_A_BOLD);
		for (size_t i = 0; i < w->refusals.n; i++) {
			const struct refusal_group *g = &w->refusals.v[i];
			char *fix = refusal_fix(g);

			snprintf(buf, sizeof(buf), "  %-34.200s %5llu  %-8.32s %.200s%s%.100s%s%.200s%s",
				 g->subject, (unsigned long long)g->count, g->layer, g->reason,
				 fix ? _("  fix: ") : "", fix ? fix : "", g->who ? "  by " : "",
				 g->who ? g->who : "", g->who && g->who_more ? _(" and others") : "");
			top_model_detail_add(m, buf, TOP_A_RED);
			free(fix);
		}
	}
	top_model_detail_add(m, "", 0);
	top_model_detail_add(m, "RECENT", TOP_A_BOLD);
	for (size_t i = 0; i < w->nrecent; i++) {
		size_t at = (w->recent_next + WATCH_RECENT - w->nrecent + i) % WATCH_RECENT;

		top_model_detail_add(m, w->recent[at].text,
				     w->recent[at].alert ? TOP_A_RED | TOP_A_BOLD :
				     w->recent[at].deny ? TOP_A_RED : 0);
	}
}
