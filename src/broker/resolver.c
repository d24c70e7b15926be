/*
 * broker/resolver.c — c-ares in the daemon's libev loop, for names the broker
 * has permitted.
 *
 * c-ares tells us which sockets it wants watched through its socket-state
 * callback; each becomes an ev_io, and one ev_timer follows ares_timeout()
 * so retransmissions and timeouts happen without anyone polling. Lookups go
 * through ares_getaddrinfo(), which consults /etc/hosts before DNS (as the
 * host's own programs would) and reports each address's TTL. Search domains
 * are switched off: the sandbox's own resolver library already expanded the
 * name it asks for, and expanding it again here could resolve a permitted
 * short name to an unpermitted long one. The one exception is the tailnet's:
 * with --tailscale a single-label name ("nas") is asked of MagicDNS as
 * nas.SUFFIX first, and of the host's resolver as it is only when MagicDNS
 * says NXDOMAIN, which is what the suffix as the sandbox's search domain
 * would make the sandbox's own resolver do. The answer is the short name's:
 * the broker binds it to "nas", the name the user permitted.
 */
#include <config.h>

#include <ares.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "parse/dns.h"
#include "broker/resolver.h"
#include "common/util.h"

#define RESOLVER_TIMEOUT_MS 2500
#define RESOLVER_TRIES      2
#define TAILSCALED_SOCK     "/var/run/tailscale/tailscaled.sock"

struct rsock {
	struct rsock *next;
	struct resolver *r;
	int fd;
	ev_io w;
};

struct channel {
	ares_channel ch;
	bool up;
};

struct rquery {
	struct resolver *r;
	void (*cb)(void *arg, int rcode, const struct net_addr *addrs, const uint32_t *ttls,
		   size_t n);
	void *arg;
	char *bare;                 /* asked as BARE.SUFFIX: ask BARE upstream on NXDOMAIN */
	struct ares_addrinfo_hints hints;
};

struct resolver {
	struct ev_loop *loop;
	struct channel main, tailnet;
	char *suffix;               /* MagicDNS suffix, or NULL */
	struct rsock *socks;
	ev_timer timer;
	size_t pending;
	bool freeing;               /* ares_destroy is calling back: drop the answers */
};

static void resolver_rearm(struct resolver *r);

