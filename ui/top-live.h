/*
 * ui/top-live.h — `boxy top`'s lines for a running session, from the watch
 * model the daemon streams (ui/watch.h) into the top model (ui/top-model.h).
 */
#ifndef BOXY_TOP_LIVE_H
#define BOXY_TOP_LIVE_H

#include "ui/top-model.h"

struct watch_model;

/* Replace m's detail lines with w's session (live_id when w has no id yet). */
void top_live_lines(struct top_model *m, const struct watch_model *w, const char *live_id);

#endif
