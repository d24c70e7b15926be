/*
 * spec/learn.c — a profile learned from what sessions did (see spec/learn.h).
 *
 * The profile allows a name on exactly the ports a session reached it on:
 * a connection row contributes both the name its address was resolved from
 * and the name the client put on the wire (SNI or Host), because allowlist
 * mode checks both. A name that was resolved and never connected to is
 * listed without ports (allowlist mode answers only listed names, so a
 * program that looks a name up and then decides not to connect would
 * otherwise see a refusal it never saw before); it then gets the run's
 * port list, and its comment says so. Entries come out sorted by name, so
 * learning twice from the same sessions gives the same file.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "spec/learn.h"
#include "spec/runspec.h"
#include "spec/values.h"

/* More notes than this are summed in one line: a refusal storm stays one screen. */
#define LEARN_NOTES_MAX 20

#define LEARN_WHO_MAX 3  /* who needed an entry: the first few, then how many more */

struct learn_host {
	char *name;
	uint16_t *ports;
	size_t nports;
	char *session;          /* the first session that needed it */
	int64_t count;          /* connections (0: resolved only) */
	bool bound;             /* resolved, or a flow's address was bound to it; false: only
				 * named by the client (TLS SNI, HTTP Host), which it chose */
	char *who[LEARN_WHO_MAX];       /* the packages (or commands) that needed it, sanitized */
	size_t nwho, more_who;
};

struct learn_note {
	char *text;             /* sanitized, one line */
	char *session;
	char *who;              /* the first one's maker, sanitized, or NULL */
	int64_t count;
};

struct learn_session {
	char *id, *command, *profile, *mode;
};

struct learn {
	struct learn_host *hosts;
	size_t nhosts;
	struct learn_note *refused, *unnamed;
	size_t nrefused, nunnamed;
	char **cidrs;           /* "CIDR session" pairs flattened: text, session */
	char *tailscale;        /* the first session given --tailscale, or NULL */
	struct learn_session *sessions;
	size_t nsessions;
	size_t invalid;         /* recorded names no profile could list */
};

struct learn *learn_new(void)
{
	return xcalloc(1, sizeof(struct learn));
}

void learn_free(struct learn *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nhosts; i++) {
		free(l->hosts[i].name);
		free(l->hosts[i].ports);
		free(l->hosts[i].session);
		for (size_t j = 0; j < l->hosts[i].nwho; j++)
			free(l->hosts[i].who[j]);
	}
	free(l->hosts);
	for (size_t i = 0; i < l->nrefused; i++) {
		free(l->refused[i].text);
		free(l->refused[i].session);
		free(l->refused[i].who);
	}
	free(l->refused);
	for (size_t i = 0; i < l->nunnamed; i++) {
		free(l->unnamed[i].text);
		free(l->unnamed[i].session);
		free(l->unnamed[i].who);
	}
	free(l->unnamed);
	strv_free(l->cidrs);
	free(l->tailscale);
	for (size_t i = 0; i < l->nsessions; i++) {
		free(l->sessions[i].id);
		free(l->sessions[i].command);
		free(l->sessions[i].profile);
		free(l->sessions[i].mode);
	}
	free(l->sessions);
	free(l);
}

/* A comment's text is cut past this many bytes (a command line can be long). */
#define LEARN_TEXT_MAX 120

/* One line of printable text for a comment: controls (newlines too) become '?',
 * cut at a character boundary past LEARN_TEXT_MAX bytes. */
static char *comment_text(const char *s)
{
	char *t = text_sanitize(s);
	size_t n = strlen(t);

	if (n > LEARN_TEXT_MAX) {
		n = LEARN_TEXT_MAX;
		while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80)
			n--;            /* not inside a UTF-8 sequence */
		memcpy(t + n, "...", 4);
	}
	return t;
}

/* The first 8 digits of a session id, as ps and show print it. */
static const char *short_id(const char *id)
{
	static char buf[9];

	snprintf(buf, sizeof(buf), "%s", id ? id : "?");
	return buf;
}

