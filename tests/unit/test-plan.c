/*
 * test-plan.c — the plan codec (parent → boxy-init) and the payload's
 * environment.
 *
 * plan_decode() reads bytes that crossed a process boundary, so besides the
 * round trip these tests feed it every truncation of a valid plan, lengths
 * and counts far beyond the buffer, missing and repeated fields and values
 * out of range, and assert the exact verdict for each. env_build() is the
 * credential filter: the tests plant the secrets a hostile package looks for
 * in the caller's environment and assert the exact environment that comes
 * out.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "init/plan.h"
#include "sandbox/env.h"
#include "common/util.h"

/* ---- helpers ------------------------------------------------------------ */

static char *argv_full[] = { "npm", "install", "--ignore-scripts", NULL };
static char *envp_full[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", NULL };
static uint16_t ports_full[] = { 443, 22, 65535 };
#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIQ\nQUJD+/0=\n" \
	"-----END CERTIFICATE-----\n"

/* A plan with every field set to something other than its zero value. */
static void plan_fill(struct plan *p, bool with_lists)
{
	plan_init(p);
	p->argv = strv_dup(argv_full);
	p->envp = strv_dup(envp_full);
	p->workdir = xstrdup("/home/u/project");
	p->home = xstrdup("/home/u");
	p->user = xstrdup("u");
	p->hostname = xstrdup("boxy");
	p->uid = 1000;
	p->gid = 1001;
	if (with_lists) {
		struct mount_spec *m;

		m = xappend(&p->mounts, &p->nmounts, sizeof(*m));
		m->kind = MOUNT_RO;
		m->src = xstrdup("/home/u/.npmrc");
		m->dst = xstrdup("/home/u/.npmrc");
		m = xappend(&p->mounts, &p->nmounts, sizeof(*m));
		m->kind = MOUNT_COPY_RO;
		m->src = xstrdup("/home/u/.config/boxy/claude-mcp.json");
		m->dst = xstrdup("/home/u/.claude.json");
		p->ports = xcalloc(ARRAY_SIZE(ports_full), sizeof(uint16_t));
		memcpy(p->ports, ports_full, sizeof(ports_full));
		p->nports = ARRAY_SIZE(ports_full);
		p->dns_search = xstrdup("tail0a1b2.ts.net");
		p->tls_ca_pem = xstrdup(CA_PEM);
		p->tls_ca_hash = xstrdup("0a1b2c3d");
	}
	p->allow_git_write = true;
	p->net = NET_NONE;
	p->seccomp = SECCOMP_COMPAT;
	p->tty = true;
	p->foreground = true;
	p->new_session = true;
	p->tmpfs_size = 3ULL << 30;
	p->pids = 512;
	p->landlock_abi = 7;
}

static void encode_or_die(const struct plan *p, char **buf, size_t *len)
{
	assert_int_equal(plan_encode(p, buf, len), 0);
	assert_non_null(*buf);
}

/* Decode and return the error text (malloc'd) or NULL on success. */
static char *decode_err(const char *buf, size_t len)
{
	struct plan p;
	char *err = NULL;
	int r = plan_decode(buf, len, &p, &err);

	if (r == 0) {
		assert_null(err);
		plan_free(&p);
		return NULL;
	}
	assert_int_equal(r, -1);
	assert_non_null(err);
	/* A failed decode leaves nothing behind. */
	assert_null(p.argv);
	assert_null(p.workdir);
	assert_int_equal(p.nmounts, 0);
	return err;
}

static void assert_decode_fails(const char *buf, size_t len, const char *expect)
{
	char *err = decode_err(buf, len);

	assert_non_null(err);
	assert_string_equal(err, expect);
	free(err);
}

/* A growable byte buffer for hand-made (malformed) plans. */
struct mb {
	char *d;
	size_t n;
};

static void mb_put(struct mb *b, const void *p, size_t n)
{
	b->d = xrealloc(b->d, b->n + n + 1);
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void mb_u16(struct mb *b, uint16_t v)
{
	uint8_t x[2] = { v & 0xff, v >> 8 };

	mb_put(b, x, 2);
}

static void mb_u32(struct mb *b, uint32_t v)
{
	uint8_t x[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

	mb_put(b, x, 4);
}

/* Start from a valid encoded plan without mounts or ports. */
static void mb_base(struct mb *b)
{
	struct plan p;
	char *buf;
	size_t len;

	plan_fill(&p, false);
	encode_or_die(&p, &buf, &len);
	b->d = NULL;
	b->n = 0;
	mb_put(b, buf, len);
	free(buf);
	plan_free(&p);
}

/* Field tags, as init/plan.c numbers them (the wire format is part of the test). */
enum { T_ARGV = 1, T_ENVP, T_WORKDIR, T_HOME, T_USER, T_HOSTNAME, T_UID, T_GID, T_MOUNT,
       T_GIT, T_NET, T_SECCOMP, T_TTY, T_FG, T_TMPFS, T_PIDS, T_PORTS, T_LANDLOCK, T_NEWSESS,
       T_DNS_SEARCH, T_ROOTS, T_SECCOMP_BPF, T_HOLD_MS, T_NET_QUEUES, T_TLS_CA, T_DECOY };

/* Offset of the value of the first field with this tag in an encoded plan, and its length. */
static size_t field_find(const char *buf, size_t len, uint16_t tag, size_t *flen)
{
	size_t off = 12;

	while (off + 6 <= len) {
		const uint8_t *q = (const uint8_t *)buf + off;
		uint16_t t = (uint16_t)(q[0] | q[1] << 8);
		uint32_t l = (uint32_t)q[2] | (uint32_t)q[3] << 8 | (uint32_t)q[4] << 16 |
			     (uint32_t)q[5] << 24;

		if (t == tag) {
			*flen = l;
			return off + 6;
		}
		off += 6 + l;
	}
	fail_msg("field %u not found", tag);
	return 0;
}

/* ---- plan: round trip -------------------------------------------------- */

static void test_plan_round_trip(void **state)
{
	struct plan in, out;
	char *buf, *err = NULL;
	size_t len;

	(void)state;
	plan_fill(&in, true);
	encode_or_die(&in, &buf, &len);
	assert_int_equal(plan_decode(buf, len, &out, &err), 0);
	assert_null(err);

	assert_int_equal(strv_len(out.argv), 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(out.argv[i], argv_full[i]);
	assert_null(out.argv[3]);
	assert_int_equal(strv_len(out.envp), 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(out.envp[i], envp_full[i]);
	assert_string_equal(out.workdir, "/home/u/project");
	assert_string_equal(out.home, "/home/u");
	assert_string_equal(out.user, "u");
	assert_string_equal(out.hostname, "boxy");
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.gid, 1001);
	assert_int_equal(out.nmounts, 2);
	assert_int_equal(out.mounts[0].kind, MOUNT_RO);
	assert_string_equal(out.mounts[0].src, "/home/u/.npmrc");
	assert_string_equal(out.mounts[0].dst, "/home/u/.npmrc");
	assert_int_equal(out.mounts[1].kind, MOUNT_COPY_RO);
	assert_string_equal(out.mounts[1].src, "/home/u/.config/boxy/claude-mcp.json");
	assert_string_equal(out.mounts[1].dst, "/home/u/.claude.json");
	assert_true(out.allow_git_write);
	assert_int_equal(out.net, NET_NONE);
	assert_int_equal(out.seccomp, SECCOMP_COMPAT);
	assert_true(out.tty);
	assert_true(out.foreground);
	assert_true(out.new_session);
	assert_int_equal(out.tmpfs_size, 3ULL << 30);
	assert_int_equal(out.pids, 512);
	assert_int_equal(out.nports, 3);
	assert_memory_equal(out.ports, ports_full, sizeof(ports_full));
	assert_int_equal(out.landlock_abi, 7);
	assert_string_equal(out.dns_search, "tail0a1b2.ts.net");
	assert_string_equal(out.tls_ca_pem, CA_PEM);
	assert_string_equal(out.tls_ca_hash, "0a1b2c3d");

	plan_free(&out);
	plan_free(&in);
	free(buf);
}

/* The zero values of the optional fields survive too (false is not "absent"). */
static void test_plan_round_trip_minimal(void **state)
{
	struct plan in, out;
	char *buf, *err = NULL;
	size_t len;

	(void)state;
	plan_fill(&in, false);
	in.allow_git_write = in.tty = in.foreground = in.new_session = false;
	in.net = NET_PUBLIC;
	in.seccomp = SECCOMP_STRICT;
	in.pids = 0;
	in.landlock_abi = 0;
	strv_free(in.envp);
	in.envp = xcalloc(1, sizeof(char *));   /* an empty environment is legal */
	encode_or_die(&in, &buf, &len);
	assert_int_equal(plan_decode(buf, len, &out, &err), 0);
	assert_int_equal(strv_len(out.envp), 0);
	assert_non_null(out.envp);
	assert_false(out.allow_git_write);
	assert_false(out.tty);
	assert_false(out.foreground);
	assert_false(out.new_session);
	assert_int_equal(out.net, NET_PUBLIC);
	assert_int_equal(out.seccomp, SECCOMP_STRICT);
	assert_int_equal(out.nmounts, 0);
	assert_null(out.ports);
	assert_int_equal(out.landlock_abi, 0);
	assert_null(out.dns_search);    /* optional: absent is no search line */
	plan_free(&out);
	plan_free(&in);
	free(buf);
}

/* ---- plan: truncation at every offset ---------------------------------- */

static void test_plan_truncated_everywhere(void **state)
{
	struct plan in;
	char *buf;
	size_t len, required_end, flen;
	bool *boundary;

	(void)state;
	plan_fill(&in, true);
	encode_or_die(&in, &buf, &len);

	/* Field boundaries: only there can a prefix be a well-formed plan. */
	boundary = xcalloc(len + 1, sizeof(bool));
	for (size_t off = 12; off + 6 <= len;) {
		const uint8_t *q = (const uint8_t *)buf + off;
		uint32_t l = (uint32_t)q[2] | (uint32_t)q[3] << 8 | (uint32_t)q[4] << 16 |
			     (uint32_t)q[5] << 24;

		off += 6 + l;
		boundary[off] = true;
	}
	assert_true(boundary[len]);
	/* ...and only once every required field is in: seccomp is the last of them. */
	required_end = field_find(buf, len, T_SECCOMP, &flen) + flen;

	for (size_t n = 0; n < len; n++) {
		char *copy = xmalloc(n ? n : 1);    /* exact size: ASan sees any overread */
		char *err;

		memcpy(copy, buf, n);
		err = decode_err(copy, n);
		if (boundary[n] && n >= required_end)
			assert_null(err);
		else if (err == NULL)
			fail_msg("a plan truncated to %zu of %zu bytes decoded", n, len);
		free(err);
		free(copy);
	}
	free(boundary);
	plan_free(&in);
	free(buf);
}

/* ---- plan: malformed input --------------------------------------------- */

static void test_plan_bad_header(void **state)
{
	struct mb b;

	(void)state;
	assert_decode_fails("", 0, "plan: bad magic");
	assert_decode_fails("BOXYPLAX\1\0\0\0", 12, "plan: bad magic");
	assert_decode_fails("BOXYPLAN\2\0\0\0", 12, "plan: unsupported version");
	assert_decode_fails("BOXYPLAN\1\0\0", 11, "plan: unsupported version");
	/* A header alone is a plan with nothing in it. */
	assert_decode_fails("BOXYPLAN\1\0\0\0", 12, "plan: missing field 1");

	mb_base(&b);
	assert_decode_fails(b.d, PLAN_MAX_BYTES + 1ULL, "plan: larger than 8388608 bytes");
	free(b.d);
}

static void test_plan_huge_lengths(void **state)
{
	struct mb b;
	size_t at, flen;

	(void)state;
	/* A field length beyond the buffer. */
	mb_base(&b);
	mb_u16(&b, T_MOUNT);
	mb_u32(&b, 0xffffffffu);
	mb_put(&b, "\0\0\0\0\0\0\0\0", 8);
	assert_decode_fails(b.d, b.n, "plan: truncated");
	free(b.d);

	mb_base(&b);
	mb_u16(&b, T_PORTS);
	mb_u32(&b, 0xffffffffu);
	mb_put(&b, "\1\0", 2);
	assert_decode_fails(b.d, b.n, "plan: truncated");
	free(b.d);

	/* A vector count of 4 billion in a field of a few bytes: refused before allocating. */
	mb_base(&b);
	at = field_find(b.d, b.n, T_ARGV, &flen);
	memcpy(b.d + at, "\xff\xff\xff\xff", 4);
	assert_decode_fails(b.d, b.n, "plan: bad vector count in field 1");
	free(b.d);

	/* A count within the cap but larger than the bytes could hold. */
	mb_base(&b);
	at = field_find(b.d, b.n, T_ENVP, &flen);
	memcpy(b.d + at, "\x00\x00\x01\x00", 4);        /* 65536 entries */
	assert_decode_fails(b.d, b.n, "plan: bad vector count in field 2");
	free(b.d);

	/* A string length inside a vector past the field's end. */
	mb_base(&b);
	at = field_find(b.d, b.n, T_ARGV, &flen);
	memcpy(b.d + at + 4, "\xff\xff\xff\x7f", 4);
	assert_decode_fails(b.d, b.n, "plan: bad vector entry 0 in field 1");
	free(b.d);

	/* A mount's path length past the field's end. */
	mb_base(&b);
	mb_u16(&b, T_MOUNT);
	mb_u32(&b, 12);
	mb_u32(&b, MOUNT_RO);
	mb_u32(&b, 0x7fffffffu);
	mb_put(&b, "/abc", 4);
	assert_decode_fails(b.d, b.n, "plan: mount 1: bad path");
	free(b.d);
}

/* Encode a plan with one required field removed. */
struct missing_case {
	const char *what;
	void (*drop)(struct plan *p);
	const char *expect;
};

static void drop_argv(struct plan *p) { strv_free(p->argv); p->argv = NULL; }
static void drop_envp(struct plan *p) { strv_free(p->envp); p->envp = NULL; }
static void drop_workdir(struct plan *p) { free(p->workdir); p->workdir = NULL; }
static void drop_home(struct plan *p) { free(p->home); p->home = NULL; }
static void drop_user(struct plan *p) { free(p->user); p->user = NULL; }
static void drop_hostname(struct plan *p) { free(p->hostname); p->hostname = NULL; }

static const struct missing_case missing_cases[] = {
	{ "no command", drop_argv, "plan: missing field 1" },
	{ "no environment vector", drop_envp, "plan: missing field 2" },
	{ "no work directory", drop_workdir, "plan: missing field 3" },
	{ "no home", drop_home, "plan: missing field 4" },
	{ "no user", drop_user, "plan: missing field 5" },
	{ "no hostname", drop_hostname, "plan: missing field 6" },
};

static void test_plan_missing_fields(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(missing_cases); i++) {
		struct plan p;
		char *buf;
		size_t len;

		plan_fill(&p, true);
		missing_cases[i].drop(&p);
		encode_or_die(&p, &buf, &len);
		print_message("# %s\n", missing_cases[i].what);
		assert_decode_fails(buf, len, missing_cases[i].expect);
		free(buf);
		plan_free(&p);
	}
}

/* Patch one byte of one field's value of a valid plan. */
struct patch_case {
	const char *what;
	uint16_t tag;
	size_t at;              /* offset inside the value */
	uint8_t byte;
	const char *expect;
};

static const struct patch_case patch_cases[] = {
	{ "a boolean that is 2", T_GIT, 0, 2, "plan: bad boolean in field 10" },
	{ "a boolean that is 255", T_FG, 0, 0xff, "plan: bad boolean in field 14" },
	{ "an unknown network mode", T_NET, 0, 9, "plan: bad network mode" },
	{ "seccomp mode unset", T_SECCOMP, 0, 0, "plan: bad seccomp mode" },
	{ "an unknown seccomp mode", T_SECCOMP, 0, 3, "plan: bad seccomp mode" },
	{ "a NUL inside the work directory", T_WORKDIR, 5, 0, "plan: bad string in field 3" },
	{ "a relative work directory", T_WORKDIR, 0, 'x', "plan: relative path in field 3" },
	{ "a relative home", T_HOME, 0, '.', "plan: relative path in field 4" },
	{ "a NUL inside an argument", T_ARGV, 4 + 4 + 1, 0, "plan: bad vector entry 0 in field 1" },
	{ "an argument length that no longer matches", T_ARGV, 4, 0,
	  "plan: bad vector entry 1 in field 1" },
	{ "an environment entry with no '='", T_ENVP, 4 + 4 + 4, 'X',
	  "plan: bad environment entry 0" },
	{ "an environment entry with an empty name", T_ENVP, 4 + 4, '=',
	  "plan: bad environment entry 0" },
	{ "a uid of -1", T_UID, 0, 0xff, NULL },        /* only byte 0: still valid */
	{ "an unknown tag", T_TTY, (size_t)-6, 99, "plan: unknown field 99" },
	{ "tag zero", T_TTY, (size_t)-6, 0, "plan: unknown field 0" },
	{ "a duplicated tag", T_TTY, (size_t)-6, T_GIT, "plan: field 10 repeated" },
	{ "a new-session flag that is 3", T_NEWSESS, 0, 3, "plan: bad boolean in field 19" },
	{ "a Landlock ABI from the future", T_LANDLOCK, 1, 0x10, "plan: bad Landlock ABI" },
};

static void test_plan_patched_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(patch_cases); i++) {
		const struct patch_case *c = &patch_cases[i];
		struct mb b;
		size_t at, flen;
		char *err;

		mb_base(&b);
		at = field_find(b.d, b.n, c->tag, &flen);
		b.d[at + c->at] = (char)c->byte;
		print_message("# %s\n", c->what);
		err = decode_err(b.d, b.n);
		if (c->expect) {
			assert_non_null(err);
			assert_string_equal(err, c->expect);
		} else {
			assert_null(err);
		}
		free(err);
		free(b.d);
	}
}

static void test_plan_bad_fields_appended(void **state)
{
	struct mb b;
	uint32_t all_ones = 0xffffffffu;

	(void)state;
	/* uid (uid_t)-1 means "leave unchanged" to setresuid: never a real uid. */
	mb_base(&b);
	memcpy(b.d + field_find(b.d, b.n, T_UID, &(size_t){ 0 }), &all_ones, 4);
	assert_decode_fails(b.d, b.n, "plan: invalid uid");
	free(b.d);

	/* A mount field with a byte too many. */
	mb_base(&b);
	mb_u16(&b, T_MOUNT);
	mb_u32(&b, 4 + 4 + 2 + 4 + 2 + 1);
	mb_u32(&b, MOUNT_RW);
	mb_u32(&b, 2);
	mb_put(&b, "/a", 2);
	mb_u32(&b, 2);
	mb_put(&b, "/a", 2);
	mb_put(&b, "!", 1);
	assert_decode_fails(b.d, b.n, "plan: trailing bytes in field 9");
	free(b.d);

	/* A mount of an unknown kind, and one with a relative destination. */
	mb_base(&b);
	mb_u16(&b, T_MOUNT);
	mb_u32(&b, 4 + 4 + 2 + 4 + 2);
	mb_u32(&b, 77);
	mb_u32(&b, 2);
	mb_put(&b, "/a", 2);
	mb_u32(&b, 2);
	mb_put(&b, "/a", 2);
	assert_decode_fails(b.d, b.n, "plan: mount 1: bad kind");
	free(b.d);

	mb_base(&b);
	mb_u16(&b, T_MOUNT);
	mb_u32(&b, 4 + 4 + 2 + 4 + 2);
	mb_u32(&b, MOUNT_COPY);
	mb_u32(&b, 2);
	mb_put(&b, "/a", 2);
	mb_u32(&b, 2);
	mb_put(&b, "a/", 2);
	assert_decode_fails(b.d, b.n, "plan: mount 1: bad path");
	free(b.d);

	/* Ports: an odd length, and port 0. */
	mb_base(&b);
	mb_u16(&b, T_PORTS);
	mb_u32(&b, 3);
	mb_put(&b, "\x01\xbb\x00", 3);
	assert_decode_fails(b.d, b.n, "plan: bad port list");
	free(b.d);

	mb_base(&b);
	mb_u16(&b, T_PORTS);
	mb_u32(&b, 4);
	mb_put(&b, "\xbb\x01\x00\x00", 4);
	assert_decode_fails(b.d, b.n, "plan: bad port");
	free(b.d);

	/* An empty command vector. */
	mb_base(&b);
	{
		size_t flen, at = field_find(b.d, b.n, T_ARGV, &flen);
		struct mb c = { 0 };

		mb_put(&c, b.d, at - 6);
		mb_u16(&c, T_ARGV);
		mb_u32(&c, 4);
		mb_u32(&c, 0);
		mb_put(&c, b.d + at + flen, b.n - at - flen);
		assert_decode_fails(c.d, c.n, "plan: empty command");
		free(c.d);
	}
	free(b.d);

	/* A hostname longer than the kernel accepts. */
	{
		struct plan p;
		char *buf;
		size_t len;

		plan_fill(&p, false);
		free(p.hostname);
		/* 65 characters: one more than HOST_NAME_MAX */
		p.hostname = xstrdup("0123456789012345678901234567890123456789"
				     "012345678901234567890123X");
		encode_or_die(&p, &buf, &len);
		assert_decode_fails(buf, len, "plan: hostname too long");
		free(buf);
		plan_free(&p);
	}
}

/* ---- plan: the DNS search domain ------------------------------------------ */

/*
 * It becomes a line of the sandbox's /etc/resolv.conf: only a canonical DNS
 * name gets through, whatever bytes the field carries.
 */
static const struct search_case {
	const char *what;
	const char *value;          /* the field's bytes (NUL-terminated here, never on the wire) */
	size_t len;                 /* 0: strlen(value) */
	const char *expect;         /* NULL: decodes, to value */
} search_cases[] = {
	{ "a MagicDNS suffix", "tail0a1b2.ts.net", 0, NULL },
	{ "one label", "corp", 0, NULL },
	{ "63-character label", "a23456789012345678901234567890123456789012345678901234567890123.ts.net",
	  0, NULL },
	{ "empty", "", 0, "plan: empty string in field 20" },
	{ "a newline and a directive", "ts.net\nnameserver 8.8.8.8", 0,
	  "plan: the DNS search domain is not a DNS name" },
	{ "a space: a second search domain", "ts.net evil.example", 0,
	  "plan: the DNS search domain is not a DNS name" },
	{ "upper case (not canonical)", "Tail0a1b2.ts.net", 0,
	  "plan: the DNS search domain is not a DNS name" },
	{ "a trailing dot (not canonical)", "tail0a1b2.ts.net.", 0,
	  "plan: the DNS search domain is not a DNS name" },
	{ "an empty label", "tail0a1b2..ts.net", 0,
	  "plan: the DNS search domain is not a DNS name" },
	{ "a leading dot", ".ts.net", 0, "plan: the DNS search domain is not a DNS name" },
	{ "a 64-character label", "a234567890123456789012345678901234567890123456789012345678901234.n",
	  0, "plan: the DNS search domain is not a DNS name" },
	{ "a slash", "ts.net/x", 0, "plan: the DNS search domain is not a DNS name" },
	{ "an embedded NUL", "ts\0net", 6, "plan: bad string in field 20" },
};

static void test_plan_dns_search(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(search_cases); i++) {
		const struct search_case *c = &search_cases[i];
		size_t n = c->len ? c->len : strlen(c->value);
		struct plan out;
		struct mb b;
		char *err = NULL;

		print_message("dns_search: %s\n", c->what);
		mb_base(&b);
		mb_u16(&b, T_DNS_SEARCH);
		mb_u32(&b, (uint32_t)n);
		mb_put(&b, c->value, n);
		if (c->expect) {
			assert_decode_fails(b.d, b.n, c->expect);
		} else {
			assert_int_equal(plan_decode(b.d, b.n, &out, &err), 0);
			assert_string_equal(out.dns_search, c->value);
			plan_free(&out);
		}
		free(b.d);
	}
}

