/*
 * policy/decide.h — the network decision, as one pure function.
 *
 * In the manner of doas's permit(): the caller describes a flow, the
 * function answers allow or deny with the layer that decided and a reason
 * code, and anything not explicitly allowed is denied. No I/O, no clock
 * (the caller passes now), no state but what is passed in, so every rule
 * is a table row in tests/unit/test-net-policy.c.
 *
 * The order, which doc/network-policy.md explains with examples:
 *   0. mode none refuses everything; port 0 is refused;
 *   1. net.ip: the range denylist (after decoding), with --allow-cidr and
 *      --tailscale as the only exceptions;
 *   2. net.ip: UDP/443 in allowlist mode (QUIC hides the name);
 *   3. public mode: allowed, subject only to --allow-port if given;
 *   4. net.dns: allowlist mode needs a live binding of the address to a
 *      permitted name, and the port allowed for that name (with --tailscale
 *      "nas" and "nas.SUFFIX" count as one name: net_policy_tailnet_alias);
 *   5. net.sni: for TCP, the TLS SNI or HTTP Host must be a permitted name
 *      bound to that address, and ECH is refused. The gateway calls once at
 *      SYN time (name pending: a provisional allow that says a name is
 *      needed) and again when the first bytes have been parsed. A flow with
 *      no name on the wire (NONE: neither TLS nor HTTP, or no client byte)
 *      is decided by step 4 alone; MALFORMED, no-SNI and ECH are refused.
 */
#ifndef BOXY_NET_POLICY_H
#define BOXY_NET_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/addr.h"
#include "policy/bind.h"
#include "parse/dns.h"
#include "parse/name.h"
#include "spec/runspec.h"

/* Ports allowed in allowlist mode when the run names none (--allow-port). */
#define NET_POLICY_DEFAULT_PORTS { 80, 443 }

/* The policy, borrowed from a runspec (nothing is copied or freed). */
struct net_policy {
	enum net_mode mode;
	const struct host_spec *hosts;
	size_t nhosts;
	const uint16_t *ports;          /* --allow-port; empty: see net_policy_port_ok */
	size_t nports;
	const struct cidr *cidrs;
	size_t ncidrs;
	bool tailscale;
	const char *tailnet;            /* --tailscale's MagicDNS suffix, canonical; NULL when
					 * unknown (not from the runspec: the broker sets it) */
};

enum net_proto {
	NET_PROTO_TCP = 6,
	NET_PROTO_UDP = 17,
};

struct net_flow {
	enum net_proto proto;
	struct net_addr dst;
	uint16_t port;
	enum net_name_kind name_kind;   /* parse/name.h; name: SNI or Host, else NULL */
	const char *name;       /* SNI or Host, validated lower-case; NULL if absent */
	bool ech;               /* the ClientHello offered Encrypted ClientHello */
};

enum net_deny {
	NET_DENY_NONE = 0,
	NET_DENY_MODE_NONE,     /* --net none */
	NET_DENY_PORT_ZERO,
	NET_DENY_RANGE,         /* see verdict.addr for the range */
	NET_DENY_QUIC,          /* UDP/443 in allowlist mode */
	NET_DENY_PORT,          /* port not allowed (for this host, or globally) */
	NET_DENY_NO_BINDING,    /* no live binding from a permitted name */
	NET_DENY_NAME,          /* DNS: name not on the allowlist */
	NET_DENY_NAME_INVALID,  /* DNS: not a valid host name */
	NET_DENY_NO_SNI,        /* TLS without server_name */
	NET_DENY_NO_HOST,       /* HTTP without a host */
	NET_DENY_SNI_MISMATCH,  /* SNI/Host names a host not bound to this address */
	NET_DENY_ECH,
	NET_DENY_MALFORMED,     /* ClientHello or request head the parser refused */
	NET_DENY_COUNT
};

