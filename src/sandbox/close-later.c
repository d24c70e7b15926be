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
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/close-later.h"

/* close_later's thread: the descriptor, closed. */
static void *close_thread(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
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
 * longest step between the payload's exit and `boxy run` returning. A
 * detached thread of its own waits instead, or with by_child (a process
 * about to exit: `boxy run --no-daemon`, whose exit waits for its threads)
 * a child process; when neither can be made, it is closed here.
 */
void close_later(int fd, bool by_child)
{
	pthread_attr_t attr;
	pthread_t thr;
	sigset_t all, old;
	int r;

	if (by_child && close_in_child(fd) == 0)
		return;
	if (pthread_attr_init(&attr) != 0) {
		close(fd);
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&thr, &attr, close_thread, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0)
		close(fd);
}
