/*
 * broker/dnsexfil.c — scoring a session's DNS for tunnels (see
 * broker/dnsexfil.h for the rules and their thresholds).
 *
 * The parent domain is the last two labels, or three when the last is a
 * two-letter country code and the one before it is a short second-level
 * label (co.uk, com.au, ne.jp): without the public suffix list on every
 * machine this is a heuristic, and its error is on the safe side — a
 * tunnel under a.b.example.co.uk is still scored under example.co.uk.
 * The subdomain part is everything left of the parent; its entropy is
 * counted over its characters without the dots.
 */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/dnsexfil.h"
#include "common/lang.h"
#include "common/util.h"

/* Record types tunnels carry data in: TXT, NULL, CNAME, MX, ANY. */
static bool qtype_rare(uint16_t t)
{
	return t == 16 || t == 10 || t == 5 || t == 15 || t == 255;
}

struct seen {
	uint64_t t_ms;
	uint32_t sub;           /* hash of the subdomain part (0: none) */
	uint16_t sublen;
	uint16_t maxlabel;
	float entropy;
	bool rare;
};

struct answer {
	uint64_t t_ms;
	uint32_t sub;
	bool nx;
};

struct domain {
	char name[256];
	uint64_t last_ms;
	uint64_t queries;
	uint64_t random_total;  /* distinct long, random-looking subdomain parts, the session */
	uint8_t random_seen[128];       /* their hashes, a bit each (a collision undercounts) */
	uint64_t volume;        /* characters of distinct subdomain parts, any entropy, the session */
	uint8_t volume_seen[128];       /* their hashes, a bit each */
	bool alerted;
	struct seen q[DNSEXFIL_RING];
	size_t qn, qhead;
	struct answer a[DNSEXFIL_RING];
	size_t an, ahead;
};

struct dnsexfil {
	struct domain *d;       /* grown as domains are seen (about 3 KiB each), up to the cap */
	size_t n, cap;
	/* What the domains the table had to forget carried, summed: a tunnel spread over
	 * more domains than the table holds still adds up here. */
	uint64_t forgotten_volume;
	char forgotten_name[256];       /* the last one forgotten (the alert names it) */
	bool forgotten_alerted;
	locale_t told_lang;     /* the run's client's language (common/lang.h), or 0 */
	char *told;             /* the last alert in it, until dnsexfil_told takes it */
};

/* An alert's words: *why as recorded (C), and x->told in the client's language. */
static void say(struct dnsexfil *x, char **why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct dnsexfil *x, char **why, const char *fmt, ...)
{
	va_list ap;
	locale_t old = lang_use(lang_records());

	va_start(ap, fmt);
	*why = xvasprintf(gettext(fmt), ap);
	va_end(ap);
	free(x->told);
	x->told = NULL;
	if (x->told_lang) {
		lang_use(x->told_lang);
		va_start(ap, fmt);
		x->told = xvasprintf(gettext(fmt), ap);
		va_end(ap);
	}
	lang_use(old);
}

void dnsexfil_set_lang(struct dnsexfil *x, locale_t lang)
{
	x->told_lang = lang;
}

char *dnsexfil_told(struct dnsexfil *x)
{
	char *t = x->told;

	x->told = NULL;
	return t;
}

struct dnsexfil *dnsexfil_new(void)
{
	struct dnsexfil *x = xcalloc(1, sizeof(*x));

	return x;
}

void dnsexfil_free(struct dnsexfil *x)
{
	if (!x)
		return;
	free(x->d);
	free(x->told);
	free(x);
}

double dnsexfil_entropy(const char *s, size_t n)
{
	unsigned count[256] = { 0 };
	size_t total = 0;
	double h = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i] != '.') {
			count[(unsigned char)s[i]]++;
			total++;
		}
	if (!total)
		return 0;
	for (int c = 0; c < 256; c++)
		if (count[c]) {
			double p = (double)count[c] / (double)total;

			h -= p * log2(p);
		}
	return h;
}

