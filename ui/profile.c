/*
 * ui/profile.c — `boxy profile list` and `boxy profile show` for people: the
 * table of the profiles a NAME can reach, and a profile as a run would get it
 * (network, filesystem, env, limits, seccomp). The --json forms are
 * cli/cmd-profile.c's.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>

#include "ui/profile.h"
#include "common/util.h"

/* The profiles a NAME can reach: name, where from, which file; then where the user's go. */
void profile_print_table(FILE *out, const struct profile_info *v, size_t n, const char *udir)
{
	fprintf(out, "%-16s %-7s %s\n", _("NAME"), _("FROM"), _("WHERE"));
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%-16s %-7s %s%s\n", v[i].name, _(profile_source_name(v[i].source)),
		        v[i].path ? v[i].path : _("built in"),
		        v[i].hides_lower ? _("  (hides the preset of this name)") : "");
	}
	fprintf(out, _("\nYour own profiles go in %s/NAME.yaml.\n"),
	        udir ? udir : "$XDG_CONFIG_HOME/boxy/profiles");
}

/* "10m", "90s", "1h30m": a duration as a user would write it. */
static void profile_format_duration(uint64_t ms, char *buf, size_t len)
{
	if (ms % 1000)
		snprintf(buf, len, "%" PRIu64 "ms", ms);
	else if (ms % 60000)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else if (ms % 3600000)
		snprintf(buf, len, "%" PRIu64 "m", ms / 60000);
	else
		snprintf(buf, len, "%" PRIu64 "h", ms / 3600000);
}

/* The human-readable form of show: what a run with this profile gets. */
void profile_print_runspec(FILE *out, const struct runspec *rs)
{
	char buf[64];
	bool any;

	fprintf(out, _("network      %s\n"), rs->net == NET_UNSET ? _("(not set: public)") :
	        net_mode_name(rs->net));
	for (size_t i = 0; i < rs->nhosts; i++) {
		fprintf(out, "  %-10s %s", i == 0 ? _("hosts") : "", rs->hosts[i].name);
		for (size_t j = 0; j < rs->hosts[i].nports; j++)
			fprintf(out, "%c%u", j == 0 ? ':' : ',', rs->hosts[i].ports[j]);
		fputc('\n', out);
	}
	if (rs->nports) {
		fprintf(out, "  %-10s", _("ports"));
		for (size_t i = 0; i < rs->nports; i++)
			fprintf(out, " %u", rs->ports[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < rs->ncidrs; i++)
		fprintf(out, "  %-10s %s\n", i == 0 ? _("cidrs") : "", rs->cidrs[i].text);
	if (rs->tailscale)
		fprintf(out, "  %-10s %s\n", _("tailscale"), _("yes"));

	fprintf(out, _("filesystem   the working directory read-write, a fresh $HOME and /tmp\n"));
	for (size_t i = 0; i < rs->nmounts; i++) {
		const struct mount_spec *m = &rs->mounts[i];

		if (m->dst)
			fprintf(out, "  %-10s %s -> %s\n", mount_kind_name(m->kind), m->src, m->dst);
		else
			fprintf(out, "  %-10s %s\n", mount_kind_name(m->kind), m->src);
	}
	fprintf(out, "  %-10s %s\n", "git", rs->allow_git_write ?
	        _(".git hooks and config writable (allow-git-write)") :
	        _(".git hooks and config read-only"));

	any = false;
	fprintf(out, _("env          the default allowlist"));
	for (size_t i = 0; i < rs->nenv; i++) {
		if (!rs->env[i].value) {
			fprintf(out, "%s%s", any ? " " : _(", and "), rs->env[i].name);
			any = true;
		}
	}
	fputc('\n', out);
	for (size_t i = 0; i < rs->nenv; i++) {
		if (rs->env[i].value)
			fprintf(out, "  %-10s %s=%s\n", "set", rs->env[i].name, rs->env[i].value);
	}

	fprintf(out, _("limits      "));
	any = false;
	if (rs->memory) {
		fprintf(out, _(" memory %s"), format_size(rs->memory, buf, sizeof(buf)));
		any = true;
	}
	if (rs->pids) {
		fprintf(out, _(" pids %" PRIu64), rs->pids);
		any = true;
	}
	if (rs->cpus_milli) {
		if (rs->cpus_milli % 1000)
			fprintf(out, _(" cpus %u.%03u"), rs->cpus_milli / 1000, rs->cpus_milli % 1000);
		else
			fprintf(out, _(" cpus %u"), rs->cpus_milli / 1000);
		any = true;
	}
	if (rs->timeout_ms) {
		profile_format_duration(rs->timeout_ms, buf, sizeof(buf));
		fprintf(out, _(" timeout %s"), buf);
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : _(" none set (boxy's defaults)"));
	fprintf(out, _("alerts       %s"), rs->on_alert ? rs->on_alert : _("(not set: log)"));
	if (rs->on_denials)
		fprintf(out, _("; refusal number %" PRIu64 " is one too (--on-denials)"), rs->on_denials);
	fputc('\n', out);
	fprintf(out, _("seccomp      %s\n"), rs->seccomp == SECCOMP_UNSET ? _("(not set: strict)") :
	        seccomp_mode_name(rs->seccomp));
	fprintf(out, _("tripwires    %s\n"), rs->tripwires == ONOFF_UNSET ? _("(not set: off)") :
		rs->tripwires == ONOFF_ON ? _("on: decoy credentials in $HOME, watched") : _("off"));
}
