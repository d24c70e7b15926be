/*
 * daemon/session.c — a run owned by the daemon: started from a client's request
 * with the client's environment, working directory and descriptors (never
 * the daemon's), watched to its end, recorded, and reachable from other
 * clients (attach, stop, watch) while it runs.
 *
 * Terminal runs get a pty the daemon owns: the client relays its terminal
 * to it, and can leave (Ctrl-] on the client side) without ending the run;
 * output produced while nobody is attached is kept in a ring for the next
 * attach. A run is a terminal run when any of the client's fds 0-2 is a
 * terminal: the pty's slave takes the place of each terminal one, so the
 * payload never holds a descriptor of the caller's terminal. The client's
 * other descriptors are given to the payload as they are, so `boxy run --
 * cmd <in >out 2>err` behaves exactly like `cmd <in >out 2>err`, EOF
 * included, with no relay in between.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <termios.h>
#include <unistd.h>

#include "daemon/audit.h"
#include "daemon/journal.h"
#include "daemon/launch.h"
#include "daemon/lockfile.h"
#include "common/lang.h"
#include "daemon/react.h"
#include "common/path-guard.h"
#include "proto/msg-run.h"
#include "sandbox/assemble.h"
#include "daemon/bus.h"
#include "daemon/clients.h"
#include "daemon/session.h"
#include "daemon/session-attrib.h"
#include "daemon/session-log.h"
#include "daemon/session-net.h"
#include "proto/daemon-msg.h"
#include "daemon/since.h"
#include "common/util.h"
#include "proto/wire.h"
#include "spec/values.h"
#include "store/store.h"

/*
 * Events from the sandbox, its network and its git watch go to the bus, then
 * to the reaction (daemon/react.h), which acts on alerts and counts refusals.
 */
static void session_emit(void *ctx, const struct event *ev)
{
	struct session *s = ctx;
	uint64_t refused = s->refusals.total;

	bus_publish(s, ev);
	react_event(s, ev, s->refusals.total > refused);
}

static void new_id(char out[SESSION_ID_LEN + 1])
{
	uint8_t b[SESSION_ID_LEN / 2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		fatal_errno("getrandom");
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

struct session *session_find(struct server *srv, const char *prefix, char **err)
{
	struct session *found = NULL;
	size_t n = 0;

	for (struct session *s = srv->sessions; s; s = s->next) {
		if (!prefix || strncmp(s->id, prefix, strlen(prefix)) == 0) {
			found = s;
			n++;
		}
	}
	if (n == 1)
		return found;
	if (n == 0)
		set_err(err, prefix ? _("no running session '%s'") : _("no session is running"),
			prefix);
	else if (prefix)
		set_err(err, _("session id '%s' is ambiguous: it matches %zu sessions"), prefix, n);
	else
		set_err(err, _("%zu sessions are running: name one (boxy ps)"), n);
	return NULL;
}

void session_free(struct session *s)
{
	ev_child_stop(s->srv->loop, &s->child_w);
	ev_timer_stop(s->srv->loop, &s->timeout_w);
	ev_timer_stop(s->srv->loop, &s->grace_w);
	ev_timer_stop(s->srv->loop, &s->resume_w);
	ev_io_stop(s->srv->loop, &s->gitcheck_w);
	ev_io_stop(s->srv->loop, &s->trip_w);
	session_launch_end(s);
	if (s->pty >= 0) {
		ev_io_stop(s->srv->loop, &s->pty_w);
		close(s->pty);
	}
	session_log_close(s->log);
	refusals_free(&s->refusals);
	session_net_end(s);
	session_net_ca_free(s);
	session_attrib_end(s);
	if (s->sb)
		sandbox_free(s->sb);
	audit_log_free(s->audit);
	runspec_free(&s->rs);
	free(s->cwd);
	free(s->lockfile);
	free(s->failure);
	free(s->failure_told);
	free(s->frozen_reason);
	for (size_t i = 0; i < s->ndests; i++) {
		free(s->dests[i].name);
		strv_free(s->dests[i].addrs);
	}
	free(s->dests);
	for (size_t i = 0; i < SESSION_RECENT; i++)
		event_copy_free(&s->recent[i]);
	for (size_t i = 0; i < s->nalerts; i++)
		event_copy_free(&s->alerts[i]);
	free(s);
}

static void unlink_session(struct session *s)
{
	for (struct session **pp = &s->srv->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			return;
		}
	}
}

/* ---- terminal ----------------------------------------------------------------- */

static void ring_put(struct session *s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t at = (s->ring_start + s->ring_len) % SESSION_RING;

		s->ring[at] = p[i];
		if (s->ring_len < SESSION_RING)
			s->ring_len++;
		else
			s->ring_start = (s->ring_start + 1) % SESSION_RING;
	}
}

