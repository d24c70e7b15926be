/*
 * parse/dns.c — DNS wire format (see parse/dns.h).
 *
 * Every read is checked against the end of the message before it happens;
 * the cursor is a size_t offset, never a pointer that could run past the
 * buffer. Names are decoded into a fixed DNS_NAME_BUF buffer and refused
 * the moment they would exceed it.
 *
 * Compression pointers: a query's question never needs one (it is the
 * first name in the message), so a pointer there is refused outright. In
 * an upstream answer a pointer must land strictly before the start of the
 * segment that contains it. Each jump therefore lowers that bound, which
 * makes a loop impossible whatever the bytes say; a hop limit on top keeps
 * the work per name small.
 */
#include "config.h"

#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/bytes.h"
#include "parse/dns.h"

#define MAX_POINTER_HOPS 64
#define MAX_CNAME_CHAIN  16

/* Words for a parse status. */
const char *dns_status_words(enum dns_status s)
{
	switch (s) {
	case DNS_OK: return "ok";
	case DNS_ERR_SHORT: return "truncated message";
	case DNS_ERR_NOT_QUERY: return "not a standard query";
	case DNS_ERR_QDCOUNT: return "not exactly one question";
	case DNS_ERR_NAME: return "invalid name";
	case DNS_ERR_RECORDS: return "unexpected records";
	case DNS_ERR_TRAILING: return "trailing bytes";
	case DNS_ERR_ID: return "answer does not match the query";
	}
	return "unknown";
}

/* Lower-cases one label byte, or returns 0 if it may not appear in a name. */
static char label_char(uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
		return (char)c;
	return 0;
}

/* Validates and lower-cases a text name (see the header). */
int dns_name_normalize(const char *in, size_t len, char *out)
{
	size_t label = 0;

	out[0] = '\0';
	if (in == NULL)
		return -1;
	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len == 0 || len > DNS_NAME_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '.') {
			if (label == 0)
				goto bad;
			label = 0;
			out[i] = '.';
			continue;
		}
		char c = label_char((uint8_t)in[i]);
		if (c == 0 || ++label > 63)
			goto bad;
		out[i] = c;
	}
	if (label == 0)
		goto bad;
	out[len] = '\0';
	return 0;
bad:
	out[0] = '\0';
	return -1;
}

/*
 * Decodes the wire name at *off into out (DNS_NAME_BUF), lower-cased.
 * With allow_ptr, follows compression pointers under the strictly-backwards
 * rule. On success *off is the offset just past the name as it appears at
 * the original position.
 */
static enum dns_status read_name(const uint8_t *p, size_t len, size_t *off, bool allow_ptr,
				 char *out, char *raw)
{
	size_t pos = *off, outlen = 0, limit = *off, end = 0;
	unsigned hops = 0;
	bool jumped = false;

	out[0] = '\0';
	if (raw != NULL)
		raw[0] = '\0';
	for (;;) {
		if (pos >= len)
			return DNS_ERR_SHORT;
		uint8_t l = p[pos];

		if ((l & 0xc0) == 0xc0) {
			if (!allow_ptr)
				return DNS_ERR_NAME;
			if (pos + 1 >= len)
				return DNS_ERR_SHORT;
			size_t target = (size_t)(l & 0x3f) << 8 | p[pos + 1];
			if (target >= limit || ++hops > MAX_POINTER_HOPS)
				return DNS_ERR_NAME;
			if (!jumped) {
				end = pos + 2;
				jumped = true;
			}
			pos = limit = target;
			continue;
		}
		if (l & 0xc0)           /* 0x40 and 0x80: extended label types, obsolete */
			return DNS_ERR_NAME;
		if (l == 0) {
			pos++;
			break;
		}
		if (pos + 1 + l > len)
			return DNS_ERR_SHORT;
		if (outlen + (outlen ? 1 : 0) + l > DNS_NAME_MAX)
			return DNS_ERR_NAME;
		if (outlen) {
			if (raw != NULL)
				raw[outlen] = '.';
			out[outlen++] = '.';
		}
		for (size_t i = 0; i < l; i++) {
			char c = label_char(p[pos + 1 + i]);
			if (c == 0) {
				out[0] = '\0';
				if (raw != NULL)
					raw[0] = '\0';
				return DNS_ERR_NAME;
			}
			if (raw != NULL)
				raw[outlen] = (char)p[pos + 1 + i];
			out[outlen++] = c;
		}
		out[outlen] = '\0';
		if (raw != NULL)
			raw[outlen] = '\0';
		pos += 1 + (size_t)l;
	}
	*off = jumped ? end : pos;
	return DNS_OK;
}

