/*
 * test-msg.c — framing on a real socketpair: frames with descriptors
 * arrive whole, and every way a peer can misbehave (oversized, lying about
 * descriptors, vanishing mid-frame, dribbling bytes) is detected without
 * a crash or a leaked descriptor.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/msg.h"
#include "common/util.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void test_round_trip_with_fds(void **state)
{
	int sv[2], p[2];
	struct msg m;
	char *err = NULL;
	char buf[8];

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(msg_send(sv[0], MSG_ATTACH, "abc", 3, &p[1], 1), 0);
	assert_int_equal(msg_send(sv[0], MSG_STATUS, NULL, 0, NULL, 0), 0);
	assert_int_equal(msg_recv(sv[1], &m, &err), 1);
	assert_int_equal(m.type, MSG_ATTACH);
	assert_int_equal(m.len, 3);
	assert_memory_equal(m.payload, "abc", 3);
	assert_int_equal(m.nfds, 1);
	/* The descriptor works: write through it, read from the pipe. */
	assert_int_equal(write(m.fds[0], "x", 1), 1);
	assert_int_equal(read(p[0], buf, 1), 1);
	msg_free(&m);
	assert_int_equal(msg_recv(sv[1], &m, &err), 1);
	assert_int_equal(m.type, MSG_STATUS);
	assert_int_equal(m.len, 0);
	assert_int_equal(m.nfds, 0);
	msg_free(&m);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void raw_header(uint8_t *h, uint32_t len, uint16_t type, uint16_t nfds)
{
	memcpy(h, &len, 4);
	memcpy(h + 4, &type, 2);
	memcpy(h + 6, &nfds, 2);
}

static void expect_violation(const void *bytes, size_t n, const char *needle)
{
	int sv[2];
	struct msg m;
	char *err = NULL;

	pair(sv);
	assert_int_equal(write(sv[0], bytes, n), (ssize_t)n);
	close(sv[0]);
	assert_int_equal(msg_recv(sv[1], &m, &err), -1);
	if (needle) {
		assert_non_null(err);
		assert_non_null(strstr(err, needle));
	}
	free(err);
	close(sv[1]);
}

static void test_oversized_refused(void **state)
{
	uint8_t h[8];

	(void)state;
	raw_header(h, MSG_MAX_LEN + 1, MSG_RUN, 0);
	expect_violation(h, sizeof(h), "over the");
	raw_header(h, 0xffffffffu, MSG_RUN, 0);
	expect_violation(h, sizeof(h), "over the");
}

static void test_truncated_refused(void **state)
{
	uint8_t b[12];

	(void)state;
	raw_header(b, 100, MSG_ATTACH, 0);
	memcpy(b + 8, "abcd", 4);
	expect_violation(b, sizeof(b), "mid-message");   /* payload cut short */
	expect_violation(b, 5, "mid-message");           /* header cut short */
	expect_violation(b, 0, NULL);                    /* clean EOF: -1, no error text */
}

static void test_lying_fd_count(void **state)
{
	uint8_t h[8];

	(void)state;
	raw_header(h, 0, MSG_RUN, 2);                    /* announces 2, carries none */
	expect_violation(h, sizeof(h), "descriptors");
}

static void test_fds_out_of_place(void **state)
{
	int sv[2], p[2];
	uint8_t h[8];
	struct msg m;
	char *err = NULL;
	union { struct cmsghdr a; char buf[CMSG_SPACE(sizeof(int))]; } ctl;
	struct iovec iov = { .iov_base = "zz", .iov_len = 2 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	raw_header(h, 4, MSG_ATTACH, 0);
	assert_int_equal(write(sv[0], h, sizeof(h)), 8);
	/* A descriptor smuggled in the middle of the payload. */
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p[0], sizeof(int));
	assert_int_equal(sendmsg(sv[0], &mh, 0), 2);
	assert_int_equal(write(sv[0], "zz", 2), 2);
	assert_int_equal(msg_recv(sv[1], &m, &err), -1);
	assert_non_null(strstr(err, "out of place"));
	free(err);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* A peer that sends a frame one byte at a time still gets it read whole. */
static void test_dribble(void **state)
{
	int sv[2];
	uint8_t b[8 + 5];
	struct msg_reader r;
	struct msg m;
	char *err = NULL;
	int rc = 0;

	(void)state;
	pair(sv);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	raw_header(b, 5, MSG_OK, 0);
	memcpy(b + 8, "hello", 5);
	msg_reader_init(&r);
	for (size_t i = 0; i < sizeof(b); i++) {
		assert_int_equal(rc, 0);
		assert_int_equal(write(sv[0], b + i, 1), 1);
		rc = msg_read(&r, sv[1], &m, &err);
	}
	assert_int_equal(rc, 1);
	assert_memory_equal(m.payload, "hello", 5);
	msg_free(&m);
	close(sv[0]);
	close(sv[1]);
}

/* ---- SOCK_SEQPACKET: one frame per record ------------------------------------ */

static void packet_pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
}

