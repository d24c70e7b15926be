/*
 * show.c — one session as `boxy show` prints it (see show.h).
 *
 *   session   3f2a9c0d1e4b5a67  exited 1 after 4.2s (started 2026-12-01 22:00:01)
 *   command   sh -c …
 *   workdir   /home/u/project
 *   profile   node
 *   network   allowlist: registry.npmjs.org:443 · cidrs: none
 *   limits    memory: memory.max = 2.0G in /sys/fs/cgroup/…
 *   destinations  3 (12 connections, 2 refused, 1.2M sent, 30M received)
 *     …the busiest SHOW_DESTS_MAX…
 *   http requests  14 (1 refused, among the refusals below; each: --events)
 *   packages      by what ran them: each package's connections, refusals, destinations
 *   boxy: 80 refused            (the end-of-run summary's table, summary.c, with who)
 *   git       warn  .git/hooks/pre-commit  …
 *   every event: boxy show 3f2a9c0d --events
 *
 * Every string from the store passes the screen sanitizer; long ones are cut.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/refusals.h"
#include "ui/ps.h"
#include "ui/show.h"
#include "store/store-show.h"
#include "ui/summary.h"
#include "common/util.h"
#include "ui/watch.h"

#define LINE_MAX_CHARS 110      /* a reason or policy longer than this is cut */
#define SHOW_GROUPS_LOAD 10000  /* refusal groups read before merging; the rest counted */
#define SHOW_REACT_MAX 20       /* rows of what alerts did, then a pointer to --events */

static uint64_t num(const char *s)
{
	return s ? strtoull(s, NULL, 10) : 0;
}

struct policy_row {
	char *mode, *hosts, *cidrs, *seccomp;
	uint64_t overflow_denied, rules;
};

static void policy_cb(void *ctx, int ncol, const char *const *v)
{
	struct policy_row *p = ctx;

	if (ncol < 6)
		return;
	p->mode = xstrdup(v[0] ? v[0] : "-");
	p->hosts = v[1] ? xstrdup(v[1]) : NULL;
	p->cidrs = v[2] ? xstrdup(v[2]) : NULL;
	p->seccomp = v[3] ? xstrdup(v[3]) : NULL;
	p->overflow_denied = num(v[5]);
	p->rules = ncol > 6 ? num(v[6]) : 0;
}

struct requests {
	uint64_t total, denied;
};

static void req_totals_cb(void *ctx, int ncol, const char *const *v)
{
	struct requests *r = ctx;

	if (ncol < 2)
		return;
	r->total = num(v[0]);
	r->denied = num(v[1]);
}

/* "label     text" with text sanitized and cut. */
static void field(FILE *out, const char *label, const char *text)
{
	char *t = summary_cut(text, LINE_MAX_CHARS);

	fprintf(out, "%-9s %s\n", label, t);
	free(t);
}

struct lines {
	FILE *out;
	const char *label;
	size_t n;
	bool timeout;       /* a "timeout" row was among them */
	int alerts;         /* git: 1 print only the alerts (first, red), 0 only the rest */
	bool color;
};

static void limit_cb(void *ctx, int ncol, const char *const *v)
{
	struct lines *l = ctx;
	char *line;

	if (ncol < 3)
		return;
	if (v[0] && strcmp(v[0], "timeout") == 0)
		l->timeout = true;
	line = xasprintf("%s: %s%s%s", v[0] ? v[0] : "-",
			 strcmp(v[1] ? v[1] : "", "allow") == 0 ? "" : v[1] ? v[1] : "-",
			 strcmp(v[1] ? v[1] : "", "allow") == 0 ? "" : ", ", v[2] ? v[2] : "");
	field(l->out, l->n++ ? "" : l->label, line);
	free(line);
}

