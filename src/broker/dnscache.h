/*
 * broker/dnscache.h — a session's cache of upstream DNS answers, honouring TTLs.
 *
 * A package install asks for the same few names again and again (npm asks
 * for the registry's A and AAAA before nearly every tarball); without a
 * cache every one of those questions went upstream. The broker keeps one
 * cache per session — never shared, so one session cannot learn from its
 * answer times what another resolved — and stores the upstream answer as
 * it came, before policy: a hit goes through the same rebinding filter,
 * bindings and events as a fresh answer, so a cached answer can never be
 * judged more leniently than the one it copies.
 *
 * An answer lives for its smallest TTL; a TTL of 0 is not cached at all.
 * Answers without addresses (NXDOMAIN, or no data of that type) carry no
 * TTL through c-ares, so they are kept DNS_CACHE_NEGATIVE_S seconds. A
 * server failure is never cached. Pure: the caller passes "now".
 */
#ifndef BOXY_DNSCACHE_H
#define BOXY_DNSCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/addr.h"

#define DNS_CACHE_DEFAULT_MAX 1024  /* answers held per session */
#define DNS_CACHE_ADDRS_MAX   64    /* = DNS_ANSWER_MAX */
#define DNS_CACHE_NEGATIVE_S  30u   /* NXDOMAIN and empty answers */
#define DNS_CACHE_TTL_MAX_S   86400u

struct dns_cache;

/* One answer, as stored and as returned. */
struct dns_cache_answer {
	int rcode;                  /* DNS_RCODE_NOERROR or DNS_RCODE_NXDOMAIN */
	size_t n;
	struct net_addr addrs[DNS_CACHE_ADDRS_MAX];
	uint32_t ttls[DNS_CACHE_ADDRS_MAX];   /* seconds left, counted down on a hit */
};

/* An empty cache of at most max answers (0: the default). Free with dns_cache_free. */
struct dns_cache *dns_cache_create(size_t max);
void dns_cache_free(struct dns_cache *c);

/*
 * Keep the answer to (name, qtype) given at now_ms: rcode, and n addresses
 * with their TTLs (n beyond DNS_CACHE_ADDRS_MAX is cut). Not kept: another
 * rcode than NOERROR/NXDOMAIN, an address TTL of 0, a name longer than a DNS
 * name. When full, the answer that expires soonest makes room.
 */
void dns_cache_put(struct dns_cache *c, const char *name, uint16_t qtype, int rcode,
		   const struct net_addr *addrs, const uint32_t *ttls, size_t n, uint64_t now_ms);

/*
 * The unexpired answer to (name, qtype) at now_ms into *out, TTLs reduced by
 * the time it has been held (at least 1 s while it lives). Returns false on a miss.
 */
bool dns_cache_get(struct dns_cache *c, const char *name, uint16_t qtype, uint64_t now_ms,
		   struct dns_cache_answer *out);

/* Answers held (expired ones included until they are looked up or evicted). */
size_t dns_cache_count(const struct dns_cache *c);

#endif
