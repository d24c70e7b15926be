/*
 * test-tls.c — the certificates of TLS inspection (common/tlsca.c) and the
 * ALPN choice (parse/alpn.c), an HTTP/2 request's target (parse/h2req.c) and the
 * server_name extension read alone (parse/sni.c, the check of OpenSSL's reading).
 *
 * The CA and its leaves are checked the way a client in the sandbox checks
 * them: OpenSSL's X509_verify_cert with the session CA as the only trust
 * anchor and the host name set. What the name constraints must refuse (a
 * leaf for a name that is not inspected, a leaf for an IP address) is minted
 * with the CA's own key and must still fail verification.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/x509v3.h>

#include "common/buf.h"
#include "common/tlsca.h"
#include "parse/alpn.h"
#include "parse/h2req.h"
#include "parse/sni.h"
#include "proto/msg.h"
#include "proto/netproto.h"
#include "proto/outq.h"
#include "proto/wire.h"

/* The verification result of leaf for host (a DNS name, or an IP literal) against ca at time t. */
static int verify_at(const struct tls_ca *ca, X509 *leaf, const char *host, time_t t)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *vp;
	int r;

	assert_non_null(st);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(st, ca->cert), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, st, leaf, NULL), 1);
	vp = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_time(vp, t);
	X509_VERIFY_PARAM_set_purpose(vp, X509_PURPOSE_SSL_SERVER);
	if (host && strchr(host, ':') == NULL && !(host[0] >= '0' && host[0] <= '9'))
		X509_VERIFY_PARAM_set1_host(vp, host, 0);
	else if (host)
		X509_VERIFY_PARAM_set1_ip_asc(vp, host);
	r = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return r;
}

static int verify(const struct tls_ca *ca, X509 *leaf, const char *host)
{
	return verify_at(ca, leaf, host, time(NULL));
}

/* A leaf for name minted and verified as the client would, row by row. */
static void test_leaf_verifies(void **state)
{
	const char *names[] = { "api.test", "*.github.test" };
	struct tls_ca ca;
	EVP_PKEY *lk;
	char *err = NULL;
	time_t now = time(NULL);
	static const struct {
		const char *name;       /* minted for */
		const char *host;       /* verified as */
		int want;
	} rows[] = {
		{ "api.test", "api.test", X509_V_OK },
		/* a dNSName constraint covers the name and every name below it */
		{ "v1.api.test", "v1.api.test", X509_V_OK },
		{ "codeload.github.test", "codeload.github.test", X509_V_OK },
		{ "a.b.github.test", "a.b.github.test", X509_V_OK },
		/* outside the constraints: the CA's own key cannot make these trusted */
		{ "evil.test", "evil.test", X509_V_ERR_PERMITTED_VIOLATION },
		{ "notapi.test", "notapi.test", X509_V_ERR_PERMITTED_VIOLATION },
		{ "github.test.evil", "github.test.evil", X509_V_ERR_PERMITTED_VIOLATION },
		{ "api.test.evil.example", "api.test.evil.example",
		  X509_V_ERR_PERMITTED_VIOLATION },
		/* the right CA, the wrong host */
		{ "api.test", "other.test", X509_V_ERR_HOSTNAME_MISMATCH },
	};

	(void)state;
	assert_int_equal(tls_ca_create(names, 2, "s1", now, &ca, &err), 0);
	lk = tls_key_new(&err);
	assert_non_null(lk);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		X509 *leaf = tls_leaf_mint(&ca, lk, rows[i].name, now, &err);

		assert_non_null(leaf);
		if (verify(&ca, leaf, rows[i].host) != rows[i].want)
			fail_msg("row %zu (%s as %s): %s, want %s", i, rows[i].name, rows[i].host,
				 X509_verify_cert_error_string(verify(&ca, leaf, rows[i].host)),
				 X509_verify_cert_error_string(rows[i].want));
		X509_free(leaf);
	}
	EVP_PKEY_free(lk);
	tls_ca_clear(&ca);
}

