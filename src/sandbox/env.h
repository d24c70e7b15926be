/*
 * sandbox/env.h — the payload's environment. Only a small documented
 * allowlist of the caller's variables passes (doc/environment.md); HOME,
 * USER, LOGNAME and PATH are set by boxy; -e NAME passes one more
 * explicitly and -e NAME=VAL sets one. Secrets never pass unless named.
 */
#ifndef BOXY_SANDBOX_ENV_H
#define BOXY_SANDBOX_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "spec/runspec.h"

/* Names (or "LC_*"-style prefixes ending in '*') passed from the caller by default. */
extern const char *const env_allowlist[];

/* The sandbox's PATH when the caller's is not passed. */
#define SANDBOX_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/*
 * The variables that point runtimes at the sandbox's trust bundle when the
 * run inspects TLS (doc/http-inspection.md): NAME and the file it names.
 */
struct env_tls_var {
	const char *name;
	const char *value;
	const char *who;        /* what reads it, for the docs and the tests */
};
extern const struct env_tls_var env_tls_vars[];

/*
 * Build the payload's environment (NULL-terminated, malloc'd strv). With
 * tls_trust, env_tls_vars are set too (before -e, which may override them).
 */
char **env_build(char *const *caller_env, const struct env_spec *specs, size_t nspecs,
		 const char *home, const char *user, bool tls_trust);

#endif
