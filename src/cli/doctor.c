/*
 * cli/doctor.c — `boxy doctor`'s probes: can this host run boxy, and what is
 * weaker here than the specification asks for.
 *
 * Every check tries the real thing rather than reading a version number:
 * the namespace check forks a child that creates the user, mount, network,
 * ipc, uts, cgroup and pid namespaces the way a sandbox does (as an
 * unprivileged user even when doctor runs as root), writes its maps, mounts
 * a tmpfs and forks a PID 1; the tun check opens /dev/net/tun read-write.
 * A check says "ok", "warn" (boxy runs, something is weaker, and the notes
 * say exactly what) or "fail" (boxy cannot run), and the notes tell the
 * person what to look at.
 */
#include <config.h>

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/doctor.h"
#include "sandbox/attrib.h"
#include "common/json.h"
#include "sandbox/memwatch.h"
#include "sandbox/limits.h"
#include "init/stages.h"
#include "common/util.h"

/* The uid the namespace probe drops to when doctor runs as root (nobody). */
#define DOCTOR_PROBE_UID 65534

/* Set a check's name, status and detail (detail is taken over). */
static void check_set(struct doctor_check *c, const char *name, enum doctor_status s, char *detail)
{
	c->name = name;
	c->status = s;
	c->detail = detail;
	c->notes = NULL;
}

/* Append a note (copied). */
static void check_note(struct doctor_check *c, const char *note)
{
	strv_push(&c->notes, note);
}

void doctor_check_free(struct doctor_check *c)
{
	free(c->detail);
	strv_free(c->notes);
	c->detail = NULL;
	c->notes = NULL;
}

/* The user's login name, or the uid as text (malloc'd). */
static char *user_name(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw ? xstrdup(pw->pw_name) : xasprintf("uid %ld", (long)getuid());
}

/* ---- kernel ------------------------------------------------------------ */

void doctor_check_kernel(struct doctor_check *c)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) < 0) {
		check_set(c, "kernel", DOCTOR_WARN, xasprintf(_("uname: %s"), strerror(errno)));
		return;
	}
	sscanf(u.release, "%d.%d", &major, &minor);
	if (major > 5 || (major == 5 && minor >= 14)) {
		check_set(c, "kernel", DOCTOR_OK, xstrdup(u.release));
		return;
	}
	check_set(c, "kernel", DOCTOR_WARN, xstrdup(u.release));
	check_note(c, _("before Linux 5.14 RLIMIT_NPROC counts every process of the user, "
			"not only the sandbox's, so the --pids fallback is not equivalent"));
}

/* ---- landlock ---------------------------------------------------------- */

void doctor_check_landlock(struct doctor_check *c)
{
	struct landlock_info info;
	const char *losses[16];
	size_t n;

	landlock_probe(&info);
	n = landlock_losses(info.abi, losses, ARRAY_SIZE(losses));
	if (info.abi < 1) {
		check_set(c, "landlock", DOCTOR_FAIL, xstrdup(_("not available")));
	} else if (info.abi < LL_ABI_WANTED) {
		check_set(c, "landlock", DOCTOR_WARN,
			  xasprintf(_("ABI %d (ABI %d wanted: see below)"), info.abi,
				    LL_ABI_WANTED));
	} else {
		check_set(c, "landlock", DOCTOR_OK, xasprintf(_("ABI %d"), info.abi));
	}
	for (size_t i = 0; i < n; i++)
		check_note(c, _(losses[i]));
}

/* ---- seccomp ----------------------------------------------------------- */

/* True when the space-separated list has word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

void doctor_check_seccomp(struct doctor_check *c)
{
	/* What the filter uses: kill_process in strict mode, errno in compat
	 * mode and for soft denials, allow for everything else. */
	static const char *const needed[] = { "kill_process", "errno", "allow" };
	char buf[256] = "";

	if (seccomp_probe(buf, sizeof(buf)) < 0 || buf[0] == '\0') {
		check_set(c, "seccomp", DOCTOR_FAIL, xstrdup(_("seccomp filters are not available")));
		check_note(c, _("the kernel needs CONFIG_SECCOMP_FILTER"));
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(needed); i++)
		if (!has_word(buf, needed[i])) {
			check_set(c, "seccomp", DOCTOR_FAIL, xstrdup(buf));
			check_note(c, needed[i]);
			return;
		}
	check_set(c, "seccomp", DOCTOR_OK, xstrdup(buf));
}

