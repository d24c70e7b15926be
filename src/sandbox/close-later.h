/*
 * sandbox/close-later.h — a last close that waits for the kernel, done off the
 * caller's path.
 *
 * Some last closes wait for a grace period of the kernel's: an inotify
 * instance's (SRCU, fsnotify_destroy_group: 5-18 ms measured on a busy
 * machine), a mount namespace's (its mounts are freed after an RCU grace
 * period, namespace_unlock). Where that close would sit between a
 * payload's exit and `boxy run` returning, it is done here instead.
 */
#ifndef BOXY_SANDBOX_CLOSE_LATER_H
#define BOXY_SANDBOX_CLOSE_LATER_H

#include <stdbool.h>

/*
 * Close fd without waiting: in the process's closer thread (started at the
 * first call, it closes what it is given in turn), or with by_child (the
 * process exits soon, and its exit would wait for its threads: boxy run
 * --no-daemon) in a child process that closes it once the caller's copy is
 * gone. Closed here when neither can be made.
 */
void close_later(int fd, bool by_child);

#endif
