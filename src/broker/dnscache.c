/*
 * broker/dnscache.c — a session's cache of upstream DNS answers (see broker/dnscache.h).
 *
 * A chained hash table keyed by (name, qtype). Entries are few (a session
 * asks for tens of names, the cap is a thousand), so eviction when full is
 * a scan for the soonest expiry rather than a second structure to keep in
 * step; it runs only on an insert into a full table.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/dnscache.h"
#include "parse/dns.h"
#include "common/util.h"

#define CACHE_BUCKETS 256

struct entry {
	struct entry *next;
	uint16_t qtype;
	uint64_t stored_ms, expires_ms;
	struct dns_cache_answer a;
	char name[DNS_NAME_BUF];
};

struct dns_cache {
	struct entry *buckets[CACHE_BUCKETS];
	size_t n, max;
};

/* FNV-1a over the name and the type. */
static size_t bucket_of(const char *name, uint16_t qtype)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	h = (h ^ (qtype & 0xff)) * 16777619u;
	h = (h ^ (qtype >> 8)) * 16777619u;
	return h % CACHE_BUCKETS;
}

struct dns_cache *dns_cache_create(size_t max)
{
	struct dns_cache *c = xcalloc(1, sizeof(*c));

	c->max = max ? max : DNS_CACHE_DEFAULT_MAX;
	return c;
}

void dns_cache_free(struct dns_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CACHE_BUCKETS; i++) {
		while (c->buckets[i]) {
			struct entry *e = c->buckets[i];

			c->buckets[i] = e->next;
			free(e);
		}
	}
	free(c);
}

/* The link pointing at the entry for (name, qtype), or at the chain's end. */
static struct entry **entry_slot(struct dns_cache *c, const char *name, uint16_t qtype)
{
	struct entry **pp = &c->buckets[bucket_of(name, qtype)];

	while (*pp && ((*pp)->qtype != qtype || strcmp((*pp)->name, name) != 0))
		pp = &(*pp)->next;
	return pp;
}

/* Unlink and free the entry *pp points at. */
static void entry_drop(struct dns_cache *c, struct entry **pp)
{
	struct entry *e = *pp;

	*pp = e->next;
	free(e);
	c->n--;
}

/* Drop the entry that expires soonest (the table is full). */
static void evict_one(struct dns_cache *c)
{
	struct entry **victim = NULL;

	for (size_t i = 0; i < CACHE_BUCKETS; i++)
		for (struct entry **pp = &c->buckets[i]; *pp; pp = &(*pp)->next)
			if (!victim || (*pp)->expires_ms < (*victim)->expires_ms)
				victim = pp;
	if (victim)
		entry_drop(c, victim);
}

void dns_cache_put(struct dns_cache *c, const char *name, uint16_t qtype, int rcode,
		   const struct net_addr *addrs, const uint32_t *ttls, size_t n, uint64_t now_ms)
{
	uint32_t life = n ? DNS_CACHE_TTL_MAX_S : DNS_CACHE_NEGATIVE_S;
	struct entry **pp, *e;

	if (rcode != DNS_RCODE_NOERROR && rcode != DNS_RCODE_NXDOMAIN)
		return;
	if (strlen(name) >= DNS_NAME_BUF)
		return;
	if (n > DNS_CACHE_ADDRS_MAX)
		n = DNS_CACHE_ADDRS_MAX;
	for (size_t i = 0; i < n; i++)
		if (ttls[i] < life)
			life = ttls[i];
	if (life == 0)
		return;         /* TTL 0: the answer must not be reused */
	pp = entry_slot(c, name, qtype);
	if (*pp) {
		entry_drop(c, pp);
	} else if (c->n >= c->max) {
		evict_one(c);
	}
	e = xcalloc(1, sizeof(*e));
	e->qtype = qtype;
	e->stored_ms = now_ms;
	e->expires_ms = now_ms + (uint64_t)life * 1000;
	e->a.rcode = rcode;
	e->a.n = n;
	if (n) {        /* an answer with no address (NXDOMAIN) may come with NULL arrays */
		memcpy(e->a.addrs, addrs, n * sizeof(*addrs));
		memcpy(e->a.ttls, ttls, n * sizeof(*ttls));
	}
	snprintf(e->name, sizeof(e->name), "%s", name);
	pp = &c->buckets[bucket_of(name, qtype)];
	e->next = *pp;
	*pp = e;
	c->n++;
}

bool dns_cache_get(struct dns_cache *c, const char *name, uint16_t qtype, uint64_t now_ms,
		   struct dns_cache_answer *out)
{
	struct entry **pp = entry_slot(c, name, qtype), *e = *pp;
	uint64_t held_s;

	if (!e)
		return false;
	if (now_ms >= e->expires_ms || now_ms < e->stored_ms) {
		entry_drop(c, pp);
		return false;
	}
	held_s = (now_ms - e->stored_ms) / 1000;
	*out = e->a;
	for (size_t i = 0; i < out->n; i++)
		out->ttls[i] = out->ttls[i] > held_s + 1 ? (uint32_t)(out->ttls[i] - held_s) : 1;
	return true;
}

size_t dns_cache_count(const struct dns_cache *c)
{
	return c->n;
}
