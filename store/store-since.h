/*
 * store/store-since.h — what one session did that another did not: the
 * destinations and ports it reached, the refusals it met and the findings
 * it raised that the other has no row for. `boxy run` compares a session
 * with its baseline (the store picks it when the session begins: the last
 * completed run of the same command in the same directory, one with the
 * same lockfiles first); `boxy diff A B` compares any two.
 */
#ifndef BOXY_STORE_SINCE_H
#define BOXY_STORE_SINCE_H

#include "store/store.h"

/*
 * Each item of session id that session base lacks → row: kind
 * ("destination", "package", "refusal", "finding"), subject ("tcp
 * x.example:443", a package in words — "postinstall of y@2.0.1" —, a refused
 * name or flow, a git path), detail ("new destination" or "new port", then
 * the package of its first connection, ", postinstall of y@2.0.1", when one
 * is known; "new package with network: DESTINATIONS"; "LAYER: reason"),
 * count — destinations first, the busiest first, then packages.
 * Both are full ids.
 */
int store_since_query(struct store *st, const char *id, const char *base,
		      void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx,
		      char **err);

#endif
