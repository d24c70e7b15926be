/*
 * proto/refusals.h — what a session was refused, grouped for people.
 *
 * A run that was refused something ends with a short summary grouped by
 * what was refused (a name, or a destination address and port), the layer
 * that decided and its reason, with a count and — where one exists — the
 * flag that would have allowed it. The daemon keeps the table as events
 * pass (bounded: past REFUSALS_GROUPS_MAX groups only a count grows) and
 * sends it with every snapshot; `boxy run` prints it at the end, watch can
 * show it. Pure: no I/O, no clock.
 *
 * A payload chooses what it is refused, so it can fill the table with
 * decoys (a hundred names it knows are refused) before the attempt that
 * matters: past the cap, a refusal of a kind no group holds yet (its layer
 * and its reason's words, see event_reason_kind_len) still gets a group, up to
 * REFUSALS_KINDS_MAX more, and the summary shows every kind before it
 * shows a kind twice.
 *
 * One refused connection is one refusal: the broker emits an audit event
 * and a tcp/udp event for the same flow, and only the flow's event counts.
 */
#ifndef BOXY_REFUSALS_H
#define BOXY_REFUSALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/event.h"
#include "proto/wire.h"

#define REFUSALS_GROUPS_MAX 64
#define REFUSALS_KINDS_MAX  64  /* groups past the cap, one per kind not yet held: boxy's
                                 * reasons make fewer kinds than this (about 45) */

struct refusal_group {
	char *subject;      /* "other.example.test", "169.254.169.254:80" */
	char *layer;        /* "net.dns", "net.ip", "seccomp", … */
	char *reason;
	uint64_t count;
	char *who;          /* who made the first of them (event_who_words), or NULL */
	char *who_key;      /* its package (or command), to tell when others differ */
	bool who_more;      /* some of them were made by another package or command */
};

struct refusals {
	struct refusal_group *v;
	size_t n;
	uint64_t total;     /* every refusal counted, grouped or not */
	uint64_t other;     /* refusals that found the table full */
};

void refusals_init(struct refusals *t);


/* Are two groups' refusals of one kind (same layer, same reason words)? */
bool refusal_same_kind(const struct refusal_group *a, const struct refusal_group *b);
void refusals_free(struct refusals *t);

/* Count ev if it is a refusal (see above); returns whether it was one. */
bool refusals_add_event(struct refusals *t, const struct event *ev);

/* The table on the wire (a section of MSG_SNAPSHOT), and back; decode: -1 if malformed. */
void refusals_encode(struct wbuf *w, const struct refusals *t);
int refusals_decode(struct rbuf *r, struct refusals *t);

/*
 * The flag that would have allowed a group's refusals ("--allow-host
 * x.example.net", "--allow-cidr 203.0.113.80/32", "--net public"), or NULL
 * where there is none to suggest (a private address dialled directly, the
 * cloud metadata address: allowing those is never the fix). malloc'd.
 */
char *refusal_fix(const struct refusal_group *g);

/*
 * Groups without a fix that share a layer and a reason (a thousand distinct
 * addresses, each refused for the same reason) become one row, "first (+N
 * others)"; groups with a fix stay apart, each naming its own flag.
 */
void refusals_merge_unfixable(struct refusals *t);

#endif
