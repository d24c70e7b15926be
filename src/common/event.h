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
};

/* The string fields of struct event, for a deep copy (daemon/bus.c). */
#define EVENT_STRS 14

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

/* Convenience: an "audit" event. */
void event_audit(const struct event_sink *sink, const char *layer, const char *verdict,
		 const char *subject, const char *detail);

#endif
