/*
 * top-model.h — `boxy top` without a terminal: what the dashboard knows,
 * how a key changes it, and what each view draws, as plain data.
 *
 * The model holds rows (sessions, destinations, denials, one session's
 * detail lines) that the data layer (src/cli/cmd-top.c: the store and the
 * daemon's stream) fills; the views turn the model and a size into a grid
 * of cells, each a character and an attribute; ui/top.c is the only file
 * that hands those cells to curses. Keys come in as TOP_KEY_* (the driver
 * maps curses' codes) and return what the caller must do — redraw, open,
 * stop, attach — never drawing themselves (htop's Action.c habit).
 *
 * Every string a payload, a DNS answer or a ClientHello could have chosen
 * is sanitized when it is put into a cell: the grid holds nothing a
 * terminal would act on.
 */
#ifndef BOXY_TOP_MODEL_H
#define BOXY_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cell attributes; the driver maps them to curses (red → bold under NO_COLOR). */
#define TOP_A_BOLD    0x01
#define TOP_A_REVERSE 0x02
#define TOP_A_RED     0x04
#define TOP_A_DIM     0x08

#define TOP_COLS_MAX  1024
#define TOP_ROWS_MAX  512

struct top_cell {
	char ch[5];         /* one UTF-8 character, NUL-terminated; "" = the right half of a wide one */
	uint8_t attr;
};

struct top_screen {
	int rows, cols;
	struct top_cell *cells;     /* rows × cols */
};

enum top_view { TOP_SESSIONS, TOP_SESSION, TOP_DESTS, TOP_DENIALS, TOP_HELP, TOP_NVIEWS };

struct top_session_row {
	char id[17];
	char *state;                /* running, exited, failed, lost, frozen */
	int64_t started_ms, ended_ms;       /* Unix ms; ended 0 while running */
	int exit_code;
	uint64_t conns, denied, up, down;
	char *profile, *net;
	char *cmd, *workdir;
	char *frozen_reason;        /* the alert that froze it; NULL when it is not frozen */
};

struct top_dest_row {
	char *name;
	uint64_t sessions, conns, denied, up, down;
	int64_t first_ms, last_ms;
};

struct top_denial_row {
	int64_t t_ms;
	char id[17];
	char *cmd, *layer, *subject, *reason, *fix;
};

/* One line of the session view: text and one attribute for all of it. */
struct top_text_line {
	char *text;
	uint8_t attr;
};

enum top_mode { TOP_BROWSE, TOP_FILTER_EDIT, TOP_CONFIRM };

struct top_model {
	enum top_view view, back;   /* back: where Esc returns from the session or help view */
	enum top_mode mode;
	int64_t now_ms;

	struct top_session_row *sessions;
	size_t nsessions;
	struct top_dest_row *dests;
	size_t ndests;
	struct top_denial_row *denials;
	size_t ndenials;
	struct top_text_line *detail;       /* the open session, as lines */
	size_t ndetail;
	char detail_id[17];

	size_t sel[TOP_NVIEWS], top[TOP_NVIEWS];    /* selected row and first row shown */

	int window;                 /* destinations: TOP_WINDOWS[window] back from now */
	char filter[128];           /* command, host or state substring; "" for none */
	char edit[128];             /* the filter being typed */
	bool denied_only;

	/* the header */
	size_t running;             /* frozen ones included */
	size_t frozen;
	uint64_t denied_hour;
	char *daemon;               /* "running (build 89c0…)", "not running: live updates off" */
	uint64_t lost;              /* events the daemon dropped for us (we re-read the store) */

	char confirm_id[17];        /* TOP_CONFIRM: the session to act on */
	int confirm_action;         /* TOP_DO_STOP, TOP_DO_KILL or TOP_DO_RESUME */
	char *message;              /* one line at the bottom until the next key */
};

/* The destinations view's time windows ('t' cycles): an hour, a day, a week, everything. */
#define TOP_NWINDOWS 4
extern const int64_t TOP_WINDOW_MS[TOP_NWINDOWS];
extern const char *const TOP_WINDOW_NAME[TOP_NWINDOWS];

/* Keys, as the driver hands them over. Printable ASCII is itself. */
enum {
	TOP_KEY_UP = 0x100, TOP_KEY_DOWN, TOP_KEY_PGUP, TOP_KEY_PGDN, TOP_KEY_HOME,
	TOP_KEY_END, TOP_KEY_ENTER, TOP_KEY_ESC, TOP_KEY_BACKSPACE, TOP_KEY_TAB,
	TOP_KEY_WHEEL_UP, TOP_KEY_WHEEL_DOWN,
};

/* What a key asks of the caller. */
enum top_do {
	TOP_DO_NOTHING,
	TOP_DO_REDRAW,
	TOP_DO_QUIT,
	TOP_DO_OPEN,        /* load detail for model.detail_id, then redraw */
	TOP_DO_REFILTER,    /* the filter changed: re-query, then redraw */
	TOP_DO_STOP,        /* confirmed: stop confirm_id */
	TOP_DO_KILL,        /* confirmed: SIGKILL confirm_id */
	TOP_DO_RESUME,      /* confirmed: resume confirm_id, which an alert froze */
	TOP_DO_ATTACH,      /* leave the screen, attach to detail_id, come back */
	TOP_DO_WATCH,       /* leave the screen, watch detail_id, come back */
};

void top_model_init(struct top_model *m);
void top_model_free(struct top_model *m);
/* Drop the rows of one kind (before the data layer refills them). */
void top_model_clear_sessions(struct top_model *m);
void top_model_clear_dests(struct top_model *m);
void top_model_clear_denials(struct top_model *m);
void top_model_clear_detail(struct top_model *m);
/* Append a detail line (copied). */
void top_model_detail_add(struct top_model *m, const char *text, uint8_t attr);
/* Set the bottom message (copied; NULL clears). */
void top_model_say(struct top_model *m, const char *text);

/* Does a session row pass the filter and the denied-only switch? */
bool top_session_visible(const struct top_model *m, const struct top_session_row *r);
bool top_dest_visible(const struct top_model *m, const struct top_dest_row *r);
bool top_denial_visible(const struct top_model *m, const struct top_denial_row *r);

/* Apply one key; page is the number of rows a page scrolls. */
enum top_do top_key(struct top_model *m, int key, int page);
/* A click on screen row y of a list view (0 = the first line of the screen). */
enum top_do top_click(struct top_model *m, int y, int rows);

/* The screen of the current view at rows × cols (clamped to 1..TOP_*_MAX). */
void top_screen_init(struct top_screen *s, int rows, int cols);
void top_screen_free(struct top_screen *s);
void top_render(struct top_model *m, struct top_screen *s);   /* keeps the selection on screen */
/* Row y as UTF-8 text (for tests and the plain-text snapshot); malloc'd, trailing blanks cut. */
char *top_screen_line(const struct top_screen *s, int y);

/* The first screen row of list rows in a list view (after the header lines). */
#define TOP_LIST_FIRST 2

#endif
