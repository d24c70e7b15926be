/*
 * broker/broker.h — the daemon's side of a session's network: it answers
 * boxy-net's questions (proto/netproto.h) with policy (policy/decide.h), resolves
 * permitted names (broker/resolver.h), dials permitted flows from the daemon's
 * own network namespace and hands boxy-net the connected sockets.
 *
 * boxy-net parses everything the payload sends; the broker parses only
 * boxy-net's messages, and treats one it cannot accept — a field out of
 * range, an unknown type, a flow it never opened, a descriptor it did not
 * expect — as a compromised boxy-net: it records why and ends the session's
 * network (the payload keeps running, offline). Nothing here blocks the
 * daemon's loop: connects are non-blocking and output to boxy-net is
 * queued (a boxy-net that stops reading is cut off, not waited for).
 *
 * Every decision is an event (kinds "tcp", "udp", "dns"; verdicts allow,
 * deny, sni, resolve, bytes, close) through the session's sink, and goes
 * into the session's net-log.
 *
 * Tripwires: with the session's decoy tokens, every DNS name is looked at
 * for them (label by label, as one stream per parent domain, so a token cut
 * across queries is found): a name that carries one is answered NXDOMAIN
 * here and never asked upstream, and so is every later name under the same
 * parent domain. boxy-net looks at the flows' first bytes and says
 * NET_TRIPWIRE. Each is a red "tripwire" alert, once per token and channel
 * (BROKER_TRIPWIRE_ALERTS a session, the rest counted).
 */
#ifndef BOXY_BROKER_H
#define BOXY_BROKER_H

#include <ev.h>
#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "broker/netlog.h"
#include "spec/runspec.h"

#define BROKER_MAX_FLOWS    4096        /* flows open at once per session */
#define BROKER_MAX_QUERIES  256         /* DNS lookups in flight per session */
#define BROKER_OUTQ_MAX     (4u << 20)  /* bytes queued to boxy-net before it is cut off */
#define BROKER_DIAL_TIMEOUT 30.0        /* seconds for an upstream connect */
#define BROKER_LOG_MAX      1024        /* one NET_LOG line */
#define BROKER_FINISH_MS    250         /* broker_finish's wait for boxy-net's last counters */
#define BROKER_MAX_HELPERS  8           /* boxy-nets per session (queues of tap0) */
#define BROKER_TRIPWIRE_ALERTS 32       /* tripwire alerts a session, at most */
#define BROKER_TRIPWIRE_DOMAINS 32      /* parent domains whose DNS names are one stream each */

struct broker;
struct tls_ca;

/*
 * Attribution (doc/attribution.md): who in the sandbox made a flow or asked a
 * name. The broker asks when a flow opens and when a query comes, and goes
 * on deciding; the answer comes back through broker_attributed. Meanwhile
 * the events about that flow or query wait (so each carries its who), and
 * so do the two things that would destroy the evidence if sent first: a
 * refusal (the RST makes the sandbox's kernel drop the socket from its
 * table) and a DNS answer (the client closes its socket once it has one) —
 * a refusal (a refused name's NXDOMAIN included) never longer than hold_ms,
 * an answer to a permitted name never longer than answer_hold_ms, which is
 * short: that wait is the payload's, on a busy machine it would slow every
 * install. A permitted flow's verdict never waits; its events (allow, sni,
 * bytes, close) wait up to record_hold_ms, since nothing of the payload's
 * waits with them.
 */
struct broker_attrib {
	/* Ask who owns the socket proto src:sport → dst:dport; false when it cannot be asked
	 * (the answer is "unknown" at once). */
	bool (*ask)(void *ctx, uint64_t token, uint8_t proto, const struct net_addr *src,
		    uint16_t sport, const struct net_addr *dst, uint16_t dport);
	void *ctx;
	unsigned hold_ms;           /* the longest a refusal (and events) wait for an answer */
	unsigned answer_hold_ms;    /* the longest a permitted name's DNS answer waits */
	unsigned record_hold_ms;    /* the longest a permitted flow's events wait: nothing of
				     * the payload's waits with them, so they may wait longer */
};

