/*
 * sandbox/attrib-proc.h — the pure half of attribution (sandbox/attrib.h):
 * the text of a sandbox's /proc files turned into fields, and the rules that
 * name the package a process runs for. No I/O, no allocation: every input
 * is a buffer the caller read (whole or cut: a parser is told when it was
 * cut), every output a fixed buffer, every string copied through
 * attrib_clean (valid UTF-8, no control character, cut at a character).
 *
 * Everything parsed here was written by the payload — its argv, its
 * environment, its command name, the names of its directories and the
 * metadata files in them — except the socket tables and the numbers of
 * stat and status, which the kernel writes (but about sockets and
 * processes the payload made). Nothing here trusts any of it beyond
 * displaying it.
 */
#ifndef BOXY_SANDBOX_ATTRIB_PROC_H
#define BOXY_SANDBOX_ATTRIB_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/netaddr.h"
#include "sandbox/attrib.h"

/*
 * Copy at most len bytes of src into dst (size n > 0) as text fit for a
 * screen: each invalid UTF-8 byte and each control character (common/util.h's
 * unicode_is_control) becomes '?', and the copy is cut at a character
 * boundary to fit. Returns the bytes written (without the NUL).
 */
size_t attrib_clean(char *dst, size_t n, const char *src, size_t len);

/* ---- the socket tables: /proc/PID/net/{tcp,udp}{,6} -------------------------- */

struct attrib_sock {
	struct net_addr local, remote;
	uint16_t lport, rport;
	uint8_t state;          /* TCP's state number (1 established, 2 syn-sent, 10 listen, …) */
	uint64_t inode;         /* 0: no socket behind the row (TIME_WAIT, say) */
};

/*
 * One row of a table ("  4: 0F02000A:A3C4 22D8B85D:0050 02 …"), with or
 * without its newline; family is AF_INET for tcp and udp, AF_INET6 for
 * tcp6 and udp6 (whose IPv4-mapped rows become AF_INET addresses). false for
 * the header line or anything malformed.
 */
bool attrib_sock_parse(const char *line, size_t len, int family, struct attrib_sock *out);

/*
 * How well a row matches a flow the sandbox sent (its local and remote
 * address and port): 0 not at all, 1 as a wildcard (a UDP socket bound to
 * any address, or not connected), 2 exactly. A row without a socket
 * (inode 0) or a listening TCP socket never matches.
 */
int attrib_sock_match(const struct attrib_sock *s, uint8_t proto, const struct net_addr *local,
		      uint16_t lport, const struct net_addr *remote, uint16_t rport);

/*
 * The same question asked of the kernel (sock_diag, NETLINK_SOCK_DIAG): one
 * request naming the flow's socket exactly, which the kernel answers with a
 * hash look-up — where a table of /proc walks every bucket of the host's
 * whole connection hash (milliseconds each on a large machine). The request
 * is written to buf (ATTRIB_DIAG_REQ bytes); family AF_INET6 asks for a v4
 * flow by its IPv4-mapped addresses. UDP's look-up takes the remote side as
 * its source (the kernel's "historical reasons"): done here.
 */
#define ATTRIB_DIAG_REQ 72
size_t attrib_diag_request(void *buf, uint32_t seq, uint8_t proto, int family,
			   const struct net_addr *local, uint16_t lport,
			   const struct net_addr *remote, uint16_t rport);
/*
 * The reply to request seq: 1 with *inode (0: a socket with no file, an
 * embryo), 0 when the kernel has no such socket, -1 for anything else
 * (another error, another message, a truncated one).
 */
int attrib_diag_parse(const void *buf, size_t len, uint32_t seq, uint64_t *inode);

/* attrib.c's, for tests: false makes look-ups read the socket tables alone;
 * how many look-ups sock_diag answered, process-wide. */
extern volatile bool attrib_diag_enabled;
extern volatile unsigned long attrib_diag_answered;

/* "socket:[12345]" (a /proc/PID/fd link) → 12345; 0 for anything else. */
uint64_t attrib_socket_link(const char *link, size_t len);

/* ---- a process: stat, status, cmdline, environ -------------------------------- */

struct attrib_stat {
	char comm[ATTRIB_COMM_MAX];
	char state;             /* 'R', 'S', 'Z', … */
	pid_t ppid;             /* in the reader's pid namespace */
	uint64_t start;         /* clock ticks after boot */
	uint64_t env_start, env_end;    /* where its environment is (0 when the reader may not see) */
};

/* /proc/PID/stat: "pid (comm) state ppid …"; comm may hold ')' and spaces. The
 * environment's addresses (fields 51 and 52) are read when the line has them. */
bool attrib_stat_parse(const char *buf, size_t len, struct attrib_stat *out);

/*
 * /proc/PID/status's NSpid line: the pid in the innermost namespace (the
 * last field), and how many namespaces the line lists in *levels. 0 if none.
 */