/* Parses a payload's query (see the header). */
enum dns_status dns_query_parse(const uint8_t *p, size_t len, struct dns_question *q)
{
	size_t off = DNS_HEADER_LEN;
	enum dns_status st;

	memset(q, 0, sizeof(*q));
	if (len >= 2)
		q->id = get16(p);
	if (len < DNS_HEADER_LEN)
		return DNS_ERR_SHORT;
	q->rd = p[2] & 0x01;
	if ((p[2] & 0x80) || ((p[2] >> 3) & 0x0f) != 0)
		return DNS_ERR_NOT_QUERY;
	if (get16(p + 4) != 1)
		return DNS_ERR_QDCOUNT;
	if (get16(p + 6) != 0 || get16(p + 8) != 0 || get16(p + 10) > 1)
		return DNS_ERR_RECORDS;

	st = read_name(p, len, &off, false, q->name, q->name_as_sent);
	if (st != DNS_OK)
		return st;
	if (len - off < 4)
		return DNS_ERR_SHORT;
	q->qtype = get16(p + off);
	q->qclass = get16(p + off + 2);
	off += 4;

	if (get16(p + 10) == 1) {
		/* The one additional record may only be EDNS's OPT, owned by the root. */
		if (off >= len)
			return DNS_ERR_SHORT;
		if (p[off] != 0)
			return DNS_ERR_RECORDS;
		off++;
		if (len - off < 10)
			return DNS_ERR_SHORT;
		if (get16(p + off) != DNS_TYPE_OPT)
			return DNS_ERR_RECORDS;
		uint16_t size = get16(p + off + 2);
		uint16_t rdlen = get16(p + off + 8);
		off += 10;
		if (len - off < rdlen)
			return DNS_ERR_SHORT;
		off += rdlen;
		q->edns = true;
		q->edns_size = size < DNS_UDP_MAX ? DNS_UDP_MAX : size;
	}
	if (off != len)
		return DNS_ERR_TRAILING;
	return DNS_OK;
}

/* Writes the header and question; returns the offset after them, or 0. */
static size_t put_head(const struct dns_question *q, uint8_t rcode, bool tc, uint16_t ancount,
		       uint8_t *out, size_t cap)
{
	/*
	 * Echo the question as the client spelled it: resolvers using 0x20
	 * case randomisation compare the case of the answer's question. The
	 * spelling is used only when it is the same name as q->name.
	 */
	const char *name = strcasecmp(q->name_as_sent, q->name) == 0 ? q->name_as_sent : q->name;
	size_t namelen = name[0] ? strlen(name) + 2 : 1;
	size_t need = DNS_HEADER_LEN + namelen + 4 + (q->edns ? 11 : 0);
	size_t off = DNS_HEADER_LEN, start = 0;

	if (need > cap || namelen > DNS_NAME_MAX + 2)
		return 0;
	put16(out, q->id);
	out[2] = (uint8_t)(0x80 | (tc ? 0x02 : 0) | (q->rd ? 0x01 : 0));
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));      /* RA: we do recurse */
	put16(out + 4, 1);
	put16(out + 6, ancount);
	put16(out + 8, 0);
	put16(out + 10, q->edns ? 1 : 0);

	/* Labels from the text form: each '.' becomes the next label's length. */
	if (name[0]) {
		for (size_t i = 0;; i++) {
			char c = name[i];
			if (c == '.' || c == '\0') {
				size_t l = i - start;
				if (l == 0 || l > 63)
					return 0;
				out[off++] = (uint8_t)l;
				memcpy(out + off, name + start, l);
				off += l;
				start = i + 1;
				if (c == '\0')
					break;
			}
		}
	}
	out[off++] = 0;
	put16(out + off, q->qtype);
	put16(out + off + 2, q->qclass);
	return off + 4;
}

