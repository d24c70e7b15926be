/*
 * test-seccomp.c — the seccomp filter, verdict by verdict.
 *
 * A seccomp filter is otherwise unobservable: a wrong rule shows up as a
 * process dying with no explanation. So the strict and the compat filter are
 * exported as BPF and run in bpf-sim over every x86-64 syscall number that
 * libseccomp knows, and each verdict is compared with the table below, which
 * is written independently of the filter's own lists. A syscall with no row
 * fails the test, so a syscall cannot enter the allowlist — or leave it —
 * without someone deciding its row here. The conditional syscalls are run
 * again with the arguments a payload would pass (namespace flags, socket
 * families, terminal-injection ioctls with and without garbage in the upper
 * half of the register, personalities, prctl options). Foreign ABIs (i386,
 * x32) must be killed in both modes. Finally the filter is loaded for real
 * in forked children: a strict child dies of SIGSYS on unshare(CLONE_NEWUSER)
 * while fork, threads, clone3's fallback and real tools keep working; a
 * compat child gets EPERM instead.
 *
 * The programs simulated and loaded are the ones compiled into the build
 * (init/seccomp-prog.h), which boxy-init loads; they must be byte-identical
 * to what libseccomp assembles from the tables now (seccomp_export, what
 * boxy-init ran on every start before), and boxy-init's check must refuse
 * every other program: the other mode's, a truncated, extended or altered one.
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "init/seccomp-prog.h"
#include "init/stages.h"
#include "bpf-sim.h"

enum verdict {
	V_ALLOW,    /* runs, in both modes */
	V_ENOSYS,   /* fails with ENOSYS, in both modes: not on the allowlist */
	V_EPERM,    /* fails with EPERM, in both modes */
	V_DENY,     /* strict: the process is killed; compat: EPERM */
	V_KILL,     /* killed in both modes (foreign ABIs) */
	V_COND,     /* decided by arguments: see arg_rows */
};

static const char *const verdict_names[] = {
	[V_ALLOW] = "allow", [V_ENOSYS] = "errno(ENOSYS)", [V_EPERM] = "errno(EPERM)",
	[V_DENY] = "deny (kill/EPERM)", [V_KILL] = "kill", [V_COND] = "conditional",
};

struct sys_row {
	const char *name;
	enum verdict v;
};

