/*
 * test-runspec.c — merge semantics (profile below, flags on top), the
 * defaults runspec_finish fills in, every contradiction it refuses, and the
 * JSON description's exact shape.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "spec/values.h"
#include "spec/runspec.h"
#include "common/util.h"

/* Test helpers: add one validated value, failing the test if the parser refuses it. */
static void add_host(struct runspec *rs, const char *s)
{
	struct host_spec *h = xappend(&rs->hosts, &rs->nhosts, sizeof(*h));

	assert_int_equal(parse_host_spec(s, h, NULL), 0);
}

static void add_cidr(struct runspec *rs, const char *s)
{
	struct cidr *c = xappend(&rs->cidrs, &rs->ncidrs, sizeof(*c));

	assert_int_equal(parse_cidr(s, c, NULL), 0);
}

static void add_port(struct runspec *rs, uint16_t port)
{
	*(uint16_t *)xappend(&rs->ports, &rs->nports, sizeof(uint16_t)) = port;
}

static void add_mount(struct runspec *rs, enum mount_kind kind, const char *src, const char *dst)
{
	struct mount_spec *m = xappend(&rs->mounts, &rs->nmounts, sizeof(*m));

	m->kind = kind;
	m->src = xstrdup(src);
	m->dst = dst ? xstrdup(dst) : NULL;
}

static void add_env(struct runspec *rs, const char *s)
{
	struct env_spec *e = xappend(&rs->env, &rs->nenv, sizeof(*e));

	assert_int_equal(parse_env_spec(s, e, NULL), 0);
}

static void set_argv(struct runspec *rs, const char *cmd)
{
	strv_free(rs->argv);
	rs->argv = NULL;
	strv_push(&rs->argv, cmd);
}

static void test_merge_lists_append_scalars_override(void **state)
{
	struct runspec prof, flags;

	(void)state;
	runspec_init(&prof);
	runspec_init(&flags);
	prof.profile = xstrdup("node");
	prof.net = NET_ALLOWLIST;
	add_host(&prof, "registry.npmjs.org");
	add_port(&prof, 443);
	add_mount(&prof, MOUNT_RO, "/home/u/.npmrc", NULL);
	add_env(&prof, "NODE_ENV=production");
	prof.memory = 1ULL << 30;
	prof.pids = 256;
	prof.timeout_ms = 60000;
	prof.seccomp = SECCOMP_COMPAT;
	prof.tailscale = true;

	add_host(&flags, "github.com:22");
	add_port(&flags, 22);
	add_mount(&flags, MOUNT_COPY, "a.json", "/x/a.json");
	add_env(&flags, "GOMAXPROCS=4");
	flags.memory = 2ULL << 30;              /* overrides */
	flags.cpus_milli = 500;                 /* new */
	set_argv(&flags, "npm");

	runspec_merge(&prof, &flags);
	runspec_free(&flags);                   /* merge copied, nothing borrowed */

	assert_string_equal(prof.profile, "node");
	assert_int_equal(prof.net, NET_ALLOWLIST);
	assert_int_equal(prof.nhosts, 2);
	assert_string_equal(prof.hosts[0].name, "registry.npmjs.org");
	assert_string_equal(prof.hosts[1].name, "github.com");
	assert_int_equal(prof.hosts[1].nports, 1);
	assert_int_equal(prof.hosts[1].ports[0], 22);
	assert_int_equal(prof.nports, 2);
	assert_int_equal(prof.ports[0], 443);
	assert_int_equal(prof.ports[1], 22);
	assert_int_equal(prof.nmounts, 2);
	assert_int_equal(prof.mounts[1].kind, MOUNT_COPY);
	assert_string_equal(prof.mounts[1].dst, "/x/a.json");
	assert_int_equal(prof.nenv, 2);
	assert_string_equal(prof.env[1].name, "GOMAXPROCS");
	assert_int_equal(prof.memory, 2ULL << 30);
	assert_int_equal(prof.pids, 256);               /* unset on top: kept */
	assert_int_equal(prof.cpus_milli, 500);
	assert_int_equal(prof.timeout_ms, 60000);
	assert_int_equal(prof.seccomp, SECCOMP_COMPAT); /* unset on top: kept */
	assert_true(prof.tailscale);
	assert_string_equal(prof.argv[0], "npm");
	assert_null(prof.argv[1]);
	runspec_free(&prof);
}

