/*
 * common/path-guard.c — resolving a host path the user named so that no symlink a
 * sandbox could have planted carries it out of the tree that sandbox could
 * write (common/path-guard.h says what and why).
 *
 * The kernel's RESOLVE_BENEATH applies one directory to a whole lookup; the
 * rule here depends on where each link lies, so the walk is done here, one
 * component at a time: every step is openat(O_PATH | O_NOFOLLOW) of a
 * single name, so the kernel never follows a link on our behalf, and each
 * link is read and expanded by hand after checking which writable root, if
 * any, holds the directory it lies in. From then on the rest of the lookup
 * stays beneath that root: ".." at the root and an absolute target fail
 * with EXDEV. The walk keeps the real path of the directory it stands in
 * (every component it entered is a real directory, so the string is exact);
 * roots are compared against it by prefix, which is why roots are added in
 * their realpath(3) form too. Magic links are never traversed (they are
 * symlinks to fstat and are expanded by their text, inside rootfd).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/path-guard.h"
#include "common/util.h"

#define GUARD_MAX_LINKS 40      /* as the kernel's MAXSYMLINKS */

void path_roots_init(struct path_roots *r)
{
	r->v = NULL;
	r->n = 0;
}

void path_roots_free(struct path_roots *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	path_roots_init(r);
}

void path_roots_add(struct path_roots *r, const char *path)
{
	if (!path || path[0] != '/' || path[1] == '\0' || r->n >= PATH_ROOTS_MAX)
		return;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i], path) == 0)
			return;
	*(char **)xappend(&r->v, &r->n, sizeof(char *)) = xstrdup(path);
}

void path_roots_add_real(struct path_roots *r, const char *path)
{
	char *real;

	if (!path || path[0] != '/')
		return;
	path_roots_add(r, path);
	real = realpath(path, NULL);
	if (real)
		path_roots_add(r, real);
	free(real);
}

const char *path_roots_holding(const struct path_roots *r, const char *dir)
{
	const char *best = NULL;

	for (size_t i = 0; r && i < r->n; i++)
		if (path_has_prefix(dir, r->v[i]) && (!best || strlen(r->v[i]) > strlen(best)))
			best = r->v[i];
	return best;
}

/* openat2 has no glibc wrapper on Debian 12. */
static int guard_openat2(int dirfd, const char *name, int flags, unsigned mode, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)flags | O_CLOEXEC,
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = resolve,
	};

	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

/* Replace *fd with nfd. */
static void guard_move(int *fd, int nfd)
{
	close(*fd);
	*fd = nfd;
}

/* Fail with e, keeping errno across the cleanup. */
static int guard_fail(int fd, char *rest, int e)
{
	if (fd >= 0)
		close(fd);
	free(rest);
	errno = e;
	return -1;
}

/* Set *why for a link that leads out of root. */
static void guard_why(char **why, const char *dir, const char *name, const char *target,
		      const char *root)
{
	char *link, *safe;

	if (!why)
		return;
	free(*why);
	link = xasprintf("%s%s%s -> %s", dir, strcmp(dir, "/") ? "/" : "", name, target);
	safe = text_sanitize(link);
	*why = xasprintf(_("the symlink %s leads out of a directory the sandbox can write (%s)"),
			 safe, root);
	free(safe);
	free(link);
}

