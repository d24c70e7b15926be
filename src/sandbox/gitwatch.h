/*
 * sandbox/gitwatch.h — the daemon-side watch on the gitdirs a run can write, and
 * the two helpers it shares with the after-run check (sandbox/gitcheck.c):
 * a list of findings filled by threads and emitted on the loop, and the
 * quarantine rename.
 *
 * A file that does not exist cannot be bound read-only, so the mount stage
 * cannot stop a payload from creating `.git/commondir` (and a few other
 * names git reads to find config and hooks); git commit needs the top of
 * the gitdir writable. The watcher sees such a name appear (inotify, from
 * outside the sandbox), kills the sandbox at once, moves the file out of
 * git's way and records a finding. doc/filesystem.md ("Git") measures the
 * window this leaves.
 */
#ifndef BOXY_GITWATCH_H
#define BOXY_GITWATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

/* One thing the user must hear about, collected off the loop. */
struct git_finding {
	char *verdict;          /* "alert": act on it; "deny": neutralised, said loudly too */
	char *subject;          /* the path */
	char *detail;
};

struct git_findings {
	pthread_mutex_t mu;
	struct git_finding *v;
	size_t n;
};

void git_findings_init(struct git_findings *f);
/* Append one finding (thread-safe); detail is a printf format. */
void git_findings_add(struct git_findings *f, const char *verdict, const char *subject,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void git_findings_free(struct git_findings *f);

/*
 * Rename dfd/name to name.boxy-quarantine-TIME-RANDOM beside it, never
 * replacing anything. A directory the payload made unwritable (chmod 555)
 * is given u+wx back first when it is ours. Returns 0 with *out the new
 * name (malloc'd), or -1 with errno.
 */
int git_quarantine(int dfd, const char *name, char **out);

/* pthread_create with every signal blocked in the new thread; 0 or an error number. */
int git_thread_start(pthread_t *thr, void *(*fn)(void *), void *arg);

struct gitwatch;

/*
 * A watcher that records into f; nothing is watched until gitwatch_add_*.
 * exits_after: the process exits soon after the run (boxy run --no-daemon),
 * so the inotify instance's last close, which waits for the kernel, is
 * left to a child process: a thread's wait would hold up the exit.
 */
struct gitwatch *gitwatch_create(struct git_findings *f, bool exits_after);
/*
 * Watch a gitdir (fd: O_PATH to it, path for messages). main_fd is the
 * main gitdir a linked worktree's commondir must lead back to (-1 for a
 * main or submodule gitdir). wtconfig: config.worktree is git's to read
 * and was made read-only by the mount stage, so it is no alarm.
 */
int gitwatch_add_gitdir(struct gitwatch *w, int fd, const char *path, int main_fd,
			bool wtconfig);
/*
 * Watch a writable root for a ".git" that appears where there was none:
 * a file or symlink always stops the run; a directory does when in_repo
 * (the root lies inside a larger repository, whose users run git here).
 */
int gitwatch_add_root(struct gitwatch *w, const char *path, bool in_repo);
/* Start the thread. */
int gitwatch_start(struct gitwatch *w);
/* From now on a dangerous name kills through pidfd (dup'd; one seen already kills now). */
void gitwatch_arm(struct gitwatch *w, int pidfd);
/* Stop and free; true when it stopped the run. */
bool gitwatch_stop(struct gitwatch *w);

#endif