/* A leaf carrying an IP address: every IP is excluded by the CA's constraints. */
static void test_ip_excluded(void **state)
{
	const char *names[] = { "api.test" };
	struct tls_ca ca;
	EVP_PKEY *lk;
	X509 *leaf;
	char *err = NULL;
	time_t now = time(NULL);
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "s1", now, &ca, &err), 0);
	lk = tls_key_new(&err);
	leaf = tls_leaf_mint(&ca, lk, "api.test", now, &err);
	assert_non_null(leaf);
	/* Replace the SAN with one holding an address, and sign again with the CA. */
	X509_EXTENSION_free(X509_delete_ext(leaf,
					    X509_get_ext_by_NID(leaf, NID_subject_alt_name, -1)));
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, ca.cert, leaf, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "IP:93.184.216.34,IP:::1");
	assert_non_null(ext);
	X509_add_ext(leaf, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(leaf, ca.key, EVP_sha256()) > 0);
	assert_int_equal(verify(&ca, leaf, "93.184.216.34"), X509_V_ERR_EXCLUDED_VIOLATION);
	assert_int_equal(verify(&ca, leaf, "::1"), X509_V_ERR_EXCLUDED_VIOLATION);
	X509_free(leaf);
	EVP_PKEY_free(lk);
	tls_ca_clear(&ca);
}

/* The CA's own shape: CA, pathlen 0, critical constraints, short validity, the label. */
static void test_ca_shape(void **state)
{
	const char *names[] = { "api.test" };
	struct tls_ca ca;
	char *err = NULL, *pem, cn[128];
	time_t now = 1700000000;
	int crit = -1;
	BASIC_CONSTRAINTS *bc;
	NAME_CONSTRAINTS *nc;

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "ab12<script>\n", now, &ca, &err), 0);
	bc = X509_get_ext_d2i(ca.cert, NID_basic_constraints, &crit, NULL);
	assert_non_null(bc);
	assert_true(bc->ca);
	assert_non_null(bc->pathlen);           /* ASN1_INTEGER_get(NULL) is 0 too */
	assert_int_equal(ASN1_INTEGER_get(bc->pathlen), 0);
	assert_int_equal(crit, 1);
	BASIC_CONSTRAINTS_free(bc);
	nc = X509_get_ext_d2i(ca.cert, NID_name_constraints, &crit, NULL);
	assert_non_null(nc);
	assert_int_equal(crit, 1);
	assert_int_equal(sk_GENERAL_SUBTREE_num(nc->permittedSubtrees), 1);
	assert_int_equal(sk_GENERAL_SUBTREE_num(nc->excludedSubtrees), 2);
	NAME_CONSTRAINTS_free(nc);
	assert_int_equal(ASN1_TIME_cmp_time_t(X509_get0_notBefore(ca.cert), now - TLS_CA_BACKDATE),
			 0);
	assert_int_equal(ASN1_TIME_cmp_time_t(X509_get0_notAfter(ca.cert), now + TLS_CA_LIFETIME),
			 0);
	/* the label is reduced to safe characters */
	X509_NAME_get_text_by_NID(X509_get_subject_name(ca.cert), NID_commonName, cn, sizeof(cn));
	assert_string_equal(cn, "boxy session CA ab12script");
	pem = tls_cert_pem(ca.cert);
	assert_non_null(strstr(pem, "-----BEGIN CERTIFICATE-----"));
	assert_null(strstr(pem, "PRIVATE"));
	free(pem);
	tls_ca_clear(&ca);
}

/*
 * pathlen 0: a CA the session CA signs (with its own key: what a stolen key
 * could do) cannot vouch for anything. Without it, the second CA's leaves
 * would verify, and name constraints bind a chain only as far as they are
 * checked.
 */
