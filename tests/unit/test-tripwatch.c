/*
 * test-tripwatch.c — how the decoys' watch (src/sandbox/tripwatch.c) finds
 * who is in open() of a decoy: the waiters /proc/locks lists under the
 * decoy's lease, by inode, and only those (another lease's waiters, a POSIX
 * lock's, a lease on the same inode number of another device are not); a
 * waiter nested under another; a bounded output; lines cut short or not
 * lines at all. And live: a lease on a scratch file, a child blocked
 * opening it from a thread of its own (as node's thread pool does), found by
 * its process in the real /proc/locks.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "sandbox/tripwatch.h"

/* /proc/locks as Linux 6.18 writes it: the decoy (00:3a:9) is lease 4. */
static const char locks[] =
	"1: POSIX  ADVISORY  READ 28301 fe:00:11045007 128 128\n"
	"2: FLOCK  ADVISORY  WRITE 28301 fe:00:11045003 0 EOF\n"
	"3: LEASE  BREAKING  READ 700 00:3a:7 0 EOF\n"
	"3: -> LEASE  BREAKER   READ 9001 <none>:0 0 EOF\n"
	"4: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF\n"
	"4: -> LEASE  BREAKER   READ 812 <none>:0 0 EOF\n"
	"4: -> -> LEASE  BREAKER   WRITE 813 <none>:0 0 EOF\n"
	"4: -> LEASE  BREAKER   READ 814 <none>:0 0 EOF\n"
	"5: POSIX  ADVISORY  WRITE 815 00:3a:9 0 EOF\n"
	"5: -> POSIX  ADVISORY  WRITE 816 00:3a:9 0 EOF\n"
	"6: LEASE  ACTIVE    WRITE 700 00:3b:9 0 EOF\n"
	"6: -> LEASE  BREAKER   READ 9002 <none>:0 0 EOF\n";

static void test_parse(void **state)
{
	pid_t out[8];

	(void)state;
	assert_int_equal(tripwatch_lease_waiters(locks, makedev(0, 0x3a), 9, out, 8), 3);
	assert_int_equal(out[0], 812);
	assert_int_equal(out[1], 813);  /* nested under 812: still this lease's */
	assert_int_equal(out[2], 814);
	/* the other lease on the same device, and the same inode number elsewhere */
	assert_int_equal(tripwatch_lease_waiters(locks, makedev(0, 0x3a), 7, out, 8), 1);
	assert_int_equal(out[0], 9001);
	assert_int_equal(tripwatch_lease_waiters(locks, makedev(0, 0x3b), 9, out, 8), 1);
	assert_int_equal(out[0], 9002);
	/* no lease on it: none, even with a POSIX lock's waiter on the inode */
	assert_int_equal(tripwatch_lease_waiters(locks, makedev(0xfe, 0), 11045003, out, 8), 0);
	assert_int_equal(tripwatch_lease_waiters(locks, makedev(0, 0x3a), 10, out, 8), 0);
	/* bounded */
	assert_int_equal(tripwatch_lease_waiters(locks, makedev(0, 0x3a), 9, out, 2), 2);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"",
		"\n\n\n",
		"4: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF",             /* no newline, no waiter */
		"4: -> LEASE  BREAKER   READ 812 <none>:0 0 EOF\n",        /* a waiter with no lease */
		"4: LEASE  BREAKING\n4: -> LEASE  BREAKER   READ 812\n",   /* the lease cut short */
		"x: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF\n-> LEASE  BREAKER   READ 812\n",
		"4: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF\n5: -> LEASE  BREAKER   READ 812\n",
		"4: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF\n4: -> LEASE  BREAKER   READ -3\n",
		"4: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF\n4: -> -\n4: ->\n4: -> LEASE\n",
	};
	pid_t out[4];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(tripwatch_lease_waiters(bad[i], makedev(0, 0x3a), 9, out, 4), 0);
	/* the last line needs no newline */
	assert_int_equal(tripwatch_lease_waiters("4: LEASE  BREAKING  UNLCK 700 00:3a:9 0 EOF\n"
						 "4: -> LEASE  BREAKER   READ 812 <none>:0 0 EOF",
						 makedev(0, 0x3a), 9, out, 4), 1);
	assert_int_equal(out[0], 812);
}

static const char *live_path;

static void *live_open(void *arg)
{
	int fd = open(live_path, O_RDONLY | O_CLOEXEC);

	(void)arg;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* A child whose second thread opens the leased file, waiting until the lease is given up. */
static void live_child(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, live_open, NULL) != 0)
		_exit(2);
	pthread_join(t, NULL);
	_exit(0);
}

static void test_live(void **state)
{
	char path[] = "/tmp/boxy-test-tripwatch.XXXXXX", *text = xmalloc(1 << 20);
	int fd = mkstemp(path), rfd;
	struct stat st;
	pid_t child, out[8];
	size_t n = 0;
	ssize_t len;
	int status;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	live_path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && fstat(fd, &st) == 0);
	signal(SIGIO, SIG_IGN);         /* the break's signal: this test only looks */
	assert_int_equal(fcntl(fd, F_SETLEASE, F_WRLCK), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		live_child();
	/* Until the kernel lists it (it blocks at once; a loaded host may take a while). */
	for (int i = 0; i < 500 && n == 0; i++) {
		rfd = open("/proc/locks", O_RDONLY | O_CLOEXEC);
		assert_true(rfd >= 0);
		len = read(rfd, text, (1 << 20) - 1);
		close(rfd);
		text[len > 0 ? len : 0] = '\0';
		n = tripwatch_lease_waiters(text, st.st_dev, st.st_ino, out, 8);
		if (n == 0)
			usleep(10000);
	}
	assert_int_equal(n, 1);
	assert_int_equal(out[0], child);        /* the process, though a thread of it opened */
	assert_int_equal(fcntl(fd, F_SETLEASE, F_UNLCK), 0);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
	unlink(path);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
