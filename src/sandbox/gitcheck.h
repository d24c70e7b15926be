/*
 * sandbox/gitcheck.h — the host-side half of the git protection: what a
 * read-only bind cannot cover, watched during the run and checked after.
 *
 * A file that does not exist cannot be bound read-only, so a payload can
 * create `commondir` in a protected gitdir and point git at a directory of
 * its own, whose config and hooks would then run on the host — during the
 * run, the moment an IDE or a shell prompt runs `git status`. So the gitdirs
 * are watched from outside (sandbox/gitwatch.c): such a name stops the run at once
 * and is moved out of git's way. After the sandbox has ended, the gitdirs
 * and the writable roots are checked again in a thread, off the daemon's
 * loop: a `.git` planted where a gitlink can make the host's git enter it
 * is quarantined, one the run created elsewhere reported. Every finding is
 * an audit event with the verdict "alert", printed in red at the end.
 */
#ifndef BOXY_SANDBOX_GITCHECK_H
#define BOXY_SANDBOX_GITCHECK_H

#include "common/event.h"
#include "init/plan.h"

struct gitcheck;

/*
 * Before the run: remember the gitdirs below the plan's writable mounts, set
 * the watch's marks (exits_after: see gitwatch_create).
 */
struct gitcheck *gitcheck_begin(const struct plan *plan, bool exits_after);
/*
 * Start the watch's thread. Its inotify marks are set by gitcheck_begin and
 * queue every event from then on, so the thread may start late: the caller
 * starts it once the sandbox's child runs (a thread costs 0.1 ms to start,
 * which the child no longer waits for).
 */
void gitcheck_watch(struct gitcheck *gc);
/* The sandbox exists: a dangerous name from now on kills it through pidfd. */
void gitcheck_arm(struct gitcheck *gc, int pidfd);
/*
 * After the run, off the caller's thread: start the checks and return a
 * descriptor that becomes readable when they are done (then call
 * gitcheck_end, which no longer blocks); -1 when there is nothing to wait
 * for, the tree is small enough to check inline (every root walked in 2 ms)
 * or no thread could be started (gitcheck_end then checks inline).
 */
int gitcheck_end_start(struct gitcheck *gc);
/* After the run: finish the checks (waiting for them if started) and emit the findings. */
void gitcheck_end(struct gitcheck *gc, const struct event_sink *events);
void gitcheck_free(struct gitcheck *gc);

#endif