/* Longer than any DNS name: refused before it is copied, as is a second one. */
static void test_plan_dns_search_oversized(void **state)
{
	struct mb b;
	char big[300];

	(void)state;
	/* 254 characters in valid labels: one more than DNS_NAME_MAX. */
	memset(big, 'a', sizeof(big));
	for (size_t i = 50; i < sizeof(big); i += 51)
		big[i] = '.';
	mb_base(&b);
	mb_u16(&b, T_DNS_SEARCH);
	mb_u32(&b, 254);
	mb_put(&b, big, 254);
	assert_decode_fails(b.d, b.n, "plan: the DNS search domain is too long");
	free(b.d);

	/* A length far beyond what remains. */
	mb_base(&b);
	mb_u16(&b, T_DNS_SEARCH);
	mb_u32(&b, 0x7fffffffu);
	mb_put(&b, "ts.net", 6);
	assert_decode_fails(b.d, b.n, "plan: truncated");
	free(b.d);

	/* Exactly 253 decodes. */
	{
		struct plan out;
		char *err = NULL;

		mb_base(&b);
		mb_u16(&b, T_DNS_SEARCH);
		mb_u32(&b, 253);
		mb_put(&b, big, 253);
		assert_int_equal(plan_decode(b.d, b.n, &out, &err), 0);
		assert_int_equal(strlen(out.dns_search), 253);
		plan_free(&out);
		free(b.d);
	}

	/* The field twice. */
	mb_base(&b);
	for (int i = 0; i < 2; i++) {
		mb_u16(&b, T_DNS_SEARCH);
		mb_u32(&b, 6);
		mb_put(&b, "ts.net", 6);
	}
	assert_decode_fails(b.d, b.n, "plan: field 20 repeated");
	free(b.d);
}

