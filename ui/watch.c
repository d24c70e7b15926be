/*
 * watch.c — `boxy watch`'s model and screen. What is worth seeing is a
 * decision, not a counter, so the model keeps every event line it was
 * pushed; the arithmetic arrives separately as snapshots, so a watch that
 * started halfway shows the same totals `boxy show` prints afterwards.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "ui/watch.h"
#include "proto/daemon-msg.h"
#include "proto/wire.h"

void watch_model_init(struct watch_model *m)
{
	memset(m, 0, sizeof(*m));
}

static void free_dests(struct watch_model *m)
{
	for (size_t i = 0; i < m->ndests; i++)
		free(m->dests[i].name);
	free(m->dests);
	m->dests = NULL;
	m->ndests = 0;
}

void watch_model_free(struct watch_model *m)
{
	free(m->id);
	free(m->state);
	free(m->cmdline);
	free_dests(m);
	refusals_free(&m->refusals);
	for (size_t i = 0; i < WATCH_RECENT; i++)
		free(m->recent[i].text);
	for (size_t i = 0; i < m->nalerts; i++)
		free(m->alerts[i].text);
	watch_model_init(m);
}

/* The screen's one sanitizer (common/util.c), under the name watch's callers know. */
char *watch_sanitize(const char *s)
{
	return text_sanitize(s);
}

int watch_model_snapshot(struct watch_model *m, const void *payload, size_t len)
{
	struct rbuf r;
	char *id, *state, **argv;
	uint64_t elapsed, conns, denied, up, down;
	uint32_t n;
	struct watch_dest *dests = NULL;
	size_t ndests = 0;
	struct refusals refused;
	int rok;

	rbuf_init(&r, payload, len);
	id = wire_get_str(&r, 64);
	state = wire_get_str(&r, 64);
	argv = wire_get_strv(&r, 4096, 1 << 17);
	elapsed = wire_get_u64(&r);
	conns = wire_get_u64(&r);
	denied = wire_get_u64(&r);
	up = wire_get_u64(&r);
	down = wire_get_u64(&r);
	n = wire_get_u32(&r);
	for (uint32_t i = 0; i < n && !r.failed && i < 100000; i++) {
		struct watch_dest *d = xappend(&dests, &ndests, sizeof(*dests));

		d->name = wire_get_str(&r, 1024);
		d->conns = wire_get_u64(&r);
		d->denied = wire_get_u64(&r);
		d->addrs = wire_get_u64(&r);
		d->sent = wire_get_u64(&r);
		d->received = wire_get_u64(&r);
		if (!d->name)
			r.failed = true;
	}
	rok = refusals_decode(&r, &refused);
	if (!wire_done(&r) || !id || !state || !argv || rok < 0) {
		if (rok == 0)
			refusals_free(&refused);
		for (size_t i = 0; i < ndests; i++)
			free(dests[i].name);
		free(dests);
		free(id);
		free(state);
		strv_free(argv);
		return -1;
	}
	free(m->id);
	free(m->state);
	free(m->cmdline);
	free_dests(m);
	refusals_free(&m->refusals);
	m->refusals = refused;
	m->id = id;
	m->state = state;
	{
		/* The command line as one string, for the header. */
		size_t total = 1;
		char *line;

		for (size_t i = 0; argv[i]; i++)
			total += strlen(argv[i]) + 1;
		line = xcalloc(1, total);
		for (size_t i = 0; argv[i]; i++) {
			if (i)
				strcat(line, " ");
			strcat(line, argv[i]);
		}
		m->cmdline = line;
	}
	strv_free(argv);
	if (m->prev_ms && elapsed > m->prev_ms) {
		double dt = (double)(elapsed - m->prev_ms) / 1000.0;

		m->up_rate = (double)(up - m->prev_up) / dt;
		m->down_rate = (double)(down - m->prev_down) / dt;
	}
	m->prev_ms = elapsed;
	m->prev_up = up;
	m->prev_down = down;
	m->elapsed_ms = elapsed;
	m->conns = conns;
	m->denied = denied;
	m->up = up;
	m->down = down;
	m->dests = dests;
	m->ndests = ndests;
	return 0;
}

