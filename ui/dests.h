/*
 * ui/dests.h — the specification's "boxy: network destinations (N)" table
 * that `boxy run` prints after the run, from the snapshot the daemon sends
 * before MSG_EXIT, followed by the run's refusals.
 */
#ifndef BOXY_DESTS_H
#define BOXY_DESTS_H

#include <stddef.h>
#include <stdio.h>

#define NET_SUMMARY_ROWS 20     /* destinations the end-of-run table shows; the rest in one line */

/*
 * Print the specification's "boxy: network destinations (N)" table from a
 * MSG_SNAPSHOT payload (the daemon sends one before MSG_EXIT). Prints
 * nothing when the run made no connection. Returns -1 if the payload is
 * malformed.
 */
int net_summary_print(FILE *out, const void *snapshot, size_t len);

#endif