/* Every x86-64 syscall libseccomp knows, with the verdict doc/seccomp.md argues for. */
static const struct sys_row sys_rows[] = {
	/* ---- allowed: files ---- */
	{ "read", V_ALLOW }, { "write", V_ALLOW }, { "close", V_ALLOW },
	{ "close_range", V_ALLOW }, { "stat", V_ALLOW }, { "fstat", V_ALLOW },
	{ "lstat", V_ALLOW }, { "newfstatat", V_ALLOW }, { "statx", V_ALLOW },
	{ "statfs", V_ALLOW }, { "fstatfs", V_ALLOW }, { "lseek", V_ALLOW },
	{ "pread64", V_ALLOW }, { "pwrite64", V_ALLOW }, { "readv", V_ALLOW },
	{ "writev", V_ALLOW }, { "preadv", V_ALLOW }, { "pwritev", V_ALLOW },
	{ "preadv2", V_ALLOW }, { "pwritev2", V_ALLOW }, { "access", V_ALLOW },
	{ "faccessat", V_ALLOW }, { "faccessat2", V_ALLOW }, { "dup", V_ALLOW },
	{ "dup2", V_ALLOW }, { "dup3", V_ALLOW }, { "fcntl", V_ALLOW }, { "flock", V_ALLOW },
	{ "fsync", V_ALLOW }, { "fdatasync", V_ALLOW }, { "syncfs", V_ALLOW },
	{ "sync", V_ALLOW }, { "sync_file_range", V_ALLOW }, { "truncate", V_ALLOW },
	{ "ftruncate", V_ALLOW }, { "fallocate", V_ALLOW }, { "fadvise64", V_ALLOW },
	{ "readahead", V_ALLOW }, { "getdents", V_ALLOW }, { "getdents64", V_ALLOW },
	{ "getcwd", V_ALLOW }, { "chdir", V_ALLOW }, { "fchdir", V_ALLOW },
	{ "rename", V_ALLOW }, { "renameat", V_ALLOW }, { "renameat2", V_ALLOW },
	{ "mkdir", V_ALLOW }, { "mkdirat", V_ALLOW }, { "rmdir", V_ALLOW },
	{ "link", V_ALLOW }, { "linkat", V_ALLOW }, { "unlink", V_ALLOW },
	{ "unlinkat", V_ALLOW }, { "symlink", V_ALLOW }, { "symlinkat", V_ALLOW },
	{ "readlink", V_ALLOW }, { "readlinkat", V_ALLOW }, { "chown", V_ALLOW },
	{ "fchown", V_ALLOW }, { "lchown", V_ALLOW }, { "fchownat", V_ALLOW },
	{ "umask", V_ALLOW }, { "utime", V_ALLOW }, { "utimes", V_ALLOW },
	{ "utimensat", V_ALLOW }, { "futimesat", V_ALLOW },
	{ "setxattr", V_ALLOW }, { "lsetxattr", V_ALLOW }, { "fsetxattr", V_ALLOW },
	{ "getxattr", V_ALLOW }, { "lgetxattr", V_ALLOW }, { "fgetxattr", V_ALLOW },
	{ "listxattr", V_ALLOW }, { "llistxattr", V_ALLOW }, { "flistxattr", V_ALLOW },
	{ "removexattr", V_ALLOW }, { "lremovexattr", V_ALLOW }, { "fremovexattr", V_ALLOW },
	{ "sendfile", V_ALLOW }, { "copy_file_range", V_ALLOW }, { "splice", V_ALLOW },
	{ "tee", V_ALLOW }, { "vmsplice", V_ALLOW },
	/* ---- allowed: memory ---- */
	{ "brk", V_ALLOW }, { "mmap", V_ALLOW }, { "munmap", V_ALLOW }, { "mprotect", V_ALLOW },
	{ "mremap", V_ALLOW }, { "msync", V_ALLOW }, { "mincore", V_ALLOW },
	{ "madvise", V_ALLOW }, { "mlock", V_ALLOW }, { "mlock2", V_ALLOW },
	{ "munlock", V_ALLOW }, { "mlockall", V_ALLOW }, { "munlockall", V_ALLOW },
	{ "memfd_create", V_ALLOW }, { "membarrier", V_ALLOW }, { "pkey_mprotect", V_ALLOW },
	{ "pkey_alloc", V_ALLOW }, { "pkey_free", V_ALLOW }, { "mbind", V_ALLOW },
	{ "get_mempolicy", V_ALLOW }, { "set_mempolicy", V_ALLOW },
	{ "map_shadow_stack", V_ALLOW },
	/* ---- allowed: processes ---- */
	{ "fork", V_ALLOW }, { "vfork", V_ALLOW }, { "execve", V_ALLOW }, { "execveat", V_ALLOW },
	{ "exit", V_ALLOW }, { "exit_group", V_ALLOW }, { "wait4", V_ALLOW },
	{ "waitid", V_ALLOW }, { "kill", V_ALLOW }, { "tkill", V_ALLOW }, { "tgkill", V_ALLOW },
	{ "pidfd_open", V_ALLOW }, { "pidfd_send_signal", V_ALLOW },
	{ "set_tid_address", V_ALLOW }, { "set_robust_list", V_ALLOW }, { "rseq", V_ALLOW },
	{ "restart_syscall", V_ALLOW }, { "arch_prctl", V_ALLOW }, { "getpid", V_ALLOW },
	{ "gettid", V_ALLOW }, { "getppid", V_ALLOW }, { "getpgrp", V_ALLOW },
	{ "getpgid", V_ALLOW }, { "setpgid", V_ALLOW }, { "getsid", V_ALLOW },
	{ "setsid", V_ALLOW }, { "getuid", V_ALLOW }, { "geteuid", V_ALLOW },
	{ "getgid", V_ALLOW }, { "getegid", V_ALLOW }, { "getresuid", V_ALLOW },
	{ "getresgid", V_ALLOW }, { "getgroups", V_ALLOW }, { "setuid", V_ALLOW },
	{ "setgid", V_ALLOW }, { "setreuid", V_ALLOW }, { "setregid", V_ALLOW },
	{ "setresuid", V_ALLOW }, { "setresgid", V_ALLOW }, { "setfsuid", V_ALLOW },
	{ "setfsgid", V_ALLOW }, { "setgroups", V_ALLOW }, { "capget", V_ALLOW },
	{ "capset", V_ALLOW }, { "uname", V_ALLOW }, { "sysinfo", V_ALLOW },
	{ "times", V_ALLOW }, { "getrusage", V_ALLOW }, { "getrlimit", V_ALLOW },
	{ "setrlimit", V_ALLOW }, { "prlimit64", V_ALLOW }, { "getpriority", V_ALLOW },
	{ "setpriority", V_ALLOW }, { "ioprio_get", V_ALLOW }, { "ioprio_set", V_ALLOW },
	{ "getcpu", V_ALLOW }, { "sched_yield", V_ALLOW }, { "sched_setparam", V_ALLOW },
	{ "sched_getparam", V_ALLOW }, { "sched_setscheduler", V_ALLOW },
	{ "sched_getscheduler", V_ALLOW }, { "sched_get_priority_max", V_ALLOW },
	{ "sched_get_priority_min", V_ALLOW }, { "sched_rr_get_interval", V_ALLOW },
	{ "sched_setaffinity", V_ALLOW }, { "sched_getaffinity", V_ALLOW },
	{ "sched_setattr", V_ALLOW }, { "sched_getattr", V_ALLOW },
	/* ---- allowed: signals, time, waiting ---- */
	{ "rt_sigaction", V_ALLOW }, { "rt_sigprocmask", V_ALLOW }, { "rt_sigreturn", V_ALLOW },
	{ "rt_sigpending", V_ALLOW }, { "rt_sigtimedwait", V_ALLOW },
	{ "rt_sigqueueinfo", V_ALLOW }, { "rt_tgsigqueueinfo", V_ALLOW },
	{ "rt_sigsuspend", V_ALLOW }, { "sigaltstack", V_ALLOW }, { "pause", V_ALLOW },
	{ "signalfd", V_ALLOW }, { "signalfd4", V_ALLOW },
	{ "time", V_ALLOW }, { "gettimeofday", V_ALLOW }, { "clock_gettime", V_ALLOW },
	{ "clock_getres", V_ALLOW }, { "clock_nanosleep", V_ALLOW }, { "nanosleep", V_ALLOW },
	{ "alarm", V_ALLOW }, { "getitimer", V_ALLOW }, { "setitimer", V_ALLOW },
	{ "timer_create", V_ALLOW }, { "timer_settime", V_ALLOW }, { "timer_gettime", V_ALLOW },
	{ "timer_getoverrun", V_ALLOW }, { "timer_delete", V_ALLOW },
	{ "timerfd_create", V_ALLOW }, { "timerfd_settime", V_ALLOW },
	{ "timerfd_gettime", V_ALLOW },
	{ "futex", V_ALLOW }, { "futex_waitv", V_ALLOW }, { "futex_wake", V_ALLOW },
	{ "futex_wait", V_ALLOW }, { "futex_requeue", V_ALLOW },
	{ "poll", V_ALLOW }, { "ppoll", V_ALLOW }, { "select", V_ALLOW }, { "pselect6", V_ALLOW },
	{ "epoll_create", V_ALLOW }, { "epoll_create1", V_ALLOW }, { "epoll_ctl", V_ALLOW },
	{ "epoll_wait", V_ALLOW }, { "epoll_pwait", V_ALLOW }, { "epoll_pwait2", V_ALLOW },
	{ "eventfd", V_ALLOW }, { "eventfd2", V_ALLOW }, { "pipe", V_ALLOW }, { "pipe2", V_ALLOW },
	{ "inotify_init", V_ALLOW }, { "inotify_init1", V_ALLOW },
	{ "inotify_add_watch", V_ALLOW }, { "inotify_rm_watch", V_ALLOW },
	/* legacy AIO exhausts the host-wide fs.aio-max-nr: off the allowlist */
	{ "io_setup", V_ENOSYS }, { "io_destroy", V_ENOSYS }, { "io_submit", V_ENOSYS },
	{ "io_cancel", V_ENOSYS }, { "io_getevents", V_ENOSYS }, { "io_pgetevents", V_ENOSYS },
	/* ---- allowed: IPC, sockets, randomness ---- */
	{ "shmget", V_ALLOW }, { "shmat", V_ALLOW }, { "shmdt", V_ALLOW }, { "shmctl", V_ALLOW },
	{ "semget", V_ALLOW }, { "semop", V_ALLOW }, { "semtimedop", V_ALLOW },
	{ "semctl", V_ALLOW }, { "msgget", V_ALLOW }, { "msgsnd", V_ALLOW },
	{ "msgrcv", V_ALLOW }, { "msgctl", V_ALLOW }, { "mq_open", V_ALLOW },
	{ "mq_unlink", V_ALLOW }, { "mq_timedsend", V_ALLOW }, { "mq_timedreceive", V_ALLOW },
	{ "mq_notify", V_ALLOW }, { "mq_getsetattr", V_ALLOW },
	{ "connect", V_ALLOW }, { "accept", V_ALLOW }, { "accept4", V_ALLOW },
	{ "bind", V_ALLOW }, { "listen", V_ALLOW }, { "shutdown", V_ALLOW },
	{ "sendto", V_ALLOW }, { "recvfrom", V_ALLOW }, { "sendmsg", V_ALLOW },
	{ "recvmsg", V_ALLOW }, { "sendmmsg", V_ALLOW }, { "recvmmsg", V_ALLOW },
	{ "getsockname", V_ALLOW }, { "getpeername", V_ALLOW }, { "setsockopt", V_ALLOW },
	{ "getsockopt", V_ALLOW }, { "getrandom", V_ALLOW },

	/* ---- decided by arguments ---- */
	{ "clone", V_COND }, { "unshare", V_COND }, { "socket", V_COND },
	{ "socketpair", V_COND }, { "ioctl", V_COND }, { "prctl", V_COND },
	{ "personality", V_COND }, { "seccomp", V_COND },
	/* set-id modes: EPERM (see mode_calls) */
	{ "open", V_COND }, { "openat", V_COND }, { "creat", V_COND }, { "mknod", V_COND },
	{ "mknodat", V_COND }, { "chmod", V_COND }, { "fchmod", V_COND },
	{ "fchmodat", V_COND }, { "fchmodat2", V_COND },

	/* ---- denied: kill in strict, EPERM in compat ---- */
	{ "io_uring_setup", V_DENY }, { "io_uring_enter", V_DENY },
	{ "io_uring_register", V_DENY }, { "bpf", V_DENY }, { "perf_event_open", V_DENY },
	{ "userfaultfd", V_DENY }, { "modify_ldt", V_DENY }, { "keyctl", V_DENY },
	{ "add_key", V_DENY }, { "request_key", V_DENY }, { "ptrace", V_DENY },
	{ "process_vm_readv", V_DENY }, { "process_vm_writev", V_DENY },
	{ "pidfd_getfd", V_DENY }, { "mount", V_DENY }, { "umount2", V_DENY },
	{ "move_mount", V_DENY }, { "open_tree", V_DENY }, { "fsopen", V_DENY },
	{ "fsmount", V_DENY }, { "fsconfig", V_DENY }, { "fspick", V_DENY },
	{ "mount_setattr", V_DENY }, { "pivot_root", V_DENY }, { "chroot", V_DENY },
	{ "open_by_handle_at", V_DENY }, { "name_to_handle_at", V_DENY },
	{ "setns", V_DENY }, { "landlock_create_ruleset", V_DENY },
	{ "landlock_add_rule", V_DENY }, { "landlock_restrict_self", V_DENY },
	{ "kexec_load", V_DENY }, { "kexec_file_load", V_DENY }, { "init_module", V_DENY },
	{ "finit_module", V_DENY }, { "delete_module", V_DENY }, { "reboot", V_DENY },
	{ "swapon", V_DENY }, { "swapoff", V_DENY }, { "acct", V_DENY },
	{ "quotactl", V_DENY }, { "quotactl_fd", V_DENY }, { "lookup_dcookie", V_DENY },
	{ "iopl", V_DENY }, { "ioperm", V_DENY }, { "syslog", V_DENY },
	{ "settimeofday", V_DENY }, { "clock_settime", V_DENY }, { "adjtimex", V_DENY },
	{ "clock_adjtime", V_DENY },

	/* ---- not on the allowlist: ENOSYS, so callers fall back ---- */
	{ "clone3", V_ENOSYS },              /* flags in memory: glibc falls back to clone */
	{ "openat2", V_ENOSYS },             /* mode in memory: callers fall back to openat */
	{ "kcmp", V_ENOSYS },                /* compares kernel objects of two processes */
	{ "fanotify_init", V_ENOSYS }, { "fanotify_mark", V_ENOSYS },
	{ "process_madvise", V_ENOSYS }, { "process_mrelease", V_ENOSYS },
	{ "migrate_pages", V_ENOSYS }, { "move_pages", V_ENOSYS },
	{ "get_robust_list", V_ENOSYS }, { "memfd_secret", V_ENOSYS },
	{ "set_mempolicy_home_node", V_ENOSYS }, { "cachestat", V_ENOSYS },
	{ "remap_file_pages", V_ENOSYS }, { "vhangup", V_ENOSYS },
	{ "sethostname", V_ENOSYS }, { "setdomainname", V_ENOSYS },
	{ "set_thread_area", V_ENOSYS }, { "get_thread_area", V_ENOSYS },
	{ "uselib", V_ENOSYS }, { "ustat", V_ENOSYS }, { "sysfs", V_ENOSYS },
	{ "_sysctl", V_ENOSYS }, { "create_module", V_ENOSYS },
	{ "get_kernel_syms", V_ENOSYS }, { "query_module", V_ENOSYS },
	{ "nfsservctl", V_ENOSYS }, { "getpmsg", V_ENOSYS }, { "putpmsg", V_ENOSYS },
	{ "afs_syscall", V_ENOSYS }, { "tuxcall", V_ENOSYS }, { "security", V_ENOSYS },
	{ "vserver", V_ENOSYS }, { "epoll_ctl_old", V_ENOSYS }, { "epoll_wait_old", V_ENOSYS },
};

