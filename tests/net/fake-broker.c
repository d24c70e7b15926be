/*
 * fake-broker.c — a stand-in for the daemon's broker, to drive boxy-net in
 * the end-to-end test (net-e2e.sh) without a daemon.
 *
 * It creates tap0 inside the sandbox's network namespace (--netns), execs
 * boxy-net with the daemon's descriptor layout, and answers its requests:
 * every permitted flow is dialled to 127.0.0.1 (or ::1) at the port the
 * sandbox asked for, whatever address it asked for, so nothing this test
 * does can reach beyond the test's own network namespace. Each request and
 * decision is printed, one line each, for the test to check.
 *
 *   fake-broker --netns /proc/PID/ns/net [--refuse-port N]... [--need-name]
 *               [--refuse-name NAME]... [--pcap FILE] [--pcap-max N]
 *               [--sndbuf BYTES] BOXY-NET
 *
 * --sndbuf sets SO_SNDBUF on every dialled socket: the upload-budget case
 * wants upstream to stop taking bytes after a few KiB, not after the
 * megabytes loopback's autotuning would give each connection.
 *
 * DNS: "*.test" names answer A 192.0.2.10 and AAAA 2001:db8::10 (TTL 60),
 * every other name NXDOMAIN.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/msg.h"
#include "proto/netproto.h"
#include "spec/runspec.h"
#include "common/util.h"
#include "proto/wire.h"

static uint16_t refuse_ports[16];
static size_t nrefuse_ports;
static const char *refuse_names[16];
static size_t nrefuse_names;
static int need_name;

/* tap0 in the sandbox's namespace; the descriptor works from ours. */
static int tap_create(const char *netns)
{
	int self = open("/proc/self/ns/net", O_RDONLY), ns, fd;
	struct ifreq ifr = { 0 };

	ns = open(netns, O_RDONLY);
	if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET) < 0)
		fatal_errno("entering %s", netns);
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fatal_errno("/dev/net/tun");
	/* As sandbox_net_tap_create makes it: virtio-net header and offloads. */
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	strcpy(ifr.ifr_name, "tap0");
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		fatal_errno("TUNSETIFF");
	if (ioctl(fd, TUNSETOFFLOAD, (unsigned long)(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6)) < 0)
		fatal_errno("TUNSETOFFLOAD");
	if (setns(self, CLONE_NEWNET) < 0)
		fatal_errno("back to our namespace");
	close(ns);
	close(self);
	return fd;
}

/* proto/netproto.h's address: family byte + 16 bytes. */
static void get_addr(struct rbuf *r, int *fam, uint8_t a[16])
{
	*fam = wire_get_u8(r);
	for (int i = 0; i < 16; i++)
		a[i] = wire_get_u8(r);
}

/* Text form of an address, for the log lines. */
static const char *addr_text(int fam, const uint8_t *a, char *buf)
{
	inet_ntop(fam == 4 ? AF_INET : AF_INET6, a, buf, INET6_ADDRSTRLEN);
	return buf;
}

/* Send NET_VERDICT, with the dialled socket when there is one (why: for the reader only). */
static void verdict(int fd, uint32_t id, uint8_t v, const char *why, int sock)
{
	struct wbuf w;

	(void)why;
	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_u8(&w, v);
	wire_put_u8(&w, 0);           /* flags: this broker gates nothing */
	msg_send(fd, NET_VERDICT, w.p, w.len, &sock, sock >= 0 ? 1 : 0);
	wbuf_free(&w);
	if (sock >= 0)
		close(sock);
}

static int dial_sndbuf;          /* --sndbuf, 0: the kernel's */

