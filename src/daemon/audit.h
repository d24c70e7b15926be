/*
 * daemon/audit.h — --audit-log: one JSON object per line for each policy decision.
 *   {"t":1700000000123,"session":"9f3c1ba2","layer":"cgroup","verdict":"degraded",
 *    "subject":"memory","reason":"..."}
 */
#ifndef BOXY_AUDIT_H
#define BOXY_AUDIT_H

#include "common/event.h"

struct audit_log;

/* Takes ownership of fd. */
struct audit_log *audit_log_create(int fd);
void audit_log_free(struct audit_log *al);
/* An event_sink that writes audit events (kind "audit") to al; others are ignored. */
struct event_sink audit_log_sink(struct audit_log *al);

#endif
