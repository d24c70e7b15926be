/*
 * client/gate.c — the CI gate and its reports (see client/gate.h).
 *
 * The findings are sorted into the gate's words: each group of the refusal
 * table is a "deny"; a "new since the last run" event about a destination
 * or a port (and the line saying more were left out, which may hide one) is
 * a "new-destination", any other new item is "new" (reported, never a gate
 * word); an alert of the tripwire layer is a "tripwire", every other alert an
 * "alert". A word named in --fail-on fails when one of its findings exists;
 * "alert" fails on tripwires too (they are alerts, printed as such). A run whose end the client did not see (it let go
 * of the session) cannot be judged and fails a gate that was asked for.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/gate.h"
#include "client/tty.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/util.h"
#include "spec/values.h"
#include "ui/watch.h"

/* ---- XML ---------------------------------------------------------------------- */

char *gate_xml_escape(const char *s)
{
	struct wbuf out;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);

	wbuf_init(&out);
	while (n) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);
		const char *rep = NULL;

		if (len == 0) {
			rep = "\xef\xbf\xbd";   /* an invalid byte: U+FFFD, and on to the next */
			len = 1;
		} else if (cp == '&') {
			rep = "&amp;";
		} else if (cp == '<') {
			rep = "&lt;";
		} else if (cp == '>') {
			rep = "&gt;";   /* so "]]>" never appears */
		} else if (cp == '"') {
			rep = "&quot;";
		} else if (cp == '\'') {
			rep = "&apos;";
		} else if (cp == '\t') {
			rep = "&#9;";
		} else if (cp == '\n') {
			rep = "&#10;";
		} else if (cp == '\r') {
			rep = "&#13;";
		} else if (cp < 0x20 || cp == 0xfffe || cp == 0xffff) {
			rep = "\xef\xbf\xbd";   /* not a character XML 1.0 allows */
		}
		if (rep)
			wbuf_put(&out, rep, strlen(rep));
		else
			wbuf_put(&out, p, len);
		p += len;
		n -= len;
	}
	wbuf_put(&out, "", 1);
	return (char *)out.p;
}

/* ---- the findings, sorted into the gate's words ------------------------------------ */

enum gate_kind { GATE_DENY, GATE_NEW_DEST, GATE_NEW_OTHER, GATE_TRIPWIRE, GATE_ALERT, GATE_KINDS };

static const char *const kind_word[GATE_KINDS] = {
	"deny", "new-destination", "new", "tripwire", "alert",
};
/* The --fail-on words a kind's findings fail... */
static const unsigned kind_bit[GATE_KINDS] = {
	FAIL_ON_DENY, FAIL_ON_NEW, 0, FAIL_ON_TRIPWIRE | FAIL_ON_ALERT, FAIL_ON_ALERT,
};
/* ... and the one word each kind is (the reports' lists of words). */
static const unsigned word_bit[GATE_KINDS] = {
	FAIL_ON_DENY, FAIL_ON_NEW, 0, FAIL_ON_TRIPWIRE, FAIL_ON_ALERT,
};

struct gate_item {
	enum gate_kind kind;
	const char *layer, *subject, *detail;
	unsigned long long count;
};

struct gate {
	struct gate_item *v;
	size_t n;
	unsigned long long more[GATE_KINDS];    /* findings the tables could not hold */
	unsigned failed;                        /* FAIL_ON_* bits that failed */
	const char *session;
	char *command;
	bool ended;
};

/* Append one finding; it fails its word when fail_on names it. */
static void gate_add(struct gate *g, unsigned fail_on, enum gate_kind k, const char *layer,
		     const char *subject, const char *detail, unsigned long long count)
{
	struct gate_item *it = xappend((void **)&g->v, &g->n, sizeof(*it));

	*it = (struct gate_item){ k, layer, subject, detail, count };
	g->failed |= fail_on & kind_bit[k];
}

/* Is a "new" event about a destination or a port, or the count of those left out (which
 * may hide one)? The daemon says which in the event's what (daemon/since.c). */
static bool news_is_destination(const struct client_finding *f)
{
	return f->what && (strcmp(f->what, "destination") == 0 || strcmp(f->what, "more") == 0);
}

