/*
 * test-sandbox-net.c — tap0 as stage 2 makes it, in a user and network
 * namespace of the test's own (a forked child, so the test process keeps
 * its own): created, configured over rtnetlink, and its descriptor
 * received on the other end of a socket. The checks read the kernel's own
 * view (getifaddrs, SIOCGIFMTU, /proc/net routes, TUNGETIFF), not what the
 * code meant to set. Skipped where unprivileged user namespaces or
 * /dev/net/tun are unavailable.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init/tap.h"
#include "common/util.h"

/* What the child found, one bit per check, sent back over a pipe. */
enum {
	GOT_ADDR4 = 1, GOT_ADDR6 = 2, GOT_UP = 4, GOT_MTU = 8, GOT_ROUTE4 = 16, GOT_ROUTE6 = 32,
	GOT_ALL = 63,
};

static bool file_has(const char *path, const char *needle)
{
	char *text = NULL;
	size_t len;
	bool found;

	if (read_file(path, 1 << 20, &text, &len) < 0)
		return false;
	found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

/* In the child, inside the namespaces: set up, then look. */
static int child_check(int sock)
{
	struct ifaddrs *ifa, *p;
	struct ifreq ifr;
	char *err = NULL;
	int got = 0, s;

	if (sandbox_net_setup(sock, 1, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	if (getifaddrs(&ifa) == 0) {
		for (p = ifa; p; p = p->ifa_next) {
			char a[INET6_ADDRSTRLEN];

			if (!p->ifa_addr || strcmp(p->ifa_name, SANDBOX_NET_IF) != 0)
				continue;
			if (p->ifa_flags & IFF_UP)
				got |= GOT_UP;
			if (p->ifa_addr->sa_family == AF_INET) {
				inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, a,
					  sizeof(a));
				if (strcmp(a, SANDBOX_NET_ADDR4) == 0)
					got |= GOT_ADDR4;
			} else if (p->ifa_addr->sa_family == AF_INET6) {
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr, a,
					  sizeof(a));
				if (strcmp(a, SANDBOX_NET_ADDR6) == 0)
					got |= GOT_ADDR6;
			}
		}
		freeifaddrs(ifa);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, SANDBOX_NET_IF);
	if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu == SANDBOX_NET_MTU)
		got |= GOT_MTU;
	if (s >= 0)
		close(s);
	/* /proc/net/route: "tap0 00000000 0202000A ..." — destination 0, gateway
	 * 10.0.2.2 in the kernel's little-endian hex. */
	if (file_has("/proc/net/route", "tap0\t00000000\t0202000A"))
		got |= GOT_ROUTE4;
	/* /proc/net/ipv6_route: ::/0 via fd00:b0c5::2 on tap0. */
	if (file_has("/proc/net/ipv6_route", "00000000000000000000000000000000 00 "
		     "00000000000000000000000000000000 00 fd00b0c5000000000000000000000002"))
		got |= GOT_ROUTE6;
	return got;
}

