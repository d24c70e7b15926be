/*
 * common/json.c — a small JSON writer. Everything boxy prints for scripts (--json,
 * --audit-log, --net-log) goes through it, so escaping is decided once:
 * every C0/C1 control and invisible format character is \u-escaped and
 * invalid UTF-8 becomes U+FFFD, because names and paths can come from a
 * hostile payload (the decoder and the list of controls live in common/util.c,
 * shared with the screen's sanitizer).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"

void jbuf_init(struct jbuf *b)
{
	memset(b, 0, sizeof(*b));
	wbuf_init(&b->w);
}

void jbuf_free(struct jbuf *b)
{
	wbuf_free(&b->w);
	jbuf_init(b);
}

/* Append n bytes of text, keeping a NUL after them (not counted in len). */
static void jbuf_put(struct jbuf *b, const char *s, size_t n)
{
	wbuf_reserve(&b->w, n + 1);
	wbuf_put(&b->w, s, n);
	b->w.p[b->w.len] = '\0';
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

/*
 * Write one string. Every control utf8_decode/unicode_is_control name (C0,
 * DEL, C1 such as U+009B, bidi and other invisible format characters) is
 * \u-escaped, so the bytes of the output never carry it raw, whoever cats
 * the file; every invalid byte (overlongs, surrogates, past U+10FFFF,
 * truncated) becomes \ufffd, so the output is always valid UTF-8.
 */
static void json_escape_cp(struct jbuf *b, uint32_t cp);

static void json_escaped(struct jbuf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str);
	char esc[16];

	jbuf_put(b, "\"", 1);
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		uint32_t cp = 0;
		size_t n;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			jbuf_put(b, esc, 2);
			i++;
		} else if ((n = utf8_decode(s + i, len - i, &cp)) == 0) {
			jbuf_put(b, "\\ufffd", 6);
			i++;
		} else if (unicode_is_control(cp)) {
			json_escape_cp(b, cp);  /* a tag character becomes a surrogate pair */
			i += n;
		} else {
			jbuf_put(b, (const char *)s + i, n);
			i += n;
		}
	}
	jbuf_put(b, "\"", 1);
}

/* One code point, escaped as json_escaped writes a control. */
static void json_escape_cp(struct jbuf *b, uint32_t cp)
{
	char esc[16];

	if (cp > 0xffff)
		snprintf(esc, sizeof(esc), "\\u%04x\\u%04x",
			 (unsigned)(0xd800 + ((cp - 0x10000) >> 10)),
			 (unsigned)(0xdc00 + ((cp - 0x10000) & 0x3ff)));
	else
		snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
	jbuf_raw(b, esc);
}

void jbuf_raw_json(struct jbuf *b, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len = strlen(text);
	bool in = false;

	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = utf8_decode(s + i, len - i, &cp);

		if (in && s[i] == '\\' && i + 1 < len && s[i + 1] >= 0x20 && s[i + 1] < 0x7f) {
			jbuf_put(b, (const char *)s + i, 2);     /* an escape already written */
			i += 2;
		} else if (s[i] == '"') {
			in = !in;
			jbuf_put(b, "\"", 1);
			i++;
		} else if (n == 0) {
			if (in)
				jbuf_put(b, "\\ufffd", 6);
			i++;
		} else if (unicode_is_control(cp)) {
			if (in)
				json_escape_cp(b, cp);
			else if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r')
				jbuf_put(b, (const char *)s + i, 1);
			i += n;
		} else {
			jbuf_put(b, (const char *)s + i, n);
			i += n;
		}
	}
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