/* One conditional call with the arguments a payload would pass. */
struct arg_row {
	const char *what;
	const char *name;
	uint64_t args[6];
	enum verdict v;
};

#define HI 0x100000000ull     /* a bit the kernel ignores in an int argument */

static const struct arg_row arg_rows[] = {
	/* clone: x86-64 order is (flags, stack, parent_tid, child_tid, tls) */
	{ "fork as glibc does it (SIGCHLD)", "clone", { 17 }, V_ALLOW },
	{ "pthread_create's flags", "clone", { 0x3d0f00 }, V_ALLOW },
	{ "posix_spawn (CLONE_VM|CLONE_VFORK|SIGCHLD)", "clone", { 0x4111 }, V_ALLOW },
	{ "exit signal 0x80 is not CLONE_NEWTIME in clone", "clone", { 0x80 }, V_ALLOW },
	{ "garbage in the upper half, no namespace flag", "clone", { 0xdead000000000011ull }, V_ALLOW },
	{ "CLONE_NEWNS", "clone", { 0x00020000 | 17 }, V_DENY },
	{ "CLONE_NEWCGROUP", "clone", { 0x02000000 | 17 }, V_DENY },
	{ "CLONE_NEWUTS", "clone", { 0x04000000 | 17 }, V_DENY },
	{ "CLONE_NEWIPC", "clone", { 0x08000000 | 17 }, V_DENY },
	{ "CLONE_NEWUSER", "clone", { 0x10000000 | 17 }, V_DENY },
	{ "CLONE_NEWPID", "clone", { 0x20000000 | 17 }, V_DENY },
	{ "CLONE_NEWNET", "clone", { 0x40000000 | 17 }, V_DENY },
	{ "CLONE_NEWUSER with the upper half set", "clone", { 0xffffffff10000000ull }, V_DENY },
	{ "thread flags plus CLONE_NEWNET", "clone", { 0x3d0f00 | 0x40000000 }, V_DENY },

	/* unshare(flags) */
	{ "unshare(0)", "unshare", { 0 }, V_ALLOW },
	{ "CLONE_FILES", "unshare", { 0x400 }, V_ALLOW },
	{ "CLONE_FS|CLONE_FILES|CLONE_SYSVSEM", "unshare", { 0x40600 }, V_ALLOW },
	{ "CLONE_NEWTIME", "unshare", { 0x80 }, V_DENY },
	{ "CLONE_NEWNS", "unshare", { 0x00020000 }, V_DENY },
	{ "CLONE_NEWCGROUP", "unshare", { 0x02000000 }, V_DENY },
	{ "CLONE_NEWUTS", "unshare", { 0x04000000 }, V_DENY },
	{ "CLONE_NEWIPC", "unshare", { 0x08000000 }, V_DENY },
	{ "CLONE_NEWUSER", "unshare", { 0x10000000 }, V_DENY },
	{ "CLONE_NEWPID", "unshare", { 0x20000000 }, V_DENY },
	{ "CLONE_NEWNET", "unshare", { 0x40000000 }, V_DENY },
	{ "CLONE_NEWUSER|CLONE_FILES", "unshare", { 0x10000400 }, V_DENY },
	{ "CLONE_NEWUSER with an upper bit", "unshare", { HI | 0x10000000 }, V_DENY },
	{ "CLONE_VM (not a namespace, not harmless)", "unshare", { 0x100 }, V_ENOSYS },
	{ "CLONE_SIGHAND", "unshare", { 0x800 }, V_ENOSYS },
	{ "an upper bit alone", "unshare", { HI }, V_ENOSYS },

	/* socket(family, type, protocol) */
	{ "AF_UNIX stream", "socket", { 1, 1, 0 }, V_ALLOW },
	{ "AF_UNIX dgram|NONBLOCK|CLOEXEC", "socket", { 1, 2 | 04000 | 02000000, 0 }, V_ALLOW },
	{ "AF_INET stream|CLOEXEC", "socket", { 2, 1 | 02000000, 6 }, V_ALLOW },
	{ "AF_INET6 dgram", "socket", { 10, 2, 17 }, V_ALLOW },
	{ "AF_INET raw ICMP (needs CAP_NET_RAW, gone)", "socket", { 2, 3, 1 }, V_ALLOW },
	{ "AF_INET with garbage above the int", "socket", { HI | 2, 1, 0 }, V_ALLOW },
	{ "AF_NETLINK NETLINK_ROUTE", "socket", { 16, 3 | 02000000, 0 }, V_ALLOW },
	{ "AF_NETLINK route, garbage above the int", "socket", { 16, 3, HI }, V_ALLOW },
	{ "AF_NETLINK NETLINK_SOCK_DIAG", "socket", { 16, 3, 4 }, V_DENY },
	{ "AF_NETLINK NETLINK_AUDIT", "socket", { 16, 3, 9 }, V_DENY },
	{ "AF_NETLINK NETLINK_NETFILTER", "socket", { 16, 3, 12 }, V_DENY },
	{ "AF_NETLINK NETLINK_KOBJECT_UEVENT", "socket", { 16, 3, 15 }, V_DENY },
	{ "AF_NETLINK NETLINK_GENERIC", "socket", { 16, 3, 16 }, V_DENY },
	{ "AF_NETLINK protocol -1", "socket", { 16, 3, 0xffffffff }, V_DENY },
	{ "AF_UNSPEC", "socket", { 0, 1, 0 }, V_DENY },
	{ "AF_AX25", "socket", { 3, 5, 0 }, V_DENY },
	{ "AF_KEY", "socket", { 15, 3, 2 }, V_DENY },
	{ "AF_PACKET", "socket", { 17, 3, 0x300 }, V_DENY },
	{ "AF_PACKET with garbage above the int", "socket", { HI | 17, 3, 0 }, V_DENY },
	{ "AF_RDS", "socket", { 21, 5, 0 }, V_DENY },
	{ "AF_CAN", "socket", { 29, 3, 1 }, V_DENY },
	{ "AF_BLUETOOTH", "socket", { 31, 1, 0 }, V_DENY },
	{ "AF_ALG", "socket", { 38, 5, 0 }, V_DENY },
	{ "AF_VSOCK", "socket", { 40, 1, 0 }, V_DENY },
	{ "AF_XDP", "socket", { 44, 3, 0 }, V_DENY },
	{ "family 46 (past AF_MAX)", "socket", { 46, 1, 0 }, V_DENY },
	{ "family INT_MAX", "socket", { 0x7fffffff, 1, 0 }, V_DENY },
	{ "family -1", "socket", { 0xffffffff, 1, 0 }, V_DENY },
	{ "socketpair AF_UNIX", "socketpair", { 1, 1, 0 }, V_ALLOW },
	{ "socketpair AF_UNIX seqpacket|CLOEXEC", "socketpair", { 1, 5 | 02000000, 0 }, V_ALLOW },
	{ "socketpair AF_INET (the kernel refuses)", "socketpair", { 2, 1, 0 }, V_ALLOW },
	{ "socketpair AF_PACKET", "socketpair", { 17, 3, 0 }, V_DENY },
	{ "socketpair AF_NETLINK audit", "socketpair", { 16, 3, 9 }, V_DENY },
	{ "socketpair AF_TIPC", "socketpair", { 30, 5, 0 }, V_DENY },

	/* ioctl(fd, cmd, arg): cmd is an unsigned int to the kernel */
	{ "TCGETS", "ioctl", { 0, 0x5401 }, V_ALLOW },
	{ "TIOCOUTQ (just below TIOCSTI)", "ioctl", { 0, 0x5411 }, V_ALLOW },
	{ "TIOCGWINSZ (just above TIOCSTI)", "ioctl", { 1, 0x5413 }, V_ALLOW },
	{ "TIOCSWINSZ", "ioctl", { 1, 0x5414 }, V_ALLOW },
	{ "FIONREAD", "ioctl", { 3, 0x541B }, V_ALLOW },
	{ "TIOCGSERIAL (after TIOCCONS)", "ioctl", { 3, 0x541E }, V_ALLOW },
	{ "TIOCGETD (after TIOCSETD)", "ioctl", { 3, 0x5424 }, V_ALLOW },
	{ "FIOCLEX", "ioctl", { 3, 0x5451 }, V_ALLOW },
	{ "TIOCGPTN", "ioctl", { 3, 0x80045430 }, V_ALLOW },
	{ "TIOCSPTLCK", "ioctl", { 3, 0x40045431 }, V_ALLOW },
	{ "FICLONE (cp --reflink)", "ioctl", { 3, 0x40049409 }, V_ALLOW },
	{ "request 0", "ioctl", { 3, 0 }, V_ALLOW },
	{ "request 0xffffffff", "ioctl", { 3, 0xffffffff }, V_ALLOW },
	{ "TCGETS with garbage above the int", "ioctl", { 0, HI | 0x5401 }, V_ALLOW },
	{ "TIOCSTI", "ioctl", { 0, 0x5412 }, V_DENY },
	{ "TIOCSTI with bit 32 set", "ioctl", { 0, HI | 0x5412 }, V_DENY },
	{ "TIOCSTI with the upper half all ones", "ioctl", { 0, 0xffffffff00005412ull }, V_DENY },
	{ "TIOCLINUX", "ioctl", { 0, 0x541C }, V_DENY },
	{ "TIOCLINUX with the upper half set", "ioctl", { 0, 0xdeadbeef0000541Cull }, V_DENY },
	{ "TIOCCONS", "ioctl", { 0, 0x541D }, V_DENY },
	{ "TIOCSETD", "ioctl", { 0, 0x5423 }, V_DENY },
	{ "TIOCSETD with bit 32 set", "ioctl", { 0, HI | 0x5423 }, V_DENY },

	/* personality(persona): an unsigned int to the kernel */
	{ "PER_LINUX", "personality", { 0 }, V_ALLOW },
	{ "query (0xffffffff)", "personality", { 0xffffffff }, V_ALLOW },
	{ "PER_LINUX with bit 32 set (the kernel reads 0)", "personality", { HI }, V_ALLOW },
	{ "PER_LINUX32", "personality", { 8 }, V_DENY },
	{ "PER_BSD", "personality", { 6 }, V_DENY },
	{ "ADDR_NO_RANDOMIZE", "personality", { 0x0040000 }, V_DENY },
	{ "READ_IMPLIES_EXEC", "personality", { 0x0400000 }, V_DENY },
	{ "UNAME26", "personality", { 0x0020000 }, V_DENY },
	{ "0xfffffffe", "personality", { 0xfffffffe }, V_DENY },
	{ "PER_LINUX32 with bit 32 set", "personality", { HI | 8 }, V_DENY },

	/* prctl(option, …): option is an int to the kernel */
	{ "PR_SET_PDEATHSIG", "prctl", { 1, 9 }, V_ALLOW },
	{ "PR_SET_DUMPABLE", "prctl", { 4, 0 }, V_ALLOW },
	{ "PR_SET_NAME", "prctl", { 15 }, V_ALLOW },
	{ "PR_GET_NAME", "prctl", { 16 }, V_ALLOW },
	{ "PR_SET_SECCOMP", "prctl", { 22, 2 }, V_ALLOW },
	{ "PR_CAPBSET_READ", "prctl", { 23, 21 }, V_ALLOW },
	{ "PR_SET_CHILD_SUBREAPER", "prctl", { 36, 1 }, V_ALLOW },
	{ "PR_SET_NO_NEW_PRIVS", "prctl", { 38, 1 }, V_ALLOW },
	{ "PR_CAP_AMBIENT", "prctl", { 47, 4 }, V_ALLOW },
	{ "PR_SET_SPECULATION_CTRL", "prctl", { 53, 0, 8 }, V_ALLOW },
	{ "PR_SET_VMA", "prctl", { 0x53564d41 }, V_ALLOW },
	{ "PR_GET_DUMPABLE with garbage above the int", "prctl", { HI | 3 }, V_ALLOW },
	{ "option 0", "prctl", { 0 }, V_ENOSYS },
	{ "PR_SET_SECUREBITS", "prctl", { 28, 0x2f }, V_ENOSYS },
	{ "PR_TASK_PERF_EVENTS_ENABLE", "prctl", { 32 }, V_ENOSYS },
	{ "PR_SET_MM", "prctl", { 35, 1 }, V_ENOSYS },
	{ "PR_GET_TID_ADDRESS", "prctl", { 40 }, V_ENOSYS },
	{ "PR_SET_IO_FLUSHER", "prctl", { 57, 1 }, V_ENOSYS },
	{ "PR_SET_SYSCALL_USER_DISPATCH", "prctl", { 59, 1 }, V_ENOSYS },
	{ "PR_SCHED_CORE", "prctl", { 62, 1 }, V_ENOSYS },
	{ "option -1", "prctl", { 0xffffffff }, V_ENOSYS },

	/* seccomp(op, flags, args) */
	{ "SECCOMP_SET_MODE_STRICT", "seccomp", { 0, 0 }, V_ALLOW },
	{ "SECCOMP_SET_MODE_FILTER", "seccomp", { 1, 0 }, V_ALLOW },
	{ "SET_MODE_FILTER with TSYNC|LOG", "seccomp", { 1, 3 }, V_ALLOW },
	{ "SET_MODE_FILTER, op with garbage above the int", "seccomp", { HI | 1, 0 }, V_ALLOW },
	{ "SECCOMP_GET_ACTION_AVAIL", "seccomp", { 2, 0 }, V_ALLOW },
	{ "SECCOMP_GET_NOTIF_SIZES", "seccomp", { 3, 0 }, V_ALLOW },
	{ "SET_MODE_FILTER with NEW_LISTENER", "seccomp", { 1, 8 }, V_EPERM },
	{ "SET_MODE_FILTER with TSYNC|NEW_LISTENER", "seccomp", { 1, 9 }, V_EPERM },
	{ "op 4 (unknown)", "seccomp", { 4, 0 }, V_ENOSYS },

	/* set-id modes (every mode is swept in test_setid_modes; these are the named cases) */
	{ "chmod 0755", "chmod", { 0, 0755 }, V_ALLOW },
	{ "chmod 01777 (sticky is harmless)", "chmod", { 0, 01777 }, V_ALLOW },
	{ "chmod 4755", "chmod", { 0, 04755 }, V_EPERM },
	{ "chmod 2755", "chmod", { 0, 02755 }, V_EPERM },
	{ "chmod 6755", "chmod", { 0, 06755 }, V_EPERM },
	{ "chmod 4000 alone", "chmod", { 0, 04000 }, V_EPERM },
	{ "chmod 4755 with garbage above umode_t", "chmod", { 0, 0xffffffff00004755ull }, V_EPERM },
	{ "chmod all bits but the set-id ones", "chmod", { 0, ~0ull & ~06000ull }, V_ALLOW },
	{ "fchmod 0644", "fchmod", { 3, 0644 }, V_ALLOW },
	{ "fchmod 6755", "fchmod", { 3, 06755 }, V_EPERM },
	{ "fchmodat 0700", "fchmodat", { 3, 0, 0700 }, V_ALLOW },
	{ "fchmodat 2755", "fchmodat", { 3, 0, 02755 }, V_EPERM },
	{ "fchmodat, set-id in the wrong register", "fchmodat", { 3, 06755, 0755 }, V_ALLOW },
	{ "fchmodat2 0755 nofollow", "fchmodat2", { 3, 0, 0755, 0x100 }, V_ALLOW },
	{ "fchmodat2 4755", "fchmodat2", { 3, 0, 04755, 0 }, V_EPERM },
	{ "creat 0644", "creat", { 0, 0644 }, V_ALLOW },
	{ "creat 4755", "creat", { 0, 04755 }, V_EPERM },
	{ "mknod S_IFREG|0644", "mknod", { 0, 0100644, 0 }, V_ALLOW },
	{ "mknod S_IFIFO|0600", "mknod", { 0, 010600, 0 }, V_ALLOW },
	{ "mknod S_IFREG|4755", "mknod", { 0, 0104755, 0 }, V_EPERM },
	{ "mknodat S_IFREG|2755", "mknodat", { 3, 0, 0102755, 0 }, V_EPERM },
	{ "mknodat S_IFREG|0755", "mknodat", { 3, 0, 0100755, 0 }, V_ALLOW },
	{ "open O_RDONLY, garbage mode", "open", { 0, 0, 06777 }, V_ALLOW },
	{ "open O_WRONLY|O_TRUNC, garbage mode", "open", { 0, 01001, 0xffffffffffffffffull }, V_ALLOW },
	{ "open O_CREAT 0644", "open", { 0, 0101, 0644 }, V_ALLOW },
	{ "open O_CREAT 4755", "open", { 0, 0101, 04755 }, V_EPERM },
	{ "open O_CREAT|O_EXCL 2755", "open", { 0, 0301, 02755 }, V_EPERM },
	{ "open O_CREAT in the upper half only (the kernel reads 0)", "open",
	  { 0, 0100ull << 32, 04755 }, V_ALLOW },
	{ "open O_TMPFILE 0600", "open", { 0, 020200002, 0600 }, V_ALLOW },
	{ "open O_TMPFILE 4755", "open", { 0, 020200002, 04755 }, V_EPERM },
	{ "open __O_TMPFILE bit alone 6755", "open", { 0, 020000000, 06755 }, V_EPERM },
	{ "openat O_RDONLY, garbage mode", "openat", { 3, 0, 0, 06755 }, V_ALLOW },
	{ "openat O_CREAT|O_WRONLY 0666", "openat", { 3, 0, 0101, 0666 }, V_ALLOW },
	{ "openat O_CREAT 6755", "openat", { 3, 0, 0101, 06755 }, V_EPERM },
	{ "openat O_TMPFILE 2700", "openat", { 3, 0, 020200002, 02700 }, V_EPERM },
	{ "openat, O_CREAT in the mode register", "openat", { 3, 0, 0, 0100 | 04755 }, V_ALLOW },
};

