/*
 * common/path-guard.h — opening a host path the user named without following a
 * symlink a sandbox could have planted out of the tree it could write.
 *
 * A writable root is a host directory some sandbox could write: the work
 * directory and --rw/--mkdir mounts of this run and of every run the store
 * remembers. A run can plant `dist -> ~/.ssh` or `audit.jsonl -> ~/.bashrc`
 * in such a tree; a later run (from any directory) that names the link must
 * not be carried out of the tree by it. path_guard_open() resolves a path
 * one component at a time and lets a symlink that lies inside a writable
 * root resolve only beneath that root (the deepest one holding it), from
 * the link on to the end of the path, as RESOLVE_BENEATH would: an absolute
 * target, or ".." above the root, fails with EXDEV. Links elsewhere are
 * followed as on the host (dotfile managers, /home -> /usr/home).
 *
 * Used by the client for --audit-log, --net-log and --pcap, and by the
 * mount stage for --ro, --rw, --copy and --copy-ro sources, so the rule is
 * decided once.
 */
#ifndef BOXY_PATH_GUARD_H
#define BOXY_PATH_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* A set of writable roots: absolute, normalised host paths. Owns its strings. */
struct path_roots {
	char **v;
	size_t n;
};

#define PATH_ROOTS_MAX 4096     /* more are dropped, oldest first, by whoever fills the set */

void path_roots_init(struct path_roots *r);
void path_roots_free(struct path_roots *r);
/* Add path (absolute, normalised, not "/"); duplicates and relative paths are ignored. */
void path_roots_add(struct path_roots *r, const char *path);
/* Add path and, when it differs, its realpath(3) as well (roots are named both ways). */
void path_roots_add_real(struct path_roots *r, const char *path);
struct store;
/* A run's own roots: spec/runspec.h mounts_add_writable_roots. */
/* Add every writable root the store remembers (store_writable_roots), both ways. */
void path_roots_add_store(struct path_roots *r, struct store *st);
/* The same from the default store, when one exists (the client's view; no daemon needed). */
void path_roots_add_default_store(struct path_roots *r);
/* The deepest root that is dir or holds it; NULL when none does. */
const char *path_roots_holding(const struct path_roots *r, const char *dir);

/* Flags of path_guard_open. */
#define PATH_GUARD_NOFOLLOW_LAST 0x1    /* the last component must not be a symlink (ELOOP) */

/*
 * Open absolute path inside the tree rooted at rootfd (as if rootfd were "/";
 * ".." and absolute links stay inside it) with open(2) flags and mode,
 * following symlinks except where the rule above forbids. Returns the fd or
 * -1 with errno; EXDEV when a planted link leads out of its root, and then
 * *why (may be NULL) gets a malloc'd phrase naming the link and the root.
 */
int path_guard_open(int rootfd, const char *path, int flags, unsigned mode,
		    const struct path_roots *roots, unsigned gflags, char **why);

/*
 * Open an output file the user named (--audit-log, --net-log, --pcap) for
 * writing, through path_guard_open with PATH_GUARD_NOFOLLOW_LAST, created
 * 0600 when missing. Refuses anything but a regular file owned by the
 * caller with a single link (a hard link to ~/.bashrc is one too); only
 * then truncates (truncate) or positions at the end (append). Returns the
 * fd, or -1 with *err the one line to print (flag names the option).
 */
int path_guard_open_output(const char *flag, const char *path, bool append,
			   const struct path_roots *roots, char **err);

#endif