/* ---- user namespaces --------------------------------------------------- */

/* The steps of the namespace probe, in order; the child reports the first that failed. */
enum ns_step {
	NS_DROP, NS_USER, NS_MAPS, NS_MOUNT, NS_MOUNT_TMPFS, NS_NET, NS_IPC, NS_UTS,
	NS_CGROUP, NS_PID, NS_PID1, NS_DONE,
};

static const char *const ns_step_words[] = {
	[NS_DROP] = N_("drop to an unprivileged uid"),
	[NS_USER] = "unshare(CLONE_NEWUSER)",
	[NS_MAPS] = N_("write uid_map/gid_map"),
	[NS_MOUNT] = "unshare(CLONE_NEWNS)",
	[NS_MOUNT_TMPFS] = N_("mount a tmpfs in the new mount namespace"),
	[NS_NET] = "unshare(CLONE_NEWNET)",
	[NS_IPC] = "unshare(CLONE_NEWIPC)",
	[NS_UTS] = "unshare(CLONE_NEWUTS)",
	[NS_CGROUP] = "unshare(CLONE_NEWCGROUP)",
	[NS_PID] = "unshare(CLONE_NEWPID)",
	[NS_PID1] = N_("fork PID 1 of the new pid namespace"),
	[NS_DONE] = "done",
};

