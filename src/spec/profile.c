/*
 * spec/profile.c — finding profiles and following extends:.
 *
 * A profile is named or given as a path. A NAME (no '/', no .yaml or .yml suffix)
 * is looked up in the user's directory ($XDG_CONFIG_HOME/boxy/profiles,
 * default ~/.config/boxy/profiles), then in $(pkgdatadir)/profiles, then
 * among the presets compiled into the binary (src/presets.c, generated from
 * profiles/ by tools/embed-presets.sh), so a build tree or a binary whose
 * data directory is gone still has them. Anything else is a path.
 *
 * extends: loads the parent into the same run-spec before the child's own
 * keys are applied (spec/profile-yaml.c), which is what makes a child's lists
 * append and its scalars override. The chain is bounded (PROFILE_MAX_EXTENDS)
 * and a profile reached twice is a cycle. One exception keeps the common case
 * working: a user file NAME.yaml that says "extends: NAME" means the profile
 * it hides, so the lookup of its own name skips itself.
 *
 * Expansion (~, {workdir}, {workdir_slug}, {cache}) happens at load time,
 * value by value, in spec/expand.c.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/profile.h"
#include "common/util.h"

/* Generated from the files in profiles/; terminated by a NULL name. */
struct preset_text {
	const char *name;
	const char *text;
};
extern const struct preset_text preset_texts[];

const char *const profile_presets[] = {
	"generic", "node", "python", "offline", "claude", NULL,
};

const char *profile_preset_text(const char *name)
{
	for (const struct preset_text *p = preset_texts; p->name; p++) {
		if (strcmp(p->name, name) == 0)
			return p->text;
	}
	return NULL;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool profile_is_name(const char *s)
{
	return s[0] != '\0' && !strchr(s, '/') && !has_suffix(s, ".yaml") &&
	       !has_suffix(s, ".yml");
}

const char *profile_source_name(enum profile_source s)
{
	switch (s) {
	case PROFILE_SRC_USER:
		return "user";
	case PROFILE_SRC_DATADIR:
		return "preset";
	case PROFILE_SRC_BUILTIN:
		return "preset";
	case PROFILE_SRC_PATH:
		return "path";
	}
	return "?";
}

char *profile_user_dir(const struct profile_ctx *ctx)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");

	/* The XDG spec says a relative value is invalid and must be ignored. */
	if (xdg && xdg[0] == '/')
		return xasprintf("%s/boxy/profiles", xdg);
	if (ctx->home && ctx->home[0] == '/')
		return xasprintf("%s/.config/boxy/profiles", ctx->home);
	return NULL;
}

/* ---- lookup ------------------------------------------------------------------ */

/* Where one profile was found and how errors should name it. */
struct located {
	enum profile_source source;
	char *path;                 /* file to read; NULL for built-in */
	const char *text;           /* built-in text */
	char *origin;               /* name in error messages */
	char *identity;             /* for cycle detection: realpath or "builtin:NAME" */
};

static void located_free(struct located *l)
{
	free(l->path);
	free(l->origin);
	free(l->identity);
	memset(l, 0, sizeof(*l));
}

/* Canonical identity of a file, so two spellings of one file are one profile. */
static char *file_identity(const char *path)
{
	char *real = realpath(path, NULL);

	if (real)
		return real;
	return path_absolute(path, NULL);
}

/* True if path exists (whatever it is; reading will report what is wrong with it). */
static bool file_present(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 || errno != ENOENT;
}

/* "generic, node, python, offline, claude". malloc'd. */
static char *preset_names(void)
{
	char *s = xstrdup("");

	for (size_t i = 0; profile_presets[i]; i++) {
		char *t = xasprintf("%s%s%s", s, i ? ", " : "", profile_presets[i]);

		free(s);
		s = t;
	}
	return s;
}

/*
 * One candidate of a NAME lookup: taken into *out (which then owns path,
 * origin and identity) unless its identity is skip, the referring profile;
 * then *skipped is set, origin and identity are freed, and false returned
 * (path stays the caller's).
 */
static bool locate_take(struct located *out, enum profile_source source, char *path,
			const char *text, char *origin, char *identity, const char *skip,
			bool *skipped)
{
	if (skip && strcmp(identity, skip) == 0) {
		*skipped = true;
		free(origin);
		free(identity);
		return false;
	}
	out->source = source;
	out->path = path;
	out->text = text;
	out->origin = origin;
	out->identity = identity;
	return true;
}

/*
 * Find name_or_path. base_dir: directory a relative path is taken against
 * (NULL: as given, i.e. the cwd); base_builtin: the referring profile is
 * built in, so a relative path has nothing to be relative to. skip: the
 * identity of the referring profile, passed over in a NAME lookup.
 */
