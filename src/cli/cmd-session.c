/*
 * cli/cmd-session.c — the commands that look at or act on sessions:
 * `boxy ps`, `show`, `watch`, `attach`, `stop`, `resume` and `prune`.
 *
 * ps, show and prune read the session store directly (read-only for ps and
 * show), so they work even when no daemon is running; watch, attach, stop
 * and resume talk to the daemon, which owns the running sessions.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "client/tty.h"
#include "cli/cmd.h"
#include "proto/msg.h"
#include "spec/values.h"
#include "daemon/session-log.h"
#include "ui/ps.h"
#include "ui/show.h"
#include "store/store.h"
#include "store/store-show.h"
#include "common/util.h"
#include "ui/watch.h"
#include "proto/wire.h"

/* An id prefix: 1..16 lower-case hex digits. */
static bool valid_prefix(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 16 && strspn(s, "0123456789abcdef") == n;
}

/* The store, read-only; NULL with *err, and *none when nothing was ever recorded. */
static struct store *open_store(bool *none, char **err)
{
	char *path = store_default_path();
	struct store *st = NULL;

	if (none)
		*none = false;
	if (!path) {
		set_err(err, _("cannot find the session store (set HOME or XDG_STATE_HOME)"));
		return NULL;
	}
	if (access(path, F_OK) != 0) {
		set_err(err, _("no sessions recorded yet (%s does not exist)"), path);
		if (none)
			*none = true;
		free(path);
		return NULL;
	}
	store_open(path, &st, err);
	free(path);
	return st;
}

static int connect_daemon(const struct cmd_entry *c)
{
	struct daemon_info info;
	char *err = NULL;
	int fd = client_connect(false, false, &info, &err);

	daemon_info_free(&info);
	if (fd < 0) {
		fprintf(stderr, "boxy %s: %s\n", c->name, err);
		free(err);
	}
	return fd;
}

/* Read one reply; print a MSG_ERROR's words. Returns the message type, or -1. */
static int expect_reply(const struct cmd_entry *c, int fd, struct msg *m, int *code)
{
	char *err = NULL;

	if (msg_recv(fd, m, &err) < 0) {
		fprintf(stderr, _("boxy %s: the daemon closed the connection%s%s\n"), c->name,
			err ? ": " : "", err ? err : "");
		free(err);
		*code = EXIT_BOXY_FAILED;
		return -1;
	}
	if (m->type == MSG_ERROR) {
		struct rbuf r;
		char *words;

		rbuf_init(&r, m->payload, m->len);
		*code = wire_get_u16(&r);
		words = wire_get_str(&r, 4096);
		if (words) {
			char *clean = watch_sanitize(words);

			fprintf(stderr, "boxy %s: %s\n", c->name, clean);
			free(clean);
		}
		free(words);
	}
	return m->type;
}

static void send_str(int fd, uint16_t type, const char *s, int extra_u8)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_str(&w, s);
	if (extra_u8 >= 0)
		wire_put_u8(&w, (uint8_t)extra_u8);
	msg_send(fd, type, w.p, w.len, NULL, 0);
	wbuf_free(&w);
}

/* ---- ps --------------------------------------------------------------------- */

static int run_ps(int argc, char **argv)
{
	bool all = false, json = false, none;
	struct store_sessions ss;
	struct store *st;
	char *err = NULL;
	int opt;
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+a", longopts, NULL)) != -1) {
		if (opt == 'a')
			all = true;
		else if (opt == 'j')
			json = true;
		else
			return cmd_usage_error(&cmd_ps_entry, _("unknown option '%s'"), argv[optind - 1]);
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_ps_entry, _("unexpected argument '%s'"), argv[optind]);
	st = open_store(&none, &err);
	if (!st) {
		if (!json && none) {
			/* Which store was read: runs recorded in another one are not "nothing". */
			if (all)
				fprintf(stderr, "boxy ps: %s\n", err);
			free(err);
			return 0;
		}
		fprintf(stderr, "boxy ps: %s\n", err);
		free(err);
		return 1;
	}
	if (store_sessions_find(st, NULL, !all, &ss, &err) < 0) {
		fprintf(stderr, "boxy ps: %s\n", err);
		free(err);
		store_close(st);
		return 1;
	}
	ps_print(stdout, &ss, json);
	if (!json && all && ss.n == 0) {
		char *path = store_default_path();

		fprintf(stderr, _("boxy ps: no sessions recorded in %s\n"), path ? path : "?");
		free(path);
	}
	store_sessions_free(&ss);
	store_close(st);
	return 0;
}

/* ---- show ------------------------------------------------------------------- */

