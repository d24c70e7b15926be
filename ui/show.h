/*
 * show.h — `boxy show` for people: one session on about one screen
 * (command, workdir, profile, network policy, how each limit was enforced,
 * exit and duration, the busiest destinations, the refusals grouped with
 * their fix, git findings), and the full record with --events.
 */
#ifndef BOXY_SHOW_H
#define BOXY_SHOW_H

#include <stdbool.h>
#include <stdio.h>

#include "store/store.h"

#define SHOW_DESTS_MAX 6        /* destinations printed (a 24-line screen holds the rest of the view); the rest summed */

/* The concise view of session s. color: refusals in red (color_wanted()). -1: err. */
int show_print(FILE *out, struct store *st, const struct store_session *s, bool color,
	       char **err);

/* Every row recorded for s, time-ordered, with t_rel_ms. -1: err. */
int show_print_events(FILE *out, struct store *st, const struct store_session *s, char **err);

#endif
