/*
 * spec/profile-yaml.c — one profile document, from YAML text to run-spec fields.
 *
 * This is the only file that includes yaml.h. It drives libyaml's event
 * parser and builds a small tree of its own (scalars, lists, mappings, each
 * with the 1-based line and column it started at), refusing on the way
 * everything a profile has no use for: more than one document, anchors,
 * aliases, tags, %TAG directives, NUL bytes, deep nesting. The event API is
 * used rather than the document API because the latter resolves aliases
 * silently and forgets anchors, so it could not refuse them.
 *
 * The tree is then walked against the profile schema (doc/profiles.md): its
 * sections, and for keys the rows of the option table (spec/options.h), so
 * every key is known, every value has the expected shape, and every value a
 * user could also give on the command line goes through the same
 * spec_option_apply, and so the same validator, the flag uses. Errors read "FILE:LINE:COLUMN: message".
 *
 * extends: is handed back to spec/profile.c (lookup, cycles, depth) through a
 * callback that runs before this document's own keys are applied, so a child
 * appends to its parent's lists and overrides its parent's scalars.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "spec/options.h"
#include "spec/values.h"
#include "spec/profile-yaml.h"
#include "common/util.h"

/* Deeper than any profile needs; bounds the builder's stack. */
#define YNODE_MAX_DEPTH  32
/* More values than any profile needs; keeps duplicate-key checks cheap. */
#define YNODE_MAX_COUNT  10000

enum ynode_kind {
	YNODE_SCALAR,
	YNODE_LIST,
	YNODE_MAP,
};

struct ynode {
	enum ynode_kind kind;
	unsigned long line, col;    /* 1-based, where the node starts */
	char *text;                 /* scalar: value, NUL-terminated (no NUL inside) */
	bool plain;                 /* scalar: written without quotes */
	struct ynode **kids;        /* list: items; map: key, value, key, value, … */
	size_t nkids;
};

/* State of one document's walk. */
struct ywalk {
	const char *origin;
	const struct profile_ctx *ctx;
	struct runspec *rs;
	char **err;
	bool saw_mode;              /* network.mode given in this document */
	bool saw_hosts;             /* network.hosts or network.http non-empty in this document */
};

/* Free a tree. */
static void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->text);
	free(n);
}

/*
 * A message quoting a key or value from the file, with control characters
 * (C0, DEL, and C1 as UTF-8) written as \xNN: a double-quoted YAML string
 * can hold an escape sequence, and a profile may come from an untrusted
 * repository, so nothing from it reaches the terminal raw. malloc'd.
 */
