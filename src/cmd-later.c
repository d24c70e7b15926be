/*
 * cmd-later.c — the subcommands whose machinery (the per-user daemon and
 * its session store) is not built yet. They parse nothing, say so in one
 * line, and exit non-zero: they never pretend to have worked.
 */
#include <config.h>

#include <stdio.h>

#include "cmd.h"
#include "util.h"

#define LATER_EXIT 125

static int later(const char *what)
{
	fprintf(stderr, _("boxy %s: not available yet: it needs the per-user daemon and its "
			  "session store, which this build does not have yet\n"), what);
	return LATER_EXIT;
}

static int run_watch(int argc, char **argv) { (void)argc; (void)argv; return later("watch"); }
static int run_ps(int argc, char **argv) { (void)argc; (void)argv; return later("ps"); }
static int run_show(int argc, char **argv) { (void)argc; (void)argv; return later("show"); }
static int run_attach(int argc, char **argv) { (void)argc; (void)argv; return later("attach"); }
static int run_stop(int argc, char **argv) { (void)argc; (void)argv; return later("stop"); }
static int run_top(int argc, char **argv) { (void)argc; (void)argv; return later("top"); }
static int run_daemon(int argc, char **argv) { (void)argc; (void)argv; return later("daemon"); }

const struct cmd_entry cmd_watch_entry = {
	"watch", N_("follow a session's events as they happen"),
	N_("Usage: boxy watch [ID]\n"
	   "Follow one session as it happens; with no id, the only running one.\n"
	   "Ctrl-C stops watching; the session keeps running.\n"
	   "(Needs the per-user daemon, not in this build yet.)\n"),
	run_watch,
};
const struct cmd_entry cmd_ps_entry = {
	"ps", N_("list running sessions (-a: every session on record)"),
	N_("Usage: boxy ps [-a]\n(Needs the per-user daemon, not in this build yet.)\n"),
	run_ps,
};
const struct cmd_entry cmd_show_entry = {
	"show", N_("one session in full"),
	N_("Usage: boxy show ID [--json]\n(Needs the session store, not in this build yet.)\n"),
	run_show,
};
const struct cmd_entry cmd_attach_entry = {
	"attach", N_("take over a session's terminal (Ctrl-] leaves it running)"),
	N_("Usage: boxy attach ID\n(Needs the per-user daemon, not in this build yet.)\n"),
	run_attach,
};
const struct cmd_entry cmd_stop_entry = {
	"stop", N_("SIGTERM a session, then SIGKILL (-k: SIGKILL now)"),
	N_("Usage: boxy stop [-k] ID\n(Needs the per-user daemon, not in this build yet.)\n"),
	run_stop,
};
const struct cmd_entry cmd_top_entry = {
	"top", N_("full-screen dashboard of sessions and connections"),
	N_("Usage: boxy top\n(Needs the session store, not in this build yet.)\n"),
	run_top,
};
const struct cmd_entry cmd_daemon_entry = {
	"daemon", N_("status | restart | stop the per-user daemon"),
	N_("Usage: boxy daemon status|restart|stop\n"
	   "(The per-user daemon is not in this build yet.)\n"),
	run_daemon,
};
