/*
 * client/tty.c — relaying a terminal to a session the daemon owns.
 *
 * The daemon holds the pty; this side puts the user's terminal in raw mode,
 * copies keystrokes to the daemon and output back, forwards window-size
 * changes, and watches for Ctrl-] which leaves the session running. The
 * terminal is restored on every way out, before anything is printed.
 *
 * Keystrokes are read only when stdin is a terminal: `boxy run -- cmd < in`
 * with a terminal on stdout relays output only, and the terminal stays in
 * its own mode, so ^C and ^Z act on this client as on any command (^C asks
 * the daemon to stop the session). In raw mode ^C and ^Z are bytes for the
 * session's pty: its line discipline turns them into signals for the
 * payload's foreground group, as ssh and tmux do (doc/daemon.md).
 *
 * Everything written to the terminal passes through the output filter
 * (client/termfilter.h) unless the session was started with --raw-terminal; on the
 * way out the modes the session left on (mouse reports, bracketed paste, the
 * alternate screen, ...) are turned off and the terminal is restored with
 * TCSAFLUSH, so nothing the terminal typed back in the meantime is left for
 * the user's shell to read.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "client/client.h"
#include "client/tty.h"
#include "proto/msg.h"
#include "proto/daemon-msg.h"
#include "ui/dests.h"
#include "client/termfilter.h"
#include "common/util.h"
#include "ui/watch.h"
#include "proto/wire.h"

static struct termios saved_tio;
static bool tio_saved;
static int sig_pipe[2] = { -1, -1 };
static int out_fd = STDOUT_FILENO;      /* the terminal the session's output goes to */
static struct termfilter out_filter;
static bool filtering;

/* Turn off the modes the session left on; restore the saved terminal mode, dropping input. */
static void restore_terminal(void)
{
	if (filtering) {
		uint8_t b[TERMFILTER_FINISH_MAX];
		size_t n = termfilter_finish(&out_filter, b);

		if (n && write_all(out_fd, b, n) < 0) {
			/* the terminal is gone: nothing to reset */
		}
	}
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
		tio_saved = false;
	}
}

/* Put the terminal on stdin in raw mode, saving its mode for restore_terminal(). */
static void raw_terminal(void)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		tio_saved = true;
		raw = saved_tio;
		cfmakeraw(&raw);
		/* TCSADRAIN: what the user typed ahead is the session's to read */
		tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
	}
}

unsigned client_terminal_fds(void)
{
	unsigned t = 0;

	for (int i = 0; i < 3; i++)
		if (isatty(i))
			t |= 1u << i;
	return t;
}

int client_terminal_fd(unsigned ttys)
{
	if (ttys & 2)
		return STDOUT_FILENO;
	if (ttys & 4)
		return STDERR_FILENO;
	return STDIN_FILENO;
}

/*
 * Set up the output filter: none with raw; for an 8-bit terminal when the
 * locale names an 8-bit codeset (ISO-8859-*, KOI8-*...); otherwise for a
 * UTF-8 one. The C locale's ASCII says nothing about the terminal, and most
 * are UTF-8 today: filtering them as 8-bit would break every box-drawing
 * character (U+2500 is E2 94 80).
 */
static void filter_setup(bool raw)
{
	const char *cs = nl_langinfo(CODESET);

	filtering = !raw;
	termfilter_init(&out_filter);
	if (cs && strcmp(cs, "UTF-8") != 0 && strcmp(cs, "ANSI_X3.4-1968") != 0)
		termfilter_set_8bit(&out_filter);
}

/* Write what the session printed to the terminal, through the filter; -1 on a write error. */
static int relay_output(const uint8_t *p, size_t n)
{
	uint8_t buf[4096 + TERMFILTER_SEQ_MAX];

	if (!filtering)
		return write_all(out_fd, p, n);
	while (n) {
		size_t k = n < 4096 ? n : 4096, o = termfilter_feed(&out_filter, p, k, buf);

		if (o && write_all(out_fd, buf, o) < 0)
			return -1;
		p += k;
		n -= k;
	}
	return 0;
}

static void on_signal(int sig)
{
	int e = errno;
	unsigned char b = (unsigned char)sig;

	if (write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: the loop has signals to read already */
	}
	errno = e;
}

