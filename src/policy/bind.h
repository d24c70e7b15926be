/*
 * policy/bind.h — the DNS binding table: which names each address was
 * returned for, and until when.
 *
 * In allowlist mode a connection needs its destination address to have come
 * out of a DNS answer for a permitted name; this table is that memory. One
 * address may carry several names (a CDN serves many hosts from one
 * address), one name several addresses. Times are the caller's "now" in
 * milliseconds: nothing here reads a clock, so expiry is tested exactly.
 *
 * The table is bounded: when full, the binding that expires soonest is
 * evicted to make room, since the new one is the one about to be used.
 */
#ifndef BOXY_NET_BIND_H
#define BOXY_NET_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/addr.h"

/* A binding lives at least this long whatever the TTL said (TTL 0 answers
 * are common, and the payload connects right after resolving), at most
 * this long. */
#define NET_BIND_TTL_MIN_S   30u
#define NET_BIND_TTL_MAX_S   86400u
#define NET_BIND_NAME_MAX    253
#define NET_BIND_DEFAULT_MAX 8192

struct net_bind;

/* An empty table holding at most max bindings (max 0: the default). Free with net_bind_free. */
struct net_bind *net_bind_create(size_t max);
void net_bind_free(struct net_bind *t);

/*
 * Record that name resolved to addr with ttl_s seconds to live, from now_ms.
 * name must already be a validated, lower-case DNS name (dns_name_normalize);
 * one that is empty or longer than NET_BIND_NAME_MAX is refused (-1). A
 * binding that exists is extended, never shortened. Returns 0.
 */
int net_bind_add(struct net_bind *t, const struct net_addr *addr, const char *name,
		 uint32_t ttl_s, uint64_t now_ms);

/* Is addr bound to exactly this name, unexpired at now_ms? */
bool net_bind_has(const struct net_bind *t, const struct net_addr *addr, const char *name,
		  uint64_t now_ms);

/*
 * The names addr is bound to at now_ms, up to max of them, into names (the
 * pointers stay valid until the table is next changed). Returns how many
 * exist, which may be more than max.
 */
size_t net_bind_names(const struct net_bind *t, const struct net_addr *addr, uint64_t now_ms,
		      const char **names, size_t max);

/*
 * Is addr bound, at now_ms, to a name that permit() accepts? permit is the
 * policy's question; on success *which (if not NULL) is the first such name.
 */
bool net_bind_find(const struct net_bind *t, const struct net_addr *addr, uint64_t now_ms,
		   bool (*permit)(const char *name, void *arg), void *arg, const char **which);

/* Drop every binding expired at now_ms. Returns how many were dropped. */
size_t net_bind_expire(struct net_bind *t, uint64_t now_ms);

/* Bindings held (expired ones included until net_bind_expire or eviction). */
size_t net_bind_count(const struct net_bind *t);

#endif
