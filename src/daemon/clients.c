/*
 * daemon/clients.c — a client's output and its end (daemon/clients.h): frames
 * queued on its outq (proto/outq.h) and written as its socket takes them,
 * never blocking the loop; a dead client is only marked here, and freed
 * by daemon/server.c's loop outside the callback that found it dead.
 */
#include <config.h>

#include <stdarg.h>
#include <stdlib.h>

#include "common/util.h"
#include "daemon/clients.h"
#include "daemon/launch.h"
#include "proto/daemon-msg.h"
#include "proto/outq.h"

/* Clients watching a session. */
size_t server_nsubscribers(const struct server *srv)
{
	size_t n = 0;

	for (const struct client *c = srv->clients; c; c = c->next)
		n += c->role == CLIENT_WATCHING;
	return n;
}

/* Sessions still running. */
size_t server_nrunning(const struct server *srv)
{
	size_t n = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		n += s->running;
	return n;
}

/* Write what the client's queue holds without blocking; the rest waits for EV_WRITE. */
void client_flush(struct client *c)
{
	if (outq_flush(&c->out, c->fd) < 0) {
		client_kill(c);
		return;
	}
	if (c->outq) {
		ev_io_start(c->srv->loop, &c->ww);
	} else {
		ev_io_stop(c->srv->loop, &c->ww);
		if (c->role == CLIENT_ATTACHED && c->session)
			session_resume_output(c->session);
	}
	/* Its replies are read again: so are its requests (see client_readable). */
	if (c->read_paused && c->outq_bytes < CLIENT_OUTQ_MAX && c->role != CLIENT_DEAD) {
		c->read_paused = false;
		ev_io_start(c->srv->loop, &c->rw);
	}
}

/*
 * Queue a frame. Never blocks: the daemon must not stall on a slow client.
 * Frames other than events are always queued; events (MSG_EVENT, MSG_SNAPSHOT)
 * are dropped and counted when the queue is full — daemon/bus.c decides that
 * (never a finding sent to the client that runs the session, nor a session's
 * last snapshot: the gate judges them).
 */
void client_send(struct client *c, uint16_t type, const void *p, size_t len)
{
	if (c->role == CLIENT_DEAD)
		return;
	outq_push(&c->out, type, p, len, -1);
	client_flush(c);
}

/* MSG_ERROR with printf-style words. */
void client_send_error(struct client *c, int code, const char *fmt, ...)
{
	struct wbuf w;
	va_list ap;
	char *words;

	va_start(ap, fmt);
	words = xvasprintf(fmt, ap);
	va_end(ap);
	wbuf_init(&w);
	dmsg_encode_error(&w, (uint16_t)code, words);
	client_send(c, MSG_ERROR, w.p, w.len);
	wbuf_free(&w);
	free(words);
}

/* Mark a client dead; it is unlinked and freed from the prepare watcher. */
void client_kill(struct client *c)
{
	if (c->role == CLIENT_DEAD)
		return;
	session_client_gone(c);
	c->role = CLIENT_DEAD;
	ev_io_stop(c->srv->loop, &c->rw);
	ev_io_stop(c->srv->loop, &c->ww);
	ev_prepare_start(c->srv->loop, &c->srv->reap_w);
}

/* The client leaves its session; an attached one's going lets the terminal be read again. */
void session_client_gone(struct client *c)
{
	struct session *s = c->session;

	session_launch_client_gone(c);      /* a start it was waiting for forgets it */
	if (!s)
		return;
	if (s->attached == c)
		s->attached = NULL;
	if (s->runner == c)
		s->runner = NULL;
	c->session = NULL;
	session_resume_output(s);
}

/* Called when an attached client's queue has drained (client_flush) or it left. */
void session_resume_output(struct session *s)
{
	if (s->pty >= 0 && s->running)
		ev_io_start(s->srv->loop, &s->pty_w);
}

