/*
 * test-net-sni.c — ClientHello parsing: hellos built byte by byte, split
 * over records of every size, truncated at every offset, and broken in
 * each of the ways that could make boxy's name differ from the server's.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "parse/sni.h"

struct msg {
	uint8_t b[40000];
	size_t n;
};

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

static void putbytes(struct msg *m, const void *p, size_t n)
{
	assert_true(m->n + n <= sizeof(m->b));
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* What to put in a ClientHello. */
struct hello {
	const char *sni;            /* NULL: no server_name extension */
	const char *sni2;           /* a second host_name entry */
	bool other_name_type;       /* an entry of name_type 1 before the host_name */
	bool ech;
	bool dup_ext;               /* supported_versions twice */
	bool no_extensions;
	size_t padding;             /* a padding extension of this many bytes */
	unsigned session_id_len;
	unsigned ciphers_len;
	unsigned compression_len;
	unsigned version_major;
	bool trailing;              /* a byte after the extensions */
	size_t sni_len_override;    /* a name length in the entry that lies */
};

static const struct hello plain = {
	.sni = "Example.COM", .session_id_len = 32, .ciphers_len = 4, .compression_len = 1,
	.version_major = 3,
};

/* The ClientHello handshake message (header included). */
static void build_hello(struct msg *m, const struct hello *h)
{
	struct msg ext = { .n = 0 };
	size_t start;

	m->n = 0;
	put8(m, 1);
	put8(m, 0);
	put16(m, 0);                        /* length, patched below */
	start = m->n;
	put8(m, h->version_major);
	put8(m, 3);
	for (int i = 0; i < 32; i++)
		put8(m, (unsigned)i);
	put8(m, h->session_id_len);
	for (unsigned i = 0; i < h->session_id_len; i++)
		put8(m, 0xaa);
	put16(m, h->ciphers_len);
	for (unsigned i = 0; i < h->ciphers_len; i++)
		put8(m, 0x13);
	put8(m, h->compression_len);
	for (unsigned i = 0; i < h->compression_len; i++)
		put8(m, 0);

	if (h->sni) {
		size_t nl = strlen(h->sni), l2 = h->sni2 ? strlen(h->sni2) : 0;
		size_t list = 3 + nl + (h->sni2 ? 3 + l2 : 0) + (h->other_name_type ? 5 : 0);
		put16(&ext, SNI_EXT_SERVER_NAME);
		put16(&ext, (unsigned)list + 2);
		put16(&ext, (unsigned)list);
		if (h->other_name_type) {
			put8(&ext, 1);
			put16(&ext, 2);
			putbytes(&ext, "zz", 2);
		}
		put8(&ext, 0);
		put16(&ext, (unsigned)(h->sni_len_override ? h->sni_len_override : nl));
		putbytes(&ext, h->sni, nl);
		if (h->sni2) {
			put8(&ext, 0);
			put16(&ext, (unsigned)l2);
			putbytes(&ext, h->sni2, l2);
		}
	}
	put16(&ext, 0x002b);                /* supported_versions: TLS 1.3, 1.2 */
	put16(&ext, 5);
	putbytes(&ext, "\x04\x03\x04\x03\x03", 5);
	if (h->dup_ext) {
		put16(&ext, 0x002b);
		put16(&ext, 3);
		putbytes(&ext, "\x02\x03\x04", 3);
	}
	if (h->ech) {
		put16(&ext, SNI_EXT_ECH);
		put16(&ext, 4);
		putbytes(&ext, "\0\1\2\3", 4);
	}
	if (h->padding) {
		put16(&ext, 0x0015);
		put16(&ext, (unsigned)h->padding);
		for (size_t i = 0; i < h->padding; i++)
			put8(&ext, 0);
	}
	if (!h->no_extensions) {
		put16(m, (unsigned)ext.n);
		putbytes(m, ext.b, ext.n);
	}
	if (h->trailing)
		put8(m, 0);
	size_t len = m->n - start;
	m->b[1] = (uint8_t)(len >> 16);
	m->b[2] = (uint8_t)(len >> 8);
	m->b[3] = (uint8_t)len;
}

/* Wraps a handshake message in records of at most chunk bytes. */
static void wrap(struct msg *out, const struct msg *hs, size_t chunk)
{
	out->n = 0;
	for (size_t off = 0; off < hs->n; off += chunk) {
		size_t l = hs->n - off < chunk ? hs->n - off : chunk;
		put8(out, 0x16);
		put8(out, 3);
		put8(out, 1);
		put16(out, (unsigned)l);
		putbytes(out, hs->b + off, l);
	}
}

static enum sni_status parse_hello_with(const struct hello *h, size_t chunk, struct sni_result *r)
{
	static struct msg hs, rec;

	build_hello(&hs, h);
	wrap(&rec, &hs, chunk);
	return sni_parse(rec.b, rec.n, r);
}

