/*
 * spec/expand.c — what a profile's paths and values may name: ~ (the caller's
 * home), {workdir}, {workdir_slug} (the work directory as Claude Code names
 * its project directory) and {cache} (XDG_CACHE_HOME). Pure but for
 * XDG_CACHE_HOME; used by the profile reader (spec/profile-yaml.c) for each
 * value, and by nothing that reads a file.
 */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec/expand.h"
#include "common/util.h"

/* A growing NUL-terminated string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sbuf_adds(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

/*
 * Next UTF-16 code unit count and code point of the UTF-8 sequence at *p
 * (advancing *p). Claude Code computes the slug in JavaScript, over UTF-16
 * code units, so a character outside the BMP counts twice. A byte that does
 * not start a valid sequence is one unit (the U+FFFD a decoder makes of it).
 */
static unsigned utf8_next(const unsigned char **p, uint32_t *cp)
{
	const unsigned char *s = *p;
	unsigned len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
		       (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t c;

	if (len == 0 || len == 1) {
		*cp = len ? s[0] : 0xfffd;
		*p = s + 1;
		return 1;
	}
	c = s[0] & (0x7f >> len);
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*cp = 0xfffd;
			*p = s + 1;
			return 1;
		}
		c = (c << 6) | (s[i] & 0x3f);
	}
	*cp = c;
	*p = s + len;
	return c >= 0x10000 ? 2 : 1;
}

/*
 * The name Claude Code gives a project's directory under ~/.claude/projects:
 * every character that is not an ASCII letter or digit becomes '-' (so
 * "/home/u/my.proj" is "-home-u-my-proj"), one '-' per UTF-16 code unit, no
 * runs collapsed. Past 200 characters Claude Code keeps the first 200 and
 * appends '-' and a base-36 hash of the path (31*h + unit over the UTF-16
 * code units, wrapped to 32 bits signed, absolute value). Matching it exactly
 * matters: a slug that differs by one character sends the transcripts to a
 * directory Claude never reads.
 */
char *profile_workdir_slug(const char *workdir)
{
	enum { SLUG_MAX = 200 };
	const unsigned char *p = (const unsigned char *)workdir;
	struct sbuf b = { xstrdup(""), 0, 1 };
	int32_t hash = 0;
	int64_t mag;
	char digits[16];
	size_t nd = 0;

	while (*p) {
		uint32_t cp;
		unsigned units = utf8_next(&p, &cp);
		bool alnum = cp < 0x80 && ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
					   (cp >= '0' && cp <= '9'));
		uint32_t unit[2] = { cp, 0 };

		if (units == 2) {
			unit[0] = 0xd800 + ((cp - 0x10000) >> 10);
			unit[1] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
		}
		for (unsigned i = 0; i < units; i++) {
			char c = alnum ? (char)cp : '-';

			sbuf_add(&b, &c, 1);
			/* (h << 5) - h + unit, in 32-bit two's complement as JavaScript's |0 does. */
			hash = (int32_t)((uint32_t)hash * 31u + unit[i]);
		}
	}
	if (b.len <= SLUG_MAX)
		return b.p;
	b.len = SLUG_MAX;
	b.p[b.len] = '\0';
	mag = hash < 0 ? -(int64_t)hash : hash;
	do {
		digits[nd++] = "0123456789abcdefghijklmnopqrstuvwxyz"[mag % 36];
		mag /= 36;
	} while (mag);
	sbuf_add(&b, "-", 1);
	while (nd)
		sbuf_add(&b, &digits[--nd], 1);
	return b.p;
}

/* The home without a trailing '/', so "~/x" never gives "//x". */
static void add_home(struct sbuf *b, const char *home)
{
	size_t n = strlen(home);

	while (n > 1 && home[n - 1] == '/')
		n--;
	if (n == 1 && home[0] == '/')
		return;         /* home is "/": "~/x" is "/x" */
	sbuf_add(b, home, n);
}

/*
 * {cache}: $XDG_CACHE_HOME when it is absolute, else the home's .cache (the
 * XDG base directory rule). False when neither is known.
 */
static bool profile_add_cache_dir(struct sbuf *b, const struct profile_ctx *ctx)
{
	const char *xdg = getenv("XDG_CACHE_HOME");

	if (xdg && xdg[0] == '/') {
		sbuf_adds(b, xdg);
		return true;
	}
	if (!ctx->home || ctx->home[0] != '/')
		return false;
	add_home(b, ctx->home);
	sbuf_adds(b, "/.cache");
	return true;
}

/*
 * The one expander behind both entry points. strict (paths): ~user and
 * unknown {…} are errors and the result must be absolute. Not strict (env
 * values): what cannot be expanded is kept as written.
 */
static int expand(const char *in, const struct profile_ctx *ctx, bool strict,
		  char **out, char **err)
{
	struct sbuf b = { xstrdup(""), 0, 1 };
	const char *p = in;

	if (p[0] == '~' && (p[1] == '\0' || p[1] == '/')) {
		if (ctx->home && ctx->home[0]) {
			add_home(&b, ctx->home);
			p++;
		} else if (strict) {
			free(b.p);
			return set_err(err, _("cannot expand ~: no home directory is known"));
		}
	} else if (p[0] == '~' && strict) {
		free(b.p);
		return set_err(err, _("'%s': ~user is not supported; write the path"), in);
	}
	while (*p) {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			size_t n = close ? (size_t)(close - p) + 1 : strlen(p);
			bool is_workdir = n == strlen("{workdir}") && strncmp(p, "{workdir}", n) == 0;
			bool is_slug = n == strlen("{workdir_slug}") &&
				       strncmp(p, "{workdir_slug}", n) == 0;
			bool is_cache = n == strlen("{cache}") && strncmp(p, "{cache}", n) == 0;

			if (is_cache && profile_add_cache_dir(&b, ctx)) {
				p += n;
				continue;
			}

			if ((is_workdir || is_slug) && ctx->workdir) {
				char *slug = is_slug ? profile_workdir_slug(ctx->workdir) : NULL;

				sbuf_adds(&b, slug ? slug : ctx->workdir);
				free(slug);
				p += n;
				continue;
			}
			if (strict) {
				int rc;

				if (is_workdir || is_slug)
					rc = set_err(err, _("cannot expand %.*s: no working directory "
							    "is known"), (int)n, p);
				else
					rc = set_err(err, _("unknown placeholder '%.*s' in '%s' "
							    "(expected {workdir}, {workdir_slug} or {cache})"),
						     (int)(n > 40 ? 40 : n), p, in);
				free(b.p);
				return rc;
			}
		}
		sbuf_add(&b, p, 1);
		p++;
	}
	if (strict && b.p[0] != '/') {
		int rc = set_err(err, _("'%s': paths in a profile must be absolute, start with ~ "
					"or {workdir}"), in);

		free(b.p);
		return rc;
	}
	*out = b.p;
	return 0;
}

int profile_expand_path(const char *in, const struct profile_ctx *ctx, char **out, char **err)
{
	return expand(in, ctx, true, out, err);
}

char *profile_expand_value(const char *in, const struct profile_ctx *ctx)
{
	char *out = NULL;

	if (expand(in, ctx, false, &out, NULL) < 0)
		fatal("profile_expand_value: lenient expansion failed");
	return out;
}