/* What the gate could not see fails the words it might have held. */
#define GATE_NO_FINAL_TABLE "the client did not receive the session's final refusal table: " \
			    "its refusals could not be judged"
#define GATE_UNREADABLE "%llu event(s) from the daemon could not be read: an alert or a " \
			"new destination may be among them"

/* The client's findings and the snapshot's refusal table into g's items, by word. */
static void gate_collect(struct gate *g, unsigned fail_on, const struct client_findings *cf,
			 const struct watch_model *m)
{
	/* Only the last snapshot, sent once the session ended, holds every refusal. */
	if (g->ended && (!m->state || strcmp(m->state, "exited") != 0))
		gate_add(g, fail_on, GATE_DENY, "boxy", "refusals", GATE_NO_FINAL_TABLE, 1);
	if (cf->unreadable) {
		static char words[160];

		snprintf(words, sizeof(words), GATE_UNREADABLE, cf->unreadable);
		gate_add(g, fail_on, GATE_NEW_DEST, "boxy", "events", words, 1);
		gate_add(g, fail_on, GATE_ALERT, "boxy", "events", words, 1);
	}
	for (size_t i = 0; i < m->refusals.n; i++) {
		const struct refusal_group *r = &m->refusals.v[i];

		gate_add(g, fail_on, GATE_DENY, r->layer, r->subject, r->reason, r->count);
	}
	g->more[GATE_DENY] = m->refusals.other;
	if (m->refusals.other)
		g->failed |= fail_on & FAIL_ON_DENY;
	for (size_t i = 0; i < cf->nnews; i++) {
		const struct client_finding *f = &cf->news[i];

		gate_add(g, fail_on, news_is_destination(f) ? GATE_NEW_DEST : GATE_NEW_OTHER,
			 f->layer, f->subject, f->detail, 1);
	}
	g->more[GATE_NEW_DEST] = cf->more_news;
	if (cf->more_news)
		g->failed |= fail_on & FAIL_ON_NEW;
	for (size_t i = 0; i < cf->nalerts; i++) {
		const struct client_finding *f = &cf->alerts[i];

		gate_add(g, fail_on, strcmp(f->layer, "tripwire") == 0 ? GATE_TRIPWIRE : GATE_ALERT,
			 f->layer, f->subject, f->detail, 1);
	}
	/* Alerts the client could not keep may hide a tripwire: both words fail on them. */
	g->more[GATE_ALERT] = cf->more_alerts;
	if (cf->more_alerts)
		g->failed |= fail_on & (FAIL_ON_ALERT | FAIL_ON_TRIPWIRE);
}

/* ---- the reports -------------------------------------------------------------------- */

/* fprintf-like into a growing buffer. */
static void put(struct wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct wbuf *w, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatal("out of memory");
	va_end(ap);
	wbuf_put(w, s, strlen(s));
	free(s);
}

/* put() of one escaped string between two literal pieces. */
static void put_esc(struct wbuf *w, const char *before, const char *s, const char *after)
{
	char *e = gate_xml_escape(s);

	put(w, "%s%s%s", before, e, after);
	free(e);
}

/* One finding as a line of text (a <failure>'s message, or system-out). */
static char *item_line(const struct gate_item *it)
{
	if (it->count > 1)
		return xasprintf("%s: %s: %s (%llu times)", it->layer, it->subject, it->detail,
				 it->count);
	return xasprintf("%s: %s: %s", it->layer, it->subject, it->detail);
}

/*
 * JUnit: one testsuite "boxy", one testcase per gate word (and "end-of-run"
 * when the client did not see it), a <failure> per finding that failed its
 * word, the others in the testcase's <system-out>.
 */
