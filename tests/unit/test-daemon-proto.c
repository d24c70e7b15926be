/*
 * test-daemon-proto.c — a live daemon against misbehaving clients, and the
 * event bus against a subscriber that never reads.
 *
 * The protocol cases talk to a real `boxy daemon serve` on a private socket
 * (a fresh XDG_RUNTIME_DIR/XDG_STATE_HOME under /tmp, started here; or the
 * socket named by BOXY_PROTO_SOCK, which tests/e2e/daemon-lifecycle.sh uses to run these
 * against its own daemon as the unprivileged user). Every hostile client —
 * truncated, oversized, garbage, lying about descriptors, out of state, a
 * MSG_RUN with hostile fields, vanishing mid-message, another uid — must be
 * dropped or get an error reply, and the daemon must answer a normal client
 * afterwards and hold no more descriptors than before.
 *
 * The slow-subscriber case drives bus_publish() directly with a fake
 * watcher whose socket nobody reads: nothing blocks, the queue stays
 * bounded, and the watcher is told exactly how many events it lost.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/msg.h"
#include "daemon/server.h"
#include "common/util.h"
#include "proto/wire.h"

static char *sock_path;         /* the daemon's socket */
static char *tmpdir;            /* ours, when we started the daemon */
static char *log_path;          /* its stderr, when we started it */
static pid_t daemon_pid;        /* ours to stop, or 0 */
static pid_t served_pid;        /* whichever daemon answers */
static char build[65];
static int fds_before = -1;

/* ---- a client ------------------------------------------------------------------ */

static int conn(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_raw(int fd, const void *p, size_t n)
{
	assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void header(uint8_t *h, uint32_t len, uint16_t type, uint16_t nfds)
{
	for (int i = 0; i < 4; i++)
		h[i] = (uint8_t)(len >> (8 * i));
	h[4] = (uint8_t)type;
	h[5] = (uint8_t)(type >> 8);
	h[6] = (uint8_t)nfds;
	h[7] = (uint8_t)(nfds >> 8);
}

/* One frame within timeout_ms: 1 with *m, 0 on EOF (dropped), -2 on timeout, -1 otherwise. */
static int recv_msg(int fd, struct msg *m, int timeout_ms)
{
	struct msg_reader rd;
	uint64_t end = now_mono_ms() + (uint64_t)timeout_ms;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	msg_reader_init(&rd);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *err = NULL;
		int rc = msg_read(&rd, fd, m, &err);
		int64_t left;

		if (rc == 1)
			return 1;
		if (rc < 0) {
			msg_reader_reset(&rd);
			rc = err ? -1 : 0;
			free(err);
			return rc;
		}
		left = (int64_t)(end - now_mono_ms());
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			msg_reader_reset(&rd);
			return -2;
		}
	}
}

/* Send HELLO with build b; the reply's type, or 0 when the daemon hung up. */
static int hello(int fd, const char *b)
{
	struct wbuf w;
	struct msg m;
	int type;

	wbuf_init(&w);
	wire_put_u32(&w, MSG_PROTOCOL);
	wire_put_str(&w, b);
	assert_int_equal(msg_send(fd, MSG_HELLO, w.p, w.len, NULL, 0), 0);
	wbuf_free(&w);
	if (recv_msg(fd, &m, 3000) != 1)
		return 0;
	type = m.type;
	msg_free(&m);
	return type;
}

/*
 * The daemon's verdict on this connection: DROPPED (EOF with no reply),
 * ERRORED (a MSG_ERROR reply, connection kept), or what else it sent.
 */
enum verdict { DROPPED = 1, ERRORED, SILENT, OTHER };

static enum verdict verdict_of(int fd, uint16_t *code)
{
	struct msg m;
	int rc = recv_msg(fd, &m, 3000);
	enum verdict v;

	if (rc == 0 || rc == -1)
		return DROPPED;
	if (rc == -2)
		return SILENT;
	v = OTHER;
	if (m.type == MSG_ERROR) {
		struct rbuf r;

		rbuf_init(&r, m.payload, m.len);
		if (code)
			*code = wire_get_u16(&r);
		v = ERRORED;
	}
	msg_free(&m);
	return v;
}

/* A normal client still gets in, and STATUS still answers. */
static void assert_daemon_answers(void)
{
	int fd = conn();
	struct msg m;

	assert_int_equal(hello(fd, build), MSG_WELCOME);
	assert_int_equal(msg_send(fd, MSG_STATUS, NULL, 0, NULL, 0), 0);
	assert_int_equal(recv_msg(fd, &m, 3000), 1);
	assert_int_equal(m.type, MSG_WELCOME);
	msg_free(&m);
	close(fd);
}

static int count_fds(pid_t pid)
{
	char path[64];
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- the daemon ------------------------------------------------------------------ */

static int start_daemon(void)
{
	const char *bd = getenv("BOXY_BUILDDIR");
	char *boxy = xasprintf("%s/boxy", bd ? bd : ".");
	char tmpl[] = "/tmp/boxy-proto.XXXXXX";
	uint64_t end;

	if (access(boxy, X_OK) != 0) {
		free(boxy);
		return -1;
	}
	tmpdir = xstrdup(mkdtemp(tmpl));
	chmod(tmpdir, 0700);
	setenv("XDG_RUNTIME_DIR", tmpdir, 1);
	setenv("XDG_STATE_HOME", tmpdir, 1);
	sock_path = xasprintf("%s/boxy/daemon.sock", tmpdir);
	log_path = xasprintf("%s/daemon.stderr", tmpdir);
	daemon_pid = fork();
	if (daemon_pid == 0) {
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 2);
		execl(boxy, "boxy", "daemon", "serve", (char *)NULL);
		_exit(127);
	}
	free(boxy);
	end = now_mono_ms() + 5000;
	while (access(sock_path, F_OK) != 0 && now_mono_ms() < end)
		usleep(10000);
	return access(sock_path, F_OK) == 0 ? 0 : -1;
}

