/*
 * daemon/audit.c — the --audit-log writer: one JSON object per line, one line per
 * policy decision, written with a single write(2) so that lines never
 * interleave even when several writers share the file.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/audit.h"
#include "common/json.h"
#include "common/util.h"

struct audit_log {
	int fd;
	bool failed;        /* a write failed once: say so once, then stop trying */
};

struct audit_log *audit_log_create(int fd)
{
	struct audit_log *al = xcalloc(1, sizeof(*al));

	al->fd = fd;
	return al;
}

void audit_log_free(struct audit_log *al)
{
	if (!al)
		return;
	if (al->fd >= 0)
		close(al->fd);
	free(al);
}

static void audit_emit(void *ctx, const struct event *ev)
{
	struct audit_log *al = ctx;
	struct jbuf b;
	char *line;

	if (strcmp(ev->kind, "audit") != 0 || al->fd < 0 || al->failed)
		return;
	jbuf_init(&b);
	json_obj_begin(&b);
	json_kv_uint(&b, "t", ev->t_ms);
	if (ev->session)
		json_kv_str(&b, "session", ev->session);
	json_kv_str(&b, "layer", ev->layer);
	json_kv_str(&b, "verdict", ev->verdict);
	json_kv_str(&b, "subject", ev->subject);
	json_kv_str(&b, "reason", ev->detail);
	json_obj_end(&b);
	jbuf_raw(&b, "\n");
	line = jbuf_steal(&b);
	if (write_all(al->fd, line, strlen(line)) < 0) {
		al->failed = true;
		warnx_("audit log: write failed; further decisions are not recorded in it");
	}
	free(line);
}

struct event_sink audit_log_sink(struct audit_log *al)
{
	struct event_sink s = { .emit = audit_emit, .ctx = al };

	return s;
}
