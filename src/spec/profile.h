/*
 * spec/profile.h — YAML profiles (doc/profiles.md) and the presets.
 *
 * A profile is read into a run-spec fragment; `boxy run` merges the flags
 * over it. Expansion of ~, {workdir} and {workdir_slug} happens at load
 * time against the caller's home and the run's workdir.
 * Errors name the file, line and column: "node.yaml:12:5: unknown key 'rwx'".
 *
 * spec/profile.c owns lookup and extends:; spec/expand.c the expansion;
 * spec/profile-yaml.c is the only file that includes yaml.h and turns one
 * document into run-spec fields (profile -> profile-yaml -> expand).
 */
#ifndef BOXY_PROFILE_H
#define BOXY_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include "spec/expand.h"
#include "spec/profile-yaml.h"
#include "spec/runspec.h"

/* At most this many extends: hops from the profile named on the command line. */
#define PROFILE_MAX_EXTENDS 8

/* Names of the built-in presets, NULL-terminated. */
extern const char *const profile_presets[];

/*
 * Load NAME (a file ~/.config/boxy/profiles/NAME.yaml, then
 * $(pkgdatadir)/profiles/NAME.yaml, then the embedded preset) or PATH
 * (contains a '/' or ends in .yaml or .yml; relative to the cwd) into rs (which must
 * be runspec_init'ed), following extends:. Lists append to what rs already
 * holds, scalars override. Sets rs->profile to name_or_path.
 */
int profile_load(const char *name_or_path, const struct profile_ctx *ctx,
		 struct runspec *rs, char **err);

/*
 * Parse YAML text (named `origin` in errors) into rs. extends: is resolved
 * through the same lookup as profile_load; a relative extends path is taken
 * against the directory of origin.
 */
int profile_parse(const char *text, size_t len, const char *origin,
		  const struct profile_ctx *ctx, struct runspec *rs, char **err);

/* The embedded text of a preset, or NULL. */
const char *profile_preset_text(const char *name);

/* True if s is a profile NAME (looked up) rather than a PATH (opened as given). */
bool profile_is_name(const char *s);

/* Where a profile NAME resolves. */
enum profile_source {
	PROFILE_SRC_USER,           /* $XDG_CONFIG_HOME/boxy/profiles/NAME.yaml */
	PROFILE_SRC_DATADIR,        /* $(pkgdatadir)/profiles/NAME.yaml */
	PROFILE_SRC_BUILTIN,        /* compiled into the binary */
	PROFILE_SRC_PATH,           /* a path given as such */
};

struct profile_info {
	char *name;
	enum profile_source source;
	char *path;                 /* NULL for PROFILE_SRC_BUILTIN */
	bool hides_lower;           /* a user file hiding a preset (or datadir file) of that name */
};

/* Every profile a NAME can reach, the winning location of each, sorted by name. */
void profile_list(const struct profile_ctx *ctx, struct profile_info **out, size_t *n);
void profile_info_free(struct profile_info *v, size_t n);
const char *profile_source_name(enum profile_source s);

/* $XDG_CONFIG_HOME/boxy/profiles (default HOME/.config/boxy/profiles). malloc'd. */
char *profile_user_dir(const struct profile_ctx *ctx);

#endif
