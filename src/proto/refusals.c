/*
 * proto/refusals.c — what a session was refused, grouped (see proto/refusals.h).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/refusals.h"
#include "common/util.h"
#include "policy/addr.h"
#include "policy/decide.h"
#include "policy/http-rules.h"

#define FIELD_MAX 1024

void refusals_init(struct refusals *t)
{
	memset(t, 0, sizeof(*t));
}

bool refusal_same_kind(const struct refusal_group *a, const struct refusal_group *b)
{
	size_t n = event_reason_kind_len(a->reason);

	return strcmp(a->layer, b->layer) == 0 && n == event_reason_kind_len(b->reason) &&
	       strncmp(a->reason, b->reason, n) == 0;
}

/* Does the table hold a group of the same kind as layer and reason? */
static bool kind_held(const struct refusals *t, const char *layer, const char *reason)
{
	struct refusal_group probe = { .layer = (char *)layer, .reason = (char *)reason };

	for (size_t i = 0; i < t->n; i++)
		if (refusal_same_kind(&t->v[i], &probe))
			return true;
	return false;
}

void refusals_free(struct refusals *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].subject);
		free(t->v[i].layer);
		free(t->v[i].reason);
		free(t->v[i].who);
		free(t->v[i].who_key);
	}
	free(t->v);
	refusals_init(t);
}

/* A flow's own subject: its name (or address) and port, as a person reads it. */
static char *flow_subject(const struct event *ev)
{
	const char *who = ev->host ? ev->host : ev->addr;

	if (!who)
		return ev->subject ? xstrdup(ev->subject) : NULL;
	if (strchr(who, ':'))
		return xasprintf("[%s]:%u", who, ev->port);
	return xasprintf("%s:%u", who, ev->port);
}

/* What tells two refusals' makers apart: the package, else the command; NULL: not looked for. */
static char *who_key(const struct event_who *w)
{
	char *pkg;

	if (!w)
		return NULL;
	if (!w->found)
		return xstrdup("?");
	pkg = event_who_package_words(w);
	return pkg ? pkg : xstrdup(w->comm ? w->comm : "");
}

/* A refusal of group g was made by w: note when that is someone else than its first. */
static void group_who(struct refusal_group *g, const struct event_who *w)
{
	char *key;

	if (g->who_more || !w)
		return;
	key = who_key(w);
	if (!g->who_key || strcmp(g->who_key, key) != 0)
		g->who_more = true;
	free(key);
}

bool refusals_add_event(struct refusals *t, const struct event *ev)
{
	char *subject;
	const char *layer, *reason;
	bool flow;

	if (!ev->kind || !ev->verdict || strcmp(ev->verdict, "deny") != 0)
		return false;
	if (ev->mirror)
		return false;           /* the --audit-log copy of an event counted as itself */
	flow = strcmp(ev->kind, "tcp") == 0 || strcmp(ev->kind, "udp") == 0;
	if (!flow) {
		/* The audit twin of a flow's refusal ("tcp://…"): the flow event counts. */
		if (ev->subject && (strncmp(ev->subject, "tcp://", 6) == 0 ||
				    strncmp(ev->subject, "udp://", 6) == 0))
			return false;
	}
	subject = flow ? flow_subject(ev) : xstrdup(ev->subject ? ev->subject : "-");
	if (!subject)
		return false;
	layer = ev->layer ? ev->layer : "-";
	reason = ev->detail ? ev->detail : "";
	t->total++;
	for (size_t i = 0; i < t->n; i++) {
		struct refusal_group *g = &t->v[i];

		if (strcmp(g->subject, subject) == 0 && strcmp(g->layer, layer) == 0 &&
		    strcmp(g->reason, reason) == 0) {
			g->count++;
			group_who(g, ev->who);
			free(subject);
			return true;
		}
	}
	/* Full: only a kind of refusal not held yet gets a group (decoys fill one kind). */
	if (t->n >= REFUSALS_GROUPS_MAX &&
	    (t->n >= REFUSALS_GROUPS_MAX + REFUSALS_KINDS_MAX || kind_held(t, layer, reason))) {
		t->other++;
		free(subject);
		return true;
	}
	{
		struct refusal_group *g = xappend(&t->v, &t->n, sizeof(*t->v));

		g->subject = subject;
		g->layer = xstrdup(layer);
		g->reason = xstrdup(reason);
		g->count = 1;
		g->who = event_who_words(ev->who);
		g->who_key = who_key(ev->who);
	}
	return true;
}

