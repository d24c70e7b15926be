/*
 * top-view.c — the dashboard's views as grids of cells (see top-model.h).
 *
 * Each view lays its columns out for the width it is given: at 80 columns
 * the sessions list keeps id, state, age, duration, exit, connections,
 * denials, bytes and the command; wider screens add the profile and
 * network mode, then the work directory. A cell that does not fit is cut
 * with an ellipsis; no row ever wraps. Strings go through the screen
 * sanitizer before they become cells, and wide characters take two.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "ui/top-model.h"
#include "common/util.h"
#include "ui/watch.h"

void top_screen_init(struct top_screen *s, int rows, int cols)
{
	s->rows = rows < 1 ? 1 : rows > TOP_ROWS_MAX ? TOP_ROWS_MAX : rows;
	s->cols = cols < 1 ? 1 : cols > TOP_COLS_MAX ? TOP_COLS_MAX : cols;
	s->cells = xcalloc((size_t)s->rows * (size_t)s->cols, sizeof(*s->cells));
}

void top_screen_free(struct top_screen *s)
{
	free(s->cells);
	s->cells = NULL;
}

static void screen_clear(struct top_screen *s)
{
	for (int i = 0; i < s->rows * s->cols; i++) {
		s->cells[i].ch[0] = ' ';
		s->cells[i].ch[1] = '\0';
		s->cells[i].attr = 0;
	}
}

/* Decode one UTF-8 character of sanitized text; returns its length (≥ 1). */
static size_t utf8_next(const char *p, wchar_t *wc)
{
	const unsigned char *u = (const unsigned char *)p;

	if (u[0] < 0x80) {
		*wc = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0 && u[1]) {
		*wc = ((u[0] & 0x1f) << 6) | (u[1] & 0x3f);
		return 2;
	}
	if ((u[0] & 0xf0) == 0xe0 && u[1] && u[2]) {
		*wc = ((u[0] & 0x0f) << 12) | ((u[1] & 0x3f) << 6) | (u[2] & 0x3f);
		return 3;
	}
	if ((u[0] & 0xf8) == 0xf0 && u[1] && u[2] && u[3]) {
		*wc = ((u[0] & 0x07) << 18) | ((u[1] & 0x3f) << 12) | ((u[2] & 0x3f) << 6) |
		      (u[3] & 0x3f);
		return 4;
	}
	*wc = '?';
	return 1;
}

/* Display width of one character: 2 for wide ones, 1 otherwise (0-width and unknown as 1). */
static int char_width(wchar_t wc)
{
	int w = wcwidth(wc);

	return w == 2 ? 2 : 1;
}

/* Width of sanitized text. */
static int text_width(const char *t)
{
	int w = 0;
	wchar_t wc;

	while (*t) {
		t += utf8_next(t, &wc);
		w += char_width(wc);
	}
	return w;
}

/*
 * Put text at (y, x) in at most width columns, cut with "…" when longer;
 * the text is sanitized here. Returns the columns used.
 */
static int put(struct top_screen *s, int y, int x, const char *text, int width, uint8_t attr)
{
	char *clean = watch_sanitize(text ? text : "");
	const char *p = clean;
	int used = 0, total = text_width(clean);

	if (y < 0 || y >= s->rows || x >= s->cols) {
		free(clean);
		return 0;
	}
	if (x + width > s->cols)
		width = s->cols - x;
	while (*p && used < width) {
		wchar_t wc;
		size_t n = utf8_next(p, &wc);
		int cw = char_width(wc);
		struct top_cell *c = &s->cells[y * s->cols + x + used];

		if (total > width && used + cw > width - 1) {
			/* The last column left: the ellipsis, then stop. */
			snprintf(c->ch, sizeof(c->ch), "%s", "…");
			c->attr = attr;
			used++;
			break;
		}
		if (used + cw > width)
			break;
		memcpy(c->ch, p, n);
		c->ch[n] = '\0';
		c->attr = attr;
		if (cw == 2) {
			c[1].ch[0] = '\0';
			c[1].attr = attr;
		}
		used += cw;
		p += n;
	}
	free(clean);
	return used;
}

/* Give the whole row an attribute (the selection bar, a heading). */
static void row_attr(struct top_screen *s, int y, uint8_t attr)
{
	if (y < 0 || y >= s->rows)
		return;
	for (int x = 0; x < s->cols; x++)
		s->cells[y * s->cols + x].attr |= attr;
}

