/*
 * profile.h — YAML profiles (doc/profiles.md) and the presets.
 *
 * A profile is read into a run-spec fragment; `boxy run` merges the flags
 * over it. Expansion of ~, {workdir} and {workdir_slug} happens at load
 * time against the caller's home and the run's workdir.
 * Errors name the file, line and column: "node.yaml:12:5: unknown key 'rwx'".
 */
#ifndef BOXY_PROFILE_H
#define BOXY_PROFILE_H

#include <stdbool.h>
#include "runspec.h"

struct profile_ctx {
	const char *home;           /* for ~ */
	const char *workdir;        /* for {workdir}, {workdir_slug} */
};

/* Names of the built-in presets, NULL-terminated. */
extern const char *const profile_presets[];

/*
 * Load NAME (a preset, or a file under ~/.config/boxy/profiles/NAME.yaml,
 * $(pkgdatadir)/profiles/NAME.yaml) or PATH (contains a '/' or ends in .yaml)
 * into rs (which must be runspec_init'ed), following extends:.
 */
int profile_load(const char *name_or_path, const struct profile_ctx *ctx,
		 struct runspec *rs, char **err);

/* Parse YAML text (named `origin` in errors) into rs. extends: is resolved through profile_load. */
int profile_parse(const char *text, size_t len, const char *origin,
		  const struct profile_ctx *ctx, struct runspec *rs, char **err);

/* The embedded text of a preset, or NULL. */
const char *profile_preset_text(const char *name);

/* {workdir_slug}: the workdir with '/' turned into '-' (Claude Code's naming). malloc'd. */
char *profile_workdir_slug(const char *workdir);

#endif
