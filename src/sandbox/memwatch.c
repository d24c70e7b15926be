/*
 * sandbox/memwatch.c — the --memory watchdog: where no cgroup is delegated (this is
 * the common case on hybrid hosts, and wherever systemd hands the user no
 * controllers), nothing in the kernel bounds what a sandbox allocates. So the
 * process that owns the sandbox runs one thread per watched sandbox that
 * counts the sandbox's memory every 100 ms (every 10 ms once it is past half
 * its limit) and kills the sandbox with SIGKILL on its init, which ends the
 * whole pid namespace, when the count exceeds the limit.
 *
 * What one sample counts (doc/limits.md has the reasons):
 *   - every process in the sandbox's pid namespace, found by scanning /proc
 *     for the namespace's inode (so no process hides by reparenting or by
 *     leaving the init's tree): RssAnon + RssShmem from /proc/PID/status, and
 *     when that sum is over the limit, Pss_Anon + Pss_Shmem from
 *     smaps_rollup instead (shared copy-on-write pages split between the
 *     processes that share them: a forking server is not counted N times);
 *     page cache of files is not counted, the kernel reclaims it;
 *   - every tmpfs mounted in the sandbox (/, /tmp, $HOME, /dev/shm, …): the
 *     blocks used, through descriptors opened once at the start;
 *   - every memfd a process holds open, by its allocated blocks (a memfd
 *     written with write() and never mapped shows in no RSS), as last found
 *     by a second thread that walks the descriptors (about 20 us each: a
 *     payload with thousands of them must not slow the samples down);
 *   - the SysV shared memory of its IPC namespace, asked of a helper process
 *     that joined it (a detached segment is in no process and on no tmpfs).
 * Memory both mapped and on a tmpfs or in a memfd is counted twice: the
 * watchdog errs towards stopping early. Kernel memory (socket and pipe
 * buffers, page tables) is not counted.
 *
 * The thread touches nothing of its owner's but its own struct: it reads
 * /proc and sends one signal, through a pidfd so that a reused pid is never
 * hit. The owner records what happened after the sandbox exits.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/openat2.h>

#include "sandbox/memwatch.h"
#include "common/util.h"

#define MEMWATCH_TMPFS_MAX  32          /* tmpfs mounts watched per sandbox */
#define MEMWATCH_MEMFD_MAX  4096        /* distinct memfds told apart per sample */
#define PROC_TEXT_MAX       8192        /* status and smaps_rollup fit in this */
#define MOUNTINFO_MAX       (1u << 20)

struct memwatch;
static void memwatch_shm_helper_stop(struct memwatch *mw);
static uint64_t mono_us(void);

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct memwatch {
	pid_t init;
	int pidfd;                      /* init, for the kill */
	int stopfd;                     /* eventfd: memwatch_stop() wakes the thread */
	int procfd;                     /* /proc */
	uint64_t limit;
	char nsid[64];                  /* readlink of /proc/INIT/ns/pid: "pid:[N]" */
	int tmpfs[MEMWATCH_TMPFS_MAX];
	size_t ntmpfs;
	pid_t *pids;                    /* the last sample's processes */
	size_t npids, cappids;
	struct file_id memfds[MEMWATCH_MEMFD_MAX];     /* the descriptor scan's */
	size_t nmemfds;
	_Atomic uint64_t memfd_bytes;   /* the descriptor scan's last complete total */
	_Atomic uint64_t fdscan_slowest_us;
	pthread_t fd_thread;
	bool fd_thread_started;
	int userns, ipcns;              /* the sandbox's, for the SysV helper */
	pid_t shm_pid;                  /* the SysV helper, or -1 */
	int shm_req, shm_resp;          /* its pipes: a byte asks, a uint64_t answers */
	pthread_t thread;
	struct memwatch_report rep;     /* the thread's, read after the join */
};

uint64_t memwatch_parse_kb(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long v = 0;
		const char *q;

		if (strncmp(p, key, klen) != 0 || p[klen] != ':')
			continue;
		q = p + klen + 1;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q < '0' || *q > '9')
			return 0;
		for (; *q >= '0' && *q <= '9'; q++) {
			if (v > (UINT64_MAX - 9) / 10 / 1024)
				return 0;       /* no kernel says this; a malformed line is no count */
			v = v * 10 + (unsigned)(*q - '0');
		}
		return strncmp(q, " kB", 3) == 0 ? v : 0;
	}
	return 0;
}

