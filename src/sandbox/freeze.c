/*
 * sandbox/freeze.c — freezing a sandbox's processes from outside it (see
 * sandbox/freeze.h; doc/react.md has the reasons and the measurements).
 *
 * The cgroup freezer is the kernel's: one write, then cgroup.events says when
 * every task is in the freezer's trap. A task forked meanwhile is born frozen,
 * SIGCONT does not thaw, and a vfork parent waiting for its frozen child
 * counts as frozen.
 *
 * Without a cgroup, SIGSTOP, which no process can catch, block or ignore. A
 * single kill of each process is not enough, and the sweep is built for why:
 *   - a process forks between the scan and its stop: the child did not get
 *     the signal (a fork does not inherit pending signals), so every sweep
 *     ends with a fresh scan, and a pid that was not in the sweep's list makes
 *     the pass unclean;
 *   - a process not stopped yet continues a stopped sibling (SIGCONT, or
 *     SIGTSTP to the payload, which boxy-init would answer with SIGCONT):
 *     every sweep stops every process again, and only two clean passes in a
 *     row end it; boxy-init is told first (PLAN_SIG_FREEZE, by the caller) to
 *     pass no SIGCONT on meanwhile;
 *   - threads: SIGSTOP stops the whole thread group, but one thread at a
 *     time, so each thread's state is read (/proc/PID/task/TID/stat);
 *   - a process stopped already (by the payload itself) is stopped: it is
 *     counted as such and sent SIGSTOP anyway, which changes nothing;
 *   - D (uninterruptible: a vfork parent waiting for its stopped child, a disk
 *     read) is not running: a task leaves it only through the kernel's return
 *     path, which takes the pending stop before one instruction of the
 *     payload's code.
 * Processes are found by their pid namespace (/proc/PID/ns/pid), as the
 * memory watchdog finds them, and signalled through a pidfd opened before the
 * namespace is checked, so a pid reused by a process outside the sandbox is
 * never signalled. Bounded: a sweep that has not converged by the deadline is
 * a failure, and the caller kills the sandbox instead. That is what a payload
 * built to resist gets: threads doing nothing but kill(-1, SIGCONT) in a loop
 * keep continuing each other, since one caught inside its kill (a walk of
 * every process, which no signal interrupts) continues the rest once more
 * after their stop; measured, a few such threads are stopped in 5–300 ms, a
 * few dozen may keep a sweep from converging (tests/unit/test-react.c). The
 * cgroup freezer has no such window: SIGCONT does not thaw a frozen task.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/freeze.h"
#include "common/util.h"

#define NSID_MAX        64          /* "pid:[4026532345]" */
#define STAT_MAX        1024        /* a /proc/PID/stat line; the state is near its start */
#define SETTLE_US       20000       /* how long one sweep waits for its stops to land */

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

char freeze_stat_state(const char *stat)
{
	/* "PID (COMM) S ...": COMM may hold spaces and parentheses, so the last ')'. */
	const char *p = strrchr(stat, ')');

	if (!p || p[1] != ' ' || !p[2])
		return '?';
	return p[2];
}

/* True for a state that runs, or will run, the payload's code. */
static bool state_runs(char s)
{
	return !strchr("TtZXxD", s) || s == '\0';
}

/* The running threads of pid under procfd; -1 when it is gone. */
static int threads_running_at(int procfd, pid_t pid)
{
	char path[48], stat[STAT_MAX];
	struct dirent *de;
	int fd, n = 0, seen = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%d/task", (int)pid);
	fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		ssize_t r;
		int sfd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%.20s/stat", de->d_name);
		sfd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
		if (sfd < 0)
			continue;       /* that thread exited meanwhile */
		r = read(sfd, stat, sizeof(stat) - 1);
		close(sfd);
		if (r <= 0)
			continue;
		stat[r] = '\0';
		seen++;
		if (state_runs(freeze_stat_state(stat)))
			n++;
	}
	closedir(d);
	return seen ? n : -1;
}

int freeze_threads_running(pid_t pid)
{
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n;

	if (procfd < 0)
		return -1;
	n = threads_running_at(procfd, pid);
	close(procfd);
	return n;
}