static char *sanitize(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = xmalloc(n * 4 + 1);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned char next = (unsigned char)s[i + 1];

		if (c < 0x20 || c == 0x7f) {
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		} else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
			o += (size_t)sprintf(out + o, "\\x%02x", next);
			i++;
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

/* "ORIGIN:LINE:COL: message" into *err; returns -1. */
static int __attribute__((format(printf, 5, 6)))
err_at(char **err, const char *origin, unsigned long line, unsigned long col,
       const char *fmt, ...)
{
	va_list ap;
	char *msg, *full, *clean;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	full = xasprintf("%s:%lu:%lu: %s", origin, line, col, msg);
	clean = sanitize(full);
	set_err(err, "%s", clean);
	free(clean);
	free(full);
	free(msg);
	return -1;
}

/* Error located at node n. */
#define NODE_ERR(w, n, ...) err_at((w)->err, (w)->origin, (n)->line, (n)->col, __VA_ARGS__)

/* A plain scalar that YAML reads as null: empty, ~, null. */
static bool ynode_is_null(const struct ynode *n)
{
	return n->kind == YNODE_SCALAR && n->plain &&
	       (n->text[0] == '\0' || strcmp(n->text, "~") == 0 ||
		strcmp(n->text, "null") == 0 || strcmp(n->text, "Null") == 0 ||
		strcmp(n->text, "NULL") == 0);
}

static const char *ynode_kind_name(const struct ynode *n)
{
	if (ynode_is_null(n))
		return _("nothing");
	switch (n->kind) {
	case YNODE_SCALAR:
		return _("a single value");
	case YNODE_LIST:
		return _("a list");
	case YNODE_MAP:
		return _("a mapping");
	}
	return "?";
}

/* Line and column (1-based) of a byte offset, for libyaml reader errors that carry no mark. */
static void offset_to_mark(const char *text, size_t len, size_t off,
			   unsigned long *line, unsigned long *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/* Refuse what an event carries that profiles do not support (anchors, tags). */
static int check_props(const yaml_event_t *ev, const char *origin, char **err)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;

	if (ev->type == YAML_SCALAR_EVENT) {
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
	} else if (ev->type == YAML_SEQUENCE_START_EVENT) {
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
	}
	if (anchor)
		return err_at(err, origin, ev->start_mark.line + 1, ev->start_mark.column + 1,
			      _("YAML anchors (&%s) are not supported in a profile"),
			      (const char *)anchor);
	if (tag)
		return err_at(err, origin, ev->start_mark.line + 1, ev->start_mark.column + 1,
			      _("YAML tags (%s) are not supported in a profile"),
			      (const char *)tag);
	return 0;
}

/*
 * Read text into a tree. *root is NULL for an empty stream. The builder keeps
 * its own stack of open collections, so a hostile nesting depth costs an
 * error, not the C stack.
 */
static int yaml_read_tree(const char *text, size_t len, const char *origin,
			  struct ynode **root, char **err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct ynode *stack[YNODE_MAX_DEPTH];
	size_t depth = 0, count = 0;
	int ndocs = 0, rc = -1;
	bool done = false;

	*root = NULL;
	if (!yaml_parser_initialize(&parser))
		fatal("out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

	while (!done) {
		struct ynode *n = NULL;

		if (!yaml_parser_parse(&parser, &ev)) {
			unsigned long line, col;

			if (parser.error == YAML_MEMORY_ERROR)
				fatal("out of memory");
			if (parser.error == YAML_READER_ERROR) {
				offset_to_mark(text, len, parser.problem_offset, &line, &col);
			} else {
				line = parser.problem_mark.line + 1;
				col = parser.problem_mark.column + 1;
			}
			if (parser.context)
				err_at(err, origin, line, col, "%s %s",
				       parser.problem ? parser.problem : "invalid YAML",
				       parser.context);
			else
				err_at(err, origin, line, col, "%s",
				       parser.problem ? parser.problem : "invalid YAML");
			goto out;
		}
		if (check_props(&ev, origin, err) < 0)
			goto out_event;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++ndocs > 1) {
				err_at(err, origin, ev.start_mark.line + 1, ev.start_mark.column + 1,
				       _("a profile is a single YAML document"));
				goto out_event;
			}
			if (ev.data.document_start.tag_directives.start !=
			    ev.data.document_start.tag_directives.end) {
				err_at(err, origin, ev.start_mark.line + 1, ev.start_mark.column + 1,
				       _("YAML %%TAG directives are not supported in a profile"));
				goto out_event;
			}
			break;
		case YAML_ALIAS_EVENT:
			err_at(err, origin, ev.start_mark.line + 1, ev.start_mark.column + 1,
			       _("YAML aliases (*%s) are not supported in a profile"),
			       (const char *)ev.data.alias.anchor);
			goto out_event;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++count > YNODE_MAX_COUNT) {
				err_at(err, origin, ev.start_mark.line + 1, ev.start_mark.column + 1,
				       _("a profile may hold at most %d values"), YNODE_MAX_COUNT);
				goto out_event;
			}
			n = xcalloc(1, sizeof(*n));
			n->line = ev.start_mark.line + 1;
			n->col = ev.start_mark.column + 1;
			if (ev.type == YAML_SCALAR_EVENT) {
				size_t slen = ev.data.scalar.length;

				n->kind = YNODE_SCALAR;
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				if (slen && memchr(ev.data.scalar.value, '\0', slen)) {
					err_at(err, origin, n->line, n->col,
					       _("a value contains a NUL byte"));
					ynode_free(n);
					goto out_event;
				}
				n->text = xstrndup((const char *)ev.data.scalar.value, slen);
			} else {
				n->kind = ev.type == YAML_SEQUENCE_START_EVENT ? YNODE_LIST : YNODE_MAP;
			}
			if (depth == 0) {
				*root = n;
			} else {
				struct ynode *top = stack[depth - 1];
				struct ynode **slot = xappend(&top->kids, &top->nkids, sizeof(*slot));

				*slot = n;
			}
			if (n->kind != YNODE_SCALAR) {
				if (depth == YNODE_MAX_DEPTH) {
					err_at(err, origin, n->line, n->col,
					       _("nested deeper than %d levels"), YNODE_MAX_DEPTH);
					goto out_event;
				}
				stack[depth++] = n;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	rc = 0;
	goto out;
out_event:
	yaml_event_delete(&ev);
out:
	yaml_parser_delete(&parser);
	if (rc < 0) {
		ynode_free(*root);
		*root = NULL;
	}
	return rc;
}

/* ---- shapes ----------------------------------------------------------------- */

/* n must be a scalar holding a value (not null); *s points into the tree. */
static int want_scalar(struct ywalk *w, const struct ynode *n, const char *where, const char **s)
{
	if (n->kind != YNODE_SCALAR || ynode_is_null(n))
		return NODE_ERR(w, n, _("%s: expected a value, got %s"), where, ynode_kind_name(n));
	*s = n->text;
	return 0;
}

/* n must be a list (null counts as empty) of scalars. */
static int want_list(struct ywalk *w, const struct ynode *n, const char *where)
{
	if (ynode_is_null(n))
		return 0;
	if (n->kind != YNODE_LIST)
		return NODE_ERR(w, n, _("%s: expected a list, got %s"), where, ynode_kind_name(n));
	for (size_t i = 0; i < n->nkids; i++) {
		const char *s;

		if (want_scalar(w, n->kids[i], where, &s) < 0)
			return -1;
	}
	return 0;
}

/* Number of items of a list checked by want_list (null: none). */
static size_t list_len(const struct ynode *n)
{
	return n->kind == YNODE_LIST ? n->nkids : 0;
}

/* true or false, unquoted (YAML 1.2 spelling; yes/no/on/off are refused as ambiguous). */
static int want_bool(struct ywalk *w, const struct ynode *n, const char *where, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };

	if (n->kind == YNODE_SCALAR && n->plain) {
		for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
			if (strcmp(n->text, yes[i]) == 0) {
				*out = true;
				return 0;
			}
			if (strcmp(n->text, no[i]) == 0) {
				*out = false;
				return 0;
			}
		}
	}
	return NODE_ERR(w, n, _("%s: expected true or false"), where);
}

