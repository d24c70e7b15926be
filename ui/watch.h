/*
 * watch.h — the model and rendering of `boxy watch`: a session's header,
 * its destinations table and its recent events, from the daemon's pushed
 * stream. The model is plain data, tested without a terminal; rendering
 * writes text (ANSI colour only when asked).
 *
 * Every string that reaches the screen passes through watch_sanitize():
 * names come from DNS answers and ClientHellos a hostile payload wrote,
 * and a name carrying an escape sequence must not drive the terminal.
 */
#ifndef BOXY_WATCH_H
#define BOXY_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/event.h"
#include "proto/refusals.h"
#include "proto/wire.h"

#define WATCH_RECENT 200
#define WATCH_ALERTS 8          /* alerts kept on top of the screen, the first ones */

struct watch_dest {
	char *name;
	uint64_t conns, denied, addrs, sent, received;
};

struct watch_line {
	char *text;
	bool deny;
	bool alert;             /* a finding to act on (a tripwire, a planted repository): red */
};

struct watch_model {
	char *id;
	char *state;
	char *cmdline;
	uint64_t elapsed_ms;
	uint64_t conns, denied, up, down;
	double up_rate, down_rate;          /* bytes/s between the last two snapshots */
	uint64_t prev_up, prev_down, prev_ms;
	struct watch_dest *dests;
	size_t ndests;
	struct watch_line recent[WATCH_RECENT];
	size_t nrecent, recent_next;
	uint64_t lost;
	struct refusals refusals;           /* what was refused, grouped */
	struct watch_line alerts[WATCH_ALERTS];     /* pinned above the destinations, red */
	size_t nalerts;
	uint64_t more_alerts;               /* alerts past WATCH_ALERTS, counted */
};

void watch_model_init(struct watch_model *m);
void watch_model_free(struct watch_model *m);
/* Apply a MSG_SNAPSHOT payload; -1 if malformed. */
int watch_model_snapshot(struct watch_model *m, const void *payload, size_t len);
/*
 * Decode a MSG_EVENT payload into out (out->ev, whose strings and who out
 * owns: event_copy_free); -1 if malformed (nothing to free).
 */
int watch_event_decode(const void *payload, size_t len, struct event_copy *out);
/* Add an event to the recent list. */
void watch_model_event(struct watch_model *m, const struct event *ev);

/* One line for an event, as in RECENT and in piped output. malloc'd, sanitized. */
char *watch_format_event(const struct event *ev);
/* Replace control characters and invalid UTF-8 with '?'; malloc'd. NULL → "". */
char *watch_sanitize(const char *s);
/* True when the event is a refusal (painted red). */
bool watch_event_is_deny(const struct event *ev);
/* True when the event is a finding to act on (verdict "alert"; red, and kept on top). */
bool watch_event_is_alert(const struct event *ev);

/* The whole screen, fitted to rows × cols. */
void watch_render(const struct watch_model *m, FILE *out, int rows, int cols, bool color);

/* "3 destinations  12 connections  2 denied" in the reader's language (malloc'd). */
char *watch_totals_line(size_t dests, uint64_t conns, uint64_t denied);
/* The live screen's frame: the alternate screen without a cursor, and back. */
void watch_screen_begin(FILE *out);
void watch_screen_end(FILE *out);

#endif
