/*
 * test-landlock.c — the pure parts of the Landlock stage: which rights each
 * ABI knows, what boxy loses below ABI 9, which rules a plan turns into
 * (including the ABI 9 rule that a writable directory containing a read-only
 * path loses the unix-socket right) and which TCP ports stay reachable.
 * The syscalls themselves are exercised by the escape suite.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-stages.h"
#include "util.h"

#define ABI1_FS ((1ULL << 13) - 1)

static void test_abi_masks(void **state)
{
	static const struct {
		int abi;
		uint64_t fs, net, scoped;
		const char *what;
	} rows[] = {
		{ 0, 0, 0, 0, "no Landlock: nothing handled" },
		{ 1, ABI1_FS, 0, 0, "ABI 1: the 13 original rights" },
		{ 2, ABI1_FS | LL_FS_REFER, 0, 0, "ABI 2 adds refer" },
		{ 3, ABI1_FS | LL_FS_REFER | LL_FS_TRUNCATE, 0, 0, "ABI 3 adds truncate" },
		{ 4, ABI1_FS | LL_FS_REFER | LL_FS_TRUNCATE,
		  LL_NET_BIND_TCP | LL_NET_CONNECT_TCP, 0, "ABI 4 adds TCP bind/connect" },
		{ 5, ABI1_FS | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV,
		  LL_NET_BIND_TCP | LL_NET_CONNECT_TCP, 0, "ABI 5 adds ioctl_dev" },
		{ 6, ABI1_FS | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV,
		  LL_NET_BIND_TCP | LL_NET_CONNECT_TCP,
		  LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL, "ABI 6 adds the scopes" },
		{ 7, ABI1_FS | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV,
		  LL_NET_BIND_TCP | LL_NET_CONNECT_TCP,
		  LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL, "ABI 7: audit flags only" },
		{ 9, ABI1_FS | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV | LL_FS_RESOLVE_UNIX,
		  LL_NET_BIND_TCP | LL_NET_CONNECT_TCP,
		  LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL, "ABI 9 adds the unix-socket right" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct landlock_info info;

		landlock_abi_masks(rows[i].abi, &info);
		print_message("%s\n", rows[i].what);
		assert_int_equal(info.abi, rows[i].abi);
		assert_int_equal(info.fs_handled, rows[i].fs);
		assert_int_equal(info.net_handled, rows[i].net);
		assert_int_equal(info.scoped, rows[i].scoped);
	}
}

static void test_losses(void **state)
{
	static const struct {
		int abi;
		size_t count;
		const char *last_mentions;      /* a word the last loss must contain */
	} rows[] = {
		{ 0, 1, "not available" },
		{ 1, 6, "ABI 9" },              /* refer, truncate, tcp, ioctl, scopes, unix */
		{ 3, 4, "ABI 9" },
		{ 5, 2, "ABI 9" },
		{ 7, 1, "masking the sockets" },        /* this machine: only the unix-socket rule */
		{ 8, 1, "ABI 9" },
		{ 9, 0, NULL },
		{ 10, 0, NULL },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *out[16];
		size_t n = landlock_losses(rows[i].abi, out, ARRAY_SIZE(out));

		assert_int_equal(n, rows[i].count);
		if (n)
			assert_non_null(strstr(out[n - 1], rows[i].last_mentions));
	}
	/* max is honoured */
	{
		const char *out[2];

		assert_int_equal(landlock_losses(1, out, 2), 2);
		assert_int_equal(landlock_losses(0, out, 0), 0);
	}
}

/* The access a path's rule grants, or UINT64_MAX when it has no rule. */
static uint64_t rule_for(const struct landlock_rule *r, size_t n, const char *path)
{
	uint64_t acc = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].path, path) == 0)
			acc = (acc == UINT64_MAX ? 0 : acc) | r[i].access;
	return acc;
}

static struct plan *sample_plan(void)
{
	static struct mount_spec mounts[] = {
		{ MOUNT_RO, (char *)"/w/secret", NULL },
		{ MOUNT_RW, (char *)"/data", NULL },
		{ MOUNT_PROTECT, (char *)"/data/keep", NULL },
		{ MOUNT_COPY_RO, (char *)"/src/cred", (char *)"/h/.cred" },
		{ MOUNT_COPY, (char *)"/src/cfg", (char *)"/h/.cfg" },
		{ MOUNT_MKDIR, (char *)"/proj/t", NULL },
	};
	static struct plan p;

	memset(&p, 0, sizeof(p));
	p.workdir = (char *)"/w";
	p.home = (char *)"/h";
	p.mounts = mounts;
	p.nmounts = ARRAY_SIZE(mounts);
	return &p;
}

