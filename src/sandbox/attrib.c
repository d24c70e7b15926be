/*
 * sandbox/attrib.c — who in a sandbox did it: the /proc reading and the
 * worker thread (see sandbox/attrib.h; the text is parsed by the pure
 * sandbox/attrib-proc.c).
 *
 * A look-up for a flow reads the sandbox's socket table for its protocol
 * (through boxy-init's /proc entry: the tables of the network namespace it
 * lives in), finds the socket's inode, then the process that holds it: the
 * inode → process map first (checked again with one readlink, since a
 * descriptor may have been closed), then the processes that owned the last
 * sockets (their next descriptors and last socket's slot before the rest),
 * then the processes started since the last look (names in /proc that were
 * not there then), then every process known, and at most once a second a
 * walk of boxy-init's descendants (/proc/PID/task/TID/children). Every
 * process is opened as a /proc/PID directory and everything about it read
 * through that descriptor, which names one process for good: when the pid
 * was reused between the list and the read, the start time says so and the
 * look-up goes on without it, so a reused pid is never taken for the process
 * it replaced; a process outside the sandbox's pid namespace is never one.
 * Its details (comm, argv, the package manager's variables, its directory)
 * are read once per pid and start time. A process that made itself not
 * dumpable has its fd directory and environ owned by root: its descriptors
 * are read with pidfd_getfd and its environment with process_vm_readv, which
 * the daemon, owner of the sandbox's user namespace, may use.
 *
 * Costs are bounded, since a payload can make ten thousand processes or
 * sockets: each look-up stops after ATTRIB_LOOKUP_MS, ATTRIB_PROCS_MAX
 * processes or ATTRIB_FDS_MAX descriptors ("unknown"), an environment is read
 * up to ATTRIB_ENV_READ bytes, a command line up to ATTRIB_CMDLINE_READ, and
 * the worker's CPU time has a budget (ATTRIB_CPU_SHARE of a core, with a
 * burst of ATTRIB_CPU_BURST_MS): past it attrib_ask says no and the answer
 * is "unknown" until the budget refills.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "sandbox/attrib.h"
#include "sandbox/attrib-proc.h"

#define ATTRIB_LOOKUP_MS     50             /* one look-up's wall time */
#define ATTRIB_PROCS_MAX     4096           /* processes one look-up considers */
#define ATTRIB_FDS_MAX       200000         /* descriptors one look-up reads */
#define ATTRIB_ENV_READ      (256u << 10)   /* bytes of an environment read */
#define ATTRIB_CMDLINE_READ  4096
#define ATTRIB_META_READ     (64u << 10)    /* a PKG-INFO or pyproject.toml */
#define ATTRIB_CHAIN_MAX     32             /* parents followed up from the owner */
#define ATTRIB_INFO_MAX      1024           /* processes whose details are kept */
#define ATTRIB_INODES_MAX    65536          /* inode → process entries kept */
#define ATTRIB_MRU           8
#define ATTRIB_WALK_MS       1000           /* the whole tree walked at most once a second */
#define ATTRIB_HOST_PIDS_MAX 262144         /* /proc names read for newcomers */
#define ATTRIB_CPU_SHARE     4              /* a quarter of a core, on average */
#define ATTRIB_CPU_BURST_MS  1000
#define ATTRIB_STALE_MS      2500           /* past this nobody waits for the answer */
#define ATTRIB_BUF           (64u << 10)

/* A process of the sandbox, read once: what the rules and the answer need. */
struct info {
	struct info *next;
	pid_t host_pid;
	uint64_t start;
	pid_t pid;                      /* the sandbox's */
	char comm[ATTRIB_COMM_MAX];
	struct attrib_argv argv;
	struct attrib_link link;        /* manager, env, pip directory (root is set per chain) */
};

/* Where a socket was seen: a process's descriptor. */
struct inode_ent {
	struct inode_ent *next;
	uint64_t inode;
	pid_t host_pid;
	uint64_t start;
	int fd;
};

/* A set of pids (open addressing; rebuilt, never deleted from). */
struct pidset {
	pid_t *slots;           /* 0: empty */
	size_t cap;             /* a power of two */
};

#define INFO_BUCKETS  256
#define INODE_BUCKETS 4096

/* Everything one look-up needs and what look-ups share (the worker's alone). */
struct ctx {
	pid_t init;
	int init_dir;                   /* /proc/INIT */
	uint64_t init_start;
	dev_t ns_dev;                   /* the sandbox's pid namespace: ns/pid of init */
	ino_t ns_ino;
	bool root_known;
	pid_t root;                     /* the session's command: init's first child */
	uint64_t root_start;

	pid_t *procs;                   /* the sandbox's processes (host pids), newest first */
	size_t nprocs;
	struct pidset known;            /* every pid in /proc at the last look (newcomers) */
	uint64_t walked_ms;             /* the last walk of the whole tree (refresh_procs) */
	struct proc_seen { pid_t pid; uint64_t start; } mru[ATTRIB_MRU];
	size_t nmru;
	struct fd_seen {                /* descriptors read before, of recent owners */
		pid_t pid;
		uint64_t start, used;
		uint64_t *bits;
		size_t nbits;
		int top;                /* the highest descriptor read */
		int last;               /* the last one that held the socket looked for (-1) */
		bool has_dir;
		int dir;                /* its /proc/PID, kept open: see scan_proc */
	} seen[ATTRIB_MRU];
	uint64_t seen_clock;

	struct inode_ent *inodes[INODE_BUCKETS];
	size_t ninodes;
	struct info *infos[INFO_BUCKETS];
	size_t ninfos;

	char *buf;                      /* ATTRIB_BUF, for reads */
	char *envbuf;                   /* ATTRIB_ENV_READ */
	uint64_t deadline_ms;           /* this look-up's */
	size_t fds_read, procs_read;
	const volatile int *stop;       /* attrib_free asked the worker to stop */
	int diag;                       /* sock_diag in the sandbox's netns; DIAG_UNTRIED, -1 none */
	uint32_t diag_seq;
	uint64_t diag_asked;            /* look-ups the kernel answered */
};

#define DIAG_UNTRIED (-2)
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* ---- small I/O helpers ------------------------------------------------------------ */

/* Read up to n bytes of dir/name (no links followed); -1 when it cannot be opened. */
static ssize_t read_at(int dir, const char *name, char *buf, size_t n, bool *truncated)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	size_t got = 0;

	if (truncated)
		*truncated = false;
	if (fd < 0)
		return -1;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got == n && truncated) {
		char extra;

		*truncated = read(fd, &extra, 1) > 0;
	}
	close(fd);
	return (ssize_t)got;
}

/* Is the look-up out of time (or the worker asked to stop)? */
static bool out_of_time(const struct ctx *c)
{
	return (c->stop && *c->stop) || now_mono_ms() > c->deadline_ms;
}

/* Open /proc/PID as a directory: every later read goes through it (one process, for good). */
static int proc_open(pid_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The stat of the process behind dir; false when it is gone. */
static bool proc_stat(struct ctx *c, int dir, struct attrib_stat *st)
{
	ssize_t n = read_at(dir, "stat", c->buf, ATTRIB_BUF - 1, NULL);

	return n > 0 && attrib_stat_parse(c->buf, (size_t)n, st);
}

/* Is the process behind dir in the sandbox's pid namespace? */
static bool in_sandbox(const struct ctx *c, int dir)
{
	struct stat st;

	return fstatat(dir, "ns/pid", &st, 0) == 0 && st.st_ino == c->ns_ino &&
	       st.st_dev == c->ns_dev;
}

/* ---- the process list ---------------------------------------------------------------- */

static int pid_desc(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Append pid's children (every thread's) to the list. */
static void add_children(struct ctx *c, pid_t pid, pid_t **list, size_t *n)
{
	char path[64];
	int tdir;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	tdir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tdir < 0 || !(d = fdopendir(tdir))) {
		if (tdir >= 0)
			close(tdir);
		return;
	}
	while ((e = readdir(d)) && *n < ATTRIB_PROCS_MAX) {
		char name[sizeof(e->d_name) + 16];
		ssize_t r;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(name, sizeof(name), "%s/children", e->d_name);
		r = read_at(dirfd(d), name, c->buf, ATTRIB_BUF - 1, NULL);
		if (r <= 0)
			continue;
		c->buf[r] = '\0';
		for (char *p = c->buf; *p && *n < ATTRIB_PROCS_MAX;) {
			char *end;
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (v > 0) {
				pid_t *slot = xappend(list, n, sizeof(**list));

				*slot = (pid_t)v;
			}
			p = end;
		}
	}
	closedir(d);
}

