/*
 * test-react.c — what an alert does, without a daemon (doc/react.md): the
 * --on-alert words (each kind, a bare action, what a profile and a flag make
 * together, hostile and malformed lists), the canonical text that crosses the
 * wire, and the freezer's SIGSTOP sweep against a real pid namespace of the
 * test's own — a fork storm, processes that catch every signal and send
 * SIGCONT to every other in a loop, a process stopped already — leaving a
 * process outside the namespace running; and, against many threads doing
 * nothing but that, a sweep that gives up at its deadline instead of hanging.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sandbox/freeze.h"
#include "spec/runspec.h"
#include "spec/values.h"
#include "common/util.h"

/* What each kind gets under a text, in kind order: alert tripwire dns git denials. */
static void test_parse(void **state)
{
	static const struct {
		const char *in;
		const char *canon;      /* NULL: refused */
		const char *acts;       /* "lffll": log/freeze/stop per kind */
	} rows[] = {
		{ "log", "log", "lllll" },
		{ "freeze", "freeze", "fffff" },
		{ "stop", "stop", "sssss" },
		/* the presets' own */
		{ "log,tripwire=freeze", "log,tripwire=freeze", "lflll" },
		/* a kind alone: the others fall back to alert's, which is unset: log */
		{ "tripwire=freeze", "tripwire=freeze", "lflll" },
		/* alert= is the default for the kinds not named, not a reset */
		{ "dns=stop,alert=freeze", "alert=freeze,dns=stop", "ffsff" },
		/* left to right: a bare action names every kind, even those named before */
		{ "dns=stop,freeze", "freeze", "fffff" },
		{ "freeze,dns=log,git=stop", "freeze,dns=log,git=stop", "fflsf" },
		{ "denials=freeze", "denials=freeze", "llllf" },
		{ "", NULL, NULL },
		{ ",", NULL, NULL },
		{ "log,", NULL, NULL },
		{ "frez", NULL, NULL },
		{ "FREEZE", NULL, NULL },
		{ "dns=", NULL, NULL },
		{ "=log", NULL, NULL },
		{ "dns==log", NULL, NULL },
		{ "tripwire=freeze=stop", NULL, NULL },
		{ "git =log", NULL, NULL },
		{ "unknown=log", NULL, NULL },
		{ "log\n", NULL, NULL },
		{ "d\xc3\xa9ns=log", NULL, NULL },
		{ "dns=log\x1b[31m", NULL, NULL },
	};
	static const char act_letter[] = { '?', 'l', 'f', 's' };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct react_policy p = { 0 };
		char *err = NULL, *canon;
		int rc = parse_on_alert(rows[i].in, &p, &err);

		if (!rows[i].canon) {
			assert_int_equal(rc, -1);
			assert_non_null(err);
			/* one line, nothing a terminal would act on */
			assert_null(strchr(err, '\n'));
			assert_null(strchr(err, '\x1b'));
			free(err);
			continue;
		}
		assert_int_equal(rc, 0);
		canon = on_alert_text(&p);
		assert_string_equal(canon, rows[i].canon);
		for (size_t k = 0; k < REACT_NKINDS; k++)
			assert_int_equal(act_letter[react_policy_action(&p, (enum react_kind)k)],
					 rows[i].acts[k]);
		/* The canonical text parses back to the same policy (the wire's check). */
		{
			struct react_policy q = { 0 };

			assert_int_equal(parse_on_alert(canon, &q, &err), 0);
			assert_memory_equal(&p, &q, sizeof(p));
		}
		assert_int_equal(on_alert_may_freeze(canon), strchr(rows[i].acts, 'f') != NULL);
		free(canon);
	}
	/* Nothing set: no text, every kind logged, nothing freezes. */
	{
		struct react_policy p = { 0 };

		assert_null(on_alert_text(&p));
		assert_int_equal(react_policy_action(&p, REACT_TRIPWIRE), REACT_LOG);
		assert_false(on_alert_may_freeze(NULL));
	}
	/* A refused list leaves what was set before as it was. */
	{
		struct react_policy p = { 0 }, before;
		char *err = NULL;

		assert_int_equal(parse_on_alert("tripwire=freeze", &p, &err), 0);
		before = p;
		assert_int_equal(parse_on_alert("dns=stop,bogus", &p, &err), -1);
		free(err);
		assert_memory_equal(&p, &before, sizeof(p));
	}
}