static void test_rules_abi9(void **state)
{
	struct landlock_info info;
	struct landlock_rule *r;
	size_t n;
	uint64_t rw, ro = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE;
	static const struct {
		const char *path;
		int kind;       /* 0 read-only, 1 writable with unix, 2 writable without unix */
		const char *why;
	} rows[] = {
		{ "/usr", 0, "system dirs: read, execute, list" },
		{ "/etc", 0, "synthesized /etc is read-only" },
		{ "/w/secret", 0, "--ro grants reading only" },
		{ "/data/keep", 0, "--protect grants reading only" },
		{ "/h/.cred", 0, "--copy-ro dst grants reading only" },
		{ "/tmp", 1, "/tmp holds no read-only path: sockets allowed" },
		{ "/proj/t", 1, "mkdir is writable" },
		{ "/h/.cfg", 1, "--copy dst is writable" },
		{ "/w", 2, "workdir contains --ro /w/secret: no unix sockets" },
		{ "/data", 2, "--rw contains --protect /data/keep: no unix sockets" },
		{ "/h", 2, "home contains the --copy-ro destination: no unix sockets" },
	};

	(void)state;
	landlock_abi_masks(9, &info);
	rw = info.fs_handled & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK);
	n = landlock_plan_rules(sample_plan(), info.fs_handled, &r);
	assert_int_equal(rule_for(r, n, "/"), LL_FS_READ_DIR);
	assert_int_equal(rule_for(r, n, "/proc"), LL_FS_READ_FILE | LL_FS_READ_DIR);
	assert_int_equal(rule_for(r, n, "/dev/null") & LL_FS_WRITE_FILE, LL_FS_WRITE_FILE);
	assert_int_equal(rule_for(r, n, "/dev/null") & LL_FS_TRUNCATE, LL_FS_TRUNCATE);
	assert_int_equal(rule_for(r, n, "/dev") & LL_FS_WRITE_FILE, 0);
	assert_int_equal(rule_for(r, n, "/var"), UINT64_MAX);      /* no rule: nothing */
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t want = rows[i].kind == 0 ? ro
			: rows[i].kind == 1 ? rw : (rw & ~LL_FS_RESOLVE_UNIX);

		print_message("%s\n", rows[i].why);
		assert_int_equal(rule_for(r, n, rows[i].path), want);
	}
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r[i].access & (LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK), 0);
		assert_int_equal(r[i].access & ~info.fs_handled, 0);
	}
	landlock_rules_free(r, n);
}

static void test_rules_stay_within_abi(void **state)
{
	(void)state;
	for (int abi = 1; abi <= 9; abi++) {
		struct landlock_info info;
		struct landlock_rule *r;
		size_t n;

		landlock_abi_masks(abi, &info);
		n = landlock_plan_rules(sample_plan(), info.fs_handled, &r);
		assert_true(n > 10);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(r[i].access & ~info.fs_handled, 0);
		/* the workdir is writable whatever the ABI */
		assert_int_equal(rule_for(r, n, "/w") & LL_FS_WRITE_FILE, LL_FS_WRITE_FILE);
		landlock_rules_free(r, n);
	}
}

static void test_net(void **state)
{
	static const struct {
		enum net_mode net;
		int abi;
		uint16_t in[3];
		size_t nin;
		uint64_t handled;
		uint16_t out[4];
		size_t nout;
		const char *why;
	} rows[] = {
		{ NET_PUBLIC, 7, { 443 }, 1, LL_NET_CONNECT_TCP, { 443, 53 }, 2,
		  "the run's ports plus DNS over TCP" },
		{ NET_ALLOWLIST, 4, { 53, 443 }, 2, LL_NET_CONNECT_TCP, { 53, 443 }, 2,
		  "53 listed already: not twice" },
		{ NET_ALLOWLIST, 3, { 443 }, 1, 0, { 0 }, 0, "ABI 3 has no network rights" },
		{ NET_NONE, 7, { 443 }, 1, 0, { 0 }, 0, "--net none: loopback left alone" },
		{ NET_PUBLIC, 7, { 0 }, 0, 0, { 0 }, 0, "no port list: no port restriction" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct plan p;
		uint64_t handled;
		uint16_t *ports;
		size_t nports;

		memset(&p, 0, sizeof(p));
		p.net = rows[i].net;
		p.ports = (uint16_t *)rows[i].in;
		p.nports = rows[i].nin;
		print_message("%s\n", rows[i].why);
		landlock_plan_net(&p, rows[i].abi, &handled, &ports, &nports);
		assert_int_equal(handled, rows[i].handled);
		assert_int_equal(nports, rows[i].nout);
		for (size_t j = 0; j < nports; j++)
			assert_int_equal(ports[j], rows[i].out[j]);
		free(ports);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_masks),
		cmocka_unit_test(test_losses),
		cmocka_unit_test(test_rules_abi9),
		cmocka_unit_test(test_rules_stay_within_abi),
		cmocka_unit_test(test_net),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
