/*
 * daemon/session-attrib.h — a session's attribution on the daemon's loop: the
 * worker of sandbox/attrib.h started with the session, its answers taken
 * when its eventfd is readable and handed to whoever asked (the broker, for
 * flows and DNS queries; any other part of the daemon through the two calls
 * below: a tripwire's opener, a frozen session's processes).
 *
 * `--attribution off` (a run flag and profile key) starts no worker: every
 * ask is answered at once with NULL (not attributed), and nothing is read
 * from the sandbox's /proc.
 */
#ifndef BOXY_SESSION_ATTRIB_H
#define BOXY_SESSION_ATTRIB_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/event.h"
#include "sandbox/attrib.h"

struct session;
struct broker_attrib;

/*
 * The answer to one question, on the loop, exactly once: who is NULL when
 * attribution is off for the session, who->found false when the process
 * could not be found (or the session ended first). who and its strings are
 * borrowed for the call.
 */
typedef void (*session_attrib_done)(void *ctx, const struct event_who *who);

/* Start the session's worker (after boxy-init reported ready: s->pid is its init). */
void session_attrib_start(struct session *s);
/* Stop it; every question still open is answered (not found). Idempotent. */
void session_attrib_end(struct session *s);

/* Who is the process host_pid (its pid in the daemon's namespace, as fanotify reports it)? */
void session_attrib_pid(struct session *s, pid_t host_pid, session_attrib_done done, void *ctx);

/* Who owns the socket of this flow (q->kind ATTRIB_Q_SOCKET; q->token is ignored)? */
void session_attrib_socket(struct session *s, const struct attrib_query *q,
			   session_attrib_done done, void *ctx);

/*
 * The broker's hook (broker/broker.h struct broker_attrib) for this session,
 * or NULL when attribution is off. Valid until session_attrib_end.
 */
const struct broker_attrib *session_attrib_broker(struct session *s);

#endif