static void test_merge_net_none_drops_lower_network(void **state)
{
	struct runspec prof, flags;
	char *err = NULL;

	(void)state;
	runspec_init(&prof);
	runspec_init(&flags);
	prof.net = NET_ALLOWLIST;
	add_host(&prof, "registry.npmjs.org");
	add_port(&prof, 443);
	add_cidr(&prof, "192.168.4.0/24");
	prof.tailscale = true;
	flags.net = NET_NONE;
	set_argv(&flags, "npm");

	/* `--profile node --net none` is node offline, not a contradiction */
	runspec_merge(&prof, &flags);
	assert_int_equal(prof.net, NET_NONE);
	assert_int_equal(prof.nhosts, 0);
	assert_int_equal(prof.nports, 0);
	assert_int_equal(prof.ncidrs, 0);
	assert_false(prof.tailscale);
	assert_int_equal(runspec_finish(&prof, "/w", &err), 0);
	runspec_free(&prof);
	runspec_free(&flags);
}

static void test_merge_net_public_drops_lower_hosts_only(void **state)
{
	struct runspec prof, flags;

	(void)state;
	runspec_init(&prof);
	runspec_init(&flags);
	prof.net = NET_ALLOWLIST;
	add_host(&prof, "registry.npmjs.org");
	add_port(&prof, 443);
	add_cidr(&prof, "192.168.4.0/24");
	flags.net = NET_PUBLIC;
	runspec_merge(&prof, &flags);
	assert_int_equal(prof.net, NET_PUBLIC);
	assert_int_equal(prof.nhosts, 0);
	assert_int_equal(prof.nports, 1);       /* ports and ranges still mean something */
	assert_int_equal(prof.ncidrs, 1);
	runspec_free(&prof);
	runspec_free(&flags);
}

static void test_merge_hosts_turn_public_into_allowlist(void **state)
{
	struct runspec prof, flags;
	char *err = NULL;

	(void)state;
	/* generic says public; --allow-host on top means allowlist, not a contradiction */
	runspec_init(&prof);
	runspec_init(&flags);
	prof.net = NET_PUBLIC;
	add_host(&flags, "registry.npmjs.org");
	set_argv(&flags, "npm");
	runspec_merge(&prof, &flags);
	assert_int_equal(prof.net, NET_ALLOWLIST);
	assert_int_equal(runspec_finish(&prof, "/w", &err), 0);
	runspec_free(&prof);

	/* offline says none: the hosts stay and finish refuses */
	runspec_init(&prof);
	prof.net = NET_NONE;
	runspec_merge(&prof, &flags);
	assert_int_equal(prof.net, NET_NONE);
	assert_int_equal(runspec_finish(&prof, "/w", &err), -1);
	assert_non_null(strstr(err, "contradicts --net none"));
	free(err);
	runspec_free(&prof);
	runspec_free(&flags);
}

static void test_finish_defaults(void **state)
{
	struct runspec rs;
	char *err = NULL;

	(void)state;
	runspec_init(&rs);
	set_argv(&rs, "true");
	assert_int_equal(runspec_finish(&rs, "/home/u/proj", &err), 0);
	assert_null(err);
	assert_string_equal(rs.workdir, "/home/u/proj");        /* workdir = cwd */
	assert_int_equal(rs.net, NET_PUBLIC);                   /* no hosts: public */
	assert_int_equal(rs.seccomp, SECCOMP_STRICT);
	assert_int_equal(rs.pcap_max, 0);                       /* no capture, no limit */
	runspec_free(&rs);

	runspec_init(&rs);
	set_argv(&rs, "true");
	add_host(&rs, "example.com");
	rs.workdir = xstrdup("sub/../src");
	rs.pcap = xstrdup("out.pcap");
	add_mount(&rs, MOUNT_RO, "../data", NULL);
	assert_int_equal(runspec_finish(&rs, "/home/u/proj", &err), 0);
	assert_int_equal(rs.net, NET_ALLOWLIST);                /* hosts imply allowlist */
	assert_string_equal(rs.workdir, "/home/u/proj/src");    /* made absolute */
	assert_string_equal(rs.pcap, "/home/u/proj/out.pcap");
	assert_string_equal(rs.mounts[0].src, "/home/u/data");
	assert_int_equal(rs.pcap_max, RUNSPEC_DEFAULT_PCAP_MAX);
	runspec_free(&rs);
}

