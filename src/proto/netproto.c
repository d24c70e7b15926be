/*
 * proto/netproto.c — the address field of proto/netproto.h, encoded and
 * decoded once for both ends: the broker (in the daemon) and boxy-net. On
 * the wire an address is 1 byte family (4 or 6) and 16 bytes, IPv4 in the
 * first 4 and zeros after; anything else is malformed, whichever side reads it.
 */
#include "config.h"

#include <sys/socket.h>

#include "proto/netproto.h"

/* Append a netproto address. */
void netproto_put_addr(struct wbuf *w, const struct net_addr *a)
{
	bool v4 = a->family != AF_INET6;

	wire_put_u8(w, v4 ? 4 : 6);
	for (size_t i = 0; i < 16; i++)
		wire_put_u8(w, v4 && i >= 4 ? 0 : a->a[i]);
}

/* Read a netproto address strictly: family 4 or 6, IPv4's unused twelve zero. */
bool netproto_get_addr(struct rbuf *r, struct net_addr *a)
{
	uint8_t fam = wire_get_u8(r), bytes[16];

	for (size_t i = 0; i < 16; i++)
		bytes[i] = wire_get_u8(r);
	if (r->failed)
		return false;
	if (fam == 4) {
		for (size_t i = 4; i < 16; i++)
			if (bytes[i])
				return false;
		net_addr_set_v4(a, bytes);
		return true;
	}
	if (fam == 6) {
		net_addr_set_v6(a, bytes);
		return true;
	}
	return false;
}
