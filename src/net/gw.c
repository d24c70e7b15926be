/*
 * net/gw.c — boxy-net's gateway loop: the TAP device and the broker socket
 * driven from one libev loop (see net/gw.h and doc/internals-net.md).
 *
 * The shape of it:
 *   - a TAP frame is captured (pcap), filtered (net/frame.c), then ARP and
 *     neighbour solicitations are answered here and IP goes to lwIP
 *     (net/lwip.c), whose callbacks hand TCP to net/tcp.c and UDP to
 *     net/udp.c (port 53 to net/dns.c);
 *   - every new flow is put to the broker (net/broker-msg.c) before lwIP
 *     sees its SYN, or before its first datagram goes anywhere;
 *   - lwIP callbacks only record what happened and mark the flow dirty; the
 *     work (writes upstream, window updates, closes) happens in gw_service
 *     from an ev_prepare watcher, once per loop iteration, outside lwIP's
 *     call stack. That batches upstream writes per batch of TAP frames and
 *     keeps every tcp_close/tcp_abort away from lwIP's own callbacks.
 */
#include <config.h>

#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/util.h"
#include "net/flow.h"
#include "net/http-gate.h"
#include "proto/netproto.h"

/* Wall-clock microseconds, for pcap time stamps. */
static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Write a frame to the capture, if any; say once when the capture stopped. */
void capture(struct gw *gw, const uint8_t *frame, size_t len)
{
	if (!gw->pcap || net_pcap_write(gw->pcap, frame, len, now_usec()) == 0 || gw->pcap_reported)
		return;
	gw->pcap_reported = true;
	if (gw->pcap->state == PCAP_FULL) {
		broker_log(gw, "pcap capture stopped: the size cap was reached");
	} else {
		char *s = xasprintf("pcap capture stopped: %s", strerror(gw->pcap->saved_errno));

		broker_log(gw, s);
		free(s);
	}
}

/* Write one frame to the sandbox. A full TAP queue drops it, as a link would. */
void tap_send(struct gw *gw, const uint8_t *frame, size_t len)
{
	static const uint8_t vnet_none[GW_VNET_HLEN];
	struct iovec iov[2] = { { (void *)vnet_none, sizeof(vnet_none) }, { (void *)frame, len } };

	capture(gw, frame, len);
	if (writev(gw->tap_fd, iov, 2) < 0 && errno != EAGAIN && errno != EIO && !gw->tap_dead) {
		gw->tap_dead = true;
		broker_log(gw, "TAP write failed");
	}
}

/* A frame from the sandbox: capture, filter, answer ARP/ND, or give it to lwIP. */
static void frame_in(struct gw *gw, uint8_t *buf, size_t len)
{
	struct gw_packet pkt;
	enum gw_verdict v;
	uint8_t out[GW_ETH_HLEN + 72];

	if (len > GW_VNET_HLEN)
		capture(gw, buf + GW_VNET_HLEN, len - GW_VNET_HLEN);
	v = gw_filter_vnet(buf, len, &pkt);
	if (v != GW_PASS && v != GW_ARP_REQUEST && v != GW_NEIGHBOUR_SOLICIT) {
		gw->dropped[v]++;
		return;
	}
	/* A partial UDP checksum is completed here (lwIP checks UDP's); a
	 * partial TCP one needs nothing: lwIP's TCP check is skipped (see
	 * ip_chksum_pseudo). The field already holds the pseudo-header sum. */
	if (pkt.csum_partial && pkt.proto == IPPROTO_UDP) {
		uint8_t *l4 = (uint8_t *)pkt.ip + pkt.l4_off;
		uint16_t c = gw_checksum(l4, pkt.ip_len - pkt.l4_off, 0);

		put16(l4 + 6, c ? c : 0xffff);
	}
	if (!(pkt.src_mac[0] & 1))
		memcpy(gw->sandbox_mac, pkt.src_mac, 6);
	if (v == GW_ARP_REQUEST) {
		tap_send(gw, out, gw_build_arp_reply(&pkt, out));
		return;
	}
	if (v == GW_NEIGHBOUR_SOLICIT) {
		tap_send(gw, out, gw_build_neighbour_advert(&pkt, out));
		return;
	}
	if (pkt.proto == IPPROTO_TCP) {
		tcp_segment_in(gw, &pkt);
		return;
	}
	if (pkt.proto == IPPROTO_UDP && !stack_udp_listen(gw, pkt.dport))
		return;
	stack_feed(gw, pkt.family, pkt.ip, pkt.ip_len, pkt.dst);
}