static void git_cb(void *ctx, int ncol, const char *const *v)
{
	struct lines *l = ctx;
	char *line;

	if (ncol < 4)
		return;
	if ((strcmp(v[0] ? v[0] : "", "alert") == 0) != (l->alerts == 1))
		return;
	if (l->alerts != 1 && ncol > 4 && v[4] && strcmp(v[4], "git") != 0)
		return;         /* the git section is the git layer's */
	if (l->alerts == 1) {
		/* A finding the user must act on: first, in red, with its path. */
		char *subject = text_sanitize(v[1] ? v[1] : "-"), *reason = text_sanitize(v[2] ? v[2] : "");

		if (!l->n++)
			fprintf(l->out, _("%salerts: act on these%s\n"), l->color ? "\033[1;31m" : "",
				l->color ? "\033[0m" : "");
		fprintf(l->out, _("%s  ALERT %s %s: %s%s\n"), l->color ? "\033[1;31m" : "",
			ncol > 4 && v[4] ? v[4] : "git", subject, reason, l->color ? "\033[0m" : "");
		free(subject);
		free(reason);
		return;
	}
	line = xasprintf("%s %s: %s%s%s", v[0] ? v[0] : "-", v[1] ? v[1] : "-",
			 v[2] ? v[2] : "", num(v[3]) > 1 ? " ×" : "", num(v[3]) > 1 ? v[3] : "");
	field(l->out, l->n++ ? "" : l->label, line);
	free(line);
}

/* A "react" row: what an alert did (freeze, stop, log) or the user (resume), at most 20. */
static void react_cb(void *ctx, int ncol, const char *const *v)
{
	struct lines *l = ctx;
	char *line;

	if (ncol < 4)
		return;
	if (l->n == SHOW_REACT_MAX) {
		field(l->out, "", _("… more: boxy show ID --events"));
		l->n++;
	}
	if (l->n > SHOW_REACT_MAX)
		return;
	line = xasprintf("%s: %s%s%s", v[1] ? v[1] : "-", v[2] ? v[2] : "",
			 num(v[3]) > 1 ? " ×" : "", num(v[3]) > 1 ? v[3] : "");
	field(l->out, l->n++ ? "" : l->label, line);
	free(line);
}

/* A "new since the last run" row: SUBJECT (REASON), under the label "new". */
static void since_cb(void *ctx, int ncol, const char *const *v)
{
	struct lines *l = ctx;
	char *line;

	if (ncol < 2)
		return;
	line = xasprintf("%s (%s)", v[0] ? v[0] : "-", v[1] ? v[1] : "");
	field(l->out, l->n++ ? "" : l->label, line);
	free(line);
}

struct dest_totals {
	uint64_t n, conns, denied, up, down;
};

static void totals_cb(void *ctx, int ncol, const char *const *v)
{
	struct dest_totals *t = ctx;

	if (ncol < 5)
		return;
	t->n = num(v[0]);
	t->conns = num(v[1]);
	t->denied = num(v[2]);
	t->up = num(v[3]);
	t->down = num(v[4]);
}

struct dests {
	FILE *out;
	struct dest_totals shown;
};

static void dest_cb(void *ctx, int ncol, const char *const *v)
{
	struct dests *d = ctx;
	char a[32], b[32], *name;

	if (ncol < 6)
		return;
	name = summary_cut(v[0] ? v[0] : "-", 40);
	fprintf(d->out, "  %-40s %6llu %6llu %5llu %9s %9s\n", name,
		(unsigned long long)num(v[1]), (unsigned long long)num(v[2]),
		(unsigned long long)num(v[3]), format_size(num(v[4]), a, sizeof(a)),
		format_size(num(v[5]), b, sizeof(b)));
	d->shown.n++;
	d->shown.conns += num(v[1]);
	d->shown.denied += num(v[2]);
	d->shown.up += num(v[4]);
	d->shown.down += num(v[5]);
	free(name);
}

/* The words for a row's who (STORE_WHO_COLUMNS from v), or NULL when it was not looked for. */
static char *who_words(const char *const *v)
{
	struct event_who w;

	return event_who_from_row(&w, v) ? event_who_words(&w) : NULL;
}

