/*
 * cli/cmd-top.c — `boxy top`: the dashboard's data. History comes from the
 * store (its own read-only connection, store/store-top.c); the open
 * session, while it runs, from the daemon's stream (a watch, the same one
 * `boxy watch` reads, so a slow top loses events and is told, and never
 * slows the session); acting on a session goes through the daemon as
 * `boxy stop` and `boxy attach` do. ui/top.c draws.
 *
 * Without a daemon the history is shown and the header says live updates
 * are off; the store is re-read every second, so a daemon that starts, or
 * a run that begins, shows up on its own. On a non-terminal stdout, one
 * snapshot of the sessions view as text (or --json), like `top -b -n 1`.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client.h"
#include "client/tty.h"
#include "cli/cmd.h"
#include "common/json.h"
#include "proto/msg.h"
#include "proto/daemon-msg.h"
#include "proto/refusals.h"
#include "store/store.h"
#include "store/store-top.h"
#include "ui/ps.h"
#include "ui/top-live.h"
#include "ui/top.h"
#include "common/util.h"
#include "ui/watch.h"
#include "proto/wire.h"

#define TOP_SESSIONS_AHEAD 200      /* rows loaded past the selection; the list pages within them */

struct top_data {
	char *store_path;
	/* what the lists were last loaded for: reloaded when it or the store changes */
	char loaded_filter[128];
	bool loaded_denied_only, loaded;
	int loaded_window;
	enum top_view loaded_view;
	struct store_top *st;
	char *store_err;
	/* the open session's stream */
	int live;
	char live_id[17];
	struct watch_model wm;
	const char *outcome;
	char outcome_buf[256];
};

/* ---- rows from the store into the model --------------------------------------------- */

static void add_session(void *ctx, const struct store_top_session *r)
{
	struct top_model *m = ctx;
	struct top_session_row *row = xappend(&m->sessions, &m->nsessions, sizeof(*m->sessions));

	snprintf(row->id, sizeof(row->id), "%s", r->id);
	row->state = xstrdup(r->state);
	row->started_ms = r->started_ms;
	row->ended_ms = r->ended_ms;
	row->exit_code = r->exit_code;
	row->conns = r->conns;
	row->denied = r->denied;
	row->up = r->up;
	row->down = r->down;
	row->profile = xstrdup(r->profile);
	row->net = xstrdup(r->net);
	row->cmd = ps_argv_line(r->argv_json);
	row->workdir = xstrdup(r->cwd);
	row->frozen_reason = strcmp(r->state, "frozen") == 0 ? xstrdup(r->frozen_reason) : NULL;
}

static void add_dest(void *ctx, const struct store_top_dest *r)
{
	struct top_model *m = ctx;
	struct top_dest_row *row = xappend(&m->dests, &m->ndests, sizeof(*m->dests));

	row->name = xstrdup(r->name);
	row->sessions = r->sessions;
	row->conns = r->conns;
	row->denied = r->denied;
	row->up = r->up;
	row->down = r->down;
	row->first_ms = r->first_ms;
	row->last_ms = r->last_ms;
}

static void add_denial(void *ctx, const struct store_top_denial *r)
{
	struct top_model *m = ctx;
	struct top_denial_row *row = xappend(&m->denials, &m->ndenials, sizeof(*m->denials));
	struct refusal_group g = { .subject = (char *)r->subject, .layer = (char *)r->layer,
				   .reason = (char *)r->reason, .count = r->count };

	row->t_ms = r->t_ms;
	snprintf(row->id, sizeof(row->id), "%s", r->session_id);
	row->cmd = ps_argv_line(r->argv_json);
	row->layer = xstrdup(r->layer);
	row->subject = r->count > 1 ? xasprintf("%s (×%llu)", r->subject,
						(unsigned long long)r->count) : xstrdup(r->subject);
	row->reason = xstrdup(r->reason);
	row->fix = refusal_fix(&g);
}