/* The sandbox's processes now: boxy-init's descendants, highest pid first (a guess at newest). */
static void refresh_procs(struct ctx *c)
{
	pid_t *list = NULL;
	size_t n = 0;

	/* Not cut by the look-up's deadline: a list half made would hide the rest. */
	add_children(c, c->init, &list, &n);
	for (size_t i = 0; i < n && n < ATTRIB_PROCS_MAX && !(c->stop && *c->stop); i++)
		add_children(c, list[i], &list, &n);
	if (n)
		qsort(list, n, sizeof(*list), pid_desc);
	free(c->procs);
	c->procs = list;
	c->nprocs = n;
	c->walked_ms = now_mono_ms();
}


static bool pidset_has(const struct pidset *p, pid_t v)
{
	if (!p->cap)
		return false;
	for (size_t i = ((size_t)v * 0x9e3779b1u) & (p->cap - 1); p->slots[i];
	     i = (i + 1) & (p->cap - 1))
		if (p->slots[i] == v)
			return true;
	return false;
}

static void pidset_add(struct pidset *p, pid_t v)
{
	size_t i;

	if (v <= 0 || pidset_has(p, v))
		return;
	if (!p->cap) {
		p->cap = 1024;
		p->slots = xcalloc(p->cap, sizeof(*p->slots));
	}
	for (i = ((size_t)v * 0x9e3779b1u) & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
		;
	p->slots[i] = v;
}

/*
 * The sandbox's processes started since the last look — a pid in the
 * daemon's /proc that was not there then (pids wrap around, so "higher" means
 * nothing), checked to be in the sandbox's pid namespace — newest first (by
 * pid: a guess): a connection's owner is most often a process that just
 * started, and this costs one pass over /proc's names and a check per new
 * pid, where the full walk (refresh_procs) reads every process's children.
 * A pid reused between two looks is not new here; the walk finds it.
 */
static void newcomers(struct ctx *c, pid_t **out, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct pidset now = { 0 };
	size_t listed = 0;

	*out = NULL;
	*n = 0;
	while (d && (e = readdir(d)) && listed < ATTRIB_HOST_PIDS_MAX) {
		long v;
		int dir;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		v = strtol(e->d_name, NULL, 10);
		if (v <= 0 || v > INT32_MAX)
			continue;
		if (now.cap && listed * 2 >= now.cap) {
			struct pidset bigger = { xcalloc(now.cap * 2, sizeof(pid_t)), now.cap * 2 };

			for (size_t i = 0; i < now.cap; i++)
				if (now.slots[i])
					pidset_add(&bigger, now.slots[i]);
			free(now.slots);
			now = bigger;
		}
		pidset_add(&now, (pid_t)v);
		listed++;
		if (!c->known.cap || pidset_has(&c->known, (pid_t)v) || *n >= ATTRIB_PROCS_MAX)
			continue;       /* the first look knows nothing new: the walk does it */
		dir = proc_open((pid_t)v);
		if (dir < 0)
			continue;
		if (in_sandbox(c, dir)) {
			pid_t *slot = xappend(out, n, sizeof(**out));

			*slot = (pid_t)v;
		}
		close(dir);
	}
	if (d)
		closedir(d);
	free(c->known.slots);
	c->known = now;
	if (*n)
		qsort(*out, *n, sizeof(**out), pid_desc);
}

/* The session's own command: boxy-init's child that started first (later ones are orphans). */
static void find_root(struct ctx *c)
{
	pid_t *kids = NULL;
	size_t n = 0;

	if (c->root_known)
		return;
	add_children(c, c->init, &kids, &n);
	for (size_t i = 0; i < n; i++) {
		struct attrib_stat st;
		int dir = proc_open(kids[i]);

		if (dir < 0)
			continue;
		if (proc_stat(c, dir, &st) && st.ppid == c->init && in_sandbox(c, dir) &&
		    (!c->root_known || st.start < c->root_start)) {
			c->root = kids[i];
			c->root_start = st.start;
			c->root_known = true;
		}
		close(dir);
	}
	free(kids);
}

/* ---- sockets --------------------------------------------------------------------------- */

/* The best match for q in one table: its inode (0: none), *score its quality. */
static uint64_t table_find(struct ctx *c, const char *name, int family,
			   const struct attrib_query *q, int *score)
{
	int fd = openat(c->init_dir, name, O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	uint64_t best = 0;
	bool eof = false;

	*score = 0;
	if (fd < 0)
		return 0;
	while (!eof && *score < 2) {
		ssize_t r = read(fd, c->buf + have, ATTRIB_BUF - have);
		size_t start = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			eof = true;
		else
			have += (size_t)r;
		for (;;) {
			char *nl = memchr(c->buf + start, '\n', have - start);
			size_t len = nl ? (size_t)(nl - c->buf - start) : (eof ? have - start : 0);
			struct attrib_sock s;
			int m;

			if (!len && !nl)
				break;
			if (attrib_sock_parse(c->buf + start, len, family, &s)) {
				m = attrib_sock_match(&s, q->proto, &q->local, q->lport, &q->remote,
						      q->rport);
				if (m > *score) {
					*score = m;
					best = s.inode;
				}
			}
			start += len + (nl ? 1 : 0);
			if (*score == 2 || start >= have)
				break;
		}
		memmove(c->buf, c->buf + start, have - start);
		have -= start;
		if (have == ATTRIB_BUF)
			have = 0;       /* a line this long is not the kernel's: drop it */
	}
	close(fd);
	return best;
}

/* ---- sock_diag: the kernel's own look-up, in the sandbox's network namespace -------- */

/*
 * The helper forked to make the socket: it joins the sandbox's user
 * namespace (whose owner holds every capability in it: a single-threaded
 * process may enter it, so a fork of the multi-threaded daemon) and its
 * network namespace, makes a NETLINK_SOCK_DIAG socket there — a netlink
 * socket asks about the namespace it was made in, whoever holds it — tries
 * it on a TCP and a UDP socket of its own (the kernel answers ENOENT alike
 * for "no such socket" and "no diag module", so an untried socket would make
 * every flow "unknown"), and hands it back. System calls only, then _exit.
 */
static void diag_helper(int userns, int netns, int back)
{
	struct {
		char ok;
	} r = { 0 };
	char req[ATTRIB_DIAG_REQ], ans[4096], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &r, sizeof(r) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	struct net_addr any = { .family = AF_INET };
	int nl, t, u, ok = 0;

	/* The owner first takes a pidfd of this process, then says go. */
	if (read(back, &r.ok, 1) != 1 || (userns >= 0 && setns(userns, CLONE_NEWUSER) < 0) ||
	    (netns >= 0 && setns(netns, CLONE_NEWNET) < 0))
		_exit(1);
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (nl < 0 || t < 0 || u < 0)
		_exit(1);
	/* A listener on any port (listen binds it), a UDP socket bound to any. */
	if (listen(t, 1) == 0 && getsockname(t, (struct sockaddr *)&sin, &len) == 0) {
		struct stat st;
		uint64_t ino = 0;
		ssize_t n;

		attrib_diag_request(req, 1, IPPROTO_TCP, AF_INET, &any, ntohs(sin.sin_port), &any, 0);
		if (fstat(t, &st) == 0 && send(nl, req, sizeof(req), 0) == (ssize_t)sizeof(req) &&
		    (n = recv(nl, ans, sizeof(ans), MSG_DONTWAIT)) > 0 &&
		    attrib_diag_parse(ans, (size_t)n, 1, &ino) == 1 && ino == st.st_ino)
			ok++;
	}
	sin.sin_port = 0;
	len = sizeof(sin);
	if (bind(u, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(u, (struct sockaddr *)&sin, &len) == 0) {
		struct stat st;
		uint64_t ino = 0;
		ssize_t n;

		attrib_diag_request(req, 2, IPPROTO_UDP, AF_INET, &any, ntohs(sin.sin_port), &any, 0);
		if (fstat(u, &st) == 0 && send(nl, req, sizeof(req), 0) == (ssize_t)sizeof(req) &&
		    (n = recv(nl, ans, sizeof(ans), MSG_DONTWAIT)) > 0 &&
		    attrib_diag_parse(ans, (size_t)n, 2, &ino) == 1 && ino == st.st_ino)
			ok++;
	}
	r.ok = ok == 2 ? 'y' : 'n';
	if (ok == 2) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &nl, sizeof(int));
	}
	_exit(sendmsg(back, &mh, 0) == (ssize_t)sizeof(r) ? 0 : 1);
}

/* ns/NAME of the process dir is, or -1 when it is the caller's own (nothing to join), -2
 * when unreadable. (Through its /proc directory: a pid reused since is not read.) */
static int ns_fd(int dir, const char *name)
{
	char path[64];
	struct stat mine, theirs;
	int fd;

	snprintf(path, sizeof(path), "ns/%s", name);
	fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if (fstat(fd, &theirs) == 0 && stat(path, &mine) == 0 && mine.st_ino == theirs.st_ino &&
	    mine.st_dev == theirs.st_dev) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A sock_diag socket in the network namespace of the process dir is, tried; -1 when there
 * is none to be had. */
static int diag_open(int dir)
{
	int userns = ns_fd(dir, "user"), netns = ns_fd(dir, "net"), sp[2] = { -1, -1 };
	int fd = -1;
	pid_t pid = -1;

	if (userns == -2 || netns == -2 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		goto out;
	pid = fork();
	if (pid == 0) {
		/* Keep nothing of the daemon's (a client's socket held here would keep its
		 * peer from seeing it close): the three it needs at 0, 1, 2, the rest closed. */
		int a = fcntl(userns, F_DUPFD, 10), b = fcntl(netns, F_DUPFD, 10);
		int c = fcntl(sp[1], F_DUPFD, 10);

		if (c < 0 || (userns >= 0 && (a < 0 || dup2(a, 0) < 0)) ||
		    (netns >= 0 && (b < 0 || dup2(b, 1) < 0)) || dup2(c, 2) < 0 ||
		    syscall(SYS_close_range, 3, ~0U, 0) < 0)
			_exit(1);
		diag_helper(userns >= 0 ? 0 : -1, netns >= 0 ? 1 : -1, 2);
	}
	if (pid > 0) {
		struct pollfd p = { .fd = sp[0], .events = POLLIN };
		char ok = 0, cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &ok, 1 };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			.msg_controllen = sizeof(cbuf),
		};
		/*
		 * The helper waits for go until it has a pidfd here: the daemon's loop
		 * reaps any child that exits (libev waits for all), after which its
		 * pid may be another's — a kill or wait by pid could hit that one.
		 */
		int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

		close(sp[1]);
		sp[1] = -1;
		if (pidfd >= 0 && write(sp[0], "g", 1) == 1 && poll(&p, 1, 2000) == 1 &&
		    recvmsg(sp[0], &mh, MSG_CMSG_CLOEXEC) == 1) {
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

			if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&fd, CMSG_DATA(cm), sizeof(int));
			if (fd >= 0 && ok != 'y') {
				close(fd);
				fd = -1;
			}
		}
		/* Without a pidfd it got no go: the closed socket ends it. */
		close(sp[0]);
		sp[0] = -1;
		if (pidfd >= 0) {
			siginfo_t si;

			syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
			while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 &&
			       errno == EINTR)
				;
			close(pidfd);
		} else {
			/* A kernel without pidfds (before 5.3): it ends now, waited for at once. */
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
out:
	for (int i = 0; i < 2; i++)
		if (sp[i] >= 0)
			close(sp[i]);
	if (userns >= 0)
		close(userns);
	if (netns >= 0)
		close(netns);
	return fd;
}

volatile bool attrib_diag_enabled = true;
volatile unsigned long attrib_diag_answered;

/* Ask the kernel: 1 with *inode, 0 when it has no such socket, -1 when it cannot say. */
static int diag_ask(struct ctx *c, int family, const struct attrib_query *q, uint64_t *inode)
{
	char req[ATTRIB_DIAG_REQ], *ans = c->buf;      /* (nothing else is read meanwhile) */
	uint32_t seq = ++c->diag_seq;
	ssize_t n;

	attrib_diag_request(req, seq, q->proto, family, &q->local, q->lport, &q->remote,
			    q->rport);
	if (send(c->diag, req, sizeof(req), MSG_DONTWAIT) != (ssize_t)sizeof(req))
		return -1;
	/* The kernel answers before send returns; an old answer (never, but) is skipped. */
	for (int i = 0; i < 4; i++) {
		int r;

		n = recv(c->diag, ans, ATTRIB_BUF, MSG_DONTWAIT);
		if (n <= 0)
			return -1;
		r = attrib_diag_parse(ans, (size_t)n, seq, inode);
		if (r >= 0)
			return r;
	}
	return -1;
}

/*
 * The socket's inode by sock_diag: 1 (*inode, 0 for none), or -1 when the
 * kernel cannot say and the tables must. A flow of v4 addresses is asked
 * as v4 (which finds a v6 socket's IPv4-mapped flow too), then as v6.
 */
static int diag_inode(struct ctx *c, const struct attrib_query *q, uint64_t *inode)
{
	int r;

	if (!attrib_diag_enabled)
		return -1;
	if (c->diag == DIAG_UNTRIED)
		c->diag = diag_open(c->init_dir);
	if (c->diag < 0)
		return -1;
	r = diag_ask(c, q->local.family, q, inode);
	/* (A kernel without IPv6 says EINVAL to that: as good as none.) */
	if (r == 0 && q->local.family == AF_INET && diag_ask(c, AF_INET6, q, inode) != 1)
		*inode = 0;
	if (r < 0) {
		/* Something broke: the tables from now on. */
		close(c->diag);
		c->diag = -1;
		return -1;
	}
	c->diag_asked++;
	__atomic_add_fetch(&attrib_diag_answered, 1, __ATOMIC_RELAXED);
	return 1;
}

/* The inode of the socket behind a flow, or 0. */
static uint64_t socket_inode(struct ctx *c, const struct attrib_query *q)
{
	bool tcp = q->proto == 6;
	int s4 = 0, s6 = 0;
	uint64_t i4 = 0, i6;

	if (diag_inode(c, q, &i4) == 1)
		return i4;

	if (q->local.family == AF_INET) {
		i4 = table_find(c, tcp ? "net/tcp" : "net/udp", AF_INET, q, &s4);
		if (s4 == 2)
			return i4;
	}
	/* A v6 socket carries v4 flows too (IPv4-mapped rows). */
	i6 = table_find(c, tcp ? "net/tcp6" : "net/udp6", AF_INET6, q, &s6);
	return s6 > s4 ? i6 : i4;
}

static size_t inode_bucket(uint64_t inode)
{
	return (size_t)((inode * 0x9e3779b97f4a7c15ULL) >> 52) % INODE_BUCKETS;
}

static void inodes_clear(struct ctx *c)
{
	for (size_t i = 0; i < INODE_BUCKETS; i++)
		while (c->inodes[i]) {
			struct inode_ent *e = c->inodes[i];

			c->inodes[i] = e->next;
			free(e);
		}
	c->ninodes = 0;
}

/* Remember that (pid, start) holds inode on fd. */
static void inode_note(struct ctx *c, uint64_t inode, pid_t pid, uint64_t start, int fd)
{
	size_t b = inode_bucket(inode);
	struct inode_ent *e;

	for (e = c->inodes[b]; e; e = e->next)
		if (e->inode == inode)
			break;
	if (!e) {
		if (c->ninodes >= ATTRIB_INODES_MAX)
			inodes_clear(c);
		e = xcalloc(1, sizeof(*e));
		e->inode = inode;
		e->next = c->inodes[b];
		c->inodes[b] = e;
		c->ninodes++;
	}
	e->host_pid = pid;
	e->start = start;
	e->fd = fd;
}

/* A recent owner pid whose /proc/PID is held open, or NULL. */
static struct fd_seen *seen_with_dir(struct ctx *c, pid_t pid)
{
	for (size_t i = 0; i < ATTRIB_MRU; i++)
		if (c->seen[i].has_dir && c->seen[i].pid == pid)
			return &c->seen[i];
	return NULL;
}

/* Forget a recent owner that is gone. */
static void seen_drop(struct fd_seen *s)
{
	free(s->bits);
	if (s->has_dir)
		close(s->dir);
	memset(s, 0, sizeof(*s));
	s->top = -1;
	s->last = -1;
}

/* Does (pid, start) still hold inode on fd? One readlink through its directory. */
static bool inode_still(struct ctx *c, const struct inode_ent *e)
{
	struct attrib_stat st;
	char name[32], link[64];
	struct fd_seen *held = seen_with_dir(c, e->host_pid);
	int dir;
	ssize_t n;
	bool ok = false;

	snprintf(name, sizeof(name), "fd/%d", e->fd);
	if (held && held->start == e->start) {
		/* Through the directory held open: that process, or nothing. */
		n = readlinkat(held->dir, name, link, sizeof(link));
		if (n > 0)
			return attrib_socket_link(link, (size_t)n) == e->inode;
	}
	dir = proc_open(e->host_pid);
	if (dir < 0)
		return false;
	if (proc_stat(c, dir, &st) && st.start == e->start) {
		n = readlinkat(dir, name, link, sizeof(link));
		if (n < 0 && errno == EACCES) {
			/* Not dumpable: its one slot, through a pidfd (scan_proc_pidfd). */
			int pidfd = (int)syscall(SYS_pidfd_open, e->host_pid, 0), copy = -1;
			struct stat fs;

			if (pidfd >= 0 && proc_stat(c, dir, &st) && st.start == e->start)
				copy = (int)syscall(SYS_pidfd_getfd, pidfd, e->fd, 0);
			ok = copy >= 0 && fstat(copy, &fs) == 0 && S_ISSOCK(fs.st_mode) &&
			     fs.st_ino == e->inode;
			if (copy >= 0)
				close(copy);
			if (pidfd >= 0)
				close(pidfd);
		} else {
			ok = n > 0 && attrib_socket_link(link, (size_t)n) == e->inode;
		}
	}
	close(dir);
	return ok;
}

/* The descriptors a recent owner was seen with (its process: pid and start). */
static struct fd_seen *seen_get(struct ctx *c, pid_t pid, uint64_t start)
{
	struct fd_seen *oldest = &c->seen[0];

	for (size_t i = 0; i < ATTRIB_MRU; i++) {
		if (c->seen[i].pid == pid && c->seen[i].start == start) {
			c->seen[i].used = ++c->seen_clock;
			return &c->seen[i];
		}
		if (c->seen[i].used < oldest->used)
			oldest = &c->seen[i];
	}
	free(oldest->bits);
	if (oldest->has_dir)
		close(oldest->dir);
	memset(oldest, 0, sizeof(*oldest));
	oldest->pid = pid;
	oldest->start = start;
	oldest->used = ++c->seen_clock;
	oldest->top = -1;
	oldest->last = -1;
	return oldest;
}

static bool seen_has(const struct fd_seen *s, int fd)
{
	return fd >= 0 && (size_t)fd < s->nbits && (s->bits[fd / 64] >> (fd % 64) & 1);
}

static void seen_add(struct fd_seen *s, int fd)
{
	if (fd < 0 || fd >= (1 << 20))
		return;
	if (fd > s->top)
		s->top = fd;
	if ((size_t)fd >= s->nbits) {
		size_t n = ((size_t)fd / 64 + 1) * 2;

		s->bits = xrealloc(s->bits, n * sizeof(*s->bits));
		memset(s->bits + s->nbits / 64, 0, (n - s->nbits / 64) * sizeof(*s->bits));
		s->nbits = n * 64;
	}
	s->bits[fd / 64] |= 1ULL << (fd % 64);
}

/* FDSize of /proc/PID/status: how many descriptors its table has room for; 0 if unknown. */
static size_t fd_table_size(struct ctx *c, int dir)
{
	ssize_t n = read_at(dir, "status", c->buf, ATTRIB_BUF - 1, NULL);
	char *p;

	if (n <= 0)
		return 0;
	c->buf[n] = '\0';
	p = strstr(c->buf, "\nFDSize:");
	return p ? (size_t)strtoul(p + 8, NULL, 10) : 0;
}

/*
 * A process that made itself not dumpable (prctl, or exec of a file it may
 * not read) has its /proc/PID/fd owned by root, closed to the daemon's
 * reads — though the daemon, owner of the sandbox's user namespace, may
 * still inspect the process: pidfd_getfd() each slot of its table, fstat
 * the copy, close it. Only sockets are kept, by inode; the pidfd is this
 * process's for good (the directory, still readable after pidfd_open,
 * proves the pid was not reused in between). true when one is inode.
 */
static bool scan_proc_pidfd(struct ctx *c, pid_t pid, int dir, uint64_t start, uint64_t inode)
{
	struct attrib_stat st;
	size_t size = fd_table_size(c, dir);
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool found = false;

	if (pidfd < 0)
		return false;
	if (!proc_stat(c, dir, &st) || st.start != start) {
		close(pidfd);
		return false;
	}
	for (size_t fd = 0; fd < size && !found; fd++) {
		struct stat fs;
		int copy;

		if (++c->fds_read > ATTRIB_FDS_MAX || ((c->fds_read & 255) == 0 && out_of_time(c)))
			break;
		copy = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
		if (copy < 0)
			continue;
		if (fstat(copy, &fs) == 0 && S_ISSOCK(fs.st_mode)) {
			inode_note(c, fs.st_ino, pid, start, (int)fd);
			found = fs.st_ino == inode;
		}
		close(copy);
	}
	close(pidfd);
	return found;
}

/*
 * A process known from an earlier look: the descriptor the last socket was
 * on and the next numbers (a new socket takes the lowest free descriptor, so
 * after a process that holds ten thousand it is the next) are tried first,
 * a few readlinks through its directory before fd/ is opened and listed.
 * true when one of them is inode.
 */
static bool scan_probe(struct ctx *c, struct fd_seen *seen, uint64_t inode)
{
	int probe[] = { seen->last, seen->top + 1, seen->top + 2, seen->top + 3 };

	if (seen->top < 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(probe); i++) {
		char name[16], link[64];
		ssize_t n;
		uint64_t ino;
		bool again = false;

		for (size_t j = 0; j < i; j++)
			again |= probe[j] == probe[i];
		if (probe[i] < 0 || again)
			continue;
		c->fds_read++;
		snprintf(name, sizeof(name), "fd/%d", probe[i]);
		n = readlinkat(seen->dir, name, link, sizeof(link));
		if (n <= 0 || (ino = attrib_socket_link(link, (size_t)n)) == 0)
			continue;
		seen_add(seen, probe[i]);
		inode_note(c, ino, seen->pid, seen->start, probe[i]);
		if (ino == inode) {
			seen->last = probe[i];
			return true;
		}
	}
	return false;
}

/*
 * Read every descriptor of one process, noting each socket; true when one
 * of them is inode (its start time in *start).
 */
static bool scan_proc(struct ctx *c, pid_t pid, uint64_t inode, uint64_t *start)
{
	struct attrib_stat st;
	int dir, fdd, *fds = NULL;
	size_t nfds = 0;
	struct fd_seen *seen = seen_with_dir(c, pid);
	DIR *d;
	struct dirent *e;
	bool found = false;

	/*
	 * A recent owner's /proc/PID stays open (ATTRIB_MRU of them): a
	 * directory opened for a process reads that process only — once it is
	 * gone, every read through it fails, whoever has its pid now — so its
	 * start time and its pid namespace, checked when it was opened, hold
	 * for as long as reads through it work. That saves the open, the stat
	 * and the namespace check of every look-up of a process that makes many
	 * connections (perf: a third of the worker's system calls).
	 */
	c->procs_read++;
	if (seen) {
		dir = seen->dir;
		st.start = seen->start;
		seen->used = ++c->seen_clock;
		*start = st.start;
		if (scan_probe(c, seen, inode))
			return true;    /* read through the directory: that process */
		fdd = openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fdd < 0 && errno != EACCES) {
			seen_drop(seen);        /* that process is gone: its pid may be another's */
			seen = NULL;
		}
	}
	if (!seen) {
		dir = proc_open(pid);
		if (dir < 0)
			return false;
		if (!proc_stat(c, dir, &st) || !in_sandbox(c, dir)) {
			close(dir);
			return false;
		}
		seen = seen_get(c, pid, st.start);
		if (seen->has_dir)
			close(seen->dir);
		seen->has_dir = true;
		seen->dir = dir;
		*start = st.start;
		if (scan_probe(c, seen, inode))
			return true;
		fdd = openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fdd < 0 && errno == EACCES)
		return scan_proc_pidfd(c, pid, dir, st.start, inode);
	if (fdd < 0 || !(d = fdopendir(fdd))) {
		if (fdd >= 0)
			close(fdd);
		seen_drop(seen);        /* gone (or unreadable): opened afresh next time */
		return false;
	}
	/*
	 * The descriptor numbers first (one getdents reads hundreds), then the
	 * links: those this process had not shown before first — a new socket
	 * usually is a new descriptor, and a payload that holds ten thousand
	 * sockets then opens one more should cost one readlink, not ten
	 * thousand — the highest first, then the rest.
	 */
	while ((e = readdir(d)) && nfds < ATTRIB_FDS_MAX) {
		int *slot;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		slot = xappend(&fds, &nfds, sizeof(*fds));
		*slot = atoi(e->d_name);
	}
	closedir(d);
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (size_t i = nfds; i > 0 && !found; i--) {
			int fd = fds[i - 1];
			char name[16], link[64];
			ssize_t n;
			uint64_t ino;

			if (seen_has(seen, fd) != (pass == 1))
				continue;
			if (++c->fds_read > ATTRIB_FDS_MAX ||
			    ((c->fds_read & 255) == 0 && out_of_time(c)))
				break;
			seen_add(seen, fd);
			snprintf(name, sizeof(name), "fd/%d", fd);
			n = readlinkat(dir, name, link, sizeof(link));
			if (n <= 0 || (ino = attrib_socket_link(link, (size_t)n)) == 0)
				continue;
			inode_note(c, ino, pid, st.start, fd);
			found = ino == inode;
			if (found)
				seen->last = fd;
		}
	}
	free(fds);
	return found;
}

