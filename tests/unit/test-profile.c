/*
 * test-profile.c — YAML profiles: every key, expansion, extends:, lookup,
 * each kind of error with its exact FILE:LINE:COLUMN, and the five presets.
 *
 * Fixtures live in tests/unit/profiles/ (found through $BOXY_SRCDIR, which
 * `make check` sets); files that must be generated (a chain deeper than the
 * limit, a file over 1 MiB) are written to a temporary directory.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/profile.h"
#include "spec/runspec.h"
#include "common/util.h"

#define HOME    "/home/u"
#define WORKDIR "/home/u/proj"
#define SLUG    "-home-u-proj"

static const struct profile_ctx ctx = { .home = HOME, .workdir = WORKDIR };

/* set_err() frees what *err held, so a reused err must go back to NULL. */
static void drop_err(char **err)
{
	free(*err);
	*err = NULL;
}

static char *fixture_dir;       /* .../tests/unit/profiles */
static char *empty_xdg;         /* an empty XDG_CONFIG_HOME, so no user file interferes */

/* Parse text as "t.yaml"; returns the rc, *err set on failure. */
static int parse(const char *text, struct runspec *rs, char **err)
{
	runspec_init(rs);
	*err = NULL;
	return profile_parse(text, strlen(text), "t.yaml", &ctx, rs, err);
}

/* The error text parse gives for text (the test fails if it parses). malloc'd. */
static char *parse_err(const char *text)
{
	struct runspec rs;
	char *err = NULL;
	int rc = parse(text, &rs, &err);

	runspec_free(&rs);
	if (rc == 0) {
		print_error("parsed, but should have failed:\n%s\n", text);
		fail();
	}
	assert_non_null(err);
	return err;
}

static char *fixture(const char *name)
{
	return xasprintf("%s/%s", fixture_dir, name);
}

static const struct mount_spec *find_mount(const struct runspec *rs, enum mount_kind kind,
					   const char *src)
{
	for (size_t i = 0; i < rs->nmounts; i++) {
		if (rs->mounts[i].kind == kind && strcmp(rs->mounts[i].src, src) == 0)
			return &rs->mounts[i];
	}
	return NULL;
}

/* ---- every key ------------------------------------------------------------ */

static void test_every_key(void **state)
{
	static const char text[] =
		"filesystem:\n"
		"  ro: [/r1, \"~/r2\"]\n"
		"  rw: [\"{workdir}/out\"]\n"
		"  protect: [\"{workdir}/.env\"]\n"
		"  mkdir: [\"~/.cache/{workdir_slug}\"]\n"
		"  copy: [\"~/a.json\", \"/etc/b.conf:~/b.conf\"]\n"
		"  copy-ro: [\"~/c.txt\"]\n"
		"  allow-git-write: true\n"
		"network:\n"
		"  mode: allowlist\n"
		"  hosts: [registry.npmjs.org, \"github.com:22,443\"]\n"
		"  ports: [443, \"8443\"]\n"
		"  cidrs: [192.168.4.0/24, \"fd00::/8\"]\n"
		"  tailscale: true\n"
		"env:\n"
		"  pass: [NPM_TOKEN, LANG]\n"
		"  set: {CACHE: ~/.cache/x, JSON: '{\"a\": 1}', EMPTY: \"\"}\n"
		"limits: {memory: 2GiB, pids: 512, cpus: 1.5, timeout: 10m}\n"
		"seccomp: compat\n"
		"raw-terminal: true\n"
		"audit-log: journal\n";
	struct runspec rs;
	char *err;
	const struct mount_spec *m;

	(void)state;
	assert_int_equal(parse(text, &rs, &err), 0);
	assert_null(err);

	assert_int_equal(rs.nmounts, 8);
	assert_non_null(find_mount(&rs, MOUNT_RO, "/r1"));
	assert_non_null(find_mount(&rs, MOUNT_RO, HOME "/r2"));
	assert_non_null(find_mount(&rs, MOUNT_RW, WORKDIR "/out"));
	assert_non_null(find_mount(&rs, MOUNT_PROTECT, WORKDIR "/.env"));
	assert_non_null(find_mount(&rs, MOUNT_MKDIR, HOME "/.cache/" SLUG));
	m = find_mount(&rs, MOUNT_COPY, HOME "/a.json");
	assert_non_null(m);
	assert_null(m->dst);
	m = find_mount(&rs, MOUNT_COPY, "/etc/b.conf");
	assert_non_null(m);
	assert_string_equal(m->dst, HOME "/b.conf");
	assert_non_null(find_mount(&rs, MOUNT_COPY_RO, HOME "/c.txt"));
	assert_true(rs.allow_git_write);

	assert_int_equal(rs.net, NET_ALLOWLIST);
	assert_int_equal(rs.nhosts, 2);
	assert_string_equal(rs.hosts[0].name, "registry.npmjs.org");
	assert_int_equal(rs.hosts[0].nports, 0);
	assert_string_equal(rs.hosts[1].name, "github.com");
	assert_int_equal(rs.hosts[1].nports, 2);
	assert_int_equal(rs.hosts[1].ports[0], 22);
	assert_int_equal(rs.hosts[1].ports[1], 443);
	assert_int_equal(rs.nports, 2);
	assert_int_equal(rs.ports[0], 443);
	assert_int_equal(rs.ports[1], 8443);
	assert_int_equal(rs.ncidrs, 2);
	assert_string_equal(rs.cidrs[0].text, "192.168.4.0/24");
	assert_int_equal(rs.cidrs[0].prefix, 24);
	assert_string_equal(rs.cidrs[1].text, "fd00::/8");
	assert_true(rs.tailscale);

	assert_int_equal(rs.nenv, 5);
	assert_string_equal(rs.env[0].name, "NPM_TOKEN");
	assert_null(rs.env[0].value);
	assert_string_equal(rs.env[1].name, "LANG");
	assert_null(rs.env[1].value);
	assert_string_equal(rs.env[2].name, "CACHE");
	assert_string_equal(rs.env[2].value, HOME "/.cache/x");
	assert_string_equal(rs.env[3].name, "JSON");
	assert_string_equal(rs.env[3].value, "{\"a\": 1}");
	assert_string_equal(rs.env[4].name, "EMPTY");
	assert_string_equal(rs.env[4].value, "");

	assert_int_equal(rs.memory, 2ULL << 30);
	assert_int_equal(rs.pids, 512);
	assert_int_equal(rs.cpus_milli, 1500);
	assert_int_equal(rs.timeout_ms, 600000);
	assert_int_equal(rs.seccomp, SECCOMP_COMPAT);
	assert_true(rs.raw_terminal);
	assert_string_equal(rs.audit_log, "journal");
	runspec_free(&rs);
}