/* TAP readable: a batch of frames, servicing the dirty flows every few. */
static void tap_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct gw *gw = w->data;

	size_t since = 0;

	(void)revents;
	for (int i = 0; i < GW_TAP_BATCH; i++) {
		ssize_t n = read(gw->tap_fd, gw->tbuf, sizeof(gw->tbuf));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* The sandbox's namespace is gone; the broker will close us. */
			ev_io_stop(loop, w);
			gw->tap_dead = true;
			return;
		}
		frame_in(gw, gw->tbuf, (size_t)n);
		/* Flush upstream (and reopen lwIP's window) every few frames or
		 * every 64 KiB, not once per batch: waiting for the batch end
		 * stalls the sandbox's sender once per window. */
		since += (size_t)n;
		if (i % GW_SERVICE_EVERY == GW_SERVICE_EVERY - 1 || since >= GW_SERVICE_BYTES) {
			gw_service(gw);
			since = 0;
		}
	}
}

/*
 * Before the loop sleeps: lwIP's timers, TIME_WAIT pcbs, the dirty flows;
 * then sleep no longer than lwIP's next timer.
 */
static void prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct gw *gw = w->data;
	double sleep;

	(void)revents;
	stack_timers();
	gw_service(gw);
	sleep = stack_sleep();
	ev_timer_stop(loop, &gw->lwip_timer);
	if (sleep >= 0) {
		ev_timer_set(&gw->lwip_timer, sleep, 0.);
		ev_timer_start(loop, &gw->lwip_timer);
	}
}

/* lwIP's next timer is due. */
static void lwip_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;      /* waking up is the point: prepare_cb runs the timers */
}

/* About three times a second: byte counters, and the flows and queries that timed out. */
static void stats_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct gw *gw = w->data;
	ev_tstamp now = ev_now(loop);
	struct flow *next;

	(void)revents;
	for (struct flow *f = gw->all; f; f = next) {
		next = f->next;
		if (f->opened && (f->up_bytes != f->rep_up || f->down_bytes != f->rep_down))
			send_flow_counts(gw, f, NET_FLOW_STATS);
		if (now < f->deadline)
			continue;
		switch (f->state) {
		case FS_NAMING:
			f->name_timeout = true;
			flow_dirty(f);
			break;
		case FS_HELD: case FS_REFUSED:
			flow_kill(f, false);
			break;
		case FS_ADMITTED: case FS_NAME_SENT:
			flow_kill(f, true);
			break;
		case FS_OPEN:
			if (f->kind == FLOW_UDP)
				flow_kill(f, false);
			else if (f->tls)
				flow_dirty(f);  /* a handshake or a refusal's drain timed out */
			else if (f->gate)
				http_gate_plain_timeout(gw, f);
			break;
		case FS_DEAD:
			break;
		}
	}
	dns_expire(gw, now);
}

/* ---- setup ------------------------------------------------------------------- */

/*
 * Every dialled flow holds one descriptor, which arrives with its verdict by
 * SCM_RIGHTS. At the usual soft limit of 1024 the kernel drops the
 * descriptor of the 1018th and flags the message MSG_CTRUNC, which boxy-net
 * must treat as a broken broker and exit: a payload holding a thousand
 * connections open ended its own session's network. So raise the soft
 * limit to what the flow table needs (the hard limit permitting; setrlimit
 * is not allowed after the lockdown), and admit only as many flows as
 * there are descriptors for.
 */
