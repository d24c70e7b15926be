/*
 * parse/dns.h — DNS wire format for boxy's resolver: the payload's query in,
 * a locally built response out, and the A/AAAA records of an upstream
 * answer for the binding table.
 *
 * The query comes from the payload and is hostile; the upstream answer is
 * less so but is parsed as if it were (its compression pointers are
 * followed only backwards, a bounded number of times). Nothing upstream
 * sent is ever forwarded: the response to the payload is rebuilt from the
 * addresses policy kept, so nothing but A/AAAA records reaches it.
 *
 * Names everywhere are lower-case text without the trailing dot, at most
 * DNS_NAME_MAX characters, labels of letters, digits, '-' and '_'.
 * Pure functions, no allocation.
 */
#ifndef BOXY_NET_DNS_H
#define BOXY_NET_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/netaddr.h"

#define DNS_NAME_MAX     253
#define DNS_NAME_BUF     (DNS_NAME_MAX + 1)
#define DNS_HEADER_LEN   12
#define DNS_UDP_MAX      512        /* response size without EDNS */
#define DNS_EDNS_MAX     1232       /* what boxy advertises and honours at most */
#define DNS_ANSWER_MAX   64         /* addresses kept from one upstream answer */

#define DNS_TYPE_A       1
#define DNS_TYPE_CNAME   5
#define DNS_TYPE_AAAA    28
#define DNS_TYPE_OPT     41
#define DNS_CLASS_IN     1

#define DNS_RCODE_NOERROR  0
#define DNS_RCODE_FORMERR  1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP   4
#define DNS_RCODE_REFUSED  5

enum dns_status {
	DNS_OK = 0,
	DNS_ERR_SHORT,          /* shorter than a header, or a record runs past the end */
	DNS_ERR_NOT_QUERY,      /* QR set (a response), or an opcode other than QUERY */
	DNS_ERR_QDCOUNT,        /* not exactly one question */
	DNS_ERR_NAME,           /* a name breaks the label rules, or uses a pointer in a query */
	DNS_ERR_RECORDS,        /* answer/authority records in a query, or a bad OPT */
	DNS_ERR_TRAILING,       /* bytes after the last record */
	DNS_ERR_ID,             /* (answers) id or question differs from the query's */
};

/* One parsed query. */
struct dns_question {
	uint16_t id;
	bool rd;                    /* recursion desired, echoed back */
	bool edns;                  /* an OPT record was present */
	uint16_t edns_size;         /* its UDP payload size (>= 512) */
	char name[DNS_NAME_BUF];    /* lower-case; "" for the root */
	char name_as_sent[DNS_NAME_BUF];   /* the same name in the client's case, echoed back */
	uint16_t qtype, qclass;
};

/* Addresses taken from an upstream answer. */
struct dns_answer {
	uint8_t rcode;
	bool truncated;             /* TC was set: the caller should retry over TCP */
	size_t naddrs;
	struct net_addr addrs[DNS_ANSWER_MAX];
	uint32_t ttls[DNS_ANSWER_MAX];
};

/* Words for a status, for the audit log. */
const char *dns_status_words(enum dns_status s);

/*
 * Validate and lower-case a host name given as text of length len (one
 * trailing dot allowed and dropped) into out (DNS_NAME_BUF bytes). Shared by
 * the SNI and Host parsers. Returns 0, or -1 (out is then "").
 */
int dns_name_normalize(const char *in, size_t len, char *out);

/*
 * Parse a query: a header with QR=0 and opcode QUERY, exactly one question
 * whose name has no compression pointer, no answer or authority records,
 * at most one additional record which must be OPT. Returns DNS_OK or the
 * first problem; q->id is filled whenever len >= 2 so that a FORMERR can
 * still carry the right id.
 */
enum dns_status dns_query_parse(const uint8_t *p, size_t len, struct dns_question *q);

/*
 * Build a response to q with the given rcode and no records (NXDOMAIN,
 * REFUSED, SERVFAIL, or NOERROR for "no data"). Returns its length, or 0 if
 * cap is too small.
 */
size_t dns_build_rcode(const struct dns_question *q, uint8_t rcode, uint8_t *out, size_t cap);

/*
 * Build a FORMERR response carrying only the id (for a query too broken to
 * echo its question). Returns 12, or 0 if cap < 12.
 */
size_t dns_build_formerr(uint16_t id, uint8_t *out, size_t cap);

/*
 * Build a NOERROR answer to q with one record per address of the family
 * q->qtype asks for (A: IPv4, AAAA: IPv6; others are skipped), each with
 * ttl. Honours the size limit (512, or the query's EDNS size up to
 * DNS_EDNS_MAX, and cap): records that do not fit are dropped and TC set.
 * Returns the length, or 0 if not even the header and question fit.
 */
size_t dns_build_answer(const struct dns_question *q, const struct net_addr *addrs,
			size_t naddrs, uint32_t ttl, uint8_t *out, size_t cap);

/*
 * Parse an upstream response to q: same id and question, then every A/AAAA
 * record whose owner is q->name or a name q->name reaches through the
 * answer's CNAME chain (at most 16 links). Compression pointers are
 * followed backwards only and at most 64 times per name. Records beyond
 * DNS_ANSWER_MAX are ignored. Returns DNS_OK or the first problem.
 */
enum dns_status dns_answer_parse(const uint8_t *p, size_t len, const struct dns_question *q,
				 struct dns_answer *a);

#endif
