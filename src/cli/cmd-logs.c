/*
 * cli/cmd-logs.c — the commands scripts use around a detached run:
 * `boxy logs ID [-f]` (its terminal output, as the daemon kept it) and
 * `boxy wait ID` (block until it ends; exit with its status).
 *
 *   id=$(boxy run -d --profile node -- npm ci)
 *   boxy wait "$id"; status=$?
 *   boxy logs "$id" > npm.log
 *
 * wait asks the daemon first (it knows a run that has not reached the store
 * yet) and the store second (a run that has ended, or whose daemon is gone).
 * logs reads the log file directly: it works without a daemon, and -f
 * follows it until the store says the session ended.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "cli/cmd.h"
#include "proto/msg.h"
#include "proto/daemon-msg.h"
#include "daemon/session-log.h"
#include "store/store.h"
#include "client/termfilter.h"
#include "common/util.h"
#include "ui/watch.h"
#include "proto/wire.h"

/* The one stored session id starts with prefix: its full id and state. */
static int find_session(const struct cmd_entry *c, const char *prefix, char id[17],
			char **state, int *exit_code)
{
	struct store_sessions ss = { 0 };
	struct store *st;
	char *err = NULL;
	int rc = 0;

	st = cmd_store_open(&err);
	if (!st || store_sessions_find(st, prefix, false, &ss, &err) < 0) {
		fprintf(stderr, "boxy %s: %s\n", c->name, err ? err : _("the store cannot be read"));
		free(err);
		store_close(st);
		return -1;
	}
	if (ss.n == 0) {
		rc = 1;
	} else if (ss.n > 1) {
		fprintf(stderr, _("boxy %s: '%s' matches %zu sessions; give more of the id\n"),
			c->name, prefix, ss.n);
		rc = -1;
	} else {
		snprintf(id, 17, "%s", ss.v[0].id);
		if (state)
			*state = xstrdup(ss.v[0].state);
		if (exit_code)
			*exit_code = ss.v[0].exit_code;
	}
	store_sessions_free(&ss);
	store_close(st);
	return rc;
}

/* ---- logs ------------------------------------------------------------------------ */

/* Is the session still running, by the store? */
static bool still_running(const char *id)
{
	char full[17], *state = NULL;
	bool running;

	if (find_session(&cmd_logs_entry, id, full, &state, NULL) != 0)
		return false;
	running = strcmp(state, "running") == 0;
	free(state);
	return running;
}

/* Write len bytes to stdout. */
static int out_raw(const uint8_t *q, size_t len)
{
	while (len) {
		ssize_t w = write(STDOUT_FILENO, q, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		q += w;
		len -= (size_t)w;
	}
	return 0;
}

#define LOG_CHUNK 16384

/* Write n (≤ LOG_CHUNK) bytes to stdout; on a terminal through the filter an attached run uses. */
static int out_write(struct termfilter *tf, const uint8_t *p, size_t n)
{
	uint8_t buf[LOG_CHUNK + TERMFILTER_SEQ_MAX];

	if (!tf)
		return out_raw(p, n);
	return out_raw(buf, termfilter_feed(tf, p, n, buf));
}

static int run_logs(int argc, char **argv)
{
	bool follow = false;
	const char *prefix = NULL;
	char id[17] = "", *path;
	struct termfilter filter, *tf = NULL;
	uint8_t buf[LOG_CHUNK];
	int fd, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
			follow = true;
		else if (!prefix && argv[i][0] != '-')
			prefix = argv[i];
		else
			return cmd_usage_error(&cmd_logs_entry, _("unexpected argument '%s'"), argv[i]);
	}
	if (!prefix)
		return cmd_usage_error(&cmd_logs_entry, _("missing session id"));
	if (!cmd_session_id_ok(prefix))
		return cmd_usage_error(&cmd_logs_entry, _("'%s' is not a session id (hex digits)"),
				       prefix);
	rc = find_session(&cmd_logs_entry, prefix, id, NULL, NULL);
	if (rc != 0) {
		if (rc > 0)
			fprintf(stderr, _("boxy logs: no session matches '%s'\n"), prefix);
		return 1;
	}
	path = session_log_path(id);
	fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY) : -1;
	if (fd < 0) {
		if (errno == ENOENT)
			fprintf(stderr, _("boxy logs: session %.8s kept no output: it ran without a "
					  "terminal, so its output went where its caller sent it\n"), id);
		else
			fprintf(stderr, "boxy logs: %s: %s\n", path ? path : _("the log"), strerror(errno));
		free(path);
		return 1;
	}
	free(path);
	if (isatty(STDOUT_FILENO)) {
		termfilter_init(&filter);
		tf = &filter;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, _("boxy logs: reading the log: %s\n"), strerror(errno));
			rc = 1;
			break;
		}
		if (n > 0) {
			if (out_write(tf, buf, (size_t)n) < 0) {
				rc = 0;     /* the reader went away (| head): not an error */
				break;
			}
			continue;
		}
		if (!follow)
			break;
		if (!still_running(id)) {
			/* One more read: what the daemon wrote before it recorded the end. */
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				if (out_write(tf, buf, (size_t)n) < 0)
					break;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
	}
	if (tf) {
		/* Modes the log left on (mouse reports, a hidden cursor) go off again. */
		uint8_t fin[TERMFILTER_FINISH_MAX];

		out_raw(fin, termfilter_finish(tf, fin));
	}
	close(fd);
	return rc;
}