/* An empty profile, or keys with nothing under them, change nothing. */
static void test_empty_profiles(void **state)
{
	static const char *const texts[] = {
		"",
		"# only a comment\n",
		"---\n",
		"filesystem:\nnetwork:\nenv:\n  pass:\n  set:\nlimits:\n",
		"filesystem: {ro: []}\n",
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct runspec rs;
		char *err;

		assert_int_equal(parse(texts[i], &rs, &err), 0);
		assert_int_equal(rs.nmounts, 0);
		assert_int_equal(rs.net, NET_UNSET);
		assert_int_equal(rs.nenv, 0);
		assert_int_equal(rs.memory, 0);
		runspec_free(&rs);
	}
}

/* hosts: with no mode: in the same document means allowlist, like --allow-host. */
static void test_hosts_imply_allowlist(void **state)
{
	struct runspec rs;
	char *err;

	(void)state;
	assert_int_equal(parse("network: {hosts: [a.example.com]}\n", &rs, &err), 0);
	assert_int_equal(rs.net, NET_ALLOWLIST);
	runspec_free(&rs);
	assert_int_equal(parse("network: {mode: public, hosts: []}\n", &rs, &err), 0);
	assert_int_equal(rs.net, NET_PUBLIC);
	runspec_free(&rs);
	assert_int_equal(parse("network: {tailscale: false, ports: [22]}\n", &rs, &err), 0);
	assert_int_equal(rs.net, NET_UNSET);
	runspec_free(&rs);
}

/* ---- expansion ---------------------------------------------------------------- */

static const struct {
	const char *in;
	const char *out;        /* NULL: an error */
	const char *err;        /* the error, when out is NULL */
} path_rows[] = {
	{ "/abs/path", "/abs/path", NULL },
	{ "~", HOME, NULL },
	{ "~/", HOME "/", NULL },
	{ "~/.claude/CLAUDE.md", HOME "/.claude/CLAUDE.md", NULL },
	{ "{workdir}", WORKDIR, NULL },
	{ "{workdir}/sub", WORKDIR "/sub", NULL },
	{ "~/.claude/projects/{workdir_slug}", HOME "/.claude/projects/" SLUG, NULL },
	{ "/x/{workdir_slug}/{workdir_slug}", "/x/" SLUG "/" SLUG, NULL },
	{ "/a/~/b", "/a/~/b", NULL },                   /* only a leading ~ expands */
	{ "relative/path", NULL,
	  "'relative/path': paths in a profile must be absolute, start with ~ or {workdir}" },
	{ "./x", NULL, "'./x': paths in a profile must be absolute, start with ~ or {workdir}" },
	{ "~bob/x", NULL, "'~bob/x': ~user is not supported; write the path" },
	{ "{home}/x", NULL,
	  "unknown placeholder '{home}' in '{home}/x' (expected {workdir}, {workdir_slug} or "
	  "{cache})" },
	{ "/a/{workdir", NULL,
	  "unknown placeholder '{workdir' in '/a/{workdir' (expected {workdir}, "
	  "{workdir_slug} or {cache})" },
	{ "/a/{WORKDIR}", NULL,
	  "unknown placeholder '{WORKDIR}' in '/a/{WORKDIR}' (expected {workdir}, "
	  "{workdir_slug} or {cache})" },
};

static void test_expand_path(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(path_rows); i++) {
		char *out = NULL, *err = NULL;
		int rc = profile_expand_path(path_rows[i].in, &ctx, &out, &err);

		if (path_rows[i].out) {
			assert_int_equal(rc, 0);
			assert_string_equal(out, path_rows[i].out);
		} else {
			assert_int_equal(rc, -1);
			assert_string_equal(err, path_rows[i].err);
		}
		free(out);
		drop_err(&err);
	}
}