/* The plain case, and ECH, and no name. */
static void test_good(void **state)
{
	struct sni_result r;
	struct hello h = plain;

	(void)state;
	assert_int_equal(parse_hello_with(&h, 16384, &r), SNI_OK);
	assert_true(r.has_sni);
	assert_string_equal(r.host, "example.com");
	assert_false(r.ech);

	h.ech = true;
	assert_int_equal(parse_hello_with(&h, 16384, &r), SNI_OK);
	assert_true(r.ech);
	assert_string_equal(r.host, "example.com");

	h = plain;
	h.sni = NULL;
	assert_int_equal(parse_hello_with(&h, 16384, &r), SNI_OK);
	assert_false(r.has_sni);
	assert_string_equal(r.host, "");

	h = plain;
	h.no_extensions = true;
	assert_int_equal(parse_hello_with(&h, 16384, &r), SNI_OK);
	assert_false(r.has_sni);

	h = plain;
	h.other_name_type = true;
	assert_int_equal(parse_hello_with(&h, 16384, &r), SNI_OK);
	assert_string_equal(r.host, "example.com");

	h = plain;
	h.sni = "registry.npmjs.org.";      /* one trailing dot is tolerated and dropped */
	assert_int_equal(parse_hello_with(&h, 16384, &r), SNI_OK);
	assert_string_equal(r.host, "registry.npmjs.org");
}

/* The same hello split over records of 1, 2, 3, 7, 64 and 100 bytes. */
static void test_split_records(void **state)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 100 };
	struct sni_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct hello h = plain;
		h.ech = true;
		if (parse_hello_with(&h, chunks[i], &r) != SNI_OK)
			fail_msg("split in %zu-byte records refused: %s", chunks[i],
				 r.why ? r.why : "");
		assert_string_equal(r.host, "example.com");
		assert_true(r.ech);
	}
}

/* Every prefix asks for more, and says how much; never reads past. */
static void test_truncated_everywhere(void **state)
{
	static struct msg hs, rec;
	static const size_t chunks[] = { 16384, 50 };
	struct hello h = plain;

	(void)state;
	for (size_t c = 0; c < 2; c++) {
		build_hello(&hs, &h);
		wrap(&rec, &hs, chunks[c]);
		for (size_t k = 0; k < rec.n; k++) {
			struct sni_result r;
			uint8_t *copy = test_malloc(k ? k : 1);
			memcpy(copy, rec.b, k);
			enum sni_status st = sni_parse(copy, k, &r);
			test_free(copy);
			if (st != SNI_NEED_MORE)
				fail_msg("prefix %zu: %s", k, sni_status_words(st));
			if (r.need <= k || r.need > rec.n)
				fail_msg("prefix %zu: need %zu of %zu", k, r.need, rec.n);
		}
	}
}

/* Bytes that are not TLS are recognised at once. */
static void test_not_tls(void **state)
{
	static const struct {
		const char *what;
		const char *bytes;
		size_t len;
	} rows[] = {
		{ "HTTP", "GET / HTTP/1.1\r\n", 16 },
		{ "SSH banner", "SSH-2.0-OpenSSH_9.2\r\n", 21 },
		{ "one byte of HTTP", "G", 1 },
		{ "application data record", "\x17\x03\x03\x00\x10", 5 },
		{ "NUL", "\0", 1 },
	};
	struct sni_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (sni_parse((const uint8_t *)rows[i].bytes, rows[i].len, &r) != SNI_NOT_TLS)
			fail_msg("%s not recognised as not TLS", rows[i].what);
	/* an SSLv2-format hello has no SNI and some servers still take it */
	assert_int_equal(sni_parse((const uint8_t *)"\x80\x2e\x01\x03\x01", 5, &r), SNI_MALFORMED);
	/* ... also when its first byte arrives alone: wait for the type, never "not TLS" */
	assert_int_equal(sni_parse((const uint8_t *)"\x80", 1, &r), SNI_NEED_MORE);
	assert_int_equal(r.need, 3);
	assert_int_equal(sni_parse((const uint8_t *)"\x80\x2e", 2, &r), SNI_NEED_MORE);
	assert_int_equal(sni_parse((const uint8_t *)"\x80\x2e\x05", 3, &r), SNI_NOT_TLS);
	/* a handshake record is TLS whatever its record version says */
	assert_int_equal(sni_parse((const uint8_t *)"\x16\x02\x00", 3, &r), SNI_NEED_MORE);
	assert_int_equal(sni_parse((const uint8_t *)"\x16\x03\x05", 3, &r), SNI_NEED_MORE);
	/* nothing yet: need a record header */
	assert_int_equal(sni_parse((const uint8_t *)"", 0, &r), SNI_NEED_MORE);
	assert_int_equal(r.need, 5);
	assert_int_equal(sni_parse((const uint8_t *)"\x16\x03", 2, &r), SNI_NEED_MORE);
	assert_int_equal(r.need, 5);
}

struct bad_row {
	const char *what;
	struct hello h;
};

