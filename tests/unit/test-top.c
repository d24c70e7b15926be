/*
 * test-top.c — boxy top's model and views without a terminal: rows, keys
 * and a size in, cells with attributes out. Hostile strings, tiny and huge
 * screens, empty stores, the filter, the confirmation, the selection.
 */
#include <config.h>

#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ui/top-model.h"
#include "common/util.h"

#define NOW 1800000000000LL

static void add_session(struct top_model *m, const char *id, const char *state, const char *cmd,
			uint64_t denied)
{
	struct top_session_row *r = xappend(&m->sessions, &m->nsessions, sizeof(*m->sessions));

	snprintf(r->id, sizeof(r->id), "%s", id);
	r->state = xstrdup(state);
	r->started_ms = NOW - 65000;
	r->ended_ms = strcmp(state, "running") == 0 ? 0 : NOW - 5000;
	r->exit_code = 0;
	r->conns = 12;
	r->denied = denied;
	r->up = 38400;
	r->down = 6400000;
	r->profile = xstrdup("node");
	r->net = xstrdup("allowlist");
	r->cmd = xstrdup(cmd);
	r->workdir = xstrdup("/home/u/proj");
	if (strcmp(state, "running") == 0)
		m->running++;
}

static void model(struct top_model *m)
{
	top_model_init(m);
	m->now_ms = NOW;
	m->daemon = xstrdup("running (build 89c069d0)");
	add_session(m, "9f3c1ba2aaaaaaaa", "running", "npm ci", 2);
	add_session(m, "1234567890abcdef", "exited", "make check", 0);
	add_session(m, "fedcba0987654321", "exited", "pip install -r requirements.txt", 0);
}

/* The column where text starts on row y, or -1. */
static int col_of(const struct top_screen *s, int y, const char *text)
{
	char *line = top_screen_line(s, y), *at = strstr(line, text);
	int col = -1;

	if (at) {
		/* Cells hold one character each: count characters before at. */
		col = 0;
		for (char *p = line; p < at; p++)
			if (((unsigned char)*p & 0xc0) != 0x80)
				col++;
	}
	free(line);
	return col;
}

static uint8_t attr_at(const struct top_screen *s, int y, int x)
{
	return s->cells[y * s->cols + x].attr;
}

/* The sessions view at 80×24: the columns that fit, the header, the red denial count. */
static void test_sessions_80(void **state)
{
	struct top_model m;
	struct top_screen s;
	char *l;
	int x;

	(void)state;
	model(&m);
	top_screen_init(&s, 24, 80);
	top_render(&m, &s);
	l = top_screen_line(&s, 0);
	assert_non_null(strstr(l, "1 running"));
	assert_non_null(strstr(l, "daemon running (build 89c069d0)"));
	free(l);
	l = top_screen_line(&s, 1);
	assert_non_null(strstr(l, "ID"));
	assert_non_null(strstr(l, "DENIED"));
	assert_non_null(strstr(l, "COMMAND"));
	assert_null(strstr(l, "WORKDIR"));     /* no room at 80 columns */
	free(l);
	assert_true(attr_at(&s, 1, 0) & TOP_A_REVERSE);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "9f3c1ba2"));
	assert_non_null(strstr(l, "running"));
	assert_non_null(strstr(l, "npm ci"));
	free(l);
	/* The first row is selected; its DENIED cell ("2") is red. */
	assert_true(attr_at(&s, TOP_LIST_FIRST, 0) & TOP_A_REVERSE);
	x = col_of(&s, 1, "DENIED") + 5;          /* right-aligned under the heading */
	assert_true(attr_at(&s, TOP_LIST_FIRST, x) & TOP_A_RED);
	/* A row without denials has no red. */
	for (int i = 0; i < 80; i++)
		assert_false(attr_at(&s, TOP_LIST_FIRST + 1, i) & TOP_A_RED);
	l = top_screen_line(&s, 23);
	assert_non_null(strstr(l, "q:quit"));
	free(l);
	top_screen_free(&s);
	top_model_free(&m);
}

