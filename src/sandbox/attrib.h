/*
 * sandbox/attrib.h — who in a sandbox did it (doc/attribution.md).
 *
 * Every connection, DNS query, refusal and finding names the process that
 * made it — its pid as the sandbox sees it, its command name (comm), argv[0]
 * and command line — and, when a package manager ran it, the package: the
 * npm_package_name, npm_package_version and npm_lifecycle_event that npm,
 * yarn and pnpm put in a lifecycle script's environment (the nearest
 * ancestor's when the process itself lacks them: npm runs `sh -c "node
 * evil.js"`), or the package whose build directory pip runs a build in.
 *
 * How, from the sandbox's own view, read on the daemon's side of /proc: the
 * socket a flow came from is found in the sandbox's network namespace's
 * tables (/proc/INIT/net/tcp, tcp6, udp, udp6: the flow's addresses and
 * ports → the socket's inode), its owner among the sandbox's processes (the
 * descendants of boxy-init, whose host pid the daemon knows; /proc/PID/fd
 * links "socket:[inode]"), its package from its own and its ancestors'
 * environment and working directory. The daemon is the same user and owns
 * the sandbox's user namespace, so the kernel lets it read all of that
 * (`boxy doctor` says when it cannot: attrib_check below).
 *
 * Everything read here is the payload's to choose. Environment, argv, comm
 * and directory names are bounded, read once per process (pid and start
 * time) and sanitized (valid UTF-8, no control character: common/util.h's
 * rules), and a package name is never trusted for anything but display: a
 * payload can lie about its package. A package is *claimed* (the flag below,
 * and "claims" on every screen) unless the variables were put there by a
 * package manager that the session's own command started, on a chain of
 * parents that leads to it: a process that sets npm_package_name itself, or
 * leaves its parents (a daemon reparented to boxy-init), only claims.
 *
 * Two ways in, both pure outputs (struct attrib_proc, fixed buffers):
 * - the worker: attrib_create() starts one thread for one sandbox; the
 *   daemon's loop asks (attrib_ask, which never blocks) and takes answers
 *   when attrib_fd() is readable (attrib_take). The verdict on a flow never
 *   waits for it. Each process is read once (pid + start time); the
 *   inode → process map is refreshed on a miss; every look-up is bounded
 *   (processes, descriptors, time) and the worker's CPU has a budget, so a
 *   payload with ten thousand processes or sockets costs a bounded share of
 *   a core; past the budget the questions wait for it (newest first), they
 *   are not answered "unknown" wholesale.
 * - attrib_who_pid() / attrib_who_socket(): the same look-up in the caller's
 *   thread, with no cache: it reads /proc, so keep it off the daemon's loop.
 *
 * The parsing (proc files → fields) and the package rules are pure, in
 * sandbox/attrib-proc.h, unit-tested without a sandbox.
 */
#ifndef BOXY_SANDBOX_ATTRIB_H
#define BOXY_SANDBOX_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "common/netaddr.h"

#define ATTRIB_COMM_MAX     16      /* TASK_COMM_LEN: 15 bytes and the NUL */
#define ATTRIB_ARGV0_MAX    128
#define ATTRIB_CMDLINE_MAX  256     /* argv joined by spaces, cut */
#define ATTRIB_PACKAGE_MAX  215     /* npm caps a package name at 214 bytes */
#define ATTRIB_VERSION_MAX  65
#define ATTRIB_SCRIPT_MAX   33      /* "postinstall", "build" */
#define ATTRIB_VIA_MAX      320     /* "postinstall of evil-pkg@1.2.3" */

/* The package manager a process is (by its argv), or whose package a process runs for. */
enum attrib_manager {
	ATTRIB_PM_NONE = 0,
	ATTRIB_PM_NPM,
	ATTRIB_PM_YARN,
	ATTRIB_PM_PNPM,
	ATTRIB_PM_PIP,
};

