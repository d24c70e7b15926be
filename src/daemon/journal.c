/*
 * daemon/journal.c — the journal sink of --audit-log journal. The fields are
 * built by a pure function (journal_fields, unit-tested) and sent with
 * sd_journal_sendv, which writes one datagram to the journal's socket
 * (/run/systemd/journal/socket); journald adds its own trusted fields (_UID,
 * _PID, _HOSTNAME, ...). Values are passed as bytes: journald stores any,
 * newlines included, so a hostile path cannot forge another field.
 * The MESSAGE_IDs below were generated once and never change (doc/journal.md).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

#include "common/util.h"
#include "daemon/journal.h"

/* One MESSAGE_ID per kind of decision. */
static const struct {
	const char *verdict, *id;
	int priority;
} journal_kinds[] = {
	{ "deny", "bd44002c939d4d17bc721dfeb750d3a0", 4 },
	{ "allow", "d4b5c9f0cc364b1388a1a5c845e2c585", 6 },
	{ "degraded", "daa3422c59234aab959fbba33caeb43f", 5 },
	{ "alert", "bdb21d4a1de04c78bd3231c0cac1576a", 2 },
	{ "info", "5b25cc8f71ce48a49f24a2eb5abc4b13", 6 },
	{ "action", "bcb256c869114936ac1fa9c663b8474c", 6 },
	{ "skipped", "ff407536603944ad9b762435dfd511ac", 6 },
};
#define JOURNAL_OTHER_ID "1d2d9ca40a2747818f471cd828fc8354"

bool journal_available(void)
{
#ifdef HAVE_SYSTEMD
	return true;
#else
	return false;
#endif
}

const char *journal_message_id(const char *verdict)
{
	for (size_t i = 0; verdict && i < ARRAY_SIZE(journal_kinds); i++)
		if (strcmp(journal_kinds[i].verdict, verdict) == 0)
			return journal_kinds[i].id;
	return JOURNAL_OTHER_ID;
}

int journal_priority(const char *verdict)
{
	for (size_t i = 0; verdict && i < ARRAY_SIZE(journal_kinds); i++)
		if (strcmp(journal_kinds[i].verdict, verdict) == 0)
			return journal_kinds[i].priority;
	return 6;
}

/* "NAME=value", the value cut to JOURNAL_VALUE_MAX bytes, never inside a UTF-8 sequence
 * (a cut one makes `journalctl -o json` print the field as an array of numbers, which
 * a pipeline expecting a string may drop) (NULL: empty). */
static char *field(const char *name, const char *value)
{
	size_t n = value ? strlen(value) : 0;

	if (n > JOURNAL_VALUE_MAX) {
		n = JOURNAL_VALUE_MAX;
		while (n > 0 && ((unsigned char)value[n] & 0xc0) == 0x80)
			n--;
	}
	return xasprintf("%s=%.*s", name, (int)n, value ? value : "");
}

void journal_fields(const struct event *ev, char **out, size_t *n)
{
	char *msg = xasprintf("boxy: %s %s %s: %s", ev->layer ? ev->layer : "-",
			      ev->verdict ? ev->verdict : "-", ev->subject ? ev->subject : "-",
			      ev->detail ? ev->detail : "");
	char num[24];

	*n = 0;
	out[(*n)++] = field("MESSAGE", msg);
	out[(*n)++] = field("MESSAGE_ID", journal_message_id(ev->verdict));
	out[(*n)++] = xasprintf("PRIORITY=%d", journal_priority(ev->verdict));
	out[(*n)++] = field("SYSLOG_IDENTIFIER", "boxy");
	out[(*n)++] = field("BOXY_SESSION", ev->session);
	out[(*n)++] = field("BOXY_LAYER", ev->layer);
	out[(*n)++] = field("BOXY_VERDICT", ev->verdict);
	out[(*n)++] = field("BOXY_SUBJECT", ev->subject);
	out[(*n)++] = field("BOXY_REASON", ev->detail);
	/* The package whose script made it (doc/attribution.md), "" when none or not known. */
	{
		const struct event_who *w = ev->who;
		bool pkg = w && w->found && w->package && w->package[0];
		char *name = pkg ? xasprintf("%s%s%s", w->package, w->version && w->version[0] ?
					     "@" : "", w->version ? w->version : "") : NULL;

		out[(*n)++] = field("BOXY_PACKAGE", name);
		free(name);
		if (pkg && w->script && w->script[0])
			out[(*n)++] = field("BOXY_PACKAGE_SCRIPT", w->script);
		if (pkg && w->claimed)
			out[(*n)++] = field("BOXY_PACKAGE_CLAIMED", "1");
		if (w && w->found) {
			snprintf(num, sizeof(num), "%u", w->pid);
			out[(*n)++] = field("BOXY_PID", num);
			out[(*n)++] = field("BOXY_COMM", w->comm);
		} else if (w) {
			out[(*n)++] = field("BOXY_PID", "unknown");
		}
	}
	/* Empty until the policy names the rule (profile entry, flag) that matched. */
	out[(*n)++] = field("BOXY_RULE", NULL);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)ev->t_ms);
	out[(*n)++] = field("BOXY_T_MS", num);
	if (ev->host)
		out[(*n)++] = field("BOXY_HOST", ev->host);
	if (ev->addr)
		out[(*n)++] = field("BOXY_ADDR", ev->addr);
	free(msg);
}

void journal_fields_free(char **f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i]);
}

int journal_send_event(const struct event *ev)
{
#ifdef HAVE_SYSTEMD
	char *f[JOURNAL_FIELDS_MAX];
	struct iovec iov[JOURNAL_FIELDS_MAX];
	size_t n = 0;
	int r;

	journal_fields(ev, f, &n);
	for (size_t i = 0; i < n; i++)
		iov[i] = (struct iovec){ .iov_base = f[i], .iov_len = strlen(f[i]) };
	r = sd_journal_sendv(iov, (int)n);
	journal_fields_free(f, n);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
#else
	(void)ev;
	errno = ENOSYS;
	return -1;
#endif
}
