/*
 * cli/cmd-profile.c — `boxy profile list | show NAME|PATH [--json] | check PATH`.
 *
 * list says which profiles a NAME can reach and where each comes from; show
 * prints a profile as a run would get it (after extends: and expansion, but
 * before any flag), so a user can read exactly what a preset grants; check
 * validates a file and prints either "PATH: ok" or the one error line, for
 * editors and CI. A broken profile exits 2, like a bad flag.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "common/json.h"
#include "spec/learn.h"
#include "spec/profile.h"
#include "spec/runspec.h"
#include "store/store.h"
#include "store/store-learn.h"
#include "ui/profile.h"
#include "ui/ps.h"
#include "common/util.h"

/* What the store's rows of one session are fed into. */
struct learn_feed {
	struct learn *l;
	const char *id;
	char *mode;
};

/* The caller's home: $HOME when absolute, else the password database. */
static const char *caller_home(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home && home[0] == '/')
		return home;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* Fill ctx from the environment; workdir from -w or the cwd. *own is freed by the caller. */
static int ctx_init(struct profile_ctx *ctx, const char *workdir, char **own)
{
	*own = path_absolute(workdir ? workdir : ".", NULL);
	if (!*own) {
		fprintf(stderr, _("boxy profile: cannot find the current directory: %s\n"),
			strerror(errno));
		return -1;
	}
	ctx->home = caller_home();
	ctx->workdir = *own;
	return 0;
}

/* The list as one JSON array: name, from, path (null when built in), hides_preset. */
static void profile_print_list_json(const struct profile_info *v, size_t n)
{
	struct jbuf b;
	char *s;

	jbuf_init(&b);
	json_arr_begin(&b);
	for (size_t i = 0; i < n; i++) {
		json_obj_begin(&b);
		json_kv_str(&b, "name", v[i].name);
		json_kv_str(&b, "from", profile_source_name(v[i].source));
		json_kv_str(&b, "path", v[i].path);
		json_kv_bool(&b, "hides_preset", v[i].hides_lower);
		json_obj_end(&b);
	}
	json_arr_end(&b);
	s = jbuf_steal(&b);
	puts(s);
	free(s);
}

static int profile_cmd_list(int argc, char **argv)
{
	struct profile_ctx ctx = { 0 };
	struct profile_info *v;
	size_t n;
	char *own, *udir;

	bool json = argc == 2 && strcmp(argv[1], "--json") == 0;

	if (argc > 2 || (argc == 2 && !json))
		return cmd_usage_error(&cmd_profile_entry, _("list takes no arguments but --json"));
	if (ctx_init(&ctx, NULL, &own) < 0)
		return EXIT_BOXY_FAILED;
	profile_list(&ctx, &v, &n);
	if (json) {
		profile_print_list_json(v, n);
		profile_info_free(v, n);
		free(own);
		return 0;
	}
	udir = profile_user_dir(&ctx);
	profile_print_table(stdout, v, n, udir);
	free(udir);
	profile_info_free(v, n);
	free(own);
	return 0;
}

static int profile_cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "workdir", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct profile_ctx ctx = { 0 };
	struct runspec rs;
	const char *workdir = NULL;
	bool json = false;
	char *own, *err = NULL;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jw:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'w':
			workdir = optarg;
			break;
		default:
			return cmd_usage_error(&cmd_profile_entry, _("show: unknown option '%s'"),
					       argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_profile_entry, _("show takes one NAME or PATH"));
	if (ctx_init(&ctx, workdir, &own) < 0)
		return EXIT_BOXY_FAILED;
	runspec_init(&rs);
	if (profile_load(argv[optind], &ctx, &rs, &err) < 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		runspec_free(&rs);
		free(own);
		return EXIT_BOXY_USAGE;
	}
	if (json) {
		char *j = runspec_to_json(&rs);

		printf("%s\n", j);
		free(j);
	} else {
		printf(_("profile      %s\n"), argv[optind]);
		printf(_("workdir      %s\n"), own);
		profile_print_runspec(stdout, &rs);
	}
	runspec_free(&rs);
	free(own);
	return 0;
}