/* Who: a process of the sandbox and its package. Every string is NUL-terminated, sanitized. */
struct attrib_proc {
	bool found;                     /* false: unknown (the socket or process was gone, or
					 * the search was cut short); nothing below is set */
	pid_t pid;                      /* as the sandbox sees it (its pid namespace) */
	pid_t host_pid;                 /* as the daemon sees it: for the daemon's own records */
	uint64_t start;                 /* start time, clock ticks after boot: with host_pid,
					 * one process, whatever pid reuse does */
	char comm[ATTRIB_COMM_MAX];
	char argv0[ATTRIB_ARGV0_MAX];
	char cmdline[ATTRIB_CMDLINE_MAX];
	enum attrib_manager manager;    /* whose package (ATTRIB_PM_NONE: no package) */
	char package[ATTRIB_PACKAGE_MAX];       /* "" without a package */
	char version[ATTRIB_VERSION_MAX];       /* "" when unknown */
	char script[ATTRIB_SCRIPT_MAX];         /* "postinstall", "build"; "" when unknown */
	char via[ATTRIB_VIA_MAX];       /* an outer package whose script ran the package
					 * manager that ran this one ("postinstall of x@1"), or "" */
	bool claimed;                   /* only the process's own word: see above */
};

/* What to look up. */
enum attrib_query_kind {
	ATTRIB_Q_SOCKET,                /* who owns the socket of a flow (or a DNS query) */
	ATTRIB_Q_PID,                   /* who is this process (a host pid: fanotify's, say) */
};

struct attrib_query {
	enum attrib_query_kind kind;
	uint64_t token;                 /* the asker's, given back with the answer */
	/* ATTRIB_Q_SOCKET: the flow as the sandbox sent it. */
	uint8_t proto;                  /* 6 (TCP) or 17 (UDP) */
	struct net_addr local, remote;  /* the sandbox's side, the destination */
	uint16_t lport, rport;
	/* ATTRIB_Q_PID */
	pid_t host_pid;
};

struct attrib_result {
	uint64_t token;
	struct attrib_proc who;
};

struct attrib;

/*
 * The worker for the sandbox whose boxy-init is init_host_pid (its pid in
 * the daemon's namespace: sandbox_pid()). NULL with *err when its thread
 * cannot start. attrib_free stops it (promptly: a look-up checks for it
 * often) and frees what it cached; answers not taken are dropped.
 */
struct attrib *attrib_create(pid_t init_host_pid, char **err);
void attrib_free(struct attrib *a);

/* Readable (an eventfd) when answers wait: read it empty with attrib_take. */
int attrib_fd(const struct attrib *a);

/*
 * Queue a look-up; never blocks. Newest first: when ATTRIB_QUEUE_MAX wait,
 * the oldest is answered "unknown" at once to make room; one older than
 * a few seconds is answered "unknown" without a look-up. false only when
 * the worker is stopping: the answer is "unknown", now, and nothing comes
 * back for q->token.
 */
bool attrib_ask(struct attrib *a, const struct attrib_query *q);
#define ATTRIB_QUEUE_MAX 1024

/* Up to max answers, oldest first (the eventfd is drained); returns how many. */
size_t attrib_take(struct attrib *a, struct attrib_result *out, size_t max);

/*
 * The session has a network: let the worker make its sock_diag socket (a
 * fork of a helper) now, before the first question, rather than at it.
 */
void attrib_prepare_net(struct attrib *a);

/* What the worker did so far: look-ups made, and its CPU time for them in microseconds. */
void attrib_cost(struct attrib *a, uint64_t *lookups, uint64_t *cpu_us);

/*
 * The same look-ups, done now in the caller's thread with no cache (they
 * read /proc: never on the daemon's loop). 0 with *out filled (found or
 * not), -1 when init_host_pid is not a live sandbox init we may read.
 */
int attrib_who_pid(pid_t init_host_pid, pid_t host_pid, struct attrib_proc *out);
int attrib_who_socket(pid_t init_host_pid, const struct attrib_query *q, struct attrib_proc *out);
/* Who is the process (host_pid, start) — start as attrib_proc.start says it: not found
 * when host_pid now names another process (a pid reused since). */
int attrib_who_process(pid_t init_host_pid, pid_t host_pid, uint64_t start,
		       struct attrib_proc *out);

/*
 * The event fields of an answer (common/event.h's struct event_who): its
 * strings point into p, which must outlive w.
 */
void attrib_proc_who(const struct attrib_proc *p, struct event_who *w);

/*
 * Can attribution work here (`boxy doctor`)? Reads this process's own
 * /proc entries the way a look-up reads a sandbox's (net/tcp, fd links,
 * environ, children) and notes hidepid and Yama. 0 and a line saying what
 * was checked, or -1 and why not; *line is malloc'd either way.
 */
int attrib_check(char **line);

#endif