int watch_event_decode(const void *payload, size_t len, struct event_copy *out)
{
	struct event *ev = &out->ev;
	char **strs = out->strs;
	struct rbuf r;
	uint8_t has_who;

	memset(out, 0, sizeof(*out));
	rbuf_init(&r, payload, len);
	ev->t_ms = wire_get_u64(&r);
	ev->t_rel_ms = wire_get_u64(&r);
	ev->session = strs[0] = wire_get_str(&r, DMSG_EVENT_WORD_MAX);
	ev->kind = strs[1] = wire_get_str(&r, DMSG_EVENT_WORD_MAX);
	ev->verdict = strs[2] = wire_get_str(&r, DMSG_EVENT_WORD_MAX);
	ev->layer = strs[3] = wire_get_str(&r, DMSG_EVENT_WORD_MAX);
	ev->subject = strs[4] = wire_get_str(&r, DMSG_EVENT_TEXT_MAX);
	ev->detail = strs[5] = wire_get_str(&r, DMSG_EVENT_TEXT_MAX);
	ev->addr = strs[6] = wire_get_str(&r, DMSG_EVENT_ADDR_MAX);
	ev->port = wire_get_u16(&r);
	ev->host = strs[7] = wire_get_str(&r, DMSG_EVENT_NAME_MAX);
	ev->sni = strs[8] = wire_get_str(&r, DMSG_EVENT_NAME_MAX);
	ev->ttl = wire_get_u32(&r);
	ev->up = wire_get_u64(&r);
	ev->down = wire_get_u64(&r);
	ev->what = strs[9] = wire_get_str(&r, DMSG_EVENT_WORD_MAX);
	ev->told = strs[10] = wire_get_str(&r, DMSG_EVENT_TEXT_MAX);
	has_who = wire_get_u8(&r);
	if (has_who == 1) {
		struct event_who *w = &out->who;

		w->found = wire_get_u8(&r) != 0;
		w->pid = wire_get_u32(&r);
		w->comm = strs[11] = wire_get_str(&r, DMSG_EVENT_WORD_MAX);
		w->argv0 = strs[12] = wire_get_str(&r, DMSG_EVENT_NAME_MAX);
		w->cmdline = strs[13] = wire_get_str(&r, DMSG_EVENT_NAME_MAX);
		w->package = strs[14] = wire_get_str(&r, DMSG_EVENT_NAME_MAX);
		w->version = strs[15] = wire_get_str(&r, DMSG_EVENT_WHO_SHORT_MAX);
		w->script = strs[16] = wire_get_str(&r, DMSG_EVENT_WHO_SHORT_MAX);
		w->via = strs[17] = wire_get_str(&r, DMSG_EVENT_WHO_VIA_MAX);
		w->claimed = wire_get_u8(&r) != 0;
		ev->who = w;
	} else if (has_who != 0) {
		r.failed = true;
	}
	if (!wire_done(&r) || !ev->kind || !ev->verdict) {
		event_copy_free(out);
		return -1;
	}
	return 0;
}

bool watch_event_is_deny(const struct event *ev)
{
	return ev->verdict && strcmp(ev->verdict, "deny") == 0;
}

bool watch_event_is_alert(const struct event *ev)
{
	return ev->verdict && strcmp(ev->verdict, "alert") == 0;
}

