/*
 * policy/decide.c — the network decision (see policy/decide.h for the order).
 *
 * Default deny: every path through net_policy_decide() that does not end
 * in an explicit allow ends in a refusal with a reason. The function reads
 * only its arguments, so the same flow, policy, bindings and time give the
 * same verdict every time, which is what makes the unit tests complete.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"

#include "parse/dns.h"
#include "policy/decide.h"

static const struct {
	const char *code;
	const char *words;
} deny_names[NET_DENY_COUNT] = {
	[NET_DENY_NONE] = { "allowed", "allowed" },
	[NET_DENY_MODE_NONE] = { "net-none", "network disabled (--net none)" },
	[NET_DENY_PORT_ZERO] = { "port-zero", "port 0" },
	[NET_DENY_RANGE] = { "range", "address range refused" },
	[NET_DENY_QUIC] = { "quic", "UDP/443 (QUIC) refused in allowlist mode" },
	[NET_DENY_PORT] = { "port", "port not allowed for this host" },
	[NET_DENY_NO_BINDING] = { "no-binding",
				  "address was not resolved from a permitted name" },
	[NET_DENY_NAME] = { "not-listed", "hostname not on the allowlist" },
	[NET_DENY_NAME_INVALID] = { "bad-name", "not a valid hostname" },
	[NET_DENY_NO_SNI] = { "no-sni", "TLS ClientHello without a server name" },
	[NET_DENY_NO_HOST] = { "no-host", "HTTP request without a Host" },
	[NET_DENY_SNI_MISMATCH] = { "sni-mismatch",
				    "name on the wire is not bound to this address" },
	[NET_DENY_ECH] = { "ech", "Encrypted ClientHello refused" },
	[NET_DENY_MALFORMED] = { "malformed",
				 "malformed or incomplete ClientHello or HTTP request head" },
};

/* Returns the stable code of a denial. */
const char *net_deny_code(enum net_deny d)
{
	return (unsigned)d < NET_DENY_COUNT ? deny_names[d].code : "unknown";
}

/* Returns the words of a denial. */
const char *net_deny_words(enum net_deny d)
{
	return (unsigned)d < NET_DENY_COUNT ? deny_names[d].words : "unknown";
}

/* Returns the words a user reads for a verdict. */
const char *net_verdict_words(const struct net_verdict *v)
{
	if (v->deny == NET_DENY_RANGE)
		return net_range_words(v->addr.range);
	return net_deny_words(v->deny);
}

/* Borrows the runspec's network fields. */
void net_policy_from_runspec(struct net_policy *p, const struct runspec *rs)
{
	memset(p, 0, sizeof(*p));
	p->mode = rs->net;
	p->hosts = rs->hosts;
	p->nhosts = rs->nhosts;
	p->ports = rs->ports;
	p->nports = rs->nports;
	p->cidrs = rs->cidrs;
	p->ncidrs = rs->ncidrs;
	p->tailscale = rs->tailscale;
}

/*
 * Does pattern match name? "*.example.com" matches one or more labels in
 * front of example.com, never example.com itself nor "badexample.com".
 */
static bool host_match(const char *pattern, const char *name)
{
	size_t pl, nl;

	if (pattern == NULL || name == NULL)
		return false;
	if (pattern[0] != '*')
		return strcmp(pattern, name) == 0;
	if (pattern[1] != '.')
		return false;
	pl = strlen(pattern + 1);       /* ".example.com" */
	nl = strlen(name);
	return nl > pl && strcmp(name + nl - pl, pattern + 1) == 0;
}

/* Is the name listed by an entry of its own (exactly or by wildcard)? */
static bool host_listed_directly(const struct net_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nhosts; i++)
		if (host_match(p->hosts[i].name, name))
			return true;
	return false;
}

