/*
 * policy/addr.h — the always-on range denylist over IP addresses
 * (common/netaddr.h).
 *
 * Every destination the sandbox dials, and every address an upstream DNS
 * answer returns, is classified here before anything else looks at it. The
 * table covers the IANA IPv4 and IPv6 special-purpose registries plus
 * multicast, and IPv6 addresses that carry an IPv4 address inside them
 * (mapped, compatible, NAT64, 6to4, Teredo) are decoded first, so that
 * 64:ff9b::192.168.1.1 is refused as the private address it reaches.
 *
 * Pure functions over plain data: no sockets, no allocation, no globals but
 * constant tables. doc/network-policy.md lists every range and the rules.
 */
#ifndef BOXY_NET_ADDR_H
#define BOXY_NET_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/netaddr.h"
#include "spec/runspec.h"   /* struct cidr */

/* Why an address is refused. NET_RANGE_PUBLIC means it is not. */
enum net_range {
	NET_RANGE_PUBLIC = 0,
	NET_RANGE_THIS_NETWORK,     /* 0.0.0.0/8 */
	NET_RANGE_UNSPECIFIED,      /* ::/128 */
	NET_RANGE_LOOPBACK,         /* 127.0.0.0/8, ::1/128 */
	NET_RANGE_PRIVATE,          /* RFC 1918 */
	NET_RANGE_CGNAT,            /* 100.64.0.0/10 */
	NET_RANGE_LINK_LOCAL,       /* 169.254.0.0/16, fe80::/10 */
	NET_RANGE_IETF_PROTOCOL,    /* 192.0.0.0/24, 2001::/23 */
	NET_RANGE_DOCUMENTATION,    /* TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20 */
	NET_RANGE_AS112,            /* 192.31.196.0/24, 192.175.48.0/24, 2620:4f:8000::/48 */
	NET_RANGE_AMT,              /* 192.52.193.0/24 */
	NET_RANGE_6TO4_RELAY,       /* 192.88.99.0/24 */
	NET_RANGE_BENCHMARKING,     /* 198.18.0.0/15, 2001:2::/48 */
	NET_RANGE_RESERVED,         /* 240.0.0.0/4 */
	NET_RANGE_BROADCAST,        /* 255.255.255.255/32 */
	NET_RANGE_MULTICAST,        /* 224.0.0.0/4, ff00::/8 */
	NET_RANGE_UNIQUE_LOCAL,     /* fc00::/7 */
	NET_RANGE_SITE_LOCAL,       /* fec0::/10 */
	NET_RANGE_DISCARD,          /* 100::/64 */
	NET_RANGE_DUMMY,            /* 100:0:0:1::/64 */
	NET_RANGE_NAT64_LOCAL,      /* 64:ff9b:1::/48 whose embedded IPv4 is public */
	NET_RANGE_V4_COMPAT,        /* ::/96 whose embedded IPv4 is public */
	NET_RANGE_V4_TRANSLATED,    /* ::ffff:0:0:0/96 whose embedded IPv4 is public */
	NET_RANGE_SRV6,             /* 5f00::/16 */
	NET_RANGE_NOT_GLOBAL,       /* IPv6 outside 2000::/3 and not listed above */
	NET_RANGE_COUNT
};

/* How the address that was judged was found inside the address as written. */
enum net_embed {
	NET_EMBED_NONE = 0,         /* the address as written */
	NET_EMBED_MAPPED,           /* ::ffff:0:0/96 */
	NET_EMBED_COMPAT,           /* ::/96 */
	NET_EMBED_TRANSLATED,       /* ::ffff:0:0:0/96 */
	NET_EMBED_NAT64,            /* 64:ff9b::/96 */
	NET_EMBED_NAT64_LOCAL,      /* 64:ff9b:1::/48, RFC 6052 /48 layout */
	NET_EMBED_6TO4,             /* 2002::/16 */
	NET_EMBED_TEREDO_SERVER,    /* 2001::/32, bytes 4..7 */
	NET_EMBED_TEREDO_CLIENT,    /* 2001::/32, last 32 bits inverted */
};

/* The verdict on one address. */
struct net_addr_class {
	enum net_range range;       /* why refused; PUBLIC when permitted */
	enum net_embed via;         /* where the refused address came from */
	struct net_addr judged;     /* the address the range applies to (decoded if via) */
	const char *exception;      /* set by net_addr_check: the exception text that let it
				     * through (points into the cidr or a constant); else NULL */
};

/* True if a lies inside c (families must match). */
bool net_addr_in_cidr(const struct net_addr *a, const struct cidr *c);

/*
 * Classify an address against the denylist alone, decoding embedded IPv4
 * first. Never fails. Returns true if the address is public.
 */
bool net_addr_classify(const struct net_addr *a, struct net_addr_class *out);

/*
 * Classify and apply the exceptions: --allow-cidr prefixes and, when
 * tailscale is set, Tailscale's 100.64.0.0/10 and fd7a:115c:a1e0::/48 (but
 * never its MagicDNS resolver, 100.100.100.100 and fd7a:115c:a1e0::53,
 * which only the supervisor may reach). An exception matching the address
 * as written lifts every objection; one matching a decoded IPv4 lifts the
 * objection to that IPv4. Returns true if permitted; out->exception names
 * the exception used, verbatim, when one was needed.
 */
bool net_addr_check(const struct net_addr *a, const struct cidr *cidrs, size_t ncidrs,
		    bool tailscale, struct net_addr_class *out);

/*
 * May boxy suggest --allow-cidr for an address refused for range r? Not for
 * one of the user's own machine or network, nor the cloud metadata address
 * (private, CGNAT, loopback, link-local, unique and site local, multicast,
 * broadcast, this-network, unspecified): the name that answered it, or the
 * process that dialled it, is often the payload, and a suggested fix would
 * be its request for a hole, in boxy's voice.
 */
bool net_range_fix_ok(enum net_range r);

/* Stable short code ("private") and human words ("private (RFC 1918)"). */
const char *net_range_code(enum net_range r);
const char *net_range_words(enum net_range r);
/* "IPv4-mapped", "NAT64", … ; "" for NET_EMBED_NONE. */
const char *net_embed_words(enum net_embed e);

#endif
