/*
 * daemon/bus.h — the daemon's events on their way to the store and to the
 * clients watching a session (daemon/bus.c). Above daemon/clients.h, below
 * daemon/session.h.
 */
#ifndef BOXY_BUS_H
#define BOXY_BUS_H

#include "common/event.h"
#include "daemon/daemon.h"

/* Stamp ev with the session and send it to the store and to every watcher. */
void bus_publish(struct session *s, const struct event *ev);
/* Write the events waiting for the store. */
void bus_flush(struct server *srv);
/*
 * The session's row in the store, at its start (written once boxy-init is
 * building the sandbox: nothing in the plan needs it, and boxy-init works on
 * the other core meanwhile) and at its end.
 */
void bus_session_begin(struct session *s);
void bus_session_end(struct session *s);
/* The session's frozen_ms and frozen_reason in the store as they are now (cleared when thawed). */
void bus_session_frozen(struct session *s);
/* Send ev to one watcher, or count it lost when its queue is full. */
void bus_send_event(struct client *c, const struct event *ev);

#endif
