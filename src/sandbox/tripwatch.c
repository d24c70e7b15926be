/*
 * sandbox/tripwatch.c — the watch on a session's decoy credentials (see
 * sandbox/tripwatch.h for what it does and why a lease).
 *
 * One thread per session with tripwires. It owns every decoy's descriptor
 * (boxy-init's O_RDONLY open, the struct file the lease hangs on), one
 * inotify instance with a watch on each decoy's inode, and a signalfd for
 * the lease-break signal, which the kernel sends to this thread alone
 * (F_SETOWN_EX, F_OWNER_TID). A lease break means: a process of the sandbox
 * is in open() of a decoy, blocked until the lease is given up. The thread
 * finds it in /proc/locks, where the kernel lists every opener a lease
 * holds by its process and the lease by its inode (when /proc/locks is too
 * long to read: among the sandbox's processes, the one a thread of which
 * waits in __break_lease), has it named (sandbox/attrib.h: its
 * pid in the sandbox, command, and the package a package manager ran it
 * for), queues the alert, and waits until the caller has emitted it
 * (tripwatch_drain: whatever reacts to an alert, --on-alert freeze, has
 * then acted, at most TW_HOLD_MS) before it gives the lease up: the open
 * completes in a sandbox that is frozen already. An open that names its
 * opener better than the alerts before it (enum tw_named) alerts again:
 * an O_NONBLOCK probe, which cannot be named, or a helper claiming another
 * package, must not hide the real read that follows. A break nobody waits
 * for (an O_NONBLOCK probe) is held a while before the lease is given up,
 * so that probes cost a look per hold and never use the leases up. The
 * lease is taken again once the file is closed (inotify IN_CLOSE). An open inotify reports that
 * no lease break announced (a second reader while the first still had it
 * open, or no leases on this system) is named by who holds the file open
 * when the thread looks, if anyone still does.
 *
 * What attribution reads about a process was written by the payload (its
 * argv, its environment: a script can give itself any package name, though
 * never another process's); sandbox/attrib.c bounds and sanitises it.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "sandbox/attrib.h"
#include "sandbox/gitwatch.h"
#include "sandbox/tripwatch.h"

#define TW_SIGNAL       (SIGRTMIN + 6)  /* the lease-break signal, thread-directed */
#define TW_HOLD_MS      250             /* an opener held until its alert was emitted, at most */
#define TW_WAIT_US      250000          /* how long a signalled opener may take to be seen waiting
					 * by its wait channel (only when /proc/locks is too long) */
#define TW_WAIT_MIN_US  10000           /* ... halved each break in a row that saw none, to this */
#define TW_PENDING_MS   20              /* a break nobody waits for is held this long, doubled each
					 * such break in a row up to TW_PENDING_MAX_MS */
#define TW_PENDING_MAX_MS 1000
#define TW_LOOK_MS      100             /* a look at the leases, for a break whose signal went astray */
#define TW_CANDIDATES_LOOKED 256        /* processes looked at for the scripts running at an unnamed open */
#define TW_LOCKS_MAX    (1u << 20)      /* bytes of /proc/locks read to find an opener */
#define TW_WATCH_MASK   (IN_OPEN | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | \
			 IN_MOVE_SELF | IN_DELETE_SELF)

/*
 * How well the alerts on a decoy's opens named who opened it. An open that
 * names its opener better than any before is an alert again: a throwaway
 * O_NONBLOCK probe, or a helper that claims another package, must not make
 * the real read that follows a mere count.
 */
enum tw_named {
	TW_NAMED_NONE,          /* no alert yet */
	TW_NAMED_NOBODY,        /* an alert that could name no process */
	TW_NAMED_PROCESS,       /* a process, with no package or one it only claims */
	TW_NAMED_PACKAGE,       /* a process and the package its package manager ran it for */
};

struct tw_decoy {
	int fd;                 /* boxy-init's O_RDONLY descriptor: the lease's file; -1 none */
	int wd;
	char *path;             /* "~/.aws/credentials", for messages */
	const char *what;       /* "AWS credentials" */
	const char *base;       /* the file's name, to tell which decoy an open is for */
	struct stat st;         /* as handed over: what a change is measured against */
	bool leased;
	unsigned breaks;        /* lease breaks so far */
	unsigned expect;        /* opens a lease break already named (their IN_OPEN is coming) */
	unsigned looks;         /* unannounced opens looked into (each a scan of /proc) */
	unsigned misses;        /* lease breaks in a row whose opener was not seen waiting */
	uint64_t pending_us;    /* a break nobody was seen waiting for, held since (0: none) */
	uint64_t pending_seq;   /* ... the alert it raised, to be emitted before it ends */
	uint64_t opens, changes;
	enum tw_named named;    /* how well the alerts on its opens named the opener */
	bool alerted_change;
};

struct tw_finding {
	char *verdict, *subject, *detail;
	struct attrib_proc who;         /* who.found false: nobody named */
	bool has_who;                   /* looked for (found or not) */
	uint64_t seq;
};

