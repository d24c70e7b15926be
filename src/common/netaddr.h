/*
 * common/netaddr.h — an IP address, one form for every room: the parsers
 * (parse/dns builds answers from it), the policy (policy/addr judges it),
 * the broker and boxy-net (proto/netproto.h carries it). Pure, no
 * allocation.
 */
#ifndef BOXY_COMMON_NETADDR_H
#define BOXY_COMMON_NETADDR_H

#include <stdbool.h>
#include <stdint.h>

/* Long enough for any IPv6 text form plus NUL (INET6_ADDRSTRLEN). */
#define NET_ADDR_STRLEN 46

struct net_addr {
	int family;         /* AF_INET or AF_INET6 */
	uint8_t a[16];      /* network order; IPv4 uses a[0..3], the rest zero */
};

/* Parse "192.0.2.1" or "2001:db8::1" (no brackets, no zone). 0, or -1 if invalid. */
int net_addr_parse(const char *s, struct net_addr *out);
/* Canonical text form into buf (at least NET_ADDR_STRLEN bytes). Returns buf. */
char *net_addr_format(const struct net_addr *a, char *buf);
/* Build from 4 or 16 network-order bytes. */
void net_addr_set_v4(struct net_addr *out, const uint8_t b[4]);
void net_addr_set_v6(struct net_addr *out, const uint8_t b[16]);
bool net_addr_equal(const struct net_addr *x, const struct net_addr *y);

#endif
