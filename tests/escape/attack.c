/*
 * attack.c — the syscall-level attacks of the escape suite, one multi-call program.
 *
 * `attack NAME [ARGS...]` attempts one thing a hostile payload would attempt from
 * inside the sandbox and prints exactly one verdict line:
 *
 *   ESCAPED: NAME: what worked          the attack succeeded
 *   blocked: NAME: errno or signal      it failed
 *
 * Each attack runs in a forked child, so a seccomp filter that kills the
 * offender with SIGSYS still yields a "blocked: NAME: killed by signal 31" line
 * from the parent; if the parent itself is killed (the filter kills the whole
 * process), nothing is printed and tests/escape/escape.sh decides from the exit
 * status (159 = 128 + SIGSYS = blocked). An attack that could not even be tried
 * (no terminal for TIOCSTI, say) prints "untested:", which the suite counts as a
 * failure rather than a pass: a test that did nothing proves nothing.
 *
 * Exit status: 0 blocked, 1 escaped, 2 untested or usage error.
 *
 * Nothing here is dangerous when it escapes: the writes go to scratch paths,
 * the sysrq-style probes are done by the shell cases with harmless letters,
 * kexec_load is called with zero segments, and the fork bomb is bounded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* Verdicts, which are also the child's exit status. */
enum { V_BLOCKED = 0, V_ESCAPED = 1, V_UNTESTED = 2 };

static const char *attack_name;

/* Print the success line for the current attack. */
static int attack_escaped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int attack_escaped(const char *fmt, ...)
{
	va_list ap;

	printf("ESCAPED: %s: ", attack_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return V_ESCAPED;
}

/* Print the failure line for the current attack; what names the call that failed. */
static int attack_blocked(const char *what, int err)
{
	printf("blocked: %s: %s: %s\n", attack_name, what, strerror(err));
	fflush(stdout);
	return V_BLOCKED;
}

/* Print that the attack could not be attempted at all. */
static int attack_untested(const char *why)
{
	printf("untested: %s: %s\n", attack_name, why);
	fflush(stdout);
	return V_UNTESTED;
}

/* mount a tmpfs on ARG (default: the cwd): needs CAP_SYS_ADMIN in the mount ns's owner. */
static int attack_mount(int argc, char **argv)
{
	const char *dir = argc > 0 ? argv[0] : ".";

	if (mount("boxy-escape", dir, "tmpfs", 0, "size=1m") == 0) {
		umount2(dir, MNT_DETACH);
		return attack_escaped("mounted a tmpfs on %s", dir);
	}
	return attack_blocked("mount", errno);
}

/* unshare(CLONE_NEWUSER): a nested user namespace is the door to every other namespace. */
static int attack_unshare_user(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (unshare(CLONE_NEWUSER) == 0)
		return attack_escaped("created a nested user namespace");
	return attack_blocked("unshare(CLONE_NEWUSER)", errno);
}

/* What `unshare -r` does: new user+mount ns, map root, then mount as that root. */
static int attack_unshare_r(int argc, char **argv)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char map[64];
	int fd;

	(void)argc;
	(void)argv;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return attack_blocked("unshare(CLONE_NEWUSER|CLONE_NEWNS)", errno);
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, "deny", 4);
		close(fd);
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return attack_escaped("nested userns created (uid_map not writable: %s)",
				      strerror(errno));
	close(fd);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	fd = open("/proc/self/gid_map", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, map, strlen(map));
		close(fd);
	}
	if (mount("boxy-escape", "/tmp", "tmpfs", 0, "size=1m") == 0)
		return attack_escaped("root in a nested userns, mounted a tmpfs on /tmp");
	return attack_escaped("root in a nested userns (mount failed: %s)", strerror(errno));
}

/* clone(CLONE_NEWUSER) through the raw syscall, bypassing glibc's wrappers. */
static int attack_clone_newuser(int argc, char **argv)
{
	long pid;

	(void)argc;
	(void)argv;
	pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0UL, 0UL, 0UL, 0UL);
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid((pid_t)pid, NULL, 0);
		return attack_escaped("clone(CLONE_NEWUSER) made a child in a new user namespace");
	}
	return attack_blocked("clone(CLONE_NEWUSER)", errno);
}