struct tripwatch {
	struct tw_decoy *v;
	size_t n;
	pid_t init_pid;
	char pidns[64];         /* readlink of init's /proc/PID/ns/pid */
	int ino, sfd, stop_efd, ready_efd;
	pthread_t thr;
	bool started;
	bool leases;            /* the leases could be taken: openers are named */
	pthread_mutex_t mu;     /* guards the queue below, the counters, seq and drained */
	pthread_cond_t drained_cv;
	struct tw_finding *q;
	size_t nq;
	int q_efd;              /* readable while q is not empty */
	unsigned alerts;
	uint64_t over_cap;      /* alerts past TRIPWATCH_ALERTS_MAX, counted */
	uint64_t seq, drained;  /* findings queued, and emitted by tripwatch_drain */
	bool stopping;          /* no more waiting for the caller */
	pid_t *procs;           /* the thread's scratch: the sandbox's processes */
	pid_t *tids;            /* ... and the thread of each blocked in open(), when one is */
	char *locks;            /* ... and /proc/locks, TW_LOCKS_MAX bytes and a NUL */
};

static void tw_on_break(struct tripwatch *w, struct tw_decoy *d);

/* ---- the sandbox's processes ----------------------------------------------------- */

/* A /proc file of pid, at most max bytes, NUL-terminated; NULL when it cannot be read. */
static char *tw_proc_read(pid_t pid, const char *file, size_t max)
{
	char path[64], *buf;
	size_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	buf = xmalloc(max + 1);
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return buf;
}

/*
 * The sandbox's processes, as pids of our namespace: every /proc entry of
 * our uid whose pid namespace is init's. At most max.
 */
static size_t tw_procs(const struct tripwatch *w, pid_t *out, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;
	uid_t me = geteuid();

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		char link[64], path[300];
		struct stat st;
		ssize_t l;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strlen(de->d_name) > 10)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || st.st_uid != me)
			continue;
		snprintf(path, sizeof(path), "%s/ns/pid", de->d_name);
		l = readlinkat(dirfd(d), path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (strcmp(link, w->pidns) == 0)
			out[n++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	return n;
}

/*
 * A thread of pid blocked in open() on a lease (its wait channel): its tid,
 * or 0. Every thread is looked at, not only the first — node opens files on
 * its thread pool (fs.promises, fs.readFile), Go on any of its threads —
 * while *budget lasts (one a thread).
 */
static pid_t tw_in_lease_break(pid_t pid, size_t *budget)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	pid_t tid = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!tid && *budget > 0 && (de = readdir(dir))) {
		char file[64], *s;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strlen(de->d_name) > 10)
			continue;
		(*budget)--;
		snprintf(file, sizeof(file), "task/%s/wchan", de->d_name);
		s = tw_proc_read(pid, file, 128);
		if (s && strcmp(s, "__break_lease") == 0)
			tid = (pid_t)atoi(de->d_name);
		free(s);
	}
	closedir(dir);
	return tid;
}

/*
 * The file name the blocked open() of pid's thread tid asks for ("" when it
 * cannot be read): open's first argument, openat's and openat2's second,
 * read from its memory.
 */
static void tw_open_path(pid_t pid, pid_t tid, char *out, size_t cap)
{
	char *s, mem[64];
	unsigned long long nr = 0, a0 = 0, a1 = 0, at;
	int fd;
	ssize_t r;

	snprintf(mem, sizeof(mem), "task/%d/syscall", (int)tid);
	s = tw_proc_read(pid, mem, 512);
	out[0] = '\0';
	if (!s || sscanf(s, "%llu %llx %llx", &nr, &a0, &a1) != 3) {
		free(s);
		return;
	}
	free(s);
	if (nr == SYS_openat || nr == SYS_openat2)
		at = a1;
#ifdef SYS_open
	else if (nr == SYS_open)
		at = a0;
#endif
	else
		return;
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	r = pread(fd, out, cap - 1, (off_t)at);
	close(fd);
	out[r > 0 ? (size_t)r : 0] = '\0';
	out[cap - 1] = '\0';
}

/* Does pid hold a descriptor on the decoy's inode? */
static bool tw_holds(pid_t pid, const struct tw_decoy *d)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	bool yes = false;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!yes && (de = readdir(dir))) {
		struct stat st;

		/* stat through the magic link: no open, so no lease break and no event */
		if (de->d_name[0] != '.' && fstatat(dirfd(dir), de->d_name, &st, 0) == 0)
			yes = st.st_dev == d->st.st_dev && st.st_ino == d->st.st_ino;
	}
	closedir(dir);
	return yes;
}

/* ---- findings ---------------------------------------------------------------------- */

/*
 * Queue a finding for tripwatch_drain, with who did it when who is not NULL;
 * its number, or 0 when an alert past the cap was only counted.
 */
