/*
 * daemon/log.h — the daemon's own log (daemon.log under the state
 * directory): one timestamped line per event, bounded in size and in rate.
 *
 * The log is the daemon's stderr (the client opens it when it starts the
 * daemon). Past DLOG_MAX_BYTES it is renamed daemon.log.1 (replacing the
 * previous one) and a fresh one is opened, so the two never hold more than
 * twice that. Lines of one class (refused connections, socket re-binds)
 * are written at most DLOG_CLASS_BURST a second; the rest are counted and
 * summed up in one line ("N more refused connects in the last second").
 * An identical line repeated within the second is counted the same way.
 */
#ifndef BOXY_DAEMON_LOG_H
#define BOXY_DAEMON_LOG_H

#define DLOG_MAX_BYTES    (1u << 20)
#define DLOG_CLASS_BURST  5

/* Where the log lives; stderr is rotated only when it is this file. NULL: never. */
void dlog_set_path(const char *path);

/* One line. */
void dlog_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line of a class (a static string naming it in the plural: "refused connects"). */
void dlog_limited(const char *class, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Once a second: write the counts of what was held back, rotate if needed. */
void dlog_tick(void);

#endif
