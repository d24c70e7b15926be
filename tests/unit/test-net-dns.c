/*
 * test-net-dns.c — DNS wire format: queries built byte by byte, every
 * truncation, hostile names and pointer loops, responses checked to the
 * byte, and upstream answers with CNAME chains and compression.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "parse/dns.h"

/* A message under construction. */
struct msg {
	uint8_t b[4096];
	size_t n;
};

/*
 * The parsers always see their input in a buffer of exactly its size,
 * copied to the heap, so AddressSanitizer catches a read one byte past
 * the end (inside struct msg's 4096 bytes it would go unnoticed).
 */
static enum dns_status query_parse_exact(const uint8_t *b, size_t n, struct dns_question *q)
{
	uint8_t *copy = malloc(n ? n : 1);
	enum dns_status st;

	assert_non_null(copy);
	memcpy(copy, b, n);
	st = dns_query_parse(copy, n, q);
	free(copy);
	return st;
}

/* dns_answer_parse on an exact-size copy. */
static enum dns_status answer_parse_exact(const uint8_t *b, size_t n,
					  const struct dns_question *q, struct dns_answer *a)
{
	uint8_t *copy = malloc(n ? n : 1);
	enum dns_status st;

	assert_non_null(copy);
	memcpy(copy, b, n);
	st = dns_answer_parse(copy, n, q, a);
	free(copy);
	return st;
}

static void put8(struct msg *m, unsigned v)
{
	assert_true(m->n < sizeof(m->b));
	m->b[m->n++] = (uint8_t)v;
}

static void put16(struct msg *m, unsigned v)
{
	put8(m, v >> 8);
	put8(m, v & 0xff);
}

static void put32(struct msg *m, uint32_t v)
{
	put16(m, v >> 16);
	put16(m, v & 0xffff);
}

static void putbytes(struct msg *m, const void *p, size_t n)
{
	assert_true(m->n + n <= sizeof(m->b));
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* Writes "a.b.c" as labels, with the terminating zero. */
static void putname(struct msg *m, const char *name)
{
	const char *s = name;

	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		put8(m, (unsigned)l);
		putbytes(m, s, l);
		s += l;
		if (*s == '.')
			s++;
	}
	put8(m, 0);
}

static void header(struct msg *m, unsigned id, unsigned flags, unsigned qd, unsigned an,
		   unsigned ns, unsigned ar)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
}

/* A standard query for name/type, optionally with EDNS. */
static void query(struct msg *m, const char *name, unsigned type, int edns_size)
{
	header(m, 0x1234, 0x0100, 1, 0, 0, edns_size >= 0 ? 1 : 0);
	putname(m, name);
	put16(m, type);
	put16(m, DNS_CLASS_IN);
	if (edns_size >= 0) {
		put8(m, 0);
		put16(m, DNS_TYPE_OPT);
		put16(m, (unsigned)edns_size);
		put32(m, 0);
		put16(m, 0);
	}
}