/* Wrap a validator's reason with the key and the value's position. */
static int value_err(struct ywalk *w, const struct ynode *n, const char *where, char *reason)
{
	NODE_ERR(w, n, "%s: %s", where, reason ? reason : _("invalid value"));
	free(reason);
	return -1;
}

/* ---- mapping walk ------------------------------------------------------------ */

/*
 * The profile's sections, in the order they are documented (doc/profiles.md)
 * and listed when a key is unknown. Their keys, and the top-level keys
 * besides extends:, are the rows of the option table (spec/options.h) whose
 * key is "SECTION.KEY" or "KEY".
 */
static const char *const sections[] = { "filesystem", "network", "env", "limits" };

/* One key a mapping may hold: a section, extends: (row and section NULL), or a row. */
struct ykey {
	const char *name;
	const char *section;        /* this key opens that section */
	const struct spec_option *row;
};

/* The row's key within section (NULL: top level), or NULL when it is not there. */
static const char *row_key_in(const struct spec_option *o, const char *section)
{
	const char *dot;

	if (!o->key)
		return NULL;
	dot = strchr(o->key, '.');
	if (!section)
		return dot ? NULL : o->key;
	if (!dot || strlen(section) != (size_t)(dot - o->key) ||
	    strncmp(o->key, section, (size_t)(dot - o->key)) != 0)
		return NULL;
	return dot + 1;
}

