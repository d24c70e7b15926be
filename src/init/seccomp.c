/*
 * init/seccomp.c — the seccomp filter, the last stage of boxy-init.
 *
 * The filter is an allowlist for x86-64 built with libseccomp. A syscall on
 * the allowlist runs; one that only an attack needs (io_uring, bpf, keyctl,
 * ptrace, mount and the new mount API, namespaces, module and kexec loading,
 * perf, userfaultfd, handles, raw I/O ports, clocks, landlock_*) kills the
 * whole process in strict mode and fails with EPERM in compat mode, so an
 * attempt is loud; anything else — unlisted, obsolete or newer than this
 * table — fails with ENOSYS, which is what a runtime sees on an older kernel
 * and falls back from. That is why clone3 is not allowed: its flags live in
 * memory the filter cannot read, and glibc answers ENOSYS by using clone,
 * whose flags are a register the filter checks.
 *
 * A handful of syscalls are decided by their arguments: clone and unshare
 * (namespace flags), socket and socketpair (address family, netlink
 * protocol), ioctl (terminal injection and line disciplines), personality,
 * prctl (an allowlist of options), seccomp itself (no user-notification
 * listener), and every call that sets a file's mode — chmod, fchmod,
 * fchmodat, fchmodat2, creat, mknod, mknodat, and open/openat when they
 * create — which fail with EPERM when the mode has S_ISUID or S_ISGID: the
 * host would see a set-id file of the user's in the work directory (nosuid
 * acts only inside). openat2 carries its mode in a struct the filter cannot
 * read, so it is off the allowlist (ENOSYS, and callers fall back to openat). Arguments the kernel declares as int or unsigned int are
 * compared on their low 32 bits only, because that is all the kernel reads:
 * a filter comparing the whole register would let ioctl(fd, 0x100005412)
 * through as something other than the TIOCSTI the kernel then executes.
 *
 * Non-native system call ABIs are killed in both modes: i386 (int 0x80,
 * AUDIT_ARCH_I386) through libseccomp's bad-architecture action, and x32
 * (AUDIT_ARCH_X86_64 with __X32_SYSCALL_BIT set in the number), which
 * libseccomp routes to the same action when x32 is not in the filter; the
 * tests assert both. doc/seccomp.md gives the reason for every row.
 *
 * boxy-init no longer runs this code: the build does (init/seccomp-gen.c),
 * once per mode, and boxy-init loads the result (init/seccomp-load.c).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "init/stages.h"
#include "common/util.h"

/* Flags and constants spelled out here so the filter does not depend on which headers are new. */
#define SC_CLONE_NEWTIME    0x00000080ull
#define SC_CLONE_FS         0x00000200ull
#define SC_CLONE_FILES      0x00000400ull
#define SC_CLONE_NEWNS      0x00020000ull
#define SC_CLONE_SYSVSEM    0x00040000ull
#define SC_CLONE_NEWCGROUP  0x02000000ull
#define SC_CLONE_NEWUTS     0x04000000ull
#define SC_CLONE_NEWIPC     0x08000000ull
#define SC_CLONE_NEWUSER    0x10000000ull
#define SC_CLONE_NEWPID     0x20000000ull
#define SC_CLONE_NEWNET     0x40000000ull

#define SC_LOW32            0xffffffffull

/*
 * Allowed with any arguments: what build tools, interpreters, compilers, git
 * and coreutils call. Each group's reason is in doc/seccomp.md.
 */
