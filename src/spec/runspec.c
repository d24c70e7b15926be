/*
 * spec/runspec.c — the run-spec's life: built empty, filled from a profile and
 * then from the flags (runspec_merge), completed and checked once
 * (runspec_finish); its JSON description walks the option table and lives
 * with it (spec/options.c, runspec_to_json).
 *
 * runspec_finish() is the one place where the options are judged together.
 * Each flag on its own was validated by spec/values.c; what remains are defaults
 * that depend on other options (the network mode follows from --allow-host)
 * and combinations that cannot mean what the user hoped: a capture under
 * --net none would be an empty file that looks like evidence of a quiet
 * run, and a hostname under --net public would suggest a restriction that
 * public mode does not make. Those are refused, never resolved by picking
 * one side silently.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/path-guard.h"
#include "spec/http-rule.h"
#include "spec/runspec.h"
#include "spec/values.h"
#include "common/util.h"

void host_spec_free(struct host_spec *h)
{
	free(h->name);
	free(h->ports);
	memset(h, 0, sizeof(*h));
}

void cidr_free(struct cidr *c)
{
	free(c->text);
	memset(c, 0, sizeof(*c));
}

void env_spec_free(struct env_spec *e)
{
	free(e->name);
	free(e->value);
	memset(e, 0, sizeof(*e));
}

void mount_spec_free(struct mount_spec *m)
{
	free(m->src);
	free(m->dst);
	memset(m, 0, sizeof(*m));
}

void mounts_add_writable_roots(struct path_roots *r, const char *workdir,
			       const struct mount_spec *mounts, size_t n)
{
	path_roots_add_real(r, workdir);
	for (size_t i = 0; i < n; i++)
		if (mounts[i].kind == MOUNT_RW || mounts[i].kind == MOUNT_MKDIR)
			path_roots_add_real(r, mounts[i].src);
}

void runspec_init(struct runspec *rs)
{
	memset(rs, 0, sizeof(*rs));
}

/* Drop every host and HTTP rule (what names destinations). */
static void runspec_clear_hosts(struct runspec *rs)
{
	for (size_t i = 0; i < rs->nhosts; i++)
		host_spec_free(&rs->hosts[i]);
	free(rs->hosts);
	rs->hosts = NULL;
	rs->nhosts = 0;
	for (size_t i = 0; i < rs->nhttp_rules; i++)
		free(rs->http_rules[i]);
	free(rs->http_rules);
	rs->http_rules = NULL;
	rs->nhttp_rules = 0;
}

static void runspec_clear_network(struct runspec *rs)
{
	runspec_clear_hosts(rs);
	for (size_t i = 0; i < rs->ncidrs; i++)
		cidr_free(&rs->cidrs[i]);
	free(rs->cidrs);
	rs->cidrs = NULL;
	rs->ncidrs = 0;
	free(rs->ports);
	rs->ports = NULL;
	rs->nports = 0;
	rs->tailscale = false;
}

void runspec_free(struct runspec *rs)
{
	free(rs->profile);
	strv_free(rs->argv);
	free(rs->workdir);
	runspec_clear_network(rs);
	for (size_t i = 0; i < rs->nmounts; i++)
		mount_spec_free(&rs->mounts[i]);
	free(rs->mounts);
	for (size_t i = 0; i < rs->nenv; i++)
		env_spec_free(&rs->env[i]);
	free(rs->env);
	free(rs->audit_log);
	free(rs->net_log);
	free(rs->pcap);
	free(rs->fail_on);
	free(rs->report);
	free(rs->on_alert);
	runspec_init(rs);
}

/* Replace *dst with a copy of src when src is set. */
static void merge_str(char **dst, const char *src)
{
	if (!src)
		return;
	free(*dst);
	*dst = xstrdup(src);
}

/*
 * --on-alert over a profile's: the items of both, src's after dst's, so a
 * flag naming one kind keeps what the profile says of the others (and a bare
 * action, which names every kind, replaces all of it). Both are canonical
 * texts already; one that does not parse (it cannot) leaves dst as it was.
 */