/* Remember (pid, start) as the latest owner, most recent first. */
static void mru_note(struct ctx *c, pid_t pid, uint64_t start)
{
	size_t i;

	for (i = 0; i < c->nmru; i++)
		if (c->mru[i].pid == pid)
			break;
	if (i == c->nmru && c->nmru < ATTRIB_MRU)
		c->nmru++;
	if (i == c->nmru)
		i = c->nmru - 1;
	memmove(&c->mru[1], &c->mru[0], i * sizeof(c->mru[0]));
	c->mru[0].pid = pid;
	c->mru[0].start = start;
}

/* Has this look-up read pid already? */
static bool tried_has(const pid_t *tried, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (tried[i] == pid)
			return true;
	return false;
}

/*
 * Scan the processes of list not tried yet, in order, until inode's owner
 * is found, the look-up is out of time or past its bounds; processes found
 * gone are dropped from list. Those read are added to *tried when tried is
 * not NULL (the short lists: the whole one is read once a look-up). true
 * with *pid, *start when found.
 */
static bool scan_list(struct ctx *c, pid_t *list, size_t *n, pid_t **tried, size_t *ntried,
		      bool note, uint64_t inode, pid_t *pid, uint64_t *start)
{
	size_t keep = 0;
	bool found = false;

	for (size_t i = 0; i < *n; i++) {
		pid_t p = list[i];

		if (!found && !out_of_time(c) && c->procs_read < ATTRIB_PROCS_MAX &&
		    c->fds_read <= ATTRIB_FDS_MAX && !tried_has(*tried, *ntried, p)) {
			char path[32];

			if (note) {
				pid_t *slot = xappend(tried, ntried, sizeof(**tried));

				*slot = p;
			}
			found = scan_proc(c, p, inode, start);
			if (found)
				*pid = p;
			snprintf(path, sizeof(path), "/proc/%d", (int)p);
			if (!found && access(path, F_OK) < 0)
				continue;       /* gone: off the list */
		}
		list[keep++] = p;
	}
	*n = keep;
	return found;
}

