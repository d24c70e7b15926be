/*
 * daemon/server.c — the per-user daemon: its socket, its loop, its clients.
 *
 * One process per user, started on demand by `boxy run`, owning every
 * session. It holds nothing the user's shell did not have: it runs as the
 * user, and serves only the user (SO_PEERCRED). Clients speak framed
 * messages (proto/msg.h); a client that sends garbage, too much, or the wrong
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
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/activation.h"
#include "proto/place.h"
#include "daemon/log.h"
#include "daemon/seal.h"
#include "common/lang.h"
#include "common/protected.h"
#include "sandbox/assemble.h"
#include "sandbox/limits.h"
#include "daemon/server.h"
#include "proto/daemon-msg.h"
#include "store/store.h"
#include "common/util.h"
#include "proto/wire.h"

#define IDLE_EXIT_S  (10 * 60.0)    /* an idle daemon exits after this long */
#define LOCK_WAIT_TRIES 100         /* 20 ms each: how long a new daemon waits for a stopping one */

/* ---- output ---------------------------------------------------------------- */

static void client_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	client_flush(w->data);
}

static void send_ok(struct client *c, const char *words)
{
	struct wbuf w;

	wbuf_init(&w);
	dmsg_encode_ok(&w, words);
	client_send(c, MSG_OK, w.p, w.len);
	wbuf_free(&w);
}