/* Read what the payload wrote to its terminal; returns false at EOF/EIO. */
static bool pty_drain(struct session *s)
{
	uint8_t buf[16384];

	for (int i = 0; i < 8; i++) {
		ssize_t n = read(s->pty, buf, sizeof(buf));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0)
			return false;       /* EIO: every slave descriptor is closed */
		session_log_write(s->log, buf, (size_t)n);
		if (s->attached) {
			client_send(s->attached, MSG_OUTPUT, buf, (size_t)n);
			/* Backpressure: a slow terminal slows its own payload, like a real one. */
			if (s->attached->outq_bytes >= CLIENT_OUTQ_MAX) {
				ev_io_stop(s->srv->loop, &s->pty_w);
				return true;
			}
		} else {
			ring_put(s, buf, (size_t)n);
		}
	}
	return true;
}

static void pty_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct session *s = w->data;

	(void)revents;
	if (!pty_drain(s))
		ev_io_stop(loop, w);
}

/* MSG_STARTED: the client is now bound to session s (run, attach or watch). */
static void send_started(struct client *c, const struct session *s)
{
	struct wbuf w;

	wbuf_init(&w);
	dmsg_encode_started(&w, s->id, s->rs.raw_terminal);
	client_send(c, MSG_STARTED, w.p, w.len);
	wbuf_free(&w);
}

static void send_exit(struct client *c, int code, const char *reason)
{
	struct wbuf w;

	wbuf_init(&w);
	dmsg_encode_exit(&w, (uint32_t)code, reason);
	client_send(c, MSG_EXIT, w.p, w.len);
	wbuf_free(&w);
}

/* ---- lifecycle ---------------------------------------------------------------- */

static void session_ended(struct session *s, int status)
{
	struct server *srv = s->srv;
	struct event ev = { .kind = "session", .verdict = "exit", .layer = "session" };
	char *err = NULL, words[64];

	s->exit_code = s->timed_out ? 124 : sandbox_reap(s->sb, status, &err);
	if (err) {
		free(s->failure);
		s->failure = err;
	}
	if (session_net_failed(s))
		s->exit_code = EXIT_BOXY_FAILED;        /* stopped for it: s->failure says why */
	if (s->lang && !s->failure_told) {
		/* The same end, worded for the client that started the run (common/lang.h). */
		locale_t old = lang_use(s->lang);

		s->failure_told = sandbox_exit_words(s->sb);
		lang_use(old);
	}
	s->running = false;
	if (s->pty >= 0)
		pty_drain(s);       /* what the payload wrote last, before its terminal closed */
	snprintf(words, sizeof(words), "exit status %d%s", s->exit_code,
		 s->timed_out ? " (timeout)" : "");
	ev.subject = s->rs.argv[0];
	ev.detail = s->failure ? s->failure : words;
	session_net_end(s);     /* --net-log is complete before anyone hears of the exit */
	session_attrib_end(s);
	since_report(s);        /* what this run did that the last one did not */
	bus_publish(s, &ev);
	bus_session_end(s);
	for (struct client *c = srv->clients; c; c = c->next) {
		if (c->session != s)
			continue;
		/* The last totals: `boxy run` prints its destinations table from them. */
		session_snapshot(s, c);
		send_exit(c, s->exit_code, s->failure_told && c->lang == s->lang ? s->failure_told
										 : s->failure);
		c->session = NULL;
		c->role = CLIENT_READY;
	}
	s->attached = s->runner = NULL;
	unlink_session(s);
	session_free(s);
}

