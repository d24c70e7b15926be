/*
 * test-limits.c — --memory/--pids/--cpus are reported, never faked: exactly
 * one "cgroup" audit event per requested limit, "allow" only when a cgroup
 * really enforces it, "degraded" otherwise; --pids falls back to
 * RLIMIT_NPROC exactly when no pids controller took it; --memory never gets
 * an rlimit. Holds whatever the host delegates (the assertions follow the
 * enforced flags limits_prepare returns), so it runs anywhere.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/limits.h"
#include "init/stages.h"
#include "common/util.h"

#define MAX_EVENTS 8

struct seen {
	size_t n;
	char layer[MAX_EVENTS][16], verdict[MAX_EVENTS][16], subject[MAX_EVENTS][16];
	char detail[MAX_EVENTS][512];
};

static void record(void *ctx, const struct event *ev)
{
	struct seen *s = ctx;

	assert_true(s->n < MAX_EVENTS);
	snprintf(s->layer[s->n], sizeof(s->layer[0]), "%s", ev->layer);
	snprintf(s->verdict[s->n], sizeof(s->verdict[0]), "%s", ev->verdict);
	snprintf(s->subject[s->n], sizeof(s->subject[0]), "%s", ev->subject);
	snprintf(s->detail[s->n], sizeof(s->detail[0]), "%s", ev->detail);
	s->n++;
}

static void test_one_event_per_limit(void **state)
{
	static const struct {
		uint64_t memory, pids;
		uint32_t cpus_milli;
		size_t events;
		const char *what;
	} rows[] = {
		{ 0, 0, 0, 0, "nothing asked: nothing said" },
		{ 2ULL << 30, 0, 0, 1, "--memory alone" },
		{ 0, 512, 0, 1, "--pids alone" },
		{ 0, 0, 2000, 1, "--cpus alone" },
		{ 2ULL << 30, 512, 1500, 3, "all three, in the order memory, pids, cpu" },
	};
	(void)state;
	/* No systemd user manager to defer to: limits_prepare() records every event itself. */
	setenv("XDG_RUNTIME_DIR", "/nonexistent/boxy-test-limits", 1);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct runspec rs;
		struct limits lim;
		struct seen seen = { 0 };
		struct event_sink sink = { record, &seen };
		char *err = NULL;
		size_t k = 0;

		print_message("%s\n", rows[i].what);
		runspec_init(&rs);
		rs.memory = rows[i].memory;
		rs.pids = rows[i].pids;
		rs.cpus_milli = rows[i].cpus_milli;
		assert_int_equal(limits_prepare(&rs, false, &lim, &sink, &err), 0);
		assert_int_equal(seen.n, rows[i].events);
		if (rs.memory) {
			assert_string_equal(seen.layer[k], "cgroup");
			assert_string_equal(seen.subject[k], "memory");
			assert_string_equal(seen.verdict[k], lim.memory_enforced ? "allow" : "degraded");
			if (!lim.memory_enforced) {
				assert_non_null(strstr(seen.detail[k], "watchdog"));
				/* the scope was considered, and why it was not used is said */
				if (!lim.cgroup_dir)
					assert_non_null(strstr(seen.detail[k], "systemd user manager"));
				assert_non_null(strstr(seen.detail[k], "RLIMIT_AS"));
			}
			k++;
		}
		if (rs.pids) {
			assert_string_equal(seen.subject[k], "pids");
			assert_string_equal(seen.verdict[k], lim.pids_enforced ? "allow" : "degraded");
			assert_int_equal(lim.pids_rlimit, !lim.pids_enforced);
			if (lim.pids_rlimit)
				assert_non_null(strstr(seen.detail[k], "RLIMIT_NPROC"));
			k++;
		} else {
			assert_false(lim.pids_rlimit);
		}
		if (rs.cpus_milli) {
			assert_string_equal(seen.subject[k], "cpu");
			assert_string_equal(seen.verdict[k], lim.cpu_enforced ? "allow" : "degraded");
			k++;
		}
		/* a cgroup exists only when it enforces something */
		assert_int_equal(lim.cgroup_dir != NULL,
				 lim.memory_enforced || lim.pids_enforced || lim.cpu_enforced);
		limits_release(&lim);
		assert_null(lim.cgroup_dir);
		runspec_free(&rs);
	}
}

