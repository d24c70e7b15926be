/*
 * sandbox/seccomp-plan.c — the parent's half of the seccomp stage: put the
 * program compiled at build time for the run's mode into the plan
 * (init/seccomp-prog.h), and the test suite's start hold.
 *
 * BOXY_HOLD_START_MS (milliseconds, 1–10000) exists for the test suite, as
 * BOXY_DAEMON_STOP_GRACE does: it makes boxy-init wait that long before its
 * stages (and so before its report), so a test can hold one sandbox in assembly and watch what
 * the daemon does meanwhile (tests/e2e/daemon-start-async.sh). It is read
 * from the caller's environment as `boxy run` sent it (the user's own, so
 * one run is held and not the others); a bad value is ignored. A payload
 * cannot set it for anyone: it cannot start boxy inside its sandbox.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <linux/filter.h>

#include "common/util.h"
#include "init/seccomp-prog.h"
#include "init/plan.h"
#include "sandbox/assemble.h"

/* Copy the compiled program for p->seccomp into p; see sandbox/assemble.h. */
int sandbox_plan_seccomp(struct plan *p, char *const *environ, char **err)
{
	static const char key[] = "BOXY_HOLD_START_MS=";
	const struct sock_filter *prog;
	const char *hold = NULL;
	size_t n;

	for (size_t i = 0; environ && environ[i]; i++)
		if (strncmp(environ[i], key, sizeof(key) - 1) == 0)
			hold = environ[i] + sizeof(key) - 1;
	prog = seccomp_program(p->seccomp, &n);
	if (!prog || n == 0)
		return set_err(err, "no compiled seccomp program for mode %d", (int)p->seccomp);
	free(p->seccomp_bpf);
	p->seccomp_bpf_len = n * sizeof(*prog);
	p->seccomp_bpf = xmalloc(p->seccomp_bpf_len);
	memcpy(p->seccomp_bpf, prog, p->seccomp_bpf_len);
	if (hold && *hold) {
		char *end;
		unsigned long ms = strtoul(hold, &end, 10);

		if (*end == '\0' && ms >= 1 && ms <= PLAN_HOLD_MAX_MS)
			p->hold_ms = (uint32_t)ms;
	}
	return 0;
}