/* The pid namespace of pid as readlink gives it ("pid:[N]"); false when it is gone. */
static bool ns_of(int procfd, pid_t pid, char out[NSID_MAX])
{
	char path[48];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/ns/pid", (int)pid);
	n = readlinkat(procfd, path, out, NSID_MAX - 1);
	if (n <= 0)
		return false;
	out[n] = '\0';
	return true;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Every process of namespace nsid but init, sorted, into *v (grown as needed). */
static size_t ns_scan(int procfd, const char *nsid, pid_t init, pid_t **v, size_t *cap)
{
	int fd = dup(procfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t n = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		char *end, ns[NSID_MAX];
		long pid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || pid > INT32_MAX ||
		    (pid_t)pid == init || !ns_of(procfd, (pid_t)pid, ns) || strcmp(ns, nsid) != 0)
			continue;
		if (n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*v = xrealloc(*v, *cap * sizeof(**v));
		}
		(*v)[n++] = (pid_t)pid;
	}
	closedir(d);
	qsort(*v, n, sizeof(**v), pid_cmp);
	return n;
}

/*
 * Send sig to pid when it is a process of nsid: the pidfd first, then the
 * namespace of what the pid names now. While the pidfd's process lives the
 * pid cannot be reused, so a match means the pidfd is that process.
 */
static bool ns_signal(int procfd, const char *nsid, pid_t pid, int sig)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	char ns[NSID_MAX];
	bool ok;

	if (fd < 0)
		return false;
	ok = ns_of(procfd, pid, ns) && strcmp(ns, nsid) == 0 &&
	     syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0;
	close(fd);
	return ok;
}

/* The sweep's processes, by pid, each with a pidfd checked once against the namespace. */
struct sweep {
	pid_t *pid;
	int *fd;                    /* -1: gone, or not the namespace's (pid reused) */
	size_t n, cap;
};

/* The pidfd of pid, opened and checked the first time a scan finds it. */
static int sweep_fd(struct sweep *w, int procfd, const char *nsid, pid_t pid)
{
	size_t lo = 0, hi = w->n;
	char ns[NSID_MAX];
	int fd;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w->pid[mid] == pid)
			return w->fd[mid];
		if (w->pid[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0 && (!ns_of(procfd, pid, ns) || strcmp(ns, nsid) != 0)) {
		close(fd);
		fd = -1;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->pid = xrealloc(w->pid, w->cap * sizeof(*w->pid));
		w->fd = xrealloc(w->fd, w->cap * sizeof(*w->fd));
	}
	memmove(w->pid + lo + 1, w->pid + lo, (w->n - lo) * sizeof(*w->pid));
	memmove(w->fd + lo + 1, w->fd + lo, (w->n - lo) * sizeof(*w->fd));
	w->pid[lo] = pid;
	w->fd[lo] = fd;
	w->n++;
	return fd;
}

static void sweep_free(struct sweep *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->fd[i] >= 0)
			close(w->fd[i]);
	free(w->pid);
	free(w->fd);
}

