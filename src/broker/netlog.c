/*
 * broker/netlog.c — the --net-log encoder (see broker/netlog.h for the format).
 *
 * Strings are interned in an open-addressing hash table (FNV-1a, linear
 * probing, grown at half full), so recording a connection costs a few
 * hash lookups however long the run. Connections are kept as fixed-size
 * rows of string indexes; the summary is computed when asked for.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "broker/netlog.h"
#include "common/util.h"

/* Who made a row, interned (pid 0 and every string -1: unknown). */
struct who_row {
	bool asked;             /* false: not looked for (null in the log) */
	uint32_t pid;
	int32_t comm, argv0, package, version, script, via;
	bool claimed;
};

struct conn_row {
	uint64_t t_ms, up, down;
	int32_t addr, host, sni, reason;
	uint16_t port;
	uint8_t proto;
	bool allowed;
	struct who_row who;
};

struct query_row {
	uint64_t t_ms;
	int32_t name, type;
	bool allowed;
	struct who_row who;
};

struct request_row {
	uint64_t t_ms;
	uint32_t seq, conn;
	int32_t method, host, path, query, reason, rule;
	uint16_t port;
	bool allowed;
};

struct resolution {
	int32_t name;
	int32_t *addrs;
	size_t naddrs;
};

struct netlog {
	char **strings;
	size_t nstrings;
	int32_t *slots;         /* hash table of string indexes, -1 empty */
	size_t nslots;

	struct conn_row *conns;
	size_t nconns, capconns;

	struct resolution *res;
	size_t nres;

	struct query_row *queries;
	size_t nqueries;

	struct request_row *reqs;
	size_t nreqs;
	uint64_t reqs_dropped;
};

static const char *const request_fields[] = {
	"t_ms", "seq", "conn", "method", "host", "port", "path", "query", "verdict", "reason",
	"rule",
};

static const char *const conn_fields[] = {
	"t_ms", "proto", "verdict", "addr", "port", "host", "sni", "reason", "up", "down",
	"pid", "comm", "argv0", "package", "version", "script", "via", "claimed",
};

static const char *const query_fields[] = {
	"t_ms", "name", "type", "verdict",
	"pid", "comm", "argv0", "package", "version", "script", "via", "claimed",
};

/* FNV-1a over a NUL-terminated string. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* Rebuilds the hash table with n slots (a power of two). */
static void rehash(struct netlog *nl, size_t n)
{
	free(nl->slots);
	nl->slots = xmalloc(n * sizeof(*nl->slots));
	nl->nslots = n;
	for (size_t i = 0; i < n; i++)
		nl->slots[i] = -1;
	for (size_t i = 0; i < nl->nstrings; i++) {
		size_t j = hash_str(nl->strings[i]) & (n - 1);
		while (nl->slots[j] != -1)
			j = (j + 1) & (n - 1);
		nl->slots[j] = (int32_t)i;
	}
}

/* Returns the index of s in the strings table, adding it if new; NULL gives -1. */
static int32_t intern(struct netlog *nl, const char *s)
{
	size_t j;

	if (s == NULL)
		return -1;
	if ((nl->nstrings + 1) * 2 > nl->nslots)
		rehash(nl, nl->nslots ? nl->nslots * 2 : 64);
	j = hash_str(s) & (nl->nslots - 1);
	while (nl->slots[j] != -1) {
		if (strcmp(nl->strings[nl->slots[j]], s) == 0)
			return nl->slots[j];
		j = (j + 1) & (nl->nslots - 1);
	}
	if (nl->nstrings >= INT32_MAX)
		fatal("net-log: too many strings");
	char **slot = xappend(&nl->strings, &nl->nstrings, sizeof(*nl->strings));
	*slot = xstrdup(s);
	nl->slots[j] = (int32_t)(nl->nstrings - 1);
	return nl->slots[j];
}

/* Creates an empty log. */
struct netlog *netlog_create(void)
{
	return xcalloc(1, sizeof(struct netlog));
}

