/*
 * sandbox/gitwatch.c — the daemon's watch on the gitdirs a run can write (see
 * sandbox/gitwatch.h for why), in a thread of its own so that a busy event loop
 * cannot slow the reaction.
 *
 * What is watched, and what stops the run:
 *  - the top of every protected gitdir: a `commondir` appearing in a main
 *    or submodule gitdir (git would take config and hooks from where it
 *    points), a `config.worktree` appearing where the mount stage did not
 *    make one read-only; a `worktrees` directory appearing is watched too;
 *  - `worktrees/` and each `worktrees/NAME` in it, old or new: a
 *    `commondir` there must lead back to the main gitdir (what `git
 *    worktree add` writes), checked on every write; a `config.worktree`
 *    that appears in one stops the run;
 *  - every writable root that had no `.git`: a `.git` file or symlink (a
 *    gitlink to a gitdir of the payload's making) stops the run, and so
 *    does a `.git` directory when the root lies inside a larger repository,
 *    where the user's shell prompt and IDE already run git.
 * Stopping is SIGKILL through the sandbox's pidfd, then the file is
 * renamed out of git's way (git_quarantine) and an "alert" finding is
 * recorded with the time from the name's appearance to the kill. A lost
 * event (the inotify queue overflowed) rescans everything watched. Every
 * descriptor is O_PATH and every watch is added through /proc/self/fd, so
 * a rename in the tree cannot point the watcher elsewhere.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/close-later.h"
#include "sandbox/gitwatch.h"
#include "common/util.h"

#define GITWATCH_FILE_MAX 4096          /* a commondir worth reading */
#define GW_FROM_SCAN      0x80000000u   /* gw_name: a look, not an event (no event has it) */

enum gw_kind {
	GW_GITDIR,              /* the top of a gitdir (main, submodule or worktrees/NAME) */
	GW_WORKTREES,           /* a gitdir's worktrees/ */
	GW_ROOT,                /* a writable root without .git */
};

struct gw_watch {
	int wd;
	enum gw_kind kind;
	int fd;                 /* O_PATH|O_DIRECTORY, owned */
	char *path;
	int main_fd;            /* linked worktree (and worktrees/): the main gitdir, owned dup; else -1 */
	bool wtconfig;          /* config.worktree is read-only inside: no alarm */
	bool had_commondir, had_wtconfig;
	bool in_repo;           /* GW_ROOT */
};

struct gitwatch {
	struct git_findings *f;
	int ino, stop_efd;
	bool close_by_child;    /* the last close of ino in a child process (gitwatch_create) */
	pthread_t thr;
	bool started;
	bool live;              /* the run is on: a name seen from now on is not "had" */
	pthread_mutex_t mu;     /* guards the four below */
	int pidfd;
	bool pending;           /* a dangerous name was seen before gitwatch_arm */
	bool killed;
	uint64_t kill_ns;       /* CLOCK_REALTIME of the kill */
	struct gw_watch *v;     /* the thread's alone once started */
	size_t n;
};

/* ---- findings and the quarantine (shared with sandbox/gitcheck.c) ------------ */

void git_findings_init(struct git_findings *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
}

void git_findings_add(struct git_findings *f, const char *verdict, const char *subject,
		      const char *fmt, ...)
{
	struct git_finding *e;
	va_list ap;
	char *d;

	va_start(ap, fmt);
	if (vasprintf(&d, fmt, ap) < 0)
		fatal("out of memory");
	va_end(ap);
	pthread_mutex_lock(&f->mu);
	e = xappend(&f->v, &f->n, sizeof(*f->v));
	e->verdict = xstrdup(verdict);
	e->subject = xstrdup(subject);
	e->detail = d;
	pthread_mutex_unlock(&f->mu);
}

void git_findings_free(struct git_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].verdict);
		free(f->v[i].subject);
		free(f->v[i].detail);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
	pthread_mutex_destroy(&f->mu);
}