/* clone3 with CLONE_NEWUSER: its flags are behind a pointer seccomp cannot read. */
static int attack_clone3_newuser(int argc, char **argv)
{
	struct clone_args ca;
	long pid;

	(void)argc;
	(void)argv;
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER;
	ca.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid((pid_t)pid, NULL, 0);
		return attack_escaped("clone3(CLONE_NEWUSER) made a child in a new user namespace");
	}
	return attack_blocked("clone3(CLONE_NEWUSER)", errno);
}

/* setns into every namespace of PID (default 1): joining init's or the host's. */
static int attack_setns(int argc, char **argv)
{
	static const char *const kinds[] = {
		"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", "time",
	};
	const char *pid = argc > 0 ? argv[0] : "1";
	int worked = 0, last_err = ENOENT;
	char path[64], what[128];

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct stat self_st, st;
		int fd;

		snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, kinds[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			last_err = errno;
			continue;
		}
		/* Joining the namespace one is already in proves nothing. */
		snprintf(what, sizeof(what), "/proc/self/ns/%s", kinds[i]);
		if (fstat(fd, &st) == 0 && stat(what, &self_st) == 0 &&
		    st.st_ino == self_st.st_ino && st.st_dev == self_st.st_dev &&
		    strcmp(pid, "1") != 0) {
			close(fd);
			continue;
		}
		if (setns(fd, 0) == 0) {
			if (st.st_ino != self_st.st_ino) {
				attack_escaped("setns(%s) joined another namespace", path);
				worked++;
			}
		} else {
			last_err = errno;
		}
		close(fd);
	}
	if (worked)
		return V_ESCAPED;
	snprintf(what, sizeof(what), "setns(/proc/%s/ns/*)", pid);
	return attack_blocked(what, last_err);
}

/* PTRACE_ATTACH to PID, reporting through the parent's verdict. */
static int ptrace_try(pid_t pid, const char *who)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0) {
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return attack_escaped("PTRACE_ATTACH to %s %d", who, (int)pid);
	}
	return attack_blocked("ptrace(PTRACE_ATTACH)", errno);
}

/* A child that waits to be attached to, and dies with its parent. */
static pid_t spawn_victim(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(20);
		for (;;)
			pause();
	}
	return pid;
}

/* ptrace a process of our own: the child. */
static int attack_ptrace_child(int argc, char **argv)
{
	pid_t victim = spawn_victim();
	int v;

	(void)argc;
	(void)argv;
	if (victim < 0)
		return attack_untested("fork failed");
	v = ptrace_try(victim, "child");
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	return v;
}

/* ptrace a sibling: a process we did not create, as a payload would a neighbour. */
static int attack_ptrace_sibling(int argc, char **argv)
{
	pid_t victim, attacker;
	int status, v = V_UNTESTED;

	(void)argc;
	(void)argv;
	victim = spawn_victim();
	if (victim < 0)
		return attack_untested("fork failed");
	attacker = fork();
	if (attacker == 0)
		_exit(ptrace_try(victim, "sibling"));
	if (attacker > 0 && waitpid(attacker, &status, 0) == attacker) {
		if (WIFEXITED(status))
			v = WEXITSTATUS(status);
		else if (WIFSIGNALED(status)) {
			printf("blocked: %s: attacker killed by signal %d\n", attack_name,
			       WTERMSIG(status));
			v = V_BLOCKED;
		}
	}
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	return v;
}

/* io_uring_setup: the ring bypasses seccomp for every operation submitted through it. */
static int attack_io_uring(int argc, char **argv)
{
	unsigned char params[120];      /* struct io_uring_params, zeroed */
	long fd;

	(void)argc;
	(void)argv;
	memset(params, 0, sizeof(params));
	fd = syscall(__NR_io_uring_setup, 4, params);
	if (fd >= 0) {
		close((int)fd);
		return attack_escaped("io_uring_setup returned a ring");
	}
	return attack_blocked("io_uring_setup", errno);
}

/* bpf(): a map and a trivial socket-filter program. */
static int attack_bpf(int argc, char **argv)
{
	struct bpf_insn insns[2];
	union bpf_attr attr;
	long fd;
	int err;

	(void)argc;
	(void)argv;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd >= 0)
		return attack_escaped("bpf(BPF_MAP_CREATE) returned a map");
	err = errno;

	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;     /* r0 = 0 */
	insns[0].dst_reg = 0;
	insns[1].code = BPF_JMP | BPF_EXIT;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd >= 0)
		return attack_escaped("bpf(BPF_PROG_LOAD) loaded a program");
	(void)err;
	return attack_blocked("bpf", errno);
}

