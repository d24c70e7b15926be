/*
 * proto/wire.c — the field codec behind the daemon protocol. Integers are
 * little-endian and fixed-width; strings are a u32 length (0xffffffff for
 * absent) and bytes that must not contain NUL. Every length is checked
 * against what remains *and* a cap before anything is allocated, so a
 * hostile length costs nothing.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "proto/wire.h"

#define ABSENT 0xffffffffu

static void put_le(struct wbuf *w, uint64_t v, size_t n)
{
	uint8_t b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wbuf_put(w, b, n);
}

void wire_put_u8(struct wbuf *w, uint8_t v) { put_le(w, v, 1); }
void wire_put_u16(struct wbuf *w, uint16_t v) { put_le(w, v, 2); }
void wire_put_u32(struct wbuf *w, uint32_t v) { put_le(w, v, 4); }
void wire_put_u64(struct wbuf *w, uint64_t v) { put_le(w, v, 8); }

void wire_put_bytes(struct wbuf *w, const void *p, size_t n)
{
	if (n >= ABSENT)
		fatal("wire: field too large");
	wire_put_u32(w, (uint32_t)n);
	wbuf_put(w, p, n);
}

void wire_put_str(struct wbuf *w, const char *s)
{
	if (!s) {
		wire_put_u32(w, ABSENT);
		return;
	}
	wire_put_bytes(w, s, strlen(s));
}

void wire_put_strv(struct wbuf *w, char *const *v)
{
	size_t n = strv_len(v);

	wire_put_u32(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		wire_put_str(w, v[i]);
}

/* Bytes with no length before them. */
void wire_put_raw(struct wbuf *w, const void *p, size_t n)
{
	wbuf_put(w, p, n);
}

/* A placeholder u32 length; returns its offset. */
size_t wire_put_len_begin(struct wbuf *w)
{
	size_t at = w->len;

	wire_put_u32(w, 0);
	return at;
}

/* Fill in the length begun at at: the bytes written since. */
void wire_put_len_end(struct wbuf *w, size_t at)
{
	size_t n = w->len - at - 4;

	if (n >= ABSENT)
		fatal("wire: field too large");
	for (int i = 0; i < 4; i++)
		w->p[at + i] = (uint8_t)(n >> (8 * i));
}

void rbuf_init(struct rbuf *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->failed = false;
}

static uint64_t get_le(struct rbuf *r, size_t n)
{
	uint64_t v = 0;

	if (r->failed || r->len - r->off < n) {
		r->failed = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += n;
	return v;
}

uint8_t wire_get_u8(struct rbuf *r) { return (uint8_t)get_le(r, 1); }
uint16_t wire_get_u16(struct rbuf *r) { return (uint16_t)get_le(r, 2); }
uint32_t wire_get_u32(struct rbuf *r) { return (uint32_t)get_le(r, 4); }
uint64_t wire_get_u64(struct rbuf *r) { return get_le(r, 8); }

/* Exactly n bytes as a string, no NUL among them. */
char *wire_get_strn(struct rbuf *r, size_t n)
{
	char *s;

	if (r->failed || r->len - r->off < n || (n && memchr(r->p + r->off, '\0', n))) {
		r->failed = true;
		return NULL;
	}
	if (n == 0)
		return xstrdup("");     /* r->p may be NULL for an empty reader */
	s = xstrndup((const char *)r->p + r->off, n);
	r->off += n;
	return s;
}

/* A length-prefixed string within max (and WIRE_MAX_STRING); NULL when absent. */
char *wire_get_str(struct rbuf *r, size_t max)
{
	uint32_t n = wire_get_u32(r);

	if (r->failed || n == ABSENT)
		return NULL;
	if (n > max || n > WIRE_MAX_STRING) {
		r->failed = true;
		return NULL;
	}
	return wire_get_strn(r, n);
}

/* Exactly n bytes, copied out or skipped. */
bool wire_get_raw(struct rbuf *r, void *out, size_t n)
{
	if (r->failed || r->len - r->off < n) {
		r->failed = true;
		return false;
	}
	if (out && n)
		memcpy(out, r->p + r->off, n);
	r->off += n;
	return true;
}

/* The next n bytes as a reader of their own. */
bool wire_get_sub(struct rbuf *r, size_t n, struct rbuf *sub)
{
	size_t at = r->off;

	if (!wire_get_raw(r, NULL, n)) {
		rbuf_init(sub, NULL, 0);
		sub->failed = true;
		return false;
	}
	rbuf_init(sub, n ? r->p + at : NULL, n);     /* never NULL + 0 */
	return true;
}

/* Bytes not yet read. */
size_t wire_left(const struct rbuf *r)
{
	return r->failed ? 0 : r->len - r->off;
}

char **wire_get_strv(struct rbuf *r, size_t max_entries, size_t max_len)
{
	uint32_t n = wire_get_u32(r);
	char **v;

	/* Each entry needs at least 4 bytes: a count beyond that is a lie. */
	if (r->failed || n > max_entries || n > WIRE_MAX_STRV || n > (r->len - r->off) / 4) {
		r->failed = true;
		return NULL;
	}
	v = xcalloc((size_t)n + 1, sizeof(*v));
	for (uint32_t i = 0; i < n; i++) {
		v[i] = wire_get_str(r, max_len);
		if (!v[i]) {
			r->failed = true;
			strv_free(v);
			return NULL;
		}
	}
	return v;
}

bool wire_done(const struct rbuf *r)
{
	return !r->failed && r->off == r->len;
}