/* The daemon's state for the header; NULL when none answers. */
static char *daemon_state(void)
{
	struct daemon_info info = { 0 };
	char *err = NULL, *out;
	int fd = client_connect(false, false, &info, &err);

	if (fd < 0) {
		/* A daemon of another build answered (its refusal names its build): named, not fought with. */
		out = err && info.build && strcmp(info.build, build_id()) != 0 ?
		      xasprintf(_("of another build: %s"), err) : NULL;
		free(err);
		daemon_info_free(&info);
		return out;
	}
	close(fd);
	out = xasprintf(ngettext("running (build %.12s, %u session)",
				 "running (build %.12s, %u sessions)", info.sessions),
			info.build ? info.build : "?", info.sessions);
	daemon_info_free(&info);
	return out;
}

static void data_refresh(void *ctx, struct top_model *m)
{
	struct top_data *d = ctx;
	char *err = NULL;

	free(m->daemon);
	m->daemon = daemon_state();
	m->now_ms = (int64_t)now_real_ms();
	if (!d->st) {
		if (access(d->store_path, F_OK) != 0)
			return;                 /* nothing recorded yet: an empty screen says so */
		free(d->store_err);
		d->store_err = NULL;
		if (store_top_open(d->store_path, &d->st, &d->store_err) < 0) {
			top_model_say(m, d->store_err);
			return;
		}
	}
	/* Idle: nothing written, nothing asked for anew — nothing to read. */
	if (!store_top_changed(d->st) && d->loaded && d->loaded_view == m->view &&
	    m->sel[TOP_SESSIONS] + TOP_SESSIONS_AHEAD / 2 < m->nsessions + (m->nsessions < 200) &&
	    d->loaded_denied_only == m->denied_only && d->loaded_window == m->window &&
	    strcmp(d->loaded_filter, m->filter) == 0)
		return;
	d->loaded = true;
	d->loaded_view = m->view;
	d->loaded_denied_only = m->denied_only;
	d->loaded_window = m->window;
	snprintf(d->loaded_filter, sizeof(d->loaded_filter), "%s", m->filter);
	top_model_clear_sessions(m);
	top_model_clear_dests(m);
	top_model_clear_denials(m);
	m->running = 0;
	/* As many rows as the selection can reach soon: more load as it moves down. */
	if (store_top_sessions(d->st, m->filter, m->denied_only,
			       m->sel[TOP_SESSIONS] + TOP_SESSIONS_AHEAD, add_session, m, &err) < 0 ||
	    store_top_totals(d->st, m->now_ms - 3600 * 1000, &(uint64_t){ 0 }, &m->denied_hour,
			     &err) < 0 ||
	    (m->view == TOP_DESTS &&
	     store_top_dests(d->st, TOP_WINDOW_MS[m->window] ? m->now_ms - TOP_WINDOW_MS[m->window] : 0,
			     1000, add_dest, m, &err) < 0) ||
	    (m->view == TOP_DENIALS && store_top_denials(d->st, 1000, add_denial, m, &err) < 0)) {
		top_model_say(m, err);
		free(err);
	}
	m->frozen = 0;
	for (size_t i = 0; i < m->nsessions; i++) {
		bool frozen = strcmp(m->sessions[i].state, "frozen") == 0;

		m->running += frozen || strcmp(m->sessions[i].state, "running") == 0;
		m->frozen += frozen;
	}
}

/* ---- the open session ------------------------------------------------------------------- */

static void live_close(struct top_data *d)
{
	if (d->live >= 0)
		close(d->live);
	d->live = -1;
	d->live_id[0] = '\0';
	watch_model_free(&d->wm);
}

/* The stored record as lines. */
static void record_line(void *ctx, const char *text, bool deny)
{
	top_model_detail_add(ctx, text, deny ? TOP_A_RED : 0);
}

