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

#include <stdbool.h>
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
 * Right after the launch (sandbox_launch): watch for tap0, which stage "net"
 * sends before boxy-init mounts anything, and start the broker and one
 * boxy-net per queue as soon as it is there, while boxy-init builds the rest
 * of the sandbox. env is the run's environment (BOXY_NET_HOLD_MS, the test
 * suite's late start). No-op under --net none.
 */
void session_net_begin(struct session *s, char *const *env);

/*
 * boxy-init reported ready: start the network now if tap0 came with the
 * report instead (tailnet is session_net_tailnet's suffix or NULL). The
 * payload does not wait for boxy-net: tap0 holds its frames until one reads.
 * A network that cannot start fails the run: before the report the start
 * is given up with the line "the session's network could not start: …"; a
 * boxy-net that ends before its lockdown was seen in place stops the payload,
 * and the run ends with that line and status 125 (doc/internals-net.md,
 * "The start").
 */
void session_net_start(struct session *s, const char *tailnet);

/* The network failed to start, and the run was stopped for it (exit status 125). */
bool session_net_failed(const struct session *s);

/*
 * At the session's end, before the client is told: write --net-log (the
 * client's descriptor), stop boxy-net, free the broker. Idempotent.
 */
void session_net_end(struct session *s);

#endif
