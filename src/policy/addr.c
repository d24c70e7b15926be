/*
 * policy/addr.c — the range denylist that applies to every destination
 * whatever the mode (the address type itself is common/netaddr.c's).
 *
 * The tables below are the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries (every entry, whether or not IANA marks it globally reachable:
 * a sandbox has no business with PCP anycast, AS112 sinks or ORCHIDs), plus
 * multicast, the IPv4 future-use block and, for IPv6, everything outside
 * 2000::/3 that is not listed.
 *
 * The subtle part is decoding. An IPv6 address can carry an IPv4 address
 * that a translator or tunnel on the host's path will turn into a real IPv4
 * destination: IPv4-mapped, IPv4-compatible, SIIT-translated, NAT64 (well
 * known and local-use), 6to4 and Teredo. An IPv6-only range test lets
 * 64:ff9b::192.168.1.1 walk out to the LAN, so each embedded IPv4 is judged
 * as the IPv4 address it is, before the IPv6 address itself. Exceptions
 * are then allowed to match either the address as written or the decoded
 * one, so --allow-cidr 192.168.4.0/24 also admits ::ffff:192.168.4.7.
 */
#include "config.h"

#include <string.h>
#include <sys/socket.h>

#include "policy/addr.h"
#include "common/util.h"

struct range_row {
	uint8_t prefix[16];
	uint8_t len;
	enum net_range range;
};

/* IPv4, first match wins; more specific rows come first where they nest. */
static const struct range_row v4_rows[] = {
	{ { 0, 0, 0, 0 }, 8, NET_RANGE_THIS_NETWORK },          /* RFC 791 */
	{ { 10, 0, 0, 0 }, 8, NET_RANGE_PRIVATE },              /* RFC 1918 */
	{ { 100, 64, 0, 0 }, 10, NET_RANGE_CGNAT },             /* RFC 6598 */
	{ { 127, 0, 0, 0 }, 8, NET_RANGE_LOOPBACK },            /* RFC 1122 */
	{ { 169, 254, 0, 0 }, 16, NET_RANGE_LINK_LOCAL },       /* RFC 3927 */
	{ { 172, 16, 0, 0 }, 12, NET_RANGE_PRIVATE },           /* RFC 1918 */
	{ { 192, 0, 0, 0 }, 24, NET_RANGE_IETF_PROTOCOL },      /* RFC 6890 */
	{ { 192, 0, 2, 0 }, 24, NET_RANGE_DOCUMENTATION },      /* RFC 5737 */
	{ { 192, 31, 196, 0 }, 24, NET_RANGE_AS112 },           /* RFC 7535 */
	{ { 192, 52, 193, 0 }, 24, NET_RANGE_AMT },             /* RFC 7450 */
	{ { 192, 88, 99, 0 }, 24, NET_RANGE_6TO4_RELAY },       /* RFC 7526 */
	{ { 192, 168, 0, 0 }, 16, NET_RANGE_PRIVATE },          /* RFC 1918 */
	{ { 192, 175, 48, 0 }, 24, NET_RANGE_AS112 },           /* RFC 7534 */
	{ { 198, 18, 0, 0 }, 15, NET_RANGE_BENCHMARKING },      /* RFC 2544 */
	{ { 198, 51, 100, 0 }, 24, NET_RANGE_DOCUMENTATION },   /* RFC 5737 */
	{ { 203, 0, 113, 0 }, 24, NET_RANGE_DOCUMENTATION },    /* RFC 5737 */
	{ { 224, 0, 0, 0 }, 4, NET_RANGE_MULTICAST },           /* RFC 5771 */
	{ { 255, 255, 255, 255 }, 32, NET_RANGE_BROADCAST },    /* RFC 919 */
	{ { 240, 0, 0, 0 }, 4, NET_RANGE_RESERVED },            /* RFC 1112 */
};

/*
 * IPv6 rows checked after the decodings (mapped, compatible, NAT64, 6to4,
 * Teredo are handled in code, before this table). First match wins.
 */
