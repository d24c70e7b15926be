/*
 * balloon.c — the escape suite's memory balloon: allocates and touches MiB
 * of memory the way a payload that wants to exhaust the host would, then
 * holds it for HOLD_MS and says so. Each way of holding memory is one a
 * watchdog could miss:
 *
 *   balloon anon   MIB [HOLD_MS]     malloc + memset, in 1 MiB steps
 *   balloon fork   N MIB [HOLD_MS]   N children, each touching MIB/N
 *   balloon memfd  MIB [HOLD_MS]     write() into a memfd, never mapped
 *   balloon shared MIB [HOLD_MS]     MAP_SHARED|MAP_ANONYMOUS (shmem, no file)
 *   balloon sysv   MIB [HOLD_MS]     SysV segments, detached after touching
 *
 * Lines on stdout (unbuffered): "at N" every 32 MiB, "touched N MiB" when
 * all is touched, "held N MiB" after the hold. Exit 0 when it held, 1 when
 * an allocation failed (the limit refused it: not an escape).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ul << 20)

/* One line on stdout, unbuffered: a killed balloon still said how far it got. */
static void say(const char *fmt, long n)
{
	char buf[64];
	int len = snprintf(buf, sizeof(buf), fmt, n);

	if (write(1, buf, (size_t)len) < 0) {
		/* nothing to do */
	}
}

/* Sleep ms milliseconds. */
static void hold(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Touch mib MiB of anonymous memory in 1 MiB steps; 0, or -1 when refused. */
static int touch_anon(long mib, int report)
{
	for (long i = 0; i < mib; i++) {
		char *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		memset(p, 0x5a, MIB);
		if (report && (i + 1) % 32 == 0)
			say("at %ld\n", i + 1);
	}
	return 0;
}

/* Fill a memfd with write(): its pages are in no process's RSS. */
static int touch_memfd(long mib)
{
	static char chunk[MIB];
	int fd = memfd_create("balloon", 0);

	if (fd < 0)
		return -1;
	memset(chunk, 0x5a, sizeof(chunk));
	for (long i = 0; i < mib; i++) {
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
			return -1;
		if ((i + 1) % 32 == 0)
			say("at %ld\n", i + 1);
	}
	return 0;           /* fd stays open: the pages stay */
}

/* MAP_SHARED anonymous memory: shmem with no file anyone can see. */
static int touch_shared(long mib)
{
	char *p = mmap(NULL, (size_t)mib * MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return -1;
	for (long i = 0; i < mib; i++) {
		memset(p + (size_t)i * MIB, 0x5a, MIB);
		if ((i + 1) % 32 == 0)
			say("at %ld\n", i + 1);
	}
	return 0;
}

static int sysv_ids[1024];
static size_t sysv_n;

/* SysV segments of 16 MiB, touched then detached: held by the IPC namespace only. */
static int touch_sysv(long mib)
{
	for (long i = 0; i < mib; i += 16) {
		int id = shmget(IPC_PRIVATE, 16 * MIB, IPC_CREAT | 0600);
		char *p;

		if (id < 0)
			return -1;
		if (sysv_n < sizeof(sysv_ids) / sizeof(sysv_ids[0]))
			sysv_ids[sysv_n++] = id;
		p = shmat(id, NULL, 0);
		if (p == (void *)-1)
			return -1;
		memset(p, 0x5a, 16 * MIB);
		shmdt(p);
		if ((i + 16) % 32 == 0)
			say("at %ld\n", i + 16);
	}
	return 0;
}

/* N children, each touching its share and holding it; the parent waits for all. */
static int touch_fork(long n, long mib, long hold_ms)
{
	int failed = 0, st;

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			if (touch_anon(mib / n, 0) < 0)
				_exit(1);
			hold(hold_ms + 300);
			_exit(0);
		}
	}
	hold(hold_ms);
	while (wait(&st) > 0)
		failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	bool fork_mode = strcmp(mode, "fork") == 0;
	long n = 1, mib, hold_ms;
	int rc, a = 2;

	if (fork_mode && argc > 2)
		n = atol(argv[a++]);
	if (argc <= a || n < 1)
		return 2;
	mib = atol(argv[a++]);
	hold_ms = argc > a ? atol(argv[a]) : 2000;
	if (fork_mode)
		rc = touch_fork(n, mib, hold_ms);
	else if (strcmp(mode, "anon") == 0)
		rc = touch_anon(mib, 1);
	else if (strcmp(mode, "memfd") == 0)
		rc = touch_memfd(mib);
	else if (strcmp(mode, "shared") == 0)
		rc = touch_shared(mib);
	else if (strcmp(mode, "sysv") == 0)
		rc = touch_sysv(mib);
	else
		return 2;
	if (rc == 0 && !fork_mode) {
		say("touched %ld MiB\n", mib);
		hold(hold_ms);
	}
	/* Unsandboxed (the control run) the segments would outlive us in the host's namespace. */
	for (size_t i = 0; i < sysv_n; i++)
		shmctl(sysv_ids[i], IPC_RMID, NULL);
	if (rc < 0) {
		say("refused: %ld\n", (long)errno);
		return 1;
	}
	say("held %ld MiB\n", mib);
	return 0;
}