/* Frames and their descriptors arrive one record at a time; EAGAIN is 0, EOF -1. */
static void test_packet_round_trip(void **state)
{
	int sv[2], p[2];
	struct msg m;
	char *err = NULL;
	char buf[1];

	(void)state;
	packet_pair(sv);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(msg_read_packet(sv[1], &m, &err), 0);          /* nothing yet */
	assert_int_equal(msg_send(sv[0], MSG_ATTACH, "abc", 3, &p[1], 1), 0);
	assert_int_equal(msg_send(sv[0], MSG_STATUS, NULL, 0, NULL, 0), 0);
	assert_int_equal(msg_read_packet(sv[1], &m, &err), 1);
	assert_int_equal(m.type, MSG_ATTACH);
	assert_int_equal(m.len, 3);
	assert_memory_equal(m.payload, "abc", 3);
	assert_int_equal(m.nfds, 1);
	assert_int_equal(write(m.fds[0], "x", 1), 1);
	assert_int_equal(read(p[0], buf, 1), 1);
	msg_free(&m);
	assert_int_equal(msg_read_packet(sv[1], &m, &err), 1);
	assert_int_equal(m.type, MSG_STATUS);
	assert_int_equal(m.nfds, 0);
	msg_free(&m);
	/* msg_recv finds the socket type itself. */
	assert_int_equal(msg_send(sv[0], MSG_OK, "yo", 2, NULL, 0), 0);
	assert_int_equal(msg_recv(sv[1], &m, &err), 1);
	assert_int_equal(m.type, MSG_OK);
	assert_memory_equal(m.payload, "yo", 2);
	msg_free(&m);
	close(sv[0]);
	assert_int_equal(msg_read_packet(sv[1], &m, &err), -1);
	assert_null(err);                                               /* a clean EOF */
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* Send one raw record (and maybe a descriptor); expect a violation naming needle. */
static void packet_violation(const void *bytes, size_t n, bool with_fd, const char *needle)
{
	int sv[2], p[2];
	struct msg m;
	char *err = NULL;
	union { struct cmsghdr a; char buf[CMSG_SPACE(sizeof(int))]; } ctl;
	struct iovec iov = { .iov_base = (void *)bytes, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	packet_pair(sv);
	assert_int_equal(pipe(p), 0);
	if (with_fd) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &p[0], sizeof(int));
	}
	assert_int_equal(sendmsg(sv[0], &mh, 0), (ssize_t)n);
	close(p[0]);
	assert_int_equal(msg_read_packet(sv[1], &m, &err), -1);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("got '%s', want it to mention '%s'", err, needle);
	free(err);
	/* Whatever came with the bad record was closed: the pipe's read end is gone. */
	assert_int_equal(write(p[1], "x", 1), -1);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_packet_violations(void **state)
{
	static uint8_t big[8 + MSG_PACKET_MAX + 1];
	uint8_t b[16];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	raw_header(b, 8, MSG_ATTACH, 0);
	memcpy(b + 8, "abcd", 4);
	packet_violation(b, 12, false, "announced 8 bytes, carried 4");      /* short */
	raw_header(b, 2, MSG_ATTACH, 0);
	packet_violation(b, 12, false, "announced 2 bytes, carried 4");      /* long */
	packet_violation(b, 5, false, "shorter than its header");
	raw_header(b, 0, MSG_RUN, 2);
	packet_violation(b, 8, true, "announced 2 descriptors, carried 1");
	raw_header(b, 0, MSG_RUN, 0);
	packet_violation(b, 8, true, "announced 0 descriptors, carried 1");
	raw_header(big, MSG_PACKET_MAX + 1, MSG_OUTPUT, 0);
	packet_violation(big, sizeof(big), false, "over the");
}

/* ---- the limits, at the limit and one past it ---------------------------------- */

/* Nothing at all is waiting on fd (a refused send wrote no byte). */
static void assert_nothing_sent(int fd)
{
	char c;

	assert_int_equal(recv(fd, &c, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

/*
 * The sender's descriptor cap: MSG_MAX_FDS go, MSG_MAX_FDS + 1 is refused
 * with EMSGSIZE before anything is written (its control buffer holds
 * MSG_MAX_FDS: one more would be written past it).
 */
static void test_send_fd_limit(void **state)
{
	int sv[2], p[2], fds[MSG_MAX_FDS + 1];
	struct msg m;
	char *err = NULL;

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	for (size_t i = 0; i < MSG_MAX_FDS + 1; i++)
		fds[i] = p[1];
	errno = 0;
	assert_int_equal(msg_send(sv[0], MSG_RUN, "x", 1, fds, MSG_MAX_FDS + 1), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_nothing_sent(sv[1]);
	assert_int_equal(msg_send(sv[0], MSG_RUN, "x", 1, fds, MSG_MAX_FDS), 0);
	assert_int_equal(msg_recv(sv[1], &m, &err), 1);
	assert_int_equal(m.nfds, MSG_MAX_FDS);
	for (size_t i = 0; i < MSG_MAX_FDS; i++)
		assert_int_equal(write(m.fds[i], "y", 1), 1);
	msg_free(&m);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* The receiver's descriptor cap: MSG_MAX_FDS + 1 on one frame ends the connection. */
static void test_recv_fd_limit(void **state)
{
	int sv[2], p[2];
	uint8_t h[8];
	struct msg m;
	char *err = NULL;
	union { struct cmsghdr a; char buf[CMSG_SPACE(sizeof(int) * (MSG_MAX_FDS + 1))]; } ctl;
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	int fds[MSG_MAX_FDS + 1];

	(void)state;
	pair(sv);
	assert_int_equal(pipe(p), 0);
	for (size_t i = 0; i < MSG_MAX_FDS + 1; i++)
		fds[i] = p[0];
	raw_header(h, 0, MSG_RUN, MSG_MAX_FDS + 1);
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	assert_int_equal(sendmsg(sv[0], &mh, 0), 8);
	assert_int_equal(msg_recv(sv[1], &m, &err), -1);
	assert_non_null(err);
	free(err);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/*
 * The length cap, both ends: MSG_MAX_LEN + 1 is refused by the sender with
 * EMSGSIZE, MSG_MAX_LEN crosses. A child reads while the parent sends (so a
 * sender that let the oversized frame through cannot hang the test): the
 * first frame it gets must be the one of MSG_MAX_LEN.
 */
static void test_len_limit(void **state)
{
	int sv[2], status;
	uint8_t *big = calloc(1, MSG_MAX_LEN + 1);
	pid_t pid;

	(void)state;
	assert_non_null(big);
	big[MSG_MAX_LEN - 1] = 0x5a;
	pair(sv);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct msg m;
		char *err = NULL;

		close(sv[0]);
		if (msg_recv(sv[1], &m, &err) != 1 || m.type != MSG_INPUT ||
		    m.len != MSG_MAX_LEN || m.payload[MSG_MAX_LEN - 1] != 0x5a)
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	errno = 0;
	assert_int_equal(msg_send(sv[0], MSG_OUTPUT, big, MSG_MAX_LEN + 1, NULL, 0), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(msg_send(sv[0], MSG_INPUT, big, MSG_MAX_LEN, NULL, 0), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(sv[0]);
	free(big);
}

/* A packet of MSG_PACKET_MAX payload bytes is read whole; one more is refused. */
static void test_packet_len_limit(void **state)
{
	static uint8_t big[8 + MSG_PACKET_MAX + 1];
	int sv[2], sz = 4 * (int)sizeof(big);
	struct msg m;
	char *err = NULL;

	(void)state;
	packet_pair(sv);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	raw_header(big, MSG_PACKET_MAX, MSG_OUTPUT, 0);
	big[8 + MSG_PACKET_MAX - 1] = 0x5a;
	assert_int_equal(send(sv[0], big, 8 + MSG_PACKET_MAX, 0), 8 + MSG_PACKET_MAX);
	assert_int_equal(msg_read_packet(sv[1], &m, &err), 1);
	assert_int_equal(m.len, MSG_PACKET_MAX);
	assert_int_equal(m.payload[MSG_PACKET_MAX - 1], 0x5a);
	msg_free(&m);
	close(sv[0]);
	close(sv[1]);
	raw_header(big, MSG_PACKET_MAX + 1, MSG_OUTPUT, 0);
	packet_violation(big, sizeof(big), false, "over the");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_with_fds),
		cmocka_unit_test(test_oversized_refused),
		cmocka_unit_test(test_truncated_refused),
		cmocka_unit_test(test_lying_fd_count),
		cmocka_unit_test(test_fds_out_of_place),
		cmocka_unit_test(test_dribble),
		cmocka_unit_test(test_packet_round_trip),
		cmocka_unit_test(test_packet_violations),
		cmocka_unit_test(test_send_fd_limit),
		cmocka_unit_test(test_recv_fd_limit),
		cmocka_unit_test(test_len_limit),
		cmocka_unit_test(test_packet_len_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
