/*
 * cli/cmd-daemon.c — `boxy daemon status | restart | stop`, and `serve`, the
 * entry point the client execs to start a daemon.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "cli/cmd.h"
#include "common/json.h"
#include "daemon/server.h"
#include "common/util.h"

static void print_status(const struct daemon_info *info, bool json)
{
	uint64_t up = (now_real_ms() - info->started_ms) / 1000;

	if (json) {
		struct jbuf b;
		char *s;

		jbuf_init(&b);
		json_obj_begin(&b);
		json_kv_bool(&b, "running", true);
		json_kv_str(&b, "build", info->build);
		json_kv_uint(&b, "pid", info->pid);
		json_kv_uint(&b, "uptime_s", up);
		json_kv_uint(&b, "sessions", info->sessions);
		json_kv_uint(&b, "subscribers", info->subscribers);
		json_kv_bool(&b, "same_build", strcmp(info->build, build_id()) == 0);
		json_kv_str(&b, "state_dir", info->state_dir);
		json_obj_end(&b);
		s = jbuf_steal(&b);
		puts(s);
		free(s);
		return;
	}
	printf(_("daemon      running, pid %u\n"
		 "build       %s%s\n"
		 "uptime      %llus\n"
		 "sessions    %u running\n"
		 "subscribers %u\n"),
	       info->pid, info->build,
	       strcmp(info->build, build_id()) == 0 ? "" : _(" (not this build: boxy daemon restart)"),
	       (unsigned long long)up, info->sessions, info->subscribers);
	if (info->state_dir)
		printf(_("store       %s/sessions.db\n"), info->state_dir);
}

/* The JSON answer when no daemon answers: running false, this client's build, why. */
static void print_status_none(const char *why)
{
	struct jbuf b;
	char *s;

	jbuf_init(&b);
	json_obj_begin(&b);
	json_kv_bool(&b, "running", false);
	json_kv_str(&b, "client_build", build_id());
	json_kv_str(&b, "error", why);
	json_obj_end(&b);
	s = jbuf_steal(&b);
	puts(s);
	free(s);
}

static int run_daemon(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	bool json = argc > 2 && strcmp(argv[2], "--json") == 0;
	struct daemon_info info;
	char *err = NULL;
	int fd;

	if (!sub)
		return cmd_usage_error(&cmd_daemon_entry, _("missing subcommand (status, restart, stop)"));
	if (strcmp(sub, "serve") == 0 && argc == 2)
		return server_main();
	if (argc > 3 || (argc == 3 && !json) || (json && strcmp(sub, "status") != 0))
		return cmd_usage_error(&cmd_daemon_entry, _("unexpected argument '%s'"), argv[argc - 1]);

	if (strcmp(sub, "status") == 0) {
		fd = client_connect(false, false, &info, &err);
		if (fd < 0 && !info.build && json) {
			/* No daemon is an answer a script can read, not an error; still exit 1. */
			print_status_none(err);
			free(err);
			return 1;
		}
		if (fd < 0 && !info.build) {
			fprintf(stderr, "boxy daemon: %s\n", err);
			free(err);
			return 1;
		}
		print_status(&info, json);
		daemon_info_free(&info);
		free(err);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (strcmp(sub, "stop") == 0 || strcmp(sub, "restart") == 0) {
		bool restart = strcmp(sub, "restart") == 0;
		pid_t old;

		fd = client_connect(false, false, &info, &err);
		if (fd < 0 && info.build) {
			/* Another build: it refused us, but stopping by signal is still ours to do. */
			if (info.sessions > 0) {
				fprintf(stderr, ngettext("boxy daemon: %u session still running: "
							 "refusing to stop the daemon\n",
							 "boxy daemon: %u sessions still running: "
							 "refusing to stop the daemon\n", info.sessions),
					info.sessions);
				return 1;
			}
			kill((pid_t)info.pid, SIGTERM);
			free(err);
			err = NULL;
		} else if (fd < 0) {
			if (!restart) {
				fprintf(stderr, "boxy daemon: %s\n", err);
				free(err);
				return 1;
			}
			free(err);
			err = NULL;
		} else {
			if (client_stop_daemon(fd, &err) < 0) {
				fprintf(stderr, "boxy daemon: %s\n", err);
				free(err);
				close(fd);
				return 1;
			}
			close(fd);
		}
		old = (pid_t)info.pid;
		daemon_info_free(&info);
		/*
		 * Wait for the old one to be gone (bounded): by its pid, never by
		 * connecting — under systemd the socket is boxy.socket's, and a
		 * connection would start a new daemon (doc/systemd.md).
		 */
		for (int i = 0; old > 0 && i < 200 && (kill(old, 0) == 0 || errno == EPERM); i++)
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
		if (!restart) {
			printf(_("daemon stopped\n"));
			return 0;
		}
		fd = client_connect(true, false, &info, &err);
		if (fd < 0) {
			fprintf(stderr, "boxy daemon: %s\n", err);
			free(err);
			return 1;
		}
		printf(_("daemon restarted, pid %u, build %s\n"), info.pid, info.build);
		daemon_info_free(&info);
		close(fd);
		return 0;
	}
	return cmd_usage_error(&cmd_daemon_entry, _("unknown subcommand '%s'"), sub);
}

const struct cmd_entry cmd_daemon_entry = {
	"daemon", N_("status | restart | stop the per-user daemon"),
	N_("Usage: boxy daemon status [--json] | restart | stop\n"
	   "\n"
	   "The per-user daemon owns every session; boxy run starts it on demand.\n"
	   "  status    which build is running, since when, and how busy it is\n"
	   "  restart   replace it with this build (refused while sessions run)\n"
	   "  stop      stop it (refused while sessions run)\n"
	   "An idle daemon exits by itself after 10 minutes.\n"),
	run_daemon,
};
