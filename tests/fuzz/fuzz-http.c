/*
 * fuzz-http.c — libFuzzer target for the HTTP request head parser (src/parse/http.c).
 *
 * Besides not crashing: an accepted head lies within the input and the 8 KiB
 * bound, its host is a valid name or an IP literal, and the verdict on the
 * head alone is the verdict on the whole input (bytes after the head never
 * change the name).
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_result r, again;
	char norm[DNS_NAME_BUF];
	uint8_t bin[16];
	enum http_status st = http_parse(data, size, &r);

	if (st == HTTP_MALFORMED && r.why == NULL)
		abort();
	if (st != HTTP_OK)
		return 0;
	if (r.head_len == 0 || r.head_len > size || r.head_len > HTTP_HEAD_MAX)
		abort();
	if (r.has_host) {
		bool literal = inet_pton(AF_INET6, r.host, bin) == 1 ||
			       inet_pton(AF_INET, r.host, bin) == 1;
		if (literal != r.host_is_ip)
			abort();
		if (!literal && (dns_name_normalize(r.host, strlen(r.host), norm) != 0 ||
				 strcmp(norm, r.host) != 0))
			abort();
	} else if (r.host[0] != '\0') {
		abort();
	}
	if (http_parse(data, r.head_len, &again) != HTTP_OK || strcmp(again.host, r.host) != 0 ||
	    again.port != r.port)
		abort();
	return 0;
}
