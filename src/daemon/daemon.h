/*
 * daemon/daemon.h — the per-user daemon's shared structures: a client, a
 * session, the server. The daemon's files form a line, each calling only
 * those below it:
 *
 *   daemon/server.c    the socket, the loop, accepting and dispatching
 *   daemon/session.c   sessions and their terminals (daemon/session.h)
 *   daemon/react.c     what a session's alerts do to it: log, freeze, stop (daemon/react.h)
 *   daemon/bus.c       events to the store and to subscribers (daemon/bus.h)
 *   daemon/clients.c   a client's output queue and its end (daemon/clients.h)
 *   daemon/daemon.h    these structures
 *
 * Nothing outside the daemon includes this (daemon/server.h gathers it all
 * for the daemon's own tests).
 */
#ifndef BOXY_DAEMON_H
#define BOXY_DAEMON_H

#include <ev.h>
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "proto/msg.h"
#include "proto/outq.h"
#include "proto/refusals.h"
#include "spec/runspec.h"
#include "proto/wire.h"
#include "daemon/launch.h"

#define SESSION_ID_LEN      16
#define CLIENT_OUTQ_MAX     (1u << 20)      /* bytes queued to one client before it loses events */
#define SESSION_RING        (64u << 10)     /* terminal output kept for a later attach */
#define SESSION_RECENT      64              /* recent events kept for a new watcher */
#define SESSION_ALERTS      8               /* ... and its first alerts, however old */
#define SESSION_DESTS_MAX   1024            /* destinations counted apart; the rest share one */
#define DEST_OTHER          "(other destinations)"
#define STOP_GRACE_S        10.0

struct server;
struct session;
struct session_attrib;

enum client_role {
	CLIENT_NEW,         /* has not said hello */
	CLIENT_REFUSED,     /* another build or protocol: may only ask for status or shutdown */
	CLIENT_READY,       /* may send requests */
	CLIENT_RUN,         /* waiting for its session (non-tty run) */
	CLIENT_ATTACHED,    /* relaying a session's terminal */
	CLIENT_WATCHING,    /* subscribed to a session's events */
	CLIENT_DEAD,        /* to be freed from the loop */
};

struct client {
	struct client *next;
	struct server *srv;
	int fd;
	pid_t pid;
	ev_io rw, ww;
	struct msg_reader rd;
	enum client_role role;
	struct session *session;    /* attached, running or watching */
	union {                     /* frames not yet written (proto/outq.h), under two names: */
		struct outq out;    /* the queue, for outq_* */
		struct {            /* its fields, as the daemon and its tests read them */
			struct outq_frame *outq, *outq_tail;
			size_t outq_bytes;
		};
	};
	bool read_paused;           /* its replies are backed up: its requests wait */
	locale_t lang;              /* what it reads (MSG_LANG); (locale_t)0: C */
	uint64_t lost;              /* events dropped because outq was full */
	bool lost_reported;
};

struct dest {
	char *name;
	uint64_t conns, denied, up, down;
	char **addrs;               /* distinct addresses */
};

struct session {
	struct session *next;
	struct server *srv;
	char id[SESSION_ID_LEN + 1];
	struct runspec rs;
	char *cwd;
	struct sandbox *sb;
	pid_t pid;
	ev_child child_w;
	ev_timer timeout_w, grace_w;
	ev_timer resume_w;          /* SIGCONT after a typed ^Z (daemon/session.c) */
	ev_io gitcheck_w;           /* the after-run git check is done (sandbox/gitcheck.c) */
	ev_io trip_w;               /* the decoys' watch has findings (sandbox/tripwatch.h) */
	struct session_launch launch;   /* while boxy-init builds the sandbox (daemon/launch.h) */
	int end_status;             /* init's wait status, kept while that check runs */
	uint64_t started_ms;        /* realtime */
	char *lockfile;             /* the work directory's lockfiles then (daemon/lockfile.h), or NULL */
	bool running;
	bool timed_out;
	bool stopping;              /* SIGKILL sent (an alert's stop, boxy stop of a frozen one) */
	bool frozen;                /* every process stopped, the network held (daemon/react.c) */
	uint64_t frozen_ms;         /* realtime: when it was frozen */
	char *frozen_reason;        /* the alert that froze it, in words */
	bool react_log_only;        /* boxy resume --log: its later alerts are logged only */
	bool denials_fired;         /* the --on-denials'th refusal raised its alert */
	int exit_code;
	char *failure;              /* a stage failure's words, as recorded (C) */
	char *failure_told;         /* the same in the starting client's language, or NULL */
	locale_t lang;              /* the starting client's language: what it is told */

	int pty;                    /* master, -1 for a non-tty run */
	struct session_log *log;    /* the pty's output for `boxy logs`, NULL without a pty */
	struct refusals refusals;   /* what was refused, grouped (sent with each snapshot) */
	ev_io pty_w;
	uint8_t ring[SESSION_RING]; /* output while nobody is attached */
	size_t ring_len, ring_start;
	struct client *attached;    /* at most one */
	struct client *runner;      /* the client that started a non-tty run, until it goes */

	struct event_sink sink;
	struct audit_log *audit;    /* the client's --audit-log, or NULL */
	bool verbose;

	struct broker *net;         /* the session's network (daemon/session-net.c), or NULL */
	struct session_netstart *netstart;      /* its start (daemon/session-net.c), or NULL */
	struct tls_ca *tls_ca;      /* TLS inspection: the session CA until the broker takes it */
	char *tls_ca_pem;           /* ... its certificate, for the sandbox's trust bundle */
	char tls_ca_hash[9];        /* ... and its subject hash */
	struct session_attrib *attrib;  /* who did what (daemon/session-attrib.c), or NULL */
	int netlog_fd, pcap_fd;     /* the client's --net-log and --pcap, or -1 */

	struct dest *dests;
	size_t ndests;
	uint64_t conns, denied, up, down;
	struct event_copy recent[SESSION_RECENT];     /* the last events, for a new watcher */
	size_t nrecent, recent_next;
	struct event_copy alerts[SESSION_ALERTS];      /* a watcher that comes late sees them */
	size_t nalerts;
};

struct pending_event;
struct tls_ca;

struct server {
	struct ev_loop *loop;
	int listen_fd;              /* the socket file */
	int abs_fd;                 /* the abstract socket (the record names it) */
	int lock_fd;                /* STATE/daemon.lock, flocked for the daemon's life */
	char *sock_path;
	char *abstract;             /* "@boxy-UID-RANDOM" */
	char *state_dir;
	dev_t sock_dev;             /* the socket file as bound, to notice a replacement */
	ino_t sock_ino;
	bool sock_known, sock_given_up;
	ev_io accept_w, accept_abs_w;
	ev_timer watch_w;           /* once a second: the socket file, the log */
	ev_signal sigterm_w, sigint_w, sighup_w;
	ev_timer snapshot_w, flush_w, idle_w;
	ev_prepare reap_w;          /* frees dead clients outside their callbacks */
	struct store *store;
	bool store_warned;
	struct pending_event *pending, *pending_tail;
	size_t npending;
	struct client *clients;
	struct session *sessions;
	uint64_t started_ms;
	double stop_grace_s;        /* boxy stop: SIGTERM, then SIGKILL after this */
	bool stopping;
};

#endif