static void catch_signals(const int *sigs, size_t n)
{
	struct sigaction sa;

	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		fatal_errno("pipe");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
}

static void send_winsize(int fd)
{
	struct winsize ws;
	struct wbuf w;

	if (ioctl(out_fd, TIOCGWINSZ, &ws) < 0)
		return;
	wbuf_init(&w);
	dmsg_encode_winsize(&w, ws.ws_row, ws.ws_col);
	msg_send(fd, MSG_WINSIZE, w.p, w.len, NULL, 0);
	wbuf_free(&w);
}

/* The daemon's last snapshot of the run: its destinations table is printed at the end. */
static uint8_t *last_snapshot;
static size_t last_snapshot_len;

static struct client_findings findings;

const struct client_findings *client_findings(void)
{
	return &findings;
}

void client_findings_free(void)
{
	for (size_t i = 0; i < findings.nnews; i++) {
		free(findings.news[i].layer);
		free(findings.news[i].subject);
		free(findings.news[i].detail);
		free(findings.news[i].what);
	}
	for (size_t i = 0; i < findings.nalerts; i++) {
		free(findings.alerts[i].layer);
		free(findings.alerts[i].subject);
		free(findings.alerts[i].detail);
		free(findings.alerts[i].what);
	}
	free(findings.news);
	free(findings.alerts);
	free(findings.snapshot);
	memset(&findings, 0, sizeof(findings));
}

/* One "new" or "alert" event into the findings, raw (the report escapes it). */
static void keep_finding(const struct event *ev, bool is_new)
{
	struct client_finding **v = is_new ? &findings.news : &findings.alerts;
	size_t *n = is_new ? &findings.nnews : &findings.nalerts;
	struct client_finding *f;

	if (*n >= CLIENT_FINDINGS_MAX) {
		(*(is_new ? &findings.more_news : &findings.more_alerts))++;
		return;
	}
	f = xappend((void **)v, n, sizeof(*f));
	f->layer = xstrdup(ev->layer ? ev->layer : "boxy");
	f->subject = xstrdup(ev->subject ? ev->subject : "");
	f->detail = xstrdup(ev->detail ? ev->detail : "");
	f->what = ev->what ? xstrdup(ev->what) : NULL;
}

static void keep_snapshot(const struct msg *m)
{
	free(findings.snapshot);
	findings.snapshot = xmalloc(m->len ? m->len : 1);
	memcpy(findings.snapshot, m->payload, m->len);
	findings.snapshot_len = m->len;
	free(last_snapshot);
	last_snapshot = xmalloc(m->len ? m->len : 1);
	memcpy(last_snapshot, m->payload, m->len);
	last_snapshot_len = m->len;
}

/* "boxy: network destinations (N)", when the run used the network. */
static void print_destinations(void)
{
	if (last_snapshot)
		net_summary_print(stderr, last_snapshot, last_snapshot_len);
	free(last_snapshot);
	last_snapshot = NULL;
	/* What the filter kept from the terminal is a refusal too: say so, once. */
	if (filtering && out_filter.dropped) {
		bool red = color_wanted(STDERR_FILENO);

		fprintf(stderr, ngettext("%sboxy: terminal: %llu control sequence the payload wrote "
					 "was not passed to your terminal (clipboard, titles, "
					 "queries, …; --raw-terminal turns the filter off)%s\n",
					 "%sboxy: terminal: %llu control sequences the payload wrote "
					 "were not passed to your terminal (clipboard, titles, "
					 "queries, …; --raw-terminal turns the filter off)%s\n",
					 out_filter.dropped), red ? "\033[31m" : "",
			(unsigned long long)out_filter.dropped, red ? "\033[0m" : "");
		out_filter.dropped = 0;
	}
}

/*
 * Findings the user must act on (verdict "alert": a planted repository, a
 * git walk that could not finish): sent even without -v, kept, and printed
 * at the end of the run, after everything else, in red on a terminal unless
 * NO_COLOR is set. What the run did that the last one did not (verdict
 * "new", daemon/since.h) is kept the same way and printed just before, in
 * yellow. Returns whether m was one.
 */
static char **alerts, **news;