static void refusal_cb(void *ctx, int ncol, const char *const *v)
{
	struct refusals *t = ctx;
	uint64_t n;

	if (ncol < 15)
		return;
	n = num(v[3]);
	t->total += n;
	if (t->n >= SHOW_GROUPS_LOAD) {
		t->other += n;
		return;
	}
	{
		struct refusal_group *g = xappend(&t->v, &t->n, sizeof(*t->v));

		g->subject = xstrdup(v[0] ? v[0] : "-");
		g->layer = xstrdup(v[1] ? v[1] : "-");
		g->reason = xstrdup(v[2] ? v[2] : "");
		g->count = n;
		g->who = who_words(v + 5);
		g->who_more = num(v[14]) > 1;
	}
}

/* The packages table as it is read: its lines, printed only when a package manager ran something. */
struct packages {
	char **lines;           /* rows and their destinations, sanitized */
	bool *red;              /* per line: a row with refusals */
	size_t n;
	bool any_package;
};

/* One row of the packages table, and the destinations it reached. */
static void package_cb(void *ctx, int ncol, const char *const *v)
{
	struct packages *p = ctx;
	char *name, *cut, *line;

	if (ncol < 11)
		return;
	if (v[0]) {
		struct event_who w = {
			.found = true, .package = v[0], .version = v[1], .script = v[2], .via = v[4],
			.claimed = v[3] && strcmp(v[3], "1") == 0,
		};

		name = event_who_package_words(&w);
		p->any_package = true;
	} else {
		name = xstrdup(v[5] ? v[5] : _("unknown"));
	}
	cut = summary_cut(name, 46);
	line = xasprintf("  %-46s %6llu %6llu %7llu %5llu", cut, (unsigned long long)num(v[6]),
			 (unsigned long long)num(v[7]), (unsigned long long)num(v[8]),
			 (unsigned long long)num(v[9]));
	strv_push(&p->lines, line);
	p->red = xrealloc(p->red, (p->n + 2) * sizeof(*p->red));
	p->red[p->n++] = num(v[7]) > 0;
	free(line);
	if (v[10] && v[10][0]) {
		char *dests = summary_cut(v[10], LINE_MAX_CHARS - 6);

		line = xasprintf("    → %s", dests);
		strv_push(&p->lines, line);
		p->red[p->n++] = false;
		free(line);
		free(dests);
	}
	free(cut);
	free(name);
}

/*
 * The packages section: what ran the session's processes, with their
 * counts and destinations — when a package manager ran any (a session of
 * commands alone has its commands on the refusals already).
 */
static void print_packages(FILE *out, const struct packages *p, bool color)
{
	if (!p->any_package)
		return;
	fprintf(out, "%s\n", _("packages  by what ran them: a package's script, else the command "
			       "(a package name is the process's claim)"));
	fprintf(out, "  %-46s %6s %6s %7s %5s\n", "PACKAGE", "CONNS", "DENIED", "LOOKUPS", "DESTS");
	for (size_t i = 0; i < p->n; i++)
		fprintf(out, "%s%s%s\n", color && p->red[i] ? "\033[31m" : "", p->lines[i],
			color && p->red[i] ? "\033[0m" : "");
}

/* "allowlist: a.example:443 b.example · cidrs: 10.0.0.0/8" and the like. */
static char *network_line(const struct policy_row *p)
{
	if (strcmp(p->mode, "allowlist") == 0 && p->rules)
		return xasprintf("allowlist: %s · cidrs: %s · http rules: %llu",
				 p->hosts ? p->hosts : "no hosts", p->cidrs ? p->cidrs : "none",
				 (unsigned long long)p->rules);
	if (strcmp(p->mode, "allowlist") == 0)
		return xasprintf("allowlist: %s · cidrs: %s", p->hosts ? p->hosts : _("no hosts"),
				 p->cidrs ? p->cidrs : _("none"));
	if (p->cidrs)
		return xasprintf("%s · cidrs: %s", p->mode, p->cidrs);
	return xstrdup(p->mode);
}