/* Wider screens add the profile/net and the work directory. */
static void test_sessions_wide(void **state)
{
	struct top_model m;
	struct top_screen s;
	char *l;

	(void)state;
	model(&m);
	top_screen_init(&s, 30, 160);
	top_render(&m, &s);
	l = top_screen_line(&s, 1);
	assert_non_null(strstr(l, "WORKDIR"));
	assert_non_null(strstr(l, "PROFILE/NET"));
	free(l);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "node/allowlist"));
	assert_non_null(strstr(l, "/home/u/proj"));
	free(l);
	top_screen_free(&s);
	top_model_free(&m);
}

/* Whatever a payload named itself, no cell holds a control character or a broken character. */
static void test_hostile(void **state)
{
	static const char *const evil[] = {
		"\x1b]52;c;Y3VybCBldmlsfHNo\x07", "\x1b[2J\x1b[H", "\x9b" "6n", "a\xc0\x9b" "b",
		"\xe2\x80\xae" "gpj.exe", "\r\n\t\b\x7f", "\xff\xfe",
	};
	struct top_model m;
	struct top_screen s;

	(void)state;
	top_model_init(&m);
	for (size_t i = 0; i < ARRAY_SIZE(evil); i++) {
		char id[17];

		snprintf(id, sizeof(id), "%016zx", i);
		add_session(&m, id, "running", evil[i], 1);
		m.sessions[i].workdir[0] = '\0';
	}
	top_model_detail_add(&m, evil[0], 0);
	for (int v = 0; v < TOP_NVIEWS; v++) {
		m.view = (enum top_view)v;
		top_screen_init(&s, 24, 200);
		top_render(&m, &s);
		for (int i = 0; i < s.rows * s.cols; i++) {
			const unsigned char *c = (const unsigned char *)s.cells[i].ch;

			for (; *c; c++)
				assert_true(*c >= 0x20 && *c != 0x7f && !(*c >= 0x80 && *c < 0xa0 &&
									     c == (const unsigned char *)s.cells[i].ch));
			c = (const unsigned char *)s.cells[i].ch;
			/* A cell is one whole character: a lead byte never stands alone. */
			if (c[0] >= 0xc0)
				assert_true(c[1] >= 0x80 && c[1] < 0xc0);
		}
		top_screen_free(&s);
	}
	top_model_free(&m);
}

/* Sizes from one cell to the largest: nothing crashes, nothing wraps. */
static void test_sizes(void **state)
{
	static const int sizes[][2] = { { 1, 1 }, { 2, 10 }, { 5, 20 }, { 24, 80 }, { 24, 79 },
					{ 600, 2000 }, { 0, 0 }, { -3, -7 } };
	struct top_model m;

	(void)state;
	model(&m);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (int v = 0; v < TOP_NVIEWS; v++) {
			struct top_screen s;

			m.view = (enum top_view)v;
			top_screen_init(&s, sizes[i][0], sizes[i][1]);
			assert_true(s.rows >= 1 && s.rows <= TOP_ROWS_MAX);
			assert_true(s.cols >= 1 && s.cols <= TOP_COLS_MAX);
			top_render(&m, &s);
			top_screen_free(&s);
		}
	}
	top_model_free(&m);
}

/* An empty store says so; a long command is cut with an ellipsis; wide characters take two. */
static void test_empty_and_cut(void **state)
{
	struct top_model m;
	struct top_screen s;
	char *l;

	(void)state;
	top_model_init(&m);
	top_screen_init(&s, 24, 80);
	top_render(&m, &s);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "no sessions on record yet"));
	free(l);
	l = top_screen_line(&s, 0);
	assert_non_null(strstr(l, "not running: live updates off"));
	free(l);
	add_session(&m, "aaaaaaaaaaaaaaaa", "exited",
		    "node scripts/a-very-long-command-line-that-cannot-fit.js --with --many --flags", 0);
	add_session(&m, "bbbbbbbbbbbbbbbb", "exited", "説明書を読む", 0);
	top_render(&m, &s);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "…"));
	assert_null(strstr(l, "--flags"));
	free(l);
	l = top_screen_line(&s, TOP_LIST_FIRST + 1);
	assert_non_null(strstr(l, "説明書を読む"));
	free(l);
	top_screen_free(&s);
	top_model_free(&m);
}

