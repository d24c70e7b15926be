/*
 * spec/options.c — the rows of the run-spec's option table and the one
 * function that applies a row's text to a run-spec through its validator.
 *
 * The order of the rows is the order of runspec_to_json's keys (doc/json.md)
 * and, within each profile section, the order the profile reader lists its
 * keys in when it refuses an unknown one; the command line's order is the
 * same less the rows without a flag. Rows that share a field (the mount
 * kinds; -e and env.set) keep it in one list, as the sandbox reads it.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "spec/http-rule.h"
#include "spec/options.h"
#include "spec/values.h"
#include "common/util.h"

#define F(x) offsetof(struct runspec, x)

const struct spec_option spec_options[] = {
	/* flag            short key                            json               kind */
	{ "profile", 'p', NULL, "profile", SPEC_NAME, 0, F(profile), 0, "profile" },
	{ NULL, 0, NULL, "argv", SPEC_ARGV, 0, F(argv), 0, NULL },
	{ "workdir", 'w', NULL, "workdir", SPEC_DIR, 0, F(workdir), 0, "dir" },
	{ "net", 0, "network.mode", "net.mode", SPEC_NET_MODE, 0, F(net), 0,
	  "none public allowlist" },
	{ "allow-host", 0, "network.hosts", "net.hosts", SPEC_HOST, 0, F(hosts), F(nhosts), NULL },
	{ "allow-port", 0, "network.ports", "net.ports", SPEC_PORT, 0, F(ports), F(nports), NULL },
	{ "allow-cidr", 0, "network.cidrs", "net.cidrs", SPEC_CIDR, 0, F(cidrs), F(ncidrs), NULL },
	{ "tailscale", 0, "network.tailscale", "net.tailscale", SPEC_SWITCH, 0, F(tailscale), 0,
	  NULL },
	{ "allow-http", 0, "network.http", "net.http", SPEC_HTTP_RULE, 0, F(http_rules),
	  F(nhttp_rules), NULL },
	{ "ro", 0, "filesystem.ro", "mounts", SPEC_MOUNT, MOUNT_RO, F(mounts), F(nmounts), "file" },
	{ "rw", 0, "filesystem.rw", "mounts", SPEC_MOUNT, MOUNT_RW, F(mounts), F(nmounts), "file" },
	{ "protect", 0, "filesystem.protect", "mounts", SPEC_MOUNT, MOUNT_PROTECT, F(mounts),
	  F(nmounts), "file" },
	{ NULL, 0, "filesystem.mkdir", "mounts", SPEC_MOUNT, MOUNT_MKDIR, F(mounts), F(nmounts),
	  NULL },
	{ "copy", 0, "filesystem.copy", "mounts", SPEC_COPY, MOUNT_COPY, F(mounts), F(nmounts),
	  "file" },
	{ "copy-ro", 0, "filesystem.copy-ro", "mounts", SPEC_COPY, MOUNT_COPY_RO, F(mounts),
	  F(nmounts), "file" },
	{ "allow-git-write", 0, "filesystem.allow-git-write", "allow_git_write", SPEC_SWITCH, 0,
	  F(allow_git_write), 0, NULL },
	{ "env", 'e', "env.pass", "env", SPEC_ENV, 0, F(env), F(nenv), NULL },
	{ NULL, 0, "env.set", "env", SPEC_ENV_SET, 0, F(env), F(nenv), NULL },
	{ "memory", 0, "limits.memory", "limits.memory", SPEC_SIZE, 0, F(memory), 0, NULL },
	{ "pids", 0, "limits.pids", "limits.pids", SPEC_COUNT, 0, F(pids), 0, NULL },
	{ "cpus", 0, "limits.cpus", "limits.cpus_milli", SPEC_CPUS, 0, F(cpus_milli), 0, NULL },
	{ "timeout", 0, "limits.timeout", "limits.timeout_ms", SPEC_DURATION, 0, F(timeout_ms), 0,
	  NULL },
	{ "audit-log", 0, NULL, "logs.audit", SPEC_AUDIT_LOG, 0, F(audit_log), 0, "file" },
	{ "net-log", 0, NULL, "logs.net", SPEC_FILE, 0, F(net_log), 0, "file" },
	{ "pcap", 0, NULL, "logs.pcap", SPEC_FILE, 0, F(pcap), 0, "file" },
	{ "pcap-max", 0, NULL, "logs.pcap_max", SPEC_SIZE, 0, F(pcap_max), 0, NULL },
	/* The CI gate (doc/ci.md): a CI profile may ask for it; the report is a file, flag only. */
	{ "fail-on", 0, "fail-on", "gate.fail_on", SPEC_FAIL_ON, 0, F(fail_on), 0, NULL },
	{ "report", 0, NULL, "gate.report", SPEC_FILE, 0, F(report), 0, "file" },
	/* What an alert does to the session (doc/react.md); the presets freeze on a tripwire. */
	{ "on-alert", 0, "on-alert", "react.on_alert", SPEC_ON_ALERT, 0, F(on_alert), 0,
	  "log freeze stop" },
	{ "on-denials", 0, "on-denials", "react.on_denials", SPEC_COUNT, 0, F(on_denials), 0,
	  NULL },
	{ "seccomp", 0, "seccomp", "seccomp", SPEC_SECCOMP, 0, F(seccomp), 0, "strict compat" },
	{ "tripwires", 0, "tripwires", "tripwires", SPEC_ONOFF, 0, F(tripwires), 0, "on off" },
	{ "tty", 0, NULL, "tty", SPEC_SWITCH, 0, F(tty), 0, NULL },
	{ "verbose", 'v', NULL, "verbose", SPEC_SWITCH, 0, F(verbose), 0, NULL },
	{ "detach", 'd', NULL, "detach", SPEC_SWITCH, 0, F(detach), 0, NULL },
	{ "raw-terminal", 0, "raw-terminal", "raw_terminal", SPEC_SWITCH, 0, F(raw_terminal), 0,
	  NULL },
	/* A flag only: a profile that comes with a project must not hide who did what. */
	{ "no-attribution", 0, NULL, "no_attribution", SPEC_SWITCH, 0, F(no_attribution), 0,
	  NULL },
	/* A profile may come from a project: it can send the log to the journal, never to a
	 * file (doc/journal.md); the flag's row owns the field on the wire and in JSON. */
	{ NULL, 0, "audit-log", "logs.audit", SPEC_JOURNAL, 0, F(audit_log), 0, NULL },
};