#define NET_LAYER_IP  "net.ip"
#define NET_LAYER_DNS "net.dns"
#define NET_LAYER_SNI "net.sni"
#define NET_LAYER_HTTP "net.http"  /* a request of a gated flow (policy/http-rules.h) */
#define NET_LAYER_TLS "net.tls"    /* TLS inspection: the session CA, a failed handshake */

struct net_verdict {
	bool allow;
	bool need_name;         /* allow is provisional: decide again with the name */
	const char *layer;      /* NET_LAYER_*: the layer that made the decision */
	enum net_deny deny;     /* NET_DENY_NONE when allowed */
	struct net_addr_class addr;   /* the range verdict (exception text when one applied) */
	const char *host;       /* the permitted name the flow was matched to, if any;
				 * points into the bindings, the policy or the flow */
};

/* Fill a policy that borrows the runspec's lists. */
void net_policy_from_runspec(struct net_policy *p, const struct runspec *rs);

/* Decide a flow (see the order above). Always fills v. Returns v->allow. */
bool net_policy_decide(const struct net_policy *p, const struct net_bind *binds,
		       const struct net_flow *f, uint64_t now_ms, struct net_verdict *v);

/* May the sandbox resolve name? public: any valid name; allowlist: listed,
 * matching a "*.suffix" entry, or a tailnet alias of a listed name
 * (net_policy_tailnet_alias); none: nothing. Layer net.dns. */
bool net_policy_resolve(const struct net_policy *p, const char *name, struct net_verdict *v);

/* Does the allowlist name this host (exactly, through a "*." wildcard, or as
 * the tailnet alias of a listed name)? */
bool net_policy_host_listed(const struct net_policy *p, const char *name);

/*
 * The tailnet alias rule. With --tailscale and a known MagicDNS suffix the
 * suffix is the sandbox's search domain, so a payload that asks for a bare
 * "nas" has its resolver ask "nas.SUFFIX" first. When name is LABEL.SUFFIX
 * (exactly one label, then a dot, then the whole suffix) and LABEL is an
 * allowlist entry of its own, returns that entry's name ("nas"): the two
 * names are the same host, with the same ports, and an address bound to
 * either is bound to both. NULL otherwise: no --tailscale, no suffix, more
 * than one label in front, no dot boundary ("evilnas.SUFFIX" is not "nas"),
 * or LABEL not listed.
 */
const char *net_policy_tailnet_alias(const struct net_policy *p, const char *name);

/* Is port allowed for name (NULL: for any connection, by the global list)?
 * A tailnet alias has the union of its own entries' ports and its label's. */
bool net_policy_port_ok(const struct net_policy *p, const char *name, uint16_t port);

/*
 * The TCP ports the Landlock backstop should allow connect() to: in allowlist
 * mode the defaults, --allow-port, every host's own ports and 53, without
 * duplicates, in a malloc'd *ports; returns the count. Other modes return 0
 * and NULL (the policy does not restrict ports there). Not runspec.ports,
 * which holds only --allow-port (see doc/network-policy.md §4).
 */
size_t net_policy_landlock_ports(const struct net_policy *p, uint16_t **ports);

/*
 * Rebinding filter: drop from addrs (and the parallel ttls, which may be
 * NULL) every address the range check refuses, keeping order. Returns the
 * number kept. When dropped is not NULL, the first max_dropped refused
 * addresses' verdicts are stored there and *ndropped counts all of them.
 */
size_t net_policy_filter_addrs(const struct net_policy *p, struct net_addr *addrs,
			       uint32_t *ttls, size_t n, struct net_addr_class *dropped,
			       size_t max_dropped, size_t *ndropped);

/* Stable code ("no-binding") and words ("address was not resolved from a permitted name"). */
const char *net_deny_code(enum net_deny d);
const char *net_deny_words(enum net_deny d);
/* The words for a verdict: the range's words for NET_DENY_RANGE, else net_deny_words. */
const char *net_verdict_words(const struct net_verdict *v);

#endif