/* Appends the OPT record boxy advertises. */
static size_t put_opt(uint8_t *out, size_t off)
{
	out[off] = 0;
	put16(out + off + 1, DNS_TYPE_OPT);
	put16(out + off + 3, DNS_EDNS_MAX);
	memset(out + off + 5, 0, 6);            /* ext-rcode, version, flags, rdlen */
	return off + 11;
}

/* Builds a response with no records. */
size_t dns_build_rcode(const struct dns_question *q, uint8_t rcode, uint8_t *out, size_t cap)
{
	size_t off = put_head(q, rcode, false, 0, out, cap);

	if (off == 0)
		return 0;
	return q->edns ? put_opt(out, off) : off;
}

/* Builds a bare FORMERR. */
size_t dns_build_formerr(uint16_t id, uint8_t *out, size_t cap)
{
	if (cap < DNS_HEADER_LEN)
		return 0;
	memset(out, 0, DNS_HEADER_LEN);
	put16(out, id);
	out[2] = 0x80;
	out[3] = 0x80 | DNS_RCODE_FORMERR;
	return DNS_HEADER_LEN;
}

/* Builds an answer with A or AAAA records (see the header). */
size_t dns_build_answer(const struct dns_question *q, const struct net_addr *addrs,
			size_t naddrs, uint32_t ttl, uint8_t *out, size_t cap)
{
	int family = q->qtype == DNS_TYPE_A ? AF_INET : q->qtype == DNS_TYPE_AAAA ? AF_INET6 : 0;
	size_t rdlen = family == AF_INET ? 4 : 16, rrlen = 12 + rdlen;
	size_t off, reserve = q->edns ? 11 : 0;
	uint16_t count = 0;
	bool tc = false;

	off = put_head(q, DNS_RCODE_NOERROR, false, 0, out, cap);
	if (off == 0)
		return 0;
	for (size_t i = 0; i < naddrs && family != 0; i++) {
		if (addrs[i].family != family)
			continue;
		if (off + rrlen + reserve > cap || count == UINT16_MAX) {
			tc = true;
			break;
		}
		put16(out + off, 0xc000 | DNS_HEADER_LEN);  /* the question's name */
		put16(out + off + 2, q->qtype);
		put16(out + off + 4, DNS_CLASS_IN);
		put16(out + off + 6, (uint16_t)(ttl >> 16));
		put16(out + off + 8, (uint16_t)ttl);
		put16(out + off + 10, (uint16_t)rdlen);
		memcpy(out + off + 12, addrs[i].a, rdlen);
		off += rrlen;
		count++;
	}
	put16(out + 6, count);
	if (tc)
		out[2] |= 0x02;
	return q->edns ? put_opt(out, off) : off;
}

/* One record remembered while reading an answer section. */
struct pending_rr {
	char owner[DNS_NAME_BUF];
	struct net_addr addr;
	uint32_t ttl;
};

struct pending_cname {
	char owner[DNS_NAME_BUF];
	char target[DNS_NAME_BUF];
};

/* Is name in the set of names reached from the question? */
static bool in_chain(char chain[][DNS_NAME_BUF], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(chain[i], name) == 0)
			return true;
	return false;
}

/* Parses an upstream answer (see the header). */
enum dns_status dns_answer_parse(const uint8_t *p, size_t len, const struct dns_question *q,
				 struct dns_answer *a)
{
	struct pending_rr rrs[DNS_ANSWER_MAX];
	struct pending_cname cnames[MAX_CNAME_CHAIN];
	char chain[MAX_CNAME_CHAIN + 1][DNS_NAME_BUF];
	char name[DNS_NAME_BUF];
	size_t off = DNS_HEADER_LEN, nrr = 0, ncname = 0, nchain;
	uint16_t ancount;
	enum dns_status st;

