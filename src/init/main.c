/*
 * init/main.c — boxy-init, stage 2 of a sandbox: PID 1 of its pid
 * namespace.
 *
 * sandbox/assemble.c clones the namespaces and execs this small program with an empty
 * environment, the payload's stdio on 0–2, the encoded plan on fd 3 and a
 * report pipe on fd 4. It holds every capability of its own user namespace
 * (carried across execve as ambient capabilities) and spends them, in order,
 * on building the sandbox: hostname, loopback, resource limits, the root
 * filesystem; then it gives them all up, applies Landlock and seccomp, tells
 * the parent "ready" and forks the payload.
 *
 * It then stays resident as the namespace's init rather than exec'ing the
 * payload in its place, for two reasons the kernel imposes: a signal sent
 * from outside to a pid namespace's init is discarded unless init handles
 * it (most programs do not handle SIGTERM), so `boxy stop` would do nothing;
 * and orphans are reparented to init, whose zombies would hold pids and
 * count against --pids unless init reaps them.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "init/plan.h"
#include "init/tap.h"
#include "init/seccomp-prog.h"
#include "init/stages.h"
#include "common/util.h"

#define FD_PLAN   3
#define FD_REPORT 4

extern char **environ;

/* A sanitizer build does without leak checks here: common/no-leak-check.c. */

/* The signals init passes on to the payload (and SIGCHLD, which it handles itself). */
static const int init_forwarded[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT,
};

/* Write the one report record to the parent: status byte, then text. */
static void init_report(uint8_t status, const char *text)
{
	char rec[PLAN_REPORT_MAX];
	size_t n = strlen(text);

	if (n > sizeof(rec) - 1)
		n = sizeof(rec) - 1;
	rec[0] = (char)status;
	memcpy(rec + 1, text, n);
	if (write(FD_REPORT, rec, n + 1) < 0) {
		/* the parent is gone; nobody is left to tell */
	}
}

/* Report "stage NAME: reason" and exit 125. */
static void __attribute__((noreturn)) init_fail(const char *stage, const char *reason)
{
	char *line = xasprintf("stage %s: %s", stage, reason ? reason : "failed");

	init_report(EXIT_BOXY_FAILED, line);
	free(line);
	_exit(EXIT_BOXY_FAILED);
}

/* Read and decode the plan from fd 3, bounded by PLAN_MAX_BYTES. */
static void init_read_plan(struct plan *plan)
{
	size_t cap = 65536, len = 0;
	char *buf = xmalloc(cap);
	char *err = NULL;

	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap > PLAN_MAX_BYTES)
				init_fail("plan", "larger than the maximum");
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(FD_PLAN, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			init_fail("plan", strerror(errno));
		if (r == 0)
			break;
		len += (size_t)r;
	}
	/* FD_PLAN stays open: stage "net" sends tap0 back over it. */
	if (plan_decode(buf, len, plan, &err) < 0)
		init_fail("plan", err);
	free(buf);
}

/* Bring the loopback interface up: a new network namespace starts with it down. */
static int init_loopback_up(char **err)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return set_err_errno(err, "socket");
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		set_err_errno(err, "lo: SIOCGIFFLAGS");
		close(s);
		return -1;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
		set_err_errno(err, "lo: SIOCSIFFLAGS");
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

/* Stage links over the work directory and every --rw and profile mkdir mount. */
static int init_mask_links(const struct plan *plan, char **err)
{
	const char **roots = xmalloc((plan->nmounts + 1) * sizeof(*roots));
	size_t n = 0, masked = 0, unprotected = 0;
	bool incomplete = false;
	int rc;

	roots[n++] = plan->workdir;
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct mount_spec *m = &plan->mounts[i];

		if (m->kind == MOUNT_RW || m->kind == MOUNT_MKDIR)
			roots[n++] = m->dst ? m->dst : m->src;
	}
	rc = links_mask_shared(roots, n, &masked, &unprotected, &incomplete, err);
	free(roots);
	if (rc == 0 && incomplete)
		dprintf(STDERR_FILENO, _("boxy: WARNING: the writable directories are too large or "
					 "too deep to check for hard links to files outside them in "
					 "full (500,000 entries, 256 levels, 250 ms): files past the "
					 "bound stay writable (doc/filesystem.md)\n"));
	if (rc == 0 && unprotected > 0)
		dprintf(STDERR_FILENO, _("boxy: WARNING: %zu files of the writable directories are "
					 "hard links to files outside them (pnpm's store? a local git "
					 "clone?), too many to make read-only: the payload can change "
					 "the outside copies. Make them copies (pnpm: "
					 "package-import-method=copy) or run in a copy "
					 "(doc/filesystem.md)\n"), unprotected);
	if (rc == 0 && masked > 0)
		dprintf(STDERR_FILENO, ngettext("boxy: %zu hard-linked file whose other names are "
						"outside the writable directories is read-only in "
						"this run (see doc/filesystem.md)\n",
						"boxy: %zu hard-linked files whose other names are "
						"outside the writable directories are read-only in "
						"this run (see doc/filesystem.md)\n", masked), masked);
	return rc;
}