/* Frees the log and everything it copied. */
void netlog_free(struct netlog *nl)
{
	if (nl == NULL)
		return;
	for (size_t i = 0; i < nl->nstrings; i++)
		free(nl->strings[i]);
	free(nl->strings);
	free(nl->slots);
	free(nl->conns);
	free(nl->reqs);
	for (size_t i = 0; i < nl->nres; i++)
		free(nl->res[i].addrs);
	free(nl->res);
	free(nl->queries);
	free(nl);
}

/* s, or NULL when empty: an empty string is no string. */
static const char *or_null(const char *s)
{
	return s && s[0] ? s : NULL;
}

/* who → its interned row. */
static struct who_row who_intern(struct netlog *nl, const struct event_who *who)
{
	struct who_row w = {
		.asked = who != NULL, .comm = -1, .argv0 = -1, .package = -1, .version = -1,
		.script = -1, .via = -1,
	};

	if (!who || !who->found)
		return w;
	w.pid = who->pid;
	w.comm = intern(nl, or_null(who->comm));
	w.argv0 = intern(nl, or_null(who->argv0));
	w.package = intern(nl, or_null(who->package));
	w.version = intern(nl, or_null(who->version));
	w.script = intern(nl, or_null(who->script));
	w.via = intern(nl, or_null(who->via));
	w.claimed = who->claimed;
	return w;
}

/* Records one connection. */
size_t netlog_add_conn(struct netlog *nl, const struct netlog_conn *c)
{
	char text[NET_ADDR_STRLEN];
	struct conn_row *r;

	if (nl->nconns == nl->capconns) {
		nl->capconns = nl->capconns ? nl->capconns * 2 : 64;
		nl->conns = xrealloc(nl->conns, nl->capconns * sizeof(*nl->conns));
	}
	r = &nl->conns[nl->nconns];
	memset(r, 0, sizeof(*r));
	r->t_ms = c->t_ms;
	r->proto = (uint8_t)c->proto;
	r->allowed = c->allowed;
	r->addr = intern(nl, net_addr_format(&c->addr, text));
	r->port = c->port;
	r->host = intern(nl, c->host);
	r->sni = intern(nl, c->sni);
	r->reason = intern(nl, c->reason);
	r->up = c->up;
	r->down = c->down;
	r->who = who_intern(nl, c->who);
	return nl->nconns++;
}

/* Names who made a connection. */
void netlog_set_who(struct netlog *nl, size_t conn, const struct event_who *who)
{
	if (conn >= nl->nconns)
		return;
	nl->conns[conn].who = who_intern(nl, who);
	nl->conns[conn].who.asked = true;
}

/* Records one query. */
void netlog_add_query(struct netlog *nl, uint64_t t_ms, const char *name, const char *type,
		      bool allowed, const struct event_who *who)
{
	struct query_row *q = xappend(&nl->queries, &nl->nqueries, sizeof(*nl->queries));

	q->t_ms = t_ms;
	q->name = intern(nl, name);
	q->type = intern(nl, type);
	q->allowed = allowed;
	q->who = who_intern(nl, who);
}

/* Updates a connection's counters; an unknown index is ignored. */
void netlog_set_bytes(struct netlog *nl, size_t conn, uint64_t up, uint64_t down)
{
	if (conn >= nl->nconns)
		return;
	nl->conns[conn].up = up;
	nl->conns[conn].down = down;
}

/* Names a connection after the fact. */
void netlog_set_names(struct netlog *nl, size_t conn, const char *host, const char *sni)
{
	if (conn >= nl->nconns)
		return;
	if (host)
		nl->conns[conn].host = intern(nl, host);
	if (sni)
		nl->conns[conn].sni = intern(nl, sni);
}

/* Interns s cut at max bytes ("" and NULL: none). */
static int32_t intern_cut(struct netlog *nl, const char *s, size_t max)
{
	char *cut;
	int32_t i;

	if (!s || !*s)
		return -1;
	if (strlen(s) <= max)
		return intern(nl, s);
	cut = xstrndup(s, max);
	i = intern(nl, cut);
	free(cut);
	return i;
}

