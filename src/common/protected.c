/*
 * common/protected.c — the registry of directories no sandbox may write (see
 * common/protected.h). It is filled once, by the daemon's start, before any
 * session exists, and only read afterwards, so it needs no lock.
 *
 * Each entry keeps the directory's resolved path and the (device, inode)
 * of the directory and of every ancestor up to /. A writable path p
 * conflicts with entry X when
 *   - p is X or an ancestor of X: p's (device, inode) is among X's chain;
 *   - p lies inside X: X's (device, inode) is among those of p's prefixes.
 * The string comparison is the same test on names and catches what has not
 * been created yet; the inode comparison catches a bind mount of X (or of
 * an ancestor) under another name.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/protected.h"
#include "common/util.h"

#define PROTECTED_MAX  8
#define CHAIN_MAX      256      /* path components followed up to / */

struct devino {
	dev_t dev;
	ino_t ino;
};

struct protected_dir {
	char *path;
	struct devino self;
	bool have_self;
	struct devino chain[CHAIN_MAX];     /* self and every ancestor that exists */
	size_t nchain;
};

static struct protected_dir registry[PROTECTED_MAX];
static size_t nregistry;

/* The (device, inode) of path, without following a final symlink. */
static bool devino_of(const char *path, struct devino *out)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return false;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return true;
}

/* Fill chain with the (device, inode) of path and of each of its prefixes. */
static size_t devino_chain(const char *path, struct devino *chain, size_t max)
{
	char *p = xstrdup(path);
	size_t n = 0;

	for (;;) {
		char *slash;

		if (n < max && devino_of(p[0] ? p : "/", &chain[n]))
			n++;
		if (!p[0] || strcmp(p, "/") == 0)
			break;
		slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	free(p);
	return n;
}

/* Whether d is one of the n pairs in set. */
static bool devino_in(const struct devino *d, const struct devino *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i].dev == d->dev && set[i].ino == d->ino)
			return true;
	return false;
}

void protected_add_dir(const char *dir)
{
	struct protected_dir *e;
	char *abs, *real;

	if (!dir || dir[0] != '/' || nregistry >= PROTECTED_MAX)
		return;
	real = realpath(dir, NULL);
	abs = real ? real : path_absolute(dir, "/");
	for (size_t i = 0; i < nregistry; i++)
		if (strcmp(registry[i].path, abs) == 0) {
			free(abs);
			return;
		}
	e = &registry[nregistry++];
	memset(e, 0, sizeof(*e));
	e->path = abs;
	e->have_self = devino_of(abs, &e->self);
	e->nchain = devino_chain(abs, e->chain, CHAIN_MAX);
}

const char *protected_find_conflict(const char *p)
{
	struct devino self, chain[CHAIN_MAX];
	bool have_self;
	size_t nchain;

	if (!p || p[0] != '/' || nregistry == 0)
		return NULL;
	have_self = devino_of(p, &self);
	nchain = devino_chain(p, chain, CHAIN_MAX);
	for (size_t i = 0; i < nregistry; i++) {
		const struct protected_dir *e = &registry[i];

		if (path_has_prefix(e->path, p) || path_has_prefix(p, e->path))
			return e->path;
		if (have_self && devino_in(&self, e->chain, e->nchain))
			return e->path;     /* p is X or an ancestor of X, by another name */
		if (e->have_self && devino_in(&e->self, chain, nchain))
			return e->path;     /* p lies inside X, by another name */
	}
	return NULL;
}

void protected_reset(void)
{
	for (size_t i = 0; i < nregistry; i++)
		free(registry[i].path);
	nregistry = 0;
}
