/*
 * test-attrib.c — attribution's pure half (sandbox/attrib-proc.h): the socket
 * tables, stat, status, cmdline and environ as the kernel writes them and as
 * a hostile payload can make them (escape sequences, NULs, missing NULs,
 * truncated reads, ten-thousand-byte names), pip's build directories and
 * metadata, which package manager a process is, and the rules that name a
 * package — attested, claimed, or nested in another package's script — and
 * the words every screen shows for them (common/event.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <poll.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/event.h"
#include "common/util.h"
#include "sandbox/attrib.h"
#include "sandbox/attrib-proc.h"

/* The kernel's "%08X" of an IPv4 address's bytes read as a host-order word. */
static void hex4(const char *dotted, char out[9])
{
	struct net_addr a;
	uint32_t w;

	assert_int_equal(net_addr_parse(dotted, &a), 0);
	memcpy(&w, a.a, 4);
	snprintf(out, 9, "%08X", w);
}

/* The same for an IPv6 address: four words. */
static void hex16(const char *text, char out[33])
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(text, &a), 0);
	for (int i = 0; i < 4; i++) {
		uint32_t w;

		memcpy(&w, a.a + 4 * i, 4);
		snprintf(out + 8 * i, 9, "%08X", w);
	}
}

static struct net_addr A(const char *s)
{
	struct net_addr a;

	assert_int_equal(net_addr_parse(s, &a), 0);
	return a;
}

/* ---- socket tables ------------------------------------------------------------------- */

static void test_sock_parse(void **state)
{
	char l[9], r[9], line[256], l6[33], r6[33];
	struct attrib_sock s;
	struct net_addr want;

	(void)state;
	hex4("10.0.2.15", l);
	hex4("93.184.216.34", r);
	snprintf(line, sizeof(line), "   4: %s:A3C4 %s:0050 02 00000000:00000000 01:00000064 "
		 "00000000  1000        0 123456 2 0000000000000000 100 0 0 10 0\n", l, r);
	assert_true(attrib_sock_parse(line, strlen(line), AF_INET, &s));
	want = A("10.0.2.15");
	assert_true(net_addr_equal(&s.local, &want));
	want = A("93.184.216.34");
	assert_true(net_addr_equal(&s.remote, &want));
	assert_int_equal(s.lport, 0xa3c4);
	assert_int_equal(s.rport, 80);
	assert_int_equal(s.state, 2);
	assert_int_equal(s.inode, 123456);
	/* The same row without its newline (the table's last line). */
	assert_true(attrib_sock_parse(line, strlen(line) - 1, AF_INET, &s));
	assert_int_equal(s.inode, 123456);

	/* A v6 table's IPv4-mapped row is the IPv4 flow. */
	hex16("::ffff:10.0.2.15", l6);
	hex16("::ffff:93.184.216.34", r6);
	snprintf(line, sizeof(line), "  12: %s:9C40 %s:01BB 01 00000000:00000000 00:00000000 "
		 "00000000  1000        0 777 1 0000000000000000 20 4 30 10 -1", l6, r6);
	assert_true(attrib_sock_parse(line, strlen(line), AF_INET6, &s));
	assert_int_equal(s.local.family, AF_INET);
	want = A("93.184.216.34");
	assert_true(net_addr_equal(&s.remote, &want));
	assert_int_equal(s.inode, 777);
	/* A real v6 row stays v6. */
	hex16("fd00:b0c5::15", l6);
	hex16("2606:2800:220:1::34", r6);
	snprintf(line, sizeof(line), "   0: %s:9C41 %s:0050 02 00000000:00000000 00:00000000 "
		 "00000000  1000        0 778 1 0000000000000000 20 4 30 10 -1", l6, r6);
	assert_true(attrib_sock_parse(line, strlen(line), AF_INET6, &s));
	want = A("fd00:b0c5::15");
	assert_true(net_addr_equal(&s.local, &want));
}

static void test_sock_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
		"timeout inode",
		"   0: 0F02000A:A3C4",                                      /* truncated */
		"   0: 0F02000A:A3C4 22D8B85D:0050",                        /* no state */
		"   0: 0F02000A:A3C4 22D8B85D:0050 02 00000000:00000000 01:00000064 00000000  1000",
		"   0: 0F02000:A3C4 22D8B85D:0050 02 0:0 0:0 0 1000 0 1 2",  /* 7 hex digits */
		"   0: 0F02000A:A3C4 22D8B85D:0050 02 0:0 0:0 0 1000 0 12345678901234567890123 2",
		"   0: 0F02000A:A3C4 22D8B85D:0050 02 0:0 0:0 0 1000 0 12x 2",
		"   0: 0G02000A:A3C4 22D8B85D:0050 02 0:0 0:0 0 1000 0 1 2",
		"0F02000A:A3C4 22D8B85D:0050 02 0:0 0:0 0 1000 0 1 2",      /* no slot */
		"",
	};
	struct attrib_sock s;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (attrib_sock_parse(bad[i], strlen(bad[i]), AF_INET, &s))
			fail_msg("row %zu parsed: '%s'", i, bad[i]);
	assert_false(attrib_sock_parse("   0: 0F02000A:A3C4 22D8B85D:0050 02 0:0 0:0 0 0 0 5 2", 52,
				       AF_UNIX, &s));
}

