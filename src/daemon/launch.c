/*
 * daemon/launch.c — waiting for boxy-init's report on the loop, not in it
 * (see daemon/launch.h).
 *
 * Three events end a launch, in any order the loop delivers them: the report
 * pipe becomes readable (a record, or EOF when boxy-init died), and
 * boxy-init's wait status. "ready" starts the session at once; if the
 * payload was so quick that boxy-init's exit came first, that exit is
 * replayed right after. A failed report waits for the exit (the line may
 * need it: "killed by signal 9 before reporting"), then fails the session
 * as a synchronous start did.
 */
#include <config.h>

#include <fcntl.h>
#include <stdlib.h>

#include "common/lang.h"
#include "common/util.h"
#include "daemon/launch.h"
#include "daemon/clients.h"
#include "daemon/session.h"
#include "sandbox/assemble.h"

/* A failed start whose report and exit are both in: the session ends as a failure. */
static void launch_fail(struct session *s)
{
	struct session_launch *l = &s->launch;
	struct client *c = l->client;
	char *err = l->err;
	locale_t old;

	l->err = NULL;
	l->client = NULL;
	/* Not recorded, only told (session_run_failed): in the client's language. */
	old = lang_use(s->lang);
	sandbox_launch_reaped(s->sb, l->status, &err);
	session_run_failed(s, c, err);
	lang_use(old);
}

/* The report pipe is readable: take the record. */
static void launch_report_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct session *s = w->data;
	struct session_launch *l = &s->launch;
	struct client *c;
	char *tailnet;
	int rc;

	(void)revents;
	rc = sandbox_launch_report(s->sb, &s->rs, &l->err);
	if (rc > 0)
		return;
	ev_io_stop(loop, w);
	l->active = false;
	if (rc < 0) {
		l->failed = true;
		if (l->exited)
			launch_fail(s);
		return;
	}
	c = l->client;
	tailnet = l->tailnet;
	l->client = NULL;
	l->tailnet = NULL;
	session_run_started(s, c, l->tty, tailnet);
	free(tailnet);
	/* boxy-init and its payload were done before the report was read. */
	if (l->exited)
		session_child_exited(s, l->status);
}

/* Watch the report; see daemon/launch.h. */
void session_launch_begin(struct session *s, struct client *c, bool tty, char *tailnet)
{
	struct session_launch *l = &s->launch;
	int fd = sandbox_launch_fd(s->sb);

	l->active = true;
	l->client = c;
	l->tty = tty;
	l->tailnet = tailnet;
	if (c) {
		c->role = CLIENT_RUN;
		c->session = NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	ev_io_init(&l->report_w, launch_report_ready, fd, EV_READ);
	l->report_w.data = s;
	ev_io_start(s->srv->loop, &l->report_w);
}

/* boxy-init's status during a launch; see daemon/launch.h. */
bool session_launch_child(struct session *s, int status)
{
	struct session_launch *l = &s->launch;

	if (!l->active && !l->failed)
		return false;
	ev_child_stop(s->srv->loop, &s->child_w);
	l->exited = true;
	l->status = status;
	/* Still active: the pipe's EOF (or the record before it) is on its way. */
	if (l->failed)
		launch_fail(s);
	return true;
}

/* Forget a client that left while its sandbox was being built; see daemon/launch.h. */
void session_launch_client_gone(struct client *c)
{
	for (struct session *s = c->srv->sessions; s; s = s->next)
		if (s->launch.client == c)
			s->launch.client = NULL;
}

/* Stop and free; see daemon/launch.h. */
void session_launch_end(struct session *s)
{
	ev_io_stop(s->srv->loop, &s->launch.report_w);
	free(s->launch.tailnet);
	free(s->launch.err);
	s->launch.tailnet = s->launch.err = NULL;
	s->launch.active = s->launch.failed = false;
}