static void test_no_intermediate(void **state)
{
	const char *names[] = { "api.test" };
	struct tls_ca ca;
	EVP_PKEY *ik, *lk;
	X509 *inter, *leaf;
	char *err = NULL;
	time_t now = time(NULL);
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	STACK_OF(X509) *chain = sk_X509_new_null();

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "s", now, &ca, &err), 0);
	ik = tls_key_new(&err);
	lk = tls_key_new(&err);
	/* an intermediate for api.test, signed by the session CA */
	inter = tls_leaf_mint(&ca, ik, "api.test", now, &err);
	{
		X509_NAME *nm = X509_NAME_new();

		X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC,
					   (const unsigned char *)"an intermediate", -1, -1, 0);
		X509_set_subject_name(inter, nm);
		X509_NAME_free(nm);
	}
	/* X509_delete_ext hands each extension back: freed, or LeakSanitizer fails the test */
	for (int nid = 0; nid < 3; nid++) {
		int which = nid == 0 ? NID_basic_constraints : nid == 1 ? NID_key_usage :
			NID_ext_key_usage;

		X509_EXTENSION_free(X509_delete_ext(inter, X509_get_ext_by_NID(inter, which, -1)));
	}
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, ca.cert, inter, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
	X509_add_ext(inter, ext, -1);
	X509_EXTENSION_free(ext);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_key_usage, "critical,keyCertSign");
	X509_add_ext(inter, ext, -1);
	X509_EXTENSION_free(ext);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_key_identifier, "hash");
	X509_add_ext(inter, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(inter, ca.key, EVP_sha256()) > 0);
	/* a leaf for api.test under it */
	{
		struct tls_ca ica = { .key = ik, .cert = inter };

		leaf = tls_leaf_mint(&ica, lk, "api.test", now, &err);
		assert_non_null(leaf);
	}
	X509_STORE_add_cert(st, ca.cert);
	sk_X509_push(chain, inter);
	X509_STORE_CTX_init(vc, st, leaf, chain);
	X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(vc), "api.test", 0);
	if (X509_verify_cert(vc) == 1 ||
	    X509_STORE_CTX_get_error(vc) != X509_V_ERR_PATH_LENGTH_EXCEEDED)
		fail_msg("verified: %s", X509_verify_cert_error_string(X509_STORE_CTX_get_error(vc)));
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	sk_X509_free(chain);
	X509_free(leaf);
	X509_free(inter);
	EVP_PKEY_free(ik);
	EVP_PKEY_free(lk);
	tls_ca_clear(&ca);
}

/* Leaves expire with the CA; neither is valid before its backdated start. */
static void test_validity(void **state)
{
	const char *names[] = { "api.test" };
	struct tls_ca ca;
	EVP_PKEY *lk;
	X509 *leaf;
	char *err = NULL;
	time_t now = time(NULL);

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "s", now, &ca, &err), 0);
	lk = tls_key_new(&err);
	leaf = tls_leaf_mint(&ca, lk, "api.test", now, &err);
	assert_int_equal(verify_at(&ca, leaf, "api.test", now + TLS_CA_LIFETIME - 60), X509_V_OK);
	assert_int_equal(verify_at(&ca, leaf, "api.test", now + TLS_CA_LIFETIME + 60),
			 X509_V_ERR_CERT_HAS_EXPIRED);
	assert_int_equal(verify_at(&ca, leaf, "api.test", now - TLS_CA_BACKDATE - 60),
			 X509_V_ERR_CERT_NOT_YET_VALID);
	X509_free(leaf);
	EVP_PKEY_free(lk);
	tls_ca_clear(&ca);
}

