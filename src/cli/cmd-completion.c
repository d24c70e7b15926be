/*
 * cli/cmd-completion.c — `boxy completion bash|zsh|fish`: prints a completion
 * script for that shell, made from the tables the binary itself parses
 * with, so a completion cannot offer a flag boxy does not take nor miss one
 * it does.
 *
 * The sources: the subcommand table of cli/boxy.c (names, summaries), the
 * long-option table of `run` (cmd_run_options(): every flag, and whether it
 * takes a value), and for the other subcommands the flags their --help text
 * names (every "-x" and "--word" in it). What is only known at run time is
 * asked of boxy when the user presses Tab: profile names from
 * `boxy profile list --json`, session ids from `boxy ps --json`. The build
 * runs this to make the files `make install` puts where each shell looks
 * (doc/completion.md); the subcommand is left out of `boxy --help`.
 */
#include <config.h>

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "common/util.h"

/* Subcommands whose operand is a session id, and whether only running ones make sense. */
static const struct {
	const char *cmd;
	bool running_only;
} id_commands[] = {
	{ "watch", false }, { "show", false }, { "logs", false }, { "wait", false },
	{ "attach", true }, { "stop", true },
};

/* The words of a subcommand that itself has subcommands. */
static const struct {
	const char *cmd, *words;
} sub_words[] = {
	{ "profile", "list show check learn" },
	{ "daemon", "status restart stop" },
	{ "completion", "bash zsh fish" },
};

/* What a run flag's value completes to: a profile, a path, a fixed word list, or nothing. */
static const struct {
	const char *flag, *kind;
} run_values[] = {
	{ "profile", "profile" }, { "ro", "file" }, { "rw", "file" }, { "protect", "file" },
	{ "copy", "file" }, { "copy-ro", "file" }, { "workdir", "dir" },
	{ "audit-log", "file" }, { "net-log", "file" }, { "pcap", "file" },
	{ "net", "none public allowlist" }, { "seccomp", "strict compat" },
};

/* The kind of value a run flag takes ("" when none is completed). */
static const char *completion_value_kind(const char *flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(run_values); i++)
		if (strcmp(run_values[i].flag, flag) == 0)
			return run_values[i].kind;
	return "";
}

/* The ids-or-running mode of a subcommand: -1 not an id command, 0 all, 1 running. */
static int completion_id_mode(const char *cmd)
{
	for (size_t i = 0; i < ARRAY_SIZE(id_commands); i++)
		if (strcmp(id_commands[i].cmd, cmd) == 0)
			return id_commands[i].running_only;
	return -1;
}

static const char *completion_sub_words(const char *cmd)
{
	for (size_t i = 0; i < ARRAY_SIZE(sub_words); i++)
		if (strcmp(sub_words[i].cmd, cmd) == 0)
			return sub_words[i].words;
	return NULL;
}

/* Every "-x" and "--word" a usage text names, once each, space-separated. malloc'd. */
static char *completion_usage_flags(const char *usage)
{
	struct { char *buf; } out = { xstrdup("") };

	for (const char *p = usage; *p; p++) {
		size_t n;
		char *flag, *hit;

		if (*p != '-' || (p > usage && !strchr(" [|(,\n", p[-1])))
			continue;
		n = 1;
		if (p[1] == '-')
			n = 2;
		if (!isalpha((unsigned char)p[n]))
			continue;
		while (isalnum((unsigned char)p[n]) || (p[n] == '-' && n > 2))
			n++;
		if (p[1] != '-' && n != 2)
			continue;       /* "-word" is prose, not a short flag */
		flag = xstrndup(p, n);
		hit = strstr(out.buf, flag);
		if (!hit || (hit[n] != ' ' && hit[n] != '\0') || (hit > out.buf && hit[-1] != ' ')) {
			char *more = xasprintf("%s%s%s", out.buf, out.buf[0] ? " " : "", flag);

			free(out.buf);
			out.buf = more;
		}
		free(flag);
		p += n - 1;
	}
	return out.buf;
}

/* run's flags from its option table: "--name" each, and "-c" for those with a short form. */
static char *completion_run_flags(void)
{
	char *out = xstrdup("");

	for (const struct option *o = cmd_run_options(); o->name; o++) {
		char *more;

		if (o->val > 0 && o->val < 128 && isalpha(o->val))
			more = xasprintf("%s%s-%c --%s", out, out[0] ? " " : "", o->val, o->name);
		else
			more = xasprintf("%s%s--%s", out, out[0] ? " " : "", o->name);
		free(out);
		out = more;
	}
	return out;
}

