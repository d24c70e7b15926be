/*
 * client-tty.c — relaying a terminal to a session the daemon owns.
 *
 * The daemon holds the pty; this side puts the user's terminal in raw mode,
 * copies keystrokes to the daemon and output back, forwards window-size
 * changes, and watches for Ctrl-] which leaves the session running. The
 * terminal is restored on every way out, before anything is printed.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "client.h"
#include "client-tty.h"
#include "msg.h"
#include "session-net.h"
#include "util.h"
#include "watch.h"
#include "wire.h"

static struct termios saved_tio;
static bool tio_saved;
static int sig_pipe[2] = { -1, -1 };

static void restore_terminal(void)
{
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
		tio_saved = false;
	}
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

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
		return;
	wbuf_init(&w);
	wire_put_u16(&w, ws.ws_row);
	wire_put_u16(&w, ws.ws_col);
	msg_send(fd, MSG_WINSIZE, w.p, w.len, NULL, 0);
	wbuf_free(&w);
}

/* The daemon's last snapshot of the run: its destinations table is printed at the end. */
static uint8_t *last_snapshot;
static size_t last_snapshot_len;

static void keep_snapshot(const struct msg *m)
{
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
}

/* Exit code and reason from a MSG_EXIT; prints a boxy failure's reason. */
static int exit_from(const struct msg *m)
{
	struct rbuf r;
	uint32_t code;
	char *reason;

	rbuf_init(&r, m->payload, m->len);
	code = wire_get_u32(&r);
	reason = wire_get_str(&r, 4096);
	if (!wire_done(&r)) {
		free(reason);
		fprintf(stderr, "boxy: malformed exit message from the daemon\n");
		return EXIT_BOXY_FAILED;
	}
	if (reason && code >= 124) {
		char *clean = watch_sanitize(reason);

		fprintf(stderr, "boxy: %s\n", clean);
		free(clean);
	}
	free(reason);
	return code > 255 ? EXIT_BOXY_FAILED : (int)code;
}

/* -v: print refusals and degraded decisions as they happen. */
static void print_event(const struct msg *m, bool raw)
{
	struct event ev;
	char *strs[10], *line;

	if (watch_event_decode(m->payload, m->len, &ev, strs) < 0)
		return;
	/* -v: every audit event whatever its verdict (flags.md), and any other kind's refusal. */
	if ((ev.kind && strcmp(ev.kind, "audit") == 0) ||
	    (ev.verdict && strcmp(ev.verdict, "allow") != 0 && strcmp(ev.verdict, "start") != 0)) {
		line = watch_format_event(&ev);
		fprintf(stderr, "boxy: %s%s", line, raw ? "\r\n" : "\n");
		free(line);
	}
	watch_event_strs_free(strs);
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
	wire_put_str(&w, id);
	wire_put_u8(&w, now);
	msg_send(fd, MSG_STOP, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	if (msg_recv(fd, &m, err) == 1) {
		if (m.type == MSG_ERROR)
			rc = set_err(err, "the daemon refused to stop the session");
		msg_free(&m);
	}
	close(fd);
	return rc;
}

int client_relay_tty(int fd, const char *id, bool verbose)
{
	static const int sigs[] = { SIGWINCH, SIGTERM, SIGHUP };
	struct termios raw;
	int code = 0;
	struct msg_reader rd;

	catch_signals(sigs, ARRAY_SIZE(sigs));
	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		tio_saved = true;
		atexit(restore_terminal);
		raw = saved_tio;
		cfmakeraw(&raw);
		tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
	}
	/*
	 * Non-blocking: the loop drains every whole frame msg_read() has, and on
	 * a blocking socket the read after the last one would wait for the
	 * daemon's next output while the user's keystrokes go unread. msg_send()
	 * waits out EAGAIN itself.
	 */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	send_winsize(fd);
	msg_reader_init(&rd);
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = fd, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN },
		};

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[2].revents & POLLIN) {
			unsigned char sig;

			while (read(sig_pipe[0], &sig, 1) == 1) {
				if (sig == SIGWINCH) {
					send_winsize(fd);
				} else {
					/* Killing the client leaves the session running. */
					restore_terminal();
					return 128 + sig;
				}
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP)) {
			unsigned char buf[4096];
			ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
			unsigned char *det;

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
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			struct msg m;
			char *err = NULL;
			int rc;

			while ((rc = msg_read(&rd, fd, &m, &err)) == 1) {
				switch (m.type) {
				case MSG_OUTPUT:
					if (write_all(STDOUT_FILENO, m.payload, m.len) < 0) {
						msg_free(&m);
						restore_terminal();
						return EXIT_BOXY_FAILED;
					}
					break;
				case MSG_EVENT:
					if (verbose)
						print_event(&m, true);
					break;
				case MSG_SNAPSHOT:
					keep_snapshot(&m);
					break;
				case MSG_EXIT:
					restore_terminal();
					code = exit_from(&m);
					print_destinations();
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
				fprintf(stderr, "boxy: lost the daemon%s%s\n", err ? ": " : "",
					err ? err : "");
				free(err);
				return EXIT_BOXY_FAILED;
			}
			if (rc == 0 && (p[1].revents & POLLHUP))
				break;
		}
	}
	restore_terminal();
	return EXIT_BOXY_FAILED;
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
				fprintf(stderr, "boxy: lost the daemon%s%s\n", err ? ": " : "",
					err ? err : "");
				free(err);
				return EXIT_BOXY_FAILED;
			}
			if (m.type == MSG_EXIT) {
				int code = exit_from(&m);

				print_destinations();
				msg_free(&m);
				return code;
			}
			if (m.type == MSG_SNAPSHOT)
				keep_snapshot(&m);
			if (m.type == MSG_EVENT && verbose)
				print_event(&m, false);
			msg_free(&m);
		}
	}
}
