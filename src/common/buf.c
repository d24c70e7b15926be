/*
 * common/buf.c — the growable byte buffer of common/buf.h: doubling from a
 * small first allocation, so appending is amortised constant time.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"

/* An empty buffer. */
void wbuf_init(struct wbuf *w)
{
	memset(w, 0, sizeof(*w));
}

/* Free the bytes and leave the buffer empty. */
void wbuf_free(struct wbuf *w)
{
	free(w->p);
	wbuf_init(w);
}

/* Room for n more bytes, doubling (fatal past what memory can hold). */
void wbuf_reserve(struct wbuf *w, size_t n)
{
	size_t cap;

	if (n <= w->cap - w->len)
		return;
	if (n > SIZE_MAX / 2 - w->len)
		fatal("buffer: %zu bytes is more than memory", n);
	cap = w->cap ? w->cap : 128;
	while (cap < w->len + n)
		cap *= 2;
	w->p = xrealloc(w->p, cap);
	w->cap = cap;
}

/* Append n bytes. */
void wbuf_put(struct wbuf *w, const void *p, size_t n)
{
	wbuf_reserve(w, n);
	if (n)
		memcpy(w->p + w->len, p, n);
	w->len += n;
}