static uint64_t tw_queue(struct tripwatch *w, const char *verdict, const char *subject,
			 char *detail, const struct attrib_proc *who)
{
	uint64_t one = 1, seq;

	pthread_mutex_lock(&w->mu);
	if (strcmp(verdict, "alert") == 0 && w->alerts >= TRIPWATCH_ALERTS_MAX) {
		w->over_cap++;
		pthread_mutex_unlock(&w->mu);
		free(detail);
		return 0;
	}
	if (strcmp(verdict, "alert") == 0)
		w->alerts++;
	{
		struct tw_finding *f = xappend(&w->q, &w->nq, sizeof(*f));

		f->verdict = xstrdup(verdict);
		f->subject = xstrdup(subject);
		f->detail = detail;
		if (who) {
			f->who = *who;
			f->has_who = true;
		}
		f->seq = seq = ++w->seq;
	}
	pthread_mutex_unlock(&w->mu);
	if (write(w->q_efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow at these numbers */
	}
	return seq;
}

/* Until finding seq was emitted by the caller (and what reacts to it acted), at most TW_HOLD_MS. */
static void tw_wait_drained(struct tripwatch *w, uint64_t seq)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)TW_HOLD_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&w->mu);
	while (seq && w->drained < seq && !w->stopping &&
	       pthread_cond_timedwait(&w->drained_cv, &w->mu, &until) == 0)
		;
	pthread_mutex_unlock(&w->mu);
}

static uint64_t tw_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Take the write lease on d (again, once its file was closed, until an
 * alert named the package that opened it); false when it is open
 * elsewhere. The signal and its owner are set each time, before: giving a
 * lease up clears both (Linux 6.18: the next break would be a
 * process-wide SIGIO), and taking one keeps an owner that is set (else it
 * makes the whole process the owner). A signal that goes astray anyway is
 * ignored (tw_ignore_strays) and its break found by the next look at the
 * lease (TW_LOOK_MS).
 */
static bool tw_lease(struct tripwatch *w, struct tw_decoy *d)
{
	struct f_owner_ex own = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };

	if (!w->leases || d->leased || d->fd < 0 || d->breaks >= TRIPWATCH_LEASES_MAX ||
	    d->named == TW_NAMED_PACKAGE)
		return d->leased;
	if (fcntl(d->fd, F_SETSIG, TW_SIGNAL) < 0 || fcntl(d->fd, F_SETOWN_EX, &own) < 0)
		return false;
	d->leased = fcntl(d->fd, F_SETLEASE, F_WRLCK) == 0;
	return d->leased;
}

/*
 * A lease break whose signal went astray: the kernel reports the type a
 * lease is being broken to (F_RDLCK, F_UNLCK) instead of F_WRLCK.
 */
static void tw_look_at_leases(struct tripwatch *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct tw_decoy *d = &w->v[i];

		if (d->leased && !d->pending_us && fcntl(d->fd, F_GETLEASE) != F_WRLCK)
			tw_on_break(w, d);
	}
}

/*
 * The lease signal is meant for the watch's thread alone; a process-wide one
 * (the window above), or the plain SIGIO the kernel falls back to when it
 * cannot queue it, would end the process by default. Ignored process-wide,
 * they are dropped, while the thread, which blocks the signal, still gets its
 * own (a blocked signal is never ignored).
 */
static void tw_ignore_strays(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(TW_SIGNAL, &sa, NULL);
	sigaction(SIGIO, &sa, NULL);
}

/* ---- the thread ---------------------------------------------------------------------- */

/* "postinstall of evil-pkg@1.2.3 (node, pid 17)", "cat /home/u/.aws/credentials (pid 3)". */
static char *tw_who_words(const struct attrib_proc *p)
{
	struct event_who w;

	attrib_proc_who(p, &w);
	return event_who_words(&w);
}

/*
 * When the opener cannot be named: the package scripts running in the
 * sandbox now, as candidates (at most three, among the first
 * TW_CANDIDATES_LOOKED processes), for the user to weigh; "" when none.
 * malloc'd.
 */
static char *tw_candidates(struct tripwatch *w)
{
	size_t n = tw_procs(w, w->procs, TW_CANDIDATES_LOOKED), kept = 0;
	char *out = xstrdup("");

	for (size_t i = 0; i < n && kept < 3; i++) {
		struct attrib_proc p;
		struct event_who who;
		char *words, *next;

		if (attrib_who_pid(w->init_pid, w->procs[i], &p) < 0 || !p.found || !p.package[0])
			continue;
		attrib_proc_who(&p, &who);
		words = event_who_words(&who);
		if (strstr(out, words)) {
			free(words);
			continue;
		}
		next = xasprintf("%s%s%s", out, kept ? "; " : "", words);
		free(out);
		free(words);
		out = next;
		kept++;
	}
	return out;
}

/* How well who names an opener (who.found false: nobody). */
static enum tw_named tw_named_of(const struct attrib_proc *who)
{
	if (!who->found)
		return TW_NAMED_NOBODY;
	return who->package[0] && !who->claimed ? TW_NAMED_PACKAGE : TW_NAMED_PROCESS;
}

