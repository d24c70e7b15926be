/*
 * proto/netproto.c — the address field of proto/netproto.h, encoded and
 * decoded once for both ends: the broker (in the daemon) and boxy-net. On
 * the wire an address is 1 byte family (4 or 6) and 16 bytes, IPv4 in the
 * first 4 and zeros after; anything else is malformed, whichever side reads it.
 * And NET_CONFIG, which boxy-net decodes strictly before anything else.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"
#include "parse/tripwire.h"
#include "proto/netproto.h"
#include "spec/runspec.h"

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

/* NET_CONFIG, both ends. */
void netproto_config_encode(struct wbuf *w, const struct net_config *c)
{
	wire_put_u8(w, c->mode);
	wire_put_u8(w, c->flags);
	wire_put_u64(w, c->pcap_max);
	wire_put_u8(w, (uint8_t)c->ntokens);
	for (size_t i = 0; i < c->ntokens; i++)
		wire_put_str(w, c->tokens[i]);
}

int netproto_config_decode(const void *p, size_t len, struct net_config *c, char **err)
{
	struct rbuf r;
	uint8_t n;

	memset(c, 0, sizeof(*c));
	rbuf_init(&r, p, len);
	c->mode = wire_get_u8(&r);
	c->flags = wire_get_u8(&r);
	c->pcap_max = wire_get_u64(&r);
	n = wire_get_u8(&r);
	if (r.failed)
		return set_err(err, "malformed NET_CONFIG");
	if (c->mode == NET_UNSET || c->mode > NET_NONE)
		return set_err(err, "NET_CONFIG has no mode %u", c->mode);
	if (c->flags & ~NETCFG_ALL)
		return set_err(err, "NET_CONFIG has unknown flags 0x%02x", c->flags);
	if (n > TW_TOKENS_MAX)
		return set_err(err, "NET_CONFIG has %u decoy tokens", n);
	c->tokens = n ? xcalloc((size_t)n + 1, sizeof(char *)) : NULL;
	for (uint8_t i = 0; i < n; i++) {
		char *t = wire_get_str(&r, TW_TOKEN_MAX);

		if (!t || !tw_token_ok(t)) {
			free(t);
			netproto_config_free(c);
			return set_err(err, "NET_CONFIG decoy token %u is malformed", i);
		}
		c->tokens[c->ntokens++] = t;
	}
	if (!wire_done(&r)) {
		netproto_config_free(c);
		return set_err(err, "malformed NET_CONFIG");
	}
	return 0;
}

void netproto_config_free(struct net_config *c)
{
	strv_free(c->tokens);
	c->tokens = NULL;
	c->ntokens = 0;
}