static char *gate_junit(const struct gate *g, unsigned fail_on)
{
	static const enum gate_kind words[] = { GATE_DENY, GATE_NEW_DEST, GATE_TRIPWIRE, GATE_ALERT };
	struct wbuf w;
	size_t failures = 0, tests = ARRAY_SIZE(words) + !g->ended;

	for (size_t i = 0; i < g->n; i++)
		failures += (fail_on & kind_bit[g->v[i].kind]) != 0;
	for (size_t k = 0; k < ARRAY_SIZE(words); k++)
		failures += g->more[words[k]] && (fail_on & kind_bit[words[k]]);
	failures += !g->ended && fail_on;
	wbuf_init(&w);
	put(&w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	put(&w, "<testsuites name=\"boxy\" tests=\"%zu\" failures=\"%zu\">\n", tests, failures);
	put(&w, "  <testsuite name=\"boxy\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", tests,
	    failures);
	put(&w, "    <properties>\n");
	put_esc(&w, "      <property name=\"session\" value=\"", g->session, "\"/>\n");
	put_esc(&w, "      <property name=\"command\" value=\"", g->command, "\"/>\n");
	{
		char *words_text = fail_on_text(fail_on);

		put_esc(&w, "      <property name=\"fail-on\" value=\"", words_text, "\"/>\n");
		free(words_text);
	}
	put(&w, "    </properties>\n");
	for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
		enum gate_kind kind = words[k];
		bool gated = (fail_on & kind_bit[kind]) != 0;
		struct wbuf out;

		wbuf_init(&out);
		put(&w, "    <testcase classname=\"boxy.gate\" name=\"%s\">\n", kind_word[kind]);
		for (size_t i = 0; i < g->n; i++) {
			const struct gate_item *it = &g->v[i];
			char *line;

			if (it->kind != kind && !(kind == GATE_NEW_DEST && it->kind == GATE_NEW_OTHER))
				continue;
			line = item_line(it);
			if (gated && it->kind == kind) {
				put_esc(&w, "      <failure type=\"", kind_word[kind], "\" message=\"");
				put_esc(&w, "", line, "\">");
				put_esc(&w, "", line, "</failure>\n");
			} else {
				put_esc(&out, "", line, "\n");
			}
			free(line);
		}
		if (g->more[kind]) {
			char *line = xasprintf("%llu more not kept by the client (boxy show lists "
					       "them)", g->more[kind]);

			if (gated) {
				put(&w, "      <failure type=\"%s\" message=\"%s\">%s</failure>\n",
				    kind_word[kind], line, line);
			} else {
				put(&out, "%s\n", line);
			}
			free(line);
		}
		if (out.len) {
			put(&w, "      <system-out>");
			wbuf_put(&w, out.p, out.len);
			put(&w, "</system-out>\n");
		}
		wbuf_free(&out);
		put(&w, "    </testcase>\n");
	}
	if (!g->ended) {
		put(&w, "    <testcase classname=\"boxy.gate\" name=\"end-of-run\">\n");
		if (fail_on)
			put(&w, "      <failure type=\"end-of-run\" message=\"the client did not see "
				"the run end\">the client let go of the session before it "
				"ended</failure>\n");
		put(&w, "    </testcase>\n");
	}
	put(&w, "  </testsuite>\n</testsuites>\n");
	wbuf_put(&w, "", 1);
	return (char *)w.p;
}