/* Each row builds one run-spec that must be refused with these words. */
struct contradiction_row {
	const char *what;
	void (*build)(struct runspec *rs);
	const char *err;
};

static void host_with_none(struct runspec *rs)
{
	add_host(rs, "a.com");
	rs->net = NET_NONE;
}

static void host_with_public(struct runspec *rs)
{
	add_host(rs, "a.com");
	rs->net = NET_PUBLIC;
}

static void pcap_with_none(struct runspec *rs)
{
	rs->pcap = xstrdup("x.pcap");
	rs->net = NET_NONE;
}

static void port_with_none(struct runspec *rs)
{
	add_port(rs, 443);
	rs->net = NET_NONE;
}

static void port_with_public(struct runspec *rs)
{
	add_port(rs, 8080);
	rs->net = NET_PUBLIC;
}

/* No --net at all: the default is public, and the port would do nothing there either. */
static void port_alone(struct runspec *rs)
{
	add_port(rs, 8080);
}

static void cidr_with_none(struct runspec *rs)
{
	add_cidr(rs, "10.0.0.0/8");
	rs->net = NET_NONE;
}

static void tailscale_with_none(struct runspec *rs)
{
	rs->tailscale = true;
	rs->net = NET_NONE;
}

static void pcap_max_without_pcap(struct runspec *rs)
{
	rs->pcap_max = 1 << 20;
}

static void no_command(struct runspec *rs)
{
	strv_free(rs->argv);
	rs->argv = NULL;
}

static void empty_command(struct runspec *rs)
{
	set_argv(rs, "");
}

static void copy_relative_dst(struct runspec *rs)
{
	add_mount(rs, MOUNT_COPY, "a", "rel/b");
}

static void empty_mount(struct runspec *rs)
{
	add_mount(rs, MOUNT_RW, "", NULL);
}

static void add_rule(struct runspec *rs, const char *rule)
{
	*(char **)xappend(&rs->http_rules, &rs->nhttp_rules, sizeof(char *)) = xstrdup(rule);
}

static void rule_with_public(struct runspec *rs)
{
	add_rule(rs, "method=GET domain=api.test");
	rs->net = NET_PUBLIC;
}

static void rule_with_none(struct runspec *rs)
{
	add_rule(rs, "method=GET");
	rs->net = NET_NONE;
}

static const struct contradiction_row contradiction_rows[] = {
	{ "--allow-http --net public", rule_with_public,
	  "--allow-http implies --net allowlist; it contradicts --net public" },
	{ "--allow-http --net none", rule_with_none,
	  "--allow-http implies --net allowlist; it contradicts --net none" },
	{ "--allow-host --net none", host_with_none,
	  "--allow-host implies --net allowlist; it contradicts --net none" },
	{ "--allow-host --net public", host_with_public,
	  "--allow-host implies --net allowlist; it contradicts --net public" },
	{ "--pcap --net none", pcap_with_none, "--pcap with --net none would capture nothing" },
	{ "--allow-port --net none", port_with_none, "--allow-port with --net none" },
	{ "--allow-port --net public", port_with_public, "public mode already permits every port" },
	{ "--allow-port alone (public)", port_alone, "public mode already permits every port" },
	{ "--allow-cidr --net none", cidr_with_none, "--allow-cidr with --net none" },
	{ "--tailscale --net none", tailscale_with_none, "--tailscale with --net none" },
	{ "--pcap-max alone", pcap_max_without_pcap, "--pcap-max without --pcap" },
	{ "no command", no_command, "no command to run" },
	{ "empty command", empty_command, "empty string" },
	{ "--copy a:rel/b", copy_relative_dst, "is not an absolute path" },
	{ "--rw ''", empty_mount, "--rw: empty path" },
};

