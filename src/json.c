/*
 * json.c — a small JSON writer. Everything boxy prints for scripts (--json,
 * --audit-log, --net-log) goes through it, so escaping is decided once:
 * control bytes are \u-escaped and invalid UTF-8 becomes U+FFFD, because
 * names and paths can come from a hostile payload.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

void jbuf_init(struct jbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void jbuf_free(struct jbuf *b)
{
	free(b->p);
	jbuf_init(b);
}

static void jbuf_put(struct jbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

char *jbuf_steal(struct jbuf *b)
{
	char *p;

	if (!b->p)
		jbuf_put(b, "", 0);
	p = b->p;
	jbuf_init(b);
	return p;
}

void jbuf_raw(struct jbuf *b, const char *s)
{
	jbuf_put(b, s, strlen(s));
}

/* Separate this value from the previous one at the same level. */
static void sep(struct jbuf *b)
{
	if (b->need_comma)
		jbuf_put(b, ",", 1);
	b->need_comma = true;
}

void json_obj_begin(struct jbuf *b)
{
	sep(b);
	jbuf_put(b, "{", 1);
	b->need_comma = false;
}

void json_obj_end(struct jbuf *b)
{
	jbuf_put(b, "}", 1);
	b->need_comma = true;
}

void json_arr_begin(struct jbuf *b)
{
	sep(b);
	jbuf_put(b, "[", 1);
	b->need_comma = false;
}

void json_arr_end(struct jbuf *b)
{
	jbuf_put(b, "]", 1);
	b->need_comma = true;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_valid(const unsigned char *s, size_t avail)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and out-of-range code points are invalid. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void json_escaped(struct jbuf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str);
	char esc[8];

	jbuf_put(b, "\"", 1);
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			jbuf_put(b, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			jbuf_put(b, esc, 6);
			i++;
		} else if ((n = utf8_valid(s + i, len - i)) == 0) {
			jbuf_put(b, "\\ufffd", 6);
			i++;
		} else {
			jbuf_put(b, (const char *)s + i, n);
			i += n;
		}
	}
	jbuf_put(b, "\"", 1);
}

void json_key(struct jbuf *b, const char *key)
{
	sep(b);
	json_escaped(b, key);
	jbuf_put(b, ":", 1);
	b->need_comma = false;
}

void json_str(struct jbuf *b, const char *s)
{
	sep(b);
	if (!s)
		jbuf_put(b, "null", 4);
	else
		json_escaped(b, s);
}

void json_int(struct jbuf *b, int64_t v)
{
	char tmp[32];

	sep(b);
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	jbuf_raw(b, tmp);
}

void json_uint(struct jbuf *b, uint64_t v)
{
	char tmp[32];

	sep(b);
	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	jbuf_raw(b, tmp);
}

void json_bool(struct jbuf *b, bool v)
{
	sep(b);
	jbuf_raw(b, v ? "true" : "false");
}

void json_null(struct jbuf *b)
{
	sep(b);
	jbuf_raw(b, "null");
}

void json_kv_str(struct jbuf *b, const char *key, const char *s)
{
	json_key(b, key);
	json_str(b, s);
}

void json_kv_int(struct jbuf *b, const char *key, int64_t v)
{
	json_key(b, key);
	json_int(b, v);
}

void json_kv_uint(struct jbuf *b, const char *key, uint64_t v)
{
	json_key(b, key);
	json_uint(b, v);
}

void json_kv_bool(struct jbuf *b, const char *key, bool v)
{
	json_key(b, key);
	json_bool(b, v);
}