static void data_open(void *ctx, struct top_model *m)
{
	struct top_data *d = ctx;
	char *err = NULL;
	bool running = false;

	for (size_t i = 0; i < m->nsessions; i++)
		if (strcmp(m->sessions[i].id, m->detail_id) == 0)
			running = strcmp(m->sessions[i].state, "running") == 0 ||
				  strcmp(m->sessions[i].state, "frozen") == 0;
	if (running && strcmp(d->live_id, m->detail_id) != 0) {
		struct daemon_info info = { 0 };
		int fd;

		live_close(d);
		fd = client_connect(false, false, &info, &err);
		daemon_info_free(&info);
		free(err);
		err = NULL;
		if (fd >= 0) {
			struct wbuf w;
			struct msg msg = { 0 };

			wbuf_init(&w);
			dmsg_encode_target(&w, m->detail_id);
			msg_send(fd, MSG_WATCH, w.p, w.len, NULL, 0);
			wbuf_free(&w);
			if (msg_recv(fd, &msg, NULL) == 1 && msg.type == MSG_STARTED) {
				d->live = fd;
				snprintf(d->live_id, sizeof(d->live_id), "%s", m->detail_id);
				watch_model_init(&d->wm);
			} else {
				close(fd);
			}
			if (msg.type)
				msg_free(&msg);
		}
	}
	if (d->live >= 0 && strcmp(d->live_id, m->detail_id) == 0) {
		top_live_lines(m, &d->wm, d->live_id);
		return;
	}
	top_model_clear_detail(m);
	if (!d->st || store_top_record(d->st, m->detail_id, record_line, m, &err) < 0) {
		top_model_detail_add(m, err ? err : _("the store cannot be read"), TOP_A_RED);
		free(err);
	}
}

static int data_live_fd(void *ctx)
{
	return ((struct top_data *)ctx)->live;
}

static void data_live(void *ctx, struct top_model *m)
{
	struct top_data *d = ctx;
	struct msg msg = { 0 };
	bool ended = false;

	if (msg_recv(d->live, &msg, NULL) != 1) {
		ended = true;
	} else {
		if (msg.type == MSG_SNAPSHOT) {
			watch_model_snapshot(&d->wm, msg.payload, msg.len);
		} else if (msg.type == MSG_EVENT) {
			struct event_copy ec;

			if (watch_event_decode(msg.payload, msg.len, &ec) == 0) {
				watch_model_event(&d->wm, &ec.ev);
				event_copy_free(&ec);
			}
		} else if (msg.type == MSG_LOSS) {
			d->wm.lost = dmsg_decode_loss(msg.payload, msg.len);
			m->lost = d->wm.lost;
		} else if (msg.type == MSG_EXIT) {
			ended = true;
		}
		msg_free(&msg);
	}
	if (ended) {
		/* Finished: its record from the store from now on. */
		live_close(d);
		if (m->view == TOP_SESSION)
			data_open(d, m);
		return;
	}
	if (m->view == TOP_SESSION && strcmp(d->live_id, m->detail_id) == 0)
		top_live_lines(m, &d->wm, d->live_id);
}

static const char *data_act(void *ctx, struct top_model *m, enum top_do what, const char *id)
{
	struct top_data *d = ctx;
	char *err = NULL;

	(void)m;
	if (what == TOP_DO_RESUME) {
		char *words = NULL;
		int code;

		if (client_request_resume(id, false, &words, &code, &err) < 0)
			snprintf(d->outcome_buf, sizeof(d->outcome_buf), "%.8s: %s", id,
				 err ? err : _("the daemon refused"));
		else
			snprintf(d->outcome_buf, sizeof(d->outcome_buf), "%.200s", words ? words : "");
		free(words);
		free(err);
		/* The message line is drawn through the sanitizer like every cell. */
		return d->outcome_buf;
	}
	if (client_request_stop(id, what == TOP_DO_KILL, &err) < 0) {
		snprintf(d->outcome_buf, sizeof(d->outcome_buf), "%.8s: %s", id,
			 err ? err : _("the daemon refused"));
		free(err);
	} else {
		snprintf(d->outcome_buf, sizeof(d->outcome_buf), "%.8s: %s sent", id,
			 what == TOP_DO_KILL ? "SIGKILL" : "stop");
	}
	return d->outcome_buf;
}

static void data_leave(void *ctx, enum top_do what, const char *id)
{
	char *args[] = { what == TOP_DO_ATTACH ? "attach" : "watch", (char *)id, NULL };

	(void)ctx;
	if (what == TOP_DO_ATTACH)
		cmd_attach_entry.run(2, args);
	else
		cmd_watch_entry.run(2, args);
}

/* ---- not a terminal: one snapshot ----------------------------------------------------- */