static void client_free(struct client *c)
{
	outq_clear(&c->out);
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

/* Who this daemon is: the welcome's fields (pointers into srv, not copies). */
static struct daemon_info server_info(const struct server *srv)
{
	struct daemon_info info = {
		.build = (char *)build_id(), .pid = (uint32_t)getpid(),
		.started_ms = srv->started_ms, .sessions = (uint32_t)server_nrunning(srv),
		.subscribers = (uint32_t)server_nsubscribers(srv), .state_dir = srv->state_dir,
	};

	return info;
}

/* MSG_WELCOME: the answer to a hello of this build, and to MSG_STATUS. */
static void send_welcome(struct client *c)
{
	struct daemon_info info = server_info(c->srv);
	struct wbuf w;

	wbuf_init(&w);
	dmsg_encode_welcome(&w, &info);
	client_send(c, MSG_WELCOME, w.p, w.len);
	wbuf_free(&w);
}

static void handle_hello(struct client *c, const struct msg *m)
{
	uint32_t proto;
	char *build;

	if (dmsg_decode_hello(m->payload, m->len, &proto, &build) < 0) {
		dlog_msg("client pid %d: malformed hello; dropped", (int)c->pid);
		client_kill(c);
		return;
	}
	if (proto != MSG_PROTOCOL || strcmp(build, build_id()) != 0) {
		struct daemon_info info = server_info(c->srv);
		struct wbuf w;

		wbuf_init(&w);
		dmsg_encode_refuse(&w, proto != MSG_PROTOCOL ? REFUSE_PROTOCOL : REFUSE_BUILD,
				   proto != MSG_PROTOCOL ? N_("protocol version differs")
				   : N_("the daemon is another build of boxy"), &info);
		client_send(c, MSG_REFUSE, w.p, w.len);
		wbuf_free(&w);
		/*
		 * It may still ask for status or a shutdown, nothing else: its run
		 * request would be another build's (or protocol's) encoding.
		 */
		c->role = CLIENT_REFUSED;
	} else {
		send_welcome(c);
		c->role = CLIENT_READY;
	}
	free(build);
}

/* MSG_LANG: the language this client reads; its answers are worded in it from now on. */
static void handle_lang(struct client *c, const struct msg *m)
{
	char *lang, *locale;

	if (dmsg_decode_lang(m->payload, m->len, &lang, &locale) < 0) {
		dlog_msg("client pid %d: malformed language; dropped", (int)c->pid);
		client_kill(c);
		return;
	}
	c->lang = lang_locale(lang, locale);
	if (!c->lang && *lang)
		dlog_msg("client pid %d reads '%s' (locale %s): no locale of it here; it is "
			 "answered in English", (int)c->pid, lang, locale);
	free(lang);
	free(locale);
}

static void handle_shutdown(struct client *c)
{
	struct server *srv = c->srv;
	size_t n = server_nrunning(srv);

	if (n > 0) {
		client_send_error(c, 1, ngettext("%zu session still running: refusing to stop the "
						 "daemon", "%zu sessions still running: refusing to "
						 "stop the daemon", n), n);
		return;
	}
	dlog_msg("stopping at a client's request");
	send_ok(c, "stopping");
	srv->stopping = true;
	ev_io_stop(srv->loop, &srv->accept_w);
	ev_break(srv->loop, EVBREAK_ALL);
}

/* What each role may send: anything else drops the client. */
static void dispatch(struct client *c, struct msg *m)
{
	locale_t old;

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
	/* Whatever a request answers is worded in the client's language (common/lang.h). */
	old = lang_use(c->lang);
	switch (m->type) {
	case MSG_RUN:      session_handle_run(c, m); break;
	case MSG_ATTACH:   session_handle_attach(c, m); break;
	case MSG_STOP:     session_handle_stop(c, m); break;
	case MSG_RESUME:   session_handle_resume(c, m); break;
	case MSG_GATE:     session_handle_gate(c, m); break;
	case MSG_WATCH:    session_handle_watch(c, m); break;
	case MSG_SHUTDOWN: handle_shutdown(c); break;
	case MSG_LANG:     handle_lang(c, m); break;
	case MSG_STATUS:
		/* Status is the welcome again, for a client that is already in. */
		send_welcome(c);
		break;
	default:
		lang_use(old);
		goto violation;
	}
	lang_use(old);
	return;
violation:
	dlog_msg("client pid %d: message %#x not allowed in its state; dropped",
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
				dlog_msg("client pid %d: %s; dropped", (int)c->pid, err);
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
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	struct client *c;
	int fd;

	(void)revents;
	fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	/*
	 * The socket directory is 0700, but the abstract socket has no directory:
	 * any local user can connect to it. The check is made here for both.
	 */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
		dlog_limited("refused connects", "refused a connection from uid %u",
			     (unsigned)cred.uid);
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
		dlog_limited("refused connects", "refused a connection from pid %d: it is not in "
			     "the daemon's pid namespace (a sandboxed process?)", (int)cred.pid);
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
	dlog_msg("signal %d: stopping; %zu %s killed", w->signum, server_nrunning(srv),
		 server_nrunning(srv) == 1 ? "session will be" : "sessions will be");
	srv->stopping = true;
	ev_break(loop, EVBREAK_ALL);
}

static void on_idle(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct server *srv = w->data;

	(void)revents;
	if (server_nrunning(srv) == 0 && !srv->clients) {
		dlog_msg("idle for %.0f s: exiting", IDLE_EXIT_S);
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

/* A listening socket bound at path (a file, or "@name": abstract). */
static int bind_listen(const char *path, char **err)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, dirfd, rc;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return set_err_errno(err, "socket");
	if (client_sock_addr(path, &sa, &len, &dirfd) < 0) {
		set_err_errno(err, "socket address %s", path);
		close(fd);
		return -1;
	}
	rc = bind(fd, (struct sockaddr *)&sa, len);
	if (rc == 0 && path[0] != '@')
		chmod(path, 0600);
	if (rc == 0)
		rc = listen(fd, 64);
	if (rc < 0) {
		set_err_errno(err, "bind %s", path);
		close(fd);
		fd = -1;
	}
	if (dirfd >= 0)
		close(dirfd);
	return fd;
}

/* True when a daemon of ours, outside every sandbox, answers on path. */
static bool path_has_daemon(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, dirfd;
	bool yes = false;

	if (client_sock_addr(path, &sa, &len, &dirfd) < 0)
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, len) == 0)
		yes = peer_is_local_user(fd);
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	return yes;
}

/* Remember which file the socket is, to notice when it is removed or replaced. */
static void note_socket(struct server *srv)
{
	struct stat st;

	srv->sock_known = lstat(srv->sock_path, &st) == 0;
	srv->sock_dev = st.st_dev;
	srv->sock_ino = st.st_ino;
}

/*
 * Bind the socket file, refusing to take over one that a live daemon of
 * ours answers on. A stale socket, or one a process in another pid
 * namespace (a payload) bound there, is removed first.
 */
static int listen_socket(struct server *srv, char **err)
{
	char *why = NULL;
	int fd = activation_take_listener(srv->sock_path, &why);

	if (why) {
		dlog_msg("%s", why);
		free(why);
	}
	if (fd >= 0) {
		/* systemd's socket (daemon/activation.c): its file is systemd's, never unlinked by us. */
		dlog_msg("listening on the socket systemd passed (%s)", srv->sock_path);
		srv->listen_fd = fd;
		note_socket(srv);
		return 0;
	}
	fd = bind_listen(srv->sock_path, err);
	if (fd < 0) {
		if (errno != EADDRINUSE)
			return -1;
		if (path_has_daemon(srv->sock_path))
			return set_err(err, "another daemon is already listening on %s",
				       srv->sock_path);
		unlink(srv->sock_path);
		free(*err);
		*err = NULL;
		fd = bind_listen(srv->sock_path, err);
		if (fd < 0)
			return -1;
	}
	srv->listen_fd = fd;
	note_socket(srv);
	return 0;
}

/*
 * The abstract socket, named at random so that nobody can take the name
 * first; the name is in the record (client/client.h). It has no file to unlink or
 * replace, and sandboxes cannot reach it (each has a network namespace of
 * its own); other local users can, and accept_cb refuses them.
 */
static int listen_abstract(struct server *srv, char **err)
{
	unsigned char rnd[16];
	char hex[33];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return set_err_errno(err, "getrandom");
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	srv->abstract = xasprintf("@boxy-%u-%s", (unsigned)getuid(), hex);
	srv->abs_fd = bind_listen(srv->abstract, err);
	return srv->abs_fd < 0 ? -1 : 0;
}

/*
 * One daemon per store: an exclusive flock on STATE/daemon.lock, held for
 * the daemon's life (the descriptor stays open; it dies with the process).
 * Returns 0 with the lock, 1 when another daemon holds it (*err says which),
 * -1 on error.
 */
static int lock_store(struct server *srv, char **err)
{
	struct daemon_record r;
	char *path = client_record_path(srv->state_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0) {
		set_err_errno(err, "opening %s", path);
		free(path);
		return -1;
	}
	/* A daemon that is stopping lets go within moments: wait for it, bounded. */
	for (int i = 0; i < LOCK_WAIT_TRIES && flock(fd, LOCK_EX | LOCK_NB) < 0 &&
	     errno == EWOULDBLOCK; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000000 }, NULL);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		if (e != EWOULDBLOCK) {
			errno = e;
			set_err_errno(err, "locking %s", path);
			free(path);
			return -1;
		}
		if (client_record_read(srv->state_dir, &r) == 0) {
			set_err(err, "another boxy daemon (pid %d, socket %s) already serves the "
				"store in %s: not starting a second one", (int)r.pid,
				r.sock ? r.sock : "unknown", srv->state_dir);
			daemon_record_free(&r);
		} else {
			set_err(err, "another boxy daemon already serves the store in %s: not "
				"starting a second one", srv->state_dir);
		}
		free(path);
		return 1;
	}
	free(path);
	srv->lock_fd = fd;
	return 0;
}