static int group_setup(void **state)
{
	const char *s = getenv("BOXY_PROTO_SOCK");
	struct msg m;
	struct rbuf r;
	char *b, *words;
	int fd;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	if (s && *s) {
		sock_path = xstrdup(s);
		/* The live daemon's log, when the caller names it (tests/e2e/daemon-lifecycle.sh does). */
		if (getenv("BOXY_PROTO_LOG") && *getenv("BOXY_PROTO_LOG"))
			log_path = xstrdup(getenv("BOXY_PROTO_LOG"));
	} else if (start_daemon() < 0)
		return -1;
	/* Learn the daemon's build from its refusal of a made-up one. */
	fd = conn();
	assert_int_equal(msg_send(fd, MSG_HELLO, "\1\0\0\0\1\0\0\0x", 9, NULL, 0), 0);
	if (recv_msg(fd, &m, 3000) != 1 || m.type != MSG_REFUSE)
		return -1;
	rbuf_init(&r, m.payload, m.len);
	wire_get_u16(&r);
	words = wire_get_str(&r, 4096);
	b = wire_get_str(&r, 64);
	served_pid = (pid_t)wire_get_u32(&r);
	snprintf(build, sizeof(build), "%s", b ? b : "");
	free(words);
	free(b);
	msg_free(&m);
	close(fd);
	usleep(100000);
	fds_before = count_fds(served_pid);
	return build[0] ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	if (tmpdir) {
		char *cmd = xasprintf("rm -rf '%s'", tmpdir);

		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
		free(cmd);
	}
	return 0;
}

static bool log_has(const char *needle)
{
	char *text = NULL;
	bool found;

	if (!log_path)
		return true;            /* not our daemon: its log is not ours to read */
	usleep(50000);
	if (read_file(log_path, 1 << 20, &text, NULL) < 0)
		return false;
	found = strstr(text, needle) != NULL;
	free(text);
	return found;
}

/* ---- framing ------------------------------------------------------------------------ */

/* Raw bytes before any hello; each row must end with the client dropped. */
struct raw_row {
	const char *what;
	uint8_t bytes[32];
	size_t len;
	bool half_close;            /* shut our side down after sending (vanishing client) */
	const char *log;            /* the daemon's log line, when it is ours */
};

static const struct raw_row raw_rows[] = {
	{ "oversized length header", { 0xff, 0xff, 0xff, 0xff, 0x01, 0x01, 0, 0 }, 8, false,
	  "over the" },
	{ "length just over the cap", { 0x01, 0x00, 0x10, 0x00, 0x01, 0x01, 0, 0 }, 8, false,
	  "over the" },
	{ "garbage: an HTTP request", "GET / HTTP/1.1\r\n\r\n", 18, false, "over the" },
	{ "unknown type before hello", { 0, 0, 0, 0, 0x77, 0x77, 0, 0 }, 8, false,
	  "not allowed in its state" },
	{ "MSG_RUN before HELLO", { 0, 0, 0, 0, 0x01, 0x02, 0, 0 }, 8, false,
	  "not allowed in its state" },
	{ "announces 2 descriptors, sends none", { 0, 0, 0, 0, 0x01, 0x01, 2, 0 }, 8, false,
	  "announced 2 descriptors" },
	{ "truncated header, then gone", { 8, 0 }, 2, true, "mid-message" },
	{ "truncated frame (100 announced, 10 sent), then gone",
	  { 100, 0, 0, 0, 0x01, 0x01, 0, 0, 1, 2 }, 10, true, "mid-message" },
	{ "hello with a malformed payload", { 3, 0, 0, 0, 0x01, 0x01, 0, 0, 1, 2, 3 }, 11, false,
	  "malformed hello" },
};

static void test_raw_frames(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(raw_rows); i++) {
		const struct raw_row *row = &raw_rows[i];
		int fd = conn();

		print_message("# %s\n", row->what);
		send_raw(fd, row->bytes, row->len);
		if (row->half_close)
			shutdown(fd, SHUT_WR);
		assert_int_equal(verdict_of(fd, NULL), DROPPED);
		close(fd);
		assert_true(log_has(row->log));
		assert_daemon_answers();
	}
}

/* Descriptors: one the header did not announce, and more than the cap. */
static void test_descriptor_lies(void **state)
{
	static const size_t counts[] = { 1, MSG_MAX_FDS + 1 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		int fd = conn(), p[2], fds[MSG_MAX_FDS + 1];
		uint8_t h[8];
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int) * (MSG_MAX_FDS + 1))];
		} ctl;
		struct iovec iov = { .iov_base = h, .iov_len = 8 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		struct cmsghdr *c;

		assert_int_equal(pipe(p), 0);
		for (size_t j = 0; j < counts[i]; j++)
			fds[j] = p[0];
		header(h, 0, MSG_STATUS, 0);        /* announces none */
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * counts[i]);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * counts[i]);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * counts[i]);
		assert_int_equal(sendmsg(fd, &mh, MSG_NOSIGNAL), 8);
		assert_int_equal(verdict_of(fd, NULL), DROPPED);
		close(fd);
		close(p[0]);
		close(p[1]);
		assert_daemon_answers();
	}
}