void refusals_encode(struct wbuf *w, const struct refusals *t)
{
	wire_put_u64(w, t->total);
	wire_put_u64(w, t->other);
	wire_put_u32(w, (uint32_t)t->n);
	for (size_t i = 0; i < t->n; i++) {
		wire_put_str(w, t->v[i].subject);
		wire_put_str(w, t->v[i].layer);
		wire_put_str(w, t->v[i].reason);
		wire_put_u64(w, t->v[i].count);
		wire_put_str(w, t->v[i].who);
		wire_put_u8(w, t->v[i].who_more);
	}
}

int refusals_decode(struct rbuf *r, struct refusals *t)
{
	uint32_t n;

	refusals_init(t);
	t->total = wire_get_u64(r);
	t->other = wire_get_u64(r);
	n = wire_get_u32(r);
	if (n > REFUSALS_GROUPS_MAX + REFUSALS_KINDS_MAX)
		r->failed = true;
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		struct refusal_group *g = xappend(&t->v, &t->n, sizeof(*t->v));

		g->subject = wire_get_str(r, FIELD_MAX);
		g->layer = wire_get_str(r, FIELD_MAX);
		g->reason = wire_get_str(r, FIELD_MAX * 4);
		g->count = wire_get_u64(r);
		g->who = wire_get_str(r, FIELD_MAX);
		g->who_more = wire_get_u8(r) != 0;
		if (!g->subject || !g->layer || !g->reason)
			r->failed = true;
	}
	if (r->failed) {
		refusals_free(t);
		return -1;
	}
	return 0;
}

/* The name of a "name:port" subject, or NULL when it is an address. */
static char *subject_name(const char *subject)
{
	const char *colon = strrchr(subject, ':');
	size_t len = colon ? (size_t)(colon - subject) : strlen(subject);
	bool letter = false;

	if (subject[0] == '[')
		return NULL;            /* an IPv6 address */
	for (size_t i = 0; i < len; i++) {
		char c = subject[i];

		if ((c >= 'a' && c <= 'z') || c == '-')
			letter = true;
		else if (!(c >= '0' && c <= '9') && c != '.' && c != '_')
			return NULL;
	}
	return letter ? xstrndup(subject, len) : NULL;
}

/* Is "ADDR/LEN" an address boxy may suggest opening? Unparsable: no. */
static bool cidr_fix_ok(const char *cidr)
{
	char addr[NET_ADDR_STRLEN + 1];
	size_t n = strcspn(cidr, "/");
	struct net_addr a;
	struct net_addr_class cls;

	if (n >= sizeof(addr))
		return false;
	memcpy(addr, cidr, n);
	addr[n] = '\0';
	if (net_addr_parse(addr, &a) < 0)
		return false;
	return net_addr_classify(&a, &cls) || net_range_fix_ok(cls.range);
}

/*
 * A refused request's rule, from its subject ("GET api.test:8081/v2/x"):
 * the one http_rule_suggest makes, shell-quoted (it never holds a quote).
 */