/* Is name something a profile's hosts: may list, exactly as written? */
static bool name_listable(const char *name)
{
	struct host_spec h = { 0 };
	char *err = NULL;
	bool ok;

	if (!name || !*name || name[0] == '*' || strchr(name, ':'))
		return false;
	if (parse_host_spec(name, &h, &err) < 0) {
		free(err);
		return false;
	}
	ok = h.nports == 0 && strcmp(h.name, name) == 0;
	host_spec_free(&h);
	return ok;
}

/* The entry for name, made when missing; NULL when name cannot be listed. */
static struct learn_host *host_get(struct learn *l, const char *name, const char *session)
{
	struct learn_host *h;

	if (!name_listable(name)) {
		if (name && *name)
			l->invalid++;
		return NULL;
	}
	for (size_t i = 0; i < l->nhosts; i++)
		if (strcmp(l->hosts[i].name, name) == 0)
			return &l->hosts[i];
	h = xappend(&l->hosts, &l->nhosts, sizeof(*h));
	memset(h, 0, sizeof(*h));
	h->name = xstrdup(name);
	h->session = xstrdup(session ? session : "");
	return h;
}

/* Note that who needed h (once each; past LEARN_WHO_MAX only counted). */
static void host_add_who(struct learn_host *h, const char *who)
{
	char *clean;

	if (!who || !*who)
		return;
	clean = comment_text(who);
	for (size_t i = 0; i < h->nwho; i++)
		if (strcmp(h->who[i], clean) == 0) {
			free(clean);
			return;
		}
	if (h->nwho < LEARN_WHO_MAX) {
		h->who[h->nwho++] = clean;
		return;
	}
	h->more_who++;
	free(clean);
}

/* Add port to h once (kept sorted). */
static void host_add_port(struct learn_host *h, uint16_t port)
{
	size_t i;

	for (i = 0; i < h->nports && h->ports[i] < port; i++)
		;
	if (i < h->nports && h->ports[i] == port)
		return;
	h->ports = xrealloc(h->ports, (h->nports + 1) * sizeof(*h->ports));
	memmove(h->ports + i + 1, h->ports + i, (h->nports - i) * sizeof(*h->ports));
	h->ports[i] = port;
	h->nports++;
}

/* Count text among notes (deduplicated); past the cap only the last note's count grows. */
static void note_add(struct learn_note **v, size_t *n, const char *text, const char *session,
		     const char *who, int64_t count)
{
	struct learn_note *nt;
	char *clean = comment_text(text);

	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].text, clean) == 0) {
			(*v)[i].count += count;
			free(clean);
			return;
		}
	if (*n > LEARN_NOTES_MAX) {
		(*v)[*n - 1].count += count;
		free(clean);
		return;
	}
	if (*n == LEARN_NOTES_MAX) {
		free(clean);
		clean = xstrdup("(and more)");
	}
	nt = xappend(v, n, sizeof(*nt));
	nt->text = clean;
	nt->session = xstrdup(session ? session : "");
	nt->who = who && *who && *n <= LEARN_NOTES_MAX ? comment_text(who) : NULL;
	nt->count = count;
}

void learn_add_session(struct learn *l, const char *id, const char *command,
		       const char *profile, const char *mode)
{
	struct learn_session *s = xappend(&l->sessions, &l->nsessions, sizeof(*s));

	s->id = xstrdup(id ? id : "");
	s->command = comment_text(command ? command : "");
	s->profile = profile ? xstrdup(profile) : NULL;
	s->mode = comment_text(mode ? mode : "");
}