/* The after-run git check finished in its thread: the session can end. */
static void gitcheck_done(struct ev_loop *loop, ev_io *w, int revents)
{
	struct session *s = w->data;

	(void)revents;
	ev_io_stop(loop, w);
	session_ended(s, s->end_status);
}

/* The session's init exited with wait status st; see daemon/launch.h. */
void session_child_exited(struct session *s, int st)
{
	struct ev_loop *loop = s->srv->loop;
	int fd;

	/* The git walks take as long as the tree is big: off the loop, the session
	 * ending when they are done (issue 8, item 15). */
	ev_child_stop(loop, &s->child_w);
	ev_timer_stop(loop, &s->timeout_w);
	ev_timer_stop(loop, &s->grace_w);
	ev_io_stop(loop, &s->trip_w);   /* sandbox_reap emits what the decoys' watch saw last */
	fd = sandbox_gitcheck_start(s->sb);
	if (fd < 0) {
		session_ended(s, st);
		return;
	}
	s->end_status = st;
	ev_io_init(&s->gitcheck_w, gitcheck_done, fd, EV_READ);
	s->gitcheck_w.data = s;
	ev_io_start(loop, &s->gitcheck_w);
}

static void child_exited(struct ev_loop *loop, ev_child *w, int revents)
{
	struct session *s = w->data;

	(void)loop;
	(void)revents;
	/* While boxy-init still assembles the sandbox, its exit is the launch's. */
	if (session_launch_child(s, w->rstatus))
		return;
	session_child_exited(s, w->rstatus);
}

static void timeout_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct session *s = w->data;

	(void)loop;
	(void)revents;
	/* A frozen session too (doc/react.md): --timeout is a promise to whoever waits on the run. */
	if (s->frozen) {
		char *words = xasprintf("the run exceeded --timeout while frozen (%s): killed",
					s->frozen_reason ? s->frozen_reason : "-");

		event_audit(&s->sink, "limits", "deny", "timeout", words);
		free(words);
	} else {
		event_audit(&s->sink, "limits", "deny", "timeout", "the run exceeded --timeout: killed");
	}
	s->timed_out = true;
	sandbox_kill(s->sb);
}

static void grace_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct session *s = w->data;

	(void)loop;
	(void)revents;
	sandbox_kill(s->sb);
}

/*
 * A run is not suspendable (doc/daemon.md): stage 2 resumes the payload when
 * it stops, but it sees only its own child stop. A ^Z that reaches a shell
 * blocked in vfork stops the new child alone; 200 ms after a typed ^Z, stage
 * 2 is asked to send SIGCONT to the payload's whole group (never to groups
 * the payload's own job control made).
 */
static void resume_fired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct session *s = w->data;

	(void)loop;
	(void)revents;
	if (!s->frozen)         /* never into a frozen sandbox: boxy-init would pass it on */
		sandbox_signal(s->sb, SIGCONT);
}

/* Input for the pty: arm resume_w when it holds the pty's suspend character. */
static void watch_suspend_key(struct session *s, const uint8_t *p, size_t n)
{
	struct termios t;

	if (tcgetattr(s->pty, &t) < 0 || !(t.c_lflag & ISIG) || t.c_cc[VSUSP] == _POSIX_VDISABLE)
		return;
	if (!memchr(p, t.c_cc[VSUSP], n))
		return;
	ev_timer_stop(s->srv->loop, &s->resume_w);
	ev_timer_set(&s->resume_w, 0.2, 0.0);
	ev_timer_start(s->srv->loop, &s->resume_w);
}

