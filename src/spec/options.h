/*
 * spec/options.h — the one table of a run-spec's options.
 *
 * Every field of struct runspec that a user can set is one row here: its
 * long flag (and short one), its profile key, its key in the JSON object,
 * its kind (which names its validator in spec/values.h and its shape on the
 * wire), and where it lives in struct runspec (offsetof). The command line
 * (cli/cmd-run.c builds its getopt table from it), the profile reader
 * (spec/profile-yaml.c), the MSG_RUN codec (proto/msg-run.c), the JSON
 * description (runspec_to_json) and the shell completions all walk this
 * table; none of them names a field of its own. Adding a flag is one row
 * plus its field (doc/internals-spec.md).
 */
#ifndef BOXY_SPEC_OPTIONS_H
#define BOXY_SPEC_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "spec/runspec.h"

/* What a row holds; each kind has one validator and one wire form. */
enum spec_kind {
	SPEC_ARGV,      /* char **: the command (not an option; on the wire and in JSON) */
	SPEC_SWITCH,    /* bool: a flag without a value; true/false in a profile */
	SPEC_NAME,      /* char *: a non-empty name or path kept as given (--profile) */
	SPEC_DIR,       /* char *: a directory, made absolute by runspec_finish */
	SPEC_FILE,      /* char *: an output file, made absolute by runspec_finish */
	SPEC_AUDIT_LOG, /* char *: an output file as SPEC_FILE, or "journal" (the systemd journal) */
	SPEC_JOURNAL,   /* char *: the word "journal" alone (a profile names no file to write) */
	SPEC_SIZE,      /* uint64_t bytes: parse_size */
	SPEC_DURATION,  /* uint64_t ms: parse_duration */
	SPEC_COUNT,     /* uint64_t: parse_count */
	SPEC_CPUS,      /* uint32_t millicpus: parse_cpus */
	SPEC_NET_MODE,  /* enum net_mode: parse_net_mode */
	SPEC_SECCOMP,   /* enum seccomp_mode: parse_seccomp_mode */
	SPEC_ONOFF,     /* enum onoff: parse_onoff */
	SPEC_MOUNT,     /* list of struct mount_spec of kind .mount, a path each */
	SPEC_COPY,      /* list of struct mount_spec of kind .mount: parse_copy_spec */
	SPEC_HOST,      /* list of struct host_spec: parse_host_spec */
	SPEC_PORT,      /* list of uint16_t: parse_port */
	SPEC_CIDR,      /* list of struct cidr: parse_cidr */
	SPEC_ENV,       /* list of struct env_spec: parse_env_spec (a profile: names only) */
	SPEC_ENV_SET,   /* the same list, from a profile's NAME: value mapping */
	SPEC_FAIL_ON,   /* char *: parse_fail_on's words, kept as fail_on_text gives them */
	SPEC_HTTP_RULE, /* list of char *: an HTTP rule as written, read by http_rule_parse */
	SPEC_ON_ALERT,  /* char *: parse_on_alert's items, kept as on_alert_text gives them */
};

struct spec_option {
	const char *flag;       /* long flag without "--"; NULL: not on the command line */
	char short_flag;        /* 'e' for -e; 0: none */
	const char *key;        /* profile key, "SECTION.KEY" or "KEY"; NULL: not in profiles */
	const char *json;       /* key in runspec_to_json, "GROUP.KEY" or "KEY" */
	enum spec_kind kind;
	enum mount_kind mount;  /* SPEC_MOUNT, SPEC_COPY: the kind of entry added */
	size_t field;           /* offsetof(struct runspec, the field) */
	size_t count;           /* lists: offsetof(struct runspec, its count) */
	const char *complete;   /* a shell completes the value to: "file", "dir", "profile",
				 * a list of words, or NULL */
};

extern const struct spec_option spec_options[];
extern const size_t spec_noptions;

/* True for the kinds that append to a list (repeatable flags, profile lists). */
bool spec_kind_is_list(enum spec_kind k);
/* True when o takes no value (a switch). */
bool spec_option_is_switch(const struct spec_option *o);
/*
 * True when o is the first row naming its field: rows that share a field
 * (the six mount kinds, -e and env.set) are one field on the wire and in JSON.
 */
bool spec_option_owns_field(const struct spec_option *o);

/* The row of a long flag, a short flag, or a profile key; NULL when none. */
const struct spec_option *spec_option_by_flag(const char *flag);
const struct spec_option *spec_option_by_short(char c);
const struct spec_option *spec_option_by_key(const char *key);

/*
 * getopt_long's table of the rows with a flag into out[0..max) (a row's
 * value: its short flag, or SPEC_GETOPT_ROW + its index), terminator
 * included; returns the number of options written. max must exceed the rows.
 */
#define SPEC_GETOPT_ROW 256
size_t spec_options_getopt(struct option *out, size_t max);
/* getopt's short options of the rows ("p:w:e:vd") into out[0..max), NUL-terminated. */
void spec_options_shortopts(char *out, size_t max);
/* The row a value of that table stands for; NULL when none. */
const struct spec_option *spec_option_by_getopt(int val);

/*
 * Validate text with the row's validator and store it in rs: a scalar is
 * set, a list entry appended, a switch set true (text ignored). Returns 0,
 * or -1 with a one-line reason in *err (the caller names the flag or key).
 */
int spec_option_apply(const struct spec_option *o, struct runspec *rs, const char *text,
		      char **err);

/* The field of o in rs (cast by kind), and for lists the address of its count. */
void *spec_option_field(const struct spec_option *o, const struct runspec *rs);
size_t *spec_option_count(const struct spec_option *o, const struct runspec *rs);

#endif