/* After hello, messages its state does not allow. */
static void test_out_of_state(void **state)
{
	static const uint16_t types[] = { MSG_HELLO, MSG_INPUT, MSG_DETACH, MSG_OUTPUT, 0x0999 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		int fd = conn();
		uint8_t h[8];

		assert_int_equal(hello(fd, build), MSG_WELCOME);
		header(h, 0, types[i], 0);
		send_raw(fd, h, 8);
		assert_int_equal(verdict_of(fd, NULL), DROPPED);
		close(fd);
	}
	assert_daemon_answers();
}

/*
 * MSG_RESUME: malformed (no prefix, a prefix that is no hex, a flag of 2, bytes
 * after) is an error reply, never a crash; a session that is not there, or
 * not frozen, is an error naming it; the connection goes on serving.
 */
static void test_resume_requests(void **state)
{
	static const struct {
		const char *prefix;
		uint8_t flag;
		bool trailing;
	} rows[] = {
		{ NULL, 0, false },
		{ "zz", 0, false },
		{ "abc", 2, false },
		{ "abc", 1, true },
		{ "0123456789abcdef", 0, false },      /* no such session */
	};
	int fd = conn();

	(void)state;
	assert_int_equal(hello(fd, build), MSG_WELCOME);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct wbuf w;
		uint16_t code = 0;

		wbuf_init(&w);
		wire_put_str(&w, rows[i].prefix);
		wire_put_u8(&w, rows[i].flag);
		if (rows[i].trailing)
			wire_put_u32(&w, 0xdeadbeef);
		assert_int_equal(msg_send(fd, MSG_RESUME, w.p, w.len, NULL, 0), 0);
		wbuf_free(&w);
		assert_int_equal(verdict_of(fd, &code), ERRORED);
		assert_int_equal(code, i < 4 ? 2 : 1);
	}
	close(fd);
	assert_daemon_answers();
}

/*
 * MSG_GATE: malformed (no id, a prefix rather than a whole id, no hex, no
 * words, a word --fail-on does not know, bytes after) is an error reply
 * with exit code 2, never a crash; a session the store does not have is an
 * error naming it; the connection goes on serving.
 */
static void test_gate_requests(void **state)
{
	static const struct {
		const char *id, *words;
		bool trailing;
		uint16_t code;
	} rows[] = {
		{ NULL, "deny", false, 2 },
		{ "0123456789abcde", "deny", false, 2 },
		{ "0123456789abcdeZ", "deny", false, 2 },
		{ "0123456789abcdef", NULL, false, 2 },
		{ "0123456789abcdef", "", false, 2 },
		{ "0123456789abcdef", "deny,nope", false, 2 },
		{ "0123456789abcdef", "deny", true, 2 },
		{ "0123456789abcdef", "deny,new-destination", false, 1 },    /* no such session */
	};
	int fd = conn();

	(void)state;
	assert_int_equal(hello(fd, build), MSG_WELCOME);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct wbuf w;
		uint16_t code = 0;

		wbuf_init(&w);
		if (rows[i].id)
			wire_put_str(&w, rows[i].id);
		if (rows[i].words)
			wire_put_str(&w, rows[i].words);
		if (rows[i].trailing)
			wire_put_u32(&w, 0xdeadbeef);
		assert_int_equal(msg_send(fd, MSG_GATE, w.p, w.len, NULL, 0), 0);
		wbuf_free(&w);
		assert_int_equal(verdict_of(fd, &code), ERRORED);
		assert_int_equal(code, rows[i].code);
	}
	close(fd);
	assert_daemon_answers();
}

/* A client of another build is refused, and may then only ask for status or shutdown. */
static void test_refused_client_cannot_run(void **state)
{
	int fd = conn();
	struct msg m;
	uint8_t h[8];

	(void)state;
	assert_int_equal(hello(fd, "0000000000000000"), MSG_REFUSE);
	assert_int_equal(msg_send(fd, MSG_STATUS, NULL, 0, NULL, 0), 0);
	assert_int_equal(recv_msg(fd, &m, 3000), 1);
	assert_int_equal(m.type, MSG_WELCOME);
	msg_free(&m);
	header(h, 4, MSG_RUN, 0);
	send_raw(fd, h, 8);
	send_raw(fd, "\0\0\0\0", 4);
	assert_int_equal(verdict_of(fd, NULL), DROPPED);
	close(fd);
	assert_daemon_answers();
}

/* ---- hostile run requests ------------------------------------------------------------ */

enum run_variant {
	RUN_ARGV_COUNT_LIES,        /* says 5 arguments, carries 1 */
	RUN_ARGV_COUNT_HUGE,        /* says 4 billion */
	RUN_ARGV_EMPTY,
	RUN_CWD_WITH_NUL,
	RUN_WORKDIR_WITH_NUL,
	RUN_NET_ENUM,               /* net mode 200 */
	RUN_SECCOMP_ENUM,           /* seccomp mode 99 */
	RUN_TRIPWIRES_UNSET,        /* tripwires neither on nor off (the client finishes it) */
	RUN_TRIPWIRES_ENUM,         /* tripwires 3 */
	RUN_FAIL_ON_WORD,           /* --fail-on leak, a word the flag does not know */
	RUN_ON_ALERT_WORD,          /* --on-alert dns=thaw: an action the flag does not know */
	RUN_ON_ALERT_UNCANON,       /* "dns=freeze,freeze": what the flag takes, not as it sends it */
	RUN_ON_DENIALS_HUGE,        /* --on-denials past the largest count */
	RUN_MOUNT_ENUM,             /* mount kind 99 */
	RUN_BOOL_7,                 /* tailscale = 7 */
	RUN_STRING_PAST_END,        /* profile length 1000, frame ends first */
	RUN_TRAILING_BYTES,
	RUN_RELATIVE_CWD,
	RUN_FDS_MISSING,            /* a non-tty run with no descriptors */
	RUN_TTYS_RANGE,             /* a terminal mask naming fd 3 */
	RUN_RELATIVE_MOUNT,         /* --ro tmp: the client makes every path absolute */
	RUN_UNNORMAL_WORKDIR,       /* /tmp/../etc: and normal */
	RUN_DST_ON_RO,              /* a destination on a mount that is not a copy */
	RUN_HOST_UPPER,             /* a host name the client would have lower-cased */
	RUN_CIDR_HOST_BITS,         /* 10.1.0.0/8 in binary */
	RUN_HTTP_RULE_BAD,          /* an --allow-http rule the flag would refuse */
	RUN_FD_SLOT_UNKNOWN,        /* a descriptor slot past the pcap file's */
	RUN_VALID,                  /* nothing broken (not a row of run_rows) */
};

