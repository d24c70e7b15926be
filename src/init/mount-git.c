/*
 * init/mount-git.c — step 9 of the mount stage: keep a writable work
 * directory's git repositories from becoming a way out.
 *
 * A hook in .git/hooks, or a command named in .git/config (core.hooksPath,
 * core.pager, core.fsmonitor, core.sshCommand, alias.x = !sh), runs on the
 * host, as the user, with none of the sandbox, the next time they type a git
 * command there: an escape displaced in time. So in every repository the
 * sandbox can write (at the root of each writable mount and one level
 * below), and in its submodule and linked-worktree gitdirs, hooks/, config,
 * config.worktree and commondir are bound read-only, the gitdir is bound
 * onto itself so it is a mount point (rename and rmdir fail with EBUSY),
 * and each checkout's ".git" file is bound read-only so it cannot be
 * re-pointed. Every directory above those, up to the writable mount, is
 * made a mount point as well (mount_pin_parents), or renaming a parent
 * (.git/modules, a vendored lib/) and rebuilding it would undo all this.
 * What the config names in the work tree (core.hooksPath, include.path,
 * includeIf.*.path) is bound read-only too. Objects, refs and the index
 * stay writable: git commit works.
 *
 * Everything here is resolved inside the new root (mount_open_in against
 * ctx->root): a gitdir the sandbox cannot see needs no protection, and a
 * hostile "gitdir:" line cannot lead a mount out of it. What this does not
 * cover is in doc/filesystem.md ("Git").
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init/mount.h"
#include "common/util.h"

#define GIT_FILE_MAX          4096     /* a ".git", "gitdir" or "commondir" file */
#define GIT_CONFIG_MAX        (256u << 10)  /* a gitdir's config, read for two keys */
#define GIT_MAX_NESTING       8        /* modules/ within modules/ … */
#define GIT_MODULE_NAME_DEPTH 4        /* submodule names may contain '/' */
#define GIT_INCLUDE_DEPTH     4        /* include.path within included files */

static int git_protect_gitdir(struct mount_ctx *ctx, const char *gitdir, const char *checkout,
			      bool worktree, bool wtconfig, int nesting, char **err);

/* Remember a gitdir: 0 first visit, 1 seen already, -1 over the cap (the
 * caller fails: an unprotected repository must not pass silently). */
static int git_visit(struct mount_ctx *ctx, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 1;
	for (size_t i = 0; i < ctx->ngitdirs; i++)
		if (ctx->gitdirs[i].dev == st.st_dev && ctx->gitdirs[i].ino == st.st_ino)
			return 1;
	if (ctx->ngitdirs >= MOUNT_MAX_GITDIRS)
		return -1;
	ctx->gitdirs[ctx->ngitdirs].dev = st.st_dev;
	ctx->gitdirs[ctx->ngitdirs].ino = st.st_ino;
	ctx->ngitdirs++;
	return 0;
}

/* Read a small file inside the sandbox (not following a final symlink). */
static char *git_read_small(struct mount_ctx *ctx, const char *path, size_t max)
{
	char *buf;
	struct stat st;
	ssize_t n;
	int fd = mount_open_in(ctx->root, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = xmalloc(max + 1);
	n = read(fd, buf, max);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return buf;
}

/*
 * A checkout's ".git" file ("gitdir: …") that the sandbox can write could be
 * re-pointed at a gitdir of the payload's making, with hooks in it: bind it
 * read-only. path names the file; anything but a regular file is left alone.
 */
static int git_lock_dotgit_file(struct mount_ctx *ctx, const char *path, char **err)
{
	struct stat st;
	int fd = mount_open_in(ctx->root, path, O_PATH | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	close(fd);
	if (mount_pin_parents(ctx, path, err) < 0)
		return -1;
	return mount_rebind_inside(ctx, path, BIND_ATTR_RO, err) < 0 ? -1 : 0;
}

/*
 * Whether a section header line (after its '[') opens section: "[core]",
 * "[includeIf \"gitdir:~/x/\"]" (a subsection, matched only with any_sub)
 * or the old "[section.sub]" spelling (likewise). Names match without case.
 */
static bool git_header_matches(const char *h, const char *section, bool any_sub)
{
	size_t slen = strlen(section);

	if (strncasecmp(h, section, slen) != 0)
		return false;
	h += slen;
	if (*h == ']')
		return true;
	return any_sub && (*h == ' ' || *h == '\t' || *h == '.');
}

/*
 * Every value of section.key in a git config text ("true" for a bare key).
 * A minimal reader for the keys this file needs (core.worktree,
 * extensions.worktreeConfig, core.hooksPath, include.path,
 * includeIf.*.path): a [section] header matched without case, "key =
 * value" or a bare "key", a value in double quotes; includes are not
 * followed here (the caller does). The text was written by the user's git
 * before the run, or by a previous sandbox (so hostile): every path it
 * yields is resolved inside the sandbox, and a key it misses only costs
 * protection the scan would not have had either.
 */
char **mount_git_config_values(const char *text, const char *section, const char *key,
			       bool any_sub)
{
	char *copy = xstrdup(text), *line, *save = NULL, **out = NULL;
	size_t klen = strlen(key);
	bool in_section = false;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *k = line, *v, *val;
		size_t n;

		while (*k == ' ' || *k == '\t')
			k++;
		if (*k == '[') {
			in_section = git_header_matches(k + 1, section, any_sub);
			continue;
		}
		if (!in_section || strncasecmp(k, key, klen) != 0)
			continue;
		v = k + klen;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v == '\0' || *v == '\r' || *v == '#' || *v == ';') {
			strv_push(&out, "true");
			continue;
		}
		if (*v++ != '=')
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		n = strcspn(v, "\r");
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
			v++, n -= 2;
		val = xstrndup(v, n);
		strv_push(&out, val);
		free(val);
	}
	free(copy);
	return out;
}

