/*
 * daemon/session-net.c — a session's network from start to end (daemon/session-net.h).
 *
 * The order at the start matters: tap0's descriptor arrives from stage 2
 * during sandbox_start; the --pcap descriptor the client opened goes to
 * boxy-net before boxy-net reads a single frame, so the capture holds the
 * first ARP. At the end the net-log is encoded once, from the broker's
 * memory, into the descriptor the client opened with its own rights (the
 * daemon never opens a path a client named).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/netlog.h"
#include "broker/resolver.h"
#include "sandbox/assemble.h"
#include "sandbox/decoys.h"
#include "daemon/daemon.h"
#include "daemon/react.h"
#include "daemon/session-net.h"
#include "common/tlsca.h"
#include "daemon/session-attrib.h"
#include "common/util.h"
#include "policy/decide.h"
#include "policy/http-rules.h"

/* One "audit" event about the session's network (layer net). */
static void net_event(struct session *s, const char *verdict, const char *detail)
{
	event_audit(&s->sink, "net", verdict, "network", detail);
}

char *session_net_tailnet(struct session *s)
{
	char *err = NULL, *suffix, *words;

	if (!s->rs.tailscale || (s->rs.net != NET_PUBLIC && s->rs.net != NET_ALLOWLIST))
		return NULL;
	suffix = resolver_tailscale_suffix(NULL, &err);
	if (!suffix) {
		/* The ranges still apply; only MagicDNS is lost, and that is said. */
		words = xasprintf("--tailscale: MagicDNS is unavailable (%s); tailnet "
				  "names will not resolve, the tailnet ranges are still open", err);
		net_event(s, "degraded", words);
		free(words);
		free(err);
	}
	return suffix;
}

/*
 * The domains whose hosts the run inspects: those of the rules that
 * restrict methods or paths ("*" for a rule without a domain). A superset
 * of what the broker will inspect (http_rules_inspect_host), which is what
 * a name constraint needs. Returns how many (0: nothing is inspected).
 */
static size_t ca_names(const struct runspec *rs, char ***out)
{
	struct http_rules rules = { 0 };
	size_t bad, n = 0;
	char **v = NULL;

	*out = NULL;
	if (rs->net != NET_ALLOWLIST || rs->nhttp_rules == 0 ||
	    http_rules_parse(&rules, (const char *const *)rs->http_rules, rs->nhttp_rules,
			     &bad) < 0)
		return 0;
	v = xcalloc(rules.n + 1, sizeof(*v));
	for (size_t i = 0; i < rules.n; i++) {
		const struct http_rule *r = &rules.v[i];
		const char *d = r->domain ? r->domain : "*";
		bool seen = false;

		if (r->nmethods == 0 && r->npaths == 0)
			continue;
		for (size_t j = 0; j < n && !seen; j++)
			seen = strcmp(v[j], d) == 0;
		if (!seen)
			v[n++] = xstrdup(d);
	}
	http_rules_free(&rules);
	if (n == 0) {
		free(v);
		return 0;
	}
	*out = v;
	return n;
}

int session_net_ca(struct session *s, struct sandbox_ctx *ctx, char **err)
{
	char **names, fp[65], until[32], *words;
	size_t n = ca_names(&s->rs, &names);
	struct tls_ca *ca;
	time_t now = time(NULL), end = now + TLS_CA_LIFETIME;
	struct tm tm;

	if (n == 0)
		return 0;
	ca = xcalloc(1, sizeof(*ca));
	if (tls_ca_create((const char *const *)names, n, s->id, now, ca, err) < 0) {
		char *why = *err;

		*err = NULL;
		set_err(err, _("cannot make this session's CA for TLS inspection: %s"), why);
		free(why);
		free(ca);
		strv_free(names);
		return -1;
	}
	s->tls_ca = ca;
	s->tls_ca_pem = tls_cert_pem(ca->cert);
	tls_cert_hash(ca->cert, s->tls_ca_hash);
	ctx->tls_ca_pem = s->tls_ca_pem;
	ctx->tls_ca_hash = s->tls_ca_hash;
	tls_cert_fingerprint(ca->cert, fp);
	gmtime_r(&end, &tm);
	strftime(until, sizeof(until), "%Y-%m-%d %H:%M UTC", &tm);
	{
		char *list = xstrdup(names[0]);

		for (size_t i = 1; i < n; i++) {
			char *l = xasprintf("%s, %s", list, names[i]);

			free(list);
			list = l;
		}
		words = xasprintf("TLS inspection of %s: this session's CA, SHA-256 %s, valid "
				  "until %s, may sign for these names only; its key is in "
				  "boxy-net's memory alone", list, fp, until);
		free(list);
	}
	event_audit(&s->sink, NET_LAYER_TLS, "info", "session-ca", words);
	free(words);
	strv_free(names);
	return 0;
}

