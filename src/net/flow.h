/*
 * net/flow.h — what the parts of boxy-net's gateway share: the limits, the
 * gateway's state (struct gw), one flow from its first packet to
 * FLOW_CLOSE (struct flow), and the calls the parts make into each other.
 * Private to src/net/; net/gw.h is the gateway's face to main.c and tests.
 *
 * The parts, one concern each (doc/internals-net.md follows a packet):
 *   net/frame.c       the pure filter and the frames built by hand
 *   net/name.c        what a flow's first bytes name (pure)
 *   net/lwip.c        the one file that talks to lwIP: the netif, pbufs,
 *                     pcbs, timers, the ip_chksum_pseudo override
 *   net/flow.c        the flow table, a flow's end, the service pass
 *   net/tcp.c         TCP: held SYNs, naming, the splice both ways
 *   net/udp.c         UDP flows
 *   net/dns.c         port 53, answered from NET_ANSWER
 *   net/broker-msg.c  every message to and from the broker
 *   net/gw.c          the loop: TAP reads, watchers, setup
 *
 * lwIP's types appear here only as incomplete structs: a flow holds its
 * pcb and its queue of received pbufs, and only net/lwip.c looks inside.
 */
#ifndef BOXY_NET_FLOW_H
#define BOXY_NET_FLOW_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "net/gw.h"
#include "parse/dns.h"
#include "policy/http-rules.h"
#include "parse/sni.h"
#include "parse/tripwire.h"
#include "common/netaddr.h"

struct tcp_pcb;
struct tls_flow;
struct tls_engine;
struct udp_pcb;
struct pbuf;
struct netif;

/* ---- limits ------------------------------------------------------------------ */

#define GW_MAX_FLOWS        8192    /* concurrent flows; beyond, new SYNs get a RST */
#define GW_MAX_HELD         1024    /* flows waiting for the broker */
#define GW_FD_RESERVE       32      /* descriptors that are not flows' (0-5, epoll, libev) */
#define GW_MAX_QUERIES      256     /* DNS queries waiting for NET_ANSWER */
#define GW_UDP_QUEUE        16      /* datagrams held while the broker decides */
#define GW_TAP_BATCH        64      /* frames read per wake-up */
#define GW_SERVICE_EVERY    16      /* frames between two services of the dirty flows, */
#define GW_SERVICE_BYTES    65536   /* ... or bytes */
#define GW_FRAME_MAX        65536
/* A TAP read: the vnet header, Ethernet, and an IP packet of at most 64 KiB (a TSO segment). */
#define GW_TAP_READ         (GW_VNET_HLEN + GW_ETH_HLEN + 40 + 65535)
#define GW_HASH             4096
#define GW_NAME_PEEK        (SNI_HELLO_MAX + 1024)   /* room for the records around it */
#define GW_DNS_TCP_MAX      4096    /* a DNS query over TCP longer than this is refused */
#define GW_DNS_TCP_PENDING  16
#define GW_STATS_PERIOD     (1.0 / 3)
#define GW_HELD_TIMEOUT     30.0    /* the broker did not answer */
#define GW_ADMIT_TIMEOUT    30.0    /* the handshake did not complete */
#define GW_NAME_TIMEOUT     5.0     /* stop waiting for a name: NONE if no byte, else MALFORMED */
/* A gated request head not complete this long after its first byte gets 408
 * (a slowloris payload); BOXY_NET_HEAD_TIMEOUT (seconds, 0.1-600) for tests. */
#define GW_HEAD_TIMEOUT     30.0
#define GW_UDP_IDLE         60.0
#define GW_UDP_REFUSED_KEEP 10.0    /* remember a refusal so the broker is not asked per datagram */
#define GW_DNS_TIMEOUT      10.0
/*
 * lwIP's send buffer is compiled in at 64 KiB (TCP_SND_BUF), which makes a
 * download stop and wait once per 64 KiB frame. A pcb's snd_buf starts at
 * GW_SND_BUF instead (lwIP only ever adds acked bytes back to it), so
 * several segments are in flight to the sandbox; bench/net.sh measured
 * 2.1-2.9 Gbit/s become 3.7-4.9. The same trick the other way (returning
 * the receive window before upstream took the bytes) measured slower: the
 * sandbox's sender then competes for the two cores with the upstream path.
 */