/* A whole MSG_RUN payload, valid except for what the variant breaks. */
static void run_payload(struct wbuf *w, enum run_variant v)
{
	char *argv[] = { "true", NULL }, *env[] = { "PATH=/usr/bin:/bin", NULL };

	if (v == RUN_STRING_PAST_END) {
		wire_put_u32(w, 1000);
		wire_put_bytes(w, "x", 1);
		return;
	}
	wire_put_str(w, NULL);                          /* profile */
	if (v == RUN_ARGV_COUNT_LIES) {
		wire_put_u32(w, 5);
		wire_put_str(w, "true");
	} else if (v == RUN_ARGV_COUNT_HUGE) {
		wire_put_u32(w, 0xfffffffeu);
	} else if (v == RUN_ARGV_EMPTY) {
		wire_put_u32(w, 0);
	} else {
		wire_put_strv(w, argv);
	}
	if (v == RUN_UNNORMAL_WORKDIR) {
		wire_put_str(w, "/tmp/../etc");
	} else if (v == RUN_WORKDIR_WITH_NUL) {
		static const uint8_t wd[] = { 6, 0, 0, 0, '/', 't', 'm', 0, 'p', '/' };

		for (size_t i = 0; i < sizeof(wd); i++)
			wire_put_u8(w, wd[i]);
	} else {
		wire_put_str(w, "/tmp");                /* workdir */
	}
	wire_put_u8(w, v == RUN_NET_ENUM ? 200 : 3);    /* net: none */
	if (v == RUN_HOST_UPPER) {
		wire_put_u32(w, 1);
		wire_put_str(w, "Example.COM");
		wire_put_u32(w, 0);
	} else {
		wire_put_u32(w, 0);                     /* hosts */
	}
	wire_put_u32(w, 0);                             /* ports */
	if (v == RUN_CIDR_HOST_BITS) {
		static const uint8_t a[16] = { 10, 1 };

		wire_put_u32(w, 1);
		wire_put_u8(w, 4);                      /* IPv4 */
		wire_put_u8(w, 8);                      /* /8 */
		for (size_t i = 0; i < sizeof(a); i++)
			wire_put_u8(w, a[i]);
		wire_put_str(w, "10.0.0.0/8");
	} else {
		wire_put_u32(w, 0);                     /* cidrs */
	}
	wire_put_u8(w, v == RUN_BOOL_7 ? 7 : 0);        /* tailscale */
	if (v == RUN_HTTP_RULE_BAD) {
		wire_put_u32(w, 1);
		wire_put_str(w, "method=GET host=a.test");
	} else {
		wire_put_u32(w, 0);                     /* http rules */
	}
	if (v == RUN_MOUNT_ENUM || v == RUN_RELATIVE_MOUNT || v == RUN_DST_ON_RO) {
		wire_put_u32(w, 1);
		wire_put_u8(w, v == RUN_MOUNT_ENUM ? 99 : 0);   /* 0: MOUNT_RO */
		wire_put_str(w, v == RUN_RELATIVE_MOUNT ? "tmp" : "/tmp");
		wire_put_str(w, v == RUN_DST_ON_RO ? "/etc" : NULL);
	} else {
		wire_put_u32(w, 0);
	}
	wire_put_u8(w, 0);                              /* allow_git_write */
	wire_put_u32(w, 0);                             /* env specs */
	wire_put_u64(w, 0);
	wire_put_u64(w, 0);
	wire_put_u32(w, 0);
	wire_put_u64(w, 0);
	wire_put_str(w, NULL);
	wire_put_str(w, NULL);
	wire_put_str(w, NULL);
	wire_put_u64(w, 0);
	wire_put_str(w, v == RUN_FAIL_ON_WORD ? "deny,leak" : NULL);       /* fail_on */
	wire_put_str(w, NULL);                          /* report */
	wire_put_str(w, v == RUN_ON_ALERT_WORD ? "dns=thaw" :
		     v == RUN_ON_ALERT_UNCANON ? "dns=freeze,freeze" : NULL);   /* on_alert */
	wire_put_u64(w, v == RUN_ON_DENIALS_HUGE ? (1ULL << 40) : 0);     /* on_denials */
	wire_put_u8(w, v == RUN_SECCOMP_ENUM ? 99 : 1);
	/* tripwires: 2 is off */
	wire_put_u8(w, v == RUN_TRIPWIRES_UNSET ? 0 : v == RUN_TRIPWIRES_ENUM ? 3 : 2);
	wire_put_u8(w, 0);                              /* tty */
	wire_put_u8(w, 0);                              /* verbose */
	wire_put_u8(w, 0);                              /* detach */
	wire_put_u8(w, 0);                              /* raw_terminal */
	wire_put_u8(w, 0);                              /* no_attribution */
	/* the request around the run-spec */
	wire_put_strv(w, env);
	if (v == RUN_CWD_WITH_NUL) {
		static const uint8_t cwd[] = { 5, 0, 0, 0, '/', 't', 0, 'm', 'p' };

		for (size_t i = 0; i < sizeof(cwd); i++)
			wire_put_u8(w, cwd[i]);
	} else {
		wire_put_str(w, v == RUN_RELATIVE_CWD ? "tmp" : "/tmp");
	}
	wire_put_str(w, "/tmp");                        /* home */
	wire_put_u8(w, v == RUN_TTYS_RANGE ? 8 : 0);    /* ttys */
	wire_put_u16(w, 24);
	wire_put_u16(w, 80);
	/* descriptor slots: stdin, stdout, stderr (and one past the last, bit 7) */
	wire_put_u8(w, v == RUN_FD_SLOT_UNKNOWN ? 0x87 : 0x07);
	if (v == RUN_TRAILING_BYTES)
		wire_put_u32(w, 0xdeadbeef);
}

