/*
 * spec/values.h — validators for every value a user can write, on the command
 * line or in a profile. Pure functions: no I/O, no globals.
 * Each returns 0 on success, or -1 with a one-line reason in *err
 * ("size must be a number followed by B, K, KiB, M, MiB, G or GiB").
 */
#ifndef BOXY_PARSE_H
#define BOXY_PARSE_H

#include <stdbool.h>
#include <stdint.h>
#include "spec/runspec.h"

/* "2GiB", "512M", "1048576", "1.5G" → bytes. Units B K KB KiB M MB MiB G GB GiB T TB TiB,
 * any case, all binary (K = KiB). Zero, negatives, blanks, overflow refused. */
int parse_size(const char *s, uint64_t *out, char **err);
/* "10m", "90s", "1h30m", "250ms", "2" (seconds) → milliseconds. Units ms s m h d, largest
 * first, each once. Zero, negatives, overflow refused. */
int parse_duration(const char *s, uint64_t *out_ms, char **err);
#define VALUE_COUNT_MAX      (1ULL << 31)
#define VALUE_CPUS_MAX_MILLI (1024U * 1000U)

/* "512" → count, 1..2^31. */
int parse_count(const char *s, uint64_t *out, char **err);
/* "2", "0.5", "1.25" → millicpus, 1..(1024*1000). */
int parse_cpus(const char *s, uint32_t *out_milli, char **err);
/* "443" → 1..65535. */
int parse_port(const char *s, uint16_t *out, char **err);
/* "public" | "allowlist" | "none". */
int parse_net_mode(const char *s, enum net_mode *out, char **err);
/* "strict" | "compat". */
int parse_seccomp_mode(const char *s, enum seccomp_mode *out, char **err);
/* "on" | "off". */
int parse_onoff(const char *s, enum onoff *out, char **err);
/* --fail-on's words: what fails the CI gate (doc/ci.md). */
#define FAIL_ON_DENY  1u        /* a refusal */
#define FAIL_ON_NEW   2u        /* a destination or port the last run did not reach */
#define FAIL_ON_ALERT 4u        /* a finding (verdict "alert"), tripwires included */
#define FAIL_ON_TRIPWIRE 8u     /* a tripwire: a decoy credential opened or sent out */
/* "deny,new-destination,tripwire,alert" (any of them, once each) → bits. */
int parse_fail_on(const char *s, unsigned *out, char **err);
/* The bits back as the canonical comma list (deny, new-destination, tripwire, alert). malloc'd. */
char *fail_on_text(unsigned bits);
/*
 * --on-alert: what the daemon does when a session raises an alert
 * (doc/react.md). A comma list of ACTION (every kind) or KIND=ACTION, applied
 * left to right; ACTION is log, freeze or stop; KIND one of react_kind's
 * names. An unset kind takes "alert"'s action, and an unset "alert" logs.
 */
enum react_action { REACT_UNSET, REACT_LOG, REACT_FREEZE, REACT_STOP };
enum react_kind {
	REACT_ALERT,            /* "alert": any alert of a kind not named below */
	REACT_TRIPWIRE,         /* "tripwire": a decoy was touched or a decoy token left */
	REACT_DNS,              /* "dns": the DNS tunnel alert (layer net.dns) */
	REACT_GIT,              /* "git": a git-protection alert */
	REACT_DENIALS,          /* "denials": the --on-denials'th refusal */
	REACT_NKINDS,
};
struct react_policy {
	uint8_t act[REACT_NKINDS];      /* enum react_action per kind */
};
/* Apply text's items over *p (what was set before stays unless named). */
int parse_on_alert(const char *s, struct react_policy *p, char **err);
/* The canonical text of p, which parses back to p ("log,tripwire=freeze"); NULL if nothing is set. */
char *on_alert_text(const struct react_policy *p);
/* What kind k gets: its own action, else alert's, else log. */
enum react_action react_policy_action(const struct react_policy *p, enum react_kind k);
/* Does some kind of alert freeze under text (a canonical --on-alert, or NULL)? */
bool on_alert_may_freeze(const char *text);
/* "log", "freeze", "stop"; "alert", "tripwire", … */
const char *react_action_name(enum react_action a);
const char *react_kind_name(enum react_kind k);
/* HOST[:PORT[,PORT...]]; HOST is a DNS name (RFC 1123 labels, at most 253 characters,
 * optional leading "*." wildcard), lower-cased, trailing dot removed. IP literals are
 * refused (they belong to --allow-cidr); ports 1..65535, no duplicates, no empty entries.
 * Fills *out (caller frees fields). */
int parse_host_spec(const char *s, struct host_spec *out, char **err);
/* "10.0.0.0/8", "fd00::/8", "192.168.1.7" (= /32). Host bits must be zero; /0 refused.
 * text keeps the input verbatim (caller frees with cidr_free). */
int parse_cidr(const char *s, struct cidr *out, char **err);
/* "NAME" or "NAME=VALUE"; NAME is [A-Za-z_][A-Za-z0-9_]*. */
int parse_env_spec(const char *s, struct env_spec *out, char **err);
/* "SRC" or "SRC:DST" for --copy/--copy-ro (split at the first ':'); DST must be absolute.
 * kind must be MOUNT_COPY or MOUNT_COPY_RO. */
int parse_copy_spec(const char *s, enum mount_kind kind, struct mount_spec *out, char **err);

/*
 * The same rules for values already in their typed form (the daemon's
 * decoder of MSG_RUN: proto/msg-run.c): 0, or -1 with a short reason.
 * check_host_spec: a name as parse_host_spec leaves it (lower-case, no
 * trailing dot, labels, not an address) and ports 1..65535 once each.
 * check_cidr: family, prefix 1..bits, host bits zero, and a text made of
 * address characters only (it is shown and logged).
 */
int check_host_spec(const struct host_spec *h, char **err);
int check_cidr(const struct cidr *c, char **err);
int check_env_name(const char *name, char **err);

#endif