void learn_add_conn(struct learn *l, const char *session, const char *who, const char *proto,
		    const char *host, const char *sni, const char *addr, unsigned port,
		    bool allowed, const char *reason, int64_t count)
{
	const char *shown = host ? host : sni ? sni : addr;
	struct learn_host *h;
	char *text;

	if (count < 1)
		count = 1;
	if (!allowed) {
		text = xasprintf("%s %s:%u  %s", proto ? proto : "?", shown ? shown : "?", port,
				 reason && *reason ? reason : "refused");
		note_add(&l->refused, &l->nrefused, text, session, who, count);
		free(text);
		return;
	}
	if (port == 0 || port > 65535)
		return;
	if (!host && !sni) {
		text = xasprintf("%s %s:%u", proto ? proto : "?", addr ? addr : "?", port);
		note_add(&l->unnamed, &l->nunnamed, text, session, who, count);
		free(text);
		return;
	}
	if (host && (h = host_get(l, host, session)) != NULL) {
		host_add_port(h, (uint16_t)port);
		host_add_who(h, who);
		h->count += count;
		h->bound = true;
	}
	if (sni && (!host || strcmp(sni, host) != 0) && (h = host_get(l, sni, session)) != NULL) {
		host_add_port(h, (uint16_t)port);
		host_add_who(h, who);
		h->count += count;
	}
}

void learn_add_name(struct learn *l, const char *session, const char *who, const char *name,
		    bool allowed, const char *reason, int64_t count)
{
	struct learn_host *h;
	char *text;

	if (!allowed) {
		text = xasprintf("resolve %s  %s", name ? name : "?",
				 reason && *reason ? reason : "refused");
		note_add(&l->refused, &l->nrefused, text, session, who, count < 1 ? 1 : count);
		free(text);
		return;
	}
	h = host_get(l, name, session);
	if (h)
		h->bound = true;
	if (h && h->nports == 0)
		host_add_who(h, who);   /* who resolved it, while nobody connected to it */
}

void learn_add_cidr(struct learn *l, const char *session, const char *cidr)
{
	struct cidr c;
	char *err = NULL;

	if (parse_cidr(cidr, &c, &err) < 0) {
		free(err);
		l->invalid++;
		return;
	}
	cidr_free(&c);
	for (size_t i = 0; l->cidrs && l->cidrs[i]; i += 2)
		if (strcmp(l->cidrs[i], cidr) == 0)
			return;
	strv_push(&l->cidrs, cidr);
	strv_push(&l->cidrs, session ? session : "");
}

void learn_add_tailscale(struct learn *l, const char *session)
{
	if (!l->tailscale)
		l->tailscale = xstrdup(session ? session : "");
}

size_t learn_hosts(const struct learn *l)
{
	return l->nhosts;
}

static int host_cmp(const void *a, const void *b)
{
	return strcmp(((const struct learn_host *)a)->name, ((const struct learn_host *)b)->name);
}