static const struct {
	enum run_variant v;
	const char *what;
} run_rows[] = {
	{ RUN_ARGV_COUNT_LIES, "argv count lies" },
	{ RUN_ARGV_COUNT_HUGE, "argv count of 4 billion" },
	{ RUN_ARGV_EMPTY, "empty argv" },
	{ RUN_CWD_WITH_NUL, "cwd with a NUL" },
	{ RUN_WORKDIR_WITH_NUL, "workdir with a NUL" },
	{ RUN_NET_ENUM, "unknown network mode" },
	{ RUN_SECCOMP_ENUM, "unknown seccomp mode" },
	{ RUN_TRIPWIRES_UNSET, "tripwires left unset" },
	{ RUN_TRIPWIRES_ENUM, "tripwires of 3" },
	{ RUN_FAIL_ON_WORD, "a --fail-on word the flag refuses" },
	{ RUN_ON_ALERT_WORD, "an --on-alert action the flag refuses" },
	{ RUN_ON_ALERT_UNCANON, "an --on-alert list not in its canonical form" },
	{ RUN_ON_DENIALS_HUGE, "an --on-denials count past the largest" },
	{ RUN_MOUNT_ENUM, "unknown mount kind" },
	{ RUN_BOOL_7, "a boolean of 7" },
	{ RUN_HTTP_RULE_BAD, "an HTTP rule --allow-http refuses" },
	{ RUN_STRING_PAST_END, "a string running past the frame" },
	{ RUN_TRAILING_BYTES, "trailing bytes" },
	{ RUN_RELATIVE_CWD, "a relative cwd" },
	{ RUN_FDS_MISSING, "non-tty run without its descriptors" },
	{ RUN_TTYS_RANGE, "terminal mask beyond fds 0-2" },
	{ RUN_RELATIVE_MOUNT, "a relative mount source" },
	{ RUN_UNNORMAL_WORKDIR, "a workdir with '..'" },
	{ RUN_DST_ON_RO, "a destination on a read-only mount" },
	{ RUN_HOST_UPPER, "an upper-case host name" },
	{ RUN_CIDR_HOST_BITS, "a CIDR with host bits set" },
	{ RUN_FD_SLOT_UNKNOWN, "a descriptor slot that does not exist" },
};

static void test_hostile_run(void **state)
{
	int dn = open("/dev/null", O_RDWR | O_CLOEXEC), null3[3] = { dn, dn, dn };

	(void)state;
	assert_true(dn >= 0);
	for (size_t i = 0; i < ARRAY_SIZE(run_rows); i++) {
		int fd = conn();
		struct wbuf w;
		uint16_t code = 0;
		enum verdict v;

		print_message("# %s\n", run_rows[i].what);
		assert_int_equal(hello(fd, build), MSG_WELCOME);
		wbuf_init(&w);
		run_payload(&w, run_rows[i].v);
		/* Real descriptors, so that each row fails on its own fault alone. */
		assert_int_equal(msg_send(fd, MSG_RUN, w.p, w.len, null3,
					  run_rows[i].v == RUN_FDS_MISSING ? 0 : 3), 0);
		wbuf_free(&w);
		v = verdict_of(fd, &code);
		/* An error reply with the usage code: the run never started. */
		assert_int_equal(v, ERRORED);
		assert_int_equal(code, 2);
		/* The connection is still usable: the daemon kept its state. */
		assert_int_equal(msg_send(fd, MSG_STATUS, NULL, 0, NULL, 0), 0);
		assert_int_equal(verdict_of(fd, NULL), OTHER);
		close(fd);
	}
	close(dn);
	assert_daemon_answers();
}

/*
 * A terminal among the stdio descriptors of a run that announced none: the
 * daemon refuses it (only the session's own pty may be a payload's terminal).
 */
static void test_run_terminal_unannounced(void **state)
{
	int dn = open("/dev/null", O_RDWR | O_CLOEXEC), pt = posix_openpt(O_RDWR | O_NOCTTY), sl;
	int fds[3];
	char name[64];
	struct wbuf w;
	uint16_t code = 0;
	int fd;

	(void)state;
	assert_true(dn >= 0 && pt >= 0);
	assert_int_equal(grantpt(pt), 0);
	assert_int_equal(unlockpt(pt), 0);
	assert_int_equal(ptsname_r(pt, name, sizeof(name)), 0);
	sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(sl >= 0);
	fds[0] = dn;
	fds[1] = sl;
	fds[2] = dn;
	fd = conn();
	assert_int_equal(hello(fd, build), MSG_WELCOME);
	wbuf_init(&w);
	run_payload(&w, RUN_VALID);
	assert_int_equal(msg_send(fd, MSG_RUN, w.p, w.len, fds, 3), 0);
	wbuf_free(&w);
	{
		struct msg m;
		struct rbuf r;
		char *words;

		assert_int_equal(recv_msg(fd, &m, 10000), 1);
		assert_int_equal(m.type, MSG_ERROR);
		rbuf_init(&r, m.payload, m.len);
		code = wire_get_u16(&r);
		words = wire_get_str(&r, 4096);
		assert_int_equal(code, 125);
		assert_non_null(words);
		assert_non_null(strstr(words, "is a terminal"));
		free(words);
		msg_free(&m);
	}
	close(fd);
	close(sl);
	close(pt);
	close(dn);
	assert_daemon_answers();
}

