/*
 * cmd-later.c — the subcommands whose machinery is not built yet (boxy top,
 * the full-screen dashboard). They parse nothing, say so in one line, and
 * exit non-zero: they never pretend to have worked.
 */
#include <config.h>

#include <stdio.h>

#include "cmd.h"
#include "util.h"

#define LATER_EXIT 125

static int later(const char *what)
{
	fprintf(stderr, _("boxy %s: not available yet: this build does not have it "
			  "(boxy watch follows one session)\n"), what);
	return LATER_EXIT;
}

static int run_top(int argc, char **argv) { (void)argc; (void)argv; return later("top"); }

const struct cmd_entry cmd_top_entry = {
	"top", N_("full-screen dashboard of sessions and connections"),
	N_("Usage: boxy top\n(Not in this build yet: boxy watch follows one session.)\n"),
	run_top,
};