/* Moving, opening, going back, switching views, quitting. */
static void test_keys(void **state)
{
	struct top_model m;

	(void)state;
	model(&m);
	assert_int_equal(top_key(&m, 'j', 10), TOP_DO_REDRAW);
	assert_int_equal(m.sel[TOP_SESSIONS], 1);
	top_key(&m, TOP_KEY_DOWN, 10);
	top_key(&m, TOP_KEY_DOWN, 10);          /* clamped at the last row */
	assert_int_equal(m.sel[TOP_SESSIONS], 2);
	top_key(&m, TOP_KEY_HOME, 10);
	assert_int_equal(m.sel[TOP_SESSIONS], 0);
	top_key(&m, TOP_KEY_END, 10);
	assert_int_equal(m.sel[TOP_SESSIONS], 2);
	top_key(&m, 'k', 10);
	assert_int_equal(top_key(&m, TOP_KEY_ENTER, 10), TOP_DO_OPEN);
	assert_int_equal(m.view, TOP_SESSION);
	assert_string_equal(m.detail_id, "1234567890abcdef");
	assert_int_equal(top_key(&m, TOP_KEY_ESC, 10), TOP_DO_REDRAW);
	assert_int_equal(m.view, TOP_SESSIONS);
	top_key(&m, TOP_KEY_TAB, 10);
	assert_int_equal(m.view, TOP_DESTS);
	top_key(&m, TOP_KEY_TAB, 10);
	assert_int_equal(m.view, TOP_DENIALS);
	assert_int_equal(m.window, 1);
	assert_int_equal(top_key(&m, 't', 10), TOP_DO_NOTHING);     /* not in this view */
	top_key(&m, '3', 10);
	assert_int_equal(top_key(&m, 't', 10), TOP_DO_REFILTER);
	assert_int_equal(m.window, 2);
	for (int i = 0; i < TOP_NWINDOWS - 1; i++)
		top_key(&m, 't', 10);
	assert_int_equal(m.window, 1);
	top_key(&m, '1', 10);
	assert_int_equal(m.view, TOP_SESSIONS);
	top_key(&m, '?', 10);
	assert_int_equal(m.view, TOP_HELP);
	top_key(&m, TOP_KEY_ESC, 10);
	assert_int_equal(m.view, TOP_SESSIONS);
	/* A click on the third list row selects it; a click on the heading does nothing. */
	assert_int_equal(top_click(&m, TOP_LIST_FIRST + 2, 24), TOP_DO_REDRAW);
	assert_int_equal(m.sel[TOP_SESSIONS], 2);
	assert_int_equal(top_click(&m, 1, 24), TOP_DO_NOTHING);
	assert_int_equal(top_key(&m, 'q', 10), TOP_DO_QUIT);
	top_model_free(&m);
}