/* Is the label s[0..n) one a country's registry puts names under (co.uk, com.au)? */
static bool second_level(const char *s, size_t n)
{
	static const char *const words[] = {
		"ac", "co", "com", "edu", "go", "gob", "gov", "ltd", "mil", "ne", "net", "nic",
		"or", "org", "plc", "sch",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == n && strncmp(words[i], s, n) == 0)
			return true;
	return false;
}

void dnsexfil_parent(const char *name, char *out, size_t len)
{
	size_t n = strlen(name), starts[3] = { 0, 0, 0 }, labels = 0, take;

	/* starts[k]: where the k-th label from the end begins (k = 0: the last) */
	for (size_t i = n; labels < 3; i--) {
		if (i == 0 || name[i - 1] == '.') {
			starts[labels++] = i;
			if (i == 0)
				break;
		}
	}
	take = labels < 2 ? labels : 2;
	if (labels == 3 && n - starts[0] == 2 &&
	    second_level(name + starts[1], starts[0] - starts[1] - 1))
		take = 3;       /* co.uk, com.au, ne.jp */
	snprintf(out, len, "%s", take ? name + starts[take - 1] : name);
}

/* FNV-1a of n bytes, never 0. */
static uint32_t hash_sub(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h ? h : 1;
}

/*
 * The domain entry for parent, made when missing. A full table forgets the
 * entry that carried least (the smallest volume of distinct subdomains, the
 * least recently seen of those), never one that alerted, and adds its volume
 * to the forgotten total: forgetting the least recently seen, and all it had
 * counted, let a tunnel under one domain reset its own counts with a few
 * hundred lookups under made-up parents between its queries.
 */
static struct domain *domain_get(struct dnsexfil *x, const char *parent, uint64_t now_ms)
{
	struct domain *d, *old = NULL;

	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->d[i].name, parent) == 0) {
			x->d[i].last_ms = now_ms;
			return &x->d[i];
		}
	if (x->n < DNSEXFIL_DOMAINS_MAX) {
		if (x->n == x->cap) {
			/* a session that asks for three names costs three entries, not the cap */
			x->cap = x->cap ? 2 * x->cap : 8;
			if (x->cap > DNSEXFIL_DOMAINS_MAX)
				x->cap = DNSEXFIL_DOMAINS_MAX;
			x->d = xrealloc(x->d, x->cap * sizeof(*x->d));
		}
		d = &x->d[x->n++];
	} else {
		for (size_t i = 0; i < x->n; i++)
			if (!x->d[i].alerted &&
			    (!old || x->d[i].volume < old->volume ||
			     (x->d[i].volume == old->volume && x->d[i].last_ms < old->last_ms)))
				old = &x->d[i];
		d = old ? old : &x->d[0];
		x->forgotten_volume += d->volume;
		snprintf(x->forgotten_name, sizeof(x->forgotten_name), "%s", d->name);
	}
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", parent);
	d->last_ms = now_ms;
	return d;
}

/* Distinct subdomain hashes among v[0..n) (n ≤ DNSEXFIL_RING). */
static size_t distinct(const uint32_t *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = v[j] == v[i];
		k += !dup;
	}
	return k;
}

