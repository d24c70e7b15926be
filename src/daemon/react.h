/*
 * daemon/react.h — what a session's alerts do to it (daemon/react.c,
 * doc/react.md): log, freeze or stop, as its --on-alert says for the kind of
 * alert; and the user's decision on a frozen session (boxy resume, boxy
 * stop). Between daemon/session.c, which hands it every event of a session,
 * and daemon/bus.h, through which it records what it did.
 */
#ifndef BOXY_DAEMON_REACT_H
#define BOXY_DAEMON_REACT_H

#include <stdbool.h>

#include "common/event.h"

struct session;

/*
 * ev was just published for s (refusal: it was one of the session's
 * refusals). An alert — verdict "alert", or a tripwire's — gets its kind's
 * action, unless it was acted on when it was raised (ev->reacted: the broker
 * hands an alert whose event waits for attribution here at once, unsent);
 * the --on-denials'th refusal raises an alert of kind "denials".
 */
void react_event(struct session *s, const struct event *ev, bool refusal);

/*
 * Resume a frozen session: its processes continue, its network is let go.
 * log_only: from now on its alerts are logged only (the user judged the run).
 * Returns the words for the user (malloc'd); NULL with *err when it is not
 * frozen.
 */
char *react_resume(struct session *s, bool log_only, char **err);

#endif