/* Give a directory of ours (O_PATH dfd) u+wx back, as the user could; false if not ours. */
static bool git_dir_make_writable(int dfd)
{
	char proc[64];
	struct stat st;

	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid() || !S_ISDIR(st.st_mode))
		return false;
	if ((st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR))
		return false;   /* not the reason */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
	return chmod(proc, (st.st_mode & 07777) | S_IWUSR | S_IXUSR) == 0;
}

int git_quarantine(int dfd, const char *name, char **out)
{
	struct timespec ts;
	uint32_t rnd;
	bool fixed = false;

	clock_gettime(CLOCK_REALTIME, &ts);
	for (int attempt = 0; attempt < 16; attempt++) {
		char *to;
		int r;

		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			rnd = (uint32_t)ts.tv_nsec ^ (uint32_t)attempt * 2654435761u;
		to = xasprintf("%s.boxy-quarantine-%lld-%08x", name, (long long)ts.tv_sec, rnd);
		r = (int)syscall(SYS_renameat2, dfd, name, dfd, to, RENAME_NOREPLACE);
		if (r == 0) {
			*out = to;
			return 0;
		}
		free(to);
		if ((errno == EACCES || errno == EPERM) && !fixed && git_dir_make_writable(dfd)) {
			fixed = true;
			continue;
		}
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

int git_thread_start(pthread_t *thr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int r;

	/* Signals are the daemon's loop's to take (libev's handlers): none for the thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(thr, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* ---- the watcher -------------------------------------------------------------- */

static uint64_t gw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Kill the sandbox now, or as soon as it is armed; returns the kill's time. */
static uint64_t gw_kill(struct gitwatch *w)
{
	uint64_t t;

	pthread_mutex_lock(&w->mu);
	if (!w->killed && w->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
		w->killed = true;
		w->kill_ns = gw_now_ns();
	} else if (!w->killed) {
		w->pending = true;
	}
	t = w->killed ? w->kill_ns : gw_now_ns();
	pthread_mutex_unlock(&w->mu);
	return t;
}

/*
 * A dangerous name: stop the run, then move the name out of git's way and
 * record it. moved: it arrived by rename (its ctime says when), else it was
 * created (its birth time says when).
 */
static void gw_danger(struct gitwatch *w, struct gw_watch *d, const char *name, bool moved,
		      const char *why)
{
	struct statx stx;
	uint64_t killed, born = 0;
	char *subject = xasprintf("%s/%s", d->path, name), *to = NULL, when[64] = "";
	bool have = statx(d->fd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &stx) == 0;
	int qr, qerr;

	/* Out of the host's git's way first, then the payload stopped: a few µs apart. */
	qr = git_quarantine(d->fd, name, &to);
	qerr = errno;
	killed = gw_kill(w);
	if (have) {
		if (!moved && (stx.stx_mask & STATX_BTIME))
			born = (uint64_t)stx.stx_btime.tv_sec * 1000000000u + stx.stx_btime.tv_nsec;
		else
			born = (uint64_t)stx.stx_ctime.tv_sec * 1000000000u + stx.stx_ctime.tv_nsec;
	}
	if (born && killed >= born)
		snprintf(when, sizeof(when), " %llu µs after it appeared",
			 (unsigned long long)((killed - born) / 1000));
	errno = qerr;
	if (qr == 0)
		git_findings_add(w->f, "alert", subject, "the run created %s, %s: the session was "
				 "stopped%s and the file renamed to %s; read it, and what it points "
				 "at, before running git there", subject, why, when, to);
	else
		git_findings_add(w->f, "alert", subject, "the run created %s, %s: the session was "
				 "stopped%s, but the file could not be renamed (%s): remove it before "
				 "running git there", subject, why, when, strerrordesc_np(errno));
	free(to);
	free(subject);
}

static struct gw_watch *gw_find(struct gitwatch *w, int wd)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].wd == wd)
			return &w->v[i];
	return NULL;
}

static void gw_scan(struct gitwatch *w, struct gw_watch *d);