/*
 * How likely the blocked open() of pid's thread tid is to be d's, by the
 * name it asked for: 2 d's own file name, 1 a name no decoy has (a hard
 * link, /proc/self/fd/N) or none read, 0 another decoy's file name while
 * that decoy is not being opened (the name is the payload's to choose: a
 * link called "credentials" to ~/.kube/config), -1 another decoy's that is
 * being opened too (its own break names it).
 */
static int tw_opener_rank(const struct tripwatch *w, const struct tw_decoy *d, pid_t pid,
			  pid_t tid)
{
	char path[512];
	const char *base;

	tw_open_path(pid, tid, path, sizeof(path));
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!path[0])
		return 1;
	if (strcmp(base, d->base) == 0)
		return 2;
	for (size_t k = 0; k < w->n; k++)
		if (&w->v[k] != d && strcmp(base, w->v[k].base) == 0)
			return w->v[k].leased && fcntl(w->v[k].fd, F_GETLEASE) != F_WRLCK ? -1 : 0;
	return 1;
}

/* Is pid (of our pid namespace) a process of the sandbox: our uid, init's pid namespace? */
static bool tw_in_sandbox(const struct tripwatch *w, pid_t pid)
{
	char path[64], link[64];
	struct stat st;
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0 || st.st_uid != geteuid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	l = readlink(path, link, sizeof(link) - 1);
	if (l <= 0)
		return false;
	link[l] = '\0';
	return strcmp(link, w->pidns) == 0;
}

size_t tripwatch_lease_waiters(const char *locks, dev_t dev, ino_t ino, pid_t *out, size_t max)
{
	const char *line, *next;
	long ours = -1;
	size_t n = 0;

	for (line = locks; *line && n < max; line = next) {
		unsigned maj, min;
		unsigned long long i;
		bool waiter = false;
		char *p;
		long id;
		int pid;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		id = strtol(line, &p, 10);
		if (p == line || *p++ != ':')
			continue;
		/* a waiter is "-> ", one for each level it is nested at */
		while (*p == ' ' || (p[0] == '-' && p[1] == '>')) {
			waiter = waiter || *p == '-';
			p += *p == ' ' ? 1 : 2;
		}
		if (waiter) {
			if (id == ours && sscanf(p, "LEASE %*s %*s %d", &pid) == 1 && pid > 0)
				out[n++] = (pid_t)pid;
		} else if (sscanf(p, "LEASE %*s %*s %*d %x:%x:%llu", &maj, &min, &i) == 3) {
			ours = maj == major(dev) && min == minor(dev) &&
			       i == (unsigned long long)ino ? id : -1;
		} else {
			ours = -1;
		}
	}
	return n;
}

/*
 * The sandbox's processes waiting in open() for d's lease to be broken, as
 * the kernel lists them in /proc/locks (tripwatch_lease_waiters): exact (the
 * inode is the kernel's, not a name the payload chose) and one read. Into
 * w->procs, in the order they came; how many, or -1 when /proc/locks could
 * not be read whole (TW_LOCKS_MAX bytes).
 */