/* Decode mountinfo's octal escapes (\040 for a space) into a new string. */
static char *mountinfo_unescape(const char *s, size_t n)
{
	char *out = xmalloc(n + 1), *w = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			char c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));

			if (c == '\0') {
				free(out);
				return NULL;
			}
			*w++ = c;
			i += 3;
		} else {
			*w++ = s[i];
		}
	}
	*w = '\0';
	return out;
}

bool memwatch_parse_tmpfs(const char *line, dev_t *dev, char **mountpoint)
{
	/* id parent major:minor root mountpoint options [optional...] - fstype source super */
	const char *sep = strstr(line, " - "), *f[5], *p = line;
	unsigned maj, min;
	size_t n = 0;

	if (!sep || strncmp(sep + 3, "tmpfs ", 6) != 0)
		return false;
	while (n < 5 && p < sep) {
		f[n++] = p;
		p = strchr(p, ' ');
		if (!p || p > sep)
			break;
		p++;
	}
	if (n < 5 || sscanf(f[2], "%u:%u ", &maj, &min) != 2 || f[4][0] != '/')
		return false;
	*mountpoint = mountinfo_unescape(f[4], (size_t)(strchr(f[4], ' ') - f[4]));
	if (!*mountpoint)
		return false;
	*dev = makedev(maj, min);
	return true;
}

uint64_t memwatch_usage_total(const struct memwatch_usage *u)
{
	return u->procs + u->tmpfs + u->memfd + u->sysv;
}

/* Read a small /proc file relative to dirfd into buf (NUL-terminated); -1 on error. */
static int proc_read(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t n = 0;

	if (fd < 0)
		return -1;
	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return n > 0 ? 0 : -1;
}

/*
 * Open every tmpfs of the sandbox once: the mounts are all made before the
 * payload starts, and the payload holds no capability to add one. Each path
 * is resolved inside the sandbox's root without following symlinks, and the
 * result must be the device mountinfo names, so no planted link makes us
 * count some other filesystem.
 */
static void memwatch_open_tmpfs(struct memwatch *mw)
{
	char path[64], *buf = NULL, *line, *save = NULL;
	size_t len;
	int root;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)mw->init);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)mw->init);
	if (root < 0 || read_file(path, MOUNTINFO_MAX, &buf, &len) < 0) {
		if (root >= 0)
			close(root);
		mw->rep.tmpfs_skipped = 1;
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		struct stat st;
		bool dup = false;
		char *mp;
		dev_t dev;
		int fd;

		if (!memwatch_parse_tmpfs(line, &dev, &mp))
			continue;
		fd = (int)syscall(SYS_openat2, root, mp[1] ? mp + 1 : ".", &how, sizeof(how));
		free(mp);
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != dev ||
		    mw->ntmpfs == MEMWATCH_TMPFS_MAX) {
			if (fd >= 0)
				close(fd);
			mw->rep.tmpfs_skipped++;
			continue;
		}
		for (size_t i = 0; i < mw->ntmpfs && !dup; i++) {
			struct stat o;

			dup = fstat(mw->tmpfs[i], &o) == 0 && o.st_dev == st.st_dev;
		}
		if (dup)
			close(fd);
		else
			mw->tmpfs[mw->ntmpfs++] = fd;
	}
	free(buf);
	close(root);
	mw->rep.ntmpfs = mw->ntmpfs;
}

/* Bytes of the memfds process `pid` holds that this sample has not counted yet. */
static uint64_t memwatch_memfds(struct memwatch *mw, pid_t pid)
{
	char path[32], link[32];
	uint64_t sum = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	fd = openat(mw->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		ssize_t n;
		bool seen = false;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 7 || memcmp(link, "/memfd:", 7) != 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			continue;
		for (size_t i = 0; i < mw->nmemfds && !seen; i++)
			seen = mw->memfds[i].dev == st.st_dev && mw->memfds[i].ino == st.st_ino;
		if (seen)
			continue;
		/* Past the table, a memfd may be counted twice: early, never late. */
		if (mw->nmemfds < MEMWATCH_MEMFD_MAX)
			mw->memfds[mw->nmemfds++] = (struct file_id){ st.st_dev, st.st_ino };
		sum += (uint64_t)st.st_blocks * 512;
	}
	closedir(d);
	return sum;
}