/* keyctl: reach the caller's keyrings, and read the harness's marker key if it is there. */
static int attack_keyctl(int argc, char **argv)
{
	const char *desc = argc > 0 ? argv[0] : "boxy-escape-marker";
	char buf[256];
	long id, n;

	id = syscall(__NR_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", desc, 0);
	if (id < 0)
		id = syscall(__NR_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", desc, 0);
	if (id >= 0) {
		n = syscall(__NR_keyctl, KEYCTL_READ, id, buf, sizeof(buf) - 1);
		if (n >= 0) {
			buf[n < (long)sizeof(buf) ? n : (long)sizeof(buf) - 1] = '\0';
			return attack_escaped("read the caller's key %s: %s", desc, buf);
		}
		return attack_escaped("found the caller's key %s (id %ld)", desc, id);
	}
	id = syscall(__NR_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0);
	if (id >= 0)
		return attack_escaped("keyctl(GET_KEYRING_ID) works: user keyring %ld", id);
	return attack_blocked("keyctl", errno);
}

/*
 * Harness helper, not an attack: put a marker key where a payload would look,
 * the session keyring every process of the run inherits (when there is one:
 * asking to add to a missing one would create a private one that dies with us)
 * and the user keyring.
 */
static int helper_add_key(int argc, char **argv)
{
	long id, ses;

	if (argc < 2)
		return attack_untested("usage: add-key DESC PAYLOAD");
	ses = syscall(__NR_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	if (ses >= 0) {
		id = syscall(__NR_add_key, "user", argv[0], argv[1], strlen(argv[1]), ses);
		printf("add-key: session keyring: %ld\n", id);
	}
	id = syscall(__NR_add_key, "user", argv[0], argv[1], strlen(argv[1]),
		     KEY_SPEC_USER_KEYRING);
	if (id < 0) {
		printf("add-key: %s\n", strerror(errno));
		return V_UNTESTED;
	}
	printf("add-key: user keyring: %ld\n", id);
	return V_BLOCKED;
}

/* perf_event_open on ourselves, user space only: allowed by paranoid <= 2 on a host. */
static int attack_perf(int argc, char **argv)
{
	struct perf_event_attr pe;
	long fd;

	(void)argc;
	(void)argv;
	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &pe, 0, -1, -1, 0);
	if (fd >= 0)
		return attack_escaped("perf_event_open returned an event fd");
	return attack_blocked("perf_event_open", errno);
}

/* userfaultfd: the race-widening primitive of many kernel exploits. */
static int attack_userfaultfd(int argc, char **argv)
{
	long fd;

	(void)argc;
	(void)argv;
	fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0)
		return attack_escaped("userfaultfd() returned an fd");
	fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd >= 0)
		return attack_escaped("userfaultfd(UFFD_USER_MODE_ONLY) returned an fd");
	return attack_blocked("userfaultfd", errno);
}

/*
 * Find a terminal to inject into. WHERE is "pty" (a fresh pty made our
 * controlling terminal: TIOCSTI needs the target to be the caller's ctty, and
 * this way nothing is typed into the terminal of whoever runs the suite),
 * "tty" (/dev/tty, then stdio: the terminal boxy was started from under --tty),
 * or "any" (all of them in that order).
 */
static int tty_find(const char *where, const char **what)
{
	bool any = strcmp(where, "any") == 0;
	int m;

	if (any || strcmp(where, "pty") == 0) {
		m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0) {
			const char *name = ptsname(m);
			int s;

			setsid();
			s = name ? open(name, O_RDWR) : -1;
			if (s >= 0) {
				*what = "a fresh pty (our controlling terminal)";
				return s;       /* m stays open on purpose: the pair must live */
			}
		}
		if (m >= 0)
			close(m);
	}
	if (any || strcmp(where, "tty") == 0) {
		m = open("/dev/tty", O_RDWR | O_NOCTTY);
		if (m >= 0) {
			*what = "/dev/tty";
			return m;
		}
		for (int fd = 0; fd <= 2; fd++)
			if (isatty(fd)) {
				*what = "stdio";
				return fd;
			}
	}
	return -1;
}

