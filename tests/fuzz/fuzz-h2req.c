/*
 * fuzz-h2req.c — libFuzzer target for an HTTP/2 request's target
 * (parse/h2req.c), as net/h2.c reads it before the gate. The input is split
 * at NUL bytes into :method, :path, :authority and Host (a field of a single
 * 0x01 byte is absent).
 *
 * Besides not crashing: an accepted request has a path that starts with "/"
 * but not "//" (or is OPTIONS's "*", or CONNECT's none), a host of bytes a
 * host name can hold, lower-case, and never userinfo; a refusal says why.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/h2req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *f[4] = { NULL, NULL, NULL, NULL };
	struct h2_target t;
	size_t start = 0, k = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t i = 0; i <= size && k < 4; i++) {
		if (i == size || buf[i] == '\0') {
			buf[i] = '\0';
			f[k++] = strcmp(buf + start, "\x01") == 0 ? NULL : buf + start;
			start = i + 1;
		}
	}
	if (h2_target_parse(f[0], f[1], f[2], f[3], &t) < 0) {
		if (!t.why)
			abort();
	} else {
		if (!t.connect && !(f[1][0] == '/' && f[1][1] != '/') && strcmp(f[1], "*") != 0)
			abort();
		if (t.connect != (strcmp(f[0], "CONNECT") == 0))
			abort();
		if (t.path_len > (f[1] ? strlen(f[1]) : 0))
			abort();
		for (const char *p = t.host; *p; p++)
			if (*p <= ' ' || *p >= 0x7f || *p == '@' || (*p >= 'A' && *p <= 'Z') ||
			    *p == '/')
				abort();
		if (t.has_host != (f[2] != NULL || f[3] != NULL))
			abort();
	}
	free(buf);
	return 0;
}