/* A frame of exactly the cap is read whole (and refused as a hello), not mistaken for garbage. */
static void test_max_size_frame(void **state)
{
	uint8_t h[8], *big = xcalloc(1, MSG_MAX_LEN);
	int fd = conn();
	size_t off = 0;

	(void)state;
	header(h, MSG_MAX_LEN, MSG_HELLO, 0);
	send_raw(fd, h, 8);
	while (off < MSG_MAX_LEN) {
		ssize_t n = send(fd, big + off, MSG_MAX_LEN - off, MSG_NOSIGNAL);

		assert_true(n > 0);
		off += (size_t)n;
	}
	free(big);
	assert_int_equal(verdict_of(fd, NULL), DROPPED);
	close(fd);
	assert_true(log_has("malformed hello"));
	assert_daemon_answers();
}

/* Many clients vanishing at once, some mid-frame. */
static void test_vanishing_crowd(void **state)
{
	int fds[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
		uint8_t h[8];

		fds[i] = conn();
		header(h, 50, MSG_HELLO, 0);
		send_raw(fds[i], h, i % 2 ? 8 : 3);
	}
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		close(fds[i]);
	assert_daemon_answers();
}

static long rss_kb(pid_t pid)
{
	char path[64], *text = NULL, *p;
	long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, 1 << 16, &text, NULL) < 0)
		return -1;
	p = strstr(text, "VmRSS:");
	if (p)
		kb = strtol(p + 6, NULL, 10);
	free(text);
	return kb;
}

/*
 * A client that floods requests and never reads the replies: the daemon stops
 * reading it once a queue's worth is waiting, so its memory stays bounded
 * and it still serves everyone else.
 */
static void test_reply_flood(void **state)
{
	int fd = conn();
	long before = rss_kb(served_pid), after;
	uint8_t frames[8 * 512];
	size_t sent = 0;
	uint64_t end = now_mono_ms() + 3000;

	(void)state;
	assert_int_equal(hello(fd, build), MSG_WELCOME);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	for (size_t i = 0; i < 512; i++)
		header(frames + 8 * i, 0, MSG_STATUS, 0);
	/* Until the socket refuses for half a second: the daemon stopped reading us. */
	while (now_mono_ms() < end && sent < 200000) {
		ssize_t n = send(fd, frames, sizeof(frames), MSG_NOSIGNAL);
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (n > 0) {
			sent += (size_t)n / 8;
			continue;
		}
		if (poll(&p, 1, 500) == 0)
			break;
	}
	after = rss_kb(served_pid);
	print_message("# %zu STATUS requests sent unread; daemon RSS %ld kB -> %ld kB\n",
		      sent, before, after);
	/* 200 000 replies of ~60 bytes would be 12 MB and more; a paused client costs ~1 MiB. */
	assert_true(sent < 200000);
#if !defined(__SANITIZE_ADDRESS__)
	/* (Under AddressSanitizer, freed memory sits in its quarantine: RSS says nothing.) */
	if (before > 0 && after > 0)
		assert_true(after - before < 4096);
#endif
	assert_daemon_answers();
	close(fd);
	assert_daemon_answers();
}

/*
 * Opens every directory above path that we own and others cannot search to
 * o+x, and path itself to 0666, recording the old modes in saved (restored by
 * restore_modes). The socket's directory is 0700, which stops another user
 * before the daemon sees it; to test the daemon's own SO_PEERCRED check the
 * case opens our private directories and socket for its length.
 */
struct saved_mode {
	char *path;
	mode_t mode;
};

static size_t open_modes(const char *path, struct saved_mode *saved, size_t max)
{
	char *p = xstrdup(path), *slash;
	struct stat st;
	size_t n = 0;

	if (stat(p, &st) == 0 && n < max) {
		saved[n++] = (struct saved_mode){ xstrdup(p), st.st_mode & 07777 };
		chmod(p, 0666);
	}
	while ((slash = strrchr(p, '/')) != NULL && slash != p) {
		*slash = '\0';
		if (stat(p, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 0001) || n >= max)
			continue;
		saved[n++] = (struct saved_mode){ xstrdup(p), st.st_mode & 07777 };
		chmod(p, (st.st_mode & 07777) | 0011);
	}
	free(p);
	return n;
}

static void restore_modes(struct saved_mode *saved, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		chmod(saved[i].path, saved[i].mode);
		free(saved[i].path);
	}
}

