/*
 * client/run.c — `boxy run` through the daemon: send the run-spec with this
 * client's environment, working directory and descriptors, then either
 * relay the terminal, wait for the end, or print the session id and return
 * (-d).
 *
 * The caller's terminal never reaches the sandbox. Each of our fds 0-2 that
 * is a terminal is replaced, on the payload's side, by the session's pty
 * (which the daemon owns) and relayed; the others (files, pipes, sockets:
 * `> log`, `| tee`, `< in`) are handed over as they are, so their bytes,
 * EOF, append mode and seekability are exactly those of the command run
 * without boxy. Passing them is safe because they are not terminals: no
 * keystrokes, no TIOCSTI, no job control come with them. Only when none of
 * the three is a terminal does the run have no pty at all.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "client/client.h"
#include "client/run.h"
#include "client/tty.h"
#include "proto/msg.h"
#include "proto/msg-run.h"
#include "common/util.h"
#include "ui/watch.h"
#include "proto/wire.h"

extern char **environ;

int client_run(const struct runspec *rs, const char *cwd, const char *home, int audit_fd)
{
	return client_run_net(rs, cwd, home, audit_fd, -1, -1);
}

int client_run_net(const struct runspec *rs, const char *cwd, const char *home, int audit_fd,
		   int netlog_fd, int pcap_fd)
{
	unsigned ttys = rs->detach ? 0 : client_terminal_fds();
	bool tty = ttys != 0;
	struct daemon_info info;
	struct winsize ws = { 0 };
	struct run_request q;
	struct wbuf w;
	struct msg m;
	int fds[MSG_MAX_FDS], fd, code;
	size_t nfds;
	char *err = NULL, id[SESSION_ID_MAX + 1] = "";

	fd = client_connect(true, true, &info, &err);
	daemon_info_free(&info);
	if (fd < 0) {
		fprintf(stderr, "boxy: %s\n", err);
		free(err);
		return EXIT_BOXY_FAILED;
	}
	if (tty)
		ioctl(client_terminal_fd(ttys), TIOCGWINSZ, &ws);
	/* Borrowed, not owned: q is never freed, only encoded. */
	run_request_init(&q);
	q.rs = *rs;
	q.env = environ;
	q.cwd = (char *)cwd;
	q.home = (char *)home;
	q.ttys = (uint8_t)ttys;
	q.rows = ws.ws_row;
	q.cols = ws.ws_col;
	/* The non-terminal ends; the daemon puts its pty in the others' place. -d: none of ours. */
	for (int i = RUN_FD_STDIN; i <= RUN_FD_STDERR; i++)
		if (!rs->detach && !(ttys & (1u << i)))
			q.fd[i] = i;
	q.fd[RUN_FD_AUDIT] = audit_fd;
	q.fd[RUN_FD_NETLOG] = netlog_fd;
	q.fd[RUN_FD_PCAP] = pcap_fd;
	wbuf_init(&w);
	run_request_encode(&q, &w, fds, &nfds);
	if (w.len > MSG_MAX_LEN) {
		fprintf(stderr, _("boxy: the run request (%zu bytes: environment and arguments) is "
			  "over the %u-byte limit\n"), w.len, MSG_MAX_LEN);
		wbuf_free(&w);
		close(fd);
		return EXIT_BOXY_FAILED;
	}
	if (msg_send(fd, MSG_RUN, w.p, w.len, fds, nfds) < 0) {
		wbuf_free(&w);
		close(fd);
		fprintf(stderr, _("boxy: sending the run request: %m\n"));
		return EXIT_BOXY_FAILED;
	}
	wbuf_free(&w);
	if (msg_recv(fd, &m, &err) < 0) {
		fprintf(stderr, _("boxy: the daemon closed the connection%s%s\n"), err ? ": " : "",
			err ? err : "");
		free(err);
		close(fd);
		return EXIT_BOXY_FAILED;
	}
	if (m.type == MSG_ERROR) {
		struct rbuf r;
		char *words, *clean;

		rbuf_init(&r, m.payload, m.len);
		code = wire_get_u16(&r);
		words = wire_get_str(&r, 4096);
		clean = watch_sanitize(words ? words : _("the daemon refused the run"));
		fprintf(stderr, "boxy: %s\n", clean);
		free(clean);
		free(words);
		msg_free(&m);
		close(fd);
		return code >= 1 && code <= 255 ? code : EXIT_BOXY_FAILED;
	}
	if (m.type != MSG_STARTED) {
		msg_free(&m);
		close(fd);
		fprintf(stderr, _("boxy: unexpected reply from the daemon\n"));
		return EXIT_BOXY_FAILED;
	}
	{
		struct rbuf r;
		char *s;

		rbuf_init(&r, m.payload, m.len);
		s = wire_get_str(&r, SESSION_ID_MAX);
		if (s)
			snprintf(id, sizeof(id), "%s", s);
		free(s);
	}
	msg_free(&m);
	if (rs->detach) {
		printf("%s\n", id);
		close(fd);
		return 0;
	}
	code = tty ? client_relay_tty(fd, id, rs->verbose, ttys, rs->raw_terminal)
		   : client_wait_run(fd, id, rs->verbose);
	close(fd);
	return code;
}
