/*
 * ui/ps.h — `boxy ps`: the sessions on record as a table (or a JSON array),
 * and a stored argv as one readable command line (ps, show and top print it).
 */
#ifndef BOXY_PS_H
#define BOXY_PS_H

#include <stdbool.h>
#include <stdio.h>

#include "store/store.h"

/* The sessions of ss: a table with a header (nothing when none), or a JSON array. */
void ps_print(FILE *out, const struct store_sessions *ss, bool json);

/* A stored argv (JSON array) as one sanitized command line; malloc'd. */
char *ps_argv_line(const char *argv_json);

#endif
