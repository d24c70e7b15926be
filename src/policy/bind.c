/*
 * policy/bind.c — the DNS binding table (see policy/bind.h).
 *
 * A flat array searched linearly. The table holds a few thousand entries at
 * most and is consulted once per new connection, so a scan of contiguous
 * memory is cheaper than anything cleverer and has no worst case a hostile
 * name could steer. Eviction scans for the soonest expiry.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy/bind.h"
#include "common/util.h"

struct binding {
	struct net_addr addr;
	uint64_t expires_ms;        /* live while now < expires_ms */
	char name[NET_BIND_NAME_MAX + 1];
};

struct net_bind {
	struct binding *v;
	size_t n, max;
};

/* Creates an empty table. */
struct net_bind *net_bind_create(size_t max)
{
	struct net_bind *t = xcalloc(1, sizeof(*t));

	t->max = max ? max : NET_BIND_DEFAULT_MAX;
	t->v = xcalloc(t->max, sizeof(*t->v));
	return t;
}

/* Frees the table. */
void net_bind_free(struct net_bind *t)
{
	if (t == NULL)
		return;
	free(t->v);
	free(t);
}

/* Is binding b live at now? */
static bool live(const struct binding *b, uint64_t now_ms)
{
	return now_ms < b->expires_ms;
}

/* Adds or extends a binding, evicting the soonest-expiring one when full. */
int net_bind_add(struct net_bind *t, const struct net_addr *addr, const char *name,
		 uint32_t ttl_s, uint64_t now_ms)
{
	size_t len = name ? strlen(name) : 0, slot;
	uint64_t expires;

	if (len == 0 || len > NET_BIND_NAME_MAX)
		return -1;
	if (ttl_s < NET_BIND_TTL_MIN_S)
		ttl_s = NET_BIND_TTL_MIN_S;
	if (ttl_s > NET_BIND_TTL_MAX_S)
		ttl_s = NET_BIND_TTL_MAX_S;
	expires = now_ms + (uint64_t)ttl_s * 1000;
	if (expires < now_ms)
		expires = UINT64_MAX;

	for (size_t i = 0; i < t->n; i++) {
		struct binding *b = &t->v[i];

		if (net_addr_equal(&b->addr, addr) && strcmp(b->name, name) == 0) {
			if (b->expires_ms < expires)
				b->expires_ms = expires;
			return 0;
		}
	}

	if (t->n < t->max) {
		slot = t->n++;
	} else {
		slot = 0;
		for (size_t i = 1; i < t->n; i++)
			if (t->v[i].expires_ms < t->v[slot].expires_ms)
				slot = i;
	}
	t->v[slot].addr = *addr;
	t->v[slot].expires_ms = expires;
	memcpy(t->v[slot].name, name, len + 1);
	return 0;
}

/* Is addr bound to name at now? */
bool net_bind_has(const struct net_bind *t, const struct net_addr *addr, const char *name,
		  uint64_t now_ms)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct binding *b = &t->v[i];

		if (live(b, now_ms) && net_addr_equal(&b->addr, addr) &&
		    strcmp(b->name, name) == 0)
			return true;
	}
	return false;
}

/* Lists the live names of addr. */
size_t net_bind_names(const struct net_bind *t, const struct net_addr *addr, uint64_t now_ms,
		      const char **names, size_t max)
{
	size_t count = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct binding *b = &t->v[i];

		if (!live(b, now_ms) || !net_addr_equal(&b->addr, addr))
			continue;
		if (count < max)
			names[count] = b->name;
		count++;
	}
	return count;
}

/* Finds a live binding of addr whose name permit() accepts. */
bool net_bind_find(const struct net_bind *t, const struct net_addr *addr, uint64_t now_ms,
		   bool (*permit)(const char *name, void *arg), void *arg, const char **which)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct binding *b = &t->v[i];

		if (!live(b, now_ms) || !net_addr_equal(&b->addr, addr))
			continue;
		if (permit == NULL || permit(b->name, arg)) {
			if (which != NULL)
				*which = b->name;
			return true;
		}
	}
	return false;
}

/* Compacts the array, keeping only live bindings. */
size_t net_bind_expire(struct net_bind *t, uint64_t now_ms)
{
	size_t kept = 0, dropped;

	for (size_t i = 0; i < t->n; i++) {
		if (!live(&t->v[i], now_ms))
			continue;
		if (kept != i)
			t->v[kept] = t->v[i];
		kept++;
	}
	dropped = t->n - kept;
	t->n = kept;
	return dropped;
}

/* Number of bindings held. */
size_t net_bind_count(const struct net_bind *t)
{
	return t->n;
}
