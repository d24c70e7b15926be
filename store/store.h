/*
 * store.h — the per-user session store: one SQLite database
 * ($XDG_STATE_HOME/boxy/sessions.db) holding every session, connection,
 * DNS resolution and policy decision. The schema is a public interface
 * (doc/store.md): users query it with sqlite3, boxy show and boxy top read
 * it. Only store/ includes sqlite3.h.
 *
 * Writes are meant to be batched: the daemon calls store_begin(), adds the
 * events that arrived in one loop iteration, and store_commit(). A store
 * that cannot be written returns -1 with a reason; callers log it and go on
 * (a run never fails because its record could not be kept).
 */
#ifndef BOXY_STORE_H
#define BOXY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION 10

/*
 * The state a reader shows, as SQL over a sessions row (alias-free): 'frozen'
 * for a running session whose frozen_ms is set (doc/react.md), else state.
 */
#define STORE_STATE_SHOWN \
	"CASE WHEN state = 'running' AND frozen_ms IS NOT NULL THEN 'frozen' ELSE state END"

/*
 * Bounds (doc/store.md, "Aggregation and the per-session cap"). The first
 * STORE_AGG_FIRST rows of one key (same session, table, destination or
 * subject, verdict, layer and reason) are stored one by one; every later one
 * is counted into a single row of that key (count, t_ms of the first,
 * last_ms of the last). A session stores at most STORE_SESSION_ROWS rows of
 * the network (connections and resolutions) and as many decisions, apart, so
 * a flood of connects cannot crowd out a later finding; past that, a row of
 * a new key is not stored but counted in the session's overflow (and
 * overflow_denied when it was a refusal) — except the first refusal of a
 * kind not kept yet (its layer and reason words), up to STORE_KIND_ROWS, so
 * decoys a payload had refused first cannot keep its real attempt out of the
 * record. A counted row that exists goes on counting past the cap, so counts
 * stay exact.
 */
#define STORE_AGG_FIRST     20
#define STORE_SESSION_ROWS  5000
/* Past the cap, the first refusal of each kind is still kept (store.c kind_first). */
#define STORE_KIND_ROWS     128

struct event;
struct event_who;

struct store;

/* A session row. Strings are borrowed by store_session_begin and owned by
 * the caller; rows returned by queries are owned by the store_sessions they came in. */
struct store_session {
	char *id;               /* 16 lower-case hex digits */
	char *argv_json;        /* JSON array of strings */
	char *profile;          /* may be NULL */
	char *policy_json;      /* the effective policy (runspec_to_json) */
	char *cwd;
	int64_t started_ms;     /* CLOCK_REALTIME ms */
	int64_t ended_ms;       /* 0 while running */
	char *state;            /* "running", "frozen" (a running one, frozen), "exited", "failed",
				 * "lost" */
	int exit_code;          /* valid when ended */
	int64_t memory, pids, cpus_milli, timeout_ms;   /* 0: unset */
	char *build;            /* build id of the daemon that ran it */
	char *lockfile;         /* digest of the work directory's lockfiles at the start, or NULL */
	char *baseline;         /* the session it is compared with (read only: the store picks it) */
	int64_t frozen_ms;      /* read only: when it was frozen (Unix ms), 0 when it is not */
	char *frozen_reason;    /* read only: the alert that froze it, NULL when not frozen */
	char *gate;             /* read only: the words its CI gate failed on (doc/ci.md), or NULL */
};

struct store_conn {
	const char *session_id;
	int64_t t_ms;           /* CLOCK_REALTIME ms */
	int64_t t_rel_ms;       /* ms since the session started */
	const char *proto;      /* "tcp" | "udp" */
	const char *verdict;    /* "allow" | "deny" */
	const char *addr;       /* textual address */
	int port;
	const char *host;       /* bound name, may be NULL */
	const char *sni;        /* may be NULL */
	const char *reason;     /* denial reason, NULL when allowed */
	const char *layer;      /* the layer that decided: "net.ip", "net.dns", "net.sni", "upstream" */
	int64_t up, down;
	uint64_t flow;          /* the broker's flow number (0: none): later byte counts find the row */
	const struct event_who *who;    /* who made it (doc/attribution.md); NULL: not looked for */
};

struct store_resolution {
	const char *session_id;
	int64_t t_ms;           /* CLOCK_REALTIME ms */
	int64_t t_rel_ms;       /* ms since the session started */
	const char *name;
	const char *addr;       /* one answered address; NULL: none (refused name, NXDOMAIN, no data) */
	int64_t ttl;            /* seconds, as the upstream resolver answered */
	const char *verdict;    /* "allow" | "deny" */
	const char *reason;
	const char *layer;      /* the layer that decided: "net.dns" (the name), "net.ip" (the address) */
	const struct event_who *who;    /* who asked; NULL: not looked for */
};