/* The keys of section (NULL: the top level), in listing order; *n of them. malloc'd. */
static struct ykey *section_keys(const char *section, size_t *n)
{
	struct ykey *k = NULL;

	*n = 0;
	if (!section) {
		*(struct ykey *)xappend(&k, n, sizeof(*k)) = (struct ykey){ "extends", NULL, NULL };
		for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
			*(struct ykey *)xappend(&k, n, sizeof(*k)) =
				(struct ykey){ sections[i], sections[i], NULL };
	}
	for (size_t i = 0; i < spec_noptions; i++) {
		const char *name = row_key_in(&spec_options[i], section);

		if (name)
			*(struct ykey *)xappend(&k, n, sizeof(*k)) =
				(struct ykey){ name, NULL, &spec_options[i] };
	}
	return k;
}

/* "a, b, c" of a key list, for the unknown-key message. malloc'd. */
static char *key_names(const struct ykey *k, size_t nk)
{
	char *s = xstrdup("");

	for (size_t i = 0; i < nk; i++) {
		char *t = xasprintf("%s%s%s", s, i ? ", " : "", k[i].name);

		free(s);
		s = t;
	}
	return s;
}

static int apply_row(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
		     const char *where);

/*
 * Check that n is a mapping (null counts as empty) with scalar keys, no key
 * twice, and only the keys of section (NULL: top level); apply each value in
 * document order. extends: is accepted without acting (profile_yaml_apply
 * took it first).
 */
static int walk_map(struct ywalk *w, const struct ynode *n, const char *section)
{
	struct ykey *keys;
	size_t nkeys;
	int rc = 0;

	if (ynode_is_null(n))
		return 0;
	if (n->kind != YNODE_MAP)
		return NODE_ERR(w, n, _("%s: expected a mapping, got %s"),
				section ? section : _("profile"), ynode_kind_name(n));
	keys = section_keys(section, &nkeys);
	for (size_t i = 0; rc == 0 && i + 1 < n->nkids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		const struct ykey *found = NULL;
		char *where;

		if (k->kind != YNODE_SCALAR || ynode_is_null(k)) {
			rc = NODE_ERR(w, k, _("keys must be plain words"));
			break;
		}
		for (size_t j = 0; j < i; j += 2) {
			if (strcmp(n->kids[j]->text, k->text) == 0) {
				rc = NODE_ERR(w, k, _("duplicate key '%s' (first at line %lu)"),
					      k->text, n->kids[j]->line);
				break;
			}
		}
		if (rc < 0)
			break;
		for (size_t j = 0; j < nkeys; j++) {
			if (strcmp(keys[j].name, k->text) == 0) {
				found = &keys[j];
				break;
			}
		}
		if (!found) {
			char *names = key_names(keys, nkeys);

			if (section)
				NODE_ERR(w, k, _("unknown key '%s' in %s (expected %s)"),
					 k->text, section, names);
			else
				NODE_ERR(w, k, _("unknown key '%s' (expected %s)"), k->text, names);
			free(names);
			rc = -1;
			break;
		}
		if (!found->row && !found->section)
			continue;
		where = section ? xasprintf("%s.%s", section, k->text) : xstrdup(k->text);
		rc = found->section ? walk_map(w, v, found->section) : apply_row(w, found->row, v, where);
		free(where);
	}
	free(keys);
	return rc;
}

/* ---- values, by the row's kind ------------------------------------------------ */

/* Apply text to the row; a validator's refusal is located at n. */
static int apply_text(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
		      const char *where, const char *text)
{
	char *reason = NULL;

	if (spec_option_apply(o, w->rs, text, &reason) < 0)
		return value_err(w, n, where, reason);
	return 0;
}