static void test_expand_edge_contexts(void **state)
{
	struct profile_ctx slash_home = { .home = "/home/u/", .workdir = "/" };
	struct profile_ctx root_home = { .home = "/", .workdir = WORKDIR };
	struct profile_ctx none = { 0 };
	char *out = NULL, *err = NULL;

	(void)state;
	assert_int_equal(profile_expand_path("~/x", &slash_home, &out, &err), 0);
	assert_string_equal(out, "/home/u/x");          /* no "//" */
	free(out);
	assert_int_equal(profile_expand_path("/p/{workdir_slug}", &slash_home, &out, &err), 0);
	assert_string_equal(out, "/p/-");
	free(out);
	assert_int_equal(profile_expand_path("~/x", &root_home, &out, &err), 0);
	assert_string_equal(out, "/x");
	free(out);
	assert_int_equal(profile_expand_path("~/x", &none, &out, &err), -1);
	assert_string_equal(err, "cannot expand ~: no home directory is known");
	drop_err(&err);
	assert_int_equal(profile_expand_path("{workdir}/x", &none, &out, &err), -1);
	assert_string_equal(err, "cannot expand {workdir}: no working directory is known");
	drop_err(&err);
}

/* Environment values: the same three expansions, anything else kept. */
static void test_expand_value(void **state)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{ "~/.cache/boxy/npm", HOME "/.cache/boxy/npm" },
		{ "~", HOME },
		{ "a~b", "a~b" },
		{ "~bob", "~bob" },
		{ "{workdir}/bin", WORKDIR "/bin" },
		{ "{\"k\": {workdir_slug}}", "{\"k\": " SLUG "}" },
		{ "{unknown}", "{unknown}" },
		{ "", "" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *out = profile_expand_value(rows[i].in, &ctx);

		assert_string_equal(out, rows[i].out);
		free(out);
	}
}

static void test_workdir_slug(void **state)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{ "/home/u/proj", "-home-u-proj" },
		{ "/", "-" },
		{ "/home/u/Proj-2", "-home-u-Proj-2" },
		/* Not only '/': every character but an ASCII letter or digit. */
		{ "/srv/my.project/x_y z", "-srv-my-project-x-y-z" },
		/* One '-' per UTF-16 code unit: e-acute is one, an emoji two. */
		{ "/home/u/caf\xc3\xa9/\xf0\x9f\x98\x80", "-home-u-caf----" },
		/* Past 200 characters: the first 200, '-', and Claude Code's hash in base 36.
		 * Expected values computed with Claude Code's algorithm run in node. */
		{ "/home/u/abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/"
		  "abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/"
		  "abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/"
		  "abcdefghij/abcdefghij/abcdefghij/abcdefghij/abcdefghij/end",
		  "-home-u-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-"
		  "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-"
		  "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcde-l49w0k" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *s = profile_workdir_slug(rows[i].in);

		assert_string_equal(s, rows[i].out);
		free(s);
	}
}

/* The 200-character boundary: 200 kept whole, 201 cut and hashed (values from node). */
static void test_workdir_slug_boundary(void **state)
{
	char path[203], want[220], *slug;

	(void)state;
	path[0] = '/';
	memset(path + 1, 'x', 199);
	path[200] = '\0';
	slug = profile_workdir_slug(path);
	assert_int_equal(strlen(slug), 200);
	assert_int_equal(slug[0], '-');
	assert_string_equal(slug + 1, path + 1);
	free(slug);

	memset(path + 1, 'x', 200);
	path[201] = '\0';
	want[0] = '-';
	memset(want + 1, 'x', 199);
	strcpy(want + 200, "-d0i18x");
	slug = profile_workdir_slug(path);
	assert_string_equal(slug, want);
	free(slug);
}

/* ---- errors, each with its exact position --------------------------------- */

/*
 * Each row's err is the whole message, except where the message ends in a
 * spec/values.h validator's own wording ("size '2XB': ..."): those rows give the
 * position, key and the validator's subject, and the rest is spec/values.h's to test.
 */