/* The listed bare name LABEL.SUFFIX stands for under --tailscale (see the header). */
const char *net_policy_tailnet_alias(const struct net_policy *p, const char *name)
{
	size_t nl, sl, ll;

	if (!p->tailscale || p->tailnet == NULL || !p->tailnet[0] || name == NULL)
		return NULL;
	nl = strlen(name);
	sl = strlen(p->tailnet);
	/* At least one character of label, then the dot boundary, then the suffix. */
	if (nl < sl + 2 || name[nl - sl - 1] != '.' || strcmp(name + nl - sl, p->tailnet) != 0)
		return NULL;
	ll = nl - sl - 1;
	if (memchr(name, '.', ll) != NULL)
		return NULL;    /* only what a search domain completes: one label */
	for (size_t i = 0; i < p->nhosts; i++) {
		const char *h = p->hosts[i].name;

		/* An exact entry only: a "*." pattern never matches a single label anyway. */
		if (h != NULL && strlen(h) == ll && memcmp(h, name, ll) == 0)
			return h;
	}
	return NULL;
}

/* Is the name listed? */
bool net_policy_host_listed(const struct net_policy *p, const char *name)
{
	return host_listed_directly(p, name) || net_policy_tailnet_alias(p, name) != NULL;
}

/* Is port in the list? */
static bool port_in(const uint16_t *ports, size_t n, uint16_t port)
{
	for (size_t i = 0; i < n; i++)
		if (ports[i] == port)
			return true;
	return false;
}

/* The run-wide ports: the defaults plus --allow-port. */
static bool global_port_ok(const struct net_policy *p, uint16_t port)
{
	static const uint16_t defaults[] = NET_POLICY_DEFAULT_PORTS;

	return port_in(defaults, sizeof(defaults) / sizeof(defaults[0]), port) ||
	       port_in(p->ports, p->nports, port);
}

/* Appends port to the list unless it is there already. */
static void port_add(uint16_t **ports, size_t *n, uint16_t port)
{
	if (!port_in(*ports, *n, port))
		*(uint16_t *)xappend(ports, n, sizeof(uint16_t)) = port;
}

/*
 * The Landlock backstop filters connect() by port alone, so in allowlist
 * mode it gets every port some host may use: the defaults, --allow-port,
 * each host's own ports, and 53 for DNS over TCP. This union is computed
 * here, never stored in the runspec: the policy reads runspec.ports as the
 * run-wide list, and host ports merged there would be granted to every host.
 */
size_t net_policy_landlock_ports(const struct net_policy *p, uint16_t **ports)
{
	static const uint16_t defaults[] = NET_POLICY_DEFAULT_PORTS;
	size_t n = 0;

	*ports = NULL;
	if (p->mode != NET_ALLOWLIST)
		return 0;
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		port_add(ports, &n, defaults[i]);
	for (size_t i = 0; i < p->nports; i++)
		port_add(ports, &n, p->ports[i]);
	for (size_t i = 0; i < p->nhosts; i++)
		for (size_t j = 0; j < p->hosts[i].nports; j++)
			port_add(ports, &n, p->hosts[i].ports[j]);
	port_add(ports, &n, 53);
	return n;
}

/*
 * A host entry with ports allows exactly those; one without allows the
 * run-wide ports. A name matched by several entries gets the union.
 */
bool net_policy_port_ok(const struct net_policy *p, const char *name, uint16_t port)
{
	const char *alias;

	if (port == 0)
		return false;
	if (name == NULL)
		return global_port_ok(p, port);
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct host_spec *h = &p->hosts[i];

		if (!host_match(h->name, name))
			continue;
		if (h->nports ? port_in(h->ports, h->nports, port) : global_port_ok(p, port))
			return true;
	}
	/* nas.SUFFIX is the listed nas: its ports too (the alias is a bare label, no recursion). */
	alias = net_policy_tailnet_alias(p, name);
	return alias != NULL && net_policy_port_ok(p, alias, port);
}

/* Fills a denial and returns false. */
static bool deny(struct net_verdict *v, const char *layer, enum net_deny why)
{
	v->allow = false;
	v->need_name = false;
	v->layer = layer;
	v->deny = why;
	return false;
}

