/*
 * daemon/react.c — a session's alerts acted on (see daemon/react.h and
 * doc/react.md).
 *
 * Any event flagged as an alert is one: verdict "alert" (the DNS tunnel
 * scorer's net.dns alert, a git-protection finding, any later detector's),
 * or a tripwire's (kind, layer or verdict "tripwire"); and the refusal that
 * makes the session's count reach --on-denials raises one of its own. Its
 * kind (tripwire, dns, git, denials, or plain alert) picks the action from
 * the session's --on-alert: log records the decision and nothing more;
 * freeze holds the network (the broker reads nothing more of boxy-net and
 * stops it) and then stops every process of the sandbox (the cgroup freezer,
 * or SIGSTOP swept until none runs: sandbox/freeze.h), marks the session
 * frozen in the store and tells its clients; stop holds the network and
 * kills the sandbox. All of it runs inside the call that published the
 * alert, so the broker, back from its emit, finds itself held before it
 * acts on the query that raised it.
 *
 * Only the user takes a session out of a freeze (boxy resume, boxy stop; a
 * --timeout still runs out): no alert, however many, ever resumes one, so a
 * payload cannot make a freeze flap. An alert that arrives while the session
 * is frozen is recorded as such and changes nothing. A freeze that cannot be
 * completed within FREEZE_TIMEOUT_US kills the sandbox instead: a session is
 * never left half frozen with its network held open to a running process.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/broker.h"
#include "daemon/bus.h"
#include "daemon/daemon.h"
#include "daemon/react.h"
#include "sandbox/assemble.h"
#include "spec/values.h"
#include "common/util.h"

#define REACT_WORDS_MAX 400     /* bytes of an alert kept as the reason of a freeze */

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool eq(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* The kind of alert ev is, or -1 when it is no alert. */
static int react_kind_of(const struct event *ev)
{
	if (!eq(ev->verdict, "alert") && !eq(ev->verdict, "tripwire"))
		return -1;
	if (eq(ev->kind, "tripwire") || eq(ev->layer, "tripwire") || eq(ev->verdict, "tripwire"))
		return REACT_TRIPWIRE;
	if (eq(ev->layer, "net.dns"))
		return REACT_DNS;
	if (eq(ev->layer, "git"))
		return REACT_GIT;
	if (eq(ev->layer, "react") && eq(ev->subject, "denials"))
		return REACT_DENIALS;
	return REACT_ALERT;
}

/*
 * "KIND: SUBJECT: DETAIL" ("KIND: DETAIL" when the subject is the kind's own
 * word), at most REACT_WORDS_MAX bytes, cut between characters. malloc'd.
 */
static char *alert_words(enum react_kind kind, const struct event *ev)
{
	char *w = eq(ev->subject, react_kind_name(kind)) ?
		  xasprintf("%s: %s", react_kind_name(kind), ev->detail ? ev->detail : "") :
		  xasprintf("%s: %s: %s", react_kind_name(kind), ev->subject ? ev->subject : "-",
			    ev->detail ? ev->detail : "");
	size_t n = strlen(w);

	if (n > REACT_WORDS_MAX) {
		n = REACT_WORDS_MAX;
		while (n > 0 && ((unsigned char)w[n] & 0xc0) == 0x80)
			n--;
		w[n] = '\0';
	}
	return w;
}

/* One decision of the reaction: an audit event of layer "react" (audit log, store, journal). */
static void react_record(struct session *s, const char *verdict, const char *subject,
			 const char *detail)
{
	struct event ev = event_audit_make("react", verdict, subject, detail);

	bus_publish(s, &ev);
}

/* Can the sandbox still be acted on (started, its init not yet gone)? */
static bool react_alive(const struct session *s)
{
	return s->running && s->sb && !s->launch.active && ev_is_active(&s->child_w) && !s->stopping;
}

/* Hold the network, kill the sandbox, say why (its exit is 137: 128 + SIGKILL). */
static void react_stop(struct session *s, const char *words, const char *detail)
{
	if (s->net)
		broker_hold(s->net, true);
	react_record(s, "action", "stop", detail);
	free(s->failure);
	s->failure = xasprintf("stopped on an alert: %s", words);
	s->stopping = true;
	sandbox_kill(s->sb);
}

/* Hold the network, freeze every process, mark the session frozen; t0: the alert's arrival. */
static void react_freeze(struct session *s, const char *words, uint64_t t0)
{
	struct freeze_report rep;
	char *err = NULL, *detail;
	uint64_t t1;

	if (s->net)
		broker_hold(s->net, true);
	t1 = mono_us();
	if (sandbox_freeze(s->sb, &rep, &err) < 0) {
		detail = xasprintf("%s: could not be frozen (%s): stopped with SIGKILL instead", words,
				   err);
		react_stop(s, words, detail);
		free(detail);
		free(err);
		return;
	}
	s->frozen = true;
	s->frozen_ms = now_real_ms();
	free(s->frozen_reason);
	s->frozen_reason = xstrdup(words);
	if (strcmp(rep.how, "cgroup") == 0)
		detail = xasprintf("%s: frozen %.2f ms after the alert (cgroup freezer); its network "
				   "is held; decide: boxy resume %.8s / boxy stop %.8s", words,
				   (double)(t1 - t0 + rep.us) / 1000.0, s->id, s->id);
	else
		detail = xasprintf("%s: frozen %.2f ms after the alert (%s: %u process(es) stopped, "
				   "%u sweep(s)); its network is held; decide: boxy resume %.8s / "
				   "boxy stop %.8s", words, (double)(t1 - t0 + rep.us) / 1000.0,
				   rep.how, rep.procs, rep.rounds, s->id, s->id);
	react_record(s, "action", "freeze", detail);
	bus_session_frozen(s);
	free(detail);
}

/* The action --on-alert gives kind in s: log, freeze or stop. */
static enum react_action react_action_for(const struct session *s, enum react_kind kind)
{
	struct react_policy p = { 0 };
	char *err = NULL;

	if (s->react_log_only)
		return REACT_LOG;
	if (s->rs.on_alert && parse_on_alert(s->rs.on_alert, &p, &err) < 0)
		free(err);      /* cannot happen: the request's decoder checked it */
	return react_policy_action(&p, kind);
}

/* An alert of kind in s: act as its --on-alert says, and record it. */
static void react_alert(struct session *s, enum react_kind kind, const struct event *ev)
{
	uint64_t t0 = mono_us();
	enum react_action a = react_action_for(s, kind);
	char *words = alert_words(kind, ev), *detail;

	if (a == REACT_LOG || !react_alive(s) || (s->frozen && a == REACT_FREEZE)) {
		if (a == REACT_LOG && s->react_log_only)
			detail = xasprintf("%s: logged only (the session was resumed with boxy resume "
					   "--log)", words);
		else if (a == REACT_LOG)
			detail = xasprintf("%s: logged (--on-alert %s)", words,
					   s->rs.on_alert ? s->rs.on_alert : "unset: every alert is logged");
		else if (s->frozen)
			detail = xasprintf("%s: the session is frozen already", words);
		else
			detail = xasprintf("%s: the run has ended or is ending: nothing to %s", words,
					   react_action_name(a));
		react_record(s, "info", "log", detail);
		free(detail);
	} else if (a == REACT_FREEZE) {
		react_freeze(s, words, t0);
	} else {
		detail = xasprintf("%s: stopped with SIGKILL (exit 137)", words);
		react_stop(s, words, detail);
		free(detail);
	}
	free(words);
}

/* A refusal of s: the --on-denials'th raises an alert of kind "denials", once. */
static void react_refusal(struct session *s, const struct event *ev)
{
	struct event alert;
	char *detail;

	if (!s->rs.on_denials || s->denials_fired || s->refusals.total < s->rs.on_denials)
		return;
	s->denials_fired = true;
	detail = xasprintf("refusal %llu reached --on-denials %llu; the last: %s %s: %s",
			   (unsigned long long)s->refusals.total,
			   (unsigned long long)s->rs.on_denials, ev->layer ? ev->layer : "-",
			   ev->subject ? ev->subject : "-", ev->detail ? ev->detail : "");
	alert = event_audit_make("react", "alert", "denials", detail);
	bus_publish(s, &alert);
	react_alert(s, REACT_DENIALS, &alert);
	free(detail);
}

void react_event(struct session *s, const struct event *ev, bool refusal)
{
	int kind = react_kind_of(ev);

	if (kind >= 0 && !ev->reacted)
		react_alert(s, (enum react_kind)kind, ev);
	if (refusal)
		react_refusal(s, ev);
}

char *react_resume(struct session *s, bool log_only, char **err)
{
	char *reason, *detail, *words, *e = NULL;
	double held_s;

	if (!s->frozen) {
		set_err(err, "session %.8s is not frozen", s->id);
		return NULL;
	}
	held_s = (double)(now_real_ms() - s->frozen_ms) / 1000.0;
	reason = s->frozen_reason;
	s->frozen_reason = NULL;
	s->frozen = false;
	if (log_only)
		s->react_log_only = true;
	/* The processes first; the network after, which may raise the next alert at once. */
	if (sandbox_thaw(s->sb, &e) < 0) {
		detail = xasprintf("resuming: %s", e);
		react_record(s, "degraded", "resume", detail);
		free(detail);
		free(e);
	}
	detail = xasprintf("resumed by boxy resume after %.1f s frozen (%s)%s", held_s,
			   reason ? reason : "-", log_only ? "; from now on its alerts are logged "
			   "only (--log)" : "");
	react_record(s, "action", "resume", detail);
	bus_session_frozen(s);
	free(detail);
	if (s->net)
		broker_hold(s->net, false);
	if (s->frozen)
		words = xasprintf("session %.8s resumed, and frozen again at once: %s", s->id,
				  s->frozen_reason);
	else
		words = xasprintf("session %.8s resumed%s", s->id,
				  log_only ? "; its later alerts are logged only" : "");
	free(reason);
	return words;
}