static const struct {
	const char *what;
	const char *text;
	const char *err;
	bool prefix;            /* err is the start of the message (a validator's wording follows) */
} error_rows[] = {
	{ "unknown top-level key",
	  "seccomp: strict\nfilesytem: {}\n",
	  "t.yaml:2:1: unknown key 'filesytem' (expected extends, filesystem, network, env, "
	  "limits, fail-on, on-alert, on-denials, seccomp, tripwires, raw-terminal, "
	  "audit-log)", false },
	{ "unknown key in a section",
	  "filesystem:\n  ro: [/a]\n  rwx: [/b]\n",
	  "t.yaml:3:3: unknown key 'rwx' in filesystem (expected ro, rw, protect, mkdir, copy, "
	  "copy-ro, allow-git-write)", false },
	{ "audit-log naming a file: a profile may only name the journal",
	  "audit-log: /tmp/x.jsonl\n",
	  "t.yaml:1:12: audit-log: only 'journal' (a file is named with --audit-log FILE), not "
	  "'/tmp/x.jsonl'", false },
	{ "unknown key in limits",
	  "limits:\n    memroy: 1G\n",
	  "t.yaml:2:5: unknown key 'memroy' in limits (expected memory, pids, cpus, timeout)", false },
	{ "a mapping where a list is expected",
	  "filesystem:\n  ro: {a: b}\n",
	  "t.yaml:2:7: filesystem.ro: expected a list, got a mapping", false },
	{ "a single value where a list is expected",
	  "network:\n  hosts: github.com\n",
	  "t.yaml:2:10: network.hosts: expected a list, got a single value", false },
	{ "a list where a value is expected",
	  "seccomp: [strict]\n",
	  "t.yaml:1:10: seccomp: expected a value, got a list", false },
	{ "a list inside a list",
	  "filesystem:\n  ro:\n    - /a\n    - [/b]\n",
	  "t.yaml:4:7: filesystem.ro: expected a value, got a list", false },
	{ "a list where a section is expected",
	  "network: [public]\n",
	  "t.yaml:1:10: network: expected a mapping, got a list", false },
	{ "null where a value is expected",
	  "limits:\n  memory:\n",
	  "t.yaml:2:10: limits.memory: expected a value, got nothing", false },
	{ "a top level that is not a mapping",
	  "- a\n- b\n",
	  "t.yaml:1:1: a profile is a mapping of keys (filesystem:, network:, ...), not a list", false },
	{ "bad size",
	  "limits: {memory: 2XB}\n",
	  "t.yaml:1:18: limits.memory: size '2XB'", true },
	{ "bad count",
	  "limits:\n  pids: -1\n",
	  "t.yaml:2:9: limits.pids: count '-1'", true },
	{ "bad duration",
	  "limits:\n  timeout: soon\n",
	  "t.yaml:2:12: limits.timeout: duration 'soon'", true },
	{ "bad port",
	  "network:\n  ports: [443, 70000]\n",
	  "t.yaml:2:16: network.ports: port '70000'", true },
	{ "bad network mode",
	  "network: {mode: open}\n",
	  "t.yaml:1:17: network.mode: network mode 'open'", true },
	{ "bad seccomp mode",
	  "seccomp: off\n",
	  "t.yaml:1:10: seccomp: seccomp mode 'off'", true },
	{ "bad cidr",
	  "network:\n  cidrs: [\"10.0.0.1/8\"]\n",
	  "t.yaml:2:11: network.cidrs: address range '10.0.0.1/8'", true },
	{ "bad host",
	  "network:\n  hosts:\n    - \"bad_host\"\n",
	  "t.yaml:3:7: network.hosts: host 'bad_host'", true },
	{ "yes is not a boolean",
	  "network: {tailscale: yes}\n",
	  "t.yaml:1:22: network.tailscale: expected true or false", false },
	{ "a quoted boolean is a string",
	  "filesystem: {allow-git-write: \"true\"}\n",
	  "t.yaml:1:31: filesystem.allow-git-write: expected true or false", false },
	{ "duplicate key",
	  "seccomp: strict\nlimits: {}\nseccomp: compat\n",
	  "t.yaml:3:1: duplicate key 'seccomp' (first at line 1)", false },
	{ "duplicate nested key",
	  "filesystem:\n  ro: [/a]\n  ro: [/b]\n",
	  "t.yaml:3:3: duplicate key 'ro' (first at line 2)", false },
	{ "duplicate env.set key",
	  "env:\n  set:\n    A: 1\n    A: 2\n",
	  "t.yaml:4:5: duplicate key 'A' (first at line 3)", false },
	{ "duplicate extends",
	  "extends: generic\nextends: node\n",
	  "t.yaml:2:1: duplicate key 'extends' (first at line 1)", false },
	{ "anchor",
	  "filesystem:\n  ro: &paths [/a]\n",
	  "t.yaml:2:7: YAML anchors (&paths) are not supported in a profile", false },
	{ "alias",
	  "filesystem:\n  ro: *paths\n",
	  "t.yaml:2:7: YAML aliases (*paths) are not supported in a profile", false },
	{ "tag",
	  "seccomp: !!str strict\n",
	  "t.yaml:1:10: YAML tags (tag:yaml.org,2002:str) are not supported in a profile", false },
	{ "local tag",
	  "limits: !mine {}\n",
	  "t.yaml:1:9: YAML tags (!mine) are not supported in a profile", false },
	{ "%TAG directive",
	  "%TAG !e! tag:example.com,2000:\n---\nseccomp: strict\n",
	  "t.yaml:1:1: YAML %TAG directives are not supported in a profile", false },
	{ "two documents",
	  "seccomp: strict\n---\nseccomp: compat\n",
	  "t.yaml:2:1: a profile is a single YAML document", false },
	{ "a NUL byte",
	  "env:\n  set: {A: \"x\\0y\"}\n",
	  "t.yaml:2:12: a value contains a NUL byte", false },
	{ "a relative path",
	  "filesystem:\n  rw:\n    - build/out\n",
	  "t.yaml:3:7: filesystem.rw: 'build/out': paths in a profile must be absolute, start "
	  "with ~ or {workdir}", false },
	{ "an unknown placeholder",
	  "filesystem:\n  mkdir: [\"~/x/{project}\"]\n",
	  "t.yaml:2:11: filesystem.mkdir: unknown placeholder '{project}' in '~/x/{project}' "
	  "(expected {workdir}, {workdir_slug} or {cache})", false },
	{ "a relative copy destination",
	  "filesystem:\n  copy: [\"~/a:b\"]\n",
	  "t.yaml:2:10: filesystem.copy: 'b': paths in a profile must be absolute, start with "
	  "~ or {workdir}", false },
	{ "a copy with an empty destination",
	  "filesystem:\n  copy-ro: [\"/a:\"]\n",
	  "t.yaml:2:13: filesystem.copy-ro: '': paths in a profile must be absolute, start "
	  "with ~ or {workdir}", false },
	{ "env.pass with a value",
	  "env:\n  pass: [A=1]\n",
	  "t.yaml:2:10: env.pass: takes names only; put NAME: value under env.set", false },
	{ "env.pass with a bad name",
	  "env:\n  pass: [1A]\n",
	  "t.yaml:2:10: env.pass: environment variable name '1A'", true },
	{ "env.set with a bad name",
	  "env:\n  set: {\"A B\": 1}\n",
	  "t.yaml:2:9: env.set: environment variable name 'A B'", true },
	{ "env.set with no value",
	  "env:\n  set:\n    A:\n",
	  "t.yaml:3:7: env.set.A: expected a value (write \"\" for an empty one)", false },
	{ "env.set as a list",
	  "env:\n  set: [A=1]\n",
	  "t.yaml:2:8: env.set: expected a mapping of NAME: value, got a list", false },
	{ "a control character is never printed raw",
	  "\"\\e[31mred\\u0085\": 1\n",
	  "t.yaml:1:1: unknown key '\\x1b[31mred\\x85' (expected extends, filesystem, network, "
	  "env, limits, fail-on, on-alert, on-denials, seccomp, tripwires, raw-terminal, "
	  "audit-log)", false },
	{ "a complex key",
	  "? [a]\n: b\n",
	  "t.yaml:1:3: keys must be plain words", false },
	{ "extends with a list",
	  "extends: [generic]\n",
	  "t.yaml:1:10: extends: expected a value, got a list", false },
	{ "extends an unknown preset",
	  "network: {mode: none}\nextends: nodejs\n",
	  "t.yaml:2:10: extends: unknown profile 'nodejs' (presets: generic, node, python, "
	  "offline, claude)", false },
	{ "extends itself by path",
	  "extends: t.yaml\n",
	  "t.yaml:1:10: extends: cycle t.yaml -> t.yaml", false },
	{ "extends a missing file",
	  "extends: /nonexistent/boxy/x.yaml\n",
	  "t.yaml:1:10: extends: /nonexistent/boxy/x.yaml: No such file or directory", false },
	{ "a YAML syntax error (tab indentation)",
	  "filesystem:\n\tro: [/a]\n",
	  "t.yaml:2:1: found character that cannot start any token while scanning for the "
	  "next token", false },
	{ "an unclosed flow list",
	  "filesystem:\n  ro: [/a, /b\n",
	  "t.yaml:3:1: did not find expected ',' or ']' while parsing a flow sequence", false },
	{ "invalid UTF-8",
	  "seccomp: strict\nenv: {set: {A: \"\xff\"}}\n",
	  "t.yaml:2:17: invalid leading UTF-8 octet", false },
};

