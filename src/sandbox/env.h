/*
 * sandbox/env.h — the payload's environment. Only a small documented
 * allowlist of the caller's variables passes (doc/environment.md); HOME,
 * USER, LOGNAME and PATH are set by boxy; -e NAME passes one more
 * explicitly and -e NAME=VAL sets one. Secrets never pass unless named.
 */
#ifndef BOXY_SANDBOX_ENV_H
#define BOXY_SANDBOX_ENV_H

#include <stddef.h>
#include "spec/runspec.h"

/* Names (or "LC_*"-style prefixes ending in '*') passed from the caller by default. */
extern const char *const env_allowlist[];

/* The sandbox's PATH when the caller's is not passed. */
#define SANDBOX_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* Build the payload's environment (NULL-terminated, malloc'd strv). */
char **env_build(char *const *caller_env, const struct env_spec *specs, size_t nspecs,
		 const char *home, const char *user);

#endif