const size_t spec_noptions = ARRAY_SIZE(spec_options);

bool spec_kind_is_list(enum spec_kind k)
{
	switch (k) {
	case SPEC_MOUNT: case SPEC_COPY: case SPEC_HOST: case SPEC_PORT: case SPEC_CIDR:
	case SPEC_ENV: case SPEC_ENV_SET: case SPEC_HTTP_RULE:
		return true;
	default:
		return false;
	}
}

bool spec_option_is_switch(const struct spec_option *o)
{
	return o->kind == SPEC_SWITCH;
}

bool spec_option_owns_field(const struct spec_option *o)
{
	for (const struct spec_option *p = spec_options; p < o; p++)
		if (p->field == o->field)
			return false;
	return true;
}

const struct spec_option *spec_option_by_flag(const char *flag)
{
	for (size_t i = 0; i < spec_noptions; i++)
		if (spec_options[i].flag && strcmp(spec_options[i].flag, flag) == 0)
			return &spec_options[i];
	return NULL;
}

const struct spec_option *spec_option_by_short(char c)
{
	for (size_t i = 0; i < spec_noptions; i++)
		if (c && spec_options[i].short_flag == c)
			return &spec_options[i];
	return NULL;
}

const struct spec_option *spec_option_by_key(const char *key)
{
	for (size_t i = 0; i < spec_noptions; i++)
		if (spec_options[i].key && strcmp(spec_options[i].key, key) == 0)
			return &spec_options[i];
	return NULL;
}

