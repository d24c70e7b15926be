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
#include "spec/profile.h"
#include "spec/runspec.h"
#include "ui/profile.h"
#include "common/util.h"

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

static int profile_cmd_run(int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_profile_entry, _("missing subcommand: list, show or check"));
	if (strcmp(argv[1], "list") == 0)
		return profile_cmd_list(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return profile_cmd_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return profile_cmd_check(argc - 1, argv + 1);
	return cmd_usage_error(&cmd_profile_entry, _("unknown subcommand '%s': expected list, "
						     "show or check"), argv[1]);
}

const struct cmd_entry cmd_profile_entry = {
	"profile", N_("list, show or check YAML profiles"),
	N_("Usage: boxy profile list [--json]\n"
	   "       boxy profile show [--json] [-w DIR] NAME|PATH\n"
	   "       boxy profile check NAME|PATH\n"
	   "\n"
	   "  list         every profile a NAME can reach, and where it comes from\n"
	   "      --json   as a JSON array of {name, from, path, hides_preset}\n"
	   "  show         the profile as a run gets it: after extends: and expansion of\n"
	   "               ~, {workdir} and {workdir_slug}, before any flag\n"
	   "      --json   the run-spec as JSON (environment values are not shown)\n"
	   "  -w, --workdir DIR  expand {workdir} as DIR (default: the current directory)\n"
	   "  check        validate a profile: prints \"PATH: ok\", or the error as\n"
	   "               FILE:LINE:COLUMN: message and exits 2\n"
	   "\n"
	   "A NAME (no '/', no .yaml or .yml) is looked up in $XDG_CONFIG_HOME/boxy/\n"
	   "profiles (default ~/.config/boxy/profiles), then the installed presets, then\n"
	   "the presets built into boxy: generic, node, python, offline, claude.\n"
	   "Anything else is a path. The format is described in doc/profiles.md.\n"),
	profile_cmd_run,
};