/* TIOCSTI: push characters into a terminal's input queue, to be run by the shell reading it. */
static int attack_tiocsti(int argc, char **argv)
{
	const char *what = NULL;
	char c = '#';
	int fd;

	fd = tty_find(argc > 0 ? argv[0] : "any", &what);
	if (fd < 0)
		return attack_untested("no terminal to inject into");
	if (ioctl(fd, TIOCSTI, &c) == 0)
		return attack_escaped("TIOCSTI injected a character into %s", what);
	return attack_blocked("ioctl(TIOCSTI)", errno);
}

/* TIOCLINUX: the other injection ioctl (selection paste on a VT). */
static int attack_tioclinux(int argc, char **argv)
{
	const char *what = NULL;
	char sub = 3;   /* TIOCL_PASTESEL */
	int fd;

	fd = tty_find(argc > 0 ? argv[0] : "any", &what);
	if (fd < 0)
		return attack_untested("no terminal to inject into");
	if (ioctl(fd, TIOCLINUX, &sub) == 0)
		return attack_escaped("TIOCLINUX paste accepted on %s", what);
	/* Not a VT: the ioctl got past seccomp to the tty layer, which refused it. */
	if (errno == ENOTTY || errno == EINVAL)
		return attack_blocked("ioctl(TIOCLINUX) (tty refused it, not a VT)", errno);
	return attack_blocked("ioctl(TIOCLINUX)", errno);
}

/* personality(ADDR_NO_RANDOMIZE): turn off ASLR for what we exec next. */
static int attack_personality(int argc, char **argv)
{
	int cur;

	(void)argc;
	(void)argv;
	if (personality(PER_LINUX | ADDR_NO_RANDOMIZE) < 0)
		return attack_blocked("personality(ADDR_NO_RANDOMIZE)", errno);
	cur = personality(0xffffffff);
	if (cur >= 0 && (cur & ADDR_NO_RANDOMIZE))
		return attack_escaped("ASLR disabled with personality(ADDR_NO_RANDOMIZE)");
	return attack_blocked("personality (flag did not stick)", errno ? errno : EPERM);
}

/* socket(AF_PACKET): raw link-layer access. */
static int attack_af_packet(int argc, char **argv)
{
	int fd;

	(void)argc;
	(void)argv;
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd >= 0)
		return attack_escaped("opened an AF_PACKET socket");
	return attack_blocked("socket(AF_PACKET)", errno);
}

/* chroot: the first step of the classic chroot-escape dance. */
static int attack_chroot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (chroot(".") == 0)
		return attack_escaped("chroot(.) succeeded");
	return attack_blocked("chroot", errno);
}

/* kexec_load with zero segments: harmless if it works, but it must not. */
static int attack_kexec(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL) == 0)
		return attack_escaped("kexec_load accepted");
	if (errno != EPERM && errno != ENOSYS)
		return attack_escaped("kexec_load passed the capability check (%s)",
				      strerror(errno));
	return attack_blocked("kexec_load", errno);
}

/* init_module/finit_module: EPERM is the capability check; anything else got past it. */
static int attack_init_module(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (syscall(SYS_init_module, NULL, 0UL, "") == 0)
		return attack_escaped("init_module accepted");
	if (errno != EPERM && errno != ENOSYS)
		return attack_escaped("init_module passed the capability check (%s)",
				      strerror(errno));
	if (syscall(SYS_finit_module, -1, "", 0) == 0)
		return attack_escaped("finit_module accepted");
	if (errno != EPERM && errno != ENOSYS)
		return attack_escaped("finit_module passed the capability check (%s)",
				      strerror(errno));
	return attack_blocked("init_module/finit_module", errno);
}

/* open_by_handle_at: the "shocker" escape, opening any inode on the filesystem by handle. */
static int attack_open_by_handle(int argc, char **argv)
{
	const char *path = argc > 0 ? argv[0] : "/";
	struct file_handle *fh;
	int mount_id, mfd, fd;

	fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	if (!fh)
		return attack_untested("out of memory");
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0) != 0) {
		/* Forge a handle instead: the root inode of ext4 is 2. */
		fh->handle_bytes = 8;
		fh->handle_type = 1;
		memset(fh->f_handle, 0, 8);
		fh->f_handle[0] = 2;
	}
	mfd = open(path, O_RDONLY | O_DIRECTORY);
	fd = open_by_handle_at(mfd >= 0 ? mfd : AT_FDCWD, fh, O_RDONLY);
	if (fd >= 0)
		return attack_escaped("open_by_handle_at opened %s by handle", path);
	return attack_blocked("open_by_handle_at", errno);
}