static const char *const seccomp_allowed[] = {
	/* files: the classic calls, their *at variants, statx (open, creat, mknod and
	 * the chmods are conditional: set-id modes, below; openat2 is off the list) */
	"read", "write", "close", "close_range",
	"stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
	"lseek", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
	"preadv2", "pwritev2", "access", "faccessat", "faccessat2",
	"dup", "dup2", "dup3", "fcntl", "flock", "fsync", "fdatasync", "syncfs", "sync",
	"sync_file_range", "truncate", "ftruncate", "fallocate", "fadvise64", "readahead",
	"getdents", "getdents64", "getcwd", "chdir", "fchdir",
	"rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
	"link", "linkat", "unlink", "unlinkat", "symlink", "symlinkat",
	"readlink", "readlinkat",
	"chown", "fchown", "lchown", "fchownat",
	"umask", "utime", "utimes", "utimensat", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr", "fgetxattr",
	"listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr",
	"fremovexattr",
	/* copying without a round trip through user space */
	"sendfile", "copy_file_range", "splice", "tee", "vmsplice",
	/* memory */
	"brk", "mmap", "munmap", "mprotect", "mremap", "msync", "mincore", "madvise",
	"mlock", "mlock2", "munlock", "mlockall", "munlockall",
	"memfd_create", "membarrier", "pkey_mprotect", "pkey_alloc", "pkey_free",
	"mbind", "get_mempolicy", "set_mempolicy", "map_shadow_stack",
	/* processes and threads (clone and unshare are conditional, below) */
	"fork", "vfork", "execve", "execveat", "exit", "exit_group",
	"wait4", "waitid", "kill", "tkill", "tgkill",
	"pidfd_open", "pidfd_send_signal",
	"set_tid_address", "set_robust_list", "rseq", "restart_syscall", "arch_prctl",
	"getpid", "gettid", "getppid", "getpgrp", "getpgid", "setpgid", "getsid", "setsid",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
	"setfsuid", "setfsgid", "setgroups", "capget", "capset",
	"uname", "sysinfo", "times", "getrusage", "getrlimit", "setrlimit", "prlimit64",
	"getpriority", "setpriority", "ioprio_get", "ioprio_set", "getcpu",
	"sched_yield", "sched_setparam", "sched_getparam", "sched_setscheduler",
	"sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min",
	"sched_rr_get_interval", "sched_setaffinity", "sched_getaffinity",
	"sched_setattr", "sched_getattr",
	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
	"rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigsuspend",
	"sigaltstack", "pause", "signalfd", "signalfd4",
	/* time (reading clocks and sleeping; setting them is denied) */
	"time", "gettimeofday", "clock_gettime", "clock_getres", "clock_nanosleep",
	"nanosleep", "alarm", "getitimer", "setitimer",
	"timer_create", "timer_settime", "timer_gettime", "timer_getoverrun",
	"timer_delete", "timerfd_create", "timerfd_settime", "timerfd_gettime",
	/* waiting: futexes and event loops */
	"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue",
	"poll", "ppoll", "select", "pselect6",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "eventfd", "eventfd2", "pipe", "pipe2",
	"inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	/* Not legacy AIO (io_setup…): its contexts count against the host-wide
	 * fs.aio-max-nr, so one payload could starve every database on the host.
	 * Unlisted, it gets ENOSYS and libaio users fall back to threads. */
	/* System V and POSIX IPC: the sandbox has an IPC namespace of its own */
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl",
	"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
	"mq_getsetattr",
	/* sockets (socket and socketpair are conditional, below) */
	"connect", "accept", "accept4", "bind", "listen", "shutdown",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	"getsockname", "getpeername", "setsockopt", "getsockopt",
	/* randomness */
	"getrandom",
};

/*
 * Only an attack needs these: killed in strict mode, EPERM in compat mode.
 * Most would fail anyway for want of a capability; the filter makes the
 * kernel code behind them unreachable, which is the point for io_uring,
 * bpf, userfaultfd, perf and keyctl, whose bugs have been the way out of
 * containers before.
 */
static const char *const seccomp_denied[] = {
	/* kernel attack surface reachable without privilege */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd", "modify_ldt",
	"keyctl", "add_key", "request_key",
	/* other processes' memory and descriptors */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	/* the filesystem view */
	"mount", "umount2", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig",
	"fspick", "mount_setattr", "pivot_root", "chroot",
	"open_by_handle_at", "name_to_handle_at",
	/* namespaces (and clone/unshare with namespace flags, below) */
	"setns",
	/* the Landlock policy is already in force */
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	/* the machine */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"lookup_dcookie", "iopl", "ioperm", "syslog",
	"settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
};