static bool keep_alert(const struct msg *m)
{
	struct event_copy ec;
	const struct event *ev = &ec.ev;
	char *subject, *detail, *line;
	bool is = false;

	if (watch_event_decode(m->payload, m->len, &ec) < 0) {
		/* It might have been a finding: the gate cannot pass what it could not read. */
		findings.unreadable++;
		return true;
	}
	if (ev->verdict && (strcmp(ev->verdict, "alert") == 0 || strcmp(ev->verdict, "new") == 0)) {
		/* Shown in the words told to us (our language); kept for --report as recorded. */
		subject = watch_sanitize(ev->subject ? ev->subject : "");
		detail = watch_sanitize(ev->told ? ev->told : ev->detail ? ev->detail : "");
		keep_finding(ev, strcmp(ev->verdict, "new") == 0);
		if (strcmp(ev->verdict, "new") == 0) {
			line = xasprintf("%s (%s)", subject, detail);
			strv_push(&news, line);
		} else {
			line = xasprintf("%s: %s: %s", ev->layer ? ev->layer : "boxy", subject, detail);
			strv_push(&alerts, line);
		}
		free(line);
		free(subject);
		free(detail);
		is = true;
	}
	event_copy_free(&ec);
	return is;
}

/*
 * A session frozen or resumed by an alert (layer "react": doc/react.md), said
 * at once on stderr — red on a terminal — while the client keeps waiting:
 * the user decides with boxy resume or boxy stop from another terminal (or
 * boxy top). raw: the terminal is in raw mode (CR LF). Returns whether m was one.
 */
static bool notice_react(const struct msg *m, bool raw)
{
	struct event_copy ec;
	const struct event *ev = &ec.ev;
	char *id, *detail;
	const char *nc = getenv("NO_COLOR");
	bool red = isatty(STDERR_FILENO) && !(nc && *nc), is;

	if (watch_event_decode(m->payload, m->len, &ec) < 0)
		return false;
	is = ev->layer && strcmp(ev->layer, "react") == 0 && ev->verdict &&
	     strcmp(ev->verdict, "action") == 0 && ev->subject &&
	     (strcmp(ev->subject, "freeze") == 0 || strcmp(ev->subject, "resume") == 0);
	if (is) {
		id = watch_sanitize(ev->session ? ev->session : "?");
		detail = watch_sanitize(ev->detail ? ev->detail : "");
		if (strcmp(ev->subject, "freeze") == 0)
			fprintf(stderr, _("%sboxy: session %.8s frozen: %s%s%s"), red ? "\033[1;31m" : "",
				id, detail, red ? "\033[0m" : "", raw ? "\r\n" : "\n");
		else
			fprintf(stderr, _("boxy: session %.8s %s%s"), id, detail, raw ? "\r\n" : "\n");
		free(id);
		free(detail);
	}
	event_copy_free(&ec);
	return is;
}

static void print_alerts(void)
{
	const char *nc = getenv("NO_COLOR");
	bool red = isatty(STDERR_FILENO) && !(nc && *nc);

	for (size_t i = 0; news && news[i]; i++)
		fprintf(stderr, _("%sboxy: new since the last run: %s%s\n"), red ? "\033[33m" : "",
			news[i], red ? "\033[0m" : "");
	strv_free(news);
	news = NULL;
	for (size_t i = 0; alerts && alerts[i]; i++)
		fprintf(stderr, _("%sboxy: ALERT: %s%s\n"), red ? "\033[1;31m" : "", alerts[i],
			red ? "\033[0m" : "");
	strv_free(alerts);
	alerts = NULL;
}

/* Exit code and reason from a MSG_EXIT; prints a boxy failure's reason. */
static int exit_from(const struct msg *m)
{
	uint32_t code;
	char *reason;

	if (dmsg_decode_exit(m->payload, m->len, &code, &reason) < 0) {
		fprintf(stderr, _("boxy: malformed exit message from the daemon\n"));
		return EXIT_BOXY_FAILED;
	}
	findings.ended = true;
	if (reason && code >= 124) {
		char *clean = watch_sanitize(reason);

		/* A limit that killed the run is a finding: red on a terminal. */
		if (isatty(STDERR_FILENO) && (code == 124 || code > 127))
			fprintf(stderr, "\033[31mboxy: %s\033[0m\n", clean);
		else
			fprintf(stderr, "boxy: %s\n", clean);
		free(clean);
	}
	free(reason);
	return code > 255 ? EXIT_BOXY_FAILED : (int)code;
}