/* Write a small string to a /proc file; -1 with errno. */
static int write_proc(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = write_all(fd, s, strlen(s));
	if (rc < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* In the probe child: the sandbox's namespace setup, step by step. Never returns. */
static void __attribute__((noreturn)) ns_probe_child(int wfd)
{
	int report[2] = { NS_DONE, 0 }, as_root = 0;
	char map[64];
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int status;

#define STEP(s, expr) do { report[0] = (s); if ((expr) < 0) goto fail; } while (0)
	/*
	 * As root, probe what an ordinary user gets: that is who runs boxy.
	 * Where nobody's uid does not exist (doctor itself in a user namespace
	 * that maps only root), probe as we are and say so (report[1] below).
	 */
	if (getuid() == 0) {
		if (setgroups(0, NULL) == 0 && setgid(DOCTOR_PROBE_UID) == 0 &&
		    setuid(DOCTOR_PROBE_UID) == 0) {
			/* A uid change makes us non-dumpable, which hands /proc/self/
			 * to root; the maps below must stay ours to write. */
			STEP(NS_DROP, prctl(PR_SET_DUMPABLE, 1UL, 0UL, 0UL, 0UL));
		} else if (getuid() == 0) {
			as_root = 1;
		} else {
			STEP(NS_DROP, -1);      /* half-dropped: never probe from here */
		}
	}
	uid = getuid();
	gid = getgid();
	STEP(NS_USER, unshare(CLONE_NEWUSER));
	/* Map the user to itself, as the sandbox does (not to root). */
	STEP(NS_MAPS, write_proc("/proc/self/setgroups", "deny"));
	snprintf(map, sizeof(map), "%lu %lu 1", (unsigned long)uid, (unsigned long)uid);
	STEP(NS_MAPS, write_proc("/proc/self/uid_map", map));
	snprintf(map, sizeof(map), "%lu %lu 1", (unsigned long)gid, (unsigned long)gid);
	STEP(NS_MAPS, write_proc("/proc/self/gid_map", map));
	STEP(NS_MOUNT, unshare(CLONE_NEWNS));
	/* Capabilities in the new namespace are what AppArmor's restriction
	 * takes away while still letting unshare() succeed: use one. */
	STEP(NS_MOUNT_TMPFS, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	STEP(NS_MOUNT_TMPFS, mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k"));
	STEP(NS_NET, unshare(CLONE_NEWNET));
	STEP(NS_IPC, unshare(CLONE_NEWIPC));
	STEP(NS_UTS, unshare(CLONE_NEWUTS));
	STEP(NS_CGROUP, unshare(CLONE_NEWCGROUP));
	STEP(NS_PID, unshare(CLONE_NEWPID));
	report[0] = NS_PID1;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 1);
	if (waitpid(pid, &status, 0) < 0)
		goto fail;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = ESRCH;
		goto fail;
	}
	report[0] = NS_DONE;
#undef STEP
	report[1] = as_root;
	(void)!write(wfd, report, sizeof(report));
	_exit(0);
fail:
	report[1] = errno;
	(void)!write(wfd, report, sizeof(report));
	_exit(1);
}

/* The value of a sysctl as a note, when the file exists. */
static void note_sysctl(struct doctor_check *c, const char *name, const char *path)
{
	char *buf = NULL, *note;
	size_t len;

	if (read_file(path, 64, &buf, &len) < 0)
		return;
	buf[strcspn(buf, "\n")] = '\0';
	note = xasprintf(_("sysctl %s = %s"), name, buf);
	check_note(c, note);
	free(note);
	free(buf);
}

void doctor_check_userns(struct doctor_check *c)
{
	int pfd[2], report[2] = { -1, 0 }, status;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		check_set(c, "userns", DOCTOR_FAIL, xasprintf("pipe: %s", strerror(errno)));
		return;
	}
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		check_set(c, "userns", DOCTOR_FAIL, xasprintf("fork: %s", strerror(errno)));
		return;
	}
	if (pid == 0) {
		close(pfd[0]);
		ns_probe_child(pfd[1]);
	}
	close(pfd[1]);
	if (read_exact(pfd[0], report, sizeof(report)) <= 0)
		report[0] = -1;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (report[0] == NS_DONE) {
		check_set(c, "userns", DOCTOR_OK,
			  xstrdup(report[1] ? _("user+mount+pid+net namespaces (probed as root: "
						"no unprivileged uid to probe with)")
				  : _("unprivileged user+mount+pid+net namespaces")));
		return;
	}
	if (report[0] < 0 || report[0] > NS_DONE)
		check_set(c, "userns", DOCTOR_FAIL, xstrdup(_("the namespace probe died")));
	else
		check_set(c, "userns", DOCTOR_FAIL,
			  xasprintf(_("%s failed: %s"), _(ns_step_words[report[0]]),
				    strerror(report[1])));
	note_sysctl(c, "kernel.unprivileged_userns_clone",
		    "/proc/sys/kernel/unprivileged_userns_clone");
	note_sysctl(c, "user.max_user_namespaces", "/proc/sys/user/max_user_namespaces");
	note_sysctl(c, "kernel.apparmor_restrict_unprivileged_userns",
		    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	check_note(c, _("unprivileged user namespaces must be allowed: "
			"kernel.unprivileged_userns_clone = 1, user.max_user_namespaces > 0, "
			"kernel.apparmor_restrict_unprivileged_userns = 0 (or an AppArmor profile "
			"for boxy that allows userns)"));
}

/* ---- /dev/net/tun ------------------------------------------------------ */

void doctor_check_tun(struct doctor_check *c)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	char *who;
	int err;

	if (fd >= 0) {
		close(fd);
		check_set(c, "tun", DOCTOR_OK, xstrdup(_("/dev/net/tun writable")));
		return;
	}
	if (errno == ENOENT || errno == ENODEV || errno == ENXIO) {
		check_set(c, "tun", DOCTOR_WARN,
			  xasprintf(_("/dev/net/tun: %s"), strerror(errno)));
		check_note(c, _("needed for --net public/allowlist; --net none works without it"));
		check_note(c, _("load the tun module (modprobe tun) so /dev/net/tun exists"));
		return;
	}
	err = errno;
	who = user_name();
	check_set(c, "tun", DOCTOR_WARN,
		  xasprintf(_("/dev/net/tun is not writable by %s: %s"), who, strerror(err)));
	check_note(c, _("needed for --net public/allowlist; --net none works without it"));
	check_note(c, _("run as root: chmod 0666 /dev/net/tun, as Debian ships it "
			"(opening it grants nothing by itself: creating an interface still "
			"needs CAP_NET_ADMIN)"));
	free(who);
}

/* ---- attribution ---------------------------------------------------------- */