char *watch_format_event(const struct event *ev)
{
	uint64_t t = ev->t_rel_ms;
	const char *tag = ev->kind;
	char *subject, *detail, *line, *raw_subject = NULL, *stag, *verdict, *who;

	/* Audit decisions are tagged with the layer that made them. */
	if (strcmp(ev->kind, "audit") == 0 || (watch_event_is_deny(ev) && ev->layer &&
					       strncmp(ev->layer, "net.", 4) == 0 &&
					       strcmp(ev->kind, "tcp") != 0))
		tag = ev->layer ? ev->layer : ev->kind;
	if ((strcmp(ev->kind, "tcp") == 0 || strcmp(ev->kind, "udp") == 0) && ev->addr) {
		const char *name = ev->host ? ev->host : ev->addr;

		if (strcmp(ev->verdict, "sni") == 0)
			raw_subject = xstrdup(ev->sni ? ev->sni : name);
		else if (strchr(name, ':'))
			raw_subject = xasprintf("[%s]:%u", name, ev->port);
		else
			raw_subject = xasprintf("%s:%u", name, ev->port);
	}
	subject = watch_sanitize(raw_subject ? raw_subject : ev->subject);
	if (strcmp(ev->verdict, "close") == 0) {
		char up[32], down[32];

		detail = xasprintf(_("up %s  down %s"), format_size(ev->up, up, sizeof(up)),
				   format_size(ev->down, down, sizeof(down)));
	} else {
		detail = watch_sanitize(ev->detail);
	}
	stag = watch_sanitize(tag);
	verdict = watch_sanitize(ev->verdict);
	/* Who, on the lines that decide (a flow's sni, bytes and close lines follow its allow). */
	who = strcmp(ev->verdict, "close") != 0 && strcmp(ev->verdict, "bytes") != 0 &&
	      strcmp(ev->verdict, "sni") != 0 ? event_who_words(ev->who) : NULL;
	line = xasprintf("%02u:%02u.%03u %-8s %-7s %-34s %s%s%s",
			 (unsigned)(t / 60000 % 100), (unsigned)(t / 1000 % 60), (unsigned)(t % 1000),
			 stag, verdict, subject, detail, who ? "  by " : "", who ? who : "");
	free(who);
	free(stag);
	free(verdict);
	/* Trailing spaces are noise in a pipe. */
	for (size_t n = strlen(line); n && line[n - 1] == ' '; n--)
		line[n - 1] = '\0';
	free(raw_subject);
	free(subject);
	free(detail);
	return line;
}

void watch_model_event(struct watch_model *m, const struct event *ev)
{
	struct watch_line *l = &m->recent[m->recent_next];

	free(l->text);
	l->text = watch_format_event(ev);
	l->deny = watch_event_is_deny(ev);
	l->alert = watch_event_is_alert(ev);
	m->recent_next = (m->recent_next + 1) % WATCH_RECENT;
	if (m->nrecent < WATCH_RECENT)
		m->nrecent++;
	if (l->alert) {
		/* Pinned, once (a watcher that joins late is sent the session's alerts again). */
		for (size_t i = 0; i < m->nalerts; i++)
			if (strcmp(m->alerts[i].text, l->text) == 0)
				return;
		if (m->nalerts < WATCH_ALERTS) {
			m->alerts[m->nalerts].text = xstrdup(l->text);
			m->alerts[m->nalerts].alert = true;
			m->nalerts++;
		} else {
			m->more_alerts++;
		}
	}
}

/*
 * One screen line. Every line is sanitized again here, so a render path
 * that forgot to never reaches the terminal raw, and cut to cols bytes at
 * a character boundary (a long name never wraps, never ends mid-sequence).
 */
static void put_text(FILE *out, const char *s, int cols, const char *end)
{
	char *safe = text_sanitize(s);
	int n = (int)strlen(safe);

	if (cols > 0 && n > cols) {
		n = cols;
		while (n > 0 && ((unsigned char)safe[n] & 0xc0) == 0x80)
			n--;
	}
	fprintf(out, "%.*s%s", n, safe, end);
	free(safe);
}

static void put_line(FILE *out, const char *s, int cols)
{
	put_text(out, s, cols, "\x1b[K\n");
}

char *watch_totals_line(size_t dests, uint64_t conns, uint64_t denied)
{
	char *d = xasprintf(ngettext("%zu destination", "%zu destinations", dests), dests);
	char *c = xasprintf(ngettext("%llu connection", "%llu connections", conns),
			    (unsigned long long)conns);
	/* TRANSLATORS: destinations, connections, and how many were refused. */
	char *line = xasprintf(ngettext("%s  %s  %llu denied", "%s  %s  %llu denied", denied), d, c,
			       (unsigned long long)denied);

	free(d);
	free(c);
	return line;
}