/* Open a pty pair sized rows×cols; the master is non-blocking. */
static int open_pty(int *master, int *slave, uint16_t rows, uint16_t cols, char **err)
{
	struct winsize ws = { .ws_row = rows ? rows : 24, .ws_col = cols ? cols : 80 };

	return pty_open(master, slave, &ws, err);
}

/* A start that failed (nothing launched, or boxy-init's report): recorded, the client told why. */
void session_run_failed(struct session *s, struct client *c, char *err)
{
	s->running = false;
	s->exit_code = EXIT_BOXY_FAILED;
	s->failure = err;
	bus_session_end(s);
	if (c)
		client_send_error(c, EXIT_BOXY_FAILED, "%s", err);
	if (c && c->role == CLIENT_RUN && !c->session)
		c->role = CLIENT_READY;
	unlink_session(s);
	session_free(s);
}

/* The decoys' watch has findings: they become events now, on the loop. */
static void trip_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct session *s = w->data;

	(void)loop;
	(void)revents;
	sandbox_tripwire_drain(s->sb);
}

/* boxy-init reported ready: the session runs, and c (NULL when it left) is bound to it. */
void session_run_started(struct session *s, struct client *c, bool tty, const char *tailnet)
{
	struct server *srv = s->srv;
	int tfd = sandbox_tripwire_fd(s->sb);

	if (tfd >= 0) {
		ev_io_init(&s->trip_w, trip_readable, tfd, EV_READ);
		s->trip_w.data = s;
		ev_io_start(srv->loop, &s->trip_w);
		sandbox_tripwire_drain(s->sb);  /* what came before the loop watched */
	}
	session_attrib_start(s);        /* first: the network's broker asks it from the start */
	session_net_start(s, tailnet);
	if (s->rs.timeout_ms) {
		ev_timer_set(&s->timeout_w, (double)s->rs.timeout_ms / 1000.0, 0.0);
		ev_timer_start(srv->loop, &s->timeout_w);
	}
	if (s->pty >= 0) {
		ev_io_init(&s->pty_w, pty_readable, s->pty, EV_READ);
		s->pty_w.data = s;
		ev_io_start(srv->loop, &s->pty_w);
	}
	if (!c)
		return;
	send_started(c, s);
	if (s->rs.detach) {
		/* nothing: the client prints the id and leaves */
		c->role = CLIENT_READY;
	} else if (tty) {
		c->role = CLIENT_ATTACHED;
		c->session = s;
		s->attached = c;
	} else {
		c->role = CLIENT_RUN;
		c->session = s;
		s->runner = c;
	}
	/* -v: what the sandbox decided while it was set up, before this client was bound. */
	for (size_t i = 0; s->verbose && !s->rs.detach && i < s->nrecent; i++)
		bus_send_event(c, &s->recent[(s->recent_next + SESSION_RECENT - s->nrecent + i) %
					     SESSION_RECENT].ev);
}

/*
 * MSG_RUN (proto/msg-run.h): the run-spec, the client's environment, cwd,
 * home and terminal mask, and its descriptors by slot: those of stdin,
 * stdout, stderr that are not terminals (none with -d; the pty takes their
 * place), the audit log, the net-log and the pcap file.
 */
