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
#include <unistd.h>

#include "broker/broker.h"
#include "broker/netlog.h"
#include "broker/resolver.h"
#include "sandbox/assemble.h"
#include "sandbox/decoys.h"
#include "daemon/daemon.h"
#include "daemon/react.h"
#include "daemon/session-net.h"
#include "daemon/session-attrib.h"
#include "common/util.h"

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
	int tap = -1;

	if (s->rs.net != NET_PUBLIC && s->rs.net != NET_ALLOWLIST)
		return;
	tap = sandbox_take_tap(s->sb);
	if (tap < 0) {
		err = xstrdup("the sandbox handed over no TAP device");
		goto fail;
	}
	opts.tailnet = s->rs.tailscale ? tailnet : NULL;
	opts.pcap = s->pcap_fd >= 0;
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
	if (broker_spawn(b, path, tap, s->pcap_fd, &err) < 0)
		goto fail;
	s->net = b;
	close(tap);
	if (s->pcap_fd >= 0) {
		close(s->pcap_fd);      /* boxy-net's now */
		s->pcap_fd = -1;
	}
	free(path);
	return;
fail:
	broker_free(b);
	if (tap >= 0)
		close(tap);
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