void watch_render(const struct watch_model *m, FILE *out, int rows, int cols, bool color)
{
	char a[32], b[32], c[32], d[32], *line, *totals, *cmd, *id, *state;
	int used = 0, avail;
	uint64_t s = m->elapsed_ms / 1000;

	fputs("\x1b[H", out);
	cmd = watch_sanitize(m->cmdline);
	id = watch_sanitize(m->id ? m->id : "?");
	state = watch_sanitize(m->state ? m->state : "?");
	line = xasprintf(_("session %.8s  %s  %llus  %s"), id, state, (unsigned long long)s, cmd);
	put_line(out, line, cols);
	free(line);
	free(cmd);
	free(id);
	free(state);
	line = watch_totals_line(m->ndests, m->conns, m->denied);
	totals = xasprintf(_("%s   up %s (%s/s)  down %s (%s/s)"), line,
			   format_size(m->up, a, sizeof(a)),
			   format_size((uint64_t)m->up_rate, b, sizeof(b)),
			   format_size(m->down, c, sizeof(c)),
			   format_size((uint64_t)m->down_rate, d, sizeof(d)));
	put_line(out, totals, cols);
	free(totals);
	free(line);
	if (m->lost) {
		line = xasprintf(ngettext("(this watcher fell behind and lost %llu event)",
					  "(this watcher fell behind and lost %llu events)", m->lost),
				 (unsigned long long)m->lost);
		put_line(out, line, cols);
		free(line);
		used++;
	}
	if (m->nalerts) {
		put_line(out, "", cols);
		if (color)
			fputs("\x1b[1;31m", out);
		put_line(out, "ALERTS: act on these", cols);
		for (size_t i = 0; i < m->nalerts; i++)
			put_line(out, m->alerts[i].text, cols);
		if (m->more_alerts) {
			line = xasprintf("… and %llu more alert(s)", (unsigned long long)m->more_alerts);
			put_line(out, line, cols);
			free(line);
			used++;
		}
		if (color)
			fputs("\x1b[0m", out);
		used += 2 + (int)m->nalerts;
	}
	put_line(out, "", cols);
	put_line(out, "DESTINATION          CONNS  DENIED  ADDRS       SENT   RECEIVED", cols);
	used += 4;
	avail = rows - used - 4 > 3 ? (rows - used - 4) / 2 : 3;
	for (size_t i = 0; i < m->ndests && (int)i < avail; i++) {
		char *name = watch_sanitize(m->dests[i].name);

		line = xasprintf("%-20s %5llu %7llu %6llu %10s %10s", name,
				 (unsigned long long)m->dests[i].conns,
				 (unsigned long long)m->dests[i].denied,
				 (unsigned long long)m->dests[i].addrs,
				 format_size(m->dests[i].sent, a, sizeof(a)),
				 format_size(m->dests[i].received, b, sizeof(b)));
		put_line(out, line, cols);
		free(line);
		free(name);
		used++;
	}
	put_line(out, "", cols);
	put_line(out, "RECENT", cols);
	used += 2;
	avail = rows - used - 2;
	if (avail < 1)
		avail = 1;
	{
		size_t show = m->nrecent < (size_t)avail ? m->nrecent : (size_t)avail;

		for (size_t i = 0; i < show; i++) {
			size_t at = (m->recent_next + WATCH_RECENT - show + i) % WATCH_RECENT;
			const struct watch_line *l = &m->recent[at];

			if (color && (l->deny || l->alert))
				fputs(l->alert ? "\x1b[1;31m" : "\x1b[31m", out);
			put_line(out, l->text, cols);
			if (color && (l->deny || l->alert))
				fputs("\x1b[0m", out);
		}
	}
	put_line(out, "", cols);
	put_text(out, _("Ctrl-C stops watching; the session keeps running."), cols, "\x1b[K\x1b[J");
	fflush(out);
}

/* Enter the alternate screen and hide the cursor (boxy watch on a terminal). */
void watch_screen_begin(FILE *out)
{
	fputs("\x1b[?1049h\x1b[?25l", out);
}

/* Show the cursor and leave the alternate screen. */
void watch_screen_end(FILE *out)
{
	fputs("\x1b[?25h\x1b[?1049l", out);
}