/* A good query parses; the name is lower-cased. */
static void test_query_good(void **state)
{
	struct msg m;
	struct dns_question q;

	(void)state;
	query(&m, "WWW.Example.COM", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	assert_int_equal(q.id, 0x1234);
	assert_true(q.rd);
	assert_false(q.edns);
	assert_string_equal(q.name, "www.example.com");
	assert_string_equal(q.name_as_sent, "WWW.Example.COM");
	assert_int_equal(q.qtype, DNS_TYPE_A);
	assert_int_equal(q.qclass, DNS_CLASS_IN);

	query(&m, "registry.npmjs.org", DNS_TYPE_AAAA, 4096);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	assert_true(q.edns);
	assert_int_equal(q.edns_size, 4096);
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);

	/* an EDNS size below 512 means 512 */
	query(&m, "a.example", DNS_TYPE_A, 100);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	assert_int_equal(q.edns_size, 512);

	/* the root (priming queries) */
	query(&m, "", 2, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	assert_string_equal(q.name, "");

	/* OPT with options (cookie) */
	query(&m, "a.example", DNS_TYPE_A, -1);
	m.b[11] = 1;
	put8(&m, 0);
	put16(&m, DNS_TYPE_OPT);
	put16(&m, 1232);
	put32(&m, 0);
	put16(&m, 12);
	put16(&m, 10);
	put16(&m, 8);
	putbytes(&m, "\1\2\3\4\5\6\7\10", 8);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	assert_true(q.edns);
}

/* Every truncation of good queries is refused, never read past. */
static void test_query_truncated(void **state)
{
	struct msg m;
	struct dns_question q;

	(void)state;
	for (int edns = -1; edns <= 1232; edns += 1233) {
		query(&m, "deep.sub.example.com", DNS_TYPE_A, edns);
		for (size_t k = 0; k < m.n; k++) {
			enum dns_status st = query_parse_exact(m.b, k, &q);
			if (st == DNS_OK)
				fail_msg("truncated at %zu accepted", k);
			if (k < DNS_HEADER_LEN)
				assert_int_equal(st, DNS_ERR_SHORT);
			if (k >= 2)
				assert_int_equal(q.id, 0x1234);
		}
	}
}

struct hostile_row {
	const char *what;
	enum dns_status want;
	void (*build)(struct msg *m);
};

static void h_response(struct msg *m) { query(m, "a.example", 1, -1); m->b[2] |= 0x80; }
static void h_opcode(struct msg *m) { query(m, "a.example", 1, -1); m->b[2] |= 2 << 3; }
static void h_qd0(struct msg *m) { query(m, "a.example", 1, -1); m->b[5] = 0; }
static void h_qd2(struct msg *m) { query(m, "a.example", 1, -1); m->b[5] = 2; }
static void h_an(struct msg *m) { query(m, "a.example", 1, -1); m->b[7] = 1; }
static void h_ns(struct msg *m) { query(m, "a.example", 1, -1); m->b[9] = 1; }
static void h_ar2(struct msg *m) { query(m, "a.example", 1, 512); m->b[11] = 2; }
static void h_trailing(struct msg *m) { query(m, "a.example", 1, -1); put8(m, 0); }
static void h_pointer(struct msg *m)
{
	header(m, 0x1234, 0x0100, 1, 0, 0, 0);
	put8(m, 1);
	put8(m, 'a');
	put16(m, 0xc00c);       /* pointer back to the start of the question */
	put16(m, 1);
	put16(m, 1);
}
static void h_label64(struct msg *m)
{
	char l[65];
	memset(l, 'a', 64);
	l[64] = '\0';
	query(m, l, 1, -1);
}
static void h_name254(struct msg *m)
{
	/* 63+1+63+1+63+1+62 = 254 characters */
	char n[300];
	memset(n, 'a', sizeof(n));
	n[63] = n[127] = n[191] = '.';
	n[254] = '\0';
	query(m, n, 1, -1);
}
static void h_nul(struct msg *m)
{
	header(m, 0x1234, 0x0100, 1, 0, 0, 0);
	put8(m, 3);
	putbytes(m, "a\0b", 3);
	put8(m, 0);
	put16(m, 1);
	put16(m, 1);
}
static void h_dot(struct msg *m)
{
	header(m, 0x1234, 0x0100, 1, 0, 0, 0);
	put8(m, 3);
	putbytes(m, "a.b", 3);
	put8(m, 0);
	put16(m, 1);
	put16(m, 1);
}
static void h_space(struct msg *m) { query(m, "a b.example", 1, -1); }
static void h_highbit(struct msg *m) { query(m, "ex\xc3\xa4mple.com", 1, -1); }
static void h_ext_label(struct msg *m)
{
	header(m, 0x1234, 0x0100, 1, 0, 0, 0);
	put8(m, 0x41);
	put8(m, 0);
	put16(m, 1);
	put16(m, 1);
}
static void h_huge_label(struct msg *m)
{
	header(m, 0x1234, 0x0100, 1, 0, 0, 0);
	put8(m, 63);            /* claims 63 bytes, has 2 */
	put8(m, 'a');
	put8(m, 0);
}
static void h_opt_owner(struct msg *m)
{
	query(m, "a.example", 1, -1);
	m->b[11] = 1;
	putname(m, "x");
	put16(m, DNS_TYPE_OPT);
	put16(m, 512);
	put32(m, 0);
	put16(m, 0);
}
static void h_opt_type(struct msg *m)
{
	query(m, "a.example", 1, -1);
	m->b[11] = 1;
	put8(m, 0);
	put16(m, DNS_TYPE_A);
	put16(m, 1);
	put32(m, 0);
	put16(m, 0);
}
static void h_opt_rdlen(struct msg *m)
{
	query(m, "a.example", 1, -1);
	m->b[11] = 1;
	put8(m, 0);
	put16(m, DNS_TYPE_OPT);
	put16(m, 512);
	put32(m, 0);
	put16(m, 0xffff);       /* far past the end */
}

static const struct hostile_row hostile_rows[] = {
	{ "a response is not a query", DNS_ERR_NOT_QUERY, h_response },
	{ "opcode STATUS", DNS_ERR_NOT_QUERY, h_opcode },
	{ "no question", DNS_ERR_QDCOUNT, h_qd0 },
	{ "two questions", DNS_ERR_QDCOUNT, h_qd2 },
	{ "answer records in a query", DNS_ERR_RECORDS, h_an },
	{ "authority records in a query", DNS_ERR_RECORDS, h_ns },
	{ "two additional records", DNS_ERR_RECORDS, h_ar2 },
	{ "a byte after the question", DNS_ERR_TRAILING, h_trailing },
	{ "compression pointer in the question", DNS_ERR_NAME, h_pointer },
	{ "64-byte label", DNS_ERR_NAME, h_label64 },
	{ "254-character name", DNS_ERR_NAME, h_name254 },
	{ "NUL inside a label", DNS_ERR_NAME, h_nul },
	{ "dot inside a label", DNS_ERR_NAME, h_dot },
	{ "space in a label", DNS_ERR_NAME, h_space },
	{ "non-ASCII label", DNS_ERR_NAME, h_highbit },
	{ "extended label type 0x40", DNS_ERR_NAME, h_ext_label },
	{ "label longer than the message", DNS_ERR_SHORT, h_huge_label },
	{ "OPT owned by a non-root name", DNS_ERR_RECORDS, h_opt_owner },
	{ "additional record that is not OPT", DNS_ERR_RECORDS, h_opt_type },
	{ "OPT rdata past the end", DNS_ERR_SHORT, h_opt_rdlen },
};

/* Each hostile query is refused with the right reason. */
static void test_query_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hostile_rows) / sizeof(hostile_rows[0]); i++) {
		struct msg m;
		struct dns_question q;
		enum dns_status st;

		hostile_rows[i].build(&m);
		st = query_parse_exact(m.b, m.n, &q);
		if (st != hostile_rows[i].want)
			fail_msg("%s: got '%s', want '%s'", hostile_rows[i].what,
				 dns_status_words(st), dns_status_words(hostile_rows[i].want));
	}
}

