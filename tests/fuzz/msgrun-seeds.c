/*
 * msgrun-seeds.c — writes the seed corpus of fuzz-msgrun: a few real run
 * requests, each built from command-line words through the option table
 * (spec_option_apply, runspec_finish) and encoded by the client's encoder,
 * so the seeds follow the layout whenever it changes. Each file is one
 * byte (the number of descriptors) and then the payload. Run by hand after
 * changing the layout:
 *
 *   cc -I build -I . -I src -o /tmp/seeds tests/fuzz/msgrun-seeds.c \
 *      src/proto/msg-run.c src/proto/wire.c src/spec/options.c src/spec/values.c \
 *      src/spec/runspec.c src/spec/http-rule.c src/common/path-guard.c src/common/json.c \
 *      src/common/util.c src/common/buf.c
 *   /tmp/seeds tests/fuzz/corpus/msgrun
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg-run.h"
#include "spec/options.h"
#include "common/util.h"

/* Up to 15 "flag=value" words (a switch: "flag"), then the command. */
static const struct {
	const char *name;
	const char *words[16];
	const char *argv[4];
	unsigned ttys;
	bool audit, netlog, pcap;
} seeds[] = {
	{ "plain", { NULL }, { "true", NULL }, 0, false, false, false },
	{ "allowlist", { "allow-host=registry.npmjs.org:443,8443", "allow-port=443",
			 "allow-cidr=192.168.4.0/24", "allow-cidr=fd00::/8", "tailscale",
			 "allow-http=method=GET,HEAD domain=api.test path=/v1/*,/v2/x",
			 "allow-http=domain=*.github.com", NULL },
	  { "npm", "ci", NULL }, 7, true, true, true },
	{ "mounts", { "ro=/usr/share", "rw=/tmp/w/../x", "protect=/tmp/x/.git",
		      "copy=/etc/hosts", "copy-ro=/etc/passwd:/home/u/p", "allow-git-write", NULL },
	  { "sh", "-c", "ls", NULL }, 2, false, false, false },
	{ "limits", { "memory=2GiB", "pids=512", "cpus=1.5", "timeout=1h30m", "seccomp=compat",
		      "env=TERM", "env=TOKEN=x", "net=none", "verbose", "raw-terminal",
		      "fail-on=deny,alert", "report=/tmp/r.xml", NULL },
	  { "make", NULL }, 0, true, false, false },
	{ "detach", { "detach", "workdir=/tmp", "profile=node", "pcap=/tmp/p.pcap",
		      "pcap-max=1M", "net-log=/tmp/n.log", NULL },
	  { "sleep", "9", NULL }, 0, false, true, true },
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < ARRAY_SIZE(seeds); i++) {
		struct run_request q;
		struct wbuf w;
		int fds[MSG_MAX_FDS];
		size_t nfds;
		char *err = NULL, *path;
		uint8_t n;
		FILE *f;

		run_request_init(&q);
		for (size_t j = 0; seeds[i].words[j]; j++) {
			char *flag = xstrdup(seeds[i].words[j]), *eq = strchr(flag, '=');
			const struct spec_option *o;

			if (eq)
				*eq = '\0';
			o = spec_option_by_flag(flag);
			if (!o || spec_option_apply(o, &q.rs, eq ? eq + 1 : "", &err) < 0) {
				fprintf(stderr, "%s: %s: %s\n", seeds[i].name, flag, err ? err : "?");
				return 1;
			}
			free(flag);
		}
		for (size_t j = 0; seeds[i].argv[j]; j++)
			strv_push(&q.rs.argv, seeds[i].argv[j]);
		if (runspec_finish(&q.rs, "/tmp/w", &err) < 0) {
			fprintf(stderr, "%s: %s\n", seeds[i].name, err);
			return 1;
		}
		strv_push(&q.env, "PATH=/usr/bin:/bin");
		strv_push(&q.env, "TERM=xterm");
		q.cwd = xstrdup("/tmp/w");
		q.home = xstrdup("/home/u");
		q.ttys = (uint8_t)seeds[i].ttys;
		q.rows = 24;
		q.cols = 80;
		for (int k = RUN_FD_STDIN; k <= RUN_FD_STDERR; k++)
			if (!q.rs.detach && !(q.ttys & (1u << k)))
				q.fd[k] = k;
		q.fd[RUN_FD_AUDIT] = seeds[i].audit ? 3 : -1;
		q.fd[RUN_FD_NETLOG] = seeds[i].netlog ? 4 : -1;
		q.fd[RUN_FD_PCAP] = seeds[i].pcap ? 5 : -1;
		wbuf_init(&w);
		run_request_encode(&q, &w, fds, &nfds);
		path = xasprintf("%s/%s", argv[1], seeds[i].name);
		f = fopen(path, "wb");
		n = (uint8_t)nfds;
		if (!f || fwrite(&n, 1, 1, f) != 1 || fwrite(w.p, 1, w.len, f) != w.len ||
		    fclose(f) != 0) {
			perror(path);
			return 1;
		}
		free(path);
		wbuf_free(&w);
		for (int k = 0; k < RUN_FD_COUNT; k++)
			q.fd[k] = -1;
		run_request_free(&q);
	}
	return 0;
}
