/*
 * sandbox/assemble.c — assembling a sandbox from the caller's side: a run-spec in, a
 * running boxy-init out.
 *
 * The work is split across two processes so that the part that runs inside
 * the namespaces is a fresh, small executable (boxy-init, init/main.c)
 * rather than a fork of whatever called us — the daemon, whose memory
 * holds other sessions. This file is the outside half:
 *
 *   1. resolve the run-spec into a plan (absolute paths, final environment,
 *      the caller's identity) and record what is decided before launch;
 *   2. clone into new user, mount, pid, ipc, uts and cgroup namespaces (the
 *      network namespace is boxy-init's first stage to make);
 *      the child waits until its uid/gid maps exist, raises its capabilities
 *      as ambient ones and execs boxy-init with the plan on fd 3 and a report
 *      pipe on fd 4;
 *   3. write the maps (the user mapped to itself, not to root), attach the
 *      child to the run's cgroup, release it, send the plan;
 *   4. read one report record: "ready", or the stage that failed and why.
 *
 * Nothing here exits, prints or keeps global state: it runs inside the
 * daemon (sandbox_start) and inside `boxy run --no-daemon` (sandbox_run). doc/internals-sandbox.md tells the
 * whole story, with the reasons for the order.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <linux/sched.h>

#include "sandbox/freeze.h"
#include "sandbox/memwatch.h"
#include "sandbox/limits.h"
#include "policy/decide.h"
#include "common/path-guard.h"
#include "init/plan.h"
#include "common/lang.h"
#include "common/protected.h"
#include "sandbox/env.h"
#include "init/stages.h"
#include "sandbox/assemble.h"
#include "sandbox/close-later.h"
#include "init/tap.h"
#include "common/buf.h"
#include "sandbox/gitcheck.h"
#include "spec/values.h"
#include "sandbox/decoys.h"
#include "sandbox/tripwatch.h"
#include "common/util.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* Where boxy-init finds its inputs: the fds the child places before execve. */
#define INIT_FD_PLAN   3
#define INIT_FD_REPORT 4
#define INIT_FD_EXE    5        /* boxy-init's own executable, O_CLOEXEC: gone after execve */

struct sandbox {
	pid_t pid;                  /* boxy-init, in the caller's pid namespace */
	int pidfd;                  /* refers to pid without reuse races; -1 if unavailable */
	int mntns;                  /* the sandbox's mount namespace, held until the reap: its
				     * teardown then happens in close_later, not in init's exit
				     * (sandbox_reap); -1 */
	bool exits_after;           /* ctx->exits_after */
	bool reaped;
	struct limits lim;
	bool have_limits;
	struct event_sink events;   /* copied: the caller's ctx need not outlive us */
	bool have_events;
	char *session;
	int start_code;             /* 125–127 when a stage failed, else 0 */
	char *start_err;            /* that stage's one line */
	int tap_fds[SANDBOX_NET_MAX_QUEUES];   /* tap0's queues, from stage 2 (networked runs) */
	unsigned ntap;
	struct gitcheck *git;       /* what the read-only binds cannot cover, checked after */
	struct memwatch *mw;        /* --memory's watchdog when no cgroup enforces it, or NULL */
	uint64_t memory;            /* the limit it watches */
	char mem_counted[32];       /* what it counted when it killed ("" when it did not) */
	uint64_t oom_kills;         /* processes the kernel killed past memory.max (a cgroup's) */
	int launch_rep;             /* boxy-init's report pipe until it has reported, or -1 */
	int launch_ctl;             /* the plan socket (tap0 comes back over it), or -1 */
	bool launch_net;            /* a networked run: tap0 arrives before "ready" */
	bool frozen_cgroup;         /* sandbox_freeze wrote 1 to the run's cgroup.freeze */
	bool frozen_sigstop;        /* sandbox_freeze swept with SIGSTOP */
	bool tap_taken;             /* tap0 was received (at the decoys' record or at "ready") */
	struct decoy_set decoys;    /* --tripwires: the session's decoy credentials (n 0: none) */
	struct tripwatch *trip;     /* their watch (sandbox/tripwatch.h), or NULL */
};

static int sandbox_refuse_wide(const struct plan *plan, const struct sandbox_ctx *ctx,
			       char **err);
static void sandbox_plan_decoys(struct sandbox *sb, struct plan *plan,
				const struct sandbox_ctx *ctx);
static int sandbox_take_decoys(struct sandbox *sb, char **err);
static int sandbox_recv_taps(struct sandbox *sb, char **err);
static int sandbox_refuse_protected(const char *path, const char *what, char **err);
static void sandbox_memwatch_begin(struct sandbox *sb, const struct runspec *rs);
static void sandbox_memwatch_end(struct sandbox *sb, char **err);
static void sandbox_kernel_oom(struct sandbox *sb, char **err);
static void sandbox_audit_freezer(const struct sandbox *sb, const struct sandbox_ctx *ctx);

/* Emit an audit event stamped with the session. */
static void sandbox_audit(const struct event_sink *sink, const char *session, const char *layer,
			  const char *verdict, const char *subject, const char *detail)
{
	struct event ev = event_audit_make(layer, verdict, subject, detail);

	ev.session = session;
	event_emit(sink, &ev);
}

/* ---- the plan ----------------------------------------------------------- */

/* Turn the run-spec into the plan boxy-init executes, resolved against the caller. */
static int sandbox_plan_resolve(const struct runspec *rs, const struct sandbox_ctx *ctx,
				struct plan *plan, char **err)
{
	struct landlock_info ll = { 0 };

	if (!rs->argv || !rs->argv[0] || !rs->argv[0][0])
		return set_err(err, _("no command to run"));
	if (!ctx->cwd || ctx->cwd[0] != '/')
		return set_err(err, _("the caller's working directory is unknown"));
	if (!ctx->home || ctx->home[0] != '/')
		return set_err(err, _("HOME is not an absolute path"));
	if (!ctx->user || !ctx->user[0])
		return set_err(err, _("the caller's user name is unknown"));
	if (ctx->uid == (uid_t)-1 || ctx->gid == (gid_t)-1)
		return set_err(err, _("the caller's uid or gid is unknown"));

	/* Made absolute once, by the client (runspec_finish); here only checked. */
	if (!path_is_normal(rs->workdir))
		return set_err(err, _("the work directory is not an absolute, normal path"));
	for (size_t i = 0; i < rs->nmounts; i++)
		if (!path_is_normal(rs->mounts[i].src) ||
		    (rs->mounts[i].dst && !path_is_normal(rs->mounts[i].dst)))
			return set_err(err, _("a mount is not an absolute, normal path"));

	plan->argv = strv_dup(rs->argv);
	plan->workdir = xstrdup(rs->workdir);
	plan->home = path_absolute(ctx->home, "/");
	plan->user = xstrdup(ctx->user);
	plan->hostname = xstrdup("boxy");
	plan->uid = (uint32_t)ctx->uid;
	plan->gid = (uint32_t)ctx->gid;
	plan->envp = env_build(ctx->environ, rs->env, rs->nenv, plan->home, plan->user,
			       ctx->tls_ca_pem != NULL);