static int run_show(int argc, char **argv)
{
	bool json = false, events = false;
	const char *id = NULL;
	struct store_sessions ss = { 0 };
	struct store *st;
	char *err = NULL, *out = NULL;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--events") == 0)
			events = true;
		else if (!id && argv[i][0] != '-')
			id = argv[i];
		else
			return cmd_usage_error(&cmd_show_entry, _("unexpected argument '%s'"), argv[i]);
	}
	if (!id)
		return cmd_usage_error(&cmd_show_entry, _("missing session id"));
	if (!valid_prefix(id))
		return cmd_usage_error(&cmd_show_entry, _("'%s' is not a session id (hex digits)"), id);
	st = open_store(NULL, &err);
	/* The record as JSON first: it also rejects an unknown or ambiguous prefix. */
	if (!st || store_show_record_json(st, id, &out, &err) < 0 ||
	    store_sessions_find(st, id, false, &ss, &err) < 0 || ss.n == 0) {
		fprintf(stderr, "boxy show: %s\n", err ? err : _("no such session"));
		free(err);
		free(out);
		store_sessions_free(&ss);
		store_close(st);
		return 1;
	}
	if (json) {
		puts(out);
		rc = 0;
	} else if (events) {
		rc = show_print_events(stdout, st, &ss.v[0], &err);
	} else {
		rc = show_print(stdout, st, &ss.v[0], color_wanted(STDOUT_FILENO), &err);
	}
	if (rc < 0) {
		fprintf(stderr, "boxy show: %s\n", err);
		free(err);
		rc = 1;
	}
	free(out);
	store_sessions_free(&ss);
	store_close(st);
	return rc;
}

/* ---- prune ------------------------------------------------------------------ */

/* prune --dry-run: the ids a prune would delete, one a line, then the count; closes st. */
static int prune_print_preview(struct store *st, int64_t cutoff_ms)
{
	char **ids, *err = NULL;
	size_t n;

	if (store_prune_preview(st, cutoff_ms, &ids, &n, &err) < 0) {
		fprintf(stderr, "boxy prune: %s\n", err);
		free(err);
		store_close(st);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", ids[i]);
		free(ids[i]);
	}
	free(ids);
	store_close(st);
	/* The summary on stderr: stdout stays a list of ids a script can read. */
	fprintf(stderr, ngettext("%zu session would be pruned\n", "%zu sessions would be pruned\n", n),
		n);
	return 0;
}

static int run_prune(int argc, char **argv)
{
	uint64_t older = 30ULL * 24 * 3600 * 1000;
	bool dry_run = false;
	struct store *st;
	char *err = NULL;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--older-than") == 0 && i + 1 < argc) {
			if (parse_duration(argv[++i], &older, &err) < 0) {
				int rc = cmd_usage_error(&cmd_prune_entry, _("--older-than: %s"), err);

				free(err);
				return rc;
			}
		} else if (strcmp(argv[i], "--dry-run") == 0 || strcmp(argv[i], "-n") == 0) {
			dry_run = true;
		} else {
			return cmd_usage_error(&cmd_prune_entry, _("unexpected argument '%s'"), argv[i]);
		}
	}
	st = open_store(NULL, &err);
	if (st && dry_run)
		return prune_print_preview(st, (int64_t)(now_real_ms() - older));
	if (!st || store_prune(st, (int64_t)(now_real_ms() - older), &n, &err) < 0) {
		fprintf(stderr, "boxy prune: %s\n", err);
		free(err);
		store_close(st);
		return 1;
	}
	session_logs_prune(st);
	store_close(st);
	printf(ngettext("%d session pruned\n", "%d sessions pruned\n", (unsigned long)n), n);
	return 0;
}

/* ---- stop, attach ------------------------------------------------------------- */

static int run_stop(int argc, char **argv)
{
	bool now = false;
	const char *id = NULL;
	struct msg m;
	int fd, code = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-k") == 0)
			now = true;
		else if (!id)
			id = argv[i];
		else
			return cmd_usage_error(&cmd_stop_entry, _("unexpected argument '%s'"), argv[i]);
	}
	if (!id)
		return cmd_usage_error(&cmd_stop_entry, _("missing session id"));
	if (!valid_prefix(id))
		return cmd_usage_error(&cmd_stop_entry, _("'%s' is not a session id (hex digits)"), id);
	fd = connect_daemon(&cmd_stop_entry);
	if (fd < 0)
		return 1;
	send_str(fd, MSG_STOP, id, now);
	if (expect_reply(&cmd_stop_entry, fd, &m, &code) == MSG_OK) {
		struct rbuf r;
		char *words;

		rbuf_init(&r, m.payload, m.len);
		words = wire_get_str(&r, 4096);
		if (words) {
			char *clean = watch_sanitize(words);

			printf("%s\n", clean);
			free(clean);
		}
		free(words);
		code = 0;
	} else if (code == 0) {
		code = 1;
	}
	msg_free(&m);
	close(fd);
	return code;
}

