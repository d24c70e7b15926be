/*
 * common/buf.h — the one growable byte buffer. The daemon protocol's field
 * codec (proto/wire.h), the plan (init/plan.c) and the JSON writer
 * (common/json.h) all append into it; it grows geometrically and never
 * fails (an allocation failure is fatal, as everywhere in boxy).
 */
#ifndef BOXY_BUF_H
#define BOXY_BUF_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

/* An empty buffer: nothing allocated yet. */
void wbuf_init(struct wbuf *w);
/* Free what w holds and leave it empty. */
void wbuf_free(struct wbuf *w);
/* Append n bytes (p may be NULL when n is 0). */
void wbuf_put(struct wbuf *w, const void *p, size_t n);
/* Make room for n more bytes without writing them. */
void wbuf_reserve(struct wbuf *w, size_t n);

#endif