/* The query rules over d's window: true with *why when one holds. */
static bool judge_queries(struct dnsexfil *x, struct domain *d, uint64_t now_ms, char **why)
{
	uint32_t many[DNSEXFIL_RING], rare[DNSEXFIL_RING];
	size_t nlong = 0, nmany = 0, nrare = 0;
	unsigned maxlabel = 0;
	double hsum = 0, hlong = 0;

	for (size_t i = 0; i < d->qn; i++) {
		const struct seen *s = &d->q[i];

		if (now_ms - s->t_ms > DNSEXFIL_WINDOW_MS)
			continue;
		if (s->maxlabel >= DNSEXFIL_LONG_LABEL && s->entropy >= DNSEXFIL_MIN_ENTROPY) {
			nlong++;
			hlong += s->entropy;
			if (s->maxlabel > maxlabel)
				maxlabel = s->maxlabel;
		}
		if (s->sublen >= DNSEXFIL_MIN_SUBDOMAIN) {
			many[nmany++] = s->sub;
			hsum += s->entropy;
		}
		if (s->rare && s->sub)
			rare[nrare++] = s->sub;
	}
	if (nlong >= DNSEXFIL_LONG_QUERIES) {
		say(x, why, N_("DNS under %s looks like a tunnel: %zu queries in a minute with "
				 "labels of up to %u characters, %.1f bits a character"), d->name,
				 nlong, maxlabel, hlong / (double)nlong);
		return true;
	}
	if (nmany && distinct(many, nmany) >= DNSEXFIL_MANY_SUBDOMAINS &&
	    hsum / (double)nmany >= DNSEXFIL_MIN_ENTROPY) {
		say(x, why, N_("DNS under %s looks like a tunnel: %zu distinct random-looking "
				 "subdomains in a minute (%.1f bits a character)"), d->name,
				 distinct(many, nmany), hsum / (double)nmany);
		return true;
	}
	if (d->volume >= DNSEXFIL_VOLUME) {
		say(x, why, N_("DNS under %s looks like a tunnel: %llu characters of distinct "
				 "subdomains in this session, however they were encoded"), d->name,
				 (unsigned long long)d->volume);
		return true;
	}
	if (d->random_total >= DNSEXFIL_SLOW_TOTAL) {
		say(x, why, N_("DNS under %s looks like a slow tunnel: %llu random-looking "
				 "subdomains of %u characters or more in this session"), d->name,
				 (unsigned long long)d->random_total, DNSEXFIL_MIN_SUBDOMAIN);
		return true;
	}
	if (nrare && distinct(rare, nrare) >= DNSEXFIL_RARE_QUERIES) {
		say(x, why, N_("DNS under %s looks like a tunnel: %zu TXT/NULL/CNAME/MX/ANY "
				 "queries for distinct subdomains in a minute"), d->name,
				 distinct(rare, nrare));
		return true;
	}
	return false;
}

/* Set bit h of a 1024-bit set; true when it was clear (a collision undercounts). */
static bool bit_set(uint8_t set[128], uint32_t h)
{
	unsigned bit = h % (8 * 128);

	if (set[bit / 8] & (1u << (bit % 8)))
		return false;
	set[bit / 8] |= (uint8_t)(1u << (bit % 8));
	return true;
}

/* Record one query of name under the domain p (made when missing). */
static void record_query(struct dnsexfil *x, const char *name, const char *p, uint16_t qtype,
			 uint64_t now_ms)
{
	struct domain *d;
	struct seen *s;
	size_t n = strlen(name), plen = strlen(p), sublen, label = 0, maxlabel = 0;

	sublen = n > plen ? n - plen - 1 : 0;        /* "sub." before the parent */
	for (size_t i = 0; i < sublen; i++) {
		label = name[i] == '.' ? 0 : label + 1;
		if (label > maxlabel)
			maxlabel = label;
	}
	d = domain_get(x, p, now_ms);
	d->queries++;
	s = &d->q[d->qhead];
	d->qhead = (d->qhead + 1) % DNSEXFIL_RING;
	if (d->qn < DNSEXFIL_RING)
		d->qn++;
	*s = (struct seen){
		.t_ms = now_ms, .sub = sublen ? hash_sub(name, sublen) : 0,
		.sublen = (uint16_t)sublen, .maxlabel = (uint16_t)maxlabel,
		.entropy = (float)dnsexfil_entropy(name, sublen), .rare = qtype_rare(qtype),
	};
	if (s->sublen >= DNSEXFIL_MIN_SUBDOMAIN && s->entropy >= DNSEXFIL_MIN_ENTROPY &&
	    bit_set(d->random_seen, s->sub))
		d->random_total++;
	if (s->sub && bit_set(d->volume_seen, s->sub))
		d->volume += sublen;
}

/* The entry for domain p, or NULL. */
static struct domain *domain_find(struct dnsexfil *x, const char *p)
{
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->d[i].name, p) == 0)
			return &x->d[i];
	return NULL;
}

/*
 * The domains name is scored under: its parent and, when the parent took three
 * labels because the last two look like a country's second level (x.co.uk),
 * those two as well: whoever owns a name like com.XX where com is no registry
 * of that country's would otherwise give every query a parent of its own
 * (DATA.com.XX), and nothing would add up.
 */