static void merge_on_alert(char **dst, const char *src)
{
	struct react_policy p = { 0 };
	char *err = NULL;

	if (!src)
		return;
	if ((*dst && parse_on_alert(*dst, &p, &err) < 0) || parse_on_alert(src, &p, &err) < 0) {
		free(err);
		return;
	}
	free(*dst);
	*dst = on_alert_text(&p);
}

static char *xstrdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void runspec_merge(struct runspec *dst, const struct runspec *src)
{
	merge_str(&dst->profile, src->profile);
	if (src->argv) {
		strv_free(dst->argv);
		dst->argv = strv_dup(src->argv);
	}
	merge_str(&dst->workdir, src->workdir);

	/*
	 * A network mode set on top replaces the whole network section below
	 * it when the lower entries cannot apply: `--profile node --net none`
	 * means "node, offline", not "refuse because node names a registry".
	 * Entries given at the same level as the mode are kept and judged by
	 * runspec_finish.
	 */
	if (src->net == NET_NONE)
		runspec_clear_network(dst);
	else if (src->net == NET_PUBLIC)
		runspec_clear_hosts(dst);
	if (src->net != NET_UNSET)
		dst->net = src->net;
	else if ((src->nhosts || src->nhttp_rules) && dst->net == NET_PUBLIC)
		dst->net = NET_ALLOWLIST;       /* naming hosts on top asks for the allowlist */
	for (size_t i = 0; i < src->nhttp_rules; i++)
		*(char **)xappend(&dst->http_rules, &dst->nhttp_rules, sizeof(char *)) =
			xstrdup(src->http_rules[i]);
	for (size_t i = 0; i < src->nhosts; i++) {
		struct host_spec *h = xappend(&dst->hosts, &dst->nhosts, sizeof(*h));

		h->name = xstrdup(src->hosts[i].name);
		h->nports = src->hosts[i].nports;
		h->ports = xcalloc(h->nports ? h->nports : 1, sizeof(uint16_t));
		if (h->nports)
			memcpy(h->ports, src->hosts[i].ports, h->nports * sizeof(uint16_t));
	}
	for (size_t i = 0; i < src->nports; i++)
		*(uint16_t *)xappend(&dst->ports, &dst->nports, sizeof(uint16_t)) = src->ports[i];
	for (size_t i = 0; i < src->ncidrs; i++) {
		struct cidr *c = xappend(&dst->cidrs, &dst->ncidrs, sizeof(*c));

		*c = src->cidrs[i];
		c->text = xstrdup(src->cidrs[i].text);
	}
	dst->tailscale = dst->tailscale || src->tailscale;

	for (size_t i = 0; i < src->nmounts; i++) {
		struct mount_spec *m = xappend(&dst->mounts, &dst->nmounts, sizeof(*m));

		m->kind = src->mounts[i].kind;
		m->src = xstrdup(src->mounts[i].src);
		m->dst = xstrdup_or_null(src->mounts[i].dst);
	}
	dst->allow_git_write = dst->allow_git_write || src->allow_git_write;
	for (size_t i = 0; i < src->nenv; i++) {
		struct env_spec *e = xappend(&dst->env, &dst->nenv, sizeof(*e));

		e->name = xstrdup(src->env[i].name);
		e->value = xstrdup_or_null(src->env[i].value);
	}

	if (src->memory)
		dst->memory = src->memory;
	if (src->pids)
		dst->pids = src->pids;
	if (src->cpus_milli)
		dst->cpus_milli = src->cpus_milli;
	if (src->timeout_ms)
		dst->timeout_ms = src->timeout_ms;
	merge_str(&dst->audit_log, src->audit_log);
	merge_str(&dst->net_log, src->net_log);
	merge_str(&dst->pcap, src->pcap);
	merge_str(&dst->fail_on, src->fail_on);
	merge_str(&dst->report, src->report);
	merge_on_alert(&dst->on_alert, src->on_alert);
	if (src->on_denials)
		dst->on_denials = src->on_denials;
	if (src->pcap_max)
		dst->pcap_max = src->pcap_max;
	if (src->seccomp != SECCOMP_UNSET)
		dst->seccomp = src->seccomp;
	if (src->tripwires != ONOFF_UNSET)
		dst->tripwires = src->tripwires;
	dst->tty = dst->tty || src->tty;
	dst->verbose = dst->verbose || src->verbose;
	dst->detach = dst->detach || src->detach;
	dst->raw_terminal = dst->raw_terminal || src->raw_terminal;
	dst->no_attribution = dst->no_attribution || src->no_attribution;
}

