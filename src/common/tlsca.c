/*
 * common/tlsca.c — the session CA and the leaves it signs, made in memory
 * with OpenSSL (common/tlsca.h says who calls what, and when).
 *
 * Names reach a certificate only as values of OpenSSL's structures (an
 * IA5String in a GeneralName), never through its configuration syntax, so a
 * name cannot smuggle an extension in: the config strings below are all
 * constants. Every name is checked once more here anyway (lower-case DNS
 * characters, at most 253 bytes) — they come from the run-spec (the CA) and
 * from a ClientHello the broker already judged (a leaf).
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "common/tlsca.h"
#include "common/util.h"

/* OpenSSL's last error as the reason for what failed; the error queue is emptied. */
static int ossl_err(char **err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "unknown error");
	ERR_clear_error();
	return set_err(err, "%s: %s", what, buf);
}

/* A DNS name a certificate may carry: lower-case letters, digits, '-', '_', dots. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.' || strstr(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.'))
			return false;
	}
	return true;
}

/* Zero, then free (common/tlsca.h). */
void tls_wipe_free(void *p, size_t n)
{
	if (!p)
		return;
	OPENSSL_cleanse(p, n);
	free(p);
}

EVP_PKEY *tls_key_new(char **err)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");

	if (!k)
		ossl_err(err, "cannot make an ECDSA P-256 key");
	return k;
}

/* 16 random bytes, positive and never zero (RFC 5280 §4.1.2.2). */
static int set_serial(X509 *x)
{
	unsigned char b[16];
	BIGNUM *bn;
	ASN1_INTEGER *ai;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	b[0] = (uint8_t)((b[0] & 0x7f) | 0x40);
	bn = BN_bin2bn(b, sizeof(b), NULL);
	ai = bn ? BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) : NULL;
	BN_free(bn);
	return ai ? 0 : -1;
}

/* An extension in OpenSSL's configuration syntax; value is always a constant here. */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e)
		return -1;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok ? 0 : -1;
}

/* A GeneralName of type dNSName holding s. */
static GENERAL_NAME *dns_general_name(const char *s)
{
	ASN1_IA5STRING *v = ASN1_IA5STRING_new();
	GENERAL_NAME *gn = GENERAL_NAME_new();

	if (!v || !gn || !ASN1_STRING_set(v, s, (int)strlen(s))) {
		ASN1_IA5STRING_free(v);
		GENERAL_NAME_free(gn);
		return NULL;
	}
	GENERAL_NAME_set0_value(gn, GEN_DNS, v);
	return gn;
}

/* A subtree of gn (taken) appended to sk. */
static int subtree_push(STACK_OF(GENERAL_SUBTREE) *sk, GENERAL_NAME *gn)
{
	GENERAL_SUBTREE *st;

	if (!gn)
		return -1;
	st = GENERAL_SUBTREE_new();
	if (!st) {
		GENERAL_NAME_free(gn);
		return -1;
	}
	GENERAL_NAME_free(st->base);
	st->base = gn;
	if (!sk_GENERAL_SUBTREE_push(sk, st)) {
		GENERAL_SUBTREE_free(st);
		return -1;
	}
	return 0;
}

/* An iPAddress subtree of len zero bytes: address and mask all zero, every address of the family. */
static GENERAL_NAME *ip_everything(int len)
{
	static const unsigned char zero[32];
	ASN1_OCTET_STRING *v = ASN1_OCTET_STRING_new();
	GENERAL_NAME *gn = GENERAL_NAME_new();

	if (!v || !gn || !ASN1_OCTET_STRING_set(v, zero, len)) {
		ASN1_OCTET_STRING_free(v);
		GENERAL_NAME_free(gn);
		return NULL;
	}
	GENERAL_NAME_set0_value(gn, GEN_IPADD, v);
	return gn;
}

/*
 * nameConstraints, critical: permitted the inspected names ("*.suffix"
 * permits the suffix; RFC 5280 lets a dNSName constraint match the name and
 * every name below it, and GnuTLS reads no leading-dot form), excluded every
 * IPv4 and IPv6 address. A name "*" alone (every host) permits every name.
 */
