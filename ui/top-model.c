/*
 * top-model.c — the dashboard's state and its keys (see top-model.h).
 *
 * Keys change the model and say what the caller must do; nothing here
 * draws, reads the store or talks to the daemon, so every path is tested
 * with plain data (tests/unit/test-top.c).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/top-model.h"
#include "common/util.h"

const int64_t TOP_WINDOW_MS[TOP_NWINDOWS] = { 3600000LL, 86400000LL, 7 * 86400000LL, 0 };
/* Marked, translated where shown (ui/top-view.c). */
const char *const TOP_WINDOW_NAME[TOP_NWINDOWS] = {
	N_("last hour"), N_("last day"), N_("last week"), N_("all"),
};

void top_model_init(struct top_model *m)
{
	memset(m, 0, sizeof(*m));
	m->view = m->back = TOP_SESSIONS;
	m->window = 1;
}

void top_model_clear_sessions(struct top_model *m)
{
	for (size_t i = 0; i < m->nsessions; i++) {
		struct top_session_row *r = &m->sessions[i];

		free(r->state);
		free(r->profile);
		free(r->net);
		free(r->cmd);
		free(r->workdir);
		free(r->frozen_reason);
	}
	free(m->sessions);
	m->sessions = NULL;
	m->nsessions = 0;
}

void top_model_clear_dests(struct top_model *m)
{
	for (size_t i = 0; i < m->ndests; i++)
		free(m->dests[i].name);
	free(m->dests);
	m->dests = NULL;
	m->ndests = 0;
}

void top_model_clear_denials(struct top_model *m)
{
	for (size_t i = 0; i < m->ndenials; i++) {
		struct top_denial_row *r = &m->denials[i];

		free(r->cmd);
		free(r->layer);
		free(r->subject);
		free(r->reason);
		free(r->fix);
	}
	free(m->denials);
	m->denials = NULL;
	m->ndenials = 0;
}

void top_model_clear_detail(struct top_model *m)
{
	for (size_t i = 0; i < m->ndetail; i++)
		free(m->detail[i].text);
	free(m->detail);
	m->detail = NULL;
	m->ndetail = 0;
}

void top_model_detail_add(struct top_model *m, const char *text, uint8_t attr)
{
	struct top_text_line *l = xappend(&m->detail, &m->ndetail, sizeof(*m->detail));

	l->text = xstrdup(text ? text : "");
	l->attr = attr;
}

void top_model_say(struct top_model *m, const char *text)
{
	free(m->message);
	m->message = text ? xstrdup(text) : NULL;
}

void top_model_free(struct top_model *m)
{
	top_model_clear_sessions(m);
	top_model_clear_dests(m);
	top_model_clear_denials(m);
	top_model_clear_detail(m);
	free(m->daemon);
	free(m->message);
	top_model_init(m);
}

/* Case-sensitive substring, NULL-safe. */
static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

bool top_session_visible(const struct top_model *m, const struct top_session_row *r)
{
	if (m->denied_only && r->denied == 0)
		return false;
	if (!m->filter[0])
		return true;
	return has(r->cmd, m->filter) || has(r->state, m->filter) || has(r->workdir, m->filter) ||
	       has(r->profile, m->filter) || strncmp(r->id, m->filter, strlen(m->filter)) == 0;
}

bool top_dest_visible(const struct top_model *m, const struct top_dest_row *r)
{
	if (m->denied_only && r->denied == 0)
		return false;
	return !m->filter[0] || has(r->name, m->filter);
}

bool top_denial_visible(const struct top_model *m, const struct top_denial_row *r)
{
	return !m->filter[0] || has(r->subject, m->filter) || has(r->cmd, m->filter) ||
	       has(r->layer, m->filter) || strncmp(r->id, m->filter, strlen(m->filter)) == 0;
}

/* How many rows the current view lists (after the filter). */
static size_t view_count(const struct top_model *m)
{
	size_t n = 0;

	switch (m->view) {
	case TOP_SESSIONS:
		for (size_t i = 0; i < m->nsessions; i++)
			n += top_session_visible(m, &m->sessions[i]);
		return n;
	case TOP_DESTS:
		for (size_t i = 0; i < m->ndests; i++)
			n += top_dest_visible(m, &m->dests[i]);
		return n;
	case TOP_DENIALS:
		for (size_t i = 0; i < m->ndenials; i++)
			n += top_denial_visible(m, &m->denials[i]);
		return n;
	case TOP_SESSION:
		return m->ndetail;
	default:
		return 0;
	}
}

/* The visible session row number k, or NULL. */
static const struct top_session_row *nth_session(const struct top_model *m, size_t k)
{
	for (size_t i = 0; i < m->nsessions; i++)
		if (top_session_visible(m, &m->sessions[i]) && k-- == 0)
			return &m->sessions[i];
	return NULL;
}

