/*
 * sandbox/gitcheck.c — the host-side half of the git protection (see
 * sandbox/gitcheck.h): what a read-only bind cannot cover, watched during
 * the run (sandbox/gitwatch.c) and checked after it, off the daemon's loop.
 *
 * Before the run, every gitdir below a writable root is held open (O_PATH)
 * and what it had is noted (commondir, config.worktree, the alternates),
 * and each root is walked once for every ".git" already in it, for a while
 * at most (GITSCAN_BEFORE_MS: this runs on the loop). After the run, in a
 * thread (inline when every root is walked in GITSCAN_SMALL_MS: a thread
 * costs more than that), the same gitdirs are looked at again through those
 * descriptors, and each root is walked to any depth, never following a
 * symlink (a `.git/modules -> /` is not entered: no .git is), for
 * GITSCAN_AFTER_MS at most (inline, GITSCAN_BEFORE_MS); a walk that could
 * not finish says so, naming what it left. A
 * ".git" that appeared below a root where a repository was (where a
 * gitlink can make the host's git enter it) is renamed to
 * .git.boxy-quarantine-TIME-RANDOM; so is one at the root when the root
 * lies inside a larger repository. A directory the payload made
 * unsearchable or unwritable is given the owner's rights back first: the
 * files are the user's. Each finding is an "alert" event, which `boxy run`
 * prints at the end in red and `boxy show` lists.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/gitwatch.h"
#include "sandbox/gitcheck.h"
#include "init/mount.h"
#include "common/util.h"

#define GITCHECK_MAX      1024     /* gitdirs held open (the mount stage protects as many) */
#define GITSCAN_BEFORE_MS 100      /* the walk before the run, on the daemon's loop */
#define GITSCAN_AFTER_MS  10000    /* the walk after it, in a thread */
#define GITSCAN_SMALL_MS  2        /* a tree walked in this long is checked inline */
#define GITSCAN_BUF       (64u << 10)
#define GITSCAN_NAME_LEFT 5        /* unwalked directories named in the finding */
#define GIT_SMALL_MAX     4096     /* commondir, alternates: what is compared */

struct gitdir_entry {
	int fd;                 /* O_PATH|O_DIRECTORY */
	char *path;
	int main;               /* a linked worktree's main gitdir (index in dirs), else -1 */
	bool had_commondir, had_wtconfig, wtconfig;
	char *commondir;        /* its content before the run, or NULL */
	char *alternates;       /* objects/info/alternates before the run, or NULL */
};

struct git_root {
	char *path;
	bool had_dotgit;
	bool in_repo;           /* an ancestor directory has a .git */
};

struct gitcheck {
	struct gitdir_entry *dirs;
	size_t ndirs;
	struct git_root *roots;
	size_t nroots;
	char **had_git;         /* every .git the walk before the run found, sorted */
	bool before_unfinished; /* that walk stopped short */
	struct timespec start;  /* when gitcheck_begin ran */
	struct git_findings findings;
	struct gitwatch *watch;
	pthread_t thr;          /* the after-run check */
	bool thr_started, done;
	uint64_t after_ms;      /* each root's walk after the run, at most */
	int done_efd;
};

/* One walk of a writable root. */
struct git_walk {
	int rootfd;
	const char *root;       /* for the paths it records */
	uint64_t deadline;      /* now_mono_ms() */
	char **found;           /* absolute paths of ".git" entries */
	char **todo;            /* relative directories still to read (a stack) */
	char **left;            /* directories that could not be read */
	bool unfinished;
	char *buf;
};

static bool exists_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A small file below dfd (no link followed), trimmed of line ends, or NULL. */
static char *read_small_at(int dfd, const char *name)
{
	char buf[GIT_SMALL_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return xstrdup("(not a regular file)");
	}
	n = read(fd, buf, GIT_SMALL_MAX);
	close(fd);
	if (n < 0)
		n = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return xstrdup(buf);
}