/* -v: print refusals and degraded decisions as they happen. */
static void print_event(const struct msg *m, bool raw)
{
	struct event_copy ec;
	const struct event *ev = &ec.ev;
	char *line;

	if (watch_event_decode(m->payload, m->len, &ec) < 0)
		return;
	/* -v: every audit event whatever its verdict (flags.md), and any other kind's refusal. */
	if ((ev->kind && strcmp(ev->kind, "audit") == 0) ||
	    (ev->verdict && strcmp(ev->verdict, "allow") != 0 && strcmp(ev->verdict, "start") != 0)) {
		line = watch_format_event(ev);
		fprintf(stderr, "boxy: %s%s", line, raw ? "\r\n" : "\n");
		free(line);
	}
	event_copy_free(&ec);
}

int client_request_stop(const char *id, bool now, char **err)
{
	struct daemon_info info;
	struct wbuf w;
	struct msg m;
	int fd = client_connect(false, false, &info, err), rc = 0;

	daemon_info_free(&info);
	if (fd < 0)
		return -1;
	wbuf_init(&w);
	dmsg_encode_stop(&w, id, now);
	msg_send(fd, MSG_STOP, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	if (msg_recv(fd, &m, err) == 1) {
		if (m.type == MSG_ERROR)
			rc = set_err(err, _("the daemon refused to stop the session"));
		msg_free(&m);
	}
	close(fd);
	return rc;
}

/*
 * One request on a new connection and its one reply: MSG_OK with its words
 * (into *words when asked for), or MSG_ERROR with its exit code (into *code
 * when asked for) and its words in *err, sanitized: the daemon may quote
 * what a payload named.
 */
static int request_once(uint16_t type, const struct wbuf *req, char **words, int *code,
			char **err)
{
	struct daemon_info info;
	struct msg m;
	struct rbuf r;
	int fd = client_connect(false, false, &info, err), rc = -1;

	if (words)
		*words = NULL;
	if (code)
		*code = 1;
	daemon_info_free(&info);
	if (fd < 0)
		return -1;
	msg_send(fd, type, req->p, req->len, NULL, 0);
	if (msg_recv(fd, &m, err) == 1) {
		rbuf_init(&r, m.payload, m.len);
		if (m.type == MSG_OK) {
			if (words)
				*words = wire_get_str(&r, 4096);
			if (code)
				*code = 0;
			rc = 0;
		} else if (m.type == MSG_ERROR) {
			uint16_t c;
			char *said = dmsg_decode_error(m.payload, m.len, &c);

			if (code)
				*code = c ? c : 1;
			set_err(err, "%s", said ? said : "the daemon refused");
			free(said);
		} else {
			set_err(err, "unexpected reply %#x from the daemon", m.type);
		}
		msg_free(&m);
	} else if (err && !*err) {
		set_err(err, "the daemon closed the connection");
	}
	close(fd);
	if (rc < 0 && err && *err) {
		char *clean = watch_sanitize(*err);

		free(*err);
		*err = clean;
	}
	return rc;
}

int client_request_resume(const char *id, bool log_only, char **words, int *code, char **err)
{
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	dmsg_encode_resume(&w, id, log_only);
	rc = request_once(MSG_RESUME, &w, words, code, err);
	wbuf_free(&w);
	return rc;
}

int client_request_gate(const char *id, const char *words, char **err)
{
	struct wbuf w;
	int rc;

	wbuf_init(&w);
	dmsg_encode_gate(&w, id, words);
	rc = request_once(MSG_GATE, &w, NULL, NULL, err);
	wbuf_free(&w);
	return rc;
}

/*
 * SIGTSTP sent to a client in raw mode (kill -TSTP; ^Z itself is a byte for
 * the session): give the terminal back, stop, and take it again on SIGCONT.
 * The session keeps running meanwhile; its output waits in the daemon.
 */
static void suspend_client(int fd)
{
	struct sigaction dfl, old;

	restore_terminal();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGTSTP, &dfl, &old);
	raise(SIGTSTP);
	sigaction(SIGTSTP, &old, NULL);
	raw_terminal();
	if (fd >= 0)
		send_winsize(fd);
}