/* Each enumeration (newcomers, the full walk) costs its own time: scanning gets its own. */
static void scan_time(struct ctx *c)
{
	uint64_t at_least = now_mono_ms() + ATTRIB_LOOKUP_MS;

	if (c->deadline_ms < at_least)
		c->deadline_ms = at_least;
}

/*
 * The process holding inode: (pid, start), or false. In order: where it was
 * seen before, the processes that made the last sockets, those started
 * since the last look (kept in the list from then on), every process known,
 * and — when all that failed and the last walk is a second old — a fresh
 * walk of the whole tree (a pid that wrapped around is found only there).
 */
static bool inode_owner(struct ctx *c, uint64_t inode, pid_t *pid, uint64_t *start)
{
	struct inode_ent *e;
	pid_t *tried = NULL, *fresh = NULL, mru[ATTRIB_MRU];
	size_t ntried = 0, nfresh = 0, nmru = c->nmru;
	bool found = false;

	for (e = c->inodes[inode_bucket(inode)]; e; e = e->next)
		if (e->inode == inode)
			break;
	if (e && inode_still(c, e)) {
		*pid = e->host_pid;
		*start = e->start;
		return true;
	}
	for (size_t i = 0; i < nmru; i++)
		mru[i] = c->mru[i].pid;
	found = scan_list(c, mru, &nmru, &tried, &ntried, true, inode, pid, start);
	if (!found) {
		newcomers(c, &fresh, &nfresh);
		scan_time(c);
		found = scan_list(c, fresh, &nfresh, &tried, &ntried, true, inode, pid, start);
		/* Known from now on, newest first (the dead among them leave when read, or
		 * with the whole list when it grows past twice the bound). */
		if (c->nprocs + nfresh > 2 * ATTRIB_PROCS_MAX)
			c->walked_ms = 0;
		if (nfresh) {
			pid_t *all = xmalloc((nfresh + c->nprocs) * sizeof(*all));

			memcpy(all, fresh, nfresh * sizeof(*all));
			if (c->nprocs)
				memcpy(all + nfresh, c->procs, c->nprocs * sizeof(*all));
			free(c->procs);
			c->procs = all;
			c->nprocs += nfresh;
		}
		free(fresh);
	}
	if (!found)
		found = scan_list(c, c->procs, &c->nprocs, &tried, &ntried, false, inode, pid, start);
	if ((!found && now_mono_ms() - c->walked_ms >= ATTRIB_WALK_MS) || !c->walked_ms) {
		refresh_procs(c);
		scan_time(c);
		found = scan_list(c, c->procs, &c->nprocs, &tried, &ntried, false, inode, pid, start);
	}
	free(tried);
	if (found)
		mru_note(c, *pid, *start);
	return found;
}