/*
 * The session CA becomes files in the sandbox's /etc/ssl/certs, one named
 * after its hash: anything but one PEM block of base64 and eight hex
 * digits is refused (a newline or "../" in the hash would name another file;
 * a second block or a key would be trusted too).
 */
static void test_plan_tls_ca(void **state)
{
	static const struct {
		const char *what, *pem, *hash;
		const char *expect;     /* NULL: decodes */
	} cases[] = {
		{ "a certificate", CA_PEM, "0a1b2c3d", NULL },
		{ "a hash with a slash", CA_PEM, "../../x", "plan: a malformed session CA" },
		{ "a short hash", CA_PEM, "0a1b2c3", "plan: a malformed session CA" },
		{ "an upper-case hash", CA_PEM, "0A1B2C3D", "plan: a malformed session CA" },
		{ "an empty hash", CA_PEM, "", "plan: a malformed session CA" },
		{ "two blocks", CA_PEM CA_PEM, "0a1b2c3d", "plan: a malformed session CA" },
		{ "a key", "-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\n",
		  "0a1b2c3d", "plan: a malformed session CA" },
		{ "no end line", "-----BEGIN CERTIFICATE-----\nQUJD\n", "0a1b2c3d",
		  "plan: a malformed session CA" },
		{ "a space", "-----BEGIN CERTIFICATE-----\nQU JD\n-----END CERTIFICATE-----\n",
		  "0a1b2c3d", "plan: a malformed session CA" },
		{ "nothing", "", "0a1b2c3d", "plan: a malformed session CA" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct plan p, out;
		char *buf, *err = NULL;
		size_t len;

		print_message("tls_ca: %s\n", cases[i].what);
		plan_fill(&p, false);
		p.tls_ca_pem = xstrdup(cases[i].pem);
		p.tls_ca_hash = xstrdup(cases[i].hash);
		encode_or_die(&p, &buf, &len);
		if (cases[i].expect) {
			assert_decode_fails(buf, len, cases[i].expect);
		} else {
			assert_int_equal(plan_decode(buf, len, &out, &err), 0);
			assert_string_equal(out.tls_ca_pem, cases[i].pem);
			plan_free(&out);
		}
		free(buf);
		plan_free(&p);
	}
	{
		/* A field with bytes after its two strings, and one cut short. */
		struct mb b;

		mb_base(&b);
		mb_u16(&b, T_TLS_CA);
		mb_u32(&b, 4 + (uint32_t)strlen(CA_PEM) + 4 + 8 + 1);
		mb_u32(&b, (uint32_t)strlen(CA_PEM));
		mb_put(&b, CA_PEM, strlen(CA_PEM));
		mb_u32(&b, 8);
		mb_put(&b, "0a1b2c3d!", 9);
		assert_decode_fails(b.d, b.n, "plan: a malformed session CA");
		free(b.d);
		mb_base(&b);
		mb_u16(&b, T_TLS_CA);
		mb_u32(&b, 4 + (uint32_t)strlen(CA_PEM));
		mb_u32(&b, (uint32_t)strlen(CA_PEM));
		mb_put(&b, CA_PEM, strlen(CA_PEM));
		assert_decode_fails(b.d, b.n, "plan: a malformed session CA");
		free(b.d);
	}
}

/* More mounts than the cap: refused, and nothing leaks. */
/* The seccomp program travels whole; a length that is not whole instructions, or too many, is refused. */
static void test_plan_seccomp_program(void **state)
{
	static const struct { uint32_t len; const char *err; } bad[] = {
		{ 0, "plan: bad seccomp program length 0" },
		{ 7, "plan: bad seccomp program length 7" },
		{ 4097 * 8, "plan: bad seccomp program length 32776" },
	};
	struct plan p, out;
	char *buf, *err = NULL;
	size_t len;
	struct mb b;

	(void)state;
	plan_fill(&p, false);
	p.seccomp_bpf_len = 16;
	p.seccomp_bpf = malloc(16);
	assert_non_null(p.seccomp_bpf);
	memcpy(p.seccomp_bpf, "\x20\0\0\0\4\0\0\0\x06\0\0\0\0\0\xff\x7f", 16);
	p.hold_ms = 2500;
	encode_or_die(&p, &buf, &len);
	assert_int_equal(plan_decode(buf, len, &out, &err), 0);
	assert_int_equal(out.seccomp_bpf_len, 16);
	assert_memory_equal(out.seccomp_bpf, p.seccomp_bpf, 16);
	assert_int_equal(out.hold_ms, 2500);
	assert_int_equal(out.net_queues, 0);            /* absent: one queue */
	plan_free(&out);
	plan_free(&p);
	free(buf);
	/* tap0's queues travel when there is more than one. */
	plan_fill(&p, false);
	p.net_queues = 3;
	encode_or_die(&p, &buf, &len);
	assert_int_equal(plan_decode(buf, len, &out, &err), 0);
	assert_int_equal(out.net_queues, 3);
	plan_free(&out);
	plan_free(&p);
	free(buf);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *zeros = calloc(1, bad[i].len + 1);

		mb_base(&b);
		mb_u16(&b, T_SECCOMP_BPF);
		mb_u32(&b, bad[i].len);
		mb_put(&b, zeros, bad[i].len);
		assert_decode_fails(b.d, b.n, bad[i].err);
		free(b.d);
		free(zeros);
	}
	/* A hold past 10 s is refused. */
	mb_base(&b);
	mb_u16(&b, T_HOLD_MS);
	mb_u32(&b, 4);
	mb_u32(&b, 10001);
	assert_decode_fails(b.d, b.n, "plan: bad start hold");
	free(b.d);
	/* No queue, or more than SANDBOX_NET_MAX_QUEUES: refused. */
	for (uint32_t q = 0; q <= 9; q += 9) {
		mb_base(&b);
		mb_u16(&b, T_NET_QUEUES);
		mb_u32(&b, 4);
		mb_u32(&b, q);
		assert_decode_fails(b.d, b.n, "plan: bad number of network queues");
		free(b.d);
	}
}