static void test_tap_setup(void **state)
{
	int sp[2], pipefd[2], got = 0, fd, st;
	struct ifreq ifr;
	char *err = NULL;
	pid_t pid;

	(void)state;
	if (access("/dev/net/tun", R_OK | W_OK) < 0)
		skip();
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(sp[0]);
		close(pipefd[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			_exit(77);
		got = child_check(sp[1]);
		if (write(pipefd[1], &got, sizeof(got)) != sizeof(got))
			_exit(1);
		_exit(got < 0 ? 1 : 0);
	}
	close(sp[1]);
	close(pipefd[1]);
	if (sandbox_net_recv_fds(sp[0], &fd, 1, &err) != 1) {
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
			skip();         /* no unprivileged user namespaces here */
		fail_msg("no descriptor: %s", err);
	}
	assert_int_equal(read(pipefd[0], &got, sizeof(got)), sizeof(got));
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (got != GOT_ALL)
		fail_msg("tap0 checks: got %#x of %#x (addr4 1, addr6 2, up 4, mtu 8, route4 16, "
			 "route6 32)", got, GOT_ALL);
	/* The descriptor is the TAP device itself. */
	memset(&ifr, 0, sizeof(ifr));
	assert_int_equal(ioctl(fd, TUNGETIFF, &ifr), 0);
	assert_string_equal(ifr.ifr_name, SANDBOX_NET_IF);
	assert_int_equal(ifr.ifr_flags & (IFF_TAP | IFF_NO_PI), IFF_TAP | IFF_NO_PI);
	close(fd);
	close(sp[0]);
	close(pipefd[0]);
}

/*
 * A multi-queue tap0 (one boxy-net per queue): three queues come over in one
 * message, each a descriptor of the same device with IFF_MULTI_QUEUE; a
 * receiver that asked for two keeps two and closes the third.
 */
static void test_tap_queues(void **state)
{
	int sp[2], fds[3], st;
	struct ifreq ifr;
	char *err = NULL;
	pid_t pid;

	(void)state;
	if (access("/dev/net/tun", R_OK | W_OK) < 0)
		skip();
	for (int round = 0; round < 2; round++) {
		unsigned want = round ? 2 : 3;

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(sp[0]);
			if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
				_exit(77);
			_exit(sandbox_net_setup(sp[1], 3, &err) < 0 ? 1 : 0);
		}
		close(sp[1]);
		memset(fds, -1, sizeof(fds));
		if (sandbox_net_recv_fds(sp[0], fds, want, &err) != (int)want) {
			waitpid(pid, &st, 0);
			if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
				skip();
			fail_msg("queues: %s", err ? err : "a count other than asked");
		}
		waitpid(pid, &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		for (unsigned i = 0; i < want; i++) {
			memset(&ifr, 0, sizeof(ifr));
			assert_int_equal(ioctl(fds[i], TUNGETIFF, &ifr), 0);
			assert_string_equal(ifr.ifr_name, SANDBOX_NET_IF);
			assert_true(ifr.ifr_flags & IFF_MULTI_QUEUE);
			close(fds[i]);
		}
		if (want == 2)
			assert_int_equal(fds[2], -1);   /* the third was not kept */
		close(sp[0]);
	}
	/* Queues past SANDBOX_NET_MAX_QUEUES, or none, are refused before anything opens. */
	assert_int_equal(sandbox_net_tap_create(SANDBOX_NET_IF, fds, 0, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(sandbox_net_tap_create(SANDBOX_NET_IF, fds, SANDBOX_NET_MAX_QUEUES + 1,
						&err), -1);
	free(err);
}

/* The receiving end accepts one descriptor with the agreed byte and nothing else. */
static void test_recv_refuses(void **state)
{
	int sp[2], fd;
	char *err = NULL;

	(void)state;
	/* A byte with no descriptor. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(write(sp[1], "T", 1), 1);
	assert_int_equal(sandbox_net_recv_fds(sp[0], &fd, 1, &err), -1);
	assert_non_null(err);
	free(err);
	err = NULL;
	/* EOF. */
	close(sp[1]);
	assert_int_equal(sandbox_net_recv_fds(sp[0], &fd, 1, &err), -1);
	free(err);
	err = NULL;
	close(sp[0]);
	/* The agreed message is received; then one with the wrong byte is refused
	 * (and its descriptor closed, not returned). */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	fd = dup(0);
	assert_int_equal(sandbox_net_send_fds(sp[1], &fd, 1, &err), 0);
	close(fd);
	{
		char byte = 'X';
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} ctl;
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *c;
		int d = dup(0);

		memset(&ctl, 0, sizeof(ctl));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &d, sizeof(int));
		assert_int_equal(sandbox_net_recv_fds(sp[0], &fd, 1, &err), 1);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(sendmsg(sp[1], &mh, 0), 1);
		close(d);
		assert_int_equal(sandbox_net_recv_fds(sp[0], &fd, 1, &err), -1);
		free(err);
	}
	close(sp[0]);
	close(sp[1]);
}

static void test_resolv_conf(void **state)
{
	char *t;

	(void)state;
	t = sandbox_net_resolv_conf(NULL);
	assert_string_equal(t, "# boxy: every DNS query leaves through boxy's resolver\n"
			    "nameserver 10.0.2.2\nnameserver fd00:b0c5::2\n");
	free(t);
	t = sandbox_net_resolv_conf("tail0a1b2.ts.net");
	assert_string_equal(t, "# boxy: every DNS query leaves through boxy's resolver\n"
			    "nameserver 10.0.2.2\nnameserver fd00:b0c5::2\n"
			    "search tail0a1b2.ts.net\n");
	free(t);
	/* Only a canonical DNS name: not empty, upper case, a trailing dot, a space, "..". */
	static const char *const bad[] = {
		"", "Tail0a1b2.ts.net", "tail0a1b2.ts.net.", "tail0a1b2.ts.net 8.8.8.8",
		"tail..ts.net", ".ts.net",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = sandbox_net_resolv_conf(bad[i]);
		assert_string_equal(t, "# boxy: every DNS query leaves through boxy's resolver\n"
				    "nameserver 10.0.2.2\nnameserver fd00:b0c5::2\n");
		free(t);
	}
	/* A suffix that could smuggle a directive is left out, not written. */
	t = sandbox_net_resolv_conf("x\nnameserver 8.8.8.8");
	assert_null(strstr(t, "search"));
	assert_null(strstr(t, "8.8.8.8"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolv_conf),
		cmocka_unit_test(test_tap_setup),
		cmocka_unit_test(test_tap_queues),
		cmocka_unit_test(test_recv_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
