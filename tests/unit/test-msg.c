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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msg.h"
#include "util.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_with_fds),
		cmocka_unit_test(test_oversized_refused),
		cmocka_unit_test(test_truncated_refused),
		cmocka_unit_test(test_lying_fd_count),
		cmocka_unit_test(test_fds_out_of_place),
		cmocka_unit_test(test_dribble),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