/*
 * The stages, in the only order that works: each needs a privilege or a
 * view of the system that the next one takes away. *stage names the one
 * that failed.
 */
static int init_run_stages(const struct plan *plan, const char **stage, char **err)
{
	/* uts: the host's name is recon (it often names the person or the company). */
	*stage = "uts";
	if (sethostname(plan->hostname, strlen(plan->hostname)) < 0)
		return set_err_errno(err, "sethostname");

	/* net: a fresh network namespace has only lo, and it is down. Under
	 * --net none it stays the only interface. Made here, not by the
	 * caller's clone (sandbox/assemble.c): a network namespace is most of
	 * what creating the namespaces costs (0.45-0.8 ms of 0.7-1.0), which
	 * the daemon's loop then paid for every start in turn; here each
	 * sandbox pays for its own, on any core. Nothing before this stage
	 * touches the network. Needs CAP_SYS_ADMIN and CAP_NET_ADMIN. */
	*stage = "net";
	if (unshare(CLONE_NEWNET) < 0)
		return set_err_errno(err, "unshare(CLONE_NEWNET)");
	if (init_loopback_up(err) < 0)
		return -1;
	/* tap0 while /dev/net/tun is still the host's and CAP_NET_ADMIN is held;
	 * its descriptor goes back to the daemon over the plan socket. */
	if (plan->net == NET_PUBLIC || plan->net == NET_ALLOWLIST) {
		/* The plan socket outlives the stage when the decoys go over it too. */
		int sock = plan->ndecoys ? fcntl(FD_PLAN, F_DUPFD_CLOEXEC, 10) : FD_PLAN;

		if (sock < 0)
			return set_err_errno(err, "dup");
		if (sandbox_net_setup(sock, plan->net_queues ? plan->net_queues : 1, err) < 0)
			return -1;
	} else if (!plan->ndecoys) {
		close(FD_PLAN);
	}

	/* limits: RLIMIT_NPROC while we still may raise a limit; it is per-uid
	 * in this user namespace, so it counts only the sandbox's processes. */
	*stage = "limits";
	if (limits_apply_child(plan, err) < 0 || limits_open_ucounts(err) < 0)
		return -1;

	/* mount: needs CAP_SYS_ADMIN over the user namespace, so before the
	 * capabilities go; pivot_root leaves the host's tree unreachable and
	 * sets the cwd to the work directory. */
	*stage = "mount";
	if (mount_setup(plan, err) < 0)
		return -1;

	/* mask: below Landlock ABI 9 nothing restricts connect() to a unix
	 * socket by path, so the sockets inside --ro paths that lie within a
	 * writable mount are covered now, while mounting is still possible. */
	*stage = "mask";
	if (landlock_mask_sockets(plan, plan->landlock_abi, NULL, err) < 0)
		return -1;

	/* links: a file of a writable root hard-linked from outside it (pnpm's
	 * store) would let the payload write the outside copy; bind it read-only
	 * while mounting is still possible (doc/filesystem.md). */
	*stage = "links";
	if (init_mask_links(plan, err) < 0)
		return -1;

	/* decoys: the tripwires' files, written by the mount stage, go to the
	 * daemon, which watches them before the payload may start. */
	if (plan->ndecoys) {
		*stage = "decoys";
		if (decoys_hand_over(plan, FD_PLAN, FD_REPORT, err) < 0)
			return -1;
		close(FD_PLAN);
	}

	/* ucounts: the inotify, fanotify and namespace counters of the sandbox's
	 * user namespace, lowered so the payload cannot use up the host user's
	 * (they are hierarchical); needs CAP_SYS_RESOURCE, after mount. */
	*stage = "ucounts";
	if (limits_apply_ucounts(err) < 0)
		return -1;

	/* caps: nothing from here on needs a privilege. Also sets no_new_privs,
	 * which landlock_restrict_self and an unprivileged seccomp filter need. */
	*stage = "caps";
	if (caps_drop_all(err) < 0)
		return -1;

	/* landlock: before seccomp, whose allowlist does not include the
	 * landlock_* calls (a payload must not stack its own rulesets). */
	*stage = "landlock";
	if (landlock_apply(plan, err) < 0)
		return -1;

	/* dumpable: init runs as the payload's uid, so without this the payload
	 * could open /proc/1/mem and take over the namespace's init (which holds
	 * the plan and is what the caller waits on). Non-dumpable makes /proc/1
	 * the kernel's; the payload's execve() makes the payload dumpable again. */
	*stage = "init";
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return set_err_errno(err, "prctl PR_SET_DUMPABLE");

	/* seccomp: last, so nothing boxy-init still does can trip it. It binds
	 * init too, which needs only wait4, kill, signalfd reads, sigtimedwait,
	 * setpgid and ioctl(TIOCSPGRP) from here on — all in the allowlist. */
	*stage = "seccomp";
	if (seccomp_apply_program(plan->seccomp, plan->seccomp_bpf, plan->seccomp_bpf_len, err) < 0)
		return -1;
	return 0;
}

