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

#include <elf.h>
#include <errno.h>
#include <link.h>
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
#include "common/protected.h"
#include "common/util.h"
#include "proto/wire.h"

/* Bytes of the build-id note the id keeps (GNU ld writes 20 for sha1): 16 hex digits, as before. */
#define BUILD_ID_MAX_BYTES 8

#define START_WAIT_MS 5000

/* Create dir 0700 if missing; then insist it is ours, a directory, and private. */
static int private_dir(const char *dir, char **err)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return set_err_errno(err, "creating %s", dir);
	if (lstat(dir, &st) < 0)
		return set_err_errno(err, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return set_err(err, "%s is not a directory", dir);
	if (st.st_uid != getuid())
		return set_err(err, "%s belongs to uid %u, not to you", dir, (unsigned)st.st_uid);
	if ((st.st_mode & 0077) != 0)
		return set_err(err, "%s is accessible to others (mode %03o); it must be 0700",
			       dir, (unsigned)(st.st_mode & 0777));
	return 0;
}

char *client_state_dir(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (state && state[0] == '/')
		return xasprintf("%s/boxy", state);
	if (home && home[0] == '/')
		return xasprintf("%s/.local/state/boxy", home);
	pw = getpwuid(getuid());
	return pw ? xasprintf("%s/.local/state/boxy", pw->pw_dir) : NULL;
}

/* mkdir -p path, each missing directory 0700; what exists is left as it is. */
static void mkdir_parents(const char *path)
{
	char *p = xstrdup(path), *q = p;

	while ((q = strchr(q + 1, '/'))) {
		*q = '\0';
		mkdir(p, 0700);
		*q = '/';
	}
	mkdir(p, 0700);
	free(p);
}

int client_state_dir_make(char **out, char **err)
{
	char *state = client_state_dir();
	struct stat st;

	if (!state)
		return set_err(err, "cannot find a state directory (set HOME or XDG_STATE_HOME)");
	mkdir_parents(state);
	if (lstat(state, &st) < 0) {
		set_err_errno(err, "%s", state);
		free(state);
		return -1;
	}
	/* The daemon's record and lock live here: nobody else may write it. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0022) != 0) {
		set_err(err, "%s must be a directory of yours that only you can write", state);
		free(state);
		return -1;
	}
	*out = state;
	return 0;
}

/*
 * Without XDG_RUNTIME_DIR the socket lives in the state directory
 * (~/.local/state/boxy/run): a directory of the user's own, so no other
 * user can create it first (as they could /tmp/boxy-UID) to block or
 * hijack it.
 */
int client_runtime_dir(char **out, char **err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir, *state;

	if (xdg && xdg[0] == '/') {
		dir = xasprintf("%s/boxy", xdg);
	} else {
		if (client_state_dir_make(&state, err) < 0)
			return -1;
		dir = xasprintf("%s/run", state);
		free(state);
	}
	if (private_dir(dir, err) < 0) {
		free(dir);
		return -1;
	}
	*out = dir;
	return 0;
}

int client_sock_addr(const char *path, struct sockaddr_un *sa, socklen_t *len, int *dirfd)
{
	const char *slash;
	char *dir;

	*dirfd = -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (path[0] == '@') {
		/* Abstract: a NUL, then the name, no terminator. */
		size_t n = strlen(path + 1);

		if (n == 0 || n >= sizeof(sa->sun_path) - 1) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(sa->sun_path + 1, path + 1, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
		return 0;
	}
	if (strlen(path) < sizeof(sa->sun_path)) {
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
		*len = sizeof(*sa);
		return 0;
	}
	/* Too long for sun_path: reach it through a descriptor of its directory. */
	slash = strrchr(path, '/');
	if (!slash || strlen(slash) > 64) {
		errno = ENAMETOOLONG;
		return -1;
	}
	dir = xstrndup(path, (size_t)(slash - path));
	*dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (*dirfd < 0)
		return -1;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d%s", *dirfd, slash);
	*len = sizeof(*sa);
	return 0;
}

/*
 * The build id tells two builds of boxy apart — even of the same version —
 * which is the point: the daemon assembles every sandbox, so its rules must
 * be this binary's rules. It is the linker's build-id note (-Wl,--build-id: a
 * hash of the whole linked output) read from the running image's program
 * headers, so no file is read: its first 8 bytes, as 16 hex digits. A binary
 * linked without the note falls back to FNV-1a over the executable's bytes.
 */
static char build_id_hex[2 * BUILD_ID_MAX_BYTES + 1];

/* dl_iterate_phdr callback: hex the GNU build-id note of the main program (the first object). */
static int build_id_from_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		size_t left = ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (left >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t namesz = (nh->n_namesz + 3u) & ~(size_t)3;
			size_t descsz = (nh->n_descsz + 3u) & ~(size_t)3;
			size_t total = sizeof(*nh) + namesz + descsz;

			if (namesz > left || descsz > left || total > left)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0 &&
			    nh->n_descsz >= BUILD_ID_MAX_BYTES) {
				const unsigned char *d = p + sizeof(*nh) + namesz;

				for (size_t j = 0; j < BUILD_ID_MAX_BYTES; j++)
					snprintf(build_id_hex + 2 * j, 3, "%02x", d[j]);
				return 1;
			}
			p += total;
			left -= total;
		}
	}
	return 1; /* only the main program counts */
}

