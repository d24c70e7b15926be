/*
 * init/plan.h — a run-spec resolved against the caller: absolute paths, the final
 * environment, the user's identity. The parent (the daemon, or `boxy run
 * --no-daemon`) builds it and sends it to boxy-init, the sandbox's stage 2, over a pipe;
 * boxy-init trusts nothing in it it has not decoded and bounds-checked.
 */
#ifndef BOXY_PLAN_H
#define BOXY_PLAN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec/runspec.h"

#define PLAN_MAX_BYTES   (8u << 20)    /* an encoded plan never exceeds this */

/*
 * What the sandbox's owner tells boxy-init while it freezes the sandbox with
 * SIGSTOP (sandbox/freeze.h, doc/react.md): from PLAN_SIG_FREEZE on, boxy-init
 * passes no SIGCONT on and resumes no stopped payload, so a process not yet
 * stopped cannot use it to wake the others; PLAN_SIG_THAW ends that. Taken
 * only from outside the sandbox: a signal from an ancestor pid namespace
 * arrives as SI_USER with pid 0, which no process inside can forge (the
 * kernel refuses a non-negative si_code from rt_sigqueueinfo to another).
 */
#define PLAN_SIG_FREEZE  (SIGRTMIN + 2)
#define PLAN_SIG_THAW    (SIGRTMIN + 3)
/* A decoy credential boxy-init writes into the fresh $HOME (doc/tripwires.md). */
struct plan_decoy {
	char *path;                 /* below $HOME: relative, normal, at most PLAN_DECOY_PATH_MAX */
	char *content;              /* the file's text, at most PLAN_DECOY_CONTENT_MAX bytes */
	uint32_t mode;              /* the file's permission bits (a subset of 0777) */
	int64_t mtime;              /* its modification time, seconds since the epoch (> 0) */
};

#define PLAN_DECOYS_MAX           16
#define PLAN_DECOY_PATH_MAX       128
#define PLAN_DECOY_CONTENT_MAX    16384

struct plan {
	char **argv;                /* the payload command; argv[0] is looked up in PATH inside */
	char **envp;                /* the payload's whole environment */
	char *workdir;              /* absolute host path, bound rw at the same path; the cwd */
	char *home;                 /* absolute path of $HOME inside: a fresh tmpfs */
	char *user;                 /* login name, for the synthesized /etc/passwd */
	char *hostname;             /* uts hostname inside ("boxy") */
	uint32_t uid, gid;          /* mapped to themselves */

	struct mount_spec *mounts;  /* absolute src and dst, in the order given */
	size_t nmounts;
	bool allow_git_write;

	enum net_mode net;
	uint32_t net_queues;        /* queues of tap0 (one boxy-net each), 1 to SANDBOX_NET_MAX_QUEUES;
				     * 0 in a plan that did not say: one */
	char *dns_search;           /* the search line of the sandbox's /etc/resolv.conf: --tailscale's
				     * MagicDNS suffix ("tail0a1b2.ts.net"), a lower-case DNS name
				     * without a trailing dot; NULL for none (always under --net none) */
	enum seccomp_mode seccomp;
	bool tty;                   /* expose /dev/tty and a devpts */
	bool foreground;            /* stdin is the caller's terminal: give the payload its foreground */
	bool new_session;           /* stdin is a pty of the daemon's: boxy-init starts a session
				     * and makes it the controlling terminal */

	uint64_t tmpfs_size;        /* bytes for /tmp and $HOME each */
	uint64_t pids;              /* RLIMIT_NPROC fallback when no pids controller: 0 none */
	uint16_t *ports;            /* TCP ports the Landlock net rules allow (ABI 4) */
	size_t nports;
	int landlock_abi;           /* ABI the parent probed; stage 2 uses at most this */
	char **roots;               /* NULL-terminated: every host directory some sandbox could
				     * write (this run's and the store's, common/path-guard.h); a link
				     * inside one never leads a source out of it. May be NULL */
	uint8_t *seccomp_bpf;       /* the filter for `seccomp`, compiled at build time
				     * (init/seccomp-prog.h): struct sock_filter records. boxy-init
				     * loads it only when its length and SHA-256 are the ones it was
				     * built with, and refuses to start without it */
	size_t seccomp_bpf_len;     /* bytes, a multiple of PLAN_BPF_INSN */
	uint32_t hold_ms;           /* the test suite's knob (BOXY_DAEMON_HOLD_START_MS): boxy-init
				     * waits this long before its stages; 0 always but in tests */
	char *tls_ca_pem;           /* TLS inspection: the session CA's certificate, one PEM block
				     * (doc/http-inspection.md), which the mount stage adds to the
				     * sandbox's trust bundle; NULL when the run inspects nothing */
	char *tls_ca_hash;          /* with it: OpenSSL's subject hash, 8 hex digits, the name of
				     * its link in the hashed certificate directory */
	struct plan_decoy *decoys;  /* --tripwires: written into $HOME by the mount stage, then
				     * opened and handed to the daemon (PLAN_REPORT_DECOYS) */
	size_t ndecoys;
};

/*
 * Where the sandbox trusts the session CA (init/mount.c writes them,
 * sandbox/env.c points the runtimes' variables at them): the host's bundle
 * with the CA appended, the CA alone, and the hashed directory holding both.
 */
#define PLAN_CA_DIR      "/etc/ssl/certs"
#define PLAN_CA_BUNDLE   "/etc/ssl/certs/ca-certificates.crt"
#define PLAN_CA_FILE     "/etc/ssl/certs/boxy-session-ca.pem"
#define PLAN_CA_PEM_MAX  16384u

#define PLAN_BPF_INSN       8u          /* sizeof(struct sock_filter) */
#define PLAN_BPF_MAX_INSNS  4096u       /* the kernel's BPF_MAXINSNS */
#define PLAN_HOLD_MAX_MS    10000u

/*
 * The report record boxy-init writes on fd 4, once, in a single write(2)
 * (atomic: it is shorter than PIPE_BUF): one status byte, then the text.
 * Status PLAN_REPORT_READY means every stage succeeded and the payload is
 * being started; any other status is the exit code of a failed start
 * (125–127) and the text is "stage NAME: reason". EOF before any record
 * means boxy-init could not even be executed.
 */
#define PLAN_REPORT_READY 0
#define PLAN_REPORT_MAX   1024     /* status byte + text, never more */
/*
 * With decoys, one record comes before "ready": status PLAN_REPORT_DECOYS,
 * sent once the decoys were written and their descriptors sent over the
 * plan socket (a byte 'D', a byte n, then n bytes: each descriptor's index
 * in plan->decoys; attached, 1 + n descriptors: a socket for the answer,
 * then the decoys, O_RDONLY). boxy-init then waits for the byte 'A' on that
 * socket (the daemon watches them now) before it goes on, so that nothing
 * of the payload runs unwatched.
 */
#define PLAN_REPORT_DECOYS 1

void plan_init(struct plan *p);
void plan_free(struct plan *p);

/* Serialise p into a malloc'd buffer. */
int plan_encode(const struct plan *p, char **buf, size_t *len);
/* Parse buf into p (p initialised by this call). -1 with *err on any malformed field. */
int plan_decode(const char *buf, size_t len, struct plan *p, char **err);

#endif