/* prctl options the payload may use (option is an int: compared on 32 bits). */
static const uint32_t seccomp_prctl_allowed[] = {
	1,          /* PR_SET_PDEATHSIG */
	2,          /* PR_GET_PDEATHSIG */
	3,          /* PR_GET_DUMPABLE */
	4,          /* PR_SET_DUMPABLE */
	7,          /* PR_GET_KEEPCAPS */
	8,          /* PR_SET_KEEPCAPS */
	15,         /* PR_SET_NAME */
	16,         /* PR_GET_NAME */
	21,         /* PR_GET_SECCOMP */
	22,         /* PR_SET_SECCOMP: a further filter only narrows */
	23,         /* PR_CAPBSET_READ */
	24,         /* PR_CAPBSET_DROP */
	25,         /* PR_GET_TSC */
	26,         /* PR_SET_TSC */
	27,         /* PR_GET_SECUREBITS */
	29,         /* PR_SET_TIMERSLACK */
	30,         /* PR_GET_TIMERSLACK */
	36,         /* PR_SET_CHILD_SUBREAPER */
	37,         /* PR_GET_CHILD_SUBREAPER */
	38,         /* PR_SET_NO_NEW_PRIVS */
	39,         /* PR_GET_NO_NEW_PRIVS */
	41,         /* PR_SET_THP_DISABLE */
	42,         /* PR_GET_THP_DISABLE */
	47,         /* PR_CAP_AMBIENT: nothing to raise, clearing is harmless */
	52,         /* PR_GET_SPECULATION_CTRL */
	53,         /* PR_SET_SPECULATION_CTRL */
	65,         /* PR_SET_MDWE */
	66,         /* PR_GET_MDWE */
	0x41555856, /* PR_GET_AUXV */
	0x53564d41, /* PR_SET_VMA (naming anonymous mappings) */
	0x59616d61, /* PR_SET_PTRACER (Yama) */
};

/* ioctl requests that inject input into, or reconfigure, a terminal (32-bit compare). */
static const uint32_t seccomp_ioctl_denied[] = {
	0x5412,     /* TIOCSTI: push bytes into the terminal's input queue */
	0x541C,     /* TIOCLINUX: selection paste and console subcodes */
	0x541D,     /* TIOCCONS: redirect the console */
	0x5423,     /* TIOCSETD: line disciplines (n_hdlc, n_gsm: past CVEs) */
};

/* socket families that may be created (family is an int: compared on 32 bits). */
static const uint32_t seccomp_families_allowed[] = {
	1,          /* AF_UNIX */
	2,          /* AF_INET */
	10,         /* AF_INET6 */
	16,         /* AF_NETLINK: NETLINK_ROUTE only (getifaddrs, getaddrinfo) */
};
#define SC_AF_NETLINK       16
#define SC_NETLINK_ROUTE    0

/* personality values allowed: PER_LINUX and the query. */
static const uint32_t seccomp_personality_allowed[] = { 0x00000000, 0xffffffff };

#define SC_SECCOMP_SET_MODE_STRICT      0
#define SC_SECCOMP_SET_MODE_FILTER      1
#define SC_SECCOMP_GET_ACTION_AVAIL     2
#define SC_SECCOMP_GET_NOTIF_SIZES      3
#define SC_SECCOMP_FLAG_NEW_LISTENER    (1ull << 3)

/* File-mode bits and open flags, for the set-id rules (the kernel's values on x86-64). */
#define SC_S_ISUID          04000ull
#define SC_S_ISGID          02000ull
#define SC_O_CREAT          0100ull
#define SC___O_TMPFILE      020000000ull

/*
 * The calls that set a mode, and where: name, the index of the mode
 * argument, and the index of the open flags (-1: the mode always applies).
 */
static const struct {
	const char *name;
	unsigned int mode_arg;
	int flags_arg;
} seccomp_mode_calls[] = {
	{ "chmod", 1, -1 },     /* chmod(path, mode) */
	{ "fchmod", 1, -1 },    /* fchmod(fd, mode) */
	{ "fchmodat", 2, -1 },  /* fchmodat(dirfd, path, mode) */
	{ "fchmodat2", 2, -1 }, /* fchmodat2(dirfd, path, mode, flags) */
	{ "creat", 1, -1 },     /* creat(path, mode) */
	{ "mknod", 1, -1 },     /* mknod(path, mode, dev) */
	{ "mknodat", 2, -1 },   /* mknodat(dirfd, path, mode, dev) */
	{ "open", 2, 1 },       /* open(path, flags, mode) */
	{ "openat", 3, 2 },     /* openat(dirfd, path, flags, mode) */
};

