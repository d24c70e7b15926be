/*
 * sandbox/close-later.c — closing a descriptor whose last close waits for the
 * kernel (an inotify instance, a namespace's last reference), without the
 * caller waiting (sandbox/close-later.h).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/close-later.h"

/* The closer's queue (a datagram socket's sending end), -1 until the first close_later. */
static int closer_queue = -1;
static pthread_mutex_t closer_lock = PTHREAD_MUTEX_INITIALIZER;

/* close_later's fallback thread: the descriptor, closed. */
static void *close_thread(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/* The closer: every descriptor read from the queue, closed, one after the other. */
static void *closer_thread(void *arg)
{
	int rd = (int)(intptr_t)arg, fd;
	ssize_t n;

	for (;;) {
		n = recv(rd, &fd, sizeof(fd), 0);
		if (n == (ssize_t)sizeof(fd))
			close(fd);
		else if (n < 0 && errno == EINTR)
			continue;
		else
			break;
	}
	close(rd);
	return NULL;
}

/* Start a detached thread running fn(arg) with every signal blocked; 0 or -1. */
static int thread_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t thr;
	sigset_t all, old;
	int r;

	if (pthread_attr_init(&attr) != 0)
		return -1;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&thr, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r == 0 ? 0 : -1;
}

/*
 * The closer's queue, the closer started at the first call: one thread for
 * the life of the process instead of one per close, which cost 0.1 ms to
 * start (clone3, measured on the daemon's loop between a payload's exit and
 * its exit message) each time. A datagram socket pair, not a pipe: the
 * daemon holds no pipe of its own (tests/e2e/daemon-lifecycle.sh finds an
 * inherited one that way). -1 when it cannot be made.
 */
static int closer_get(void)
{
	int p[2], q;

	pthread_mutex_lock(&closer_lock);
	if (closer_queue < 0 && socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, p) == 0) {
		if (thread_detached(closer_thread, (void *)(intptr_t)p[0]) == 0) {
			closer_queue = p[1];
		} else {
			close(p[0]);
			close(p[1]);
		}
	}
	q = closer_queue;
	pthread_mutex_unlock(&closer_lock);
	return q;
}

/*
 * The last close of fd in a child process, for a process about to exit: its
 * exit would wait for a thread stuck in that close, not for a child. The
 * child keeps nothing else (stdout held open would keep a reader of it
 * waiting) and closes fd only once the parent has closed its copy (EOF on
 * a pipe), so that its close is the last one. Returns -1 when no child
 * could be made (fd untouched).
 */
static int close_in_child(int fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* Async-signal-safe from here: the parent may have threads. */
		unsigned lo = (unsigned)(fd < p[0] ? fd : p[0]), hi = (unsigned)(fd < p[0] ? p[0] : fd);

		close(p[1]);
		if (lo > 0)
			syscall(SYS_close_range, 0U, lo - 1, 0U);
		if (hi > lo + 1)
			syscall(SYS_close_range, lo + 1, hi - 1, 0U);
		syscall(SYS_close_range, hi + 1, ~0U, 0U);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		close(fd);
		_exit(0);
	}
	close(p[0]);
	close(fd);
	close(p[1]);
	return 0;
}

/*
 * Close an inotify descriptor without waiting for it. The last close of an
 * inotify instance waits for an SRCU grace period of the kernel's
 * (fsnotify_destroy_group: the marks are freed only when no reader can hold
 * them), 5-18 ms measured here; in the thread that ends a session it was the
 * longest step between the payload's exit and `boxy run` returning. The
 * closer thread waits instead (its queue is a socket pair: one datagram of
 * the number), or with by_child (a process about to exit: `boxy run
 * --no-daemon`, whose exit waits for its threads) a child process; when the
 * queue is full, a detached thread of its own; when none can be made, it is
 * closed here.
 */
void close_later(int fd, bool by_child)
{
	int q;

	if (by_child && close_in_child(fd) == 0)
		return;
	q = closer_get();
	if (q >= 0 && send(q, &fd, sizeof(fd), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(fd))
		return;
	if (thread_detached(close_thread, (void *)(intptr_t)fd) < 0)
		close(fd);
}
