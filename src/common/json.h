/*
 * common/json.h — a small JSON writer into a growing buffer. Strings are escaped
 * so that no control character (C0, DEL, C1, bidi and invisible format
 * characters: unicode_is_control) or invalid UTF-8 from a hostile name
 * reaches a terminal or a parser raw (invalid bytes become \ufffd): the
 * output is always valid JSON in valid UTF-8.
 */
#ifndef BOXY_JSON_H
#define BOXY_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct jbuf {
	union {
		struct wbuf w;          /* the text so far, in common/buf.h's buffer */
		struct {
			char *p;        /* the same bytes as text: NUL-terminated once written */
			size_t len, cap;
		};
	};
	bool need_comma;    /* internal: a value was written at this level */
};

void jbuf_init(struct jbuf *b);
void jbuf_free(struct jbuf *b);
char *jbuf_steal(struct jbuf *b);        /* NUL-terminated, caller frees */

void json_obj_begin(struct jbuf *b);
void json_obj_end(struct jbuf *b);
void json_arr_begin(struct jbuf *b);
void json_arr_end(struct jbuf *b);
void json_key(struct jbuf *b, const char *key);
void json_str(struct jbuf *b, const char *s);    /* NULL writes null */
void json_int(struct jbuf *b, int64_t v);
void json_uint(struct jbuf *b, uint64_t v);
void json_bool(struct jbuf *b, bool v);
void json_null(struct jbuf *b);
/* key + value shorthands */
void json_kv_str(struct jbuf *b, const char *key, const char *s);
void json_kv_int(struct jbuf *b, const char *key, int64_t v);
void json_kv_uint(struct jbuf *b, const char *key, uint64_t v);
void json_kv_bool(struct jbuf *b, const char *key, bool v);

/* Append raw text (already valid JSON). */
void jbuf_raw(struct jbuf *b, const char *s);
/*
 * Append text that should already be JSON but was read back from somewhere
 * (a store row an older build wrote): every control or invalid byte inside
 * a string is escaped as json_str would, any outside one dropped.
 */
void jbuf_raw_json(struct jbuf *b, const char *s);

#endif
