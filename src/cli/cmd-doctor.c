/*
 * cli/cmd-doctor.c — `boxy doctor [--json]`: can this host run boxy, and what
 * is weaker here than the specification asks for. The probes are cli/doctor.c's;
 * this file parses the one flag and prints.
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/doctor.h"
#include "common/util.h"

/* Exit status when a check failed: boxy cannot run on this host. */
#define DOCTOR_EXIT_CANNOT_RUN 1

static int run_doctor(int argc, char **argv)
{
	struct doctor_report r;
	bool json = false;
	char *out;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else
			return cmd_usage_error(&cmd_doctor_entry, _("unexpected argument '%s'"),
					       argv[i]);
	}
	doctor_run(&r);
	out = json ? doctor_format_json(&r)
		   : doctor_format_text_color(&r, color_wanted(STDOUT_FILENO));
	fputs(out, stdout);
	if (json)
		fputc('\n', stdout);
	free(out);
	rc = doctor_can_run(&r) ? 0 : DOCTOR_EXIT_CANNOT_RUN;
	doctor_report_free(&r);
	return rc;
}

const struct cmd_entry cmd_doctor_entry = {
	"doctor", N_("check that this host can run boxy, and what is weaker here"),
	N_("Usage: boxy doctor [--json]\n"
	   "Probe what boxy needs: the kernel, Landlock's ABI (and what a lower ABI\n"
	   "cannot enforce), seccomp's actions, unprivileged user namespaces (actually\n"
	   "created in a child), /dev/net/tun, and the cgroup v2 controllers delegated\n"
	   "to you (and what falls back without them).\n\n"
	   "  + ok    what boxy needs is there\n"
	   "  ! warn  boxy runs, something is weaker; the lines below say what\n"
	   "  x fail  boxy cannot run here\n\n"
	   "      --json   the checks as a JSON array\n\n"
	   "Exit status: 0 when boxy can run (warnings allowed), 1 when a check failed.\n"),
	run_doctor,
};
