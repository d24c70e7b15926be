/*
 * summary.c — what a run was refused, as `boxy run` prints it at the end
 * (see summary.h).
 *
 *   boxy: 3 refused
 *     other.example.test     2  net.dns  hostname not on the allowlist  fix: --allow-host other.example.test  by curl … (pid 7)
 *     169.254.169.254:80     1  net.ip   link-local / cloud metadata  by postinstall of evil-pkg@1.2.3 (node, pid 812)
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "ui/summary.h"
#include "common/util.h"
#include "ui/watch.h"

#define SUBJECT_MAX 48          /* wider subjects are cut with an ellipsis */

/* Most frequent first; ties in the order they were first seen. */
static int by_count(const void *a, const void *b)
{
	const struct refusal_group *const *x = a, *const *y = b;

	if ((*x)->count != (*y)->count)
		return (*x)->count < (*y)->count ? 1 : -1;
	return *x < *y ? -1 : *x > *y;
}

/*
 * Put the rows that will be shown first in rows[0..shown): the most frequent
 * of every kind of refusal, then the rest by count — so decoys a payload got
 * refused a hundred times cannot push the one attempt that matters (the
 * metadata address, dialled once) out of the summary. rows stays sorted by
 * count within the shown part and within the rest.
 */
static void pick_kinds_first(const struct refusal_group **rows, size_t n, size_t shown)
{
	const struct refusal_group **out = xcalloc(n ? n : 1, sizeof(*out));
	bool *taken = xcalloc(n ? n : 1, sizeof(*taken));
	size_t k = 0;

	for (size_t i = 0; i < n && k < shown; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = taken[j] && refusal_same_kind(rows[j], rows[i]);
		if (!seen) {
			taken[i] = true;
			k++;
		}
	}
	for (size_t i = 0; i < n && k < shown; i++) {
		if (!taken[i]) {
			taken[i] = true;
			k++;
		}
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (taken[i])
			out[k++] = rows[i];
	for (size_t i = 0; i < n; i++)
		if (!taken[i])
			out[k++] = rows[i];
	memcpy(rows, out, n * sizeof(*rows));
	free(out);
	free(taken);
}

/* s sanitized and cut to max characters, never inside one (UTF-8), with an ellipsis. */
static char *cell(const char *s, size_t max)
{
	char *clean = watch_sanitize(s), *out;
	size_t chars = 0, cut = 0;

	for (size_t i = 0; clean[i]; i++) {
		if (((unsigned char)clean[i] & 0xc0) == 0x80)
			continue;               /* a continuation byte: same character */
		if (chars == max - 1)
			cut = i;                /* where the ellipsis goes if the text is longer */
		if (++chars > max) {
			out = xasprintf("%.*s…", (int)cut, clean);
			free(clean);
			return out;
		}
	}
	return clean;
}

void summary_print_refusals(FILE *out, const struct refusals *t, bool color, const char *id)
{
	const struct refusal_group **rows;
	size_t shown, wsub = 0, wlay = 0, wcnt = 0;
	uint64_t left = t->other;
	const char *red = color ? "\x1b[31m" : "", *off = color ? "\x1b[0m" : "";

	if (!t->total)
		return;
	rows = xcalloc(t->n ? t->n : 1, sizeof(*rows));
	for (size_t i = 0; i < t->n; i++)
		rows[i] = &t->v[i];
	qsort(rows, t->n, sizeof(*rows), by_count);
	shown = t->n < SUMMARY_ROWS_MAX ? t->n : SUMMARY_ROWS_MAX;
	pick_kinds_first(rows, t->n, shown);
	for (size_t i = 0; i < shown; i++) {
		char n[24];
		size_t l = strlen(rows[i]->subject), ly = strlen(rows[i]->layer);

		wsub = l > wsub ? (l > SUBJECT_MAX ? SUBJECT_MAX : l) : wsub;
		wlay = ly > wlay ? (ly > 16 ? 16 : ly) : wlay;
		snprintf(n, sizeof(n), "%llu", (unsigned long long)rows[i]->count);
		wcnt = strlen(n) > wcnt ? strlen(n) : wcnt;
	}
	for (size_t i = shown; i < t->n; i++)
		left += rows[i]->count;
	fprintf(out, ngettext("\n%sboxy: %llu refused%s\n", "\n%sboxy: %llu refused%s\n", t->total),
		red, (unsigned long long)t->total, off);
	for (size_t i = 0; i < shown; i++) {
		char *sub = cell(rows[i]->subject, SUBJECT_MAX), *lay = cell(rows[i]->layer, 16);
		const char *hint = strstr(rows[i]->reason, " (to allow it: ");
		char *reason = hint ? xstrndup(rows[i]->reason, (size_t)(hint - rows[i]->reason)) :
			       xstrdup(rows[i]->reason);
		char *why = cell(reason, 200), *fix = refusal_fix(rows[i]), *cfix = NULL;

		free(reason);     /* the fix is shown on its own, not twice */

		char *by = rows[i]->who ? cell(rows[i]->who, 120) : NULL;

		if (fix)
			cfix = watch_sanitize(fix);
		fprintf(out, "%s  %-*s  %*llu  %-*s  %s%s%s%s%s%s%s\n", red, (int)wsub, sub, (int)wcnt,
			(unsigned long long)rows[i]->count, (int)wlay, lay, why,
			cfix ? _("  fix: ") : "", cfix ? cfix : "", by ? "  by " : "", by ? by : "",
			by && rows[i]->who_more ? _(" and others") : "", off);
		free(by);
		free(sub);
		free(lay);
		free(why);
		free(fix);
		free(cfix);
	}
	if (left && id)
		fprintf(out, ngettext("%s  … and %llu more (boxy show %s)%s\n",
				      "%s  … and %llu more (boxy show %s)%s\n", left),
			red, (unsigned long long)left, id, off);
	else if (left)
		fprintf(out, ngettext("%s  … and %llu more%s\n", "%s  … and %llu more%s\n", left), red,
			(unsigned long long)left, off);
	free(rows);
}

char *summary_cut(const char *s, size_t max)
{
	return cell(s, max);
}
