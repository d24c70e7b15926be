/*
 * fuzz-sni.c — libFuzzer target for the TLS ClientHello parser (src/parse/sni.c).
 *
 * Besides not crashing: NEED_MORE must ask for more than it was given, an
 * accepted name must be one dns_name_normalize accepts unchanged, and a
 * refusal must say why and carry no name.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/sni.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sni_result r;
	char norm[DNS_NAME_BUF];
	enum sni_status st = sni_parse(data, size, &r);

	switch (st) {
	case SNI_NEED_MORE:
		if (r.need <= size)
			abort();
		break;
	case SNI_OK:
		if (r.has_sni && (dns_name_normalize(r.host, strlen(r.host), norm) != 0 ||
				  strcmp(norm, r.host) != 0))
			abort();
		if (!r.has_sni && r.host[0] != '\0')
			abort();
		break;
	case SNI_MALFORMED:
		if (r.why == NULL || r.has_sni)
			abort();
		break;
	case SNI_NOT_TLS:
		break;
	default:
		abort();
	}
	return 0;
}