static int profile_cmd_check(int argc, char **argv)
{
	struct profile_ctx ctx = { 0 };
	struct runspec rs;
	char *own, *err = NULL;
	int rc = 0;

	if (argc != 2)
		return cmd_usage_error(&cmd_profile_entry, _("check takes one PATH"));
	if (ctx_init(&ctx, NULL, &own) < 0)
		return EXIT_BOXY_FAILED;
	runspec_init(&rs);
	if (profile_load(argv[1], &ctx, &rs, &err) < 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		rc = EXIT_BOXY_USAGE;
	} else {
		printf(_("%s: ok\n"), argv[1]);
	}
	runspec_free(&rs);
	free(own);
	return rc;
}

/* A row of STORE_LEARN_CONNS into the learner. */
static void learn_conn_row(void *ctx, int ncol, const char *const *v)
{
	struct learn_feed *feed = ctx;
	unsigned long port;

	if (ncol < 8 || !v[0] || !v[1] || !v[5])
		return;
	port = strtoul(v[5], NULL, 10);
	learn_add_conn(feed->l, feed->id, ncol > 8 ? v[8] : NULL, v[0], v[2], v[3], v[4],
		       port > 65535 ? 0 : (unsigned)port, strcmp(v[1], "allow") == 0, v[6],
		       v[7] ? strtoll(v[7], NULL, 10) : 1);
}

/* A row of STORE_LEARN_NAMES into the learner. */
static void learn_name_row(void *ctx, int ncol, const char *const *v)
{
	struct learn_feed *feed = ctx;

	if (ncol < 4 || !v[0] || !v[1])
		return;
	learn_add_name(feed->l, feed->id, ncol > 4 ? v[4] : NULL, v[0], strcmp(v[1], "allow") == 0,
		       v[2], v[3] ? strtoll(v[3], NULL, 10) : 1);
}

/* A row of STORE_LEARN_CIDRS into the learner. */
static void learn_cidr_row(void *ctx, int ncol, const char *const *v)
{
	struct learn_feed *feed = ctx;

	if (ncol >= 1 && v[0])
		learn_add_cidr(feed->l, feed->id, v[0]);
}

/* The policy row: tailscale and the mode. */
static void learn_policy_row(void *ctx, int ncol, const char *const *v)
{
	struct learn_feed *feed = ctx;

	if (ncol < 2)
		return;
	if (v[0] && strcmp(v[0], "1") == 0)
		learn_add_tailscale(feed->l, feed->id);
	free(feed->mode);
	feed->mode = xstrdup(v[1] ? v[1] : "");
}

/* Feed one session (by id prefix) into l; -1 with *err for an unknown or ambiguous id. */
static int learn_session(struct store *st, struct learn *l, const char *prefix, char **err)
{
	static const struct {
		enum store_learn_query q;
		void (*row)(void *, int, const char *const *);
	} queries[] = {
		{ STORE_LEARN_POLICY, learn_policy_row },
		{ STORE_LEARN_NAMES, learn_name_row },
		{ STORE_LEARN_CONNS, learn_conn_row },
		{ STORE_LEARN_CIDRS, learn_cidr_row },
	};
	struct store_sessions ss;
	struct learn_feed feed = { l, NULL, NULL };
	char *command;
	int rc = 0;

	if (!cmd_session_id_ok(prefix))
		return set_err(err, _("'%s' is not a session id (1 to 16 hex digits)"), prefix);
	if (store_sessions_find(st, prefix, false, &ss, err) < 0)
		return -1;
	if (ss.n != 1) {
		rc = ss.n == 0 ? set_err(err, _("no session '%s' in the store"), prefix)
			       : set_err(err, _("'%s' names %zu sessions: give more digits"), prefix,
					 ss.n);
		store_sessions_free(&ss);
		return rc;
	}
	feed.id = ss.v[0].id;
	if (strcmp(ss.v[0].state, "running") == 0) {
		store_sessions_free(&ss);
		return set_err(err, _("session %.8s is still running: learn from it when it ends"),
			       prefix);
	}
	for (size_t i = 0; rc == 0 && i < sizeof(queries) / sizeof(queries[0]); i++) {
		rc = store_learn_query(st, queries[i].q, feed.id, queries[i].row, &feed, err);
		if (rc == 0 && queries[i].q == STORE_LEARN_POLICY) {
			command = ps_argv_line(ss.v[0].argv_json);
			learn_add_session(l, feed.id, command, ss.v[0].profile, feed.mode);
			free(command);
		}
	}
	free(feed.mode);
	store_sessions_free(&ss);
	return rc;
}

