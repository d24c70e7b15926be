/*
 * common/event.c — emitting events into whatever sink the caller plugged in.
 */
#include <config.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/event.h"
#include "common/util.h"

void event_emit(const struct event_sink *sink, struct event *ev)
{
	if (!sink || !sink->emit)
		return;
	if (ev->t_ms == 0)
		ev->t_ms = now_real_ms();
	sink->emit(sink->ctx, ev);
}

struct event event_audit_make(const char *layer, const char *verdict, const char *subject,
			      const char *detail)
{
	struct event ev = {
		.kind = "audit",
		.verdict = verdict,
		.layer = layer,
		.subject = subject,
		.detail = detail,
	};

	return ev;
}

void event_audit(const struct event_sink *sink, const char *layer, const char *verdict,
		 const char *subject, const char *detail)
{
	struct event ev = event_audit_make(layer, verdict, subject, detail);

	event_emit(sink, &ev);
}

size_t event_reason_kind_len(const char *reason)
{
	return strcspn(reason, "0123456789");
}

/* s, or NULL when s is NULL or empty. */
static const char *nonempty(const char *s)
{
	return s && s[0] ? s : NULL;
}

char *event_who_package_words(const struct event_who *w)
{
	const char *pkg, *script, *version, *via;
	char *words, *safe;

	if (!w || !w->found || !(pkg = nonempty(w->package)))
		return NULL;
	script = nonempty(w->script);
	version = nonempty(w->version);
	via = nonempty(w->via);
	words = xasprintf("%s%s%s%s%s%s%s%s", w->claimed ? "claims " : "", script ? script : "",
			  script ? " of " : "", pkg, version ? "@" : "", version ? version : "",
			  via ? " via " : "", via ? via : "");
	safe = text_sanitize(words);
	free(words);
	return safe;
}

char *event_who_words(const struct event_who *w)
{
	char *pkg, *words, *safe;

	if (!w)
		return NULL;
	if (!w->found)
		return xstrdup("unknown");
	pkg = event_who_package_words(w);
	if (pkg && !w->claimed) {
		words = xasprintf("%s (%s, pid %u)", pkg, w->comm ? w->comm : "?", w->pid);
	} else if (pkg) {
		words = xasprintf("%s (pid %u) %s", w->comm ? w->comm : "?", w->pid, pkg);
	} else {
		/* No package: the command line says what it was (cut: it is the payload's). */
		const char *cmd = nonempty(w->cmdline) ? w->cmdline : w->comm ? w->comm : "?";
		size_t n = strlen(cmd);

		if (n > EVENT_WHO_CMD_MAX) {
			n = EVENT_WHO_CMD_MAX;
			while (n > 0 && ((unsigned char)cmd[n] & 0xc0) == 0x80)
				n--;
		}
		words = xasprintf("%.*s%s (pid %u)", (int)n, cmd, n < strlen(cmd) ? "…" : "", w->pid);
	}
	free(pkg);
	safe = text_sanitize(words);
	free(words);
	return safe;
}

/* The strings of an event and of its who, in one list: the copy owns them. */
static const char **copy_fields(struct event_copy *c, size_t i)
{
	const char **f[EVENT_COPY_STRS] = {
		&c->ev.session, &c->ev.kind, &c->ev.verdict, &c->ev.layer, &c->ev.subject,
		&c->ev.detail, &c->ev.addr, &c->ev.host, &c->ev.sni, &c->ev.what, &c->ev.method,
		&c->ev.path, &c->ev.query, &c->ev.rule_text, &c->ev.told,
		&c->who.comm, &c->who.argv0, &c->who.cmdline, &c->who.package, &c->who.version,
		&c->who.script, &c->who.via,
	};

	return f[i];
}

void event_copy_init(struct event_copy *c, const struct event *src)
{
	memset(c, 0, sizeof(*c));
	c->ev = *src;
	if (src->who) {
		c->who = *src->who;
		c->ev.who = &c->who;
	}
	for (size_t i = 0; i < EVENT_COPY_STRS; i++) {
		const char **f = copy_fields(c, i);

		if (i >= EVENT_STRS && !src->who)
			break;
		c->strs[i] = *f ? xstrdup(*f) : NULL;
		*f = c->strs[i];
	}
}

void event_copy_free(struct event_copy *c)
{
	for (size_t i = 0; i < EVENT_COPY_STRS; i++)
		free(c->strs[i]);
	memset(c, 0, sizeof(*c));
}

bool event_who_from_row(struct event_who *w, const char *const *v)
{
	memset(w, 0, sizeof(*w));
	if (!v[0])
		return false;
	w->pid = (uint32_t)strtoul(v[0], NULL, 10);
	w->found = w->pid != 0;
	if (!w->found)
		return true;
	w->comm = v[1];
	w->argv0 = v[2];
	w->cmdline = v[3];
	w->package = v[4];
	w->version = v[5];
	w->script = v[6];
	w->via = v[7];
	w->claimed = v[8] && strcmp(v[8], "1") == 0;
	return true;
}