static void test_plan_too_many_mounts(void **state)
{
	struct mb b;

	(void)state;
	mb_base(&b);
	for (int i = 0; i < 4097; i++) {
		mb_u16(&b, T_MOUNT);
		mb_u32(&b, 4 + 4 + 2 + 4 + 2);
		mb_u32(&b, MOUNT_RO);
		mb_u32(&b, 2);
		mb_put(&b, "/a", 2);
		mb_u32(&b, 2);
		mb_put(&b, "/a", 2);
	}
	assert_decode_fails(b.d, b.n, "plan: more than 4096 mounts");
	free(b.d);
}

/* ---- decoys ---------------------------------------------------------------- */

/* A TAG_DECOY field: path, content, mode, mtime. */
static void mb_decoy(struct mb *b, const char *path, const char *content, uint32_t mode,
		     uint64_t mtime)
{
	uint8_t t[8];

	mb_u16(b, T_DECOY);
	mb_u32(b, (uint32_t)(4 + strlen(path) + 4 + strlen(content) + 4 + 8));
	mb_u32(b, (uint32_t)strlen(path));
	mb_put(b, path, strlen(path));
	mb_u32(b, (uint32_t)strlen(content));
	mb_put(b, content, strlen(content));
	mb_u32(b, mode);
	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t)(mtime >> (8 * i));
	mb_put(b, t, 8);
}

