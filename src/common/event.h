/*
 * common/event.h — the one shape every policy decision and session change takes.
 *
 * The sandbox emits events into a sink: the daemon plugs in the bus
 * (daemon/bus.c: the store, the watchers and --audit-log), `boxy run
 * --no-daemon` the audit-log writer (daemon/audit.c) alone.
 * Strings are borrowed for the duration of the call only.
 */
#ifndef BOXY_EVENT_H
#define BOXY_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Who made an event (sandbox/attrib.h finds it): the process as the sandbox
 * sees it and, when a package manager ran it, the package. Every string is
 * the payload's (bounded, sanitized) and only ever shown: a payload can lie
 * about its package, and claimed says when nothing but its own word backs it.
 */
struct event_who {
	bool found;             /* false: looked for and not found ("unknown"): nothing below */
	uint32_t pid;           /* in the sandbox's pid namespace */
	const char *comm;       /* the kernel's command name */
	const char *argv0;
	const char *cmdline;    /* argv joined by spaces, cut */
	const char *package;    /* NULL or "": no package manager ran it */
	const char *version;    /* may be NULL */
	const char *script;     /* "postinstall", "build" (pip); may be NULL */
	const char *via;        /* an outer package's script that ran this one's manager; may be NULL */
	bool claimed;           /* the package is only the process's own claim */
};

struct event {
	uint64_t t_ms;          /* CLOCK_REALTIME, milliseconds */
	const char *session;    /* session id, or NULL before there is one */
	const char *kind;       /* "audit", "session", "dns", "tcp", "udp" */
	const char *verdict;    /* "allow", "deny", "degraded", "info", "start", "exit" */
	const char *layer;      /* "landlock", "seccomp", "cgroup", "mount", "net.ip", … */
	const char *subject;    /* what was decided about: a path, a syscall, a limit */
	const char *detail;     /* the reason, in words */
	uint64_t up, down;      /* byte counters where they apply */

	/* Network events (kind "tcp", "udp", "dns"); NULL/0 elsewhere. */
	const char *addr;       /* destination address, textual */
	uint16_t port;
	const char *host;       /* the name the address is bound to; audit: the name decided about */
	const char *sni;        /* TLS SNI or HTTP Host the client sent */
	uint32_t ttl;           /* dns: the answer's TTL */
	uint64_t t_rel_ms;      /* ms since the session started (filled by the daemon) */
	uint64_t flow;          /* tcp/udp: the broker's number for the flow (0: none) */
	bool mirror;            /* audit: a copy, for --audit-log, of a flow event the store keeps */
	/* audit "new" (daemon/since.c): what is new — "destination" (a name, an address or
	 * a port), "refusal", "finding", or "more" (the count of those left out); NULL elsewhere. */
	const char *what;

	/* HTTP requests (kind "http", layer net.http: doc/http-rules.md); NULL/0 elsewhere.
	 * host and port are the request's (Host), addr the flow's, flow its connection. */
	const char *method;
	const char *path;       /* the target's path, up to the '?' */
	const char *query;      /* the query string, at most 256 bytes; NULL: none */
	uint32_t seq;           /* the request's number within the session (1, 2, ...) */
	int32_t rule;           /* the index of the --allow-http rule that matched; -1: none */
	const char *rule_text;  /* ... and its text */

	const char *told;       /* detail worded for the client that started the run, in its
	                         * language (common/lang.h), or NULL; sent to it, never recorded */

	bool reacted;           /* an alert acted on when it was raised (broker_opts.alert_now), its
				 * event sent once its who was found: daemon/react.h acts once */
	const struct event_who *who;    /* who made it; NULL: not attributed (not looked for) */
};

/* The string fields of struct event (told included), and of its who, for a deep copy. */
#define EVENT_STRS 15
#define EVENT_WHO_STRS 7

struct event_sink {
	void (*emit)(void *ctx, const struct event *ev);
	void *ctx;
};

/* Emit through sink if it is set (sink may be NULL). t_ms is filled when 0. */
void event_emit(const struct event_sink *sink, struct event *ev);

/* An "audit" event's fields, for a caller that sets more of them before event_emit. */
struct event event_audit_make(const char *layer, const char *verdict, const char *subject,
			      const char *detail);
/*
 * The kind of a refusal's reason: its length up to the first digit, so that
 * reasons naming an address ("answered with 10.0.0.7, in the private range:
 * …") are one kind however many addresses a payload makes them name (the
 * refusal table and the store keep the first of each kind past their caps).
 */
size_t event_reason_kind_len(const char *reason);

/*
 * A person's words for who (malloc'd, sanitized, at most about 200 bytes):
 * "postinstall of evil-pkg@1.2.3 (node, pid 812)", "node (pid 90) claims
 * postinstall of innocent@1.0.0", "python3 fetch.py (pid 77)", "unknown".
 * NULL for NULL.
 */
char *event_who_words(const struct event_who *who);
#define EVENT_WHO_CMD_MAX 60     /* a command line in event_who_words, in bytes */
/* The package part alone: "postinstall of evil-pkg@1.2.3", "claims …"; NULL without one. */
char *event_who_package_words(const struct event_who *who);

/*
 * A store row's who (store's STORE_WHO_COLUMNS: pid, comm, argv0, cmdline,
 * package, package_version, package_script, package_via, package_claimed, as
 * strings, NULL for SQL NULL) into w, whose strings point into v. false when
 * the row was not looked for (pid NULL).
 */
bool event_who_from_row(struct event_who *w, const char *const *v);

/*
 * An event that outlives the call that emitted it (the bus's queues, the
 * broker's events held for their attribution): a copy owning its strings
 * and its who's. event_copy_init fixes c->ev to point into c: do not move c.
 */
#define EVENT_COPY_STRS (EVENT_STRS + EVENT_WHO_STRS)
struct event_copy {
	struct event ev;
	struct event_who who;
	char *strs[EVENT_COPY_STRS];
};
void event_copy_init(struct event_copy *c, const struct event *src);
void event_copy_free(struct event_copy *c);

/* Convenience: an "audit" event. */
void event_audit(const struct event_sink *sink, const char *layer, const char *verdict,
		 const char *subject, const char *detail);

#endif