size_t spec_options_getopt(struct option *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];

		if (!o->flag)
			continue;
		if (n + 1 >= max)
			fatal("spec: getopt table too small");
		out[n++] = (struct option){
			o->flag, spec_option_is_switch(o) ? no_argument : required_argument, NULL,
			o->short_flag ? o->short_flag : SPEC_GETOPT_ROW + (int)i,
		};
	}
	out[n] = (struct option){ NULL, 0, NULL, 0 };
	return n;
}

void spec_options_shortopts(char *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];

		if (!o->short_flag)
			continue;
		if (n + 3 > max)
			fatal("spec: short option string too small");
		out[n++] = o->short_flag;
		if (!spec_option_is_switch(o))
			out[n++] = ':';
	}
	out[n] = '\0';
}

const struct spec_option *spec_option_by_getopt(int val)
{
	if (val >= SPEC_GETOPT_ROW && val < SPEC_GETOPT_ROW + (int)spec_noptions)
		return spec_options[val - SPEC_GETOPT_ROW].flag ? &spec_options[val - SPEC_GETOPT_ROW]
							     : NULL;
	if (val > 0 && val < SPEC_GETOPT_ROW)
		return spec_option_by_short((char)val);
	return NULL;
}

void *spec_option_field(const struct spec_option *o, const struct runspec *rs)
{
	return (char *)rs + o->field;
}

size_t *spec_option_count(const struct spec_option *o, const struct runspec *rs)
{
	return spec_kind_is_list(o->kind) ? (size_t *)((char *)rs + o->count) : NULL;
}

/* Replace the string field with a copy of text; refuse it empty with reason. */
static int apply_string(char **slot, const char *text, const char *empty, char **err)
{
	if (*text == '\0')
		return set_err(err, "%s", empty);
	free(*slot);
	*slot = xstrdup(text);
	return 0;
}

/* Append the n-byte entry to o's list in rs. */
static void append_entry(const struct spec_option *o, struct runspec *rs, const void *entry,
			 size_t n)
{
	memcpy(xappend(spec_option_field(o, rs), spec_option_count(o, rs), n), entry, n);
}