static const struct top_denial_row *nth_denial(const struct top_model *m, size_t k)
{
	for (size_t i = 0; i < m->ndenials; i++)
		if (top_denial_visible(m, &m->denials[i]) && k-- == 0)
			return &m->denials[i];
	return NULL;
}

/* Move the selection by delta (clamped), keeping it on screen. */
static void move(struct top_model *m, long delta)
{
	size_t n = view_count(m);
	long s = (long)m->sel[m->view] + delta;

	if (n == 0) {
		m->sel[m->view] = 0;
		return;
	}
	if (s < 0)
		s = 0;
	if ((size_t)s >= n)
		s = (long)n - 1;
	m->sel[m->view] = (size_t)s;
}

/* The session the key acts on: the selected row, or the open one. */
static const char *target_id(const struct top_model *m)
{
	if (m->view == TOP_SESSION)
		return m->detail_id[0] ? m->detail_id : NULL;
	if (m->view == TOP_SESSIONS) {
		const struct top_session_row *r = nth_session(m, m->sel[TOP_SESSIONS]);

		return r ? r->id : NULL;
	}
	if (m->view == TOP_DENIALS) {
		const struct top_denial_row *r = nth_denial(m, m->sel[TOP_DENIALS]);

		return r ? r->id : NULL;
	}
	return NULL;
}

static bool target_running(const struct top_model *m, const char *id)
{
	for (size_t i = 0; i < m->nsessions; i++)
		if (strcmp(m->sessions[i].id, id) == 0)
			return m->sessions[i].state && (strcmp(m->sessions[i].state, "running") == 0 ||
							strcmp(m->sessions[i].state, "frozen") == 0);
	return false;
}

/* Is session id (of the rows loaded) one an alert froze? */
static bool target_frozen(const struct top_model *m, const char *id)
{
	for (size_t i = 0; i < m->nsessions; i++)
		if (strcmp(m->sessions[i].id, id) == 0)
			return m->sessions[i].state && strcmp(m->sessions[i].state, "frozen") == 0;
	return false;
}

static void show_view(struct top_model *m, enum top_view v)
{
	if (v != TOP_SESSION && v != TOP_HELP)
		m->back = v;
	m->view = v;
}

/* Typing the filter: printable characters, Backspace, Enter keeps it, Esc drops it. */
static enum top_do key_filter(struct top_model *m, int key)
{
	size_t n = strlen(m->edit);

	if (key == TOP_KEY_ENTER) {
		snprintf(m->filter, sizeof(m->filter), "%s", m->edit);
		m->mode = TOP_BROWSE;
		memset(m->sel, 0, sizeof(m->sel));
		memset(m->top, 0, sizeof(m->top));
		return TOP_DO_REFILTER;
	}
	if (key == TOP_KEY_ESC) {
		m->mode = TOP_BROWSE;
		return TOP_DO_REDRAW;
	}
	if (key == TOP_KEY_BACKSPACE) {
		if (n)
			m->edit[n - 1] = '\0';
		return TOP_DO_REDRAW;
	}
	if (key >= 0x20 && key < 0x7f && n + 1 < sizeof(m->edit)) {
		m->edit[n] = (char)key;
		m->edit[n + 1] = '\0';
		return TOP_DO_REDRAW;
	}
	return TOP_DO_NOTHING;
}

/* The confirmation line: y goes ahead, anything else cancels. */
static enum top_do key_confirm(struct top_model *m, int key)
{
	m->mode = TOP_BROWSE;
	if (key == 'y' || key == 'Y') {
		top_model_say(m, NULL);
		return m->confirm_action == TOP_DO_KILL ? TOP_DO_KILL :
		       m->confirm_action == TOP_DO_RESUME ? TOP_DO_RESUME : TOP_DO_STOP;
	}
	top_model_say(m, _("cancelled"));
	return TOP_DO_REDRAW;
}

enum top_do top_key(struct top_model *m, int key, int page)
{
	const char *id;

