/*
 * top.h — the one part of boxy that talks to curses: `boxy top`'s screen.
 *
 * The caller (src/cli/cmd-top.c) owns the data: it fills the model from the
 * store and the daemon and acts on what keys ask (stop, attach, ...)
 * through the callbacks below. This file draws the model's cells, reads
 * keys, mouse and resizes, and always gives the terminal back: on q, on
 * SIGTERM, SIGHUP and SIGINT, and before any fatal message.
 */
#ifndef BOXY_TOP_H
#define BOXY_TOP_H

#include <stdbool.h>

#include "ui/top-model.h"

struct top_source {
	void *ctx;
	/* Refill the lists (sessions, destinations, denials, header); every second and on demand. */
	void (*reload)(void *ctx, struct top_model *m);
	/* Fill m->detail for m->detail_id. */
	void (*open)(void *ctx, struct top_model *m);
	/* A descriptor to wait on for live updates (-1: none now), and what to do when it is readable. */
	int (*live_fd)(void *ctx);
	void (*live)(void *ctx, struct top_model *m);
	/* Act on a session; returns a one-line outcome for the message line (static or ctx-owned). */
	const char *(*act)(void *ctx, struct top_model *m, enum top_do what, const char *id);
	/* Run a command that needs the terminal (attach, watch), the screen put away meanwhile. */
	void (*leave)(void *ctx, enum top_do what, const char *id);
};

/* Run the dashboard until q or a signal; returns the exit status. color: red may be used. */
int top_run(const struct top_source *src, struct top_model *m, bool color);

#endif
