/*
 * parse/name.h — what the first bytes a sandboxed client sent on a TCP flow
 * name. One kind with one numbering end to end: boxy-net reads it off the
 * wire with parse/sni and parse/http (net/name.c), sends it as the u8 of
 * NET_FLOW_NAME and NET_FLOW_SEEN (proto/netproto.h), and the broker hands
 * the same value to the policy (policy/decide.h's struct net_flow).
 */
#ifndef BOXY_PARSE_NAME_H
#define BOXY_PARSE_NAME_H

enum net_name_kind {
	NET_NAME_PENDING = 0,   /* nothing read yet (SYN time); never on the wire */
	NET_NAME_NONE = 1,      /* neither TLS nor HTTP, or no client byte by the name timeout */
	NET_NAME_SNI = 2,       /* a TLS ClientHello; the name is its server_name, if any */
	NET_NAME_HOST = 3,      /* an HTTP request; the name is its Host, if any */
	NET_NAME_MALFORMED = 4, /* TLS or HTTP the parser refused, or still incomplete when
				 * boxy-net stopped waiting; carries no name and no ECH */
};

/* The largest kind a message may carry (PENDING, 0, never does). */
#define NET_NAME_WIRE_MAX NET_NAME_MALFORMED

#endif
