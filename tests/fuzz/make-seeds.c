/*
 * make-seeds.c — writes the seed corpora of the request, msg and plan fuzz
 * targets with the real encoders (proto/daemon-msg.c, proto/outq.c's header
 * packer, init/plan.c), so a seed is always what boxy sends today. Run it
 * after a change to one of those formats (doc/fuzzing.md says how):
 *
 *     make-seeds CORPUS-DIR      (writes CORPUS-DIR/{request,msg,plan}/NAME)
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "proto/daemon-msg.h"
#include "proto/msg.h"
#include "init/plan.h"

static const char *root;

/* Write n bytes to ROOT/dir/name, after a first byte when lead >= 0. */
static void seed(const char *dir, const char *name, int lead, const void *p, size_t n)
{
	char *d = xasprintf("%s/%s", root, dir), *path = xasprintf("%s/%s", d, name);
	FILE *f;

	if (mkdir(d, 0755) < 0 && errno != EEXIST)
		fatal_errno("%s", d);
	f = fopen(path, "wb");
	if (!f || (lead >= 0 && fputc(lead, f) == EOF) || (n && fwrite(p, 1, n, f) != n) ||
	    fclose(f) != 0)
		fatal_errno("%s", path);
	free(path);
	free(d);
}

/* One request seed: fuzz-request's first byte picks the decoder. */
static void request(const char *name, int which, struct wbuf *w)
{
	seed("request", name, which, w->p, w->len);
	wbuf_free(w);
}

/* A frame as a client writes it, appended to all. */
static void frame(struct wbuf *all, uint16_t type, const struct wbuf *payload)
{
	uint8_t h[MSG_HEADER_LEN];

	msg_put_header(h, (uint32_t)payload->len, type, 0);
	wbuf_put(all, h, sizeof(h));
	wbuf_put(all, payload->p, payload->len);
}

static void requests(void)
{
	struct wbuf w;

	wbuf_init(&w);
	dmsg_encode_hello(&w, MSG_PROTOCOL, "0123456789abcdef");
	request("hello", 0, &w);
	dmsg_encode_target(&w, "9f3c1ba2");
	request("attach", 1, &w);
	dmsg_encode_target(&w, NULL);
	request("watch-only", 2, &w);
	dmsg_encode_target(&w, "9f3c1ba20011aabb");
	request("watch-id", 2, &w);
	dmsg_encode_stop(&w, "9f3c", true);
	request("stop-kill", 3, &w);
	dmsg_encode_stop(&w, "9f3c1ba20011aabb", false);
	request("stop", 3, &w);
	dmsg_encode_winsize(&w, 24, 80);
	request("winsize", 4, &w);
	dmsg_encode_gate(&w, "0123456789abcdef", "deny,new-destination");
	request("gate", 5, &w);
}

static void frames(void)
{
	struct wbuf all, w;

	wbuf_init(&all);
	wbuf_init(&w);
	dmsg_encode_hello(&w, MSG_PROTOCOL, "0123456789abcdef");
	frame(&all, MSG_HELLO, &w);
	wbuf_free(&w);
	dmsg_encode_target(&w, "9f3c1ba2");
	frame(&all, MSG_ATTACH, &w);
	wbuf_free(&w);
	wbuf_put(&w, "ls -l\r", 6);
	frame(&all, MSG_INPUT, &w);
	wbuf_free(&w);
	dmsg_encode_winsize(&w, 50, 132);
	frame(&all, MSG_WINSIZE, &w);
	frame(&all, MSG_DETACH, &(struct wbuf){ 0 });
	wbuf_free(&w);
	seed("msg", "session", 7, all.p, all.len);
	seed("msg", "session-bytewise", 0, all.p, all.len);
	wbuf_free(&all);
	frame(&all, MSG_STATUS, &(struct wbuf){ 0 });
	frame(&all, MSG_SHUTDOWN, &(struct wbuf){ 0 });
	seed("msg", "status-shutdown", 63, all.p, all.len);
	wbuf_free(&all);
}

static void plans(void)
{
	char *argv[] = { "sh", "-c", "make test", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "TERM=xterm", NULL };
	char *roots[] = { "/home/u/proj", "/home/u/.local/state/boxy", NULL };
	struct mount_spec mounts[] = {
		{ .kind = MOUNT_RO, .src = "/usr", .dst = "/usr" },
		{ .kind = MOUNT_RW, .src = "/home/u/proj", .dst = "/home/u/proj" },
		{ .kind = MOUNT_COPY_RO, .src = "/home/u/.gitconfig", .dst = "/home/u/.gitconfig" },
	};
	uint16_t ports[] = { 443, 80 };
	struct plan p = {
		.argv = argv, .envp = envp, .workdir = "/home/u/proj", .home = "/home/u",
		.user = "u", .hostname = "boxy", .uid = 1000, .gid = 1000,
		.mounts = mounts, .nmounts = 3, .net = NET_NONE, .seccomp = SECCOMP_STRICT,
		.tty = true, .foreground = true, .tmpfs_size = 512u << 20, .pids = 4096,
		.landlock_abi = 4,
	};
	char *buf;
	size_t len;

	if (plan_encode(&p, &buf, &len) < 0)
		fatal("plan_encode");
	seed("plan", "offline", -1, buf, len);
	free(buf);
	p.net = NET_ALLOWLIST;
	p.dns_search = "tail0a1b2.ts.net";
	p.ports = ports;
	p.nports = 2;
	p.roots = roots;
	p.new_session = true;
	p.allow_git_write = true;
	if (plan_encode(&p, &buf, &len) < 0)
		fatal("plan_encode");
	seed("plan", "networked", -1, buf, len);
	free(buf);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds CORPUS-DIR\n");
		return 2;
	}
	root = argv[1];
	requests();
	frames();
	plans();
	return 0;
}