/* Write the record into the locked file: pid, socket file, abstract name. */
static void write_record(struct server *srv)
{
	char *text = xasprintf("pid %d\nsocket %s\nabstract %s\n", (int)getpid(),
			       srv->sock_path, srv->abstract ? srv->abstract : "");

	if (ftruncate(srv->lock_fd, 0) < 0 ||
	    pwrite(srv->lock_fd, text, strlen(text), 0) != (ssize_t)strlen(text))
		dlog_msg("writing the daemon record: %s", strerror(errno));
	free(text);
}

/*
 * Once a second: is the socket file still ours? Something that could write
 * its directory may have removed it or bound another listener there; bind
 * it again so that boxy finds the daemon by its usual name. (Clients also
 * find it through the record's abstract socket meanwhile.) A live daemon
 * of ours that took the name over is left alone.
 */
static void check_socket(struct server *srv)
{
	struct stat st;
	char *err = NULL, *dir;
	int fd;

	if (srv->sock_given_up)
		return;
	if (lstat(srv->sock_path, &st) == 0 && srv->sock_known &&
	    st.st_dev == srv->sock_dev && st.st_ino == srv->sock_ino)
		return;
	if (path_has_daemon(srv->sock_path)) {
		dlog_msg("%s is now another daemon's: leaving it (clients still find this one "
			 "through %s/daemon.lock)", srv->sock_path, srv->state_dir);
		srv->sock_given_up = true;
		return;
	}
	dir = xstrdup(srv->sock_path);
	*strrchr(dir, '/') = '\0';
	mkdir(dir, 0700);
	free(dir);
	unlink(srv->sock_path);
	fd = bind_listen(srv->sock_path, &err);
	if (fd < 0) {
		dlog_limited("socket re-binds", "%s was removed or replaced, and binding it again "
			     "failed: %s", srv->sock_path, err);
		free(err);
		return;
	}
	dlog_limited("socket re-binds", "%s was removed or replaced: bound it again",
		     srv->sock_path);
	ev_io_stop(srv->loop, &srv->accept_w);
	close(srv->listen_fd);
	srv->listen_fd = fd;
	ev_io_set(&srv->accept_w, fd, EV_READ);
	ev_io_start(srv->loop, &srv->accept_w);
	note_socket(srv);
}