void session_handle_run(struct client *c, const struct msg *m)
{
	struct server *srv = c->srv;
	struct run_request q;
	struct session *s;
	struct sandbox_ctx ctx;
	struct path_roots roots;
	struct passwd *pw;
	char **env = NULL, *cwd = NULL, *home = NULL, *err = NULL, *tailnet = NULL;
	int fds[3] = { -1, -1, -1 }, slave = -1, audit_fd = -1;
	uint16_t rows, cols;
	uint8_t ttys;
	bool tty;
	int started;

	/* One decoder (proto/msg-run.c): every field typed and checked, descriptors by slot. */
	if (run_request_decode(m->payload, m->len, m->fds, m->nfds, &q, &err) < 0) {
		client_send_error(c, 2, "%s", err);
		free(err);
		return;
	}
	env = q.env;
	cwd = q.cwd;
	home = q.home;
	q.env = NULL;
	q.cwd = q.home = NULL;
	ttys = q.ttys;
	tty = ttys != 0;
	rows = q.rows;
	cols = q.cols;

	s = xcalloc(1, sizeof(*s));
	s->srv = srv;
	s->pty = -1;
	new_id(s->id);
	s->rs = q.rs;
	runspec_init(&q.rs);
	s->cwd = xstrdup(cwd);
	s->started_ms = now_real_ms();
	s->lang = c->lang;
	s->verbose = s->rs.verbose;
	s->sink.emit = session_emit;
	s->sink.ctx = s;
	s->netlog_fd = s->pcap_fd = -1;
	if (q.fd[RUN_FD_AUDIT] >= 0) {
		/* The client opened it with its rights; we only write to it. */
		audit_fd = fcntl(q.fd[RUN_FD_AUDIT], F_DUPFD_CLOEXEC, 3);
		s->audit = audit_log_create(audit_fd);
	} else if (s->rs.audit_log && strcmp(s->rs.audit_log, JOURNAL_TARGET) == 0) {
		s->audit = audit_log_create_journal();
	}
	if (q.fd[RUN_FD_NETLOG] >= 0)
		s->netlog_fd = fcntl(q.fd[RUN_FD_NETLOG], F_DUPFD_CLOEXEC, 3);
	if (q.fd[RUN_FD_PCAP] >= 0)
		s->pcap_fd = fcntl(q.fd[RUN_FD_PCAP], F_DUPFD_CLOEXEC, 3);
	if (tty || s->rs.detach) {
		if (open_pty(&s->pty, &slave, rows, cols, &err) < 0) {
			client_send_error(c, 125, "%s", err);
			free(err);
			session_free(s);
			goto out;
		}
		/* the pty takes the place of each terminal; the other ends are the client's own */
		for (int i = RUN_FD_STDIN; i <= RUN_FD_STDERR; i++)
			fds[i] = q.fd[i] >= 0 ? q.fd[i] : slave;
		s->log = session_log_create(s->id, &err);
		if (!s->log) {
			fprintf(stderr, "session %s: no output log: %s\n", s->id, err);
			free(err);
			err = NULL;
		}
	} else {
		for (int i = RUN_FD_STDIN; i <= RUN_FD_STDERR; i++)
			fds[i] = q.fd[i];
	}
	for (int i = 0; i < 3; i++) {
		/* Never a terminal of the caller's: only the session's own pty. */
		if (fds[i] != slave && isatty(fds[i])) {
			client_send_error(c, 125, "fd %d of the run request is a terminal; the "
					  "client must announce it (ttys)", i);
			session_free(s);
			goto out;
		}
	}

	pw = getpwuid(getuid());
	ctx = (struct sandbox_ctx){
		.environ = env, .cwd = cwd, .uid = getuid(), .gid = getgid(),
		.user = pw ? pw->pw_name : "user", .home = home,
		.stdin_fd = fds[0], .stdout_fd = fds[1], .stderr_fd = fds[2],
		.foreground = s->pty >= 0, .new_session = true,
		.events = &s->sink, .session = s->id,
	};
	s->next = srv->sessions;
	srv->sessions = s;
	s->running = true;
	/* Before the launch: the lockfiles as the run found them, not as its payload left them. */
	s->lockfile = lockfile_digest(s->cwd);
	if (s->rs.raw_terminal && s->pty >= 0)
		event_audit(&s->sink, "terminal", "degraded", "raw-terminal",
			    "--raw-terminal: the payload's terminal output reaches the user's terminal "
			    "unfiltered (clipboard, titles and queries included)");
	/* Asked before the start: the mount stage writes the suffix into /etc/resolv.conf. */
	tailnet = session_net_tailnet(s);
	ctx.dns_search = tailnet;

	/* Every earlier session's writable roots: links planted there stay there (common/path-guard.h). */
	path_roots_init(&roots);
	path_roots_add_store(&roots, srv->store);
	ctx.roots = &roots;
	/* The timers exist from here: boxy stop may come while the sandbox is being built. */
	ev_init(&s->timeout_w, timeout_fired);
	ev_init(&s->grace_w, grace_fired);
	ev_init(&s->resume_w, resume_fired);
	s->timeout_w.data = s->grace_w.data = s->resume_w.data = s;
	/* Also before the start: the mount stage writes the sandbox's trust bundle. */
	started = session_net_ca(s, &ctx, &err);
	if (started == 0)
		started = sandbox_launch(&s->rs, &ctx, &s->sb, &err);
	path_roots_free(&roots);
	/*
	 * The store's row now, while boxy-init builds the sandbox: the plan needs
	 * nothing of it (the roots above are earlier sessions'; this run's own are
	 * the plan's), and events wait in memory for the next flush (daemon/bus.h).
	 */
	bus_session_begin(s);
	if (started < 0) {
		session_run_failed(s, c, err);
		goto out;
	}
	/* boxy-init builds the sandbox now; the loop serves others until it reports (daemon/launch.h). */
	s->pid = sandbox_pid(s->sb);
	ev_child_init(&s->child_w, child_exited, s->pid, 0);
	s->child_w.data = s;
	ev_child_start(srv->loop, &s->child_w);
	session_launch_begin(s, c, tty, tailnet);
	session_net_begin(s, env);      /* tap0 comes before the mounts: the network starts then */
	tailnet = NULL;
out:
	free(tailnet);
	if (slave >= 0)
		close(slave);
	strv_free(env);
	free(cwd);
	free(home);
	run_request_free(&q);
}