int spec_option_apply(const struct spec_option *o, struct runspec *rs, const char *text,
		      char **err)
{
	void *f = spec_option_field(o, rs);

	switch (o->kind) {
	case SPEC_ARGV:
		strv_push(f, text);
		return 0;
	case SPEC_SWITCH:
		*(bool *)f = true;
		return 0;
	case SPEC_NAME:
		return apply_string(f, text, "empty profile name", err);
	case SPEC_DIR:
		return apply_string(f, text, "empty path", err);
	case SPEC_FILE:
	case SPEC_AUDIT_LOG:
		return apply_string(f, text, "empty file name", err);
	case SPEC_JOURNAL:
		if (strcmp(text, "journal") != 0)
			return set_err(err, _("only 'journal' (a file is named with --audit-log FILE), "
					      "not '%s'"), text);
		return apply_string(f, text, "empty", err);
	case SPEC_SIZE:
		return parse_size(text, f, err);
	case SPEC_DURATION:
		return parse_duration(text, f, err);
	case SPEC_COUNT:
		return parse_count(text, f, err);
	case SPEC_CPUS:
		return parse_cpus(text, f, err);
	case SPEC_NET_MODE:
		return parse_net_mode(text, f, err);
	case SPEC_SECCOMP:
		return parse_seccomp_mode(text, f, err);
	case SPEC_ONOFF:
		return parse_onoff(text, f, err);
	case SPEC_FAIL_ON: {
		unsigned bits;

		if (parse_fail_on(text, &bits, err) < 0)
			return -1;
		free(*(char **)f);
		*(char **)f = fail_on_text(bits);
		return 0;
	}
	case SPEC_ON_ALERT: {
		struct react_policy p = { 0 };

		/* Over a value already there, items add up, as a flag's over a profile's. */
		if ((*(char **)f && parse_on_alert(*(char **)f, &p, err) < 0) ||
		    parse_on_alert(text, &p, err) < 0)
			return -1;
		free(*(char **)f);
		*(char **)f = on_alert_text(&p);
		return 0;
	}
	case SPEC_MOUNT: {
		struct mount_spec m = { .kind = o->mount };

		if (*text == '\0')
			return set_err(err, "empty path");
		m.src = xstrdup(text);
		append_entry(o, rs, &m, sizeof(m));
		return 0;
	}
	case SPEC_COPY: {
		struct mount_spec m = { 0 };

		if (parse_copy_spec(text, o->mount, &m, err) < 0)
			return -1;
		append_entry(o, rs, &m, sizeof(m));
		return 0;
	}
	case SPEC_HOST: {
		struct host_spec h = { 0 };

		if (parse_host_spec(text, &h, err) < 0)
			return -1;
		append_entry(o, rs, &h, sizeof(h));
		return 0;
	}
	case SPEC_PORT: {
		uint16_t port;

		if (parse_port(text, &port, err) < 0)
			return -1;
		append_entry(o, rs, &port, sizeof(port));
		return 0;
	}
	case SPEC_CIDR: {
		struct cidr c = { 0 };

		if (parse_cidr(text, &c, err) < 0)
			return -1;
		append_entry(o, rs, &c, sizeof(c));
		return 0;
	}
	case SPEC_ENV:
	case SPEC_ENV_SET: {
		struct env_spec e = { 0 };

		if (parse_env_spec(text, &e, err) < 0)
			return -1;
		append_entry(o, rs, &e, sizeof(e));
		return 0;
	}
	case SPEC_HTTP_RULE: {
		struct http_rule r;
		struct http_rule_error e;
		char *copy;

		if (http_rule_parse(text, &r, &e) < 0) {
			char *line = http_rule_error_line(text, &e);

			set_err(err, "'%s': %s", text, line);
			free(line);
			return -1;
		}
		http_rule_free(&r);
		if (*spec_option_count(o, rs) >= HTTP_RULES_MAX)
			return set_err(err, _("more than %d rules"), HTTP_RULES_MAX);
		copy = xstrdup(text);
		append_entry(o, rs, &copy, sizeof(copy));
		return 0;
	}
	}
	fatal("spec: option kind %d has no validator", (int)o->kind);
}

/* ---- JSON (runspec_to_json, declared in spec/runspec.h) ------------------------- */

/* A number that is 0 when unset: null in JSON, so "unlimited" is never shown as 0. */
static void json_opt_uint(struct jbuf *b, uint64_t v)
{
	if (v)
		json_uint(b, v);
	else
		json_null(b);
}

