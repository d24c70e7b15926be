/*
 * spec/profile-yaml.h — one profile document into run-spec fields, the only
 * part of boxy that includes yaml.h. spec/profile.c does the lookup and
 * extends: around it.
 */
#ifndef BOXY_SPEC_PROFILE_YAML_H
#define BOXY_SPEC_PROFILE_YAML_H

#include <stddef.h>

#include "spec/expand.h"
#include "spec/runspec.h"

/* A profile file may be at most this large. */
#define PROFILE_MAX_BYTES   (1024 * 1024)

/*
 * profile_yaml_apply reads one document, calls extends_cb (if the document
 * has extends:) before applying any of its own keys, then applies them to rs.
 * extends_cb returns 0, -1 with a bare reason (to be located at the extends:
 * value), or -2 with a reason that already names its file:line:column.
 */
int profile_yaml_apply(const char *text, size_t len, const char *origin,
		       const struct profile_ctx *ctx, struct runspec *rs,
		       int (*extends_cb)(void *arg, const char *parent, char **err),
		       void *arg, char **err);

#endif
