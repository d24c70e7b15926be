/*
 * common/event.c — emitting events into whatever sink the caller plugged in.
 */
#include <config.h>

#include <stddef.h>
#include <string.h>

#include "common/event.h"
#include "common/util.h"

void event_emit(const struct event_sink *sink, struct event *ev)
{
	if (!sink || !sink->emit)
		return;
	if (ev->t_ms == 0)
		ev->t_ms = now_real_ms();
	sink->emit(sink->ctx, ev);
}

struct event event_audit_make(const char *layer, const char *verdict, const char *subject,
			      const char *detail)
{
	struct event ev = {
		.kind = "audit",
		.verdict = verdict,
		.layer = layer,
		.subject = subject,
		.detail = detail,
	};

	return ev;
}

void event_audit(const struct event_sink *sink, const char *layer, const char *verdict,
		 const char *subject, const char *detail)
{
	struct event ev = event_audit_make(layer, verdict, subject, detail);

	event_emit(sink, &ev);
}

size_t event_reason_kind_len(const char *reason)
{
	return strcspn(reason, "0123456789");
}