/* A flag over a profile: its items after the profile's (runspec_merge). */
static void test_merge(void **state)
{
	static const struct {
		const char *profile, *flag, *want;
	} rows[] = {
		{ "log,tripwire=freeze", NULL, "log,tripwire=freeze" },
		{ "log,tripwire=freeze", "dns=freeze", "log,tripwire=freeze,dns=freeze" },
		{ "log,tripwire=freeze", "log", "log" },
		{ "log,tripwire=freeze", "tripwire=log", "log" },
		/* alert= only reaches kinds nothing named: the profile's bare log named them all */
		{ "log,tripwire=freeze", "alert=stop", "stop,tripwire=freeze,dns=log,git=log,denials=log" },
		{ "tripwire=freeze", "alert=stop", "alert=stop,tripwire=freeze" },
		{ "tripwire=freeze", "stop", "stop" },
		{ NULL, "git=stop", "git=stop" },
		{ "dns=stop", "tripwire=freeze", "tripwire=freeze,dns=stop" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct runspec prof, flags;

		runspec_init(&prof);
		runspec_init(&flags);
		prof.on_alert = rows[i].profile ? xstrdup(rows[i].profile) : NULL;
		flags.on_alert = rows[i].flag ? xstrdup(rows[i].flag) : NULL;
		flags.on_denials = 3;
		runspec_merge(&prof, &flags);
		assert_string_equal(prof.on_alert, rows[i].want);
		assert_int_equal(prof.on_denials, 3);
		runspec_free(&prof);
		runspec_free(&flags);
	}
}

/* The state letter of a stat line: after the last ')', whatever the command's name. */
static void test_stat_state(void **state)
{
	static const struct {
		const char *line;
		char want;
	} rows[] = {
		{ "123 (sh) S 1 123 123 0 -1", 'S' },
		{ "7 (a) b) T 1 7", 'T' },
		{ "7 (x (y) z)) t 1", 't' },
		{ "9 ( ) R 1", 'R' },
		{ "9 (sh) ", '?' },
		{ "9 (sh)", '?' },
		{ "9 sh S", '?' },
		{ "", '?' },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(freeze_stat_state(rows[i].line), rows[i].want);
}

/* ---- the SIGSTOP sweep against a pid namespace of the test's own ------------------------ */

static int ns_ready[2];
static int ns_continuers = 2, ns_waker_threads;

/* A thread that keeps SIGCONT unblocked and sends it to every process of the namespace. */
static void *waker(void *arg)
{
	sigset_t cont;

	(void)arg;
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	pthread_sigmask(SIG_UNBLOCK, &cont, NULL);
	for (;;) {
		kill(-1, SIGCONT);
		kill(1, SIGCONT);
	}
	return NULL;
}

static void caught(int sig)
{
	(void)sig;
}

/* Catch every signal it may (SIGCONT and SIGTSTP ignored), then wake the others forever. */
static void __attribute__((noreturn)) continuer(void)
{
	pthread_t t;

	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, s == SIGCONT || s == SIGTSTP ? SIG_IGN : caught);
	for (int i = 0; i < ns_waker_threads; i++)
		pthread_create(&t, NULL, waker, NULL);
	for (;;)
		kill(-1, SIGCONT);
}

/* The namespace's init: its payload — continuers, a fork storm, a stopped process. */
static int ns_init(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGCHLD, SIG_IGN);               /* reap everything at once */
	for (int i = 0; i < ns_continuers; i++)
		if (fork() == 0)
			continuer();
	if (fork() == 0) {
		/* a fork storm: short-lived children, as fast as it can */
		for (;;)
			if (fork() == 0)
				_exit(0);
	}
	{
		pid_t stopped = fork();

		if (stopped == 0)
			for (;;)
				pause();
		kill(stopped, SIGSTOP);
	}
	if (write(ns_ready[1], "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* The threads of init's namespace (init left out) that run; *procs: its processes. */
static unsigned ns_running(pid_t init, unsigned *procs)
{
	char want[64], path[300], link[64];
	unsigned running = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");
	ssize_t n;

	assert_non_null(d);
	*procs = 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init);
	n = readlink(path, want, sizeof(want) - 1);
	assert_true(n > 0);
	want[n] = '\0';
	while ((de = readdir(d)) != NULL) {
		pid_t p = (pid_t)atoi(de->d_name);
		int r;

		if (p <= 0 || p == init)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, want) != 0)
			continue;
		r = freeze_threads_running(p);
		if (r > 0)
			running += (unsigned)r;
		if (r >= 0)
			(*procs)++;
	}
	closedir(d);
	return running;
}

