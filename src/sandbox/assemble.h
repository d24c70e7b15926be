/*
 * sandbox/assemble.h — the sandbox assembly: a run-spec in, a running sandbox out.
 *
 * This is the entry point the daemon calls (and `boxy run --no-daemon`
 * directly, through sandbox_run). sandbox_start() resolves the spec into a plan,
 * clones the namespaces, writes the uid/gid maps, and execs boxy-init as
 * PID 1 of the new pid namespace; boxy-init builds the root, drops
 * privileges, applies Landlock and seccomp and runs the payload as its child.
 *
 * Stage failures inside the sandbox come back as one line naming the stage
 * and errno ("stage mount: bind /usr: Permission denied").
 */
#ifndef BOXY_SANDBOX_H
#define BOXY_SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/event.h"
#include "sandbox/freeze.h"
#include "spec/runspec.h"

/* Who is asking, and from where: the caller's environment, not the daemon's. */
struct sandbox_ctx {
	char *const *environ;       /* the caller's environment */
	const char *cwd;            /* the caller's working directory */
	uid_t uid;
	gid_t gid;
	const char *user;           /* login name */
	const char *home;           /* the caller's $HOME */
	int stdin_fd, stdout_fd, stderr_fd;     /* given to the payload */
	bool foreground;            /* stdin is the controlling terminal: give the payload its foreground */
	bool new_session;           /* stdin is a pty of the daemon's: make it the sandbox's
				     * controlling terminal (setsid + TIOCSCTTY in stage 2) */
	const struct event_sink *events;        /* policy decisions; may be NULL */
	const char *session;        /* id stamped on events; may be NULL */
	const char *dns_search;     /* --tailscale's MagicDNS suffix, which becomes the search line
				     * of the sandbox's /etc/resolv.conf (a networked run only);
				     * NULL for none. Looked up by the caller before the start: the
				     * mount stage writes /etc before any network exists */
	const struct path_roots *roots;         /* writable roots of recorded sessions
						 * (common/path-guard.h), added to this run's; may be NULL */
	bool exits_after;           /* the caller exits once the run ends (boxy run --no-daemon):
				     * what would make that exit wait for the kernel is left to a
				     * child process instead of a thread (sandbox/gitwatch.c) */
	const char *tls_ca_pem;     /* TLS inspection: the session CA's certificate (PEM), which
				     * the sandbox is made to trust; NULL when nothing is inspected */
	const char *tls_ca_hash;    /* its subject hash, 8 hex digits (common/tlsca.h) */
};

struct path_roots;
struct sandbox;

/*
 * Start a sandbox. On success *out owns the running sandbox, whose payload
 * has been started. On failure, -1 with *err set and:
 *  - *out NULL when nothing was launched (exit with EXIT_BOXY_FAILED), or
 *  - *out set when boxy-init ran and a stage failed: the sandbox is already
 *    reaped and sandbox_reap(sb, 0, err) returns the stage's exit code
 *    (125–127). Free it with sandbox_free() either way.
 * ctx need not outlive the call (the sink and session are copied), but the
 * sink's own ctx must stay valid until sandbox_free(): sandbox_reap() emits.
 */
int sandbox_start(const struct runspec *rs, const struct sandbox_ctx *ctx,
		  struct sandbox **out, char **err);
/*
 * sandbox_start in halves, for a caller with an event loop (the daemon,
 * daemon/launch.c), which must go on serving others while boxy-init builds
 * the sandbox (8–15 ms, far more in a large tree):
 *
 *  sandbox_launch        resolve, clone, send the plan. -1 with *out NULL (or
 *                        killed and reaped) as for sandbox_start; 0: boxy-init is
 *                        assembling and sandbox_launch_fd becomes readable when it
 *                        has reported or died.
 *  sandbox_launch_report take the report: 1 not yet (the caller made the fd
 *                        non-blocking), 0 ready (the payload is being started),
 *                        -1 a failed start (*err may still be NULL): the caller
 *                        reaps boxy-init — through its own child watcher, since
 *                        an event loop's SIGCHLD handler may reap it first — and
 *                        calls sandbox_launch_reaped with the wait status, which
 *                        sets *err to the stage's line. sandbox_reap(sb, 0, err)
 *                        then returns the start's exit code, as after sandbox_start.
 */
int sandbox_launch(const struct runspec *rs, const struct sandbox_ctx *ctx,
		   struct sandbox **out, char **err);
int sandbox_launch_fd(const struct sandbox *sb);
int sandbox_launch_report(struct sandbox *sb, const struct runspec *rs, char **err);
void sandbox_launch_reaped(struct sandbox *sb, int status, char **err);