/* The longest legal name, 253 characters, is accepted. */
static void test_query_253(void **state)
{
	struct msg m;
	struct dns_question q;
	char n[254];

	(void)state;
	memset(n, 'b', sizeof(n));
	n[63] = n[127] = n[191] = '.';
	n[253] = '\0';
	query(&m, n, 1, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	assert_int_equal(strlen(q.name), 253);
}

/* NXDOMAIN to the byte. */
static void test_build_rcode(void **state)
{
	struct msg m;
	struct dns_question q;
	uint8_t out[512];
	static const uint8_t want[] = {
		0x12, 0x34, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0,
		1, 'A', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 1, 0, 1,
	};      /* the question echoed in the client's case (0x20 randomisation) */
	size_t n;

	(void)state;
	query(&m, "A.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	n = dns_build_rcode(&q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
	assert_int_equal(n, sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	/* too small a buffer: nothing */
	assert_int_equal(dns_build_rcode(&q, DNS_RCODE_REFUSED, out, sizeof(want) - 1), 0);

	/* with EDNS the response carries boxy's OPT */
	query(&m, "a.example", DNS_TYPE_A, 4096);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	n = dns_build_rcode(&q, DNS_RCODE_REFUSED, out, sizeof(out));
	assert_int_equal(n, sizeof(want) + 11);
	assert_int_equal(out[3], 0x80 | DNS_RCODE_REFUSED);
	assert_int_equal(out[11], 1);
	assert_int_equal(out[sizeof(want)], 0);
	assert_int_equal(out[sizeof(want) + 2], DNS_TYPE_OPT);

	/* FORMERR carries just the id */
	assert_int_equal(dns_build_formerr(0xbeef, out, sizeof(out)), 12);
	assert_int_equal(out[0], 0xbe);
	assert_int_equal(out[1], 0xef);
	assert_int_equal(out[3], 0x80 | DNS_RCODE_FORMERR);
	assert_int_equal(out[5], 0);
	assert_int_equal(dns_build_formerr(1, out, 11), 0);
}

static struct net_addr addr(const char *s)
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(s, &a), 0);
	return a;
}

/* An A answer: only IPv4 records, compressed owner, exact bytes; parses back. */
static void test_build_answer(void **state)
{
	struct msg m;
	struct dns_question q;
	struct dns_answer a;
	uint8_t out[512];
	struct net_addr addrs[3] = { addr("104.16.0.34"), addr("2606:4700::1"),
				     addr("104.16.1.34") };
	size_t n, qend = 12 + 11 + 4;

	(void)state;
	query(&m, "a.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	n = dns_build_answer(&q, addrs, 3, 300, out, sizeof(out));
	assert_int_equal(n, qend + 2 * 16);
	assert_int_equal(out[2], 0x81);
	assert_int_equal(out[3], 0x80);
	assert_int_equal(out[7], 2);
	static const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4,
				      104, 16, 0, 34 };
	assert_memory_equal(out + qend, rr, sizeof(rr));
	assert_int_equal(answer_parse_exact(out, n, &q, &a), DNS_OK);
	assert_int_equal(a.rcode, 0);
	assert_int_equal(a.naddrs, 2);
	assert_true(net_addr_equal(&a.addrs[1], &addrs[2]));
	assert_int_equal(a.ttls[0], 300);

	/* AAAA takes the IPv6 one */
	query(&m, "a.example", DNS_TYPE_AAAA, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	n = dns_build_answer(&q, addrs, 3, 60, out, sizeof(out));
	assert_int_equal(n, qend + 28);
	assert_int_equal(answer_parse_exact(out, n, &q, &a), DNS_OK);
	assert_int_equal(a.naddrs, 1);
	assert_true(net_addr_equal(&a.addrs[0], &addrs[1]));

	/* other types get "no data" */
	query(&m, "a.example", 65, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	n = dns_build_answer(&q, addrs, 3, 60, out, sizeof(out));
	assert_int_equal(n, qend);
	assert_int_equal(out[7], 0);
}

/* Records that do not fit are dropped and TC is set. */
static void test_build_answer_limit(void **state)
{
	struct msg m;
	struct dns_question q;
	struct net_addr addrs[40];
	uint8_t out[2048];
	size_t n, qend = 12 + 13 + 4;

	(void)state;
	for (int i = 0; i < 40; i++) {
		uint8_t b[4] = { 8, 8, 0, (uint8_t)i };
		net_addr_set_v4(&addrs[i], b);
	}
	query(&m, "example.com", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(m.b, m.n, &q), DNS_OK);
	n = dns_build_answer(&q, addrs, 40, 60, out, DNS_UDP_MAX);
	assert_int_equal(n, qend + 30 * 16);            /* (512 - 29) / 16 = 30 */
	assert_int_equal(out[7], 30);
	assert_true(out[2] & 0x02);
	/* all fit in a bigger buffer: no TC */
	n = dns_build_answer(&q, addrs, 40, 60, out, sizeof(out));
	assert_int_equal(n, qend + 40 * 16);
	assert_false(out[2] & 0x02);
	/* header and question do not fit */
	assert_int_equal(dns_build_answer(&q, addrs, 40, 60, out, qend - 1), 0);
}

/* An upstream answer: CNAME chain with compression; strangers dropped. */
static void build_upstream(struct msg *m)
{
	header(m, 0x1234, 0x8180, 1, 5, 0, 0);
	putname(m, "www.example.com");                  /* at 12 */
	put16(m, DNS_TYPE_A);
	put16(m, DNS_CLASS_IN);
	/* www.example.com CNAME cdn.example.net */
	put16(m, 0xc00c);
	put16(m, DNS_TYPE_CNAME);
	put16(m, DNS_CLASS_IN);
	put32(m, 3600);
	size_t rdlen_at = m->n;
	put16(m, 0);
	size_t target = m->n;
	put8(m, 3);
	putbytes(m, "cdn", 3);
	put8(m, 7);
	putbytes(m, "example", 7);
	put8(m, 3);
	putbytes(m, "net", 3);
	put8(m, 0);
	m->b[rdlen_at + 1] = (uint8_t)(m->n - target);
	/* cdn.example.net A 1.2.3.4, owner compressed to the CNAME's target */
	put16(m, 0xc000 | (unsigned)target);
	put16(m, DNS_TYPE_A);
	put16(m, DNS_CLASS_IN);
	put32(m, 20);
	put16(m, 4);
	putbytes(m, "\1\2\3\4", 4);
	/* an AAAA in an A answer is ignored */
	put16(m, 0xc000 | (unsigned)target);
	put16(m, DNS_TYPE_AAAA);
	put16(m, DNS_CLASS_IN);
	put32(m, 20);
	put16(m, 16);
	putbytes(m, "\x26\x06\x47\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
	/* a stranger's address the resolver slipped in */
	putname(m, "evil.example");
	put16(m, DNS_TYPE_A);
	put16(m, DNS_CLASS_IN);
	put32(m, 20);
	put16(m, 4);
	putbytes(m, "\6\6\6\6", 4);
	/* TTL with the top bit set counts as zero */
	put16(m, 0xc00c);
	put16(m, DNS_TYPE_A);
	put16(m, DNS_CLASS_IN);
	put32(m, 0x80000001u);
	put16(m, 4);
	putbytes(m, "\5\6\7\10", 4);
}

static void test_answer_parse(void **state)
{
	struct msg m, qm;
	struct dns_question q;
	struct dns_answer a;
	char text[NET_ADDR_STRLEN];

	(void)state;
	query(&qm, "www.example.com", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q), DNS_OK);
	build_upstream(&m);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_OK);
	assert_int_equal(a.naddrs, 2);
	assert_string_equal(net_addr_format(&a.addrs[0], text), "1.2.3.4");
	assert_int_equal(a.ttls[0], 20);
	assert_string_equal(net_addr_format(&a.addrs[1], text), "5.6.7.8");
	assert_int_equal(a.ttls[1], 0);
	assert_false(a.truncated);

	/* every truncation is refused */
	for (size_t k = 0; k < m.n; k++)
		if (answer_parse_exact(m.b, k, &q, &a) == DNS_OK)
			fail_msg("answer truncated at %zu accepted", k);

	/* an answer to another query */
	m.b[1] ^= 1;
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_ID);
	m.b[1] ^= 1;
	m.b[2] &= 0x7f;
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_NOT_QUERY);
	m.b[2] |= 0x80;
	m.b[13] = 'x';      /* www -> xww */
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_ID);
}