/* Dial the local test server for (proto, family, port): never anything else. */
static int dial_local(uint8_t proto, int fam, uint16_t port)
{
	int s = socket(fam == 4 ? AF_INET : AF_INET6,
		       (proto == 6 ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };

	if (s < 0)
		return -1;
	if (dial_sndbuf)
		setsockopt(s, SOL_SOCKET, SO_SNDBUF, &dial_sndbuf, sizeof(dial_sndbuf));
	if ((fam == 4 ? connect(s, (struct sockaddr *)&a4, sizeof(a4))
		      : connect(s, (struct sockaddr *)&a6, sizeof(a6))) < 0) {
		close(s);
		return -1;
	}
	return s;
}

struct pending {
	uint32_t id;
	uint8_t proto;
	int fam;
	uint16_t port;
};
static struct pending names[256];

/* NET_FLOW_OPEN: refuse by port, ask for a name, or dial. */
static void on_open(int fd, struct msg *m)
{
	struct rbuf r;
	uint32_t id;
	uint8_t proto, dst[16], src[16];
	int dfam, sfam, s;
	uint16_t dport, sport;
	char b1[INET6_ADDRSTRLEN], b2[INET6_ADDRSTRLEN];

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	proto = wire_get_u8(&r);
	get_addr(&r, &dfam, dst);
	dport = wire_get_u16(&r);
	get_addr(&r, &sfam, src);
	sport = wire_get_u16(&r);
	if (!wire_done(&r))
		fatal("malformed FLOW_OPEN");
	printf("open %u %s %s port %u from %s port %u\n", id, proto == 6 ? "tcp" : "udp",
	       addr_text(dfam, dst, b1), dport, addr_text(sfam, src, b2), sport);
	for (size_t i = 0; i < nrefuse_ports; i++)
		if (refuse_ports[i] == dport) {
			printf("refused %u port\n", id);
			verdict(fd, id, NETV_REFUSED, "port refused by the test", -1);
			return;
		}
	if (need_name && proto == 6) {
		names[id % 256] = (struct pending){ id, proto, dfam, dport };
		printf("need-name %u\n", id);
		verdict(fd, id, NETV_NEED_NAME, "", -1);
		return;
	}
	s = dial_local(proto, dfam, dport);
	if (s < 0) {
		printf("refused %u dial-failed\n", id);
		verdict(fd, id, NETV_REFUSED, "local dial failed", -1);
		return;
	}
	printf("dialled %u\n", id);
	verdict(fd, id, NETV_DIALLED, "", s);
}

/* NET_FLOW_NAME: refuse by name or dial. */
static void on_name(int fd, struct msg *m)
{
	struct rbuf r;
	uint32_t id;
	uint8_t kind, ech;
	char *name;
	struct pending *p;
	int s;

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	kind = wire_get_u8(&r);
	ech = wire_get_u8(&r);
	name = wire_get_str(&r, NETPROTO_MAX_NAME);
	if (!wire_done(&r))
		fatal("malformed FLOW_NAME");
	printf("name %u %s ech=%u %s\n", id,
	       kind == NET_NAME_SNI ? "sni" : kind == NET_NAME_HOST ? "host" : "none", ech,
	       name ? name : "");
	p = &names[id % 256];
	for (size_t i = 0; i < nrefuse_names; i++)
		if (name && strcmp(name, refuse_names[i]) == 0) {
			printf("refused %u name\n", id);
			verdict(fd, id, NETV_REFUSED, "name refused by the test", -1);
			free(name);
			return;
		}
	free(name);
	s = p->id == id ? dial_local(p->proto, p->fam, p->port) : -1;
	if (s < 0) {
		printf("refused %u dial-failed\n", id);
		verdict(fd, id, NETV_REFUSED, "local dial failed", -1);
		return;
	}
	printf("dialled %u\n", id);
	verdict(fd, id, NETV_DIALLED, "", s);
}

/* NET_RESOLVE: *.test resolves, everything else is NXDOMAIN. */
static void on_resolve(int fd, struct msg *m)
{
	struct rbuf r;
	struct wbuf w;
	uint32_t id;
	uint16_t qtype;
	char *name;
	size_t len;
	bool ours;

	rbuf_init(&r, m->payload, m->len);
	id = wire_get_u32(&r);
	name = wire_get_str(&r, NETPROTO_MAX_NAME);
	qtype = wire_get_u16(&r);
	{
		/* The query's socket (protocol, both ends): read strictly, not used here. */
		struct net_addr src, dst;
		uint8_t proto = wire_get_u8(&r);
		bool ok = netproto_get_addr(&r, &src);
		uint16_t sport = wire_get_u16(&r);

		ok = netproto_get_addr(&r, &dst) && ok;
		(void)wire_get_u16(&r);
		if (!ok || (proto != 6 && proto != 17) || sport == 0 || src.family != dst.family)
			fatal("malformed RESOLVE source");
	}
	if (!wire_done(&r))
		fatal("malformed RESOLVE");
	len = name ? strlen(name) : 0;
	ours = len > 5 && strcmp(name + len - 5, ".test") == 0;
	printf("resolve %u %s %u %s\n", id, name ? name : "", qtype, ours ? "answered" : "nxdomain");
	wbuf_init(&w);
	wire_put_u32(&w, id);
	wire_put_u8(&w, ours ? 0 : 3);
	wire_put_u32(&w, 60);
	if (ours && (qtype == 1 || qtype == 28)) {
		uint8_t a[16] = { 0 };

		wire_put_u32(&w, 1);
		if (qtype == 1) {
			a[0] = 192; a[1] = 0; a[2] = 2; a[3] = 10;
		} else {
			a[0] = 0x20; a[1] = 0x01; a[2] = 0x0d; a[3] = 0xb8; a[15] = 0x10;
		}
		wire_put_u8(&w, qtype == 1 ? 4 : 6);
		for (int i = 0; i < 16; i++)
			wire_put_u8(&w, a[i]);
	} else {
		wire_put_u32(&w, 0);
	}
	msg_send(fd, NET_ANSWER, w.p, w.len, NULL, 0);
	wbuf_free(&w);
	free(name);
}

/* Create the TAP, exec boxy-net, answer it until it goes away. */
int main(int argc, char **argv)
{
	const char *netns = NULL, *pcap = NULL;
	uint64_t pcap_max = 0;
	int sv[2], tap, pcap_fd = -1, i;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--netns") && i + 1 < argc)
			netns = argv[++i];
		else if (!strcmp(argv[i], "--refuse-port") && i + 1 < argc && nrefuse_ports < 16)
			refuse_ports[nrefuse_ports++] = (uint16_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--refuse-name") && i + 1 < argc && nrefuse_names < 16)
			refuse_names[nrefuse_names++] = argv[++i];
		else if (!strcmp(argv[i], "--need-name"))
			need_name = 1;
		else if (!strcmp(argv[i], "--pcap") && i + 1 < argc)
			pcap = argv[++i];
		else if (!strcmp(argv[i], "--pcap-max") && i + 1 < argc)
			pcap_max = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--sndbuf") && i + 1 < argc)
			dial_sndbuf = atoi(argv[++i]);
		else
			fatal("unknown option %s", argv[i]);
	}
	if (!netns || i + 1 != argc)
		fatal("usage: fake-broker --netns PATH [options] BOXY-NET");
	tap = tap_create(netns);
	if (pcap) {
		pcap_fd = open(pcap, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (pcap_fd < 0)
			fatal_errno("%s", pcap);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		fatal_errno("socketpair");
	pid = fork();
	if (pid == 0) {
		/* Lift every descriptor above 5 first so no dup2 clobbers another
		 * (and none is already in place, where dup2 would keep O_CLOEXEC). */
		int b = fcntl(sv[1], F_DUPFD, 10), t = fcntl(tap, F_DUPFD, 10);
		int c = pcap_fd >= 0 ? fcntl(pcap_fd, F_DUPFD, 10) : -1;

		if (b < 0 || t < 0 || dup2(b, 3) < 0 || dup2(t, 4) < 0 || (c >= 0 && dup2(c, 5) < 0))
			_exit(127);
		execl(argv[i], "boxy-net", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	close(tap);
	printf("started boxy-net pid %d\n", (int)pid);
	for (;;) {
		struct msg m;
		char *err = NULL;

		if (msg_recv(sv[0], &m, &err) < 0) {
			int st;

			waitpid(pid, &st, 0);
			printf("boxy-net ended: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			return 0;
		}
		switch (m.type) {
		case NET_HELLO: {
			struct wbuf w;
			struct net_config cfg = {
				.mode = need_name ? NET_ALLOWLIST : NET_PUBLIC,
				.flags = pcap_fd >= 0 ? NETCFG_PCAP : 0,
				.pcap_max = pcap_max,
			};

			printf("hello\n");
			wbuf_init(&w);
			netproto_config_encode(&w, &cfg);
			msg_send(sv[0], NET_CONFIG, w.p, w.len, NULL, 0);
			wbuf_free(&w);
			break;
		}
		case NET_FLOW_OPEN:
			on_open(sv[0], &m);
			break;
		case NET_FLOW_NAME:
			on_name(sv[0], &m);
			break;
		case NET_RESOLVE:
			on_resolve(sv[0], &m);
			break;
		case NET_FLOW_STATS: case NET_FLOW_CLOSE: {
			struct rbuf r;
			uint32_t id;
			uint64_t up, down;

			rbuf_init(&r, m.payload, m.len);
			id = wire_get_u32(&r);
			up = wire_get_u64(&r);
			down = wire_get_u64(&r);
			printf("%s %u up %llu down %llu\n", m.type == NET_FLOW_CLOSE ? "close" : "stats",
			       id, (unsigned long long)up, (unsigned long long)down);
			break;
		}
		case NET_LOG: {
			struct rbuf r;
			char *s;

			rbuf_init(&r, m.payload, m.len);
			s = wire_get_str(&r, 4096);
			printf("log %s\n", s ? s : "");
			free(s);
			break;
		}
		default:
			printf("unknown message 0x%04x\n", m.type);
		}
		msg_free(&m);
	}
}