/*
 * Can the daemon tell who made a connection (doc/attribution.md)? Probed
 * for real on a child in namespaces of its own (sandbox/attrib.h,
 * attrib_check). hidepid hides other users' processes, never one's own;
 * Yama's ptrace_scope limits attaching, never reading /proc — except for a
 * process that made itself not dumpable, read through attaching calls: what
 * that means here is said.
 */
void doctor_check_attrib(struct doctor_check *c)
{
	char *line = NULL, scope[16] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, scope, sizeof(scope) - 1);

		scope[n > 0 ? n : 0] = '\0';
		scope[strcspn(scope, "\n")] = '\0';
		close(fd);
	}
	if (attrib_check(&line) == 0) {
		check_set(c, "attrib", DOCTOR_OK, line);
	} else {
		check_set(c, "attrib", DOCTOR_WARN, line);
		check_note(c, _("connections and refusals are still decided and recorded; they say "
				"\"unknown\" for the process and package that made them"));
	}
	/* Reading /proc needs no ptrace rights; a process that made itself not dumpable is
	 * read with pidfd_getfd and process_vm_readv, which need attach rights (Yama's). */
	if (scope[0] >= '2')
		check_note(c, _("Yama forbids attaching here: a process that makes itself not "
				"dumpable says \"unknown\"; every other one is found"));
	else if (scope[0])
		check_note(c, _("Yama lets the daemon attach to its descendants: a process that "
				"makes itself not dumpable is found too"));
}

/* ---- tripwires ------------------------------------------------------------ */

/* Does /proc/locks list pid as waiting for a lease to be broken ("N: -> LEASE BREAKER READ PID")? */
static bool tripwires_lease_waiter(pid_t pid)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	bool yes = false;

	while (f && !yes && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "-> LEASE ");
		int w;

		yes = p && sscanf(p, "-> LEASE %*s %*s %d", &w) == 1 && w == (int)pid;
	}
	if (f)
		fclose(f);
	return yes;
}

/*
 * What sandbox/tripwatch.c does with a decoy, on a scratch file: a write
 * lease, a child that opens the file, the lease's signal, the child seen
 * waiting for the lease — in /proc/locks, or blocked in the kernel's
 * __break_lease (how its process is named) —, the lease given up. 0 when
 * all of it works, else -1 and *why.
 */