#define GW_SND_BUF          (256 * 1024)
/*
 * ... and over all flows, bytes lwIP holds for the sandbox (written, not
 * yet acked) stay under GW_DOWN_BUDGET: past it no upstream socket is
 * read. Without it, a payload that opens thousands of connections to a
 * fast server and reads none of them would have boxy-net hold
 * GW_SND_BUF for each. (The other way is bounded by lwIP's 64 KiB
 * receive window per flow, returned only as upstream takes the bytes.)
 */
#define GW_DOWN_BUDGET      (32u << 20)
/*
 * The upload side's budget: what the sandbox sent that lwIP delivered and
 * upstream has not taken yet (every flow's queue, each pbuf charged the
 * memory it holds, malloc_usable_size: header, bytes and any room a TAP
 * read left unused, until it is freed). lwIP takes up
 * to its 64 KiB window per flow; without a budget a payload that writes to
 * thousands of connections whose server never reads had boxy-net hold
 * 205 MiB. Past it a data segment bringing new bytes is not fed to lwIP
 * (flow_up_admit): the sandbox's kernel sends it again later, as after any
 * loss; ACKs, FINs and resent old bytes still pass, so downloads go on and
 * flows can end. A segment past a hole in a flow's sequence is never fed
 * either: lwIP would hold it out of order (its ooseq queue, outside this
 * count) until the hole is filled.
 */
#define GW_UP_BUDGET        (8u << 20)
/*
 * A TAP read lands in a pbuf of its own (room for a 64 KiB packet); a TCP segment
 * of at least this size is handed to lwIP in it, not copied into one of its
 * exact size: the copy was 6% of boxy-net's samples in an upload. Below it
 * the copy costs less than the unused room would (a frame of a few bytes in
 * a 64 KiB buffer, queued until upstream takes it).
 */
#define GW_RX_ADOPT         (32u << 10)

/* ---- state ------------------------------------------------------------------- */

enum flow_kind {
	FLOW_TCP,           /* a TCP connection spliced to a broker socket */
	FLOW_UDP,           /* a UDP flow (one 4-tuple) spliced to a connected socket */
	FLOW_DNS,           /* DNS over TCP, answered here */
};

enum flow_state {
	FS_HELD,            /* FLOW_OPEN sent, the SYN (or first datagrams) held */
	FS_ADMITTED,        /* TCP: SYN fed to lwIP, waiting for the handshake to complete */
	FS_NAMING,          /* TCP: reading the first bytes for the SNI or Host */
	FS_NAME_SENT,       /* TCP: FLOW_NAME sent, waiting for the verdict */
	FS_OPEN,            /* splicing (or answering DNS) */
	FS_REFUSED,         /* UDP: refused; datagrams dropped until the entry expires */
	FS_DEAD,            /* torn down, waiting to be freed outside every callback */
};

struct udp_dgram {
	struct udp_dgram *next;
	size_t len;
	uint8_t data[];
};

/* One flow, from its first packet to FLOW_CLOSE; outlives its lwIP pcb when it must. */
struct flow {
	struct gw *gw;
	uint32_t id;
	enum flow_kind kind;
	enum flow_state state;
	uint8_t proto;
	int family;
	uint8_t src[16], dst[16];       /* src: the sandbox; dst: what it dialled */
	uint16_t sport, dport;
	bool opened;                    /* FLOW_OPEN sent: one FLOW_CLOSE is owed */
	bool need_name;
	bool name_timeout;
	bool late_name;                 /* sent as NONE with no byte: the first bytes must be unnamed */
	bool observed;                  /* observe mode: the first bytes were looked at */
	char *name;                     /* the SNI or Host sent in NET_FLOW_NAME, if any */
	struct http_gate *gate;         /* NETVF_GATE: every request decided (net/http-gate.h) */
	struct tls_flow *tls;           /* NETVF_TLS: TLS inspection's state (net/tls.h), or NULL */
	uint16_t syn_mss;               /* the MSS the sandbox's SYN offered, 0 if none */
	struct gw_packet syn;           /* the held SYN's fields, to refuse it (ip unset) */
	uint8_t *held;                  /* the held SYN, as an IP packet */
	size_t held_len;