/* ---- helpers ------------------------------------------------------------ */

struct exported {
	struct sock_filter *prog;
	size_t len;
};

static struct exported strict_prog, compat_prog;      /* compiled in: what boxy-init loads */
static struct exported strict_built, compat_built;    /* assembled by libseccomp now */
static int max_nr;    /* the highest x86-64 syscall number libseccomp knows */

/* The SECCOMP_RET_* value verdict v must produce in mode m. */
static uint32_t verdict_ret(enum verdict v, enum seccomp_mode m)
{
	switch (v) {
	case V_ALLOW:  return SECCOMP_RET_ALLOW;
	case V_ENOSYS: return SECCOMP_RET_ERRNO | ENOSYS;
	case V_EPERM:  return SECCOMP_RET_ERRNO | EPERM;
	case V_DENY:   return m == SECCOMP_STRICT ? SECCOMP_RET_KILL_PROCESS
						  : SECCOMP_RET_ERRNO | EPERM;
	case V_KILL:   return SECCOMP_RET_KILL_PROCESS;
	case V_COND:   break;
	}
	fail_msg("no single return value for a conditional row");
	return 0;
}

/* Run the exported program of mode m on one call; fails the test on a malformed program. */
static uint32_t sim(enum seccomp_mode m, uint32_t arch, int nr, const uint64_t args[6])
{
	const struct exported *e = m == SECCOMP_STRICT ? &strict_prog : &compat_prog;
	struct seccomp_data d;
	const char *why = NULL;
	uint32_t ret = 0;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = arch;
	d.instruction_pointer = 0x7f0000001000ull;
	if (args)
		memcpy(d.args, args, sizeof(d.args));
	if (bpf_sim_run(e->prog, e->len, &d, &ret, &why) < 0)
		fail_msg("simulator refused the program at nr %d: %s", nr, why);
	return ret;
}