/* Open rel beneath rootfd without following any symlink. */
static int open_beneath(int rootfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, rootfd, *rel ? rel : ".", &how, sizeof(how));
}

/* ---- before the run --------------------------------------------------------- */

/* Hold the gitdir at path (a directory with HEAD); returns its index, or -1. */
static int add_gitdir(struct gitcheck *gc, const char *path, int main)
{
	struct gitdir_entry *e;
	struct stat st;
	int fd;

	if (gc->ndirs >= GITCHECK_MAX)
		return -1;
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* A gitdir has HEAD; anything else named .git is not ours to touch. */
	if (!exists_at(fd, "HEAD")) {
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < gc->ndirs; i++) {
		struct stat o;

		if (fstat(fd, &st) == 0 && fstat(gc->dirs[i].fd, &o) == 0 &&
		    st.st_dev == o.st_dev && st.st_ino == o.st_ino) {
			close(fd);
			return -1;
		}
	}
	e = xappend(&gc->dirs, &gc->ndirs, sizeof(*gc->dirs));
	e->fd = fd;
	e->path = xstrdup(path);
	e->main = main;
	e->had_commondir = exists_at(fd, "commondir");
	e->had_wtconfig = exists_at(fd, "config.worktree");
	e->commondir = read_small_at(fd, "commondir");
	e->alternates = read_small_at(fd, "objects/info/alternates");
	if (main >= 0) {
		e->wtconfig = gc->dirs[main].wtconfig;
	} else {
		char *text = read_small_at(fd, "config"), *v;

		/* Only the start of a large config is read: the key git acts on
		 * is in [extensions], which git writes near the top. */
		v = text ? mount_git_config_value(text, "extensions", "worktreeConfig") : NULL;
		e->wtconfig = mount_git_bool_true(v);
		free(v);
		free(text);
	}
	return (int)(e - gc->dirs);
}

/*
 * The directories below dir that hold a gitdir: submodules under modules/
 * (names may nest directories, modules within modules), linked worktrees
 * under worktrees/. Opened without following links, to a bounded depth.
 */
static void add_below(struct gitcheck *gc, const char *dir, int main, int depth)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	char **subs = NULL;

	if (depth > 4 || fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && de->d_type == DT_DIR)
			strv_push(&subs, de->d_name);
	closedir(d);
	for (size_t i = 0; subs && subs[i]; i++) {
		char *sub = xasprintf("%s/%s", dir, subs[i]), *mods;
		int idx = add_gitdir(gc, sub, main);

		if (main < 0) {
			mods = xasprintf("%s/modules", sub);
			add_below(gc, mods, -1, depth + 1);
			free(mods);
			add_below(gc, sub, -1, depth + 1);  /* names with slashes nest directories */
		}
		(void)idx;
		free(sub);
	}
	strv_free(subs);
}