/* Let c-ares handle whatever woke us, then look at its timers again. */
static void resolver_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct rsock *s = w->data;
	struct resolver *r = s->r;
	int fd = s->fd;

	(void)loop;
	/* s may be freed by the state callback inside ares_process_fd: use the copies. */
	if (r->main.up)
		ares_process_fd(r->main.ch, (revents & EV_READ) ? fd : ARES_SOCKET_BAD,
				(revents & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	if (r->tailnet.up)
		ares_process_fd(r->tailnet.ch, (revents & EV_READ) ? fd : ARES_SOCKET_BAD,
				(revents & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	resolver_rearm(r);
}

/* A c-ares timeout fired: ares_process_fd with no descriptor handles timeouts. */
static void resolver_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct resolver *r = w->data;

	(void)loop;
	(void)revents;
	if (r->main.up)
		ares_process_fd(r->main.ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	if (r->tailnet.up)
		ares_process_fd(r->tailnet.ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	resolver_rearm(r);
}

/* Set the timer to the earliest c-ares deadline of either channel. */
static void resolver_rearm(struct resolver *r)
{
	struct timeval best = { 0 }, tv, *t;
	bool any = false;

	ev_timer_stop(r->loop, &r->timer);
	for (int i = 0; i < 2; i++) {
		struct channel *c = i ? &r->tailnet : &r->main;

		if (!c->up)
			continue;
		t = ares_timeout(c->ch, NULL, &tv);
		if (t && (!any || t->tv_sec < best.tv_sec ||
			  (t->tv_sec == best.tv_sec && t->tv_usec < best.tv_usec))) {
			best = *t;
			any = true;
		}
	}
	if (!any)
		return;
	ev_timer_set(&r->timer, (double)best.tv_sec + (double)best.tv_usec / 1e6 + 0.001, 0.0);
	ev_timer_start(r->loop, &r->timer);
}

/* c-ares says which events a socket of its wants (both 0: it is closing). */
static void resolver_sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct resolver *r = data;
	struct rsock **pp, *s = NULL;
	int events = (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);

	for (pp = &r->socks; *pp; pp = &(*pp)->next) {
		if ((*pp)->fd == fd) {
			s = *pp;
			break;
		}
	}
	if (!events) {
		if (s) {
			ev_io_stop(r->loop, &s->w);
			*pp = s->next;
			free(s);
		}
		return;
	}
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->r = r;
		s->fd = fd;
		ev_io_init(&s->w, resolver_io, fd, events);
		s->w.data = s;
		s->next = r->socks;
		r->socks = s;
	} else {
		ev_io_stop(r->loop, &s->w);
		ev_io_set(&s->w, fd, events);
	}
	ev_io_start(r->loop, &s->w);
}

/* One channel: no search domains, short timeouts, our socket callback. */
static int channel_init(struct resolver *r, struct channel *c, const char *servers, char **err)
{
	struct ares_options o;
	int rc, mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_DOMAINS | ARES_OPT_NDOTS |
		       ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;

	memset(&o, 0, sizeof(o));
	o.sock_state_cb = resolver_sock_state;
	o.sock_state_cb_data = r;
	o.domains = NULL;
	o.ndomains = 0;
	o.ndots = 1;
	o.timeout = RESOLVER_TIMEOUT_MS;
	o.tries = RESOLVER_TRIES;
	rc = ares_init_options(&c->ch, &o, mask);
	if (rc != ARES_SUCCESS)
		return set_err(err, "c-ares: %s", ares_strerror(rc));
	if (servers) {
		rc = ares_set_servers_ports_csv(c->ch, servers);
		if (rc != ARES_SUCCESS) {
			ares_destroy(c->ch);
			return set_err(err, "c-ares servers '%s': %s", servers, ares_strerror(rc));
		}
	}
	c->up = true;
	return 0;
}

struct resolver *resolver_create(struct ev_loop *loop, const char *servers, char **err)
{
	static bool lib_ready;
	struct resolver *r;

	if (!lib_ready) {
		int rc = ares_library_init(ARES_LIB_INIT_ALL);

		if (rc != ARES_SUCCESS) {
			set_err(err, "c-ares: %s", ares_strerror(rc));
			return NULL;
		}
		lib_ready = true;
	}
	r = xcalloc(1, sizeof(*r));
	r->loop = loop;
	ev_timer_init(&r->timer, resolver_timeout, 1.0, 0.0);
	r->timer.data = r;
	if (channel_init(r, &r->main, servers, err) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

int resolver_set_tailnet(struct resolver *r, const char *suffix, const char *servers, char **err)
{
	char norm[DNS_NAME_BUF];

	if (!suffix || dns_name_normalize(suffix, strlen(suffix), norm) < 0 || !norm[0])
		return set_err(err, "invalid MagicDNS suffix");
	if (r->tailnet.up)
		return set_err(err, "the tailnet is already set");
	if (channel_init(r, &r->tailnet, servers ? servers : RESOLVER_MAGICDNS, err) < 0)
		return -1;
	r->suffix = xstrdup(norm);
	return 0;
}

const char *resolver_tailnet_suffix(const struct resolver *r)
{
	return r->suffix;
}

/* Is name the suffix or below it (at a label boundary)? */
static bool in_tailnet(const struct resolver *r, const char *name)
{
	size_t n = strlen(name), s;

	if (!r->suffix)
		return false;
	s = strlen(r->suffix);
	if (n == s)
		return strcmp(name, r->suffix) == 0;
	return n > s && name[n - s - 1] == '.' && strcmp(name + n - s, r->suffix) == 0;
}

/* Is a among the first n addresses? */
static bool addr_seen(const struct net_addr *addrs, size_t n, const struct net_addr *a)
{
	for (size_t i = 0; i < n; i++)
		if (net_addr_equal(&addrs[i], a))
			return true;
	return false;
}

/* c-ares finished a lookup: hand the addresses on, or the rcode that fits its status. */
static void resolver_done(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct rquery *q = arg;
	struct resolver *r = q->r;
	struct net_addr addrs[DNS_ANSWER_MAX];
	uint32_t ttls[DNS_ANSWER_MAX];
	size_t n = 0;
	int rcode;

	(void)timeouts;
	r->pending--;
	if (r->freeing || status == ARES_EDESTRUCTION || status == ARES_ECANCELLED) {
		if (res)
			ares_freeaddrinfo(res);
		free(q->bare);
		free(q);
		return;
	}
	if (q->bare && status == ARES_ENOTFOUND) {
		/* Not a tailnet machine: the name as the sandbox asked, upstream. */
		char *bare = q->bare;

		if (res)
			ares_freeaddrinfo(res);
		q->bare = NULL;
		r->pending++;
		ares_getaddrinfo(r->main.ch, bare, NULL, &q->hints, resolver_done, q);
		free(bare);
		return;
	}
	switch (status) {
	case ARES_SUCCESS:
		rcode = DNS_RCODE_NOERROR;
		break;
	case ARES_ENOTFOUND:
		rcode = DNS_RCODE_NXDOMAIN;
		break;
	case ARES_ENODATA:
		rcode = DNS_RCODE_NOERROR;
		break;
	default:
		rcode = DNS_RCODE_SERVFAIL;
		break;
	}
	for (struct ares_addrinfo_node *p = res ? res->nodes : NULL; p && n < DNS_ANSWER_MAX;
	     p = p->ai_next) {
		if (p->ai_family == AF_INET && p->ai_addr) {
			const struct sockaddr_in *sin = (const void *)p->ai_addr;

			net_addr_set_v4(&addrs[n], (const uint8_t *)&sin->sin_addr);
		} else if (p->ai_family == AF_INET6 && p->ai_addr) {
			const struct sockaddr_in6 *sin6 = (const void *)p->ai_addr;

			net_addr_set_v6(&addrs[n], sin6->sin6_addr.s6_addr);
		} else {
			continue;
		}
		ttls[n] = p->ai_ttl > 0 ? (uint32_t)p->ai_ttl : 0;
		/* An answer may list an address twice (A and a CNAME's A): keep it once. */
		if (!addr_seen(addrs, n, &addrs[n]))
			n++;
	}
	if (res)
		ares_freeaddrinfo(res);
	q->cb(q->arg, rcode, addrs, ttls, n);
	free(q->bare);
	free(q);
}

int resolver_query(struct resolver *r, const char *name, int family,
		   void (*cb)(void *arg, int rcode, const struct net_addr *addrs,
			      const uint32_t *ttls, size_t n),
		   void *arg)
{
	struct rquery *q;
	struct channel *c;
	char *full = NULL;

	if (family != AF_INET && family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	c = in_tailnet(r, name) ? &r->tailnet : &r->main;
	/* A bare "nas" under --tailscale: the tailnet's nas.SUFFIX first (see the top). */
	if (r->suffix && name[0] && !strchr(name, '.') &&
	    strlen(name) + 1 + strlen(r->suffix) < DNS_NAME_BUF) {
		full = xasprintf("%s.%s", name, r->suffix);
		c = &r->tailnet;
	}
	q = xcalloc(1, sizeof(*q));
	q->r = r;
	q->cb = cb;
	q->arg = arg;
	q->hints.ai_family = family;
	q->hints.ai_socktype = SOCK_STREAM;
	q->hints.ai_flags = ARES_AI_NOSORT;
	if (full)
		q->bare = xstrdup(name);
	r->pending++;
	/* May call resolver_done at once (an /etc/hosts hit): q is owned by it from here. */
	ares_getaddrinfo(c->ch, full ? full : name, NULL, &q->hints, resolver_done, q);
	free(full);
	resolver_rearm(r);
	return 0;
}

size_t resolver_pending(const struct resolver *r)
{
	return r->pending;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	r->freeing = true;
	if (r->main.up)
		ares_destroy(r->main.ch);
	if (r->tailnet.up)
		ares_destroy(r->tailnet.ch);
	while (r->socks) {
		struct rsock *s = r->socks;

		r->socks = s->next;
		ev_io_stop(r->loop, &s->w);
		free(s);
	}
	ev_timer_stop(r->loop, &r->timer);
	free(r->suffix);
	free(r);
}

/* Find "key":"value" in a JSON text and return value, malloc'd (no escapes expected). */
static char *json_find_string(const char *text, const char *key)
{
	char *pat = xasprintf("\"%s\"", key), *v = NULL;
	const char *p = strstr(text, pat), *e;

	free(pat);
	if (!p)
		return NULL;
	p += strlen(key) + 2;
	p += strspn(p, " \t\r\n");
	if (*p != ':')
		return NULL;
	p++;
	p += strspn(p, " \t\r\n");
	if (*p != '"')
		return NULL;
	p++;
	e = strchr(p, '"');
	if (e && e - p < DNS_NAME_BUF)
		v = xstrndup(p, (size_t)(e - p));
	return v;
}

char *resolver_tailscale_suffix(const char *sock_path, char **err)
{
	static const char req[] = "GET /localapi/v0/status HTTP/1.0\r\n"
				  "Host: local-tailscaled.sock\r\n\r\n";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	size_t cap = 1 << 16, len = 0, max = 8u << 20;
	char *buf, *suffix, norm[DNS_NAME_BUF];
	int fd;

	if (!sock_path)
		sock_path = TAILSCALED_SOCK;
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		set_err(err, "tailscaled socket path too long");
		return NULL;
	}
	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		set_err_errno(err, "socket");
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		set_err_errno(err, "tailscaled is not reachable at %s", sock_path);
		close(fd);
		return NULL;
	}
	if (write_all(fd, req, sizeof(req) - 1) < 0) {
		set_err_errno(err, "asking tailscaled for its status");
		close(fd);
		return NULL;
	}
	buf = xmalloc(cap);
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			if (cap >= max)
				break;
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	suffix = json_find_string(buf, "MagicDNSSuffix");
	free(buf);
	if (!suffix || !suffix[0] || dns_name_normalize(suffix, strlen(suffix), norm) < 0) {
		set_err(err, "tailscaled did not report a MagicDNS suffix (is MagicDNS enabled?)");
		free(suffix);
		return NULL;
	}
	free(suffix);
	return xstrdup(norm);
}