/* Decoys travel whole and in order; one that could leave $HOME, or is too big, never decodes. */
static void test_plan_decoys(void **state)
{
	static const struct { const char *path; const char *content; uint32_t mode; uint64_t mtime;
			      const char *err; } bad[] = {
		{ "/etc/passwd", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ "../.bashrc", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ ".aws/../../x", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ ".aws//credentials", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ "./.aws", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ ".aws/", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ ".aws/cred entials", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ ".aws/credentials\n", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ "", "x", 0600, 1, "plan: decoy 1: malformed" },
		{ ".aws/credentials", "x", 04755, 1, "plan: decoy 1: malformed" },
		{ ".aws/credentials", "x", 0600, 0, "plan: decoy 1: malformed" },
		{ ".aws/credentials", "x", 0600, 1ULL << 41, "plan: decoy 1: malformed" },
	};
	struct plan in, out;
	char *buf, *err = NULL, big[PLAN_DECOY_CONTENT_MAX + 2];
	size_t len;
	struct mb b;

	(void)state;
	plan_fill(&in, false);
	in.decoys = xcalloc(2, sizeof(*in.decoys));
	in.decoys[0] = (struct plan_decoy){ xstrdup(".aws/credentials"),
					    xstrdup("[default]\nkey = v\n"), 0600, 1700000000 };
	in.decoys[1] = (struct plan_decoy){ xstrdup(".ssh/id_ed25519_github"), xstrdup("k"), 0400,
					    1600000000 };
	in.ndecoys = 2;
	encode_or_die(&in, &buf, &len);
	assert_int_equal(plan_decode(buf, len, &out, &err), 0);
	assert_int_equal(out.ndecoys, 2);
	assert_string_equal(out.decoys[0].path, ".aws/credentials");
	assert_string_equal(out.decoys[0].content, "[default]\nkey = v\n");
	assert_int_equal(out.decoys[0].mode, 0600);
	assert_int_equal(out.decoys[0].mtime, 1700000000);
	assert_string_equal(out.decoys[1].path, ".ssh/id_ed25519_github");
	assert_int_equal(out.decoys[1].mode, 0400);
	plan_free(&out);
	plan_free(&in);
	free(buf);

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		mb_base(&b);
		mb_decoy(&b, bad[i].path, bad[i].content, bad[i].mode, bad[i].mtime);
		assert_decode_fails(b.d, b.n, bad[i].err);
		free(b.d);
	}
	/* too big a file, and one decoy past the most a plan has */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	mb_base(&b);
	mb_decoy(&b, ".x", big, 0600, 1);
	assert_decode_fails(b.d, b.n, "plan: decoy 1: malformed");
	free(b.d);
	mb_base(&b);
	for (int i = 0; i <= PLAN_DECOYS_MAX; i++)
		mb_decoy(&b, ".x", "x", 0600, 1);
	assert_decode_fails(b.d, b.n, "plan: more than 16 decoys");
	free(b.d);
}