int show_print(FILE *out, struct store *st, const struct store_session *s, bool color,
	       char **err)
{
	struct policy_row p = { 0 };
	struct dest_totals tot = { 0 };
	struct dests d = { .out = out };
	struct lines lim = { out, "limits", 0, false, 0, color },
		     git = { out, "git", 0, false, 0, color },
		     alerts = { out, "alerts", 0, false, 1, color },
		     news = { out, "new", 0, false, 0, color },
		     react = { out, "react", 0, false, 0, color };
	struct packages pkgs = { 0 };
	struct refusals t;
	char when[32], *cmd, *line;
	time_t start = (time_t)(s->started_ms / 1000);
	int rc = -1;

	refusals_init(&t);
	if (store_show_query(st, STORE_SHOW_POLICY, s->id, 0, policy_cb, &p, err) < 0)
		goto out;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&start));
	if (!s->ended_ms && s->frozen_ms) {
		time_t fz = (time_t)(s->frozen_ms / 1000);
		char since[16];

		strftime(since, sizeof(since), "%H:%M:%S", localtime(&fz));
		line = xasprintf(_("%s  frozen since %s (started %s)"), s->id, since, when);
	} else if (!s->ended_ms)
		line = xasprintf(_("%s  running (started %s)"), s->id, when);
	else if (strcmp(s->state, "lost") == 0)
		line = xasprintf(_("%s  lost after %.1fs (started %s)"), s->id,
				 (double)(s->ended_ms - s->started_ms) / 1000.0, when);
	else
		/* TRANSLATORS: the id, the state word (exited, failed) and its exit status. */
		line = xasprintf(_("%s  %s %d after %.1fs (started %s)"), s->id, s->state,
				 s->exit_code, (double)(s->ended_ms - s->started_ms) / 1000.0, when);
	field(out, "session", line);
	free(line);
	if (s->frozen_ms) {
		/* Why it is frozen (or ended frozen: stopped while it was), in red. */
		char *why = summary_cut(s->frozen_reason ? s->frozen_reason : "-", LINE_MAX_CHARS);

		fprintf(out, "%s%-9s %s%s\n", color ? "\033[1;31m" : "",
			s->ended_ms ? "was frozen" : "frozen", why, color ? "\033[0m" : "");
		if (!s->ended_ms)
			fprintf(out, _("%s          decide: boxy resume %.8s / boxy stop %.8s%s\n"),
				color ? "\033[1;31m" : "", s->id, s->id, color ? "\033[0m" : "");
		free(why);
	}
	if (store_show_query(st, STORE_SHOW_GIT, s->id, 0, git_cb, &alerts, err) < 0)
		goto out;
	cmd = ps_argv_line(s->argv_json);
	field(out, "command", cmd);
	free(cmd);
	field(out, "workdir", s->cwd ? s->cwd : "-");
	field(out, "profile", s->profile ? s->profile : "-");
	if (p.mode) {
		line = network_line(&p);
		field(out, "network", line);
		free(line);
	}
	if (store_show_query(st, STORE_SHOW_LIMITS, s->id, 0, limit_cb, &lim, err) < 0)
		goto out;
	if (s->timeout_ms && !lim.timeout) {
		line = xasprintf(_("timeout: %.1fs, kept by the daemon (not reached)"),
				 (double)s->timeout_ms / 1000.0);
		field(out, lim.n++ ? "" : "limits", line);
		free(line);
	}
	if (!lim.n)
		field(out, "limits", _("none asked for"));
	if (store_show_query(st, STORE_SHOW_DEST_TOTALS, s->id, 0, totals_cb, &tot, err) < 0)
		goto out;
	if (tot.n) {
		char a[32], b[32];

		fprintf(out, ngettext("destinations  %llu (%llu connection, %llu refused, %s sent, "
				      "%s received)\n",
				      "destinations  %llu (%llu connections, %llu refused, %s sent, "
				      "%s received)\n", tot.conns),
			(unsigned long long)tot.n, (unsigned long long)tot.conns,
			(unsigned long long)tot.denied, format_size(tot.up, a, sizeof(a)),
			format_size(tot.down, b, sizeof(b)));
		fprintf(out, "  %-40s %6s %6s %5s %9s %9s\n", "DESTINATION", "CONNS", "DENIED",
			"ADDRS", "SENT", "RECEIVED");
		if (store_show_query(st, STORE_SHOW_DESTS, s->id, SHOW_DESTS_MAX, dest_cb, &d,
				     err) < 0)
			goto out;
		if (tot.n > d.shown.n)
			fprintf(out, ngettext("  … and %llu more destination (%llu connections, "
					      "%llu refused)\n",
					      "  … and %llu more destinations (%llu connections, "
					      "%llu refused)\n", tot.n - d.shown.n),
				(unsigned long long)(tot.n - d.shown.n),
				(unsigned long long)(tot.conns - d.shown.conns),
				(unsigned long long)(tot.denied - d.shown.denied));
	} else {
		field(out, "destinations", _("none"));
	}
	{
		/* One line: refused requests are among the refusals (with their fix), and
		 * --events and --json have every one. */
		struct requests rq = { 0 };

		if (store_show_query(st, STORE_SHOW_REQ_TOTALS, s->id, 0, req_totals_cb, &rq,
				     err) < 0)
			goto out;
		if (rq.total)
			fprintf(out, "http requests  %llu (%llu refused%s; each: --events)\n",
				(unsigned long long)rq.total, (unsigned long long)rq.denied,
				rq.denied ? ", among the refusals below" : "");
	}
	if (store_show_query(st, STORE_SHOW_PACKAGES, s->id, 0, package_cb, &pkgs, err) < 0)
		goto out;
	print_packages(out, &pkgs, color);
	if (store_show_query(st, STORE_SHOW_REFUSALS, s->id, 0, refusal_cb, &t, err) < 0)
		goto out;
	refusals_merge_unfixable(&t);
	t.total += p.overflow_denied;       /* refusals past the per-session cap: counted only */
	t.other += p.overflow_denied;
	summary_print_refusals(out, &t, color, NULL);
	if (t.total)
		fputc('\n', out);
	if (store_show_query(st, STORE_SHOW_GIT, s->id, 0, git_cb, &git, err) < 0)
		goto out;
	if (store_show_query(st, STORE_SHOW_REACT, s->id, 0, react_cb, &react, err) < 0)
		goto out;
	if (store_show_query(st, STORE_SHOW_SINCE, s->id, 0, since_cb, &news, err) < 0)
		goto out;
	fprintf(out, _("every event: boxy show %.8s --events\n"), s->id);
	rc = 0;
