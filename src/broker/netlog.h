/*
 * broker/netlog.h — the --net-log file: every connection, resolved name and SNI
 * of a run, in the specification's interned format.
 *
 *   {"version": 3,
 *    "conn_fields": ["t_ms","proto","verdict","addr","port","host","sni","reason","up","down",
 *                    "pid","comm","argv0","package","version","script","via","claimed"],
 *    "query_fields": ["t_ms","name","type","verdict",
 *                     "pid","comm","argv0","package","version","script","via","claimed"],
 *    "strings": ["registry.npmjs.org", "104.16.1.34", "node", "evil-pkg", ...],
 *    "conns": [[289, "tcp", "allow", 1, 443, 0, 0, -1, 2941, 24212,
 *               812, 2, 2, 3, 4, 5, -1, false], ...],
 *    "queries": [[280, 0, "A", "allow", 812, 2, 2, 3, 4, 5, -1, false], ...],
 *    "resolutions": {"registry.npmjs.org": ["104.16.0.34", ...]},
 *    "request_fields": ["t_ms","seq","conn","method","host","port","path","query",
 *                       "verdict","reason","rule"],
 *    "requests": [[301, 1, 0, 2, 0, 80, 5, -1, "allow", -1, 0], ...],
 *    "requests_dropped": 0,
 *    "summary": [{"destination": "registry.npmjs.org", "conns": 2, "denied": 0,
 *                 "addrs": 1, "sent": 5120, "received": 30924}, ...]}
 *
 * addr, host, sni, reason, name and the process's strings (comm, argv0,
 * package, version, script, via) are indexes into "strings" (-1: none), so a
 * build that makes thousands of connections to a handful of hosts, from a
 * handful of processes, repeats small integers, not names. The process
 * fields (doc/attribution.md) say who made the connection or asked the
 * name: pid as the sandbox sees it (0 with every string -1: looked for and
 * not found, "unknown"; null: not looked for, --attribution off); package,
 * version and script when a package manager ran it; claimed is true when
 * the package is only the process's own word.
 *
 * Each request of a gated connection (doc/http-rules.md) is a row of
 * "requests": its number in the session, its connection (an index into
 * "conns", whose process fields say who made it), method, host, path (at
 * most NETLOG_PATH_MAX bytes), query (at most 256) and reason as string
 * indexes, port (0: none written), the verdict, and the index of the
 * --allow-http rule that matched (-1: none). At most NETLOG_REQUESTS_MAX
 * rows are kept; "requests_dropped" counts the rest.
 *
 * The summary has one row per destination (the host name, or the address
 * when no name was known), most connections first; it is also what the
 * client prints at the end of an attached run.
 *
 * Version 3 is both of two version 2s: the process fields and "queries", and
 * the requests (readers of an earlier version ignore what they do not know).
 *
 * The log is accumulated in memory and encoded once, at the end of the run.
 */
#ifndef BOXY_NETLOG_H
#define BOXY_NETLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/event.h"
#include "policy/addr.h"
#include "policy/decide.h"    /* enum net_proto */

#define NETLOG_VERSION 3
#define NETLOG_REQUESTS_MAX 20000
#define NETLOG_PATH_MAX 1024

struct netlog;

struct netlog_conn {
	uint64_t t_ms;          /* milliseconds since the run started */
	enum net_proto proto;
	bool allowed;
	struct net_addr addr;
	uint16_t port;
	const char *host;       /* the name policy matched, NULL if none (copied) */
	const char *sni;        /* the SNI or Host seen on the wire, NULL if none (copied) */
	const char *reason;     /* the denial's words, NULL when allowed (copied) */
	uint64_t up, down;      /* bytes sandbox→internet, internet→sandbox */
	const struct event_who *who;    /* who made it, NULL: not looked for (copied) */
};

/* One HTTP request of a gated connection. */
struct netlog_request {
	uint64_t t_ms;          /* milliseconds since the run started */
	uint32_t seq;           /* its number in the session */
	size_t conn;            /* its connection's row (netlog_add_conn's index) */
	bool allowed;
	const char *method, *host, *path, *query, *reason;     /* copied; NULL or "": none */
	uint16_t port;
	int32_t rule;           /* -1: none */
};

/* One row of the destinations summary. */
struct netlog_dest {
	const char *destination;        /* points into the netlog */
	uint64_t conns, denied, addrs, sent, received;
};

struct netlog *netlog_create(void);
void netlog_free(struct netlog *nl);

/* Record a connection; returns its index for netlog_set_bytes. */
size_t netlog_add_conn(struct netlog *nl, const struct netlog_conn *c);
/* Update a connection's byte counters (they only grow while it is open). */
void netlog_set_bytes(struct netlog *nl, size_t conn, uint64_t up, uint64_t down);
/* Name a connection after the fact (public mode: the SNI or Host came after the
 * allow); NULL leaves a field as it is. */
void netlog_set_names(struct netlog *nl, size_t conn, const char *host, const char *sni);
/* Say who made a connection, once that is known (NULL or not found: unknown). */
void netlog_set_who(struct netlog *nl, size_t conn, const struct event_who *who);
/* Record one DNS query: its name, type ("A"), whether it was answered, who asked. */
void netlog_add_query(struct netlog *nl, uint64_t t_ms, const char *name, const char *type,
		      bool allowed, const struct event_who *who);
/* Record that name resolved to these addresses (merged with earlier answers). */
void netlog_add_resolution(struct netlog *nl, const char *name,
			   const struct net_addr *addrs, size_t n);

/* Record a request (past NETLOG_REQUESTS_MAX only counted). */
void netlog_add_request(struct netlog *nl, const struct netlog_request *q);

/* The summary, most connections first, ties by name; *out is malloc'd (free it;
 * the names inside belong to the netlog). Returns the number of rows. */
size_t netlog_summary(const struct netlog *nl, struct netlog_dest **out);

/* The whole log as JSON, NUL-terminated, malloc'd. */
char *netlog_to_json(const struct netlog *nl);

#endif