static int locate(const char *name_or_path, const struct profile_ctx *ctx,
		  const char *base_dir, bool base_builtin, const char *skip,
		  struct located *out, char **err)
{
	char *dir, *path;
	const char *text;
	bool skipped = false;

	memset(out, 0, sizeof(*out));
	if (!profile_is_name(name_or_path)) {
		if (name_or_path[0] == '/') {
			path = xstrdup(name_or_path);
		} else if (base_builtin) {
			return set_err(err, _("'%s': a built-in preset can extend only a name or "
					      "an absolute path"), name_or_path);
		} else if (!base_dir || strcmp(base_dir, ".") == 0) {
			path = xstrdup(name_or_path);
		} else {
			path = xasprintf("%s/%s", base_dir, name_or_path);
		}
		locate_take(out, PROFILE_SRC_PATH, path, NULL, xstrdup(path), file_identity(path),
			    NULL, &skipped);
		return 0;
	}

	dir = profile_user_dir(ctx);
	if (dir) {
		path = xasprintf("%s/%s.yaml", dir, name_or_path);
		free(dir);
		if (file_present(path) &&
		    locate_take(out, PROFILE_SRC_USER, path, NULL, xstrdup(path),
				file_identity(path), skip, &skipped))
			return 0;
		free(path);
	}

	path = xasprintf("%s/profiles/%s.yaml", PKGDATADIR, name_or_path);
	if (file_present(path) &&
	    locate_take(out, PROFILE_SRC_DATADIR, path, NULL, xstrdup(path), file_identity(path),
			skip, &skipped))
		return 0;
	free(path);

	text = profile_preset_text(name_or_path);
	if (text && locate_take(out, PROFILE_SRC_BUILTIN, NULL, text,
				xasprintf("%s.yaml", name_or_path),
				xasprintf("builtin:%s", name_or_path), skip, &skipped))
		return 0;

	{
		char *names = preset_names();

		if (skipped)
			set_err(err, _("profile '%s' extends itself and nothing else has that name "
				       "(presets: %s)"), name_or_path, names);
		else
			set_err(err, _("unknown profile '%s' (presets: %s)"), name_or_path, names);
		free(names);
	}
	return -1;
}

/*
 * Read a profile file: a regular file (O_NONBLOCK so a FIFO cannot hang us
 * before the check) of at most PROFILE_MAX_BYTES. Returns -1 with a bare
 * reason, or -2 with a reason located at FILE:1:1 (the size limit).
 */
static int read_profile_file(const char *path, char **text, size_t *len, char **err)
{
	struct stat st;
	size_t cap = PROFILE_MAX_BYTES + 1, n = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return set_err_errno(err, "%s", path);
	if (fstat(fd, &st) < 0) {
		set_err_errno(err, "%s", path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return set_err(err, _("%s: not a regular file"), path);
	}
	if (st.st_size > PROFILE_MAX_BYTES) {
		close(fd);
		set_err(err, _("%s:1:1: a profile may be at most 1 MiB"), path);
		return -2;
	}
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			set_err_errno(err, "%s", path);
			free(buf);
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap)
			break;
	}
	close(fd);
	if (n > PROFILE_MAX_BYTES) {        /* it grew after fstat */
		free(buf);
		set_err(err, _("%s:1:1: a profile may be at most 1 MiB"), path);
		return -2;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

/* ---- loading, extends -------------------------------------------------------- */

/* The chain of profiles being loaded, the one named first at the bottom. */
struct load_state {
	const struct profile_ctx *ctx;
	struct runspec *rs;
	size_t depth;
	struct {
		char *origin;       /* borrowed */
		char *identity;     /* borrowed */
		bool builtin;
	} chain[PROFILE_MAX_EXTENDS + 1];
};

static int extends_cb(void *arg, const char *parent, char **err);

/* Apply one located profile's text on top of the chain. */
static int load_text(struct load_state *st, const struct located *loc, const char *text,
		     size_t len, char **err)
{
	int rc;

	st->chain[st->depth].origin = loc->origin;
	st->chain[st->depth].identity = loc->identity;
	st->chain[st->depth].builtin = loc->source == PROFILE_SRC_BUILTIN;
	st->depth++;
	rc = profile_yaml_apply(text, len, loc->origin, st->ctx, st->rs, extends_cb, st, err);
	st->depth--;
	return rc;
}

/* Read (or take the built-in text of) a located profile and apply it. -1 bare, -2 located. */
static int load_located(struct load_state *st, const struct located *loc, char **err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (loc->source == PROFILE_SRC_BUILTIN)
		return load_text(st, loc, loc->text, strlen(loc->text), err) < 0 ? -2 : 0;
	rc = read_profile_file(loc->path, &text, &len, err);
	if (rc < 0)
		return rc;
	rc = load_text(st, loc, text, len, err) < 0 ? -2 : 0;
	free(text);
	return rc;
}

/* The directory part of a file origin ("." for a bare file name). malloc'd. */
static char *origin_dir(const char *origin)
{
	const char *slash = strrchr(origin, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == origin)
		return xstrdup("/");
	return xstrndup(origin, (size_t)(slash - origin));
}

/* extends: of the profile on top of the chain. */
static int extends_cb(void *arg, const char *parent, char **err)
{
	struct load_state *st = arg;
	const char *child_origin = st->chain[st->depth - 1].origin;
	bool child_builtin = st->chain[st->depth - 1].builtin;
	struct located loc;
	char *dir;
	int rc;

	if (st->depth > PROFILE_MAX_EXTENDS)
		return set_err(err, _("more than %d levels"), PROFILE_MAX_EXTENDS);
	dir = child_builtin ? NULL : origin_dir(child_origin);
	rc = locate(parent, st->ctx, dir, child_builtin,
		    st->chain[st->depth - 1].identity, &loc, err);
	free(dir);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < st->depth; i++) {
		if (strcmp(st->chain[i].identity, loc.identity) == 0) {
			char *chain = xstrdup("");

			for (size_t j = i; j < st->depth; j++) {
				char *t = xasprintf("%s%s -> ", chain, st->chain[j].origin);

				free(chain);
				chain = t;
			}
			set_err(err, _("cycle %s%s"), chain, loc.origin);
			free(chain);
			located_free(&loc);
			return -1;
		}
	}
	rc = load_located(st, &loc, err);
	located_free(&loc);
	return rc;
}