/* `/` filters by command, host or state; `d` keeps only what was refused something. */
static void test_filter(void **state)
{
	struct top_model m;
	struct top_screen s;
	char *l;

	(void)state;
	model(&m);
	assert_int_equal(top_key(&m, '/', 10), TOP_DO_REDRAW);
	assert_int_equal(m.mode, TOP_FILTER_EDIT);
	top_key(&m, 'm', 10);
	top_key(&m, 'a', 10);
	top_key(&m, 'x', 10);
	top_key(&m, TOP_KEY_BACKSPACE, 10);
	top_key(&m, 'k', 10);
	top_screen_init(&s, 24, 80);
	top_render(&m, &s);
	l = top_screen_line(&s, 23);
	assert_non_null(strstr(l, "filter (command, host, state): mak"));
	free(l);
	assert_int_equal(top_key(&m, TOP_KEY_ENTER, 10), TOP_DO_REFILTER);
	assert_string_equal(m.filter, "mak");
	top_render(&m, &s);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "make check"));
	free(l);
	l = top_screen_line(&s, TOP_LIST_FIRST + 1);
	assert_string_equal(l, "");
	free(l);
	/* Esc in the list clears the filter. */
	assert_int_equal(top_key(&m, TOP_KEY_ESC, 10), TOP_DO_REFILTER);
	assert_string_equal(m.filter, "");
	assert_int_equal(top_key(&m, 'd', 10), TOP_DO_REFILTER);
	top_render(&m, &s);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "npm ci"));
	free(l);
	l = top_screen_line(&s, TOP_LIST_FIRST + 1);
	assert_string_equal(l, "");
	free(l);
	l = top_screen_line(&s, 23);
	assert_non_null(strstr(l, "[denied only]"));
	free(l);
	/* A filter nothing matches says so. */
	snprintf(m.filter, sizeof(m.filter), "nothing-like-this");
	top_render(&m, &s);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "no session matches the filter"));
	free(l);
	top_screen_free(&s);
	top_model_free(&m);
}

/* s and K ask first; only y goes ahead; a finished session cannot be stopped. */
static void test_confirm(void **state)
{
	struct top_model m;
	struct top_screen s;
	char *l;

	(void)state;
	model(&m);
	assert_int_equal(top_key(&m, 's', 10), TOP_DO_REDRAW);
	assert_int_equal(m.mode, TOP_CONFIRM);
	top_screen_init(&s, 24, 80);
	top_render(&m, &s);
	l = top_screen_line(&s, 23);
	assert_non_null(strstr(l, "stop session 9f3c1ba2? y to confirm"));
	free(l);
	assert_int_equal(top_key(&m, 'n', 10), TOP_DO_REDRAW);
	assert_int_equal(m.mode, TOP_BROWSE);
	assert_string_equal(m.message, "cancelled");
	top_key(&m, 's', 10);
	assert_int_equal(top_key(&m, 'y', 10), TOP_DO_STOP);
	assert_string_equal(m.confirm_id, "9f3c1ba2aaaaaaaa");
	top_key(&m, 'K', 10);
	assert_int_equal(top_key(&m, 'y', 10), TOP_DO_KILL);
	/* The second row has exited: nothing to stop, and it says so. */
	top_key(&m, 'j', 10);
	assert_int_equal(top_key(&m, 's', 10), TOP_DO_REDRAW);
	assert_int_equal(m.mode, TOP_BROWSE);
	assert_string_equal(m.message, "that session is not running");
	assert_int_equal(top_key(&m, 'a', 10), TOP_DO_REDRAW);
	top_key(&m, 'k', 10);
	assert_int_equal(top_key(&m, 'a', 10), TOP_DO_ATTACH);
	assert_string_equal(m.detail_id, "9f3c1ba2aaaaaaaa");
	top_screen_free(&s);
	top_model_free(&m);
}

/*
 * r resumes a frozen session after a y, and only a frozen one; a frozen row is
 * red in its state, counts in the header, and s and K reach it as any running one.
 */