static int top_snapshot(struct top_data *d, struct top_model *m, bool json)
{
	if (json) {
		struct jbuf b;
		char *out;

		jbuf_init(&b);
		json_obj_begin(&b);
		json_kv_str(&b, "daemon", m->daemon);
		json_kv_uint(&b, "running", m->running);
		json_kv_uint(&b, "frozen", m->frozen);
		json_kv_uint(&b, "denied_last_hour", m->denied_hour);
		json_key(&b, "sessions");
		json_arr_begin(&b);
		for (size_t i = 0; i < m->nsessions; i++) {
			const struct top_session_row *r = &m->sessions[i];

			json_obj_begin(&b);
			json_kv_str(&b, "id", r->id);
			json_kv_str(&b, "state", r->state);
			json_kv_int(&b, "started_ms", r->started_ms);
			if (r->ended_ms) {
				json_kv_int(&b, "ended_ms", r->ended_ms);
				json_kv_int(&b, "exit_code", r->exit_code);
			}
			json_kv_uint(&b, "conns", r->conns);
			json_kv_uint(&b, "denied", r->denied);
			json_kv_uint(&b, "up", r->up);
			json_kv_uint(&b, "down", r->down);
			json_kv_str(&b, "profile", r->profile);
			json_kv_str(&b, "net", r->net);
			json_kv_str(&b, "command", r->cmd);
			json_kv_str(&b, "workdir", r->workdir);
			if (r->frozen_reason)
				json_kv_str(&b, "frozen_reason", r->frozen_reason);
			json_obj_end(&b);
		}
		json_arr_end(&b);
		json_obj_end(&b);
		out = jbuf_steal(&b);
		puts(out);
		free(out);
	} else {
		struct top_screen s;
		const char *cols = getenv("COLUMNS");
		int w = cols && atoi(cols) >= 40 ? atoi(cols) : 160;

		/* Every row, no footer: the list as text. */
		top_screen_init(&s, (int)m->nsessions + TOP_LIST_FIRST + 2, w);
		top_render(m, &s);
		for (int y = 0; y < s.rows - 1; y++) {
			char *line = top_screen_line(&s, y);

			puts(line);
			free(line);
		}
		top_screen_free(&s);
	}
	(void)d;
	return 0;
}

static int run_top(int argc, char **argv)
{
	bool json = false;
	struct top_data d = { .live = -1 };
	struct top_model m;
	struct top_source src = {
		.ctx = &d, .reload = data_refresh, .open = data_open, .live_fd = data_live_fd,
		.live = data_live, .act = data_act, .leave = data_leave,
	};
	int code;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else
			return cmd_usage_error(&cmd_top_entry, _("unexpected argument '%s'"), argv[i]);
	}
	d.store_path = store_default_path();
	if (!d.store_path) {
		fprintf(stderr, _("boxy top: cannot find the session store (set HOME or XDG_STATE_HOME)\n"));
		return EXIT_BOXY_FAILED;
	}
	top_model_init(&m);
	if (json || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		data_refresh(&d, &m);
		if (d.store_err && !m.nsessions) {
			fprintf(stderr, "boxy top: %s\n", d.store_err);
			code = 1;
		} else {
			code = top_snapshot(&d, &m, json);
		}
	} else {
		code = top_run(&src, &m, color_wanted(STDOUT_FILENO));
		if (d.store_err)
			fprintf(stderr, "boxy top: %s\n", d.store_err);
	}
	live_close(&d);
	store_top_close(d.st);
	free(d.store_path);
	free(d.store_err);
	top_model_free(&m);
	return code;
}

const struct cmd_entry cmd_top_entry = {
	"top", N_("full-screen dashboard of sessions and connections"),
	N_("Usage: boxy top [--json]\n"
	   "The sessions boxy ran and is running, where they went and what was refused,\n"
	   "live. Views: 1 sessions, 2 the open session, 3 destinations, 4 denials.\n"
	   "Keys: arrows/j k, PgUp PgDn, Home End, Enter open, Esc back, Tab or 1-4\n"
	   "views, / filter, d denied only, s stop, K SIGKILL, r resume a frozen one,\n"
	   "a attach, w watch, ? help, q quit. On a pipe: one snapshot of the sessions\n"
	   "view as text (--json: JSON).\n"),
	run_top,
};