/* Compression pointers that loop, point forward or at themselves. */
static void test_answer_pointer_loops(void **state)
{
	struct msg qm, m;
	struct dns_question q;
	struct dns_answer a;

	(void)state;
	query(&qm, "a.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q), DNS_OK);

	/* owner is a pointer to itself */
	memcpy(m.b, qm.b, qm.n);
	m.n = qm.n;
	m.b[2] = 0x81;
	m.b[7] = 1;
	put16(&m, 0xc000 | (unsigned)m.n);
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 4);
	put32(&m, 0x01020304);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_NAME);

	/* owner points forward */
	m.n = qm.n;
	put16(&m, 0xc000 | (unsigned)(m.n + 10));
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 4);
	put32(&m, 0x01020304);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_NAME);

	/* two labels that point at each other: X -> Y -> X */
	m.n = qm.n;
	size_t x = m.n;
	put8(&m, 1);
	put8(&m, 'x');
	put16(&m, 0xc000 | (unsigned)(x + 4));     /* forward: refused at once */
	put8(&m, 1);
	put8(&m, 'y');
	put16(&m, 0xc000 | (unsigned)x);           /* back to x, whose pointer goes forward */
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 4);
	put32(&m, 0x01020304);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_NAME);

	/* a label and a pointer back to that label: the segment rule stops it */
	m.n = qm.n;
	x = m.n;
	put8(&m, 1);
	put8(&m, 'z');
	put16(&m, 0xc000 | (unsigned)x);
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 4);
	put32(&m, 0x01020304);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_NAME);

	/*
	 * A pointer chain that lengthens the name past 253 characters: 70
	 * segments, each a label and a pointer to the one before, carried in
	 * the rdata of a TXT record; the next record's owner points at the
	 * last segment.
	 */
	m.n = qm.n;
	m.b[7] = 2;
	put16(&m, 0xc00c);
	put16(&m, 16);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 70 * 6 - 1);
	size_t prev = 0;
	for (int i = 0; i < 70; i++) {
		size_t here = m.n;
		put8(&m, 3);
		putbytes(&m, "abc", 3);
		if (prev)
			put16(&m, 0xc000 | (unsigned)prev);
		else
			put8(&m, 0);
		prev = here;
	}
	put16(&m, 0xc000 | (unsigned)prev);
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 4);
	put32(&m, 0x01020304);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_NAME);
}