/* A pid namespace of the test's own, its payload running: its init's pid. */
static pid_t ns_start(void)
{
	static char stack[256 << 10];
	pid_t init;
	char c;

	assert_int_equal(pipe(ns_ready), 0);
	init = clone(ns_init, stack + sizeof(stack), CLONE_NEWPID | CLONE_NEWUSER | SIGCHLD, NULL);
	if (init < 0 && (errno == EPERM || errno == EINVAL))
		fail_msg("cannot make a pid namespace here (%s): the sweep needs one",
			 strerror(errno));
	assert_true(init > 0);
	assert_int_equal(read(ns_ready[0], &c, 1), 1);
	close(ns_ready[0]);
	close(ns_ready[1]);
	return init;
}

static void ns_end(pid_t init)
{
	int st;

	kill(init, SIGKILL);
	waitpid(init, &st, 0);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void test_sigstop_sweep(void **state)
{
	struct freeze_report rep;
	pid_t init, outside;
	char *err = NULL;
	unsigned procs = 0, procs2 = 0;
	int st;

	(void)state;
	ns_continuers = 2;
	ns_waker_threads = 0;
	init = ns_start();
	/* A process outside the namespace, busy: the sweep must leave it alone. */
	outside = fork();
	if (outside == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			;
	}
	usleep(200 * 1000);         /* the continuers and the storm under way */
	/* The daemon gives up after FREEZE_TIMEOUT_US and kills; here the sweep is given time
	 * enough to converge on a machine busy with other work, and says how long it took. */
	assert_int_equal(freeze_sigstop(init, 10 * FREEZE_TIMEOUT_US, &rep, &err), 0);
	assert_null(err);
	assert_string_equal(rep.how, "SIGSTOP");
	assert_true(rep.procs >= 4);
	print_message("# the sweep: %u processes stopped in %.2f ms, %u sweeps\n", rep.procs,
		      (double)rep.us / 1000.0, rep.rounds);
	/* Stopped, and stays so: twice, 300 ms apart, no thread runs and none was added. */
	assert_int_equal(ns_running(init, &procs), 0);
	usleep(300 * 1000);
	assert_int_equal(ns_running(init, &procs2), 0);
	assert_int_equal(procs, procs2);
	/* The process outside ran on. */
	assert_true(freeze_threads_running(outside) > 0);
	/* Let them go: they run again. */
	assert_true(freeze_sigcont(init) > 0);
	usleep(100 * 1000);
	assert_true(ns_running(init, &procs) > 0);
	kill(outside, SIGKILL);
	waitpid(outside, &st, 0);
	ns_end(init);
}

/*
 * Six processes of three threads, every one a tight loop of SIGCONT to every
 * other: the sweep may not converge (each thread caught in the middle of its
 * kill continues the rest once more), and then it must give up at its
 * deadline with a reason — the daemon kills the sandbox then — never hang.
 */
static void test_sigstop_bounded(void **state)
{
	struct freeze_report rep;
	char *err = NULL;
	uint64_t t0;
	pid_t init;
	int rc;

	(void)state;
	ns_continuers = 6;
	ns_waker_threads = 2;
	init = ns_start();
	usleep(200 * 1000);
	t0 = now_us();
	rc = freeze_sigstop(init, 500 * 1000, &rep, &err);
	assert_true(now_us() - t0 < 1500 * 1000);
	if (rc == 0) {
		print_message("# the continuers: stopped in %.2f ms, %u sweeps\n",
			      (double)rep.us / 1000.0, rep.rounds);
	} else {
		assert_non_null(err);
		assert_non_null(strstr(err, "still running after 500 ms"));
		print_message("# the continuers: %s\n", err);
		free(err);
	}
	freeze_sigcont(init);
	ns_end(init);
}

/* A namespace whose init is gone: an error, not a crash or a hang. */
static void test_sigstop_gone(void **state)
{
	struct freeze_report rep;
	char *err = NULL;
	pid_t p = fork();
	int st;

	(void)state;
	if (p == 0)
		_exit(0);
	waitpid(p, &st, 0);
	assert_int_equal(freeze_sigstop(p, 100000, &rep, &err), -1);
	assert_non_null(err);
	free(err);
	assert_int_equal(freeze_sigcont(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_stat_state),
		cmocka_unit_test(test_sigstop_sweep),
		cmocka_unit_test(test_sigstop_bounded),
		cmocka_unit_test(test_sigstop_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