/* The first of fds 0-2 that is a terminal, or -1. */
static int init_tty_fd(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			return fd;
	return -1;
}

/*
 * Leave the caller's process group, or its session when the daemon gave us a
 * pty of our own.
 *
 * Under `boxy run`, ^C typed while the caller holds the terminal would
 * otherwise reach init directly *and* through the caller's forwarding, and
 * the payload would get it twice: in a group of its own, init takes signals
 * from one place only, its parent.
 *
 * Under the daemon, init always becomes a session leader, so that the
 * payload never shares the daemon's session (nor a terminal the daemon might
 * have). The only terminal among fds 0-2 is then the daemon's pty slave for
 * the session, which nobody has as a controlling terminal yet: init takes it
 * (as a login shell would), so the payload can have its foreground and job
 * control works, and /dev/tty (--tty) is that pty.
 */
static void init_take_session(const struct plan *plan)
{
	int tty = init_tty_fd();

	if (!plan->new_session) {
		setpgid(0, 0);
		return;
	}
	if (setsid() < 0)
		init_fail("init", xasprintf("setsid: %s", strerror(errno)));
	if (tty >= 0 && ioctl(tty, TIOCSCTTY, 0) < 0)
		init_fail("init", xasprintf("making fd %d the controlling terminal: %s", tty,
					    strerror(errno)));
}

/* In the forked child: become the payload. Never returns. */
static void __attribute__((noreturn)) init_exec_payload(const struct plan *plan)
{
	sigset_t none;

	/*
	 * A process group of its own, holding the terminal's foreground, so that
	 * ^C and ^Z reach the payload and job control inside it behaves as when
	 * it is exec'd in place. A background process may take the terminal only
	 * with SIGTTOU ignored.
	 */
	setpgid(0, 0);
	if (plan->foreground && init_tty_fd() >= 0) {
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(init_tty_fd(), getpid());
	}
	/* Dispositions ignored upstream (SIGPIPE, often) survive execve: reset them all. */
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* execvp searches the PATH of environ, which is the plan's environment. */
	environ = plan->envp;
	execvp(plan->argv[0], plan->argv);
	if (errno == ENOENT) {
		dprintf(STDERR_FILENO, "boxy: %s: command not found\n", plan->argv[0]);
		_exit(EXIT_BOXY_NOENT);
	}
	dprintf(STDERR_FILENO, "boxy: %s: %s\n", plan->argv[0], strerror(errno));
	_exit(EXIT_BOXY_NOEXEC);
}

/* The exit code that reports wait status st the way a shell would. */
static int init_exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_BOXY_FAILED;
}

/*
 * ^Z stops the payload's process group, which holds the terminal's
 * foreground. Exec'd in place, the stop would reach the user's shell, which
 * takes the terminal back; here the shell waits on the caller, which does not
 * stop, and the terminal would hang with a stopped group in front. Until a
 * stop can be carried across the sandbox's boundary, a run is not
 * suspendable: resume the group. (SIGTTIN/SIGTTOU stops, of a payload
 * touching the terminal from the background, are left alone: resuming would
 * only stop it again.)
 */
static void init_resume_payload(pid_t payload, int st)
{
	if (WSTOPSIG(st) != SIGTSTP)
		return;
	if (kill(-payload, SIGCONT) < 0)
		kill(payload, SIGCONT);
}

/*
 * PID 1's loop: forward signals to the payload, reap every child (the
 * payload's orphans are ours), and when the payload exits, kill what is
 * left and return its status.
 */