static void test_finish_contradictions(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(contradiction_rows); i++) {
		const struct contradiction_row *r = &contradiction_rows[i];
		struct runspec rs;
		char *err = NULL;

		print_message("%s\n", r->what);
		runspec_init(&rs);
		set_argv(&rs, "true");
		r->build(&rs);
		assert_int_equal(runspec_finish(&rs, "/w", &err), -1);
		assert_non_null(err);
		if (!strstr(err, r->err))
			fail_msg("%s: \"%s\" does not contain \"%s\"", r->what, err, r->err);
		assert_null(strchr(err, '\n'));
		free(err);
		runspec_free(&rs);
	}
}

/* What stays allowed: the refusals above must not catch these. */
static void test_finish_allowed_combinations(void **state)
{
	struct runspec rs;
	char *err = NULL;

	(void)state;
	runspec_init(&rs);                      /* an audit log under none is allowed */
	set_argv(&rs, "true");
	rs.net = NET_NONE;
	rs.audit_log = xstrdup("/tmp/a.json");
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	runspec_free(&rs);

	runspec_init(&rs);                      /* a net-log under none records nothing: refused */
	set_argv(&rs, "true");
	rs.net = NET_NONE;
	rs.net_log = xstrdup("/tmp/n.json");
	assert_int_equal(runspec_finish(&rs, "/w", &err), -1);
	assert_non_null(strstr(err, "--net-log with --net none"));
	free(err);
	err = NULL;
	runspec_free(&rs);

	runspec_init(&rs);                      /* public with ranges (ports: refused above) */
	set_argv(&rs, "true");
	rs.net = NET_PUBLIC;
	add_cidr(&rs, "192.168.4.0/24");
	rs.tailscale = true;
	rs.pcap = xstrdup("/tmp/x.pcap");
	rs.pcap_max = 4096;
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	assert_int_equal(rs.pcap_max, 4096);    /* given: not replaced by the default */
	runspec_free(&rs);

	runspec_init(&rs);                      /* allowlist with no names: nothing resolves */
	set_argv(&rs, "true");
	rs.net = NET_ALLOWLIST;
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	assert_int_equal(rs.net, NET_ALLOWLIST);
	runspec_free(&rs);
}

/*
 * A rule's domain is an allowed host: added without ports of its own unless
 * an entry of that name is there already (whose ports it keeps); a rule with
 * no domain adds none; rules alone mean allowlist. Over a public profile,
 * rules on top switch to allowlist; --net public on top drops the profile's.
 */
static void test_finish_rule_hosts(void **state)
{
	struct runspec rs, prof, flags;
	char *err = NULL;

	(void)state;
	runspec_init(&rs);
	set_argv(&rs, "true");
	add_host(&rs, "api.test:8080");
	add_rule(&rs, "method=GET domain=api.test path=/v1/*");
	add_rule(&rs, "domain=*.github.com");
	add_rule(&rs, "method=POST");
	add_rule(&rs, "domain=*.github.com path=/x");
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	assert_int_equal(rs.net, NET_ALLOWLIST);
	assert_int_equal(rs.nhosts, 2);
	assert_string_equal(rs.hosts[0].name, "api.test");
	assert_int_equal(rs.hosts[0].nports, 1);
	assert_int_equal(rs.hosts[0].ports[0], 8080);
	assert_string_equal(rs.hosts[1].name, "*.github.com");
	assert_int_equal(rs.hosts[1].nports, 0);
	/* finishing twice adds nothing more */
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	assert_int_equal(rs.nhosts, 2);
	runspec_free(&rs);

	runspec_init(&rs);
	set_argv(&rs, "true");
	add_rule(&rs, "method=GET");
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	assert_int_equal(rs.net, NET_ALLOWLIST);
	assert_int_equal(rs.nhosts, 0);
	runspec_free(&rs);

	runspec_init(&prof);
	runspec_init(&flags);
	prof.net = NET_PUBLIC;
	add_rule(&flags, "domain=api.test");
	runspec_merge(&prof, &flags);
	assert_int_equal(prof.net, NET_ALLOWLIST);
	assert_int_equal(prof.nhttp_rules, 1);
	runspec_free(&flags);
	runspec_init(&flags);
	flags.net = NET_PUBLIC;
	runspec_merge(&prof, &flags);
	assert_int_equal(prof.nhttp_rules, 0);
	runspec_free(&prof);
	runspec_free(&flags);
}