char *top_screen_line(const struct top_screen *s, int y)
{
	size_t len = 0, cap = (size_t)s->cols * 4 + 1;
	char *out = xmalloc(cap);

	for (int x = 0; x < s->cols; x++) {
		const char *ch = s->cells[y * s->cols + x].ch;
		size_t n = strlen(ch);

		memcpy(out + len, ch, n);
		len += n;
	}
	while (len && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
	return out;
}

/* "12s", "4m", "3h", "2d": how long ago. */
static void fmt_age(int64_t now, int64_t then, char *buf, size_t len)
{
	int64_t s = then && now > then ? (now - then) / 1000 : 0;

	if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
}

/* "0.4s", "12s", "3m04s", "2h05m". */
static void fmt_duration(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000;

	if (ms < 0)
		ms = s = 0;
	if (s < 10)
		snprintf(buf, len, "%.1fs", (double)ms / 1000.0);
	else if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
}

static void fmt_clock(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!ms || !localtime_r(&t, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%m-%d %H:%M:%S", &tm);
}

/* The first line: totals and the daemon's state. */
static void draw_header(const struct top_model *m, struct top_screen *s, const char *title)
{
	char left[256], right[256];
	int rw;

	char frozen[48] = "";

	if (m->frozen)
		snprintf(frozen, sizeof(frozen), _(" (%zu frozen)"), m->frozen);
	snprintf(left, sizeof(left), _("boxy top · %s · %zu running%s · %llu denied in the last hour%s"),
		 title, m->running, frozen, (unsigned long long)m->denied_hour,
		 m->lost ? _(" · events were lost: re-read the store") : "");
	snprintf(right, sizeof(right), _("daemon %.200s"),
		 m->daemon ? m->daemon : _("not running: live updates off"));
	/* The daemon's state on the right, whole; the rest gives way. */
	rw = text_width(right);
	if (rw > s->cols)
		rw = s->cols;
	put(s, 0, 0, left, s->cols - rw - 1, TOP_A_BOLD);
	put(s, 0, s->cols - rw, right, rw, TOP_A_BOLD | (m->daemon ? 0 : TOP_A_RED));
}

/* The last line: the filter being typed, a confirmation, a message, or the keys. */
static void draw_footer(const struct top_model *m, struct top_screen *s)
{
	char line[640];
	int y = s->rows - 1;

	if (y < 1)
		return;
	if (m->mode == TOP_FILTER_EDIT) {
		snprintf(line, sizeof(line), _("filter (command, host, state): %s"), m->edit);
		put(s, y, 0, line, s->cols, TOP_A_REVERSE);
		return;
	}
	if (m->mode == TOP_CONFIRM) {
		snprintf(line, sizeof(line), m->confirm_action == TOP_DO_KILL ?
			 _("SIGKILL session %.8s? y to confirm, any other key cancels") :
			 m->confirm_action == TOP_DO_RESUME ?
			 _("resume frozen session %.8s? y to confirm, any other key cancels") :
			 _("stop session %.8s? y to confirm, any other key cancels"), m->confirm_id);
		put(s, y, 0, line, s->cols, TOP_A_REVERSE | TOP_A_BOLD);
		return;
	}
	if (m->message) {
		put(s, y, 0, m->message, s->cols, TOP_A_BOLD);
		return;
	}
	/* While a session is frozen, r takes d's place (80 columns hold one of them). */
	snprintf(line, sizeof(line), "%s%s%s%s%s", m->denied_only ? _("[denied only] ") : "",
		 m->filter[0] ? _("[filter: ") : "", m->filter[0] ? m->filter : "",
		 m->filter[0] ? "] " : "", m->frozen ?
		 _("Enter:open Tab:view /:filter r:resume s:stop K:kill a:attach ?:help q:quit") :
		 _("Enter:open Tab:view /:filter d:denied s:stop K:kill a:attach ?:help q:quit"));
	put(s, y, 0, line, s->cols, TOP_A_DIM);
}

/* Keep the selection inside the list's window of rows lines. */
static void scroll_to(struct top_model *m, enum top_view v, size_t n, int rows)
{
	size_t win = rows > 0 ? (size_t)rows : 1;

	if (m->sel[v] >= n)
		m->sel[v] = n ? n - 1 : 0;
	if (m->sel[v] < m->top[v])
		m->top[v] = m->sel[v];
	if (m->sel[v] >= m->top[v] + win)
		m->top[v] = m->sel[v] - win + 1;
	if (m->top[v] + win > n)
		m->top[v] = n > win ? n - win : 0;
}

struct column {
	const char *head;
	int width;          /* 0: share what is left */
	bool right;
};

/* Lay out cols: fixed widths as given, flexible ones share the rest (at least 8 each). */
static void layout(struct column *c, size_t n, int cols)
{
	int fixed = 0, flex = 0;

	for (size_t i = 0; i < n; i++) {
		fixed += c[i].width + 1;
		flex += c[i].width == 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (c[i].width == 0) {
			int w = (cols - fixed) / (flex ? flex : 1);

			c[i].width = w < 8 ? 8 : w;
		}
	}
}

/* One cell of a table row; right-aligned numbers. */
static int put_cell(struct top_screen *s, int y, int x, const struct column *c, const char *text,
		    uint8_t attr)
{
	if (c->right) {
		int w = text_width(text);

		if (w < c->width)
			put(s, y, x + c->width - w, text, w, attr);
		else
			put(s, y, x, text, c->width, attr);
	} else {
		put(s, y, x, text, c->width, attr);
	}
	return x + c->width + 1;
}

static void put_heads(struct top_screen *s, const struct column *c, size_t n)
{
	int x = 0;

	for (size_t i = 0; i < n; i++)
		x = put_cell(s, 1, x, &c[i], c[i].head, TOP_A_REVERSE);
	row_attr(s, 1, TOP_A_REVERSE);
}

static void draw_sessions(struct top_model *m, struct top_screen *s)
{
	enum { C_ID, C_STATE, C_AGE, C_DUR, C_EXIT, C_CONNS, C_DENIED, C_UP, C_DOWN, C_MODE, C_CMD,
	       C_WORKDIR, C_N };
	struct column c[C_N] = {
		{ "ID", 8, false }, { "STATE", 7, false }, { "AGE", 4, true },
		{ "DURATION", 8, true }, { "EXIT", 4, true }, { "CONNS", 5, true },
		{ "DENIED", 6, true }, { "UP", 7, true }, { "DOWN", 7, true },
		{ "PROFILE/NET", 16, false }, { "COMMAND", 0, false }, { "WORKDIR", 0, false },
	};
	size_t n = C_N, shown = 0, k = 0, visible = 0;
	int list = s->rows - TOP_LIST_FIRST - 1;

	/* Narrow screens lose the work directory first, then the profile. */
	if (s->cols < 130)
		n = C_WORKDIR;
	if (s->cols < 100) {
		c[C_MODE] = c[C_CMD];
		n = C_MODE + 1;
	}
	layout(c, n, s->cols);
	draw_header(m, s, _("sessions"));
	put_heads(s, c, n);
	for (size_t i = 0; i < m->nsessions; i++)
		visible += top_session_visible(m, &m->sessions[i]);
	scroll_to(m, TOP_SESSIONS, visible, list);
	for (size_t i = 0; i < m->nsessions && (int)shown < list; i++) {
		const struct top_session_row *r = &m->sessions[i];
		bool running = r->state && strcmp(r->state, "running") == 0;
		char age[32], dur[32], ex[16], conns[24], denied[24], up[32], down[32], mode[96];
		int y, x = 0;
		uint8_t base;

		if (!top_session_visible(m, r))
			continue;
		if (k++ < m->top[TOP_SESSIONS])
			continue;
		y = TOP_LIST_FIRST + (int)shown++;
		base = running ? TOP_A_BOLD : 0;
		fmt_age(m->now_ms, r->started_ms, age, sizeof(age));
		fmt_duration((r->ended_ms ? r->ended_ms : m->now_ms) - r->started_ms, dur, sizeof(dur));
		if (r->ended_ms && strcmp(r->state, "lost") != 0)
			snprintf(ex, sizeof(ex), "%d", r->exit_code);
		else
			snprintf(ex, sizeof(ex), "-");
		snprintf(conns, sizeof(conns), "%llu", (unsigned long long)r->conns);
		snprintf(denied, sizeof(denied), "%llu", (unsigned long long)r->denied);
		format_size(r->up, up, sizeof(up));
		format_size(r->down, down, sizeof(down));
		snprintf(mode, sizeof(mode), "%s/%s", r->profile ? r->profile : "-",
			 r->net ? r->net : "-");
		{
			char shortid[9];

			/* Eight digits name a session everywhere boxy takes a prefix. */
			snprintf(shortid, sizeof(shortid), "%.8s", r->id);
			x = put_cell(s, y, x, &c[C_ID], shortid, base);
		}
		x = put_cell(s, y, x, &c[C_STATE], r->state,
			     base | (r->state && strcmp(r->state, "frozen") == 0 ? TOP_A_RED : 0));
		x = put_cell(s, y, x, &c[C_AGE], age, base);
		x = put_cell(s, y, x, &c[C_DUR], dur, base);
		x = put_cell(s, y, x, &c[C_EXIT], ex, base);
		x = put_cell(s, y, x, &c[C_CONNS], conns, base);
		x = put_cell(s, y, x, &c[C_DENIED], denied, base | (r->denied ? TOP_A_RED : 0));
		x = put_cell(s, y, x, &c[C_UP], up, base);
		x = put_cell(s, y, x, &c[C_DOWN], down, base);
		if (n > C_MODE + 1) {
			x = put_cell(s, y, x, &c[C_MODE], mode, base);
			x = put_cell(s, y, x, &c[C_CMD], r->cmd, base);
			if (n > C_WORKDIR)
				put_cell(s, y, x, &c[C_WORKDIR], r->workdir, base);
		} else {
			put_cell(s, y, x, &c[C_MODE], r->cmd, base);
		}
		if (k - 1 == m->sel[TOP_SESSIONS])
			row_attr(s, y, TOP_A_REVERSE);
	}
	if (!visible)
		put(s, TOP_LIST_FIRST, 0, m->nsessions ? _("no session matches the filter") :
		    _("no sessions on record yet: boxy run -- COMMAND"), s->cols, TOP_A_DIM);
	draw_footer(m, s);
}

static void draw_dests(struct top_model *m, struct top_screen *s)
{
	struct column c[] = {
		{ "DESTINATION", 0, false }, { "SESSIONS", 8, true }, { "CONNS", 6, true },
		{ "DENIED", 6, true }, { "SENT", 8, true }, { "RECEIVED", 8, true },
		{ "FIRST", 14, false }, { "LAST", 14, false },
	};
	size_t n = ARRAY_SIZE(c), shown = 0, k = 0, visible = 0;
	int list = s->rows - TOP_LIST_FIRST - 1;

	if (s->cols < 100)
		n = 6;          /* first and last seen need the room */
	char title[128];

	layout(c, n, s->cols);
	snprintf(title, sizeof(title), _("destinations, %s (t: window)"),
		 _(TOP_WINDOW_NAME[m->window]));
	draw_header(m, s, title);
	put_heads(s, c, n);
	for (size_t i = 0; i < m->ndests; i++)
		visible += top_dest_visible(m, &m->dests[i]);
	scroll_to(m, TOP_DESTS, visible, list);
	for (size_t i = 0; i < m->ndests && (int)shown < list; i++) {
		const struct top_dest_row *r = &m->dests[i];
		char a[24], b[24], cc[24], e[32], f[32], g[32], h[32];
		int y, x = 0;

		if (!top_dest_visible(m, r))
			continue;
		if (k++ < m->top[TOP_DESTS])
			continue;
		y = TOP_LIST_FIRST + (int)shown++;
		snprintf(a, sizeof(a), "%llu", (unsigned long long)r->sessions);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)r->conns);
		snprintf(cc, sizeof(cc), "%llu", (unsigned long long)r->denied);
		format_size(r->up, e, sizeof(e));
		format_size(r->down, f, sizeof(f));
		fmt_clock(r->first_ms, g, sizeof(g));
		fmt_clock(r->last_ms, h, sizeof(h));
		x = put_cell(s, y, x, &c[0], r->name, r->denied && !r->conns ? TOP_A_RED : 0);
		x = put_cell(s, y, x, &c[1], a, 0);
		x = put_cell(s, y, x, &c[2], b, 0);
		x = put_cell(s, y, x, &c[3], cc, r->denied ? TOP_A_RED : 0);
		x = put_cell(s, y, x, &c[4], e, 0);
		x = put_cell(s, y, x, &c[5], f, 0);
		if (n > 6) {
			x = put_cell(s, y, x, &c[6], g, 0);
			put_cell(s, y, x, &c[7], h, 0);
		}
		if (k - 1 == m->sel[TOP_DESTS])
			row_attr(s, y, TOP_A_REVERSE);
	}
	if (!visible)
		put(s, TOP_LIST_FIRST, 0, "no destination in this window", s->cols, TOP_A_DIM);
	draw_footer(m, s);
}