static const struct range_row v6_rows[] = {
	{ { 0x01, 0x00, 0, 0, 0, 0, 0, 0 }, 64, NET_RANGE_DISCARD },           /* RFC 6666 */
	{ { 0x01, 0x00, 0, 0, 0, 0, 0, 1 }, 64, NET_RANGE_DUMMY },             /* RFC 9780 */
	{ { 0x20, 0x01, 0x00, 0x02, 0, 0 }, 48, NET_RANGE_BENCHMARKING },      /* RFC 5180 */
	{ { 0x20, 0x01, 0x00, 0x00 }, 23, NET_RANGE_IETF_PROTOCOL },           /* RFC 2928 */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, NET_RANGE_DOCUMENTATION },           /* RFC 3849 */
	{ { 0x26, 0x20, 0x00, 0x4f, 0x80, 0x00 }, 48, NET_RANGE_AS112 },       /* RFC 7534 */
	{ { 0x3f, 0xff }, 20, NET_RANGE_DOCUMENTATION },                      /* RFC 9637 */
	{ { 0x5f, 0x00 }, 16, NET_RANGE_SRV6 },                               /* RFC 9602 */
	{ { 0xfc }, 7, NET_RANGE_UNIQUE_LOCAL },                              /* RFC 4193 */
	{ { 0xfe, 0x80 }, 10, NET_RANGE_LINK_LOCAL },                         /* RFC 4291 */
	{ { 0xfe, 0xc0 }, 10, NET_RANGE_SITE_LOCAL },                         /* RFC 3879 */
	{ { 0xff }, 8, NET_RANGE_MULTICAST },                                 /* RFC 4291 */
};

static const struct {
	const char *code;
	const char *words;
} range_names[NET_RANGE_COUNT] = {
	[NET_RANGE_PUBLIC] = { "public", "public" },
	[NET_RANGE_THIS_NETWORK] = { "this-network", "\"this network\" (RFC 791)" },
	[NET_RANGE_UNSPECIFIED] = { "unspecified", "unspecified address" },
	[NET_RANGE_LOOPBACK] = { "loopback", "loopback" },
	[NET_RANGE_PRIVATE] = { "private", "private (RFC 1918)" },
	[NET_RANGE_CGNAT] = { "cgnat", "carrier-grade NAT (RFC 6598)" },
	[NET_RANGE_LINK_LOCAL] = { "link-local", "link-local / cloud metadata" },
	[NET_RANGE_IETF_PROTOCOL] = { "ietf-protocol", "IETF protocol assignments" },
	[NET_RANGE_DOCUMENTATION] = { "documentation", "documentation" },
	[NET_RANGE_AS112] = { "as112", "AS112 DNS sink" },
	[NET_RANGE_AMT] = { "amt", "automatic multicast tunneling (RFC 7450)" },
	[NET_RANGE_6TO4_RELAY] = { "6to4-relay", "6to4 relay anycast (deprecated)" },
	[NET_RANGE_BENCHMARKING] = { "benchmarking", "benchmarking" },
	[NET_RANGE_RESERVED] = { "reserved", "reserved (future use)" },
	[NET_RANGE_BROADCAST] = { "broadcast", "limited broadcast" },
	[NET_RANGE_MULTICAST] = { "multicast", "multicast" },
	[NET_RANGE_UNIQUE_LOCAL] = { "unique-local", "unique local (RFC 4193)" },
	[NET_RANGE_SITE_LOCAL] = { "site-local", "site-local (deprecated)" },
	[NET_RANGE_DISCARD] = { "discard", "discard-only (RFC 6666)" },
	[NET_RANGE_DUMMY] = { "dummy", "dummy prefix (RFC 9780)" },
	[NET_RANGE_NAT64_LOCAL] = { "nat64-local", "local-use NAT64 (RFC 8215)" },
	[NET_RANGE_V4_COMPAT] = { "v4-compatible", "IPv4-compatible (deprecated)" },
	[NET_RANGE_V4_TRANSLATED] = { "v4-translated", "IPv4-translated (SIIT)" },
	[NET_RANGE_SRV6] = { "srv6", "SRv6 SIDs (RFC 9602)" },
	[NET_RANGE_NOT_GLOBAL] = { "not-global", "not global unicast (outside 2000::/3)" },
};

/* Returns the short stable code of a range. */
const char *net_range_code(enum net_range r)
{
	if ((unsigned)r >= NET_RANGE_COUNT)
		return "unknown";
	return range_names[r].code;
}

/* Returns the words shown to the user for a range. */
bool net_range_fix_ok(enum net_range r)
{
	switch (r) {
	case NET_RANGE_THIS_NETWORK: case NET_RANGE_UNSPECIFIED: case NET_RANGE_LOOPBACK:
	case NET_RANGE_PRIVATE: case NET_RANGE_CGNAT: case NET_RANGE_LINK_LOCAL:
	case NET_RANGE_BROADCAST: case NET_RANGE_MULTICAST: case NET_RANGE_UNIQUE_LOCAL:
	case NET_RANGE_SITE_LOCAL:
		return false;
	default:
		return true;
	}
}

const char *net_range_words(enum net_range r)
{
	if ((unsigned)r >= NET_RANGE_COUNT)
		return "unknown";
	return range_names[r].words;
}