/* One filter under construction: the context, the action for denied calls, the error. */
struct sc_build {
	scmp_filter_ctx ctx;
	uint32_t deny;      /* SCMP_ACT_KILL_PROCESS or SCMP_ACT_ERRNO(EPERM) */
	char **err;
};

/* Add one rule; name is for the error message. -1 with *err on failure. */
static int sc_rule(struct sc_build *b, uint32_t action, const char *name,
		   unsigned int ncmp, const struct scmp_arg_cmp *cmp)
{
	int nr = seccomp_syscall_resolve_name(name);
	int rc;

	/*
	 * A libseccomp older than the syscall does not know its name. Skipping
	 * is safe in both directions: an allowed call then gets ENOSYS, a denied
	 * one gets ENOSYS rather than a kill. The tests pin the table.
	 */
	if (nr == __NR_SCMP_ERROR)
		return 0;
	rc = seccomp_rule_add_array(b->ctx, action, nr, ncmp, cmp);
	if (rc < 0) {
		errno = -rc;
		return set_err_errno(b->err, "seccomp rule for %s", name);
	}
	return 0;
}

/*
 * Add rules giving action to calls whose low 32 bits of argument arg lie in
 * [lo, hi], and for which the optional extra comparison holds. libseccomp
 * takes one comparison per argument per rule and cannot say "not in this
 * set", so a range is cut into aligned power-of-two blocks, each of which is
 * one masked equality on the low word.
 */
static int sc_rule_range(struct sc_build *b, uint32_t action, const char *name, unsigned int arg,
			 uint64_t lo, uint64_t hi, const struct scmp_arg_cmp *extra)
{
	while (lo <= hi) {
		uint64_t size = lo == 0 ? (1ull << 32) : (lo & -lo);
		struct scmp_arg_cmp cmp[2];
		unsigned int n = 0;

		while (lo + size - 1 > hi)
			size >>= 1;
		cmp[n++] = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, ~(size - 1) & SC_LOW32, lo);
		if (extra)
			cmp[n++] = *extra;
		if (sc_rule(b, action, name, n, cmp) < 0)
			return -1;
		lo += size;
	}
	return 0;
}

/*
 * Give action to every low-32-bit value of argument arg that is not in the
 * sorted set (values[], n), and allow the values in the set.
 */
static int sc_rule_set(struct sc_build *b, const char *name, unsigned int arg,
		       const uint32_t *values, size_t n, uint32_t other_action)
{
	uint64_t next = 0;

	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp eq = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, SC_LOW32, values[i]);

		if (values[i] > next &&
		    sc_rule_range(b, other_action, name, arg, next, values[i] - 1ull, NULL) < 0)
			return -1;
		if (sc_rule(b, SCMP_ACT_ALLOW, name, 1, &eq) < 0)
			return -1;
		next = values[i] + 1ull;
	}
	return sc_rule_range(b, other_action, name, arg, next, SC_LOW32, NULL);
}

/*
 * A call that sets a mode: EPERM in both modes when the mode has S_ISUID or
 * S_ISGID, allowed otherwise. The mode is a umode_t to the kernel, so only
 * its set-id bits are tested and the rest of the register does not matter.
 * open and openat use the mode only when they create (O_CREAT, or the
 * __O_TMPFILE bit of O_TMPFILE), exactly as the kernel's build_open_how
 * does; without those flags the register may hold anything. Not a kill: cp
 * -p, install -m and tar -p do this with set-id sources and must get an
 * error they report, not die. The rules are disjoint by action: either
 * allow rule matching means no deny rule can.
 */
