/*
 * bench-bus.c — how many events a second the daemon's bus pushes into the
 * session store while a watcher is attached.
 *
 * It drives the daemon's own code (bus_publish, bus_flush) with a real
 * store on disk and a watcher on a socketpair that a second thread reads as
 * fast as it can, flushing to the store every 200 ms as the daemon's timer
 * does. The mix is what a busy networked run produces: connections allowed
 * and denied, DNS answers, and audit decisions. Prints one line:
 * events, seconds, events/s, events the watcher received and lost, rows stored.
 *
 * Usage: bench-bus DIR [EVENTS]   (DIR: where to put the scratch database)
 */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/server.h"
#include "store/store.h"
#include "common/util.h"

static int reader_fd;
static volatile int reader_stop;
static unsigned long long reader_frames;

/* The watcher: reads and counts frames (MSG_EVENT and friends) until told to stop. */
static void *reader(void *arg)
{
	struct msg_reader rd;
	struct msg m;

	(void)arg;
	msg_reader_init(&rd);
	while (!reader_stop) {
		char *err = NULL;
		int rc = msg_read(&rd, reader_fd, &m, &err);

		free(err);
		if (rc == 1) {
			reader_frames += m.type == MSG_EVENT;
			msg_free(&m);
		} else if (rc == 0) {
			usleep(200);
		} else {
			break;
		}
	}
	msg_reader_reset(&rd);
	return NULL;
}

static void writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	client_flush(w->data);
}

static int count_rows(void *ctx, int ncol, char **vals, char **names)
{
	(void)ncol;
	(void)names;
	*(long long *)ctx = strtoll(vals[0] ? vals[0] : "0", NULL, 10);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	char *argv_run[] = { "bench", NULL }, *path, *err = NULL;
	struct server srv;
	struct session *s = xcalloc(1, sizeof(*s));
	struct client *c = xcalloc(1, sizeof(*c));
	uint64_t t0, last_flush, elapsed;
	unsigned long long rate;
	long long rows = 0, r;
	pthread_t th;
	int sv[2];

	if (argc < 2) {
		fprintf(stderr, "usage: bench-bus DIR [EVENTS]\n");
		return 2;
	}
	memset(&srv, 0, sizeof(srv));
	/* BOXY_BENCH_DB: another path for the database (bench/top.sh reads it with boxy top). */
	path = getenv("BOXY_BENCH_DB") ? xstrdup(getenv("BOXY_BENCH_DB")) :
	       xasprintf("%s/bench.db", argv[1]);
	unlink(path);
	if (store_open(path, &srv.store, &err) < 0) {
		fprintf(stderr, "bench-bus: %s\n", err);
		return 1;
	}
	srv.loop = ev_loop_new(EVFLAG_AUTO);
	s->srv = &srv;
	s->pty = -1;
	snprintf(s->id, sizeof(s->id), "bench0000000000a");
	runspec_init(&s->rs);
	s->rs.argv = strv_dup(argv_run);
	s->cwd = xstrdup("/");
	s->started_ms = now_real_ms();
	srv.sessions = s;
	bus_session_begin(s);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		fatal_errno("socketpair");
	c->srv = &srv;
	c->fd = sv[0];
	c->role = CLIENT_WATCHING;
	c->session = s;
	ev_io_init(&c->ww, writable, c->fd, EV_WRITE);
	c->ww.data = c;
	srv.clients = c;
	reader_fd = sv[1];
	pthread_create(&th, NULL, reader, NULL);

	/* BOXY_BENCH_RATE: events per second, paced (0: as fast as it goes). */
	rate = getenv("BOXY_BENCH_RATE") ? strtoull(getenv("BOXY_BENCH_RATE"), NULL, 10) : 0;
	t0 = last_flush = now_mono_ms();
	for (size_t i = 0; i < n; i++) {
		char addr[32], name[32];
		struct event ev = { 0 };

		snprintf(addr, sizeof(addr), "10.0.%zu.%zu", (i / 250) % 250, i % 250);
		snprintf(name, sizeof(name), "host%zu.example", i % 50);
		switch (i % 4) {
		case 0:
			ev = (struct event){ .kind = "tcp", .verdict = "allow", .layer = "net.ip",
					     .addr = addr, .port = 443, .host = name };
			break;
		case 1:
			ev = (struct event){ .kind = "tcp", .verdict = "deny", .layer = "net.ip",
					     .addr = addr, .port = 22, .detail = "not allowed" };
			break;
		case 2:
			ev = (struct event){ .kind = "dns", .verdict = "allow", .layer = "net.dns",
					     .subject = name, .addr = addr, .ttl = 60 };
			break;
		default:
			ev = (struct event){ .kind = "audit", .verdict = "deny", .layer = "seccomp",
					     .subject = "ptrace", .detail = "denied call" };
			break;
		}
		bus_publish(s, &ev);
		if (i % 256 == 0) {
			if (rate) {
				uint64_t due = t0 + (uint64_t)i * 1000 / rate, now = now_mono_ms();

				if (due > now)
					usleep((useconds_t)((due - now) * 1000));
			}
			ev_run(srv.loop, EVRUN_NOWAIT);
			if (now_mono_ms() - last_flush >= 200) {
				bus_flush(&srv);
				last_flush = now_mono_ms();
			}
		}
	}
	bus_flush(&srv);
	elapsed = now_mono_ms() - t0;
	while (c->outq) {
		ev_run(srv.loop, EVRUN_NOWAIT);
		usleep(1000);
	}
	usleep(50000);
	reader_stop = 1;
	pthread_join(th, NULL);

	store_exec(srv.store, "SELECT (SELECT count(*) FROM connections) + (SELECT count(*) FROM "
		   "resolutions) + (SELECT count(*) FROM decisions)", count_rows, &rows, NULL);
	r = rows;
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("cpu_ms %.0f ", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0);
	}
	printf("events %zu seconds %.3f events_per_s %.0f watcher_received %llu watcher_lost "
	       "%llu rows_stored %lld\n", n, (double)elapsed / 1000.0,
	       elapsed ? (double)n * 1000.0 / (double)elapsed : 0.0, reader_frames,
	       (unsigned long long)c->lost, r);
	srv.clients = NULL;
	close(sv[0]);
	close(sv[1]);
	free(c);
	session_free(s);
	store_close(srv.store);
	ev_loop_destroy(srv.loop);
	unlink(path);
	free(path);
	return 0;
}
