/*
 * daemon/audit.h — --audit-log: one JSON object per line for each policy decision.
 *   {"t":1700000000123,"session":"9f3c1ba2","layer":"cgroup","verdict":"degraded",
 *    "subject":"memory","reason":"...","seq":3,"prev":"<sha-256 of line 2>"}
 * and, at the session's end, a signed seal line (doc/verify.md).
 */
#ifndef BOXY_AUDIT_H
#define BOXY_AUDIT_H

#include <stdbool.h>

#include "common/event.h"
#include "common/sign.h"

struct audit_log;

/* Takes ownership of fd. */
struct audit_log *audit_log_create(int fd);
/* --audit-log journal: each decision to the systemd journal (daemon/journal.h). */
struct audit_log *audit_log_create_journal(void);
bool audit_log_is_journal(const struct audit_log *al);
void audit_log_free(struct audit_log *al);
/* An event_sink that writes audit events (kind "audit") to al; others are ignored. */
struct event_sink audit_log_sink(struct audit_log *al);

/* The chain so far (session: its id when no line named one yet; NULL: a chain of its own). */
void audit_log_chain(struct audit_log *al, const char *session, struct chain *out);
/* The chain's id (a random one of its own when no session named it). */
const char *audit_log_id(struct audit_log *al);
/* The log file's path as the kernel resolves its descriptor now (malloc'd); NULL for
 * the journal, or when it has none (deleted, unreachable). */
char *audit_log_path(const struct audit_log *al);
/*
 * Write s (signed over this log's chain as audit_log_chain gave it) as the
 * log's last line; *line the bytes written (malloc'd). -1 when the log
 * failed, or moved on since s was made.
 */
int audit_log_write_seal(struct audit_log *al, const struct seal *s, char **line);

#endif
