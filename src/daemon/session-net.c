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
#include "daemon/daemon.h"
#include "daemon/session-net.h"
#include "ui/summary.h"
#include "common/util.h"
#include "ui/watch.h"

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

void session_net_start(struct session *s, const char *tailnet)
{
	struct broker_opts opts = { 0 };
	char *err = NULL, *path = NULL, *words;
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
	b = broker_create(s->srv->loop, &s->rs, &s->sink, s->id, &opts, &err);
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

/* Most connections first; the snapshot's order among equals. */
static int dest_by_conns(const void *x, const void *y)
{
	const struct watch_dest *const *a = x, *const *b = y;

	if ((*a)->conns != (*b)->conns)
		return (*a)->conns > (*b)->conns ? -1 : 1;
	return *a < *b ? -1 : *a > *b;
}

int net_summary_print(FILE *out, const void *snapshot, size_t len)
{
	static const char *const head[] = {
		"DESTINATION", "CONNS", "DENIED", "ADDRS", "SENT", "RECEIVED",
	};
	struct watch_model m;
	size_t w[6], shown;
	char ***cells;
	const struct watch_dest **order;
	uint64_t more_conns = 0, more_denied = 0;

	watch_model_init(&m);
	if (watch_model_snapshot(&m, snapshot, len) < 0) {
		watch_model_free(&m);
		return -1;
	}
	if (!m.ndests) {
		refusals_merge_unfixable(&m.refusals);
		summary_print_refusals(out, &m.refusals, color_wanted(fileno(out)), m.id);
		watch_model_free(&m);
		return 0;
	}
	/*
	 * A flood of distinct addresses made a table of a thousand lines: past
	 * NET_SUMMARY_ROWS the busiest are shown and the rest summed in one line
	 * (boxy show and the store's destinations view have every one).
	 */
	order = xcalloc(m.ndests, sizeof(*order));
	for (size_t i = 0; i < m.ndests; i++)
		order[i] = &m.dests[i];
	shown = m.ndests;
	if (m.ndests > NET_SUMMARY_ROWS) {
		qsort(order, m.ndests, sizeof(*order), dest_by_conns);
		shown = NET_SUMMARY_ROWS;
		for (size_t i = shown; i < m.ndests; i++) {
			more_conns += order[i]->conns;
			more_denied += order[i]->denied;
		}
	}
	for (size_t c = 0; c < 6; c++)
		w[c] = strlen(head[c]);
	cells = xcalloc(shown, sizeof(*cells));
	for (size_t i = 0; i < shown; i++) {
		const struct watch_dest *d = order[i];
		char a[32], b[32];

		cells[i] = xcalloc(6, sizeof(char *));
		cells[i][0] = watch_sanitize(d->name);
		cells[i][1] = xasprintf("%llu", (unsigned long long)d->conns);
		cells[i][2] = xasprintf("%llu", (unsigned long long)d->denied);
		cells[i][3] = xasprintf("%llu", (unsigned long long)d->addrs);
		cells[i][4] = xstrdup(format_size(d->sent, a, sizeof(a)));
		cells[i][5] = xstrdup(format_size(d->received, b, sizeof(b)));
		for (size_t c = 0; c < 6; c++)
			if (strlen(cells[i][c]) > w[c])
				w[c] = strlen(cells[i][c]);
	}
	/* The specification's layout: two spaces in, two between columns, the last unpadded. */
	fprintf(out, "\nboxy: network destinations (%zu)\n ", m.ndests);
	for (size_t c = 0; c < 6; c++)
		fprintf(out, " %s%-*s", c ? " " : "", c == 5 ? 0 : (int)w[c], head[c]);
	fputc('\n', out);
	for (size_t i = 0; i < shown; i++) {
		fputc(' ', out);
		for (size_t c = 0; c < 6; c++) {
			fprintf(out, " %s%-*s", c ? " " : "", c == 5 ? 0 : (int)w[c], cells[i][c]);
			free(cells[i][c]);
		}
		fputc('\n', out);
		free(cells[i]);
	}
	if (shown < m.ndests)
		fprintf(out, _("  … and %zu more destinations: %llu connections, %llu denied "
			       "(boxy show lists them)\n"), m.ndests - shown,
			(unsigned long long)more_conns, (unsigned long long)more_denied);
	free(cells);
	free(order);
	refusals_merge_unfixable(&m.refusals);
	summary_print_refusals(out, &m.refusals, color_wanted(fileno(out)), m.id);
	watch_model_free(&m);
	return 0;
}