/* The value of section.key ([section] only, the last one wins), malloc'd, or NULL. */
char *mount_git_config_value(const char *text, const char *section, const char *key)
{
	char **all = mount_git_config_values(text, section, key, false), *out = NULL;
	size_t n = strv_len(all);

	if (n)
		out = xstrdup(all[n - 1]);
	strv_free(all);
	return out;
}

/* section.key from a gitdir's own config file inside the sandbox, or NULL. */
static char *git_config_get(struct mount_ctx *ctx, const char *gitdir, const char *section,
			    const char *key)
{
	char *path = xasprintf("%s/config", gitdir);
	char *text = git_read_small(ctx, path, GIT_CONFIG_MAX), *v;

	free(path);
	if (!text)
		return NULL;
	v = mount_git_config_value(text, section, key);
	free(text);
	return v;
}

/* git's spellings of a true boolean. */
bool mount_git_bool_true(const char *v)
{
	return v && (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
		     !strcmp(v, "1"));
}

/*
 * Create path inside as an empty directory or file when it is missing and
 * its parent exists, so that it can be bound read-only: a hooksPath or an
 * include the payload could otherwise create with content of its own.
 * Where that touches the host, the parent is in a writable bind, which the
 * payload could have written anyway; failures only leave things as found.
 */
static void git_create_missing(struct mount_ctx *ctx, const char *path, bool dir)
{
	char *copy = xstrdup(path), *slash = strrchr(copy, '/');
	int pfd;

	if (!slash || !slash[1]) {
		free(copy);
		return;
	}
	*slash = '\0';
	pfd = mount_open_in(ctx->root, *copy ? copy : "/", O_PATH | O_DIRECTORY);
	if (pfd >= 0) {
		if (dir) {
			(void)mkdirat(pfd, slash + 1, 0755);
		} else {
			int fd = openat(pfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC, 0644);

			if (fd >= 0)
				close(fd);
		}
		close(pfd);
	}
	free(copy);
}

/*
 * Protect one hooksPath or include target: only the kind git uses (a
 * directory, a regular file), so that an odd value ("path = ..") cannot
 * turn the work tree itself read-only; counted, so that includes of
 * includes cannot multiply mounts without end. -1 with *err over the cap.
 */
static int git_protect_ref(struct mount_ctx *ctx, const char *path, bool dir, char **err)
{
	struct stat st;
	int fd;

	git_create_missing(ctx, path, dir);
	fd = mount_open_in(ctx->root, path, O_PATH);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		return 0;
	}
	close(fd);
	if (++ctx->ngitrefs > MOUNT_MAX_GITREFS)
		return set_err(err, "more than %d core.hooksPath and include.path targets to "
			       "protect; pass --allow-git-write to skip git protection",
			       MOUNT_MAX_GITREFS);
	return mount_protect_ro(ctx, path, err) < 0 ? -1 : 0;
}

/* A config path value resolved as git does, or NULL for what cannot be
 * resolved inside the sandbox ("~/…": the host's home is not ours). */
static char *git_resolve(const char *v, const char *base)
{
	if (!v || !*v || v[0] == '~' || !base)
		return NULL;
	return path_absolute(v, base);
}

