/*
 * init/stages.h — the stages of boxy-init, one module each, in the
 * order boxy-init calls them (init/main.c lists them in one function):
 *
 *   limits_apply_child   rlimit fallbacks                   (init/limits.c)
 *   mount_setup          root filesystem and pivot_root     (init/mount.c)
 *   caps_drop_all        capabilities, securebits, NNP     (init/caps.c)
 *   landlock_apply       Landlock, best ABI                 (init/landlock.c)
 *   seccomp_apply_program seccomp, last: the program in the plan
 *                        (init/seccomp-load.c, compiled by init/seccomp.c at build time)
 *
 * Each returns 0, or -1 with a one-line reason in *err (which the caller
 * prefixes with the stage name). None of them may exit or print.
 */
#ifndef BOXY_SANDBOX_STAGES_H
#define BOXY_SANDBOX_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/landlock-abi.h"
#include "init/plan.h"

/* ---- mount (init/mount.c) ------------------------------------------ */

/*
 * Build the sandbox's root filesystem and pivot_root into it. Runs in the
 * new mount namespace as PID 1 of the new pid namespace, with CAP_SYS_ADMIN
 * over the sandbox's user namespace, before any privilege is dropped.
 * On return, the process's root is the new root and its cwd is plan->workdir.
 */
int mount_setup(const struct plan *plan, char **err);

/*
 * mount_setup, also telling what it left out: *skipped (when skipped is not
 * NULL) receives a NULL-terminated list, malloc'd, the caller frees it with
 * strv_free, of one line per mount the user asked for that was not made
 * ("--ro /x: No such file or directory"); it stays NULL when there is none.
 * The caller decides where the lines go (stderr, the audit log).
 */
int mount_setup_report(const struct plan *plan, char ***skipped, char **err);

/* ---- decoys (init/decoys.c) ---------------------------------------- */

/*
 * Stage "decoys", after mount: open each decoy the mount stage wrote, send
 * the descriptors to the daemon over sock, report PLAN_REPORT_DECOYS on
 * report_fd and wait for the daemon's 'A' on sock (init/plan.h). Closes its
 * copies of the descriptors. 0, or -1 with *err.
 */
int decoys_hand_over(const struct plan *p, int sock, int report_fd, char **err);

/* ---- capabilities (init/caps.c) ------------------------------------ */

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

/* ---- landlock (init/landlock.c) ------------------------------------ */

/* Rights that apply to a file (not a directory); a rule on a file takes only these. */
#define LL_FS_FILE_RIGHTS    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
			      LL_FS_TRUNCATE | LL_FS_IOCTL_DEV | LL_FS_RESOLVE_UNIX)
/* The ABI whose rights boxy's policy fully needs (the unix-socket restriction). */
#define LL_ABI_WANTED        9

/* One path_beneath rule: access is masked to the ABI and to files when applied. */
struct landlock_rule {
	char *path;
	uint64_t access;
};

/*
 * The filesystem rules for plan under the rights fs_handled (pure: no
 * syscalls, so the unit tests check it). *rules is malloc'd; free with
 * landlock_rules_free.
 */
size_t landlock_plan_rules(const struct plan *plan, uint64_t fs_handled,
			   struct landlock_rule **rules);
void landlock_rules_free(struct landlock_rule *rules, size_t n);

/*
 * TCP rules (pure): which net rights to handle under this ABI and which
 * ports may be connected to. *ports is malloc'd (may be NULL when none).
 */
void landlock_plan_net(const struct plan *plan, int abi, uint64_t *net_handled,
		       uint16_t **ports, size_t *nports);

/*
 * Below ABI 9 Landlock cannot stop connect() on a pathname unix socket. The
 * replacement: bind-mount /dev/null over every socket that exists under a
 * --ro or --protect path, so connect() there fails with ECONNREFUSED. Call
 * after mount_setup (paths are the sandbox's, /dev/null is the sandbox's)
 * and before caps_drop_all (needs CAP_SYS_ADMIN). A no-op from ABI 9 on.
 * *masked (may be NULL) receives how many sockets were covered.
 */
int landlock_mask_sockets(const struct plan *plan, int abi, size_t *masked, char **err);

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

/* ---- seccomp (init/seccomp.c) -------------------------------------- */

struct sock_filter;

/*
 * The filter (policy: doc/seccomp.md) is loaded by seccomp_apply_program
 * (init/seccomp-prog.h), last: everything after it, boxy-init's own
 * supervision included, runs under the filter.
 */

/*
 * The filter for mode assembled by libseccomp, as classic BPF: what the
 * build compiles into init/seccomp-prog.c (init/seccomp-gen.c), and what
 * the tests compare that with. *prog is malloc'd, *len instructions.
 */
int seccomp_export(enum seccomp_mode mode, struct sock_filter **prog, size_t *len, char **err);

/*
 * The actions this kernel supports, space-separated in doctor's order
 * ("kill_process kill_thread trap errno user_notif trace log allow").
 * Returns how many, or -1 when seccomp cannot be asked or buf is too small.
 */
int seccomp_probe(char *buf, size_t len);

/* ---- hard links (init/links.c) -------------------------------------- */

/* Past this many names to protect (2,000 cost ~0.15 s, 20,000 ~8 s), none are, loudly. */
#define LINKS_MASK_MAX 2000

/* One name of a multiply-linked file, sorted by (dev, ino); mask is the verdict. */
struct link_name_view {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	bool mask;
};

/*
 * Pure: mark every name of a file with fewer names in v than its link count
 * (its other names are outside the writable roots); returns how many.
 */
size_t links_select(struct link_name_view *v, size_t n);

/*
 * After mount_setup, before caps_drop_all: walk the writable roots and bind
 * read-only over every name of a regular file that has names outside them.
 * *masked receives how many names were covered; past LINKS_MASK_MAX none
 * are, and *unprotected receives how many would have been; *incomplete is
 * set when the walk's bounds (entries, depth, path length) stopped it.
 */
int links_mask_shared(const char *const *roots, size_t nroots, size_t *masked,
		      size_t *unprotected, bool *incomplete, char **err);

/* ---- limits (init/limits.c) ------------------------------------------- */

/* Inside the sandbox, before caps are dropped: RLIMIT_NPROC when plan->pids != 0. */
int limits_apply_child(const struct plan *plan, char **err);

/* One per-user-namespace limit (a file of /proc/sys/user) and the sandbox's value. */
struct limits_ucount {
	const char *name;
	unsigned long value;
};
#define LIMITS_INOTIFY_INSTANCES 32ul
#define LIMITS_INOTIFY_WATCHES   65536ul

/* The ucount limits boxy-init sets, n of them (for doctor, docs and tests). */
const struct limits_ucount *limits_ucount_table(size_t *n);
/* Write them into dirfd, a /proc/sys/user directory; names the kernel lacks are skipped. */
int limits_write_ucounts(int dirfd, char **err);
/* Stage limits: open /proc/sys/user while the host's /proc is still there. */
int limits_open_ucounts(char **err);
/* Stage ucounts, after mount and before caps: write them (needs CAP_SYS_RESOURCE inside). */
int limits_apply_ucounts(char **err);

#endif
