/*
 * cli/boxy.c — the boxy binary's entry point: global options, then dispatch to
 * one cmd-*.c entry per subcommand.
 */
#include <config.h>

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client/client.h"
#include "cli/cmd.h"
#include "common/util.h"

static const struct cmd_entry *const commands[] = {
	&cmd_run_entry, &cmd_watch_entry, &cmd_top_entry, &cmd_ps_entry, &cmd_show_entry,
	&cmd_attach_entry, &cmd_stop_entry, &cmd_resume_entry, &cmd_doctor_entry,
	&cmd_profile_entry,
	&cmd_diff_entry, &cmd_prune_entry, &cmd_logs_entry, &cmd_wait_entry, &cmd_daemon_entry,
	&cmd_verify_entry,
};

static void usage(FILE *f)
{
	fprintf(f, _("Usage: boxy COMMAND [ARGS...]\n"
		     "Run an untrusted program with its project directory and nothing else.\n\n"
		     "Commands:\n"));
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-9s %s\n", commands[i]->name, _(commands[i]->summary));
	fprintf(f, _("\n  boxy COMMAND --help   options of one command\n"
		     "  boxy --version        the build\n\n"
		     "See boxy(1).\n"));
}

/*
 * Whether the command line asks for --json (before any "--": after it the
 * words are the payload's). Output for scripts is not translated: doctor's
 * details and the error fields stay as doc/json.md shows them.
 */
static bool args_want_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	if (args_want_json(argc, argv))
		setlocale(LC_MESSAGES, "C");    /* C, not C.UTF-8: only C makes gettext ignore LANGUAGE */
	bindtextdomain(PACKAGE, LOCALEDIR);
	textdomain(PACKAGE);

	if (argc < 2) {
		usage(stderr);
		return EXIT_BOXY_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		/* The id the daemon compares (client/client.c build_id), not the configure-time one. */
		printf("boxy %s (build %s)\n", PACKAGE_VERSION, build_id());
		return 0;
	}
	/* Hidden from usage: the build runs it to make the shells' completion files. */
	if (strcmp(argv[1], "completion") == 0)
		return completion_main(argc - 1, argv + 1, commands, ARRAY_SIZE(commands));
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[1], commands[i]->name) == 0) {
			/* run parses its own --help: after the command, --help is the command's. */
			if (commands[i] != &cmd_run_entry &&
			    cmd_wants_help(commands[i], argc - 1, argv + 1))
				return 0;
			return commands[i]->run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, _("boxy: unknown command '%s'\nTry 'boxy --help'.\n"), argv[1]);
	return EXIT_BOXY_USAGE;
}