/*
 * Keep what a config file points at out of the payload's reach:
 * core.hooksPath (relative to hooks_base, the work tree root where git runs
 * hooks) is bound read-only, and so is every include.path and
 * includeIf.*.path (relative to the including file's directory; the
 * condition is not evaluated: any could hold), whose own includes and
 * hooksPath are then followed, to GIT_INCLUDE_DEPTH. Such files often live
 * in the work tree (husky's .husky, a shared ../.gitconfig), which the
 * payload can write; a missing one is created empty first, since git reads
 * one that appears. Only targets on a writable bind are touched.
 */
static int git_protect_config_refs(struct mount_ctx *ctx, const char *file,
				   const char *hooks_base, int depth, char **err)
{
	static const struct {
		const char *section;
		bool any_sub;
	} incs[] = { { "include", false }, { "includeIf", true } };
	char *text = git_read_small(ctx, file, GIT_CONFIG_MAX), *dir, *slash, *v, *p;
	char **hp;
	int r = 0;

	if (!text)
		return 0;
	dir = xstrdup(file);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	hp = mount_git_config_values(text, "core", "hooksPath", false);
	v = hp ? hp[strv_len(hp) - 1] : NULL;
	p = git_resolve(v, hooks_base);
	if (p) {
		r = git_protect_ref(ctx, p, true, err);
		free(p);
	}
	strv_free(hp);
	for (size_t s = 0; s < ARRAY_SIZE(incs) && r == 0; s++) {
		char **paths = mount_git_config_values(text, incs[s].section, "path",
						       incs[s].any_sub);

		for (size_t i = 0; paths && paths[i] && r == 0; i++) {
			p = git_resolve(paths[i], *dir ? dir : "/");
			if (!p)
				continue;
			if (git_protect_ref(ctx, p, false, err) < 0)
				r = -1;
			else if (depth + 1 < GIT_INCLUDE_DEPTH)
				r = git_protect_config_refs(ctx, p, hooks_base, depth + 1, err);
			free(p);
		}
		strv_free(paths);
	}
	free(dir);
	free(text);
	return r;
}

/*
 * A main or submodule gitdir has no commondir, and one the payload creates
 * ("../evil") would point the host's git, during the run, at config and
 * hooks of its making. A file that does not exist cannot be bound
 * read-only, so one is created on the host first, holding ".": git takes
 * it for this very gitdir (an empty one would make git fail). The daemon
 * removes it after the run (sandbox/gitcheck.c) and watches the gitdir
 * meanwhile (sandbox/gitwatch.c), in case this could not be done.
 */