/* Names that could smuggle syntax, or that are no DNS name, make neither a CA nor a leaf. */
static void test_bad_names(void **state)
{
	static const char *const bad[] = {
		"a.test,DNS:evil.test", "a.test\nb", "A.TEST", "", ".a.test", "a..test", "a.test.",
		"*.", "*.*.test", "a test", "a.test/x", "ä.test",
	};
	struct tls_ca ca;
	EVP_PKEY *lk;
	char *err = NULL;
	const char *good[] = { "api.test" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *one[] = { bad[i] };

		err = NULL;
		if (tls_ca_create(one, 1, "s", time(NULL), &ca, &err) == 0)
			fail_msg("a CA for \"%s\"", bad[i]);
		assert_non_null(err);
		free(err);
		err = NULL;
	}
	assert_int_equal(tls_ca_create(NULL, 0, "s", time(NULL), &ca, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(tls_ca_create(good, 1, "s", time(NULL), &ca, &err), 0);
	lk = tls_key_new(&err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		if (tls_leaf_mint(&ca, lk, bad[i], time(NULL), &err))
			fail_msg("a leaf for \"%s\"", bad[i]);
		free(err);
		err = NULL;
	}
	/* a wildcard is never minted: leaves are for the name the client asked for */
	assert_null(tls_leaf_mint(&ca, lk, "*.api.test", time(NULL), &err));
	free(err);
	err = NULL;
	EVP_PKEY_free(lk);
	tls_ca_clear(&ca);
}

/* The CA crosses the broker socket as DER; the key must be the certificate's. */
static void test_encode_decode(void **state)
{
	const char *names[] = { "api.test" };
	struct tls_ca a, b, back;
	uint8_t *c1, *k1, *c2, *k2;
	size_t c1n, k1n, c2n, k2n;
	char *err = NULL;
	char fa[65], fb[65], ha[9], hb[9];

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "a", time(NULL), &a, &err), 0);
	assert_int_equal(tls_ca_create(names, 1, "b", time(NULL), &b, &err), 0);
	assert_int_equal(tls_ca_encode(&a, &c1, &c1n, &k1, &k1n, &err), 0);
	assert_int_equal(tls_ca_encode(&b, &c2, &c2n, &k2, &k2n, &err), 0);
	assert_int_equal(tls_ca_decode(c1, c1n, k1, k1n, &back, &err), 0);
	tls_cert_fingerprint(a.cert, fa);
	tls_cert_fingerprint(back.cert, fb);
	assert_string_equal(fa, fb);
	assert_int_equal(strlen(fa), 64);
	tls_cert_hash(a.cert, ha);
	tls_cert_hash(back.cert, hb);
	assert_string_equal(ha, hb);
	assert_int_equal(strlen(ha), 8);
	tls_ca_clear(&back);
	/* a's certificate with b's key */
	assert_int_equal(tls_ca_decode(c1, c1n, k2, k2n, &back, &err), -1);
	assert_non_null(strstr(err, "not the certificate's"));
	free(err);
	err = NULL;
	/* trailing bytes, truncation */
	assert_int_equal(tls_ca_decode(c1, c1n - 1, k1, k1n, &back, &err), -1);
	free(err);
	err = NULL;
	{
		uint8_t *longer = malloc(c1n + 1);

		memcpy(longer, c1, c1n);
		longer[c1n] = 0;
		assert_int_equal(tls_ca_decode(longer, c1n + 1, k1, k1n, &back, &err), -1);
		free(err);
		err = NULL;
		free(longer);
	}
	assert_int_equal(tls_ca_decode(c1, c1n, k1, 0, &back, &err), -1);
	free(err);
	err = NULL;
	free(c1);
	free(c2);
	tls_wipe_free(k1, k1n);
	tls_wipe_free(k2, k2n);
	tls_ca_clear(&a);
	tls_ca_clear(&b);
}

/*
 * How many times the n bytes whose complement is inv appear in this
 * process's writable memory (its heap, its .data and .bss, anonymous maps;
 * not mappings over 256 MiB, a sanitizer's shadow). The bytes themselves
 * are never held whole by the caller, only their complement; and nothing
 * here allocates, so no freed chunk is overwritten before it is looked at.
 */