	if (m->mode == TOP_FILTER_EDIT)
		return key_filter(m, key);
	if (m->mode == TOP_CONFIRM)
		return key_confirm(m, key);
	top_model_say(m, NULL);
	if (page < 1)
		page = 1;
	switch (key) {
	case 'q':
		return TOP_DO_QUIT;
	case TOP_KEY_UP: case 'k': case TOP_KEY_WHEEL_UP:
		move(m, key == TOP_KEY_WHEEL_UP ? -3 : -1);
		return TOP_DO_REDRAW;
	case TOP_KEY_DOWN: case 'j': case TOP_KEY_WHEEL_DOWN:
		move(m, key == TOP_KEY_WHEEL_DOWN ? 3 : 1);
		return TOP_DO_REDRAW;
	case TOP_KEY_PGUP:
		move(m, -page);
		return TOP_DO_REDRAW;
	case TOP_KEY_PGDN:
		move(m, page);
		return TOP_DO_REDRAW;
	case TOP_KEY_HOME: case 'g':
		m->sel[m->view] = 0;
		return TOP_DO_REDRAW;
	case TOP_KEY_END: case 'G':
		move(m, (long)view_count(m));
		return TOP_DO_REDRAW;
	case TOP_KEY_TAB:
		show_view(m, m->view == TOP_SESSIONS ? TOP_DESTS : m->view == TOP_DESTS ?
			     TOP_DENIALS : TOP_SESSIONS);
		return TOP_DO_REDRAW;
	case '1':
		show_view(m, TOP_SESSIONS);
		return TOP_DO_REDRAW;
	case '2':
		if (!m->detail_id[0])
			return TOP_DO_NOTHING;
		show_view(m, TOP_SESSION);
		return TOP_DO_OPEN;
	case '3':
		show_view(m, TOP_DESTS);
		return TOP_DO_REDRAW;
	case '4':
		show_view(m, TOP_DENIALS);
		return TOP_DO_REDRAW;
	case '?':
		show_view(m, m->view == TOP_HELP ? m->back : TOP_HELP);
		return TOP_DO_REDRAW;
	case TOP_KEY_ESC: case TOP_KEY_BACKSPACE:
		if (m->view == TOP_SESSION || m->view == TOP_HELP) {
			m->view = m->back;
			return TOP_DO_REDRAW;
		}
		if (m->filter[0] || m->denied_only) {
			m->filter[0] = '\0';
			m->denied_only = false;
			return TOP_DO_REFILTER;
		}
		return TOP_DO_NOTHING;
	case TOP_KEY_ENTER:
		if (m->view != TOP_SESSIONS && m->view != TOP_DENIALS)
			return TOP_DO_NOTHING;
		id = target_id(m);
		if (!id)
			return TOP_DO_NOTHING;
		snprintf(m->detail_id, sizeof(m->detail_id), "%s", id);
		m->sel[TOP_SESSION] = 0;
		m->top[TOP_SESSION] = 0;
		show_view(m, TOP_SESSION);
		return TOP_DO_OPEN;
	case '/':
		m->mode = TOP_FILTER_EDIT;
		snprintf(m->edit, sizeof(m->edit), "%s", m->filter);
		return TOP_DO_REDRAW;
	case 't':
		if (m->view != TOP_DESTS)
			return TOP_DO_NOTHING;
		m->window = (m->window + 1) % TOP_NWINDOWS;
		m->sel[TOP_DESTS] = m->top[TOP_DESTS] = 0;
		return TOP_DO_REFILTER;
	case 'd':
		m->denied_only = !m->denied_only;
		memset(m->sel, 0, sizeof(m->sel));
		return TOP_DO_REFILTER;
	case 's': case 'K':
		id = target_id(m);
		if (!id || !target_running(m, id)) {
			top_model_say(m, id ? _("that session is not running") : _("no session selected"));
			return TOP_DO_REDRAW;
		}
		snprintf(m->confirm_id, sizeof(m->confirm_id), "%s", id);
		m->confirm_action = key == 'K' ? TOP_DO_KILL : TOP_DO_STOP;
		m->mode = TOP_CONFIRM;
		return TOP_DO_REDRAW;
	case 'r':
		/* Resume lets what an alert stopped go on: asked like a stop. */
		id = target_id(m);
		if (!id || !target_frozen(m, id)) {
			top_model_say(m, id ? "that session is not frozen" : "no session selected");
			return TOP_DO_REDRAW;
		}
		snprintf(m->confirm_id, sizeof(m->confirm_id), "%s", id);
		m->confirm_action = TOP_DO_RESUME;
		m->mode = TOP_CONFIRM;
		return TOP_DO_REDRAW;
	case 'a': case 'w':
		id = target_id(m);
		if (!id || !target_running(m, id)) {
			top_model_say(m, id ? _("that session is not running") : _("no session selected"));
			return TOP_DO_REDRAW;
		}
		snprintf(m->detail_id, sizeof(m->detail_id), "%s", id);
		return key == 'a' ? TOP_DO_ATTACH : TOP_DO_WATCH;
	default:
		return TOP_DO_NOTHING;
	}
}

enum top_do top_click(struct top_model *m, int y, int rows)
{
	size_t n = view_count(m);
	long k;

	if (m->view != TOP_SESSIONS && m->view != TOP_DESTS && m->view != TOP_DENIALS)
		return TOP_DO_NOTHING;
	if (y < TOP_LIST_FIRST || y >= rows - 1)
		return TOP_DO_NOTHING;
	k = (long)m->top[m->view] + (y - TOP_LIST_FIRST);
	if (k < 0 || (size_t)k >= n)
		return TOP_DO_NOTHING;
	m->sel[m->view] = (size_t)k;
	return TOP_DO_REDRAW;
}
