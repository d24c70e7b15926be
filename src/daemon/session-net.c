/*
 * daemon/session-net.c — a session's network from start to end (daemon/session-net.h).
 *
 * The order at the start matters: tap0's descriptors arrive from stage
 * "net" before boxy-init mounts anything, and the broker and boxy-nets start
 * then, while boxy-init builds the rest (struct session_netstart); the
 * --pcap descriptor the client opened goes to boxy-net before boxy-net
 * reads a single frame, so the capture holds the first ARP (frames sent
 * before that wait in tap0's queue). At the end the net-log is encoded once, from the broker's
 * memory, into the descriptor the client opened with its own rights (the
 * daemon never opens a path a client named).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
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

/*
 * The network's start (doc/internals-net.md, "The start"): from the launch
 * until every boxy-net of the session has locked itself down. tap0 comes
 * back from stage "net" before boxy-init mounts anything, so the broker and
 * the boxy-nets start then, on the daemon's side, while boxy-init builds
 * the rest of the sandbox; the payload never waits for them (tap0 holds
 * what it sends until a boxy-net reads).
 */
struct session_netstart {
	ev_io taps_w;               /* a copy of the plan socket, until tap0 has come */
	int taps_fd;
	ev_timer hold_w;            /* BOXY_NET_HOLD_MS: the test suite's late boxy-net */
	unsigned hold_ms;
	bool held;                  /* the hold was begun */
	char *tailnet;              /* --tailscale's suffix, for a start after the report */
	ev_timer up_w;              /* looks for every boxy-net's lockdown while they start */
	double up_every;
	enum { NET_WAITING, NET_STARTING, NET_UP, NET_FAILED } state;
	char *failure;              /* NET_FAILED: the line the run ends with */
};

#define NET_UP_FIRST_S  0.0005  /* the first look, then twice as long each time */
#define NET_UP_MAX_S    0.05
#define NET_HOLD_MAX_MS 10000

/*
 * Has the boxy-net with this pid installed its seccomp filter? That is the
 * last step of its lockdown (net/lockdown.c): from then on it only serves.
 * /proc/PID/status is readable whatever the process's dumpable flag, and the
 * pid cannot name another process: a boxy-net is reaped on this loop only,
 * after which the broker says -1 for it.
 */
static bool net_helper_locked(pid_t pid)
{
	char path[48], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "\nSeccomp:\t2\n") != NULL;
}

/*
 * The network could not start: the run fails with why. While boxy-init is
 * still building the sandbox the start is given up (nothing of the payload
 * has run); once it has reported ready the payload is stopped, and the run
 * ends with the same line and status 125 (session_net_failed).
 */
static void net_start_failed(struct session *s, const char *why)
{
	struct session_netstart *ns = s->netstart;
	char *words = xasprintf("the session's network could not start: %s", why);

	ev_timer_stop(s->srv->loop, &ns->up_w);
	ns->state = NET_FAILED;
	free(ns->failure);
	ns->failure = words;
	net_event(s, "deny", words);
	if (s->launch.active) {
		sandbox_launch_abort(s->sb, words);
	} else if (s->running) {
		free(s->failure);
		s->failure = xstrdup(words);
		sandbox_kill(s->sb);
	}
}

/* While the boxy-nets start: all locked down (the network is up), one gone (it failed), or wait. */
static void net_up_check(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct session *s = w->data;
	struct session_netstart *ns = s->netstart;
	size_t n = broker_helpers(s->net), locked = 0;

	(void)revents;
	if (!broker_alive(s->net)) {
		static const char ended[] = "; the session's network was ended";
		const char *why = broker_failure(s->net);
		size_t len = why ? strlen(why) : 0;
		char *line;

		/* "boxy-net exited with status 1" (its own line is in the daemon's log) */
		if (len > sizeof(ended) - 1 && strcmp(why + len - (sizeof(ended) - 1), ended) == 0)
			len -= sizeof(ended) - 1;
		line = why ? xstrndup(why, len) : xstrdup("boxy-net ended");
		net_start_failed(s, line);
		free(line);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		pid_t pid = broker_helper_pid(s->net, i);

		if (pid > 0 && net_helper_locked(pid))
			locked++;
	}
	if (n > 0 && locked == n) {
		ns->state = NET_UP;
		ev_timer_stop(loop, w);
		return;
	}
	ns->up_every = ns->up_every * 2 > NET_UP_MAX_S ? NET_UP_MAX_S : ns->up_every * 2;
	ev_timer_stop(loop, w);
	ev_timer_set(w, ns->up_every, 0.);
	ev_timer_start(loop, w);
}

