/*
 * net/main.c — main of boxy-net, the per-session userspace network stack.
 *
 * The daemon execs it with exactly these descriptors:
 *   3  the broker socket (proto/msg.h frames, proto/netproto.h messages)
 *   4  the TAP device (IFF_TAP | IFF_NO_PI: Ethernet frames)
 *   5  the pcap file, when NET_CONFIG carries NETCFG_PCAP
 * It says NET_HELLO, reads NET_CONFIG, sets up lwIP, locks itself down
 * (net/lockdown.c) before reading a single frame, and then runs the
 * gateway (net/gw.c) until the broker closes its socket. It takes no
 * arguments and reads no file: everything arrives on descriptor 3.
 */
#include <config.h>

#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/msg.h"
#include "net/gw.h"
#include "net/pcap.h"
#include "proto/netproto.h"
#include "spec/runspec.h"
#include "common/util.h"
#include "proto/wire.h"

#define FD_BROKER 3
#define FD_TAP    4
#define FD_PCAP   5
#define PCAP_DEFAULT_MAX (1ull << 30)   /* --pcap-max's default, when NET_CONFIG says 0 */

/* Print why boxy-net cannot run and return its exit status (1). */
static int die(const char *what, char *err)
{
	fprintf(stderr, "boxy-net: %s%s%s\n", what, err ? ": " : "", err ? err : "");
	free(err);
	return 1;
}

/* O_NONBLOCK, before the lockdown (fcntl is not allowed after). */
static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		fatal_errno("fcntl O_NONBLOCK on descriptor %d", fd);
}

/* Send NET_HELLO and read NET_CONFIG (proto/netproto.h, decoded strictly). */
static int handshake(struct net_config *cfg, char **err)
{
	struct wbuf w;
	struct msg m;
	int ok;

	wbuf_init(&w);
	wire_put_u32(&w, NETPROTO_VERSION);
	ok = msg_send(FD_BROKER, NET_HELLO, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	if (ok < 0)
		return set_err_errno(err, "cannot send NET_HELLO");
	if (msg_recv(FD_BROKER, &m, err) < 0) {
		if (!*err)
			*err = xstrdup("the broker closed before NET_CONFIG");
		return -1;
	}
	if (m.type != NET_CONFIG || m.nfds) {
		msg_free(&m);
		return set_err(err, "expected NET_CONFIG, got message 0x%04x", m.type);
	}
	ok = netproto_config_decode(m.payload, m.len, cfg, err);
	msg_free(&m);
	if (ok < 0)
		return -1;
	if (cfg->mode != NET_PUBLIC && cfg->mode != NET_ALLOWLIST) {
		netproto_config_free(cfg);
		return set_err(err, "NET_CONFIG mode %u has no network to serve", cfg->mode);
	}
	if (!cfg->pcap_max)
		cfg->pcap_max = PCAP_DEFAULT_MAX;
	return 0;
}

/* Check the descriptors, handshake, capture header, lwIP, lockdown, loop. */
int main(int argc, char **argv)
{
	static struct net_pcap pcap;
	struct ev_loop *loop;
	struct gw *gw;
	struct stat st;
	struct net_config cfg;
	char *err = NULL, *note = NULL;

	(void)argv;
	if (argc != 1)
		return die("takes no arguments; it is started by the boxy daemon", NULL);
	if (fstat(FD_BROKER, &st) < 0 || !S_ISSOCK(st.st_mode))
		return die("descriptor 3 is not the broker socket", NULL);
	if (fstat(FD_TAP, &st) < 0 || !S_ISCHR(st.st_mode))
		return die("descriptor 4 is not the TAP device", NULL);
	/* Upstream sockets are written with MSG_NOSIGNAL; this covers everything else. */
	signal(SIGPIPE, SIG_IGN);

	if (handshake(&cfg, &err) < 0)
		return die("handshake", err);
	if (cfg.flags & NETCFG_PCAP) {
		if (fstat(FD_PCAP, &st) < 0 || !S_ISREG(st.st_mode))
			return die("NETCFG_PCAP but descriptor 5 is not a file", NULL);
		if (net_pcap_open(&pcap, FD_PCAP, cfg.pcap_max, &err) < 0)
			return die("pcap", err);
	}
	/* Nothing else the daemon might have leaked survives into the locked process. */
	close_range((cfg.flags & NETCFG_PCAP) ? FD_PCAP + 1 : FD_PCAP, ~0u, 0);
	set_nonblock(FD_BROKER);
	set_nonblock(FD_TAP);

	/* Every TAP frame and upstream read becomes a pbuf of up to 64 KiB.
	 * glibc's defaults hand such a heap back with brk() as soon as it is
	 * freed and fault the pages in again for the next one; a steady heap
	 * of a few MiB costs less than a page fault per 4 KiB moved. */
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (!loop)
		return die("cannot create the event loop", NULL);
	gw = gw_create(loop, FD_BROKER, FD_TAP, (cfg.flags & NETCFG_PCAP) ? &pcap : NULL);
	gw_set_observe(gw, (cfg.flags & NETCFG_OBSERVE) != 0);
	if (gw_set_tripwires(gw, cfg.tokens, cfg.ntokens, &err) < 0)
		return die("tripwires", err);
	netproto_config_free(&cfg);

	if (net_lockdown(&note, &err) < 0)
		return die("lockdown", err);
	if (note) {
		struct wbuf w;

		wbuf_init(&w);
		wire_put_str(&w, note);
		msg_send(FD_BROKER, NET_LOG, w.p, w.len, NULL, 0);
		wbuf_free(&w);
		free(note);
	}

	gw_start(gw);
	ev_run(loop, 0);
	return gw_exit_status(gw);
}