/* A repository at dotgit: its gitdir, submodules and worktrees. */
static void add_repo(struct gitcheck *gc, const char *dotgit)
{
	struct stat st;
	char *sub;
	int idx;

	if (lstat(dotgit, &st) < 0)
		return;
	if (S_ISREG(st.st_mode)) {
		/* "gitdir: PATH" (--separate-git-dir, a worktree): the mount stage
		 * protected PATH, and may have left a commondir placeholder there. */
		char *dir = xstrdup(dotgit), *slash = strrchr(dir, '/'), *text, *p;
		int dfd;

		*slash = '\0';
		dfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		text = dfd < 0 ? NULL : read_small_at(dfd, ".git");
		if (text && !strncmp(text, "gitdir:", 7)) {
			p = path_absolute(text + 7 + strspn(text + 7, " \t"), *dir ? dir : "/");
			if (p)
				add_gitdir(gc, p, -1);
			free(p);
		}
		free(text);
		if (dfd >= 0)
			close(dfd);
		free(dir);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	idx = add_gitdir(gc, dotgit, -1);
	if (idx < 0)
		return;
	sub = xasprintf("%s/modules", dotgit);
	add_below(gc, sub, -1, 0);
	free(sub);
	sub = xasprintf("%s/worktrees", dotgit);
	add_below(gc, sub, idx, 4);     /* one level: worktrees/NAME */
	free(sub);
}

/* Whether a directory above path has a .git: path lies in a larger repository. */
static bool inside_larger_repo(const char *path)
{
	char *p = xstrdup(path), *slash;
	bool in = false;

	while (!in && (slash = strrchr(p, '/'))) {
		char *dotgit;

		*slash = '\0';
		dotgit = xasprintf("%s/.git", p);
		in = access(dotgit, F_OK) == 0;
		free(dotgit);
	}
	free(p);
	return in;
}

/*
 * Walk one root: every ".git" below it (any depth; neither a .git nor a
 * symlink is entered), until the deadline. A directory that cannot be
 * searched is given u+rx back when it is the user's (the payload's chmod
 * 000 must not hide a repository), else named in w->left.
 */
static void walk_root(struct git_walk *w)
{
	strv_push(&w->todo, "");
	while (w->todo && w->todo[0]) {
		size_t n = strv_len(w->todo);
		char *rel = w->todo[n - 1];
		ssize_t got;
		int fd;

		if (now_mono_ms() >= w->deadline) {
			w->unfinished = true;
			return;
		}
		w->todo[n - 1] = NULL;
		fd = open_beneath(w->rootfd, rel, O_RDONLY | O_DIRECTORY);
		if (fd < 0 && errno == EACCES) {
			int pfd = open_beneath(w->rootfd, rel, O_PATH | O_DIRECTORY);
			struct stat st;
			char proc[64];

			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
			if (pfd >= 0 && fstat(pfd, &st) == 0 && st.st_uid == geteuid() &&
			    chmod(proc, (st.st_mode & 07777) | S_IRUSR | S_IXUSR) == 0)
				fd = open_beneath(w->rootfd, rel, O_RDONLY | O_DIRECTORY);
			if (pfd >= 0)
				close(pfd);
			errno = EACCES;
		}
		if (fd < 0) {
			if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
				strv_push(&w->left, *rel ? rel : ".");
			free(rel);
			continue;
		}
		while ((got = syscall(SYS_getdents64, fd, w->buf, GITSCAN_BUF)) > 0) {
			/* One directory can hold millions of entries: the clock counts inside it too. */
			if (now_mono_ms() >= w->deadline) {
				strv_push(&w->todo, rel);
				w->unfinished = true;
				close(fd);
				free(rel);
				return;
			}
			for (ssize_t off = 0; off < got;) {
				struct dirent64 *de = (struct dirent64 *)(w->buf + off);
				const char *name = de->d_name;
				unsigned char type = de->d_type;
				char *sub;

				off += de->d_reclen;
				if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
					continue;
				if (!strcmp(name, ".git")) {
					sub = *rel ? xasprintf("%s/%s/.git", w->root, rel)
						   : xasprintf("%s/.git", w->root);
					strv_push(&w->found, sub);
					free(sub);
					continue;
				}
				if (type == DT_UNKNOWN) {
					struct stat st;

					if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
						continue;
					type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
				}
				if (type != DT_DIR)
					continue;
				sub = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
				strv_push(&w->todo, sub);
				free(sub);
			}
		}
		close(fd);
		free(rel);
	}
}

/* Run one walk of root for up to ms; the caller frees the lists. */
static void walk_run(struct git_walk *w, const char *root, uint64_t ms)
{
	memset(w, 0, sizeof(*w));
	w->root = strcmp(root, "/") ? root : "";
	w->deadline = now_mono_ms() + ms;
	w->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->rootfd < 0)
		return;
	w->buf = xmalloc(GITSCAN_BUF);
	walk_root(w);
	free(w->buf);
	close(w->rootfd);
}

