/*
 * cli/verify.c — does an audit log still say what the daemon wrote?
 *
 * Each line is parsed just enough to find its chain (its "session", or
 * "chain" for a --no-daemon run), its "seq" and its "prev"; then each chain
 * is walked in file order. Which line a break is reported at:
 *  - a line that is not one JSON object, or has no chain fields: that line;
 *  - a line without its '\n' (the file was cut): that line;
 *  - seq higher than the next expected: the expected line comes later
 *    (lines swapped: this line) or nowhere (lines dropped before this line);
 *  - seq lower than expected: this line (moved, or repeated);
 *  - prev not the hash of the chain's previous line: the previous line was
 *    edited when this line's own bytes are vouched for by the next link (the
 *    next line's prev, or for a seal its signature), else this line was;
 *  - a seal whose signature does not verify, or by a key other than the
 *    trusted one: the seal line; a line after its chain's seal: that line;
 *  - a chain with no seal: its last line (truncated there), unless the store
 *    says the session is still running and has written exactly those lines;
 *  - the store's length or head for the chain differs from the file's: the
 *    file's last line of the chain;
 *  - a session the store records as writing to this file has no line in it:
 *    line 0 (the file as a whole).
 * A forger can recompute SHA-256 chains; what they cannot do is sign a seal
 * with the user's key, or change what the store recorded.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/verify.h"
#include "common/util.h"

#define VERIFY_FIELDS_MAX 32

/* A top-level member of a line's object: key and value as bytes of the line. */
struct field {
	const char *key, *val;
	size_t klen, vlen;
	bool is_str;        /* a string without escapes (val excludes the quotes) */
};

/* What verify needs of one line. */
struct line {
	size_t no;                  /* 1-based */
	const char *p;
	size_t len;                 /* '\n' included when there is one */
	char id[33];                /* the chain it belongs to */
	uint64_t seq;
	unsigned char prev[CHAIN_HASH_LEN], hash[CHAIN_HASH_LEN];
	bool seal;
};

struct vchain {
	const char *id;
	const size_t *lines;        /* indexes into the lines, file order */
	size_t n;
};

/* Skip a JSON string at p (at its '"'); the index after it, or 0. */
static size_t skip_string(const char *p, size_t n, size_t i, bool *escaped)
{
	*escaped = false;
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"')
			return i + 1;
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			*escaped = true;
			i++;
		}
	}
	return 0;
}

/* Skip a JSON value (scalar, or a balanced object/array) at p[i]; the index after it, or 0. */
static size_t skip_value(const char *p, size_t n, size_t i)
{
	int depth = 0;
	bool esc;

	do {
		if (i >= n)
			return 0;
		if (p[i] == '"') {
			i = skip_string(p, n, i, &esc);
			if (!i)
				return 0;
		} else if (p[i] == '{' || p[i] == '[') {
			depth++;
			i++;
		} else if (p[i] == '}' || p[i] == ']') {
			if (--depth < 0)
				return 0;
			i++;
		} else if (depth > 0 && (p[i] == ',' || p[i] == ':' || p[i] == ' ')) {
			i++;
		} else {
			size_t j = i;

			while (j < n && strchr("+-.0123456789eEtruefalsn", p[j]))
				j++;
			if (j == i)
				return 0;
			i = j;
		}
	} while (depth > 0);
	return i;
}

