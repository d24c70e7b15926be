/*
 * sandbox/tripwatch.h — the first tripwire: a decoy credential was opened
 * (or renamed, removed, rewritten), told by the daemon from outside the
 * sandbox, with the process that did it (doc/tripwires.md).
 *
 * boxy-init hands the daemon a descriptor of each decoy it wrote into the
 * sandbox's $HOME before the payload may start (init/decoys.c). On each
 * the watch holds a write lease (fcntl F_SETLEASE): an open of the file by
 * anyone else blocks in the kernel and the watch is signalled, so the opener
 * is still in open() — its process listed in /proc/locks as waiting for
 * that lease — while the watch names it; then the lease is
 * released and the open goes on. inotify on the same inode reports every
 * open, access, change, rename and removal, leases or not; an open nobody
 * held a lease for is named by who holds the file open, or said to be
 * unattributed. Unprivileged fanotify, which would name the opener, reports
 * pid 0 for other processes than the listener: it cannot.
 *
 * All of it in a thread of its own (a busy loop does not delay a blocked
 * open). Findings are queued and become events on the caller's thread:
 * tripwatch_fd() turns readable, tripwatch_drain() emits them (layer
 * "tripwire", verdict "alert": red in watch, show, top and the summary).
 * Bounded: one alert per decoy and kind, the rest counted — except that an
 * open naming its opener better than the alerts before (a process where none
 * was named, a package where only a process or a claimed one was) is an
 * alert again, so a throwaway probe cannot make the real read a count; at most
 * TRIPWATCH_ALERTS_MAX alerts a session and TRIPWATCH_LEASES_MAX lease
 * breaks a decoy named by its opener.
 */
#ifndef BOXY_SANDBOX_TRIPWATCH_H
#define BOXY_SANDBOX_TRIPWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "sandbox/decoys.h"

#define TRIPWATCH_ALERTS_MAX   48       /* alerts a session, at most; the rest counted (each
					 * decoy's opens alert at most 3 times, its changes once) */
#define TRIPWATCH_LEASES_MAX   64       /* opens a decoy has its opener named for, at most
					 * (breaks nobody waited for do not count) */
#define TRIPWATCH_PROCS_MAX    8192     /* processes looked at to name one */
#define TRIPWATCH_THREADS_MAX  16384    /* ... and their threads, at most, a look */

struct tripwatch;

/*
 * A watch over set's decoys in the sandbox whose init is init_pid (set and
 * the descriptors handed over later stay the watch's). NULL only when no
 * inotify instance could be made (*err says why).
 */
struct tripwatch *tripwatch_create(const struct decoy_set *set, pid_t init_pid, char **err);
/*
 * Take fd, boxy-init's O_RDONLY descriptor of decoy i: watch it, lease it.
 * Before tripwatch_start. 0, or -1 with *err (fd is closed either way on -1).
 */
int tripwatch_adopt(struct tripwatch *w, size_t i, int fd, char **err);
/* Start the thread; *note (malloc'd) says what is degraded (no leases: openers unnamed). */
int tripwatch_start(struct tripwatch *w, char **note, char **err);
/* Readable while findings wait for tripwatch_drain (-1 when there is no watch). */
int tripwatch_fd(const struct tripwatch *w);
/* Emit the waiting findings through sink, stamped with session (the caller's thread). */
void tripwatch_drain(struct tripwatch *w, const struct event_sink *sink, const char *session);
/* How many decoys are watched. */
size_t tripwatch_count(const struct tripwatch *w);
/*
 * The pids /proc/locks (its text, locks) lists as waiting for the lease on
 * inode ino of device dev to be broken: the openers it holds in open(), by
 * process, whatever thread opened ("7: LEASE BREAKING UNLCK 812 00:3a:9 0
 * EOF" then "7: -> LEASE BREAKER READ 901 <none>:0 0 EOF"). At most max into
 * out; how many. Pure: tests/unit/test-tripwatch.c.
 */
size_t tripwatch_lease_waiters(const char *locks, dev_t dev, ino_t ino, pid_t *out, size_t max);
/*
 * Stop the thread, emit what is left and the counts of what was only
 * counted, release the leases, close the descriptors and free. NULL is fine.
 */
void tripwatch_stop(struct tripwatch *w, const struct event_sink *sink, const char *session);

#endif