/*
 * Add one watch (takes fd; main_fd is dup'd). Two paths to one directory
 * share a watch: the first entry stays. Returns the entry, or NULL.
 */
static struct gw_watch *gw_add(struct gitwatch *w, enum gw_kind kind, int fd, const char *path,
			       int main_fd, bool wtconfig)
{
	static const uint32_t masks[] = {
		[GW_GITDIR] = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ONLYDIR,
		[GW_WORKTREES] = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR,
		[GW_ROOT] = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR,
	};
	char proc[64];
	struct gw_watch *d;
	int wd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->ino, proc, masks[kind] | IN_MASK_ADD);
	if (wd < 0 && w->live) {
		/* A directory the payload made that cannot be watched (the watches ran
		 * out: the payload can use them up): stop rather than look away. */
		int e = errno;

		gw_kill(w);
		git_findings_add(w->f, "alert", path, "%s, made during the run, cannot be watched "
				 "for files that would point git elsewhere (%s): the session was "
				 "stopped", path, strerrordesc_np(e));
		close(fd);
		return NULL;
	}
	if (wd < 0) {
		git_findings_add(w->f, "alert", path, "%s cannot be watched for files that would "
				 "point git elsewhere (%s): nothing stops the run if one appears; "
				 "it is checked after the run only", path, strerrordesc_np(errno));
		close(fd);
		return NULL;
	}
	if (gw_find(w, wd)) {
		close(fd);
		return NULL;
	}
	d = xappend(&w->v, &w->n, sizeof(*w->v));
	d->wd = wd;
	d->kind = kind;
	d->fd = fd;
	d->path = xstrdup(path);
	d->main_fd = main_fd >= 0 ? fcntl(main_fd, F_DUPFD_CLOEXEC, 3) : -1;
	d->wtconfig = wtconfig;
	if (!w->live) {
		struct stat st;

		d->had_commondir = fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0;
		d->had_wtconfig = fstatat(fd, "config.worktree", &st, AT_SYMLINK_NOFOLLOW) == 0;
	}
	return d;
}

/* O_PATH to dfd/name, a directory, without following a link; -1 if none. */
static int gw_open_dir(int dfd, const char *name)
{
	return openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Watch d's worktrees/ (d a main or submodule gitdir), and scan it. */
static void gw_add_worktrees(struct gitwatch *w, struct gw_watch *d)
{
	int fd = gw_open_dir(d->fd, "worktrees"), main_fd = d->fd;
	char *p;
	struct gw_watch *n;

	if (fd < 0)
		return;
	p = xasprintf("%s/worktrees", d->path);
	n = gw_add(w, GW_WORKTREES, fd, p, main_fd, d->wtconfig);
	free(p);
	if (n)
		gw_scan(w, n);
}

/* Whether the commondir in gitdir d leads back to its main gitdir (itself for a main one). */
static bool gw_commondir_ok(struct gw_watch *d)
{
	char buf[GITWATCH_FILE_MAX + 1];
	struct stat a, b;
	ssize_t n;
	int fd = openat(d->fd, "commondir", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			O_CLOEXEC), tfd;

	if (fd < 0)
		return errno == ENOENT;
	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode)) {
		close(fd);
		return false;
	}
	n = read(fd, buf, GITWATCH_FILE_MAX);
	close(fd);
	if (n < 0)
		return false;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (n == 0)
		return true;    /* git refuses an empty one; the write that follows is checked */
	if (memchr(buf, '\0', (size_t)n))
		return false;
	{
		/* No symlink on the way: the payload could re-point one without
		 * touching commondir, and no event would say so. git writes "../..". */
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		tfd = (int)syscall(SYS_openat2, d->fd, buf, &how, sizeof(how));
	}
	if (tfd < 0)
		return false;   /* a target made later would be git's to follow */
	n = fstat(tfd, &a) == 0 && fstat(d->main_fd >= 0 ? d->main_fd : d->fd, &b) == 0 &&
	    a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino;
	close(tfd);
	return n != 0;
}