/*
 * Make *path absolute against base and lexically normal (symlinks are the
 * mount stage's business). This is the one place a run-spec's paths are
 * made so: the daemon refuses any other form as malformed, and the sandbox
 * and mount stages only check (doc/internals-spec.md).
 */
static int absolutize(char **path, const char *base, const char *what, char **err)
{
	char *abs;

	if (!*path)
		return 0;
	if (**path == '\0')
		return set_err(err, _("%s: empty path"), what);
	if (path_is_normal(*path))
		return 0;
	abs = path_absolute(*path, base);
	if (!abs)
		return set_err_errno(err, _("%s: cannot make '%s' absolute"), what, *path);
	free(*path);
	*path = abs;
	return 0;
}

/* Refuse combinations that cannot mean what was asked. */
static int runspec_check(const struct runspec *rs, char **err)
{
	if (rs->nhosts && (rs->net == NET_NONE || rs->net == NET_PUBLIC))
		return set_err(err, _("--allow-host implies --net allowlist; it contradicts --net %s"),
			       net_mode_name(rs->net));
	if (rs->nhttp_rules && (rs->net == NET_NONE || rs->net == NET_PUBLIC))
		return set_err(err, "--allow-http implies --net allowlist; it contradicts --net %s",
			       net_mode_name(rs->net));
	if (rs->nhttp_rules > HTTP_RULES_MAX)
		return set_err(err, "more than %d --allow-http rules", HTTP_RULES_MAX);
	if (rs->net == NET_NONE) {
		if (rs->pcap)
			return set_err(err, _("--pcap with --net none would capture nothing"));
		if (rs->net_log)
			return set_err(err, _("--net-log with --net none would record nothing"));
		if (rs->nports)
			return set_err(err, _("--allow-port with --net none: no connection leaves "
					 "the sandbox to use it"));
		if (rs->ncidrs)
			return set_err(err, _("--allow-cidr with --net none: no connection leaves "
					 "the sandbox to use it"));
		if (rs->tailscale)
			return set_err(err, _("--tailscale with --net none: no connection leaves "
					 "the sandbox to use it"));
	}
	if (rs->pcap_max && !rs->pcap)
		return set_err(err, _("--pcap-max without --pcap: there is no capture to limit"));
	return 0;
}

/*
 * A rule's domain is a host of the allowlist: added, without ports of its
 * own, unless an entry of that very name is there (whose ports it keeps).
 */
static int runspec_add_rule_hosts(struct runspec *rs, char **err)
{
	for (size_t i = 0; i < rs->nhttp_rules; i++) {
		struct http_rule r;
		struct http_rule_error e;
		bool listed = false;

		if (http_rule_parse(rs->http_rules[i], &r, &e) < 0)
			return set_err(err, "--allow-http '%s': column %zu: %s", rs->http_rules[i],
				       e.column, _(e.why));
		for (size_t j = 0; r.domain && j < rs->nhosts; j++)
			if (strcmp(rs->hosts[j].name, r.domain) == 0)
				listed = true;
		if (r.domain && !listed) {
			struct host_spec *h = xappend(&rs->hosts, &rs->nhosts, sizeof(*h));

			h->name = xstrdup(r.domain);
			h->ports = xcalloc(1, sizeof(uint16_t));
		}
		http_rule_free(&r);
	}
	return 0;
}