/* Bad rdata lengths, and more addresses than we keep. */
static void test_answer_records(void **state)
{
	struct msg qm, m;
	struct dns_question q;
	struct dns_answer a;

	(void)state;
	query(&qm, "a.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q), DNS_OK);

	memcpy(m.b, qm.b, qm.n);
	m.n = qm.n;
	m.b[2] = 0x81;
	m.b[7] = 1;
	put16(&m, 0xc00c);
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 1);
	put16(&m, 5);
	putbytes(&m, "\1\2\3\4\5", 5);
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_RECORDS);

	m.n = qm.n;
	m.b[6] = 0;
	m.b[7] = 100;
	for (int i = 0; i < 100; i++) {
		put16(&m, 0xc00c);
		put16(&m, 1);
		put16(&m, 1);
		put32(&m, 1);
		put16(&m, 4);
		put32(&m, 0x08080000u | (uint32_t)i);
	}
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_OK);
	assert_int_equal(a.naddrs, DNS_ANSWER_MAX);

	/* rcode and TC are reported */
	m.n = qm.n;
	m.b[6] = m.b[7] = 0;
	m.b[2] = 0x83;
	m.b[3] = 0x83;
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_OK);
	assert_int_equal(a.rcode, DNS_RCODE_NXDOMAIN);
	assert_true(a.truncated);
	assert_int_equal(a.naddrs, 0);
}