static int memory_holds(const uint8_t *inv, size_t n)
{
	static char maps[1 << 20];
	static uint8_t chunk[(64 << 10) + 64];
	int mfd = open("/proc/self/maps", O_RDONLY), fd = open("/proc/self/mem", O_RDONLY);
	size_t have = 0;
	ssize_t r;
	int hits = 0;

	assert_true(mfd >= 0 && fd >= 0);
	while ((r = read(mfd, maps + have, sizeof(maps) - 1 - have)) > 0)
		have += (size_t)r;
	maps[have] = '\0';
	close(mfd);
	for (char *line = maps, *next; *line; line = next) {
		unsigned long lo, hi;
		char perm[5];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) != 3 || perm[0] != 'r' ||
		    perm[1] != 'w' || hi - lo > (256ul << 20) || strstr(line, "[v"))
			continue;
		/* in chunks that overlap by n - 1 bytes, so no copy is cut in two */
		for (unsigned long at = lo; at < hi; at += sizeof(chunk) - 64) {
			size_t want = hi - at < sizeof(chunk) ? hi - at : sizeof(chunk);

			if (pread(fd, chunk, want, (off_t)at) != (ssize_t)want)
				break;
			for (size_t i = 0; i + n <= want && (i < sizeof(chunk) - 64 || at + want == hi);
			     i++) {
				size_t k = 0;

				while (k < n && (uint8_t)(chunk[i + k] ^ inv[k]) == 0xff)
					k++;
				hits += k == n;
			}
		}
	}
	explicit_bzero(chunk, sizeof(chunk));
	close(fd);
	return hits;
}

/*
 * The daemon's side of NET_TLS_CA (broker.c's send_tls_ca), in a child: a
 * session CA made, its key's complement written to pipe_fd (for the parent
 * to look for), the DER encodings sent in one secret frame (proto/outq.c).
 */
static void send_ca_child(int sock, int pipe_fd)
{
	const char *names[] = { "api.test" };
	struct tls_ca ca;
	uint8_t *cert, *key, inv[32];
	size_t cn, kn;
	char *err = NULL;
	BIGNUM *priv = NULL;
	struct outq q;
	struct wbuf w;

	if (tls_ca_create(names, 1, "transit", time(NULL), &ca, &err) < 0 ||
	    EVP_PKEY_get_bn_param(ca.key, OSSL_PKEY_PARAM_PRIV_KEY, &priv) != 1 ||
	    BN_bn2binpad(priv, inv, sizeof(inv)) != (int)sizeof(inv))
		_exit(1);
	BN_clear_free(priv);
	for (size_t i = 0; i < sizeof(inv); i++)
		inv[i] = (uint8_t)~inv[i];
	if (write(pipe_fd, inv, sizeof(inv)) != (ssize_t)sizeof(inv) ||
	    tls_ca_encode(&ca, &cert, &cn, &key, &kn, &err) < 0)
		_exit(1);
	wbuf_init(&w);
	wire_put_bytes(&w, cert, cn);
	wire_put_bytes(&w, key, kn);
	tls_wipe_free(key, kn);
	free(cert);
	outq_init(&q);
	outq_push_secret(&q, NET_TLS_CA, w.p, w.len);
	OPENSSL_cleanse(w.p, w.len);
	wbuf_free(&w);
	_exit(outq_flush(&q, sock) == 0 ? 0 : 1);
}

/*
 * The CA's key as boxy-net receives it (net/main.c's tls_setup): msg_recv
 * on the SOCK_SEQPACKET pair, the certificate and key decoded, the payload
 * wiped. Afterwards no copy of the private scalar is left in its memory but
 * OpenSSL's own, which is not stored as the big-endian bytes looked for.
 */