/* The relay's loop, once the terminal is set up; returns the exit code. */
static int relay_loop(int fd, const char *id, bool verbose, bool input)
{
	struct msg_reader rd;
	int interrupts = 0;

	msg_reader_init(&rd);
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN },
			{ .fd = input ? STDIN_FILENO : -1, .events = POLLIN },
		};

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents & POLLIN) {
			unsigned char sig;

			while (read(sig_pipe[0], &sig, 1) == 1) {
				char *err = NULL;

				if (sig == SIGWINCH) {
					send_winsize(fd);
				} else if (sig == SIGTSTP) {
					suspend_client(fd);
				} else if (sig == SIGINT || sig == SIGQUIT) {
					/* no raw mode (stdin is not a terminal): ^C stops the session */
					if (client_request_stop(id, ++interrupts > 1, &err) < 0) {
						fprintf(stderr, "boxy: %s\n", err);
						free(err);
					}
				} else {
					/* Killing the client leaves the session running. */
					restore_terminal();
					return 128 + sig;
				}
			}
		}
		if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			unsigned char buf[4096];
			ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
			unsigned char *det;

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				/* The terminal went away: leave the session running. */
				msg_send(fd, MSG_DETACH, NULL, 0, NULL, 0);
				restore_terminal();
				return 0;
			}
			det = memchr(buf, CLIENT_DETACH_KEY, (size_t)n);
			if (det) {
				if (det > buf)
					msg_send(fd, MSG_INPUT, buf, (size_t)(det - buf), NULL, 0);
				msg_send(fd, MSG_DETACH, NULL, 0, NULL, 0);
				restore_terminal();
				fprintf(stderr, _("\nboxy: detached from session %.8s; it keeps running "
						  "(boxy attach %.8s)\n"), id, id);
				return 0;
			}
			msg_send(fd, MSG_INPUT, buf, (size_t)n, NULL, 0);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			struct msg m;
			char *err = NULL;
			int rc, code;

			while ((rc = msg_read(&rd, fd, &m, &err)) == 1) {
				switch (m.type) {
				case MSG_OUTPUT:
					if (relay_output(m.payload, m.len) < 0) {
						msg_free(&m);
						restore_terminal();
						return EXIT_BOXY_FAILED;
					}
					break;
				case MSG_EVENT:
					if (!keep_alert(&m) && !notice_react(&m, input) && verbose)
						print_event(&m, input);
					break;
				case MSG_SNAPSHOT:
					keep_snapshot(&m);
					break;
				case MSG_EXIT:
					restore_terminal();
					code = exit_from(&m);
					print_destinations();
					print_alerts();
					msg_free(&m);
					return code;
				case MSG_DETACH:
					restore_terminal();
					fprintf(stderr, _("\nboxy: another client attached to session "
							  "%.8s; this one let go\n"), id);
					msg_free(&m);
					return 0;
				default:
					break;
				}
				msg_free(&m);
			}
			if (rc < 0) {
				restore_terminal();
				fprintf(stderr, _("boxy: lost the daemon%s%s\n"), err ? ": " : "",
					err ? err : "");
				free(err);
				return EXIT_BOXY_FAILED;
			}
			if (rc == 0 && (p[0].revents & POLLHUP))
				break;
		}
	}
	restore_terminal();
	return EXIT_BOXY_FAILED;
}

int client_relay_tty(int fd, const char *id, bool verbose, unsigned ttys, bool raw)
{
	static const int sigs[] = { SIGWINCH, SIGTERM, SIGHUP, SIGTSTP };
	static const int cooked_sigs[] = { SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT };
	bool input = (ttys & 1) != 0;

	out_fd = client_terminal_fd(ttys);
	filter_setup(raw);
	if (input) {
		catch_signals(sigs, ARRAY_SIZE(sigs));
		raw_terminal();
	} else {
		catch_signals(cooked_sigs, ARRAY_SIZE(cooked_sigs));
	}
	atexit(restore_terminal);
	/*
	 * Non-blocking: the loop drains every whole frame msg_read() has, and on
	 * a blocking socket the read after the last one would wait for the
	 * daemon's next output while the user's keystrokes go unread. msg_send()
	 * waits out EAGAIN itself.
	 */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	send_winsize(fd);
	return relay_loop(fd, id, verbose, input);
}

