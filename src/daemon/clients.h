/*
 * daemon/clients.h — a client of the daemon's socket, as the files above it
 * see one: frames queued for it without ever blocking, its end, and how it
 * is bound to a session (attached, running or watching). The lowest of the
 * daemon's files (daemon/daemon.h draws the line).
 */
#ifndef BOXY_CLIENTS_H
#define BOXY_CLIENTS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/daemon.h"

/* Queue a frame for c and write what its socket takes now. */
void client_send(struct client *c, uint16_t type, const void *p, size_t len);
/* Write c's queue as far as its socket takes it; the rest waits for EV_WRITE. */
void client_flush(struct client *c);
/* MSG_ERROR with an exit code and printf-style words. */
void client_send_error(struct client *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Mark c dead (unbound from its session); the loop frees it. */
void client_kill(struct client *c);
/* Clients watching a session; sessions running. */
size_t server_nsubscribers(const struct server *srv);
size_t server_nrunning(const struct server *srv);

/* The client leaves its session (which reads its terminal again if it had stopped). */
void session_client_gone(struct client *c);
/* Read the session's terminal again: its attached client's queue has drained. */
void session_resume_output(struct session *s);

#endif