	memset(a, 0, sizeof(*a));
	if (len < DNS_HEADER_LEN)
		return DNS_ERR_SHORT;
	if (get16(p) != q->id)
		return DNS_ERR_ID;
	if (!(p[2] & 0x80) || ((p[2] >> 3) & 0x0f) != 0)
		return DNS_ERR_NOT_QUERY;
	a->truncated = p[2] & 0x02;
	a->rcode = p[3] & 0x0f;
	if (get16(p + 4) != 1)
		return DNS_ERR_QDCOUNT;
	ancount = get16(p + 6);

	st = read_name(p, len, &off, true, name, NULL);
	if (st != DNS_OK)
		return st;
	if (len - off < 4)
		return DNS_ERR_SHORT;
	if (strcmp(name, q->name) != 0 || get16(p + off) != q->qtype ||
	    get16(p + off + 2) != q->qclass)
		return DNS_ERR_ID;
	off += 4;

	/* Each record is at least 11 bytes, so the loop is bounded by len too. */
	for (unsigned i = 0; i < ancount; i++) {
		char owner[DNS_NAME_BUF];

		st = read_name(p, len, &off, true, owner, NULL);
		if (st != DNS_OK)
			return st;
		if (len - off < 10)
			return DNS_ERR_SHORT;
		uint16_t type = get16(p + off), class = get16(p + off + 2);
		uint32_t ttl = get32(p + off + 4);
		uint16_t rdlen = get16(p + off + 8);
		off += 10;
		if (len - off < rdlen)
			return DNS_ERR_SHORT;
		size_t rdata = off;
		off += rdlen;

		if (ttl & 0x80000000u)          /* RFC 2181 §8: treat as zero */
			ttl = 0;
		if (class != DNS_CLASS_IN)
			continue;
		if (type == DNS_TYPE_CNAME) {
			size_t t = rdata;
			if (ncname == MAX_CNAME_CHAIN)
				continue;
			st = read_name(p, rdata + rdlen, &t, true, cnames[ncname].target, NULL);
			if (st != DNS_OK)
				return st;
			if (t != rdata + rdlen)
				return DNS_ERR_RECORDS;
			memcpy(cnames[ncname].owner, owner, DNS_NAME_BUF);
			ncname++;
		} else if ((type == DNS_TYPE_A && rdlen == 4) ||
			   (type == DNS_TYPE_AAAA && rdlen == 16)) {
			if ((q->qtype == DNS_TYPE_A || q->qtype == DNS_TYPE_AAAA) &&
			    type != q->qtype)
				continue;
			if (nrr == DNS_ANSWER_MAX)
				continue;
			memcpy(rrs[nrr].owner, owner, DNS_NAME_BUF);
			if (type == DNS_TYPE_A)
				net_addr_set_v4(&rrs[nrr].addr, p + rdata);
			else
				net_addr_set_v6(&rrs[nrr].addr, p + rdata);
			rrs[nrr].ttl = ttl;
			nrr++;
		} else if (type == DNS_TYPE_A || type == DNS_TYPE_AAAA) {
			return DNS_ERR_RECORDS;
		}
	}

	/* Names reachable from the question through CNAMEs, in any order. */
	memcpy(chain[0], q->name, DNS_NAME_BUF);
	nchain = 1;
	for (bool grew = true; grew && nchain <= MAX_CNAME_CHAIN;) {
		grew = false;
		for (size_t i = 0; i < ncname && nchain <= MAX_CNAME_CHAIN; i++) {
			if (in_chain(chain, nchain, cnames[i].owner) &&
			    !in_chain(chain, nchain, cnames[i].target)) {
				memcpy(chain[nchain++], cnames[i].target, DNS_NAME_BUF);
				grew = true;
			}
		}
	}

	for (size_t i = 0; i < nrr; i++) {
		if (!in_chain(chain, nchain, rrs[i].owner))
			continue;
		a->addrs[a->naddrs] = rrs[i].addr;
		a->ttls[a->naddrs] = rrs[i].ttl;
		a->naddrs++;
	}
	return DNS_OK;
}