/* run's flags that take a value, as a bash case pattern "--a|--b|-p". malloc'd. */
static char *completion_run_valued(const char *kind_prefix, bool exact)
{
	char *out = xstrdup("");

	for (const struct option *o = cmd_run_options(); o->name; o++) {
		const char *kind = completion_value_kind(o->name);
		char *more;

		if (o->has_arg != required_argument)
			continue;
		if (kind_prefix && (exact ? strcmp(kind, kind_prefix) != 0
					  : strncmp(kind, kind_prefix, strlen(kind_prefix)) != 0))
			continue;
		if (o->val > 0 && o->val < 128 && isalpha(o->val))
			more = xasprintf("%s%s-%c|--%s", out, out[0] ? "|" : "", o->val, o->name);
		else
			more = xasprintf("%s%s--%s", out, out[0] ? "|" : "", o->name);
		free(out);
		out = more;
	}
	return out;
}

/* A summary safe inside single quotes (and a zsh "name:description"): ' and : become spaces. */
static char *completion_quote_safe(const char *s)
{
	char *out = xstrdup(s);

	for (char *p = out; *p; p++)
		if (*p == '\'' || *p == ':' || *p == '\\')
			*p = ' ';
	return out;
}

static void completion_print_bash(const struct cmd_entry *const *cmds, size_t n)
{
	char *flags, *valued;

	printf("# bash completion for boxy: generated by `boxy completion bash`; do not edit.\n"
	       "_boxy_profiles() {\n"
	       "\tboxy profile list --json 2>/dev/null | grep -o '\"name\":\"[A-Za-z0-9._+-]*\"' | "
	       "cut -d'\"' -f4\n"
	       "}\n"
	       "_boxy_sessions() {\n"
	       "\tboxy ps ${1-} --json 2>/dev/null | grep -o '{\"id\":\"[0-9a-f]*\"' | "
	       "cut -d'\"' -f4\n"
	       "}\n"
	       "_boxy() {\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i\n"
	       "\tCOMPREPLY=()\n"
	       "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W '");
	for (size_t i = 0; i < n; i++)
		printf("%s ", cmds[i]->name);
	printf("--help --version' -- \"$cur\"))\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tcase ${COMP_WORDS[1]} in\n");
	/* run: after "--" the command line is the sandboxed program's. */
	flags = completion_run_flags();
	printf("\trun)\n"
	       "\t\tfor ((i = 2; i < COMP_CWORD; i++)); do\n"
	       "\t\t\tif [ \"${COMP_WORDS[i]}\" = -- ]; then\n"
	       "\t\t\t\tCOMPREPLY=($(compgen -c -- \"$cur\"))\n"
	       "\t\t\t\treturn\n"
	       "\t\t\tfi\n"
	       "\t\tdone\n"
	       "\t\tcase $prev in\n");
	valued = completion_run_valued("profile", true);
	printf("\t\t%s) COMPREPLY=($(compgen -W \"$(_boxy_profiles)\" -- \"$cur\")); return ;;\n",
	       valued);
	free(valued);
	valued = completion_run_valued("file", true);
	printf("\t\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", valued);
	free(valued);
	valued = completion_run_valued("dir", true);
	printf("\t\t%s) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", valued);
	free(valued);
	for (size_t i = 0; i < ARRAY_SIZE(run_values); i++)
		if (strchr(run_values[i].kind, ' '))
			printf("\t\t--%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n",
			       run_values[i].flag, run_values[i].kind);
	valued = completion_run_valued(NULL, false);
	printf("\t\t%s) return ;;\n"
	       "\t\tesac\n"
	       "\t\tCOMPREPLY=($(compgen -W '%s --' -- \"$cur\"))\n"
	       "\t\t;;\n", valued, flags);
	free(valued);
	free(flags);
	for (size_t i = 0; i < n; i++) {
		const char *name = cmds[i]->name, *words = completion_sub_words(name);
		int idm = completion_id_mode(name);

		if (strcmp(name, "run") == 0)
			continue;
		flags = completion_usage_flags(cmds[i]->usage);
		printf("\t%s)\n"
		       "\t\tif [[ $cur == -* ]]; then\n"
		       "\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n", name, flags);
		if (words)
			printf("\t\telif [ \"$COMP_CWORD\" -eq 2 ]; then\n"
			       "\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n", words);
		if (strcmp(name, "profile") == 0)
			printf("\t\telif [ \"${COMP_WORDS[2]}\" != list ]; then\n"
			       "\t\t\tCOMPREPLY=($(compgen -W \"$(_boxy_profiles)\" -- \"$cur\"))\n");
		if (idm >= 0)
			printf("\t\telse\n"
			       "\t\t\tCOMPREPLY=($(compgen -W \"$(_boxy_sessions %s)\" -- \"$cur\"))\n",
			       idm ? "" : "-a");
		printf("\t\tfi\n\t\t;;\n");
		free(flags);
	}
	printf("\tesac\n"
	       "}\n"
	       "complete -F _boxy boxy\n");
}

