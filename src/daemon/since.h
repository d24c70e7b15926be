/*
 * daemon/since.h — at the end of a run, what it did that its baseline (the
 * last completed run of the same command in the same directory) did not:
 * each new destination, port, refusal and finding becomes an event of
 * layer "since", verdict "new", which `boxy run` prints at the end, the
 * audit log and the store keep, and `boxy show` and `boxy top` show.
 */
#ifndef BOXY_DAEMON_SINCE_H
#define BOXY_DAEMON_SINCE_H

struct session;

/* At most this many "new" events per run; past it one more says how many were left out. */
#define SINCE_EVENTS_MAX 20

/* Compare the session with its baseline and publish what is new (after every row is stored). */
void since_report(struct session *s);

#endif