/* Each path of a list, expanded (~, {workdir}: doc/profiles.md), as one entry. */
static int apply_paths(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
		       const char *where)
{
	for (size_t i = 0; i < list_len(n); i++) {
		const struct ynode *item = n->kids[i];
		char *path, *reason = NULL;
		int rc;

		if (profile_expand_path(item->text, w->ctx, &path, &reason) < 0)
			return value_err(w, item, where, reason);
		rc = apply_text(w, o, item, where, path);
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/*
 * Copies are "SRC" or "SRC:DST". Each side is expanded on its own (so
 * "~/a:~/b" works), then the whole goes through the same parse_copy_spec as
 * --copy, so the two spellings cannot drift apart.
 */
static int apply_copies(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
			const char *where)
{
	for (size_t i = 0; i < list_len(n); i++) {
		const struct ynode *item = n->kids[i];
		const char *colon = strchr(item->text, ':');
		char *src_raw, *src = NULL, *dst = NULL, *joined, *reason = NULL;
		int rc;

		src_raw = colon ? xstrndup(item->text, (size_t)(colon - item->text))
				: xstrdup(item->text);
		rc = profile_expand_path(src_raw, w->ctx, &src, &reason);
		if (rc == 0 && colon)
			rc = profile_expand_path(colon + 1, w->ctx, &dst, &reason);
		free(src_raw);
		if (rc < 0) {
			free(src);
			return value_err(w, item, where, reason);
		}
		joined = dst ? xasprintf("%s:%s", src, dst) : xstrdup(src);
		free(src);
		free(dst);
		rc = apply_text(w, o, item, where, joined);
		free(joined);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* env.pass: names only; a NAME=value belongs under env.set. */
static int apply_pass(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
		      const char *where)
{
	for (size_t i = 0; i < list_len(n); i++) {
		struct env_spec *last;

		if (apply_text(w, o, n->kids[i], where, n->kids[i]->text) < 0)
			return -1;
		last = &w->rs->env[w->rs->nenv - 1];
		if (last->value) {
			env_spec_free(last);
			w->rs->nenv--;
			return NODE_ERR(w, n->kids[i],
					_("%s: takes names only; put NAME: value under env.set"),
					where);
		}
	}
	return 0;
}

/* env.set values get ~, {workdir} and {workdir_slug} expanded (doc/profiles.md). */
static int apply_set(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
		     const char *where)
{
	if (ynode_is_null(n))
		return 0;
	if (n->kind != YNODE_MAP)
		return NODE_ERR(w, n, _("%s: expected a mapping of NAME: value, got %s"),
				where, ynode_kind_name(n));
	for (size_t i = 0; i + 1 < n->nkids; i += 2) {
		const struct ynode *k = n->kids[i], *v = n->kids[i + 1];
		struct env_spec e = { 0 };
		char *reason = NULL;

		if (k->kind != YNODE_SCALAR || ynode_is_null(k))
			return NODE_ERR(w, k, _("%s: keys must be variable names"), where);
		for (size_t j = 0; j < i; j += 2) {
			if (strcmp(n->kids[j]->text, k->text) == 0)
				return NODE_ERR(w, k, _("duplicate key '%s' (first at line %lu)"),
						k->text, n->kids[j]->line);
		}
		if (parse_env_spec(k->text, &e, &reason) < 0)
			return value_err(w, k, where, reason);
		if (e.value) {
			env_spec_free(&e);
			return NODE_ERR(w, k, _("%s: '=' is not part of a variable name"), where);
		}
		if (v->kind != YNODE_SCALAR || ynode_is_null(v)) {
			env_spec_free(&e);
			return NODE_ERR(w, v, _("%s.%s: expected a value (write \"\" for an empty one)"),
					where, k->text);
		}
		e.value = profile_expand_value(v->text, w->ctx);
		*(struct env_spec *)xappend(spec_option_field(o, w->rs), spec_option_count(o, w->rs),
					    sizeof(e)) = e;
	}
	return 0;
}

/*
 * One row's value: a switch is true or false, a list a list of values, a
 * scalar one value; every value through the row's validator, the one the
 * flag uses.
 */
static int apply_row(struct ywalk *w, const struct spec_option *o, const struct ynode *n,
		     const char *where)
{
	const char *s;

	if (o->kind == SPEC_SWITCH)
		return want_bool(w, n, where, spec_option_field(o, w->rs));
	if (o->kind == SPEC_ENV_SET)
		return apply_set(w, o, n, where);
	if (spec_kind_is_list(o->kind)) {
		if (want_list(w, n, where) < 0)
			return -1;
		switch (o->kind) {
		case SPEC_MOUNT:
			return apply_paths(w, o, n, where);
		case SPEC_COPY:
			return apply_copies(w, o, n, where);
		case SPEC_ENV:
			return apply_pass(w, o, n, where);
		default:
			for (size_t i = 0; i < list_len(n); i++) {
				if (apply_text(w, o, n->kids[i], where, n->kids[i]->text) < 0)
					return -1;
				if (o->kind == SPEC_HOST || o->kind == SPEC_HTTP_RULE)
					w->saw_hosts = true;
			}
			return 0;
		}
	}
	if (want_scalar(w, n, where, &s) < 0 || apply_text(w, o, n, where, s) < 0)
		return -1;
	if (o->kind == SPEC_NET_MODE)
		w->saw_mode = true;
	return 0;
}

/* ---- entry ---------------------------------------------------------------------- */

int profile_yaml_apply(const char *text, size_t len, const char *origin,
		       const struct profile_ctx *ctx, struct runspec *rs,
		       int (*extends_cb)(void *arg, const char *parent, char **err),
		       void *arg, char **err)
{
	struct ywalk w = { .origin = origin, .ctx = ctx, .rs = rs, .err = err };
	struct ynode *root = NULL;
	int rc = -1;

	if (len > PROFILE_MAX_BYTES)
		return err_at(err, origin, 1, 1, _("a profile may be at most 1 MiB"));
	if (yaml_read_tree(text, len, origin, &root, err) < 0)
		return -1;
	if (!root || ynode_is_null(root)) {
		rc = 0;         /* an empty profile changes nothing */
		goto out;
	}
	if (root->kind != YNODE_MAP) {
		NODE_ERR(&w, root, _("a profile is a mapping of keys (filesystem:, network:, ...), "
				     "not %s"), ynode_kind_name(root));
		goto out;
	}

	/* The parent first, so this document's lists append to its and its scalars win. */
	for (size_t i = 0; i + 1 < root->nkids; i += 2) {
		const struct ynode *k = root->kids[i], *v = root->kids[i + 1];
		const char *parent;
		char *reason = NULL;
		int cb;

		if (k->kind != YNODE_SCALAR || strcmp(k->text, "extends") != 0)
			continue;
		for (size_t j = i + 2; j + 1 < root->nkids; j += 2) {
			if (root->kids[j]->kind == YNODE_SCALAR &&
			    strcmp(root->kids[j]->text, "extends") == 0) {
				NODE_ERR(&w, root->kids[j],
					 _("duplicate key 'extends' (first at line %lu)"), k->line);
				goto out;
			}
		}
		if (want_scalar(&w, v, "extends", &parent) < 0)
			goto out;
		cb = extends_cb(arg, parent, &reason);
		if (cb == -2) {
			if (err)
				*err = reason;
			else
				free(reason);
			goto out;
		}
		if (cb < 0) {
			value_err(&w, v, "extends", reason);
			goto out;
		}
		break;
	}
	if (walk_map(&w, root, NULL) < 0)
		goto out;
	/*
	 * hosts: without mode: in the same document means allowlist, as
	 * --allow-host does on the command line; a document that names hosts and
	 * says nothing of the mode means to restrict, not to inherit "public".
	 */
	if (w.saw_hosts && !w.saw_mode)
		rs->net = NET_ALLOWLIST;
	rc = 0;
out:
	ynode_free(root);
	return rc;
}
