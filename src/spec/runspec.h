/*
 * spec/runspec.h — everything a user asked of one run, validated.
 *
 * A run-spec is what `boxy run` builds from a profile and then the flags on
 * top of it (lists append, scalars override). It says nothing yet about
 * how the sandbox is built: sandbox/assemble.c turns it into a plan (proto/plan.h).
 * Later the daemon receives a run-spec from the client; that is why it is
 * plain data with an encoder (runspec_to_json) and no pointers into other
 * structures.
 */
#ifndef BOXY_RUNSPEC_H
#define BOXY_RUNSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum net_mode {
	NET_UNSET = 0,
	NET_PUBLIC,
	NET_ALLOWLIST,
	NET_NONE,
};

enum seccomp_mode {
	SECCOMP_UNSET = 0,
	SECCOMP_STRICT,
	SECCOMP_COMPAT,
};

/* A choice that is on, off, or left to the profile (--tripwires). */
enum onoff {
	ONOFF_UNSET = 0,
	ONOFF_ON,
	ONOFF_OFF,
};

enum mount_kind {
	MOUNT_RO,       /* --ro PATH: bind read-only */
	MOUNT_RW,       /* --rw PATH: bind read-write */
	MOUNT_PROTECT,  /* --protect PATH: force read-only inside a rw mount */
	MOUNT_MKDIR,    /* profile mkdir: create on host if missing, bind rw */
	MOUNT_COPY,     /* --copy SRC[:DST]: copy one file in, writable */
	MOUNT_COPY_RO,  /* --copy-ro SRC[:DST]: copy one file in, read-only */
};

struct mount_spec {
	enum mount_kind kind;
	char *src;      /* as given, after ~ / {workdir} expansion */
	char *dst;      /* NULL: same as src (only copies take a DST) */
};

/* --allow-host HOST[:PORT[,PORT]] */
struct host_spec {
	char *name;         /* lower-case, no trailing dot */
	uint16_t *ports;    /* empty: any port in the run's port list */
	size_t nports;
};

/* --allow-cidr */
struct cidr {
	int family;         /* AF_INET or AF_INET6 */
	uint8_t addr[16];   /* network address, host bits zero */
	uint8_t prefix;
	char *text;         /* as the user wrote it, for the audit log verbatim */
};

/* -e NAME or -e NAME=VAL */
struct env_spec {
	char *name;
	char *value;        /* NULL: pass the caller's value, if any */
};

struct runspec {
	char *profile;              /* preset name or path it came from; may be NULL */
	char **argv;                /* the command, NULL-terminated */
	char *workdir;              /* -w; NULL until defaulted to the caller's cwd */

	enum net_mode net;
	struct host_spec *hosts;
	size_t nhosts;
	uint16_t *ports;            /* --allow-port */
	size_t nports;
	struct cidr *cidrs;
	size_t ncidrs;
	bool tailscale;
	char **http_rules;          /* --allow-http, as written (spec/http-rule.h); each rule's
				     * domain is also a host (runspec_finish adds it) */
	size_t nhttp_rules;

	struct mount_spec *mounts;
	size_t nmounts;
	bool allow_git_write;

	struct env_spec *env;
	size_t nenv;

	uint64_t memory;            /* bytes; 0 unset */
	uint64_t pids;              /* 0 unset */
	uint32_t cpus_milli;        /* 1000 = one CPU; 0 unset */
	uint64_t timeout_ms;        /* 0 unset */

	char *audit_log;            /* paths, opened by the client */
	char *net_log;
	char *pcap;
	uint64_t pcap_max;          /* bytes; 0 unset (default 1GiB) */
	char *fail_on;              /* --fail-on: the canonical word list (doc/ci.md); NULL unset */
	char *report;               /* --report: the JUnit file (and FILE.json), opened by the client */
	char *on_alert;             /* --on-alert: parse_on_alert's canonical text (doc/react.md);
				     * NULL unset (every alert is logged) */
	uint64_t on_denials;        /* --on-denials: the refusal that counts as an alert; 0 unset */

	enum seccomp_mode seccomp;
	enum onoff tripwires;       /* decoy credentials in $HOME and their detectors (doc/tripwires.md) */
	bool tty;
	bool verbose;
	bool detach;
	bool raw_terminal;          /* --raw-terminal: no filter on the relayed terminal output */
	bool no_attribution;        /* --no-attribution: no process or package found for events */
};

/* Defaults applied by runspec_finish() when nothing set a value. */
#define RUNSPEC_DEFAULT_PCAP_MAX   (1ULL << 30)
#define RUNSPEC_DEFAULT_TMPFS      (512ULL << 20)   /* /tmp and $HOME when --memory unset */
/* Processes when --pids is unset: a fork bomb stops here instead of at the
 * user's own limit on the host, where it would starve the user's session. */
#define RUNSPEC_DEFAULT_PIDS       4096

/* Each frees what its entry owns and zeroes it. */
void host_spec_free(struct host_spec *h);
void cidr_free(struct cidr *c);
void env_spec_free(struct env_spec *e);
void mount_spec_free(struct mount_spec *m);

struct path_roots;
/* Add workdir and every --rw / mkdir source of mounts[0..n) to r, both ways (common/path-guard.h). */
void mounts_add_writable_roots(struct path_roots *r, const char *workdir,
			       const struct mount_spec *mounts, size_t n);

void runspec_init(struct runspec *rs);
void runspec_free(struct runspec *rs);

/*
 * Merge src over dst (deep copies; src is untouched): scalars set in src
 * replace dst's, lists append, booleans set in src are set. One exception:
 * a network mode set in src drops dst's entries it makes meaningless
 * (NET_NONE: hosts, HTTP rules, ports, cidrs, tailscale; NET_PUBLIC: hosts
 * and HTTP rules), so that
 * `--profile node --net none` is node offline rather than a contradiction.
 * And hosts (or HTTP rules) added in src without a mode turn dst's NET_PUBLIC into
 * NET_ALLOWLIST (`--allow-host` implies allowlist over a public profile);
 * over NET_NONE they stay, and runspec_finish refuses the contradiction.
 * --on-alert combines: src's items apply after dst's (spec/values.h).
 */
void runspec_merge(struct runspec *dst, const struct runspec *src);

/*
 * Fill defaults (workdir = cwd, net = allowlist when hosts or HTTP rules were
 * named else public, seccomp strict, tripwires off, pcap_max when --pcap), add
 * each HTTP rule's domain as a host when no entry names it yet
 * (doc/http-rules.md: without ports of its own, so 80, 443 and --allow-port),
 * make workdir, mount sources and log paths absolute against cwd, and refuse
 * contradictions: a missing command; --allow-host or --allow-http with --net
 * none or public; --pcap, --allow-port,
 * --allow-cidr or --tailscale with --net none; --pcap-max without --pcap.
 * Returns -1 with a one-line reason in *err. doc/flags.md lists them.
 */
int runspec_finish(struct runspec *rs, const char *cwd, char **err);

/*
 * JSON object describing the effective policy (for the store, show, audit),
 * written by walking the option table: defined in spec/options.c. malloc'd.
 */
char *runspec_to_json(const struct runspec *rs);

const char *net_mode_name(enum net_mode m);
const char *seccomp_mode_name(enum seccomp_mode m);
const char *onoff_name(enum onoff v);
const char *mount_kind_name(enum mount_kind k);

#endif
