/*
 * init/links.c — stage links of boxy-init: files of a writable root that
 * are hard links to files outside every writable root are made read-only.
 *
 * pnpm links every file of its global store into node_modules, and a local
 * git clone links its objects: such a file is one inode under two names, and
 * a path-based layer (mounts, Landlock) that lets the payload write the name
 * in the work directory lets it write the other one too — every project on
 * the machine that uses the package then runs the payload's code. The
 * kernel has no mount option or Landlock right for "not a shared inode", so
 * boxy-init walks the writable roots before the payload exists, counts the
 * names it finds for every multiply-linked regular file, and bind-mounts
 * read-only over each name of a file whose link count is higher than the
 * names found: its other names are outside, where the payload must not
 * write. A file whose every name is inside stays writable (a clone made
 * inside the work directory, cp -l). The payload cannot add a link to an
 * outside file later: outside files are not in its view, and link() across
 * mounts fails with EXDEV.
 *
 * What it costs and what remains is in doc/filesystem.md: the walk is a
 * getdents and an fstatat per entry, each mask a mount whose cost grows with
 * the number of mounts; a masked name cannot be unlinked or renamed (EBUSY).
 * Past LINKS_MASK_MAX names (a whole pnpm node_modules) the directories all
 * of whose entries are such names become one read-only mount each (a
 * package's directory, never a gitdir's, where git adds objects beside the
 * linked ones); past LINKS_MASK_MAX mounts even so, nothing is
 * masked and boxy-init says so loudly: the write-through stays possible in that run. So
 * it does past LINKS_MAX_ENTRIES entries or LINKS_MAX_DEPTH levels, where
 * the walk stops and what it found so far is masked.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init/stages.h"
#include "common/util.h"

#define LINKS_MAX_DEPTH    256
#define LINKS_MAX_ENTRIES  500000     /* ~1.5 s of walking on this machine */
/*
 * And a time bound: the daemon waits for this stage before it serves anything
 * else (the sandbox is assembled on its loop), so an 80,000-directory tree
 * held every other session's terminal and network for 1.3 s. 250 ms covers a
 * 50,000-file node_modules on this 2-core machine; past it the walk stops
 * with the same loud warning as the other bounds.
 */
#define LINKS_MAX_MS       250

#define LINKS_NO_DIR ((size_t)-1)

/* One name of a multiply-linked regular file, and the directory it is in. */
struct link_name {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	char *path;
	size_t dir;
};

/* One directory walked: its entries, how many of them are to be made read-only. */
struct link_dir {
	char *path;
	size_t parent;              /* LINKS_NO_DIR for a root */
	size_t entries;             /* every entry but . and .., of any type */
	size_t covered;             /* masked files and wholly covered subdirectories */
	bool whole;                 /* every entry is covered: the directory can be one mount */
};

struct links_walk {
	struct link_name *names;
	size_t n, cap;
	struct link_dir *dirs;
	size_t ndirs, dircap;
	size_t entries;
	uint64_t deadline_ms;       /* CLOCK_MONOTONIC: LINKS_MAX_MS after the walk began */
	bool incomplete;            /* a bound stopped the walk: names may be missing */
	const char *const *roots;   /* every root, each walked on its own */
	size_t nroots;
	char **err;
};

/* True when path is one of the roots (walked by its own walk, not as a subdirectory). */
static bool links_is_root(const struct links_walk *w, const char *path)
{
	for (size_t i = 0; i < w->nroots; i++)
		if (strcmp(w->roots[i], path) == 0)
			return true;
	return false;
}

/* Remember one name of a multiply-linked file, in directory dir. */
static void links_add(struct links_walk *w, const struct stat *st, const char *path, size_t dir)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 256;
		w->names = xrealloc(w->names, w->cap * sizeof(*w->names));
	}
	w->names[w->n++] = (struct link_name){ st->st_dev, st->st_ino, st->st_nlink,
					       xstrdup(path), dir };
}