static void test_errors(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(error_rows); i++) {
		char *err = parse_err(error_rows[i].text);

		bool same = error_rows[i].prefix ?
			    strncmp(err, error_rows[i].err, strlen(error_rows[i].err)) == 0 :
			    strcmp(err, error_rows[i].err) == 0;

		if (!same) {
			print_error("%s:\n  got      %s\n  expected %s\n", error_rows[i].what, err,
				    error_rows[i].err);
			bad++;
		}
		drop_err(&err);
	}
	assert_int_equal(bad, 0);
}

/* Deeply nested input costs an error, not the stack. */
static void test_deep_nesting(void **state)
{
	char *text = xmalloc(2 * 1000 + 32);
	size_t n = 0;
	char *err;

	(void)state;
	n += (size_t)sprintf(text, "env: {set: {A: ");
	for (int i = 0; i < 1000; i++)
		text[n++] = '[';
	for (int i = 0; i < 1000; i++)
		text[n++] = ']';
	strcpy(text + n, "}}\n");
	err = parse_err(text);
	assert_string_equal(err, "t.yaml:1:45: nested deeper than 32 levels");
	drop_err(&err);
	free(text);
}

/* profile_parse refuses more than 1 MiB before parsing it. */
static void test_text_too_large(void **state)
{
	size_t len = PROFILE_MAX_BYTES + 1;
	char *text = xmalloc(len + 1);
	struct runspec rs;
	char *err = NULL;

	(void)state;
	memset(text, '#', len);
	text[len] = '\0';
	runspec_init(&rs);
	assert_int_equal(profile_parse(text, len, "big.yaml", &ctx, &rs, &err), -1);
	assert_string_equal(err, "big.yaml:1:1: a profile may be at most 1 MiB");
	drop_err(&err);
	runspec_free(&rs);
	free(text);
}

/* ---- files: extends, cycles, depth, size -------------------------------------- */

static void test_extends_merges(void **state)
{
	struct runspec rs;
	char *err = NULL, *path = fixture("child.yaml");

	(void)state;
	runspec_init(&rs);
	assert_int_equal(profile_load(path, &ctx, &rs, &err), 0);
	assert_string_equal(rs.profile, path);
	/* Lists: the parent's first, then the child's. */
	assert_int_equal(rs.nmounts, 3);
	assert_int_equal(rs.mounts[0].kind, MOUNT_RO);
	assert_string_equal(rs.mounts[0].src, "/base/ro");
	assert_int_equal(rs.mounts[1].kind, MOUNT_COPY);
	assert_string_equal(rs.mounts[1].src, HOME "/base.txt");
	assert_int_equal(rs.mounts[2].kind, MOUNT_RO);
	assert_string_equal(rs.mounts[2].src, "/child/ro");
	assert_int_equal(rs.nhosts, 2);
	assert_string_equal(rs.hosts[0].name, "base.example.com");
	assert_string_equal(rs.hosts[1].name, "child.example.com");
	assert_int_equal(rs.hosts[1].nports, 1);
	assert_int_equal(rs.hosts[1].ports[0], 22);
	assert_int_equal(rs.nports, 1);
	assert_int_equal(rs.nenv, 1);
	assert_string_equal(rs.env[0].name, "BASE_VAR");
	/* Scalars: the child's where it set one, the parent's otherwise. */
	assert_int_equal(rs.net, NET_ALLOWLIST);
	assert_int_equal(rs.memory, 2ULL << 30);
	assert_int_equal(rs.pids, 100);
	assert_int_equal(rs.seccomp, SECCOMP_COMPAT);
	runspec_free(&rs);
	free(path);
}