/* ---- env_build ------------------------------------------------------------ */

struct env_case {
	const char *what;
	const char *caller[16];
	struct env_spec specs[4];
	size_t nspecs;
	const char *expect[24];
};

/* What a developer's shell typically holds, credentials included. */
#define HOSTILE_ENV \
	"SSH_AUTH_SOCK=/run/user/1000/ssh-agent", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", \
	"GITHUB_TOKEN=ghp_secret", "DOCKER_HOST=unix:///run/docker.sock", \
	"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", \
	"XDG_RUNTIME_DIR=/run/user/1000", "LD_PRELOAD=/tmp/evil.so", \
	"HOME=/home/host", "USER=host", "SHELL=/bin/zsh"

#define BOXY_SET(path) \
	"PATH=" path, "HOME=/home/u", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TMPDIR=/tmp"

static const struct env_case env_cases[] = {
	{
		"secrets never pass, the allowlist does",
		{ HOSTILE_ENV, "PATH=/usr/bin:/bin", "LANG=de_DE.UTF-8", "LC_ALL=C",
		  "TERM=xterm-256color", "TZ=Europe/Berlin", NULL },
		{ { 0 } }, 0,
		{ BOXY_SET("/usr/bin:/bin"), "LANG=de_DE.UTF-8", "LC_ALL=C",
		  "TERM=xterm-256color", "TZ=Europe/Berlin", NULL },
	},
	{
		"every allowlisted name, and near misses that are not",
		{ "LANGUAGE=de", "LC_TIME=C", "COLORTERM=truecolor", "NO_COLOR=1", "COLUMNS=80",
		  "LINES=24", "LANGX=1", "LCX=1", "XTERM=1", "TERMINFO=/x", NULL },
		{ { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), "LANGUAGE=de", "LC_TIME=C",
		  "COLORTERM=truecolor", "NO_COLOR=1", "COLUMNS=80", "LINES=24", NULL },
	},
	{
		"a prefix of an allowlisted name is not that name",
		{ "TER=1", "LAN=1", "T=1", "COLORTER=1", "TZ=UTC", NULL }, { { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), "TZ=UTC", NULL },
	},
	{
		"a PATH with a relative entry is replaced",
		{ "PATH=node_modules/.bin:/usr/bin", NULL }, { { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), NULL },
	},
	{
		"a PATH with an empty entry (the cwd) is replaced",
		{ "PATH=/usr/bin::/bin", NULL }, { { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), NULL },
	},
	{
		"a PATH ending in ':' is replaced",
		{ "PATH=/usr/bin:", NULL }, { { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), NULL },
	},
	{
		"an empty PATH is replaced",
		{ "PATH=", NULL }, { { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), NULL },
	},
	{
		"-e NAME passes a secret that was named, -e MISSING sets nothing",
		{ HOSTILE_ENV, NULL },
		{ { "GITHUB_TOKEN", NULL }, { "NOT_THERE", NULL } }, 2,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), "GITHUB_TOKEN=ghp_secret", NULL },
	},
	{
		"-e NAME=VAL sets, later wins, and overrides boxy's and the allowlist's",
		{ "TERM=xterm", NULL },
		{ { "FOO", "1" }, { "TERM", "dumb" }, { "FOO", "2" }, { "HOME", "/work" } }, 4,
		{ "PATH=" SANDBOX_DEFAULT_PATH, "HOME=/work", "USER=u", "LOGNAME=u",
		  "SHELL=/bin/sh", "TMPDIR=/tmp", "TERM=dumb", "FOO=2", NULL },
	},
	{
		"-e NAME after -e NAME=VAL takes the caller's value",
		{ "FOO=from-caller", NULL },
		{ { "FOO", "set" }, { "FOO", NULL } }, 2,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), "FOO=from-caller", NULL },
	},
	{
		"-e with an empty value sets it empty",
		{ NULL }, { { "EMPTY", "" } }, 1,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), "EMPTY=", NULL },
	},
	{
		"the first of duplicated caller entries wins, entries without '=' are ignored",
		{ "LANG=first", "LANG=second", "TERM", "=x", NULL }, { { 0 } }, 0,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), "LANG=first", NULL },
	},
	{
		"malformed -e names are skipped, not trusted",
		{ NULL }, { { "A=B", "c" }, { "", "d" } }, 2,
		{ BOXY_SET(SANDBOX_DEFAULT_PATH), NULL },
	},
};

