/*
 * fuzz-dns.c — libFuzzer target for the DNS wire format (src/parse/dns.c).
 *
 * The input is read three ways: as a payload's query, as an upstream
 * answer to a fixed question, and, when it is a valid query, the responses
 * boxy would build for it are parsed back and must round-trip exactly.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dns_question fixed = {
		.id = 0x1234, .rd = true, .name = "www.example.com",
		.qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN,
	};
	struct dns_question q;
	struct dns_answer a;
	uint8_t out[DNS_EDNS_MAX];
	struct net_addr addrs[3];
	static const uint8_t v4[4] = { 192, 0, 2, 1 }, v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	size_t n;

	(void)dns_answer_parse(data, size, &fixed, &a);
	if (a.naddrs > DNS_ANSWER_MAX)
		abort();

	if (dns_query_parse(data, size, &q) != DNS_OK)
		return 0;
	if (strlen(q.name) > DNS_NAME_MAX)
		abort();
	(void)dns_answer_parse(data, size, &q, &a);

	/* What boxy would answer must parse back as the same answer. */
	n = dns_build_rcode(&q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
	if (n == 0 || dns_answer_parse(out, n, &q, &a) != DNS_OK || a.rcode != DNS_RCODE_NXDOMAIN)
		abort();
	net_addr_set_v4(&addrs[0], v4);
	net_addr_set_v6(&addrs[1], v6);
	net_addr_set_v4(&addrs[2], v4);
	n = dns_build_answer(&q, addrs, 3, 60, out, DNS_UDP_MAX);
	if (n == 0 || n > DNS_UDP_MAX || dns_answer_parse(out, n, &q, &a) != DNS_OK)
		abort();
	if (q.qtype == DNS_TYPE_A && q.qclass == DNS_CLASS_IN && a.naddrs != 2)
		abort();
	if (q.qtype == DNS_TYPE_AAAA && q.qclass == DNS_CLASS_IN && a.naddrs != 1)
		abort();
	return 0;
}