/*
 * The running session a request names (prefix, taken; decoded says whether
 * the request decoded); NULL once the error reply has been sent.
 */
static struct session *requested_session(struct client *c, bool decoded, char *prefix,
					 const char *what)
{
	struct session *s;
	char *err = NULL;

	if (!decoded) {
		client_send_error(c, 2, _("malformed %s request"), what);
		return NULL;
	}
	s = session_find(c->srv, prefix, &err);
	free(prefix);
	if (!s) {
		client_send_error(c, 1, "%s", err);
		free(err);
	}
	return s;
}

void session_handle_attach(struct client *c, const struct msg *m)
{
	char *prefix;
	bool ok = dmsg_decode_attach(m->payload, m->len, &prefix) == 0;
	struct session *s = requested_session(c, ok, prefix, "attach");

	if (!s)
		return;
	if (s->pty < 0) {
		client_send_error(c, 1, _("session %.8s has no terminal to attach to (its stdin "
					  "and stdout were not a terminal)"), s->id);
		return;
	}
	if (s->attached) {
		/* Taking over: the previous client is told and let go. */
		client_send(s->attached, MSG_DETACH, NULL, 0);
		s->attached->role = CLIENT_READY;
		s->attached->session = NULL;
	}
	send_started(c, s);
	c->role = CLIENT_ATTACHED;
	c->session = s;
	s->attached = c;
	if (s->ring_len) {
		uint8_t *tmp = xmalloc(s->ring_len);

		for (size_t i = 0; i < s->ring_len; i++)
			tmp[i] = s->ring[(s->ring_start + i) % SESSION_RING];
		client_send(c, MSG_OUTPUT, tmp, s->ring_len);
		free(tmp);
		s->ring_len = s->ring_start = 0;
	}
	session_resume_output(s);
}

