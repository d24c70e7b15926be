/*
 * init/seccomp-prog.h — the seccomp filter compiled once, at build time.
 *
 * libseccomp took 8 ms to assemble the filter in every sandbox, though the
 * result is the same every time. The build now runs seccomp-gen, which
 * builds both modes' programs with the same code boxy-init used to run
 * (init/seccomp.c, seccomp_export) and writes them out as C:
 *
 *   seccomp-prog.c    the programs, linked into the parent (the daemon and
 *                     `boxy run --no-daemon`), which puts the one for the
 *                     run's mode into the plan (proto/plan.h, seccomp_bpf);
 *   seccomp-digest.c  each program's length and SHA-256, linked into
 *                     boxy-init, which loads the program from the plan only
 *                     when both match those of the plan's mode
 *                     (seccomp_apply_program, init/seccomp-load.c).
 *
 * The programs are for the build's native architecture (x86-64: the filter
 * checks AUDIT_ARCH_X86_64 first); a cross build would have to run the
 * generator for its target. tests/unit/test-seccomp checks that the
 * compiled-in programs are byte-identical to what libseccomp builds now.
 */
#ifndef BOXY_INIT_SECCOMP_PROG_H
#define BOXY_INIT_SECCOMP_PROG_H

#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"
#include "spec/runspec.h"

struct sock_filter;

/* What boxy-init expects of one mode's program. */
struct seccomp_digest {
	size_t len;                     /* instructions */
	uint8_t sha256[SHA256_LEN];     /* of the instructions as they lie in memory */
};

/* The compiled program for mode, *len instructions (seccomp-prog.c); NULL for an unknown mode. */
const struct sock_filter *seccomp_program(enum seccomp_mode mode, size_t *len);

/* The length and digest boxy-init accepts for mode (seccomp-digest.c); NULL for an unknown mode. */
const struct seccomp_digest *seccomp_expected(enum seccomp_mode mode);

/*
 * Check that len bytes at bpf are exactly the program this build compiled
 * for mode: its length, then its SHA-256. 0, or -1 with *err.
 */
int seccomp_check_program(enum seccomp_mode mode, const void *bpf, size_t len, char **err);

/*
 * Check the program (seccomp_check_program), set no_new_privs and load it
 * with seccomp(SECCOMP_SET_MODE_FILTER). boxy-init's last stage.
 */
int seccomp_apply_program(enum seccomp_mode mode, const void *bpf, size_t len, char **err);

#endif