static size_t score_domains(const char *name, char p[2][256])
{
	const char *dot;

	dnsexfil_parent(name, p[0], 256);
	dot = strchr(p[0], '.');
	if (!dot || !strchr(dot + 1, '.'))
		return 1;
	snprintf(p[1], 256, "%s", dot + 1);
	return 2;
}

bool dnsexfil_query(struct dnsexfil *x, const char *name, uint16_t qtype, uint64_t now_ms,
		    const char **parent, char **why)
{
	char p[2][256];
	size_t np = score_domains(name, p);

	/* Every domain recorded first: a table that grows moves its entries. */
	for (size_t i = 0; i < np; i++)
		record_query(x, name, p[i], qtype, now_ms);
	for (size_t i = 0; i < np; i++) {
		struct domain *d = domain_find(x, p[i]);

		if (!d || d->alerted || !judge_queries(x, d, now_ms, why))
			continue;
		d->alerted = true;
		*parent = d->name;
		return true;
	}
	if (!x->forgotten_alerted && x->forgotten_volume >= DNSEXFIL_FORGOTTEN_VOLUME) {
		say(x, why, N_("DNS of this session looks like a tunnel spread over more domains "
				 "than boxy follows (%d): %llu characters of distinct subdomains under "
				 "the ones it had to forget, the last %s"), DNSEXFIL_DOMAINS_MAX,
				 (unsigned long long)x->forgotten_volume, x->forgotten_name);
		x->forgotten_alerted = true;
		*parent = x->forgotten_name;
		return true;
	}
	return false;
}

/* Record the answer to a query for name under the domain p (made when missing). */
static void record_answer(struct dnsexfil *x, const char *name, const char *p, bool nxdomain,
			  uint64_t now_ms)
{
	size_t n = strlen(name), plen = strlen(p), sublen = n > plen ? n - plen - 1 : 0;
	struct domain *d = domain_get(x, p, now_ms);

	d->a[d->ahead] = (struct answer){ now_ms, sublen ? hash_sub(name, sublen) : 0, nxdomain };
	d->ahead = (d->ahead + 1) % DNSEXFIL_RING;
	if (d->an < DNSEXFIL_RING)
		d->an++;
}

/* The failing-stream rule over d's answers: true with *why when it holds. */
static bool judge_answers(struct dnsexfil *x, const struct domain *d, uint64_t now_ms,
			  char **why)
{
	uint32_t subs[DNSEXFIL_RING];
	size_t answers = 0, nx = 0, nsubs = 0;

	for (size_t i = 0; i < d->an; i++) {
		if (now_ms - d->a[i].t_ms > DNSEXFIL_WINDOW_MS)
			continue;
		answers++;
		if (d->a[i].nx) {
			nx++;
			if (d->a[i].sub)
				subs[nsubs++] = d->a[i].sub;
		}
	}
	if (answers < DNSEXFIL_NX_QUERIES || (double)nx < DNSEXFIL_NX_SHARE * (double)answers ||
	    distinct(subs, nsubs) < DNSEXFIL_NX_QUERIES * DNSEXFIL_NX_SHARE)
		return false;
	say(x, why, N_("DNS under %s looks like a tunnel: %zu of %zu answers in a minute were "
			 "NXDOMAIN, for %zu distinct subdomains"), d->name, nx, answers,
			 distinct(subs, nsubs));
	return true;
}

bool dnsexfil_answer(struct dnsexfil *x, const char *name, bool nxdomain, uint64_t now_ms,
		     const char **parent, char **why)
{
	char p[2][256];
	size_t np = score_domains(name, p);

	for (size_t i = 0; i < np; i++)
		record_answer(x, name, p[i], nxdomain, now_ms);
	for (size_t i = 0; i < np; i++) {
		struct domain *d = domain_find(x, p[i]);

		if (!d || d->alerted || !judge_answers(x, d, now_ms, why))
			continue;
		d->alerted = true;
		*parent = d->name;
		return true;
	}
	return false;
}