/* Records a request; past the cap only counted. */
void netlog_add_request(struct netlog *nl, const struct netlog_request *q)
{
	struct request_row *r;

	if (nl->nreqs >= NETLOG_REQUESTS_MAX) {
		nl->reqs_dropped++;
		return;
	}
	r = xappend(&nl->reqs, &nl->nreqs, sizeof(*r));
	r->t_ms = q->t_ms;
	r->seq = q->seq;
	r->conn = (uint32_t)q->conn;
	r->allowed = q->allowed;
	r->method = intern_cut(nl, q->method, 64);
	r->host = intern_cut(nl, q->host, 253);
	r->path = intern_cut(nl, q->path, NETLOG_PATH_MAX);
	r->query = intern_cut(nl, q->query, 256);
	r->reason = intern_cut(nl, q->reason, 256);
	r->port = q->port;
	r->rule = q->rule;
}

/* Merges one answer into the resolutions. */
void netlog_add_resolution(struct netlog *nl, const char *name,
			   const struct net_addr *addrs, size_t n)
{
	char text[NET_ADDR_STRLEN];
	int32_t idx = intern(nl, name);
	struct resolution *r = NULL;

	if (idx < 0)
		return;
	for (size_t i = 0; i < nl->nres; i++)
		if (nl->res[i].name == idx)
			r = &nl->res[i];
	if (r == NULL) {
		r = xappend(&nl->res, &nl->nres, sizeof(*nl->res));
		r->name = idx;
	}
	for (size_t i = 0; i < n; i++) {
		int32_t a = intern(nl, net_addr_format(&addrs[i], text));
		bool seen = false;

		for (size_t j = 0; j < r->naddrs && !seen; j++)
			seen = r->addrs[j] == a;
		if (!seen) {
			int32_t *slot = xappend(&r->addrs, &r->naddrs, sizeof(*r->addrs));
			*slot = a;
		}
	}
}

struct pair {
	int32_t dest, addr;
	bool allowed;
	uint64_t up, down;
};

/* Orders (destination, address) pairs. */
static int pair_cmp(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->dest != b->dest)
		return a->dest < b->dest ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Most connections first, then by name. */
static int dest_cmp(const void *x, const void *y)
{
	const struct netlog_dest *a = x, *b = y;

	if (a->conns != b->conns)
		return a->conns > b->conns ? -1 : 1;
	return strcmp(a->destination, b->destination);
}

/* Builds the destinations summary. */
size_t netlog_summary(const struct netlog *nl, struct netlog_dest **out)
{
	struct pair *pairs;
	struct netlog_dest *d;
	size_t nd = 0;

	*out = NULL;
	if (nl->nconns == 0)
		return 0;
	pairs = xcalloc(nl->nconns, sizeof(*pairs));
	for (size_t i = 0; i < nl->nconns; i++) {
		const struct conn_row *c = &nl->conns[i];
		pairs[i].dest = c->host >= 0 ? c->host : c->addr;
		pairs[i].addr = c->addr;
		pairs[i].allowed = c->allowed;
		pairs[i].up = c->up;
		pairs[i].down = c->down;
	}
	qsort(pairs, nl->nconns, sizeof(*pairs), pair_cmp);

	/* Sorted, so each destination's rows are adjacent: one pass counts all. */
	d = xcalloc(nl->nconns, sizeof(*d));
	for (size_t i = 0; i < nl->nconns; i++) {
		bool new_dest = i == 0 || pairs[i].dest != pairs[i - 1].dest;

		if (new_dest)
			d[nd++].destination = nl->strings[pairs[i].dest];
		if (new_dest || pairs[i].addr != pairs[i - 1].addr)
			d[nd - 1].addrs++;
		d[nd - 1].conns++;
		d[nd - 1].denied += !pairs[i].allowed;
		d[nd - 1].sent += pairs[i].up;
		d[nd - 1].received += pairs[i].down;
	}
	free(pairs);
	qsort(d, nd, sizeof(*d), dest_cmp);
	*out = d;
	return nd;
}

/* The process fields of a row: pid (null: not looked for), strings, claimed. */
static void who_json(struct jbuf *b, const struct who_row *w)
{
	if (w->asked)
		json_uint(b, w->pid);
	else
		json_null(b);
	json_int(b, w->comm);
	json_int(b, w->argv0);
	json_int(b, w->package);
	json_int(b, w->version);
	json_int(b, w->script);
	json_int(b, w->via);
	json_bool(b, w->claimed);
}