/* Start the broker and one boxy-net per queue of tap0 (tap0 has come). */
static void net_spawn(struct session *s, const char *tailnet)
{
	struct session_netstart *ns = s->netstart;
	struct broker_opts opts = { 0 };
	char *err = NULL, *path = NULL, **tokens = NULL, **labels = NULL;
	const struct decoy_set *decoys;
	struct broker *b = NULL;
	int taps[BROKER_MAX_HELPERS];
	size_t ntap = 0;

	ntap = sandbox_take_taps(s->sb, taps, ARRAY_SIZE(taps));
	if (ntap == 0) {
		err = xstrdup("the sandbox handed over no TAP device");
		goto fail;
	}
	/* The broker asks attribution from the first flow on: started first (idempotent). */
	session_attrib_start(s);
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
	ns->state = NET_STARTING;
	ns->up_every = NET_UP_FIRST_S;
	ev_timer_set(&ns->up_w, ns->up_every, 0.);
	ev_timer_start(s->srv->loop, &ns->up_w);
	return;
fail:
	broker_free(b);
	for (size_t i = 0; i < ntap; i++)
		close(taps[i]);
	net_start_failed(s, err ? err : "the broker could not start");
	free(err);
	free(path);
}

/* Stop watching the plan socket for tap0. */
static void net_taps_unwatch(struct session *s)
{
	struct session_netstart *ns = s->netstart;

	if (ns->taps_fd < 0)
		return;
	ev_io_stop(s->srv->loop, &ns->taps_w);
	close(ns->taps_fd);
	ns->taps_fd = -1;
}

/* BOXY_NET_HOLD_MS is over: start the network now. */
static void net_hold_over(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct session *s = w->data;

	(void)loop;
	(void)revents;
	if (s->netstart->state == NET_WAITING)
		net_spawn(s, s->launch.active ? s->launch.tailnet : s->netstart->tailnet);
}

/* Begin BOXY_NET_HOLD_MS's wait. */
static void net_hold(struct session *s)
{
	struct session_netstart *ns = s->netstart;

	ns->held = true;
	ev_timer_set(&ns->hold_w, ns->hold_ms / 1000.0, 0.);
	ev_timer_start(s->srv->loop, &ns->hold_w);
}

/* The plan socket is readable while boxy-init builds the sandbox: tap0 has come. */
static void net_taps_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct session *s = w->data;
	struct session_netstart *ns = s->netstart;
	char *err = NULL;

	(void)loop;
	(void)revents;
	net_taps_unwatch(s);
	if (sandbox_taps_receive(s->sb, &err) < 0) {
		/* boxy-init died or sent something else: its report says why. */
		free(err);
		return;
	}
	if (ns->hold_ms) {
		net_hold(s);
		return;
	}
	net_spawn(s, s->launch.tailnet);
}

/* BOXY_NET_HOLD_MS=MS (1 to NET_HOLD_MAX_MS) in the run's environment, else 0. */
static unsigned net_hold_ms(char *const *env)
{
	static const char key[] = "BOXY_NET_HOLD_MS=";

	for (size_t i = 0; env && env[i]; i++) {
		char *end;
		unsigned long v;

		if (strncmp(env[i], key, sizeof(key) - 1) != 0)
			continue;
		v = strtoul(env[i] + sizeof(key) - 1, &end, 10);
		if (*end == '\0' && v >= 1 && v <= NET_HOLD_MAX_MS)
			return (unsigned)v;
	}
	return 0;
}

void session_net_begin(struct session *s, char *const *env)
{
	struct session_netstart *ns;
	int fd;

	if (s->rs.net != NET_PUBLIC && s->rs.net != NET_ALLOWLIST)
		return;
	ns = xcalloc(1, sizeof(*ns));
	ns->taps_fd = -1;
	ns->hold_ms = net_hold_ms(env);
	ev_init(&ns->hold_w, net_hold_over);
	ev_init(&ns->up_w, net_up_check);
	ns->hold_w.data = ns->up_w.data = s;
	s->netstart = ns;
	fd = sandbox_taps_fd(s->sb);
	/* A copy: the sandbox closes its own when boxy-init reports, maybe before this is stopped. */
	if (fd >= 0 && (ns->taps_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) >= 0) {
		ev_io_init(&ns->taps_w, net_taps_ready, ns->taps_fd, EV_READ);
		ns->taps_w.data = s;
		ev_io_start(s->srv->loop, &ns->taps_w);
	}
}

void session_net_start(struct session *s, const char *tailnet)
{
	struct session_netstart *ns = s->netstart;

	if (!ns)
		return;
	switch (ns->state) {
	case NET_FAILED:
		/* It failed while boxy-init reported ready: the payload may have begun. */
		if (!s->failure)
			s->failure = xstrdup(ns->failure);
		sandbox_kill(s->sb);
		return;
	case NET_WAITING:
		/* tap0 came with the report (the plan socket was not looked at before). */
		net_taps_unwatch(s);
		if (ns->hold_ms && (!ns->held || ev_is_active(&ns->hold_w))) {
			free(ns->tailnet);
			ns->tailnet = tailnet ? xstrdup(tailnet) : NULL;
			if (!ns->held)
				net_hold(s);
			return;
		}
		net_spawn(s, tailnet);
		return;
	default:
		return;                 /* started while boxy-init built the sandbox */
	}
}

bool session_net_failed(const struct session *s)
{
	return s->netstart && s->netstart->state == NET_FAILED;
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
	if (s->netstart) {
		net_taps_unwatch(s);
		ev_timer_stop(s->srv->loop, &s->netstart->hold_w);
		ev_timer_stop(s->srv->loop, &s->netstart->up_w);
		free(s->netstart->failure);
		free(s->netstart->tailnet);
		free(s->netstart);
		s->netstart = NULL;
	}
}