struct store_decision {
	const char *session_id;
	int64_t t_ms;           /* CLOCK_REALTIME ms */
	int64_t t_rel_ms;       /* ms since the session started */
	const char *layer;
	const char *verdict;
	const char *subject;
	const char *reason;
	const struct event_who *who;    /* who made it (a finding's process); NULL: not looked for */
};

/*
 * Open (creating it and its directory, mode 0700/0600) and migrate the
 * database at path. A database with a newer schema than this build knows is
 * refused, never downgraded.
 */
int store_open(const char *path, struct store **out, char **err);
void store_close(struct store *st);
/* Default path: $XDG_STATE_HOME/boxy/sessions.db or ~/.local/state/boxy/sessions.db. malloc'd. */
char *store_default_path(void);

int store_begin(struct store *st, char **err);
int store_commit(struct store *st, char **err);
void store_rollback(struct store *st);

int store_session_begin(struct store *st, const struct store_session *s, char **err);
int store_session_end(struct store *st, const char *id, int64_t ended_ms, const char *state,
		      int exit_code, char **err);
/*
 * A session frozen at frozen_ms (Unix ms) by reason (the alert, in words), or
 * thawed (frozen_ms 0: both cleared). Written at once, outside any batch.
 */
int store_session_frozen(struct store *st, const char *id, int64_t frozen_ms, const char *reason,
			 char **err);
/*
 * The gate's verdict on a session: the --fail-on words it failed on
 * (canonical, spec/values.h's fail_on_text). Written once: *changed is 0 when
 * the session is unknown or already judged. (A run whose end its client did
 * not see fails its gate while it may still be running.)
 */
int store_session_gate(struct store *st, const char *id, const char *failed, int *changed,
		       char **err);
/* Mark every session still "running" as "lost" (a daemon died under them). */
int store_mark_lost(struct store *st, int64_t now_ms, int *count, char **err);

/* Rows, aggregated and capped as above (counted rows are written at store_commit). */
int store_add_conn(struct store *st, const struct store_conn *c, char **err);
int store_add_resolution(struct store *st, const struct store_resolution *r, char **err);
int store_add_decision(struct store *st, const struct store_decision *d, char **err);
/* Bytes moved on a flow since its last report (increments), added to its row; closed: forget it. */
int store_add_bytes(struct store *st, const char *session_id, uint64_t flow, int64_t up,
		    int64_t down, bool closed, char **err);
/*
 * One bus event as rows: "audit" → decisions (except mirrors, whose flow
 * event is the row, and those about a name, host set, which are
 * resolutions), "tcp"/"udp" allow/deny → connections, bytes/close → that
 * connection's counters, "dns" → resolutions. Other events: nothing.
 */
int store_add_event(struct store *st, const struct event *ev, char **err);

/* Delete ended sessions (and their rows) that ended before cutoff_ms. */
int store_prune(struct store *st, int64_t cutoff_ms, int *count, char **err);
/* The ids store_prune would delete (malloc'd array of malloc'd strings), nothing deleted. */
int store_prune_preview(struct store *st, int64_t cutoff_ms, char ***ids, size_t *n, char **err);

struct store_sessions {
	struct store_session *v;
	size_t n;
};
/* Sessions whose id starts with prefix (NULL: all), newest first; running_only filters. */
int store_sessions_find(struct store *st, const char *prefix, bool running_only,
			struct store_sessions *out, char **err);
void store_sessions_free(struct store_sessions *ss);

/* One session as a JSON object (argv and policy embedded as JSON). malloc'd. */
char *store_session_json(const struct store_session *s);
/*
 * Everything about the one session whose id starts with prefix, as JSON:
 * the session, its destinations, denials and decisions. An unknown or
 * ambiguous prefix is an error naming it.
 */
int store_show_json(struct store *st, const char *prefix, char **json, char **err);

/* Run arbitrary SQL (tests, docs examples); each result row → cb (may be NULL). */
int store_exec(struct store *st, const char *sql,
	       int (*cb)(void *ctx, int ncol, char **vals, char **names), void *ctx, char **err);

/*
 * Each distinct host directory a recorded session could write (work
 * directory, --rw, mkdir), newest first, passed to cb (borrowed string).
 */
int store_writable_roots(struct store *st, void (*cb)(void *ctx, const char *path), void *ctx,
			 char **err);

#endif
