/*
 * broker/dnsexfil.h — does a session's DNS look like a tunnel?
 *
 * A payload that may not connect anywhere can still ask the resolver about
 * names, and in public mode every name is asked upstream: data encoded into
 * the labels of queries under a domain the attacker's name server answers
 * (x3f9a…c1.t.evil.example) leaves the machine one query at a time. This
 * module scores each session's queries per parent domain (the registrable
 * part: evil.example, evil.co.uk) over a sliding minute and says when one
 * looks like a tunnel:
 *
 *   - long labels: a query whose subdomain part has a label of
 *     DNSEXFIL_LONG_LABEL characters or more with DNSEXFIL_MIN_ENTROPY bits
 *     per character or more — DNSEXFIL_LONG_QUERIES of them in a minute;
 *   - many random subdomains: DNSEXFIL_MANY_SUBDOMAINS distinct subdomain
 *     parts of DNSEXFIL_MIN_SUBDOMAIN characters or more, their mean
 *     entropy at least DNSEXFIL_MIN_ENTROPY, in a minute;
 *   - a failing stream: DNSEXFIL_NX_QUERIES answers in a minute of which
 *     DNSEXFIL_NX_SHARE or more were NXDOMAIN, for at least
 *     DNSEXFIL_NX_QUERIES × DNSEXFIL_NX_SHARE distinct subdomains (a
 *     tunnel's server need not answer at all);
 *   - a slow tunnel: DNSEXFIL_SLOW_TOTAL distinct such random-looking
 *     subdomain parts over the whole session, however slowly they came;
 *   - volume: DNSEXFIL_VOLUME characters of distinct subdomain parts over
 *     the whole session, whatever their entropy (an encoding with a small
 *     alphabet — digits, eight letters — or padding reads as low entropy);
 *   - record types tunnels use: DNSEXFIL_RARE_QUERIES queries of TXT, NULL,
 *     CNAME, MX or ANY for distinct subdomains in a minute.
 *
 * A name whose parent took three labels (x.co.uk) is scored under the last
 * two as well (co.uk): a domain named like a country's second level that an
 * attacker owns would otherwise make every query a parent of its own.
 *
 * Each parent domain alerts once per session (the count of queries goes on
 * in the words of later calls). Bounded: DNSEXFIL_DOMAINS_MAX domains a
 * session, the one that carried least forgotten first (its volume of
 * distinct subdomains, then the least recently seen); a minute's window per
 * domain kept in a fixed ring. What forgotten domains carried is summed, and
 * DNSEXFIL_FORGOTTEN_VOLUME characters of it alert once (a tunnel spread over
 * more domains than the table holds). Pure: the caller passes the time.
 */
#ifndef BOXY_BROKER_DNSEXFIL_H
#define BOXY_BROKER_DNSEXFIL_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNSEXFIL_WINDOW_MS        60000
#define DNSEXFIL_LONG_LABEL       40
#define DNSEXFIL_LONG_QUERIES     3
#define DNSEXFIL_MIN_SUBDOMAIN    20
#define DNSEXFIL_MANY_SUBDOMAINS  15
#define DNSEXFIL_MIN_ENTROPY      3.3
#define DNSEXFIL_SLOW_TOTAL       60
#define DNSEXFIL_VOLUME           4096
#define DNSEXFIL_FORGOTTEN_VOLUME 16384
#define DNSEXFIL_NX_QUERIES       30
#define DNSEXFIL_NX_SHARE         0.8
#define DNSEXFIL_RARE_QUERIES     10
#define DNSEXFIL_DOMAINS_MAX      256
#define DNSEXFIL_RING             64        /* queries remembered per domain, newest */

struct dnsexfil;

struct dnsexfil *dnsexfil_new(void);
void dnsexfil_free(struct dnsexfil *x);

/*
 * One query for name (lower-case, no trailing dot) of type qtype at now_ms.
 * Returns true the first time the name's parent domain looks like a tunnel,
 * with *parent (the domain, borrowed until the next call) and *why (one
 * line, malloc'd) set.
 */
bool dnsexfil_query(struct dnsexfil *x, const char *name, uint16_t qtype, uint64_t now_ms,
		    const char **parent, char **why);
/* The answer to a query for name: nxdomain or not (feeds the failing-stream rule). */
bool dnsexfil_answer(struct dnsexfil *x, const char *name, bool nxdomain, uint64_t now_ms,
		     const char **parent, char **why);

/*
 * The language alerts are told in as well (common/lang.h): the run's client's.
 * Every alert's *why stays worded in C, for the records; dnsexfil_told hands
 * over the last one's words in lang (malloc'd; NULL without a lang).
 */
void dnsexfil_set_lang(struct dnsexfil *x, locale_t lang);
char *dnsexfil_told(struct dnsexfil *x);

/* The registrable part of name, its "parent domain", into out (at least 254 bytes). */
void dnsexfil_parent(const char *name, char *out, size_t len);
/* Shannon entropy of s in bits per character (0 for the empty string). */
double dnsexfil_entropy(const char *s, size_t n);

#endif