/* Connect to a unix socket (the SSH agent, the Docker socket; @NAME is abstract). */
static int attack_connect_unix(int argc, char **argv)
{
	struct sockaddr_un sun;
	socklen_t len;
	char buf[128];
	ssize_t n;
	int fd;

	if (argc < 1)
		return attack_untested("usage: connect-unix PATH");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[0]);
	len = offsetof(struct sockaddr_un, sun_path) + strlen(sun.sun_path) + 1;
	if (sun.sun_path[0] == '@') {
		/* Abstract namespace: scoped by network namespace, not by the filesystem. */
		sun.sun_path[0] = '\0';
		len--;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return attack_blocked("socket(AF_UNIX)", errno);
	if (connect(fd, (struct sockaddr *)&sun, len) != 0)
		return attack_blocked("connect", errno);
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return attack_escaped("connected to %s (server said: %s)", argv[0], buf);
}

/* Connect over TCP to ADDR PORT (a host loopback listener must be unreachable). */
static int attack_connect_tcp(int argc, char **argv)
{
	struct sockaddr_in sin;
	char buf[128];
	ssize_t n;
	int fd;

	if (argc < 2)
		return attack_untested("usage: connect-tcp ADDR PORT");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)atoi(argv[1]));
	if (inet_pton(AF_INET, argv[0], &sin.sin_addr) != 1)
		return attack_untested("bad address");
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return attack_blocked("socket(AF_INET)", errno);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		return attack_blocked("connect", errno);
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return attack_escaped("connected to %s:%s (server said: %s)", argv[0], argv[1], buf);
}

/* List network interfaces: under --net none only lo may exist. */
static int attack_netdevs(int argc, char **argv)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	char others[512] = "";

	(void)argc;
	(void)argv;
	if (!ifs)
		return attack_blocked("if_nameindex", errno);
	for (i = ifs; i->if_index; i++)
		if (strcmp(i->if_name, "lo") != 0) {
			strncat(others, " ", sizeof(others) - strlen(others) - 1);
			strncat(others, i->if_name, sizeof(others) - strlen(others) - 1);
		}
	if_freenameindex(ifs);
	if (others[0])
		return attack_escaped("interfaces besides lo:%s", others);
	printf("blocked: %s: only lo\n", attack_name);
	return V_BLOCKED;
}

/*
 * Inherited descriptors: the harness opens fd 7 on the planted home directory,
 * fd 8 on ~/.ssh/id_rsa and fd 9 on its own mount namespace before starting boxy.
 * Any of them open here is a way out (fchdir, read, setns).
 */
static int attack_fds(int argc, char **argv)
{
	int worked = 0;

	(void)argc;
	(void)argv;
	for (int fd = 3; fd < 64; fd++) {
		struct stat st;
		char buf[160];
		ssize_t n;

		if (fstat(fd, &st) != 0)
			continue;
		if (fd < 7 || fd > 9) {
			printf("note: fd %d is open (mode %o)\n", fd, (unsigned)st.st_mode);
			continue;
		}
		worked++;
		if (S_ISDIR(st.st_mode)) {
			int k = openat(fd, ".ssh/id_rsa", O_RDONLY);

			n = k >= 0 ? read(k, buf, sizeof(buf) - 1) : -1;
			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			attack_escaped("inherited directory fd %d; read through it: %s", fd, buf);
		} else if (S_ISREG(st.st_mode)) {
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			attack_escaped("inherited file fd %d: %s", fd, buf);
		} else if (setns(fd, 0) == 0) {
			attack_escaped("inherited namespace fd %d and joined it", fd);
		} else {
			attack_escaped("inherited fd %d (mode %o; setns: %s)", fd,
				       (unsigned)st.st_mode, strerror(errno));
		}
	}
	if (worked)
		return V_ESCAPED;
	printf("blocked: %s: no harness descriptor reached the payload\n", attack_name);
	return V_BLOCKED;
}

/*
 * A bounded fork bomb: fork up to MAX sleeping children, stop at the first
 * failure, count them, kill them. More than LIMIT alive at once means the pids
 * limit did not hold. The children die with us (PDEATHSIG) and in 20 s anyway.
 */
