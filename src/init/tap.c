/*
 * init/tap.c — tap0 inside the sandbox: creation through /dev/net/tun,
 * configuration over rtnetlink, and the descriptor's trip to the daemon.
 *
 * Runs in boxy-init before mount_setup: /dev/net/tun must still be the
 * host's (the sandbox's /dev has no tun), and CAP_NET_ADMIN over the new
 * network namespace must still be held. Each rtnetlink request asks for an
 * acknowledgement and is checked, so a kernel that refuses a step fails the
 * stage with the step named, rather than leaving a half-configured
 * interface that would only show up as timeouts inside the sandbox.
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "parse/dns.h"
#include "init/tap.h"
#include "common/util.h"

#define NL_BUF 1024

int sandbox_net_tap_create(const char *name, int *fds, unsigned nqueues, char **err)
{
	struct ifreq ifr;
	unsigned i;

	if (strlen(name) >= IFNAMSIZ)
		return set_err(err, "interface name '%s' too long", name);
	if (nqueues < 1 || nqueues > SANDBOX_NET_MAX_QUEUES)
		return set_err(err, "%u queues for %s: 1 to %u", nqueues, name,
			       SANDBOX_NET_MAX_QUEUES);
	for (i = 0; i < nqueues; i++) {
		fds[i] = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
		if (fds[i] < 0) {
			set_err_errno(err, "open /dev/net/tun");
			goto fail;
		}
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		/* Ethernet frames without the 4-byte packet-information prefix, each
		 * behind a virtio-net header (doc/internals-net.md, "Offloads"); with
		 * more than one queue, each open attaches one more queue to the same
		 * device, and the kernel keeps every flow on one of them. */
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR |
				(nqueues > 1 ? IFF_MULTI_QUEUE : 0);
		if (ioctl(fds[i], TUNSETIFF, &ifr) < 0) {
			set_err_errno(err, "TUNSETIFF %s", name);
			close(fds[i]);
			goto fail;
		}
		/* The sandbox's kernel may then leave TCP and UDP checksums partial and
		 * hand over TCP segments of up to 64 KiB; boxy-net accepts both. */
		if (ioctl(fds[i], TUNSETOFFLOAD,
			  (unsigned long)(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6)) < 0) {
			set_err_errno(err, "TUNSETOFFLOAD %s", name);
			close(fds[i]);
			goto fail;
		}
	}
	return 0;
fail:
	while (i-- > 0)
		close(fds[i]);
	return -1;
}

/* ---- rtnetlink ---------------------------------------------------------------- */

struct nlreq {
	struct nlmsghdr *h;
	uint8_t buf[NL_BUF];
};

/* Begin a request of type that asks for an acknowledgement. */
static void nl_start(struct nlreq *r, uint16_t type, uint16_t flags)
{
	memset(r->buf, 0, sizeof(r->buf));
	r->h = (struct nlmsghdr *)r->buf;
	r->h->nlmsg_len = NLMSG_LENGTH(0);
	r->h->nlmsg_type = type;
	r->h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
}

/* Append a fixed header (ifinfomsg, ifaddrmsg, rtmsg) right after the nlmsghdr. */
static void *nl_body(struct nlreq *r, size_t len)
{
	void *p = r->buf + r->h->nlmsg_len;

	r->h->nlmsg_len += NLMSG_ALIGN(len);
	return p;
}