static void test_key_wiped_in_transit(void **state)
{
	struct tls_ca back;
	uint8_t inv[32];
	char *err = NULL;
	struct msg m;
	struct rbuf r;
	int sp[2], pp[2], st;
	uint32_t cn, kn;
	const uint8_t *cert;
	pid_t pid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp), 0);
	assert_int_equal(pipe(pp), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		send_ca_child(sp[0], pp[1]);
	close(pp[1]);
	assert_int_equal(read(pp[0], inv, sizeof(inv)), (ssize_t)sizeof(inv));
	close(pp[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	assert_int_equal(msg_recv(sp[1], &m, &err), 1);
	assert_int_equal(m.type, NET_TLS_CA);
	rbuf_init(&r, m.payload, m.len);
	cn = wire_get_u32(&r);
	assert_true(cn <= wire_left(&r));
	cert = m.payload + r.off;
	r.off += cn;
	kn = wire_get_u32(&r);
	assert_int_equal(kn, wire_left(&r));
	assert_true(memory_holds(inv, sizeof(inv)) > 0);     /* the scan finds the payload's */
	assert_int_equal(tls_ca_decode(cert, cn, m.payload + r.off, kn, &back, &err), 0);
	OPENSSL_cleanse(m.payload, m.len);
	msg_free(&m);
	assert_int_equal(memory_holds(inv, sizeof(inv)), 0);
	tls_ca_clear(&back);
	close(sp[0]);
	close(sp[1]);
}

/* "*" among the names: the CA may sign for any name, still no address. */
static void test_every_name(void **state)
{
	const char *names[] = { "*" };
	struct tls_ca ca;
	EVP_PKEY *lk;
	X509 *leaf;
	char *err = NULL;

	(void)state;
	assert_int_equal(tls_ca_create(names, 1, "s", time(NULL), &ca, &err), 0);
	lk = tls_key_new(&err);
	leaf = tls_leaf_mint(&ca, lk, "anything.example", time(NULL), &err);
	assert_int_equal(verify(&ca, leaf, "anything.example"), X509_V_OK);
	X509_free(leaf);
	EVP_PKEY_free(lk);
	tls_ca_clear(&ca);
}

/* ---- ALPN ---------------------------------------------------------------------- */

/* An ALPN extension body from a list of names. */
static size_t alpn_ext(uint8_t *out, const char *const *names, size_t n)
{
	size_t off = 2;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]);

		out[off++] = (uint8_t)l;
		memcpy(out + off, names[i], l);
		off += l;
	}
	out[0] = (uint8_t)((off - 2) >> 8);
	out[1] = (uint8_t)(off - 2);
	return off;
}

static void test_alpn_filter(void **state)
{
	static const struct {
		const char *names[5];
		size_t n;
		const char *want;       /* the offer upstream, names joined by ',' ; NULL: -1 */
	} rows[] = {
		{ { "h2", "http/1.1" }, 2, "h2,http/1.1" },
		{ { "http/1.1", "h2" }, 2, "http/1.1,h2" },
		{ { "http/1.1" }, 1, "http/1.1" },
		{ { "h2" }, 1, "h2" },
		/* what the gate cannot read is dropped, the rest kept in order */
		{ { "spdy/3.1", "h2", "h3", "http/1.1" }, 4, "h2,http/1.1" },
		{ { "h2c", "acme-tls/1", "imap" }, 3, "" },
		{ { "h2", "h2", "http/1.1", "h2" }, 4, "h2,http/1.1" },
		{ { "http/1.0" }, 1, "http/1.0" },
		/* case and prefixes are other protocols */
		{ { "H2", "HTTP/1.1", "http/1.1x", "h" }, 4, "" },
	};
	uint8_t ext[300], offer[ALPN_OFFER_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t len = alpn_ext(ext, rows[i].names, rows[i].n);
		int n = alpn_filter(ext, len, offer);
		char got[64] = "";
		size_t off = 0;

		assert_true(n >= 0);
		while ((int)off < n) {
			if (got[0])
				strcat(got, ",");
			strncat(got, (const char *)offer + off + 1, offer[off]);
			off += 1 + offer[off];
		}
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("row %zu: offer \"%s\", want \"%s\"", i, got, rows[i].want);
	}
}