/* A child's false overrides a parent's true: scalars override, whatever the value. */
static void test_extends_overrides_false(void **state)
{
	struct runspec rs;
	char *err = NULL;

	(void)state;
	runspec_init(&rs);
	rs.allow_git_write = true;      /* as a parent would have left it */
	assert_int_equal(profile_parse("filesystem: {allow-git-write: false}\n", 37, "t.yaml",
				       &ctx, &rs, &err), 0);
	assert_false(rs.allow_git_write);
	runspec_free(&rs);
}

/* An error inside the parent is reported at the parent's own line and column. */
static void test_extends_error_in_parent(void **state)
{
	struct runspec rs;
	char *err = NULL, *path = fixture("child-of-bad.yaml"), *want;

	(void)state;
	runspec_init(&rs);
	assert_int_equal(profile_load(path, &ctx, &rs, &err), -1);
	want = xasprintf("%s/bad-parent.yaml:3:3: unknown key 'hostz' in network (expected "
			 "mode, hosts, ports, cidrs, tailscale, http)", fixture_dir);
	assert_string_equal(err, want);
	free(want);
	drop_err(&err);
	runspec_free(&rs);
	free(path);
}

static void test_extends_cycle(void **state)
{
	struct runspec rs;
	char *err = NULL, *path = fixture("cycle-a.yaml"), *want;

	(void)state;
	runspec_init(&rs);
	assert_int_equal(profile_load(path, &ctx, &rs, &err), -1);
	want = xasprintf("%1$s/cycle-b.yaml:2:10: extends: cycle %1$s/cycle-a.yaml -> "
			 "%1$s/cycle-b.yaml -> %1$s/./cycle-a.yaml", fixture_dir);
	assert_string_equal(err, want);
	free(want);
	drop_err(&err);
	runspec_free(&rs);
	free(path);
}

/* A temporary directory holding chain0.yaml -> chain1.yaml -> ... -> chain{n-1}.yaml. */
static char *write_chain(int n)
{
	char tmpl[] = "/tmp/boxy-test-profile-XXXXXX";
	char *dir = xstrdup(mkdtemp(tmpl));

	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/chain%d.yaml", dir, i);
		char *text = i + 1 < n ? xasprintf("extends: chain%d.yaml\nlimits: {pids: %d}\n",
						   i + 1, i + 1)
				       : xasprintf("limits: {pids: %d, memory: 1G}\n", i + 1);

		assert_int_equal(write_file(path, text, strlen(text), 0644), 0);
		free(text);
		free(path);
	}
	return dir;
}

static void remove_chain(char *dir, int n)
{
	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/chain%d.yaml", dir, i);

		unlink(path);
		free(path);
	}
	rmdir(dir);
	free(dir);
}

static void test_extends_depth(void **state)
{
	struct runspec rs;
	char *err = NULL, *dir, *path, *want;

	(void)state;
	/* Nine files, eight extends: the limit, accepted; the first file's pids wins. */
	dir = write_chain(PROFILE_MAX_EXTENDS + 1);
	path = xasprintf("%s/chain0.yaml", dir);
	runspec_init(&rs);
	assert_int_equal(profile_load(path, &ctx, &rs, &err), 0);
	assert_int_equal(rs.pids, 1);
	assert_int_equal(rs.memory, 1ULL << 30);
	runspec_free(&rs);
	free(path);
	remove_chain(dir, PROFILE_MAX_EXTENDS + 1);

	/* Ten files: refused at the ninth extends. */
	dir = write_chain(PROFILE_MAX_EXTENDS + 2);
	path = xasprintf("%s/chain0.yaml", dir);
	runspec_init(&rs);
	assert_int_equal(profile_load(path, &ctx, &rs, &err), -1);
	want = xasprintf("%s/chain8.yaml:1:10: extends: more than 8 levels", dir);
	assert_string_equal(err, want);
	free(want);
	drop_err(&err);
	runspec_free(&rs);
	free(path);
	remove_chain(dir, PROFILE_MAX_EXTENDS + 2);
}

static void test_file_too_large_and_not_regular(void **state)
{
	char path[] = "/tmp/boxy-test-profile-big-XXXXXX";
	int fd = mkstemp(path);
	size_t len = PROFILE_MAX_BYTES + 1;
	char *junk = xmalloc(len), *err = NULL, *want;
	struct runspec rs;

	(void)state;
	assert_true(fd >= 0);
	memset(junk, '#', len);
	assert_int_equal(write_all(fd, junk, len), 0);
	close(fd);
	free(junk);
	runspec_init(&rs);
	assert_int_equal(profile_load(path, &ctx, &rs, &err), -1);
	want = xasprintf("%s:1:1: a profile may be at most 1 MiB", path);
	assert_string_equal(err, want);
	free(want);
	drop_err(&err);
	unlink(path);

	assert_int_equal(profile_load("/tmp/", &ctx, &rs, &err), -1);
	assert_string_equal(err, "/tmp/: not a regular file");
	drop_err(&err);
	assert_int_equal(profile_load("/nonexistent/p.yaml", &ctx, &rs, &err), -1);
	assert_string_equal(err, "/nonexistent/p.yaml: No such file or directory");
	drop_err(&err);
	runspec_free(&rs);
}