/* One row's value, by its kind. */
static void json_put_row(struct jbuf *b, const struct spec_option *o, const struct runspec *rs)
{
	const void *f = spec_option_field(o, rs);
	size_t n = spec_kind_is_list(o->kind) ? *spec_option_count(o, rs) : 0;

	switch (o->kind) {
	case SPEC_ARGV:
		json_arr_begin(b);
		for (char *const *v = *(char **const *)f; v && *v; v++)
			json_str(b, *v);
		json_arr_end(b);
		return;
	case SPEC_SWITCH:
		json_bool(b, *(const bool *)f);
		return;
	case SPEC_NAME: case SPEC_DIR: case SPEC_FILE: case SPEC_AUDIT_LOG: case SPEC_JOURNAL:
	case SPEC_FAIL_ON: case SPEC_ON_ALERT:
		json_str(b, *(char *const *)f);
		return;
	case SPEC_SIZE: case SPEC_DURATION: case SPEC_COUNT:
		json_opt_uint(b, *(const uint64_t *)f);
		return;
	case SPEC_CPUS:
		json_opt_uint(b, *(const uint32_t *)f);
		return;
	case SPEC_NET_MODE:
		json_str(b, net_mode_name(*(const enum net_mode *)f));
		return;
	case SPEC_SECCOMP:
		json_str(b, seccomp_mode_name(*(const enum seccomp_mode *)f));
		return;
	case SPEC_ONOFF:
		json_str(b, onoff_name(*(const enum onoff *)f));
		return;
	case SPEC_MOUNT: case SPEC_COPY:
		json_arr_begin(b);
		for (size_t i = 0; i < n; i++) {
			const struct mount_spec *m = &(*(struct mount_spec *const *)f)[i];

			json_obj_begin(b);
			json_kv_str(b, "kind", mount_kind_name(m->kind));
			json_kv_str(b, "src", m->src);
			json_kv_str(b, "dst", m->dst);
			json_obj_end(b);
		}
		json_arr_end(b);
		return;
	case SPEC_HOST:
		json_arr_begin(b);
		for (size_t i = 0; i < n; i++) {
			const struct host_spec *h = &(*(struct host_spec *const *)f)[i];

			json_obj_begin(b);
			json_kv_str(b, "name", h->name);
			json_key(b, "ports");
			json_arr_begin(b);
			for (size_t j = 0; j < h->nports; j++)
				json_uint(b, h->ports[j]);
			json_arr_end(b);
			json_obj_end(b);
		}
		json_arr_end(b);
		return;
	case SPEC_PORT:
		json_arr_begin(b);
		for (size_t i = 0; i < n; i++)
			json_uint(b, (*(uint16_t *const *)f)[i]);
		json_arr_end(b);
		return;
	case SPEC_CIDR:
		json_arr_begin(b);
		for (size_t i = 0; i < n; i++)
			json_str(b, (*(struct cidr *const *)f)[i].text);
		json_arr_end(b);
		return;
	case SPEC_HTTP_RULE:
		json_arr_begin(b);
		for (size_t i = 0; i < n; i++)
			json_str(b, (*(char **const *)f)[i]);
		json_arr_end(b);
		return;
	case SPEC_ENV: case SPEC_ENV_SET:
		/*
		 * Names only: -e TOKEN=secret is how a user hands a credential in on
		 * purpose, and this object is written to the session store and shown
		 * by `boxy show`. Whether a value was set is enough to audit.
		 */
		json_arr_begin(b);
		for (size_t i = 0; i < n; i++) {
			const struct env_spec *e = &(*(struct env_spec *const *)f)[i];

			json_obj_begin(b);
			json_kv_str(b, "name", e->name);
			json_kv_bool(b, "set", e->value != NULL);
			json_obj_end(b);
		}
		json_arr_end(b);
		return;
	}
}

/*
 * The rows in table order, one key per field; a row's json "GROUP.KEY" goes
 * into the object GROUP, opened at the first row of a run of the same group.
 */
char *runspec_to_json(const struct runspec *rs)
{
	struct jbuf b;
	char *group = NULL;

	jbuf_init(&b);
	json_obj_begin(&b);
	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];
		const char *dot = strchr(o->json, '.');

		if (!spec_option_owns_field(o))
			continue;
		if (group && !(dot && strlen(group) == (size_t)(dot - o->json) &&
			       strncmp(group, o->json, (size_t)(dot - o->json)) == 0)) {
			json_obj_end(&b);
			free(group);
			group = NULL;
		}
		if (dot && !group) {
			group = xstrndup(o->json, (size_t)(dot - o->json));
			json_key(&b, group);
			json_obj_begin(&b);
		}
		json_key(&b, dot ? dot + 1 : o->json);
		json_put_row(&b, o, rs);
	}
	if (group)
		json_obj_end(&b);
	free(group);
	json_obj_end(&b);
	return jbuf_steal(&b);
}
