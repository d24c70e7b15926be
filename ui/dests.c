/*
 * ui/dests.c — the table `boxy run` prints at the end of a run that made
 * connections, from the daemon's last MSG_SNAPSHOT (see dests.h):
 *
 *   boxy: network destinations (3)
 *     DESTINATION        CONNS  DENIED  ADDRS  SENT  RECEIVED
 *     registry.npmjs.org 12     0       2      1.2K  30M
 *
 * the busiest NET_SUMMARY_ROWS and the rest summed in one line, then the
 * refusals (summary.c). Every name passes the screen sanitizer.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "ui/dests.h"
#include "ui/summary.h"
#include "ui/watch.h"
#include "common/util.h"

/* Most connections first; the snapshot's order among equals. */
static int dest_by_conns(const void *x, const void *y)
{
	const struct watch_dest *const *a = x, *const *b = y;

	if ((*a)->conns != (*b)->conns)
		return (*a)->conns > (*b)->conns ? -1 : 1;
	return *a < *b ? -1 : *a > *b;
}

/* The destinations table and the refusals from a snapshot payload; -1 if malformed. */
int net_summary_print(FILE *out, const void *snapshot, size_t len)
{
	static const char *const head[] = {
		"DESTINATION", "CONNS", "DENIED", "ADDRS", "SENT", "RECEIVED",
	};
	struct watch_model m;
	size_t w[6], shown;
	char ***cells;
	const struct watch_dest **order;
	uint64_t more_conns = 0, more_denied = 0;

	watch_model_init(&m);
	if (watch_model_snapshot(&m, snapshot, len) < 0) {
		watch_model_free(&m);
		return -1;
	}
	if (!m.ndests) {
		refusals_merge_unfixable(&m.refusals);
		summary_print_refusals(out, &m.refusals, color_wanted(fileno(out)), m.id);
		watch_model_free(&m);
		return 0;
	}
	/*
	 * A flood of distinct addresses made a table of a thousand lines: past
	 * NET_SUMMARY_ROWS the busiest are shown and the rest summed in one line
	 * (boxy show and the store's destinations view have every one).
	 */
	order = xcalloc(m.ndests, sizeof(*order));
	for (size_t i = 0; i < m.ndests; i++)
		order[i] = &m.dests[i];
	shown = m.ndests;
	if (m.ndests > NET_SUMMARY_ROWS) {
		qsort(order, m.ndests, sizeof(*order), dest_by_conns);
		shown = NET_SUMMARY_ROWS;
		for (size_t i = shown; i < m.ndests; i++) {
			more_conns += order[i]->conns;
			more_denied += order[i]->denied;
		}
	}
	for (size_t c = 0; c < 6; c++)
		w[c] = strlen(head[c]);
	cells = xcalloc(shown, sizeof(*cells));
	for (size_t i = 0; i < shown; i++) {
		const struct watch_dest *d = order[i];
		char a[32], b[32];

		cells[i] = xcalloc(6, sizeof(char *));
		cells[i][0] = watch_sanitize(d->name);
		cells[i][1] = xasprintf("%llu", (unsigned long long)d->conns);
		cells[i][2] = xasprintf("%llu", (unsigned long long)d->denied);
		cells[i][3] = xasprintf("%llu", (unsigned long long)d->addrs);
		cells[i][4] = xstrdup(format_size(d->sent, a, sizeof(a)));
		cells[i][5] = xstrdup(format_size(d->received, b, sizeof(b)));
		for (size_t c = 0; c < 6; c++)
			if (strlen(cells[i][c]) > w[c])
				w[c] = strlen(cells[i][c]);
	}
	/* The specification's layout: two spaces in, two between columns, the last unpadded. */
	fprintf(out, _("\nboxy: network destinations (%zu)\n "), m.ndests);
	for (size_t c = 0; c < 6; c++)
		fprintf(out, " %s%-*s", c ? " " : "", c == 5 ? 0 : (int)w[c], head[c]);
	fputc('\n', out);
	for (size_t i = 0; i < shown; i++) {
		fputc(' ', out);
		for (size_t c = 0; c < 6; c++) {
			fprintf(out, " %s%-*s", c ? " " : "", c == 5 ? 0 : (int)w[c], cells[i][c]);
			free(cells[i][c]);
		}
		fputc('\n', out);
		free(cells[i]);
	}
	if (shown < m.ndests)
		fprintf(out, ngettext("  … and %zu more destination: %llu connections, %llu denied "
				      "(boxy show lists it)\n",
				      "  … and %zu more destinations: %llu connections, %llu denied "
				      "(boxy show lists them)\n", m.ndests - shown), m.ndests - shown,
			(unsigned long long)more_conns, (unsigned long long)more_denied);
	free(cells);
	free(order);
	refusals_merge_unfixable(&m.refusals);
	summary_print_refusals(out, &m.refusals, color_wanted(fileno(out)), m.id);
	watch_model_free(&m);
	return 0;
}