/* True when /proc/<name> is a process of the watched pid namespace. */
static bool memwatch_is_ours(const struct memwatch *mw, pid_t pid)
{
	char path[48], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/ns/pid", (int)pid);
	n = readlinkat(mw->procfd, path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strcmp(link, mw->nsid) == 0;
}

/*
 * The descriptor scan, in a thread of its own: reading /proc/PID/fd costs
 * some 20 us a descriptor, so a payload holding tens of thousands of them
 * would otherwise stretch every sample. Here it only makes the memfd count
 * older (by one pass, recorded as the slowest pass); processes, tmpfs and
 * SysV shared memory keep their sample rate.
 */
static void *memwatch_fd_main(void *arg)
{
	struct memwatch *mw = arg;
	struct pollfd pfd = { .fd = mw->stopfd, .events = POLLIN };
	int procfd = dup(mw->procfd);
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (;;) {
		uint64_t t0 = mono_us(), sum = 0, took;
		struct dirent *de;
		DIR *d;
		int fd, rc;

		fd = procfd >= 0 ? dup(procfd) : -1;
		d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d) {
			if (fd >= 0)
				close(fd);
			break;
		}
		rewinddir(d);
		mw->nmemfds = 0;
		while ((de = readdir(d)) != NULL) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);

			if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || pid > INT32_MAX ||
			    !memwatch_is_ours(mw, (pid_t)pid))
				continue;
			sum += memwatch_memfds(mw, (pid_t)pid);
		}
		closedir(d);
		atomic_store(&mw->memfd_bytes, sum);
		took = mono_us() - t0;
		if (took > atomic_load(&mw->fdscan_slowest_us))
			atomic_store(&mw->fdscan_slowest_us, took);
		rc = poll(&pfd, 1, MEMWATCH_FAST_MS);
		if (rc > 0 || (rc < 0 && errno != EINTR))
			break;
	}
	if (procfd >= 0)
		close(procfd);
	return NULL;
}