static void test_to_json(void **state)
{
	struct runspec rs;
	char *err = NULL, *json;

	(void)state;
	runspec_init(&rs);
	rs.profile = xstrdup("node");
	strv_push(&rs.argv, "npm");
	strv_push(&rs.argv, "ci");
	add_host(&rs, "registry.npmjs.org:443,8443");
	add_cidr(&rs, "192.168.4.0/24");
	add_port(&rs, 443);
	add_mount(&rs, MOUNT_COPY_RO, "/h/mcp.json", "/h/.claude.json");
	add_env(&rs, "TOKEN=hunter2");
	add_env(&rs, "TERM");
	rs.memory = 2ULL << 30;
	rs.timeout_ms = 600000;
	rs.audit_log = xstrdup("/w/a.jsonl");
	rs.fail_on = xstrdup("deny,alert");
	assert_int_equal(runspec_finish(&rs, "/w", &err), 0);
	json = runspec_to_json(&rs);
	assert_string_equal(json,
		"{\"profile\":\"node\",\"argv\":[\"npm\",\"ci\"],\"workdir\":\"/w\","
		"\"net\":{\"mode\":\"allowlist\",\"hosts\":[{\"name\":\"registry.npmjs.org\","
		"\"ports\":[443,8443]}],\"ports\":[443],\"cidrs\":[\"192.168.4.0/24\"],"
		"\"tailscale\":false,\"http\":[]},"
		"\"mounts\":[{\"kind\":\"copy-ro\",\"src\":\"/h/mcp.json\","
		"\"dst\":\"/h/.claude.json\"}],\"allow_git_write\":false,"
		"\"env\":[{\"name\":\"TOKEN\",\"set\":true},{\"name\":\"TERM\",\"set\":false}],"
		"\"limits\":{\"memory\":2147483648,\"pids\":4096,\"cpus_milli\":null,"
		"\"timeout_ms\":600000},"
		"\"logs\":{\"audit\":\"/w/a.jsonl\",\"net\":null,\"pcap\":null,\"pcap_max\":null},"
		"\"gate\":{\"fail_on\":\"deny,alert\",\"report\":null},"
		"\"react\":{\"on_alert\":null,\"on_denials\":null},"
		"\"seccomp\":\"strict\",\"tripwires\":\"off\",\"tty\":false,\"verbose\":false,\"detach\":false,"
		"\"raw_terminal\":false,\"no_attribution\":false}");
	/* a value given with -e is a credential handed in on purpose: never recorded */
	assert_null(strstr(json, "hunter2"));
	free(json);
	runspec_free(&rs);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(net_mode_name(NET_PUBLIC), "public");
	assert_string_equal(net_mode_name(NET_ALLOWLIST), "allowlist");
	assert_string_equal(net_mode_name(NET_NONE), "none");
	assert_string_equal(net_mode_name(NET_UNSET), "unset");
	assert_string_equal(seccomp_mode_name(SECCOMP_STRICT), "strict");
	assert_string_equal(seccomp_mode_name(SECCOMP_COMPAT), "compat");
	assert_string_equal(mount_kind_name(MOUNT_RO), "ro");
	assert_string_equal(mount_kind_name(MOUNT_RW), "rw");
	assert_string_equal(mount_kind_name(MOUNT_PROTECT), "protect");
	assert_string_equal(mount_kind_name(MOUNT_MKDIR), "mkdir");
	assert_string_equal(mount_kind_name(MOUNT_COPY), "copy");
	assert_string_equal(mount_kind_name(MOUNT_COPY_RO), "copy-ro");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_lists_append_scalars_override),
		cmocka_unit_test(test_merge_net_none_drops_lower_network),
		cmocka_unit_test(test_merge_net_public_drops_lower_hosts_only),
		cmocka_unit_test(test_merge_hosts_turn_public_into_allowlist),
		cmocka_unit_test(test_finish_defaults),
		cmocka_unit_test(test_finish_contradictions),
		cmocka_unit_test(test_finish_allowed_combinations),
		cmocka_unit_test(test_finish_rule_hosts),
		cmocka_unit_test(test_to_json),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
