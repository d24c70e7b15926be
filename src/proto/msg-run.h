/*
 * spec/runspec-wire.h — a run-spec on the daemon socket. The daemon decodes what
 * a client sent and validates it again with the same validators the command
 * line uses: the socket is an input like any other.
 */
#ifndef BOXY_RUNSPEC_WIRE_H
#define BOXY_RUNSPEC_WIRE_H

#include "spec/runspec.h"
#include "proto/wire.h"

void runspec_encode(struct wbuf *w, const struct runspec *rs);
/* Decode into rs (initialised here); -1 with *err on anything malformed or invalid. */
int runspec_decode(struct rbuf *r, struct runspec *rs, char **err);

#endif
