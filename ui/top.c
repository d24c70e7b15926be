/*
 * top.c — boxy top on a real terminal: the only file that includes curses.
 *
 * The loop waits on the terminal, the daemon's stream (when one is open)
 * and a one-second tick; keys go to the model (top_key), which says what to
 * do; the view is rendered into cells and the cells into curses, redrawn at
 * most ten times a second however fast events come. Red needs colour and a
 * terminal that has it; otherwise (and under NO_COLOR) a refusal is bold.
 *
 * The terminal is restored on every way out: q, SIGTERM, SIGHUP, SIGINT,
 * and a fatal error (endwin() first, the message after). Attach and watch
 * leave the screen (def_prog_mode/endwin) and come back to it.
 */
#include <config.h>

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ui/top.h"
#include "common/util.h"

#define PAIR_RED 1

static volatile sig_atomic_t top_stop, top_resized;
static bool top_screen_up;

/*
 * BOXY_TOP_TRACE=FILE (bench/top.sh): one line per paint, "first MS" for the
 * first (milliseconds since the process started) and "key MS" for each paint
 * that answered a key (milliseconds from reading the key to the paint done).
 */
static FILE *top_trace;

/* Milliseconds since this process started, from /proc/self/stat's start time. */
static double since_start_ms(void)
{
	FILE *f = fopen("/proc/self/stat", "r");
	unsigned long long start = 0;
	struct timespec now;
	char buf[1024], *p;

	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	/* Field 22 (starttime), counted from field 3 after the command's ')'. */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return -1;
	clock_gettime(CLOCK_BOOTTIME, &now);
	return (double)now.tv_sec * 1000.0 + (double)now.tv_nsec / 1e6 -
	       (double)start * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		top_resized = 1;
	else
		top_stop = sig;
}

/* Curses' key codes into the model's. */
static int map_key(int ch)
{
	switch (ch) {
	case KEY_UP: return TOP_KEY_UP;
	case KEY_DOWN: return TOP_KEY_DOWN;
	case KEY_PPAGE: return TOP_KEY_PGUP;
	case KEY_NPAGE: return TOP_KEY_PGDN;
	case KEY_HOME: return TOP_KEY_HOME;
	case KEY_END: return TOP_KEY_END;
	case KEY_ENTER: case '\n': case '\r': return TOP_KEY_ENTER;
	case 27: return TOP_KEY_ESC;
	case KEY_BACKSPACE: case 127: case 8: return TOP_KEY_BACKSPACE;
	case '\t': return TOP_KEY_TAB;
	default: return ch >= 0x20 && ch < 0x7f ? ch : -1;
	}
}

/* The cells, into curses; only what changed reaches the terminal (curses compares). */
static void paint(const struct top_screen *s, bool color)
{
	for (int y = 0; y < s->rows; y++) {
		move(y, 0);
		for (int x = 0; x < s->cols; x++) {
			const struct top_cell *c = &s->cells[y * s->cols + x];
			attr_t a = 0;

			if (!c->ch[0])
				continue;       /* the right half of a wide character */
			if (c->attr & TOP_A_BOLD)
				a |= A_BOLD;
			if (c->attr & TOP_A_REVERSE)
				a |= A_REVERSE;
			if (c->attr & TOP_A_DIM)
				a |= A_DIM;
			if (c->attr & TOP_A_RED)
				a |= color ? COLOR_PAIR(PAIR_RED) : A_BOLD;
			attrset(a);
			/* The last cell of the last line would scroll some terminals: leave it. */
			if (y == s->rows - 1 && x == s->cols - 1)
				break;
			addstr(c->ch);
		}
	}
	attrset(0);
	refresh();
}

static void screen_down(void)
{
	if (top_screen_up) {
		endwin();
		top_screen_up = false;
	}
}

static void screen_up(bool *color)
{
	initscr();
	top_screen_up = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	nodelay(stdscr, TRUE);
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	if (*color && has_colors()) {
		start_color();
		use_default_colors();
		init_pair(PAIR_RED, COLOR_RED, -1);
	} else {
		*color = false;
	}
}

/* A mouse event: the wheel scrolls, a click selects (a second click on the selection opens). */
static enum top_do on_mouse(struct top_model *m, int rows)
{
	MEVENT e;
	size_t before;

	if (getmouse(&e) != OK)
		return TOP_DO_NOTHING;
	if (e.bstate & BUTTON4_PRESSED)
		return top_key(m, TOP_KEY_WHEEL_UP, rows);
#ifdef BUTTON5_PRESSED
	if (e.bstate & BUTTON5_PRESSED)
		return top_key(m, TOP_KEY_WHEEL_DOWN, rows);
#endif
	before = m->sel[m->view];
	if (top_click(m, e.y, rows) == TOP_DO_REDRAW && m->sel[m->view] == before &&
	    (e.bstate & BUTTON1_CLICKED))
		return top_key(m, TOP_KEY_ENTER, rows);
	return TOP_DO_REDRAW;
}