/* The sessions' common profile when it is a plain NAME; NULL otherwise. */
static const char *common_profile(const struct learn *l)
{
	const char *p = NULL;

	for (size_t i = 0; i < l->nsessions; i++) {
		const char *q = l->sessions[i].profile;

		if (!q || !*q || strchr(q, '/') || (p && strcmp(p, q) != 0))
			return NULL;
		p = q;
	}
	for (const char *c = p; c && *c; c++)
		if (!(*c == '-' || *c == '_' || *c == '.' || (*c >= 'a' && *c <= 'z') ||
		      (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			return NULL;
	return p;
}

/* s as a YAML double-quoted scalar. */
static void yaml_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* The notes under a heading, one comment line each. */
static void print_notes(FILE *f, const char *heading, const struct learn_note *v, size_t n)
{
	if (n == 0)
		return;
	fprintf(f, "#\n# %s\n", heading);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "#   %s  (%lld, session %s%s%s)\n", v[i].text, (long long)v[i].count,
			short_id(v[i].session), v[i].who ? ", by " : "", v[i].who ? v[i].who : "");
}

/* ", by WHO, WHO (+N more)" for an entry (who needed it), or "". */
static void print_who(FILE *f, const struct learn_host *h)
{
	for (size_t i = 0; i < h->nwho; i++)
		fprintf(f, "%s%s", i ? ", " : ", by ", h->who[i]);
	if (h->more_who)
		fprintf(f, " (+%zu more)", h->more_who);
}

char *learn_yaml(const struct learn *l, const char *extends)
{
	struct learn_host *hosts = NULL;
	const char *base = extends;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		fatal_errno("open_memstream");
	if (!base)
		base = common_profile(l);
	fprintf(f, "# Learned by `boxy profile learn` from %zu session%s:\n", l->nsessions,
		l->nsessions == 1 ? "" : "s");
	for (size_t i = 0; i < l->nsessions; i++) {
		char *prof = comment_text(l->sessions[i].profile);

		fprintf(f, "#   %s  %s  (%s%s%s)\n", short_id(l->sessions[i].id),
			l->sessions[i].command, l->sessions[i].mode,
			l->sessions[i].profile ? ", profile " : "", l->sessions[i].profile ? prof : "");
		free(prof);
	}
	fprintf(f, "# It allows the names those sessions reached, on the ports they used, and\n"
		   "# nothing else; filesystem, environment and limits come from the profile it\n"
		   "# extends. Use it with: boxy run --profile ./THIS-FILE.yaml -- COMMAND\n");
	if (!base) {
		base = "generic";
		if (l->nsessions > 0)
			fprintf(f, "# The sessions did not share one named profile: this extends generic.\n");
	}
	fprintf(f, "\nextends: ");
	yaml_quoted(f, base);
	fprintf(f, "\n\nnetwork:\n");
	if (l->nhosts == 0 && !l->cidrs && !l->tailscale && l->nunnamed == 0) {
		fprintf(f, "  # No session reached or resolved anything: no network at all.\n"
			   "  mode: none\n");
	} else {
		fprintf(f, "  mode: allowlist\n  hosts:\n");
		if (l->nhosts == 0)
			fprintf(f, "    []\n");
		hosts = xmalloc((l->nhosts ? l->nhosts : 1) * sizeof(*hosts));
		memcpy(hosts, l->hosts, l->nhosts * sizeof(*hosts));
		qsort(hosts, l->nhosts, sizeof(*hosts), host_cmp);
		for (size_t i = 0; i < l->nhosts; i++) {
			const struct learn_host *h = &hosts[i];

			if (h->nports == 0) {
				fprintf(f, "    # resolved in session %s", short_id(h->session));
				print_who(f, h);
				fprintf(f, ", never connected to: the run's ports apply\n");
			} else {
				fprintf(f, "    # %lld connection%s, first in session %s",
					(long long)h->count, h->count == 1 ? "" : "s",
					short_id(h->session));
				print_who(f, h);
				if (!h->bound)
					/* A payload can put any name in its ClientHello or Host header:
					 * the reader should know this one was never looked up. */
					fprintf(f, ": named only by the client (TLS SNI or HTTP Host) to an "
						   "address of another name or none, never resolved: check it");
				fputc('\n', f);
			}
			fprintf(f, "    - \"%s", h->name);
			for (size_t j = 0; j < h->nports; j++)
				fprintf(f, "%c%u", j ? ',' : ':', h->ports[j]);
			fprintf(f, "\"\n");
		}
		free(hosts);
		if (l->cidrs) {
			fprintf(f, "  # Address exceptions the sessions were given (--allow-cidr), kept.\n"
				   "  cidrs:\n");
			for (size_t i = 0; l->cidrs[i]; i += 2)
				fprintf(f, "    - \"%s\"   # session %s\n", l->cidrs[i],
					short_id(l->cidrs[i + 1]));
		}
		if (l->tailscale)
			fprintf(f, "  tailscale: true   # session %s ran with --tailscale\n",
				short_id(l->tailscale));
	}
	print_notes(f, "Connected to by address alone: not learned (a profile allows names;\n"
		       "# in allowlist mode these connections are refused):", l->unnamed, l->nunnamed);
	print_notes(f, "Refused in the sessions: not learned (allow them yourself if you mean it):",
		    l->refused, l->nrefused);
	if (l->invalid)
		fprintf(f, "#\n# %zu recorded name%s not valid as a host entry left out.\n",
			l->invalid, l->invalid == 1 ? "" : "s");
	if (fclose(f) != 0)
		fatal_errno("open_memstream");
	return out;
}
