/*
 * cli/cmd-run.c — `boxy run [flags] -- COMMAND [ARGS...]`.
 *
 * The order is: every flag is parsed and validated into a run-spec of its
 * own; the flags are checked against each other; the profile is loaded
 * under them and the flags merged on top; the whole is finished and
 * checked again (runspec_finish). Only then is anything opened or started.
 * A bad flag is one line naming the flag and exit 2, before any side effect.
 *
 * What this build cannot do yet (the network gateway, the per-user daemon)
 * is refused with one line and exit 125 rather than approximated: a run
 * asked to reach the allowlisted registry must not quietly run offline, or
 * online without the allowlist.
 *
 * The log files are opened here, by the client, with the caller's rights
 * and relative to the caller's working directory, before the sandbox starts:
 * a log that cannot be written fails the run instead of leaving a run with
 * no record.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/audit.h"
#include "daemon/journal.h"
#include "daemon/seal.h"
#include "client/client.h"
#include "client/gate.h"
#include "client/run.h"
#include "client/tty.h"
#include "cli/cmd.h"
#include "common/event.h"
#include "spec/options.h"
#include "common/path-guard.h"
#include "spec/profile.h"
#include "broker/resolver.h"
#include "spec/runspec.h"
#include "spec/values.h"
#include "sandbox/assemble.h"
#include "common/util.h"

extern char **environ;

#define DEFAULT_PROFILE "generic"

/*
 * getopt's table is made from the run-spec's option table (spec/options.h,
 * spec_options_getopt). Two options belong to this command rather than to
 * the run-spec: --no-daemon and --help.
 */
#define OPT_NO_DAEMON (SPEC_GETOPT_ROW + 256)

static struct option run_options[256];

/*
 * "+": stop at the first operand, so the command's own flags stay its own.
 * ":": we word errors. Then the rows' short flags, and -h.
 */
static char run_shortopts[64];