static void walk_free(struct git_walk *w)
{
	strv_free(w->found);
	strv_free(w->todo);
	strv_free(w->left);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_root(struct gitcheck *gc, const char *root)
{
	struct git_root *r;
	struct git_walk w;
	DIR *d;
	struct dirent *de;
	char *p = xasprintf("%s/.git", strcmp(root, "/") ? root : "");
	struct stat st;

	for (size_t i = 0; i < gc->nroots; i++)
		if (!strcmp(gc->roots[i].path, root)) {
			free(p);
			return;
		}
	r = xappend(&gc->roots, &gc->nroots, sizeof(*gc->roots));
	r->path = xstrdup(root);
	r->had_dotgit = lstat(p, &st) == 0;
	r->in_repo = inside_larger_repo(root);
	add_repo(gc, p);
	free(p);
	if ((d = opendir(root))) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
				continue;
			if (de->d_type != DT_DIR)
				continue;
			p = xasprintf("%s/%s/.git", strcmp(root, "/") ? root : "", de->d_name);
			add_repo(gc, p);
			free(p);
		}
		closedir(d);
	}
	/* Every .git below, for the comparison after the run. */
	walk_run(&w, root, GITSCAN_BEFORE_MS);
	for (size_t i = 0; w.found && w.found[i]; i++)
		strv_push(&gc->had_git, w.found[i]);
	if (w.unfinished || w.left)
		gc->before_unfinished = true;
	walk_free(&w);
}

struct gitcheck *gitcheck_begin(const struct plan *plan, bool exits_after)
{
	struct gitcheck *gc;

	if (plan->allow_git_write)
		return NULL;
	gc = xcalloc(1, sizeof(*gc));
	gc->done_efd = -1;
	gc->after_ms = GITSCAN_AFTER_MS;
	git_findings_init(&gc->findings);
	scan_root(gc, plan->workdir);
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].kind == MOUNT_RW || plan->mounts[i].kind == MOUNT_MKDIR)
			scan_root(gc, plan->mounts[i].src);
	if (gc->had_git)
		qsort(gc->had_git, strv_len(gc->had_git), sizeof(char *), cmp_str);
	/* The watch during the run: every gitdir held, every root without a .git. */
	gc->watch = gitwatch_create(&gc->findings, exits_after);
	for (size_t i = 0; i < gc->ndirs; i++) {
		const struct gitdir_entry *e = &gc->dirs[i];

		gitwatch_add_gitdir(gc->watch, e->fd, e->path,
				    e->main >= 0 ? gc->dirs[e->main].fd : -1, e->wtconfig);
	}
	for (size_t i = 0; i < gc->nroots; i++)
		if (!gc->roots[i].had_dotgit)
			gitwatch_add_root(gc->watch, gc->roots[i].path, gc->roots[i].in_repo);
	clock_gettime(CLOCK_REALTIME, &gc->start);
	return gc;
}

void gitcheck_watch(struct gitcheck *gc)
{
	if (gc)
		gitwatch_start(gc->watch);
}

void gitcheck_arm(struct gitcheck *gc, int pidfd)
{
	if (gc)
		gitwatch_arm(gc->watch, pidfd);
}

/* ---- after the run ------------------------------------------------------------ */

/* Whether s is in the sorted list v. */
static bool had(char **v, const char *s)
{
	return v && bsearch(&s, v, strv_len(v), sizeof(char *), cmp_str);
}

/*
 * Whether path, absent from the walk before the run, was made during it:
 * 1 yes, 0 no, -1 cannot tell. When that walk was complete, absence says
 * so. When it stopped short, the walk after reaches directories the first
 * did not, so a repository of the user's would look new: the birth time
 * (statx) decides, and without one nothing does.
 */
static int born_in_run(const struct gitcheck *gc, const char *path)
{
	struct statx stx;

	if (!gc->before_unfinished)
		return 1;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) < 0 ||
	    !(stx.stx_mask & STATX_BTIME))
		return -1;
	return stx.stx_btime.tv_sec > gc->start.tv_sec ||
	       (stx.stx_btime.tv_sec == gc->start.tv_sec &&
		stx.stx_btime.tv_nsec >= (uint32_t)gc->start.tv_nsec);
}