/* One sample: every process of the namespace, the tmpfs mounts, the memfds. */
static void memwatch_sample(struct memwatch *mw, struct memwatch_usage *u)
{
	char text[PROC_TEXT_MAX], path[48];
	struct dirent *de;
	DIR *d;
	int fd;

	memset(u, 0, sizeof(*u));
	mw->npids = 0;
	fd = dup(mw->procfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || pid > INT32_MAX ||
		    !memwatch_is_ours(mw, (pid_t)pid))
			continue;
		snprintf(path, sizeof(path), "%ld/status", pid);
		if (proc_read(mw->procfd, path, text, sizeof(text)) < 0)
			continue;   /* gone meanwhile */
		u->procs += (memwatch_parse_kb(text, "RssAnon") + memwatch_parse_kb(text, "RssShmem")) *
			    1024;
		u->nprocs++;
		if (mw->npids == mw->cappids) {
			mw->cappids = mw->cappids ? 2 * mw->cappids : 64;
			mw->pids = xrealloc(mw->pids, mw->cappids * sizeof(*mw->pids));
		}
		mw->pids[mw->npids++] = (pid_t)pid;
	}
	closedir(d);
	u->memfd = atomic_load(&mw->memfd_bytes);
	for (size_t i = 0; i < mw->ntmpfs; i++) {
		struct statfs sf;

		if (fstatfs(mw->tmpfs[i], &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
		    sf.f_blocks >= sf.f_bfree)
			u->tmpfs += (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	}
}

/*
 * RSS counts a page shared by N processes N times: a server that forks
 * workers would look N times its size. Before killing, recount the same
 * processes by proportional share (smaps_rollup walks the page tables, a
 * few ms for 512 MiB of small pages, which is why it is not the first look).
 */
static uint64_t memwatch_recount_pss(struct memwatch *mw)
{
	char text[PROC_TEXT_MAX], path[48];
	uint64_t sum = 0;

	for (size_t i = 0; i < mw->npids; i++) {
		snprintf(path, sizeof(path), "%d/smaps_rollup", (int)mw->pids[i]);
		if (proc_read(mw->procfd, path, text, sizeof(text)) < 0)
			continue;
		sum += (memwatch_parse_kb(text, "Pss_Anon") + memwatch_parse_kb(text, "Pss_Shmem")) *
		       1024;
	}
	return sum;
}

/*
 * SysV segments nobody has attached are in no process's memory and on no
 * tmpfs, and the segments of an IPC namespace can only be listed from
 * inside it. Joining it takes CAP_SYS_ADMIN in the sandbox's user
 * namespace, which its owner has but only a single-threaded process may
 * enter a user namespace: so a forked helper joins both and answers each
 * request with shm_rss of SHM_INFO. Between fork and exit it makes only
 * system calls (the owner is multi-threaded); it dies with this thread
 * (PR_SET_PDEATHSIG) or at the end of the request pipe. It sits in no
 * namespace of the sandbox but those two: the payload cannot name it.
 */
static void memwatch_shm_helper_start(struct memwatch *mw)
{
	int req[2], resp[2];
	pid_t pid;

	mw->shm_pid = -1;
	if (mw->userns < 0 || mw->ipcns < 0)
		return;
	if (pipe2(req, O_CLOEXEC) < 0)
		return;
	if (pipe2(resp, O_CLOEXEC) < 0) {
		close(req[0]);
		close(req[1]);
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct shm_info si;
		char c;

		int in, out;

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setns(mw->userns, CLONE_NEWUSER) < 0 ||
		    setns(mw->ipcns, CLONE_NEWIPC) < 0)
			_exit(1);
		/*
		 * Keep nothing of the owner's: a copy of a client's socket or of a
		 * session's pty held here would keep its peer from seeing it close.
		 * Lift the two pipe ends above anything they could overwrite, place
		 * them at 0 and 1, close the rest.
		 */
		in = fcntl(req[0], F_DUPFD, 10);
		out = fcntl(resp[1], F_DUPFD, 10);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
		    syscall(SYS_close_range, 2, ~0U, 0) < 0)
			_exit(1);
		while (read(0, &c, 1) == 1) {
			uint64_t pages = 0;

			if (shmctl(0, SHM_INFO, (struct shmid_ds *)&si) >= 0)
				pages = (uint64_t)si.shm_rss;
			if (write(1, &pages, sizeof(pages)) != (ssize_t)sizeof(pages))
				_exit(1);
		}
		_exit(0);
	}
	close(req[0]);
	close(resp[1]);
	if (pid < 0) {
		close(req[1]);
		close(resp[0]);
		return;
	}
	mw->shm_pid = pid;
	mw->shm_req = req[1];
	mw->shm_resp = resp[0];
}

/* Bytes of SysV shared memory resident in the sandbox's IPC namespace (0 without the helper). */
static uint64_t memwatch_shm(struct memwatch *mw)
{
	uint64_t pages = 0;
	long page = sysconf(_SC_PAGESIZE);

	if (mw->shm_pid < 0)
		return 0;
	if (write(mw->shm_req, "?", 1) != 1 ||
	    read_exact(mw->shm_resp, &pages, sizeof(pages)) != 1) {
		/* The helper is gone (it could not join, or was killed): say so once. */
		mw->rep.sysv_lost = true;
		memwatch_shm_helper_stop(mw);
		return 0;
	}
	return pages * (uint64_t)(page > 0 ? page : 4096);
}

/* End the helper: EOF on its request pipe, then reap it (libev may have already). */
static void memwatch_shm_helper_stop(struct memwatch *mw)
{
	if (mw->shm_pid < 0)
		return;
	close(mw->shm_req);
	close(mw->shm_resp);
	kill(mw->shm_pid, SIGKILL);
	while (waitpid(mw->shm_pid, NULL, 0) < 0 && errno == EINTR)
		;
	mw->shm_pid = -1;
}