/* A list of field names. */
static void fields_json(struct jbuf *b, const char *key, const char *const *f, size_t n)
{
	json_key(b, key);
	json_arr_begin(b);
	for (size_t i = 0; i < n; i++)
		json_str(b, f[i]);
	json_arr_end(b);
}

/* Encodes the whole log. */
char *netlog_to_json(const struct netlog *nl)
{
	struct netlog_dest *d;
	size_t nd;
	struct jbuf b;

	jbuf_init(&b);
	json_obj_begin(&b);
	json_kv_int(&b, "version", NETLOG_VERSION);
	fields_json(&b, "conn_fields", conn_fields, ARRAY_SIZE(conn_fields));
	fields_json(&b, "query_fields", query_fields, ARRAY_SIZE(query_fields));

	json_key(&b, "strings");
	json_arr_begin(&b);
	for (size_t i = 0; i < nl->nstrings; i++)
		json_str(&b, nl->strings[i]);
	json_arr_end(&b);

	json_key(&b, "conns");
	json_arr_begin(&b);
	for (size_t i = 0; i < nl->nconns; i++) {
		const struct conn_row *c = &nl->conns[i];

		json_arr_begin(&b);
		json_uint(&b, c->t_ms);
		json_str(&b, c->proto == NET_PROTO_UDP ? "udp" : "tcp");
		json_str(&b, c->allowed ? "allow" : "deny");
		json_int(&b, c->addr);
		json_uint(&b, c->port);
		json_int(&b, c->host);
		json_int(&b, c->sni);
		json_int(&b, c->reason);
		json_uint(&b, c->up);
		json_uint(&b, c->down);
		who_json(&b, &c->who);
		json_arr_end(&b);
	}
	json_arr_end(&b);

	json_key(&b, "queries");
	json_arr_begin(&b);
	for (size_t i = 0; i < nl->nqueries; i++) {
		const struct query_row *q = &nl->queries[i];

		json_arr_begin(&b);
		json_uint(&b, q->t_ms);
		json_int(&b, q->name);
		json_int(&b, q->type);
		json_str(&b, q->allowed ? "allow" : "deny");
		who_json(&b, &q->who);
		json_arr_end(&b);
	}
	json_arr_end(&b);

	json_key(&b, "resolutions");
	json_obj_begin(&b);
	for (size_t i = 0; i < nl->nres; i++) {
		json_key(&b, nl->strings[nl->res[i].name]);
		json_arr_begin(&b);
		for (size_t j = 0; j < nl->res[i].naddrs; j++)
			json_str(&b, nl->strings[nl->res[i].addrs[j]]);
		json_arr_end(&b);
	}
	json_obj_end(&b);

	fields_json(&b, "request_fields", request_fields, ARRAY_SIZE(request_fields));
	json_key(&b, "requests");
	json_arr_begin(&b);
	for (size_t i = 0; i < nl->nreqs; i++) {
		const struct request_row *r = &nl->reqs[i];

		json_arr_begin(&b);
		json_uint(&b, r->t_ms);
		json_uint(&b, r->seq);
		json_uint(&b, r->conn);
		json_int(&b, r->method);
		json_int(&b, r->host);
		json_uint(&b, r->port);
		json_int(&b, r->path);
		json_int(&b, r->query);
		json_str(&b, r->allowed ? "allow" : "deny");
		json_int(&b, r->reason);
		json_int(&b, r->rule);
		json_arr_end(&b);
	}
	json_arr_end(&b);
	json_kv_uint(&b, "requests_dropped", nl->reqs_dropped);

	json_key(&b, "summary");
	json_arr_begin(&b);
	nd = netlog_summary(nl, &d);
	for (size_t i = 0; i < nd; i++) {
		json_obj_begin(&b);
		json_kv_str(&b, "destination", d[i].destination);
		json_kv_uint(&b, "conns", d[i].conns);
		json_kv_uint(&b, "denied", d[i].denied);
		json_kv_uint(&b, "addrs", d[i].addrs);
		json_kv_uint(&b, "sent", d[i].sent);
		json_kv_uint(&b, "received", d[i].received);
		json_obj_end(&b);
	}
	free(d);
	json_arr_end(&b);
	json_obj_end(&b);
	return jbuf_steal(&b);
}