static void test_alpn_malformed(void **state)
{
	static const struct {
		const uint8_t b[16];
		size_t n;
	} rows[] = {
		{ { 0 }, 0 },                                   /* nothing */
		{ { 0 }, 1 },                                   /* half a length */
		{ { 0, 0 }, 2 },                                /* an empty list */
		{ { 0, 3, 2, 'h', '2' }, 4 },                   /* list longer than the bytes */
		{ { 0, 2, 2, 'h', '2' }, 5 },                   /* bytes after the list */
		{ { 0, 3, 0, 2, 'h' }, 5 },                     /* an empty name */
		{ { 0, 3, 3, 'h', '2' }, 5 },                   /* an entry past the end */
		{ { 0, 4, 2, 'h', '2', 0 }, 6 },                /* a trailing empty entry */
	};
	uint8_t offer[ALPN_OFFER_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (alpn_filter(rows[i].b, rows[i].n, offer) != -1)
			fail_msg("row %zu accepted", i);
}

static void test_alpn_choose(void **state)
{
	static const struct {
		bool client_alpn;
		const char *offer[3];
		size_t noffer;
		const char *sel;        /* the upstream's choice, "" for none */
		enum alpn_proto want;
		const char *answer;     /* to the client; NULL: no ALPN */
	} rows[] = {
		{ true, { "h2", "http/1.1" }, 2, "h2", ALPN_H2, "h2" },
		{ true, { "h2", "http/1.1" }, 2, "http/1.1", ALPN_HTTP1, "http/1.1" },
		/* an upstream without ALPN speaks HTTP/1.1 */
		{ true, { "h2", "http/1.1" }, 2, "", ALPN_HTTP1, "http/1.1" },
		{ true, { "h2", "http/1.0" }, 2, "", ALPN_HTTP1, "http/1.0" },
		/* an h2-only client and an HTTP/1 server: no common protocol */
		{ true, { "h2" }, 1, "", ALPN_REFUSE, NULL },
		/* an upstream choosing what it was not offered */
		{ true, { "http/1.1" }, 1, "h2", ALPN_REFUSE, NULL },
		{ true, { "h2" }, 1, "spdy/3", ALPN_REFUSE, NULL },
		/* a client that offered only what the gate cannot read */
		{ true, { NULL }, 0, "", ALPN_REFUSE, NULL },
		/* a client without ALPN: HTTP/1, and the upstream may not choose */
		{ false, { NULL }, 0, "", ALPN_HTTP1, NULL },
		{ false, { NULL }, 0, "h2", ALPN_REFUSE, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t ext[64], offer[ALPN_OFFER_MAX];
		int n = 0;
		const uint8_t *name;
		size_t name_len;
		enum alpn_proto p;

		if (rows[i].noffer) {
			size_t len = alpn_ext(ext, rows[i].offer, rows[i].noffer);

			n = alpn_filter(ext, len, offer);
		}
		p = alpn_choose(rows[i].client_alpn, offer, (size_t)n,
				(const uint8_t *)rows[i].sel, strlen(rows[i].sel), &name, &name_len);
		if (p != rows[i].want)
			fail_msg("row %zu: %d, want %d", i, p, rows[i].want);
		if (!rows[i].answer) {
			assert_null(name);
		} else {
			assert_int_equal(name_len, strlen(rows[i].answer));
			assert_memory_equal(name, rows[i].answer, name_len);
		}
	}
}

/* ---- an HTTP/2 request's target ------------------------------------------------------ */

static void test_h2_target(void **state)
{
	static const struct {
		const char *method, *path, *authority, *host;
		const char *want_host;          /* NULL: refused */
		uint16_t want_port;
		const char *want_path, *want_query;
	} rows[] = {
		{ "GET", "/v1/x", "api.test", NULL, "api.test", 0, "/v1/x", NULL },
		{ "GET", "/v1/x?a=1&b", "API.Test:443", NULL, "api.test", 443, "/v1/x", "a=1&b" },
		{ "GET", "/", NULL, "api.test:8443", "api.test", 8443, "/", NULL },
		/* :authority wins over Host (Host is dropped when passed on) */
		{ "GET", "/", "api.test", "evil.test", "api.test", 0, "/", NULL },
		{ "GET", "/", "[2606:2800:220:1::34]:443", NULL, "[2606:2800:220:1::34]", 443, "/",
		  NULL },
		{ "OPTIONS", "*", "api.test", NULL, "api.test", 0, "*", NULL },
		{ "CONNECT", NULL, "api.test:443", NULL, "api.test", 443, "", NULL },
		{ "GET", "/", NULL, NULL, "", 0, "/", NULL },       /* no host at all: the gate's */
		/* what a server could read as another host's, or not read at all */
		{ "GET", "http://evil.test/x", "api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "//evil.test/x", "api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "x", "api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "*", "api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "", "api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", NULL, "api.test", NULL, NULL, 0, NULL, NULL },
		{ "CONNECT", "/x", "api.test:443", NULL, NULL, 0, NULL, NULL },
		{ "CONNECT", NULL, NULL, "api.test:443", NULL, 0, NULL, NULL },
		{ NULL, "/", "api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "user@api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "evil.test@api.test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test:", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test:0", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test:65536", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test:+443", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test:443:1", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "[::1", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "[::1]x", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", ":443", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test/x", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api test", NULL, NULL, 0, NULL, NULL },
		{ "GET", "/", "api.test\\evil", NULL, NULL, 0, NULL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct h2_target t;
		int r = h2_target_parse(rows[i].method, rows[i].path, rows[i].authority,
					rows[i].host, &t);

		if (!rows[i].want_host) {
			if (r != -1 || !t.why)
				fail_msg("row %zu accepted", i);
			continue;
		}
		if (r != 0)
			fail_msg("row %zu refused: %s", i, t.why);
		assert_string_equal(t.host, rows[i].want_host);
		assert_int_equal(t.port, rows[i].want_port);
		assert_int_equal(t.path_len, strlen(rows[i].want_path) == 1 &&
				 rows[i].want_path[0] == '*' ? 1 : strlen(rows[i].want_path));
		if (rows[i].want_query)
			assert_string_equal(t.query, rows[i].want_query);
		else
			assert_null(t.query);
	}
}

/* The server_name extension alone, by sni_parse's rules. */
static void test_sni_extension(void **state)
{
	static const struct {
		const uint8_t b[40];
		size_t n;
		const char *want;       /* NULL: malformed; "": no host_name */
	} rows[] = {
		{ { 0, 11, 0, 0, 8, 'a', 'p', 'i', '.', 't', 'e', 's', 't' }, 13, "api.test" },
		{ { 0, 11, 0, 0, 8, 'A', 'P', 'I', '.', 't', 'e', 's', 't' }, 13, "api.test" },
		/* two host_names, a name with a NUL, a list past its end, trailing bytes */
		{ { 0, 14, 0, 0, 3, 'a', '.', 'b', 0, 0, 3, 'c', '.', 'd' }, 16, NULL },
		{ { 0, 6, 0, 0, 3, 'a', 0, 'b' }, 8, NULL },
		{ { 0, 9, 0, 0, 8, 'a', 'p', 'i' }, 8, NULL },
		{ { 0, 4, 0, 0, 1, 'a', 'x' }, 7, NULL },
		{ { 0, 0 }, 2, NULL },
		/* another name type only: no host_name */
		{ { 0, 4, 1, 0, 1, 'a' }, 6, "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sni_result r;
		enum sni_status st = sni_parse_server_name(rows[i].b, rows[i].n, &r);

		if (!rows[i].want) {
			if (st != SNI_MALFORMED)
				fail_msg("row %zu accepted", i);
			continue;
		}
		assert_int_equal(st, SNI_OK);
		assert_string_equal(r.has_sni ? r.host : "", rows[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_verifies),
		cmocka_unit_test(test_ip_excluded),
		cmocka_unit_test(test_ca_shape),
		cmocka_unit_test(test_validity),
		cmocka_unit_test(test_no_intermediate),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_key_wiped_in_transit),
		cmocka_unit_test(test_every_name),
		cmocka_unit_test(test_alpn_filter),
		cmocka_unit_test(test_alpn_malformed),
		cmocka_unit_test(test_alpn_choose),
		cmocka_unit_test(test_h2_target),
		cmocka_unit_test(test_sni_extension),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