/* ---- lookup -------------------------------------------------------------------- */

static void test_is_name(void **state)
{
	static const struct {
		const char *s;
		bool name;
	} rows[] = {
		{ "node", true },
		{ "my-profile", true },
		{ "node.yaml", false },
		{ "./node", false },
		{ "/etc/boxy/x", false },
		{ "dir/x.yml", false },
		{ "x.yml", false },
		{ "", false },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(profile_is_name(rows[i].s), rows[i].name);
}

static void test_unknown_name(void **state)
{
	struct runspec rs;
	char *err = NULL;

	(void)state;
	runspec_init(&rs);
	assert_int_equal(profile_load("x", &ctx, &rs, &err), -1);
	assert_string_equal(err, "unknown profile 'x' (presets: generic, node, python, offline, "
			    "claude)");
	drop_err(&err);
	runspec_free(&rs);
}

/* The presets list in spec/profile.h and the embedded texts name the same five. */
static void test_preset_names(void **state)
{
	size_t n = 0;

	(void)state;
	for (; profile_presets[n]; n++)
		assert_non_null(profile_preset_text(profile_presets[n]));
	assert_int_equal(n, 5);
	assert_null(profile_preset_text("nodejs"));
}

/* A user's node.yaml hides the preset, and its "extends: node" reaches the preset. */
static void test_user_dir_lookup(void **state)
{
	struct runspec rs;
	char *xdg = fixture("xdg"), *err = NULL, *want;
	struct profile_info *v;
	size_t n;
	bool saw_mine = false, saw_node = false;

	(void)state;
	setenv("XDG_CONFIG_HOME", xdg, 1);
	runspec_init(&rs);
	assert_int_equal(profile_load("node", &ctx, &rs, &err), 0);
	assert_int_equal(rs.timeout_ms, 600000);                  /* the user's */
	assert_non_null(find_mount(&rs, MOUNT_MKDIR, HOME "/.cache/boxy/npm")); /* the preset's */
	assert_int_equal(rs.net, NET_PUBLIC);
	runspec_free(&rs);

	runspec_init(&rs);
	assert_int_equal(profile_load("mine", &ctx, &rs, &err), 0);
	assert_int_equal(rs.net, NET_NONE);
	assert_non_null(find_mount(&rs, MOUNT_RW, WORKDIR "/../shared"));
	runspec_free(&rs);

	/* A user file extending its own name, with no preset of that name to reach. */
	runspec_init(&rs);
	assert_int_equal(profile_load("lonely", &ctx, &rs, &err), -1);
	want = xasprintf("%s/boxy/profiles/lonely.yaml:2:10: extends: profile 'lonely' extends "
			 "itself and nothing else has that name (presets: generic, node, python, "
			 "offline, claude)", xdg);
	assert_string_equal(err, want);
	free(want);
	drop_err(&err);
	runspec_free(&rs);

	profile_list(&ctx, &v, &n);
	assert_int_equal(n, 7);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			assert_true(strcmp(v[i - 1].name, v[i].name) < 0);
		if (strcmp(v[i].name, "mine") == 0) {
			saw_mine = true;
			assert_int_equal(v[i].source, PROFILE_SRC_USER);
			assert_false(v[i].hides_lower);
		}
		if (strcmp(v[i].name, "node") == 0) {
			char *path = xasprintf("%s/boxy/profiles/node.yaml", xdg);

			saw_node = true;
			assert_int_equal(v[i].source, PROFILE_SRC_USER);
			assert_true(v[i].hides_lower);
			assert_string_equal(v[i].path, path);
			free(path);
		}
	}
	assert_true(saw_mine && saw_node);
	profile_info_free(v, n);
	setenv("XDG_CONFIG_HOME", empty_xdg, 1);
	free(xdg);
}

/* ---- the presets ------------------------------------------------------------------ */

static void load_preset(const char *name, struct runspec *rs)
{
	char *err = NULL;

	runspec_init(rs);
	if (profile_load(name, &ctx, rs, &err) < 0) {
		print_error("preset %s: %s\n", name, err);
		fail();
	}
	assert_string_equal(rs->profile, name);
}

static void test_preset_generic(void **state)
{
	struct runspec rs;

	(void)state;
	load_preset("generic", &rs);
	assert_int_equal(rs.net, NET_PUBLIC);
	assert_int_equal(rs.nmounts, 0);
	assert_int_equal(rs.nhosts, 0);
	assert_int_equal(rs.nenv, 0);
	assert_false(rs.allow_git_write);
	assert_int_equal(rs.seccomp, SECCOMP_UNSET);
	runspec_free(&rs);
}

static void test_preset_offline(void **state)
{
	struct runspec rs;

	(void)state;
	load_preset("offline", &rs);
	assert_int_equal(rs.net, NET_NONE);
	assert_int_equal(rs.nmounts, 0);
	assert_int_equal(rs.nhosts, 0);
	runspec_free(&rs);
}

/*
 * node and python: public network, a sandbox-only cache made with mkdir, its
 * variable set; under $XDG_CACHE_HOME when that is absolute, else ~/.cache.
 */