static void test_sock_match(void **state)
{
	struct net_addr me = A("10.0.2.15"), dst = A("93.184.216.34"), gw = A("10.0.2.2"),
			any = A("0.0.0.0"), other = A("93.184.216.35");
	struct {
		uint8_t proto;
		struct net_addr local, remote;
		uint16_t lport, rport;
		uint8_t state;
		uint64_t inode;
		int want;
	} rows[] = {
		{ 6, me, dst, 40000, 80, 2, 9, 2 },             /* the flow, syn-sent */
		{ 6, me, dst, 40001, 80, 2, 9, 0 },             /* another port */
		{ 6, me, other, 40000, 80, 2, 9, 0 },           /* another destination */
		{ 6, me, dst, 40000, 443, 2, 9, 0 },            /* another remote port */
		{ 6, me, dst, 40000, 80, 6, 0, 0 },             /* TIME_WAIT: no socket behind it */
		{ 6, any, any, 40000, 0, 10, 9, 0 },            /* listening on the flow's port */
		{ 17, me, gw, 40000, 53, 7, 9, 2 },             /* connected UDP */
		{ 17, any, gw, 40000, 53, 7, 9, 1 },            /* bound to any */
		{ 17, me, any, 40000, 0, 7, 9, 1 },             /* not connected: sendto */
		{ 6, any, dst, 40000, 80, 2, 9, 0 },            /* TCP is never a wildcard */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct attrib_sock s = {
			.local = rows[i].local, .remote = rows[i].remote, .lport = rows[i].lport,
			.rport = rows[i].rport, .state = rows[i].state, .inode = rows[i].inode,
		};
		const struct net_addr *to = rows[i].proto == 17 ? &gw : &dst;
		uint16_t port = rows[i].proto == 17 ? 53 : 80;
		int got = attrib_sock_match(&s, rows[i].proto, &me, 40000, to, port);

		if (got != rows[i].want)
			fail_msg("row %zu: %d, want %d", i, got, rows[i].want);
	}
}

/* The kernel's look-up: the request names the flow's socket; the reply gives its inode. */
static void test_diag(void **state)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} m;
	struct {
		struct nlmsghdr h;
		union {
			struct inet_diag_msg d;
			struct nlmsgerr e;
		} u;
	} a;
	unsigned char buf[ATTRIB_DIAG_REQ];
	struct net_addr l4 = A("10.0.2.15"), r4 = A("93.184.216.34"), l6 = A("fd00::2"),
			r6 = A("2001:db8::1");
	const unsigned char mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 };
	uint64_t ino = 7;

	(void)state;
	/* TCP: the socket's own side as the source. */
	assert_int_equal(attrib_diag_request(buf, 9, 6, AF_INET, &l4, 40000, &r4, 443),
			 sizeof(m));
	memcpy(&m, buf, sizeof(m));
	assert_int_equal(m.h.nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(m.h.nlmsg_flags, NLM_F_REQUEST);       /* one socket, not a dump */
	assert_int_equal(m.h.nlmsg_seq, 9);
	assert_int_equal(m.r.sdiag_family, AF_INET);
	assert_int_equal(m.r.sdiag_protocol, 6);
	assert_int_equal(ntohs(m.r.id.idiag_sport), 40000);
	assert_int_equal(ntohs(m.r.id.idiag_dport), 443);
	assert_memory_equal(m.r.id.idiag_src, l4.a, 4);
	assert_memory_equal(m.r.id.idiag_dst, r4.a, 4);
	assert_int_equal(m.r.id.idiag_cookie[0], INET_DIAG_NOCOOKIE);
	/* UDP: the other way round. */
	attrib_diag_request(buf, 9, 17, AF_INET, &l4, 40000, &r4, 53);
	memcpy(&m, buf, sizeof(m));
	assert_int_equal(ntohs(m.r.id.idiag_sport), 53);
	assert_int_equal(ntohs(m.r.id.idiag_dport), 40000);
	assert_memory_equal(m.r.id.idiag_src, r4.a, 4);
	assert_memory_equal(m.r.id.idiag_dst, l4.a, 4);
	/* A v4 flow asked as v6: IPv4-mapped. A v6 one as itself. */
	attrib_diag_request(buf, 9, 6, AF_INET6, &l4, 40000, &r4, 443);
	memcpy(&m, buf, sizeof(m));
	assert_int_equal(m.r.sdiag_family, AF_INET6);
	assert_memory_equal(m.r.id.idiag_src, mapped, 16);
	attrib_diag_request(buf, 9, 6, AF_INET6, &l6, 40000, &r6, 443);
	memcpy(&m, buf, sizeof(m));
	assert_memory_equal(m.r.id.idiag_src, l6.a, 16);
	assert_memory_equal(m.r.id.idiag_dst, r6.a, 16);

	/* Replies. */
	memset(&a, 0, sizeof(a));
	a.h.nlmsg_len = NLMSG_LENGTH(sizeof(a.u.d));
	a.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	a.h.nlmsg_seq = 9;
	a.u.d.idiag_inode = 123456;
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len, 9, &ino), 1);
	assert_int_equal(ino, 123456);
	/* Another request's, truncated, longer than it says: not an answer. */
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len, 10, &ino), -1);
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len - 1, 9, &ino), -1);
	assert_int_equal(attrib_diag_parse(&a, 8, 9, &ino), -1);
	a.h.nlmsg_len = NLMSG_HDRLEN + 4;
	assert_int_equal(attrib_diag_parse(&a, sizeof(a), 9, &ino), -1);
	/* An embryo (no file yet): inode 0, answered. */
	a.h.nlmsg_len = NLMSG_LENGTH(sizeof(a.u.d));
	a.u.d.idiag_inode = 0;
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len, 9, &ino), 1);
	assert_int_equal(ino, 0);
	/* No such socket; another error; another message. */
	memset(&a, 0, sizeof(a));
	a.h.nlmsg_len = NLMSG_LENGTH(sizeof(a.u.e));
	a.h.nlmsg_type = NLMSG_ERROR;
	a.h.nlmsg_seq = 9;
	a.u.e.error = -ENOENT;
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len, 9, &ino), 0);
	a.u.e.error = -EPERM;
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len, 9, &ino), -1);
	a.h.nlmsg_type = NLMSG_DONE;
	assert_int_equal(attrib_diag_parse(&a, a.h.nlmsg_len, 9, &ino), -1);
}