/* Fills an allow and returns true. */
static bool allow(struct net_verdict *v, const char *layer, const char *host)
{
	v->allow = true;
	v->layer = layer;
	v->deny = NET_DENY_NONE;
	v->host = host;
	return true;
}

/*
 * Is name bound to the address? Under the tailnet alias rule "nas" and
 * "nas.SUFFIX" are one name: the answer to either binds both, which is what
 * lets curl http://nas/ send "Host: nas" over an address its resolver got by
 * asking nas.SUFFIX (the search domain), and the other way round.
 */
static bool name_bound(const struct net_policy *p, const struct net_bind *binds,
		       const struct net_addr *dst, const char *name, uint64_t now_ms)
{
	char twin[DNS_NAME_BUF];
	const char *alias;

	if (net_bind_has(binds, dst, name, now_ms))
		return true;
	alias = net_policy_tailnet_alias(p, name);
	if (alias != NULL)
		return net_bind_has(binds, dst, alias, now_ms);
	/* name may itself be the bare label: its twin is LABEL.SUFFIX. */
	if (!p->tailscale || p->tailnet == NULL || strchr(name, '.') != NULL ||
	    (size_t)snprintf(twin, sizeof(twin), "%s.%s", name, p->tailnet) >= sizeof(twin) ||
	    net_policy_tailnet_alias(p, twin) == NULL)
		return false;
	return net_bind_has(binds, dst, twin, now_ms);
}

/* Is name permitted for this flow: listed, its port allowed, bound to the address? */
static bool name_fits(const struct net_policy *p, const struct net_bind *binds,
		      const struct net_flow *f, const char *name, uint64_t now_ms)
{
	return net_policy_host_listed(p, name) && net_policy_port_ok(p, name, f->port) &&
	       name_bound(p, binds, &f->dst, name, now_ms);
}

/* What a bound name of the flow's address must satisfy (net_bind_find's arg). */
struct bound_query {
	const struct net_policy *p;
	uint16_t port;
};

/* Is a bound name listed? */
static bool permit_listed(const char *name, void *arg)
{
	const struct bound_query *q = arg;

	return net_policy_host_listed(q->p, name);
}

/* Is a bound name listed with the flow's port allowed? */
static bool permit_listed_port(const char *name, void *arg)
{
	const struct bound_query *q = arg;

	return net_policy_host_listed(q->p, name) && net_policy_port_ok(q->p, name, q->port);
}