/* Fill run_options once. */
static void run_options_build(void)
{
	size_t n;

	if (run_options[0].name)
		return;
	n = spec_options_getopt(run_options, ARRAY_SIZE(run_options) - 2);
	strcpy(run_shortopts, "+:");
	spec_options_shortopts(run_shortopts + 2, sizeof(run_shortopts) - 3);
	strcat(run_shortopts, "h");
	run_options[n++] = (struct option){ "no-daemon", no_argument, NULL, OPT_NO_DAEMON };
	run_options[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	run_options[n] = (struct option){ NULL, 0, NULL, 0 };
}


static int cmd_run(int argc, char **argv);

/* --no-daemon: the sandbox is assembled in this process (sandbox_run). */
static bool run_no_daemon;

const struct cmd_entry cmd_run_entry = {
	"run", N_("run a command in a sandbox"),
	N_("Usage: boxy run [flags] -- COMMAND [ARGS...]\n"
	   "Run COMMAND with its project directory and nothing else of the machine.\n"
	   "\n"
	   "  -p, --profile NAME     preset (node, python, generic, offline, claude)\n"
	   "                         or path to YAML                 (default: generic)\n"
	   "      --ro PATH          expose a path read-only            (repeatable)\n"
	   "      --rw PATH          expose a path read-write           (repeatable)\n"
	   "      --protect PATH     force read-only inside a --rw mount  (repeatable)\n"
	   "      --allow-git-write  let the sandbox write .git/hooks and .git/config\n"
	   "      --copy SRC[:DST]   copy one file in, writable         (repeatable)\n"
	   "      --copy-ro SRC[:DST]  copy one file in, read-only      (repeatable)\n"
	   "  -w, --workdir PATH     working directory, read-write      (default: cwd)\n"
	   "      --net MODE         public | allowlist | none\n"
	   "                         (default: allowlist with --allow-host, else public)\n"
	   "      --allow-host HOST  reachable hostname, optionally HOST:PORT[,PORT];\n"
	   "                         \"*.example.com\" for every name below one;\n"
	   "                         implies allowlist mode              (repeatable)\n"
	   "      --allow-http RULE  only the HTTP requests a rule allows there, e.g.\n"
	   "                         'method=GET domain=api.test path=/v1/*'\n"
	   "                         (doc/http-rules.md); implies allowlist mode\n"
	   "                                                             (repeatable)\n"
	   "      --allow-port N     permitted outbound TCP port         (repeatable)\n"
	   "      --allow-cidr CIDR  address range to permit despite the private-address\n"
	   "                         denylist                             (repeatable)\n"
	   "      --tailscale        reach this machine's tailnet by MagicDNS name\n"
	   "  -e, --env NAME[=VAL]   pass or set an environment variable (repeatable)\n"
	   "      --memory SIZE      memory limit, e.g. 2GiB, 512M, 1.5G\n"
	   "      --pids N           process limit, e.g. 512\n"
	   "      --cpus N           CPU limit, e.g. 2, 0.5\n"
	   "      --timeout DURATION kill the whole run after e.g. 10m, 90s, 1h30m\n"
	   "      --audit-log FILE   policy decisions as JSON lines, chained and sealed\n"
	   "                         (boxy verify); 'journal': the systemd journal\n"
	   "      --net-log FILE     every connection, hostname and SNI\n"
	   "      --pcap FILE        every packet on the sandbox's TAP, pcap format\n"
	   "      --pcap-max SIZE    stop the capture at this size    (default 1GiB)\n"
	   "      --fail-on LIST     exit 123 when the command succeeded but one of\n"
	   "                         deny,new-destination,tripwire,alert occurred (CI gate)\n"
	   "      --report FILE      the findings as JUnit XML (FILE) and JSON (FILE.json)\n"
	   "      --on-alert LIST    what an alert does: log, freeze or stop, for all or\n"
	   "                         per kind (tripwire,dns,git,denials: 'log,dns=freeze');\n"
	   "                         a frozen run waits for boxy resume or boxy stop\n"
	   "      --on-denials N     the Nth refusal counts as an alert (kind denials)\n"
	   "      --seccomp MODE     strict (default) or compat\n"
	   "      --tripwires on|off decoy credentials in $HOME, watched: a red alert\n"
	   "                         when one is read or sent (node, python, claude: on)\n"
	   "      --tty              expose /dev/tty (the session's own pty) to the sandbox\n"
	   "      --raw-terminal     do not filter the payload's terminal output (audited)\n"
	   "      --no-attribution   do not look for the process and package behind\n"
	   "                         each connection (they say nothing of who)\n"
	   "  -v, --verbose          report denials on stderr\n"
	   "  -d, --detach           print the session id and do not attach\n"
	   "      --no-daemon        run in this process: no session record, no watch\n"
	   "  -h, --help             this text\n"
	   "\n"
	   "A flag given twice is refused, except the repeatable ones. Sizes are binary\n"
	   "(K = KiB). Refused as contradictions: --allow-host or --allow-http with --net\n"
	   "none or public;\n"
	   "--pcap, --allow-port, --allow-cidr or --tailscale with --net none; --allow-port\n"
	   "in public mode; --pcap-max without --pcap.\n"
	   "\n"
	   "  boxy run --net none -- ./suspicious-binary\n"
	   "  boxy run --allow-host registry.npmjs.org -- npm ci\n"
	   "  boxy run --profile python -- pip install -r requirements.txt\n"
	   "\n"
	   "Exit status: the command's, 128+N if a signal N ended it (137 when an alert\n"
	   "stopped it, or boxy stop ended it frozen); 2 for a bad flag or profile; 125\n"
	   "when boxy itself failed, 126 when the command could not run, 127 when it was\n"
	   "not found. See boxy(1), doc/flags.md and doc/react.md.\n"),
	cmd_run,
};

/* "--memory" for an option value (long name, which every option of run has). */
static const char *option_name(int val)
{
	static char buf[32];

	for (const struct option *o = run_options; o->name; o++) {
		if (o->val == val) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	}
	return NULL;
}

/* Scalar options: each may be given once (lists repeat, switches are idempotent). */
static bool option_is_scalar(int val)
{
	const struct spec_option *o = spec_option_by_getopt(val);

	return o && !spec_option_is_switch(o) && !spec_kind_is_list(o->kind);
}

/*
 * One flag and its value into rs. Returns 0, or -1 with *err naming the
 * problem (the caller prefixes the flag).
 */
static int run_apply_option(struct runspec *rs, int opt, const char *arg, char **err)
{
	const struct spec_option *o = spec_option_by_getopt(opt);

	if (opt == OPT_NO_DAEMON) {
		run_no_daemon = true;
		return 0;
	}
	if (!o)
		fatal("run: option %d has no row", opt);
	return spec_option_apply(o, rs, arg ? arg : "", err);
}

/* The unknown flag as the user wrote it, without any "=value". */
static char *unknown_flag_text(const char *arg, int optopt_)
{
	if (optopt_ && optopt_ < 256)
		return xasprintf("-%c", optopt_);
	if (!arg)
		return xstrdup("?");
	return xstrndup(arg, strcspn(arg, "="));
}

/*
 * getopt_long reports an abbreviation matching several long options as
 * unknown; say it is ambiguous, and what it could mean. -1 when it is not.
 */
static int run_report_ambiguous(const char *flag)
{
	size_t len = strlen(flag), n = 0;
	char *list = NULL;
	int r;

	if (len < 3 || strncmp(flag, "--", 2) != 0)
		return -1;
	for (const struct option *o = run_options; o->name; o++) {
		char *l;

		if (strncmp(o->name, flag + 2, len - 2) != 0)
			continue;
		l = xasprintf("%s%s--%s", list ? list : "", list ? ", " : "", o->name);
		free(list);
		list = l;
		n++;
	}
	if (n < 2) {
		free(list);
		return -1;
	}
	r = cmd_usage_error(&cmd_run_entry, _("ambiguous flag '%s': %s"), flag, list);
	free(list);
	return r;
}

/*
 * Parse argv into flags (a run-spec of the flags alone, argv included).
 * Returns 0, or the exit code of a usage error already reported.
 */
static int run_parse_args(int argc, char **argv, struct runspec *flags)
{
	bool seen[OPT_NO_DAEMON + 1] = { false };
	int opt;

	run_options_build();
	opterr = 0;
	optind = 0;     /* glibc: full re-initialisation, so "+" is honoured on every call */
	while ((opt = getopt_long(argc, argv, run_shortopts, run_options, NULL)) != -1) {
		char *err = NULL;
		int r;

		if (opt == 'h') {
			fputs(_(cmd_run_entry.usage), stdout);
			return -1;      /* help is not a run; the caller exits 0 */
		}
		if (opt == ':')
			return cmd_usage_error(&cmd_run_entry, _("%s needs a value"),
					       option_name(optopt));
		if (opt == '?') {
			char *flag;

			if (optopt && option_name(optopt))
				return cmd_usage_error(&cmd_run_entry, _("%s takes no value"),
						       option_name(optopt));
			flag = unknown_flag_text(argv[optind - 1], optopt);
			r = run_report_ambiguous(flag);
			if (r < 0)
				r = cmd_usage_error(&cmd_run_entry, _("unknown flag '%s'"), flag);
			free(flag);
			return r;
		}
		if (option_is_scalar(opt)) {
			if (seen[opt])
				return cmd_usage_error(&cmd_run_entry, _("%s given twice"),
						       option_name(opt));
			seen[opt] = true;
		}
		if (run_apply_option(flags, opt, optarg, &err) < 0) {
			r = cmd_usage_error(&cmd_run_entry, "%s: %s", option_name(opt), err);
			free(err);
			return r;
		}
	}
	if (optind >= argc)
		return cmd_usage_error(&cmd_run_entry,
				       _("missing command: boxy run [flags] -- COMMAND [ARGS...]"));
	for (int i = optind; i < argc; i++)
		strv_push(&flags->argv, argv[i]);
	return 0;
}

/*
 * A source named on the command line must exist: the user typed it, and a
 * typo skipped in silence would run the job without the file it needed (a
 * profile's entries may be absent on some machines and are skipped, each
 * recorded as a "mount skipped" audit event). finished is flags after
 * runspec_finish (its paths absolute, its mounts in the same order); the
 * message names the path as typed.
 */
static int run_check_sources(const struct runspec *flags, const struct runspec *finished,
			     char **err)
{
	for (size_t i = 0; i < flags->nmounts && i < finished->nmounts; i++) {
		const struct mount_spec *m = &flags->mounts[i];
		struct stat st;
		int e;

		if (m->kind == MOUNT_MKDIR)
			continue;
		e = stat(finished->mounts[i].src, &st) < 0 ? errno : 0;
		if (e == ENOENT || e == ENOTDIR)
			return set_err(err, "--%s %s: %s", mount_kind_name(m->kind), m->src,
				       strerror(e));
	}
	return 0;
}

/*
 * The flags must agree among themselves whatever the profile says: check
 * them alone, into *finished (the caller frees it), where runspec_finish
 * made their paths absolute (the one place that does: doc/internals-spec.md).
 */
static int run_check_flags(const struct runspec *flags, const char *cwd,
			   struct runspec *finished, char **err)
{
	runspec_merge(finished, flags);
	return runspec_finish(finished, cwd, err);
}

/* -v: audit events go to the audit log (if any) and, worded, to stderr. */
struct run_events {
	const struct event_sink *log;   /* the --audit-log sink, or NULL */
	bool verbose;
};

/* s through the screen's sanitizer into buf: event text can name hostile paths. */
static const char *printable(const char *s, char *buf, size_t len)
{
	char *clean = text_sanitize(s);
	size_t n = strlen(clean);

	if (n >= len) {
		n = len - 1;
		while (n > 0 && ((unsigned char)clean[n] & 0xc0) == 0x80)
			n--;            /* never cut a character in half */
	}
	memcpy(buf, clean, n);
	buf[n] = '\0';
	free(clean);
	return buf;
}

static void run_events_emit(void *ctx, const struct event *ev)
{
	struct run_events *re = ctx;

	if (re->log)
		re->log->emit(re->log->ctx, ev);
	if (ev->verdict && strcmp(ev->verdict, "alert") == 0) {
		/* A finding the user must act on: said whatever -v, in red on a terminal. */
		char layer[64], subject[512], detail[1024];
		const char *nc = getenv("NO_COLOR");
		bool red = isatty(STDERR_FILENO) && !(nc && *nc);

		fprintf(stderr, _("%sboxy: ALERT: %s: %s: %s%s\n"), red ? "\033[1;31m" : "",
			printable(ev->layer, layer, sizeof(layer)),
			printable(ev->subject, subject, sizeof(subject)),
			printable(ev->detail, detail, sizeof(detail)), red ? "\033[0m" : "");
	} else if (re->verbose && ev->kind && strcmp(ev->kind, "audit") == 0) {
		char layer[64], verdict[32], subject[512], detail[512];

		fprintf(stderr, "boxy: %s %s %s: %s\n",
			printable(ev->layer, layer, sizeof(layer)),
			printable(ev->verdict, verdict, sizeof(verdict)),
			printable(ev->subject, subject, sizeof(subject)),
			printable(ev->detail, detail, sizeof(detail)));
	}
}

/*
 * Who is asking: login name and home ($HOME when it is absolute, else the
 * password database's). Copied, because getpwuid()'s storage is reused by
 * the next lookup, and the profile loader may make one.
 */
static int run_identity(char **user, char **home)
{
	const struct passwd *pw = getpwuid(getuid());
	const char *h = getenv("HOME");

	if (!(h && h[0] == '/'))
		h = pw ? pw->pw_dir : NULL;
	if (!h)
		return -1;
	*home = xstrdup(h);
	if (pw)
		*user = xstrdup(pw->pw_name);
	else if (getenv("USER"))
		*user = xstrdup(getenv("USER"));
	else
		*user = xasprintf("%u", (unsigned)getuid());
	return 0;
}

/*
 * --no-daemon: run the sandbox, with a pty of this process in place of each
 * terminal among fds 0-2, so that the payload never holds the caller's
 * terminal (doc/daemon.md, "Terminals and streams").
 */
static int run_local_terminal(const struct runspec *rs, struct sandbox_ctx *sctx, char **err)
{
	unsigned ttys = client_terminal_fds();
	int slave, code;
	pid_t relay;

	if (!ttys)
		return sandbox_run(rs, sctx, err);
	if (client_local_pty(ttys, rs->raw_terminal, &slave, &relay, err) < 0)
		return EXIT_BOXY_FAILED;
	if (rs->raw_terminal && sctx->events)
		event_audit(sctx->events, "terminal", "degraded", "raw-terminal",
			    "--raw-terminal: the payload's terminal output reaches the user's terminal "
			    "unfiltered (clipboard, titles and queries included)");
	if (ttys & 1)
		sctx->stdin_fd = slave;
	if (ttys & 2)
		sctx->stdout_fd = slave;
	if (ttys & 4)
		sctx->stderr_fd = slave;
	sctx->foreground = true;
	sctx->new_session = true;
	code = sandbox_run(rs, sctx, err);
	client_local_pty_end(slave, relay);
	return code;
}

/*
 * A work directory that is or contains the home directory is a usage error
 * (exit 2), said before any daemon is asked; the daemon refuses it anyway
 * (sandbox/assemble.c sandbox_refuse_wide), this only gives the right status.
 */
static int run_refuse_home_workdir(const char *workdir, const char *home)
{
	char *w = realpath(workdir, NULL), *h = realpath(home, NULL);
	size_t wl = w ? strlen(w) : 0;
	int code = 0;

	if (!h)
		h = xstrdup(home);      /* a home that does not exist yet: as written */
	if (w && (strcmp(w, "/") == 0 ||
		       (strncmp(h, w, wl) == 0 && (h[wl] == '\0' || h[wl] == '/'))))
		code = cmd_usage_error(&cmd_run_entry, _("refusing to expose %s read-write as the "
							 "work directory: it is or contains your home "
							 "directory; run from a project directory or "
							 "pass -w one"), workdir);
	free(w);
	free(h);
	return code;
}

/*
 * What this build cannot do yet: one line, exit 125, never an approximation.
 * flags: the command line's alone (a profile's --on-alert is no contradiction).
 */
static int run_refuse_unbuilt(const struct runspec *rs, const struct runspec *flags)
{
	if (rs->detach && run_no_daemon) {
		warnx_(_("-d/--detach needs the per-user daemon; it contradicts --no-daemon"));
		return EXIT_BOXY_USAGE;
	}
	/* The gate reads the end of the run as the client sees it (doc/ci.md). */
	if ((rs->fail_on || rs->report) && (rs->detach || run_no_daemon)) {
		warnx_(_("%s needs to see the run end through the daemon; it contradicts %s"),
		       rs->fail_on ? "--fail-on" : "--report", rs->detach ? "-d/--detach"
									: "--no-daemon");
		return EXIT_BOXY_USAGE;
	}
	/* Alerts are acted on by the daemon as they come (doc/react.md). */
	if (run_no_daemon && (flags->on_alert || flags->on_denials)) {
		warnx_(_("%s needs the daemon, which acts on alerts as they come; it contradicts "
			 "--no-daemon"), flags->on_alert ? "--on-alert" : "--on-denials");
		return EXIT_BOXY_USAGE;
	}
	if (run_no_daemon && (rs->net == NET_PUBLIC || rs->net == NET_ALLOWLIST)) {
		warnx_(_("--net %s needs the daemon's network gateway; it contradicts --no-daemon "
			 "(use --net none)"), net_mode_name(rs->net));
		return EXIT_BOXY_USAGE;
	}
	return 0;
}

/*
 * Every directory some sandbox could write, this run's and the store's: an
 * output file is never opened through a link planted in one (common/path-guard.h).
 */
static struct path_roots run_roots;
static bool run_roots_have_store;

/*
 * run_roots with the store's roots added (once). Only what this process opens
 * or builds itself needs them — an output file, a --no-daemon sandbox — so a
 * run through the daemon, which reads them from its own store, with no output
 * file does not open the store (about 1 ms of a start).
 */
static struct path_roots *run_roots_full(void)
{
	if (!run_roots_have_store) {
		path_roots_add_default_store(&run_roots);
		run_roots_have_store = true;
	}
	return &run_roots;
}

/* Open an output file the user named; one line on stderr when refused. */
static int run_open_output(const char *flag, const char *path, bool append)
{
	char *err = NULL;
	int fd = path_guard_open_output(flag, path, append, run_roots_full(), &err);

	if (fd < 0) {
		warnx_("%s", err);
		free(err);
	}
	return fd;
}

/*
 * --report FILE: xml to FILE, json to FILE.json, each opened afresh through
 * the path guard (after the run, when nothing of the sandbox is left to
 * swap the file for its own; doc/ci.md). -1 with one line said.
 */
static int run_write_report(const char *path, const char *xml, const char *json)
{
	char *jpath = xasprintf("%s.json", path);
	const char *paths[2] = { path, jpath }, *texts[2] = { xml, json };
	int rc = 0;

	for (size_t i = 0; i < 2 && rc == 0; i++) {
		int fd = run_open_output("--report", paths[i], false);
		bool bad;

		if (fd < 0) {
			rc = -1;
			break;
		}
		bad = write_all(fd, texts[i], strlen(texts[i])) < 0;
		if (close(fd) < 0)
			bad = true;
		if (bad) {
			warnx_(_("--report: writing %s: %s"), paths[i], strerror(errno));
			rc = -1;
		}
	}
	free(jpath);
	return rc;
}

/*
 * Through the daemon: open --net-log and --pcap here, with the caller's
 * rights (created before the network exists, so a file that cannot be
 * written fails the run at once), and pass the descriptors on.
 */
static int run_via_daemon(const struct runspec *rs, const char *cwd, const char *home,
			  int audit_fd)
{
	int nfd = -1, pfd = -1, code;
	unsigned fail_on = 0;

	if (rs->tailscale) {
		char *why = NULL, *sfx = resolver_tailscale_suffix(NULL, &why);

		/* The ranges still open; only MagicDNS is lost, and that is said now. */
		if (!sfx)
			warnx_(_("--tailscale: MagicDNS is unavailable (%s); tailnet names will "
				 "not resolve in the sandbox"), why);
		free(sfx);
		free(why);
	}
	if (rs->net_log) {
		nfd = run_open_output("--net-log", rs->net_log, false);
		if (nfd < 0)
			return EXIT_BOXY_FAILED;
	}
	if (rs->pcap) {
		pfd = run_open_output("--pcap", rs->pcap, false);
		if (pfd < 0) {
			if (nfd >= 0)
				close(nfd);
			return EXIT_BOXY_FAILED;
		}
	}
	if (rs->fail_on) {
		char *err = NULL;

		/* the row's validator wrote these words; a profile's went through it too */
		if (parse_fail_on(rs->fail_on, &fail_on, &err) < 0) {
			warnx_("%s", err);
			free(err);
			code = EXIT_BOXY_USAGE;
			goto out;
		}
	}
	/* Both files before the run too: one that cannot be written fails it at once. */
	if (rs->report && run_write_report(rs->report, "", "") < 0) {
		code = EXIT_BOXY_FAILED;
		goto out;
	}
	code = client_run_net(rs, cwd, home, audit_fd, nfd, pfd);
	if (rs->fail_on || rs->report) {
		char *xml, *json;

		code = gate_finish(fail_on, rs->argv, code, &xml, &json);
		if (rs->report && run_write_report(rs->report, xml, json) < 0 && code == 0)
			code = EXIT_BOXY_FAILED;
		free(xml);
		free(json);
	}
out:
	if (nfd >= 0)
		close(nfd);
	if (pfd >= 0)
		close(pfd);
	return code;
}

static int cmd_run(int argc, char **argv)
{
	struct runspec flags, alone, rs;
	struct profile_ctx pctx;
	struct sandbox_ctx sctx;
	struct audit_log *audit = NULL;
	struct event_sink audit_sink, fan_sink;
	struct run_events fan = { 0 };
	const char *profile_name;
	char *cwd = NULL, *workdir = NULL, *user = NULL, *home = NULL, *err = NULL;
	struct stat st;
	int code;

	runspec_init(&flags);
	runspec_init(&alone);
	runspec_init(&rs);
	code = run_parse_args(argc, argv, &flags);
	if (code != 0) {
		code = code < 0 ? 0 : code;
		goto out;
	}
	cwd = getcwd(NULL, 0);
	if (!cwd) {
		warnx_(_("cannot determine the current directory: %s"), strerror(errno));
		code = EXIT_BOXY_FAILED;
		goto out;
	}
	if (run_check_flags(&flags, cwd, &alone, &err) < 0 ||
	    run_check_sources(&flags, &alone, &err) < 0) {
		code = cmd_usage_error(&cmd_run_entry, "%s", err);
		goto out;
	}

	workdir = xstrdup(alone.workdir);
	if (stat(workdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		code = cmd_usage_error(&cmd_run_entry, _("--workdir: '%s' is not a directory"),
				       flags.workdir ? flags.workdir : workdir);
		goto out;
	}
	if (run_identity(&user, &home) < 0) {
		warnx_(_("cannot determine your home directory: $HOME is not set and uid %u has "
			 "no password entry"), (unsigned)getuid());
		code = EXIT_BOXY_FAILED;
		goto out;
	}
	code = run_refuse_home_workdir(workdir, home);
	if (code)
		goto out;

	/* The profile below, the flags on top. */
	profile_name = flags.profile ? flags.profile : DEFAULT_PROFILE;
	pctx.home = home;
	pctx.workdir = workdir;
	if (profile_load(profile_name, &pctx, &rs, &err) < 0) {
		if (flags.profile) {
			code = cmd_usage_error(&cmd_run_entry, "--profile: %s", err);
		} else {
			warnx_(_("the default profile '%s': %s"), profile_name, err);
			code = EXIT_BOXY_FAILED;
		}
		goto out;
	}
	if (rs.net == NET_NONE && flags.nhosts && flags.net == NET_UNSET) {
		code = cmd_usage_error(&cmd_run_entry,
				       _("--allow-host: profile '%s' sets network mode none; add "
					 "--net allowlist to override it"), profile_name);
		goto out;
	}
	runspec_merge(&rs, &flags);
	if (!rs.profile)
		rs.profile = xstrdup(profile_name);
	if (runspec_finish(&rs, cwd, &err) < 0) {
		code = cmd_usage_error(&cmd_run_entry, "%s", err);
		goto out;
	}
	code = run_refuse_unbuilt(&rs, &flags);
	if (code)
		goto out;
	path_roots_init(&run_roots);
	mounts_add_writable_roots(&run_roots, rs.workdir, rs.mounts, rs.nmounts);

	if (rs.audit_log && strcmp(rs.audit_log, JOURNAL_TARGET) == 0) {
		/* The journal: no file to open; the daemon (or, alone, this process) sends. */
		if (!journal_available()) {
			warnx_(_("--audit-log journal: this boxy was built without libsystemd"));
			code = EXIT_BOXY_FAILED;
			goto out;
		}
		if (run_no_daemon) {
			audit = audit_log_create_journal();
			audit_sink = audit_log_sink(audit);
			fan.log = &audit_sink;
		}
	} else if (rs.audit_log) {
		int fd = run_open_output("--audit-log", rs.audit_log, true);

		if (fd < 0) {
			code = EXIT_BOXY_FAILED;
			goto out;
		}
		if (!run_no_daemon) {
			/* The daemon writes the log through the descriptor opened here, with our rights. */
			code = run_via_daemon(&rs, cwd, home, fd);
			close(fd);
			goto out;
		}
		audit = audit_log_create(fd);
		audit_sink = audit_log_sink(audit);
		fan.log = &audit_sink;
	}
	if (!run_no_daemon) {
		code = run_via_daemon(&rs, cwd, home, -1);
		goto out;
	}
	fan.verbose = rs.verbose;
	fan_sink.emit = run_events_emit;
	fan_sink.ctx = &fan;

	memset(&sctx, 0, sizeof(sctx));
	sctx.environ = environ;
	sctx.cwd = cwd;
	sctx.uid = getuid();
	sctx.gid = getgid();
	sctx.user = user;
	sctx.home = home;
	sctx.stdin_fd = STDIN_FILENO;
	sctx.stdout_fd = STDOUT_FILENO;
	sctx.stderr_fd = STDERR_FILENO;
	/* Only a run started in the terminal's foreground may hand the terminal on. */
	sctx.foreground = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	sctx.events = &fan_sink;     /* alerts are printed even without a log or -v */
	sctx.session = NULL;
	sctx.roots = run_roots_full();
	sctx.exits_after = true;      /* this process ends with the run */

	client_protect_own_dirs();      /* the daemon's directories stay out of reach here too */
	code = run_local_terminal(&rs, &sctx, &err);
	if (err) {
		/* A stage's words can quote what a payload wrote (a gitdir: line). */
		char *clean = text_sanitize(err);

		warnx_("%s", clean);
		free(clean);
	}
out:
	path_roots_free(&run_roots);
	run_roots_have_store = false;
	if (audit && !audit_log_is_journal(audit)) {
		char *why = NULL;

		/* --no-daemon: the log's own chain, sealed here (doc/verify.md). */
		if (seal_session(NULL, NULL, audit, now_real_ms(), &why) < 0)
			warnx_(_("--audit-log: not sealed: %s"), why);
		free(why);
	}
	audit_log_free(audit);
	free(err);
	free(workdir);
	free(cwd);
	free(user);
	free(home);
	runspec_free(&flags);
	runspec_free(&alone);
	runspec_free(&rs);
	return code;
}

const struct option *cmd_run_options(void)
{
	run_options_build();
	return run_options;
}