	for (size_t i = 0; i < rs->nmounts; i++) {
		const struct mount_spec *m = &rs->mounts[i];
		struct mount_spec *pm = xappend(&plan->mounts, &plan->nmounts, sizeof(*pm));
		bool copy = m->kind == MOUNT_COPY || m->kind == MOUNT_COPY_RO;

		pm->kind = m->kind;
		pm->src = xstrdup(m->src);
		/* Only copies have a destination of their own; other mounts are at their source. */
		pm->dst = xstrdup(copy && m->dst ? m->dst : m->src);
	}
	if (sandbox_refuse_wide(plan, ctx, err) < 0)
		return -1;
	{
		/* Links planted in any tree a sandbox could write stay inside it (common/path-guard.h). */
		struct path_roots roots;

		path_roots_init(&roots);
		mounts_add_writable_roots(&roots, plan->workdir, plan->mounts, plan->nmounts);
		for (size_t i = 0; ctx->roots && i < ctx->roots->n; i++)
			path_roots_add(&roots, ctx->roots->v[i]);
		plan->roots = xcalloc(roots.n + 1, sizeof(char *));
		for (size_t i = 0; i < roots.n; i++)
			plan->roots[i] = roots.v[i];    /* moved, not copied */
		free(roots.v);
	}
	plan->allow_git_write = rs->allow_git_write;
	plan->net = rs->net;
	/* Only a networked run has a resolver to search with; the name is checked here so
	 * that a bad one is the caller's error, not a stage failure (plan_decode checks again). */
	if (ctx->dns_search && (rs->net == NET_PUBLIC || rs->net == NET_ALLOWLIST)) {
		char norm[DNS_NAME_BUF];

		if (dns_name_normalize(ctx->dns_search, strlen(ctx->dns_search), norm) < 0 ||
		    strcmp(norm, ctx->dns_search) != 0)
			return set_err(err, _("invalid DNS search domain"));
		plan->dns_search = xstrdup(norm);
	}
	/* TLS inspection: the sandbox trusts the session CA (init/mount.c, sandbox/env.c). */
	if (ctx->tls_ca_pem && (rs->net == NET_PUBLIC || rs->net == NET_ALLOWLIST)) {
		plan->tls_ca_pem = xstrdup(ctx->tls_ca_pem);
		plan->tls_ca_hash = xstrdup(ctx->tls_ca_hash ? ctx->tls_ca_hash : "");
	}
	plan->seccomp = rs->seccomp == SECCOMP_UNSET ? SECCOMP_STRICT : rs->seccomp;
	plan->tty = rs->tty;
	plan->foreground = ctx->foreground;
	plan->new_session = ctx->new_session;
	/* /tmp and $HOME are RAM: with --memory they share its bound, else a fixed one. */
	plan->tmpfs_size = rs->memory ? rs->memory : RUNSPEC_DEFAULT_TMPFS;
	/*
	 * The Landlock backstop filters TCP connect by port alone: in allowlist
	 * mode it gets the union of every port any permitted host may use (80,
	 * 443, --allow-port, each HOST:PORT) and 53; public and none restrict no
	 * port at this layer (the broker still decides every connection).
	 */
	{
		struct net_policy np;

		net_policy_from_runspec(&np, rs);
		plan->nports = net_policy_landlock_ports(&np, &plan->ports);
	}
	if (landlock_probe(&ll) < 0)
		ll.abi = 0;
	plan->landlock_abi = ll.abi;
	return 0;
}

/* Record the decisions made before launch (limits_prepare records the cgroup ones). */
static void sandbox_audit_plan(const struct plan *plan, const struct sandbox_ctx *ctx)
{
	const char *losses[32];
	size_t nlosses;
	char *d;

	if (plan->seccomp == SECCOMP_COMPAT)
		sandbox_audit(ctx->events, ctx->session, "seccomp", "degraded", "mode",
			      "--seccomp compat: calls outside the allowlist fail with EPERM "
			      "instead of killing the process; weaker by construction");
	else
		sandbox_audit(ctx->events, ctx->session, "seccomp", "info", "mode",
			      "strict: a call outside the allowlist kills the process");

	if (plan->landlock_abi <= 0) {
		sandbox_audit(ctx->events, ctx->session, "landlock", "degraded", "abi",
			      "Landlock is not available on this kernel: no filesystem or "
			      "port rules beyond the mount namespace");
	} else {
		d = xasprintf("Landlock ABI %d", plan->landlock_abi);
		sandbox_audit(ctx->events, ctx->session, "landlock", "info", "abi", d);
		free(d);
	}
	nlosses = landlock_losses(plan->landlock_abi, losses, ARRAY_SIZE(losses));
	for (size_t i = 0; i < nlosses && i < ARRAY_SIZE(losses); i++)
		sandbox_audit(ctx->events, ctx->session, "landlock", "degraded", "abi", losses[i]);

	if (plan->ndecoys) {
		struct wbuf w;

		wbuf_init(&w);
		for (size_t i = 0; i < plan->ndecoys; i++) {
			wbuf_put(&w, i ? ", ~/" : "~/", i ? 4 : 2);
			wbuf_put(&w, plan->decoys[i].path, strlen(plan->decoys[i].path));
		}
		wbuf_put(&w, "", 1);
		d = xasprintf("on: %zu decoy credentials in $HOME (%s) with tokens made for this "
			      "run; opening one, or sending a token out, raises a tripwire alert",
			      plan->ndecoys, (char *)w.p);
		sandbox_audit(ctx->events, ctx->session, "tripwire", "info", "decoys", d);
		free(d);
		wbuf_free(&w);
	} else {
		sandbox_audit(ctx->events, ctx->session, "tripwire", "info", "decoys",
			      "off: no decoy credentials in $HOME (--tripwires on, or the node, "
			      "python and claude presets, turn them on)");
	}

	if (plan->allow_git_write)
		sandbox_audit(ctx->events, ctx->session, "mount", "degraded", ".git",
			      "--allow-git-write: .git/hooks and .git/config are writable; "
			      "a hook planted there runs on the host at the next git command");
	else
		sandbox_audit(ctx->events, ctx->session, "mount", "info", ".git",
			      ".git/hooks, .git/config and config.worktree are read-only");
}

/* ---- launching ---------------------------------------------------------- */

/*
 * Open boxy-init before cloning: the one next to this executable when there is
 * one (a build tree, the tests), else the installed one. Opened O_PATH so the
 * child can execveat() it without a path lookup in whatever it has become.
 */
static int sandbox_init_open(char **err)
{
	char *dir = util_exe_dir();
	int fd = -1;

	if (dir) {
		char *path = xasprintf("%s/boxy-init", dir);

		if (access(path, X_OK) == 0)
			fd = open(path, O_PATH | O_CLOEXEC);
		free(path);
		free(dir);
	}
	if (fd < 0)
		fd = open(PKGLIBEXECDIR "/boxy-init", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return set_err_errno(err, _("cannot open %s"), PKGLIBEXECDIR "/boxy-init");
	return fd;
}

struct child_fds {
	int in, out, errfd;         /* the payload's stdio */
	int ctl;                    /* sync byte, then the plan: becomes fd 3 */
	int report;                 /* becomes fd 4 */
	int exe;                    /* boxy-init */
};

/*
 * A report record from the child before boxy-init runs. Async-signal-safe:
 * strerrordesc_np() only indexes a table, unlike strerror() it allocates
 * nothing and consults no locale.
 */
static void __attribute__((noreturn)) child_fail(int fd, const char *step, int errnum)
{
	char rec[PLAN_REPORT_MAX];
	const char *desc = strerrordesc_np(errnum);
	size_t n = 0;
	const char *parts[] = { "stage exec: ", step, ": ", desc ? desc : "unknown error" };

	rec[n++] = (char)EXIT_BOXY_FAILED;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		size_t l = strlen(parts[i]);

		if (l > sizeof(rec) - n)
			l = sizeof(rec) - n;
		memcpy(rec + n, parts[i], l);
		n += l;
	}
	if (write(fd, rec, n) < 0) {
		/* nothing left to tell: the parent reports EOF */
	}
	_exit(EXIT_BOXY_FAILED);
}