/*
 * Only class IN carries addresses: an A or AAAA record of class CH, HS or
 * ANY in the answer section (a hostile upstream's) is skipped, never
 * taken as an address and bound.
 */
static void test_answer_class(void **state)
{
	static const unsigned classes[] = { 3 /* CH */, 4 /* HS */, 255 /* ANY */, 254 /* NONE */ };
	struct msg qm, m;
	struct dns_question q, q6;
	struct dns_answer a;
	char text[NET_ADDR_STRLEN];

	(void)state;
	query(&qm, "a.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q), DNS_OK);
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		/* Only the foreign-class record: no address. */
		memcpy(m.b, qm.b, qm.n);
		m.n = qm.n;
		m.b[2] = 0x81;
		m.b[7] = 1;
		put16(&m, 0xc00c);
		put16(&m, DNS_TYPE_A);
		put16(&m, classes[i]);
		put32(&m, 60);
		put16(&m, 4);
		putbytes(&m, "\x0a\0\0\x01", 4);
		assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_OK);
		if (a.naddrs != 0)
			fail_msg("class %u: an A record taken as an address", classes[i]);
		/* Followed by an IN record: that one alone. */
		m.b[7] = 2;
		put16(&m, 0xc00c);
		put16(&m, DNS_TYPE_A);
		put16(&m, DNS_CLASS_IN);
		put32(&m, 60);
		put16(&m, 4);
		putbytes(&m, "\5\6\7\10", 4);
		assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_OK);
		assert_int_equal(a.naddrs, 1);
		assert_string_equal(net_addr_format(&a.addrs[0], text), "5.6.7.8");
	}
	/* The same for AAAA. */
	query(&qm, "a.example", DNS_TYPE_AAAA, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q6), DNS_OK);
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		memcpy(m.b, qm.b, qm.n);
		m.n = qm.n;
		m.b[2] = 0x81;
		m.b[7] = 1;
		put16(&m, 0xc00c);
		put16(&m, DNS_TYPE_AAAA);
		put16(&m, classes[i]);
		put32(&m, 60);
		put16(&m, 16);
		putbytes(&m, "\xfd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
		assert_int_equal(answer_parse_exact(m.b, m.n, &q6, &a), DNS_OK);
		if (a.naddrs != 0)
			fail_msg("class %u: an AAAA record taken as an address", classes[i]);
	}
}