	struct tcp_pcb *pcb;            /* NULL before accept and after lwIP freed it */
	bool pcb_gone;                  /* lwIP freed the pcb (tcp_err) */
	bool pcb_clean;                 /* ... after a normal close (ERR_CLSD), not a reset */
	bool reset;                     /* tear down now, dropping what is queued */
	int fd;                         /* the upstream socket, -1 until dialled */
	ev_io rio, wio;

	struct pbuf *upq, *upq_tail;    /* sandbox → upstream, not yet written (chains linked) */
	size_t upq_off, upq_len;
	uint8_t *down;                  /* upstream → sandbox, read but refused by lwIP */
	size_t down_len;
	bool up_eof, up_shut, down_eof, down_fin;
	uint64_t up_bytes, down_bytes, rep_up, rep_down;
	size_t down_held;               /* written into lwIP, not yet acked by the sandbox */

	struct udp_dgram *udpq, **udpq_tail;
	size_t udpq_n;
	unsigned dns_pending;
	ev_tstamp deadline;

	struct tw_stream tw;            /* the decoy-token scan of what the sandbox sends */
	uint64_t tw_scanned;            /* bytes of it scanned (at most NETPROTO_TRIPWIRE_SCAN) */
	bool tw_tripped;                /* a token was in it: NET_TRIPWIRE sent, nothing more goes */

	struct flow *next_id, *next_tuple;      /* hash chains */
	struct flow *prev, *next;               /* every live flow */
	struct flow *next_dirty;
	bool dirty;
};

/* A DNS query waiting for NET_ANSWER, with where its answer goes. */
struct dns_pending {
	bool used;
	uint32_t id;
	bool tcp;
	uint32_t flow_id;               /* tcp */
	int family;                     /* udp: the client and the server it asked */
	uint8_t client[16], server[16];
	uint16_t cport;
	ev_tstamp deadline;
	struct dns_question q;
};

struct gw {
	struct ev_loop *loop;
	int broker_fd, tap_fd;
	struct net_pcap *pcap;
	bool pcap_reported, tap_dead, flows_full_reported;
	bool observe;                   /* NETCFG_OBSERVE: name open flows for the record */
	struct tls_engine *tls;         /* TLS inspection (NETCFG_TLS; net/tls.h), or NULL */
	struct tw_matcher *tw;          /* the decoy tokens, or NULL (gw_set_tripwires) */
	int exit_status;

	struct netif *nif;              /* net/lwip.c's */
	uint8_t sandbox_mac[6];

	ev_io tap_io, broker_io;
	ev_timer lwip_timer, stats_timer;
	ev_prepare prepare;

	uint32_t next_flow, next_query;
	size_t nflows, nheld;
	size_t max_flows;               /* GW_MAX_FLOWS, or fewer if descriptors are short */
	size_t down_held;               /* the flows' down_held, summed */
	bool down_starved;              /* a flow stopped reading upstream for the budget */
	size_t up_queued;               /* every flow's upq, in bytes of memory (GW_UP_BUDGET) */
	uint64_t up_refused;            /* data segments not fed for the upload budget or a hole */
	bool up_full_reported;
	struct flow *by_id[GW_HASH], *by_tuple[GW_HASH];
	struct flow *all, *dirty, *dead;
	struct tcp_pcb *tcp_listeners[65536];
	struct udp_pcb *udp_bound[65536];
	struct dns_pending queries[GW_MAX_QUERIES];
	uint64_t dropped[GW_VERDICT_COUNT];
	struct http_rules http_rules;   /* NET_HTTP_RULES: what the gates decide by */
	uint32_t http_seq;              /* the session's last request number (NET_HTTP_REQUEST) */
	double head_timeout;            /* GW_HEAD_TIMEOUT, or BOXY_NET_HEAD_TIMEOUT's */

	uint8_t rbuf[GW_FRAME_MAX];                 /* upstream bytes, or a peek at them */
	uint8_t tbuf[GW_TAP_READ];                  /* a TAP read: vnet header, frame */
	uint8_t frame[GW_ETH_HLEN + GW_FRAME_MAX];  /* a frame going to the TAP */
	uint8_t dgram[GW_FRAME_MAX];                /* a datagram either way */
};

