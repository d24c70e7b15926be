/*
 * net/lockdown.c — boxy-net's confinement of itself, applied after its
 * descriptors are in place and before it reads the first frame the payload
 * sent.
 *
 * boxy-net parses bytes the payload controls (Ethernet, IP, TCP through
 * lwIP, DNS, TLS ClientHello, HTTP), so it is written as if it will be
 * compromised. What a compromised boxy-net may still do is what it must do
 * anyway: read and write the descriptors it holds (the TAP device, the
 * broker socket, the upstream sockets the broker sent, the capture file),
 * wait on them, allocate memory and exit. It cannot create a socket or
 * dial anything (socket, connect, bind are absent), open a file (open,
 * openat, and Landlock with every filesystem right handled and no rule),
 * run a program (execve), reconfigure the TAP device (ioctl), trace or
 * signal another process (ptrace, kill), or map executable memory (mmap
 * and mprotect with PROT_EXEC). It only ever reaches what the broker
 * already dialled for it, which policy already allowed.
 */
#include <config.h>

#include <errno.h>
#include <seccomp.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/landlock-abi.h"
#include "common/util.h"
#include "net/gw.h"

/*
 * Landlock with every right the kernel knows handled and no rule added: no
 * path can be opened, no TCP port bound or connected through Landlock's
 * checks, no abstract unix socket reached, no signal sent outside.
 */
static int lockdown_landlock(char **note, char **err)
{
	struct landlock_info info;
	int fd;

	if (landlock_probe(&info) < 0 || info.abi < 1) {
		*note = xstrdup("Landlock is unavailable: boxy-net is confined by seccomp alone");
		return 0;
	}
	fd = landlock_ruleset_create(info.abi, info.fs_handled, info.net_handled, info.scoped);
	if (fd < 0)
		return set_err_errno(err, "landlock_create_ruleset (ABI %d)", info.abi);
	if (landlock_ruleset_enforce(fd) < 0) {
		close(fd);
		return set_err_errno(err, "landlock_restrict_self");
	}
	close(fd);
	return 0;
}

/* The system calls boxy-net makes once it runs, and nothing else. */
static const int allowed[] = {
	/* its descriptors: TAP, broker, upstream sockets, pcap */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(recvfrom), SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(sendmsg),
	SCMP_SYS(shutdown), SCMP_SYS(close),
	/* the event loop (libev's epoll backend; msg_send's poll) */
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_pwait2), SCMP_SYS(epoll_ctl),
	SCMP_SYS(poll), SCMP_SYS(ppoll),
	/* time (normally the vDSO; the syscalls are its fallback) */
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(nanosleep),
	/* memory (malloc); mmap and mprotect are added below without PROT_EXEC */
	SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
	/* glibc internals and ending */
	SCMP_SYS(futex), SCMP_SYS(getrandom), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(restart_syscall), SCMP_SYS(exit), SCMP_SYS(exit_group),
	/* querying and removing the signal stack: the sanitizer runtime does it on exit */
	SCMP_SYS(sigaltstack),
	/* TLS inspection: OpenSSL's random generators compare the pid with the one
	 * they were seeded in (a fork must not repeat their output) before each
	 * draw. getpid returns the caller's own number and changes nothing. */
	SCMP_SYS(getpid),
};

/* A seccomp allowlist; anything else kills the process (and the daemon records it). */
static int lockdown_seccomp(char **err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int rc = 0;

	if (!ctx)
		return set_err(err, "seccomp_init failed");
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* libev recreates its epoll set when epoll reports an event under a
	 * stale registration (an upstream socket closed and its number reused
	 * within one wait): epoll_fork() closes the old set and calls
	 * epoll_create1(EPOLL_CLOEXEC). A new epoll instance grants nothing;
	 * denying it killed boxy-net under a burst of short connections. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(epoll_create1), 1,
				      SCMP_A0(SCMP_CMP_EQ, EPOLL_CLOEXEC));
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		errno = -rc;
		return set_err_errno(err, "cannot install boxy-net's seccomp filter");
	}
	return 0;
}

/* Order matters: dumpable and no_new_privs first, Landlock, seccomp last. */
int net_lockdown(char **note, char **err)
{
	*note = NULL;
	/* Not dumpable: no core file of a process holding session traffic, and
	 * no ptrace attach by other processes of the same user. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return set_err_errno(err, "PR_SET_DUMPABLE");
	/* Required by both Landlock and unprivileged seccomp; also ends setuid. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return set_err_errno(err, "PR_SET_NO_NEW_PRIVS");
	if (lockdown_landlock(note, err) < 0)
		return -1;
	/* Last: the Landlock calls above are not in the allowlist. */
	return lockdown_seccomp(err);
}