/* As root: a forked child turned nobody says hello; 0 when it was hung up on. */
static int other_uid_as_root(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		/* No cmocka here: plain exits. 0: hung up on; 1: served; 2: could not connect. */
		struct passwd *pw = getpwnam("nobody");
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct wbuf w;
		struct msg m;
		int fd, rc;

		if (!pw || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
			_exit(3);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(2);
		wbuf_init(&w);
		wire_put_u32(&w, MSG_PROTOCOL);
		wire_put_str(&w, build);
		if (msg_send(fd, MSG_HELLO, w.p, w.len, NULL, 0) < 0)
			_exit(0);
		/* EOF, or ECONNRESET when the daemon closed with our hello unread. */
		rc = recv_msg(fd, &m, 3000);
		_exit(rc == 0 || rc == -1 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * As the unprivileged test user: ask the agent tests/e2e/daemon-lifecycle.sh runs as a
 * second user (tests/lib/other-uid-agent.py, socket in BOXY_PROTO_OTHER_UID)
 * to say hello; its one-line answer, "refused" when it was hung up on.
 */
static char *other_uid_by_agent(const char *agent)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[256];
	size_t got = 0;
	ssize_t n;
	char *req;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", agent);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return xasprintf("cannot reach the agent at %s: %s", agent, strerror(errno));
	}
	req = xasprintf("%s\t%s\n", sock_path, build);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		free(req);
		close(fd);
		return xstrdup("cannot write to the agent");
	}
	free(req);
	while (got < sizeof(line) - 1 && (n = read(fd, line + got, sizeof(line) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return xstrdup(line);
}

/*
 * Another uid is refused: as root through a child turned nobody, as anyone
 * else through the agent of a second user (tests/e2e/daemon-lifecycle.sh). Never skipped:
 * without either, the case fails and says what it needs.
 */
static void test_other_uid_refused(void **state)
{
	struct saved_mode saved[16];
	const char *agent = getenv("BOXY_PROTO_OTHER_UID");
	size_t nsaved;

	(void)state;
	if (geteuid() != 0 && (agent == NULL || *agent == '\0'))
		fail_msg("as uid %d this needs another uid's client: run as root, or under "
			 "tests/e2e/daemon-lifecycle.sh started as root (BOXY_PROTO_OTHER_UID)", (int)geteuid());
	nsaved = open_modes(sock_path, saved, ARRAY_SIZE(saved));
	if (geteuid() == 0) {
		int rc = other_uid_as_root();

		restore_modes(saved, nsaved);
		assert_int_equal(rc, 0);
	} else {
		char *answer = other_uid_by_agent(agent);

		restore_modes(saved, nsaved);
		if (strcmp(answer, "refused") != 0)
			fail_msg("a client of another uid: '%s', want 'refused'", answer);
		free(answer);
	}
	/* Refused by the uid check itself (not only by a later one, such as the
	 * pid-namespace check, which another user's process also fails). */
	if (log_path == NULL)
		fail_msg("no daemon log to tell which check refused (BOXY_PROTO_LOG)");
	assert_true(log_has("refused a connection from uid"));
	assert_daemon_answers();
}

static void test_no_descriptor_leaked(void **state)
{
	int after;

	(void)state;
	/* The daemon closes the earlier tests' clients from its loop: give it time (a
	 * sanitizer build is slow), then compare. */
	for (int i = 0; i < 30; i++) {
		usleep(100000);
		after = count_fds(served_pid);
		if (after == fds_before)
			break;
	}
	if (fds_before < 0 || after < 0) {
		skip();
		return;
	}
	assert_int_equal(after, fds_before);
}

/* ---- the bus and a subscriber that never reads --------------------------------------- */

static void fake_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	client_flush(w->data);
}

static double publish_many(struct session *s, size_t n)
{
	static const char detail[] = "a deliberately long reason, so that frames fill the "
				     "queue quickly and the cap is reached early";
	struct event ev = {
		.kind = "audit", .verdict = "deny", .layer = "seccomp", .subject = "ptrace",
		.detail = detail,
	};
	uint64_t t0 = now_mono_ms();

	for (size_t i = 0; i < n; i++)
		bus_publish(s, &ev);
	return (double)(now_mono_ms() - t0);
}

static void test_slow_subscriber(void **state)
{
	const size_t n = 100000;
	struct server srv;
	struct session *s = xcalloc(1, sizeof(*s));
	struct client *c = xcalloc(1, sizeof(*c));
	int sv[2];
	double base_ms, stuck_ms;
	uint64_t events = 0, loss = 0;
	bool loss_first = false;

	(void)state;
	memset(&srv, 0, sizeof(srv));
	srv.loop = ev_loop_new(EVFLAG_AUTO);
	s->srv = &srv;
	s->pty = -1;
	snprintf(s->id, sizeof(s->id), "00112233445566aa");
	s->started_ms = now_real_ms();
	srv.sessions = s;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
	c->srv = &srv;
	c->fd = sv[0];
	c->role = CLIENT_READY;     /* not subscribed yet: the baseline */
	ev_io_init(&c->ww, fake_writable, c->fd, EV_WRITE);
	c->ww.data = c;
	srv.clients = c;
	alarm(20);                  /* blocking anywhere would be the failure */

	base_ms = publish_many(s, n);
	c->role = CLIENT_WATCHING;
	c->session = s;
	stuck_ms = publish_many(s, n);
	print_message("# %zu events: %.0f ms with no watcher, %.0f ms with a stuck one; "
		      "%llu lost, %zu bytes queued\n", n, base_ms, stuck_ms,
		      (unsigned long long)c->lost, c->outq_bytes);
	/* Bounded queue, events counted lost, and the publisher not held back. */
	assert_true(c->lost > 0);
	assert_true(c->outq_bytes < CLIENT_OUTQ_MAX + 4096);
	assert_true(stuck_ms < 3 * base_ms + 500);

	/* The watcher wakes up and drains; the next event is preceded by LOSS and its count. */
	for (int rounds = 0; rounds < 100000 && c->outq; rounds++) {
		uint8_t buf[65536];

		ev_run(srv.loop, EVRUN_NOWAIT);
		while (recv(sv[1], buf, sizeof(buf), 0) > 0) {
			/* discarded: test_loss_accounting counts them */
		}
	}
	assert_null(c->outq);
	{
		struct event ev = { .kind = "audit", .verdict = "info", .layer = "test",
				    .subject = "after" };
		struct msg_reader rd;
		struct msg m;
		char *err = NULL;
		uint64_t lost = c->lost;

		bus_publish(s, &ev);
		msg_reader_init(&rd);
		while (msg_read(&rd, sv[1], &m, &err) == 1) {
			if (m.type == MSG_LOSS) {
				struct rbuf r;

				rbuf_init(&r, m.payload, m.len);
				loss = wire_get_u64(&r);
				loss_first = events == 0;
			} else if (m.type == MSG_EVENT) {
				events++;
			}
			msg_free(&m);
		}
		free(err);
		msg_reader_reset(&rd);
		assert_true(loss_first);
		assert_int_equal(loss, lost);
		assert_int_equal(events, 1);
	}
	alarm(0);
	srv.clients = NULL;
	close(sv[0]);
	close(sv[1]);
	free(c);
	session_free(s);
	ev_loop_destroy(srv.loop);
}

/* Exact accounting: a watcher whose frames are all read sees n - lost events. */
static void test_loss_accounting(void **state)
{
	const size_t n = 20000;
	struct server srv;
	struct session *s = xcalloc(1, sizeof(*s));
	struct client *c = xcalloc(1, sizeof(*c));
	struct msg_reader rd;
	struct msg m;
	char *err = NULL;
	int sv[2];
	uint64_t events = 0, lost_told = 0;

	(void)state;
	memset(&srv, 0, sizeof(srv));
	srv.loop = ev_loop_new(EVFLAG_AUTO);
	s->srv = &srv;
	s->pty = -1;
	snprintf(s->id, sizeof(s->id), "00112233445566bb");
	s->started_ms = now_real_ms();
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
	c->srv = &srv;
	c->fd = sv[0];
	c->role = CLIENT_WATCHING;
	c->session = s;
	ev_io_init(&c->ww, fake_writable, c->fd, EV_WRITE);
	c->ww.data = c;
	srv.clients = c;
	alarm(20);
	publish_many(s, n);
	msg_reader_init(&rd);
	for (int rounds = 0; rounds < 1000000; rounds++) {
		int rc;

		ev_run(srv.loop, EVRUN_NOWAIT);
		while ((rc = msg_read(&rd, sv[1], &m, &err)) == 1) {
			if (m.type == MSG_EVENT)
				events++;
			msg_free(&m);
		}
		if (!c->outq && rc == 0)
			break;
	}
	/* One more event after the drain carries the LOSS report in front of it. */
	{
		struct event ev = { .kind = "audit", .verdict = "info", .layer = "test",
				    .subject = "after" };

		bus_publish(s, &ev);
	}
	while (msg_read(&rd, sv[1], &m, &err) == 1) {
		if (m.type == MSG_LOSS) {
			struct rbuf r;

			rbuf_init(&r, m.payload, m.len);
			lost_told = wire_get_u64(&r);
		} else if (m.type == MSG_EVENT) {
			events++;
		}
		msg_free(&m);
	}
	free(err);
	msg_reader_reset(&rd);
	alarm(0);
	assert_true(c->lost > 0);
	assert_int_equal(lost_told, c->lost);
	assert_int_equal(events + lost_told, n + 1);
	srv.clients = NULL;
	close(sv[0]);
	close(sv[1]);
	free(c);
	session_free(s);
	ev_loop_destroy(srv.loop);
}

/* A payload dialling thousands of addresses: the per-session table stays bounded, totals exact. */
static void test_destinations_bounded(void **state)
{
	const size_t n = 5000;
	struct server srv;
	struct session *s = xcalloc(1, sizeof(*s));
	struct dest *other = NULL;
	uint64_t t0;

	(void)state;
	memset(&srv, 0, sizeof(srv));
	s->srv = &srv;
	s->pty = -1;
	snprintf(s->id, sizeof(s->id), "00112233445566cc");
	t0 = now_mono_ms();
	for (size_t i = 0; i < n; i++) {
		char addr[32];
		struct event ev = { .kind = "tcp", .verdict = "deny", .layer = "net.ip",
				    .addr = addr, .port = 22 };

		snprintf(addr, sizeof(addr), "10.%zu.%zu.1", i / 250, i % 250);
		bus_publish(s, &ev);
	}
	print_message("# %zu distinct destinations published in %llu ms\n", n,
		      (unsigned long long)(now_mono_ms() - t0));
	assert_int_equal(s->ndests, SESSION_DESTS_MAX);
	assert_int_equal(s->conns, n);
	assert_int_equal(s->denied, n);
	for (size_t i = 0; i < s->ndests; i++)
		if (strcmp(s->dests[i].name, DEST_OTHER) == 0)
			other = &s->dests[i];
	assert_non_null(other);
	assert_int_equal(other->conns, n - (SESSION_DESTS_MAX - 1));
	session_free(s);
}

int main(void)
{
	/* One group (one TAP plan): the bus cases first, then the live daemon's. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_subscriber),
		cmocka_unit_test(test_loss_accounting),
		cmocka_unit_test(test_destinations_bounded),
		cmocka_unit_test(test_raw_frames),
		cmocka_unit_test(test_descriptor_lies),
		cmocka_unit_test(test_out_of_state),
		cmocka_unit_test(test_refused_client_cannot_run),
		cmocka_unit_test(test_resume_requests),
		cmocka_unit_test(test_gate_requests),
		cmocka_unit_test(test_hostile_run),
		cmocka_unit_test(test_run_terminal_unannounced),
		cmocka_unit_test(test_max_size_frame),
		cmocka_unit_test(test_vanishing_crowd),
		cmocka_unit_test(test_reply_flood),
		cmocka_unit_test(test_other_uid_refused),
		cmocka_unit_test(test_no_descriptor_leaked),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