/* One name in watched directory d appeared or changed. */
static void gw_name(struct gitwatch *w, struct gw_watch *d, const char *name, uint32_t mask)
{
	bool moved = mask & IN_MOVED_TO, appeared = mask & (IN_CREATE | IN_MOVED_TO);

	switch (d->kind) {
	case GW_GITDIR:
		if (!strcmp(name, "commondir")) {
			/* The mount stage writes "." into a main gitdir's: that one is fine. One
			 * that was there before (another run's "." whose bind went with it) is
			 * judged whenever it changes, not at the first look. */
			if (d->main_fd < 0 && !(d->had_commondir && (mask & GW_FROM_SCAN)) &&
			    !gw_commondir_ok(d))
				gw_danger(w, d, name, moved, "which points git at config and hooks "
					  "of the payload's choosing");
			else if (d->main_fd >= 0 && !(d->had_commondir && (mask & GW_FROM_SCAN)) &&
				 !gw_commondir_ok(d))
				gw_danger(w, d, name, moved, "which points this worktree at a "
					  "repository other than its own, with config and hooks of "
					  "the payload's choosing");
		} else if (!strcmp(name, "config.worktree") && appeared && !d->wtconfig &&
			   !d->had_wtconfig) {
			gw_danger(w, d, name, moved, "a config file git reads (with "
				  "extensions.worktreeConfig) that the payload wrote");
		} else if (!strcmp(name, "worktrees") && appeared && d->main_fd < 0) {
			gw_add_worktrees(w, d);
		}
		break;
	case GW_WORKTREES:
		if (appeared) {
			int fd = gw_open_dir(d->fd, name);
			char *p = xasprintf("%s/%s", d->path, name);
			struct gw_watch *n;

			if (fd >= 0 && (n = gw_add(w, GW_GITDIR, fd, p, d->main_fd, d->wtconfig)))
				gw_scan(w, n);
			free(p);
		}
		break;
	case GW_ROOT:
		if (!strcmp(name, ".git") && appeared) {
			struct stat st;

			if (fstatat(d->fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
				break;
			if (!S_ISDIR(st.st_mode))
				gw_danger(w, d, name, moved, "a .git file or link that makes git "
					  "take a gitdir of the payload's making for this directory's");
			else if (d->in_repo)
				gw_danger(w, d, name, moved, "a repository inside the larger one "
					  "this directory belongs to, with config and hooks of the "
					  "payload's making, which git run here uses instead");
		}
		break;
	}
}

/* Look at what is in d now, as if each name had just appeared (after a new watch or a lost event). */
static void gw_scan(struct gitwatch *w, struct gw_watch *d)
{
	static const char *const names[] = { "commondir", "config.worktree", "worktrees" };
	struct stat st;

	if (d->kind == GW_GITDIR) {
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (fstatat(d->fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
				gw_name(w, d, names[i], IN_CREATE | GW_FROM_SCAN);
	} else if (d->kind == GW_ROOT) {
		if (fstatat(d->fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0)
			gw_name(w, d, ".git", IN_CREATE | GW_FROM_SCAN);
	} else {
		int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dir = fd < 0 ? NULL : fdopendir(fd);
		struct dirent *de;
		char **names_now = NULL;

		if (!dir) {
			if (fd >= 0)
				close(fd);
			return;
		}
		while ((de = readdir(dir)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				strv_push(&names_now, de->d_name);
		closedir(dir);
		for (size_t i = 0; names_now && names_now[i]; i++)
			gw_name(w, d, names_now[i], IN_CREATE | GW_FROM_SCAN);
		strv_free(names_now);
	}
}

/* Read and handle what the queue holds; false when it is empty or gone. */
static bool gw_drain(struct gitwatch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(w->ino, buf, sizeof(buf));

	if (n <= 0)
		return false;
	for (ssize_t off = 0; off < n;) {
		const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
		struct gw_watch *d;

		off += (ssize_t)sizeof(*ev) + ev->len;
		if (ev->mask & IN_Q_OVERFLOW) {
			for (size_t i = 0; i < w->n; i++)
				gw_scan(w, &w->v[i]);
			continue;
		}
		d = gw_find(w, ev->wd);
		if (d && ev->len && ev->name[0])
			gw_name(w, d, ev->name, ev->mask);
	}
	return true;
}

static void *gw_thread(void *arg)
{
	struct gitwatch *w = arg;

	/* What appeared between the watches being added and this thread running. */
	for (size_t i = 0, n = w->n; i < n; i++)
		gw_scan(w, &w->v[i]);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = w->ino, .events = POLLIN },
			{ .fd = w->stop_efd, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			while (gw_drain(w))
				;
		if (p[1].revents & POLLIN)
			break;
	}
	return NULL;
}

struct gitwatch *gitwatch_create(struct git_findings *f, bool exits_after)
{
	struct gitwatch *w = xcalloc(1, sizeof(*w));

	w->f = f;
	w->close_by_child = exits_after;
	w->pidfd = -1;
	pthread_mutex_init(&w->mu, NULL);
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->ino < 0 || w->stop_efd < 0)
		git_findings_add(f, "alert", "gitdir", "the gitdirs cannot be watched during the "
				 "run (%s): a commondir or .git the payload plants is found only after "
				 "it; the host's git may run its commands meanwhile",
				 strerrordesc_np(errno));
	return w;
}

int gitwatch_add_gitdir(struct gitwatch *w, int fd, const char *path, int main_fd, bool wtconfig)
{
	struct gw_watch *d;
	int own;

	if (w->ino < 0)
		return -1;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (own < 0)
		return -1;
	d = gw_add(w, GW_GITDIR, own, path, main_fd, wtconfig);
	if (!d)
		return -1;
	if (main_fd < 0)
		gw_add_worktrees(w, d);
	return 0;
}

int gitwatch_add_root(struct gitwatch *w, const char *path, bool in_repo)
{
	struct gw_watch *d;
	int fd;

	if (w->ino < 0)
		return -1;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = gw_add(w, GW_ROOT, fd, path, -1, false);
	if (!d)
		return -1;
	d->in_repo = in_repo;
	return 0;
}

int gitwatch_start(struct gitwatch *w)
{
	if (w->ino < 0 || w->stop_efd < 0 || w->n == 0)
		return -1;
	w->live = true;
	if (git_thread_start(&w->thr, gw_thread, w) != 0)
		return -1;
	w->started = true;
	return 0;
}

void gitwatch_arm(struct gitwatch *w, int pidfd)
{
	if (!w || pidfd < 0)
		return;
	pthread_mutex_lock(&w->mu);
	if (w->pidfd < 0)
		w->pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
	if (w->pending && !w->killed && w->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
		w->killed = true;
		w->kill_ns = gw_now_ns();
	}
	pthread_mutex_unlock(&w->mu);
}

bool gitwatch_stop(struct gitwatch *w)
{
	uint64_t one = 1;
	bool killed;

	if (!w)
		return false;
	if (w->started) {
		if (write(w->stop_efd, &one, sizeof(one)) < 0) {
			/* an eventfd write cannot fail here: the counter is far from full */
		}
		pthread_join(w->thr, NULL);
		/* The last events, queued while the sandbox died. */
		while (gw_drain(w))
			;
	}
	killed = w->killed || w->pending;
	for (size_t i = 0; i < w->n; i++) {
		close(w->v[i].fd);
		if (w->v[i].main_fd >= 0)
			close(w->v[i].main_fd);
		free(w->v[i].path);
	}
	free(w->v);
	if (w->ino >= 0)
		close_later(w->ino, w->close_by_child);
	if (w->stop_efd >= 0)
		close(w->stop_efd);
	if (w->pidfd >= 0)
		close(w->pidfd);
	pthread_mutex_destroy(&w->mu);
	free(w);
	return killed;
}