/* ---- net/flow.c ---------------------------------------------------------------- */

/* The live flow for a 4-tuple (as the sandbox sees it), or with this id; else NULL. */
struct flow *flow_find_tuple(struct gw *gw, uint8_t proto, int family, const uint8_t *src,
			     uint16_t sport, const uint8_t *dst, uint16_t dport);
struct flow *flow_find_id(struct gw *gw, uint32_t id);
/* A new flow for the packet's tuple, in every table; the caller sets its state. */
struct flow *flow_new(struct gw *gw, enum flow_kind kind, const struct gw_packet *pkt);
/* Queue the flow for gw_service. */
void flow_dirty(struct flow *f);
/* Count bytes handed to lwIP for the sandbox (n > 0), or acked or dropped (n < 0). */
void flow_held(struct flow *f, ssize_t n);
/* A TCP segment carrying data from the sandbox: false when it must not reach lwIP (GW_UP_BUDGET). */
bool flow_up_admit(struct gw *gw, const struct gw_packet *pkt);
/* End a flow (reset: abort its pcb); never from inside an lwIP callback for its pcb. */
void flow_kill(struct flow *f, bool reset);
/* True when no new flow may be opened (said once to the daemon's log). */
bool flows_full(struct gw *gw);
/* Adopt the upstream socket the broker dialled. */
void flow_attach_fd(struct gw *gw, struct flow *f, int fd);
/* Service every dirty flow, then free the flows that ended. */
void gw_service(struct gw *gw);

/* ---- net/tcp.c, net/udp.c, net/dns.c --------------------------------------------- */

void tcp_segment_in(struct gw *gw, const struct gw_packet *pkt);
void tcp_upstream_readable(struct gw *gw, struct flow *f);
void tcp_service(struct gw *gw, struct flow *f);
/* lwIP completed a handshake: the flow admitted for the tuple, or NULL; then its pcb is set. */
struct flow *tcp_flow_accepting(struct gw *gw, int family, const uint8_t *src, uint16_t sport,
				const uint8_t *dst, uint16_t dport);
void tcp_flow_accepted(struct flow *f);
/* The broker's verdict (NETV_*, fd dialled or -1) on a held SYN, and on a named flow. */
void tcp_admit(struct gw *gw, struct flow *f, uint8_t v, int fd);
int tcp_named(struct gw *gw, struct flow *f, uint8_t v, int fd, uint8_t flags);

/* A datagram from the sandbox, len bytes in gw->dgram, key its tuple. */
void udp_datagram_in(struct gw *gw, const struct gw_packet *key, size_t len);
void udp_upstream_readable(struct gw *gw, struct flow *f);
void udp_verdict(struct gw *gw, struct flow *f, uint8_t v, int fd);
void udp_queue_drop(struct flow *f);

/* A query from the sandbox; true if it is now pending (answered by dns_answer). */
bool dns_query_in(struct gw *gw, const struct dns_pending *how, const uint8_t *p, size_t len);
void dns_tcp_service(struct gw *gw, struct flow *f);
void dns_answer(struct gw *gw, uint32_t id, uint8_t rcode, uint32_t ttl,
		const struct net_addr *addrs, size_t n);
void dns_expire(struct gw *gw, ev_tstamp now);

/* ---- net/broker-msg.c -------------------------------------------------------------- */

void broker_log(struct gw *gw, const char *words);
void send_flow_open(struct gw *gw, struct flow *f);
void send_flow_counts(struct gw *gw, struct flow *f, uint16_t type);
void send_flow_name(struct gw *gw, struct flow *f, enum net_name_kind kind, bool ech,
		    const char *name);
void send_flow_seen(struct gw *gw, struct flow *f, enum net_name_kind kind, const char *name);
void send_tripwire(struct gw *gw, struct flow *f, const struct tw_hit *hit);
/* Scan the next n bytes the sandbox sends on f (within the budget): true when a token was in them. */
bool flow_tripwire_scan(struct gw *gw, struct flow *f, const uint8_t *p, size_t n);
/* Where a DNS query came from: the sandbox's socket (NET_RESOLVE carries it). */
struct dns_source {
	uint8_t proto;                  /* 6 or 17 */
	int family;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
};
void send_resolve(struct gw *gw, uint32_t id, const char *name, uint16_t qtype,
		  const struct dns_source *from);