static int sc_rules_mode(struct sc_build *b, const char *name, unsigned int mode_arg,
			 int flags_arg)
{
	static const uint64_t setid[] = { SC_S_ISUID, SC_S_ISGID };
	static const uint64_t creating[] = { SC_O_CREAT, SC___O_TMPFILE };
	struct scmp_arg_cmp c[2];

	c[0] = SCMP_CMP(mode_arg, SCMP_CMP_MASKED_EQ, SC_S_ISUID | SC_S_ISGID, 0);
	if (sc_rule(b, SCMP_ACT_ALLOW, name, 1, c) < 0)
		return -1;
	if (flags_arg >= 0) {
		c[0] = SCMP_CMP((unsigned int)flags_arg, SCMP_CMP_MASKED_EQ,
				SC_O_CREAT | SC___O_TMPFILE, 0);
		if (sc_rule(b, SCMP_ACT_ALLOW, name, 1, c) < 0)
			return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(setid); i++) {
		c[0] = SCMP_CMP(mode_arg, SCMP_CMP_MASKED_EQ, setid[i], setid[i]);
		if (flags_arg < 0) {
			if (sc_rule(b, SCMP_ACT_ERRNO(EPERM), name, 1, c) < 0)
				return -1;
			continue;
		}
		for (size_t j = 0; j < ARRAY_SIZE(creating); j++) {
			c[1] = SCMP_CMP((unsigned int)flags_arg, SCMP_CMP_MASKED_EQ, creating[j],
					creating[j]);
			if (sc_rule(b, SCMP_ACT_ERRNO(EPERM), name, 2, c) < 0)
				return -1;
		}
	}
	return 0;
}

/* clone(flags, …): allowed without namespace flags, denied with any of them. */
static int sc_rules_clone(struct sc_build *b)
{
	/* Not CLONE_NEWTIME (0x80): in clone's flags that bit is part of the exit signal. */
	static const uint64_t ns[] = {
		SC_CLONE_NEWNS, SC_CLONE_NEWCGROUP, SC_CLONE_NEWUTS, SC_CLONE_NEWIPC,
		SC_CLONE_NEWUSER, SC_CLONE_NEWPID, SC_CLONE_NEWNET,
	};
	uint64_t all = 0;

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]);

		all |= ns[i];
		if (sc_rule(b, b->deny, "clone", 1, &c) < 0)
			return -1;
	}
	/* The kernel reads only the low 32 bits of clone's flags; every bit tested here is in them. */
	struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_MASKED_EQ, all, 0);
	return sc_rule(b, SCMP_ACT_ALLOW, "clone", 1, &none);
}

/*
 * unshare(flags): denied with any namespace flag; allowed when only
 * CLONE_FILES, CLONE_FS or CLONE_SYSVSEM are set (a process giving up shared
 * state, nothing new). Any other flag gets the default ENOSYS.
 */
static int sc_rules_unshare(struct sc_build *b)
{
	static const uint64_t ns[] = {
		SC_CLONE_NEWTIME, SC_CLONE_NEWNS, SC_CLONE_NEWCGROUP, SC_CLONE_NEWUTS,
		SC_CLONE_NEWIPC, SC_CLONE_NEWUSER, SC_CLONE_NEWPID, SC_CLONE_NEWNET,
	};
	const uint64_t harmless = SC_CLONE_FILES | SC_CLONE_FS | SC_CLONE_SYSVSEM;

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]);

		if (sc_rule(b, b->deny, "unshare", 1, &c) < 0)
			return -1;
	}
	/* unshare's flags are an unsigned long: all 64 bits must be clear outside the harmless set. */
	struct scmp_arg_cmp only = SCMP_A0(SCMP_CMP_MASKED_EQ, ~harmless, 0);
	return sc_rule(b, SCMP_ACT_ALLOW, "unshare", 1, &only);
}

/*
 * socket and socketpair: AF_UNIX, AF_INET, AF_INET6 with any type and
 * protocol; AF_NETLINK with NETLINK_ROUTE only; every other family denied.
 * The type argument (which carries SOCK_NONBLOCK and SOCK_CLOEXEC) is not
 * examined: raw and packet sockets need CAP_NET_RAW, which is gone.
 */
static int sc_rules_socket(struct sc_build *b, const char *name)
{
	uint64_t next = 0;

	for (size_t i = 0; i < ARRAY_SIZE(seccomp_families_allowed); i++) {
		uint32_t fam = seccomp_families_allowed[i];
		struct scmp_arg_cmp c[2] = {
			SCMP_A0(SCMP_CMP_MASKED_EQ, SC_LOW32, fam),
			SCMP_A2(SCMP_CMP_MASKED_EQ, SC_LOW32, SC_NETLINK_ROUTE),
		};

		if (fam > next && sc_rule_range(b, b->deny, name, 0, next, fam - 1ull, NULL) < 0)
			return -1;
		next = fam + 1ull;
		if (fam != SC_AF_NETLINK) {
			if (sc_rule(b, SCMP_ACT_ALLOW, name, 1, c) < 0)
				return -1;
			continue;
		}
		/* Netlink: route allowed, every other protocol (audit, uevent, netfilter…) denied. */
		if (sc_rule(b, SCMP_ACT_ALLOW, name, 2, c) < 0 ||
		    sc_rule_range(b, b->deny, name, 2, SC_NETLINK_ROUTE + 1ull, SC_LOW32, &c[0]) < 0)
			return -1;
	}
	return sc_rule_range(b, b->deny, name, 0, next, SC_LOW32, NULL);
}