static void test_apply_child(void **state)
{
	static const struct {
		uint64_t pids;
		rlim_t want_nproc;      /* RLIM_INFINITY: left as it was */
	} rows[] = {
		{ 0, RLIM_INFINITY },
		{ 64, 64 },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		/* In a child: rlimits cannot be raised back in this process. */
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0) {
			struct plan p;
			struct rlimit before, core, nproc;
			char *err = NULL;

			memset(&p, 0, sizeof(p));
			p.pids = rows[i].pids;
			getrlimit(RLIMIT_NPROC, &before);
			if (limits_apply_child(&p, &err) < 0)
				_exit(10);
			getrlimit(RLIMIT_CORE, &core);
			getrlimit(RLIMIT_NPROC, &nproc);
			if (core.rlim_cur != 0 || core.rlim_max != 0)
				_exit(11);
			if (rows[i].want_nproc == RLIM_INFINITY) {
				if (nproc.rlim_cur != before.rlim_cur || nproc.rlim_max != before.rlim_max)
					_exit(12);
			} else if (nproc.rlim_cur != rows[i].want_nproc ||
				   nproc.rlim_max != rows[i].want_nproc) {
				_exit(13);
			}
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void test_probe_is_consistent(void **state)
{
	struct cgroup_info info;

	(void)state;
	cgroup_probe(&info);
	/* a controller is usable only in a writable cgroup of a v2 hierarchy */
	if (info.memory || info.pids || info.cpu)
		assert_true(info.v2 && info.writable);
	if (info.own)
		assert_true(path_has_prefix(info.own, info.mount));
	cgroup_info_free(&info);
	assert_null(info.mount);
}

/* Read a small number from dir/name; -1 when unreadable. */
static long read_num(int dirfd, const char *name)
{
	char buf[32];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* The table: inotify bounded well below the host's default 128, every namespace kind at 0. */
static void test_ucount_table(void **state)
{
	static const char *const must[] = {
		"max_inotify_instances", "max_inotify_watches", "max_fanotify_groups",
		"max_fanotify_marks", "max_user_namespaces", "max_mnt_namespaces",
		"max_pid_namespaces", "max_net_namespaces", "max_ipc_namespaces",
		"max_uts_namespaces", "max_cgroup_namespaces", "max_time_namespaces",
	};
	size_t n;
	const struct limits_ucount *t = limits_ucount_table(&n);

	assert_int_equal(n, sizeof(must) / sizeof(must[0]));
	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < n && strcmp(t[i].name, must[j]) != 0; j++)
			;
		assert_true(j < n);
		if (strcmp(t[i].name, "max_inotify_instances") == 0)
			assert_true(t[i].value > 0 && t[i].value <= 64);
		else if (strcmp(t[i].name, "max_inotify_watches") == 0)
			assert_true(t[i].value >= 8192 && t[i].value <= 65536);
		else
			assert_int_equal(t[i].value, 0);
	}
}

/* Written into a fake /proc/sys/user: the values land, a name the kernel lacks is skipped. */
static void test_ucount_write_fake(void **state)
{
	char dir[] = "/tmp/boxy-test-ucounts-XXXXXX";
	char *err = NULL;
	int dfd;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* Everything but max_time_namespaces exists (a 5.4 kernel). */
	size_t n;
	const struct limits_ucount *t = limits_ucount_table(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, "max_time_namespaces") != 0)
			close(openat(dfd, t[i].name, O_CREAT | O_WRONLY, 0644));
	assert_int_equal(limits_write_ucounts(dfd, &err), 0);
	assert_int_equal(read_num(dfd, "max_inotify_instances"), (long)LIMITS_INOTIFY_INSTANCES);
	assert_int_equal(read_num(dfd, "max_inotify_watches"), (long)LIMITS_INOTIFY_WATCHES);
	assert_int_equal(read_num(dfd, "max_user_namespaces"), 0);
	assert_int_equal(read_num(dfd, "max_time_namespaces"), -1);
	/* A file that cannot be written is an error, not a silent skip. */
	fchmodat(dfd, "max_mnt_namespaces", 0, 0);
	if (geteuid() != 0) {
		assert_int_equal(limits_write_ucounts(dfd, &err), -1);
		assert_non_null(strstr(err, "max_mnt_namespaces"));
		free(err);
		err = NULL;
	}
	for (size_t i = 0; i < n; i++)
		unlinkat(dfd, t[i].name, 0);
	close(dfd);
	rmdir(dir);
}