/* boxy resume [--log] ID: a session an alert froze goes on (doc/react.md). */
static int run_resume(int argc, char **argv)
{
	bool log_only = false;
	const char *id = NULL;
	char *words = NULL, *err = NULL;
	int code;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--log") == 0)
			log_only = true;
		else if (!id && argv[i][0] != '-')
			id = argv[i];
		else
			return cmd_usage_error(&cmd_resume_entry, _("unexpected argument '%s'"), argv[i]);
	}
	if (!id)
		return cmd_usage_error(&cmd_resume_entry, _("missing session id"));
	if (!valid_prefix(id))
		return cmd_usage_error(&cmd_resume_entry, _("'%s' is not a session id (hex digits)"),
				       id);
	if (client_request_resume(id, log_only, &words, &code, &err) < 0) {
		fprintf(stderr, "boxy resume: %s\n", err ? err : "failed");
		free(err);
		return code ? code : 1;
	}
	if (words) {
		char *clean = watch_sanitize(words);

		printf("%s\n", clean);
		free(clean);
	}
	free(words);
	return 0;
}

static int run_attach(int argc, char **argv)
{
	struct msg m;
	int fd, code = 0;
	char id[17] = "";
	bool raw = false;

	if (argc != 2)
		return cmd_usage_error(&cmd_attach_entry, argc < 2 ? _("missing session id")
				       : _("unexpected argument '%s'"), argv[argc - 1]);
	if (!valid_prefix(argv[1]))
		return cmd_usage_error(&cmd_attach_entry, _("'%s' is not a session id (hex digits)"),
				       argv[1]);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, _("boxy attach: needs a terminal (stdin and stdout)\n"));
		return 1;
	}
	fd = connect_daemon(&cmd_attach_entry);
	if (fd < 0)
		return 1;
	send_str(fd, MSG_ATTACH, argv[1], -1);
	if (expect_reply(&cmd_attach_entry, fd, &m, &code) != MSG_STARTED) {
		msg_free(&m);
		close(fd);
		return code ? code : 1;
	}
	{
		struct rbuf r;
		char *s;

		rbuf_init(&r, m.payload, m.len);
		s = wire_get_str(&r, 16);
		if (s)
			snprintf(id, sizeof(id), "%s", s);
		free(s);
		/* the session's --raw-terminal choice (audited when it started) */
		raw = wire_get_u8(&r) == 1 && wire_done(&r);
	}
	msg_free(&m);
	code = client_relay_tty(fd, id, false, client_terminal_fds(), raw);
	close(fd);
	return code;
}

/* ---- watch -------------------------------------------------------------------- */

static volatile sig_atomic_t watch_interrupted, watch_resized;

static void watch_sig(int sig)
{
	if (sig == SIGWINCH)
		watch_resized = 1;
	else
		watch_interrupted = 1;
}

/* A finished (or unknown to the daemon) session: print its stored summary. */
static int watch_finished(const char *id)
{
	char *args[] = { "show", (char *)id, NULL };

	return run_show(2, args);
}

static int run_watch(int argc, char **argv)
{
	const char *id = argc > 1 ? argv[1] : NULL;
	bool screen = isatty(STDOUT_FILENO);
	struct watch_model model;
	struct sigaction sa;
	struct msg m;
	int fd, code = 0, type;

	if (argc > 2)
		return cmd_usage_error(&cmd_watch_entry, _("unexpected argument '%s'"), argv[2]);
	if (id && !valid_prefix(id))
		return cmd_usage_error(&cmd_watch_entry, _("'%s' is not a session id (hex digits)"), id);
	fd = connect_daemon(&cmd_watch_entry);
	if (fd < 0)
		return id ? watch_finished(id) : 1;
	send_str(fd, MSG_WATCH, id, -1);
	if (msg_recv(fd, &m, NULL) < 0) {
		close(fd);
		return EXIT_BOXY_FAILED;
	}
	if (m.type == MSG_ERROR) {
		struct rbuf r;
		char *words;

		rbuf_init(&r, m.payload, m.len);
		code = wire_get_u16(&r);
		words = wire_get_str(&r, 4096);
		msg_free(&m);
		close(fd);
		if (code == 3 && id) {
			free(words);
			return watch_finished(id);
		}
		{
			char *clean = watch_sanitize(words ? words : _("refused"));

			fprintf(stderr, "boxy watch: %s\n", clean);
			free(clean);
		}
		free(words);
		return 1;
	}
	msg_free(&m);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_sig;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	watch_model_init(&model);
	if (screen)
		watch_screen_begin(stdout);     /* alternate screen, no cursor */
	while (!watch_interrupted) {
		char *err = NULL;

		if (msg_recv(fd, &m, &err) < 0) {
			free(err);
			if (watch_interrupted)
				break;
			code = 1;
			break;
		}
		type = m.type;
		if (type == MSG_SNAPSHOT) {
			watch_model_snapshot(&model, m.payload, m.len);
		} else if (type == MSG_LOSS) {
			struct rbuf r;

			rbuf_init(&r, m.payload, m.len);
			model.lost = wire_get_u64(&r);
			if (!screen) {
				printf(ngettext("# this watcher fell behind and lost %llu event\n",
						"# this watcher fell behind and lost %llu events\n",
						model.lost), (unsigned long long)model.lost);
				fflush(stdout);
			}
		} else if (type == MSG_EVENT) {
			struct event_copy ec;

			if (watch_event_decode(m.payload, m.len, &ec) == 0) {
				if (screen) {
					watch_model_event(&model, &ec.ev);
				} else {
					char *line = watch_format_event(&ec.ev);

					if (printf("%s\n", line) < 0 || fflush(stdout) != 0)
						watch_interrupted = 1;      /* the reader went away */
					free(line);
				}
				event_copy_free(&ec);
			}
		}
		msg_free(&m);
		if (screen) {
			struct winsize ws = { .ws_row = 24, .ws_col = 80 };

			ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
			watch_render(&model, stdout, ws.ws_row, ws.ws_col, color_wanted(STDOUT_FILENO));
		}
		if (type == MSG_EXIT)
			break;
	}
	if (screen)
		watch_screen_end(stdout);
	close(fd);
	if (model.id && !watch_interrupted)
		code = watch_finished(model.id);
	watch_model_free(&model);
	return code;
}

