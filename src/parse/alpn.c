/*
 * parse/alpn.c — the ALPN lists of an inspected connection (parse/alpn.h):
 * the client's list read strictly, the inspectable part of it passed
 * upstream, and the answer to the client taken from the upstream's choice.
 */
#include <config.h>

#include <string.h>

#include "parse/alpn.h"

/* The protocols boxy-net can inspect, as (length, bytes), and what each speaks. */
static const struct {
	const char *name;
	enum alpn_proto proto;
} known[] = {
	{ "h2", ALPN_H2 },
	{ "http/1.1", ALPN_HTTP1 },
	{ "http/1.0", ALPN_HTTP1 },
};

/* The entry of known[] for the bytes p[0..n), or -1. */
static int known_index(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].name) == n && memcmp(known[i].name, p, n) == 0)
			return (int)i;
	return -1;
}

/* Is the protocol at known[k] in the wire-form list? */
static bool list_has(const uint8_t *list, size_t len, int k)
{
	size_t off = 0;

	while (off < len) {
		size_t n = list[off];

		if (n == 0 || off + 1 + n > len)
			return false;
		if (known_index(list + off + 1, n) == k)
			return true;
		off += 1 + n;
	}
	return false;
}

/* The inspectable part of the client's ALPN list, in its order (parse/alpn.h). */
int alpn_filter(const uint8_t *ext, size_t len, uint8_t offer[ALPN_OFFER_MAX])
{
	size_t list_len, off = 2, out = 0;

	if (len < 2)
		return -1;
	list_len = (size_t)ext[0] << 8 | ext[1];
	if (list_len == 0 || list_len != len - 2)
		return -1;
	while (off < len) {
		size_t n = ext[off];
		int k;

		if (n == 0 || off + 1 + n > len)
			return -1;
		k = known_index(ext + off + 1, n);
		if (k >= 0 && !list_has(offer, out, k)) {
			/* known[] holds three names of at most 8 bytes: out stays under 32 */
			offer[out++] = (uint8_t)n;
			memcpy(offer + out, ext + off + 1, n);
			out += n;
		}
		off += 1 + n;
	}
	return (int)out;
}

/* The protocol both sides speak, from the upstream's choice (parse/alpn.h). */
enum alpn_proto alpn_choose(bool client_alpn, const uint8_t *offer, size_t offer_len,
			    const uint8_t *sel, size_t sel_len, const uint8_t **name,
			    size_t *name_len)
{
	int k;

	*name = NULL;
	*name_len = 0;
	if (!client_alpn)
		return sel_len == 0 ? ALPN_HTTP1 : ALPN_REFUSE;
	if (offer_len == 0)
		return ALPN_REFUSE;
	if (sel_len == 0) {
		/* An upstream without ALPN speaks HTTP/1.1: answer with the client's HTTP/1 name. */
		for (k = 1; k < (int)(sizeof(known) / sizeof(known[0])); k++) {
			if (list_has(offer, offer_len, k)) {
				*name = (const uint8_t *)known[k].name;
				*name_len = strlen(known[k].name);
				return ALPN_HTTP1;
			}
		}
		return ALPN_REFUSE;
	}
	k = known_index(sel, sel_len);
	if (k < 0 || !list_has(offer, offer_len, k))
		return ALPN_REFUSE;
	*name = (const uint8_t *)known[k].name;
	*name_len = strlen(known[k].name);
	return known[k].proto;
}