void session_net_ca_free(struct session *s)
{
	if (s->tls_ca) {
		tls_ca_clear(s->tls_ca);
		free(s->tls_ca);
		s->tls_ca = NULL;
	}
	free(s->tls_ca_pem);
	s->tls_ca_pem = NULL;
}

/* An alert of the network whose event waits for its who: reacted to now (broker_opts). */
static void session_net_alert_now(void *ctx, const struct event *ev)
{
	react_event(ctx, ev, false);
}

void session_net_start(struct session *s, const char *tailnet)
{
	struct broker_opts opts = { 0 };
	char *err = NULL, *path = NULL, *words, **tokens = NULL, **labels = NULL;
	const struct decoy_set *decoys;
	struct broker *b = NULL;
	int taps[BROKER_MAX_HELPERS];
	size_t ntap = 0;

	if (s->rs.net != NET_PUBLIC && s->rs.net != NET_ALLOWLIST)
		return;
	ntap = sandbox_take_taps(s->sb, taps, ARRAY_SIZE(taps));
	if (ntap == 0) {
		err = xstrdup("the sandbox handed over no TAP device");
		goto fail;
	}
	opts.tailnet = s->rs.tailscale ? tailnet : NULL;
	opts.pcap = s->pcap_fd >= 0;
	opts.lang = s->lang;
	opts.tls_ca = s->tls_ca;        /* the broker takes it (and hands the key to boxy-net) */
	opts.helpers = ntap;            /* one boxy-net per queue of tap0, each gets the key */
	s->tls_ca = NULL;
	opts.attrib = session_attrib_broker(s);         /* NULL: --no-attribution */
	opts.alert_now = session_net_alert_now;
	opts.alert_ctx = s;
	decoys = sandbox_decoys(s->sb);
	if (decoys) {
		/* Looked for in every name and the first bytes of every flow. */
		tokens = xcalloc(decoys->ntokens + 1, sizeof(char *));
		labels = xcalloc(decoys->ntokens + 1, sizeof(char *));
		for (size_t i = 0; i < decoys->ntokens; i++) {
			tokens[i] = decoys->tokens[i].text;
			labels[i] = decoys->tokens[i].label;
		}
		opts.tokens = tokens;
		opts.token_labels = labels;
		opts.ntokens = decoys->ntokens;
	}
	b = broker_create(s->srv->loop, &s->rs, &s->sink, s->id, &opts, &err);
	free(tokens);
	free(labels);
	tokens = labels = NULL;
	if (!b)
		goto fail;
	path = broker_helper_path();
	/* One boxy-net per queue of tap0; the capture (one queue then) goes to the first. */
	for (size_t i = 0; i < ntap; i++)
		if (broker_spawn(b, path, taps[i], i == 0 ? s->pcap_fd : -1, &err) < 0)
			goto fail;
	s->net = b;
	for (size_t i = 0; i < ntap; i++)
		close(taps[i]);
	if (s->pcap_fd >= 0) {
		close(s->pcap_fd);      /* boxy-net's now */
		s->pcap_fd = -1;
	}
	free(path);
	return;
fail:
	broker_free(b);
	for (size_t i = 0; i < ntap; i++)
		close(taps[i]);
	words = xasprintf("the session's network could not start: %s", err);
	if (s->pcap_fd >= 0) {
		/* --pcap was asked for: an empty capture would be misread later. */
		free(s->failure);
		s->failure = xstrdup(words);
		net_event(s, "deny", words);
		sandbox_kill(s->sb);
	} else {
		net_event(s, "degraded", words);
	}
	free(words);
	free(err);
	free(path);
}

void session_net_end(struct session *s)
{
	char *err = NULL;

	/* The last byte counts first: the net-log and the store's rows carry them. */
	if (s->net)
		broker_finish(s->net);
	if (s->netlog_fd >= 0) {
		int rc;

		if (s->net) {
			rc = broker_write_netlog(s->net, s->netlog_fd, &err);
		} else {
			/* No network ran: still a valid log, with nothing in it. */
			struct netlog *nl = netlog_create();
			char *json = netlog_to_json(nl);

			rc = write_all(s->netlog_fd, json, strlen(json)) < 0 ||
			     write_all(s->netlog_fd, "\n", 1) < 0 ? -1 : 0;
			if (rc < 0)
				set_err_errno(&err, "writing the net-log");
			free(json);
			netlog_free(nl);
		}
		if (rc < 0) {
			net_event(s, "degraded", err);
			free(err);
		}
		close(s->netlog_fd);
		s->netlog_fd = -1;
	}
	if (s->pcap_fd >= 0) {
		close(s->pcap_fd);
		s->pcap_fd = -1;
	}
	broker_free(s->net);
	s->net = NULL;
}