int client_wait_run(int fd, const char *id, bool verbose)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	int interrupts = 0;

	catch_signals(sigs, ARRAY_SIZE(sigs));
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return EXIT_BOXY_FAILED;
		}
		if (p[1].revents & POLLIN) {
			unsigned char sig;

			while (read(sig_pipe[0], &sig, 1) == 1) {
				char *err = NULL;

				if (sig != SIGINT && sig != SIGQUIT)
					return 128 + sig;   /* the session keeps running */
				/* Ctrl-C means stop the command, as it would without boxy. */
				if (client_request_stop(id, ++interrupts > 1, &err) < 0) {
					fprintf(stderr, "boxy: %s\n", err);
					free(err);
				}
			}
		}
		if (p[0].revents) {
			struct msg m;
			char *err = NULL;

			if (msg_recv(fd, &m, &err) < 0) {
				fprintf(stderr, _("boxy: lost the daemon%s%s\n"), err ? ": " : "",
					err ? err : "");
				free(err);
				return EXIT_BOXY_FAILED;
			}
			if (m.type == MSG_EXIT) {
				int code = exit_from(&m);

				print_destinations();
				print_alerts();
				msg_free(&m);
				return code;
			}
			if (m.type == MSG_SNAPSHOT)
				keep_snapshot(&m);
			if (m.type == MSG_EVENT && !keep_alert(&m) && !notice_react(&m, false) &&
			    verbose)
				print_event(&m, false);
			msg_free(&m);
		}
	}
}

/* ---- --no-daemon: a pty of this process ------------------------------------------ */

/* The relay process of a --no-daemon run: terminal ↔ master until every slave is closed. */
static void __attribute__((noreturn)) local_relay(int master, unsigned ttys, bool raw)
{
	static const int sigs[] = { SIGWINCH, SIGTERM, SIGHUP, SIGTSTP };
	static const int cooked_sigs[] = { SIGWINCH, SIGTERM, SIGHUP };
	bool input = (ttys & 1) != 0;
	struct winsize ws;

	out_fd = client_terminal_fd(ttys);
	filter_setup(raw);
	if (input) {
		catch_signals(sigs, ARRAY_SIZE(sigs));
		raw_terminal();
	} else {
		/* ^C and ^Z act on boxy itself, which forwards them to the sandbox */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		catch_signals(cooked_sigs, ARRAY_SIZE(cooked_sigs));
	}
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = master, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN },
			{ .fd = input ? STDIN_FILENO : -1, .events = POLLIN },
		};
		uint8_t buf[4096];
		ssize_t n;

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN) {
			unsigned char sig;

			while (read(sig_pipe[0], &sig, 1) == 1) {
				if (sig == SIGWINCH && ioctl(out_fd, TIOCGWINSZ, &ws) == 0)
					ioctl(master, TIOCSWINSZ, &ws);
				else if (sig == SIGTSTP)
					suspend_client(-1);
				else if (sig == SIGTERM || sig == SIGHUP)
					goto out;
			}
		}
		if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				input = false;      /* the terminal went away: output only */
			/* Best effort, as the daemon's relay: a full pty input queue drops keys. */
			else if (n > 0 && write(master, buf, (size_t)n) < 0) {
				/* EAGAIN: dropped */
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(master, buf, sizeof(buf));
			if (n > 0) {
				if (relay_output(buf, (size_t)n) < 0)
					break;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				break;      /* EIO: the sandbox and boxy closed every slave */
			}
		}
	}
out:
	restore_terminal();
	_exit(0);
}

int client_local_pty(unsigned ttys, bool raw, int *slave, pid_t *relay, char **err)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	int m, sl;
	pid_t pid;

	ioctl(client_terminal_fd(ttys), TIOCGWINSZ, &ws);
	if (pty_open(&m, &sl, &ws, err) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(m);
		close(sl);
		return set_err_errno(err, "fork");
	}
	if (pid == 0) {
		close(sl);
		/* boxy killed: the relay restores the terminal and goes too */
		prctl(PR_SET_PDEATHSIG, SIGHUP);
		local_relay(m, ttys, raw);
	}
	close(m);
	*slave = sl;
	*relay = pid;
	return 0;
}

void client_local_pty_end(int slave, pid_t relay)
{
	int st;

	close(slave);
	while (waitpid(relay, &st, 0) < 0 && errno == EINTR)
		;
}