/* NET_TLS_FAIL: why an inspected flow failed (NETTLS_*), with OpenSSL's or an alert's words. */
void send_tls_fail(struct gw *gw, struct flow *f, uint8_t code, const char *detail);
/* One request a gate decided (NET_HTTP_REQUEST); the strings are the gate's, checked there. */
struct http_record {
	uint32_t seq;
	uint8_t deny;           /* enum http_deny */
	uint16_t rule;          /* HTTP_RULE_NONE: none */
	uint8_t flags;          /* HTTPREQ_* */
	const char *method, *host, *path, *query, *why;
	uint16_t port;
};
void send_http_request(struct gw *gw, struct flow *f, const struct http_record *r);
/* The broker socket's watcher. */
void broker_cb(struct ev_loop *loop, ev_io *w, int revents);

/* ---- net/gw.c ------------------------------------------------------------------- */

/* A frame to the capture; a frame to the sandbox (captured too). */
void capture(struct gw *gw, const uint8_t *frame, size_t len);
void tap_send(struct gw *gw, const uint8_t *frame, size_t len);
void tap_send_vnet(struct gw *gw, const uint8_t vnet[GW_VNET_HLEN], const uint8_t *frame,
		   size_t len);

/* ---- net/lwip.c: the stack ------------------------------------------------------- */

/* Where the next TAP read goes, *cap bytes of a pbuf's room, or NULL (then use gw->tbuf). */
uint8_t *stack_rx_buffer(size_t *cap);

enum stack_write {
	STACK_WROTE,            /* queued */
	STACK_FULL,             /* no room now (ERR_MEM): try again after tcp_on_sent */
	STACK_FAILED,           /* any other error: reset the flow */
};

void stack_create(struct gw *gw);
/*
 * Hand an IP packet to lwIP as if addressed to lwIP itself (dst: its
 * destination). A TCP packet of GW_RX_ADOPT bytes or more read into
 * stack_rx_buffer is handed over in that pbuf: ip must not be read after.
 */
void stack_feed(struct gw *gw, int family, const uint8_t *ip, size_t len, const uint8_t *dst);
/* lwIP's timers (and TIME_WAIT pcbs dropped); seconds to the next, or -1. */
void stack_timers(void);
double stack_sleep(void);
/* The listening pcb for a port, created on first use (every address). */
bool stack_tcp_listen(struct gw *gw, uint16_t port);
bool stack_udp_listen(struct gw *gw, uint16_t port);
bool stack_tcp_syn_known(const struct gw_packet *pkt);
void stack_tcp_close(struct flow *f, bool reset);
size_t stack_tcp_sndbuf(const struct flow *f);
bool stack_tcp_queue_full(const struct flow *f);
size_t stack_tcp_seg_max(const struct flow *f);
enum stack_write stack_tcp_write_recv(struct flow *f, int fd, void *buf, size_t n);
enum stack_write stack_tcp_write(struct flow *f, const void *p, size_t n, bool more);
void stack_tcp_output(struct flow *f);
void stack_tcp_shutdown(struct flow *f);
/* Give lwIP back n bytes of receive window. */
void stack_tcp_recved(struct flow *f, size_t n);
/* The flow's sandbox→upstream queue. */
void stack_upq_clear(struct flow *f);
void stack_upq_consume(struct flow *f, size_t n);
size_t stack_upq_peek(const struct flow *f, uint8_t *out, size_t cap);
/* The next sequence number the flow's pcb expects from the sandbox; false without a pcb. */
bool stack_tcp_rcv_nxt(const struct flow *f, uint32_t *nxt);
/* Copy up to cap bytes of the queue starting off bytes past its front. */
size_t stack_upq_copy(const struct flow *f, size_t off, uint8_t *out, size_t cap);
int stack_upq_iov(const struct flow *f, struct iovec *iov, int max);
bool stack_udp_send(struct gw *gw, uint16_t lport, int family, const uint8_t *to, uint16_t tport,
		    const uint8_t *from, const void *data, size_t n);

#endif