static void completion_print_zsh(const struct cmd_entry *const *cmds, size_t n)
{
	char *flags;

	printf("#compdef boxy\n"
	       "# zsh completion for boxy: generated by `boxy completion zsh`; do not edit.\n"
	       "_boxy_profiles() {\n"
	       "\tlocal -a p\n"
	       "\tp=(${(f)\"$(boxy profile list --json 2>/dev/null | grep -o '\"name\":\"[A-Za-z0-9._+-]*\"' "
	       "| cut -d'\"' -f4)\"})\n"
	       "\tcompadd -a p\n"
	       "}\n"
	       "_boxy_sessions() {\n"
	       "\tlocal -a s\n"
	       "\ts=(${(f)\"$(boxy ps ${1-} --json 2>/dev/null | grep -o '{\"id\":\"[0-9a-f]*\"' "
	       "| cut -d'\"' -f4)\"})\n"
	       "\tcompadd -a s\n"
	       "}\n"
	       "_boxy() {\n"
	       "\tlocal -a cmds\n"
	       "\tcmds=(\n");
	for (size_t i = 0; i < n; i++) {
		char *desc = completion_quote_safe(cmds[i]->summary);

		printf("\t\t'%s:%s'\n", cmds[i]->name, desc);
		free(desc);
	}
	printf("\t)\n"
	       "\tif (( CURRENT == 2 )); then\n"
	       "\t\t_describe command cmds\n"
	       "\t\treturn\n"
	       "\tfi\n"
	       "\tcase $words[2] in\n"
	       "\trun)\n"
	       "\t\tlocal i\n"
	       "\t\tfor (( i = 3; i < CURRENT; i++ )); do\n"
	       "\t\t\tif [[ $words[i] == -- ]]; then\n"
	       "\t\t\t\tshift $i words; (( CURRENT -= i ))\n"
	       "\t\t\t\t_normal\n"
	       "\t\t\t\treturn\n"
	       "\t\t\tfi\n"
	       "\t\tdone\n"
	       "\t\tcase $words[CURRENT-1] in\n");
	for (const struct option *o = cmd_run_options(); o->name; o++) {
		const char *kind = completion_value_kind(o->name);

		if (o->has_arg != required_argument)
			continue;
		printf("\t\t--%s", o->name);
		if (o->val > 0 && o->val < 128 && isalpha(o->val))
			printf("|-%c", o->val);
		if (strcmp(kind, "profile") == 0)
			printf(") _boxy_profiles; return ;;\n");
		else if (strcmp(kind, "file") == 0)
			printf(") _files; return ;;\n");
		else if (strcmp(kind, "dir") == 0)
			printf(") _files -/; return ;;\n");
		else if (kind[0])
			printf(") compadd %s; return ;;\n", kind);
		else
			printf(") return ;;\n");
	}
	flags = completion_run_flags();
	printf("\t\tesac\n"
	       "\t\tcompadd -- %s --\n"
	       "\t\t;;\n", flags);
	free(flags);
	for (size_t i = 0; i < n; i++) {
		const char *name = cmds[i]->name, *words = completion_sub_words(name);
		int idm = completion_id_mode(name);

		if (strcmp(name, "run") == 0)
			continue;
		flags = completion_usage_flags(cmds[i]->usage);
		printf("\t%s)\n"
		       "\t\tif [[ $PREFIX == -* ]]; then\n"
		       "\t\t\tcompadd -- %s\n", name, flags);
		if (words)
			printf("\t\telif (( CURRENT == 3 )); then\n"
			       "\t\t\tcompadd %s\n", words);
		if (strcmp(name, "profile") == 0)
			printf("\t\telif [[ $words[3] != list ]]; then\n"
			       "\t\t\t_boxy_profiles\n");
		if (idm >= 0)
			printf("\t\telse\n"
			       "\t\t\t_boxy_sessions %s\n", idm ? "" : "-a");
		printf("\t\tfi\n\t\t;;\n");
		free(flags);
	}
	printf("\tesac\n"
	       "}\n"
	       "_boxy \"$@\"\n");
}