/* dup fd above the target range, keeping it close-on-exec; /dev/null when fd < 0. */
static int child_lift_fd(int fd)
{
	int r;

	if (fd < 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0)
			return -1;
		r = fcntl(null, F_DUPFD_CLOEXEC, 10);
		close(null);
		return r;
	}
	return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/*
 * The child between clone() and execve(): only async-signal-safe calls (this
 * is a copy of the caller's memory, and the caller must stay free to be
 * multi-threaded).
 */
static void __attribute__((noreturn)) child_exec(const struct child_fds *f)
{
	static const char *const argv[] = { "boxy-init", NULL };
	static const char *const envp[] = { NULL };
	int src[6] = { f->in, f->out, f->errfd, f->ctl, f->report, f->exe };
	int lifted[6];
	char go;
	ssize_t r;
	int rc;

	/* Die with the caller. Set before the sync read: a caller that died first shows as EOF. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(f->report, "prctl PR_SET_PDEATHSIG", errno);
	nofile_restore();       /* the daemon's raised limit is not the payload's */

	/* Wait until the parent has written our uid/gid maps: until then we are nobody. */
	do
		r = read(f->ctl, &go, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(EXIT_BOXY_FAILED);

	/*
	 * We hold every capability in the new user namespace, but execve() of a
	 * non-root uid would clear them. Ambient capabilities are the kernel's
	 * way of carrying them across; boxy-init drops them all after mounting.
	 */
	rc = caps_raise_ambient();
	if (rc < 0)
		child_fail(f->report, "raising ambient capabilities", -rc);

	/*
	 * Place stdio at 0–2, the plan at 3, the report at 4 and the executable at
	 * 5. Lift every source above 9 first so that no dup2() overwrites a
	 * source still to be placed, and so that dup2() always clears FD_CLOEXEC.
	 */
	for (int i = 0; i < 6; i++) {
		lifted[i] = child_lift_fd(src[i]);
		if (lifted[i] < 0)
			child_fail(f->report, "placing file descriptors", errno);
	}
	for (int i = 0; i < 5; i++) {
		if (dup2(lifted[i], i) < 0)
			child_fail(lifted[4], "placing file descriptors", errno);
	}
	if (dup3(lifted[5], INIT_FD_EXE, O_CLOEXEC) < 0)
		child_fail(INIT_FD_REPORT, "placing file descriptors", errno);
	/* Nothing of the caller's crosses into the sandbox but these six. */
	if (syscall(SYS_close_range, INIT_FD_EXE + 1, ~0U, 0) < 0)
		child_fail(INIT_FD_REPORT, "close_range", errno);

	syscall(SYS_execveat, INIT_FD_EXE, "", argv, envp, AT_EMPTY_PATH);
	child_fail(INIT_FD_REPORT, "execveat boxy-init", errno);
}

/* Write one /proc/PID/ file the way the kernel wants it: a single write(2). */
static int proc_write(pid_t pid, const char *file, const char *text, char **err)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return set_err_errno(err, _("opening %s"), path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		set_err_errno(err, _("writing %s"), path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * Map the user to itself. An unprivileged process may map only its own uid
 * and gid, and only one each; the gid map additionally needs setgroups
 * denied first (otherwise the child could drop a supplementary group that
 * is used to deny it access: CVE-2014-8989).
 */
static int sandbox_write_maps(pid_t pid, uid_t uid, gid_t gid, char **err)
{
	char map[64];

	if (proc_write(pid, "setgroups", "deny", err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (proc_write(pid, "uid_map", map, err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return proc_write(pid, "gid_map", map, err);
}

/* send() all of buf; never SIGPIPE. */
static int sandbox_send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Launch: plan, audit, limits, clone, maps, plan to boxy-init, read its report. */
/* Whether writable path p (resolved) is x or one of x's ancestors. */
static bool covers(const char *p, const char *x)
{
	return x && path_has_prefix(x, p);
}

/*
 * A writable mount of /, of the home directory or of one of its ancestors
 * would hand the payload the credentials and start-up files the sandbox
 * exists to keep from it (and the session store, whose records it could
 * then forge). Paths are resolved first, so a symlink to / is /.
 */
static int sandbox_refuse_wide(const struct plan *plan, const struct sandbox_ctx *ctx, char **err)
{
	char *home = realpath(plan->home, NULL), *state = NULL, *p;
	const char *xdg = NULL;
	int rc = 0;

	for (size_t i = 0; ctx->environ && ctx->environ[i]; i++)
		if (strncmp(ctx->environ[i], "XDG_STATE_HOME=/", 16) == 0)
			xdg = ctx->environ[i] + 15;
	state = xdg ? xasprintf("%s/boxy", xdg) : xasprintf("%s/.local/state/boxy", plan->home);
	for (size_t i = 0; i <= plan->nmounts && rc == 0; i++) {
		const char *path = i == 0 ? plan->workdir : plan->mounts[i - 1].src;
		const char *what = i == 0 ? "the work directory" : "--rw";

		if (i > 0 && plan->mounts[i - 1].kind != MOUNT_RW &&
		    plan->mounts[i - 1].kind != MOUNT_MKDIR)
			continue;
		if (sandbox_refuse_protected(path, what, err) < 0) {
			rc = -1;
			break;
		}
		p = realpath(path, NULL);
		if (!p)
			continue;       /* missing: skipped by the mount stage (mkdir creates it) */
		if (strcmp(p, "/") == 0 || covers(p, home) || covers(p, plan->home))
			rc = set_err(err, _("refusing to expose %s read-write as %s: it is or contains "
					    "your home directory, where credentials and shell start-up "
					    "files live; run from a project directory or pass -w one"),
				     path, what);
		else if (covers(p, state))
			rc = set_err(err, _("refusing to expose %s read-write as %s: it contains boxy's "
					    "session store (%s)"), path, what, state);
		free(p);
	}
	free(home);
	free(state);
	return rc;
}

/*
 * A missing mount source is skipped (a profile names files that may not
 * exist on every machine), but never silently: each skip is recorded.
 */
static void sandbox_audit_missing(const struct plan *plan, const struct sandbox_ctx *ctx)
{
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct mount_spec *m = &plan->mounts[i];
		struct stat st;
		char *why;

		if (m->kind == MOUNT_MKDIR || stat(m->src, &st) == 0 || errno != ENOENT)
			continue;
		why = xasprintf("--%s %s: the source does not exist; skipped",
				mount_kind_name(m->kind), m->src);
		sandbox_audit(ctx->events, ctx->session, "mount", "skipped", m->src, why);
		free(why);
	}
}

/*
 * How many queues tap0 gets, one boxy-net each (doc/internals-net.md,
 * "Queues"): one per two online CPUs (a transfer's sender and receiver
 * want cores too), at least one and at most SANDBOX_NET_QUEUES_AUTO; one
 * with --pcap (a capture is one file with one writer and one size cap).
 * BOXY_NET_QUEUES=N (1 to SANDBOX_NET_MAX_QUEUES) in the run's own
 * environment, as `boxy run` sent it, overrides that for the benches and the
 * test suite, as BOXY_HOLD_START_MS does; a bad value is ignored.
 */
static uint32_t sandbox_net_queues(const struct runspec *rs, char *const *environ)
{
	static const char key[] = "BOXY_NET_QUEUES=";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t n = cpus < 2 ? 1 : cpus / 2 > SANDBOX_NET_QUEUES_AUTO ? SANDBOX_NET_QUEUES_AUTO :
		     (uint32_t)(cpus / 2);

	if (rs->net != NET_PUBLIC && rs->net != NET_ALLOWLIST)
		return 0;
	for (size_t i = 0; environ && environ[i]; i++) {
		char *end;
		unsigned long v;

		if (strncmp(environ[i], key, sizeof(key) - 1) != 0)
			continue;
		v = strtoul(environ[i] + sizeof(key) - 1, &end, 10);
		if (*end == '\0' && v >= 1 && v <= SANDBOX_NET_MAX_QUEUES)
			n = (uint32_t)v;
	}
	return rs->pcap ? 1 : n;
}

/* The first half of sandbox_start: everything up to boxy-init's report; see sandbox/assemble.h. */
int sandbox_launch(const struct runspec *rs, const struct sandbox_ctx *ctx,
		   struct sandbox **out, char **err)
{
	struct sandbox *sb = xcalloc(1, sizeof(*sb));
	struct plan plan;
	char *buf = NULL;
	size_t len = 0;
	int exe = -1, ctl[2] = { -1, -1 }, rep[2] = { -1, -1 };
	sigset_t all, old;
	long pid;
	char go = 'g', nspath[48];
	int st;

	*out = NULL;
	sb->pid = -1;
	sb->pidfd = -1;
	sb->mntns = -1;
	sb->exits_after = ctx->exits_after;
	sb->ntap = 0;
	sb->launch_rep = sb->launch_ctl = -1;
	if (ctx->events) {
		sb->events = *ctx->events;
		sb->have_events = true;
	}
	sb->session = ctx->session ? xstrdup(ctx->session) : NULL;
	plan_init(&plan);

	if (sandbox_plan_resolve(rs, ctx, &plan, err) < 0)
		goto fail;
	if (rs->tripwires == ONOFF_ON)
		sandbox_plan_decoys(sb, &plan, ctx);
	sandbox_audit_plan(&plan, ctx);
	sandbox_audit_missing(&plan, ctx);
	sb->git = gitcheck_begin(&plan, ctx->exits_after);
	if (limits_prepare(rs, on_alert_may_freeze(rs->on_alert), &sb->lim, ctx->events, err) < 0)
		goto fail;
	sb->have_limits = true;
	if (sb->lim.pids_rlimit)
		plan.pids = rs->pids;
	if (sandbox_plan_seccomp(&plan, ctx->environ, err) < 0)
		goto fail;
	plan.net_queues = sandbox_net_queues(rs, ctx->environ);
	if (plan_encode(&plan, &buf, &len) < 0) {
		set_err(err, _("the sandbox's plan exceeds %u bytes"), PLAN_MAX_BYTES);
		goto fail;
	}
	exe = sandbox_init_open(err);
	if (exe < 0)
		goto fail;
	/* A socket, not a pipe: send(MSG_NOSIGNAL) cannot raise SIGPIPE in the caller. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(rep, O_CLOEXEC) < 0) {
		set_err_errno(err, _("creating the sandbox's pipes"));
		goto fail;
	}

	/*
	 * Block every signal around clone so that no handler of the caller's
	 * runs in the child before execve; boxy-init sets its own mask.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* Not CLONE_NEWNET: boxy-init makes the network namespace itself (its
	 * stage "net", init/main.c), off the daemon's loop. */
	pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
		      CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		struct child_fds f = {
			.in = ctx->stdin_fd, .out = ctx->stdout_fd, .errfd = ctx->stderr_fd,
			.ctl = ctl[1], .report = rep[1], .exe = exe,
		};

		child_exec(&f);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		set_err_errno(err, _("creating the sandbox's namespaces"));
		goto fail;
	}
	sb->pid = (pid_t)pid;
	sb->pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
	/*
	 * Init's exit would otherwise drop the mount namespace's last reference,
	 * and the kernel frees its mounts only after an RCU grace period
	 * (namespace_unlock): 0.05 ms on a quiet machine, tens of ms on a busy
	 * one, between the payload's exit and the reap. Held here, the teardown
	 * happens in close_later after the reap. The child has not exec'd yet
	 * (it waits for the go byte), so the namespace is its new one.
	 */
	snprintf(nspath, sizeof(nspath), "/proc/%d/ns/mnt", (int)sb->pid);
	sb->mntns = open(nspath, O_RDONLY | O_CLOEXEC);
	gitcheck_arm(sb->git, sb->pidfd);       /* the gitdir watch may stop it from now on */
	if (sb->decoys.n) {
		char *why = NULL;

		sb->trip = tripwatch_create(&sb->decoys, sb->pid, &why);
		if (!sb->trip) {
			char *d = xasprintf("the decoys cannot be watched (%s): an opened decoy goes "
					    "unnoticed; a token sent out is still found", why);

			sandbox_audit(ctx->events, ctx->session, "tripwire", "degraded", "decoys", d);
			free(d);
			free(why);
		}
	}
	close(ctl[1]);
	close(rep[1]);
	ctl[1] = rep[1] = -1;
	close(exe);
	exe = -1;

	if (sandbox_write_maps(sb->pid, ctx->uid, ctx->gid, err) < 0 ||
	    limits_attach(&sb->lim, sb->pid, err) < 0)
		goto kill;
	sandbox_audit_freezer(sb, ctx);
	if (send(ctl[0], &go, 1, MSG_NOSIGNAL) != 1) {
		set_err_errno(err, _("starting the sandbox"));
		goto kill;
	}
	if (sandbox_send_all(ctl[0], buf, len) < 0 || shutdown(ctl[0], SHUT_WR) < 0) {
		/* boxy-init died meanwhile: its report (or its silence) says why */
	}
	/*
	 * The child was woken on this CPU (a socket's wakeup is a "sync" one:
	 * the scheduler expects the waker to sleep), and the caller goes on to
	 * write the session's rows: on two busy CPUs the child waited for them,
	 * 0.7-1.2 ms (perf: the go byte to the child's first system call).
	 * Yield once, so that it runs now and the rows fill the gaps after.
	 */
	sched_yield();
	gitcheck_watch(sb->git);        /* its marks were set before the clone */

	/* boxy-init assembles the sandbox now; its report is read by sandbox_launch_report. */
	sb->launch_rep = rep[0];
	sb->launch_ctl = ctl[0];
	sb->launch_net = plan.net == NET_PUBLIC || plan.net == NET_ALLOWLIST;
	rep[0] = ctl[0] = -1;
	free(buf);
	plan_free(&plan);
	*out = sb;
	return 0;

kill:
	kill(sb->pid, SIGKILL);
	while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
		;
	sb->reaped = true;
fail:
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	if (exe >= 0)
		close(exe);
	free(buf);
	plan_free(&plan);
	sandbox_free(sb);
	return -1;
}

/* The report pipe while boxy-init assembles the sandbox; see sandbox/assemble.h. */
int sandbox_launch_fd(const struct sandbox *sb)
{
	return sb->launch_rep;
}

/* Take boxy-init's report, once the pipe is readable; see sandbox/assemble.h. */
int sandbox_launch_report(struct sandbox *sb, const struct runspec *rs, char **err)
{
	char rec[PLAN_REPORT_MAX + 1];
	ssize_t n;

	if (sb->launch_rep < 0)
		return set_err(err, "the sandbox's report was taken already");
	/*
	 * boxy-init writes its one record with one write() of at most
	 * PLAN_REPORT_MAX (≤ PIPE_BUF) bytes, so one read takes it whole. Not
	 * waiting for the EOF behind it: anything still holding the pipe's write
	 * end (a process forked meanwhile) would keep the start waiting for it.
	 */
	n = read(sb->launch_rep, rec, PLAN_REPORT_MAX);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n == 2 && (uint8_t)rec[0] == PLAN_REPORT_DECOYS && sb->decoys.n) {
		/* The decoys are written; boxy-init waits for their watch before going on. */
		if (sandbox_take_decoys(sb, err) == 0)
			return 1;
		close(sb->launch_rep);
		close(sb->launch_ctl);
		sb->launch_rep = sb->launch_ctl = -1;
		kill(sb->pid, SIGKILL);
		sb->start_code = EXIT_BOXY_FAILED;
		sb->start_err = xasprintf("stage decoys: %s", err && *err ? *err : "hand-over failed");
		return -1;
	}
	close(sb->launch_rep);
	sb->launch_rep = -1;
	if (n > 0 && (uint8_t)rec[0] == PLAN_REPORT_READY && sb->start_code) {
		/* Ready, but the start was given up meanwhile (sandbox_launch_abort, which
		 * killed boxy-init): a failed start like any other, with its line. */
		close(sb->launch_ctl);
		sb->launch_ctl = -1;
		set_err(err, "%s", sb->start_err);
		return -1;
	}
	if (n > 0 && (uint8_t)rec[0] == PLAN_REPORT_READY) {
		/* Stage "net" sent tap0 back over the plan socket before reporting ready
		 * (taken already when the daemon's network started early: sandbox_taps_receive). */
		if (sb->launch_net && !sb->tap_taken) {
			if (sandbox_recv_taps(sb, err) < 0) {
				close(sb->launch_ctl);
				sb->launch_ctl = -1;
				kill(sb->pid, SIGKILL);
				sb->start_code = EXIT_BOXY_FAILED;
				sb->start_err = xstrdup(err && *err ? *err : "receiving tap0");
				return -1;
			}
		}
		close(sb->launch_ctl);
		sb->launch_ctl = -1;
		sandbox_memwatch_begin(sb, rs);
		return 0;
	}
	close(sb->launch_ctl);
	sb->launch_ctl = -1;
	/* A failed start: the caller reaps boxy-init, then sandbox_launch_reaped. */
	sb->start_code = EXIT_BOXY_FAILED;
	if (n > 0) {
		uint8_t code = (uint8_t)rec[0];

		rec[n] = '\0';
		sb->start_code = code >= 125 && code <= 127 ? code : EXIT_BOXY_FAILED;
		free(sb->start_err);        /* boxy-init's own line is the truth */
		sb->start_err = xstrndup(rec + 1, strcspn(rec + 1, "\n"));
		set_err(err, "%s", sb->start_err);
	}
	return -1;
}

/* A failed start's boxy-init was reaped with wait status st; see sandbox/assemble.h. */
void sandbox_launch_reaped(struct sandbox *sb, int st, char **err)
{
	sb->reaped = true;
	if (!sb->start_code)
		sb->start_code = EXIT_BOXY_FAILED;
	if (!sb->start_err) {
		/* No record: boxy-init could not be executed, or crashed before reporting. */
		if (WIFSIGNALED(st))
			sb->start_err = xasprintf(_("stage init: boxy-init was killed by signal %d "
						    "before reporting"), WTERMSIG(st));
		else
			sb->start_err = xasprintf(_("stage init: boxy-init exited with status %d "
						    "before reporting"), WEXITSTATUS(st));
	}
	set_err(err, "%s", sb->start_err);
	if (sb->have_limits)
		limits_release(&sb->lim);
	sb->have_limits = false;
}

/* Launch, then wait for the report here; see sandbox/assemble.h. */
int sandbox_start(const struct runspec *rs, const struct sandbox_ctx *ctx,
		  struct sandbox **out, char **err)
{
	struct sandbox *sb;
	int rc, st = 0;

	if (sandbox_launch(rs, ctx, out, err) < 0)
		return -1;
	sb = *out;
	/* The pipe is blocking here: the read waits for the record (or the EOF). */
	while ((rc = sandbox_launch_report(sb, rs, err)) > 0)
		;
	if (rc == 0)
		return 0;
	while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
		;
	sandbox_launch_reaped(sb, st, err);
	return -1;
}

/*
 * How an alert would freeze this run, for the audit log and boxy show (only
 * for a run whose --on-alert may freeze): which freezer, and where.
 */
static void sandbox_audit_freezer(const struct sandbox *sb, const struct sandbox_ctx *ctx)
{
	char *words;

	if (!sb->lim.want_freeze)
		return;
	if (sb->lim.freeze_dir)
		words = xasprintf(_("an alert that freezes this run takes every process of the sandbox "
				    "with the cgroup freezer (%s/cgroup.freeze)"), sb->lim.freeze_dir);
	else
		words = xasprintf(_("an alert that freezes this run stops every process of the "
				    "sandbox with SIGSTOP, swept until none runs: no cgroup of its own "
				    "(%s)"), sb->lim.why_no_freeze ? sb->lim.why_no_freeze : "?");
	sandbox_audit(ctx->events, ctx->session, "react", "info", "freezer", words);
	free(words);
}

/* Is one of boxy-init's control signals (init/plan.h) still pending, unread? */
static bool sandbox_ctl_pending(const struct sandbox *sb)
{
	char path[48], *text = NULL, *line;
	unsigned long long mask = 0, want;
	size_t len;
	bool yes = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)sb->pid);
	if (read_file(path, 64 << 10, &text, &len) < 0)
		return false;
	want = (1ULL << (PLAN_SIG_FREEZE - 1)) | (1ULL << (PLAN_SIG_THAW - 1));
	for (line = text; line && !yes; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if ((strncmp(line, "ShdPnd:", 7) == 0 || strncmp(line, "SigPnd:", 7) == 0) &&
		    sscanf(line + 7, "%llx", &mask) == 1)
			yes = (mask & want) != 0;
	free(text);
	return yes;
}

/*
 * Tell boxy-init sig (PLAN_SIG_FREEZE or THAW). Real-time signals are taken
 * lowest first, not in the order sent: a thaw and the freeze right behind it
 * (a resume whose released query raised the next alert) would be read thaw
 * last. So the previous one is given up to 20 ms to be read first.
 */
static void sandbox_tell_init(struct sandbox *sb, int sig)
{
	for (int i = 0; i < 200 && sandbox_ctl_pending(sb); i++)
		usleep(100);
	sandbox_signal(sb, sig);
}

/* Freeze every process of the sandbox; see sandbox/assemble.h. */
int sandbox_freeze(struct sandbox *sb, struct freeze_report *rep, char **err)
{
	char *why = NULL;
	int rc;

	if (sb->reaped || sb->pid <= 0)
		return set_err(err, "the sandbox has ended");
	if (sb->lim.freeze_dir) {
		sb->frozen_cgroup = true;
		if (freeze_cgroup(sb->lim.freeze_dir, true, FREEZE_TIMEOUT_US, rep, &why) == 0)
			return 0;
		/* A freezer that failed (or is still waiting on a task) gets SIGSTOP on top. */
	}
	/* boxy-init first: from its next read on it passes no SIGCONT on (init/plan.h). */
	sb->frozen_sigstop = true;
	sandbox_tell_init(sb, PLAN_SIG_FREEZE);
	rc = freeze_sigstop(sb->pid, FREEZE_TIMEOUT_US, rep, err);
	if (rc == 0 && why)
		rep->how = "SIGSTOP (the cgroup freezer failed)";
	else if (rc < 0 && why) {
		char *both = xasprintf("%s; %s", why, *err);

		free(*err);
		*err = both;
	}
	free(why);
	return rc;
}

/* Let the processes go again; see sandbox/assemble.h. */
int sandbox_thaw(struct sandbox *sb, char **err)
{
	struct freeze_report rep;
	int rc = 0;

	if (sb->reaped || sb->pid <= 0)
		return set_err(err, "the sandbox has ended");
	if (sb->frozen_sigstop) {
		freeze_sigcont(sb->pid);
		sandbox_tell_init(sb, PLAN_SIG_THAW);
		sb->frozen_sigstop = false;
	}
	if (sb->frozen_cgroup) {
		rc = freeze_cgroup(sb->lim.freeze_dir, false, 0, &rep, err);
		sb->frozen_cgroup = false;
	}
	return rc;
}

/* Init's pid in the caller's namespace (-1 before launch). */
pid_t sandbox_pid(const struct sandbox *sb)
{
	return sb->pid;
}

/* Send sig to init, which forwards it to the payload. */
int sandbox_signal(struct sandbox *sb, int sig)
{
	if (sb->reaped || sb->pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	/* Through the pidfd when we have one: a reaped pid could be someone else's by now. */
	if (sb->pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, sb->pidfd, sig, NULL, 0);
	return kill(sb->pid, sig);
}

void sandbox_kill(struct sandbox *sb)
{
	/* SIGKILL is the one signal a pid namespace's init cannot refuse from its parent
	 * namespace, and when init dies the kernel kills every process in the namespace. */
	sandbox_signal(sb, SIGKILL);
}

/* Init exited with wait status `status`: release the cgroup and turn it into an exit code. */
int sandbox_reap(struct sandbox *sb, int status, char **err)
{
	const struct event_sink *events = sb->have_events ? &sb->events : NULL;
	int code;

	if (sb->start_code) {
		set_err(err, "%s", sb->start_err);
		return sb->start_code;
	}
	sb->reaped = true;
	if (sb->mntns >= 0) {
		close_later(sb->mntns, sb->exits_after);        /* see sandbox_launch */
		sb->mntns = -1;
	}
	/* Every process is gone: what the decoys' watch saw last, and its counts. */
	tripwatch_stop(sb->trip, events, sb->session);
	sb->trip = NULL;
	sandbox_memwatch_end(sb, err);
	sandbox_kernel_oom(sb, err);
	if (sb->have_limits) {
		limits_release(&sb->lim);
		sb->have_limits = false;
	}
	/* Every process of the sandbox is gone now: nothing races the check. */
	gitcheck_end(sb->git, events);
	gitcheck_free(sb->git);
	sb->git = NULL;
	if (WIFEXITED(status)) {
		code = WEXITSTATUS(status);
		/* boxy-init exits 128+N when the payload died of signal N. */
		if (code == 128 + SIGSYS)
			sandbox_audit(events, sb->session, "seccomp", "deny", "payload",
				      "the payload was killed by the seccomp filter (SIGSYS): a "
				      "system call outside the allowlist, which boxy cannot name "
				      "(doc/seccomp.md); under --seccomp compat it fails with EPERM "
				      "and the payload's own error names it (to allow it: --seccomp "
				      "compat)");
		return code;
	}
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGSYS)
			sandbox_audit(events, sb->session, "seccomp", "deny", "boxy-init",
				      "the sandbox's init was killed by the seccomp filter");
		return 128 + WTERMSIG(status);
	}
	return EXIT_BOXY_FAILED;
}

/* Free sb (does not kill: call sandbox_kill() and reap first if it may be running). */
void sandbox_free(struct sandbox *sb)
{
	if (!sb)
		return;
	for (unsigned i = 0; i < sb->ntap; i++)
		close(sb->tap_fds[i]);
	if (sb->launch_rep >= 0)
		close(sb->launch_rep);
	if (sb->launch_ctl >= 0)
		close(sb->launch_ctl);
	memwatch_stop(sb->mw, NULL);
	tripwatch_stop(sb->trip, NULL, NULL);
	decoys_free(&sb->decoys);
	if (sb->have_limits)
		limits_release(&sb->lim);
	if (sb->pidfd >= 0)
		close(sb->pidfd);
	if (sb->mntns >= 0)
		close(sb->mntns);
	gitcheck_free(sb->git);
	free(sb->session);
	free(sb->start_err);
	free(sb);
}

/* ---- the direct path ---------------------------------------------------- */

/* Wait for init to exit; returns its wait status, or -1 when waiting failed. */
static int sandbox_wait(struct sandbox *sb, const struct runspec *rs,
			const struct sandbox_ctx *ctx, int sfd, bool *timed_out)
{
	uint64_t deadline = rs->timeout_ms ? now_mono_ms() + rs->timeout_ms : 0;
	int st;

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = sandbox_tripwire_fd(sb), .events = POLLIN },
			{ .fd = sb->pidfd, .events = POLLIN },
		};
		int timeout = -1;
		pid_t w;

		if (sb->pidfd < 0)
			timeout = 100;          /* no pidfd: look every 100ms */
		if (deadline && !*timed_out) {
			uint64_t now = now_mono_ms();
			uint64_t left = deadline > now ? deadline - now : 0;

			if (timeout < 0 || left < (uint64_t)timeout)
				timeout = left > INT32_MAX ? INT32_MAX : (int)left;
		}
		if (poll(pfd, sb->pidfd >= 0 ? 3 : 2, timeout) < 0 && errno != EINTR)
			return -1;
		if (pfd[1].revents & POLLIN)
			sandbox_tripwire_drain(sb);

		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				sandbox_signal(sb, (int)si.ssi_signo);
		}
		if (deadline && !*timed_out && now_mono_ms() >= deadline) {
			char *d = xasprintf("--timeout of %llums reached: every process of the "
					    "sandbox was killed",
					    (unsigned long long)rs->timeout_ms);

			sandbox_audit(ctx->events, ctx->session, "limits", "deny", "timeout", d);
			free(d);
			sandbox_kill(sb);
			*timed_out = true;
		}
		w = waitpid(sb->pid, &st, WNOHANG);
		if (w == sb->pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
	}
}

