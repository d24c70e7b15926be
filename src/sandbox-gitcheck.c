/*
 * sandbox-gitcheck.c — after-the-run checks of the repositories a run
 * could write (see sandbox-gitcheck.h for why).
 *
 * Every gitdir is held open (O_PATH) from before the run, so the check
 * after it looks at the very directories that were protected, whatever
 * the payload renamed or linked meanwhile; the renames are relative to
 * those descriptors and never follow a symlink.
 *
 * The mount stage protects repositories at a writable root and one level
 * below. A repository the payload plants deeper (a/x/.git with
 * core.fsmonitor) and points a gitlink at (git update-index --cacheinfo
 * 160000,…,a/x) is entered by the host's next `git status` in the
 * protected repository above it. So every writable root is walked before
 * and after the run (bounded in depth and directories), and a ".git" that
 * appeared below the root is renamed to .git.boxy-quarantine-PID.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-gitcheck.h"
#include "util.h"

#define GITCHECK_MAX 256
#define GITSCAN_MAX_DEPTH 8        /* directory levels below a writable root */
#define GITSCAN_MAX_DIRS  20000    /* directories read per root, per walk */

struct gitdir_entry {
	int fd;                 /* O_PATH|O_DIRECTORY */
	char *path;
	bool had_commondir;
};

struct gitcheck {
	struct gitdir_entry *dirs;
	size_t ndirs;
	char **roots;           /* writable mount roots, for new-repository reports */
	char **had_git;         /* every .git the bounded walk found before the run, sorted */
	bool bounded;           /* the walk before the run hit a bound */
	struct timespec start;  /* when gitcheck_begin ran */
};

#define GITSCAN_BUF (32u << 10)

/* One bounded walk of a writable root. */
struct git_walk {
	char ***found;          /* paths of ".git" entries */
	size_t ndirs;           /* directories read so far */
	bool bounded;           /* a directory was left unread */
	char *buf[GITSCAN_MAX_DEPTH + 1];  /* getdents64 buffer, one per level */
};

static bool exists_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void add_gitdir(struct gitcheck *gc, const char *path)
{
	int fd;
	struct gitdir_entry *e;

	if (gc->ndirs >= GITCHECK_MAX)
		return;
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* A gitdir has HEAD; anything else named .git is not ours to touch. */
	if (!exists_at(fd, "HEAD")) {
		close(fd);
		return;
	}
	e = xappend(&gc->dirs, &gc->ndirs, sizeof(*gc->dirs));
	e->fd = fd;
	e->path = xstrdup(path);
	e->had_commondir = exists_at(fd, "commondir");
}

/* Submodule gitdirs live under modules/, nested to any depth (bounded). */
static void add_modules(struct gitcheck *gc, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;

	if (depth > 4 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char *sub;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		sub = xasprintf("%s/%s", dir, de->d_name);
		add_gitdir(gc, sub);
		{
			char *mods = xasprintf("%s/modules", sub);

			add_modules(gc, mods, depth + 1);
			free(mods);
		}
		add_modules(gc, sub, depth + 1);    /* names with slashes nest directories */
		free(sub);
	}
	closedir(d);
}

static void add_repo(struct gitcheck *gc, const char *dotgit)
{
	struct stat st;
	char *sub;

	if (lstat(dotgit, &st) < 0)
		return;
	strv_push(&gc->had_git, dotgit);
	if (!S_ISDIR(st.st_mode))
		return;     /* .git files point at gitdirs found through modules/ or worktrees/ */
	add_gitdir(gc, dotgit);
	sub = xasprintf("%s/modules", dotgit);
	add_modules(gc, sub, 0);
	free(sub);
	sub = xasprintf("%s/worktrees", dotgit);
	add_modules(gc, sub, 3);    /* one level: worktrees/NAME */
	free(sub);
}

/*
 * Record every ".git" (directory, file or symlink) below the directory dfd
 * names (path), to GITSCAN_MAX_DEPTH levels and GITSCAN_MAX_DIRS
 * directories. Neither a .git directory nor a symlink is entered, and
 * nothing else is skipped: node_modules can hide a repository as well as
 * any other directory. getdents64 straight into a buffer per level: this
 * runs twice on every run, and opendir's fstat and fcntl calls were 40% of
 * its system calls. Takes dfd.
 */