/* PID (in the caller's pid namespace) of the sandbox's init. */
pid_t sandbox_pid(const struct sandbox *sb);
/* Send sig to the sandbox's init, which forwards it to the payload. */
int sandbox_signal(struct sandbox *sb, int sig);
/* Kill everything in the sandbox now (SIGKILL to init tears down the pid namespace). */
void sandbox_kill(struct sandbox *sb);
/*
 * Freeze every process of the sandbox (doc/react.md): the cgroup freezer when
 * the run has a cgroup for it; else boxy-init is told to hold still
 * (init/plan.h) and every other process gets SIGSTOP until none runs
 * (sandbox/freeze.h). -1 with *err when that did not happen within
 * FREEZE_TIMEOUT_US: the caller then kills the sandbox. SIGKILL (sandbox_kill)
 * ends a frozen sandbox as any other.
 */
int sandbox_freeze(struct sandbox *sb, struct freeze_report *rep, char **err);
/* Let every process of a frozen sandbox go again (SIGCONT, or the freezer's 0). */
int sandbox_thaw(struct sandbox *sb, char **err);
/*
 * Record that init exited with wait status `status` and return the run's exit
 * code: the payload's status, 128+N for a signal, 125–127 for a stage failure
 * (with *err set to the stage's one line).
 */
int sandbox_reap(struct sandbox *sb, int status, char **err);
/*
 * Why the sandbox was ended when boxy ended it (the memory watchdog's kill),
 * worded in this thread's language (common/lang.h), malloc'd; NULL for any
 * other end. sandbox_reap's *err is the same, worded in C for the record.
 */
char *sandbox_exit_words(const struct sandbox *sb);
void sandbox_free(struct sandbox *sb);

/*
 * tap0's descriptors, one per queue, which stage 2 sent during sandbox_start
 * for --net public and allowlist (init/tap.h): at most max into fds (the rest
 * closed), the caller owning them afterwards. Returns how many; 0 when there
 * are none or they were taken already.
 */
size_t sandbox_take_taps(struct sandbox *sb, int *fds, size_t max);

/*
 * tap0 during the launch, so that the daemon starts the network while
 * boxy-init is still mounting (doc/internals-net.md, "The start"):
 * sandbox_taps_fd is the plan socket while tap0 is on its way (-1 when it is
 * not a networked run or tap0 was taken); once it is readable,
 * sandbox_taps_receive takes tap0 (0; also when taken already), then
 * sandbox_take_taps hands it over. Stage "net" sends tap0 before anything
 * else goes over that socket. A failed receive (-1 with *err) leaves the
 * verdict to boxy-init's report.
 */
int sandbox_taps_fd(const struct sandbox *sb);
int sandbox_taps_receive(struct sandbox *sb, char **err);

/*
 * During a launch: give the start up with why as its one line (exit 125)
 * and kill boxy-init. The report then fails the start with that line, even
 * when boxy-init had reported ready before it was killed.
 */
void sandbox_launch_abort(struct sandbox *sb, const char *why);

/* Queues tap0 gets when the run does not say (one per two online CPUs, at most this many). */
#define SANDBOX_NET_QUEUES_AUTO 4

/*
 * After init has exited, before sandbox_reap: start the after-run git checks
 * in a thread. Returns a descriptor that becomes readable when they are done
 * (sandbox_reap then does not block on them), or -1 when there is nothing to
 * wait for (sandbox_reap does whatever remains inline).
 */
int sandbox_gitcheck_start(struct sandbox *sb);

/*
 * Start, wait (forwarding SIGINT/SIGTERM/SIGHUP/SIGQUIT, enforcing
 * rs->timeout_ms by killing the whole tree), reap. Returns the exit code.
 * The direct path of `boxy run`.
 */
int sandbox_run(const struct runspec *rs, const struct sandbox_ctx *ctx, char **err);

struct decoy_set;
/* --tripwires: the session's decoy credentials and their tokens (sandbox/decoys.h), or NULL. */
const struct decoy_set *sandbox_decoys(const struct sandbox *sb);
/*
 * Readable while the decoys' watch has findings waiting (-1: no watch);
 * sandbox_tripwire_drain emits them through the sandbox's sink (the caller's
 * thread). sandbox_reap emits what is left.
 */
int sandbox_tripwire_fd(const struct sandbox *sb);
void sandbox_tripwire_drain(struct sandbox *sb);

struct plan;
/*
 * Put the seccomp program compiled at build time for p->seccomp into p, and
 * the test suite's start hold from the caller's environment
 * (sandbox/seccomp-plan.c). 0, or -1 with *err.
 */
int sandbox_plan_seccomp(struct plan *p, char *const *environ, char **err);

#endif
