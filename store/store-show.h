/*
 * store-show.h — the store as `boxy show` reads one session: its policy in
 * a few words, how each limit was enforced, the destinations busiest
 * first, the refusals grouped, the git findings, and the full record
 * (every row of every table, time-ordered) for --events and --json.
 *
 * Rows come back through a callback as strings (NULL for SQL NULL), the
 * columns in the order each query's comment gives; the session id is bound
 * as a parameter, never spliced into SQL.
 */
#ifndef BOXY_STORE_SHOW_H
#define BOXY_STORE_SHOW_H

#include <stdint.h>

#include "store/store.h"

enum store_show_query {
	/* net mode, hosts ("name:port,port name"), cidrs (space-separated), seccomp,
	 * overflow, overflow_denied, the number of --allow-http rules — one row */
	STORE_SHOW_POLICY,
	/* subject ("memory", "timeout"), verdict, reason: the cgroup and limits decisions */
	STORE_SHOW_LIMITS,
	/* destinations, conns, denied, sent, received: totals — one row */
	STORE_SHOW_DEST_TOTALS,
	/* destination, conns, denied, addrs, sent, received: busiest first, at most limit */
	STORE_SHOW_DESTS,
	/* subject, layer, reason, count, first_ms, then the first one's who (the nine
	 * STORE_WHO_COLUMNS: pid, comm, argv0, cmdline, package, package_version,
	 * package_script, package_via, package_claimed), makers (how many packages or
	 * commands): refusals grouped, most first (git and limits apart) */
	STORE_SHOW_REFUSALS,
	/* verdict, subject, reason, count, layer: the git layer's findings and every alert */
	STORE_SHOW_GIT,
	/* t_ms, t_rel_ms, what, verdict, layer, subject, reason, count, detail, then its who
	 * (the nine columns as above): every row */
	STORE_SHOW_EVENTS,
	/* subject, reason: what the run did that its baseline did not (layer "since") */
	STORE_SHOW_SINCE,
	/* requests, refused: the session's HTTP requests — one row */
	STORE_SHOW_REQ_TOTALS,
	/* package, version, script, claimed, via, comm (no package), conns, denied, lookups,
	 * destinations, dest_list: the session by package (the packages view), packages
	 * first, the most refused first */
	STORE_SHOW_PACKAGES,
	/* verdict, subject, reason, count: what its alerts did (layer "react": freeze, resume…) */
	STORE_SHOW_REACT,
	STORE_SHOW__COUNT,
};

/* Run query q for the session id (a full id); each row → row. limit: STORE_SHOW_DESTS only. */
int store_show_query(struct store *st, enum store_show_query q, const char *id, int64_t limit,
		     void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
		     char **err);

/*
 * Everything about the session whose id starts with prefix, as JSON:
 * store_show_json's object plus "overflow", "overflow_denied", every
 * "connections", "resolutions" and "requests" row, the grouped "refusals"
 * and the "packages".
 */
int store_show_record_json(struct store *st, const char *prefix, char **json, char **err);

#endif
