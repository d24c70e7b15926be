/*
 * broker/resolver.h — the daemon's upstream DNS resolver for sandboxed names, on
 * c-ares, driven by the daemon's libev loop (never blocking it).
 *
 * Names the broker has already permitted are looked up here, honouring the
 * host's /etc/hosts and resolv.conf (search domains are not applied: the
 * sandbox asks for exact names). With --tailscale, names under the
 * tailnet's MagicDNS suffix go to 100.100.100.100 instead, which the
 * daemon can reach from the host and the sandbox never can, and so does a
 * single-label name, as NAME.SUFFIX (upstream as NAME only on NXDOMAIN).
 *
 * The resolver returns addresses and TTLs only; policy (the rebinding
 * filter, bindings, events) is the broker's.
 */
#ifndef BOXY_RESOLVER_H
#define BOXY_RESOLVER_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/addr.h"

#define RESOLVER_MAGICDNS "100.100.100.100"

struct resolver;

/*
 * A resolver in loop. servers is NULL for the host's resolv.conf, or a
 * c-ares server list ("127.0.0.1:5353") for tests. Returns NULL with *err set.
 */
struct resolver *resolver_create(struct ev_loop *loop, const char *servers, char **err);

/*
 * --tailscale: route names equal to or below suffix ("tail0a1b2.ts.net") to
 * servers (NULL: RESOLVER_MAGICDNS). Returns 0, or -1 with *err set.
 */
int resolver_set_tailnet(struct resolver *r, const char *suffix, const char *servers,
			 char **err);

/* The MagicDNS suffix set by resolver_set_tailnet, or NULL. */
const char *resolver_tailnet_suffix(const struct resolver *r);

/*
 * Look name up (a validated lower-case name) for family AF_INET or AF_INET6.
 * cb runs from the loop (or at once, for an /etc/hosts hit), exactly once,
 * unless the resolver is freed first (then never), with rcode a DNS_RCODE_*
 * (NOERROR with n == 0 is "no data"); addrs and ttls are valid for the call
 * only. Returns 0, or -1 when the query could not be started.
 */
int resolver_query(struct resolver *r, const char *name, int family,
		   void (*cb)(void *arg, int rcode, const struct net_addr *addrs,
			      const uint32_t *ttls, size_t n),
		   void *arg);

/* Queries in flight. */
size_t resolver_pending(const struct resolver *r);

/* Cancel every query (their callbacks are not called) and free. NULL is fine. */
void resolver_free(struct resolver *r);

/*
 * Ask tailscaled (its LocalAPI socket, path NULL: the default) for the
 * tailnet's MagicDNS suffix. Blocking, bounded by a 2 s timeout; called
 * once before a --tailscale run. Returns a malloc'd suffix, or NULL with
 * *err saying why in one line.
 */
char *resolver_tailscale_suffix(const char *sock_path, char **err);

#endif