static int tripwires_probe(const char **why)
{
	char path[] = "/tmp/boxy-doctor-lease.XXXXXX", wchan[64] = "";
	sigset_t set, old;
	int fd, sfd = -1, rc = -1;
	bool seen;
	pid_t child = -1;

	*why = _("a scratch file in /tmp cannot be made");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 6);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	*why = _("leases cannot be taken (fs.leases-enable is 0?)");
	if (fd < 0 || sfd < 0 || fcntl(fd, F_SETSIG, SIGRTMIN + 6) < 0 ||
	    fcntl(fd, F_SETOWN, getpid()) < 0 || fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
		goto out;
	child = fork();
	if (child == 0) {
		int f = open(path, O_RDONLY | O_CLOEXEC);

		_exit(f < 0);
	}
	*why = _("the lease's break was not signalled");
	if (child < 0)
		goto out;
	{
		struct pollfd p = { .fd = sfd, .events = POLLIN };

		if (poll(&p, 1, 2000) != 1)
			goto out;
	}
	*why = _("an opener held by the lease cannot be seen waiting in /proc (neither in "
		 "/proc/locks nor by its wait channel)");
	seen = tripwires_lease_waiter(child);
	for (int i = 0; i < 200 && !seen; i++) {
		char wp[64];
		int w;
		ssize_t n;

		snprintf(wp, sizeof(wp), "/proc/%d/wchan", (int)child);
		w = open(wp, O_RDONLY | O_CLOEXEC);
		n = w >= 0 ? read(w, wchan, sizeof(wchan) - 1) : -1;
		wchan[n > 0 ? n : 0] = '\0';
		if (w >= 0)
			close(w);
		seen = strcmp(wchan, "__break_lease") == 0;
		if (!seen)
			usleep(1000);
	}
	if (seen)
		rc = 0;
out:
	if (fd >= 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		close(fd);
	}
	if (child > 0)
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	if (sfd >= 0) {
		struct signalfd_siginfo si;

		/* Taken, every one: unblocked while pending, the signal would end boxy. */
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
		close(sfd);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	unlink(path);
	return rc;
}

/*
 * Tripwires (doc/tripwires.md): on in the node, python and claude presets.
 * A host without leases still reports an opened decoy, without its opener.
 */
void doctor_check_tripwires(struct doctor_check *c)
{
	const char *why = NULL;

	if (tripwires_probe(&why) == 0)
		check_set(c, "tripwires", DOCTOR_OK,
			  xstrdup(_("leases: an opened decoy is held while its process is named")));
	else {
		check_set(c, "tripwires", DOCTOR_WARN, xstrdup(why));
		check_note(c, _("an opened decoy is still reported, but its process is named only if "
				"it still holds the file; a token sent out is found either way"));
	}
	check_note(c, _("on in the node, python and claude presets; --tripwires on|off for a run"));
}

/* ---- cgroup v2 --------------------------------------------------------- */

/* On a hybrid host a controller bound to a v1 hierarchy can never reach v2: say so. */
static bool note_v1_controllers(struct doctor_check *c, const struct cgroup_info *info)
{
	static const char *const names[] = { "cpu", "memory", "pids" };
	const bool have[] = { info->cpu, info->memory, info->pids };
	char *buf = NULL, v1[32] = "", *note;
	size_t len;

	if (read_file("/proc/self/cgroup", 64 << 10, &buf, &len) < 0)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		/* v1 lines read "N:ctrl[,ctrl]:/path"; the v2 line is "0::/path". */
		char *pat1 = xasprintf(":%s:", names[i]), *pat2 = xasprintf(":%s,", names[i]);
		char *pat3 = xasprintf(",%s:", names[i]), *pat4 = xasprintf(",%s,", names[i]);

		if (!have[i] && (strstr(buf, pat1) || strstr(buf, pat2) || strstr(buf, pat3) ||
				 strstr(buf, pat4))) {
			strcat(v1, v1[0] ? " " : "");
			strcat(v1, names[i]);
		}
		free(pat1);
		free(pat2);
		free(pat3);
		free(pat4);
	}
	free(buf);
	if (!v1[0])
		return false;
	note = xasprintf(_("this host is in hybrid mode: %s %s bound to cgroup v1 and cannot "
			   "be used through cgroup v2"), v1, strchr(v1, ' ') ? "are" : "is");
	check_note(c, note);
	free(note);
	return true;
}

void doctor_check_cgroup(struct doctor_check *c)
{
	struct cgroup_info info;
	char list[32] = "", *who;
	const char *lost[2];
	size_t nlost = 0;
	bool hybrid = false;

	cgroup_probe(&info);
	if (!info.v2 || !info.own) {
		check_set(c, "cgroup2", DOCTOR_WARN,
			  xstrdup(!info.v2 ? _("no cgroup v2 hierarchy mounted")
				  : _("this process's cgroup v2 path is unknown")));
	} else {
		if (info.cpu)
			strcat(list, "cpu ");
		if (info.memory)
			strcat(list, "memory ");
		if (info.pids)
			strcat(list, "pids ");
		if (list[0])
			list[strlen(list) - 1] = '\0';
		who = user_name();
		if (!info.writable)
			check_set(c, "cgroup2", DOCTOR_WARN,
				  xasprintf(_("%s [nothing delegated to %s]"), info.own, who));
		else if (list[0])
			check_set(c, "cgroup2",
				  info.cpu && info.memory && info.pids ? DOCTOR_OK : DOCTOR_WARN,
				  xasprintf("%s [%s]", info.own, list));
		else
			check_set(c, "cgroup2", DOCTOR_WARN,
				  xasprintf(_("%s [no cpu, memory or pids controller]"), info.own));
		free(who);
		hybrid = note_v1_controllers(c, &info);
	}
	if (!info.pids)
		check_note(c, _("--pids falls back to RLIMIT_NPROC (equivalent in the sandbox's "
				"own user namespace)"));
	if (!info.memory)
		check_note(c, _("--memory falls back to boxy's watchdog (the memory line below)"));
	if (!info.cpu)
		lost[nlost++] = "--cpus";
	if (nlost == 2) {
		char *n = xasprintf(_("%s and %s are not enforced"), lost[0], lost[1]);

		check_note(c, n);
		free(n);
	} else if (nlost == 1) {
		char *n = xasprintf(_("%s is not enforced"), lost[0]);

		check_note(c, n);
		free(n);
	}
	if (hybrid)
		check_note(c, _("boot with systemd.unified_cgroup_hierarchy=1 (cgroup v2 only) and "
				"delegate the controllers to your user to enforce them"));
	else if (c->status == DOCTOR_WARN)
		check_note(c, _("delegate the controllers to your user (systemd: user@.service "
				"with Delegate=cpu memory pids) to enforce them"));
	cgroup_info_free(&info);
}