static int add_name_constraints(X509 *x, const char *const *names, size_t n)
{
	NAME_CONSTRAINTS *nc = NAME_CONSTRAINTS_new();
	bool every = false;
	int r = -1;

	if (!nc)
		return -1;
	nc->permittedSubtrees = sk_GENERAL_SUBTREE_new_null();
	nc->excludedSubtrees = sk_GENERAL_SUBTREE_new_null();
	if (!nc->permittedSubtrees || !nc->excludedSubtrees)
		goto out;
	for (size_t i = 0; i < n; i++)
		every = every || strcmp(names[i], "*") == 0;
	for (size_t i = 0; i < n && !every; i++) {
		const char *base = strncmp(names[i], "*.", 2) == 0 ? names[i] + 2 : names[i];

		if (subtree_push(nc->permittedSubtrees, dns_general_name(base)) < 0)
			goto out;
	}
	if (every) {
		sk_GENERAL_SUBTREE_free(nc->permittedSubtrees);
		nc->permittedSubtrees = NULL;
	}
	if (subtree_push(nc->excludedSubtrees, ip_everything(8)) < 0 ||
	    subtree_push(nc->excludedSubtrees, ip_everything(32)) < 0)
		goto out;
	r = X509_add1_ext_i2d(x, NID_name_constraints, nc, 1, X509V3_ADD_DEFAULT) == 1 ? 0 : -1;
out:
	NAME_CONSTRAINTS_free(nc);
	return r;
}

/* The CA's subject: O=boxy, CN=boxy session CA LABEL (label cut to its first 32 safe bytes). */
static X509_NAME *ca_subject(const char *label)
{
	X509_NAME *nm = X509_NAME_new();
	char cn[64];
	size_t k = strlen("boxy session CA ");

	memcpy(cn, "boxy session CA ", k);
	for (size_t i = 0; label && label[i] && i < 32; i++) {
		char c = label[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-')
			cn[k++] = c;
	}
	while (k && cn[k - 1] == ' ')
		k--;
	cn[k] = '\0';
	if (!nm ||
	    !X509_NAME_add_entry_by_txt(nm, "O", MBSTRING_ASC, (const unsigned char *)"boxy", -1,
					-1, 0) ||
	    !X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
					-1, 0)) {
		X509_NAME_free(nm);
		return NULL;
	}
	return nm;
}

/* A new session CA, constrained to names (common/tlsca.h). */
int tls_ca_create(const char *const *names, size_t nnames, const char *label, time_t now,
		  struct tls_ca *out, char **err)
{
	X509_NAME *subj = NULL;
	X509 *x = NULL;
	EVP_PKEY *key = NULL;

	out->key = NULL;
	out->cert = NULL;
	if (nnames == 0 || nnames > TLS_CA_MAX_NAMES)
		return set_err(err, "a session CA needs 1 to %d inspected names, not %zu",
			       TLS_CA_MAX_NAMES, nnames);
	for (size_t i = 0; i < nnames; i++) {
		const char *base = strncmp(names[i], "*.", 2) == 0 ? names[i] + 2 : names[i];

		if (strcmp(names[i], "*") != 0 && !name_ok(base))
			return set_err(err, "not a name a CA can be constrained to: %.64s",
				       names[i]);
	}
	key = tls_key_new(err);
	if (!key)
		return -1;
	x = X509_new();
	subj = ca_subject(label);
	if (!x || !subj || !X509_set_version(x, X509_VERSION_3) || set_serial(x) < 0 ||
	    !X509_set_subject_name(x, subj) || !X509_set_issuer_name(x, subj) ||
	    !ASN1_TIME_set(X509_getm_notBefore(x), now - TLS_CA_BACKDATE) ||
	    !ASN1_TIME_set(X509_getm_notAfter(x), now + TLS_CA_LIFETIME) ||
	    !X509_set_pubkey(x, key) ||
	    add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(x, x, NID_subject_key_identifier, "hash") < 0 ||
	    add_name_constraints(x, names, nnames) < 0 ||
	    !X509_sign(x, key, EVP_sha256())) {
		ossl_err(err, "cannot make the session CA");
		X509_NAME_free(subj);
		X509_free(x);
		EVP_PKEY_free(key);
		return -1;
	}
	X509_NAME_free(subj);
	out->key = key;
	out->cert = x;
	return 0;
}

/* Free the CA's key and certificate. */
void tls_ca_clear(struct tls_ca *ca)
{
	EVP_PKEY_free(ca->key);
	X509_free(ca->cert);
	ca->key = NULL;
	ca->cert = NULL;
}

