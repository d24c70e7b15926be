/*
 * common/tlsca.h — the certificates of TLS inspection, made in memory and
 * never written anywhere (doc/http-inspection.md): a certificate authority
 * per session, and the leaf certificates it signs for the names boxy-net
 * inspects.
 *
 * Two processes use this file. The daemon creates the session's CA before
 * the sandbox is assembled (its certificate goes into the sandbox's trust
 * bundle, which boxy-init writes while boxy-net does not exist yet), hands
 * the key to boxy-net over the broker socket (tls_ca_encode) and forgets it
 * (tls_ca_clear). boxy-net decodes it (tls_ca_decode) before its lockdown
 * and mints one leaf per server name (tls_leaf_mint), all with one leaf key.
 *
 * The CA is short-lived (TLS_CA_LIFETIME), may sign only server
 * certificates one level below it (pathlen 0), and carries name constraints
 * (critical): the DNS names of the inspected hosts are its only permitted
 * names, and every IP address is excluded, so even its key could not mint a
 * certificate that a verifier inside the sandbox accepts for another host.
 * Keys are ECDSA P-256: a key is made in well under a millisecond and every
 * client the sandbox runs verifies it.
 */
#ifndef BOXY_TLSCA_H
#define BOXY_TLSCA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#define TLS_CA_LIFETIME  (7 * 24 * 3600)   /* seconds a session CA is valid */
#define TLS_CA_BACKDATE  600                /* notBefore this far in the past */
#define TLS_CA_MAX_NAMES 1024               /* permitted names in the constraints */
#define TLS_CA_DER_MAX   16384              /* an encoded certificate or key, at most */

struct tls_ca {
	EVP_PKEY *key;      /* the CA's private key */
	X509 *cert;         /* its self-signed certificate */
};

/*
 * A new CA for one session. names are the inspected hosts, each a lower-case
 * DNS name or "*.suffix" (which permits the suffix and everything below it);
 * the CA may sign for nothing else. label (the session id) goes into the
 * subject, so a person looking at a certificate chain sees which session
 * made it. now is the Unix time. 0, or -1 with *err.
 */
int tls_ca_create(const char *const *names, size_t nnames, const char *label, time_t now,
		  struct tls_ca *out, char **err);

/* Free the key (OpenSSL clears private key material on free) and the certificate. */
void tls_ca_clear(struct tls_ca *ca);

/*
 * The certificate as DER and the key as PKCS#8 DER, malloc'd, for the broker
 * socket. The caller wipes and frees *key with tls_wipe_free. 0, or -1 with *err.
 */
int tls_ca_encode(const struct tls_ca *ca, uint8_t **cert, size_t *cert_len, uint8_t **key,
		  size_t *key_len, char **err);

/* The reverse, checking that the key is the certificate's. 0, or -1 with *err. */
int tls_ca_decode(const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
		  struct tls_ca *out, char **err);

/* The certificate as PEM text (malloc'd): the sandbox's trust bundle gets it. */
char *tls_cert_pem(X509 *cert);

/* OpenSSL's subject hash of the certificate, "%08lx": its name in a hashed certificate directory. */
void tls_cert_hash(X509 *cert, char out[9]);

/* The SHA-256 of the certificate's DER, lower-case hex: how the record names a CA. */
void tls_cert_fingerprint(X509 *cert, char out[65]);

/* A new ECDSA P-256 key, or NULL with *err. */
EVP_PKEY *tls_key_new(char **err);

/*
 * A leaf certificate for the DNS name, signed by ca, for leaf_key: SAN and
 * CN the name, serverAuth only, valid from now - TLS_CA_BACKDATE until the
 * CA expires. The caller owns the result; NULL with *err.
 */
X509 *tls_leaf_mint(const struct tls_ca *ca, EVP_PKEY *leaf_key, const char *name, time_t now,
		    char **err);

/* Zero n bytes at p, then free p. */
void tls_wipe_free(void *p, size_t n);

#endif
