/*
 * init/tap.h — the sandbox's side of the network: tap0.
 *
 * Called by boxy-init inside the sandbox's new user and network namespaces,
 * while it still holds CAP_NET_ADMIN there and /dev/net/tun is still
 * reachable (before mount_setup and the capability drop): create tap0,
 * configure it over rtnetlink (no `ip` binary: the sandbox has none, and a
 * raw message says exactly what is set), and hand its descriptor to the
 * daemon over a unix socket with SCM_RIGHTS. The daemon gives it to
 * boxy-net, which answers as the gateway for every address.
 *
 *   tap0  10.0.2.15/24      default via 10.0.2.2
 *         fd00:b0c5::15/64  default via fd00:b0c5::2   (nodad; accept_ra 0)
 *
 * 10.0.2.0/24 is the range user-mode network stacks have used for decades;
 * fd00:b0c5::/64 is a unique-local prefix, so neither can be mistaken for a
 * route anywhere. Both addresses are refused destinations by policy anyway.
 */
#ifndef BOXY_SANDBOX_NET_H
#define BOXY_SANDBOX_NET_H

#include <stdint.h>

#define SANDBOX_NET_IF        "tap0"
#define SANDBOX_NET_ADDR4     "10.0.2.15"
#define SANDBOX_NET_GW4       "10.0.2.2"
#define SANDBOX_NET_PREFIX4   24
#define SANDBOX_NET_ADDR6     "fd00:b0c5::15"
#define SANDBOX_NET_GW6       "fd00:b0c5::2"
#define SANDBOX_NET_PREFIX6   64
#define SANDBOX_NET_MTU       65520  /* = GW_MTU (net/gw.h explains why so large) */
#define SANDBOX_NET_MAX_QUEUES 8     /* queues of tap0, one boxy-net each (broker.h's helpers) */

/*
 * Create the TAP device name (IFF_TAP | IFF_NO_PI, the virtio-net header and
 * its offloads) with nqueues queues (IFF_MULTI_QUEUE when more than one): a
 * descriptor for each in fds[0..nqueues-1] (O_CLOEXEC). The kernel keeps
 * every flow on one queue (tun's flow steering, by a hash of its addresses
 * and ports, the same both ways), so each queue's reader sees whole flows.
 * 0, or -1 with *err and nothing left open.
 */
int sandbox_net_tap_create(const char *name, int *fds, unsigned nqueues, char **err);

/*
 * Configure name: MTU, up, the IPv4 and IPv6 addresses (IPv6 with nodad),
 * the two default routes, and accept_ra 0 / dad_transmits 0 through
 * /proc/sys/net/ipv6/conf/NAME/ when those files are writable (best effort:
 * boxy-net sends no router advertisements and drops what it cannot answer).
 */
int sandbox_net_configure(const char *name, unsigned mtu, char **err);

/*
 * The sandbox's /etc/resolv.conf text (malloc'd): the gateway's addresses
 * (boxy-net answers DNS on port 53 at any address, these are simply the
 * ones that always route) and, with --tailscale, the MagicDNS suffix as the
 * search domain (search NULL, or anything but a canonical DNS name: no search
 * line). The mount stage writes it as the sandbox's /etc/resolv.conf for
 * --net public and allowlist: the host's file may name 127.0.0.53, which
 * inside the sandbox's own network namespace is nobody.
 */
char *sandbox_net_resolv_conf(const char *search);

/* Send fds[0..n-1] over the unix socket sock with SCM_RIGHTS, in one message (one byte of data). */
int sandbox_net_send_fds(int sock, const int *fds, unsigned n, char **err);

/*
 * Receive the descriptors sent by sandbox_net_send_fds (blocking): at most
 * max kept in fds (more are closed), at least one. Returns how many, or -1
 * with *err (nothing kept).
 */
int sandbox_net_recv_fds(int sock, int *fds, unsigned max, char **err);

/*
 * Stage "net" for a networked run: tap_create with nqueues queues, send
 * the descriptors over sock (the daemon starts boxy-net on them at once),
 * configure the link, close boxy-init's copies. sock is closed in any case.
 */
int sandbox_net_setup(int sock, unsigned nqueues, char **err);

#endif