static void test_preset_caches(void **state)
{
	static const struct {
		const char *preset, *cache, *var, *xdg;
		size_t nmounts;
	} rows[] = {
		{ "node", HOME "/.cache/boxy/npm", "npm_config_cache", NULL, 2 },
		{ "node", HOME "/.cache/boxy/pnpm-store", "npm_config_store_dir", NULL, 2 },
		{ "python", HOME "/.cache/boxy/pip", "PIP_CACHE_DIR", NULL, 1 },
		{ "node", "/xdg/cache/boxy/npm", "npm_config_cache", "/xdg/cache", 2 },
		{ "python", "/xdg/cache/boxy/pip", "PIP_CACHE_DIR", "/xdg/cache", 1 },
		{ "node", HOME "/.cache/boxy/npm", "npm_config_cache", "relative/cache", 2 },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct runspec rs;
		bool set = false;

		if (rows[i].xdg)
			setenv("XDG_CACHE_HOME", rows[i].xdg, 1);
		else
			unsetenv("XDG_CACHE_HOME");
		load_preset(rows[i].preset, &rs);
		unsetenv("XDG_CACHE_HOME");
		assert_int_equal(rs.net, NET_PUBLIC);
		assert_int_equal(rs.nhosts, 0);
		assert_int_equal(rs.nmounts, rows[i].nmounts);
		size_t m = 0;
		while (m < rs.nmounts && strcmp(rs.mounts[m].src, rows[i].cache) != 0)
			m++;
		assert_true(m < rs.nmounts);
		assert_int_equal(rs.mounts[m].kind, MOUNT_MKDIR);
		for (size_t j = 0; j < rs.nenv; j++) {
			/* No preset passes a credential. */
			assert_null(strstr(rs.env[j].name, "TOKEN"));
			assert_null(strstr(rs.env[j].name, "KEY"));
			assert_null(strstr(rs.env[j].name, "INDEX_URL"));
			if (strcmp(rs.env[j].name, rows[i].var) == 0) {
				assert_string_equal(rs.env[j].value, rows[i].cache);
				set = true;
			}
		}
		assert_true(set);
		runspec_free(&rs);
	}
}

static void test_preset_claude(void **state)
{
	static const char *const hosts[] = {
		"api.anthropic.com", "statsig.anthropic.com", "console.anthropic.com",
		"claude.ai", "proxy.golang.org", "sum.golang.org",
	};
	struct runspec rs;
	const struct mount_spec *m;

	(void)state;
	load_preset("claude", &rs);
	assert_int_equal(rs.net, NET_ALLOWLIST);
	assert_int_equal(rs.nhosts, ARRAY_SIZE(hosts));
	for (size_t i = 0; i < ARRAY_SIZE(hosts); i++) {
		assert_string_equal(rs.hosts[i].name, hosts[i]);
		assert_int_equal(rs.hosts[i].nports, 0);
	}
	assert_int_equal(rs.nmounts, 5);
	m = find_mount(&rs, MOUNT_COPY, HOME "/.claude/.credentials.json");
	assert_non_null(m);
	assert_null(m->dst);
	m = find_mount(&rs, MOUNT_COPY, HOME "/.config/boxy/claude-mcp.json");
	assert_non_null(m);
	assert_string_equal(m->dst, HOME "/.claude.json");
	assert_non_null(find_mount(&rs, MOUNT_RO, HOME "/.claude/CLAUDE.md"));
	assert_non_null(find_mount(&rs, MOUNT_RO, HOME "/.local/bin/claude"));
	assert_non_null(find_mount(&rs, MOUNT_MKDIR, HOME "/.claude/projects/" SLUG));
	/* Nothing else of ~/.claude, and no API key. */
	for (size_t i = 0; i < rs.nmounts; i++)
		assert_string_not_equal(rs.mounts[i].src, HOME "/.claude");
	assert_int_equal(rs.nenv, 0);
	runspec_free(&rs);
}

/* ---- setup ------------------------------------------------------------------------ */

static int setup(void **state)
{
	const char *srcdir = getenv("BOXY_SRCDIR");
	char tmpl[] = "/tmp/boxy-test-xdg-XXXXXX";

	(void)state;
	fixture_dir = xasprintf("%s/tests/unit/profiles", srcdir ? srcdir : ".");
	empty_xdg = xstrdup(mkdtemp(tmpl));
	setenv("XDG_CONFIG_HOME", empty_xdg, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(empty_xdg);
	free(empty_xdg);
	free(fixture_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_empty_profiles),
		cmocka_unit_test(test_hosts_imply_allowlist),
		cmocka_unit_test(test_expand_path),
		cmocka_unit_test(test_expand_edge_contexts),
		cmocka_unit_test(test_expand_value),
		cmocka_unit_test(test_workdir_slug),
		cmocka_unit_test(test_workdir_slug_boundary),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_text_too_large),
		cmocka_unit_test(test_extends_merges),
		cmocka_unit_test(test_extends_overrides_false),
		cmocka_unit_test(test_extends_error_in_parent),
		cmocka_unit_test(test_extends_cycle),
		cmocka_unit_test(test_extends_depth),
		cmocka_unit_test(test_file_too_large_and_not_regular),
		cmocka_unit_test(test_is_name),
		cmocka_unit_test(test_unknown_name),
		cmocka_unit_test(test_preset_names),
		cmocka_unit_test(test_user_dir_lookup),
		cmocka_unit_test(test_preset_generic),
		cmocka_unit_test(test_preset_offline),
		cmocka_unit_test(test_preset_caches),
		cmocka_unit_test(test_preset_claude),
	};

	/* {cache} reads XDG_CACHE_HOME: the tests that want it set it themselves. */
	unsetenv("XDG_CACHE_HOME");
	return cmocka_run_group_tests(tests, setup, teardown);
}