int path_guard_open(int rootfd, const char *path, int flags, unsigned mode,
		    const struct path_roots *roots, unsigned gflags, char **why)
{
	char cur[PATH_MAX], target[PATH_MAX], name[NAME_MAX + 1];
	const char *limit = NULL;
	char *rest, *p;
	int fd, nfd, links = 0;
	struct stat st;

	if (!path || path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	fd = guard_openat2(rootfd, ".", O_PATH | O_DIRECTORY, 0, 0);
	if (fd < 0)
		return -1;
	strcpy(cur, "/");
	rest = xstrdup(path);
	p = rest;
	for (;;) {
		const char *q;
		size_t len, curlen = strlen(cur);
		bool last;

		while (*p == '/')
			p++;
		if (*p == '\0') {
			/* The path ends at the directory we stand in ("/", "dir/"). */
			nfd = guard_openat2(fd, ".", flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
			break;
		}
		q = strchr(p, '/');
		len = q ? (size_t)(q - p) : strlen(p);
		if (len > NAME_MAX)
			return guard_fail(fd, rest, ENAMETOOLONG);
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		last = *p == '\0';

		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			if (limit && strcmp(cur, limit) == 0) {
				guard_why(why, cur, "..", "(above it)", limit);
				return guard_fail(fd, rest, EXDEV);
			}
			if (strcmp(cur, "/") != 0) {
				/* Inside rootfd's tree "/" is its own parent (RESOLVE_IN_ROOT). */
				nfd = guard_openat2(fd, "..", O_PATH | O_DIRECTORY, 0, 0);
				if (nfd < 0)
					return guard_fail(fd, rest, errno);
				guard_move(&fd, nfd);
				*strrchr(cur, '/') = '\0';
				if (cur[0] == '\0')
					strcpy(cur, "/");
			}
			continue;
		}

		nfd = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			if (last && errno == ENOENT && (flags & O_CREAT)) {
				nfd = guard_openat2(fd, name, flags | O_NOFOLLOW, mode,
						    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
				break;
			}
			return guard_fail(fd, rest, errno);
		}
		if (fstat(nfd, &st) < 0) {
			int e = errno;

			close(nfd);
			return guard_fail(fd, rest, e);
		}
		if (S_ISLNK(st.st_mode)) {
			const char *holder = path_roots_holding(roots, cur);
			ssize_t n;
			char *next;

			if (last && (gflags & PATH_GUARD_NOFOLLOW_LAST)) {
				close(nfd);
				return guard_fail(fd, rest, ELOOP);
			}
			n = readlinkat(nfd, "", target, sizeof(target) - 1);
			close(nfd);
			if (n < 0)
				return guard_fail(fd, rest, errno);
			if (n == 0 || ++links > GUARD_MAX_LINKS)
				return guard_fail(fd, rest, n == 0 ? ENOENT : ELOOP);
			target[n] = '\0';
			/* The deeper of the two: both hold cur, so one holds the other. */
			if (holder && (!limit || strlen(holder) > strlen(limit)))
				limit = holder;
			if (limit && target[0] == '/') {
				guard_why(why, cur, name, target, limit);
				return guard_fail(fd, rest, EXDEV);
			}
			if (target[0] == '/') {
				nfd = guard_openat2(rootfd, ".", O_PATH | O_DIRECTORY, 0, 0);
				if (nfd < 0)
					return guard_fail(fd, rest, errno);
				guard_move(&fd, nfd);
				strcpy(cur, "/");
			}
			next = xasprintf("%s/%s", target, p);
			free(rest);
			rest = p = next;
			if (strlen(rest) >= 2 * PATH_MAX)
				return guard_fail(fd, rest, ENAMETOOLONG);
			continue;
		}
		if (last) {
			close(nfd);
			/* Not a link a moment ago; RESOLVE_NO_SYMLINKS refuses one swapped in since. */
			nfd = guard_openat2(fd, name, flags | O_NOFOLLOW, mode,
					    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(nfd);
			return guard_fail(fd, rest, ENOTDIR);
		}
		if (curlen + 1 + len >= sizeof(cur)) {
			close(nfd);
			return guard_fail(fd, rest, ENAMETOOLONG);
		}
		guard_move(&fd, nfd);
		if (curlen > 1)
			cur[curlen++] = '/';
		memcpy(cur + curlen, name, len + 1);
	}
	if (nfd < 0)
		return guard_fail(fd, rest, errno);
	close(fd);
	free(rest);
	return nfd;
}

int path_guard_open_output(const char *flag, const char *path, bool append,
			   const struct path_roots *roots, char **err)
{
	int flags = O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK | (append ? O_APPEND : 0);
	char *abs = path_absolute(path, NULL), *why = NULL, *safe = text_sanitize(path);
	int rootfd = -1, fd = -1, fl;
	struct stat st;

	if (!abs) {
		set_err_errno(err, "%s %s", flag, safe);
		goto out;
	}
	rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		set_err_errno(err, "%s %s", flag, safe);
		goto out;
	}
	/* No O_TRUNC: a file is truncated only once it is known to be ours to write. */
	fd = path_guard_open(rootfd, abs, flags, 0600, roots, PATH_GUARD_NOFOLLOW_LAST, &why);
	if (fd < 0) {
		if (errno == ELOOP)
			set_err(err, _("%s %s: is a symlink; boxy does not follow a link to a file it "
				       "writes (a sandboxed run could have planted it)"), flag, safe);
		else if (errno == EXDEV)
			set_err(err, _("%s %s: %s; name its target instead"), flag, safe, why);
		else
			set_err_errno(err, "%s %s", flag, safe);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		set_err_errno(err, "%s %s", flag, safe);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		set_err(err, _("%s %s: not a regular file"), flag, safe);
		goto fail;
	}
	if (st.st_uid != getuid()) {
		set_err(err, _("%s %s: owned by uid %u, not by you"), flag, safe,
			(unsigned)st.st_uid);
		goto fail;
	}
	if (st.st_nlink != 1) {
		set_err(err, _("%s %s: has %ju hard links; boxy writes only a file with one (a "
			       "link to another file would write that file)"), flag, safe,
			(uintmax_t)st.st_nlink);
		goto fail;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    (!append && ftruncate(fd, 0) < 0)) {
		set_err_errno(err, "%s %s", flag, safe);
		goto fail;
	}
	goto out;
fail:
	close(fd);
	fd = -1;
out:
	if (rootfd >= 0)
		close(rootfd);
	free(why);
	free(safe);
	free(abs);
	return fd;
}
