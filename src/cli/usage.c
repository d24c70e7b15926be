/*
 * cli/usage.c — the usage helpers every command calls (cli/cmd.h): --help
 * before "--", and a usage error in one line plus where to read more. Here,
 * not in cli/boxy.c, so that the commands depend on this file and boxy.c on
 * the commands, and no circle runs through the entry point.
 */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/util.h"

/* True when argv has -h/--help before "--"; prints the command's usage to stdout. */
int cmd_wants_help(const struct cmd_entry *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(_(c->usage), stdout);
			return 1;
		}
	}
	return 0;
}

/* "boxy SUB: MESSAGE" and "Try 'boxy SUB --help'." on stderr; returns EXIT_BOXY_USAGE. */
int cmd_usage_error(const struct cmd_entry *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "boxy %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, _("\nTry 'boxy %s --help'.\n"), c->name);
	return EXIT_BOXY_USAGE;
}
