/*
 * common/netaddr.c — an IP address as plain data: built from bytes, parsed
 * from and formatted to text, compared. What the DNS parser, the policy,
 * the broker and boxy-net all mean by an address; the policy's judgement
 * of one (ranges, exceptions) is policy/addr.c's.
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "common/netaddr.h"

/* Fills out with an IPv4 address. */
void net_addr_set_v4(struct net_addr *out, const uint8_t b[4])
{
	memset(out, 0, sizeof(*out));
	out->family = AF_INET;
	memcpy(out->a, b, 4);
}

/* Fills out with an IPv6 address. */
void net_addr_set_v6(struct net_addr *out, const uint8_t b[16])
{
	memset(out, 0, sizeof(*out));
	out->family = AF_INET6;
	memcpy(out->a, b, 16);
}

/* Parses the text form; inet_pton is strict (no octal, no short forms). */
int net_addr_parse(const char *s, struct net_addr *out)
{
	uint8_t b[16];

	if (s == NULL)
		return -1;
	if (inet_pton(AF_INET, s, b) == 1) {
		net_addr_set_v4(out, b);
		return 0;
	}
	if (inet_pton(AF_INET6, s, b) == 1) {
		net_addr_set_v6(out, b);
		return 0;
	}
	return -1;
}

/* Formats an address; an unknown family formats as "?". */
char *net_addr_format(const struct net_addr *a, char *buf)
{
	if ((a->family != AF_INET && a->family != AF_INET6) ||
	    inet_ntop(a->family, a->a, buf, NET_ADDR_STRLEN) == NULL)
		strcpy(buf, "?");
	return buf;
}

/* Compares family and the bytes the family uses. */
bool net_addr_equal(const struct net_addr *x, const struct net_addr *y)
{
	if (x->family != y->family)
		return false;
	return memcmp(x->a, y->a, x->family == AF_INET ? 4 : 16) == 0;
}