/* Returns how an embedded address was found, in words. */
const char *net_embed_words(enum net_embed e)
{
	switch (e) {
	case NET_EMBED_NONE: return "";
	case NET_EMBED_MAPPED: return "IPv4-mapped";
	case NET_EMBED_COMPAT: return "IPv4-compatible";
	case NET_EMBED_TRANSLATED: return "IPv4-translated";
	case NET_EMBED_NAT64: return "NAT64";
	case NET_EMBED_NAT64_LOCAL: return "local-use NAT64";
	case NET_EMBED_6TO4: return "6to4";
	case NET_EMBED_TEREDO_SERVER: return "Teredo server";
	case NET_EMBED_TEREDO_CLIENT: return "Teredo client";
	}
	return "";
}

/* True if the first len bits of a and prefix agree. */
static bool prefix_match(const uint8_t *a, const uint8_t *prefix, unsigned len)
{
	unsigned whole = len / 8, rest = len % 8;

	if (memcmp(a, prefix, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & mask) == (prefix[whole] & mask);
}

/* True if a lies inside c; a malformed cidr (prefix too long) matches nothing. */
bool net_addr_in_cidr(const struct net_addr *a, const struct cidr *c)
{
	unsigned max = a->family == AF_INET ? 32 : 128;

	if (c->family != a->family || c->prefix > max)
		return false;
	return prefix_match(a->a, c->addr, c->prefix);
}

/* Looks an address up in one table; PUBLIC when no row matches. */
static enum net_range table_lookup(const struct range_row *rows, size_t n, const uint8_t *a)
{
	for (size_t i = 0; i < n; i++)
		if (prefix_match(a, rows[i].prefix, rows[i].len))
			return rows[i].range;
	return NET_RANGE_PUBLIC;
}

/*
 * One address to be judged: the address as written, or an IPv4 decoded from
 * it. A decoded component comes first so that the user reads the reason
 * that matters ("private") rather than the container's ("local-use NAT64").
 */
struct component {
	struct net_addr addr;
	enum net_embed via;
	enum net_range range;
};

#define MAX_COMPONENTS 3

/* Appends a decoded IPv4 component built from four bytes. */
static void add_v4(struct component *c, size_t *n, enum net_embed via,
		   uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	uint8_t b[4] = { b0, b1, b2, b3 };

	net_addr_set_v4(&c[*n].addr, b);
	c[*n].via = via;
	c[*n].range = table_lookup(v4_rows, ARRAY_SIZE(v4_rows), b);
	(*n)++;
}

/* Splits an address into the components to judge; returns how many. */
static size_t decompose(const struct net_addr *a, struct component *c)
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 };
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 0x01 };
	const uint8_t *b = a->a;
	size_t n = 0;
	enum net_range own;

	if (a->family == AF_INET) {
		c[0].addr = *a;
		c[0].via = NET_EMBED_NONE;
		c[0].range = table_lookup(v4_rows, ARRAY_SIZE(v4_rows), b);
		return 1;
	}

	if (memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1)) {
		own = b[15] == 0 ? NET_RANGE_UNSPECIFIED : NET_RANGE_LOOPBACK;
	} else if (memcmp(b, mapped, 12) == 0) {
		/* ::ffff:a.b.c.d is the IPv4 address itself to every socket API. */
		add_v4(c, &n, NET_EMBED_MAPPED, b[12], b[13], b[14], b[15]);
		own = NET_RANGE_PUBLIC;
	} else if (memcmp(b, translated, 12) == 0) {
		add_v4(c, &n, NET_EMBED_TRANSLATED, b[12], b[13], b[14], b[15]);
		own = NET_RANGE_V4_TRANSLATED;
	} else if (memcmp(b, zero, 12) == 0) {
		add_v4(c, &n, NET_EMBED_COMPAT, b[12], b[13], b[14], b[15]);
		own = NET_RANGE_V4_COMPAT;
	} else if (memcmp(b, nat64, 12) == 0) {
		/* RFC 6052 /96: the IPv4 address is the last 32 bits. */
		add_v4(c, &n, NET_EMBED_NAT64, b[12], b[13], b[14], b[15]);
		own = NET_RANGE_PUBLIC;
	} else if (memcmp(b, nat64_local, 6) == 0) {
		/*
		 * RFC 8215 local-use prefix, RFC 6052 /48 layout: IPv4 bits
		 * 0-15 in bytes 6-7, then the reserved "u" octet (byte 8, bits
		 * 64-71), then IPv4 bits 16-31 in bytes 9-10. The prefix is not
		 * globally reachable, so the address stays refused even when
		 * the IPv4 inside is public.
		 */
		add_v4(c, &n, NET_EMBED_NAT64_LOCAL, b[6], b[7], b[9], b[10]);
		own = NET_RANGE_NAT64_LOCAL;
	} else if (b[0] == 0x20 && b[1] == 0x02) {
		/* 6to4: 2002:AABB:CCDD::/48 carries the IPv4 in bytes 2-5. */
		add_v4(c, &n, NET_EMBED_6TO4, b[2], b[3], b[4], b[5]);
		own = NET_RANGE_PUBLIC;
	} else if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) {
		/*
		 * Teredo (RFC 4380): 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, the
		 * server in bytes 4-7 as is, the client's public IPv4 in the
		 * last 32 bits with every bit inverted.
		 */
		add_v4(c, &n, NET_EMBED_TEREDO_SERVER, b[4], b[5], b[6], b[7]);
		add_v4(c, &n, NET_EMBED_TEREDO_CLIENT, (uint8_t)~b[12], (uint8_t)~b[13],
		       (uint8_t)~b[14], (uint8_t)~b[15]);
		own = NET_RANGE_PUBLIC;
	} else {
		own = table_lookup(v6_rows, ARRAY_SIZE(v6_rows), b);
		/* Only 2000::/3 is allocated as global unicast. */
		if (own == NET_RANGE_PUBLIC && (b[0] & 0xe0) != 0x20)
			own = NET_RANGE_NOT_GLOBAL;
	}

	c[n].addr = *a;
	c[n].via = NET_EMBED_NONE;
	c[n].range = own;
	return n + 1;
}