/* The top-level members of the object p[0..n) (nothing may follow it); -1 when it is not one. */
static int parse_fields(const char *p, size_t n, struct field *f, size_t *nf)
{
	size_t i = 1;
	bool esc;

	*nf = 0;
	if (n < 2 || p[0] != '{')
		return -1;
	if (p[1] == '}')
		return n == 2 ? 0 : -1;
	for (;;) {
		size_t k, v;

		if (i >= n || p[i] != '"' || *nf >= VERIFY_FIELDS_MAX)
			return -1;
		k = skip_string(p, n, i, &esc);
		if (!k || esc || k >= n || p[k] != ':')
			return -1;
		f[*nf].key = p + i + 1;
		f[*nf].klen = k - i - 2;
		v = k + 1;
		if (v < n && p[v] == '"') {
			size_t e = skip_string(p, n, v, &esc);

			if (!e)
				return -1;
			f[*nf].val = p + v + 1;
			f[*nf].vlen = e - v - 2;
			f[*nf].is_str = !esc;
			i = e;
		} else {
			size_t e = skip_value(p, n, v);

			if (!e)
				return -1;
			f[*nf].val = p + v;
			f[*nf].vlen = e - v;
			f[*nf].is_str = false;
			i = e;
		}
		(*nf)++;
		if (i < n && p[i] == ',') {
			i++;
			continue;
		}
		return i + 1 == n && p[i] == '}' ? 0 : -1;
	}
}

/* The member named key, or NULL. */
static const struct field *field_get(const struct field *f, size_t nf, const char *key)
{
	for (size_t i = 0; i < nf; i++)
		if (f[i].klen == strlen(key) && memcmp(f[i].key, key, f[i].klen) == 0)
			return &f[i];
	return NULL;
}

/* A string member copied into out (at most cap-1 bytes); false when absent or not a plain string. */
static bool field_str(const struct field *f, size_t nf, const char *key, char *out, size_t cap)
{
	const struct field *x = field_get(f, nf, key);

	if (!x || !x->is_str || x->vlen >= cap)
		return false;
	memcpy(out, x->val, x->vlen);
	out[x->vlen] = '\0';
	return true;
}