/* Rename dir/name out of git's way (dirfd O_PATH) and record it: why says what it was. */
static void quarantine_at(struct gitcheck *gc, int dfd, const char *subject, const char *name,
			  const char *why)
{
	char *to = NULL;

	if (dfd >= 0 && git_quarantine(dfd, name, &to) == 0)
		git_findings_add(&gc->findings, "alert", subject, "the run planted %s, %s: renamed "
				 "to %s; read its config and hooks before you rename it back",
				 subject, why, to);
	else
		git_findings_add(&gc->findings, "alert", subject, "the run planted %s, %s, and it "
				 "could not be renamed (%s): read its config and hooks, or remove "
				 "it, before running git anywhere above it", subject, why,
				 strerrordesc_np(errno));
	free(to);
}

/* Rename the planted .git at path (below root, an absolute path) out of git's way. */
static void quarantine_dotgit(struct gitcheck *gc, const struct git_root *r, const char *dotgit,
			      const char *why)
{
	size_t rl = strlen(strcmp(r->path, "/") ? r->path : "");
	char *parent = xstrndup(dotgit, strlen(dotgit) - strlen("/.git"));
	const char *rel = parent + rl + (parent[rl] == '/');
	int rootfd = open(r->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int pfd = rootfd < 0 ? -1 : open_beneath(rootfd, rel, O_PATH | O_DIRECTORY);

	quarantine_at(gc, pfd, dotgit, ".git", why);
	if (pfd >= 0)
		close(pfd);
	if (rootfd >= 0)
		close(rootfd);
	free(parent);
}

/*
 * Whether dotgit lies in the work tree of a repository that was there
 * before the run: only such a repository can be made to enter it (a
 * gitlink in its index), so there a new one is quarantined.
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

/* The gitdirs held before the run: what appeared in them. */
static void check_gitdirs(struct gitcheck *gc)
{
	for (size_t i = 0; i < gc->ndirs; i++) {
		struct gitdir_entry *e = &gc->dirs[i];
		char *now = e->main < 0 ? read_small_at(e->fd, "commondir") : NULL, *subject;

		if (now && (!e->commondir || strcmp(now, e->commondir))) {
			/* "." is the mount stage's placeholder, read-only inside: removed. One
			 * that was there (another run's) and changed is the payload's. */
			if (e->commondir || strcmp(now, ".") != 0 ||
			    unlinkat(e->fd, "commondir", 0) < 0) {
				subject = xasprintf("%s/commondir", e->path);
				quarantine_at(gc, e->fd, subject, "commondir", "which points git "
					      "at config and hooks of its choosing");
				free(subject);
			}
		}
		free(now);
		if (e->main >= 0 && (now = read_small_at(e->fd, "commondir"))) {
			if (!e->commondir || strcmp(now, e->commondir)) {
				subject = xasprintf("%s/commondir", e->path);
				quarantine_at(gc, e->fd, subject, "commondir", "which points this "
					      "worktree at another repository");
				free(subject);
			}
			free(now);
		}
		if (!e->wtconfig && !e->had_wtconfig && exists_at(e->fd, "config.worktree")) {
			subject = xasprintf("%s/config.worktree", e->path);
			quarantine_at(gc, e->fd, subject, "config.worktree", "a config file git "
				      "reads with extensions.worktreeConfig");
			free(subject);
		}
		now = read_small_at(e->fd, "objects/info/alternates");
		if (now && (!e->alternates || strcmp(now, e->alternates))) {
			int ofd = openat(e->fd, "objects/info", O_PATH | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);

			subject = xasprintf("%s/objects/info/alternates", e->path);
			if (!e->alternates)
				quarantine_at(gc, ofd, subject, "alternates", "which makes git read "
					      "objects from directories of its choosing");
			else
				git_findings_add(&gc->findings, "alert", subject, "the run changed "
						 "%s, which makes git read objects from the "
						 "directories it names: read it", subject);
			if (ofd >= 0)
				close(ofd);
			free(subject);
		}
		free(now);
	}
}

/* Linked worktrees the run added (worktrees/NAME not held before): their commondir. */
static void check_new_worktrees(struct gitcheck *gc)
{
	size_t n = gc->ndirs;

	for (size_t i = 0; i < n; i++) {
		int fd = gc->dirs[i].main < 0 ? openat(gc->dirs[i].fd, "worktrees", O_RDONLY |
						     O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		DIR *d = fd < 0 ? NULL : fdopendir(fd);
		struct dirent *de;

		if (!d) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((de = readdir(d))) {
			int wfd, tfd;
			struct stat a, b;
			char *cd, *subject;
			bool ok;

			if (de->d_name[0] == '.')
				continue;
			wfd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
				     O_CLOEXEC);
			if (wfd < 0)
				continue;
			ok = true;
			for (size_t j = 0; j < n && ok; j++)
				if (fstat(wfd, &a) == 0 && fstat(gc->dirs[j].fd, &b) == 0 &&
				    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
					ok = false;     /* held before: checked above */
			cd = ok ? read_small_at(wfd, "commondir") : NULL;
			if (cd && *cd) {
				tfd = openat(wfd, cd, O_PATH | O_DIRECTORY | O_CLOEXEC);
				ok = tfd >= 0 && fstat(tfd, &a) == 0 &&
				     fstat(gc->dirs[i].fd, &b) == 0 && a.st_dev == b.st_dev &&
				     a.st_ino == b.st_ino;
				if (tfd >= 0)
					close(tfd);
				if (!ok) {
					subject = xasprintf("%s/worktrees/%s/commondir",
							    gc->dirs[i].path, de->d_name);
					quarantine_at(gc, wfd, subject, "commondir", "which points "
						      "a linked worktree at another repository");
					free(subject);
				}
			}
			free(cd);
			close(wfd);
		}
		closedir(d);
	}
}

/* One root after the run: its own .git, every new one below, and what was not walked. */
static void check_root(struct gitcheck *gc, const struct git_root *r)
{
	struct git_walk w;
	char *top = xasprintf("%s/.git", strcmp(r->path, "/") ? r->path : "");
	struct stat st;
	bool old_repo_here = r->had_dotgit || r->in_repo;

	if (!r->had_dotgit && lstat(top, &st) == 0) {
		if (r->in_repo)
			quarantine_dotgit(gc, r, top, "a repository inside the larger one this "
					  "directory belongs to, which git run here would use instead");
		else
			git_findings_add(&gc->findings, "alert", top, "the run created %s; its "
					 "hooks and config were the payload's to write: read "
					 ".git/config and .git/hooks before running git there", top);
	}
	walk_run(&w, r->path, gc->after_ms);
	for (size_t i = 0; w.found && w.found[i]; i++) {
		const char *p = w.found[i];
		int born;

		if (!strcmp(p, top) || had(gc->had_git, p))
			continue;
		born = born_in_run(gc, p);
		if (born == 0)
			continue;
		if (born < 0)
			git_findings_add(&gc->findings, "alert", p, "%s was not seen before the run "
					 "(that search stopped short) and this filesystem keeps no birth "
					 "time: it may have been planted; read its config and hooks "
					 "before running git above it", p);
		else if (old_repo_here || inside_old_repo(gc, p))
			quarantine_dotgit(gc, r, p, "a repository whose config and hooks were its "
					  "own and that a gitlink can make git enter");
		else
			git_findings_add(&gc->findings, "alert", p, "the run created %s; its hooks "
					 "and config were the payload's to write: read them before "
					 "running git there", p);
	}
	if (w.unfinished || w.left) {
		char *names = xstrdup("");
		size_t nleft = strv_len(w.left) + strv_len(w.todo);

		for (size_t i = 0, k = 0; k < GITSCAN_NAME_LEFT; i++) {
			const char *s = w.left && i < strv_len(w.left) ? w.left[i] :
					w.todo && i - strv_len(w.left) < strv_len(w.todo) ?
					w.todo[i - strv_len(w.left)] : NULL;
			char *t;

			if (!s)
				break;
			t = xasprintf("%s%s%s/%s", names, k ? ", " : "", r->path, s);
			free(names);
			names = t;
			k++;
		}
		git_findings_add(&gc->findings, "alert", r->path, "the search for repositories "
				 "planted under %s could not finish (%s): %zu directories were not "
				 "searched, among them %s; treat them as suspect: a .git there may "
				 "carry the payload's config and hooks", r->path,
				 w.unfinished ? "it ran out of time" : "some could not be read",
				 nleft, names);
		free(names);
	}
	walk_free(&w);
	free(top);
}

/* Everything after the run; runs in the check's thread (or inline). */
static void *gitcheck_after(void *arg)
{
	struct gitcheck *gc = arg;
	uint64_t one = 1;

	/* The sandbox is dead: the watcher's last events first, then the checks. */
	gitwatch_stop(gc->watch);
	gc->watch = NULL;
	check_gitdirs(gc);
	check_new_worktrees(gc);
	for (size_t i = 0; i < gc->nroots; i++)
		check_root(gc, &gc->roots[i]);
	if (gc->done_efd >= 0 && write(gc->done_efd, &one, sizeof(one)) < 0) {
		/* an eventfd write cannot fail here */
	}
	return NULL;
}

/*
 * Whether the check after the run is cheaper than a thread: every root
 * walked to the end in GITSCAN_SMALL_MS (and the walk before the run
 * finished). A thread cost 0.1 ms to start and two hand-offs to come back
 * (the daemon's loop waits for its eventfd), more than a small tree's whole
 * check; a large tree, or one that cannot be walked, keeps the thread.
 */
static bool gitcheck_small(struct gitcheck *gc)
{
	bool small = !gc->before_unfinished;

	for (size_t i = 0; i < gc->nroots && small; i++) {
		struct git_walk w;

		walk_run(&w, gc->roots[i].path, GITSCAN_SMALL_MS);
		small = !w.unfinished && !w.left;
		walk_free(&w);
	}
	return small;
}

int gitcheck_end_start(struct gitcheck *gc)
{
	if (!gc || gc->thr_started || gc->done)
		return -1;
	/* A small tree is checked inline by gitcheck_end, its walks bounded as the
	 * walk before the run is (the caller's loop waits for them). */
	if (gitcheck_small(gc)) {
		gc->after_ms = GITSCAN_BEFORE_MS;
		return -1;
	}
	gc->done_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (gc->done_efd < 0)
		return -1;
	if (git_thread_start(&gc->thr, gitcheck_after, gc) != 0) {
		close(gc->done_efd);
		gc->done_efd = -1;
		return -1;
	}
	gc->thr_started = true;
	return gc->done_efd;
}

void gitcheck_end(struct gitcheck *gc, const struct event_sink *events)
{
	if (!gc || gc->done)
		return;
	if (gc->thr_started)
		pthread_join(gc->thr, NULL);
	else
		gitcheck_after(gc);
	gc->thr_started = false;
	gc->done = true;
	for (size_t i = 0; i < gc->findings.n; i++) {
		const struct git_finding *f = &gc->findings.v[i];

		event_audit(events, "git", f->verdict, f->subject, f->detail);
	}
}

void gitcheck_free(struct gitcheck *gc)
{
	if (!gc)
		return;
	if (gc->thr_started)
		pthread_join(gc->thr, NULL);
	gitwatch_stop(gc->watch);
	for (size_t i = 0; i < gc->ndirs; i++) {
		close(gc->dirs[i].fd);
		free(gc->dirs[i].path);
		free(gc->dirs[i].commondir);
		free(gc->dirs[i].alternates);
	}
	free(gc->dirs);
	for (size_t i = 0; i < gc->nroots; i++)
		free(gc->roots[i].path);
	free(gc->roots);
	strv_free(gc->had_git);
	git_findings_free(&gc->findings);
	if (gc->done_efd >= 0)
		close(gc->done_efd);
	free(gc);
}