static void test_socket_link(void **state)
{
	static const struct {
		const char *link;
		uint64_t want;
	} rows[] = {
		{ "socket:[123456]", 123456 }, { "socket:[0]", 0 }, { "socket:[]", 0 },
		{ "socket:[12a]", 0 }, { "socket:[123", 0 }, { "pipe:[123]", 0 },
		{ "/tmp/socket:[1]", 0 }, { "socket:[1]x", 0 },
		{ "socket:[123456789012345678901]", 0 }, { "anon_inode:[eventfd]", 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(attrib_socket_link(rows[i].link, strlen(rows[i].link)),
				 rows[i].want);
}

/* ---- a process ------------------------------------------------------------------------ */

static void test_stat(void **state)
{
	/* A comm is the payload's: prctl(PR_SET_NAME) takes ") S 1 (" and escapes alike. */
	char buf[256];
	struct attrib_stat st;

	(void)state;
	/* state S, ppid 811, then fields 5..21 and starttime at 22. */
	snprintf(buf, sizeof(buf), "812 (node) S 811 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 "
		 "21 987654321 23 24\n");
	assert_true(attrib_stat_parse(buf, strlen(buf), &st));
	assert_string_equal(st.comm, "node");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 811);
	assert_int_equal(st.start, 987654321);
	snprintf(buf, sizeof(buf), "813 (a) S 1 (b) R 9 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 "
		 "20 21 42 23\n");
	assert_true(attrib_stat_parse(buf, strlen(buf), &st));
	assert_string_equal(st.comm, "a) S 1 (b");       /* the last ')' ends it */
	assert_int_equal(st.ppid, 9);
	assert_int_equal(st.start, 42);
	snprintf(buf, sizeof(buf), "814 (\x1b]0;x\x07) S 2 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 "
		 "20 21 43 23\n");
	assert_true(attrib_stat_parse(buf, strlen(buf), &st));
	assert_string_equal(st.comm, "?]0;x?");
	/* Cut short: no starttime, no ppid, no ')' */
	snprintf(buf, sizeof(buf), "812 (node) S 811 5 6 7");
	assert_false(attrib_stat_parse(buf, strlen(buf), &st));
	assert_false(attrib_stat_parse("812 (node", 9, &st));
	snprintf(buf, sizeof(buf), "812 (node) S -1 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 "
		 "42 23");
	assert_false(attrib_stat_parse(buf, strlen(buf), &st));
}

static void test_nspid(void **state)
{
	static const char status[] = "Name:\tnode\nPid:\t4242\nNSpid:\t4242\t812\nNSsid:\t1\n";
	int levels;

	(void)state;
	assert_int_equal(attrib_status_nspid(status, strlen(status), &levels), 812);
	assert_int_equal(levels, 2);
	assert_int_equal(attrib_status_nspid("Name:\tx\n", 8, &levels), 0);
	assert_int_equal(levels, 0);
	assert_int_equal(attrib_status_nspid("NSpid:\t7", 8, &levels), 7);   /* no newline */
}

static void test_cmdline(void **state)
{
	struct attrib_argv a;
	char big[4096];

	(void)state;
	attrib_cmdline_parse("node\0evil.js\0", 13, &a);
	assert_string_equal(a.argv0, "node");
	assert_string_equal(a.cmdline, "node evil.js");
	assert_int_equal(a.nargs, 2);
	assert_string_equal(a.arg[1], "evil.js");
	/* A title the process rewrote (node's process.title): spaces, no NUL. */
	attrib_cmdline_parse("npm install ./evil-pkg-1.2.3.tgz          ", 42, &a);
	assert_string_equal(a.cmdline, "npm install ./evil-pkg-1.2.3.tgz");
	assert_string_equal(a.argv0, "npm install ./evil-pkg-1.2.3.tgz");
	/* Control bytes and escape sequences, invalid UTF-8: '?' each. */
	{
		static const char hostile[] = "sh\0-c\0\x1b]52;c;Y3VybA==\x07\xff\n";

		attrib_cmdline_parse(hostile, sizeof(hostile) - 1, &a);
	}
	assert_string_equal(a.cmdline, "sh -c ?]52;c;Y3VybA==???");
	/* Empty (a zombie, a kernel thread). */
	attrib_cmdline_parse("", 0, &a);
	assert_string_equal(a.cmdline, "");
	assert_int_equal(a.nargs, 0);
	/* Long: cut at the buffer, at a character. */
	memset(big, 'x', sizeof(big));
	memcpy(big + 250, "\xc3\xa9\xc3\xa9\xc3\xa9", 6);
	attrib_cmdline_parse(big, sizeof(big), &a);
	assert_true(strlen(a.cmdline) < ATTRIB_CMDLINE_MAX);
	assert_true(strlen(a.argv0) < ATTRIB_ARGV0_MAX);
	for (size_t i = 0; a.cmdline[i]; i++)
		assert_true(a.cmdline[i] == 'x' || (unsigned char)a.cmdline[i] >= 0x80);
	/* A lone continuation or lead byte at the cut never ends the string. */
	{
		size_t n = strlen(a.cmdline);
		uint32_t cp;

		for (size_t i = 0; i < n;) {
			size_t l = utf8_decode((const unsigned char *)a.cmdline + i, n - i, &cp);

			assert_true(l > 0);
			i += l;
		}
	}
}

static void test_environ(void **state)
{
	static const char env[] =
		"PATH=/usr/bin\0"
		"npm_package_name=evil-pkg\0"
		"npm_package_version=1.2.3\0"
		"npm_package_name_suffix=no\0"
		"npm_lifecycle_event=postinstall\0"
		"npm_package_name=second-one\0";
	struct attrib_env e;
	char *big;
	size_t n;

	(void)state;
	attrib_environ_parse(env, sizeof(env) - 1, false, &e);
	assert_true(e.has);
	assert_string_equal(e.package, "evil-pkg");      /* the first, as getenv sees it */
	assert_string_equal(e.version, "1.2.3");
	assert_string_equal(e.script, "postinstall");
	/* No npm variables: nothing. */
	attrib_environ_parse("HOME=/h\0X=1\0", 12, false, &e);
	assert_false(e.has);
	/* Empty values are no package. */
	attrib_environ_parse("npm_package_name=\0", 18, false, &e);
	assert_false(e.has);
	/* Hostile contents: escapes, invalid UTF-8, a newline. */
	attrib_environ_parse("npm_package_name=\x1b[2J\xc0\x9bpwn\nx\0", 30, false, &e);
	assert_string_equal(e.package, "?[2J??pwn?x");
	/* A last entry the read cut short is not taken; one the process wrote without NUL is. */
	attrib_environ_parse("A=1\0npm_package_name=evil-pk", 28, true, &e);
	assert_false(e.has);
	attrib_environ_parse("A=1\0npm_package_name=evil-pkg", 29, false, &e);
	assert_string_equal(e.package, "evil-pkg");
	/* A 100 KB name: cut to the field, a character kept whole. */
	n = 100000;
	big = xmalloc(n + 64);
	n = (size_t)snprintf(big, 64, "npm_package_name=");
	memset(big + n, 'a', 100000);
	n += 100000;
	big[n] = '\0';
	attrib_environ_parse(big, n + 1, false, &e);
	assert_int_equal(strlen(e.package), ATTRIB_PACKAGE_MAX - 1);
	free(big);
}

static void test_manager(void **state)
{
	static const struct {
		const char *comm, *a0, *a1, *a2;
		enum attrib_manager want;
	} rows[] = {
		{ "npm install ./", "npm install ./evil-pkg-1.2.3.tgz", NULL, NULL, ATTRIB_PM_NPM },
		{ "node", "/usr/bin/node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "ci",
		  ATTRIB_PM_NPM },
		{ "node", "node", "/usr/bin/npm", "install", ATTRIB_PM_NPM },
		{ "npx", "npx", "cowsay", NULL, ATTRIB_PM_NPM },
		{ "node", "node", "/usr/share/yarn/bin/yarn.js", "install", ATTRIB_PM_YARN },
		{ "node", "node", "/p/.yarn/releases/yarn-4.1.0.cjs", "install", ATTRIB_PM_YARN },
		{ "node", "node", "/usr/lib/node_modules/pnpm/bin/pnpm.cjs", "i", ATTRIB_PM_PNPM },
		{ "pip", "/usr/bin/pip", "install", "-r", ATTRIB_PM_PIP },
		{ "pip3.11", "pip3.11", "install", NULL, ATTRIB_PM_PIP },
		{ "python3", "/usr/bin/python3", "-m", "pip", ATTRIB_PM_PIP },
		{ "python3", "python3", "/usr/bin/pip3", "install", ATTRIB_PM_PIP },
		{ "node", "node", "evil.js", NULL, ATTRIB_PM_NONE },
		{ "sh", "sh", "-c", "node evil.js", ATTRIB_PM_NONE },
		{ "python3", "python3", "-m", "pipx", ATTRIB_PM_NONE },
		{ "npmx", "npmx", NULL, NULL, ATTRIB_PM_NONE },
		{ "node", "node", "notnpm-cli.js", NULL, ATTRIB_PM_NONE },
		{ "pip", "sh", "-c", "x", ATTRIB_PM_NONE },     /* a comm of "pip" alone is no pip */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct attrib_argv a = { 0 };
		const char *args[] = { rows[i].a0, rows[i].a1, rows[i].a2 };

		for (int j = 0; j < 3 && args[j]; j++) {
			snprintf(a.arg[j], sizeof(a.arg[j]), "%s", args[j]);
			a.nargs++;
		}
		if (attrib_manager_of(rows[i].comm, &a) != rows[i].want)
			fail_msg("row %zu (%s %s): %d, want %d", i, rows[i].a0,
				 rows[i].a1 ? rows[i].a1 : "", attrib_manager_of(rows[i].comm, &a),
				 rows[i].want);
	}
}

/* ---- pip -------------------------------------------------------------------------------- */

static void test_pip_dir(void **state)
{
	static const struct {
		const char *cwd;
		enum attrib_pipdir want;
		const char *name;
	} rows[] = {
		{ "/tmp/pip-install-l8qq3d_e/evilpy_8e38ab64647e42f19ab548a2f02aae8b",
		  ATTRIB_PIPDIR_NAMED, "evilpy" },
		{ "/tmp/pip-install-l8qq3d_e/my-pkg_8e38ab64647e42f19ab548a2f02aae8b/src/sub",
		  ATTRIB_PIPDIR_NAMED, "my-pkg" },
		{ "/var/tmp/x/pip-install-abc/Evil.Py_8e38ab64647e42f19ab548a2f02aae8b",
		  ATTRIB_PIPDIR_NAMED, "Evil.Py" },
		{ "/tmp/pip-install-abc/oldstyle", ATTRIB_PIPDIR_NAMED, "oldstyle" },
		{ "/tmp/pip-install-abc/snake_case_8e38", ATTRIB_PIPDIR_NAMED, "snake_case_8e38" },
		{ "/tmp/pip-req-build-p7s_uakw", ATTRIB_PIPDIR_UNNAMED, "" },
		{ "/tmp/pip-req-build-p7s_uakw/sub", ATTRIB_PIPDIR_UNNAMED, "" },
		{ "/tmp/pip-install-abc", ATTRIB_PIPDIR_NONE, "" },
		{ "/tmp/pip-install-abc/evil;rm_8e38ab64647e42f19ab548a2f02aae8b", ATTRIB_PIPDIR_NONE,
		  "" },
		{ "/tmp/pip-install-abc/\x1b[2J_8e38ab64647e42f19ab548a2f02aae8b", ATTRIB_PIPDIR_NONE,
		  "" },
		{ "/home/u/pip-install-notes.txt", ATTRIB_PIPDIR_NONE, "" },
		{ "/work/project", ATTRIB_PIPDIR_NONE, "" },
		{ "", ATTRIB_PIPDIR_NONE, "" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char name[ATTRIB_PACKAGE_MAX];
		enum attrib_pipdir got = attrib_pip_dir(rows[i].cwd, name, sizeof(name));

		if (got != rows[i].want)
			fail_msg("row %zu (%s): %d, want %d", i, rows[i].cwd, got, rows[i].want);
		assert_string_equal(name, rows[i].name);
	}
}

static void test_pip_metadata(void **state)
{
	static const char pkginfo[] =
		"Metadata-Version: 2.1\r\nName: evilpy\r\nVersion: 0.1\r\nSummary: x\r\n\r\n"
		"Name: not-this\n";
	static const char pyproject[] =
		"[build-system]\nrequires = [\"setuptools\"]\n\n[project]\n"
		"  name = \"evil-toml\"\nversion = '2.0'\n[tool.x]\nname = \"no\"\n";
	char name[ATTRIB_PACKAGE_MAX], version[ATTRIB_VERSION_MAX];

	(void)state;
	assert_true(attrib_pkginfo_parse(pkginfo, strlen(pkginfo), name, sizeof(name), version,
					 sizeof(version)));
	assert_string_equal(name, "evilpy");
	assert_string_equal(version, "0.1");
	assert_false(attrib_pkginfo_parse("Version: 1\n", 11, name, sizeof(name), version,
					  sizeof(version)));
	assert_true(attrib_pkginfo_parse("Name: \x1b]0;t\x07\n", 12, name, sizeof(name), version,
					 sizeof(version)));
	assert_string_equal(name, "?]0;t?");
	assert_true(attrib_pyproject_parse(pyproject, strlen(pyproject), name, sizeof(name),
					   version, sizeof(version)));
	assert_string_equal(name, "evil-toml");
	assert_string_equal(version, "2.0");
	assert_false(attrib_pyproject_parse("[tool.poetry]\nname = \"x\"\n", 25, name, sizeof(name),
					    version, sizeof(version)));
	assert_true(attrib_pip_same_name("Evil_Py", "evil-py"));
	assert_true(attrib_pip_same_name("a.b--c", "A_B_C"));
	assert_false(attrib_pip_same_name("evil", "evil2"));
	assert_false(attrib_pip_same_name("", ""));
}

/* ---- the rules ---------------------------------------------------------------------------- */

/* A link: a manager, npm variables (NULL: none), a pip directory's package (NULL: none), root. */
static struct attrib_link L(enum attrib_manager m, const char *pkg, const char *ver,
			    const char *script, const char *pip, bool root)
{
	struct attrib_link l = { .manager = m, .root = root };

	if (pkg || script) {
		l.env.has = true;
		snprintf(l.env.package, sizeof(l.env.package), "%s", pkg ? pkg : "");
		snprintf(l.env.version, sizeof(l.env.version), "%s", ver ? ver : "");
		snprintf(l.env.script, sizeof(l.env.script), "%s", script ? script : "");
	}
	if (pip) {
		l.pipdir = ATTRIB_PIPDIR_NAMED;
		snprintf(l.pip_name, sizeof(l.pip_name), "%s", pip);
		snprintf(l.pip_version, sizeof(l.pip_version), "%s", ver ? ver : "");
	}
	return l;
}

#define NONE ATTRIB_PM_NONE
#define NPM ATTRIB_PM_NPM

static void decide(const struct attrib_link *chain, size_t n, const char *pkg, const char *ver,
		   const char *script, bool claimed, const char *via, enum attrib_manager m,
		   const char *what)
{
	struct attrib_proc p = { 0 };

	attrib_decide(chain, n, &p);
	if (strcmp(p.package, pkg) || strcmp(p.version, ver) || strcmp(p.script, script) ||
	    p.claimed != claimed || strcmp(p.via, via) || p.manager != m)
		fail_msg("%s: got '%s'@'%s' '%s' claimed %d via '%s' manager %d", what, p.package,
			 p.version, p.script, p.claimed, p.via, p.manager);
}

static void test_decide(void **state)
{
	(void)state;
	{
		/* npm install → sh -c "node evil.js" → node evil.js */
		struct attrib_link c[] = {
			L(NONE, "evil-pkg", "1.2.3", "postinstall", NULL, false),
			L(NONE, "evil-pkg", "1.2.3", "postinstall", NULL, false),
			L(NPM, NULL, NULL, NULL, NULL, true),
		};

		decide(c, 3, "evil-pkg", "1.2.3", "postinstall", false, "", NPM, "a lifecycle script");
	}
	{
		/* evil's script starts a child that says it is innocent: the frame is evil's. */
		struct attrib_link c[] = {
			L(NONE, "innocent", "9.9.9", "postinstall", NULL, false),
			L(NONE, "evil-pkg", "1.2.3", "postinstall", NULL, false),
			L(NONE, "evil-pkg", "1.2.3", "postinstall", NULL, false),
			L(NPM, NULL, NULL, NULL, NULL, true),
		};

		decide(c, 4, "evil-pkg", "1.2.3", "postinstall", false, "", NPM,
		       "a child that lies under its package's script");
	}
	{
		/* A daemon left behind (reparented to boxy-init): only its own word. */
		struct attrib_link c[] = { L(NONE, "innocent", "9.9.9", "postinstall", NULL, false) };

		decide(c, 1, "innocent", "9.9.9", "postinstall", true, "", NPM, "a reparented daemon");
	}
	{
		/* The session's own command sets the variables itself. */
		struct attrib_link c[] = { L(NONE, "innocent", "1", NULL, NULL, true) };

		decide(c, 1, "innocent", "1", "", true, "", NPM, "the command's own claim");
	}
	{
		/* A fake npm (argv says npm-cli.js) inside a daemon: no chain to the command. */
		struct attrib_link c[] = {
			L(NONE, "innocent", "1", "postinstall", NULL, false),
			L(NPM, NULL, NULL, NULL, NULL, false),
		};

		decide(c, 2, "innocent", "1", "postinstall", true, "", NPM,
		       "a fake npm with no chain to the command");
	}
	{
		/* evil's postinstall runs npm on a package of its own making: named, with evil as via. */
		struct attrib_link c[] = {
			L(NONE, "innocent", "1.0.0", "install", NULL, false),
			L(NONE, "innocent", "1.0.0", "install", NULL, false),
			L(NPM, "evil-pkg", "1.2.3", "postinstall", NULL, false),
			L(NONE, "evil-pkg", "1.2.3", "postinstall", NULL, false),
			L(NPM, NULL, NULL, NULL, NULL, true),
		};

		decide(c, 5, "innocent", "1.0.0", "install", false, "postinstall of evil-pkg@1.2.3",
		       NPM, "a package manager run by a package's script");
	}
	{
		/* The same package all the way (npm run build inside its own prepare): no via. */
		struct attrib_link c[] = {
			L(NONE, "proj", "1.0.0", "prepare", NULL, false),
			L(NPM, "proj", "1.0.0", "prepare", NULL, false),
			L(NONE, "proj", "1.0.0", "prepare", NULL, false),
			L(NPM, NULL, NULL, NULL, NULL, true),
		};

		decide(c, 4, "proj", "1.0.0", "prepare", false, "", NPM, "the same script nested");
	}
	{
		/* yarn and pnpm put the same variables there. */
		struct attrib_link y[] = {
			L(NONE, "left-pad", "1.3.0", "install", NULL, false),
			L(ATTRIB_PM_YARN, NULL, NULL, NULL, NULL, true),
		};
		struct attrib_link p[] = {
			L(NONE, "left-pad", "1.3.0", "preinstall", NULL, false),
			L(ATTRIB_PM_PNPM, NULL, NULL, NULL, NULL, false),
			L(NONE, NULL, NULL, NULL, NULL, true),
		};

		decide(y, 2, "left-pad", "1.3.0", "install", false, "", ATTRIB_PM_YARN, "yarn");
		decide(p, 3, "left-pad", "1.3.0", "preinstall", false, "", ATTRIB_PM_PNPM, "pnpm");
	}
	{
		/* pip builds evilpy: setup.py runs in its build directory, a child of pip. */
		struct attrib_link c[] = {
			L(NONE, NULL, "0.1", NULL, "evilpy", false),
			L(ATTRIB_PM_PIP, NULL, NULL, NULL, NULL, true),
		};
		struct attrib_link curl[] = {
			L(NONE, NULL, NULL, NULL, NULL, false),
			L(NONE, NULL, "0.1", NULL, "evilpy", false),
			L(ATTRIB_PM_PIP, NULL, NULL, NULL, NULL, false),
			L(NONE, NULL, NULL, NULL, NULL, true),
		};
		struct attrib_link claim[] = {
			L(NONE, NULL, "0.1", NULL, "evilpy", false),
			L(NONE, NULL, NULL, NULL, NULL, true),
		};

		decide(c, 2, "evilpy", "0.1", "build", false, "", ATTRIB_PM_PIP, "a pip build");
		decide(curl, 4, "evilpy", "0.1", "build", false, "", ATTRIB_PM_PIP,
		       "a child of a pip build");
		decide(claim, 2, "evilpy", "0.1", "build", true, "", ATTRIB_PM_PIP,
		       "a pip directory with no pip above it");
	}
	{
		/* Nothing a package manager put there: no package. */
		struct attrib_link c[] = {
			L(NONE, NULL, NULL, NULL, NULL, false),
			L(NONE, NULL, NULL, NULL, NULL, true),
		};

		decide(c, 2, "", "", "", false, "", NONE, "no package");
		decide(c, 0, "", "", "", false, "", NONE, "an empty chain");
	}
}

/* ---- the words -------------------------------------------------------------------------- */

static void test_words(void **state)
{
	struct event_who w = {
		.found = true, .pid = 812, .comm = "node", .argv0 = "node", .cmdline = "node evil.js",
		.package = "evil-pkg", .version = "1.2.3", .script = "postinstall",
	};
	char *s, long_cmd[400];

	(void)state;
	s = event_who_words(&w);
	assert_string_equal(s, "postinstall of evil-pkg@1.2.3 (node, pid 812)");
	free(s);
	w.claimed = true;
	s = event_who_words(&w);
	assert_string_equal(s, "node (pid 812) claims postinstall of evil-pkg@1.2.3");
	free(s);
	w.claimed = false;
	w.via = "postinstall of evil@2";
	s = event_who_package_words(&w);
	assert_string_equal(s, "postinstall of evil-pkg@1.2.3 via postinstall of evil@2");
	free(s);
	w = (struct event_who){ .found = true, .pid = 77, .comm = "python3",
				.cmdline = "python3 fetch.py" };
	s = event_who_words(&w);
	assert_string_equal(s, "python3 fetch.py (pid 77)");
	free(s);
	assert_null(event_who_package_words(&w));
	w = (struct event_who){ .found = false };
	s = event_who_words(&w);
	assert_string_equal(s, "unknown");
	free(s);
	assert_null(event_who_words(NULL));
	/* A hostile package name still comes out as one line of text. */
	w = (struct event_who){ .found = true, .pid = 5, .comm = "x\x1b[31m",
				.package = "\x1b]52;c;Y3VybA==\x07", .script = "postinstall" };
	s = event_who_words(&w);
	assert_null(strchr(s, '\x1b'));
	assert_null(strchr(s, '\x07'));
	free(s);
	/* A long command line is cut, with an ellipsis, at a character. */
	memset(long_cmd, 'y', sizeof(long_cmd) - 1);
	long_cmd[sizeof(long_cmd) - 1] = '\0';
	w = (struct event_who){ .found = true, .pid = 9, .comm = "y", .cmdline = long_cmd };
	s = event_who_words(&w);
	assert_true(strlen(s) < EVENT_WHO_CMD_MAX + 20);
	assert_non_null(strstr(s, "… (pid 9)"));
	free(s);
}

/* A store row's who: NULL pid is "not looked for", 0 is "unknown". */
static void test_from_row(void **state)
{
	const char *found[9] = { "812", "node", "node", "node evil.js", "evil-pkg", "1.2.3",
				 "postinstall", NULL, "0" };
	const char *unknown[9] = { "0" };
	const char *none[9] = { NULL };
	struct event_who w;

	(void)state;
	assert_true(event_who_from_row(&w, found));
	assert_true(w.found);
	assert_int_equal(w.pid, 812);
	assert_string_equal(w.package, "evil-pkg");
	assert_false(w.claimed);
	assert_true(event_who_from_row(&w, unknown));
	assert_false(w.found);
	assert_false(event_who_from_row(&w, none));
}

/* ---- a live sandbox: the I/O half against real processes -------------------------- */

/*
 * A small sandbox of the test's own: a child in new user, pid and network
 * namespaces whose first child is its init (pid 1), which starts a
 * "payload" (pid 2) holding a UDP socket bound to port 4242 and waiting.
 * Their host pids come back through a pipe.
 */
struct live {
	pid_t outer, init, payload;
	int hold;               /* closing it ends them */
	bool tcp;               /* it holds TCP connections too */
};

static void live_payload(int report, int hold)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(4242) };
	pid_t me = getpid();
	char b;

	char said = 'r';

	if (s < 0 || bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		_exit(3);
	(void)me;
	/*
	 * TCP too, on lo (brought up: this process holds every capability in
	 * its user namespace): a listener on 4300, a v4 client from 4301, a
	 * dual-stack v6 client from 4302 to ::ffff:127.0.0.1 (a v4 flow).
	 */
	{
		struct ifreq ifr = { .ifr_flags = IFF_UP };
		struct sockaddr_in ls = { .sin_family = AF_INET, .sin_port = htons(4300),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		struct sockaddr_in c4 = ls;
		struct sockaddr_in6 c6 = { .sin6_family = AF_INET6, .sin6_port = htons(4302) };
		struct sockaddr_in6 to6 = { .sin6_family = AF_INET6, .sin6_port = htons(4300) };
		int io = socket(AF_INET, SOCK_DGRAM, 0), l = socket(AF_INET, SOCK_STREAM, 0);
		int t4 = socket(AF_INET, SOCK_STREAM, 0), t6 = socket(AF_INET6, SOCK_STREAM, 0);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
		to6.sin6_addr.s6_addr[10] = to6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&to6.sin6_addr.s6_addr[12], &ls.sin_addr, 4);
		c4.sin_port = htons(4301);
		if (ioctl(io, SIOCSIFFLAGS, &ifr) == 0 &&
		    bind(l, (struct sockaddr *)&ls, sizeof(ls)) == 0 && listen(l, 4) == 0 &&
		    bind(t4, (struct sockaddr *)&c4, sizeof(c4)) == 0 &&
		    connect(t4, (struct sockaddr *)&ls, sizeof(ls)) == 0 &&
		    bind(t6, (struct sockaddr *)&c6, sizeof(c6)) == 0 &&
		    connect(t6, (struct sockaddr *)&to6, sizeof(to6)) == 0)
			said = 't';
	}
	if (write(report, &said, 1) != 1)
		_exit(4);
	while (read(hold, &b, 1) < 0)
		;
	_exit(0);
}

static void live_start(struct live *l)
{
	int rep[2], hold[2], pids[2];
	pid_t got[2];
	char b;

	assert_int_equal(pipe(rep), 0);
	assert_int_equal(pipe(hold), 0);
	assert_int_equal(pipe(pids), 0);
	l->outer = fork();
	assert_true(l->outer >= 0);
	if (l->outer == 0) {
		pid_t init;

		if (unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET) < 0)
			_exit(2);
		init = fork();
		if (init == 0) {
			/* pid 1 of the new namespace: it starts the payload and waits. */
			pid_t payload = fork();

			if (payload == 0) {
				close(hold[1]);
				live_payload(rep[1], hold[0]);
			}
			close(hold[1]);
			while (read(hold[0], &b, 1) < 0)
				;
			_exit(0);
		}
		close(hold[1]);
		while (read(hold[0], &b, 1) < 0)
			;
		waitpid(init, NULL, 0);
		_exit(0);
	}
	close(hold[0]);
	close(rep[1]);
	l->hold = hold[1];
	assert_int_equal(read(rep[0], &b, 1), 1);
	l->tcp = b == 't';
	close(rep[0]);
	close(pids[0]);
	close(pids[1]);
	/* The host pids: the outer child's child is init, init's child the payload. */
	{
		char path[64], buf[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", l->outer, l->outer);
		f = fopen(path, "r");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%d", &got[0]), 1);
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", got[0], got[0]);
		f = fopen(path, "r");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%d", &got[1]), 1);
		fclose(f);
		(void)buf;
	}
	l->init = got[0];
	l->payload = got[1];
}

static void live_stop(struct live *l)
{
	close(l->hold);
	waitpid(l->outer, NULL, 0);
}

/* The host's start time of pid (stat field 22). */
static uint64_t start_of(pid_t pid)
{
	char path[64], buf[1024];
	struct attrib_stat st;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	assert_true(attrib_stat_parse(buf, (size_t)n, &st));
	return st.start;
}

static void test_live(void **state)
{
	struct live l;
	struct attrib_proc p;
	struct attrib_query q = { .kind = ATTRIB_Q_SOCKET, .proto = 17, .lport = 4242, .rport = 53 };
	uint64_t start;

	(void)state;
	live_start(&l);
	/*
	 * The socket's owner, by the kernel's sock_diag in the sandbox's network
	 * namespace, then by its socket tables: the same answer, pid 2 as the
	 * sandbox sees it.
	 */
	for (int way = 0; way < 2; way++) {
		unsigned long before = attrib_diag_answered;

		attrib_diag_enabled = way == 0;
		q = (struct attrib_query){ .kind = ATTRIB_Q_SOCKET, .proto = 17, .lport = 4242,
					   .rport = 53, .local = A("10.0.2.15"),
					   .remote = A("10.0.2.2") };
		assert_int_equal(attrib_who_socket(l.init, &q, &p), 0);
		assert_true(p.found);
		assert_int_equal(p.pid, 2);
		assert_int_equal(p.host_pid, l.payload);
		/* Another port: nobody. */
		q.lport = 4243;
		assert_int_equal(attrib_who_socket(l.init, &q, &p), 0);
		assert_false(p.found);
		if (l.tcp) {
			/* A connection (the listener's side of it is nobody's yet), and a v6
			 * socket's v4 flow. */
			q = (struct attrib_query){ .kind = ATTRIB_Q_SOCKET, .proto = 6, .lport = 4301,
						   .rport = 4300, .local = A("127.0.0.1"),
						   .remote = A("127.0.0.1") };
			assert_int_equal(attrib_who_socket(l.init, &q, &p), 0);
			assert_true(p.found);
			assert_int_equal(p.pid, 2);
			q.lport = 4302;
			assert_int_equal(attrib_who_socket(l.init, &q, &p), 0);
			assert_true(p.found);
			q.lport = 4300;
			q.rport = 4301;
			assert_int_equal(attrib_who_socket(l.init, &q, &p), 0);
			assert_false(p.found);
		}
		if (way == 0)
			assert_true(attrib_diag_answered - before >= 2);
		else
			assert_int_equal(attrib_diag_answered, before);
	}
	attrib_diag_enabled = true;
	q = (struct attrib_query){ .kind = ATTRIB_Q_SOCKET, .proto = 17, .lport = 4242,
				   .rport = 53, .local = A("10.0.2.15"), .remote = A("10.0.2.2") };
	/* By pid. */
	assert_int_equal(attrib_who_pid(l.init, l.payload, &p), 0);
	assert_true(p.found);
	assert_int_equal(p.pid, 2);
	/* A pid outside the sandbox (this test, or whatever a reused pid became): nobody. */
	assert_int_equal(attrib_who_pid(l.init, getpid(), &p), 0);
	assert_false(p.found);
	/* The same pid with another start time — a pid reused since it was seen: nobody. */
	start = start_of(l.payload);
	assert_int_equal(attrib_who_process(l.init, l.payload, start, &p), 0);
	assert_true(p.found);
	assert_int_equal(attrib_who_process(l.init, l.payload, start + 1, &p), 0);
	assert_false(p.found);
	/* The worker, asked the same, answers on its eventfd. */
	{
		char *err = NULL;
		struct attrib *a = attrib_create(l.init, &err);
		struct attrib_result r;
		struct pollfd pfd;

		assert_non_null(a);
		q.lport = 4242;
		q.token = 77;
		assert_true(attrib_ask(a, &q));
		pfd = (struct pollfd){ .fd = attrib_fd(a), .events = POLLIN };
		assert_int_equal(poll(&pfd, 1, 5000), 1);
		assert_int_equal(attrib_take(a, &r, 1), 1);
		assert_int_equal(r.token, 77);
		assert_true(r.who.found);
		assert_int_equal(r.who.pid, 2);
		attrib_free(a);
	}
	live_stop(&l);
	/* Gone: not a live init any more. */
	assert_int_equal(attrib_who_pid(l.init, l.payload, &p), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sock_parse),
		cmocka_unit_test(test_sock_parse_refuses),
		cmocka_unit_test(test_sock_match),
		cmocka_unit_test(test_diag),
		cmocka_unit_test(test_socket_link),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_nspid),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_environ),
		cmocka_unit_test(test_manager),
		cmocka_unit_test(test_pip_dir),
		cmocka_unit_test(test_pip_metadata),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_from_row),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