/* ---- a process's details ------------------------------------------------------------- */

static size_t info_bucket(pid_t pid)
{
	return (size_t)pid % INFO_BUCKETS;
}

static void infos_clear(struct ctx *c)
{
	for (size_t i = 0; i < INFO_BUCKETS; i++)
		while (c->infos[i]) {
			struct info *p = c->infos[i];

			c->infos[i] = p->next;
			free(p);
		}
	c->ninfos = 0;
}

/*
 * The pip build directory the process runs in, with its package's name and
 * version: from the directory's name (pip's) and its metadata (PKG-INFO, or
 * pyproject.toml), read through /proc/PID/cwd without following a link.
 */
static void read_pipdir(struct ctx *c, int dir, struct attrib_link *l)
{
	char cwd[PATH_MAX], name[ATTRIB_PACKAGE_MAX], version[ATTRIB_VERSION_MAX];
	ssize_t n = readlinkat(dir, "cwd", cwd, sizeof(cwd) - 1);
	int cfd, fd;
	bool meta = false;

	if (n <= 0)
		return;
	cwd[n] = '\0';
	l->pipdir = attrib_pip_dir(cwd, l->pip_name, sizeof(l->pip_name));
	if (l->pipdir == ATTRIB_PIPDIR_NONE)
		return;
	/* The sandbox's tree, which the payload writes: no link, no fifo, no device. */
	cfd = openat(dir, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0)
		return;
	for (int i = 0; i < 2 && !meta; i++) {
		struct stat st;
		ssize_t r;

		fd = openat(cfd, i == 0 ? "PKG-INFO" : "pyproject.toml",
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		r = read(fd, c->buf, ATTRIB_META_READ < ATTRIB_BUF ? ATTRIB_META_READ : ATTRIB_BUF);
		close(fd);
		if (r <= 0)
			continue;
		meta = i == 0 ? attrib_pkginfo_parse(c->buf, (size_t)r, name, sizeof(name), version,
						     sizeof(version)) :
			attrib_pyproject_parse(c->buf, (size_t)r, name, sizeof(name), version,
					       sizeof(version));
	}
	close(cfd);
	if (!meta)
		return;
	if (l->pipdir == ATTRIB_PIPDIR_UNNAMED) {
		snprintf(l->pip_name, sizeof(l->pip_name), "%s", name);
		snprintf(l->pip_version, sizeof(l->pip_version), "%s", version);
	} else if (attrib_pip_same_name(name, l->pip_name)) {
		/* pip named the directory; a version only from metadata that agrees with it. */
		snprintf(l->pip_version, sizeof(l->pip_version), "%s", version);
	}
}

/*
 * The environment of a process that is not dumpable (its /proc/PID/environ
 * is root's): read from its memory, where stat says it is, with
 * process_vm_readv — permitted to the owner of the sandbox's user namespace.
 * By pid: the read counts only when the process behind dir is still alive
 * after it (a pid cannot be reused while its process lives). -1 when not.
 */
static ssize_t read_environ_vm(struct ctx *c, pid_t pid, int dir, const struct attrib_stat *st,
			       bool *cut)
{
	struct attrib_stat again;
	struct iovec local, remote;
	uint64_t len;
	ssize_t n;

	if (!st->env_start || st->env_end <= st->env_start)
		return -1;
	len = st->env_end - st->env_start;
	*cut = len > ATTRIB_ENV_READ;
	local = (struct iovec){ .iov_base = c->envbuf, .iov_len = *cut ? ATTRIB_ENV_READ : len };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)st->env_start,
				 .iov_len = local.iov_len };
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0 || !proc_stat(c, dir, &again) || again.start != st->start)
		return -1;
	if ((size_t)n < local.iov_len)
		*cut = true;
	return n;
}