static const struct sys_row *sys_row_find(const char *name)
{
	for (size_t i = 0; i < sizeof(sys_rows) / sizeof(sys_rows[0]); i++)
		if (strcmp(sys_rows[i].name, name) == 0)
			return &sys_rows[i];
	return NULL;
}

static int group_setup(void **state)
{
	char *err = NULL;

	if (seccomp_export(SECCOMP_STRICT, &strict_built.prog, &strict_built.len, &err) < 0 ||
	    seccomp_export(SECCOMP_COMPAT, &compat_built.prog, &compat_built.len, &err) < 0) {
		fprintf(stderr, "# seccomp_export: %s\n", err ? err : "?");
		free(err);
		return -1;
	}
	strict_prog.prog = (struct sock_filter *)seccomp_program(SECCOMP_STRICT, &strict_prog.len);
	compat_prog.prog = (struct sock_filter *)seccomp_program(SECCOMP_COMPAT, &compat_prog.len);
	if (!strict_prog.prog || !compat_prog.prog) {
		fprintf(stderr, "# no compiled-in seccomp program\n");
		return -1;
	}
	for (int nr = 0; nr < 4096; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);

		if (name)
			max_nr = nr;
		free(name);
	}
	return 0;
}

static int group_teardown(void **state)
{
	free(strict_built.prog);
	free(compat_built.prog);
	return 0;
}

/* ---- the simulator itself ----------------------------------------------- */

#define LD_NR   BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

/* Run a hand-written program; return the simulator's status and the verdict in *ret. */
static int sim_raw(const struct sock_filter *p, size_t n, int nr, uint32_t *ret)
{
	struct seccomp_data d;
	const char *why;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.args[0] = 0x1122334455667788ull;
	return bpf_sim_run(p, n, &d, ret, &why);
}

static void test_sim_good_programs(void **state)
{
	/* if nr == 39 allow else errno(nr + 1) computed through X and scratch memory */
	const struct sock_filter p[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 3),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	/* the high word of args[0], JSET and JA */
	const struct sock_filter q[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x00220000, 0, 2),
		BPF_STMT(BPF_JMP | BPF_JA, 1),
		BPF_STMT(BPF_RET | BPF_K, 7),
		BPF_STMT(BPF_RET | BPF_K, 8),
	};
	uint32_t ret;

	assert_int_equal(sim_raw(p, 9, 39, &ret), 0);
	assert_int_equal(ret, SECCOMP_RET_ALLOW);
	assert_int_equal(sim_raw(p, 9, 41, &ret), 0);
	assert_int_equal(ret, SECCOMP_RET_ERRNO | 42);
	assert_int_equal(sim_raw(q, 5, 0, &ret), 0);
	assert_int_equal(ret, 8);   /* 0x11223344 & 0x00220000 != 0, then JA over RET 7 */
}