static void completion_print_fish(const struct cmd_entry *const *cmds, size_t n)
{
	printf("# fish completion for boxy: generated by `boxy completion fish`; do not edit.\n"
	       "function __boxy_profiles\n"
	       "\tboxy profile list --json 2>/dev/null | string match -ar '\"name\":\"[A-Za-z0-9._+-]*\"' "
	       "| string split -f4 '\"'\n"
	       "end\n"
	       "function __boxy_sessions\n"
	       "\tboxy ps $argv --json 2>/dev/null | string match -ar '\\{\"id\":\"[0-9a-f]*\"' "
	       "| string split -f4 '\"'\n"
	       "end\n"
	       "complete -c boxy -f\n");
	for (size_t i = 0; i < n; i++) {
		char *desc = completion_quote_safe(cmds[i]->summary);

		printf("complete -c boxy -n __fish_use_subcommand -a %s -d '%s'\n",
		       cmds[i]->name, desc);
		free(desc);
	}
	for (const struct option *o = cmd_run_options(); o->name; o++) {
		const char *kind = completion_value_kind(o->name);

		printf("complete -c boxy -n '__fish_seen_subcommand_from run' -l %s", o->name);
		if (o->val > 0 && o->val < 128 && isalpha(o->val))
			printf(" -s %c", o->val);
		if (o->has_arg == required_argument) {
			if (strcmp(kind, "profile") == 0)
				printf(" -x -a '(__boxy_profiles)'");
			else if (strcmp(kind, "file") == 0 || strcmp(kind, "dir") == 0)
				printf(" -r -F");
			else if (kind[0])
				printf(" -x -a '%s'", kind);
			else
				printf(" -x");
		}
		printf("\n");
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = cmds[i]->name, *words = completion_sub_words(name);
		int idm = completion_id_mode(name);
		char *flags;

		if (strcmp(name, "run") == 0)
			continue;
		flags = completion_usage_flags(cmds[i]->usage);
		for (char *f = strtok(flags, " "); f; f = strtok(NULL, " "))
			printf("complete -c boxy -n '__fish_seen_subcommand_from %s' %s %s\n", name,
			       f[1] == '-' ? "-l" : "-s", f + (f[1] == '-' ? 2 : 1));
		free(flags);
		if (words)
			printf("complete -c boxy -n '__fish_seen_subcommand_from %s' -a '%s'\n",
			       name, words);
		if (strcmp(name, "profile") == 0)
			printf("complete -c boxy -n '__fish_seen_subcommand_from show check' "
			       "-a '(__boxy_profiles)'\n");
		if (idm >= 0)
			printf("complete -c boxy -n '__fish_seen_subcommand_from %s' "
			       "-a '(__boxy_sessions %s)'\n", name, idm ? "" : "-a");
	}
}

int completion_main(int argc, char **argv, const struct cmd_entry *const *cmds, size_t n)
{
	if (argc != 2) {
		fprintf(stderr, _("Usage: boxy completion bash|zsh|fish\n"));
		return EXIT_BOXY_USAGE;
	}
	if (strcmp(argv[1], "bash") == 0)
		completion_print_bash(cmds, n);
	else if (strcmp(argv[1], "zsh") == 0)
		completion_print_zsh(cmds, n);
	else if (strcmp(argv[1], "fish") == 0)
		completion_print_fish(cmds, n);
	else {
		fprintf(stderr, _("boxy completion: unknown shell '%s' (bash, zsh or fish)\n"),
			argv[1]);
		return EXIT_BOXY_USAGE;
	}
	return fflush(stdout) == 0 ? 0 : EXIT_BOXY_FAILED;
}
