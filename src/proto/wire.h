/*
 * proto/wire.h — bounds-checked encoding of typed fields into byte buffers, for
 * the daemon's socket protocol (proto/msg.h). A reader never reads past its end:
 * the first short or malformed field makes it fail, and every later get
 * returns a zero value, so a decoder can read all fields and check once.
 */
#ifndef BOXY_WIRE_H
#define BOXY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAX_STRING   (1u << 20)     /* one string field */
#define WIRE_MAX_STRV     4096           /* entries in one string vector */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	bool failed;
};

void wbuf_init(struct wbuf *w);
void wbuf_free(struct wbuf *w);
void wire_put_u8(struct wbuf *w, uint8_t v);
void wire_put_u16(struct wbuf *w, uint16_t v);
void wire_put_u32(struct wbuf *w, uint32_t v);
void wire_put_u64(struct wbuf *w, uint64_t v);
void wire_put_bytes(struct wbuf *w, const void *p, size_t n);  /* u32 length + bytes */
void wire_put_str(struct wbuf *w, const char *s);               /* NULL encodes as absent */
void wire_put_strv(struct wbuf *w, char *const *v);             /* u32 count + strings */

void rbuf_init(struct rbuf *r, const void *p, size_t len);
uint8_t wire_get_u8(struct rbuf *r);
uint16_t wire_get_u16(struct rbuf *r);
uint32_t wire_get_u32(struct rbuf *r);
uint64_t wire_get_u64(struct rbuf *r);
/* A string: malloc'd, NUL-free, at most max bytes; NULL if absent (or on failure). */
char *wire_get_str(struct rbuf *r, size_t max);
/* A string vector of at most max entries; NULL-terminated, malloc'd; NULL on failure. */
char **wire_get_strv(struct rbuf *r, size_t max_entries, size_t max_len);
/* True when every field was read and nothing is left over. */
bool wire_done(const struct rbuf *r);

#endif