/* The same findings as JSON (doc/json.md, "--report FILE: FILE.json"). */
static char *gate_json(const struct gate *g, unsigned fail_on, char *const *argv, int code,
		       int status)
{
	static const enum gate_kind words[] = { GATE_DENY, GATE_NEW_DEST, GATE_TRIPWIRE, GATE_ALERT };
	struct jbuf b;

	jbuf_init(&b);
	json_obj_begin(&b);
	json_kv_str(&b, "session", g->session);
	json_key(&b, "argv");
	json_arr_begin(&b);
	for (char *const *a = argv; a && *a; a++)
		json_str(&b, *a);
	json_arr_end(&b);
	json_key(&b, "fail_on");
	json_arr_begin(&b);
	for (size_t k = 0; k < ARRAY_SIZE(words); k++)
		if (fail_on & word_bit[words[k]])
			json_str(&b, kind_word[words[k]]);
	json_arr_end(&b);
	json_kv_bool(&b, "ended", g->ended);
	json_kv_int(&b, "exit", code);
	json_kv_int(&b, "status", status);
	json_kv_bool(&b, "failed", g->failed != 0 || (!g->ended && fail_on));
	json_key(&b, "failed_on");
	json_arr_begin(&b);
	for (size_t k = 0; k < ARRAY_SIZE(words); k++)
		if (g->failed & word_bit[words[k]])
			json_str(&b, kind_word[words[k]]);
	json_arr_end(&b);
	json_key(&b, "findings");
	json_arr_begin(&b);
	for (size_t i = 0; i < g->n; i++) {
		const struct gate_item *it = &g->v[i];

		json_obj_begin(&b);
		json_kv_str(&b, "kind", kind_word[it->kind]);
		json_kv_str(&b, "layer", it->layer);
		json_kv_str(&b, "subject", it->subject);
		json_kv_str(&b, "detail", it->detail);
		json_kv_uint(&b, "count", it->count);
		json_kv_bool(&b, "failed", (fail_on & kind_bit[it->kind]) != 0);
		json_obj_end(&b);
	}
	json_arr_end(&b);
	json_key(&b, "more");
	json_obj_begin(&b);
	for (size_t k = 0; k < ARRAY_SIZE(words); k++)
		json_kv_uint(&b, kind_word[words[k]], g->more[words[k]]);
	json_obj_end(&b);
	json_obj_end(&b);
	return jbuf_steal(&b);
}

/*
 * Tell the daemon the run's gate failed, so that the store never takes it
 * for a later run's baseline (doc/ci.md): running a failed job again must
 * not make its new destination old. Failing to say so costs that promise
 * only, and is said in one line.
 */
static void gate_record(const char *id, unsigned words)
{
	char *text, *err = NULL;

	if (!id || strlen(id) != 16) {
		warnx_(_("gate: the run's session is not known; a later run may take it "
			 "for its baseline"));
		return;
	}
	text = fail_on_text(words);
	if (client_request_gate(id, text, &err) < 0) {
		warnx_(_("gate: could not record the failure in the store (%s); a later run "
			 "may take session %.8s for its baseline"), err ? err : "?", id);
		free(err);
	}
	free(text);
}

int gate_finish(unsigned fail_on, char *const *argv, int code, char **xml, char **json)
{
	const struct client_findings *cf = client_findings();
	struct watch_model m;
	struct gate g = { 0 };
	struct wbuf cmd;
	char *failed_text;
	int status = code;
	bool gate_failed;

	watch_model_init(&m);
	if (cf->snapshot && watch_model_snapshot(&m, cf->snapshot, cf->snapshot_len) < 0) {
		watch_model_free(&m);
		watch_model_init(&m);
	}
	g.session = m.id;
	g.ended = cf->ended;
	wbuf_init(&cmd);
	for (char *const *a = argv; a && *a; a++) {
		if (a != argv)
			wbuf_put(&cmd, " ", 1);
		wbuf_put(&cmd, *a, strlen(*a));
	}
	wbuf_put(&cmd, "", 1);
	g.command = (char *)cmd.p;
	gate_collect(&g, fail_on, cf, &m);

	gate_failed = g.failed || (fail_on && !g.ended);
	if (gate_failed && code == 0)
		status = EXIT_BOXY_GATE;
	if (gate_failed) {
		failed_text = fail_on_text(g.failed);
		if (!g.ended)
			warnx_(_("gate: failed: the client did not see the run end; "
				 "nothing was judged"));
		else if (code == 0)
			warnx_(_("gate: failed on %s (exit %d; see the summary above)"), failed_text,
			       EXIT_BOXY_GATE);
		else
			warnx_(_("gate: failed on %s; the command's own exit status %d wins"),
			       failed_text, code);
		free(failed_text);
		gate_record(m.id, g.failed ? g.failed : fail_on);
	}
	*xml = gate_junit(&g, fail_on);
	{
		char *j = gate_json(&g, fail_on, argv, code, status);

		*json = xasprintf("%s\n", j);  /* a file of one line ends with its newline */
		free(j);
	}
	free(g.v);
	free(g.command);
	watch_model_free(&m);
	client_findings_free();
	return status;
}