static void test_sim_refuses_malformed(void **state)
{
	const struct sock_filter beyond[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data)),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter unaligned[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter byte_load[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter indirect[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_IND, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter jump_out[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter ja_out[] = {
		BPF_STMT(BPF_JMP | BPF_JA, 0xffffffffu),   /* wraps to "backwards" */
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter off_end[] = { LD_NR };
	const struct sock_filter uninit_mem[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_MEM, 5),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter mem_range[] = {
		BPF_STMT(BPF_ST, 16),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	const struct sock_filter div_zero[] = {
		BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 0),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter ret_x[] = { BPF_STMT(BPF_RET | BPF_X, 0) };
	uint32_t ret;

	assert_int_equal(sim_raw(beyond, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(unaligned, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(byte_load, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(indirect, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(jump_out, 3, 0, &ret), -1);
	assert_int_equal(sim_raw(ja_out, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(off_end, 1, 0, &ret), -1);
	assert_int_equal(sim_raw(uninit_mem, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(mem_range, 2, 0, &ret), -1);
	assert_int_equal(sim_raw(div_zero, 3, 0, &ret), -1);
	assert_int_equal(sim_raw(ret_x, 1, 0, &ret), -1);
	assert_int_equal(sim_raw(ret_x, 0, 0, &ret), -1);
}

/* ---- the table against libseccomp's syscall list ----------------------- */

static void test_table_names_resolve(void **state)
{
	size_t n = sizeof(sys_rows) / sizeof(sys_rows[0]);

	for (size_t i = 0; i < n; i++) {
		if (seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, sys_rows[i].name) < 0)
			fail_msg("table row \"%s\" is not an x86-64 syscall", sys_rows[i].name);
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(sys_rows[i].name, sys_rows[j].name) == 0)
				fail_msg("table row \"%s\" appears twice", sys_rows[i].name);
	}
	for (size_t i = 0; i < sizeof(arg_rows) / sizeof(arg_rows[0]); i++) {
		const struct sys_row *r = sys_row_find(arg_rows[i].name);

		if (!r || r->v != V_COND)
			fail_msg("argument row \"%s\" is for %s, which is not conditional",
				 arg_rows[i].what, arg_rows[i].name);
		if (arg_rows[i].v == V_COND)
			fail_msg("argument row \"%s\" has no verdict", arg_rows[i].what);
	}
	/* Enough of the architecture to mean something: 0..334 and 424..456 when written. */
	assert_true(max_nr >= 450);
}

/* Every syscall number of the architecture, in mode m. */
static void check_every_syscall(enum seccomp_mode m)
{
	static const uint64_t garbage[6] = {
		0xffffffffffffffffull, 0x5412, 0x10000000, 0xdeadbeefcafef00dull, 17, 0,
	};
	size_t counts[V_COND + 1] = { 0 };

	for (int nr = 0; nr <= max_nr; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		const struct sys_row *row;

		if (!name) {
			/* A hole in the numbering (335..423): no syscall, the default applies. */
			assert_int_equal(sim(m, AUDIT_ARCH_X86_64, nr, NULL), SECCOMP_RET_ERRNO | ENOSYS);
			continue;
		}
		row = sys_row_find(name);
		if (!row) {
			fail_msg("syscall %d (%s) has no row in the verdict table", nr, name);
		}
		counts[row->v]++;
		if (row->v == V_COND) {
			size_t cases = 0;

			for (size_t i = 0; i < sizeof(arg_rows) / sizeof(arg_rows[0]); i++)
				cases += strcmp(arg_rows[i].name, name) == 0;
			if (cases == 0)
				fail_msg("conditional syscall %s has no argument rows", name);
			free(name);
			continue;
		}
		/* An unconditional verdict must not depend on the arguments. */
		if (sim(m, AUDIT_ARCH_X86_64, nr, NULL) != verdict_ret(row->v, m) ||
		    sim(m, AUDIT_ARCH_X86_64, nr, garbage) != verdict_ret(row->v, m))
			fail_msg("%s mode: %s (%d): expected %s, the filter says 0x%08x",
				 m == SECCOMP_STRICT ? "strict" : "compat", name, nr,
				 verdict_names[row->v], sim(m, AUDIT_ARCH_X86_64, nr, NULL));
		free(name);
	}
	if (m == SECCOMP_STRICT)
		print_message("# %d syscall numbers: %zu allow, %zu conditional, %zu deny, "
			      "%zu enosys; %zu argument cases\n", max_nr + 1, counts[V_ALLOW],
			      counts[V_COND], counts[V_DENY], counts[V_ENOSYS],
			      sizeof(arg_rows) / sizeof(arg_rows[0]));
}

static void test_every_syscall_strict(void **state) { check_every_syscall(SECCOMP_STRICT); }
static void test_every_syscall_compat(void **state) { check_every_syscall(SECCOMP_COMPAT); }

/* Every argument row, in mode m. */
static void check_arg_rows(enum seccomp_mode m)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(arg_rows) / sizeof(arg_rows[0]); i++) {
		const struct arg_row *r = &arg_rows[i];
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, r->name);
		uint32_t got = sim(m, AUDIT_ARCH_X86_64, nr, r->args);

		if (got != verdict_ret(r->v, m)) {
			print_message("# %s mode: %s: %s: expected %s, got 0x%08x\n",
				      m == SECCOMP_STRICT ? "strict" : "compat", r->name, r->what,
				      verdict_names[r->v], got);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void test_arguments_strict(void **state) { check_arg_rows(SECCOMP_STRICT); }
static void test_arguments_compat(void **state) { check_arg_rows(SECCOMP_COMPAT); }

/* Numbers past the table (newer kernels' syscalls among them) are ENOSYS until reviewed. */
static void test_beyond_the_table(void **state)
{
	for (int m = SECCOMP_STRICT; m <= SECCOMP_COMPAT; m++) {
		for (int nr = max_nr + 1; nr < 1024; nr++)
			assert_int_equal(sim(m, AUDIT_ARCH_X86_64, nr, NULL), SECCOMP_RET_ERRNO | ENOSYS);
		assert_int_equal(sim(m, AUDIT_ARCH_X86_64, 0x3fffffff, NULL),
				 SECCOMP_RET_ERRNO | ENOSYS);
	}
}

/* i386 via int 0x80, x32 via __X32_SYSCALL_BIT, and any other arch: killed in both modes. */
static void test_foreign_abis_killed(void **state)
{
	static const uint32_t arches[] = {
		AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, 0, 0xffffffff,
	};

	for (int m = SECCOMP_STRICT; m <= SECCOMP_COMPAT; m++) {
		for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++)
			for (int nr = 0; nr < 460; nr++)
				assert_int_equal(sim(m, arches[a], nr, NULL), SECCOMP_RET_KILL_PROCESS);
		/* x32: x86-64's AUDIT_ARCH, numbers with bit 30 set (512..547 are x32-only). */
		for (int nr = 0; nr < 600; nr++)
			assert_int_equal(sim(m, AUDIT_ARCH_X86_64, 0x40000000 | nr, NULL),
					 SECCOMP_RET_KILL_PROCESS);
		assert_int_equal(sim(m, AUDIT_ARCH_X86_64, 0x7fffffff, NULL), SECCOMP_RET_KILL_PROCESS);
		assert_int_equal(sim(m, AUDIT_ARCH_X86_64, (int)0x80000000u, NULL),
				 SECCOMP_RET_KILL_PROCESS);
		/*
		 * Except -1, which libseccomp lets through on purpose: it is the
		 * number the kernel itself uses for "no syscall", and gives ENOSYS.
		 */
		assert_int_equal(sim(m, AUDIT_ARCH_X86_64, -1, NULL), SECCOMP_RET_ERRNO | ENOSYS);
	}
}

/* Terminal injection, against the assembled filter (the specification's place for it). */
static void test_terminal_injection(void **state)
{
	static const uint64_t tiocsti[6] = { 0, 0x5412, 0 };
	static const uint64_t tiocsti_hi[6] = { 0, 0xffffffff00005412ull, 0 };
	static const uint64_t tioclinux[6] = { 0, 0x541C, 0 };
	int nr = SCMP_SYS(ioctl);

	assert_int_equal(sim(SECCOMP_STRICT, AUDIT_ARCH_X86_64, nr, tiocsti), SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(sim(SECCOMP_STRICT, AUDIT_ARCH_X86_64, nr, tiocsti_hi),
			 SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(sim(SECCOMP_STRICT, AUDIT_ARCH_X86_64, nr, tioclinux),
			 SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(sim(SECCOMP_COMPAT, AUDIT_ARCH_X86_64, nr, tiocsti_hi),
			 SECCOMP_RET_ERRNO | EPERM);
}

static int run_filtered(enum seccomp_mode m, int (*fn)(void), int *status);

/* Where each mode-setting call has its mode and (for open) its flags, from the man pages. */
static const struct {
	const char *name;
	int mode_arg, flags_arg;
} mode_calls[] = {
	{ "chmod", 1, -1 }, { "fchmod", 1, -1 }, { "fchmodat", 2, -1 }, { "fchmodat2", 2, -1 },
	{ "creat", 1, -1 }, { "mknod", 1, -1 }, { "mknodat", 2, -1 },
	{ "open", 2, 1 }, { "openat", 3, 2 },
};

/*
 * Every permission mode (0..07777), with and without garbage above umode_t,
 * under every open flag combination that matters: EPERM exactly when a
 * set-id bit is asked for on a call that uses the mode, in both modes.
 */
static void test_setid_modes(void **state)
{
	static const uint64_t flag_sets[] = {
		0, 01 /* O_WRONLY */, 02 | 01000 /* O_RDWR|O_TRUNC */, 0100 /* O_CREAT */,
		0100 | 0200 | 01 /* O_CREAT|O_EXCL|O_WRONLY */, 020200000 /* O_TMPFILE */,
		020000000 /* __O_TMPFILE alone */, 0200000 /* O_DIRECTORY */,
		0100ull << 32 /* O_CREAT above the int: not read */, 02000000 | 04000,
	};
	static const uint64_t high[] = { 0, 0xffff0000ull, 0xdeadbeef00000000ull };
	size_t checked = 0;

	for (int m = SECCOMP_STRICT; m <= SECCOMP_COMPAT; m++)
		for (size_t c = 0; c < sizeof(mode_calls) / sizeof(mode_calls[0]); c++) {
			int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, mode_calls[c].name);
			size_t nflags = mode_calls[c].flags_arg < 0 ? 1 : sizeof(flag_sets) / sizeof(flag_sets[0]);

			assert_true(nr >= 0);
			for (size_t f = 0; f < nflags; f++)
				for (size_t h = 0; h < sizeof(high) / sizeof(high[0]); h++)
					for (uint64_t mode = 0; mode <= 07777; mode++) {
						uint64_t args[6] = { 3, 0, 0, 0, 0, 0 };
						bool creates = mode_calls[c].flags_arg < 0 ||
							(flag_sets[f] & 020000100ull) != 0;
						bool setid = (mode & 06000) != 0;
						uint32_t want = creates && setid ? (SECCOMP_RET_ERRNO | EPERM)
									   : SECCOMP_RET_ALLOW;
						uint32_t got;

						if (mode_calls[c].flags_arg >= 0)
							args[mode_calls[c].flags_arg] = flag_sets[f];
						args[mode_calls[c].mode_arg] = high[h] | mode;
						got = sim((enum seccomp_mode)m, AUDIT_ARCH_X86_64, nr, args);
						if (got != want)
							fail_msg("%s mode: %s(mode 0%llo, flags 0%llo, high 0x%llx): "
								 "expected 0x%08x, got 0x%08x",
								 m == SECCOMP_STRICT ? "strict" : "compat",
								 mode_calls[c].name, (unsigned long long)mode,
								 (unsigned long long)(mode_calls[c].flags_arg < 0
										      ? 0 : flag_sets[f]),
								 (unsigned long long)high[h], want, got);
						checked++;
					}
		}
	print_message("# set-id sweep: %zu calls simulated\n", checked);
}

/* A set-id file cannot be made for real, and the refusal is an error, not a kill. */
static int child_setid(void)
{
	char dir[] = "/tmp/boxy-test-setid-XXXXXX", path[64];
	struct stat st;
	int fd, rc = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0755);
	if (fd < 0)
		rc = 2;
	errno = 0;
	if (rc == 0 && (chmod(path, 06755) != -1 || errno != EPERM))
		rc = 3;
	errno = 0;
	if (rc == 0 && (fchmod(fd, 04755) != -1 || errno != EPERM))
		rc = 4;
	errno = 0;
	if (rc == 0 && (fchmodat(AT_FDCWD, path, 02755, 0) != -1 || errno != EPERM))
		rc = 5;
	if (rc == 0 && chmod(path, 01700) != 0)
		rc = 6;
	if (fd >= 0)
		close(fd);
	unlink(path);
	errno = 0;
	if (rc == 0 && (open(path, O_CREAT | O_WRONLY, 04755) != -1 || errno != EPERM))
		rc = 7;
	errno = 0;
	if (rc == 0 && (mknod(path, S_IFREG | 02755, 0) != -1 || errno != EPERM))
		rc = 8;
	errno = 0;
	if (rc == 0 && (syscall(SYS_openat2, AT_FDCWD, path, NULL, 0) != -1 || errno != ENOSYS))
		rc = 9;
	if (rc == 0 && (stat(path, &st) == 0 || errno != ENOENT))
		rc = 10;
	unlink(path);
	rmdir(dir);
	return rc;
}

static void test_kernel_setid_refused(void **state)
{
	int status = 0;

	for (int m = SECCOMP_STRICT; m <= SECCOMP_COMPAT; m++) {
		assert_int_equal(run_filtered((enum seccomp_mode)m, child_setid, &status), 0);
		if (!WIFEXITED(status))
			fail_msg("set-id child died of signal %d", WTERMSIG(status));
		if (WEXITSTATUS(status) != 0)
			fail_msg("set-id child failed step %d (2 create, 3 chmod, 4 fchmod, "
				 "5 fchmodat, 6 sticky chmod, 7 open O_CREAT, 8 mknod, 9 openat2, "
				 "10 left a file)", WEXITSTATUS(status));
	}
}

static void test_program_size(void **state)
{
	/* The kernel refuses programs over BPF_MAXINSNS; keep well under it. */
	assert_true(strict_prog.len > 100);
	assert_true(strict_prog.len < 3000);
	assert_true(compat_prog.len > 100);
	assert_true(compat_prog.len < 3000);
	print_message("# filter: %zu instructions\n", strict_prog.len);
}

/* ---- the program compiled at build time ---------------------------------- */

/* The compiled-in programs are exactly what libseccomp assembles from the tables. */
static void test_compiled_is_built(void **state)
{
	const struct { const char *name; struct exported *compiled, *built; } rows[] = {
		{ "strict", &strict_prog, &strict_built },
		{ "compat", &compat_prog, &compat_built },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].compiled->len != rows[i].built->len)
			fail_msg("%s: compiled %zu instructions, libseccomp builds %zu", rows[i].name,
				 rows[i].compiled->len, rows[i].built->len);
		if (memcmp(rows[i].compiled->prog, rows[i].built->prog,
			   rows[i].built->len * sizeof(struct sock_filter)) != 0)
			fail_msg("%s: the compiled program differs from libseccomp's", rows[i].name);
	}
	/* The two modes differ (deny actions), so a mix-up is detectable. */
	assert_false(strict_prog.len == compat_prog.len &&
		     memcmp(strict_prog.prog, compat_prog.prog, strict_prog.len * 8) == 0);
}

enum { ALTER_NONE, ALTER_OTHER_MODE, ALTER_DROP_LAST, ALTER_ADD_ONE, ALTER_ODD_BYTES,
       ALTER_FLIP_FIRST, ALTER_FLIP_MIDDLE, ALTER_FLIP_LAST, ALTER_EMPTY };

/* boxy-init's check takes this build's program for each mode and refuses every other. */
static void test_check_program(void **state)
{
	const struct {
		const char *name;
		enum seccomp_mode mode;
		int alter;
		bool ok;
		const char *why;        /* what the refusal must say */
	} rows[] = {
		{ "strict as compiled", SECCOMP_STRICT, ALTER_NONE, true, NULL },
		{ "compat as compiled", SECCOMP_COMPAT, ALTER_NONE, true, NULL },
		{ "compat's program for strict", SECCOMP_STRICT, ALTER_OTHER_MODE, false, "bytes" },
		{ "strict's program for compat", SECCOMP_COMPAT, ALTER_OTHER_MODE, false, "bytes" },
		{ "last instruction dropped", SECCOMP_STRICT, ALTER_DROP_LAST, false, "bytes" },
		{ "one instruction added", SECCOMP_STRICT, ALTER_ADD_ONE, false, "bytes" },
		{ "a byte short", SECCOMP_STRICT, ALTER_ODD_BYTES, false, "bytes" },
		{ "first instruction's arch altered", SECCOMP_STRICT, ALTER_FLIP_FIRST, false, "SHA-256" },
		{ "a middle jump altered", SECCOMP_COMPAT, ALTER_FLIP_MIDDLE, false, "SHA-256" },
		{ "last return altered", SECCOMP_STRICT, ALTER_FLIP_LAST, false, "SHA-256" },
		{ "no program", SECCOMP_STRICT, ALTER_EMPTY, false, "no seccomp program" },
		{ "unset mode", SECCOMP_UNSET, ALTER_NONE, false, "no compiled program" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct exported *e = rows[i].mode == SECCOMP_COMPAT ? &compat_prog : &strict_prog;
		const struct exported *o = e == &strict_prog ? &compat_prog : &strict_prog;
		size_t n = (rows[i].alter == ALTER_OTHER_MODE ? o->len : e->len) + 1;
		struct sock_filter *p = calloc(n, sizeof(*p));
		size_t bytes;
		char *err = NULL;
		int rc;

		assert_non_null(p);
		memcpy(p, rows[i].alter == ALTER_OTHER_MODE ? o->prog : e->prog,
		       (n - 1) * sizeof(*p));
		bytes = (n - 1) * sizeof(*p);
		switch (rows[i].alter) {
		case ALTER_DROP_LAST: bytes -= sizeof(*p); break;
		case ALTER_ADD_ONE: p[n - 1] = p[n - 2]; bytes += sizeof(*p); break;
		case ALTER_ODD_BYTES: bytes -= 1; break;
		case ALTER_FLIP_FIRST: p[0].k ^= 1; break;
		case ALTER_FLIP_MIDDLE: p[(n - 1) / 2].jt ^= 1; break;
		case ALTER_FLIP_LAST: p[n - 2].k ^= 0x80; break;
		case ALTER_EMPTY: bytes = 0; break;
		default: break;
		}
		rc = seccomp_check_program(rows[i].mode, rows[i].alter == ALTER_EMPTY ? NULL : p,
					   bytes, &err);
		if ((rc == 0) != rows[i].ok)
			fail_msg("%s: check %s (%s)", rows[i].name, rc == 0 ? "accepted" : "refused",
				 err ? err : "no reason");
		if (rc < 0 && (!err || !strstr(err, rows[i].why)))
			fail_msg("%s: refused without saying \"%s\" (%s)", rows[i].name, rows[i].why,
				 err ? err : "no reason");
		free(err);
		free(p);
	}
}

/* ---- the kernel, in forked children -------------------------------------- */

/* Fork; in the child apply mode and run fn, whose return value is the exit status. */
static int run_filtered(enum seccomp_mode m, int (*fn)(void), int *status)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };
		char *err = NULL;

		/* A SIGSYS kill dumps core by default: keep it cheap. */
		setrlimit(RLIMIT_CORE, &no_core);
		const struct exported *e = m == SECCOMP_STRICT ? &strict_prog : &compat_prog;

		if (seccomp_apply_program(m, e->prog, e->len * sizeof(*e->prog), &err) < 0) {
			fprintf(stderr, "# seccomp_apply_program: %s\n", err);
			_exit(100);
		}
		/* _exit: a sanitizer's exit handlers would ptrace, which the filter forbids. */
		_exit(fn());
	}
	if (waitpid(pid, status, 0) != pid)
		return -1;
	return 0;
}

static void *thread_main(void *arg)
{
	return arg;
}

/* Under strict: ordinary things work, clone3 is ENOSYS, then unshare(CLONE_NEWUSER) kills. */
static int child_strict(void)
{
	pthread_t t;
	void *res = NULL;
	pid_t pid;
	int st;

	if (syscall(SYS_getpid) != getpid() || getpid() <= 0)
		return 1;
	errno = 0;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 2;
	/* fork() is clone(SIGCHLD); pthread_create tries clone3 and falls back to clone. */
	pid = fork();
	if (pid == 0)
		_exit(42);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 42)
		return 3;
	if (pthread_create(&t, NULL, thread_main, &st) != 0 || pthread_join(t, &res) != 0 ||
	    res != &st)
		return 4;
	errno = 0;
	if (syscall(SYS_kcmp, 0, 0, 0, 0, 0) != -1 || errno != ENOSYS)
		return 5;
	unshare(CLONE_NEWUSER);
	return 6;   /* not reached: the filter kills the process */
}

static void test_kernel_strict_kills(void **state)
{
	int status = 0;

	assert_int_equal(run_filtered(SECCOMP_STRICT, child_strict, &status), 0);
	if (WIFEXITED(status))
		fail_msg("strict child exited with %d instead of dying of SIGSYS "
			 "(1 getpid, 2 clone3, 3 fork, 4 thread, 5 kcmp, 6 unshare survived, 100 apply)",
			 WEXITSTATUS(status));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSYS);
}

/* Under compat: the same calls fail with EPERM and the process lives. */
static int child_compat(void)
{
	errno = 0;
	if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
		return 1;
	errno = 0;
	if (syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) != -1 || errno != EPERM)
		return 2;
	errno = 0;
	if (socket(17 /* AF_PACKET */, SOCK_RAW, 0) != -1 || errno != EPERM)
		return 3;
	errno = 0;
	if (ioctl(0, 0x5412 /* TIOCSTI */, "x") != -1 || errno != EPERM)
		return 4;
	errno = 0;
	if (syscall(SYS_io_uring_setup, 1, NULL) != -1 || errno != EPERM)
		return 5;
	errno = 0;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 6;
	return 0;
}

static void test_kernel_compat_eperm(void **state)
{
	int status = 0;

	assert_int_equal(run_filtered(SECCOMP_COMPAT, child_compat, &status), 0);
	if (!WIFEXITED(status))
		fail_msg("compat child died of signal %d", WTERMSIG(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Real tools under the strict filter: the shell, coreutils, and git, python3,
 * a C compiler and make where installed. Output goes to a file shown on failure.
 */
static const char tools_script[] =
	"set -e\n"
	"d=$(mktemp -d)\n"
	"trap 'rm -rf \"$d\"' EXIT\n"
	"cd \"$d\"\n"
	"printf 'b\\na\\n' | sort | uniq > sorted\n"
	"ls -la . > /dev/null\n"
	"cp sorted copy && mv copy moved && ln -s moved link && cat link > /dev/null\n"
	"find . -type f | wc -l > /dev/null\n"
	"if command -v git > /dev/null; then\n"
	"  git init -q r && cd r\n"
	"  echo hi > f && git add f\n"
	"  git -c user.name=t -c user.email=t@t commit -qm m && git log --oneline > /dev/null\n"
	"  cd ..\n"
	"fi\n"
	"if command -v python3 > /dev/null; then\n"
	"  python3 -c 'import os, socket, subprocess, threading, tempfile, multiprocessing as m\n"
	"subprocess.run([\"true\"], check=True)\n"
	"socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()\n"
	"socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()\n"
	"p = m.Pool(2); assert p.map(abs, [-1, -2]) == [1, 2]; p.close(); p.join()'\n"
	"fi\n"
	"if command -v cc > /dev/null; then\n"
	"  printf '#include <stdio.h>\\nint main(void){puts(\"ok\");return 0;}\\n' > t.c\n"
	"  cc -O2 -pthread t.c -o t && ./t > /dev/null\n"
	"  if command -v make > /dev/null; then\n"
	"    printf 'all: t2\\nt2: t.c\\n\\tcc -o t2 t.c\\n' > Makefile\n"
	"    make -s -j2 && ./t2 > /dev/null\n"
	"  fi\n"
	"fi\n"
	"if command -v node > /dev/null; then\n"
	"  node -e 'require(\"child_process\").execSync(\"true\");\n"
	"           require(\"os\").networkInterfaces()'\n"
	"fi\n";

static int child_tools(void)
{
	execl("/bin/sh", "sh", "-c", tools_script, (char *)NULL);
	return 127;
}

static void test_kernel_strict_tools_work(void **state)
{
	char log_path[] = "/tmp/boxy-test-seccomp-XXXXXX";
	int fd = mkstemp(log_path);
	int saved_out, saved_err, status = 0;

	assert_true(fd >= 0);
	saved_out = dup(1);
	saved_err = dup(2);
	fflush(NULL);
	dup2(fd, 1);
	dup2(fd, 2);
	assert_int_equal(run_filtered(SECCOMP_STRICT, child_tools, &status), 0);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char buf[4096];
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = '\0';
		close(fd);
		unlink(log_path);
		fail_msg("tools under the strict filter: %s %d; output:\n%s",
			 WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), buf);
	}
	close(fd);
	unlink(log_path);
}

static void test_probe(void **state)
{
	char buf[128], small[8];

	int n = seccomp_probe(buf, sizeof(buf));

	/* Every kernel boxy supports (4.14+) has at least these, in this order. */
	assert_true(n >= 5);
	assert_memory_equal(buf, "kill_process kill_thread trap errno", 35);
	/* A 5.0+ kernel has all eight, and then the doctor line is exactly this. */
	if (n == 8)
		assert_string_equal(buf,
				    "kill_process kill_thread trap errno user_notif trace log allow");
	else
		assert_int_equal(n, 7);
	assert_int_equal(seccomp_probe(small, sizeof(small)), -1);
	assert_int_equal(seccomp_probe(buf, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim_good_programs),
		cmocka_unit_test(test_sim_refuses_malformed),
		cmocka_unit_test(test_table_names_resolve),
		cmocka_unit_test(test_program_size),
		cmocka_unit_test(test_compiled_is_built),
		cmocka_unit_test(test_check_program),
		cmocka_unit_test(test_every_syscall_strict),
		cmocka_unit_test(test_every_syscall_compat),
		cmocka_unit_test(test_arguments_strict),
		cmocka_unit_test(test_arguments_compat),
		cmocka_unit_test(test_beyond_the_table),
		cmocka_unit_test(test_foreign_abis_killed),
		cmocka_unit_test(test_terminal_injection),
		cmocka_unit_test(test_setid_modes),
		cmocka_unit_test(test_kernel_setid_refused),
		cmocka_unit_test(test_kernel_strict_kills),
		cmocka_unit_test(test_kernel_compat_eperm),
		cmocka_unit_test(test_kernel_strict_tools_work),
		cmocka_unit_test(test_probe),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