int freeze_sigstop(pid_t init, uint64_t timeout_us, struct freeze_report *rep, char **err)
{
	uint64_t t0 = mono_us(), deadline = t0 + timeout_us;
	pid_t *now = NULL, *after = NULL;
	size_t ncap = 0, acap = 0, n = 0;
	struct sweep w = { 0 };
	int procfd, clean = 0, rc = -1;
	unsigned running = 0;
	char nsid[NSID_MAX];

	memset(rep, 0, sizeof(*rep));
	rep->how = "SIGSTOP";
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return set_err_errno(err, "/proc");
	if (!ns_of(procfd, init, nsid)) {
		close(procfd);
		return set_err(err, "the sandbox's init (pid %d) is gone", (int)init);
	}
	for (;;) {
		bool grew = false;
		size_t m;

		rep->rounds++;
		n = ns_scan(procfd, nsid, init, &now, &ncap);
		/*
		 * Twice over, back to back: a process continued by a sibling between
		 * its first stop and the sibling's own is stopped again before the
		 * states are read (the sends are one syscall each, from cached pidfds).
		 */
		for (int burst = 0; burst < 2; burst++)
			for (size_t i = 0; i < n; i++) {
				int fd = sweep_fd(&w, procfd, nsid, now[i]);

				if (fd >= 0)
					syscall(SYS_pidfd_send_signal, fd, SIGSTOP, NULL, 0);
			}
		/* The stops land as each thread next leaves the kernel: look until they have. */
		for (uint64_t wait = 20, until = mono_us() + SETTLE_US;; wait *= wait < 1000 ? 2 : 1) {
			running = 0;
			for (size_t i = 0; i < n; i++) {
				int r = threads_running_at(procfd, now[i]);

				if (r > 0)
					running += (unsigned)r;
			}
			if (!running || mono_us() >= until || mono_us() >= deadline)
				break;
			usleep((useconds_t)wait);
		}
		/* A process the sweep did not know (forked during it) makes the pass unclean. */
		m = ns_scan(procfd, nsid, init, &after, &acap);
		for (size_t i = 0; i < m && !grew; i++)
			grew = !bsearch(&after[i], now, n, sizeof(*now), pid_cmp);
		if (!running && !grew) {
			if (clean++ == 0) {
				rep->us = mono_us() - t0;
				rep->procs = (unsigned)m;
			}
			if (clean == 2) {
				rc = 0;
				break;
			}
		} else {
			clean = 0;
			running += grew;
		}
		if (mono_us() >= deadline) {
			rep->running = running;
			set_err(err, "%u thread(s) of the sandbox still running after %llu ms and %u "
				"sweeps", running, (unsigned long long)(timeout_us / 1000), rep->rounds);
			break;
		}
	}
	sweep_free(&w);
	free(now);
	free(after);
	close(procfd);
	return rc;
}

unsigned freeze_sigcont(pid_t init)
{
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char nsid[NSID_MAX];
	pid_t *v = NULL;
	size_t cap = 0, n;
	unsigned done = 0;

	if (procfd < 0)
		return 0;
	if (ns_of(procfd, init, nsid)) {
		n = ns_scan(procfd, nsid, init, &v, &cap);
		for (size_t i = 0; i < n; i++)
			done += ns_signal(procfd, nsid, v[i], SIGCONT);
	}
	free(v);
	close(procfd);
	return done;
}

/* Is "frozen 1" a line of cgroup.events' text? */
static bool events_frozen(const char *text)
{
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, "frozen 1", 8) == 0 && (p[8] == '\n' || p[8] == '\0'))
			return true;
	return false;
}

int freeze_cgroup(const char *dir, bool freeze, uint64_t timeout_us, struct freeze_report *rep,
		  char **err)
{
	uint64_t t0 = mono_us(), deadline = t0 + timeout_us;
	char *path = xasprintf("%s/cgroup.freeze", dir), text[256];
	int fd, rc = -1;

	memset(rep, 0, sizeof(*rep));
	rep->how = "cgroup";
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || write(fd, freeze ? "1\n" : "0\n", 2) != 2) {
		set_err_errno(err, "%s", path);
		if (fd >= 0)
			close(fd);
		free(path);
		return -1;
	}
	close(fd);
	free(path);
	if (!freeze)
		return 0;
	/* cgroup.events changes (POLLPRI) when the last task enters the freezer's trap. */
	path = xasprintf("%s/cgroup.events", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		set_err_errno(err, "%s", path);
		free(path);
		return -1;
	}
	for (;;) {
		ssize_t r = pread(fd, text, sizeof(text) - 1, 0);
		uint64_t t = mono_us();
		struct pollfd p = { .fd = fd, .events = POLLPRI };

		if (r < 0) {
			set_err_errno(err, "%s", path);
			break;
		}
		text[r] = '\0';
		if (events_frozen(text)) {
			rep->us = t - t0;
			rc = 0;
			break;
		}
		if (t >= deadline) {
			set_err(err, "%s did not say frozen within %llu ms", path,
				(unsigned long long)(timeout_us / 1000));
			break;
		}
		/* At most 10 ms a wait: a notification missed between read and poll costs no more. */
		poll(&p, 1, (int)((deadline - t) / 1000 < 10 ? (deadline - t) / 1000 + 1 : 10));
	}
	close(fd);
	free(path);
	return rc;
}
