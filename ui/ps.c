/*
 * ui/ps.c — `boxy ps` as a table:
 *
 *   ID        STATE    EXIT  STARTED              COMMAND
 *   3f2a9c0d  exited      1  2026-12-01 22:00:01  sh -c …
 *
 * or, with --json, the sessions as one JSON array (store_session_json). The
 * command line is the stored argv made readable (ps_argv_line, which show and
 * top print too); every string from the store passes the screen sanitizer.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ui/ps.h"
#include "ui/watch.h"
#include "common/util.h"

/* A stored time as local "YYYY-MM-DD HH:MM:SS". */
static void ps_format_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);

	strftime(buf, len, "%Y-%m-%d %H:%M:%S", localtime(&t));
}

/* The argv JSON array as one readable line (boxy wrote it; still sanitized). */
char *ps_argv_line(const char *json)
{
	char *clean = watch_sanitize(json), *out = xmalloc(strlen(clean) + 1), *o = out;
	bool in = false;

	for (const char *p = clean; *p; p++) {
		if (*p == '"' && (p == clean || p[-1] != '\\')) {
			in = !in;
			continue;
		}
		if (!in && (*p == '[' || *p == ']'))
			continue;
		if (!in && *p == ',') {
			*o++ = ' ';
			continue;
		}
		if (!in && *p == ' ')
			continue;       /* JSON's own spacing, not the command's */
		if (*p == '\\' && p[1] == 'u' && strspn(p + 2, "0123456789abcdefABCDEF") >= 4) {
			p += 5;         /* \\uXXXX: the writer escapes only controls; a space */
			*o++ = ' ';
			continue;
		}
		if (*p == '\\' && p[1] && strchr("nrtbf", p[1])) {
			p++;
			*o++ = ' ';
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		*o++ = *p;
	}
	*o = '\0';
	free(clean);
	return out;
}

/* One session as a table row. */
static void ps_print_row(FILE *out, const struct store_session *s)
{
	char when[32], code[16] = "-", *cmd = ps_argv_line(s->argv_json);

	ps_format_time(s->started_ms, when, sizeof(when));
	if (s->ended_ms && strcmp(s->state, "lost") != 0)
		snprintf(code, sizeof(code), "%d", s->exit_code);
	char *sid = watch_sanitize(s->id), *state = watch_sanitize(s->state);

	fprintf(out, "%.8s  %-7s  %4s  %-19s  %s\n", sid, state, code, when, cmd);
	free(sid);
	free(state);
	free(cmd);
}

/* The sessions of ss as the table or the JSON array. */
void ps_print(FILE *out, const struct store_sessions *ss, bool json)
{
	if (json)
		fputc('[', out);
	else if (ss->n)
		fprintf(out, "%-8s  %-7s  %4s  %-19s  %s\n", "ID", "STATE", "EXIT", "STARTED",
			"COMMAND");
	for (size_t i = 0; i < ss->n; i++) {
		if (json) {
			char *j = store_session_json(&ss->v[i]);

			fprintf(out, "%s%s", i ? "," : "", j);
			free(j);
		} else {
			ps_print_row(out, &ss->v[i]);
		}
	}
	if (json)
		fputs("]\n", out);
}