pid_t attrib_status_nspid(const char *buf, size_t len, int *levels);

#define ATTRIB_ARGS_KEPT 3      /* argv[0..2], as the manager rules need them */
#define ATTRIB_ARG_MAX   256

struct attrib_argv {
	char argv0[ATTRIB_ARGV0_MAX];
	char cmdline[ATTRIB_CMDLINE_MAX];
	char arg[ATTRIB_ARGS_KEPT][ATTRIB_ARG_MAX];     /* the first arguments, cleaned */
	int nargs;                                      /* how many of them there are */
};

/* /proc/PID/cmdline (arguments separated by NULs, or one rewritten title). */
void attrib_cmdline_parse(const char *buf, size_t len, struct attrib_argv *out);

/* What a package manager put in a lifecycle script's environment. */
struct attrib_env {
	bool has;                               /* npm_package_name or npm_lifecycle_event set */
	char package[ATTRIB_PACKAGE_MAX];
	char version[ATTRIB_VERSION_MAX];
	char script[ATTRIB_SCRIPT_MAX];
};

/*
 * /proc/PID/environ ("NAME=value" separated by NULs): npm_package_name,
 * npm_package_version and npm_lifecycle_event, each the first of its name
 * (as getenv sees it). truncated: the read was cut, so a last entry without
 * its NUL is incomplete and ignored.
 */
void attrib_environ_parse(const char *buf, size_t len, bool truncated, struct attrib_env *out);

/*
 * What package manager a process is, by its comm and argv: npm (npm,
 * npm-cli.js, npx), yarn (yarn, yarn.js, yarn.cjs, .yarn/releases/yarn-*.cjs),
 * pnpm (pnpm, pnpm.cjs, pnpx), pip (pip, pip3, pip3.11, `python -m pip`).
 * The payload chooses its argv: this is one half of a rule (attrib_decide).
 */
enum attrib_manager attrib_manager_of(const char *comm, const struct attrib_argv *argv);

/* The manager's name ("npm", "yarn", "pnpm", "pip"), or NULL for none. */
const char *attrib_manager_name(enum attrib_manager m);

/* ---- pip's build directories --------------------------------------------------- */

enum attrib_pipdir {
	ATTRIB_PIPDIR_NONE = 0,
	ATTRIB_PIPDIR_NAMED,    /* …/pip-install-XXXX/NAME_<32 hex>/…: pip named it */
	ATTRIB_PIPDIR_UNNAMED,  /* …/pip-req-build-XXXX/…: a path or URL; the metadata names it */
};

/*
 * Is cwd (a /proc/PID/cwd link: the path in the sandbox) inside a build
 * directory of pip's? For a named one, the name (as pip canonicalized it)
 * goes to name (size n).
 */
enum attrib_pipdir attrib_pip_dir(const char *cwd, char *name, size_t n);

/* Name and Version of a PKG-INFO (core metadata, RFC 822 headers). false when it has no Name. */
bool attrib_pkginfo_parse(const char *buf, size_t len, char *name, size_t nn, char *version,
			  size_t vn);
/* name and version of pyproject.toml's [project] table. false when it has no name. */
bool attrib_pyproject_parse(const char *buf, size_t len, char *name, size_t nn, char *version,
			    size_t vn);
/* Are two Python package names the same once canonicalized (case, runs of -_.)? */
bool attrib_pip_same_name(const char *a, const char *b);

/* ---- the rules ----------------------------------------------------------------- */

/* One process on the chain from a socket's owner up towards boxy-init. */
struct attrib_link {
	enum attrib_manager manager;    /* what it is, by argv (attrib_manager_of) */
	struct attrib_env env;          /* what its environment says */
	enum attrib_pipdir pipdir;      /* where it runs */
	char pip_name[ATTRIB_PACKAGE_MAX];      /* the build directory's package, when known */
	char pip_version[ATTRIB_VERSION_MAX];
	bool root;                      /* the session's own command (boxy-init's first child) */
};

/*
 * The package chain[0] (the owner) runs for; chain[i+1] is chain[i]'s
 * parent, and the chain ends below boxy-init (or where it could not be
 * read further). Sets out's manager, package, version, script, via and
 * claimed; the process fields are the caller's.
 *
 * A *frame* is a process whose package manager put the package there: one
 * with npm's variables whose parent is npm, yarn or pnpm, or one running in a
 * pip build directory whose parent is pip. A frame is attested when the
 * chain leads from it to the session's own command (root). The innermost
 * attested frame names the package; an outer attested frame of another
 * package is its "via" (a package's script that ran a package manager
 * itself). With no attested frame, the nearest process that has npm's
 * variables or runs in a pip build directory names it as a claim.
 */
void attrib_decide(const struct attrib_link *chain, size_t n, struct attrib_proc *out);

#endif
