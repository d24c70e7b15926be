/*
 * net/name.c — what the first bytes a sandboxed client sent on a held TCP
 * flow name, for NET_FLOW_NAME (allowlist mode) and NET_FLOW_SEEN (public
 * mode): a TLS ClientHello's server_name (parse/sni.c) or an HTTP request's
 * Host (parse/http.c), read in that order. Pure; the rules, and why nothing
 * a payload can arrange comes out as NONE, are in net/gw.h.
 */
#include <config.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net/gw.h"
#include "parse/http.h"
#include "parse/sni.h"

/* Reads the name off the first bytes of a TCP stream (see net/gw.h). */
enum net_name_kind net_flow_read_name(const uint8_t *p, size_t len, char *name, bool *ech,
				      size_t *need)
{
	struct sni_result sr;
	struct http_result hr;

	name[0] = '\0';
	*ech = false;
	if (need != NULL)
		*need = 0;
	switch (sni_parse(p, len, &sr)) {
	case SNI_OK:
		*ech = sr.ech;
		if (sr.has_sni)
			memcpy(name, sr.host, DNS_NAME_BUF);
		return NET_NAME_SNI;
	case SNI_MALFORMED:
		return NET_NAME_MALFORMED;
	case SNI_NEED_MORE:
		if (need != NULL)
			*need = sr.need;
		return NET_NAME_PENDING;
	case SNI_NOT_TLS:
		break;
	}
	switch (http_parse(p, len, &hr)) {
	case HTTP_OK:
		if (hr.has_host)
			memcpy(name, hr.host, DNS_NAME_BUF);
		return NET_NAME_HOST;
	case HTTP_MALFORMED:
		return NET_NAME_MALFORMED;
	case HTTP_NEED_MORE:
		return NET_NAME_PENDING;
	case HTTP_NOT_HTTP:
		break;
	}
	return NET_NAME_NONE;
}

/* What the first bytes name, for NET_FLOW_NAME (see net/gw.h for the rules and why). */
int gw_name_classify(const uint8_t *p, size_t n, bool give_up, char name[DNS_NAME_BUF],
		     bool *ech)
{
	enum net_name_kind kind;

	name[0] = '\0';
	*ech = false;
	if (n == 0)
		return give_up ? NET_NAME_NONE : -1;
	kind = net_flow_read_name(p, n, name, ech, NULL);
	if (kind == NET_NAME_SNI)
		return kind;            /* "" without server_name; ech as offered */
	if (kind == NET_NAME_PENDING) {
		if (!give_up)
			return -1;
		kind = NET_NAME_MALFORMED;
	}
	/* The protocol: only SNI carries the ECH flag; NONE and MALFORMED no name. */
	*ech = false;
	if (kind != NET_NAME_HOST)
		name[0] = '\0';
	return kind;
}