int profile_load(const char *name_or_path, const struct profile_ctx *ctx,
		 struct runspec *rs, char **err)
{
	struct load_state st = { .ctx = ctx, .rs = rs };
	struct located loc;
	int rc;

	if (locate(name_or_path, ctx, NULL, false, NULL, &loc, err) < 0)
		return -1;
	rc = load_located(&st, &loc, err);
	located_free(&loc);
	if (rc < 0)
		return -1;
	free(rs->profile);
	rs->profile = xstrdup(name_or_path);
	return 0;
}

int profile_parse(const char *text, size_t len, const char *origin,
		  const struct profile_ctx *ctx, struct runspec *rs, char **err)
{
	struct load_state st = { .ctx = ctx, .rs = rs };
	struct located loc = {
		.source = PROFILE_SRC_PATH,
		.origin = (char *)origin,
		.identity = file_identity(origin),
	};
	int rc;

	rc = load_text(&st, &loc, text, len, err);
	free(loc.identity);
	return rc < 0 ? -1 : 0;
}

/* ---- listing ------------------------------------------------------------------- */

static struct profile_info *info_find(struct profile_info *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	}
	return NULL;
}

/* Add NAME at source/path unless a higher location already has it. */
static void info_add(struct profile_info **v, size_t *n, const char *name,
		     enum profile_source source, const char *path)
{
	struct profile_info *have = info_find(*v, *n, name), *p;

	if (have) {
		if (have->source == PROFILE_SRC_USER)
			have->hides_lower = true;
		return;
	}
	p = xappend(v, n, sizeof(*p));
	p->name = xstrdup(name);
	p->source = source;
	p->path = path ? xstrdup(path) : NULL;
}

/* Every NAME.yaml in dir, in the order readdir gives (sorted later). */
static void info_scan(struct profile_info **v, size_t *n, const char *dir,
		      enum profile_source source)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *name, *path;

		if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".yaml"))
			continue;
		name = xstrndup(de->d_name, strlen(de->d_name) - strlen(".yaml"));
		if (profile_is_name(name)) {
			path = xasprintf("%s/%s", dir, de->d_name);
			info_add(v, n, name, source, path);
			free(path);
		}
		free(name);
	}
	closedir(d);
}

static int info_cmp(const void *a, const void *b)
{
	return strcmp(((const struct profile_info *)a)->name,
		      ((const struct profile_info *)b)->name);
}

void profile_list(const struct profile_ctx *ctx, struct profile_info **out, size_t *n)
{
	char *dir = profile_user_dir(ctx);

	*out = NULL;
	*n = 0;
	/* Highest precedence first, so info_add keeps the location a NAME reaches. */
	if (dir)
		info_scan(out, n, dir, PROFILE_SRC_USER);
	free(dir);
	info_scan(out, n, PKGDATADIR "/profiles", PROFILE_SRC_DATADIR);
	for (const struct preset_text *p = preset_texts; p->name; p++)
		info_add(out, n, p->name, PROFILE_SRC_BUILTIN, NULL);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), info_cmp);
}

void profile_info_free(struct profile_info *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].path);
	}
	free(v);
}