out:
	strv_free(pkgs.lines);
	free(pkgs.red);
	refusals_free(&t);
	free(p.mode);
	free(p.hosts);
	free(p.cidrs);
	free(p.seccomp);
	return rc;
}

static void event_cb(void *ctx, int ncol, const char *const *v)
{
	FILE *out = ctx;
	char *f[9];

	if (ncol < 9)
		return;
	for (int i = 2; i < 9; i++)
		f[i] = watch_sanitize(v[i] ? v[i] : "");
	fprintf(out, "%+9lldms  %-5s %-8s %-9s %s", (long long)strtoll(v[1] ? v[1] : "0", NULL, 10),
		f[2], f[3], f[4], f[5]);
	if (*f[6])
		fprintf(out, "  %s", f[6]);
	if (num(v[7]) > 1)
		fprintf(out, "  ×%s", f[7]);
	if (*f[8])
		fprintf(out, "  [%s]", f[8]);
	if (ncol >= 18) {
		char *by = who_words(v + 9);

		if (by)
			fprintf(out, "  by %s", by);
		free(by);
	}
	fputc('\n', out);
	for (int i = 2; i < 9; i++)
		free(f[i]);
}

int show_print_events(FILE *out, struct store *st, const struct store_session *s, char **err)
{
	fprintf(out, "%11s  %-5s %-8s %-9s %s\n", "T_REL", "WHAT", "VERDICT", "LAYER",
		"SUBJECT  REASON  ×COUNT  [DETAIL]");
	return store_show_query(st, STORE_SHOW_EVENTS, s->id, 0, event_cb, out, err);
}