static void walk_dir(struct git_walk *w, int dfd, const char *path, int depth)
{
	char *buf = w->buf[depth];
	ssize_t n;

	w->ndirs++;
	while ((n = getdents64(dfd, buf, GITSCAN_BUF)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			const char *name = de->d_name;
			unsigned char type = de->d_type;
			char *sub;
			int fd;

			off += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (!strcmp(name, ".git")) {
				strv_push(w->found, (sub = xasprintf("%s/.git", path)));
				free(sub);
				continue;
			}
			if (type == DT_UNKNOWN) {
				struct stat st;

				if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue;
				type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
			}
			if (type != DT_DIR)
				continue;
			if (depth + 1 > GITSCAN_MAX_DEPTH || w->ndirs >= GITSCAN_MAX_DIRS) {
				w->bounded = true;
				continue;
			}
			fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				continue;
			sub = xasprintf("%s/%s", path, name);
			walk_dir(w, fd, sub, depth + 1);
			free(sub);
		}
	}
	close(dfd);
}

/* Walk one writable root; *bounded is set when a bound was hit. */
static void walk_root(const char *root, char ***found, bool *bounded)
{
	struct git_walk w = { .found = found };
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(w.buf); i++)
		w.buf[i] = xmalloc(GITSCAN_BUF);
	walk_dir(&w, fd, strcmp(root, "/") ? root : "", 0);
	for (size_t i = 0; i < ARRAY_SIZE(w.buf); i++)
		free(w.buf[i]);
	if (w.bounded)
		*bounded = true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_root(struct gitcheck *gc, const char *root)
{
	DIR *d;
	struct dirent *de;
	char *p = xasprintf("%s/.git", root);

	strv_push(&gc->roots, root);
	add_repo(gc, p);
	free(p);
	if (!(d = opendir(root)))
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (de->d_type != DT_DIR)
			continue;
		p = xasprintf("%s/%s/.git", root, de->d_name);
		add_repo(gc, p);
		free(p);
	}
	closedir(d);
	/* Every .git below, for the comparison after the run. */
	walk_root(root, &gc->had_git, &gc->bounded);
}

struct gitcheck *gitcheck_begin(const struct plan *plan)
{
	struct gitcheck *gc;

	if (plan->allow_git_write)
		return NULL;
	gc = xcalloc(1, sizeof(*gc));
	scan_root(gc, plan->workdir);
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].kind == MOUNT_RW || plan->mounts[i].kind == MOUNT_MKDIR)
			scan_root(gc, plan->mounts[i].src);
	if (gc->had_git)
		qsort(gc->had_git, strv_len(gc->had_git), sizeof(char *), cmp_str);
	clock_gettime(CLOCK_REALTIME, &gc->start);
	return gc;
}

/* Whether s is in the sorted list v. */
static bool had(char **v, const char *s)
{
	return v && bsearch(&s, v, strv_len(v), sizeof(char *), cmp_str);
}

/*
 * Whether path, absent from the walk before the run, was made during it.
 * When that walk was complete, absence says so. When it hit a bound, the
 * walk after may reach directories the first did not, so a repository of
 * the user's would look new: only an entry born during the run (statx
 * birth time) counts; without a birth time, none does.
 */
static bool born_in_run(const struct gitcheck *gc, const char *path)
{
	struct statx stx;

	if (!gc->bounded)
		return true;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) < 0 ||
	    !(stx.stx_mask & STATX_BTIME))
		return false;
	return stx.stx_btime.tv_sec > gc->start.tv_sec ||
	       (stx.stx_btime.tv_sec == gc->start.tv_sec &&
		stx.stx_btime.tv_nsec >= (uint32_t)gc->start.tv_nsec);
}

/* Rename a planted path/.git to .git.boxy-quarantine-PID beside it. */
static void quarantine(const char *dotgit, const struct event_sink *ev)
{
	char *dir = xstrdup(dotgit), *slash = strrchr(dir, '/'), name[64], *words;
	int dfd;

	*slash = '\0';
	snprintf(name, sizeof(name), ".git.boxy-quarantine-%d", (int)getpid());
	dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && renameat(dfd, ".git", dfd, name) == 0) {
		words = xasprintf("the run planted %s, a repository whose config and hooks were "
				  "its own and that a gitlink can make git enter: renamed to %s",
				  dotgit, name);
		event_audit(ev, "git", "deny", dotgit, words);
	} else {
		words = xasprintf("the run planted %s and it could not be renamed (%s): read its "
				  "config and hooks before running git above it", dotgit,
				  strerror(errno));
		event_audit(ev, "git", "warn", dotgit, words);
	}
	if (dfd >= 0)
		close(dfd);
	free(words);
	free(dir);
}