static int attack_forkbomb(int argc, char **argv)
{
	int max = argc > 0 ? atoi(argv[0]) : 300;
	int limit = argc > 1 ? atoi(argv[1]) : 64;
	pid_t *kids;
	int n = 0, err = 0;

	if (max <= 0 || max > 5000)
		return attack_untested("MAX out of range");
	kids = calloc((size_t)max, sizeof(*kids));
	if (!kids)
		return attack_untested("out of memory");
	while (n < max) {
		pid_t pid = fork();

		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			alarm(20);
			for (;;)
				pause();
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[n++] = pid;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	printf("forked %d of %d (%s)\n", n, max, err ? strerror(err) : "no failure");
	if (n > limit)
		return attack_escaped("%d processes alive at once, limit %d", n + 1, limit);
	return attack_blocked("fork", err ? err : EAGAIN);
}

struct attack {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct attack attacks[] = {
	{ "mount", attack_mount, "[DIR] mount a tmpfs" },
	{ "unshare-user", attack_unshare_user, "unshare(CLONE_NEWUSER)" },
	{ "unshare-r", attack_unshare_r, "unshare -r, then mount" },
	{ "clone-newuser", attack_clone_newuser, "clone(CLONE_NEWUSER)" },
	{ "clone3-newuser", attack_clone3_newuser, "clone3 with CLONE_NEWUSER" },
	{ "setns", attack_setns, "[PID] setns into /proc/PID/ns/*" },
	{ "ptrace-child", attack_ptrace_child, "PTRACE_ATTACH to a child" },
	{ "ptrace-sibling", attack_ptrace_sibling, "PTRACE_ATTACH to a sibling" },
	{ "io_uring", attack_io_uring, "io_uring_setup" },
	{ "bpf", attack_bpf, "bpf map create / prog load" },
	{ "keyctl", attack_keyctl, "[DESC] keyctl search/read" },
	{ "add-key", helper_add_key, "DESC PAYLOAD (harness helper)" },
	{ "perf", attack_perf, "perf_event_open on self" },
	{ "userfaultfd", attack_userfaultfd, "userfaultfd" },
	{ "tiocsti", attack_tiocsti, "[pty|tty|any] TIOCSTI injection" },
	{ "tioclinux", attack_tioclinux, "[pty|tty|any] TIOCLINUX paste" },
	{ "personality", attack_personality, "personality(ADDR_NO_RANDOMIZE)" },
	{ "af-packet", attack_af_packet, "socket(AF_PACKET)" },
	{ "chroot", attack_chroot, "chroot(.)" },
	{ "kexec", attack_kexec, "kexec_load" },
	{ "init-module", attack_init_module, "init_module/finit_module" },
	{ "open-by-handle", attack_open_by_handle, "[PATH] open_by_handle_at" },
	{ "connect-unix", attack_connect_unix, "PATH connect to a unix socket" },
	{ "connect-tcp", attack_connect_tcp, "ADDR PORT connect over TCP" },
	{ "netdevs", attack_netdevs, "list interfaces" },
	{ "fds", attack_fds, "inherited descriptors 7-9" },
	{ "forkbomb", attack_forkbomb, "[MAX [LIMIT]] bounded fork bomb" },
};

/* List the attacks. */
static int usage(FILE *f)
{
	fprintf(f, "usage: attack NAME [ARGS...]\n");
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		fprintf(f, "  %-16s %s\n", attacks[i].name, attacks[i].help);
	return V_UNTESTED;
}

/* Run the named attack in a child and print a verdict even if the child is killed. */
int main(int argc, char **argv)
{
	const struct attack *a = NULL;
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage(stderr);
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		if (strcmp(argv[1], attacks[i].name) == 0)
			a = &attacks[i];
	if (!a)
		return usage(stderr);
	attack_name = a->name;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("untested: %s: fork: %s\n", attack_name, strerror(errno));
		return V_UNTESTED;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(a->fn(argc - 2, argv + 2));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			printf("untested: %s: waitpid: %s\n", attack_name, strerror(errno));
			return V_UNTESTED;
		}
	if (WIFSIGNALED(status)) {
		printf("blocked: %s: killed by signal %d (%s)\n", attack_name,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		return V_BLOCKED;
	}
	return WEXITSTATUS(status) <= V_UNTESTED ? WEXITSTATUS(status) : V_UNTESTED;
}
