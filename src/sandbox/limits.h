/*
 * sandbox/limits.h — --memory, --pids, --cpus: cgroup v2 when the user has the
 * controllers delegated, otherwise the documented fallbacks, reported and
 * never faked. Parent side (runs in the caller, before clone).
 */
#ifndef BOXY_RUN_LIMITS_H
#define BOXY_RUN_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "spec/runspec.h"

struct cgroup_info {
	bool v2;                    /* a cgroup2 hierarchy is mounted */
	char *mount;                /* where */
	char *own;                  /* this process's cgroup path (absolute, under mount) */
	bool writable;              /* the user can create a child cgroup there */
	bool memory, pids, cpu;     /* controllers delegated to the user (in subtree_control reach) */
};

/* Inspect the host. Fills info (free with cgroup_info_free). Never fails: unknown = false. */
void cgroup_probe(struct cgroup_info *info);
void cgroup_info_free(struct cgroup_info *info);

struct limits {
	char *cgroup_dir;           /* the run's own cgroup, NULL when none could be made */
	bool memory_enforced, pids_enforced, cpu_enforced;
	bool pids_rlimit;           /* --pids falls back to RLIMIT_NPROC inside */
	uint64_t memory, pids;      /* what was asked: bytes, processes (0: not asked) */
	uint32_t cpus_milli;
	/* No cgroup could be made here but a systemd user manager runs: limits_attach()
	 * asks it for a scope, and only then records how each limit is enforced. */
	bool scope_pending;
	const struct event_sink *events;    /* valid until limits_attach() */
	char *why_mem, *why_pids, *why_cpu; /* why no cgroup of our own enforces each */
	char *scope_mount;          /* the cgroup2 mount */
	char *scope_unit, *scope_cgroup;    /* the scope systemd made, its cgroup path */
	/* An alert may freeze this run (doc/react.md): a cgroup holding the whole sandbox whose
	 * cgroup.freeze the user may write — the limits' own, one made for the freezer alone,
	 * or a child of the systemd scope — or NULL, and why not (the freezer then uses
	 * SIGSTOP, sandbox/freeze.h). */
	bool want_freeze;
	char *freeze_dir;
	char *why_no_freeze;
};

/*
 * Decide how each requested limit is enforced, create the run's cgroup when
 * possible, and emit one "cgroup" audit event per limit saying how (or that it
 * is not enforced, and why). freeze: an alert may freeze the run, so it wants
 * a cgroup for the freezer too (freeze_dir). Returns -1 only for a hard error.
 */
int limits_prepare(const struct runspec *rs, bool freeze, struct limits *lim,
		   const struct event_sink *events, char **err);
/*
 * Move pid into the run's cgroup (no-op when there is none); or, when
 * limits_prepare() deferred to the user's systemd, ask it for a scope with
 * pid in it and record the limits' audit events.
 */
int limits_attach(struct limits *lim, pid_t pid, char **err);
/* sandbox/limits-scope.c: whether a systemd user manager can be asked (else *why, malloc'd). */
bool limits_scope_available(char **why);
/*
 * Ask it for a transient scope "boxy-….scope" holding pid, Delegate=yes, with
 * the limits (0: not asked) as MemoryMax/MemorySwapMax=0, TasksMax and
 * CPUQuotaPerSecUSec. On success *unit and *cgroup (the scope's path in the
 * cgroup2 hierarchy), both malloc'd; -1 with *why otherwise.
 */
int limits_scope_request(pid_t pid, uint64_t memory, uint64_t pids, uint32_t cpus_milli,
			 char **unit, char **cgroup, char **why);
/*
 * Which freezer a run would get on this host, in words for `boxy doctor`
 * (malloc'd); *cgroup true when it is the cgroup freezer.
 */
char *limits_freeze_probe(bool *cgroup);
/* Remove the run's cgroup after the sandbox exited. */
void limits_release(struct limits *lim);
/* How many processes the kernel killed past memory.max in the run's cgroup or scope
 * (memory.events oom_kill; 0 when memory was not enforced by either). Before release. */
uint64_t limits_oom_kills(const struct limits *lim);

/*
 * The daemon under a service manager that delegated it a cgroup of its own
 * (systemd's Delegate=yes, dist/systemd/boxy.service): cgroup v2 lets a
 * cgroup that holds processes enable no controller for its children, so the
 * daemon moves into a leaf, OWN/daemon, and runs get their cgroups beside it
 * in OWN (cgroup_probe reports OWN from then on). Only when the daemon is
 * the one process in OWN; call before starting any thread or child. 1 when
 * it moved, 0 when there was nothing to do, -1 with *err.
 */
#define LIMITS_DAEMON_LEAF "daemon"
int limits_delegated_leaf(char **err);
/* The same for cgroup directory own and process pid (what tests call). */
int limits_leaf_move(const char *own, pid_t pid, char **err);
/* OWN once the daemon moved into its leaf, else NULL. */
const char *limits_runs_cgroup(void);

#endif
