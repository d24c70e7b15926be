/*
 * daemon/journal.h — `--audit-log journal`: each decision to the systemd
 * journal as structured fields (doc/journal.md), for the log pipeline a
 * fleet already runs.
 */
#ifndef BOXY_JOURNAL_H
#define BOXY_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/event.h"

/* The --audit-log value (and profile key) that means the journal, not a file. */
#define JOURNAL_TARGET "journal"
/* At most this many fields per entry; each value cut to JOURNAL_VALUE_MAX bytes. */
#define JOURNAL_FIELDS_MAX 24
#define JOURNAL_VALUE_MAX  4096

/* True when this build can write to the journal (libsystemd at configure time). */
bool journal_available(void);
/* The fixed MESSAGE_ID (32 hex digits) of a verdict; unknown verdicts share one. */
const char *journal_message_id(const char *verdict);
/* The syslog priority of a verdict (alert 2, deny 4, degraded 5, the rest 6). */
int journal_priority(const char *verdict);
/*
 * The entry for ev as "FIELD=value" strings (malloc'd, *n of them, at most
 * JOURNAL_FIELDS_MAX), in a fixed order; pure, for the sender and the tests.
 */
void journal_fields(const struct event *ev, char **out, size_t *n);
void journal_fields_free(char **f, size_t n);
/* Send ev to the journal; -1 with errno when it cannot (no journal, no libsystemd). */
int journal_send_event(const struct event *ev);

#endif
