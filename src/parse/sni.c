/*
 * parse/sni.c — TLS ClientHello parser (see parse/sni.h).
 *
 * Two steps. First the TLS records at the start of the stream are checked
 * and their payloads joined until the handshake message they carry is
 * complete: every record must be a handshake record (type 22) with a 3.x
 * version and a length between 1 and 2^14, as RFC 8446 §5.1 requires of a
 * ClientHello. Then the ClientHello body is walked field by field with a
 * cursor that is checked before every read, down to the extensions.
 *
 * The parser is deliberately strict where leniency would let the name we
 * check differ from the name a server acts on: a duplicated extension, two
 * host_names, an invalid name or trailing bytes are MALFORMED, and policy
 * refuses MALFORMED.
 */
#include "config.h"

#include <string.h>

#include "parse/sni.h"

/* Words for a status. */
const char *sni_status_words(enum sni_status s)
{
	switch (s) {
	case SNI_OK: return "ok";
	case SNI_NEED_MORE: return "incomplete ClientHello";
	case SNI_NOT_TLS: return "not TLS";
	case SNI_MALFORMED: return "malformed ClientHello";
	}
	return "unknown";
}

/* A bounded reader over the ClientHello body. */
struct cursor {
	const uint8_t *p;
	size_t len, off;
};

/* Takes n bytes; NULL if fewer remain. */
static const uint8_t *take(struct cursor *c, size_t n)
{
	const uint8_t *q;

	if (c->len - c->off < n)
		return NULL;
	q = c->p + c->off;
	c->off += n;
	return q;
}

/* Reads a u8 length; false if not enough bytes. */
static bool take8(struct cursor *c, size_t *v)
{
	const uint8_t *q = take(c, 1);

	if (q == NULL)
		return false;
	*v = q[0];
	return true;
}

/* Reads a big-endian u16 length; false if not enough bytes. */
static bool take16(struct cursor *c, size_t *v)
{
	const uint8_t *q = take(c, 2);

	if (q == NULL)
		return false;
	*v = (size_t)q[0] << 8 | q[1];
	return true;
}

/* Sets the MALFORMED reason and returns the status. */
static enum sni_status malformed(struct sni_result *r, const char *why)
{
	r->why = why;
	r->has_sni = false;
	r->host[0] = '\0';
	return SNI_MALFORMED;
}

/* Parses the server_name extension body. */
static enum sni_status parse_server_name(const uint8_t *p, size_t len, struct sni_result *r)
{
	struct cursor c = { p, len, 0 };
	size_t list, type, nlen;
	const uint8_t *name;

	if (!take16(&c, &list) || list != len - 2 || list == 0)
		return malformed(r, "bad server_name list length");
	while (c.off < c.len) {
		if (!take8(&c, &type) || !take16(&c, &nlen) || (name = take(&c, nlen)) == NULL)
			return malformed(r, "server_name entry runs past its list");
		if (type != 0)
			continue;       /* no other name type is defined; skip, as RFC 6066 says */
		if (r->has_sni)
			return malformed(r, "two host_name entries");
		if (dns_name_normalize((const char *)name, nlen, r->host) != 0 ||
		    memchr(name, '\0', nlen) != NULL)
			return malformed(r, "invalid host_name");
		r->has_sni = true;
	}
	return SNI_OK;
}

/* A server_name extension's body on its own (see parse/sni.h). */
enum sni_status sni_parse_server_name(const uint8_t *body, size_t len, struct sni_result *r)
{
	memset(r, 0, sizeof(*r));
	return parse_server_name(body, len, r);
}

/* Parses a complete ClientHello body (after the 4-byte handshake header). */
static enum sni_status parse_hello(const uint8_t *p, size_t len, struct sni_result *r)
{
	struct cursor c = { p, len, 0 };
	uint8_t seen[65536 / 8];
	const uint8_t *v;
	size_t n, extlen;

	if ((v = take(&c, 2)) == NULL || v[0] != 0x03)
		return malformed(r, "bad client version");
	if (take(&c, 32) == NULL)
		return malformed(r, "short random");
	if (!take8(&c, &n) || n > 32 || take(&c, n) == NULL)
		return malformed(r, "bad session id");
	if (!take16(&c, &n) || n < 2 || n % 2 || take(&c, n) == NULL)
		return malformed(r, "bad cipher suites");
	if (!take8(&c, &n) || n < 1 || take(&c, n) == NULL)
		return malformed(r, "bad compression methods");
	if (c.off == c.len)
		return SNI_OK;          /* no extensions at all: no name */
	if (!take16(&c, &extlen) || extlen != c.len - c.off)
		return malformed(r, "extensions length does not match the message");