/* FNV-1a over /proc/self/exe: the id of a binary linked without a build-id note. */
static void build_id_from_file(void)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[65536];
	ssize_t n;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fatal_errno("reading /proc/self/exe");
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ULL;
		}
	}
	close(fd);
	snprintf(build_id_hex, sizeof(build_id_hex), "%016llx", (unsigned long long)h);
}

/* This binary's build id, as lowercase hex (computed once). */
const char *build_id(void)
{
	if (build_id_hex[0])
		return build_id_hex;
	dl_iterate_phdr(build_id_from_phdr, NULL);
	if (!build_id_hex[0])
		build_id_from_file();
	return build_id_hex;
}

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

char *client_record_path(const char *state)
{
	return xasprintf("%s/daemon.lock", state);
}

void daemon_record_free(struct daemon_record *r)
{
	free(r->sock);
	free(r->abstract);
	memset(r, 0, sizeof(*r));
}

int client_record_read(const char *state, struct daemon_record *r)
{
	char *path = client_record_path(state), *text = NULL, *save = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = read_file(path, 4096, &text, NULL);
	free(path);
	if (rc < 0)
		return -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "pid ", 4) == 0) {
			char *end;
			long v = strtol(line + 4, &end, 10);

			if (!*end && v > 0 && v < (1L << 30))
				r->pid = (pid_t)v;
		} else if (strncmp(line, "socket /", 8) == 0 && !r->sock) {
			r->sock = xstrdup(line + 7);
		} else if (strncmp(line, "abstract @", 10) == 0 && !r->abstract) {
			r->abstract = xstrdup(line + 9);
		}
	}
	free(text);
	if (r->pid <= 0) {
		daemon_record_free(r);
		return -1;
	}
	return 0;
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
		return set_err_errno(err, "talking to the daemon");
	if (msg_recv(fd, &m, err) < 0) {
		if (err && !*err)
			set_err(err, "the daemon closed the connection");
		return -1;
	}
	*refusal = 0;
	memset(info, 0, sizeof(*info));
	if (m.type == MSG_WELCOME) {
		rc = dmsg_decode_welcome(m.payload, m.len, info) == 0 ? 0
			: set_err(err, "malformed welcome from the daemon");
	} else if (m.type == MSG_REFUSE) {
		char *words;

		dmsg_decode_refuse(m.payload, m.len, refusal, &words, info);
		set_err(err, "daemon refused: %s", words ? words : "no reason given");
		free(words);
		rc = -1;
	} else {
		rc = set_err(err, "unexpected reply %#x from the daemon", m.type);
	}
	msg_free(&m);
	return rc;
}

int client_stop_daemon(int fd, char **err)
{
	struct msg m;
	int rc;

	if (msg_send(fd, MSG_SHUTDOWN, NULL, 0, NULL, 0) < 0)
		return set_err_errno(err, "talking to the daemon");
	if (msg_recv(fd, &m, err) < 0)
		return set_err(err, "the daemon closed the connection");
	rc = 0;
	if (m.type == MSG_ERROR) {
		uint16_t code;
		char *words = dmsg_decode_error(m.payload, m.len, &code);

		rc = set_err(err, "%s", words ? words : "the daemon refused to stop");
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
	bool replaced = false;

	memset(info, 0, sizeof(*info));
	if (client_runtime_dir(&dir, err) < 0)
		return -1;
	sock = xasprintf("%s/daemon.sock", dir);
	state = client_state_dir();
again:
	fd = find_daemon(sock, state);
	if (fd < 0 && errno == EPERM) {
		set_err(err, "the process listening on %s is not a boxy daemon of yours outside "
			"the sandboxes (another pid namespace): refusing to talk to it; if that is "
			"unexpected, something inside a sandbox replaced the socket", sock);
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
			set_err_errno(err, "locking %s", lockpath);
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
			set_err(err, "the daemon did not start within %d s (see %s/daemon.log)",
				START_WAIT_MS / 1000, state);
			goto out;
		}
	}
	if (fd < 0) {
		set_err(err, "no daemon is running");
		goto out;
	}
	if (hello(fd, info, &refusal, err) < 0) {
		close(fd);
		fd = -1;
		if (refusal == REFUSE_BUILD && replace_stale && !replaced) {
			if (info->sessions > 0) {
				set_err(err, "the running daemon is another build of boxy and has %u "
					"session(s) running; stop them or wait, then `boxy daemon "
					"restart`", info->sessions);
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
			set_err(err, "the daemon on %s (pid %u) serves the store in %s, not this "
				"client's %s (HOME or XDG_STATE_HOME differs); give this client an "
				"XDG_RUNTIME_DIR of its own for a daemon of its own, or the same "
				"state directory", sock, other.pid,
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