static int profile_cmd_learn(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "extends", required_argument, NULL, 'x' },
		{ 0 },
	};
	const char *extends = NULL;
	struct learn *l;
	struct store *st;
	char *err = NULL, *yaml;
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		if (c == 'x') {
			extends = optarg;
			continue;
		}
		return cmd_usage_error(&cmd_profile_entry, _("learn: unknown option '%s'"),
				       argv[optind - 1]);
	}
	if (optind >= argc)
		return cmd_usage_error(&cmd_profile_entry, _("learn takes one or more session IDs"));
	if (extends && (!*extends || strpbrk(extends, "\n\r\t\"\\"))) {
		return cmd_usage_error(&cmd_profile_entry,
				       _("learn: --extends takes a profile NAME or PATH"));
	}
	st = cmd_store_open(&err);
	if (!st) {
		fprintf(stderr, "boxy profile learn: %s\n", err);
		free(err);
		return 1;
	}
	l = learn_new();
	for (int i = optind; rc == 0 && i < argc; i++)
		if (learn_session(st, l, argv[i], &err) < 0) {
			fprintf(stderr, "boxy profile learn: %s\n", err);
			free(err);
			rc = cmd_session_id_ok(argv[i]) ? 1 : EXIT_BOXY_USAGE;     /* as show */
		}
	store_close(st);
	if (rc == 0) {
		yaml = learn_yaml(l, extends);
		fputs(yaml, stdout);
		free(yaml);
		if (fflush(stdout) != 0) {
			fprintf(stderr, _("boxy profile learn: cannot write: %s\n"), strerror(errno));
			rc = EXIT_BOXY_FAILED;
		}
	}
	learn_free(l);
	return rc;
}

static int profile_cmd_run(int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_profile_entry,
				       _("missing subcommand: list, show, check or learn"));
	if (strcmp(argv[1], "list") == 0)
		return profile_cmd_list(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return profile_cmd_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return profile_cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "learn") == 0)
		return profile_cmd_learn(argc - 1, argv + 1);
	return cmd_usage_error(&cmd_profile_entry, _("unknown subcommand '%s': expected list, "
						     "show, check or learn"), argv[1]);
}

const struct cmd_entry cmd_profile_entry = {
	"profile", N_("list, show, check or learn YAML profiles"),
	N_("Usage: boxy profile list [--json]\n"
	   "       boxy profile show [--json] [-w DIR] NAME|PATH\n"
	   "       boxy profile check NAME|PATH\n"
	   "       boxy profile learn [--extends NAME|PATH] ID [ID...]\n"
	   "\n"
	   "  list         every profile a NAME can reach, and where it comes from\n"
	   "      --json   as a JSON array of {name, from, path, hides_preset}\n"
	   "  show         the profile as a run gets it: after extends: and expansion of\n"
	   "               ~, {workdir} and {workdir_slug}, before any flag\n"
	   "      --json   the run-spec as JSON (environment values are not shown)\n"
	   "  -w, --workdir DIR  expand {workdir} as DIR (default: the current directory)\n"
	   "  check        validate a profile: prints \"PATH: ok\", or the error as\n"
	   "               FILE:LINE:COLUMN: message and exits 2\n"
	   "  learn        print a profile that allows exactly the names and ports the\n"
	   "               sessions reached (allowlist mode), each entry commented with\n"
	   "               the session that needed it; refusals are listed, not learned\n"
	   "      --extends NAME  the profile it builds on (default: the sessions' own,\n"
	   "               when they share a named one, else generic)\n"
	   "\n"
	   "A NAME (no '/', no .yaml or .yml) is looked up in $XDG_CONFIG_HOME/boxy/\n"
	   "profiles (default ~/.config/boxy/profiles), then the installed presets, then\n"
	   "the presets built into boxy: generic, node, python, offline, claude.\n"
	   "Anything else is a path. The format is described in doc/profiles.md.\n"),
	profile_cmd_run,
};