static void test_env_build(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(env_cases); i++) {
		const struct env_case *c = &env_cases[i];
		char **env;
		size_t n = 0;

		print_message("# %s\n", c->what);
		env = env_build((char *const *)c->caller, c->specs, c->nspecs, "/home/u", "u", false);
		while (c->expect[n]) {
			assert_non_null(env[n]);
			assert_string_equal(env[n], c->expect[n]);
			n++;
		}
		if (env[n])
			fail_msg("unexpected extra entry %s", env[n]);
		strv_free(env);
	}
}

static void test_env_null_caller(void **state)
{
	char **env;

	(void)state;
	env = env_build(NULL, NULL, 0, "/home/u", "u", false);
	assert_int_equal(strv_len(env), 6);
	assert_string_equal(env[0], "PATH=" SANDBOX_DEFAULT_PATH);
	strv_free(env);
}

/* With TLS inspection every runtime's trust variable names the sandbox's files; -e still wins. */
static void test_env_tls_trust(void **state)
{
	const struct env_spec own[] = { { (char *)"SSL_CERT_FILE", (char *)"/home/u/mine.pem" } };
	const char *caller[] = { "SSL_CERT_FILE=/host/ca.pem", "NODE_EXTRA_CA_CERTS=/host/x.pem",
				 NULL };
	char **env;
	size_t n = 0;

	(void)state;
	env = env_build((char *const *)caller, NULL, 0, "/home/u", "u", true);
	for (size_t i = 0; env_tls_vars[i].name; i++, n++) {
		char *want = xasprintf("%s=%s", env_tls_vars[i].name, env_tls_vars[i].value);
		bool found = false;

		for (size_t j = 0; env[j]; j++)
			found = found || strcmp(env[j], want) == 0;
		if (!found)
			fail_msg("missing %s", want);
		free(want);
	}
	assert_true(n >= 10);
	assert_int_equal(strv_len(env), 6 + n);
	strv_free(env);
	/* without inspection none of them; the caller's own never pass */
	env = env_build((char *const *)caller, NULL, 0, "/home/u", "u", false);
	for (size_t j = 0; env[j]; j++)
		assert_null(strstr(env[j], "CERT"));
	strv_free(env);
	/* -e SSL_CERT_FILE=... : the user's choice wins (and the audit log will say why TLS fails) */
	env = env_build((char *const *)caller, own, 1, "/home/u", "u", true);
	for (size_t j = 0; env[j]; j++)
		if (strncmp(env[j], "SSL_CERT_FILE=", 14) == 0)
			assert_string_equal(env[j], "SSL_CERT_FILE=/home/u/mine.pem");
	strv_free(env);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_round_trip),
		cmocka_unit_test(test_plan_round_trip_minimal),
		cmocka_unit_test(test_plan_truncated_everywhere),
		cmocka_unit_test(test_plan_bad_header),
		cmocka_unit_test(test_plan_huge_lengths),
		cmocka_unit_test(test_plan_missing_fields),
		cmocka_unit_test(test_plan_patched_values),
		cmocka_unit_test(test_plan_bad_fields_appended),
		cmocka_unit_test(test_plan_dns_search),
		cmocka_unit_test(test_plan_dns_search_oversized),
		cmocka_unit_test(test_plan_too_many_mounts),
		cmocka_unit_test(test_plan_seccomp_program),
		cmocka_unit_test(test_plan_decoys),
		cmocka_unit_test(test_env_build),
		cmocka_unit_test(test_env_null_caller),
		cmocka_unit_test(test_plan_tls_ca),
		cmocka_unit_test(test_env_tls_trust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