/* ioctl: every request but the terminal-injection ones (compared on the low 32 bits of cmd). */
static int sc_rules_ioctl(struct sc_build *b)
{
	uint64_t next = 0;

	/*
	 * The kernel declares cmd as unsigned int and ignores the upper half
	 * of the register, so the denied values are matched on the low word
	 * and the allowed remainder is everything else on the low word.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(seccomp_ioctl_denied); i++) {
		uint32_t v = seccomp_ioctl_denied[i];
		struct scmp_arg_cmp eq = SCMP_A1(SCMP_CMP_MASKED_EQ, SC_LOW32, v);

		if (v > next && sc_rule_range(b, SCMP_ACT_ALLOW, "ioctl", 1, next, v - 1ull, NULL) < 0)
			return -1;
		if (sc_rule(b, b->deny, "ioctl", 1, &eq) < 0)
			return -1;
		next = v + 1ull;
	}
	return sc_rule_range(b, SCMP_ACT_ALLOW, "ioctl", 1, next, SC_LOW32, NULL);
}

/* prctl: the options in seccomp_prctl_allowed; any other gets ENOSYS. */
static int sc_rules_prctl(struct sc_build *b)
{
	for (size_t i = 0; i < ARRAY_SIZE(seccomp_prctl_allowed); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, SC_LOW32, seccomp_prctl_allowed[i]);

		if (sc_rule(b, SCMP_ACT_ALLOW, "prctl", 1, &c) < 0)
			return -1;
	}
	return 0;
}

/*
 * seccomp(op, flags, args): a payload may add filters of its own, which can
 * only narrow what ours allows (the kernel runs every filter and takes the
 * most restrictive verdict). A user-notification listener is refused with
 * EPERM in both modes: it is a supervisor interface, large and bug-prone,
 * that nothing a build runs needs. Other operations get ENOSYS.
 */
static int sc_rules_seccomp(struct sc_build *b)
{
	static const uint32_t simple_ops[] = {
		SC_SECCOMP_SET_MODE_STRICT, SC_SECCOMP_GET_ACTION_AVAIL, SC_SECCOMP_GET_NOTIF_SIZES,
	};
	struct scmp_arg_cmp filter[2] = {
		SCMP_A0(SCMP_CMP_MASKED_EQ, SC_LOW32, SC_SECCOMP_SET_MODE_FILTER),
		SCMP_A1(SCMP_CMP_MASKED_EQ, SC_SECCOMP_FLAG_NEW_LISTENER, 0),
	};

	for (size_t i = 0; i < ARRAY_SIZE(simple_ops); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, SC_LOW32, simple_ops[i]);

		if (sc_rule(b, SCMP_ACT_ALLOW, "seccomp", 1, &c) < 0)
			return -1;
	}
	if (sc_rule(b, SCMP_ACT_ALLOW, "seccomp", 2, filter) < 0)
		return -1;
	filter[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, SC_SECCOMP_FLAG_NEW_LISTENER,
			    SC_SECCOMP_FLAG_NEW_LISTENER);
	return sc_rule(b, SCMP_ACT_ERRNO(EPERM), "seccomp", 2, filter);
}