	memset(seen, 0, sizeof(seen));
	while (c.off < c.len) {
		size_t type, elen;
		const uint8_t *body;
		enum sni_status st;

		if (!take16(&c, &type) || !take16(&c, &elen) || (body = take(&c, elen)) == NULL)
			return malformed(r, "extension runs past the message");
		if (seen[type / 8] & (1u << (type % 8)))
			return malformed(r, "duplicated extension");
		seen[type / 8] |= (uint8_t)(1u << (type % 8));
		if (type == SNI_EXT_SERVER_NAME) {
			st = parse_server_name(body, elen, r);
			if (st != SNI_OK)
				return st;
		} else if (type == SNI_EXT_ECH) {
			r->ech = true;
		}
	}
	return SNI_OK;
}

/*
 * Is this a handshake record header at p (3 bytes available)? The first
 * record's version is not checked (see sni_parse); a later record with an
 * odd version is refused, which errs on the side of denying.
 */
static bool record_header_ok(const uint8_t *p, bool first)
{
	return p[0] == 0x16 && (first || (p[1] == 0x03 && p[2] <= 0x04));
}

/* Joins the handshake records and parses the ClientHello (see the header). */
enum sni_status sni_parse(const uint8_t *p, size_t len, struct sni_result *r)
{
	uint8_t hs[SNI_HELLO_MAX];
	size_t hslen = 0, off = 0, msglen = 0;

	memset(r, 0, sizeof(*r));
	/*
	 * Decide on the first byte, so plain HTTP is not held up. Any stream
	 * that starts with a handshake record is treated as TLS whatever its
	 * record version says: RFC 8446 tells servers to ignore that field,
	 * so calling "16 03 05 ..." not-TLS would let a real ClientHello pass
	 * unchecked. An SSLv2-format hello (high bit set, message type 1) is
	 * still accepted by some servers and carries no SNI: refuse it. Its
	 * type is the third byte, so a high first byte waits for it: deciding
	 * "not TLS" on one byte sent alone let the rest of such a hello pass
	 * as a flow with no name.
	 */
	if (len >= 1 && p[0] != 0x16) {
		if ((p[0] & 0x80) && len < 3) {
			r->need = 3;
			return SNI_NEED_MORE;
		}
		if ((p[0] & 0x80) && p[2] == 0x01)
			return malformed(r, "SSLv2-format ClientHello");
		return SNI_NOT_TLS;
	}

	for (;;) {
		size_t rlen, room, chunk;

		if (len - off < 5) {
			r->need = off + 5;
			return SNI_NEED_MORE;
		}
		if (!record_header_ok(p + off, off == 0))
			return malformed(r, "non-handshake record inside the ClientHello");
		rlen = (size_t)p[off + 3] << 8 | p[off + 4];
		if (rlen == 0 || rlen > SNI_RECORD_MAX)
			return malformed(r, "bad record length");
		if (len - off - 5 < rlen) {
			/* Refuse a wrong or oversized handshake without waiting for it. */
			uint8_t head[4];
			size_t h = 0, avail = len - off - 5;

			for (size_t i = 0; i < hslen && h < 4; i++)
				head[h++] = hs[i];
			for (size_t i = 0; i < avail && h < 4; i++)
				head[h++] = p[off + 5 + i];
			if (h >= 1 && head[0] != 0x01)
				return malformed(r, "first handshake message is not a ClientHello");
			if (h == 4 && ((size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3]) + 4 >
			    SNI_HELLO_MAX)
				return malformed(r, "ClientHello too large");
			r->need = off + 5 + rlen;
			return SNI_NEED_MORE;
		}
		room = SNI_HELLO_MAX - hslen;
		chunk = rlen < room ? rlen : room;
		memcpy(hs + hslen, p + off + 5, chunk);
		hslen += chunk;
		off += 5 + rlen;

		if (hs[0] != 0x01)
			return malformed(r, "first handshake message is not a ClientHello");
		if (hslen >= 4) {
			msglen = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];
			if (msglen + 4 > SNI_HELLO_MAX)
				return malformed(r, "ClientHello too large");
			if (hslen >= msglen + 4)
				break;
		}
		if (chunk < rlen)
			return malformed(r, "ClientHello too large");
	}
	return parse_hello(hs + 4, msglen, r);
}