bool cmd_session_id_ok(const char *s)
{
	return valid_prefix(s);
}

struct store *cmd_store_open(char **err)
{
	return open_store(NULL, err);
}

const struct cmd_entry cmd_ps_entry = {
	"ps", N_("list running sessions (-a: every session on record)"),
	N_("Usage: boxy ps [-a] [--json]\n"
	   "List the running sessions; with -a, every session in the store.\n"),
	run_ps,
};
const struct cmd_entry cmd_show_entry = {
	"show", N_("one session in full"),
	N_("Usage: boxy show ID [--events | --json]\n"
	   "One session on about one screen: command, workdir, profile, network policy,\n"
	   "limits and how each was enforced, exit, duration, the busiest destinations,\n"
	   "the refusals grouped with the flag that would allow them, git findings.\n"
	   "--events prints every recorded row, time-ordered; --json everything.\n"
	   "ID is any unambiguous prefix.\n"),
	run_show,
};
const struct cmd_entry cmd_watch_entry = {
	"watch", N_("follow a session's events as they happen"),
	N_("Usage: boxy watch [ID]\n"
	   "Follow one session as it happens; with no id, the only running one.\n"
	   "On a terminal: a live screen, refusals in red. On a pipe: one line per\n"
	   "event, never a repaint. A finished session prints its summary.\n"
	   "Ctrl-C stops watching; the session keeps running. Nothing is sent to it.\n"),
	run_watch,
};
const struct cmd_entry cmd_attach_entry = {
	"attach", N_("take over a session's terminal (Ctrl-] leaves it running)"),
	N_("Usage: boxy attach ID\n"
	   "Take over the terminal of a running session. Ctrl-] leaves it running.\n"),
	run_attach,
};
const struct cmd_entry cmd_stop_entry = {
	"stop", N_("SIGTERM a session, then SIGKILL (-k: SIGKILL now)"),
	N_("Usage: boxy stop [-k] ID\n"
	   "Send SIGTERM to the session's command, then SIGKILL to everything in the\n"
	   "sandbox after 10 seconds. -k kills everything now, and so does stopping a\n"
	   "frozen session (its stopped processes would have to run to take a SIGTERM).\n"),
	run_stop,
};
const struct cmd_entry cmd_resume_entry = {
	"resume", N_("let a session an alert froze go on (--log: log its later alerts only)"),
	N_("Usage: boxy resume [--log] ID\n"
	   "Continue every process of a session an alert froze (--on-alert freeze) and let\n"
	   "its network go: the query or connection the alert stopped goes out now.\n"
	   "A later alert freezes it again; --log makes its later alerts logged only.\n"
	   "boxy stop ID ends a frozen session instead (SIGKILL). ID is any unambiguous prefix.\n"),
	run_resume,
};
const struct cmd_entry cmd_prune_entry = {
	"prune", N_("delete sessions older than a duration from the store"),
	N_("Usage: boxy prune [--older-than DURATION] [-n|--dry-run]\n"
	   "Delete ended sessions older than DURATION (default 30d) and their records.\n"
	   "Running sessions are never pruned.\n"
	   "  -n, --dry-run  print the ids that would be pruned (one a line), delete nothing\n"),
	run_prune,
};
