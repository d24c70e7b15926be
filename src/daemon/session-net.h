/*
 * daemon/session-net.h — a daemon session's network: the broker and boxy-net
 * started with the session, --net-log written and everything stopped at
 * its end. (The destinations table `boxy run` prints afterwards is ui/dests.h.)
 *
 * The glue between daemon/session.c and broker/broker.h, so that daemon/session.c carries one
 * call at each end of a session (and, before the start, the one question
 * to tailscaled) and nothing else about the network.
 */
#ifndef BOXY_SESSION_NET_H
#define BOXY_SESSION_NET_H

#include <stddef.h>
#include <stdio.h>

struct session;
struct sandbox_ctx;

/*
 * Before sandbox_start, for a --tailscale run with a network: ask tailscaled
 * (once, blocking, at most 2 s) for the tailnet's MagicDNS suffix, which
 * the sandbox's /etc/resolv.conf needs as its search domain before the
 * mount stage and the broker's resolver needs afterwards. Returns it
 * (malloc'd, a canonical DNS name), or NULL: not such a run, or tailscaled
 * could not say, which is reported as a "degraded" net event.
 */
char *session_net_tailnet(struct session *s);

/*
 * Before sandbox_start, for an allowlist run whose --allow-http rules make
 * some host inspected (a rule that restricts methods or paths): the
 * session's CA (common/tlsca.h), constrained to those rules' domains. Its
 * certificate goes into ctx (the sandbox's trust bundle and variables,
 * written by the mount stage before boxy-net exists); its key stays in s
 * for the broker, which hands it to boxy-net and forgets it. Recorded as
 * one audit event (layer net.tls) naming the CA's fingerprint. 0 (also
 * when nothing is inspected), or -1 with *err: the run fails.
 */
int session_net_ca(struct session *s, struct sandbox_ctx *ctx, char **err);
/* Forget the CA, if the broker did not take it (session_free). */
void session_net_ca_free(struct session *s);

/*
 * After sandbox_start: take tap0's descriptor from the sandbox, start the
 * broker and boxy-net on it (with the --pcap descriptor, which boxy-net
 * then owns; tailnet is session_net_tailnet's suffix or NULL). A network that cannot start leaves the session offline and
 * says so in an event; when a capture was asked for, it ends the run
 * instead (a capture that cannot be written fails the run). No-op under
 * --net none.
 */
void session_net_start(struct session *s, const char *tailnet);

/*
 * At the session's end, before the client is told: write --net-log (the
 * client's descriptor), stop boxy-net, free the broker. Idempotent.
 */
void session_net_end(struct session *s);

#endif
