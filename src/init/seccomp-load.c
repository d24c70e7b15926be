/*
 * init/seccomp-load.c — boxy-init's seccomp stage: load the program the
 * parent handed over in the plan, once it is known to be this build's.
 *
 * The program was compiled at build time (init/seccomp-prog.h); the parent
 * copies the one for the run's mode into the plan. boxy-init holds only each
 * mode's length and SHA-256 and refuses any other program: a plan from
 * another build, a program for the other mode, or a truncated one fails the
 * stage ("stage seccomp: ...") and the payload never runs. Loading is one
 * seccomp(SECCOMP_SET_MODE_FILTER) with no flags, what libseccomp's
 * seccomp_load did for this filter (no TSYNC: boxy-init has one thread; no
 * log or SSB flags), after no_new_privs (caps_drop_all set it already).
 */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "common/sha256.h"
#include "common/util.h"
#include "init/seccomp-prog.h"

/* Length and digest against this build's; see init/seccomp-prog.h. */
int seccomp_check_program(enum seccomp_mode mode, const void *bpf, size_t len, char **err)
{
	const struct seccomp_digest *want = seccomp_expected(mode);
	uint8_t got[SHA256_LEN];

	if (!want)
		return set_err(err, "no compiled program for seccomp mode %d", (int)mode);
	if (!bpf || len == 0)
		return set_err(err, "the plan carries no seccomp program");
	if (len != want->len * sizeof(struct sock_filter))
		return set_err(err, "the plan's seccomp program has %zu bytes, this build's %zu",
			       len, want->len * sizeof(struct sock_filter));
	sha256_digest(bpf, len, got);
	if (memcmp(got, want->sha256, SHA256_LEN) != 0)
		return set_err(err, "the plan's seccomp program is not this build's (SHA-256 differs)");
	return 0;
}

/* Check, then load into the calling thread; see init/seccomp-prog.h. */
int seccomp_apply_program(enum seccomp_mode mode, const void *bpf, size_t len, char **err)
{
	struct sock_fprog prog;

	if (seccomp_check_program(mode, bpf, len, err) < 0)
		return -1;
	prog.len = (unsigned short)(len / sizeof(struct sock_filter));
	prog.filter = (struct sock_filter *)bpf;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return set_err_errno(err, "prctl PR_SET_NO_NEW_PRIVS");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return set_err_errno(err, "loading the seccomp filter");
	return 0;
}
