/*
 * sandbox-gitcheck.c — after-the-run checks of the repositories a run
 * could write (see sandbox-gitcheck.h for why).
 *
 * Every gitdir is held open (O_PATH) from before the run, so the check
 * after it looks at the very directories that were protected, whatever
 * the payload renamed or linked meanwhile; the renames are relative to
 * those descriptors and never follow a symlink.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-gitcheck.h"
#include "util.h"

#define GITCHECK_MAX 256

struct gitdir_entry {
	int fd;                 /* O_PATH|O_DIRECTORY */
	char *path;
	bool had_commondir;
};

struct gitcheck {
	struct gitdir_entry *dirs;
	size_t ndirs;
	char **roots;           /* writable mount roots, for new-repository reports */
	char **had_git;         /* .git at a root or one level below, before the run */
};

static bool exists_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void add_gitdir(struct gitcheck *gc, const char *path)
{
	int fd;
	struct gitdir_entry *e;

	if (gc->ndirs >= GITCHECK_MAX)
		return;
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* A gitdir has HEAD; anything else named .git is not ours to touch. */
	if (!exists_at(fd, "HEAD")) {
		close(fd);
		return;
	}
	e = xappend(&gc->dirs, &gc->ndirs, sizeof(*gc->dirs));
	e->fd = fd;
	e->path = xstrdup(path);
	e->had_commondir = exists_at(fd, "commondir");
}

/* Submodule gitdirs live under modules/, nested to any depth (bounded). */
static void add_modules(struct gitcheck *gc, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;

	if (depth > 4 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char *sub;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		sub = xasprintf("%s/%s", dir, de->d_name);
		add_gitdir(gc, sub);
		{
			char *mods = xasprintf("%s/modules", sub);

			add_modules(gc, mods, depth + 1);
			free(mods);
		}
		add_modules(gc, sub, depth + 1);    /* names with slashes nest directories */
		free(sub);
	}
	closedir(d);
}

static void add_repo(struct gitcheck *gc, const char *dotgit)
{
	struct stat st;
	char *sub;

	if (lstat(dotgit, &st) < 0)
		return;
	strv_push(&gc->had_git, dotgit);
	if (!S_ISDIR(st.st_mode))
		return;     /* .git files point at gitdirs found through modules/ or worktrees/ */
	add_gitdir(gc, dotgit);
	sub = xasprintf("%s/modules", dotgit);
	add_modules(gc, sub, 0);
	free(sub);
	sub = xasprintf("%s/worktrees", dotgit);
	add_modules(gc, sub, 3);    /* one level: worktrees/NAME */
	free(sub);
}

static void scan_root(struct gitcheck *gc, const char *root)
{
	DIR *d;
	struct dirent *de;
	char *p = xasprintf("%s/.git", root);

	strv_push(&gc->roots, root);
	add_repo(gc, p);
	free(p);
	if (!(d = opendir(root)))
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (de->d_type != DT_DIR)
			continue;
		p = xasprintf("%s/%s/.git", root, de->d_name);
		add_repo(gc, p);
		free(p);
	}
	closedir(d);
}

struct gitcheck *gitcheck_begin(const struct plan *plan)
{
	struct gitcheck *gc;

	if (plan->allow_git_write)
		return NULL;
	gc = xcalloc(1, sizeof(*gc));
	scan_root(gc, plan->workdir);
	for (size_t i = 0; i < plan->nmounts; i++)
		if (plan->mounts[i].kind == MOUNT_RW || plan->mounts[i].kind == MOUNT_MKDIR)
			scan_root(gc, plan->mounts[i].src);
	return gc;
}

static bool had(char **v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* A repository at root or one level below that was not there before the run. */
static void report_new(struct gitcheck *gc, const char *dotgit, const struct event_sink *ev)
{
	struct stat st;
	char *words;

	if (had(gc->had_git, dotgit) || lstat(dotgit, &st) < 0)
		return;
	words = xasprintf("the run created %s; its hooks and config were writable inside the "
			  "sandbox: read .git/config and .git/hooks before running git there", dotgit);
	event_audit(ev, "git", "warn", dotgit, words);
	free(words);
}

void gitcheck_end(struct gitcheck *gc, const struct event_sink *events)
{
	if (!gc)
		return;
	for (size_t i = 0; i < gc->ndirs; i++) {
		struct gitdir_entry *e = &gc->dirs[i];
		char *subject, *target;

		if (e->had_commondir || !exists_at(e->fd, "commondir"))
			continue;
		/* O_PATH descriptors cannot be used with renameat: reopen the directory. */
		{
			int dfd = openat(e->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			char name[64];

			if (dfd < 0)
				continue;
			snprintf(name, sizeof(name), "commondir.boxy-quarantine-%d", (int)getpid());
			subject = xasprintf("%s/commondir", e->path);
			if (renameat(dfd, "commondir", dfd, name) == 0) {
				target = xasprintf("the run planted %s, which would point git at "
						   "config and hooks of its choosing: renamed to %s",
						   subject, name);
				event_audit(events, "git", "deny", subject, target);
				free(target);
			} else {
				target = xasprintf("the run planted %s and it could not be renamed "
						   "(%s): remove it before running git there",
						   subject, strerror(errno));
				event_audit(events, "git", "warn", subject, target);
				free(target);
			}
			free(subject);
			close(dfd);
		}
	}
	for (size_t r = 0; gc->roots && gc->roots[r]; r++) {
		DIR *d = opendir(gc->roots[r]);
		struct dirent *de;
		char *p = xasprintf("%s/.git", gc->roots[r]);

		report_new(gc, p, events);
		free(p);
		while (d && (de = readdir(d))) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			p = xasprintf("%s/%s/.git", gc->roots[r], de->d_name);
			report_new(gc, p, events);
			free(p);
		}
		if (d)
			closedir(d);
	}
}

void gitcheck_free(struct gitcheck *gc)
{
	if (!gc)
		return;
	for (size_t i = 0; i < gc->ndirs; i++) {
		close(gc->dirs[i].fd);
		free(gc->dirs[i].path);
	}
	free(gc->dirs);
	strv_free(gc->roots);
	strv_free(gc->had_git);
	free(gc);
}
