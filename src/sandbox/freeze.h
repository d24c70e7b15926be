/*
 * sandbox/freeze.h — stopping every process of a sandbox at once, and letting
 * them go again: what `--on-alert freeze` and `boxy resume` do to the
 * processes (doc/react.md). Runs in the process that owns the sandbox (the
 * daemon), from outside the sandbox.
 *
 * Two mechanisms. Where the sandbox has a cgroup v2 of its own that the user
 * may write (one boxy made under a delegated subtree, or a child of the run's
 * systemd scope), the kernel's freezer: `cgroup.freeze` takes every task of
 * the cgroup, forks included, and SIGCONT cannot undo it. Otherwise SIGSTOP to
 * every process of the sandbox's pid namespace but its init, found by the
 * namespace (so no process hides by reparenting), swept again and again until
 * two passes in a row see every thread stopped: a process forked during a
 * sweep is caught by the next, one that a sibling continued is stopped again.
 */
#ifndef BOXY_SANDBOX_FREEZE_H
#define BOXY_SANDBOX_FREEZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a freeze may take before it counts as failed (the caller then kills). */
#define FREEZE_TIMEOUT_US   (2u * 1000u * 1000u)

struct freeze_report {
	const char *how;            /* "cgroup" or "SIGSTOP" (static) */
	uint64_t us;                /* from the call until every process was seen stopped */
	unsigned procs;             /* processes of the sandbox seen stopped (SIGSTOP; 0 for cgroup) */
	unsigned rounds;            /* sweeps it took (SIGSTOP) */
	unsigned running;           /* threads still running when it gave up (failure) */
};

/*
 * cgroup v2: write 1 to DIR/cgroup.freeze and wait (at most timeout_us) until
 * DIR/cgroup.events says "frozen 1"; or write 0 (freeze false), not waited for.
 * 0, or -1 with *err.
 */
int freeze_cgroup(const char *dir, bool freeze, uint64_t timeout_us, struct freeze_report *rep,
		  char **err);

/*
 * SIGSTOP every process of init's pid namespace except init (a pid in the
 * caller's namespace) until two sweeps in a row see none running, at most
 * timeout_us. A thread counts as running unless its state is stopped (T, t),
 * dead (Z, X) or in an uninterruptible wait (D: it cannot run the payload's
 * code before it takes the stop it has pending). 0, or -1 with *err and
 * rep->running.
 */
int freeze_sigstop(pid_t init, uint64_t timeout_us, struct freeze_report *rep, char **err);

/* SIGCONT every process of init's pid namespace except init. Returns how many. */
unsigned freeze_sigcont(pid_t init);

/*
 * The threads of process pid (a pid in /proc) that run or may run: every
 * state but T, t, Z, X, x and D. -1 when the process is gone. Pure over
 * /proc; tests call it.
 */
int freeze_threads_running(pid_t pid);

/* The state letter in a /proc/PID/stat line ('?' when malformed): after the last ')'. Pure. */
char freeze_stat_state(const char *stat);

#endif