/* A repository at root or one level below that was not there before the run. */
static void report_new(struct gitcheck *gc, const char *dotgit, const struct event_sink *ev)
{
	struct stat st;
	char *words;

	if (had(gc->had_git, dotgit) || lstat(dotgit, &st) < 0)
		return;
	words = xasprintf("the run created %s; its hooks and config were writable inside the "
			  "sandbox: read .git/config and .git/hooks before running git there", dotgit);
	event_audit(ev, "git", "warn", dotgit, words);
	free(words);
}

/*
 * Whether dotgit lies in the work tree of a repository that was there
 * before the run: only such a repository can be made to enter it (a
 * gitlink in its index), so only there is a new one quarantined. A
 * repository the run cloned or created elsewhere is the payload's work
 * and is reported instead.
 */
static bool inside_old_repo(const struct gitcheck *gc, const char *dotgit)
{
	char *parent = xstrdup(dotgit), *slash = strrchr(parent, '/');
	bool inside = false;

	if (slash)
		*slash = '\0';
	for (size_t i = 0; gc->had_git && gc->had_git[i] && !inside; i++) {
		char *top = xstrdup(gc->had_git[i]), *s = strrchr(top, '/');

		if (s) {
			*s = '\0';
			inside = path_has_prefix(parent, top) && strcmp(parent, top) != 0;
		}
		free(top);
	}
	free(parent);
	return inside;
}

void gitcheck_end(struct gitcheck *gc, const struct event_sink *events)
{
	if (!gc)
		return;
	for (size_t i = 0; i < gc->ndirs; i++) {
		struct gitdir_entry *e = &gc->dirs[i];
		char *subject, *target;

		if (e->had_commondir || !exists_at(e->fd, "commondir"))
			continue;
		/* O_PATH descriptors cannot be used with renameat: reopen the directory. */
		{
			int dfd = openat(e->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			char name[64];

			if (dfd < 0)
				continue;
			snprintf(name, sizeof(name), "commondir.boxy-quarantine-%d", (int)getpid());
			subject = xasprintf("%s/commondir", e->path);
			if (renameat(dfd, "commondir", dfd, name) == 0) {
				target = xasprintf("the run planted %s, which would point git at "
						   "config and hooks of its choosing: renamed to %s",
						   subject, name);
				event_audit(events, "git", "deny", subject, target);
				free(target);
			} else {
				target = xasprintf("the run planted %s and it could not be renamed "
						   "(%s): remove it before running git there",
						   subject, strerror(errno));
				event_audit(events, "git", "warn", subject, target);
				free(target);
			}
			free(subject);
			close(dfd);
		}
	}
	for (size_t r = 0; gc->roots && gc->roots[r]; r++) {
		char **now = NULL, *top = xasprintf("%s/.git", gc->roots[r]);
		bool bounded = false;

		/* At the root there is no repository above to reach it: reported. */
		report_new(gc, top, events);
		walk_root(gc->roots[r], &now, &bounded);
		for (size_t i = 0; now && now[i]; i++) {
			if (!strcmp(now[i], top) || had(gc->had_git, now[i]) ||
			    !born_in_run(gc, now[i]))
				continue;
			if (inside_old_repo(gc, now[i]))
				quarantine(now[i], events);
			else
				report_new(gc, now[i], events);
		}
		if (bounded || gc->bounded) {
			char *words = xasprintf("the search for repositories planted under %s "
						"stopped at %d levels or %d directories: one "
						"deeper was not looked for", gc->roots[r],
						GITSCAN_MAX_DEPTH, GITSCAN_MAX_DIRS);

			event_audit(events, "git", "warn", gc->roots[r], words);
			free(words);
		}
		strv_free(now);
		free(top);
	}
}

void gitcheck_free(struct gitcheck *gc)
{
	if (!gc)
		return;
	for (size_t i = 0; i < gc->ndirs; i++) {
		close(gc->dirs[i].fd);
		free(gc->dirs[i].path);
	}
	free(gc->dirs);
	strv_free(gc->roots);
	strv_free(gc->had_git);
	free(gc);
}
