/*
 * client/client.c — finding, starting and greeting the per-user daemon.
 *
 * Like tmux, the client starts the server when none answers: under a lock
 * file in the runtime directory, so that two `boxy run`s racing each other
 * start one daemon between them, then it waits a bounded time for the
 * socket to accept. The daemon is an exec of this same binary
 * (`boxy daemon serve`), detached into its own session with its log under
 * the state directory.
 */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "proto/msg.h"
#include "proto/daemon-msg.h"
#include "common/lang.h"
#include "common/protected.h"
#include "common/util.h"
#include "proto/wire.h"

#define START_WAIT_MS 5000

/* Connect to path (a file name, or "@name" for an abstract socket); -1 with errno. */
static int connect_to(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, dirfd, rc, e;

	if (client_sock_addr(path, &sa, &len, &dirfd) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		if (dirfd >= 0)
			close(dirfd);
		errno = e;
		return -1;
	}
	rc = connect(fd, (struct sockaddr *)&sa, len);
	e = errno;
	if (dirfd >= 0)
		close(dirfd);
	if (rc < 0) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int try_connect(const char *path)
{
	int fd = connect_to(path);

	if (fd < 0)
		return -1;
	/*
	 * Whoever answers must be a process of ours outside every sandbox: a
	 * payload that can write the socket's directory could otherwise put a
	 * listener of its own there and read the next run's environment.
	 */
	if (!peer_is_local_user(fd)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* The peer is the recorded daemon: ours, outside every sandbox, with its pid. */
static bool peer_is_recorded(int fd, pid_t pid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return peer_is_local_user(fd) &&
	       getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid == pid;
}

/*
 * The daemon the state directory's record names, reached through its
 * abstract socket (no file a payload could unlink or replace), else its
 * socket file. It finds the daemon of this store when this client's
 * runtime directory differs from the one the daemon was started with (ssh
 * and a desktop session), and when the socket file was tampered with.
 */
static int connect_recorded(const char *state)
{
	struct daemon_record r;
	int fd = -1;

	if (!state || client_record_read(state, &r) < 0)
		return -1;
	for (int i = 0; i < 2 && fd < 0; i++) {
		const char *path = i == 0 ? r.abstract : r.sock;

		if (!path || (fd = connect_to(path)) < 0)
			continue;
		if (!peer_is_recorded(fd, r.pid)) {
			close(fd);
			fd = -1;
		}
	}
	daemon_record_free(&r);
	return fd;
}

/* The daemon: on this client's socket, else the one the store's record names. */
static int find_daemon(const char *sock, const char *state)
{
	int fd = try_connect(sock), e;

	if (fd >= 0)
		return fd;
	e = errno;
	fd = connect_recorded(state);
	if (fd >= 0)
		return fd;
	errno = e;
	return -1;
}

/* Start `boxy daemon serve` detached: its own session, stdio to its log. */
static int spawn_daemon(char **err)
{
	char *state, *log;
	pid_t pid;
	int status;

	if (client_state_dir_make(&state, err) < 0)
		return -1;
	log = xasprintf("%s/daemon.log", state);
	pid = fork();
	if (pid < 0) {
		free(state);
		free(log);
		return set_err_errno(err, "fork");
	}
	if (pid == 0) {
		/* Double fork so the daemon is not our child and outlives us. */
		int fd;

		if (setsid() < 0 || fork() != 0)
			_exit(0);
		/*
		 * Nothing of the caller's but the log and /dev/null: a descriptor
		 * the caller left open (a pipe its shell waits on for EOF, a file
		 * it never meant to share) would otherwise live as long as the daemon.
		 */
		close_range(3, ~0u, 0);
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, STDIN_FILENO);
		if (chdir("/") < 0)
			_exit(125);
		execl("/proc/self/exe", "boxy", "daemon", "serve", (char *)NULL);
		_exit(125);
	}
	waitpid(pid, &status, 0);
	free(state);
	free(log);
	return 0;
}

/* Are a and b the same directory (by resolved path; a missing one is no match)? */
static bool client_same_dir(const char *a, const char *b)
{
	char *ra, *rb;
	bool same;

	if (!a || !b)
		return false;
	if (strcmp(a, b) == 0)
		return true;
	ra = realpath(a, NULL);
	rb = realpath(b, NULL);
	same = ra && rb && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

/*
 * Tell the daemon which language this client reads (MSG_LANG): what it
 * answers this client is worded in it. Under --json this is C, so a
 * script's errors are English too.
 */
static void send_lang(int fd)
{
	struct wbuf w;
	char *lang, *locale;

	lang_client_tag(&lang, &locale);
	wbuf_init(&w);
	dmsg_encode_lang(&w, lang, locale);
	msg_send(fd, MSG_LANG, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	free(lang);
	free(locale);
}

static int hello(int fd, struct daemon_info *info, uint16_t *refusal, char **err)
{
	struct wbuf w;
	struct msg m;
	int rc;

	wbuf_init(&w);
	dmsg_encode_hello(&w, MSG_PROTOCOL, build_id());
	rc = msg_send(fd, MSG_HELLO, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	if (rc < 0)
		return set_err_errno(err, _("talking to the daemon"));
	if (msg_recv(fd, &m, err) < 0) {
		if (err && !*err)
			set_err(err, _("the daemon closed the connection"));
		return -1;
	}
	*refusal = 0;
	memset(info, 0, sizeof(*info));
	if (m.type == MSG_WELCOME) {
		rc = dmsg_decode_welcome(m.payload, m.len, info) == 0 ? 0
			: set_err(err, _("malformed welcome from the daemon"));
		if (rc == 0)
			send_lang(fd);
	} else if (m.type == MSG_REFUSE) {
		char *words;

		/* A refusal's words are fixed ones (daemon/server.c): ours translates them. */
		dmsg_decode_refuse(m.payload, m.len, refusal, &words, info);
		set_err(err, _("daemon refused: %s"), words ? _(words) : _("no reason given"));
		free(words);
		rc = -1;
	} else {
		rc = set_err(err, _("unexpected reply %#x from the daemon"), m.type);
	}
	msg_free(&m);
	return rc;
}

int client_stop_daemon(int fd, char **err)
{
	struct msg m;
	int rc;

	if (msg_send(fd, MSG_SHUTDOWN, NULL, 0, NULL, 0) < 0)
		return set_err_errno(err, _("talking to the daemon"));
	if (msg_recv(fd, &m, err) < 0)
		return set_err(err, _("the daemon closed the connection"));
	rc = 0;
	if (m.type == MSG_ERROR) {
		uint16_t code;
		char *words = dmsg_decode_error(m.payload, m.len, &code);

		rc = set_err(err, "%s", words ? words : _("the daemon refused to stop"));
		free(words);
	}
	msg_free(&m);
	return rc;
}

/* Wait for a daemon that was asked to stop to be gone (bounded). */
static void wait_gone(pid_t pid)
{
	for (int i = 0; i < 100 && kill(pid, 0) == 0; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000000 }, NULL);
}

int client_connect(bool start, bool replace_stale, struct daemon_info *info, char **err)
{
	char *dir = NULL, *sock = NULL, *lockpath = NULL, *state = NULL;
	int fd = -1, lockfd = -1;
	uint16_t refusal = 0;
	bool replaced = false, retried = false;

	memset(info, 0, sizeof(*info));
	if (client_runtime_dir(&dir, err) < 0)
		return -1;
	sock = xasprintf("%s/daemon.sock", dir);
	state = client_state_dir();
again:
	fd = find_daemon(sock, state);
	if (fd < 0 && errno == EPERM) {
		set_err(err, _("the process listening on %s is not a boxy daemon of yours outside "
			  "the sandboxes (another pid namespace): refusing to talk to it; if that is "
			  "unexpected, something inside a sandbox replaced the socket"), sock);
		goto out;
	}
	if (fd < 0 && start) {
		uint64_t deadline;

		/*
		 * Only one client starts a daemon for this store; the others wait on
		 * the lock, then connect. The lock is beside the store, not the
		 * socket: two clients with different runtime directories share it.
		 */
		free(state);
		state = NULL;
		if (client_state_dir_make(&state, err) < 0)
			goto out;
		free(lockpath);
		lockpath = xasprintf("%s/daemon.start.lock", state);
		lockfd = open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0) {
			set_err_errno(err, _("locking %s"), lockpath);
			goto out;
		}
		fd = find_daemon(sock, state);
		if (fd < 0) {
			if (spawn_daemon(err) < 0)
				goto out;
			deadline = now_mono_ms() + START_WAIT_MS;
			while ((fd = find_daemon(sock, state)) < 0 && now_mono_ms() < deadline)
				nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
		}
		close(lockfd);
		lockfd = -1;
		if (fd < 0) {
			set_err(err, _("the daemon did not start within %d s (see %s/daemon.log)"),
				START_WAIT_MS / 1000, state);
			goto out;
		}
	}
	if (fd < 0) {
		set_err(err, _("no daemon is running"));
		goto out;
	}
	if (hello(fd, info, &refusal, err) < 0) {
		close(fd);
		fd = -1;
		if (refusal == REFUSE_BUILD && replace_stale && !replaced) {
			if (info->sessions > 0) {
				set_err(err, ngettext("the running daemon is another build of boxy and "
						      "has %u session running; stop it or wait, then "
						      "`boxy daemon restart`",
						      "the running daemon is another build of boxy and "
						      "has %u sessions running; stop them or wait, then "
						      "`boxy daemon restart`", info->sessions),
					info->sessions);
				daemon_info_free(info);
				goto out;
			}
			/* An idle stale daemon: replace it, and say so. */
			fprintf(stderr, _("boxy: replacing the idle daemon of another build "
					  "(pid %u)\n"), info->pid);
			daemon_info_free(info);
			free(*err);
			*err = NULL;
			if (kill((pid_t)info->pid, SIGTERM) == 0)
				wait_gone((pid_t)info->pid);
			replaced = true;
			goto again;
		}
		/*
		 * No refusal, no welcome: the connection broke (a daemon killed
		 * while its socket still took our connect resets it). Once, look
		 * again, starting one if none is there now.
		 */
		if (refusal == 0 && start && !retried) {
			daemon_info_free(info);
			memset(info, 0, sizeof(*info));
			if (err) {
				free(*err);
				*err = NULL;
			}
			retried = true;
			nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000 }, NULL);
			goto again;
		}
		/* info stays filled for a refusal: the caller may want to know who refused. */
	} else if (!client_same_dir(info->state_dir, state)) {
		/*
		 * The daemon on this socket serves another store (this client's HOME or
		 * XDG_STATE_HOME differs): its runs would be recorded where this client
		 * never looks. One recorded for this client's store is the right one;
		 * failing that, say so in one line — never a silent split.
		 */
		int mine = connect_recorded(state);
		struct daemon_info other = *info;

		close(fd);
		fd = -1;
		memset(info, 0, sizeof(*info));
		if (mine >= 0 && hello(mine, info, &refusal, err) == 0 &&
		    client_same_dir(info->state_dir, state)) {
			fd = mine;
		} else {
			if (mine >= 0)
				close(mine);
			daemon_info_free(info);
			if (err) {
				free(*err);
				*err = NULL;
			}
			set_err(err, _("the daemon on %s (pid %u) serves the store in %s, not this "
				  "client's %s (HOME or XDG_STATE_HOME differs); give this client an "
				  "XDG_RUNTIME_DIR of its own for a daemon of its own, or the same "
				  "state directory"), sock, other.pid,
				other.state_dir ? other.state_dir : "?", state ? state : "(none)");
		}
		daemon_info_free(&other);
	}
out:
	if (lockfd >= 0)
		close(lockfd);
	free(dir);
	free(sock);
	free(lockpath);
	free(state);
	return fd;
}

void client_protect_own_dirs(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *state = client_state_dir(), *dir;
	struct daemon_record r;

	if (!state)
		return;
	protected_add_dir(state);
	dir = xdg && xdg[0] == '/' ? xasprintf("%s/boxy", xdg) : xasprintf("%s/run", state);
	protected_add_dir(dir);
	free(dir);
	if (client_record_read(state, &r) == 0) {
		if (r.sock && strrchr(r.sock, '/')) {
			dir = xstrndup(r.sock, (size_t)(strrchr(r.sock, '/') - r.sock));
			protected_add_dir(dir);
			free(dir);
		}
		daemon_record_free(&r);
	}
	free(state);
}