static void draw_denials(struct top_model *m, struct top_screen *s)
{
	struct column c[] = {
		{ "TIME", 14, false }, { "SESSION", 8, false }, { "COMMAND", 14, false },
		{ "LAYER", 8, false }, { "SUBJECT", 0, false }, { "REASON", 0, false },
		{ "FIX", 0, false },
	};
	size_t n = ARRAY_SIZE(c), shown = 0, k = 0, visible = 0;
	int list = s->rows - TOP_LIST_FIRST - 1;

	if (s->cols < 120)
		n = 6;
	if (s->cols < 90)
		c[2].width = 8;
	layout(c, n, s->cols);
	draw_header(m, s, _("denials"));
	put_heads(s, c, n);
	for (size_t i = 0; i < m->ndenials; i++)
		visible += top_denial_visible(m, &m->denials[i]);
	scroll_to(m, TOP_DENIALS, visible, list);
	for (size_t i = 0; i < m->ndenials && (int)shown < list; i++) {
		const struct top_denial_row *r = &m->denials[i];
		char when[32];
		int y, x = 0;

		if (!top_denial_visible(m, r))
			continue;
		if (k++ < m->top[TOP_DENIALS])
			continue;
		y = TOP_LIST_FIRST + (int)shown++;
		fmt_clock(r->t_ms, when, sizeof(when));
		x = put_cell(s, y, x, &c[0], when, TOP_A_RED);
		{
			char shortid[9];

			snprintf(shortid, sizeof(shortid), "%.8s", r->id);
			x = put_cell(s, y, x, &c[1], shortid, TOP_A_RED);
		}
		x = put_cell(s, y, x, &c[2], r->cmd, TOP_A_RED);
		x = put_cell(s, y, x, &c[3], r->layer, TOP_A_RED);
		x = put_cell(s, y, x, &c[4], r->subject, TOP_A_RED);
		x = put_cell(s, y, x, &c[5], r->reason, TOP_A_RED);
		if (n > 6)
			put_cell(s, y, x, &c[6], r->fix ? r->fix : "", TOP_A_RED);
		if (k - 1 == m->sel[TOP_DENIALS])
			row_attr(s, y, TOP_A_REVERSE);
	}
	if (!visible)
		put(s, TOP_LIST_FIRST, 0, _("nothing refused"), s->cols, TOP_A_DIM);
	draw_footer(m, s);
}