/*
 * For real, in a user namespace of a forked child: the kernel takes the
 * values, and the 33rd inotify instance fails although the user has more
 * left outside the namespace.
 */
static int ucount_child(void)
{
	char *err = NULL;
	int dfd, got = 0;

	if (unshare(CLONE_NEWUSER) < 0)
		return 10;
	dfd = open("/proc/sys/user", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 11;
	if (limits_write_ucounts(dfd, &err) < 0) {
		fprintf(stderr, "# limits_write_ucounts: %s\n", err);
		return 12;
	}
	if (read_num(dfd, "max_inotify_instances") != (long)LIMITS_INOTIFY_INSTANCES ||
	    read_num(dfd, "max_user_namespaces") != 0)
		return 13;
	for (int i = 0; i < 200; i++) {
		if (inotify_init1(IN_CLOEXEC) < 0) {
			if (errno != EMFILE)
				return 14;
			break;
		}
		got++;
	}
	if (got > (int)LIMITS_INOTIFY_INSTANCES)
		return 15;
	/* Namespaces: refused by the kernel itself now (ENOSPC). */
	if (unshare(CLONE_NEWUSER) == 0 || errno != ENOSPC)
		return 16;
	return 0;
}

static void test_ucount_kernel(void **state)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(ucount_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("ucount child failed at step %d (10 unshare, 11 open, 12 write, 13 read back, "
			 "14 inotify errno, 15 too many instances, 16 nested userns)",
			 WEXITSTATUS(status));
}

/* Write text to dir/name (a stand-in for a cgroup file). */
static void put(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

/*
 * The daemon in a cgroup delegated to it (Delegate=yes): it moves into
 * OWN/daemon only when it is OWN's one process, and runs are then made in
 * OWN (cgroup_probe says so). A directory stands in for the cgroup: the
 * kernel's side (the no-internal-processes rule) is systemd-user.sh's.
 */
static void test_delegated_leaf(void **state)
{
	char tmpl[] = "/tmp/test-limits-leaf.XXXXXX", *own = mkdtemp(tmpl), *leaf, *procs = NULL;
	char *leaf_procs, *own_procs;
	struct cgroup_info info;
	size_t len;
	char *err = NULL;

	(void)state;
	assert_non_null(own);
	leaf = xasprintf("%s/" LIMITS_DAEMON_LEAF, own);
	leaf_procs = xasprintf("%s/cgroup.procs", leaf);
	own_procs = xasprintf("%s/cgroup.procs", own);
	/* Shared with another process (a login scope, a terminal's): stays. */
	put(own, "cgroup.procs", "4242\n4343\n");
	assert_int_equal(limits_leaf_move(own, 4242, &err), 0);
	assert_int_equal(access(leaf, F_OK), -1);
	/* Alone, but not us: stays. */
	put(own, "cgroup.procs", "4343\n");
	assert_int_equal(limits_leaf_move(own, 4242, &err), 0);
	assert_null(limits_runs_cgroup());
	/* Alone: into the leaf; runs are made in OWN from now on. */
	put(own, "cgroup.procs", "4242\n");
	assert_int_equal(limits_leaf_move(own, 4242, &err), 1);
	assert_null(err);
	assert_int_equal(read_file(leaf_procs, 64, &procs, &len), 0);
	assert_string_equal(procs, "4242");
	assert_string_equal(limits_runs_cgroup(), own);
	cgroup_probe(&info);
	if (info.v2)
		assert_string_equal(info.own, own);
	cgroup_info_free(&info);
	free(procs);
	unlink(leaf_procs);
	rmdir(leaf);
	unlink(own_procs);
	rmdir(own);
	free(leaf_procs);
	free(own_procs);
	free(leaf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_event_per_limit),
		cmocka_unit_test(test_apply_child),
		cmocka_unit_test(test_probe_is_consistent),
		cmocka_unit_test(test_ucount_table),
		cmocka_unit_test(test_ucount_write_fake),
		cmocka_unit_test(test_ucount_kernel),
		cmocka_unit_test(test_delegated_leaf),      /* last: it sets where runs go */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