/* ---- how --memory is enforced -------------------------------------------- */

/*
 * Whether the user's systemd gives a scope that enforces a memory limit: the
 * real thing, for a child that only waits. True with *where (malloc'd) when
 * memory.max in the scope reads what was asked; else *why says why not.
 */
static bool memory_scope_probe(const struct cgroup_info *info, char **where, char **why)
{
	char *unit = NULL, *cg = NULL, *dir, *got = NULL;
	bool ok;
	pid_t pid;

	if (!info->mount) {
		*why = xstrdup(_("no cgroup v2 hierarchy"));
		return false;
	}
	if (!limits_scope_available(why))
		return false;
	pid = fork();
	if (pid < 0) {
		*why = xasprintf("fork: %s", strerror(errno));
		return false;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	ok = limits_scope_request(pid, 64u << 20, 0, 0, &unit, &cg, why) == 0;
	if (ok) {
		dir = xasprintf("%s%s", info->mount, cg);
		{
			char *path = xasprintf("%s/memory.max", dir);
			size_t len;

			if (read_file(path, 64, &got, &len) < 0)
				got = xstrdup("");
			free(path);
		}
		ok = strtoull(got, NULL, 10) == (64u << 20);
		if (ok)
			*where = xasprintf(_("systemd scope (memory.max in %s)"), dir);
		else
			*why = xasprintf(_("the systemd user manager made %s, but applies no memory "
					   "limit there (no memory controller delegated to it)"), unit);
		free(got);
		free(dir);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(unit);
	free(cg);
	return ok;
}

void doctor_check_memory(struct doctor_check *c)
{
	struct cgroup_info info;
	char *where = NULL, *why = NULL, *note;

	cgroup_probe(&info);
	if (info.memory) {
		check_set(c, "memory", DOCTOR_OK,
			  xasprintf(_("kernel cgroup: memory.max in a child of %s"), info.own));
		cgroup_info_free(&info);
		return;
	}
	if (memory_scope_probe(&info, &where, &why)) {
		check_set(c, "memory", DOCTOR_OK, where);
		cgroup_info_free(&info);
		return;
	}
	cgroup_info_free(&info);
	check_set(c, "memory", DOCTOR_WARN,
		  xasprintf(_("boxy's watchdog: --memory is sampled every %d ms (%d ms past half "
			      "the limit) and the sandbox killed past it"),
			    MEMWATCH_SLOW_MS, MEMWATCH_FAST_MS));
	check_note(c, _("counted: its processes' anonymous and shared memory, its tmpfs, "
			"memfds and SysV segments; not kernel memory (sockets, pipes, page tables)"));
	check_note(c, _("an allocation faster than a sample overshoots before the kill; "
			"delegate the memory controller to have the kernel enforce it"));
	note = xasprintf(_("no systemd scope: %s"), why);
	check_note(c, note);
	free(note);
	free(why);
}

/* ---- how --on-alert freeze freezes ---------------------------------------- */

void doctor_check_freeze(struct doctor_check *c)
{
	bool cgroup;
	char *how = limits_freeze_probe(&cgroup);

	check_set(c, "freeze", DOCTOR_OK, how);
	if (!cgroup) {
		check_note(c, _("no process outlives the sweep, but one may run for the few "
				"milliseconds it takes; a delegated cgroup v2 lets the kernel's freezer "
				"take them all at once"));
	}
}

/* ---- AppArmor's user-namespace restriction ------------------------------ */

/* Read a one-line file below root into buf, newline stripped; false when unreadable. */
static bool read_line_at(const char *root, const char *path, char *buf, size_t len)
{
	char *full = xasprintf("%s%s", root, path);
	FILE *f = fopen(full, "re");
	bool ok = false;

	free(full);
	if (!f)
		return false;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		ok = true;
	}
	fclose(f);
	return ok;
}

/*
 * Ubuntu 23.10+ (kernel.apparmor_restrict_unprivileged_userns = 1) refuses
 * unprivileged user namespaces to every program AppArmor has no profile for
 * that allows them. root is a directory prefix for /proc ("" for the real
 * one), so the tests can fake a host.
 */
void doctor_check_apparmor_at(struct doctor_check *c, const char *root)
{
	char restrict_val[16], label[256];
	const char *profile = PKGDATADIR "/apparmor/boxy";

	if (!read_line_at(root, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
			  restrict_val, sizeof(restrict_val))) {
		check_set(c, "apparmor", DOCTOR_OK,
			  xstrdup(_("no user-namespace restriction (no "
				    "kernel.apparmor_restrict_unprivileged_userns)")));
		return;
	}
	if (strcmp(restrict_val, "1") != 0) {
		check_set(c, "apparmor", DOCTOR_OK,
			  xasprintf(_("kernel.apparmor_restrict_unprivileged_userns = %s"),
				    restrict_val));
		return;
	}
	/* The label of this process, which is the boxy binary: "unconfined" or "NAME (MODE)". */
	if (!read_line_at(root, "/proc/self/attr/apparmor/current", label, sizeof(label)) &&
	    !read_line_at(root, "/proc/self/attr/current", label, sizeof(label)))
		snprintf(label, sizeof(label), "unconfined");
	if (strcmp(label, "unconfined") != 0) {
		check_set(c, "apparmor", DOCTOR_OK,
			  xasprintf(_("user namespaces restricted, boxy confined by profile %s "
				      "(the userns check says whether it allows them)"), label));
		return;
	}
	check_set(c, "apparmor", DOCTOR_FAIL,
		  xstrdup(_("kernel.apparmor_restrict_unprivileged_userns = 1 and boxy runs "
			    "unconfined: unprivileged user namespaces are refused")));
	char *fix = xasprintf(_("install boxy's profile (it allows userns for boxy and boxy-init "
				"only): sudo install -m 0644 %s /etc/apparmor.d/boxy && "
				"sudo apparmor_parser -r /etc/apparmor.d/boxy "
				"(or configure --with-apparmor-dir=/etc/apparmor.d; make install)"),
			      profile);
	check_note(c, fix);
	free(fix);
	check_note(c, _("or lift the restriction for every program: "
			"sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0"));
}

void doctor_check_apparmor(struct doctor_check *c)
{
	doctor_check_apparmor_at(c, "");
}

/* ---- the report -------------------------------------------------------- */

void doctor_run(struct doctor_report *r)
{
	void (*const probes[DOCTOR_NCHECKS])(struct doctor_check *) = {
		doctor_check_kernel, doctor_check_landlock, doctor_check_seccomp,
		doctor_check_userns, doctor_check_apparmor, doctor_check_tun, doctor_check_cgroup,
		doctor_check_memory, doctor_check_attrib, doctor_check_tripwires,
		doctor_check_freeze,
	};

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < DOCTOR_NCHECKS; i++)
		probes[i](&r->checks[r->n++]);
}

void doctor_report_free(struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		doctor_check_free(&r->checks[i]);
	r->n = 0;
}

bool doctor_can_run(const struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->checks[i].status == DOCTOR_FAIL)
			return false;
	return true;
}

char *doctor_format_json(const struct doctor_report *r)
{
	struct jbuf b;

	jbuf_init(&b);
	json_arr_begin(&b);
	for (size_t i = 0; i < r->n; i++) {
		const struct doctor_check *c = &r->checks[i];

		json_obj_begin(&b);
		json_kv_str(&b, "check", c->name);
		json_kv_str(&b, "status", doctor_status_word(c->status));
		json_kv_str(&b, "detail", c->detail);
		json_key(&b, "notes");
		json_arr_begin(&b);
		for (char **n = c->notes; n && *n; n++)
			json_str(&b, *n);
		json_arr_end(&b);
		json_obj_end(&b);
	}
	json_arr_end(&b);
	return jbuf_steal(&b);
}