static void test_frozen(void **state)
{
	struct top_model m;
	struct top_screen s;
	char *l;
	int x;

	(void)state;
	model(&m);
	add_session(&m, "77aa55cc00112233", "frozen", "npm install ./evil.tgz", 1);
	m.running++;
	m.frozen = 1;
	top_screen_init(&s, 24, 100);
	top_render(&m, &s);
	l = top_screen_line(&s, 0);
	assert_non_null(strstr(l, "2 running (1 frozen)"));
	free(l);
	l = top_screen_line(&s, 23);
	assert_non_null(strstr(l, "r:resume"));
	free(l);
	/* The first row is the running one: not frozen, r says so and asks nothing. */
	assert_int_equal(top_key(&m, 'r', 10), TOP_DO_REDRAW);
	assert_int_equal(m.mode, TOP_BROWSE);
	assert_string_equal(m.message, "that session is not frozen");
	/* The frozen row, last: its state in red. */
	top_key(&m, 'G', 10);
	top_render(&m, &s);
	x = col_of(&s, TOP_LIST_FIRST + 3, "frozen");
	assert_true(x >= 0);
	assert_true(attr_at(&s, TOP_LIST_FIRST + 3, x) & TOP_A_RED);
	assert_int_equal(top_key(&m, 'r', 10), TOP_DO_REDRAW);
	assert_int_equal(m.mode, TOP_CONFIRM);
	top_render(&m, &s);
	l = top_screen_line(&s, 23);
	assert_non_null(strstr(l, "resume frozen session 77aa55cc? y to confirm"));
	free(l);
	assert_int_equal(top_key(&m, 'x', 10), TOP_DO_REDRAW);
	assert_string_equal(m.message, "cancelled");
	top_key(&m, 'r', 10);
	assert_int_equal(top_key(&m, 'y', 10), TOP_DO_RESUME);
	assert_string_equal(m.confirm_id, "77aa55cc00112233");
	/* A frozen session is a running one for stop and kill. */
	top_key(&m, 'K', 10);
	assert_int_equal(top_key(&m, 'y', 10), TOP_DO_KILL);
	assert_string_equal(m.confirm_id, "77aa55cc00112233");
	top_screen_free(&s);
	top_model_free(&m);
}

/* The denials view: all red; the session view scrolls its lines. */
static void test_denials_and_detail(void **state)
{
	struct top_model m;
	struct top_screen s;
	struct top_denial_row *d;
	char *l;

	(void)state;
	model(&m);
	d = xappend(&m.denials, &m.ndenials, sizeof(*m.denials));
	d->t_ms = NOW - 1000;
	snprintf(d->id, sizeof(d->id), "9f3c1ba2aaaaaaaa");
	d->cmd = xstrdup("npm ci");
	d->layer = xstrdup("net.dns");
	d->subject = xstrdup("c2.example.net");
	d->reason = xstrdup("hostname not on the allowlist");
	d->fix = xstrdup("--allow-host c2.example.net");
	m.view = TOP_DENIALS;
	top_screen_init(&s, 24, 140);
	top_render(&m, &s);
	l = top_screen_line(&s, TOP_LIST_FIRST);
	assert_non_null(strstr(l, "c2.example.net"));
	assert_non_null(strstr(l, "--allow-host c2.example.net"));
	free(l);
	assert_true(attr_at(&s, TOP_LIST_FIRST, col_of(&s, TOP_LIST_FIRST, "net.dns")) &
		    TOP_A_RED);
	/* Enter on a denial opens its session. */
	assert_int_equal(top_key(&m, TOP_KEY_ENTER, 10), TOP_DO_OPEN);
	assert_string_equal(m.detail_id, "9f3c1ba2aaaaaaaa");
	for (int i = 0; i < 100; i++) {
		char line[32];

		snprintf(line, sizeof(line), "line %d", i);
		top_model_detail_add(&m, line, i == 50 ? TOP_A_RED : 0);
	}
	top_render(&m, &s);
	l = top_screen_line(&s, 1);
	assert_string_equal(l, "line 0");
	free(l);
	top_key(&m, TOP_KEY_PGDN, 20);
	top_key(&m, TOP_KEY_PGDN, 20);
	top_render(&m, &s);
	l = top_screen_line(&s, 1);
	assert_string_equal(l, "line 40");
	free(l);
	assert_true(attr_at(&s, 11, 0) & TOP_A_RED);        /* line 50 */
	top_key(&m, TOP_KEY_END, 20);
	top_render(&m, &s);
	l = top_screen_line(&s, 22);
	assert_string_equal(l, "line 99");
	free(l);
	top_screen_free(&s);
	top_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sessions_80),
		cmocka_unit_test(test_sessions_wide),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_empty_and_cut),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_confirm),
		cmocka_unit_test(test_frozen),
		cmocka_unit_test(test_denials_and_detail),
	};

	setlocale(LC_CTYPE, "C.UTF-8");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