static char *request_fix(const struct refusal_group *g)
{
	const char *sp = strchr(g->subject, ' '), *slash;
	enum http_deny d;
	char *method, *host, *path, *rule, *fix = NULL;

	if (strcmp(g->reason, http_deny_words(HTTP_DENY_NO_RULE)) == 0)
		d = HTTP_DENY_NO_RULE;
	else if (strcmp(g->reason, http_deny_words(HTTP_DENY_CONNECT)) == 0)
		d = HTTP_DENY_CONNECT;
	else
		return NULL;
	if (!sp)
		return NULL;
	slash = strchr(sp + 1, '/');
	method = xstrndup(g->subject, (size_t)(sp - g->subject));
	host = xstrndup(sp + 1, slash ? (size_t)(slash - sp - 1) : strlen(sp + 1));
	path = xstrdup(slash ? slash : "");
	host[strcspn(host, ":")] = '\0';
	rule = http_rule_suggest(d, method, host, path);
	if (rule)
		fix = xasprintf("--allow-http '%s'", rule);
	free(rule);
	free(method);
	free(host);
	free(path);
	return fix;
}

char *refusal_fix(const struct refusal_group *g)
{
	const char *hint = strstr(g->reason, "(to allow it: ");

	if (hint) {
		/* The layer wrote the fix into its reason: take it verbatim — unless it
		 * opens an address of the user's own machine or network (a reason a
		 * store kept from before that rule; net_range_fix_ok). */
		const char *start = hint + strlen("(to allow it: "), *end = strchr(start, ')');
		char *fix = end && end > start ? xstrndup(start, (size_t)(end - start)) : NULL;

		if (fix && strncmp(fix, "--allow-cidr ", 13) == 0 && !cidr_fix_ok(fix + 13)) {
			free(fix);
			fix = NULL;
		}
		return fix;
	}
	if (strcmp(g->layer, NET_LAYER_HTTP) == 0)
		return request_fix(g);
	if (strcmp(g->layer, "net.dns") == 0 && strstr(g->reason, "not on the allowlist"))
		return xasprintf("--allow-host %s", g->subject);
	if (strstr(g->reason, "network disabled (--net none)"))
		return xstrdup("--net public");
	if (strstr(g->reason, "port not allowed for this host")) {
		char *name = subject_name(g->subject);

		if (name) {
			free(name);
			return xasprintf("--allow-host %s", g->subject);
		}
	}
	return NULL;
}

/*
 * Groups that differ only by subject and have no fix of their own (a scan of
 * addresses, each refused for the same reason) become one row: "first (+N
 * others)". Groups with a fix stay apart: each names its own flag.
 */
void refusals_merge_unfixable(struct refusals *t)
{
	size_t *others = xcalloc(t->n ? t->n : 1, sizeof(*others)), n = 0;
	bool *fixable = xcalloc(t->n ? t->n : 1, sizeof(*fixable));

	for (size_t i = 0; i < t->n; i++) {
		char *fix = refusal_fix(&t->v[i]);

		fixable[i] = fix != NULL;
		free(fix);
	}
	for (size_t i = 0; i < t->n; i++) {
		struct refusal_group *g = &t->v[i];
		size_t into = n;

		if (!fixable[i])
			for (size_t j = 0; j < n; j++)
				if (!fixable[j] && strcmp(t->v[j].layer, g->layer) == 0 &&
				    strcmp(t->v[j].reason, g->reason) == 0) {
					into = j;
					break;
				}
		if (into < n) {
			t->v[into].count += g->count;
			others[into]++;
			if (g->who_more || (g->who_key && (!t->v[into].who_key ||
						   strcmp(g->who_key, t->v[into].who_key) != 0)))
				t->v[into].who_more = true;
			free(g->subject);
			free(g->layer);
			free(g->reason);
			free(g->who);
			free(g->who_key);
			continue;
		}
		t->v[n] = *g;
		fixable[n] = fixable[i];
		others[n] = 0;
		n++;
	}
	t->n = n;
	for (size_t i = 0; i < n; i++)
		if (others[i]) {
			char *sub = xasprintf(_("%s (+%zu others)"), t->v[i].subject, others[i]);

			free(t->v[i].subject);
			t->v[i].subject = sub;
		}
	free(others);
	free(fixable);
}