static size_t gw_fd_flows(void)
{
	const rlim_t want = GW_MAX_FLOWS + GW_FD_RESERVE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024 - GW_FD_RESERVE;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return 1024 - GW_FD_RESERVE;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return GW_MAX_FLOWS;
	return rl.rlim_cur > 2 * GW_FD_RESERVE ? (size_t)rl.rlim_cur - GW_FD_RESERVE :
		GW_FD_RESERVE;
}

/* Public mode: name each open TCP flow's first bytes for the record. */
void gw_set_observe(struct gw *gw, bool on)
{
	gw->observe = on;
}

/* TLS inspection's engine, made before the lockdown (net/tls.c). */
void gw_set_tls(struct gw *gw, struct tls_engine *e)
{
	gw->tls = e;
}

int gw_set_tripwires(struct gw *gw, char *const *tokens, size_t n, char **err)
{
	tw_matcher_free(gw->tw);
	gw->tw = NULL;
	if (n == 0)
		return 0;
	gw->tw = tw_matcher_new(tokens, n, err);
	return gw->tw ? 0 : -1;
}

/*
 * How long a gated request head may take (GW_HEAD_TIMEOUT). The broker
 * passes BOXY_NET_HEAD_TIMEOUT (seconds, 0.1 to 600) from the daemon's
 * environment for the test suite, which cannot wait 30 s for a 408.
 */
static double gw_head_timeout(void)
{
	const char *v = getenv("BOXY_NET_HEAD_TIMEOUT");
	char *end;
	double t;

	if (!v || !*v)
		return GW_HEAD_TIMEOUT;
	t = strtod(v, &end);
	return *end || !(t >= 0.1 && t <= 600.0) ? GW_HEAD_TIMEOUT : t;
}

/* The gateway, lwIP and the watchers, nothing started (see net/gw.h). */
struct gw *gw_create(struct ev_loop *loop, int broker_fd, int tap_fd, struct net_pcap *pcap)
{
	struct gw *gw = xcalloc(1, sizeof(*gw));

	gw->loop = loop;
	gw->broker_fd = broker_fd;
	gw->tap_fd = tap_fd;
	gw->pcap = pcap;
	memset(gw->sandbox_mac, 0xff, 6);   /* broadcast until the sandbox's first frame */
	gw->max_flows = gw_fd_flows();
	gw->head_timeout = gw_head_timeout();

	stack_create(gw);

	ev_io_init(&gw->tap_io, tap_cb, tap_fd, EV_READ);
	ev_io_init(&gw->broker_io, broker_cb, broker_fd, EV_READ);
	ev_timer_init(&gw->lwip_timer, lwip_timer_cb, 0., 0.);
	ev_timer_init(&gw->stats_timer, stats_cb, GW_STATS_PERIOD, GW_STATS_PERIOD);
	ev_prepare_init(&gw->prepare, prepare_cb);
	gw->tap_io.data = gw->broker_io.data = gw->stats_timer.data = gw->prepare.data = gw;
	return gw;
}

/* Start the watchers (the process is locked down by now). */
void gw_start(struct gw *gw)
{
	ev_io_start(gw->loop, &gw->broker_io);
	ev_io_start(gw->loop, &gw->tap_io);
	ev_timer_start(gw->loop, &gw->stats_timer);
	ev_prepare_start(gw->loop, &gw->prepare);
}

/* One frame, as if read from the TAP (fuzzing and tests). */
void gw_frame_input(struct gw *gw, const uint8_t *buf, size_t len)
{
	if (len > sizeof(gw->tbuf))
		return;
	memcpy(gw->tbuf, buf, len);
	frame_in(gw, gw->tbuf, len);
}

/* What prepare_cb does, without the loop (fuzzing and tests). */
void gw_housekeeping(struct gw *gw)
{
	stack_timers();
	gw_service(gw);
}

/* 0 when the broker closed, 1 after a broker protocol error. */
int gw_exit_status(const struct gw *gw)
{
	return gw->exit_status;
}
