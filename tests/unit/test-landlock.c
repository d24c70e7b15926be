/*
 * test-landlock.c — the pure parts of the Landlock stage: which rights each
 * ABI knows, what boxy loses below ABI 9, which rules a plan turns into
 * (including the ABI 9 rule that a writable directory containing a read-only
 * path loses the unix-socket right) and which TCP ports stay reachable.
 * And the layer alone: a forked child applies boxy's ruleset for a plan of
 * scratch paths — no namespace, no mount, no seccomp filter — and finds
 * reads outside, writes to read-only paths, TCP to a port not on the list,
 * signals and abstract unix sockets out of its domain refused, while the
 * granted counterparts work (so a refusal is Landlock's, not a broken set-up).
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init/stages.h"
#include "common/util.h"

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

/* ---- the layer alone ---------------------------------------------------------- */

/* A TCP listener on 127.0.0.1, its port in *port. */
static int tcp_listener(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* connect() to 127.0.0.1:port; 0 or the errno. */
static int tcp_try(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return errno;
	rc = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : errno;
	close(fd);
	return rc;
}

/* An abstract (path-less) unix socket address for name. */
static socklen_t abstract_addr(struct sockaddr_un *u, const char *name)
{
	memset(u, 0, sizeof(*u));
	u->sun_family = AF_UNIX;
	memcpy(u->sun_path + 1, name, strlen(name));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

/* connect() to an abstract unix socket; 0 or the errno. */
static int abstract_try(const char *name)
{
	struct sockaddr_un u;
	socklen_t len = abstract_addr(&u, name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return errno;
	rc = connect(fd, (struct sockaddr *)&u, len) == 0 ? 0 : errno;
	close(fd);
	return rc;
}

/* open() path with flags; 0 or the errno. */
static int open_try(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Creates path with some contents. */
static void plant(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
}

/* One check in the child: got must be want (0 or an errno); prints and counts a miss. */
static int expect(const char *what, int got, int want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "landlock alone: %s: got %s, want %s\n", what,
		got ? strerror(got) : "success", want ? strerror(want) : "success");
	return 1;
}

static void test_alone(void **state)
{
	static char dir[] = "/var/tmp/boxy-landlock.XXXXXX";
	char outside[128], workdir[128], home[128], ro[128], path[160], name[64];
	uint16_t port_ok, port_no, ports[1];
	int lis_ok, lis_no, abs_fd, status;
	struct landlock_info info;
	struct sockaddr_un u;
	struct mount_spec mounts[1];
	struct plan p;
	pid_t pid;

	(void)state;
	/* /var has no rule in boxy's plan (test_rules_abi9): a scratch dir there is "outside". */
	assert_non_null(mkdtemp(dir));
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	snprintf(workdir, sizeof(workdir), "%s/work", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(ro, sizeof(ro), "%s/ro", dir);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(mkdir(workdir, 0755), 0);
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(mkdir(ro, 0755), 0);
	snprintf(path, sizeof(path), "%s/secret", outside);
	plant(path);
	snprintf(path, sizeof(path), "%s/file", ro);
	plant(path);

	lis_ok = tcp_listener(&port_ok);
	lis_no = tcp_listener(&port_no);
	snprintf(name, sizeof(name), "boxy-landlock-test-%d", (int)getpid());
	abs_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(abs_fd >= 0);
	socklen_t ulen = abstract_addr(&u, name);
	assert_int_equal(bind(abs_fd, (struct sockaddr *)&u, ulen), 0);
	assert_int_equal(listen(abs_fd, 8), 0);
	assert_int_equal(landlock_probe(&info), 0);

	memset(&p, 0, sizeof(p));
	mounts[0] = (struct mount_spec){ MOUNT_RO, ro, NULL };
	p.workdir = workdir;
	p.home = home;
	p.mounts = mounts;
	p.nmounts = 1;
	p.net = NET_PUBLIC;
	ports[0] = port_ok;
	p.ports = ports;
	p.nports = 1;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *err = NULL;
		int bad = 0;

		/* The same checks before the ruleset: the set-up itself allows each one. */
		snprintf(path, sizeof(path), "%s/secret", outside);
		bad += expect("before: read outside", open_try(path, O_RDONLY), 0);
		bad += expect("before: tcp to the unlisted port", tcp_try(port_no), 0);
		bad += expect("before: abstract socket", abstract_try(name), 0);
		bad += expect("before: signal the parent", kill(getppid(), 0) ? errno : 0, 0);
		if (bad)
			_exit(2);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || landlock_apply(&p, &err) != 0) {
			fprintf(stderr, "landlock alone: apply: %s\n", err ? err : strerror(errno));
			_exit(2);
		}
		bad += expect("read a file outside every rule", open_try(path, O_RDONLY), EACCES);
		snprintf(path, sizeof(path), "%s/file", ro);
		bad += expect("read a --ro file", open_try(path, O_RDONLY), 0);
		bad += expect("write a --ro file", open_try(path, O_WRONLY), EACCES);
		snprintf(path, sizeof(path), "%s/new", ro);
		bad += expect("create in a --ro dir", open_try(path, O_WRONLY | O_CREAT), EACCES);
		snprintf(path, sizeof(path), "%s/new", workdir);
		bad += expect("create in the workdir", open_try(path, O_WRONLY | O_CREAT), 0);
		bad += expect("write /etc/hostname", open_try("/etc/hostname", O_WRONLY), EACCES);
		bad += expect("write /dev/null", open_try("/dev/null", O_WRONLY), 0);
		if (info.abi >= 4) {
			bad += expect("tcp to the listed port", tcp_try(port_ok), 0);
			bad += expect("tcp to a port not listed", tcp_try(port_no), EACCES);
		}
		if (info.abi >= 6) {
			bad += expect("connect to an abstract socket outside the domain",
				      abstract_try(name), EPERM);
			bad += expect("signal a process outside the domain",
				      kill(getppid(), 0) ? errno : 0, EPERM);
		}
		_exit(bad ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(lis_ok);
	close(lis_no);
	close(abs_fd);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	/* TCP needs ABI 4, the scopes ABI 6; what an older kernel loses is
	 * test_losses's (and `boxy doctor`'s) to say. */
	print_message("Landlock ABI %d\n", info.abi);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_masks),
		cmocka_unit_test(test_losses),
		cmocka_unit_test(test_rules_abi9),
		cmocka_unit_test(test_rules_stay_within_abi),
		cmocka_unit_test(test_net),
		cmocka_unit_test(test_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
