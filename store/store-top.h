/*
 * store-top.h — the store as `boxy top` reads it: a read-only connection
 * of its own and the few queries the dashboard asks, every one bounded
 * (keyset or LIMIT) and answered from an index, so a store of a hundred
 * thousand sessions and millions of rows draws as fast as an empty one.
 *
 * Rows come back through callbacks as borrowed strings (copy what you keep);
 * filters are bound as parameters, never spliced into SQL.
 */
#ifndef BOXY_STORE_TOP_H
#define BOXY_STORE_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store_top;

struct store_top_session {
	const char *id, *state, *profile, *net, *argv_json, *cwd;
	const char *frozen_reason;      /* the alert that froze it, "" when not frozen */
	int64_t started_ms, ended_ms;
	int exit_code;
	uint64_t conns, denied, up, down;
};

struct store_top_dest {
	const char *name;
	uint64_t sessions, conns, denied, up, down;
	int64_t first_ms, last_ms;
};

struct store_top_denial {
	const char *session_id, *argv_json, *layer, *subject, *reason;
	int64_t t_ms;
	uint64_t count;
};

/*
 * Has anything been written to the store since the last call (SQLite's
 * data_version: a writer's commit on another connection changes it)? The
 * first call says yes. An idle dashboard asks this and nothing else.
 */
bool store_top_changed(struct store_top *st);

/* Open path read-only; a store of a newer schema than this build is refused. */
int store_top_open(const char *path, struct store_top **out, char **err);
void store_top_close(struct store_top *st);

/*
 * Sessions, running first, then newest first, at most limit; filter (may be
 * NULL or "") matches the command line, the work directory, the state or
 * the profile; denied_only keeps those refused something.
 */
int store_top_sessions(struct store_top *st, const char *filter, bool denied_only, size_t limit,
		       void (*row)(void *ctx, const struct store_top_session *r), void *ctx,
		       char **err);

/* Sessions running, and refusals recorded since since_ms. */
int store_top_totals(struct store_top *st, int64_t since_ms, uint64_t *running,
		     uint64_t *denied, char **err);

/* Destinations of the sessions started since since_ms, busiest first, at most limit. */
int store_top_dests(struct store_top *st, int64_t since_ms, size_t limit,
		    void (*row)(void *ctx, const struct store_top_dest *r), void *ctx, char **err);

/* The newest refusals (of the newest sessions), at most limit. */
int store_top_denials(struct store_top *st, size_t limit,
		      void (*row)(void *ctx, const struct store_top_denial *r), void *ctx,
		      char **err);

/*
 * One session's record as lines of text (the header fields, the destinations,
 * the refusals, the decisions); deny: the line is a refusal. Strings are the
 * store's (payload-chosen ones included): the caller sanitizes. -1 if absent.
 */
int store_top_record(struct store_top *st, const char *id,
		     void (*line)(void *ctx, const char *text, bool deny), void *ctx, char **err);

#endif