static ssize_t tw_lease_waiters(struct tripwatch *w, const struct tw_decoy *d)
{
	size_t len = 0, n, kept = 0;
	int fd = open("/proc/locks", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len < TW_LOCKS_MAX) {
		ssize_t r = read(fd, w->locks + len, TW_LOCKS_MAX - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (len == TW_LOCKS_MAX)
		return -1;
	w->locks[len] = '\0';
	n = tripwatch_lease_waiters(w->locks, d->st.st_dev, d->st.st_ino, w->procs,
				    TRIPWATCH_PROCS_MAX);
	/* a process outside the sandbox (through /proc/PID/root) is reported, not named */
	for (size_t i = 0; i < n; i++)
		if (tw_in_sandbox(w, w->procs[i]))
			w->procs[kept++] = w->procs[i];
	return (ssize_t)kept;
}

/*
 * The sandbox's processes blocked in open() of d, the first in w->procs;
 * how many (0: none). From /proc/locks, in one look: the kernel lists an
 * opener's wait before the lease's owner can see the break (both under the
 * locks' semaphore, which reading /proc/locks takes for writing), so an
 * opener not listed is not waiting (O_NONBLOCK, or interrupted). Only when
 * /proc/locks is too long to read whole: the wait channel of every thread
 * (at most TRIPWATCH_THREADS_MAX a look) and the file name each blocked
 * open asks for, looked at again until one is seen or wait_us has passed.
 */
static size_t tw_blocked_openers(struct tripwatch *w, const struct tw_decoy *d, uint64_t wait_us)
{
	pid_t *procs = w->procs;
	uint64_t t0 = tw_now_us();
	ssize_t waiters = tw_lease_waiters(w, d);
	size_t n, found = 0, blocked = 0;
	int best = -1;

	if (waiters >= 0)
		return (size_t)waiters;
	n = tw_procs(w, procs, TRIPWATCH_PROCS_MAX);
	/*
	 * The kernel signals before the opener goes to sleep: look again, a
	 * little longer each time, until one is seen waiting (an O_NONBLOCK
	 * open never waits). Blocked openers are moved to the front of procs.
	 */
	for (unsigned us = 20;; us *= 2) {
		size_t budget = TRIPWATCH_THREADS_MAX;

		for (size_t i = 0; i < n && budget > 0; i++) {
			pid_t tid = tw_in_lease_break(procs[i], &budget), t;

			if (!tid)
				continue;
			t = procs[blocked];
			procs[blocked] = procs[i];
			procs[i] = t;
			w->tids[blocked++] = tid;
		}
		if (blocked || tw_now_us() - t0 >= wait_us)
			break;
		usleep(us > 2000 ? 2000 : us);
	}
	/* The openers most likely d's (another decoy's opener blocked too: its own break names it). */
	for (size_t i = 0; i < blocked; i++) {
		int rank = tw_opener_rank(w, d, procs[i], w->tids[i]);

		if (rank < 0)
			continue;
		if (rank > best) {
			best = rank;
			found = 0;
		}
		if (rank == best && found++ == 0) {
			pid_t t = procs[0];

			procs[0] = procs[i];
			procs[i] = t;
			t = w->tids[0];
			w->tids[0] = w->tids[i];
			w->tids[i] = t;
		}
	}
	return found;
}

/*
 * Queue the alert naming who, d's opener (and found - 1 more at once),
 * when it names it better than the alerts before; its number, or 0.
 */
static uint64_t tw_alert_opener(struct tripwatch *w, struct tw_decoy *d,
				const struct attrib_proc *who, size_t found, uint64_t t0)
{
	uint64_t named = tw_now_us() - t0, seq;
	char *by, *also = NULL;

	if (tw_named_of(who) <= d->named)
		return 0;
	d->named = tw_named_of(who);
	by = tw_who_words(who);
	if (found > 1)
		also = xasprintf(" and %zu other process(es) at once", found - 1);
	seq = tw_queue(w, "alert", d->path,
		       xasprintf("the decoy %s was opened by %s%s: no legitimate step reads it; a "
				 "credential stealer does (its open was held %llu.%02llu ms to name "
				 "it)", d->what, by, also ? also : "",
				 (unsigned long long)(named / 1000),
				 (unsigned long long)(named % 1000 / 10)), who);
	free(by);
	free(also);
	return seq;
}

/* How long a break nobody waits for is held: longer each time in a row. */
static uint64_t tw_pending_us(const struct tw_decoy *d)
{
	uint64_t ms = d->misses < 10 ? (uint64_t)TW_PENDING_MS << d->misses : TW_PENDING_MAX_MS;

	return (ms < TW_PENDING_MAX_MS ? ms : TW_PENDING_MAX_MS) * 1000u;
}

/*
 * Give d's lease up after a break, the open (if any) going on; taken again
 * at once when nobody opened it, else once the file is closed.
 */
static void tw_release(struct tripwatch *w, struct tw_decoy *d, size_t found)
{
	fcntl(d->fd, F_SETLEASE, F_UNLCK);
	d->leased = false;
	d->pending_us = 0;
	if (found) {
		d->breaks++;
		d->misses = 0;
	} else {
		d->misses++;
		tw_lease(w, d);         /* nobody is about to open it (O_NONBLOCK): watch on */
	}
}

/*
 * A lease break on d: someone is in open() of it. Name the blocked opener,
 * queue the alert and let the caller emit it (and react), then give the
 * lease up so the open goes on. A break nobody waits for (an O_NONBLOCK
 * probe) is not given up at once but held a while (tw_pending_us): an
 * opener that comes meanwhile waits and is named then (tw_settle), and a
 * storm of probes costs the watch a look per hold, not per probe — nor
 * ends the watch: only breaks that name someone count towards
 * TRIPWATCH_LEASES_MAX. Once an alert named a package, a break is only
 * counted: nothing could name it better.
 */
static void tw_on_break(struct tripwatch *w, struct tw_decoy *d)
{
	uint64_t t0 = tw_now_us(), seq = 0;
	size_t found = 0;
	struct attrib_proc who;

	memset(&who, 0, sizeof(who));
	if (d->pending_us)
		return;         /* held already: tw_settle looks again */
	/*
	 * Probes that never wait (O_NONBLOCK) would each cost a TW_WAIT_US of
	 * looking where /proc/locks cannot be read: after each one, the next
	 * look is shorter.
	 */
	if (d->named < TW_NAMED_PACKAGE) {
		uint64_t wait = d->misses < 16 ? TW_WAIT_US >> d->misses : 0;

		found = tw_blocked_openers(w, d, wait > TW_WAIT_MIN_US ? wait : TW_WAIT_MIN_US);
	}
	if (found && attrib_who_pid(w->init_pid, w->procs[0], &who) < 0)
		memset(&who, 0, sizeof(who));
	d->opens++;
	if (found || d->named == TW_NAMED_PACKAGE)
		d->expect++;
	if (found) {
		seq = tw_alert_opener(w, d, &who, found, t0);
	} else if (d->named == TW_NAMED_NONE) {
		char *cand = tw_candidates(w);

		d->named = TW_NAMED_NOBODY;
		seq = tw_queue(w, "alert", d->path,
			       xasprintf("the decoy %s was about to be opened, but the process "
					 "had stopped waiting before it could be named (an open "
					 "with O_NONBLOCK, which the lease refused, or a process "
					 "killed meanwhile): unattributed%s%s", d->what,
					 cand[0] ? "; package scripts running then: " : "",
					 cand), NULL);
		free(cand);
	}
	if (!found && d->named < TW_NAMED_PACKAGE) {
		d->pending_us = t0;
		d->pending_seq = seq;
		return;
	}
	/* The alert is out (and whatever --on-alert asks done) before the open goes on. */
	tw_wait_drained(w, seq);
	tw_release(w, d, found);
}

/*
 * A held break whose time is up: name whoever waits for it now (an opener
 * that came after the probe), let its alert out, give the lease up.
 */
static void tw_settle(struct tripwatch *w, struct tw_decoy *d)
{
	uint64_t seq = d->pending_seq, named;
	size_t found = tw_blocked_openers(w, d, 0);
	struct attrib_proc who;

	memset(&who, 0, sizeof(who));
	if (found) {
		if (attrib_who_pid(w->init_pid, w->procs[0], &who) < 0)
			memset(&who, 0, sizeof(who));
		d->opens++;
		d->expect++;
		named = tw_alert_opener(w, d, &who, found, d->pending_us);
		seq = named ? named : seq;
	}
	tw_wait_drained(w, seq);
	tw_release(w, d, found);
}

/* The held breaks whose time is up; the milliseconds until the next one's is (-1: none). */
static int tw_settle_due(struct tripwatch *w)
{
	uint64_t now = tw_now_us(), next = UINT64_MAX;

	for (size_t i = 0; i < w->n; i++) {
		struct tw_decoy *d = &w->v[i];
		uint64_t due;

		if (!d->pending_us)
			continue;
		due = d->pending_us + tw_pending_us(d);
		if (due <= now) {
			tw_settle(w, d);
			now = tw_now_us();
		} else if (due < next) {
			next = due;
		}
	}
	return next == UINT64_MAX ? -1 : (int)((next - now + 999) / 1000);
}

/*
 * An open no lease break announced: name whoever holds the file open now,
 * if anyone, when that names it better than before (looked into at most
 * TRIPWATCH_LEASES_MAX times a decoy: each look is a scan of the sandbox).
 */
static void tw_on_unannounced_open(struct tripwatch *w, struct tw_decoy *d)
{
	pid_t *procs = w->procs;
	size_t n;
	struct attrib_proc who;
	bool found = false;
	char *by;

	d->opens++;
	if (d->named == TW_NAMED_PACKAGE || d->looks >= TRIPWATCH_LEASES_MAX)
		return;
	d->looks++;
	memset(&who, 0, sizeof(who));
	n = tw_procs(w, procs, TRIPWATCH_PROCS_MAX);
	for (size_t i = 0; i < n && !found; i++)
		if (tw_holds(procs[i], d))
			found = attrib_who_pid(w->init_pid, procs[i], &who) == 0 && who.found;
	if (found && tw_named_of(&who) > d->named) {
		d->named = tw_named_of(&who);
		by = tw_who_words(&who);
		tw_queue(w, "alert", d->path,
			 xasprintf("the decoy %s was opened; %s held it open when the watch looked "
				   "(the opener itself was not held: %s)", d->what, by,
				   w->leases ? "another process had it open already" :
				   "leases are unavailable here"), &who);
		free(by);
	} else if (!found && d->named == TW_NAMED_NONE) {
		char *cand = tw_candidates(w);

		d->named = TW_NAMED_NOBODY;
		tw_queue(w, "alert", d->path,
			 xasprintf("the decoy %s was opened and closed again before its process "
				   "could be named (%s): unattributed%s%s", d->what,
				   w->leases ? "another process had it open already" :
				   "leases are unavailable here",
				   cand[0] ? "; package scripts running then: " : "", cand), NULL);
		free(cand);
	}
}

/* Something changed d itself: written, renamed, removed, linked, chmod'ed, touched. */
static void tw_on_change(struct tripwatch *w, struct tw_decoy *d, uint32_t mask)
{
	struct stat st;
	const char *how = "changed";

	d->changes++;
	if (mask & IN_DELETE_SELF)
		how = "removed";
	else if (mask & IN_MOVE_SELF)
		how = "renamed or moved";
	else if (mask & (IN_MODIFY | IN_CLOSE_WRITE))
		how = "written to";
	else if (fstat(d->fd, &st) == 0) {
		if (st.st_nlink != d->st.st_nlink)
			how = st.st_nlink > d->st.st_nlink ? "given another name (a hard link)" :
			      "unlinked";
		else if ((st.st_mode & 07777) != (d->st.st_mode & 07777) || st.st_uid != d->st.st_uid)
			how = "given other permissions";
		else
			how = "given other times (touched)";
		d->st = st;
	}
	if (d->alerted_change)
		return;
	d->alerted_change = true;
	tw_queue(w, "alert", d->path,
		 xasprintf("the decoy %s was %s: nothing legitimate touches it", d->what, how), NULL);
}

static struct tw_decoy *tw_by_wd(struct tripwatch *w, int wd)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].fd >= 0 && w->v[i].wd == wd)
			return &w->v[i];
	return NULL;
}

