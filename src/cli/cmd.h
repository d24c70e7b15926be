/*
 * cli/cmd.h — one file per subcommand (cmd-*.c), each exporting one entry of
 * the table cli/boxy.c dispatches on.
 */
#ifndef BOXY_CMD_H
#define BOXY_CMD_H

#include <stdbool.h>
#include <stddef.h>

struct cmd_entry {
	const char *name;
	const char *summary;        /* one line for `boxy --help` */
	const char *usage;          /* full --help text */
	int (*run)(int argc, char **argv);      /* argv[0] is the subcommand name */
};

extern const struct cmd_entry cmd_run_entry, cmd_doctor_entry, cmd_profile_entry,
	cmd_watch_entry, cmd_ps_entry, cmd_show_entry, cmd_attach_entry, cmd_stop_entry,
	cmd_top_entry, cmd_daemon_entry, cmd_prune_entry, cmd_logs_entry, cmd_wait_entry,
	cmd_verify_entry, cmd_diff_entry, cmd_resume_entry;

struct option;
/* run's long-option table, for the completion generator (cli/cmd-run.c). */
const struct option *cmd_run_options(void);
/* `boxy completion SHELL` over the subcommand table (cli/cmd-completion.c). */
int completion_main(int argc, char **argv, const struct cmd_entry *const *cmds, size_t n);

struct store;
/* A session id prefix: 1..16 lower-case hex digits (cli/cmd-session.c). */
bool cmd_session_id_ok(const char *s);
/* The user's session store, or NULL with *err set (cli/cmd-session.c). */
struct store *cmd_store_open(char **err);

/* True when argv has -h/--help before "--"; prints usage to stdout (cli/usage.c). */
int cmd_wants_help(const struct cmd_entry *c, int argc, char **argv);
/* "boxy SUB: MESSAGE" + "Try 'boxy SUB --help'." on stderr; returns EXIT_BOXY_USAGE. */
int cmd_usage_error(const struct cmd_entry *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
