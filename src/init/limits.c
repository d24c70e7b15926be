/*
 * init/limits.c — boxy-init's side of --memory, --pids and --cpus, and the
 * ucounts lowered in every sandbox (why each, and the daemon's side: the
 * cgroup, the scope, the watchdog, in sandbox/limits.c): run in boxy-init,
 * before the mounts and after them.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "init/plan.h"
#include "init/stages.h"
#include "common/util.h"

/*
 * In boxy-init, before the mounts: oom_score_adj 1000 makes the sandbox the
 * kernel's first choice when the host runs out of memory anyway (a balloon
 * faster than the watchdog's samples). Inherited by every process of the
 * sandbox; an unprivileged payload can lower it back only to the user's own
 * value, never below. (kernel.shmall, which would bound SysV segments, is
 * not writable here: the sandbox's user namespace maps no uid 0, and the
 * IPC sysctls belong to that uid. The watchdog counts them instead.)
 */
static int limits_memory_child(const struct plan *plan, char **err)
{
	(void)plan;
	if (write_file("/proc/self/oom_score_adj", "1000\n", 5, 0644) < 0 && errno != ENOENT)
		return set_err_errno(err, "writing /proc/self/oom_score_adj");
	return 0;
}

int limits_apply_child(const struct plan *plan, char **err)
{
	/* No core files: a crashing payload would otherwise write its memory
	 * into the work directory (or hand it to the host's core handler). Hard
	 * limit too, so the payload cannot raise it back. */
	struct rlimit core = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &core) < 0)
		return set_err_errno(err, "setrlimit RLIMIT_CORE");
	if (plan->pids) {
		struct rlimit nproc = { (rlim_t)plan->pids, (rlim_t)plan->pids };

		/* Soft and hard: the payload may lower it, never raise it. The count
		 * is the sandbox user namespace's own (ucounts, Linux 5.14+), and
		 * capabilities inside it do not exempt from it (the kernel checks
		 * CAP_SYS_RESOURCE/CAP_SYS_ADMIN in the initial namespace). */
		if (setrlimit(RLIMIT_NPROC, &nproc) < 0)
			return set_err_errno(err, "setrlimit RLIMIT_NPROC %llu",
					     (unsigned long long)plan->pids);
	}
	return limits_memory_child(plan, err);
}

/*
 * The ucounts set in the sandbox's user namespace, and why:
 *   inotify: each instance is a descriptor the host user's limit counts; 32
 *     is plenty for file watchers (libuv and chokidar use one per process)
 *     and leaves the host user 96 of the default 128. Watches bound kernel
 *     memory; 65536 covers a large project's watcher.
 *   fanotify: off the seccomp allowlist already; 0 is belt and braces.
 *   namespaces: the filter refuses creating any; 0 makes the kernel refuse
 *     too (ENOSPC), should the filter ever have a hole. Written after the
 *     mount stage, whose detached trees must not depend on the count.
 */
static const struct limits_ucount limits_ucounts[] = {
	{ "max_inotify_instances", LIMITS_INOTIFY_INSTANCES },
	{ "max_inotify_watches", LIMITS_INOTIFY_WATCHES },
	{ "max_fanotify_groups", 0 },
	{ "max_fanotify_marks", 0 },
	{ "max_user_namespaces", 0 },
	{ "max_mnt_namespaces", 0 },
	{ "max_pid_namespaces", 0 },
	{ "max_net_namespaces", 0 },
	{ "max_ipc_namespaces", 0 },
	{ "max_uts_namespaces", 0 },
	{ "max_cgroup_namespaces", 0 },
	{ "max_time_namespaces", 0 },
};

/* The table above; see init/stages.h. */
const struct limits_ucount *limits_ucount_table(size_t *n)
{
	*n = ARRAY_SIZE(limits_ucounts);
	return limits_ucounts;
}

/* Write every ucount limit into the directory dirfd (a /proc/sys/user); see init/stages.h. */
int limits_write_ucounts(int dirfd, char **err)
{
	for (size_t i = 0; i < ARRAY_SIZE(limits_ucounts); i++) {
		char val[24];
		int fd, len;
		ssize_t w;

		fd = openat(dirfd, limits_ucounts[i].name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		/* An older kernel lacks some (time namespaces: 5.6, fanotify: 5.13). */
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return set_err_errno(err, "/proc/sys/user/%s", limits_ucounts[i].name);
		len = snprintf(val, sizeof(val), "%lu\n", limits_ucounts[i].value);
		w = write(fd, val, (size_t)len);
		if (w != len) {
			set_err_errno(err, "writing %lu to /proc/sys/user/%s", limits_ucounts[i].value,
				      limits_ucounts[i].name);
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* /proc/sys/user of the sandbox's namespace, held from stage limits to stage ucounts. */
static int limits_ucount_dir = -1;

/* Open /proc/sys/user while the host's /proc is still mounted; see init/stages.h. */
int limits_open_ucounts(char **err)
{
	limits_ucount_dir = open("/proc/sys/user", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (limits_ucount_dir < 0)
		return set_err_errno(err, "/proc/sys/user");
	return 0;
}

/* Lower the sandbox namespace's ucounts; see init/stages.h. */
int limits_apply_ucounts(char **err)
{
	int rc;

	if (limits_ucount_dir < 0)
		return set_err(err, "/proc/sys/user was not opened");
	rc = limits_write_ucounts(limits_ucount_dir, err);
	close(limits_ucount_dir);
	limits_ucount_dir = -1;
	return rc;
}