static struct tw_decoy *tw_by_fd(struct tripwatch *w, int fd)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].fd >= 0 && w->v[i].fd == fd)
			return &w->v[i];
	return NULL;
}

/* Every lease-break signal waiting. */
static void tw_drain_signals(struct tripwatch *w)
{
	struct signalfd_siginfo si;

	while (read(w->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		struct tw_decoy *d = tw_by_fd(w, (int)si.ssi_fd);

		if (d && d->leased)
			tw_on_break(w, d);
	}
}

/* Every inotify event waiting. */
static void tw_drain_events(struct tripwatch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(w->ino, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
			struct tw_decoy *d = tw_by_wd(w, ev->wd);

			off += (ssize_t)sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				tw_queue(w, "info", "decoys", xstrdup("the watch on the decoys lost "
								    "events (its queue overflowed): "
								    "counts are low"), NULL);
				continue;
			}
			if (!d)
				continue;
			if (ev->mask & IN_OPEN) {
				if (d->expect)
					d->expect--;
				else
					tw_on_unannounced_open(w, d);
			}
			if (ev->mask & (IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF))
				tw_on_change(w, d, ev->mask);
			if (ev->mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE))
				tw_lease(w, d);
		}
	}
}

static void *tw_thread(void *arg)
{
	struct tripwatch *w = arg;
	sigset_t set;
	uint64_t one = 1;

	/* The lease signal for this thread alone: every signal is blocked here already. */
	sigemptyset(&set);
	sigaddset(&set, TW_SIGNAL);
	w->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	w->leases = w->sfd >= 0;
	for (size_t i = 0; i < w->n && w->leases; i++)
		if (w->v[i].fd >= 0 && !tw_lease(w, &w->v[i]))
			w->leases = false;
	if (!w->leases)
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i].leased && fcntl(w->v[i].fd, F_SETLEASE, F_UNLCK) == 0)
				w->v[i].leased = false;
	if (write(w->ready_efd, &one, sizeof(one)) < 0) {
		/* tripwatch_start reads it; it cannot be full */
	}
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = w->sfd, .events = POLLIN },
			{ .fd = w->ino, .events = POLLIN },
			{ .fd = w->stop_efd, .events = POLLIN },
		};

		int due = tw_settle_due(w), r;

		r = poll(p, 3, !w->leases ? -1 : due >= 0 && due < TW_LOOK_MS ? due : TW_LOOK_MS);
		if (r < 0 && errno != EINTR)
			break;
		/* Signals first: the blocked opener must be named before its IN_OPEN is read. */
		if (p[0].revents & POLLIN)
			tw_drain_signals(w);
		if (r == 0)
			tw_look_at_leases(w);
		if (p[1].revents & POLLIN)
			tw_drain_events(w);
		if (p[2].revents & POLLIN)
			break;
	}
	return NULL;
}

