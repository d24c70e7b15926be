/*
 * sandbox/env.c — the payload's environment, built from nothing.
 *
 * The caller's environment is where credentials live (SSH_AUTH_SOCK,
 * AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, DOCKER_HOST, …) and where the dynamic
 * loader takes instructions from (LD_PRELOAD), so the sandbox does not start
 * from a copy of it minus a denylist: it starts empty, receives the short
 * allowlist below — locale, terminal and time zone, which only change how
 * output looks — and the variables boxy itself defines. Anything else reaches
 * the payload only when the user names it with -e. doc/environment.md is the
 * user-facing form of this file.
 */
#include <config.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/env.h"
#include "common/util.h"
#include "init/plan.h"

const char *const env_allowlist[] = {
	"LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ", "NO_COLOR", "COLUMNS", "LINES",
	NULL,
};

/*
 * Where each runtime looks for its trust anchors, when the run inspects TLS.
 * Most read the bundle (the host's roots and the session CA); node, Bun and
 * Deno keep their own root stores and add the CA alone. Java reads neither
 * (its trust store is a keystore file): out of scope, doc/http-inspection.md.
 */
const struct env_tls_var env_tls_vars[] = {
	{ "SSL_CERT_FILE", PLAN_CA_BUNDLE, "OpenSSL (curl, python, ruby, php), Go, Rust's openssl" },
	{ "SSL_CERT_DIR", PLAN_CA_DIR, "OpenSSL's hashed lookup, Go" },
	{ "NODE_EXTRA_CA_CERTS", PLAN_CA_FILE, "node, npm, yarn, pnpm, Bun" },
	{ "REQUESTS_CA_BUNDLE", PLAN_CA_BUNDLE, "python requests (certifi otherwise), pip" },
	{ "PIP_CERT", PLAN_CA_BUNDLE, "pip (its vendored certifi otherwise)" },
	{ "CURL_CA_BUNDLE", PLAN_CA_BUNDLE, "curl, whatever path it was built with" },
	{ "GIT_SSL_CAINFO", PLAN_CA_BUNDLE, "git (libcurl with GnuTLS on Debian)" },
	{ "DENO_CERT", PLAN_CA_FILE, "deno" },
	{ "AWS_CA_BUNDLE", PLAN_CA_BUNDLE, "the AWS CLI and SDKs (botocore)" },
	{ "CARGO_HTTP_CAINFO", PLAN_CA_BUNDLE, "cargo" },
	{ NULL, NULL, NULL },
};

/* Does the NAME=VALUE entry e have exactly this name? */
static bool env_entry_is(const char *e, const char *name, size_t nlen)
{
	return strncmp(e, name, nlen) == 0 && e[nlen] == '=';
}

/* The caller's value of name, or NULL (the first occurrence wins, as for getenv). */
static const char *env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++) {
		if (env_entry_is(env[i], name, n))
			return env[i] + n + 1;
	}
	return NULL;
}

/* Set name=value in *v (nothing when value is NULL), replacing an earlier entry in place. */
static void env_set(char ***v, const char *name, const char *value)
{
	size_t n = strlen(name);

	if (!value)
		return;
	for (size_t i = 0; (*v)[i]; i++) {
		if (env_entry_is((*v)[i], name, n)) {
			free((*v)[i]);
			(*v)[i] = xasprintf("%s=%s", name, value);
			return;
		}
	}
	{
		char *e = xasprintf("%s=%s", name, value);

		strv_push(v, e);
		free(e);
	}
}

/* Is the caller's variable NAME on the allowlist (exactly, or by a "PREFIX*" entry)? */
static bool env_allowed(const char *name, size_t nlen)
{
	for (size_t i = 0; env_allowlist[i]; i++) {
		const char *a = env_allowlist[i];
		size_t alen = strlen(a);

		if (alen > 0 && a[alen - 1] == '*') {
			if (nlen >= alen - 1 && strncmp(name, a, alen - 1) == 0)
				return true;
		} else if (alen == nlen && strncmp(name, a, nlen) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * A PATH with an empty or relative entry makes the payload's command lookup
 * depend on the working directory — which the payload controls, and which
 * is the caller's project. Such a PATH is replaced, never cleaned up.
 */
static bool env_path_is_safe(const char *path)
{
	const char *p = path;

	if (!path || !*path)
		return false;
	for (;;) {
		const char *colon = strchr(p, ':');

		if (*p != '/')          /* also catches the empty entry */
			return false;
		if (!colon)
			return true;
		p = colon + 1;
	}
}

/* Boxy's own variables, then the allowlisted ones from the caller, then -e in order. */
char **env_build(char *const *caller_env, const struct env_spec *specs, size_t nspecs,
		 const char *home, const char *user, bool tls_trust)
{
	char **v = xcalloc(1, sizeof(*v));
	const char *path = env_lookup(caller_env, "PATH");

	env_set(&v, "PATH", env_path_is_safe(path) ? path : SANDBOX_DEFAULT_PATH);
	env_set(&v, "HOME", home);
	env_set(&v, "USER", user);
	env_set(&v, "LOGNAME", user);
	env_set(&v, "SHELL", "/bin/sh");
	env_set(&v, "TMPDIR", "/tmp");
	for (size_t i = 0; tls_trust && env_tls_vars[i].name; i++)
		env_set(&v, env_tls_vars[i].name, env_tls_vars[i].value);

	for (size_t i = 0; caller_env && caller_env[i]; i++) {
		const char *e = caller_env[i];
		const char *eq = strchr(e, '=');
		char *name;

		if (!eq || eq == e || !env_allowed(e, (size_t)(eq - e)))
			continue;
		name = xstrndup(e, (size_t)(eq - e));
		if (env_lookup(caller_env, name) == eq + 1)     /* first occurrence only */
			env_set(&v, name, eq + 1);
		free(name);
	}

	/* -e, in order: later wins, over the allowlist and over boxy's own. */
	for (size_t i = 0; i < nspecs; i++) {
		const char *value = specs[i].value;

		if (!specs[i].name || !*specs[i].name || strchr(specs[i].name, '='))
			continue;       /* runspec validation refuses these; never trust it here */
		if (!value)
			value = env_lookup(caller_env, specs[i].name);
		if (value)
			env_set(&v, specs[i].name, value);
	}
	return v;
}
