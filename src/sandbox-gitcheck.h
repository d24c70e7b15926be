/*
 * sandbox-gitcheck.h — the host-side half of the git protection: what a
 * read-only bind cannot cover, checked after the run.
 *
 * A file that does not exist cannot be bound read-only, so a payload can
 * create `commondir` in a protected gitdir and point git at a directory of
 * its own, whose config and hooks would then run on the host. After the
 * sandbox has ended (every process in it is dead, so nothing races this), a
 * `commondir` that was not there before is renamed out of git's way and the
 * decision recorded. A repository that appears inside the work tree of one
 * that was there before (where a gitlink can make the host's git enter it)
 * is quarantined the same way; one the run created elsewhere (a clone) is
 * reported, since its hooks and config were the payload's to write.
 */
#ifndef BOXY_SANDBOX_GITCHECK_H
#define BOXY_SANDBOX_GITCHECK_H

#include "event.h"
#include "plan.h"

struct gitcheck;

/* Before the run: remember the gitdirs below the plan's writable mounts. */
struct gitcheck *gitcheck_begin(const struct plan *plan);
/* After the run: neutralise planted commondir files, report new repositories. */
void gitcheck_end(struct gitcheck *gc, const struct event_sink *events);
void gitcheck_free(struct gitcheck *gc);

#endif
