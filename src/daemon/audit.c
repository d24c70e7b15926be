/*
 * daemon/audit.c — the --audit-log writer: one JSON object per line, one line per
 * policy decision, written with a single write(2) so that lines never
 * interleave even when several writers share the file.
 *
 * Each line ends with its place in the writer's chain (common/chain.h):
 * "seq" (1, 2, ...) and "prev", the SHA-256 of the previous line's bytes.
 * The chain is the session's ("session" field); a --no-daemon run, which has
 * no session, names a random one ("chain" field). audit_log_write_seal adds
 * the signed last line (doc/verify.md).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "daemon/audit.h"
#include "daemon/journal.h"
#include "common/json.h"
#include "common/util.h"

struct audit_log {
	int fd;
	bool failed;        /* a write failed once: say so once, then stop trying */
	bool chained;       /* the chain has its id (from the first line, or the seal) */
	bool own_id;        /* no session: the id is the writer's, written as "chain" */
	bool journal;       /* --audit-log journal: entries to the journal, no file, no chain */
	char id[33];
	struct chain chain;
};

/* Give the chain its id: the session's, or (none) a random one of our own. */
static void audit_chain_start(struct audit_log *al, const char *session)
{
	unsigned char r[8];

	if (al->chained)
		return;
	if (session) {
		snprintf(al->id, sizeof(al->id), "%s", session);
	} else {
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			fatal_errno("getrandom");
		chain_hex(r, sizeof(r), al->id);
		al->own_id = true;
	}
	chain_audit_init(&al->chain, al->id);
	al->chained = true;
}

/* Close line b with its chain fields and write it; the chain advances only when it was written. */
static void audit_write_line(struct audit_log *al, struct jbuf *b)
{
	char prev[CHAIN_HEX_LEN + 1], *line;

	chain_hex(al->chain.head, CHAIN_HASH_LEN, prev);
	json_kv_uint(b, "seq", al->chain.n + 1);
	json_kv_str(b, "prev", prev);
	json_obj_end(b);
	jbuf_raw(b, "\n");
	line = jbuf_steal(b);
	if (write_all(al->fd, line, strlen(line)) < 0) {
		al->failed = true;
		warnx_("audit log: write failed; further decisions are not recorded in it");
	} else {
		chain_audit_step(&al->chain, line, strlen(line));
	}
	free(line);
}

/* The line's opening: time and whose chain it is. */
static void audit_line_begin(struct audit_log *al, struct jbuf *b, uint64_t t_ms)
{
	jbuf_init(b);
	json_obj_begin(b);
	json_kv_uint(b, "t", t_ms);
	json_kv_str(b, al->own_id ? "chain" : "session", al->id);
}

struct audit_log *audit_log_create(int fd)
{
	struct audit_log *al = xcalloc(1, sizeof(*al));

	al->fd = fd;
	return al;
}

struct audit_log *audit_log_create_journal(void)
{
	struct audit_log *al = audit_log_create(-1);

	al->journal = true;
	return al;
}

bool audit_log_is_journal(const struct audit_log *al)
{
	return al && al->journal;
}

void audit_log_free(struct audit_log *al)
{
	if (!al)
		return;
	if (al->fd >= 0)
		close(al->fd);
	free(al);
}

/*
 * "process": who made the decision (doc/attribution.md) — its pid in the
 * sandbox, comm, argv0, command line, and the package a package manager ran
 * it for ("claimed": only the process's own word); {"unknown": true} when it
 * was looked for and not found. Absent when it was not looked for.
 */
static void audit_who(struct jbuf *b, const struct event_who *w)
{
	json_key(b, "process");
	json_obj_begin(b);
	if (!w->found) {
		json_kv_bool(b, "unknown", true);
		json_obj_end(b);
		return;
	}
	json_kv_uint(b, "pid", w->pid);
	json_kv_str(b, "comm", w->comm);
	json_kv_str(b, "argv0", w->argv0);
	json_kv_str(b, "cmdline", w->cmdline);
	if (w->package && w->package[0]) {
		json_kv_str(b, "package", w->package);
		json_kv_str(b, "version", w->version);
		json_kv_str(b, "script", w->script);
		if (w->via && w->via[0])
			json_kv_str(b, "via", w->via);
		json_kv_bool(b, "claimed", w->claimed);
	}
	json_obj_end(b);
}

static void audit_emit(void *ctx, const struct event *ev)
{
	struct audit_log *al = ctx;
	struct jbuf b;

	if (strcmp(ev->kind, "audit") != 0 || al->failed)
		return;
	if (al->journal) {
		if (journal_send_event(ev) < 0) {
			al->failed = true;
			warnx_("audit log: the journal refused an entry (%s); further decisions are "
			       "not sent to it", strerror(errno));
		}
		return;
	}
	if (al->fd < 0)
		return;
	audit_chain_start(al, ev->session);
	audit_line_begin(al, &b, ev->t_ms);
	json_kv_str(&b, "layer", ev->layer);
	json_kv_str(&b, "verdict", ev->verdict);
	json_kv_str(&b, "subject", ev->subject);
	json_kv_str(&b, "reason", ev->detail);
	if (ev->who)
		audit_who(&b, ev->who);
	audit_write_line(al, &b);
}

const char *audit_log_id(struct audit_log *al)
{
	audit_chain_start(al, NULL);
	return al->id;
}

char *audit_log_path(const struct audit_log *al)
{
	char link[64], buf[4096];
	ssize_t n;

	if (!al || al->journal || al->fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", al->fd);
	n = readlink(link, buf, sizeof(buf));
	if (n <= 0 || (size_t)n >= sizeof(buf) || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		return NULL;
	return xstrdup(buf);
}

void audit_log_chain(struct audit_log *al, const char *session, struct chain *out)
{
	audit_chain_start(al, session);
	*out = al->chain;
}

int audit_log_write_seal(struct audit_log *al, const struct seal *s, char **line_out)
{
	char *line;

	*line_out = NULL;
	if (al->fd < 0 || al->failed || !al->chained || strcmp(al->id, s->id) != 0 ||
	    s->audit.n != al->chain.n ||
	    memcmp(s->audit.head, al->chain.head, CHAIN_HASH_LEN) != 0)
		return -1;
	line = seal_line(s, al->own_id, al->chain.n + 1);
	if (write_all(al->fd, line, strlen(line)) < 0) {
		al->failed = true;
		warnx_("audit log: writing its seal failed");
		free(line);
		return -1;
	}
	chain_audit_step(&al->chain, line, strlen(line));
	*line_out = line;
	return 0;
}

struct event_sink audit_log_sink(struct audit_log *al)
{
	struct event_sink s = { .emit = audit_emit, .ctx = al };

	return s;
}