/* Append one attribute (type, data) to the request. */
static void nl_attr(struct nlreq *r, uint16_t type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(r->buf + NLMSG_ALIGN(r->h->nlmsg_len));

	/* Requests here are a few dozen bytes: the buffer cannot overflow. */
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	r->h->nlmsg_len = NLMSG_ALIGN(r->h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send one request and read its acknowledgement; what names the step for the error. */
static int nl_talk(int fd, struct nlreq *r, const char *what, char **err)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint8_t reply[NL_BUF];
	static uint32_t seq;
	ssize_t n;

	r->h->nlmsg_seq = ++seq;
	if (sendto(fd, r->buf, r->h->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return set_err_errno(err, "netlink %s", what);
	for (;;) {
		n = recv(fd, reply, sizeof(reply), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return set_err_errno(err, "netlink %s", what);
		for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != r->h->nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error == 0)
					return 0;
				errno = -e->error;
				return set_err_errno(err, "%s", what);
			}
		}
	}
}

/* Set the link up with its MTU (RTM_NEWLINK on an existing index). */
static int link_up(int nl, int ifindex, unsigned mtu, char **err)
{
	struct nlreq r;
	struct ifinfomsg *ifi;
	uint32_t m = mtu;

	nl_start(&r, RTM_NEWLINK, 0);
	ifi = nl_body(&r, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	nl_attr(&r, IFLA_MTU, &m, sizeof(m));
	return nl_talk(nl, &r, "bringing tap0 up", err);
}

/* Add text/prefix to the link (RTM_NEWADDR); IPv6 without DAD. */
static int addr_add(int nl, int ifindex, int family, const char *text, uint8_t prefix,
		    char **err)
{
	struct nlreq r;
	struct ifaddrmsg *ifa;
	uint8_t a[16];
	size_t alen = family == AF_INET ? 4 : 16;
	char *what;
	int rc;

	if (inet_pton(family, text, a) != 1)
		return set_err(err, "bad address %s", text);
	nl_start(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	ifa = nl_body(&r, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_prefixlen = prefix;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (uint32_t)ifindex;
	nl_attr(&r, IFA_LOCAL, a, alen);
	nl_attr(&r, IFA_ADDRESS, a, alen);
	if (family == AF_INET6) {
		/* No duplicate address detection: the only other host on the link is
		 * boxy-net, and DAD would leave the address tentative (unusable) for
		 * a second while the payload is already connecting. */
		uint32_t flags = IFA_F_NODAD;

		ifa->ifa_flags = IFA_F_NODAD;
		nl_attr(&r, IFA_FLAGS, &flags, sizeof(flags));
	}
	what = xasprintf("adding %s/%u to tap0", text, prefix);
	rc = nl_talk(nl, &r, what, err);
	free(what);
	return rc;
}

/* Add a default route via gw on the link (RTM_NEWROUTE). */
static int route_default(int nl, int ifindex, int family, const char *gw, char **err)
{
	struct nlreq r;
	struct rtmsg *rt;
	uint8_t a[16];
	uint32_t oif = (uint32_t)ifindex;
	char *what;
	int rc;

	if (inet_pton(family, gw, a) != 1)
		return set_err(err, "bad gateway %s", gw);
	nl_start(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
	rt = nl_body(&r, sizeof(*rt));
	rt->rtm_family = (uint8_t)family;
	rt->rtm_dst_len = 0;
	rt->rtm_table = RT_TABLE_MAIN;
	rt->rtm_protocol = RTPROT_BOOT;
	rt->rtm_scope = RT_SCOPE_UNIVERSE;
	rt->rtm_type = RTN_UNICAST;
	nl_attr(&r, RTA_GATEWAY, a, family == AF_INET ? 4 : 16);
	nl_attr(&r, RTA_OIF, &oif, sizeof(oif));
	what = xasprintf("default route via %s", gw);
	rc = nl_talk(nl, &r, what, err);
	free(what);
	return rc;
}

/* Write a sysctl if the file is there and writable; silently leave it otherwise. */
static void sysctl_try(const char *ifname, const char *key, const char *value)
{
	char *path = xasprintf("/proc/sys/net/ipv6/conf/%s/%s", ifname, key);
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, value, strlen(value)) < 0) {
			/* best effort: see init/tap.h */
		}
		close(fd);
	}
	free(path);
}

int sandbox_net_configure(const char *name, unsigned mtu, char **err)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int nl, ifindex = (int)if_nametoindex(name), rc = -1;

	if (!ifindex)
		return set_err_errno(err, "%s", name);
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl < 0)
		return set_err_errno(err, "netlink socket");
	if (bind(nl, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		set_err_errno(err, "netlink bind");
		goto out;
	}
	/* Before the link comes up, so no router solicitation or DAD probe goes out. */
	sysctl_try(name, "accept_ra", "0");
	sysctl_try(name, "dad_transmits", "0");
	sysctl_try(name, "router_solicitations", "0");
	if (link_up(nl, ifindex, mtu, err) < 0 ||
	    addr_add(nl, ifindex, AF_INET, SANDBOX_NET_ADDR4, SANDBOX_NET_PREFIX4, err) < 0 ||
	    addr_add(nl, ifindex, AF_INET6, SANDBOX_NET_ADDR6, SANDBOX_NET_PREFIX6, err) < 0 ||
	    route_default(nl, ifindex, AF_INET, SANDBOX_NET_GW4, err) < 0 ||
	    route_default(nl, ifindex, AF_INET6, SANDBOX_NET_GW6, err) < 0)
		goto out;
	rc = 0;
out:
	close(nl);
	return rc;
}

char *sandbox_net_resolv_conf(const char *search)
{
	char norm[DNS_NAME_BUF];

	/* The suffix is a validated DNS name by now (plan_decode); a line is never written
	 * for anything else, so no text can smuggle a directive of its own in. */
	if (search && (dns_name_normalize(search, strlen(search), norm) < 0 ||
		       strcmp(norm, search) != 0))
		search = NULL;
	return xasprintf("# boxy: every DNS query leaves through boxy's resolver\n"
			 "nameserver %s\nnameserver %s\n%s%s%s",
			 SANDBOX_NET_GW4, SANDBOX_NET_GW6, search ? "search " : "",
			 search ? search : "", search ? "\n" : "");
}

int sandbox_net_send_fds(int sock, const int *fds, unsigned n, char **err)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * SANDBOX_NET_MAX_QUEUES)];
	} ctl;
	char byte = 'T';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * n) };
	struct cmsghdr *c;
	ssize_t r;

	if (n < 1 || n > SANDBOX_NET_MAX_QUEUES)
		return set_err(err, "sending %u TAP descriptors", n);
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		return set_err_errno(err, "sending the TAP descriptor");
	return 0;
}