/* ---- wait ------------------------------------------------------------------------ */

/*
 * Ask the daemon to let us follow the session (a watch, read for MSG_EXIT
 * only). Returns the exit status, or -1 when the daemon does not have the
 * session running (or no daemon answers): the store decides then.
 */
static int wait_daemon(const char *prefix)
{
	struct daemon_info info;
	struct wbuf w;
	struct msg m;
	char *err = NULL;
	int fd = client_connect(false, false, &info, &err), code = -1;

	daemon_info_free(&info);
	free(err);
	if (fd < 0)
		return -1;
	wbuf_init(&w);
	dmsg_encode_target(&w, prefix);
	msg_send(fd, MSG_WATCH, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	if (msg_recv(fd, &m, NULL) < 0 || m.type != MSG_STARTED) {
		if (m.type == MSG_ERROR)
			msg_free(&m);
		close(fd);
		return -1;
	}
	msg_free(&m);
	while (msg_recv(fd, &m, NULL) > 0) {
		if (m.type == MSG_EXIT) {
			uint32_t exit_code;
			char *reason;

			/* The code as far as it came; the reason is for boxy run to print. */
			dmsg_decode_exit(m.payload, m.len, &exit_code, &reason);
			code = (int)exit_code;
			free(reason);
			msg_free(&m);
			break;
		}
		msg_free(&m);
	}
	close(fd);
	/* The daemon went away mid-run: its sessions are lost; the store says so. */
	return code;
}

static int run_wait(int argc, char **argv)
{
	const char *prefix = argc > 1 ? argv[1] : NULL;
	char id[17], *state = NULL;
	int code, rc;

	if (argc > 2)
		return cmd_usage_error(&cmd_wait_entry, _("unexpected argument '%s'"), argv[2]);
	if (!prefix)
		return cmd_usage_error(&cmd_wait_entry, _("missing session id"));
	if (!cmd_session_id_ok(prefix))
		return cmd_usage_error(&cmd_wait_entry, _("'%s' is not a session id (hex digits)"),
				       prefix);
	code = wait_daemon(prefix);
	if (code >= 0)
		return code > 255 ? EXIT_BOXY_FAILED : code;
	/*
	 * Not running at the daemon. The store is written in batches (a fifth
	 * of a second), so a session that has just ended may still read as
	 * running there for a moment: look again for a few seconds.
	 */
	for (int tries = 0;; tries++) {
		free(state);
		state = NULL;
		rc = find_session(&cmd_wait_entry, prefix, id, &state, &code);
		if (rc > 0 && tries < 20) {
			/* Not recorded yet either: a run started a moment ago. */
			nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
			continue;
		}
		if (rc != 0)
			break;
		if (strcmp(state, "running") != 0 || tries >= 30)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
		if (tries == 10 && (code = wait_daemon(prefix)) >= 0) {
			free(state);
			return code > 255 ? EXIT_BOXY_FAILED : code;
		}
	}
	if (rc > 0) {
		fprintf(stderr, _("boxy wait: no session matches '%s'\n"), prefix);
		free(state);
		return EXIT_BOXY_FAILED;
	}
	if (rc < 0) {
		free(state);
		return EXIT_BOXY_FAILED;
	}
	if (strcmp(state, "lost") == 0 || strcmp(state, "running") == 0) {
		fprintf(stderr, _("boxy wait: session %.8s was lost: the daemon that ran it is gone, "
				  "and its exit status with it\n"), id);
		code = EXIT_BOXY_FAILED;
	}
	free(state);
	return code > 255 || code < 0 ? EXIT_BOXY_FAILED : code;
}

const struct cmd_entry cmd_logs_entry = {
	"logs", N_("a session's terminal output (-f: follow it)"),
	N_("Usage: boxy logs [-f] ID\n"
	   "Print what a session wrote to its terminal, as the daemon kept it (the\n"
	   "first 16 MiB). Runs that had a terminal (attached, or started with -d)\n"
	   "have a log; a run given plain files or pipes wrote there instead. On a\n"
	   "terminal the output passes the same filter as an attached run.\n"
	   "-f keeps printing as the session writes, until it ends.\n"),
	run_logs,
};
const struct cmd_entry cmd_wait_entry = {
	"wait", N_("block until a session ends; exit with its status"),
	N_("Usage: boxy wait ID\n"
	   "Wait for a session to end and exit with its status: the command's own\n"
	   "(128+N when a signal ended it, 124 on --timeout), or 125 when the session\n"
	   "was lost or is unknown. The scripting pattern is\n"
	   "  id=$(boxy run -d -- make check) && boxy wait \"$id\"\n"),
	run_wait,
};