int runspec_finish(struct runspec *rs, const char *cwd, char **err)
{
	if (!rs->argv || !rs->argv[0])
		return set_err(err, _("no command to run"));
	if (rs->argv[0][0] == '\0')
		return set_err(err, _("the command is an empty string"));
	if (runspec_check(rs, err) < 0)
		return -1;

	if (!rs->workdir)
		rs->workdir = xstrdup(cwd);
	if (absolutize(&rs->workdir, cwd, "--workdir", err) < 0)
		return -1;
	for (size_t i = 0; i < rs->nmounts; i++) {
		struct mount_spec *m = &rs->mounts[i];
		char *what = m->kind == MOUNT_MKDIR ? xstrdup("mkdir") :
			     xasprintf("--%s", mount_kind_name(m->kind));
		int r = absolutize(&m->src, cwd, what, err);

		if (r == 0 && m->dst && m->dst[0] != '/')
			r = set_err(err, _("%s: destination '%s' is not an absolute path"), what,
				    m->dst);
		if (r == 0)
			r = absolutize(&m->dst, "/", what, err);
		free(what);
		if (r < 0)
			return -1;
	}
	/* --audit-log journal is the systemd journal (a file of that name: ./journal). */
	if ((!rs->audit_log || strcmp(rs->audit_log, "journal") != 0) &&
	    absolutize(&rs->audit_log, cwd, "--audit-log", err) < 0)
		return -1;
	if (absolutize(&rs->net_log, cwd, "--net-log", err) < 0 ||
	    absolutize(&rs->pcap, cwd, "--pcap", err) < 0 ||
	    absolutize(&rs->report, cwd, "--report", err) < 0)
		return -1;

	if (runspec_add_rule_hosts(rs, err) < 0)
		return -1;
	if (rs->net == NET_UNSET)
		rs->net = rs->nhosts || rs->nhttp_rules ? NET_ALLOWLIST : NET_PUBLIC;
	/* After the default: a bare --allow-port lands in public mode, where it would do nothing. */
	if (rs->net == NET_PUBLIC && rs->nports)
		return set_err(err, _("--allow-port adds ports to allowlist mode, and public mode "
				 "already permits every port: name hosts with --allow-host, or give "
				 "--net allowlist"));
	if (rs->seccomp == SECCOMP_UNSET)
		rs->seccomp = SECCOMP_STRICT;
	/* The node, python and claude presets turn them on; nothing else does unasked. */
	if (rs->tripwires == ONOFF_UNSET)
		rs->tripwires = ONOFF_OFF;
	if (rs->pcap && !rs->pcap_max)
		rs->pcap_max = RUNSPEC_DEFAULT_PCAP_MAX;
	if (rs->pids == 0)
		rs->pids = RUNSPEC_DEFAULT_PIDS;
	return 0;
}

const char *net_mode_name(enum net_mode m)
{
	switch (m) {
	case NET_PUBLIC:
		return "public";
	case NET_ALLOWLIST:
		return "allowlist";
	case NET_NONE:
		return "none";
	case NET_UNSET:
		break;
	}
	return "unset";
}

const char *seccomp_mode_name(enum seccomp_mode m)
{
	switch (m) {
	case SECCOMP_STRICT:
		return "strict";
	case SECCOMP_COMPAT:
		return "compat";
	case SECCOMP_UNSET:
		break;
	}
	return "unset";
}

const char *onoff_name(enum onoff v)
{
	switch (v) {
	case ONOFF_ON:
		return "on";
	case ONOFF_OFF:
		return "off";
	case ONOFF_UNSET:
		break;
	}
	return "unset";
}

const char *mount_kind_name(enum mount_kind k)
{
	switch (k) {
	case MOUNT_RO:
		return "ro";
	case MOUNT_RW:
		return "rw";
	case MOUNT_PROTECT:
		return "protect";
	case MOUNT_MKDIR:
		return "mkdir";
	case MOUNT_COPY:
		return "copy";
	case MOUNT_COPY_RO:
		return "copy-ro";
	}
	return "unknown";
}
