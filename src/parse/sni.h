/*
 * parse/sni.h — read the server name a TLS client asks for, off the wire.
 *
 * Given the first bytes a sandboxed client sent on a TCP connection, say
 * whether they are a TLS ClientHello and, if so, which host_name its
 * server_name extension carries and whether it offers Encrypted ClientHello
 * (which hides the real name, so policy refuses it). Nothing is decrypted
 * or modified; the bytes are forwarded unchanged once policy agrees.
 *
 * A ClientHello may be split across several TLS records; they are joined
 * up to SNI_HELLO_MAX bytes of handshake message. Pure, no allocation
 * (the reassembly buffer is on the stack).
 */
#ifndef BOXY_NET_SNI_H
#define BOXY_NET_SNI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/dns.h"   /* DNS_NAME_BUF */

#define SNI_HELLO_MAX      16384   /* largest ClientHello accepted, handshake header included */
#define SNI_RECORD_MAX     16384   /* TLS plaintext record limit (2^14) */
#define SNI_EXT_SERVER_NAME 0x0000
#define SNI_EXT_ECH        0xfe0d

enum sni_status {
	SNI_OK = 0,
	SNI_NEED_MORE,      /* a prefix of a plausible ClientHello: read more */
	SNI_NOT_TLS,        /* does not start like a TLS handshake record */
	SNI_MALFORMED,      /* starts like TLS but breaks the rules, or too large */
};

struct sni_result {
	size_t need;                /* NEED_MORE: total stream bytes needed before asking again */
	bool has_sni;               /* OK: a host_name was present */
	char host[DNS_NAME_BUF];    /* OK with has_sni: validated, lower-case */
	bool ech;                   /* OK: an encrypted_client_hello extension is present */
	const char *why;            /* MALFORMED: what was wrong, in words (constant) */
};

/*
 * Parse the first len bytes of a client's stream. The bytes past the
 * ClientHello (there should be none before the server answers) are ignored.
 */
enum sni_status sni_parse(const uint8_t *p, size_t len, struct sni_result *r);

const char *sni_status_words(enum sni_status s);

/*
 * Read a server_name extension's body alone (as OpenSSL hands it to its
 * ClientHello callback), by the same rules: SNI_OK with r->has_sni and
 * r->host, or SNI_MALFORMED with r->why. TLS inspection checks with it that
 * the hello OpenSSL reads names the server sni_parse named (net/tls.c).
 */
enum sni_status sni_parse_server_name(const uint8_t *body, size_t len, struct sni_result *r);

#endif
