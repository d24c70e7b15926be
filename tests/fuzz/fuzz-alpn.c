/*
 * fuzz-alpn.c — libFuzzer target for what TLS inspection reads of a
 * ClientHello on its own (OpenSSL parses the rest): the ALPN list
 * (parse/alpn.c) and the server_name extension (parse/sni.c's
 * sni_parse_server_name), both fed the same bytes.
 *
 * Besides not crashing: the offer upstream is well formed, holds only
 * protocols the gate reads, each once, never more than ALPN_OFFER_MAX
 * bytes; whatever the upstream answers, the client is answered with one of
 * them or refused; an accepted host_name is one dns_name_normalize keeps.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/alpn.h"
#include "parse/sni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Is p[0..n) one of the names boxy-net inspects? */
static int known(const uint8_t *p, size_t n)
{
	return (n == 2 && memcmp(p, "h2", 2) == 0) || (n == 8 && memcmp(p, "http/1.1", 8) == 0) ||
	       (n == 8 && memcmp(p, "http/1.0", 8) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t offer[ALPN_OFFER_MAX + 8];
	struct sni_result r;
	char norm[DNS_NAME_BUF];
	int n;

	memset(offer, 0xa5, sizeof(offer));
	n = alpn_filter(data, size, offer);
	if (n > ALPN_OFFER_MAX || offer[ALPN_OFFER_MAX] != 0xa5)
		abort();
	if (n > 0) {
		size_t off = 0, count = 0;

		while (off < (size_t)n) {
			size_t l = offer[off];

			if (l == 0 || off + 1 + l > (size_t)n || !known(offer + off + 1, l))
				abort();
			off += 1 + l;
			count++;
		}
		if (count > 3)
			abort();
		/* every answer the upstream could give, from the input's own bytes */
		for (size_t cut = 0; cut <= size && cut < 16; cut++) {
			const uint8_t *name;
			size_t name_len;
			enum alpn_proto p = alpn_choose(true, offer, (size_t)n, data, cut, &name,
							&name_len);

			if (p == ALPN_REFUSE ? name != NULL : (p != ALPN_HTTP1 && p != ALPN_H2))
				abort();
			if (name && !known(name, name_len))
				abort();
		}
	}
	switch (sni_parse_server_name(data, size, &r)) {
	case SNI_OK:
		if (r.has_sni && (dns_name_normalize(r.host, strlen(r.host), norm) != 0 ||
				  strcmp(norm, r.host) != 0))
			abort();
		break;
	case SNI_MALFORMED:
		if (!r.why || r.has_sni)
			abort();
		break;
	default:
		abort();
	}
	return 0;
}