/* Sets out from one component. */
static void set_class(struct net_addr_class *out, const struct component *c,
		      const char *exception)
{
	out->range = c->range;
	out->via = c->via;
	out->judged = c->addr;
	out->exception = exception;
}

/* Classifies without exceptions: the first refused component decides. */
bool net_addr_classify(const struct net_addr *a, struct net_addr_class *out)
{
	struct component c[MAX_COMPONENTS];
	size_t n = decompose(a, c);

	for (size_t i = 0; i < n; i++) {
		if (c[i].range != NET_RANGE_PUBLIC) {
			set_class(out, &c[i], NULL);
			return false;
		}
	}
	set_class(out, &c[n - 1], NULL);
	return true;
}

static const struct cidr tailscale_ranges[] = {
	{ .family = AF_INET, .addr = { 100, 64 }, .prefix = 10,
	  .text = "100.64.0.0/10 (--tailscale)" },
	{ .family = AF_INET6, .addr = { 0xfd, 0x7a, 0x11, 0x5c, 0xa1, 0xe0 }, .prefix = 48,
	  .text = "fd7a:115c:a1e0::/48 (--tailscale)" },
};

/* Tailscale's MagicDNS resolver: reachable by the supervisor, never the sandbox. */
static bool is_magicdns(const struct net_addr *a)
{
	static const uint8_t v4[4] = { 100, 100, 100, 100 };
	static const uint8_t v6[16] = { 0xfd, 0x7a, 0x11, 0x5c, 0xa1, 0xe0, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0x53 };

	if (a->family == AF_INET)
		return memcmp(a->a, v4, 4) == 0;
	return memcmp(a->a, v6, 16) == 0;
}

/* Returns the text of the first exception covering a, or NULL. */
static const char *find_exception(const struct net_addr *a, const struct cidr *cidrs,
				  size_t ncidrs, bool tailscale)
{
	for (size_t i = 0; i < ncidrs; i++)
		if (net_addr_in_cidr(a, &cidrs[i]))
			return cidrs[i].text ? cidrs[i].text : "(unnamed --allow-cidr)";
	if (tailscale && !is_magicdns(a))
		for (size_t i = 0; i < ARRAY_SIZE(tailscale_ranges); i++)
			if (net_addr_in_cidr(a, &tailscale_ranges[i]))
				return tailscale_ranges[i].text;
	return NULL;
}

/* Classifies, then lets the exceptions lift objections (see the header). */
bool net_addr_check(const struct net_addr *a, const struct cidr *cidrs, size_t ncidrs,
		    bool tailscale, struct net_addr_class *out)
{
	struct component c[MAX_COMPONENTS];
	size_t n = decompose(a, c);
	const char *used = NULL, *ex;

	if (net_addr_classify(a, out))
		return true;
	/* The last component is the address as written: covering it covers all. */
	ex = find_exception(&c[n - 1].addr, cidrs, ncidrs, tailscale);
	if (ex != NULL) {
		out->exception = ex;
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (c[i].range == NET_RANGE_PUBLIC)
			continue;
		if (i == n - 1) {
			set_class(out, &c[i], NULL);
			return false;
		}
		ex = find_exception(&c[i].addr, cidrs, ncidrs, tailscale);
		if (ex == NULL) {
			set_class(out, &c[i], NULL);
			return false;
		}
		if (used == NULL)
			used = ex;
	}
	out->exception = used;
	return true;
}