/* ---- the owner's side ---------------------------------------------------------------- */

struct tripwatch *tripwatch_create(const struct decoy_set *set, pid_t init_pid, char **err)
{
	struct tripwatch *w = xcalloc(1, sizeof(*w));
	char path[64];
	ssize_t l;

	w->init_pid = init_pid;
	w->sfd = w->stop_efd = w->ready_efd = w->q_efd = -1;
	pthread_cond_init(&w->drained_cv, NULL);
	tw_ignore_strays();
	w->procs = xcalloc(TRIPWATCH_PROCS_MAX, sizeof(pid_t));
	w->tids = xcalloc(TRIPWATCH_PROCS_MAX, sizeof(pid_t));
	w->locks = xmalloc(TW_LOCKS_MAX + 1);
	pthread_mutex_init(&w->mu, NULL);
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init_pid);
	l = readlink(path, w->pidns, sizeof(w->pidns) - 1);
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->ready_efd = eventfd(0, EFD_CLOEXEC);
	w->q_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l <= 0 || w->ino < 0 || w->stop_efd < 0 || w->ready_efd < 0 || w->q_efd < 0) {
		set_err_errno(err, "the decoys cannot be watched");
		tripwatch_stop(w, NULL, NULL);
		return NULL;
	}
	w->pidns[l] = '\0';
	w->n = set->n;
	w->v = xcalloc(w->n ? w->n : 1, sizeof(*w->v));
	for (size_t i = 0; i < w->n; i++) {
		struct tw_decoy *d = &w->v[i];

		d->fd = d->wd = -1;
		d->path = xasprintf("~/%s", set->v[i].path);
		d->what = set->v[i].what;
		d->base = strrchr(d->path, '/') + 1;
	}
	return w;
}