/* Remember one directory; returns its index. */
static size_t links_add_dir(struct links_walk *w, const char *path, size_t parent)
{
	if (w->ndirs == w->dircap) {
		w->dircap = w->dircap ? w->dircap * 2 : 64;
		w->dirs = xrealloc(w->dirs, w->dircap * sizeof(*w->dirs));
	}
	w->dirs[w->ndirs] = (struct link_dir){ xstrdup(path), parent, 0, 0, false };
	return w->ndirs++;
}

/* Walk dir (open as dfd, which this closes), collecting multiply-linked regular files. */
static int links_walk_dir(struct links_walk *w, int dfd, const char *path, size_t parent,
			  int depth)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;
	size_t self;

	/* Bounds end the walk, loudly (the caller warns), rather than the run. */
	if (depth > LINKS_MAX_DEPTH) {
		close(dfd);
		w->incomplete = true;
		return 0;
	}
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return set_err_errno(w->err, "hard links: open %s", path);
	}
	self = links_add_dir(w, path, parent);
	/* A bound reached anywhere ends the whole walk, not only this directory's loop. */
	while (rc == 0 && !w->incomplete && (errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		char child[PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		w->dirs[self].entries++;
		/* Only what may matter: regular files, directories, and unknown types. */
		if (de->d_type != DT_REG && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (++w->entries > LINKS_MAX_ENTRIES ||
		    ((w->entries & 63) == 0 && now_mono_ms() > w->deadline_ms)) {
			w->incomplete = true;
			break;
		}
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") ? path : "",
				     de->d_name) >= sizeof(child)) {
			w->incomplete = true;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			rc = set_err_errno(w->err, "hard links: stat %s", child);
			break;
		}
		if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
			links_add(w, &st, child, self);
		} else if (S_ISDIR(st.st_mode) && !links_is_root(w, child)) {
			/* Into submounts too: their files may have names elsewhere on their filesystem. */
			int cfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			/* A directory the user cannot read is one the payload cannot enter. */
			if (cfd < 0) {
				if (errno == EACCES || errno == ENOENT)
					continue;
				rc = set_err_errno(w->err, "hard links: open %s", child);
				break;
			}
			rc = links_walk_dir(w, cfd, child, self, depth + 1);
		}
	}
	if (rc == 0 && errno != 0)
		rc = set_err_errno(w->err, "hard links: read %s", path);
	closedir(d);
	return rc;
}

/* Order names by inode, so that the names of one file are adjacent. */
static int links_cmp(const void *a, const void *b)
{
	const struct link_name *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

/*
 * Bind path (a file or a directory) read-only over itself. The clone is
 * recursive, so mounts below a directory (a masked socket, a --ro path)
 * stay as they are; only the top becomes read-only, and its other
 * attributes are kept.
 */
static int links_mask_one(const char *path, char **err)
{
	struct mount_attr ma = { .attr_set = MOUNT_ATTR_RDONLY };
	int tree = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			     AT_SYMLINK_NOFOLLOW | AT_RECURSIVE);

	if (tree < 0)
		return set_err_errno(err, "hard links: clone %s", path);
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0 ||
	    move_mount(tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		set_err_errno(err, "hard links: mask %s", path);
		close(tree);
		return -1;
	}
	close(tree);
	return 0;
}

/* The names to mask, from the sorted names: count per inode, below nlink means outside. */
size_t links_select(struct link_name_view *v, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && v[j].dev == v[i].dev && v[j].ino == v[i].ino)
			j++;
		/* Every name found inside: harmless. Fewer than the link count: some are outside. */
		if ((unsigned long)(j - i) < (unsigned long)v[i].nlink)
			for (size_t k = i; k < j; k++)
				v[k].mask = true;
		for (size_t k = i; k < j; k++)
			out += v[k].mask;
		i = j;
	}
	return out;
}

/* True when path is a .git directory or below one. */
static bool links_in_gitdir(const char *path)
{
	size_t n = strlen(path);

	return strstr(path, "/.git/") != NULL || (n >= 5 && strcmp(path + n - 5, "/.git") == 0);
}