/* The details of (pid, start), read once; NULL when that process is gone (or not the sandbox's). */
static struct info *info_get(struct ctx *c, pid_t pid, uint64_t start)
{
	struct info *p;
	struct attrib_stat st;
	int dir;
	ssize_t n;
	bool cut;

	for (p = c->infos[info_bucket(pid)]; p; p = p->next)
		if (p->host_pid == pid && p->start == start)
			return p;
	dir = proc_open(pid);
	if (dir < 0)
		return NULL;
	if (!proc_stat(c, dir, &st) || st.start != start || !in_sandbox(c, dir)) {
		close(dir);
		return NULL;
	}
	if (c->ninfos >= ATTRIB_INFO_MAX)
		infos_clear(c);
	p = xcalloc(1, sizeof(*p));
	p->host_pid = pid;
	p->start = start;
	snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
	n = read_at(dir, "status", c->buf, ATTRIB_BUF, NULL);
	p->pid = n > 0 ? attrib_status_nspid(c->buf, (size_t)n, NULL) : 0;
	n = read_at(dir, "cmdline", c->buf, ATTRIB_CMDLINE_READ, NULL);
	attrib_cmdline_parse(c->buf, n > 0 ? (size_t)n : 0, &p->argv);
	p->link.manager = attrib_manager_of(p->comm, &p->argv);
	n = read_at(dir, "environ", c->envbuf, ATTRIB_ENV_READ, &cut);
	if (n < 0 && errno == EACCES)
		n = read_environ_vm(c, pid, dir, &st, &cut);
	if (n > 0)
		attrib_environ_parse(c->envbuf, (size_t)n, cut, &p->link.env);
	read_pipdir(c, dir, &p->link);
	close(dir);
	p->next = c->infos[info_bucket(pid)];
	c->infos[info_bucket(pid)] = p;
	c->ninfos++;
	return p;
}

/*
 * The answer for (pid, start): its details, then its parents up to boxy-init
 * (each read afresh: a parent may have gone and its pid been reused — a
 * "parent" that started after its child is not one), then the rules.
 */
static void describe(struct ctx *c, pid_t pid, uint64_t start, struct attrib_proc *out)
{
	struct attrib_link chain[ATTRIB_CHAIN_MAX];
	struct info *me = info_get(c, pid, start);
	size_t n = 0;
	pid_t at = pid;
	uint64_t at_start = start;

	memset(out, 0, sizeof(*out));
	if (!me)
		return;
	find_root(c);
	while (n < ATTRIB_CHAIN_MAX) {
		struct info *p = n == 0 ? me : info_get(c, at, at_start);
		struct attrib_stat st;
		int dir;

		if (!p)
			break;
		chain[n] = p->link;
		chain[n].root = c->root_known && at == c->root && at_start == c->root_start;
		n++;
		if (chain[n - 1].root)
			break;
		dir = proc_open(at);
		if (dir < 0)
			break;
		if (!proc_stat(c, dir, &st) || st.start != at_start) {
			close(dir);
			break;
		}
		close(dir);
		if (st.ppid == c->init || st.ppid <= 1)
			break;
		dir = proc_open(st.ppid);
		if (dir < 0)
			break;
		{
			struct attrib_stat ps;
			bool ok = proc_stat(c, dir, &ps) && ps.start <= at_start && in_sandbox(c, dir);

			close(dir);
			if (!ok)
				break;
			at = st.ppid;
			at_start = ps.start;
		}
	}
	out->found = true;
	out->pid = me->pid;
	out->host_pid = pid;
	out->start = start;
	snprintf(out->comm, sizeof(out->comm), "%s", me->comm);
	snprintf(out->argv0, sizeof(out->argv0), "%s", me->argv.argv0);
	snprintf(out->cmdline, sizeof(out->cmdline), "%s", me->argv.cmdline);
	attrib_decide(chain, n, out);
}

/* ---- the look-ups ------------------------------------------------------------------- */

/* Open the sandbox's init: its directory, its start time, its pid namespace. */
static int ctx_open(struct ctx *c, pid_t init)
{
	struct stat ns;
	struct attrib_stat st;

	memset(c, 0, sizeof(*c));
	c->init = init;
	c->diag = DIAG_UNTRIED;
	c->buf = xmalloc(ATTRIB_BUF);
	c->envbuf = xmalloc(ATTRIB_ENV_READ);
	c->init_dir = proc_open(init);
	if (c->init_dir < 0 || fstatat(c->init_dir, "ns/pid", &ns, 0) < 0 ||
	    !proc_stat(c, c->init_dir, &st))
		return -1;
	c->ns_dev = ns.st_dev;
	c->ns_ino = ns.st_ino;
	c->init_start = st.start;
	return 0;
}

