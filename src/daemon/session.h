/*
 * daemon/session.h — the daemon's sessions (daemon/session.c): the requests
 * that start, attach to, stop and watch one, a client's terminal input,
 * finding and freeing them. Above daemon/bus.h, below daemon/server.c.
 */
#ifndef BOXY_SESSION_H
#define BOXY_SESSION_H

#include "daemon/daemon.h"
#include "proto/msg.h"

void session_handle_run(struct client *c, const struct msg *m);
void session_handle_attach(struct client *c, const struct msg *m);
void session_handle_stop(struct client *c, const struct msg *m);
void session_handle_watch(struct client *c, const struct msg *m);
/* MSG_RESUME (daemon/react.h does the work). */
void session_handle_resume(struct client *c, const struct msg *m);
/* MSG_GATE: record that an ended run's CI gate failed (doc/ci.md). */
void session_handle_gate(struct client *c, const struct msg *m);
/* MSG_INPUT, MSG_WINSIZE or MSG_DETACH from an attached or running client. */
void session_client_input(struct client *c, const struct msg *m);
/* The running session whose id starts with prefix (the only one when NULL); NULL with *err. */
struct session *session_find(struct server *srv, const char *prefix, char **err);
void session_free(struct session *s);
/* MSG_SNAPSHOT to one client: counters, destinations, refusals. */
void session_snapshot(struct session *s, struct client *to);

#endif