/*
 * Too many names for a mount each (a pnpm node_modules): find the
 * directories every entry of which is to be made read-only — a package's
 * directory, all of whose files are links into the store — and count the
 * mounts when each topmost such directory is one mount and the remaining
 * names one each. Directories come in pre-order, so children follow their
 * parent and one backwards pass settles them. A root is never one of them.
 */
static size_t links_group(struct links_walk *w, const struct link_name_view *v)
{
	size_t mounts = 0;

	for (size_t i = 0; i < w->n; i++)
		if (v[i].mask)
			w->dirs[w->names[i].dir].covered++;
	for (size_t d = w->ndirs; d-- > 0;) {
		struct link_dir *ld = &w->dirs[d];

		/* Not in a gitdir: git adds new objects beside linked ones (a local clone). */
		ld->whole = ld->parent != LINKS_NO_DIR && ld->entries > 0 &&
			    ld->covered == ld->entries && !links_in_gitdir(ld->path);
		if (ld->whole)
			w->dirs[ld->parent].covered++;
	}
	for (size_t d = 0; d < w->ndirs; d++)
		mounts += w->dirs[d].whole && !w->dirs[w->dirs[d].parent].whole;
	for (size_t i = 0; i < w->n; i++)
		mounts += v[i].mask && !w->dirs[w->names[i].dir].whole;
	return mounts;
}

/* Make read-only every name in the writable roots of a file linked from outside; see init/stages.h. */
int links_mask_shared(const char *const *roots, size_t nroots, size_t *masked,
		      size_t *unprotected, bool *incomplete, char **err)
{
	struct links_walk w = { .roots = roots, .nroots = nroots, .err = err,
				.deadline_ms = now_mono_ms() + LINKS_MAX_MS };
	struct link_name_view *v = NULL;
	size_t nmask = 0;
	int rc = 0;

	*masked = 0;
	*unprotected = 0;
	for (size_t i = 0; i < nroots && rc == 0; i++) {
		bool twice = false;
		int fd;

		/* Each root once (a root inside another is skipped by that one's walk). */
		for (size_t j = 0; j < i; j++)
			twice |= strcmp(roots[i], roots[j]) == 0;
		if (twice)
			continue;
		fd = open(roots[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A missing root was dealt with by stage mount; a --rw FILE is taken as asked. */
		if (fd < 0)
			continue;
		rc = links_walk_dir(&w, fd, roots[i], LINKS_NO_DIR, 0);
	}
	*incomplete = w.incomplete;
	if (rc == 0 && w.n > 0) {
		qsort(w.names, w.n, sizeof(*w.names), links_cmp);
		v = xmalloc(w.n * sizeof(*v));
		for (size_t i = 0; i < w.n; i++)
			v[i] = (struct link_name_view){ w.names[i].dev, w.names[i].ino,
							w.names[i].nlink, false };
		nmask = links_select(v, w.n);
		/* Many names: whole directories instead, when that brings the mounts under the cap. */
		bool grouped = nmask > LINKS_MASK_MAX;
		size_t mounts = grouped ? links_group(&w, v) : nmask;

		/* Past the cap the mounts would cost seconds (each is O(mounts)): none, and say so. */
		if (mounts > LINKS_MASK_MAX)
			*unprotected = nmask;
		for (size_t d = 0; grouped && mounts <= LINKS_MASK_MAX && d < w.ndirs && rc == 0; d++)
			if (w.dirs[d].whole && !w.dirs[w.dirs[d].parent].whole)
				rc = links_mask_one(w.dirs[d].path, err);
		for (size_t i = 0; i < w.n && rc == 0 && mounts <= LINKS_MASK_MAX; i++) {
			if (!v[i].mask)
				continue;
			if (!grouped || !w.dirs[w.names[i].dir].whole)
				rc = links_mask_one(w.names[i].path, err);
			if (rc == 0)
				(*masked)++;
		}
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.names[i].path);
	for (size_t d = 0; d < w.ndirs; d++)
		free(w.dirs[d].path);
	free(w.names);
	free(w.dirs);
	free(v);
	return rc;
}