static void ctx_close(struct ctx *c)
{
	if (c->init_dir >= 0)
		close(c->init_dir);
	if (c->diag >= 0)
		close(c->diag);
	inodes_clear(c);
	infos_clear(c);
	for (size_t i = 0; i < ATTRIB_MRU; i++) {
		free(c->seen[i].bits);
		if (c->seen[i].has_dir)
			close(c->seen[i].dir);
	}
	free(c->known.slots);
	free(c->procs);
	free(c->buf);
	free(c->envbuf);
}

/* One look-up, whatever its kind, within its bounds. */
static void lookup(struct ctx *c, const struct attrib_query *q, struct attrib_proc *out)
{
	pid_t pid = 0;
	uint64_t start = 0, inode;

	memset(out, 0, sizeof(*out));
	c->deadline_ms = now_mono_ms() + ATTRIB_LOOKUP_MS;
	c->fds_read = c->procs_read = 0;
	if (q->kind == ATTRIB_Q_PID) {
		struct attrib_stat st;
		int dir = proc_open(q->host_pid);
		bool ok;

		if (dir < 0)
			return;
		ok = proc_stat(c, dir, &st) && in_sandbox(c, dir);
		close(dir);
		if (ok)
			describe(c, q->host_pid, st.start, out);
		return;
	}
	inode = socket_inode(c, q);
	if (inode && inode_owner(c, inode, &pid, &start))
		describe(c, pid, start, out);
}

int attrib_who_pid(pid_t init_host_pid, pid_t host_pid, struct attrib_proc *out)
{
	struct attrib_query q = { .kind = ATTRIB_Q_PID, .host_pid = host_pid };
	struct ctx c;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (ctx_open(&c, init_host_pid) == 0) {
		lookup(&c, &q, out);
		rc = 0;
	}
	ctx_close(&c);
	return rc;
}

int attrib_who_process(pid_t init_host_pid, pid_t host_pid, uint64_t start,
		       struct attrib_proc *out)
{
	struct ctx c;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (ctx_open(&c, init_host_pid) == 0) {
		c.deadline_ms = now_mono_ms() + ATTRIB_LOOKUP_MS;
		describe(&c, host_pid, start, out);
		rc = 0;
	}
	ctx_close(&c);
	return rc;
}

int attrib_who_socket(pid_t init_host_pid, const struct attrib_query *q, struct attrib_proc *out)
{
	struct ctx c;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (ctx_open(&c, init_host_pid) == 0) {
		lookup(&c, q, out);
		rc = 0;
	}
	ctx_close(&c);
	return rc;
}

void attrib_proc_who(const struct attrib_proc *p, struct event_who *w)
{
	memset(w, 0, sizeof(*w));
	w->found = p->found;
	if (!p->found)
		return;
	w->pid = (uint32_t)p->pid;
	w->comm = p->comm;
	w->argv0 = p->argv0;
	w->cmdline = p->cmdline;
	w->package = p->package[0] ? p->package : NULL;
	w->version = p->version[0] ? p->version : NULL;
	w->script = p->script[0] ? p->script : NULL;
	w->via = p->via[0] ? p->via : NULL;
	w->claimed = p->claimed;
}

/* ---- the worker ------------------------------------------------------------------------ */

struct attrib {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int efd;                        /* answers wait */
	volatile int stop;
	struct ctx c;                   /* the worker's alone */

	struct queued {
		struct attrib_query q;
		uint64_t at_ms;         /* when it was asked */
	} *queue;                       /* ATTRIB_QUEUE_MAX, a ring: oldest at qhead */
	size_t qhead, qlen;
	struct attrib_result *done;     /* answers not taken yet, a growing list */
	size_t ndone;
	int64_t budget_ms;              /* CPU time the worker may still spend (the token bucket) */
	uint64_t refilled_ms;           /* when the bucket was last filled */
	bool idle;                      /* the worker waits for a question (signal it) */
	bool want_diag;                 /* attrib_prepare_net: open sock_diag before a question */
	uint64_t lookups, cpu_us;       /* attrib_cost */
	int64_t spent_us;               /* CPU time not yet charged to budget_ms (< 1 ms) */
};

/* The worker's CPU time, in µs. */
static int64_t thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Top the budget up for the time that passed (caller holds mu). */
static void budget_refill(struct attrib *a)
{
	uint64_t now = now_mono_ms();

	a->budget_ms += (int64_t)((now - a->refilled_ms) / ATTRIB_CPU_SHARE);
	if (a->budget_ms > ATTRIB_CPU_BURST_MS)
		a->budget_ms = ATTRIB_CPU_BURST_MS;
	a->refilled_ms = now;
}

/*
 * Before the first question: what the first look-up of a session would do
 * anyway — the list of the sandbox's processes and of the host's pids (so
 * that the first look-up reads only what started since), the session's
 * command — done while the payload starts, so that its first DNS answer
 * (held for its asker) and its first refusal wait less. Nothing found here
 * is kept without the checks every look-up makes. (The sock_diag socket, a
 * fork, only for a session with a network: attrib_prepare_net.)
 */
static void worker_prepare(struct ctx *c)
{
	pid_t *fresh = NULL;
	size_t nfresh = 0;

	newcomers(c, &fresh, &nfresh);
	free(fresh);
	refresh_procs(c);
	find_root(c);
}

