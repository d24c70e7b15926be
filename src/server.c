/*
 * server.c — the per-user daemon: its socket, its loop, its clients.
 *
 * One process per user, started on demand by `boxy run`, owning every
 * session. It holds nothing the user's shell did not have: it runs as the
 * user, and serves only the user (SO_PEERCRED). Clients speak framed
 * messages (msg.h); a client that sends garbage, too much, or the wrong
 * thing for its state is dropped and logged — never trusted, never fatal.
 * Clients are freed from the loop's prepare watcher, not inside the
 * callback that found them dead, so no callback ever touches freed memory.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "sandbox.h"
#include "server.h"
#include "store.h"
#include "util.h"
#include "wire.h"

#define IDLE_EXIT_S  (10 * 60.0)    /* an idle daemon exits after this long */

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The daemon's own health goes to its log (stderr, redirected by the client). */
static void logmsg(const char *fmt, ...)
{
	va_list ap;
	time_t t = time(NULL);
	char stamp[32];

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", localtime(&t));
	fprintf(stderr, "%s boxy-daemon[%d]: ", stamp, (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

size_t server_nsubscribers(const struct server *srv)
{
	size_t n = 0;

	for (const struct client *c = srv->clients; c; c = c->next)
		n += c->role == CLIENT_WATCHING;
	return n;
}

size_t server_nrunning(const struct server *srv)
{
	size_t n = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		n += s->running;
	return n;
}

/* ---- output ---------------------------------------------------------------- */

/* Write what the client's queue holds without blocking; the rest waits for EV_WRITE. */
void client_flush(struct client *c)
{
	while (c->outq) {
		struct outframe *f = c->outq;
		ssize_t n = send(c->fd, f->bytes + f->off, f->len - f->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			client_kill(c);
			return;
		}
		f->off += (size_t)n;
		if (f->off < f->len)
			break;
		c->outq = f->next;
		if (!c->outq)
			c->outq_tail = NULL;
		c->outq_bytes -= f->len;
		free(f);
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

static void client_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	client_flush(w->data);
}

/*
 * Queue a frame. Never blocks: the daemon must not stall on a slow client.
 * Frames other than events are always queued; events (MSG_EVENT, MSG_SNAPSHOT)
 * are dropped and counted when the queue is full — bus.c decides that.
 */
void client_send(struct client *c, uint16_t type, const void *p, size_t len)
{
	struct outframe *f;

	if (c->role == CLIENT_DEAD)
		return;
	f = xmalloc(sizeof(*f) + MSG_HEADER_LEN + len);
	f->next = NULL;
	f->len = MSG_HEADER_LEN + len;
	f->off = 0;
	for (int i = 0; i < 4; i++)
		f->bytes[i] = (uint8_t)(len >> (8 * i));
	f->bytes[4] = (uint8_t)type;
	f->bytes[5] = (uint8_t)(type >> 8);
	f->bytes[6] = f->bytes[7] = 0;
	if (len)
		memcpy(f->bytes + MSG_HEADER_LEN, p, len);
	if (c->outq_tail)
		c->outq_tail->next = f;
	else
		c->outq = f;
	c->outq_tail = f;
	c->outq_bytes += f->len;
	client_flush(c);
}

void client_send_error(struct client *c, int code, const char *fmt, ...)
{
	struct wbuf w;
	va_list ap;
	char *words;

	va_start(ap, fmt);
	words = xvasprintf(fmt, ap);
	va_end(ap);
	wbuf_init(&w);
	wire_put_u16(&w, (uint16_t)code);
	wire_put_str(&w, words);
	client_send(c, MSG_ERROR, w.p, w.len);
	wbuf_free(&w);
	free(words);
}

static void send_ok(struct client *c, const char *words)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_str(&w, words);
	client_send(c, MSG_OK, w.p, w.len);
	wbuf_free(&w);
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

static void client_free(struct client *c)
{
	while (c->outq) {
		struct outframe *f = c->outq;

		c->outq = f->next;
		free(f);
	}
	msg_reader_reset(&c->rd);
	close(c->fd);
	free(c);
}

static void reap_clients(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct server *srv = w->data;
	struct client **pp = &srv->clients;

	(void)revents;
	while (*pp) {
		struct client *c = *pp;

		if (c->role == CLIENT_DEAD) {
			*pp = c->next;
			client_free(c);
		} else {
			pp = &c->next;
		}
	}
	ev_prepare_stop(loop, w);
	if (srv->stopping && !srv->clients && server_nrunning(srv) == 0)
		ev_break(loop, EVBREAK_ALL);
}

/* ---- requests -------------------------------------------------------------- */

static void handle_hello(struct client *c, const struct msg *m)
{
	struct server *srv = c->srv;
	struct rbuf r;
	struct wbuf w;
	uint32_t proto;
	char *build;

	rbuf_init(&r, m->payload, m->len);
	proto = wire_get_u32(&r);
	build = wire_get_str(&r, 64);
	if (!wire_done(&r) || !build) {
		free(build);
		logmsg("client pid %d: malformed hello; dropped", (int)c->pid);
		client_kill(c);
		return;
	}
	wbuf_init(&w);
	if (proto != MSG_PROTOCOL || strcmp(build, build_id()) != 0) {
		wire_put_u16(&w, proto != MSG_PROTOCOL ? REFUSE_PROTOCOL : REFUSE_BUILD);
		wire_put_str(&w, proto != MSG_PROTOCOL ? "protocol version differs"
			     : "the daemon is another build of boxy");
	}
	wire_put_str(&w, build_id());
	wire_put_u32(&w, (uint32_t)getpid());
	wire_put_u64(&w, srv->started_ms);
	wire_put_u32(&w, (uint32_t)server_nrunning(srv));
	wire_put_u32(&w, (uint32_t)server_nsubscribers(srv));
	if (proto != MSG_PROTOCOL || strcmp(build, build_id()) != 0) {
		client_send(c, MSG_REFUSE, w.p, w.len);
		/*
		 * It may still ask for status or a shutdown, nothing else: its run
		 * request would be another build's (or protocol's) encoding.
		 */
		c->role = CLIENT_REFUSED;
	} else {
		client_send(c, MSG_WELCOME, w.p, w.len);
		c->role = CLIENT_READY;
	}
	wbuf_free(&w);
	free(build);
}

static void handle_shutdown(struct client *c)
{
	struct server *srv = c->srv;
	size_t n = server_nrunning(srv);

	if (n > 0) {
		client_send_error(c, 1, "%zu session(s) still running: refusing to stop the daemon", n);
		return;
	}
	logmsg("stopping at a client's request");
	send_ok(c, "stopping");
	srv->stopping = true;
	ev_io_stop(srv->loop, &srv->accept_w);
	ev_break(srv->loop, EVBREAK_ALL);
}

/* What each role may send: anything else drops the client. */
static void dispatch(struct client *c, struct msg *m)
{
	if (c->role == CLIENT_NEW) {
		if (m->type != MSG_HELLO)
			goto violation;
		handle_hello(c, m);
		return;
	}
	if (c->role == CLIENT_ATTACHED || c->role == CLIENT_RUN) {
		if (m->type == MSG_INPUT || m->type == MSG_WINSIZE || m->type == MSG_DETACH) {
			session_client_input(c, m);
			return;
		}
		goto violation;
	}
	if (c->role == CLIENT_WATCHING)
		goto violation;        /* watch is read-only: nothing it sends is accepted */
	if (c->role == CLIENT_REFUSED && m->type != MSG_STATUS && m->type != MSG_SHUTDOWN)
		goto violation;
	switch (m->type) {
	case MSG_RUN:      session_handle_run(c, m); return;
	case MSG_ATTACH:   session_handle_attach(c, m); return;
	case MSG_STOP:     session_handle_stop(c, m); return;
	case MSG_WATCH:    session_handle_watch(c, m); return;
	case MSG_SHUTDOWN: handle_shutdown(c); return;
	case MSG_STATUS: {
		/* Status is the welcome again, for a client that is already in. */
		struct wbuf w;

		wbuf_init(&w);
		wire_put_str(&w, build_id());
		wire_put_u32(&w, (uint32_t)getpid());
		wire_put_u64(&w, c->srv->started_ms);
		wire_put_u32(&w, (uint32_t)server_nrunning(c->srv));
		wire_put_u32(&w, (uint32_t)server_nsubscribers(c->srv));
		client_send(c, MSG_WELCOME, w.p, w.len);
		wbuf_free(&w);
		return;
	}
	default:
		break;
	}
violation:
	logmsg("client pid %d: message %#x not allowed in its state; dropped",
	       (int)c->pid, m->type);
	client_kill(c);
}

static void client_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;

	(void)revents;
	/* Bounded: a client that floods is served a few frames per iteration. */
	for (int i = 0; i < 16 && c->role != CLIENT_DEAD; i++) {
		struct msg m;
		char *err = NULL;
		int rc;

		/*
		 * A client that sends requests and never reads the replies would
		 * grow its queue without bound: stop reading it until the queue
		 * drains (client_flush starts reading again). The kernel's socket
		 * buffer then pushes back on the client, not on the daemon.
		 */
		if (c->outq_bytes >= CLIENT_OUTQ_MAX) {
			ev_io_stop(loop, &c->rw);
			c->read_paused = true;
			return;
		}
		rc = msg_read(&c->rd, c->fd, &m, &err);

		if (rc == 0)
			return;
		if (rc < 0) {
			if (err)
				logmsg("client pid %d: %s; dropped", (int)c->pid, err);
			free(err);
			client_kill(c);
			return;
		}
		dispatch(c, &m);
		msg_free(&m);
	}
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct server *srv = w->data;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	int fd;

	(void)revents;
	fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	/* The socket directory is 0700, but the check is made here too: only the user. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
		logmsg("refused a connection from uid %u", (unsigned)cred.uid);
		close(fd);
		return;
	}
	/*
	 * ...and only from outside every sandbox. A payload whose work directory
	 * happens to contain the socket (a workdir of /tmp with the /tmp fallback,
	 * a --rw of $XDG_RUNTIME_DIR) could otherwise ask for a sandbox with wider
	 * rules. Its pid namespace gives it away.
	 */
	if (!peer_is_local_user(fd)) {
		logmsg("refused a connection from pid %d: it is not in the daemon's pid namespace "
		       "(a sandboxed process?)", (int)cred.pid);
		close(fd);
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->srv = srv;
	c->fd = fd;
	c->pid = cred.pid;
	c->role = CLIENT_NEW;
	msg_reader_init(&c->rd);
	ev_io_init(&c->rw, client_readable, fd, EV_READ);
	ev_io_init(&c->ww, client_writable, fd, EV_WRITE);
	c->rw.data = c->ww.data = c;
	ev_io_start(loop, &c->rw);
	c->next = srv->clients;
	srv->clients = c;
	ev_timer_stop(loop, &srv->idle_w);
	ev_timer_again(loop, &srv->idle_w);
}

/* ---- lifecycle ------------------------------------------------------------- */

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct server *srv = w->data;

	(void)revents;
	if (server_nrunning(srv) > 0 && w->signum == SIGHUP)
		return;
	logmsg("signal %d: stopping; %zu session(s) will be killed", w->signum,
	       server_nrunning(srv));
	srv->stopping = true;
	ev_break(loop, EVBREAK_ALL);
}

static void on_idle(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct server *srv = w->data;

	(void)revents;
	if (server_nrunning(srv) == 0 && !srv->clients) {
		logmsg("idle for %.0f s: exiting", IDLE_EXIT_S);
		srv->stopping = true;
		ev_break(loop, EVBREAK_ALL);
	}
}

static void on_snapshot(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct server *srv = w->data;

	(void)loop;
	(void)revents;
	for (struct client *c = srv->clients; c; c = c->next)
		if (c->role == CLIENT_WATCHING && c->session)
			session_snapshot(c->session, c);
}

static void on_flush(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	bus_flush(w->data);
}

/* Bind the socket, refusing to take over one that a live daemon answers on. */
static int listen_socket(struct server *srv, char **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return set_err_errno(err, "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", srv->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int probe;

		if (errno != EADDRINUSE) {
			close(fd);
			return set_err_errno(err, "bind %s", srv->sock_path);
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			close(fd);
			return set_err(err, "another daemon is already listening on %s",
				       srv->sock_path);
		}
		if (probe >= 0)
			close(probe);
		unlink(srv->sock_path);     /* a stale socket from a daemon that died */
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(fd);
			return set_err_errno(err, "bind %s", srv->sock_path);
		}
	}
	chmod(srv->sock_path, 0600);
	if (listen(fd, 64) < 0) {
		close(fd);
		return set_err_errno(err, "listen");
	}
	srv->listen_fd = fd;
	return 0;
}

/*
 * The grace between boxy stop's SIGTERM and its SIGKILL. BOXY_DAEMON_STOP_GRACE
 * (seconds, 0.1–600) exists for the test suite, which cannot wait 10 s per case;
 * it is read from the environment of whoever started the daemon, i.e. the user.
 */
static double stop_grace(void)
{
	const char *v = getenv("BOXY_DAEMON_STOP_GRACE");
	char *end;
	double g;

	if (!v || !*v)
		return STOP_GRACE_S;
	g = strtod(v, &end);
	if (*end || !(g >= 0.1 && g <= 600.0)) {
		logmsg("ignoring BOXY_DAEMON_STOP_GRACE=%s (want seconds, 0.1 to 600)", v);
		return STOP_GRACE_S;
	}
	return g;
}

int server_main(void)
{
	struct server srv_, *srv = &srv_;
	char *dir = NULL, *err = NULL, *dbpath;
	int lost = 0;

	memset(srv, 0, sizeof(*srv));
	signal(SIGPIPE, SIG_IGN);
	nofile_raise();         /* sandboxes and boxy-net get the original back */
	if (client_runtime_dir(&dir, &err) < 0) {
		logmsg("%s", err);
		return EXIT_BOXY_FAILED;
	}
	srv->sock_path = xasprintf("%s/daemon.sock", dir);
	free(dir);
	if (listen_socket(srv, &err) < 0) {
		logmsg("%s", err);
		free(err);
		return EXIT_BOXY_FAILED;
	}
	srv->started_ms = now_real_ms();
	srv->stop_grace_s = stop_grace();
	logmsg("started, build %s, socket %s", build_id(), srv->sock_path);

	/* A store that cannot be opened degrades to a warning: runs still work. */
	dbpath = store_default_path();
	if (!dbpath || store_open(dbpath, &srv->store, &err) < 0) {
		logmsg("session store unavailable: %s", err ? err : "no state directory");
		free(err);
		err = NULL;
	} else if (store_mark_lost(srv->store, (int64_t)now_real_ms(), &lost, &err) < 0) {
		logmsg("%s", err);
		free(err);
		err = NULL;
	} else if (lost > 0) {
		logmsg("%d session(s) of a daemon that died were marked lost", lost);
	}
	free(dbpath);

	srv->loop = EV_DEFAULT;
	ev_io_init(&srv->accept_w, accept_cb, srv->listen_fd, EV_READ);
	srv->accept_w.data = srv;
	ev_io_start(srv->loop, &srv->accept_w);
	ev_signal_init(&srv->sigterm_w, on_signal, SIGTERM);
	ev_signal_init(&srv->sigint_w, on_signal, SIGINT);
	ev_signal_init(&srv->sighup_w, on_signal, SIGHUP);
	srv->sigterm_w.data = srv->sigint_w.data = srv->sighup_w.data = srv;
	ev_signal_start(srv->loop, &srv->sigterm_w);
	ev_signal_start(srv->loop, &srv->sigint_w);
	ev_signal_start(srv->loop, &srv->sighup_w);
	ev_timer_init(&srv->snapshot_w, on_snapshot, 1.0, 1.0);
	ev_timer_init(&srv->flush_w, on_flush, 0.2, 0.2);
	ev_init(&srv->idle_w, on_idle);
	srv->idle_w.repeat = IDLE_EXIT_S;
	srv->snapshot_w.data = srv->flush_w.data = srv->idle_w.data = srv;
	ev_timer_start(srv->loop, &srv->snapshot_w);
	ev_timer_start(srv->loop, &srv->flush_w);
	ev_timer_again(srv->loop, &srv->idle_w);
	ev_prepare_init(&srv->reap_w, reap_clients);
	srv->reap_w.data = srv;

	ev_run(srv->loop, 0);

	/*
	 * Sessions die with the daemon; record how they ended: `lost`, as the
	 * next daemon would call them, but now rather than at its start.
	 */
	for (struct session *s = srv->sessions; s; s = s->next)
		if (s->running)
			sandbox_kill(s->sb);
	bus_flush(srv);
	if (srv->store && server_nrunning(srv) > 0) {
		lost = 0;
		if (store_mark_lost(srv->store, (int64_t)now_real_ms(), &lost, &err) < 0) {
			logmsg("%s", err);
			free(err);
			err = NULL;
		} else {
			logmsg("%d running session(s) killed and marked lost", lost);
		}
	}
	unlink(srv->sock_path);
	close(srv->listen_fd);
	while (srv->clients) {
		struct client *c = srv->clients;

		srv->clients = c->next;
		client_free(c);
	}
	while (srv->sessions) {
		struct session *s = srv->sessions;

		srv->sessions = s->next;
		session_free(s);
	}
	store_close(srv->store);
	free(srv->sock_path);
	logmsg("stopped");
	return 0;
}
