/*
 * common/protected.h — the directories no sandbox may write: the daemon's own
 * session store, log, lock and socket directories, as the daemon knows them.
 *
 * The daemon registers them once at start (after resolving symlinks), and
 * every sandbox it assembles refuses a writable mount (the work directory,
 * --rw, --mkdir, a profile's rw entries) that is one of them, an ancestor of
 * one, or lies inside one. The client's environment plays no part: a client
 * that says XDG_STATE_HOME=/elsewhere cannot talk the daemon into exposing
 * the store it really writes. Paths are compared as resolved strings and as
 * (device, inode) pairs, so a bind-mount alias of a protected directory is
 * the directory.
 */
#ifndef BOXY_PROTECTED_H
#define BOXY_PROTECTED_H

#include <stdbool.h>

/* Register dir (resolved with realpath; a missing one by its absolute name). */
void protected_add_dir(const char *dir);

/*
 * The registered directory that writable path p (resolved) is, contains or
 * lies inside, or NULL when there is none. The string belongs to the registry.
 */
const char *protected_find_conflict(const char *p);

/* Forget every registered directory (tests). */
void protected_reset(void);

#endif
