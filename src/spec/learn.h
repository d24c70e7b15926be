/*
 * spec/learn.h — a profile learned from what sessions did on the network.
 *
 * `boxy profile learn ID...` reads the store's record of one or more
 * sessions (store/store-learn.h) and feeds it here, row by row; this module
 * keeps what a profile can say — the names each session reached and on
 * which ports, the names it resolved, the address exceptions it was given —
 * and writes a YAML profile that allows exactly that in allowlist mode,
 * with a comment on every entry naming the session that needed it and who
 * in it (the package whose script connected, else the command).
 *
 * Everything fed here was chosen by a payload (its DNS names, its argv):
 * a name becomes a host entry only when the profile's own validator
 * (parse_host_spec) accepts it unchanged, and every comment is sanitized to
 * one line of printable text, so a recorded string can neither break the
 * YAML nor smuggle a key into it. What cannot be learned (a connection by
 * address alone, a refusal) is listed as a comment, never granted.
 * Pure: no I/O.
 */
#ifndef BOXY_SPEC_LEARN_H
#define BOXY_SPEC_LEARN_H

#include <stdbool.h>
#include <stdint.h>

struct learn;

struct learn *learn_new(void);
void learn_free(struct learn *l);

/* A session the profile is learned from: full id, its command line (one line,
 * any bytes), the profile it ran with (NULL: none) and its network mode. */
void learn_add_session(struct learn *l, const char *id, const char *command,
		       const char *profile, const char *mode);
/* A connection row: who made it ("postinstall of y@2.0.1", a command; NULL:
 * not known), host (the name its address was resolved from) and sni (the
 * name on the wire) may be NULL; count is how many connections the row stands for. */
void learn_add_conn(struct learn *l, const char *session, const char *who, const char *proto,
		    const char *host, const char *sni, const char *addr, unsigned port,
		    bool allowed, const char *reason, int64_t count);
/* A resolution row: who asked, the name asked, whether it was answered, and why not. */
void learn_add_name(struct learn *l, const char *session, const char *who, const char *name,
		    bool allowed, const char *reason, int64_t count);
/* An address exception the session was given (--allow-cidr), and --tailscale. */
void learn_add_cidr(struct learn *l, const char *session, const char *cidr);
void learn_add_tailscale(struct learn *l, const char *session);

/* The profile as YAML text (malloc'd). extends: NULL → the sessions' common
 * profile when they share one that is a NAME, else "generic". */
char *learn_yaml(const struct learn *l, const char *extends);

/* How many host entries the profile grants (for the caller's summary line). */
size_t learn_hosts(const struct learn *l);

#endif
