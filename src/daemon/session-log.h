/*
 * daemon/session-log.h — a session's terminal output, kept on disk for `boxy logs`.
 *
 * A run with a pty the daemon owns (detached, or attached to a terminal)
 * has its output written to STATE/logs/ID.log as the daemon reads it from
 * the pty, whether or not anyone is attached, up to SESSION_LOG_MAX bytes;
 * past that one line says output was cut, and the rest is counted, not
 * kept. The file is the payload's bytes as written: hostile, terminal
 * sequences included, so `boxy logs` passes it through the same terminal
 * filter as an attached run when it prints to a terminal.
 *
 * Runs given the caller's own descriptors (no terminal anywhere) have no
 * log: their output went where the caller sent it.
 */
#ifndef BOXY_SESSION_LOG_H
#define BOXY_SESSION_LOG_H

#include <stddef.h>
#include <stdint.h>

#define SESSION_LOG_MAX (16u << 20)

struct session_log;

/* The log file's path for session id, in the state directory; malloc'd, NULL without one. */
char *session_log_path(const char *id);

/*
 * Create id's log (the logs directory 0700, the file 0600, never through a
 * link, never an existing file). Returns NULL with *err set.
 */
struct session_log *session_log_create(const char *id, char **err);
/* Append n bytes, up to the cap; write errors end the log quietly (counted). */
void session_log_write(struct session_log *l, const void *p, size_t n);
/* Bytes not kept (past the cap, or after a write error). */
uint64_t session_log_dropped(const struct session_log *l);
/* Close it (NULL is fine). */
void session_log_close(struct session_log *l);

struct store;
/* `boxy prune`: delete the logs of sessions the store no longer has. Returns how many. */
int session_logs_prune(struct store *st);

#endif