/* The decision (see the header for the order). */
bool net_policy_decide(const struct net_policy *p, const struct net_bind *binds,
		       const struct net_flow *f, uint64_t now_ms, struct net_verdict *v)
{
	struct bound_query q;
	const char *host = NULL;

	memset(v, 0, sizeof(*v));
	v->layer = NET_LAYER_IP;
	if (p->mode != NET_PUBLIC && p->mode != NET_ALLOWLIST)
		return deny(v, NET_LAYER_IP, NET_DENY_MODE_NONE);
	if (f->port == 0)
		return deny(v, NET_LAYER_IP, NET_DENY_PORT_ZERO);
	if (!net_addr_check(&f->dst, p->cidrs, p->ncidrs, p->tailscale, &v->addr))
		return deny(v, NET_LAYER_IP, NET_DENY_RANGE);
	if (p->mode == NET_PUBLIC)
		return allow(v, NET_LAYER_IP, NULL);

	/* Allowlist mode from here on. */
	if (f->proto == NET_PROTO_UDP && f->port == 443)
		return deny(v, NET_LAYER_IP, NET_DENY_QUIC);
	if (binds == NULL)
		return deny(v, NET_LAYER_DNS, NET_DENY_NO_BINDING);
	/* Every live name of the address is examined, however many a payload
	 * bound to it (a wildcard-listed name can bind thousands to one CDN
	 * address): no copy into a fixed array, so no count to clamp. */
	q.p = p;
	q.port = f->port;
	if (!net_bind_find(binds, &f->dst, now_ms, permit_listed_port, &q, &host)) {
		if (!net_bind_find(binds, &f->dst, now_ms, permit_listed, &q, NULL))
			return deny(v, NET_LAYER_DNS, NET_DENY_NO_BINDING);
		return deny(v, NET_LAYER_IP, NET_DENY_PORT);
	}
	if (f->proto != NET_PROTO_TCP)
		return allow(v, NET_LAYER_DNS, host);   /* UDP: address only, by design */

	switch (f->name_kind) {
	case NET_NAME_PENDING:
		allow(v, NET_LAYER_DNS, host);
		v->need_name = true;
		return true;
	case NET_NAME_NONE:
		/* No name on the wire (SSH, a server that speaks first): the bound
		 * listed name and its port, checked above, are the whole decision.
		 * The gateway sends NONE only when there is truly no name to read;
		 * anything it could not parse or finish is MALFORMED. */
		return allow(v, NET_LAYER_DNS, host);
	case NET_NAME_MALFORMED:
		return deny(v, NET_LAYER_SNI, NET_DENY_MALFORMED);
	case NET_NAME_SNI:
		if (f->ech)
			return deny(v, NET_LAYER_SNI, NET_DENY_ECH);
		if (f->name == NULL)
			return deny(v, NET_LAYER_SNI, NET_DENY_NO_SNI);
		break;
	case NET_NAME_HOST:
		if (f->name == NULL)
			return deny(v, NET_LAYER_SNI, NET_DENY_NO_HOST);
		break;
	default:
		return deny(v, NET_LAYER_SNI, NET_DENY_MALFORMED);
	}
	/* The name on the wire must itself be a permitted name bound here. */
	if (name_fits(p, binds, f, f->name, now_ms))
		return allow(v, NET_LAYER_SNI, f->name);
	v->host = NULL;
	return deny(v, NET_LAYER_SNI, NET_DENY_SNI_MISMATCH);
}

/* The DNS question: may this name be resolved? */
bool net_policy_resolve(const struct net_policy *p, const char *name, struct net_verdict *v)
{
	char norm[DNS_NAME_BUF];
	const char *alias;

	memset(v, 0, sizeof(*v));
	v->layer = NET_LAYER_DNS;
	if (p->mode != NET_PUBLIC && p->mode != NET_ALLOWLIST)
		return deny(v, NET_LAYER_DNS, NET_DENY_MODE_NONE);
	if (name == NULL || dns_name_normalize(name, strlen(name), norm) != 0 ||
	    strcmp(norm, name) != 0)
		return deny(v, NET_LAYER_DNS, NET_DENY_NAME_INVALID);
	if (p->mode == NET_PUBLIC)
		return allow(v, NET_LAYER_DNS, NULL);
	for (size_t i = 0; i < p->nhosts; i++)
		if (host_match(p->hosts[i].name, name))
			return allow(v, NET_LAYER_DNS, p->hosts[i].name);
	/* "nas.SUFFIX" is what the search domain makes of a listed "nas". */
	alias = net_policy_tailnet_alias(p, name);
	if (alias != NULL)
		return allow(v, NET_LAYER_DNS, alias);
	return deny(v, NET_LAYER_DNS, NET_DENY_NAME);
}

/* Drops the addresses the range check refuses (DNS rebinding). */
size_t net_policy_filter_addrs(const struct net_policy *p, struct net_addr *addrs,
			       uint32_t *ttls, size_t n, struct net_addr_class *dropped,
			       size_t max_dropped, size_t *ndropped)
{
	size_t kept = 0, nd = 0;

	for (size_t i = 0; i < n; i++) {
		struct net_addr_class c;

		if (!net_addr_check(&addrs[i], p->cidrs, p->ncidrs, p->tailscale, &c)) {
			if (dropped != NULL && nd < max_dropped)
				dropped[nd] = c;
			nd++;
			continue;
		}
		addrs[kept] = addrs[i];
		if (ttls != NULL)
			ttls[kept] = ttls[i];
		kept++;
	}
	if (ndropped != NULL)
		*ndropped = nd;
	return kept;
}
