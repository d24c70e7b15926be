/*
 * daemon/launch.h — a sandbox's start off the daemon's loop.
 *
 * boxy-init builds the sandbox (mounts, the hard-link walk, Landlock,
 * seccomp) while the daemon waits for its one report record. That wait used
 * to block the loop every session's broker, every `boxy daemon status` and
 * every other start shares: 8–15 ms a start, 250 ms and more in a large
 * tree (tests/e2e/git-loop.sh). Now the daemon launches (sandbox_launch),
 * watches the report pipe with an ev_io, and goes on serving; the session
 * becomes a running one (session_run_started) or a failed one
 * (session_run_failed) when boxy-init has reported — and, for a failed
 * start, has been reaped through the session's own child watcher, which is
 * started before the report is read because libev's SIGCHLD handler reaps
 * every child it sees (a status it had no watcher for would be lost).
 */
#ifndef BOXY_DAEMON_LAUNCH_H
#define BOXY_DAEMON_LAUNCH_H

#include <ev.h>
#include <stdbool.h>

struct client;
struct session;

/* What a session keeps while boxy-init assembles its sandbox. */
struct session_launch {
	ev_io report_w;             /* boxy-init's report pipe */
	bool active;                /* the report has not been read yet */
	bool failed;                /* it said a stage failed (or nothing): waiting for the exit */
	bool exited;                /* boxy-init's wait status came while launching */
	int status;                 /* that status */
	struct client *client;      /* who asked, until it goes (then NULL) */
	bool tty;                   /* a terminal run: the client becomes the attached one */
	char *tailnet;              /* --tailscale's suffix, for the network's start */
	char *err;                  /* a failed start's line */
};

/*
 * The sandbox is launched (s->sb, s->pid, the child watcher started): watch
 * its report. Takes tailnet (may be NULL). The client waits in role
 * CLIENT_RUN with no session, so nothing it sends reaches the session and
 * nothing of the session's reaches it before MSG_STARTED.
 */
void session_launch_begin(struct session *s, struct client *c, bool tty, char *tailnet);

/*
 * From the session's child watcher: true when the status belongs to the
 * launch (boxy-init died or exited before its report was taken, or after a
 * failed one), which then handles it.
 */
bool session_launch_child(struct session *s, int status);

/* The client went away: no session's start will answer it. */
void session_launch_client_gone(struct client *c);

/* From session_free: stop watching, free what the launch held. */
void session_launch_end(struct session *s);

/* In daemon/session.c, called from here: the two ends of a start. */
void session_run_started(struct session *s, struct client *c, bool tty, const char *tailnet);
void session_run_failed(struct session *s, struct client *c, char *err);
/* The session's init exited with wait status st (the child watcher's work). */
void session_child_exited(struct session *s, int st);

#endif