void session_handle_stop(struct client *c, const struct msg *m)
{
	char *prefix, *words;
	bool now;
	bool ok = dmsg_decode_stop(m->payload, m->len, &prefix, &now) == 0;
	struct session *s = requested_session(c, ok, prefix, "stop");

	if (!s)
		return;
	if (s->frozen) {
		/*
		 * SIGTERM would stay pending on stopped processes until they were
		 * continued — continuing what an alert froze. SIGKILL reaches them
		 * stopped, and the network stays held until they are gone.
		 */
		event_audit(&s->sink, "session", "action", "stop", "stopped with SIGKILL while frozen "
			    "(boxy stop; a frozen session gets no SIGTERM: it would have to be "
			    "continued to act on it)");
		s->stopping = true;
		sandbox_kill(s->sb);
		words = xasprintf("session %.8s was frozen: killed with SIGKILL", s->id);
	} else if (now) {
		event_audit(&s->sink, "session", "action", "stop", "stopped with SIGKILL (boxy stop -k)");
		sandbox_kill(s->sb);
		words = xasprintf("session %.8s killed", s->id);
	} else {
		event_audit(&s->sink, "session", "action", "stop",
			    "stopped with SIGTERM (boxy stop); SIGKILL after the grace period");
		sandbox_signal(s->sb, SIGTERM);
		ev_timer_set(&s->grace_w, c->srv->stop_grace_s, 0.0);
		ev_timer_start(c->srv->loop, &s->grace_w);
		words = xasprintf("session %.8s: SIGTERM sent; SIGKILL in %g s if it is still "
				  "running", s->id, c->srv->stop_grace_s);
	}
	{
		struct wbuf w;

		wbuf_init(&w);
		dmsg_encode_ok(&w, words);
		client_send(c, MSG_OK, w.p, w.len);
		wbuf_free(&w);
	}
	free(words);
}

/* MSG_RESUME: a frozen session's processes continue and its network is let go. */
void session_handle_resume(struct client *c, const struct msg *m)
{
	char *prefix, *words, *err = NULL;
	bool log_only;
	bool ok = dmsg_decode_resume(m->payload, m->len, &prefix, &log_only) == 0;
	struct session *s = requested_session(c, ok, prefix, "resume");
	struct wbuf w;

	if (!s)
		return;
	words = react_resume(s, log_only, &err);
	if (!words) {
		client_send_error(c, 1, "%s", err);
		free(err);
		return;
	}
	wbuf_init(&w);
	dmsg_encode_ok(&w, words);
	client_send(c, MSG_OK, w.p, w.len);
	wbuf_free(&w);
	free(words);
}

/*
 * MSG_GATE: the client that judged a run says which --fail-on words
 * its gate failed on (doc/ci.md). The store keeps them, and such a run is
 * never a later run's baseline. Only the user's own clients reach this
 * socket; the words are checked with the option's parser and written in
 * its canonical form, once.
 */
void session_handle_gate(struct client *c, const struct msg *m)
{
	char *id, *words, *canon = NULL, *err = NULL;
	unsigned bits = 0;
	int changed = 0;
	struct wbuf w;

	if (dmsg_decode_gate(m->payload, m->len, &id, &words) < 0) {
		client_send_error(c, 2, _("malformed %s request"), "gate");
		return;
	}
	if (parse_fail_on(words, &bits, &err) < 0 || !bits) {
		client_send_error(c, 2, "%s", err ? err : _("the gate failed on no word"));
		goto out;
	}
	canon = fail_on_text(bits);
	if (!c->srv->store) {
		client_send_error(c, 1, _("the session store is not available"));
		goto out;
	}
	if (store_session_gate(c->srv->store, id, canon, &changed, &err) < 0) {
		client_send_error(c, 1, "%s", err);
		goto out;
	}
	if (!changed) {
		client_send_error(c, 1, _("session %.8s is unknown or its gate's verdict is "
					  "already recorded"), id);
		goto out;
	}
	wbuf_init(&w);
	dmsg_encode_ok(&w, NULL);
	client_send(c, MSG_OK, w.p, w.len);
	wbuf_free(&w);
out:
	free(err);
	free(canon);
	free(id);
	free(words);
}

/*
 * Counters and the destinations table, once a second and on demand:
 * str id, str state, strv argv, u64 elapsed_ms, u64 conns, denied, up, down,
 * u32 n, then n × (str destination, u64 conns, denied, addrs, sent, received).
 */