struct broker_opts {
	const char *dns_servers;    /* NULL: the host's resolv.conf (tests name a server) */
	const char *tailnet;        /* --tailscale: the MagicDNS suffix, or NULL */
	const char *tailnet_servers;/* NULL: 100.100.100.100 (tests name a fake) */
	bool pcap;                  /* a pcap descriptor goes to boxy-net (NETCFG_PCAP) */
	locale_t lang;              /* the run's client's language: alerts are told in it too
	                             * (common/lang.h); 0: only the recorded words */
	struct tls_ca *tls_ca;      /* TLS inspection: the session CA (common/tlsca.h), taken by
				     * broker_create (also on failure); its key goes to boxy-net
				     * (NET_TLS_CA) and is then forgotten. NULL: nothing inspected */
	size_t helpers;             /* the boxy-nets the session will have (each gets the CA's
				     * key, which is forgotten once the last has it); 0: one */
	const struct broker_attrib *attrib;     /* NULL: no attribution (copied) */
	char *const *tokens;        /* --tripwires: the session's decoy tokens (parse/tripwire.h), */
	char *const *token_labels;  /* what each is ("AWS secret access key in ~/.aws/credentials") */
	size_t ntokens;             /* copied; 0: none */
	/*
	 * An alert whose event must wait for its who (attribution holds a
	 * query's or flow's events until its asker is found) is handed here at
	 * once, without its who, so that what reacts to it (--on-alert freeze:
	 * daemon/react.h) acts before the query or flow that raised it goes on;
	 * its event, sent later, is marked reacted. NULL: none.
	 */
	void (*alert_now)(void *ctx, const struct event *ev);
	void *alert_ctx;
};

/*
 * A broker for one session. rs and sink are borrowed and must outlive it;
 * session is copied. Events carry the session id. Returns NULL with *err.
 */
struct broker *broker_create(struct ev_loop *loop, const struct runspec *rs,
			     const struct event_sink *sink, const char *session,
			     const struct broker_opts *opts, char **err);

/*
 * Talk to one more boxy-net over fd (one end of a SOCK_SEQPACKET socketpair,
 * refused otherwise; the broker takes it). The first message must be
 * NET_HELLO. Used directly by tests with fake boxy-nets.
 */
int broker_attach(struct broker *b, int fd, char **err);

/*
 * Start one more boxy-net (the executable at path) with fd 3 = the control
 * socket, fd 4 = tap_fd (one queue of tap0), fd 5 = pcap_fd (or nothing when
 * pcap_fd < 0). The broker keeps neither tap_fd nor pcap_fd: the caller
 * closes its copies. A session has one boxy-net per queue of tap0 (at most
 * BROKER_MAX_HELPERS): each a gateway of its own with the flows the kernel
 * puts on its queue, all asking this one broker, whose bindings, dial limits
 * and net-log they share. One that breaks the protocol or dies ends them all.
 */
int broker_spawn(struct broker *b, const char *path, int tap_fd, int pcap_fd, char **err);

/* boxy-net's path: beside this executable (a build tree), else installed. malloc'd. */
char *broker_helper_path(void);

/*
 * Hold the session's network while the session is frozen (doc/react.md), or
 * let it go. Held: boxy-net is stopped (SIGSTOP: the flows it splices stop
 * moving, no frame leaves the TAP) and nothing more it sent is read, so no
 * flow is dialled and no query leaves; the query whose alert froze the
 * session (the detectors look at a query before anything is done with it)
 * waits, and so do the flows waiting for a dial slot. A connect already in
 * progress completes, but no byte of the payload's reaches it. Released, in
 * this order: the waiting query and flows are acted on, boxy-net continues,
 * its messages are read again — unless something let go raised an alert
 * that held it again. A held broker is never continued at the session's end:
 * broker_finish asks nothing and broker_free kills boxy-net stopped. Every
 * boxy-net of the session (one per queue of tap0) is stopped and continued.
 */
void broker_hold(struct broker *b, bool hold);
bool broker_held(const struct broker *b);

/* The pid of the session's i-th boxy-net, or -1; how many there are. */
pid_t broker_helper_pid(const struct broker *b, size_t i);
size_t broker_helpers(const struct broker *b);

/* False once the session's network was ended (compromised or dead boxy-net). */
bool broker_alive(const struct broker *b);

/* Why the network was ended, or NULL. */
const char *broker_failure(const struct broker *b);

/* What the run did on the network so far (for --net-log and the summary). */
const struct netlog *broker_netlog(const struct broker *b);

/*
 * At the session's end, before the net-log and the store's rows are
 * written: ask boxy-net for its final byte counts (it reports every open
 * flow closed, then exits) and take them in, waiting at most
 * BROKER_FINISH_MS. After this the broker asks and answers nothing, and
 * whatever still waits for its attribution has gone out, "unknown".
 */
void broker_finish(struct broker *b);

/* Write the net-log JSON to fd (the client's --net-log). Returns 0 or -1 with *err. */
int broker_write_netlog(const struct broker *b, int fd, char **err);

/*
 * The answer to the broker's question token (struct broker_attrib): who is
 * borrowed for the call (NULL or not found: "unknown"). An answer that came
 * too late, or for a question never asked, is ignored.
 */
void broker_attributed(struct broker *b, uint64_t token, const struct event_who *who);

/* Questions of attribution not answered yet (tests). */
size_t broker_attrib_waiting(const struct broker *b);

/* Flows open now (dialling, waiting for a name or spliced). */
size_t broker_flows(const struct broker *b);

/* End the network, close every socket, stop and reap boxy-net. NULL is fine. */
void broker_free(struct broker *b);

#endif
