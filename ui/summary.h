/*
 * summary.h — the end of a run, for the person who started it: what was
 * refused, grouped, red on a terminal, with the flag that would allow it.
 */
#ifndef BOXY_SUMMARY_H
#define BOXY_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/refusals.h"

#define SUMMARY_ROWS_MAX 10     /* groups printed; the rest are counted */

/*
 * Print t's refusals to out ("boxy: N refused" and one line per group, the
 * most frequent first), nothing when there were none. Every string passes
 * the screen sanitizer. color: red, as refusals are everywhere in boxy.
 * id names the session for "boxy show ID" when rows were left out (may be NULL).
 */
void summary_print_refusals(FILE *out, const struct refusals *t, bool color, const char *id);

/* s sanitized and cut to max characters (UTF-8, never inside one) with an ellipsis. malloc'd. */
char *summary_cut(const char *s, size_t max);

#endif
