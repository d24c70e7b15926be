/*
 * fuzz-plan.c — libFuzzer target for the plan decoder (src/init/plan.c),
 * which boxy-init runs on the bytes its parent wrote to a pipe.
 *
 * Besides not crashing: a plan that decodes holds what plan_decode promises
 * (a command, absolute work directory, home, mount paths and writable
 * roots, environment entries of the form NAME=VALUE, no port 0), and
 * encoding it again gives bytes that decode to the same encoding (decode
 * and encode agree on every field).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "init/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() unless p holds what a decoded plan must. */
static void check_plan(const struct plan *p)
{
	if (!p->argv || !p->argv[0] || !p->argv[0][0] || !p->envp)
		abort();
	if (!p->workdir || p->workdir[0] != '/' || !p->home || p->home[0] != '/')
		abort();
	if (!p->user || !p->user[0] || !p->hostname || !p->hostname[0])
		abort();
	for (size_t i = 0; i < p->nmounts; i++)
		if (p->mounts[i].src[0] != '/' || p->mounts[i].dst[0] != '/')
			abort();
	for (size_t i = 0; p->roots && p->roots[i]; i++)
		if (p->roots[i][0] != '/')
			abort();
	for (size_t i = 0; p->envp[i]; i++) {
		const char *eq = strchr(p->envp[i], '=');

		if (!eq || eq == p->envp[i])
			abort();
	}
	for (size_t i = 0; i < p->nports; i++)
		if (p->ports[i] == 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan p, q;
	char *err = NULL, *a, *b;
	size_t alen, blen;

	if (plan_decode((const char *)data, size, &p, &err) < 0) {
		if (!err)
			abort();        /* every refusal says why */
		free(err);
		return 0;
	}
	if (err)
		abort();
	check_plan(&p);
	if (plan_encode(&p, &a, &alen) < 0)
		abort();
	if (plan_decode(a, alen, &q, &err) < 0)
		abort();        /* what the encoder writes, the decoder takes */
	if (plan_encode(&q, &b, &blen) < 0 || alen != blen || memcmp(a, b, alen) != 0)
		abort();
	free(a);
	free(b);
	plan_free(&p);
	plan_free(&q);
	return 0;
}