static int init_supervise(pid_t payload, int sfd)
{
	int status = 0;
	bool done = false, frozen = false;
	sigset_t ctl;

	sigemptyset(&ctl);
	sigaddset(&ctl, PLAN_SIG_FREEZE);
	sigaddset(&ctl, PLAN_SIG_THAW);
	while (!done) {
		struct signalfd_siginfo si;
		siginfo_t ci;
		ssize_t r;

		/*
		 * The owner's word first (plan.h): a signalfd hands out the lowest
		 * signal first, and a payload that keeps a standard one pending (a
		 * SIGCONT or a SIGCHLD a moment) would otherwise keep these unread.
		 */
		while (sigtimedwait(&ctl, &ci, &(struct timespec){ 0, 0 }) > 0)
			if (ci.si_code == SI_USER && ci.si_pid == 0)
				frozen = ci.si_signo == PLAN_SIG_FREEZE;
		r = read(sfd, &si, sizeof(si));

		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(si)) {
			/* Cannot happen; if it does, still wait for the payload. */
			while (waitpid(payload, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		if (si.ssi_signo == SIGCHLD) {
			pid_t w;
			int st;

			while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
				if (w != payload)
					continue;
				if (WIFSTOPPED(st)) {
					if (!frozen)
						init_resume_payload(payload, st);
					continue;
				}
				status = st;
				done = true;
			}
		} else if ((int)si.ssi_signo == PLAN_SIG_FREEZE || (int)si.ssi_signo == PLAN_SIG_THAW) {
			/* The owner's word alone (plan.h): from outside, never from the payload. */
			if (si.ssi_code == SI_USER && si.ssi_pid == 0)
				frozen = (int)si.ssi_signo == PLAN_SIG_FREEZE;
		} else if (si.ssi_signo == SIGCONT) {
			/*
			 * The whole group: a member stopped in vfork leaves the payload
			 * unstopped. Only the owner's (from outside: pid 0); a payload
			 * process continues what it may itself, and must not make
			 * boxy-init continue the rest for it while a freeze is taking it.
			 */
			if (frozen || si.ssi_code != SI_USER || si.ssi_pid != 0)
				continue;
			if (kill(-payload, SIGCONT) < 0)
				kill(payload, SIGCONT);
		} else {
			kill(payload, (int)si.ssi_signo);
		}
	}

	/* The run is over when the payload is: daemons it left behind go too. */
	kill(-1, SIGKILL);
	for (;;) {
		pid_t w = waitpid(-1, NULL, 0);

		if (w < 0 && errno != EINTR)
			break;
	}
	return init_exit_code(status);
}

/* The test suite's start delay (plan.h, hold_ms): a sandbox held in assembly, before its stages. */
static void init_hold(const struct plan *plan)
{
	struct timespec ts = { plan->hold_ms / 1000, (long)(plan->hold_ms % 1000) * 1000000L };

	if (plan->hold_ms == 0)
		return;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Check how we were started, build the sandbox, start the payload, supervise it. */
int main(int argc, char **argv)
{
	struct plan plan;
	const char *stage = "init";
	char *err = NULL;
	sigset_t mask;
	pid_t payload;
	int sfd;

	(void)argc;
	(void)argv;
	util_progname = "boxy-init";
	if (getpid() != 1 || fcntl(FD_PLAN, F_GETFD) < 0 || fcntl(FD_REPORT, F_GETFD) < 0) {
		fputs("boxy-init is boxy's internal helper; use boxy run\n", stderr);
		return EXIT_BOXY_FAILED;
	}
	/* The report pipe must not leak into anything exec'd, whatever happens below. */
	fcntl(FD_REPORT, F_SETFD, FD_CLOEXEC);
	fcntl(FD_PLAN, F_SETFD, FD_CLOEXEC);

	/*
	 * Take the forwarded signals and SIGCHLD through a signalfd. Blocked
	 * signals count as handled for the kernel's init protection (a blocked
	 * signal is never "ignored"), so those sent from outside are queued.
	 */
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(init_forwarded); i++)
		sigaddset(&mask, init_forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, PLAN_SIG_FREEZE);
	sigaddset(&mask, PLAN_SIG_THAW);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		init_fail("init", strerror(errno));

	init_read_plan(&plan);
	init_take_session(&plan);
	init_hold(&plan);
	if (init_run_stages(&plan, &stage, &err) < 0)
		init_fail(stage, err);

	/*
	 * The payload first, then the ready record: what the caller does when
	 * it hears "ready" (its session's watchers, the client's MSG_STARTED)
	 * runs while the payload is exec'd instead of before (on two busy CPUs
	 * the woken caller often ran first). The report pipe is close-on-exec,
	 * and the caller takes one record without waiting for the EOF.
	 */
	payload = fork();
	if (payload < 0)
		init_fail("init", xasprintf("starting %s: %s", plan.argv[0], strerror(errno)));
	if (payload == 0)
		init_exec_payload(&plan);
	/* Also from this side, so that signals sent right after fork reach the group. */
	setpgid(payload, payload);
	init_report(PLAN_REPORT_READY, "ready");
	close(FD_REPORT);
	return init_supervise(payload, sfd);
}