/* Hellos broken in their body. */
static void test_malformed_hello(void **state)
{
	char longname[300];
	struct bad_row rows[] = {
		{ "duplicated extension", plain },
		{ "two host_names", plain },
		{ "empty host_name", plain },
		{ "host_name with an empty label", plain },
		{ "host_name with a NUL", plain },
		{ "host_name of 254 characters", plain },
		{ "host_name with a space", plain },
		{ "host_name length past its list", plain },
		{ "trailing byte after the extensions", plain },
		{ "session id of 33 bytes", plain },
		{ "odd cipher suites length", plain },
		{ "no cipher suites", plain },
		{ "no compression methods", plain },
		{ "client version 2.x", plain },
	};
	struct sni_result r;

	(void)state;
	memset(longname, 'a', sizeof(longname));
	longname[63] = longname[127] = longname[191] = '.';
	longname[254] = '\0';
	rows[0].h.dup_ext = true;
	rows[1].h.sni2 = "other.example";
	rows[2].h.sni = "";
	rows[3].h.sni = "a..example.com";
	rows[4].h.sni = "evil.example\0";       /* strlen stops at the NUL: patched below */
	rows[5].h.sni = longname;
	rows[6].h.sni = "a b.example";
	rows[7].h.sni_len_override = 200;
	rows[8].h.trailing = true;
	rows[9].h.session_id_len = 33;
	rows[10].h.ciphers_len = 3;
	rows[11].h.ciphers_len = 0;
	rows[12].h.compression_len = 0;
	rows[13].h.version_major = 2;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		static struct msg hs, rec;
		build_hello(&hs, &rows[i].h);
		if (i == 4) {
			/* put a NUL inside the name: "evil.example" -> "evil\0example" */
			uint8_t *at = memmem(hs.b, hs.n, "evil.example", 12);
			assert_non_null(at);
			at[4] = '\0';
		}
		wrap(&rec, &hs, 16384);
		enum sni_status st = sni_parse(rec.b, rec.n, &r);
		if (st != SNI_MALFORMED)
			fail_msg("%s: %s", rows[i].what, sni_status_words(st));
		assert_non_null(r.why);
		assert_false(r.has_sni);
	}
}

/* The first record's version is ignored, as servers ignore it. */
static void test_record_version_ignored(void **state)
{
	static struct msg hs, rec;
	struct sni_result r;
	struct hello h = plain;

	(void)state;
	build_hello(&hs, &h);
	wrap(&rec, &hs, 16384);
	rec.b[1] = 3;
	rec.b[2] = 5;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_OK);
	assert_string_equal(r.host, "example.com");
	rec.b[1] = 0;
	rec.b[2] = 0;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_OK);
}

/* Records broken around the hello. */
static void test_malformed_records(void **state)
{
	static struct msg hs, rec;
	struct sni_result r;
	struct hello h = plain;

	(void)state;
	build_hello(&hs, &h);

	/* a zero-length record */
	wrap(&rec, &hs, 16384);
	rec.b[3] = rec.b[4] = 0;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_MALFORMED);

	/* a record longer than 2^14 */
	rec.b[3] = 0x40;
	rec.b[4] = 0x01;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_MALFORMED);

	/* the second record is not a handshake record */
	wrap(&rec, &hs, 20);
	rec.b[25] = 0x17;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_MALFORMED);
	rec.b[25] = 0x16;
	rec.b[26] = 0x02;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_MALFORMED);

	/* a ServerHello is not a ClientHello, and is refused before it completes */
	wrap(&rec, &hs, 16384);
	rec.b[5] = 2;
	assert_int_equal(sni_parse(rec.b, 6, &r), SNI_MALFORMED);

	/* a handshake length beyond the 16 KiB cap */
	wrap(&rec, &hs, 16384);
	rec.b[6] = 0x01;
	assert_int_equal(sni_parse(rec.b, 9, &r), SNI_MALFORMED);
	rec.b[6] = 0xff;
	rec.b[7] = rec.b[8] = 0xff;
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_MALFORMED);
}

/* The 16 KiB bound: a hello just under it passes over two records, one over fails. */
static void test_size_bound(void **state)
{
	static struct msg hs, rec;
	struct sni_result r;
	struct hello h = plain;
	size_t base;

	(void)state;
	build_hello(&hs, &h);
	base = hs.n + 4;                    /* the padding extension's own header */
	h.padding = SNI_HELLO_MAX - base;
	build_hello(&hs, &h);
	assert_int_equal(hs.n, SNI_HELLO_MAX);
	wrap(&rec, &hs, 16384);
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_OK);
	assert_string_equal(r.host, "example.com");
	wrap(&rec, &hs, 9000);
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_OK);

	h.padding++;
	build_hello(&hs, &h);
	wrap(&rec, &hs, 9000);
	assert_int_equal(sni_parse(rec.b, rec.n, &r), SNI_MALFORMED);
	assert_string_equal(r.why, "ClientHello too large");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_split_records),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_not_tls),
		cmocka_unit_test(test_malformed_hello),
		cmocka_unit_test(test_record_version_ignored),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_size_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