int sandbox_net_recv_fds(int sock, int *fds, unsigned max, char **err)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * (SANDBOX_NET_MAX_QUEUES + 4))];
	} ctl;
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	unsigned got = 0;
	ssize_t n;

	if (max > SANDBOX_NET_MAX_QUEUES)
		max = SANDBOX_NET_MAX_QUEUES;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return set_err_errno(err, "receiving the TAP descriptor");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int in[SANDBOX_NET_MAX_QUEUES + 4];

		if (nfd > ARRAY_SIZE(in))
			nfd = ARRAY_SIZE(in);
		memcpy(in, CMSG_DATA(c), nfd * sizeof(int));
		for (size_t i = 0; i < nfd; i++) {
			if (got < max)
				fds[got++] = in[i];
			else
				close(in[i]);     /* more than were asked for: not kept */
		}
	}
	if (n != 1 || byte != 'T' || got == 0 || (mh.msg_flags & MSG_CTRUNC)) {
		while (got > 0)
			close(fds[--got]);
		return set_err(err, "no TAP descriptor from the sandbox");
	}
	return (int)got;
}

int sandbox_net_setup(int sock, unsigned nqueues, char **err)
{
	int taps[SANDBOX_NET_MAX_QUEUES];
	int rc = -1;
	bool made = false;

	if (sandbox_net_tap_create(SANDBOX_NET_IF, taps, nqueues, err) < 0)
		goto out;
	made = true;
	/* The descriptors first: the daemon starts boxy-net on them while the link
	 * is configured here and the sandbox mounted (doc/internals-net.md, "The
	 * start"). A link still down carries nothing, so nothing is missed. */
	if (sandbox_net_send_fds(sock, taps, nqueues, err) < 0)
		goto out;
	if (sandbox_net_configure(SANDBOX_NET_IF, SANDBOX_NET_MTU, err) < 0)
		goto out;
	rc = 0;
out:
	for (unsigned i = 0; made && i < nqueues; i++)
		close(taps[i]);
	close(sock);
	return rc;
}