static void draw_session(struct top_model *m, struct top_screen *s)
{
	int list = s->rows - 2;
	char title[64];

	snprintf(title, sizeof(title), _("session %.16s"), m->detail_id);
	draw_header(m, s, title);
	/* The detail scrolls as a whole: the selection is the first line shown. */
	if (m->ndetail > (size_t)(list > 0 ? list : 1)) {
		if (m->sel[TOP_SESSION] > m->ndetail - (size_t)list)
			m->sel[TOP_SESSION] = m->ndetail - (size_t)list;
	} else {
		m->sel[TOP_SESSION] = 0;
	}
	for (int i = 0; i < list && m->sel[TOP_SESSION] + (size_t)i < m->ndetail; i++) {
		const struct top_text_line *l = &m->detail[m->sel[TOP_SESSION] + (size_t)i];

		put(s, 1 + i, 0, l->text, s->cols, l->attr);
	}
	if (!m->ndetail)
		put(s, 1, 0, _("loading…"), s->cols, TOP_A_DIM);
	draw_footer(m, s);
}

static void draw_help(const struct top_model *m, struct top_screen *s)
{
	/* One message, so a translation can lay out its lines as it needs. */
	const char *help = _(
		"Views   1 sessions   2 the open session   3 destinations   4 denials   Tab next\n"
		"Move    ↑ ↓ j k   PgUp PgDn   Home End   the mouse wheel; a click selects\n"
		"Open    Enter: a session's record (live while it runs)   Esc/Backspace: back\n"
		"Filter  / then text (command, host, state; Enter keeps it, Esc drops it)\n"
		"        t in destinations: the time window (an hour, a day, a week, all)\n"
		"        d: only what was refused something   Esc in a list: clear both\n"
		"Act     s stop (SIGTERM, then SIGKILL)   K SIGKILL now   (both ask y first)\n"
		"        r resume a session an alert froze (asks y first); s or K on a frozen one kills it\n"
		"        a attach (Ctrl-] comes back)   w watch (Ctrl-C comes back)\n"
		"Quit    q\n"
		"\n"
		"Refusals are red. Without a daemon the store's history is shown and live\n"
		"updates are off until one starts. Nothing here ever slows a session: when\n"
		"this screen falls behind the daemon drops its events and it re-reads the store.");
	int y = 2;

	draw_header(m, s, _("help"));
	for (const char *p = help; *p && y < s->rows - 1; y++) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n);

		put(s, y, 1, line, s->cols - 1, 0);
		free(line);
		p += n + (p[n] == '\n');
	}
	draw_footer(m, s);
}

void top_render(struct top_model *m, struct top_screen *s)
{
	screen_clear(s);
	switch (m->view) {
	case TOP_SESSIONS: draw_sessions(m, s); break;
	case TOP_DESTS: draw_dests(m, s); break;
	case TOP_DENIALS: draw_denials(m, s); break;
	case TOP_SESSION: draw_session(m, s); break;
	case TOP_HELP: draw_help(m, s); break;
	default: break;
	}
}
