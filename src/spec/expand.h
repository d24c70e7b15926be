/*
 * spec/expand.h — expansion of what a profile's paths and values may name
 * (~, {workdir}, {workdir_slug}, {cache}; doc/profiles.md), against the
 * caller's home and the run's work directory.
 */
#ifndef BOXY_SPEC_EXPAND_H
#define BOXY_SPEC_EXPAND_H

/* What a profile is read against. */
struct profile_ctx {
	const char *home;           /* for ~ */
	const char *workdir;        /* for {workdir}, {workdir_slug} */
};

/*
 * Expansion. profile_expand_path: leading ~ or ~/, {workdir}, {workdir_slug};
 * any other {...} is an error and the result must be absolute.
 * profile_expand_value (env values): the same three, other text kept as is.
 */
int profile_expand_path(const char *in, const struct profile_ctx *ctx, char **out, char **err);
char *profile_expand_value(const char *in, const struct profile_ctx *ctx);

/*
 * {workdir_slug}: the workdir as Claude Code names its project directory:
 * '/' and every other character but [A-Za-z0-9] turned into '-'
 * ("/home/u/proj" -> "-home-u-proj"); past 200 characters, cut and suffixed
 * with Claude Code's hash. malloc'd.
 */
char *profile_workdir_slug(const char *workdir);

#endif