/* Microseconds on CLOCK_MONOTONIC. */
static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The thread: sample, kill past the limit, sleep until the next sample or the stop. */
static void *memwatch_main(void *arg)
{
	struct memwatch *mw = arg;
	sigset_t all;

	/* The owner's signals (the daemon's loop) are not this thread's to take. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	memwatch_open_tmpfs(mw);
	memwatch_shm_helper_start(mw);
	for (;;) {
		struct pollfd pfd = { .fd = mw->stopfd, .events = POLLIN };
		struct memwatch_usage u;
		uint64_t t0 = mono_us(), total, took;
		int rc;

		memwatch_sample(mw, &u);
		u.sysv = memwatch_shm(mw);
		total = memwatch_usage_total(&u);
		if (total > mw->limit) {
			u.procs = memwatch_recount_pss(mw);
			total = memwatch_usage_total(&u);
		}
		took = mono_us() - t0;
		mw->rep.samples++;
		if (took > mw->rep.slowest_us)
			mw->rep.slowest_us = took;
		if (total > mw->rep.peak)
			mw->rep.peak = total;
		if (total > mw->limit) {
			/* SIGKILL to a pid namespace's init ends every process in it. */
			if (syscall(SYS_pidfd_send_signal, mw->pidfd, SIGKILL, NULL, 0) == 0) {
				mw->rep.killed = true;
				mw->rep.at_kill = u;
			}
			break;
		}
		/* Closer to the limit, look closer: a fast balloon overshoots less. */
		rc = poll(&pfd, 1, total > mw->limit / 2 ? MEMWATCH_FAST_MS : MEMWATCH_SLOW_MS);
		if (rc > 0 || (rc < 0 && errno != EINTR))
			break;
	}
	memwatch_shm_helper_stop(mw);
	return NULL;
}

/* Release what memwatch_start() opened. */
static void memwatch_free(struct memwatch *mw)
{
	for (size_t i = 0; i < mw->ntmpfs; i++)
		close(mw->tmpfs[i]);
	if (mw->pidfd >= 0)
		close(mw->pidfd);
	if (mw->stopfd >= 0)
		close(mw->stopfd);
	if (mw->procfd >= 0)
		close(mw->procfd);
	if (mw->userns >= 0)
		close(mw->userns);
	if (mw->ipcns >= 0)
		close(mw->ipcns);
	free(mw->pids);
	free(mw);
}

int memwatch_start(pid_t init, uint64_t limit, struct memwatch **out, char **err)
{
	struct memwatch *mw = xcalloc(1, sizeof(*mw));
	char path[48];
	ssize_t n;
	int rc;

	*out = NULL;
	mw->init = init;
	mw->limit = limit;
	mw->pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	mw->stopfd = eventfd(0, EFD_CLOEXEC);
	mw->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)init);
	mw->userns = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)init);
	mw->ipcns = open(path, O_RDONLY | O_CLOEXEC);
	mw->shm_pid = -1;
	if (mw->pidfd < 0 || mw->stopfd < 0 || mw->procfd < 0) {
		set_err_errno(err, _("preparing the memory watchdog"));
		memwatch_free(mw);
		return -1;
	}
	snprintf(path, sizeof(path), "%d/ns/pid", (int)init);
	n = readlinkat(mw->procfd, path, mw->nsid, sizeof(mw->nsid) - 1);
	if (n <= 0) {
		set_err_errno(err, _("reading the sandbox's pid namespace"));
		memwatch_free(mw);
		return -1;
	}
	mw->nsid[n] = '\0';
	rc = pthread_create(&mw->fd_thread, NULL, memwatch_fd_main, mw);
	if (rc == 0) {
		mw->fd_thread_started = true;
		rc = pthread_create(&mw->thread, NULL, memwatch_main, mw);
	}
	if (rc != 0) {
		if (mw->fd_thread_started) {
			uint64_t one = 1;

			if (write(mw->stopfd, &one, sizeof(one)) < 0) {
				/* the join below waits for its next pass either way */
			}
			pthread_join(mw->fd_thread, NULL);
		}
		errno = rc;
		set_err_errno(err, _("starting the memory watchdog"));
		memwatch_free(mw);
		return -1;
	}
	*out = mw;
	return 0;
}

void memwatch_stop(struct memwatch *mw, struct memwatch_report *rep)
{
	uint64_t one = 1;

	if (!mw)
		return;
	if (write(mw->stopfd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		/* an eventfd counter cannot overflow from one write; join regardless */
	}
	pthread_join(mw->thread, NULL);
	pthread_join(mw->fd_thread, NULL);
	mw->rep.fdscan_slowest_us = atomic_load(&mw->fdscan_slowest_us);
	if (rep)
		*rep = mw->rep;
	memwatch_free(mw);
}