/* An unsigned integer member (decimal, no sign, no leading zero but "0"). */
static bool field_uint(const struct field *f, size_t nf, const char *key, uint64_t *out)
{
	const struct field *x = field_get(f, nf, key);
	uint64_t v = 0;

	if (!x || x->is_str || x->vlen == 0 || x->vlen > 19 || (x->val[0] == '0' && x->vlen > 1))
		return false;
	for (size_t i = 0; i < x->vlen; i++) {
		if (x->val[i] < '0' || x->val[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(x->val[i] - '0');
	}
	*out = v;
	return true;
}

/* A hex member of exactly n bytes. */
static bool field_hex(const struct field *f, size_t nf, const char *key, unsigned char *out,
		      size_t n)
{
	char buf[2 * SIGN_SIG_LEN + 1];

	return n <= SIGN_SIG_LEN && field_str(f, nf, key, buf, sizeof(buf)) &&
	       chain_unhex(buf, out, n) == 0;
}

/* A chain id: 1..32 lower-case hex digits. */
static bool id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

int verify_parse_seal(const char *line, size_t len, struct seal *s, uint64_t *seq,
		      unsigned char prev[CHAIN_HASH_LEN])
{
	struct field f[VERIFY_FIELDS_MAX];
	size_t nf;
	char verdict[8];

	memset(s, 0, sizeof(*s));
	if (len && line[len - 1] == '\n')
		len--;
	if (parse_fields(line, len, f, &nf) < 0 ||
	    !field_str(f, nf, "verdict", verdict, sizeof(verdict)) || strcmp(verdict, "seal") != 0)
		return -1;
	if (!field_str(f, nf, "session", s->id, sizeof(s->id)) &&
	    !field_str(f, nf, "chain", s->id, sizeof(s->id)))
		return -1;
	if (!id_ok(s->id) || !field_uint(f, nf, "t", &s->t_ms) ||
	    !field_uint(f, nf, "lines", &s->audit.n) ||
	    !field_uint(f, nf, "decisions", &s->decisions.n) ||
	    !field_hex(f, nf, "decisions_head", s->decisions.head, CHAIN_HASH_LEN) ||
	    !field_hex(f, nf, "key", s->key, SIGN_PUB_LEN) ||
	    !field_hex(f, nf, "sig", s->sig, SIGN_SIG_LEN) || !field_uint(f, nf, "seq", seq) ||
	    !field_hex(f, nf, "prev", prev, CHAIN_HASH_LEN))
		return -1;
	memcpy(s->audit.head, prev, CHAIN_HASH_LEN);    /* the seal signs the chain before it */
	return 0;
}

/* Record a break at line no. */
static void add_break(struct verify_result *r, size_t no, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_break(struct verify_result *r, size_t no, const char *fmt, ...)
{
	struct verify_break *b = xappend(&r->breaks, &r->nbreaks, sizeof(*r->breaks));
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&b->why, fmt, ap) < 0)
		fatal("out of memory");
	va_end(ap);
	b->line = no;
}

/* True when line l's bytes are vouched for by what follows it in its chain. */
static bool vouched(const struct line *lines, const struct vchain *c, size_t i)
{
	const struct line *l = &lines[c->lines[i]];
	struct seal s;
	uint64_t seq;
	unsigned char prev[CHAIN_HASH_LEN];

	if (l->seal)
		return verify_parse_seal(l->p, l->len, &s, &seq, prev) == 0 && seal_verify(&s);
	if (i + 1 >= c->n)
		return false;
	return memcmp(lines[c->lines[i + 1]].prev, l->hash, CHAIN_HASH_LEN) == 0;
}

/* Check one seal line; false (and a break) when it does not hold. */
static bool check_seal(const struct line *l, const struct verify_opts *o, struct verify_result *r,
		       const char *id)
{
	struct seal s;
	uint64_t seq;
	unsigned char prev[CHAIN_HASH_LEN];
	char hex[2 * SIGN_PUB_LEN + 1];

	if (verify_parse_seal(l->p, l->len, &s, &seq, prev) < 0) {
		add_break(r, l->no, _("line %zu is a malformed seal of %s"), l->no, id);
		return false;
	}
	if (s.audit.n + 1 != seq) {
		add_break(r, l->no, ngettext("line %zu: the seal of %s counts %llu line before it, "
					     "its place says %llu",
					     "line %zu: the seal of %s counts %llu lines before it, "
					     "its place says %llu", s.audit.n), l->no, id,
			  (unsigned long long)s.audit.n, (unsigned long long)(seq - 1));
		return false;
	}
	if (!seal_verify(&s)) {
		add_break(r, l->no, _("line %zu: the seal of %s does not verify: its signature is "
				      "forged or the line was edited"), l->no, id);
		return false;
	}
	/*
	 * The signature covers the seal's numbers, not the line's other bytes (its
	 * words, the order of its members, a member given twice, which another JSON
	 * reader takes the last of). Only the store's head covers them, and a copy
	 * has no store: so the line must be exactly the one the daemon writes.
	 */
	{
		struct field f[VERIFY_FIELDS_MAX];
		size_t nf = 0;
		bool own_id = parse_fields(l->p, l->len - 1, f, &nf) == 0 &&
			      !field_get(f, nf, "session");
		char *want = seal_line(&s, own_id, seq);
		bool same = strlen(want) == l->len && memcmp(want, l->p, l->len) == 0;

		free(want);
		if (!same) {
			add_break(r, l->no, _("line %zu: the seal of %s was edited where its signature "
					      "does not reach (it is not the line boxy writes)"), l->no,
				  id);
			return false;
		}
	}
	memcpy(r->key, s.key, SIGN_PUB_LEN);
	r->have_key = true;
	if (o->trusted_key && memcmp(o->trusted_key, s.key, SIGN_PUB_LEN) != 0) {
		chain_hex(s.key, SIGN_PUB_LEN, hex);
		add_break(r, l->no, _("line %zu: %s was sealed by key %.16s…, not by the trusted key"),
			  l->no, id, hex);
		return false;
	}
	return true;
}

/* The position in c after i where seq want is, or 0. */
static size_t find_seq(const struct line *lines, const struct vchain *c, size_t i, uint64_t want)
{
	for (size_t j = i + 1; j < c->n; j++)
		if (lines[c->lines[j]].seq == want)
			return lines[c->lines[j]].no;
	return 0;
}

/* Walk one chain; its first break, if any, goes into r. */
static void walk_chain(const struct line *lines, const struct vchain *c,
		       const struct verify_opts *o, struct verify_result *r)
{
	struct chain ch;
	const struct line *last = NULL;
	size_t sealed_at = 0;
	struct verify_known k = { 0 };

	chain_audit_init(&ch, c->id);
	for (size_t i = 0; i < c->n; i++) {
		const struct line *l = &lines[c->lines[i]];
		uint64_t want = ch.n + 1;

		if (sealed_at) {
			add_break(r, l->no, _("line %zu comes after the seal of %s (line %zu)"), l->no,
				  c->id, sealed_at);
			return;
		}
		if (l->seq > want) {
			size_t later = find_seq(lines, c, i, want);

			if (later)
				add_break(r, l->no, _("line %zu is out of order: %s's line %llu comes "
						      "later, at line %zu"), l->no, c->id,
					  (unsigned long long)want, later);
			else
				add_break(r, l->no, ngettext("%llu line of %s is missing before line "
							     "%zu",
							     "%llu lines of %s are missing before line "
							     "%zu", l->seq - want),
					  (unsigned long long)(l->seq - want), c->id, l->no);
			return;
		}
		if (l->seq < want) {
			add_break(r, l->no, _("line %zu is out of order or repeated: %s's line %llu "
					      "after its line %llu"), l->no, c->id,
				  (unsigned long long)l->seq, (unsigned long long)ch.n);
			return;
		}
		if (memcmp(l->prev, ch.head, CHAIN_HASH_LEN) != 0) {
			if (last && vouched(lines, c, i))
				add_break(r, last->no, _("line %zu was changed (line %zu's hash of it "
							 "does not match)"), last->no, l->no);
			else
				add_break(r, l->no, _("line %zu was changed (its hash of the line before "
						      "it in %s does not match)"), l->no, c->id);
			return;
		}
		if (l->seal) {
			if (!check_seal(l, o, r, c->id))
				return;
			sealed_at = l->no;
			r->sealed++;
		}
		memcpy(ch.head, l->hash, CHAIN_HASH_LEN);
		ch.n++;
		last = l;
	}
	if (o->lookup)
		o->lookup(o->ctx, c->id, &k);
	if (k.found && (k.audit.n != ch.n || memcmp(k.audit.head, ch.head, CHAIN_HASH_LEN) != 0)) {
		add_break(r, last->no, k.audit.n > ch.n ?
			  ngettext("the log was truncated after line %zu: the store records %llu "
				   "line of %s, the file holds %llu",
				   "the log was truncated after line %zu: the store records %llu "
				   "lines of %s, the file holds %llu", k.audit.n) :
			  ngettext("after line %zu the log differs from the store's record (%llu "
				   "line of %s, the file holds %llu)",
				   "after line %zu the log differs from the store's record (%llu "
				   "lines of %s, the file holds %llu)", k.audit.n),
			  last->no, (unsigned long long)k.audit.n, c->id, (unsigned long long)ch.n);
		return;
	}
	if (!sealed_at) {
		if (k.running) {
			r->running++;
			return;
		}
		add_break(r, last->no, _("%s has no seal: the log was truncated after line %zu (or "
					 "its session never ended)"), c->id, last->no);
	}
}

/* Group lines by chain, each chain's in file order (qsort of indexes, for verify_audit_log). */
static const struct line *sort_lines;
static int line_cmp(const void *a, const void *b)
{
	const struct line *x = &sort_lines[*(const size_t *)a], *y = &sort_lines[*(const size_t *)b];
	int c = strcmp(x->id, y->id);

	return c ? c : x->no < y->no ? -1 : x->no > y->no;
}

/* Order breaks by line. */
static int break_cmp(const void *a, const void *b)
{
	const struct verify_break *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

void verify_audit_log(const char *buf, size_t len, const struct verify_opts *o,
		      struct verify_result *r)
{
	struct line *lines = NULL;
	size_t nlines = 0, off = 0, *idx;
	bool unreadable;

	memset(r, 0, sizeof(*r));
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t end = nl ? (size_t)(nl - buf) : len;
		struct field f[VERIFY_FIELDS_MAX];
		struct line *l;
		size_t nf, no = nlines + 1;
		char verdict[8];

		if (!nl) {
			add_break(r, no, _("line %zu is cut short: the file ends inside it (truncated)"),
				  no);
			break;
		}
		if (parse_fields(buf + off, end - off, f, &nf) < 0) {
			add_break(r, no, _("line %zu is not a JSON object: it was edited"), no);
			break;
		}
		l = xappend(&lines, &nlines, sizeof(*lines));
		memset(l, 0, sizeof(*l));
		l->no = no;
		l->p = buf + off;
		l->len = end + 1 - off;
		if (!(field_str(f, nf, "session", l->id, sizeof(l->id)) ||
		      field_str(f, nf, "chain", l->id, sizeof(l->id))) || !id_ok(l->id) ||
		    !field_uint(f, nf, "seq", &l->seq) ||
		    !field_hex(f, nf, "prev", l->prev, CHAIN_HASH_LEN)) {
			add_break(r, no, _("line %zu carries no chain (session, seq, prev): edited, or "
					   "written by a boxy without chains"), no);
			break;
		}
		l->seal = field_str(f, nf, "verdict", verdict, sizeof(verdict)) &&
			  strcmp(verdict, "seal") == 0 && field_get(f, nf, "sig");
		chain_sha256(l->p, l->len, l->hash);
		off = end + 1;
	}
	r->lines = nlines;
	idx = xcalloc(nlines + 1, sizeof(*idx));
	for (size_t i = 0; i < nlines; i++)
		idx[i] = i;
	sort_lines = lines;
	qsort(idx, nlines, sizeof(*idx), line_cmp);
	/* A line that cannot be read stops the walk: what follows it has no place to be checked. */
	unreadable = r->nbreaks > 0;
	for (size_t i = 0, j; i < nlines; i = j) {
		struct vchain c = { .id = lines[idx[i]].id, .lines = &idx[i] };

		for (j = i; j < nlines && strcmp(lines[idx[j]].id, c.id) == 0; j++)
			c.n++;
		r->chains++;
		if (!unreadable)
			walk_chain(lines, &c, o, r);
	}
	if (nlines == 0 && !r->nbreaks)
		add_break(r, 0, _("the log is empty: no line to verify"));
	/* (Past a line that cannot be read, the missing chain may be what follows it.) */
	for (size_t e = 0; e < o->nexpect && !unreadable; e++) {
		bool present = false;

		for (size_t i = 0; i < nlines && !present; i++)
			present = strcmp(lines[i].id, o->expect[e].id) == 0;
		if (!present)
			add_break(r, 0, ngettext("session %s wrote %llu line to this file (the "
						 "store's record), and it is not in it: the file was "
						 "replaced, or that session's line removed",
						 "session %s wrote %llu lines to this file (the "
						 "store's record), and none of them is in it: the file "
						 "was replaced, or all of that session's lines removed",
						 o->expect[e].lines), o->expect[e].id,
				  (unsigned long long)o->expect[e].lines);
	}
	r->key_trusted = o->trusted_key != NULL;
	if (r->nbreaks > 1)
		qsort(r->breaks, r->nbreaks, sizeof(*r->breaks), break_cmp);
	free(idx);
	free(lines);
}

void verify_result_free(struct verify_result *r)
{
	for (size_t i = 0; i < r->nbreaks; i++)
		free(r->breaks[i].why);
	free(r->breaks);
	r->breaks = NULL;
	r->nbreaks = 0;
}
