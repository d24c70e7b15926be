/*
 * proto/wire.h — bounds-checked encoding of typed fields into byte buffers, for
 * the daemon's socket protocol (proto/msg.h). A reader never reads past its end:
 * the first short or malformed field makes it fail, and every later get
 * returns a zero value, so a decoder can read all fields and check once.
 * It is the only codec of the daemon's messages, of boxy-net's (proto/netproto.h)
 * and of the plan boxy-init reads (init/plan.c); the buffer is common/buf.h's.
 */
#ifndef BOXY_WIRE_H
#define BOXY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define WIRE_MAX_STRING   (1u << 20)     /* one string field */
#define WIRE_MAX_STRV     4096           /* entries in one string vector */

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	bool failed;
};

void wire_put_u8(struct wbuf *w, uint8_t v);
void wire_put_u16(struct wbuf *w, uint16_t v);
void wire_put_u32(struct wbuf *w, uint32_t v);
void wire_put_u64(struct wbuf *w, uint64_t v);
void wire_put_bytes(struct wbuf *w, const void *p, size_t n);  /* u32 length + bytes */
void wire_put_str(struct wbuf *w, const char *s);               /* NULL encodes as absent */
void wire_put_strv(struct wbuf *w, char *const *v);             /* u32 count + strings */
void wire_put_raw(struct wbuf *w, const void *p, size_t n);     /* bytes, no length */
/* A u32 length written later: begin returns where it goes, end fills in what followed. */
size_t wire_put_len_begin(struct wbuf *w);
void wire_put_len_end(struct wbuf *w, size_t at);

void rbuf_init(struct rbuf *r, const void *p, size_t len);
uint8_t wire_get_u8(struct rbuf *r);
uint16_t wire_get_u16(struct rbuf *r);
uint32_t wire_get_u32(struct rbuf *r);
uint64_t wire_get_u64(struct rbuf *r);
/* A string: malloc'd, NUL-free, at most max bytes; NULL if absent (or on failure). */
char *wire_get_str(struct rbuf *r, size_t max);
/* A string vector of at most max entries; NULL-terminated, malloc'd; NULL on failure. */
char **wire_get_strv(struct rbuf *r, size_t max_entries, size_t max_len);
/* Exactly n raw bytes into out (NULL: skip them). */
bool wire_get_raw(struct rbuf *r, void *out, size_t n);
/* Exactly n bytes as a malloc'd string (no length before them); NULL if short or with a NUL. */
char *wire_get_strn(struct rbuf *r, size_t n);
/* The next n bytes as a reader of their own (sub); false, and r failed, if fewer remain. */
bool wire_get_sub(struct rbuf *r, size_t n, struct rbuf *sub);
/* Bytes not yet read (0 once failed). */
size_t wire_left(const struct rbuf *r);
/* True when every field was read and nothing is left over. */
bool wire_done(const struct rbuf *r);

#endif