static void *worker_main(void *arg)
{
	struct attrib *a = arg;
	sigset_t all;
	int64_t cpu_mark = -1;          /* the thread's CPU time (µs) when the last look-up ended */

	/* Signals are the loop's: this thread never takes one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	worker_prepare(&a->c);
	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct attrib_query q;
		struct attrib_result r;
		int64_t t0, t1;
		uint64_t one = 1;

		bool stale, first;

		while (!a->stop && a->qlen == 0 && !a->want_diag) {
			a->idle = true;
			cpu_mark = -1;
			pthread_cond_wait(&a->cv, &a->mu);
		}
		a->idle = false;
		if (a->stop)
			break;
		if (a->want_diag) {
			a->want_diag = false;
			pthread_mutex_unlock(&a->mu);
			if (attrib_diag_enabled && a->c.diag == DIAG_UNTRIED)
				a->c.diag = diag_open(a->c.init_dir);
			cpu_mark = -1;
			pthread_mutex_lock(&a->mu);
			continue;
		}
		/*
		 * Out of budget: wait for it to refill — the questions wait, and so do
		 * the refusals held for them (each at most its hold), so a flood slows
		 * itself instead of making every answer "unknown", which would let a
		 * payload flood first and then act unseen.
		 */
		budget_refill(a);
		if (a->budget_ms <= 0) {
			struct timespec until;
			uint64_t ms = (uint64_t)(1 - a->budget_ms) * ATTRIB_CPU_SHARE;

			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += (time_t)(ms / 1000);
			until.tv_nsec += (long)(ms % 1000) * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			cpu_mark = -1;
			pthread_cond_timedwait(&a->cv, &a->mu, &until);
			continue;
		}
		/*
		 * Newest first: the socket of a question just asked is surely still
		 * there, an old one's may be gone (and its asker given up: past
		 * ATTRIB_STALE_MS it is answered "unknown" without a look-up).
		 */
		{
			struct queued *e = &a->queue[(a->qhead + a->qlen - 1) % ATTRIB_QUEUE_MAX];

			q = e->q;
			stale = now_mono_ms() - e->at_ms > ATTRIB_STALE_MS;
		}
		a->qlen--;
		pthread_mutex_unlock(&a->mu);

		/* One clock read a look-up: back to back, one's end is the next one's start. */
		t0 = cpu_mark >= 0 ? cpu_mark : thread_cpu_us();
		r.token = q.token;
		if (stale)
			memset(&r.who, 0, sizeof(r.who));
		else
			lookup(&a->c, &q, &r.who);
		t1 = thread_cpu_us();
		cpu_mark = t1;

		pthread_mutex_lock(&a->mu);
		a->spent_us += t1 - t0;
		a->budget_ms -= a->spent_us / 1000;     /* whole ms charged, the rest carried */
		a->spent_us %= 1000;
		a->cpu_us += (uint64_t)(t1 - t0);
		a->lookups += !stale;
		first = a->ndone == 0;
		{
			struct attrib_result *slot = xappend(&a->done, &a->ndone, sizeof(*a->done));

			*slot = r;
		}
		/* The loop takes every answer waiting when it wakes: one wake-up for a batch. */
		if (first && write(a->efd, &one, sizeof(one)) < 0) {
			/* The counter is full or the fd closed: the loop reads the list anyway. */
		}
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct attrib *attrib_create(pid_t init_host_pid, char **err)
{
	struct attrib *a = xcalloc(1, sizeof(*a));
	int rc;

	a->efd = -1;
	if (ctx_open(&a->c, init_host_pid) < 0) {
		set_err_errno(err, "attribution: reading the sandbox's init (/proc/%d)",
			      (int)init_host_pid);
		goto fail;
	}
	a->c.stop = &a->stop;
	a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->efd < 0) {
		set_err_errno(err, "attribution: eventfd");
		goto fail;
	}
	a->queue = xcalloc(ATTRIB_QUEUE_MAX, sizeof(*a->queue));
	a->budget_ms = ATTRIB_CPU_BURST_MS;
	a->refilled_ms = now_mono_ms();
	pthread_mutex_init(&a->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&a->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	rc = pthread_create(&a->thread, NULL, worker_main, a);
	if (rc != 0) {
		errno = rc;
		set_err_errno(err, "attribution: starting its thread");
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		goto fail;
	}
	return a;
fail:
	if (a->efd >= 0)
		close(a->efd);
	ctx_close(&a->c);
	free(a->queue);
	free(a);
	return NULL;
}

void attrib_free(struct attrib *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	close(a->efd);
	ctx_close(&a->c);
	free(a->queue);
	free(a->done);
	free(a);
}

void attrib_prepare_net(struct attrib *a)
{
	pthread_mutex_lock(&a->mu);
	a->want_diag = true;
	if (a->idle)
		pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void attrib_cost(struct attrib *a, uint64_t *lookups, uint64_t *cpu_us)
{
	pthread_mutex_lock(&a->mu);
	*lookups = a->lookups;
	*cpu_us = a->cpu_us;
	pthread_mutex_unlock(&a->mu);
}

int attrib_fd(const struct attrib *a)
{
	return a->efd;
}

bool attrib_ask(struct attrib *a, const struct attrib_query *q)
{
	bool ok;

	pthread_mutex_lock(&a->mu);
	ok = !a->stop;
	if (ok && a->qlen == ATTRIB_QUEUE_MAX) {
		/* Full: the oldest makes room, answered "unknown" now (its asker stops waiting). */
		struct attrib_result *slot = xappend(&a->done, &a->ndone, sizeof(*a->done));
		uint64_t one = 1;

		memset(slot, 0, sizeof(*slot));
		slot->token = a->queue[a->qhead].q.token;
		a->qhead = (a->qhead + 1) % ATTRIB_QUEUE_MAX;
		a->qlen--;
		if (write(a->efd, &one, sizeof(one)) < 0) {
			/* full: readable anyway */
		}
	}
	if (ok) {
		struct queued *e = &a->queue[(a->qhead + a->qlen) % ATTRIB_QUEUE_MAX];

		e->q = *q;
		e->at_ms = now_mono_ms();
		a->qlen++;
		if (a->idle)            /* busy, it takes this one next: no wake-up to pay for */
			pthread_cond_signal(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return ok;
}

size_t attrib_take(struct attrib *a, struct attrib_result *out, size_t max)
{
	uint64_t v;
	size_t n;

	if (read(a->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing counted; the list is read all the same. */
	}
	pthread_mutex_lock(&a->mu);
	n = a->ndone < max ? a->ndone : max;
	if (n) {
		memcpy(out, a->done, n * sizeof(*out));
		memmove(a->done, a->done + n, (a->ndone - n) * sizeof(*a->done));
		a->ndone -= n;
	}
	if (a->ndone) {
		uint64_t one = 1;

		/* More than max waited: stay readable for the rest. */
		if (write(a->efd, &one, sizeof(one)) < 0) {
			/* full: readable anyway */
		}
	}
	pthread_mutex_unlock(&a->mu);
	return n;
}

/* ---- can it work here? ------------------------------------------------------------------ */

/*
 * The probe's child: a user and network namespace of its own (as a sandbox
 * has), with a socket; it says "ready" and waits for its pipe to close. (A
 * sandbox's process that makes itself not dumpable stays readable: its
 * memory belongs to the user namespace the daemon made, in which the daemon
 * holds every capability; tests/e2e/attrib.sh checks it. This child's, made
 * before its unshare, belongs to the caller's, so it stays dumpable here.)
 */
static void probe_child(int ready, int hold)
{
	char b = 'r';

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		b = 'u';        /* no user namespaces: still a process of the same user */
	if (socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) < 0)
		b = 's';
	if (write(ready, &b, 1) != 1)
		_exit(1);
	while (read(hold, &b, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

int attrib_check(char **line)
{
	struct ctx c;
	char buf[512], got = 0;
	int ready[2], hold[2], rc = 0;
	const char *why = NULL;
	bool hide = false, cut, diag = false;
	pid_t child;
	FILE *m;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0) {
		*line = xasprintf("cannot probe: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child == 0) {
		close(ready[0]);
		close(hold[1]);
		probe_child(ready[1], hold[0]);
	}
	close(ready[1]);
	close(hold[0]);
	if (child < 0 || read(ready[0], &got, 1) != 1) {
		why = "cannot start a probe process";
	} else if (ctx_open(&c, child) < 0) {
		why = "cannot read a process's /proc entry";
		ctx_close(&c);
	} else {
		/* What a look-up reads: the namespace's socket table, descriptors, environment. */
		if (read_at(c.init_dir, "net/udp", c.buf, ATTRIB_BUF, NULL) <= 0)
			why = "cannot read /proc/PID/net/udp of a process in its own namespaces";
		else if (readlinkat(c.init_dir, "fd/0", buf, sizeof(buf)) < 0)
			why = "cannot read /proc/PID/fd links";
		else if (read_at(c.init_dir, "environ", c.envbuf, ATTRIB_ENV_READ, &cut) < 0)
			why = "cannot read /proc/PID/environ";
		if (!why && read_at(AT_FDCWD, "/proc/thread-self/children", c.buf, ATTRIB_BUF,
				    NULL) < 0)
			why = "the kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)";
		if (!why) {
			int d = diag_open(c.init_dir);

			diag = d >= 0;
			if (d >= 0)
				close(d);
		}
		ctx_close(&c);
	}
	close(hold[1]);
	close(ready[0]);
	if (child > 0)
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	m = fopen("/proc/self/mountinfo", "re");
	while (m && fgets(buf, sizeof(buf), m))
		if (strstr(buf, " /proc ") && strstr(buf, "hidepid="))
			hide = true;
	if (m)
		fclose(m);
	if (why) {
		*line = xasprintf("%s", why);
		rc = -1;
	} else {
		*line = xasprintf("/proc of a process in its own namespaces: socket table, "
				  "descriptors, environment readable%s%s; %s",
				  got == 'u' ? " (no user namespace: checked without one)" : "",
				  hide ? "; hidepid keeps a user's own processes visible" : "",
				  diag ? "sockets found by the kernel's sock_diag"
				       : "no sock_diag in its namespace: each look-up reads the "
					 "socket tables (milliseconds on a large machine)");
	}
	return rc;
}