/* The CA as DER, for NET_TLS_CA. */
int tls_ca_encode(const struct tls_ca *ca, uint8_t **cert, size_t *cert_len, uint8_t **key,
		  size_t *key_len, char **err)
{
	int cn = i2d_X509(ca->cert, NULL), kn = i2d_PrivateKey(ca->key, NULL);
	unsigned char *p;

	*cert = *key = NULL;
	if (cn <= 0 || kn <= 0 || cn > TLS_CA_DER_MAX || kn > TLS_CA_DER_MAX)
		return ossl_err(err, "cannot encode the session CA");
	*cert = xmalloc((size_t)cn);
	*key = xmalloc((size_t)kn);
	p = *cert;
	if (i2d_X509(ca->cert, &p) != cn)
		goto fail;
	p = *key;
	if (i2d_PrivateKey(ca->key, &p) != kn)
		goto fail;
	*cert_len = (size_t)cn;
	*key_len = (size_t)kn;
	return 0;
fail:
	free(*cert);
	tls_wipe_free(*key, (size_t)kn);
	*cert = *key = NULL;
	return ossl_err(err, "cannot encode the session CA");
}

/* The CA back from DER, the key checked against the certificate. */
int tls_ca_decode(const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
		  struct tls_ca *out, char **err)
{
	const unsigned char *p = cert;

	out->key = NULL;
	out->cert = NULL;
	if (cert_len == 0 || cert_len > TLS_CA_DER_MAX || key_len == 0 || key_len > TLS_CA_DER_MAX)
		return set_err(err, "session CA: a certificate or key of %zu/%zu bytes", cert_len,
			       key_len);
	out->cert = d2i_X509(NULL, &p, (long)cert_len);
	if (!out->cert || p != cert + cert_len) {
		tls_ca_clear(out);
		return ossl_err(err, "session CA: a malformed certificate");
	}
	p = key;
	out->key = d2i_AutoPrivateKey(NULL, &p, (long)key_len);
	if (!out->key || p != key + key_len) {
		tls_ca_clear(out);
		return ossl_err(err, "session CA: a malformed key");
	}
	if (X509_check_private_key(out->cert, out->key) != 1) {
		tls_ca_clear(out);
		return ossl_err(err, "session CA: the key is not the certificate's");
	}
	return 0;
}

/* A certificate as PEM text. */
char *tls_cert_pem(X509 *cert)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data = NULL, *s;
	long n;

	if (!b || !PEM_write_bio_X509(b, cert))
		fatal("cannot write a certificate as PEM");
	n = BIO_get_mem_data(b, &data);
	s = xstrndup(data, (size_t)n);
	BIO_free(b);
	return s;
}

/* OpenSSL's subject hash, 8 hex digits. */
void tls_cert_hash(X509 *cert, char out[9])
{
	snprintf(out, 9, "%08lx", X509_subject_name_hash(cert) & 0xffffffffUL);
}

/* SHA-256 of the DER, hex. */
void tls_cert_fingerprint(X509 *cert, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	out[0] = '\0';
	if (!X509_digest(cert, EVP_sha256(), md, &n) || n != 32)
		return;
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

X509 *tls_leaf_mint(const struct tls_ca *ca, EVP_PKEY *leaf_key, const char *name, time_t now,
		    char **err)
{
	X509 *x;
	X509_NAME *subj = NULL;
	GENERAL_NAMES *san = NULL;
	GENERAL_NAME *gn;

	if (!name_ok(name)) {
		set_err(err, "not a name to mint a certificate for: %.64s", name);
		return NULL;
	}
	x = X509_new();
	san = sk_GENERAL_NAME_new_null();
	gn = dns_general_name(name);
	if (!x || !san || !gn || !sk_GENERAL_NAME_push(san, gn)) {
		GENERAL_NAME_free(gn);
		goto fail;
	}
	subj = X509_NAME_new();
	/* CN holds at most 64 characters (RFC 5280's ub-common-name); the SAN is what counts. */
	if (!subj || (strlen(name) <= 64 &&
		      !X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC,
						  (const unsigned char *)name, -1, -1, 0)))
		goto fail;
	if (!X509_set_version(x, X509_VERSION_3) || set_serial(x) < 0 ||
	    !X509_set_subject_name(x, subj) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    !ASN1_TIME_set(X509_getm_notBefore(x), now - TLS_CA_BACKDATE) ||
	    !X509_set1_notAfter(x, X509_get0_notAfter(ca->cert)) ||
	    !X509_set_pubkey(x, leaf_key) ||
	    add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") < 0 ||
	    X509_add1_ext_i2d(x, NID_subject_alt_name, san, 0, X509V3_ADD_DEFAULT) != 1 ||
	    !X509_sign(x, ca->key, EVP_sha256()))
		goto fail;
	X509_NAME_free(subj);
	GENERAL_NAMES_free(san);
	return x;
fail:
	ossl_err(err, "cannot mint a certificate");
	X509_NAME_free(subj);
	GENERAL_NAMES_free(san);
	X509_free(x);
	return NULL;
}
