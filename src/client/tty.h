/*
 * client/tty.h — the client's half of a running or attached session: the
 * terminal relay (raw mode, window size, Ctrl-] to leave the session
 * running) and, for a run whose stdio went to the daemon as descriptors,
 * waiting for its end.
 */
#ifndef BOXY_CLIENT_TTY_H
#define BOXY_CLIENT_TTY_H

#include <stdbool.h>
#include <sys/types.h>

/* The detach key: Ctrl-]. */
#define CLIENT_DETACH_KEY 0x1d

/*
 * Relay the terminal to session id over fd until it exits (returns its exit
 * code) or the user detaches (returns 0 after saying how to come back).
 * ttys: which of fds 0-2 are terminals (bit i for fd i); keystrokes are read
 * (in raw mode) only when stdin is one. raw: no output filter (client/termfilter.h).
 */
int client_relay_tty(int fd, const char *id, bool verbose, unsigned ttys, bool raw);
/* Which of fds 0-2 are terminals: bit i set for fd i. */
unsigned client_terminal_fds(void);
/* The terminal fd the relay writes the session's output to, among ttys. */
int client_terminal_fd(unsigned ttys);
/*
 * --no-daemon with a terminal on fds 0-2 (ttys): open a pty and fork a relay
 * process between it and the terminal (raw mode when stdin is one, the output
 * filter unless raw); *slave (owned by the caller) goes to the sandbox in the
 * terminals' place. Returns 0, or -1 with *err.
 */
int client_local_pty(unsigned ttys, bool raw, int *slave, pid_t *relay, char **err);
/* After the sandbox ended: close the slave and wait for the relay to finish. */
void client_local_pty_end(int slave, pid_t relay);
/* Wait for a non-terminal run to end; returns its exit code. Ctrl-C stops the session. */
int client_wait_run(int fd, const char *id, bool verbose);
/*
 * What the end of the run showed, kept for the CI gate (client/gate.h): the
 * daemon's last snapshot (its refusal table) and, raw as the daemon sent
 * them, the "new since the last run" events and the alerts (at most
 * CLIENT_FINDINGS_MAX of each; past it only `more` grows). ended: a MSG_EXIT
 * was seen. Kept until client_findings_free.
 */
#define CLIENT_FINDINGS_MAX 1000
struct client_finding {
	char *layer, *subject, *detail;
	char *what;             /* a "new" event's kind of item (common/event.h), or NULL */
};
struct client_findings {
	bool ended;
	unsigned char *snapshot;
	size_t snapshot_len;
	struct client_finding *news, *alerts;
	size_t nnews, nalerts;
	unsigned long long more_news, more_alerts;
	unsigned long long unreadable;  /* events from the daemon that could not be decoded */
};
const struct client_findings *client_findings(void);
void client_findings_free(void);
/* Send a stop request for id on a new connection (used on Ctrl-C). */
int client_request_stop(const char *id, bool now, char **err);
/*
 * Tell the daemon that the ended session id's CI gate failed on words (the
 * --fail-on words, doc/ci.md), so that it is never a later run's baseline.
 * 0, or -1 with *err (sanitized: it may quote the daemon).
 */
int client_request_gate(const char *id, const char *words, char **err);
/*
 * Ask the daemon to resume frozen session id (log_only: boxy resume --log).
 * 0 with the daemon's words in *words (malloc'd, raw: sanitize to show), or
 * -1 with *err (the daemon's words when it refused, sanitized) and *code its exit code.
 */
int client_request_resume(const char *id, bool log_only, char **words, int *code, char **err);

#endif
