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
 * arguments; everything arrives on descriptor 3. The one exception is TLS
 * inspection (NETCFG_TLS): then, before the lockdown, OpenSSL reads its
 * configuration and the host's trust store (SSL_CERT_FILE, SSL_CERT_DIR
 * and OPENSSL_CONF of the environment the daemon passes on), and the
 * session CA arrives as NET_TLS_CA (net/tls.c).
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/msg.h"
#include "common/tlsca.h"
#include "net/gw.h"
#include "net/http-gate.h"
#include "net/pcap.h"
#include "net/tls.h"
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

/* A line for the daemon's log (NET_LOG). */
static void send_note(const char *note)
{
	struct wbuf w;

	wbuf_init(&w);
	wire_put_str(&w, note);
	msg_send(FD_BROKER, NET_LOG, w.p, w.len, NULL, 0);
	wbuf_free(&w);
}

/* O_NONBLOCK, before the lockdown (fcntl is not allowed after). */
static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		fatal_errno("fcntl O_NONBLOCK on descriptor %d", fd);
}

/*
 * NET_HTTP_RULES, right after a NET_CONFIG with NETCFG_RULES: every rule
 * must read as the run-spec's validator read it (spec/http-rule.h).
 */
static int read_rules(struct http_rules *rules, char **err)
{
	struct msg m;
	struct rbuf r;
	uint32_t n;
	char **texts = NULL;
	size_t ntexts = 0, bad;
	int rc = -1;

	if (msg_recv(FD_BROKER, &m, err) < 0) {
		if (!*err)
			*err = xstrdup("the broker closed before NET_HTTP_RULES");
		return -1;
	}
	if (m.type != NET_HTTP_RULES || m.nfds) {
		msg_free(&m);
		return set_err(err, "expected NET_HTTP_RULES, got message 0x%04x", m.type);
	}
	rbuf_init(&r, m.payload, m.len);
	n = wire_get_u32(&r);
	if (n == 0 || n > HTTP_RULES_MAX) {
		msg_free(&m);
		return set_err(err, "NET_HTTP_RULES with %u rules", n);
	}
	for (uint32_t i = 0; i < n && !r.failed; i++) {
		char *t = wire_get_str(&r, HTTP_RULE_TEXT_MAX);

		if (t)
			*(char **)xappend(&texts, &ntexts, sizeof(char *)) = t;
	}
	if (!wire_done(&r) || ntexts != n)
		set_err(err, "malformed NET_HTTP_RULES");
	else if (http_rules_parse(rules, (const char *const *)texts, ntexts, &bad) < 0)
		set_err(err, "NET_HTTP_RULES: rule %zu does not read", bad + 1);
	else
		rc = 0;
	for (size_t i = 0; i < ntexts; i++)
		free(texts[i]);
	free(texts);
	msg_free(&m);
	return rc;
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

/*
 * NET_TLS_CA: the session CA, for the engine that mints the leaves. The
 * key's bytes are wiped from the message buffer before it is freed: from
 * here on the key lives in OpenSSL's structures only.
 */
static struct tls_engine *tls_setup(char **note, char **err)
{
	struct msg m;
	struct rbuf r;
	uint32_t cn, kn;
	const uint8_t *cert = NULL, *key = NULL;
	struct tls_engine *e = NULL;

	if (msg_recv(FD_BROKER, &m, err) < 0) {
		if (!*err)
			*err = xstrdup("the broker closed before NET_TLS_CA");
		return NULL;
	}
	if (m.type != NET_TLS_CA || m.nfds) {
		msg_free(&m);
		set_err(err, "expected NET_TLS_CA, got message 0x%04x", m.type);
		return NULL;
	}
	rbuf_init(&r, m.payload, m.len);
	cn = wire_get_u32(&r);
	if (!r.failed && cn <= TLS_CA_DER_MAX && cn <= wire_left(&r)) {
		cert = (const uint8_t *)r.p + r.off;
		r.off += cn;
		kn = wire_get_u32(&r);
		if (!r.failed && kn <= TLS_CA_DER_MAX && kn == wire_left(&r)) {
			key = (const uint8_t *)r.p + r.off;
			r.off += kn;
		}
	}
	if (cert && key && wire_done(&r))
		e = tls_engine_create(cert, cn, key, kn, note, err);
	else
		set_err(err, "malformed NET_TLS_CA");
	OPENSSL_cleanse(m.payload, m.len);
	msg_free(&m);
	return e;
}

/* Check the descriptors, handshake, capture header, lwIP, lockdown, loop. */
int main(int argc, char **argv)
{
	static struct net_pcap pcap;
	struct ev_loop *loop;
	struct gw *gw;
	struct tls_engine *tls = NULL;
	struct stat st;
	struct net_config cfg;
	struct http_rules rules = { 0 };
	char *err = NULL, *note = NULL;

	(void)argv;
	/* Before anything arrives (the session CA's key comes before the lockdown):
	 * no core file, and no ptrace or /proc/PID/mem by processes of the same user. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
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
	if ((cfg.flags & NETCFG_RULES) && read_rules(&rules, &err) < 0)
		return die("handshake", err);
	/* Still blocking, and before the lockdown: OpenSSL reads its files now. */
	if (cfg.flags & NETCFG_TLS) {
		tls = tls_setup(&note, &err);
		if (!tls)
			return die("TLS inspection", err);
		if (note) {
			send_note(note);
			free(note);
			note = NULL;
		}
	}
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
	http_gate_set_rules(gw, &rules);
	gw_set_tls(gw, tls);
	if (gw_set_tripwires(gw, cfg.tokens, cfg.ntokens, &err) < 0)
		return die("tripwires", err);
	netproto_config_free(&cfg);

	if (net_lockdown(&note, &err) < 0)
		return die("lockdown", err);
	if (note) {
		send_note(note);
		free(note);
	}

	gw_start(gw);
	ev_run(loop, 0);
	/*
	 * The final totals are sent: the broker may stop waiting now. Left to
	 * exit, the broker socket would be closed after the TAP (an exiting
	 * process's descriptors are released last first), and the TAP's close
	 * unregisters tap0, which waits for RCU grace periods: 10 ms and more
	 * between a session's end and the broker's EOF, measured.
	 */
	close(FD_BROKER);
	return gw_exit_status(gw);
}