/*
 * A CNAME whose rdata ends one byte before its name does, in the last record:
 * the name must not be completed from the byte after the message. The byte
 * after it here is a 0 that would complete the name, so a parser that read
 * past the rdata would find a whole name (and say so with a different
 * error); the exact-size copy catches the read itself under ASan.
 */
static void test_answer_cname_cut(void **state)
{
	struct msg qm, m;
	struct dns_question q;
	struct dns_answer a;
	uint8_t *roomy;

	(void)state;
	query(&qm, "a.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q), DNS_OK);
	memcpy(m.b, qm.b, qm.n);
	m.n = qm.n;
	m.b[2] = 0x81;
	m.b[7] = 1;
	put16(&m, 0xc00c);
	put16(&m, DNS_TYPE_CNAME);
	put16(&m, DNS_CLASS_IN);
	put32(&m, 60);
	put16(&m, 16);                          /* "cdn.example.net" needs 17 */
	put8(&m, 3);
	putbytes(&m, "cdn", 3);
	put8(&m, 7);
	putbytes(&m, "example", 7);
	put8(&m, 3);
	putbytes(&m, "net", 3);                 /* its final 0 is not in the rdata */
	assert_int_equal(answer_parse_exact(m.b, m.n, &q, &a), DNS_ERR_SHORT);
	roomy = calloc(1, m.n + 1);             /* the byte after: a 0 */
	assert_non_null(roomy);
	memcpy(roomy, m.b, m.n);
	assert_int_equal(dns_answer_parse(roomy, m.n, &q, &a), DNS_ERR_SHORT);
	free(roomy);
}

/* The answer builder's labels: 63 bytes are a label, 64 are refused (no answer built). */
static void test_build_label_limit(void **state)
{
	struct msg qm;
	struct dns_question q;
	uint8_t out[512];

	(void)state;
	query(&qm, "a.example", DNS_TYPE_A, -1);
	assert_int_equal(query_parse_exact(qm.b, qm.n, &q), DNS_OK);
	for (size_t l = 63; l <= 64; l++) {
		memset(q.name, 'a', l);
		memcpy(q.name + l, ".example", sizeof(".example"));
		memcpy(q.name_as_sent, q.name, l + sizeof(".example"));
		size_t n = dns_build_rcode(&q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
		if (l == 63 && (n == 0 || out[DNS_HEADER_LEN] != 63))
			fail_msg("a 63-byte label: no answer built");
		if (l == 64 && n != 0)
			fail_msg("a 64-byte label: an answer of %zu bytes built", n);
	}
}

struct name_row {
	const char *in;
	size_t len;             /* 0: strlen */
	const char *out;        /* NULL: refused */
};

static const struct name_row name_rows[] = {
	{ "Example.COM", 0, "example.com" },
	{ "example.com.", 0, "example.com" },
	{ "_dmarc.example.com", 0, "_dmarc.example.com" },
	{ "xn--bcher-kva.example", 0, "xn--bcher-kva.example" },
	{ "a", 0, "a" },
	{ "1.2.3.4", 0, "1.2.3.4" },
	{ "", 0, NULL },
	{ ".", 0, NULL },
	{ "..", 0, NULL },
	{ "a..b", 0, NULL },
	{ ".a", 0, NULL },
	{ "a.b..", 0, NULL },
	{ "a b", 0, NULL },
	{ "a\0b", 3, NULL },
	{ "ex\xc3\xa4mple", 0, NULL },
	{ "a/b", 0, NULL },
	{ "a:443", 0, NULL },
	{ "*.example.com", 0, NULL },
};

/* Text names: the shared validator. */
static void test_name_normalize(void **state)
{
	char out[DNS_NAME_BUF], in[300];

	(void)state;
	for (size_t i = 0; i < sizeof(name_rows) / sizeof(name_rows[0]); i++) {
		const struct name_row *r = &name_rows[i];
		size_t len = r->len ? r->len : strlen(r->in);
		int rc = dns_name_normalize(r->in, len, out);

		if (r->out == NULL) {
			if (rc != -1)
				fail_msg("'%s' accepted", r->in);
			assert_string_equal(out, "");
		} else {
			if (rc != 0)
				fail_msg("'%s' refused", r->in);
			assert_string_equal(out, r->out);
		}
	}
	/* label of 63 yes, 64 no; name of 253 yes (with a dot after too), 254 no */
	memset(in, 'a', sizeof(in));
	assert_int_equal(dns_name_normalize(in, 63, out), 0);
	assert_int_equal(dns_name_normalize(in, 64, out), -1);
	in[63] = in[127] = in[191] = '.';
	assert_int_equal(dns_name_normalize(in, 253, out), 0);
	in[253] = '.';
	assert_int_equal(dns_name_normalize(in, 254, out), 0);
	in[253] = 'a';
	assert_int_equal(dns_name_normalize(in, 254, out), -1);
	assert_int_equal(dns_name_normalize(NULL, 0, out), -1);
	assert_string_equal(dns_status_words(DNS_ERR_NAME), "invalid name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_good),
		cmocka_unit_test(test_query_truncated),
		cmocka_unit_test(test_query_hostile),
		cmocka_unit_test(test_query_253),
		cmocka_unit_test(test_build_rcode),
		cmocka_unit_test(test_build_answer),
		cmocka_unit_test(test_build_answer_limit),
		cmocka_unit_test(test_answer_parse),
		cmocka_unit_test(test_answer_pointer_loops),
		cmocka_unit_test(test_answer_class),
		cmocka_unit_test(test_answer_cname_cut),
		cmocka_unit_test(test_build_label_limit),
		cmocka_unit_test(test_answer_records),
		cmocka_unit_test(test_name_normalize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
