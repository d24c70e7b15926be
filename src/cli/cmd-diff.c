/*
 * cli/cmd-diff.c — `boxy diff A B [--json]`: what session B did that session
 * A did not (destinations, ports, refusals, findings), and what A did that B
 * no longer does. `boxy run` prints the first half against the last run by
 * itself (daemon/since.h); this compares any two sessions on record, say a
 * CI run before and after a dependency bump.
 *
 * Reads the store only. Everything printed came from a payload (names,
 * paths): the text goes through ui/diff.c, --json escapes it.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/json.h"
#include "common/util.h"
#include "store/store.h"
#include "store/store-since.h"
#include "ui/diff.h"

static void diff_row(void *ctx, int ncol, const char *const *v)
{
	struct diff_rows *d = ctx;

	if (ncol < 4)
		return;
	for (int i = 0; i < 4; i++)
		strv_push(&d->v, v[i] ? v[i] : "");
	d->n++;
}

/* The one session a prefix names, its full id into *id; -1 with *err otherwise. */
static int diff_find(struct store *st, const char *prefix, char **id, char **err)
{
	struct store_sessions ss;
	int rc = 0;

	if (!cmd_session_id_ok(prefix))
		return set_err(err, _("'%s' is not a session id (1 to 16 hex digits)"), prefix);
	if (store_sessions_find(st, prefix, false, &ss, err) < 0)
		return -1;
	if (ss.n == 1)
		*id = xstrdup(ss.v[0].id);
	else
		rc = ss.n == 0 ? set_err(err, _("no session '%s' in the store"), prefix)
			       : set_err(err, _("'%s' names %zu sessions: give more digits"), prefix,
					 ss.n);
	store_sessions_free(&ss);
	return rc;
}

/* One half as a JSON array of {kind, subject, detail, count}. */
static void diff_json_half(struct jbuf *b, const char *key, const struct diff_rows *d)
{
	json_key(b, key);
	json_arr_begin(b);
	for (size_t i = 0; i < d->n; i++) {
		json_obj_begin(b);
		json_kv_str(b, "kind", d->v[4 * i]);
		json_kv_str(b, "subject", d->v[4 * i + 1]);
		json_kv_str(b, "detail", d->v[4 * i + 2]);
		json_kv_int(b, "count", strtoll(d->v[4 * i + 3], NULL, 10));
		json_obj_end(b);
	}
	json_arr_end(b);
}

static int diff_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ 0 },
	};
	struct diff_rows added = { 0 }, gone = { 0 };
	char *a = NULL, *b = NULL, *err = NULL, *head;
	struct store *st;
	bool json = false;
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
			continue;
		}
		return cmd_usage_error(&cmd_diff_entry, _("unknown option '%s'"), argv[optind - 1]);
	}
	if (argc - optind != 2)
		return cmd_usage_error(&cmd_diff_entry, _("takes two session IDs: A (before) and B"));
	for (int i = optind; i < argc; i++)
		if (!cmd_session_id_ok(argv[i]))
			return cmd_usage_error(&cmd_diff_entry,
					       _("'%s' is not a session id (1 to 16 hex digits)"),
					       argv[i]);
	st = cmd_store_open(&err);
	if (!st || diff_find(st, argv[optind], &a, &err) < 0 ||
	    diff_find(st, argv[optind + 1], &b, &err) < 0 ||
	    store_since_query(st, b, a, diff_row, &added, &err) < 0 ||
	    store_since_query(st, a, b, diff_row, &gone, &err) < 0) {
		fprintf(stderr, "boxy diff: %s\n", err);
		free(err);
		rc = 1;
	} else if (json) {
		struct jbuf jb;
		char *s;

		jbuf_init(&jb);
		json_obj_begin(&jb);
		json_kv_str(&jb, "a", a);
		json_kv_str(&jb, "b", b);
		diff_json_half(&jb, "added", &added);
		diff_json_half(&jb, "gone", &gone);
		json_obj_end(&jb);
		s = jbuf_steal(&jb);
		puts(s);
		free(s);
	} else {
		head = xasprintf(_("In %.8s, not in %.8s:"), b, a);
		diff_print_half(head, &added);
		free(head);
		head = xasprintf(_("In %.8s, no longer in %.8s:"), a, b);
		diff_print_half(head, &gone);
		free(head);
	}
	if (st)
		store_close(st);
	strv_free(added.v);
	strv_free(gone.v);
	free(a);
	free(b);
	return rc;
}

const struct cmd_entry cmd_diff_entry = {
	"diff", N_("what one session did that another did not"),
	N_("Usage: boxy diff [--json] A B\n"
	   "What session B did that session A did not — destinations and ports it\n"
	   "reached, refusals it met, findings it raised — and what A did that B no\n"
	   "longer does. `boxy run` prints the first half against the last run of the\n"
	   "same command in the same directory by itself.\n"
	   "\n"
	   "  --json   {a, b, added: [...], gone: [...]}, each item {kind, subject,\n"
	   "           detail, count}\n"),
	diff_run,
};