static void git_create_commondir(int gitdir_fd)
{
	int fd = openat(gitdir_fd, "commondir", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (write(fd, ".\n", 2) != 2) {
		/* a short write leaves an empty file that git refuses: removed */
		close(fd);
		(void)unlinkat(gitdir_fd, "commondir", 0);
		return;
	}
	close(fd);
}

/* A directory that git would take for a repository: it has HEAD. */
static bool git_looks_like_gitdir(struct mount_ctx *ctx, const char *path)
{
	char *head = xasprintf("%s/HEAD", path);
	int fd = mount_open_in(ctx->root, head, O_PATH);

	free(head);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Walk modules/ (or a directory below it: submodule names may contain '/')
 * and protect each submodule gitdir found, up to GIT_MODULE_NAME_DEPTH
 * levels of name.
 */
static int git_walk_modules(struct mount_ctx *ctx, const char *dir, int name_depth,
			    int nesting, char **err)
{
	/* Never through a symlink: `.git/modules -> /` would walk the whole root. */
	int fd = mount_open_in(ctx->root, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	DIR *d;
	struct dirent *de;
	char **subs = NULL;
	int r = 0;

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN))
			strv_push(&subs, de->d_name);
	closedir(d);
	for (size_t i = 0; subs && subs[i] && r == 0; i++) {
		char *p = xasprintf("%s/%s", dir, subs[i]);

		if (git_looks_like_gitdir(ctx, p))
			r = git_protect_gitdir(ctx, p, NULL, false, false, nesting + 1, err);
		else if (name_depth + 1 < GIT_MODULE_NAME_DEPTH)
			r = git_walk_modules(ctx, p, name_depth + 1, nesting, err);
		free(p);
	}
	strv_free(subs);
	return r;
}

/*
 * Protect one gitdir (a path inside). The gitdir is bound onto itself first,
 * so it is a mount point that cannot be renamed away (EBUSY), and reopened:
 * the read-only binds below must land on the new mount, not under it.
 *  - hooks/: created empty when missing (on the host: it is in a writable
 *    bind), then read-only, so a hook cannot be planted.
 *  - config, config.worktree: read-only (core.hooksPath, core.pager,
 *    core.fsmonitor, alias.x = !cmd all live there); config.worktree is
 *    created empty first when the config turns it on (wtconfig: a linked
 *    worktree inherits its main gitdir's setting).
 *  - commondir: read-only, or git could be pointed at a gitdir of the
 *    payload's making; a main or submodule gitdir, which has none, gets
 *    one holding "." first (git_create_commondir).
 * A linked worktree's own gitdir (worktrees/NAME) has no hooks of its own;
 * its "gitdir" file names the checkout's .git file, which is locked too.
 */
static int git_protect_gitdir(struct mount_ctx *ctx, const char *gitdir, const char *checkout,
			      bool worktree, bool wtconfig, int nesting, char **err)
{
	static const char *const ro_names[] = { "hooks", "config", "config.worktree",
						"commondir" };
	int fd, r;

	if (nesting > GIT_MAX_NESTING)
		return 0;
	fd = mount_open_in(ctx->root, gitdir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return 0;
	r = git_visit(ctx, fd);
	close(fd);
	if (r < 0)
		return set_err(err, "more than %d git repositories to protect; narrow the "
			       "writable mounts or pass --allow-git-write", MOUNT_MAX_GITDIRS);
	if (r > 0)
		return 0;
	/* The directories above it first: .git/modules, a vendored lib/ … */
	if (mount_pin_parents(ctx, gitdir, err) < 0 ||
	    mount_rebind_inside(ctx, gitdir, BIND_ATTR_RW, err) < 0)
		return -1;
	fd = mount_open_in(ctx->root, gitdir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return set_err_errno(err, "%s", gitdir);
	/*
	 * A failure here is not fatal: EROFS or EACCES mean the payload cannot
	 * create hooks/ either (a repository inside a --ro), and a hostile
	 * "gitdir:" line may name something that is no gitdir at all.
	 */
	if (!worktree) {
		char *v = git_config_get(ctx, gitdir, "extensions", "worktreeConfig");

		wtconfig = mount_git_bool_true(v);
		free(v);
		(void)mkdirat(fd, "hooks", 0755);
		git_create_commondir(fd);
	}
	/* With extensions.worktreeConfig, git reads config.worktree too: a
	 * missing one is created empty, so it can be bound read-only. */
	if (wtconfig) {
		int cfd = openat(fd, "config.worktree", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				 O_CLOEXEC, 0644);

		if (cfd >= 0)
			close(cfd);
	}
	close(fd);
	for (size_t i = 0; i < ARRAY_SIZE(ro_names); i++) {
		char *p = xasprintf("%s/%s", gitdir, ro_names[i]);

		r = mount_rebind_inside(ctx, p, BIND_ATTR_RO, err);
		free(p);
		if (r < 0)
			return -1;
	}
	if (worktree) {
		/* worktrees/NAME/gitdir names the linked checkout's .git file. */
		char *p = xasprintf("%s/gitdir", gitdir);
		char *text = git_read_small(ctx, p, GIT_FILE_MAX);

		free(p);
		r = 0;
		if (text) {
			text[strcspn(text, "\r\n")] = '\0';
			if (text[0] == '/')
				r = git_lock_dotgit_file(ctx, text, err);
			free(text);
		}
		return r;
	}
	{
		char *v = git_config_get(ctx, gitdir, "core", "worktree");
		char *wt = v && *v ? path_absolute(v, gitdir) : NULL;
		char *bare = git_config_get(ctx, gitdir, "core", "bare");
		const char *base = wt ? wt : checkout ? checkout : gitdir;
		char *cfg = xasprintf("%s/config", gitdir);

		/* Hooks of a bare repository are relative to the gitdir itself. */
		if (!wt && mount_git_bool_true(bare))
			base = gitdir;
		r = git_protect_config_refs(ctx, cfg, base, 0, err);
		free(cfg);
		if (r == 0 && wtconfig) {
			cfg = xasprintf("%s/config.worktree", gitdir);
			r = git_protect_config_refs(ctx, cfg, base, 0, err);
			free(cfg);
		}
		free(bare);
		free(v);
		if (r < 0) {
			free(wt);
			return -1;
		}
		if (wt) {
			char *dotgit = xasprintf("%s/.git", strcmp(wt, "/") ? wt : "");

			r = git_lock_dotgit_file(ctx, dotgit, err);
			free(dotgit);
			free(wt);
			if (r < 0)
				return -1;
		}
	}
	{
		char *mods = xasprintf("%s/modules", gitdir);
		char *wts = xasprintf("%s/worktrees", gitdir);
		int wfd;

		r = git_walk_modules(ctx, mods, 0, nesting, err);
		free(mods);
		wfd = r < 0 ? -1 : mount_open_in(ctx->root, wts, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (wfd >= 0) {
			DIR *d = fdopendir(wfd);
			struct dirent *de;
			char **names = NULL;

			if (!d) {
				close(wfd);
			} else {
				while ((de = readdir(d)))
					if (de->d_name[0] != '.')
						strv_push(&names, de->d_name);
				closedir(d);
			}
			for (size_t i = 0; names && names[i] && r == 0; i++) {
				char *p = xasprintf("%s/%s", wts, names[i]);

				r = git_protect_gitdir(ctx, p, NULL, true, wtconfig, nesting + 1, err);
				free(p);
			}
			strv_free(names);
		}
		free(wts);
	}
	return r;
}

/*
 * Look at dir/.git: a directory is a gitdir; a file "gitdir: PATH" (a
 * submodule checkout or a linked worktree) names one, and is itself bound
 * read-only so it cannot be re-pointed at a gitdir of the payload's making.
 * PATH is resolved inside the sandbox: a gitdir the sandbox cannot see
 * needs no protection.
 */
static int git_protect_dotgit(struct mount_ctx *ctx, const char *dir, char **err)
{
	char *dotgit = xasprintf("%s/.git", strcmp(dir, "/") ? dir : "");
	char buf[GIT_FILE_MAX + 1], *gitdir = NULL;
	struct stat st;
	int fd, r = 0;
	ssize_t n;

	fd = mount_open_in(ctx->root, dotgit, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ELOOP) {
		/*
		 * A .git symlink: git follows it, so its target is protected. The
		 * link itself cannot be pinned (a mount on it would hide it), so a
		 * payload can still replace it: a limit doc/filesystem.md states.
		 */
		char target[PATH_MAX];
		int pfd = mount_open_in(ctx->root, strcmp(dir, "/") ? dir : "/",
					O_PATH | O_DIRECTORY);
		ssize_t len = pfd < 0 ? -1 : readlinkat(pfd, ".git", target, sizeof(target) - 1);

		if (pfd >= 0)
			close(pfd);
		free(dotgit);
		if (len <= 0)
			return 0;
		target[len] = '\0';
		gitdir = path_absolute(target, dir);
		if (gitdir && git_looks_like_gitdir(ctx, gitdir))
			r = git_protect_gitdir(ctx, gitdir, dir, false, false, 0, err);
		free(gitdir);
		return r;
	}
	if (fd < 0) {
		free(dotgit);
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		free(dotgit);
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		r = git_protect_gitdir(ctx, dotgit, dir, false, false, 0, err);
		free(dotgit);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		free(dotgit);
		return 0;
	}
	n = read(fd, buf, GIT_FILE_MAX);
	close(fd);
	if (mount_pin_parents(ctx, dotgit, err) < 0 ||
	    mount_rebind_inside(ctx, dotgit, BIND_ATTR_RO, err) < 0) {
		free(dotgit);
		return -1;
	}
	free(dotgit);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (strncmp(buf, "gitdir:", 7) == 0) {
		char *v = buf + 7, *end;

		while (*v == ' ' || *v == '\t')
			v++;
		end = v + strcspn(v, "\r\n");
		*end = '\0';
		if (*v)
			gitdir = path_absolute(v, dir);
	}
	if (gitdir && git_looks_like_gitdir(ctx, gitdir))
		r = git_protect_gitdir(ctx, gitdir, dir, false, false, 0, err);
	free(gitdir);
	return r;
}

/*
 * Repositories at the root of a writable mount and one level below it. Every
 * entry is looked at, however many: a cap would leave the repository after
 * it unprotected without a word.
 */
int mount_git_protect_tree(struct mount_ctx *ctx, const char *root, char **err)
{
	int fd = mount_open_in(ctx->root, root, O_RDONLY | O_DIRECTORY);
	const char *base = strcmp(root, "/") ? root : "";
	DIR *d;
	struct dirent *de;
	int r;

	if (fd < 0)
		return 0;       /* a file, or skipped */
	r = git_protect_dotgit(ctx, root, err);
	d = r < 0 ? NULL : fdopendir(fd);
	if (!d) {
		close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git") ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		p = xasprintf("%s/%s", base, de->d_name);
		r = git_protect_dotgit(ctx, p, err);
		free(p);
	}
	closedir(d);
	return r;
}