int top_run(const struct top_source *src, struct top_model *m, bool color)
{
	struct sigaction sa;
	struct top_screen s = { 0 };
	uint64_t last_tick = 0, last_paint = 0, key_at = 0;
	bool dirty = true, first = true, reload_pending = false;
	int code = 0;

	setlocale(LC_ALL, "");
	if (getenv("BOXY_TOP_TRACE"))
		top_trace = fopen(getenv("BOXY_TOP_TRACE"), "we");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	screen_up(&color);
	src->reload(src->ctx, m);
	last_tick = now_mono_ms();
	while (!top_stop) {
		struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
				       { .fd = src->live_fd ? src->live_fd(src->ctx) : -1,
					 .events = POLLIN } };
		uint64_t now = now_mono_ms();
		int wait = 1000 - (int)(now - last_tick), ch;

		if (top_resized) {
			top_resized = 0;
			endwin();
			refresh();
			dirty = true;
		}
		if (dirty && (key_at || now - last_paint >= 100)) {
			if (s.cells == NULL || s.rows != LINES || s.cols != COLS) {
				top_screen_free(&s);
				top_screen_init(&s, LINES, COLS);
				clear();
			}
			m->now_ms = (int64_t)now_real_ms();
			top_render(m, &s);
			paint(&s, color);
			last_paint = now;
			dirty = false;
			if (top_trace && first)
				fprintf(top_trace, "first %.1f\n", since_start_ms());
			else if (top_trace && key_at)
				fprintf(top_trace, "key %llu\n", (unsigned long long)(now_mono_ms() - key_at));
			if (top_trace)
				fflush(top_trace);
			first = false;
			key_at = 0;
		}
		if (reload_pending && !dirty) {
			/* The key's paint is on the screen: now the store (and paint again). */
			reload_pending = false;
			src->reload(src->ctx, m);
			dirty = true;
			continue;
		}
		if (dirty && wait > 100)
			wait = 100;
		if (wait < 0)
			wait = 0;
		if (poll(p, p[1].fd >= 0 ? 2 : 1, wait) < 0 && errno != EINTR)
			break;
		if (p[1].fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			src->live(src->ctx, m);
			dirty = true;
		}
		while ((ch = getch()) != ERR) {
			enum top_do d;

			if (!key_at)
				key_at = now_mono_ms();

			if (ch == KEY_RESIZE) {
				dirty = true;
				continue;
			}
			{
				enum top_view before = m->view;

				d = ch == KEY_MOUSE ? on_mouse(m, LINES - 3) :
				    top_key(m, map_key(ch), LINES - 3);
				/* A list shown anew is read anew; so is a selection near the end of
				 * what was loaded (the source decides whether the store changed). */
				if (d == TOP_DO_REDRAW && m->view != TOP_SESSION && m->view != TOP_HELP &&
				    (m->view != before || m->sel[m->view] + 50 >= m->nsessions))
					d = TOP_DO_REFILTER;
			}
			switch (d) {
			case TOP_DO_QUIT:
				top_stop = -1;
				break;
			case TOP_DO_OPEN:
				top_model_clear_detail(m);
				src->open(src->ctx, m);
				break;
			case TOP_DO_REFILTER:
				/* Answer the key first; the lists are read right after. */
				reload_pending = true;
				break;
			case TOP_DO_STOP:
			case TOP_DO_KILL:
			case TOP_DO_RESUME:
				top_model_say(m, src->act(src->ctx, m, d, m->confirm_id));
				src->reload(src->ctx, m);
				break;
			case TOP_DO_ATTACH:
			case TOP_DO_WATCH:
				def_prog_mode();
				screen_down();
				src->leave(src->ctx, d, m->detail_id);
				reset_prog_mode();
				top_screen_up = true;
				clear();
				src->reload(src->ctx, m);
				break;
			default:
				break;
			}
			if (d != TOP_DO_NOTHING)
				dirty = true;
			if (top_stop)
				break;
		}
		if (now_mono_ms() - last_tick >= 1000) {
			last_tick = now_mono_ms();
			src->reload(src->ctx, m);
			if (m->view == TOP_SESSION && !(src->live_fd && src->live_fd(src->ctx) >= 0))
				src->open(src->ctx, m);     /* a finished session's record can grow too */
			dirty = true;
		}
	}
	screen_down();
	top_screen_free(&s);
	if (top_trace)
		fclose(top_trace);
	if (top_stop > 0)
		code = 128 + (int)top_stop;
	return code;
}
