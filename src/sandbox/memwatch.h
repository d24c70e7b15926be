/*
 * sandbox/memwatch.h — --memory where no cgroup enforces it: a watchdog thread that
 * samples the sandbox's whole memory and kills the sandbox past the limit.
 * Runs in whichever process owns the sandbox (the daemon, or `boxy run
 * --no-daemon`). doc/limits.md says what is counted and how coarse it is.
 */
#ifndef BOXY_MEMWATCH_H
#define BOXY_MEMWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Sampling period while the sandbox is below half its limit, and above it. */
#define MEMWATCH_SLOW_MS 100
#define MEMWATCH_FAST_MS 10

/* One sample, in bytes. */
struct memwatch_usage {
	uint64_t procs;         /* anonymous and shared memory resident in its processes */
	uint64_t tmpfs;         /* used on the sandbox's tmpfs mounts (/, /tmp, $HOME, /dev/shm…) */
	uint64_t memfd;         /* memfds its processes hold open (mapped or not) */
	uint64_t sysv;          /* SysV shared memory resident in its IPC namespace */
	uint64_t nprocs;        /* processes seen in its pid namespace */
};

/* What the watchdog did, read after memwatch_stop(). */
struct memwatch_report {
	bool killed;                    /* it counted more than the limit and killed the sandbox */
	struct memwatch_usage at_kill;  /* the sample that stopped it */
	uint64_t peak;                  /* the highest total counted */
	uint64_t samples;
	uint64_t slowest_us;            /* the longest single sample */
	uint64_t fdscan_slowest_us;     /* the longest pass over the descriptors (memfds) */
	size_t ntmpfs;                  /* tmpfs mounts watched */
	size_t tmpfs_skipped;           /* tmpfs mounts of the sandbox that could not be opened */
	bool sysv_lost;                 /* SysV shared memory could not be counted (all or part) */
};

struct memwatch;

/*
 * Watch the sandbox whose init is `init` (a pid in the caller's namespace)
 * against `limit` bytes; the thread kills init with SIGKILL, which ends the
 * whole pid namespace, once a sample counts more. -1 with *err set when the
 * thread cannot start (the caller then reports --memory as not enforced).
 */
int memwatch_start(pid_t init, uint64_t limit, struct memwatch **out, char **err);
/* Stop the thread, fill *rep (may be NULL) and free mw. Call after the sandbox exited. */
void memwatch_stop(struct memwatch *mw, struct memwatch_report *rep);
/* The total a sample counts. */
uint64_t memwatch_usage_total(const struct memwatch_usage *u);

/*
 * The value in kB of the line "key: N kB" in a /proc status-style text, 0
 * when absent or malformed. Pure: the unit tests call it.
 */
uint64_t memwatch_parse_kb(const char *text, const char *key);
/*
 * One line of /proc/PID/mountinfo: true for a tmpfs, with its device and
 * unescaped mount point (malloc'd, NUL-free) in *dev and *mountpoint. Pure.
 */
bool memwatch_parse_tmpfs(const char *line, dev_t *dev, char **mountpoint);

#endif