/* Build the whole filter for mode into a new context; NULL with *err on failure. */
static scmp_filter_ctx seccomp_build(enum seccomp_mode mode, char **err)
{
	struct sc_build b = {
		.deny = mode == SECCOMP_COMPAT ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_KILL_PROCESS,
		.err = err,
	};
	int rc;

	b.ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
	if (!b.ctx) {
		set_err(err, "seccomp_init failed");
		return NULL;
	}
	/*
	 * A foreign ABI is an attack in either mode: compat only exists to
	 * diagnose a native workload, so the bad-arch action is never downgraded.
	 * The binary-tree layout keeps a lookup near log2(rules) comparisons.
	 */
	rc = seccomp_attr_set(b.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(b.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc == 0)
		rc = seccomp_attr_set(b.ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (rc < 0) {
		errno = -rc;
		set_err_errno(err, "seccomp filter attribute");
		goto fail;
	}

	for (size_t i = 0; i < ARRAY_SIZE(seccomp_allowed); i++)
		if (sc_rule(&b, SCMP_ACT_ALLOW, seccomp_allowed[i], 0, NULL) < 0)
			goto fail;
	for (size_t i = 0; i < ARRAY_SIZE(seccomp_denied); i++)
		if (sc_rule(&b, b.deny, seccomp_denied[i], 0, NULL) < 0)
			goto fail;
	if (sc_rules_clone(&b) < 0 || sc_rules_unshare(&b) < 0 ||
	    sc_rules_socket(&b, "socket") < 0 || sc_rules_socket(&b, "socketpair") < 0 ||
	    sc_rules_ioctl(&b) < 0 || sc_rules_prctl(&b) < 0 || sc_rules_seccomp(&b) < 0 ||
	    sc_rule_set(&b, "personality", 0, seccomp_personality_allowed,
			ARRAY_SIZE(seccomp_personality_allowed), b.deny) < 0)
		goto fail;
	for (size_t i = 0; i < ARRAY_SIZE(seccomp_mode_calls); i++)
		if (sc_rules_mode(&b, seccomp_mode_calls[i].name, seccomp_mode_calls[i].mode_arg,
				  seccomp_mode_calls[i].flags_arg) < 0)
			goto fail;
	return b.ctx;
fail:
	seccomp_release(b.ctx);
	return NULL;
}

/* Export the filter as classic BPF; see init/stages.h. */
int seccomp_export(enum seccomp_mode mode, struct sock_filter **prog, size_t *len, char **err)
{
	scmp_filter_ctx ctx;
	struct sock_filter *insns = NULL;
	off_t size;
	int fd, rc, ret = -1;

	fd = memfd_create("boxy-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return set_err_errno(err, "memfd_create");
	ctx = seccomp_build(mode, err);
	if (!ctx)
		goto out;
	rc = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (rc < 0) {
		errno = -rc;
		set_err_errno(err, "seccomp_export_bpf");
		goto out;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(*insns) != 0 ||
	    size > (off_t)(BPF_MAXINSNS * sizeof(*insns))) {
		set_err(err, "exported seccomp program has an odd size (%lld bytes)", (long long)size);
		goto out;
	}
	insns = xmalloc((size_t)size);
	if (lseek(fd, 0, SEEK_SET) < 0 || read_exact(fd, insns, (size_t)size) != 1) {
		set_err_errno(err, "reading back the seccomp program");
		free(insns);
		goto out;
	}
	*prog = insns;
	*len = (size_t)size / sizeof(*insns);
	ret = 0;
out:
	close(fd);
	return ret;
}

/* List the actions the kernel supports; see init/stages.h. */
int seccomp_probe(char *buf, size_t len)
{
	static const struct {
		const char *name;
		uint32_t action;
	} actions[] = {
		{ "kill_process", SECCOMP_RET_KILL_PROCESS },
		{ "kill_thread", SECCOMP_RET_KILL_THREAD },
		{ "trap", SECCOMP_RET_TRAP },
		{ "errno", SECCOMP_RET_ERRNO },
		{ "user_notif", SECCOMP_RET_USER_NOTIF },
		{ "trace", SECCOMP_RET_TRACE },
		{ "log", SECCOMP_RET_LOG },
		{ "allow", SECCOMP_RET_ALLOW },
	};
	size_t used = 0;
	int found = 0;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(actions); i++) {
		uint32_t action = actions[i].action;
		int n;

		/* EOPNOTSUPP: this action is unknown; EINVAL: the operation itself is (pre-4.14). */
		if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
			if (errno == EOPNOTSUPP)
				continue;
			return -1;
		}
		n = snprintf(buf + used, len - used, "%s%s", found ? " " : "", actions[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
		found++;
	}
	return found;
}