void session_snapshot(struct session *s, struct client *to)
{
	struct wbuf w;

	/*
	 * The next one will do — except for the last, sent when the session has
	 * ended: its refusal table is what `boxy run` prints and its gate judges,
	 * and there is no next one.
	 */
	if (s->running && to->outq_bytes >= CLIENT_OUTQ_MAX)
		return;
	wbuf_init(&w);
	dmsg_encode_snapshot_head(&w, s->id, !s->running ? "exited" : s->frozen ? "frozen" : "running",
				  s->rs.argv,
				  now_real_ms() - s->started_ms, s->conns, s->denied, s->up, s->down,
				  (uint32_t)s->ndests);
	for (size_t i = 0; i < s->ndests; i++) {
		const struct dest *d = &s->dests[i];
		struct dmsg_dest wd = {
			.name = d->name, .conns = d->conns, .denied = d->denied,
			.addrs = strv_len(d->addrs), .up = d->up, .down = d->down,
		};

		dmsg_encode_dest(&w, &wd);
	}
	refusals_encode(&w, &s->refusals);
	client_send(to, MSG_SNAPSHOT, w.p, w.len);
	wbuf_free(&w);
}

void session_handle_watch(struct client *c, const struct msg *m)
{
	char *prefix, *err = NULL;
	struct session *s;

	if (dmsg_decode_watch(m->payload, m->len, &prefix) < 0) {
		client_send_error(c, 2, _("malformed %s request"), "watch");
		return;
	}
	s = session_find(c->srv, prefix, &err);
	free(prefix);
	if (!s) {
		/* Not running: the client shows the stored summary instead. */
		client_send_error(c, 3, "%s", err);
		free(err);
		return;
	}
	send_started(c, s);
	c->role = CLIENT_WATCHING;
	c->session = s;
	session_snapshot(s, c);
	/* The first alerts, whatever came after them (the recent ring may have lost them). */
	for (size_t i = 0; i < s->nalerts; i++) {
		bool in_recent = false;

		for (size_t k = 0; k < s->nrecent && !in_recent; k++)
			in_recent = s->recent[k].ev.t_ms == s->alerts[i].ev.t_ms &&
				    s->recent[k].ev.verdict && s->alerts[i].ev.detail &&
				    strcmp(s->recent[k].ev.verdict, "alert") == 0 &&
				    s->recent[k].ev.detail &&
				    strcmp(s->recent[k].ev.detail, s->alerts[i].ev.detail) == 0;
		if (!in_recent)
			bus_send_event(c, &s->alerts[i].ev);
	}
	for (size_t i = 0; i < s->nrecent; i++) {
		size_t at = (s->recent_next + SESSION_RECENT - s->nrecent + i) % SESSION_RECENT;

		bus_send_event(c, &s->recent[at].ev);
	}
}

void session_client_input(struct client *c, const struct msg *m)
{
	struct session *s = c->session;

	if (!s)
		return;
	switch (m->type) {
	case MSG_INPUT:
		/* Frozen: keys would queue signals (^C) for stopped processes to take at a resume. */
		if (s->pty >= 0 && c->role == CLIENT_ATTACHED && m->len && !s->frozen) {
			/* Best effort: a full pty input queue drops keystrokes rather than stall. */
			if (write(s->pty, m->payload, m->len) < 0 && errno != EAGAIN)
				break;
			watch_suspend_key(s, m->payload, m->len);
		}
		break;
	case MSG_WINSIZE: {
		struct winsize ws = { 0 };
		bool ok = dmsg_decode_winsize(m->payload, m->len, &ws.ws_row, &ws.ws_col) == 0;

		if (ok && s->pty >= 0 && c->role == CLIENT_ATTACHED &&
		    ws.ws_row && ws.ws_col)
			ioctl(s->pty, TIOCSWINSZ, &ws);
		break;
	}
	case MSG_DETACH:
		session_client_gone(c);
		c->role = CLIENT_READY;
		break;
	default:
		break;
	}
}