/* The once-a-second watcher: the socket file, then the log's counts and size. */
static void on_watch(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	check_socket(w->data);
	dlog_tick();
}

/* Register the directories no sandbox may write (common/protected.h). */
static void protect_own_dirs(struct server *srv, const char *dbpath)
{
	char *dir;

	protected_add_dir(srv->state_dir);
	dir = xstrdup(srv->sock_path);
	*strrchr(dir, '/') = '\0';
	protected_add_dir(dir);
	free(dir);
	if (dbpath && strrchr(dbpath, '/')) {
		dir = xstrdup(dbpath);
		*strrchr(dir, '/') = '\0';
		protected_add_dir(dir);
		free(dir);
	}
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
		dlog_msg("ignoring BOXY_DAEMON_STOP_GRACE=%s (want seconds, 0.1 to 600)", v);
		return STOP_GRACE_S;
	}
	return g;
}

int server_main(void)
{
	struct server srv_, *srv = &srv_;
	char *dir = NULL, *err = NULL, *dbpath, *log;
	int lost = 0;

	/*
	 * Records (the store, audit logs, daemon.log) are worded in C, whoever
	 * started the daemon; each client's answers in its own language
	 * (MSG_LANG, common/lang.h). LANGUAGE is the process's and would
	 * override every client's choice: it goes, before any thread exists.
	 */
	setlocale(LC_MESSAGES, "C");
	unsetenv("LANGUAGE");
	memset(srv, 0, sizeof(*srv));
	srv->listen_fd = srv->abs_fd = srv->lock_fd = -1;
	signal(SIGPIPE, SIG_IGN);
	nofile_raise();         /* sandboxes and boxy-net get the original back */
	if (client_state_dir_make(&srv->state_dir, &err) < 0) {
		dlog_msg("%s", err);
		free(err);
		return EXIT_BOXY_FAILED;
	}
	log = xasprintf("%s/daemon.log", srv->state_dir);
	dlog_set_path(log);
	free(log);
	/* Before anything else: a second daemon for this store stops here. */
	if (lock_store(srv, &err) != 0) {
		dlog_msg("%s", err);
		free(err);
		free(srv->state_dir);
		return EXIT_BOXY_FAILED;
	}
	/* A cgroup delegated to us (systemd's Delegate=yes): into a leaf, runs beside it. */
	switch (limits_delegated_leaf(&err)) {
	case 1:
		dlog_msg("cgroup %s is delegated to the daemon: the daemon moved into %s/%s, "
			 "each run's limits get a cgroup beside it", limits_runs_cgroup(),
			 limits_runs_cgroup(), LIMITS_DAEMON_LEAF);
		break;
	case -1:
		dlog_msg("cgroup: %s (runs fall back as without delegation)", err);
		free(err);
		err = NULL;
		break;
	default:
		break;
	}
	if (client_runtime_dir(&dir, &err) < 0) {
		dlog_msg("%s", err);
		free(err);
		free(srv->state_dir);
		return EXIT_BOXY_FAILED;
	}
	srv->sock_path = xasprintf("%s/daemon.sock", dir);
	free(dir);
	if (listen_socket(srv, &err) < 0 || listen_abstract(srv, &err) < 0) {
		dlog_msg("%s", err);
		free(err);
		if (srv->listen_fd >= 0) {
			close(srv->listen_fd);
			if (!activation_inherited())
				unlink(srv->sock_path);
		}
		free(srv->sock_path);
		free(srv->abstract);
		free(srv->state_dir);
		return EXIT_BOXY_FAILED;
	}
	write_record(srv);
	srv->started_ms = now_real_ms();
	srv->stop_grace_s = stop_grace();
	dlog_msg("started, build %s, socket %s", build_id(), srv->sock_path);

	/*
	 * A store that cannot be opened degrades to a warning: runs still work.
	 * Sessions it calls running belong to a daemon that died: the store's
	 * lock (held above) says no other daemon serves it.
	 */
	dbpath = store_default_path();
	protect_own_dirs(srv, dbpath);
	if (!dbpath || store_open(dbpath, &srv->store, &err) < 0) {
		dlog_msg("session store unavailable: %s", err ? err : "no state directory");
		free(err);
		err = NULL;
	} else if (store_mark_lost(srv->store, (int64_t)now_real_ms(), &lost, &err) < 0) {
		dlog_msg("%s", err);
		free(err);
		err = NULL;
	} else if (lost > 0) {
		dlog_msg("%d %s of a daemon that died %s marked lost", lost,
			 lost == 1 ? "session" : "sessions", lost == 1 ? "was" : "were");
	}
	free(dbpath);

	srv->loop = EV_DEFAULT;
	ev_io_init(&srv->accept_w, accept_cb, srv->listen_fd, EV_READ);
	srv->accept_w.data = srv;
	ev_io_start(srv->loop, &srv->accept_w);
	ev_io_init(&srv->accept_abs_w, accept_cb, srv->abs_fd, EV_READ);
	srv->accept_abs_w.data = srv;
	ev_io_start(srv->loop, &srv->accept_abs_w);
	ev_timer_init(&srv->watch_w, on_watch, 1.0, 1.0);
	srv->watch_w.data = srv;
	ev_timer_start(srv->loop, &srv->watch_w);
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
			dlog_msg("%s", err);
			free(err);
			err = NULL;
		} else {
			dlog_msg("%d running %s killed and marked lost", lost,
				 lost == 1 ? "session" : "sessions");
		}
	}
	close(srv->listen_fd);
	close(srv->abs_fd);

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
	seal_forget_key();
	/*
	 * Last: the socket file (ours only while it is the one we bound), then the
	 * lock; the store is another daemon's to open once the lock goes.
	 */
	{
		struct stat st;

		if (!activation_inherited() && lstat(srv->sock_path, &st) == 0 && srv->sock_known &&
		    st.st_dev == srv->sock_dev && st.st_ino == srv->sock_ino)
			unlink(srv->sock_path);
	}
	if (ftruncate(srv->lock_fd, 0) < 0)
		dlog_msg("clearing the daemon record: %s", strerror(errno));
	close(srv->lock_fd);
	free(srv->sock_path);
	free(srv->abstract);
	free(srv->state_dir);
	dlog_msg("stopped");
	return 0;
}