int tripwatch_adopt(struct tripwatch *w, size_t i, int fd, char **err)
{
	struct tw_decoy *d;
	char proc[64];

	if (i >= w->n || w->v[i].fd >= 0 || w->started) {
		close(fd);
		return set_err(err, "decoy %zu handed over twice, or unknown", i);
	}
	d = &w->v[i];
	if (fstat(fd, &d->st) < 0 || !S_ISREG(d->st.st_mode)) {
		close(fd);
		return set_err(err, "decoy %zu is not a regular file", i);
	}
	/* Through the descriptor, not a path: nothing in the sandbox resolves it for us. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	d->wd = inotify_add_watch(w->ino, proc, TW_WATCH_MASK);
	if (d->wd < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return set_err_errno(err, "watching %s", d->path);
	}
	d->fd = fd;
	return 0;
}

int tripwatch_start(struct tripwatch *w, char **note, char **err)
{
	uint64_t v;

	if (git_thread_start(&w->thr, tw_thread, w) != 0)
		return set_err(err, "no thread for the decoys' watch");
	w->started = true;
	/* The leases are taken before boxy-init is told to go on. */
	while (read(w->ready_efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	if (!w->leases)
		*note = xstrdup("leases cannot be taken here (fs.leases-enable is 0?): an opened "
				"decoy is reported, its opener named only if it still holds the file");
	return 0;
}

int tripwatch_fd(const struct tripwatch *w)
{
	return w ? w->q_efd : -1;
}

size_t tripwatch_count(const struct tripwatch *w)
{
	size_t n = 0;

	for (size_t i = 0; w && i < w->n; i++)
		n += w->v[i].fd >= 0;
	return n;
}

void tripwatch_drain(struct tripwatch *w, const struct event_sink *sink, const char *session)
{
	struct tw_finding *q;
	size_t n;
	uint64_t v;

	if (!w)
		return;
	if (read(w->q_efd, &v, sizeof(v)) < 0) {
		/* nothing counted: the queue may still have been filled meanwhile */
	}
	pthread_mutex_lock(&w->mu);
	q = w->q;
	n = w->nq;
	w->q = NULL;
	w->nq = 0;
	pthread_mutex_unlock(&w->mu);
	for (size_t i = 0; i < n; i++) {
		struct event ev = event_audit_make("tripwire", q[i].verdict, q[i].subject,
						   q[i].detail);
		struct event_who who;

		if (q[i].has_who) {
			attrib_proc_who(&q[i].who, &who);
			ev.who = &who;
		}
		ev.session = session;
		event_emit(sink, &ev);
		free(q[i].verdict);
		free(q[i].subject);
		free(q[i].detail);
	}
	if (n) {
		/* Emitted, and reacted to: an opener held for its alert may go on. */
		pthread_mutex_lock(&w->mu);
		if (q[n - 1].seq > w->drained)
			w->drained = q[n - 1].seq;
		pthread_cond_broadcast(&w->drained_cv);
		pthread_mutex_unlock(&w->mu);
	}
	free(q);
}

void tripwatch_stop(struct tripwatch *w, const struct event_sink *sink, const char *session)
{
	uint64_t one = 1;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->drained_cv);
	pthread_mutex_unlock(&w->mu);
	if (w->started) {
		if (write(w->stop_efd, &one, sizeof(one)) < 0) {
			/* an eventfd far from full */
		}
		pthread_join(w->thr, NULL);
		w->started = false;
		/* What happened while the sandbox died. */
		tw_drain_signals(w);
		tw_drain_events(w);
	}
	tripwatch_drain(w, sink, session);
	for (size_t i = 0; i < w->n; i++) {
		struct tw_decoy *d = &w->v[i];

		if (d->opens > 1 || (d->changes > 1 && d->alerted_change)) {
			char *s = xasprintf("the decoy %s was opened %llu time(s) and changed %llu "
					    "time(s) in all", d->what, (unsigned long long)d->opens,
					    (unsigned long long)d->changes);
			struct event ev = event_audit_make("tripwire", "info", d->path, s);

			ev.session = session;
			event_emit(sink, &ev);
			free(s);
		}
		if (d->leased)
			fcntl(d->fd, F_SETLEASE, F_UNLCK);
	}
	if (w->over_cap) {
		char *s = xasprintf("%llu more tripwire alert(s) past the %d a session shows were "
				    "counted, not kept", (unsigned long long)w->over_cap,
				    TRIPWATCH_ALERTS_MAX);
		struct event ev = event_audit_make("tripwire", "info", "decoys", s);

		ev.session = session;
		event_emit(sink, &ev);
		free(s);
	}
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].path);
		if (w->v[i].fd >= 0)
			close(w->v[i].fd);
	}
	free(w->v);
	free(w->procs);
	free(w->tids);
	free(w->locks);
	{
		const int fds[] = { w->ino, w->sfd, w->stop_efd, w->ready_efd, w->q_efd };

		for (size_t k = 0; k < ARRAY_SIZE(fds); k++)
			if (fds[k] >= 0)
				close(fds[k]);
	}
	pthread_cond_destroy(&w->drained_cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