/* Give the terminal's foreground back to the caller: the payload took it. */
static void sandbox_restore_foreground(const struct sandbox_ctx *ctx)
{
	sigset_t ttou, old;

	if (!ctx->foreground || !isatty(ctx->stdin_fd))
		return;
	/* A background process may take the terminal only with SIGTTOU blocked. */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(ctx->stdin_fd, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The direct path: start, forward signals, enforce the timeout, reap. */
int sandbox_run(const struct runspec *rs, const struct sandbox_ctx *ctx, char **err)
{
	struct sandbox *sb = NULL;
	sigset_t fwd, old;
	bool timed_out = false;
	int sfd, st, code;

	/*
	 * The signals a user sends to `boxy run` are meant for the payload. Take
	 * them through a signalfd for the duration of the run and pass them to
	 * init, which forwards them; the previous mask comes back at the end.
	 */
	sigemptyset(&fwd);
	sigaddset(&fwd, SIGINT);
	sigaddset(&fwd, SIGTERM);
	sigaddset(&fwd, SIGHUP);
	sigaddset(&fwd, SIGQUIT);
	sigprocmask(SIG_BLOCK, &fwd, &old);
	sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		set_err_errno(err, "signalfd");
		sigprocmask(SIG_SETMASK, &old, NULL);
		return EXIT_BOXY_FAILED;
	}

	if (sandbox_start(rs, ctx, &sb, err) < 0) {
		code = sb ? sandbox_reap(sb, 0, NULL) : EXIT_BOXY_FAILED;
		goto out;
	}
	st = sandbox_wait(sb, rs, ctx, sfd, &timed_out);
	if (st < 0) {
		set_err_errno(err, _("waiting for the sandbox"));
		sandbox_kill(sb);
		while (waitpid(sandbox_pid(sb), &st, 0) < 0 && errno == EINTR)
			;
		code = EXIT_BOXY_FAILED;
		sandbox_reap(sb, st, NULL);
	} else {
		code = sandbox_reap(sb, st, err);
		if (timed_out)
			code = 124;     /* as timeout(1) */
	}
	sandbox_restore_foreground(ctx);

out:
	{
		/* Drop what was forwarded or arrived too late, so that restoring the
		 * mask does not deliver it to the caller after the run. */
		struct signalfd_siginfo si;

		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
	}
	close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	sandbox_free(sb);
	return code;
}

/* The plan socket while tap0 is on its way; see sandbox/assemble.h. */
int sandbox_taps_fd(const struct sandbox *sb)
{
	return sb->launch_net && !sb->tap_taken ? sb->launch_ctl : -1;
}

/* Take tap0 as soon as it has come, during the launch; see sandbox/assemble.h. */
int sandbox_taps_receive(struct sandbox *sb, char **err)
{
	if (!sb->launch_net || sb->tap_taken)
		return 0;
	if (sb->launch_ctl < 0)
		return set_err(err, "the sandbox's plan socket is closed");
	return sandbox_recv_taps(sb, err);
}

/* Give up a launch from outside, with why as its line; see sandbox/assemble.h. */
void sandbox_launch_abort(struct sandbox *sb, const char *why)
{
	if (!sb->start_code) {
		sb->start_code = EXIT_BOXY_FAILED;
		free(sb->start_err);
		sb->start_err = xstrdup(why);
	}
	sandbox_kill(sb);
}

size_t sandbox_take_taps(struct sandbox *sb, int *fds, size_t max)
{
	size_t n = 0;

	for (unsigned i = 0; i < sb->ntap; i++) {
		if (n < max)
			fds[n++] = sb->tap_fds[i];
		else
			close(sb->tap_fds[i]);
	}
	sb->ntap = 0;
	return n;
}

/*
 * path resolved as far as it exists: the deepest existing ancestor through
 * realpath, the missing rest appended as written (a --mkdir creates it).
 */
static char *sandbox_resolve_partial(const char *path)
{
	char *abs = path_absolute(path, "/"), *cut, *real, *out;

	for (cut = abs + strlen(abs);; ) {
		char saved = *cut;

		*cut = '\0';
		real = realpath(abs[0] ? abs : "/", NULL);
		*cut = saved;
		if (real)
			break;
		while (cut > abs && *--cut != '/')
			;
		if (cut == abs) {
			real = xstrdup("/");
			break;
		}
	}
	out = *cut ? xasprintf("%s%s", strcmp(real, "/") == 0 ? "" : real, cut) : xstrdup(real);
	free(real);
	free(abs);
	return out;
}

/*
 * A writable mount over the daemon's own store, log, lock or socket
 * directory (common/protected.h: as the daemon knows them, not as the client says)
 * would let the payload delete the session records or take the socket over.
 */
static int sandbox_refuse_protected(const char *path, const char *what, char **err)
{
	char *p = sandbox_resolve_partial(path);
	const char *dir = protected_find_conflict(p);
	int rc = 0;

	if (dir)
		rc = set_err(err, _("refusing to expose %s read-write as %s: it is, contains or lies "
				    "inside %s, where the boxy daemon keeps its session store, log "
				    "and socket"), path, what, dir);
	free(p);
	return rc;
}

/* ---- the memory watchdog ------------------------------------------------ */

/* --memory with no cgroup behind it: start the watchdog (sandbox/memwatch.c) on the running sandbox. */
static void sandbox_memwatch_begin(struct sandbox *sb, const struct runspec *rs)
{
	const struct event_sink *events = sb->have_events ? &sb->events : NULL;
	char *why = NULL, *d;
	locale_t old;

	if (!rs->memory || sb->lim.memory_enforced)
		return;
	sb->memory = rs->memory;
	old = lang_use(lang_records());     /* a record: worded in C (common/lang.h) */
	if (memwatch_start(sb->pid, rs->memory, &sb->mw, &why) < 0) {
		d = xasprintf(_("--memory is not enforced after all: %s"), why);
		sandbox_audit(events, sb->session, "cgroup", "degraded", "memory", d);
		free(d);
		free(why);
	}
	lang_use(old);
}

char *sandbox_exit_words(const struct sandbox *sb)
{
	char lim[32];

	if (sb && sb->oom_kills) {
		format_size(sb->lim.memory, lim, sizeof(lim));
		return xasprintf(_("memory limit reached: the kernel ended the sandbox at --memory "
				   "%s"), lim);
	}
	if (!sb || !sb->mem_counted[0])
		return NULL;
	format_size(sb->memory, lim, sizeof(lim));
	return xasprintf(_("memory limit exceeded (watchdog, %d ms samples): %s counted, --memory "
			   "%s; the sandbox was killed"), MEMWATCH_SLOW_MS, sb->mem_counted, lim);
}

/* The sandbox exited: stop the watchdog and record what it saw, or that it killed. */
static void sandbox_memwatch_end(struct sandbox *sb, char **err)
{
	const struct event_sink *events = sb->have_events ? &sb->events : NULL;
	struct memwatch_report r;
	char lim[32], tot[32], procs[32], tmpfs[32], memfd[32], sysv[32], peak[32], *d;
	locale_t old;

	if (!sb->mw)
		return;
	memwatch_stop(sb->mw, &r);
	sb->mw = NULL;
	old = lang_use(lang_records());     /* records, and the failure as recorded: C */
	format_size(sb->memory, lim, sizeof(lim));
	format_size(r.peak, peak, sizeof(peak));
	if (!r.killed) {
		d = xasprintf(_("memory watchdog: %llu samples, at most %s counted of --memory %s, "
				"slowest sample %llu us, slowest memfd pass %llu us, %zu tmpfs "
				"watched%s%s"),
			      (unsigned long long)r.samples, peak, lim,
			      (unsigned long long)r.slowest_us,
			      (unsigned long long)r.fdscan_slowest_us, r.ntmpfs,
			      r.tmpfs_skipped ? _(" (some could not be opened: not counted)") : "",
			      r.sysv_lost ? _("; SysV shared memory could not be counted") : "");
		sandbox_audit(events, sb->session, "limits", "info", "memory", d);
		free(d);
		lang_use(old);
		return;
	}
	format_size(memwatch_usage_total(&r.at_kill), tot, sizeof(tot));
	format_size(r.at_kill.procs, procs, sizeof(procs));
	format_size(r.at_kill.tmpfs, tmpfs, sizeof(tmpfs));
	format_size(r.at_kill.memfd, memfd, sizeof(memfd));
	format_size(r.at_kill.sysv, sysv, sizeof(sysv));
	d = xasprintf(_("memory limit exceeded (watchdog, %d ms samples): %s counted (%s in %llu "
			"processes, %s on tmpfs, %s in memfds, %s SysV shared) > --memory %s; "
			"every process of the sandbox was killed (exit 137)"),
		      MEMWATCH_SLOW_MS, tot, procs, (unsigned long long)r.at_kill.nprocs, tmpfs, memfd,
		      sysv, lim);
	sandbox_audit(events, sb->session, "limits", "deny", "memory", d);
	free(d);
	snprintf(sb->mem_counted, sizeof(sb->mem_counted), "%s", tot);
	if (err) {
		free(*err);
		*err = sandbox_exit_words(sb);
	}
	lang_use(old);
}

/* The kernel enforced --memory (a cgroup's memory.max) and killed: recorded, and the end's words. */
static void sandbox_kernel_oom(struct sandbox *sb, char **err)
{
	const struct event_sink *events = sb->have_events ? &sb->events : NULL;
	char lim[32], *d;
	locale_t old;

	if (!sb->have_limits || (sb->oom_kills = limits_oom_kills(&sb->lim)) == 0)
		return;
	old = lang_use(lang_records());     /* the record, and the failure as recorded: C */
	format_size(sb->lim.memory, lim, sizeof(lim));
	d = xasprintf(_("memory limit reached: past memory.max = %s the kernel killed the sandbox "
			"(memory.events counts %llu OOM kills; memory.oom.group ends every process "
			"of the run, exit 137)"), lim, (unsigned long long)sb->oom_kills);
	sandbox_audit(events, sb->session, "limits", "deny", "memory", d);
	free(d);
	if (err) {
		free(*err);
		*err = sandbox_exit_words(sb);
	}
	lang_use(old);
}

int sandbox_gitcheck_start(struct sandbox *sb)
{
	return sb->start_code ? -1 : gitcheck_end_start(sb->git);
}

/* tap0's queues, sent by stage "net" over the plan socket: received once. */
static int sandbox_recv_taps(struct sandbox *sb, char **err)
{
	int got = sandbox_net_recv_fds(sb->launch_ctl, sb->tap_fds, SANDBOX_NET_MAX_QUEUES, err);

	sb->ntap = got > 0 ? (unsigned)got : 0;
	if (got < 0)
		return -1;
	sb->tap_taken = true;
	return 0;
}

/* ---- tripwires -------------------------------------------------------------- */

/* --tripwires on: the session's decoys, made here and kept for the detectors, into the plan. */
static void sandbox_plan_decoys(struct sandbox *sb, struct plan *plan,
				const struct sandbox_ctx *ctx)
{
	decoys_make(&sb->decoys, ctx->user, (int64_t)(now_real_ms() / 1000));
	plan->decoys = xcalloc(sb->decoys.n, sizeof(*plan->decoys));
	for (size_t i = 0; i < sb->decoys.n && i < PLAN_DECOYS_MAX; i++) {
		const struct decoy *d = &sb->decoys.v[i];

		plan->decoys[i] = (struct plan_decoy){
			xstrdup(d->path), xstrdup(d->content), d->mode, d->mtime,
		};
		plan->ndecoys++;
	}
}

/*
 * boxy-init's PLAN_REPORT_DECOYS: take tap0 first when it is on its way (it
 * was sent before), then the decoys' descriptors, start their watch, and let
 * boxy-init go on. A malformed hand-over fails the start.
 */
static int sandbox_take_decoys(struct sandbox *sb, char **err)
{
	uint8_t msg[2 + PLAN_DECOYS_MAX];
	int fds[1 + PLAN_DECOYS_MAX];
	size_t got = 0, nfd = 0;
	bool seen[PLAN_DECOYS_MAX] = { false };
	char ack = 'A', *note = NULL;
	int rc = -1;

	if (sb->launch_net && !sb->tap_taken && sandbox_recv_taps(sb, err) < 0)
		return -1;
	while (got < 2 || got < 2u + msg[1]) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int) * (1 + PLAN_DECOYS_MAX))];
		} ctl;
		struct iovec iov = { .iov_base = msg + got,
				     .iov_len = (got < 2 ? 2 + PLAN_DECOYS_MAX : 2u + msg[1]) - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf) };
		ssize_t r;

		do
			r = recvmsg(sb->launch_ctl, &mh, MSG_CMSG_CLOEXEC);
		while (r < 0 && errno == EINTR);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); r > 0 && c; c = CMSG_NXTHDR(&mh, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int in[1 + PLAN_DECOYS_MAX];

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
			    k > ARRAY_SIZE(in))
				continue;
			memcpy(in, CMSG_DATA(c), k * sizeof(int));
			for (size_t j = 0; j < k; j++) {
				if (nfd < ARRAY_SIZE(fds))
					fds[nfd++] = in[j];
				else
					close(in[j]);
			}
		}
		if (r <= 0 || (mh.msg_flags & MSG_CTRUNC) || msg[0] != 'D' ||
		    msg[1] > PLAN_DECOYS_MAX) {
			set_err(err, "the decoys' descriptors did not come");
			goto out;
		}
		got += (size_t)r;
	}
	if (nfd != 1u + msg[1]) {
		set_err(err, "%zu descriptors for %u decoys", nfd, msg[1]);
		goto out;
	}
	for (size_t i = 0; i < msg[1]; i++) {
		size_t idx = msg[2 + i];

		if (idx >= sb->decoys.n || seen[idx]) {
			set_err(err, "decoy %zu handed over twice, or unknown", idx);
			goto out;
		}
		seen[idx] = true;
	}
	for (size_t i = 0; i < msg[1]; i++) {
		int fd = fds[1 + i];

		fds[1 + i] = -1;
		if (sb->trip && tripwatch_adopt(sb->trip, msg[2 + i], fd, err) < 0)
			goto out;
		if (!sb->trip)
			close(fd);
	}
	if (sb->trip) {
		if (tripwatch_start(sb->trip, &note, err) < 0)
			goto out;
	}
	if (note) {
		sandbox_audit(sb->have_events ? &sb->events : NULL, sb->session, "tripwire",
			      "degraded", "decoys", note);
		free(note);
	}
	if (send(fds[0], &ack, 1, MSG_NOSIGNAL) != 1) {
		set_err_errno(err, "letting the sandbox go on");
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < nfd; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

const struct decoy_set *sandbox_decoys(const struct sandbox *sb)
{
	return sb->decoys.n ? &sb->decoys : NULL;
}

int sandbox_tripwire_fd(const struct sandbox *sb)
{
	return tripwatch_fd(sb->trip);
}

void sandbox_tripwire_drain(struct sandbox *sb)
{
	tripwatch_drain(sb->trip, sb->have_events ? &sb->events : NULL, sb->session);
}
