/*
 * sandbox-stages.h — the stages of boxy-init, one module each, in the
 * order boxy-init calls them (sandbox-init.c lists them in one function):
 *
 *   limits_apply_child   rlimit fallbacks                   (sandbox-limits.c)
 *   mount_setup          root filesystem and pivot_root     (sandbox-mount.c)
 *   caps_drop_all        capabilities, securebits, NNP     (sandbox-caps.c)
 *   landlock_apply       Landlock, best ABI                 (sandbox-landlock.c)
 *   seccomp_apply        seccomp, last                      (sandbox-seccomp.c)
 *
 * Each returns 0, or -1 with a one-line reason in *err (which the caller
 * prefixes with the stage name). None of them may exit or print.
 */
#ifndef BOXY_SANDBOX_STAGES_H
#define BOXY_SANDBOX_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

/* ---- mount (sandbox-mount.c) ------------------------------------------ */

/*
 * Build the sandbox's root filesystem and pivot_root into it. Runs in the
 * new mount namespace as PID 1 of the new pid namespace, with CAP_SYS_ADMIN
 * over the sandbox's user namespace, before any privilege is dropped.
 * On return, the process's root is the new root and its cwd is plan->workdir.
 */
int mount_setup(const struct plan *plan, char **err);

/* ---- capabilities (sandbox-caps.c) ------------------------------------ */

/*
 * Called between clone() and execve(boxy-init): make the capabilities stage 2
 * needs survive the execve of a non-root user as ambient capabilities.
 * Must be async-signal-safe (no malloc): returns -errno, no *err.
 */
int caps_raise_ambient(void);

/*
 * Drop every capability (effective, permitted, inheritable, ambient), empty
 * the bounding set, lock the securebits, set no_new_privs.
 */
int caps_drop_all(char **err);

/* ---- landlock (sandbox-landlock.c) ------------------------------------ */

struct landlock_info {
	int abi;                    /* 0: Landlock unavailable */
	uint64_t fs_handled;        /* LANDLOCK_ACCESS_FS_* this ABI knows */
	uint64_t net_handled;       /* LANDLOCK_ACCESS_NET_* this ABI knows */
	uint64_t scoped;            /* LANDLOCK_SCOPE_* this ABI knows */
};

/* Ask the kernel which ABI it has (landlock_create_ruleset VERSION). */
int landlock_probe(struct landlock_info *info);

/*
 * What boxy's policy needs that this ABI cannot enforce, worded for a person
 * ("connect() to unix sockets below a --ro path: needs ABI 9, replaced by
 * masking sockets found there"); returns how many it stored in out[].
 */
size_t landlock_losses(int abi, const char **out, size_t max);

/*
 * Restrict the filesystem (and, with ABI 4+, TCP ports; with ABI 6+,
 * abstract unix sockets and signals) to what plan exposes. After pivot_root,
 * after caps_drop_all (needs no_new_privs), before seccomp.
 */
int landlock_apply(const struct plan *plan, char **err);

/* ---- seccomp (sandbox-seccomp.c) -------------------------------------- */

struct sock_filter;

/* Load the filter into the calling thread. Last stage before execve. */
int seccomp_apply(enum seccomp_mode mode, char **err);

/* The assembled filter as classic BPF, for the simulator tests. *prog is malloc'd. */
int seccomp_export(enum seccomp_mode mode, struct sock_filter **prog, size_t *len, char **err);

/* The actions this kernel supports ("kill_process kill_thread trap errno user_notif trace log allow"). */
int seccomp_probe(char *buf, size_t len);

/* ---- limits (sandbox-limits.c) ---------------------------------------- */

/* Inside the sandbox, before caps are dropped: RLIMIT_NPROC when plan->pids != 0. */
int limits_apply_child(const struct plan *plan, char **err);

#endif
