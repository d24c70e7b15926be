/*
 * init/mount.c — stage 3 of boxy-init: the sandbox's root filesystem.
 *
 * Runs as PID 1 of the new pid namespace, in a fresh mount namespace owned
 * by the sandbox's user namespace (CAP_SYS_ADMIN there, nowhere else). It
 * builds an allow-list root on a tmpfs and pivots into it: read-only /usr
 * and the library links, a synthesized /etc, a minimal /dev, a fresh /proc
 * with the recon surface masked, scratch tmpfs /tmp and $HOME, the work
 * directory and the user's --ro/--rw/--copy/--protect mounts, and the git
 * protection of every writable repository (init/mount-git.c).
 * doc/filesystem.md describes the result path by path.
 *
 * How it is built, and why that way:
 *  - Two pivots (the bubblewrap shape). A staging tmpfs is mounted over /tmp
 *    and pivoted into first, so the host's root sits at /oldroot and the new
 *    root is built at /newroot. Pivoting moves the staging mount away from
 *    /tmp, so the caller's own paths under /tmp are still reachable as
 *    /oldroot/tmp/...: nothing the user may name is covered while we look.
 *  - Every host path is resolved with openat2(RESOLVE_IN_ROOT) against
 *    /oldroot, so an absolute symlink (~/.local/bin/claude → the versioned
 *    binary) resolves as it does on the host, not against the staging root.
 *    Every sandbox path is resolved the same way against /newroot, so a
 *    symlink inside a bound directory can never lead a mount point out of it.
 *  - Mounts are made with the new mount API (open_tree, mount_setattr,
 *    move_mount, fsopen/fsmount). A bind is cloned detached, made read-only
 *    *recursively* (AT_RECURSIVE: submounts of /usr or of a --ro directory
 *    are read-only too, which MS_REMOUNT|MS_BIND cannot do) and only then
 *    attached, so it is never visible writable. mount_setattr only adds
 *    flags, so the flags the kernel locks on mounts inherited from a more
 *    privileged namespace (nodev, nosuid, atime) never need to be restated:
 *    the EPERM trap of the classic remount does not exist here. Needs Linux
 *    5.12 (mount_setattr) and 5.6 (openat2); boxy requires Landlock (5.13).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/path-guard.h"
#include "init/mount.h"
#include "init/tap.h"
#include "init/stages.h"
#include "common/util.h"

#define COPY_MAX_BYTES      (64u << 20)   /* --copy reads at most this much */
#define STAGE_DIR           "/tmp"        /* exists on every host */

/* One mount of the depth-sorted pass: /tmp, $HOME, the work directory, the user's. */
enum entry_kind { ENTRY_TMPFS, ENTRY_WORKDIR, ENTRY_SPEC };

struct entry {
	enum entry_kind kind;
	const struct mount_spec *spec;  /* ENTRY_SPEC */
	char *dst;                      /* normalised absolute path inside */
	int mode;                       /* ENTRY_TMPFS */
	size_t depth, order;
};

/* ---- small syscall helpers -------------------------------------------- */

/* openat2 has no glibc wrapper on Debian 12. */
static int sys_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)flags | O_CLOEXEC,
		.resolve = resolve,
	};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * Open path (absolute) inside the tree rooted at rootfd, as if rootfd were
 * "/": ".." and absolute symlinks stay inside. Magic links (/proc/PID/fd,
 * /proc/PID/root) are refused: they are the one way out of RESOLVE_IN_ROOT.
 */
int mount_open_in(int rootfd, const char *path, int flags)
{
	while (*path == '/')
		path++;
	if (*path == '\0')
		path = ".";
	return sys_openat2(rootfd, path, flags,
			   RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* Add attr (MOUNT_ATTR_*) to the mount at treefd and every mount below it. */
static int set_attr(int treefd, uint64_t attr)
{
	struct mount_attr ma = { .attr_set = attr };

	return mount_setattr(treefd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof(ma));
}

/* Attach a detached mount (treefd) on top of whatever is at dstfd. */
static int attach(int treefd, int dstfd)
{
	return move_mount(treefd, "", dstfd, "",
			  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* Clone the mount tree at fd (recursively: the kernel refuses a plain clone
 * that would reveal what a locked submount covers), set attr on it all. */
static int clone_tree(int fd, uint64_t attr)
{
	int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			     AT_EMPTY_PATH | AT_RECURSIVE);

	if (tree < 0)
		return -1;
	if (attr && set_attr(tree, attr) < 0) {
		int e = errno;
		close(tree);
		errno = e;
		return -1;
	}
	return tree;
}

/* A new filesystem instance as a detached mount; opts are key,value pairs
 * (value NULL: a flag), NULL-terminated. */
static int fs_create(const char *type, const char *const *opts, uint64_t attr)
{
	int fs = fsopen(type, FSOPEN_CLOEXEC), mnt = -1, e;

	if (fs < 0)
		return -1;
	for (; opts && opts[0]; opts += 2) {
		int r = opts[1] ? fsconfig(fs, FSCONFIG_SET_STRING, opts[0], opts[1], 0)
				: fsconfig(fs, FSCONFIG_SET_FLAG, opts[0], NULL, 0);
		if (r < 0)
			goto out;
	}
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		goto out;
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned int)attr);
out:
	e = errno;
	close(fs);
	errno = e;
	return mnt;
}

/* close() that leaves errno as the failure before it set it. */
static void close_keep_errno(int fd)
{
	int e = errno;

	if (fd >= 0)
		close(fd);
	errno = e;
}

static void note_skipped(struct mount_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record a mount the user asked for that was not made, for the caller to show. */
static void note_skipped(struct mount_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (!ctx->skipped)
		return;
	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	strv_push(ctx->skipped, s);
	free(s);
}

/* The flag a mount kind came from, for messages. */
static const char *spec_flag(enum mount_kind k)
{
	switch (k) {
	case MOUNT_RO: return "--ro";
	case MOUNT_RW: return "--rw";
	case MOUNT_PROTECT: return "--protect";
	case MOUNT_MKDIR: return "mkdir";
	case MOUNT_COPY: return "--copy";
	case MOUNT_COPY_RO: return "--copy-ro";
	}
	return "mount";
}

/* Components in a normalised absolute path: "/" 0, "/a/b" 2. */
static size_t path_depth(const char *p)
{
	size_t d = 0;

	for (; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			d++;
	return d;
}

/* Register the filesystem of fd as one of ours (a tmpfs made by this stage). */
static void scratch_add(struct mount_ctx *ctx, int fd)
{
	struct stat st;

	if (ctx->nscratch >= MOUNT_MAX_SCRATCH)
		fatal("mount: more scratch filesystems than MOUNT_MAX_SCRATCH");
	if (fstat(fd, &st) == 0)
		ctx->scratch[ctx->nscratch++] = st.st_dev;
}

/* True when fd lies on a tmpfs of ours, where creating files touches no host. */
static bool on_scratch(const struct mount_ctx *ctx, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	for (size_t i = 0; i < ctx->nscratch; i++)
		if (ctx->scratch[i] == st.st_dev)
			return true;
	return false;
}

/* ---- mount points on the new root ------------------------------------- */

enum mp_kind { MP_DIR, MP_FILE };

/*
 * Return an O_PATH fd for path inside the new root, creating what is
 * missing: parents as directories (0755), the last component as kind.
 * Creation happens only on the sandbox's own tmpfs: a missing component
 * inside a bind from the host would otherwise be created on the host.
 */
static int mp_ensure(struct mount_ctx *ctx, const char *path, enum mp_kind kind, char **err)
{
	char *norm = path_absolute(path, "/");
	char *prefix = xmalloc(strlen(norm) + 2);
	int cur = -1, fd = -1;
	const char *p = norm;

	cur = mount_open_in(ctx->root, "/", O_PATH | O_DIRECTORY);
	if (cur < 0) {
		set_err_errno(err, "open new root");
		goto out;
	}
	prefix[0] = '\0';
	while (*p) {
		const char *seg, *end;
		bool last;
		int next;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		seg = p;
		end = strchr(seg, '/');
		if (!end)
			end = seg + strlen(seg);
		last = (*end == '\0');
		strncat(prefix, "/", 2);
		strncat(prefix, seg, (size_t)(end - seg));
		p = end;

		next = mount_open_in(ctx->root, prefix, O_PATH);
		if (next < 0 && errno == ENOENT) {
			char *name = xstrndup(seg, (size_t)(end - seg));
			int r;

			if (!on_scratch(ctx, cur)) {
				set_err(err, "cannot create mount point %s: its parent is not on "
					"the sandbox's own tmpfs", prefix);
				free(name);
				goto out;
			}
			if (last && kind == MP_FILE) {
				r = openat(cur, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					   O_CLOEXEC, 0644);
				if (r >= 0)
					close(r);
			} else {
				r = mkdirat(cur, name, 0755);
			}
			free(name);
			if (r < 0 && errno != EEXIST) {
				set_err_errno(err, "create %s", prefix);
				goto out;
			}
			next = mount_open_in(ctx->root, prefix, O_PATH);
		}
		if (next < 0) {
			set_err_errno(err, "%s", prefix);
			goto out;
		}
		close(cur);
		cur = next;
	}
	fd = cur;
	cur = -1;
out:
	close_keep_errno(cur);
	free(prefix);
	free(norm);
	return fd;
}

/* Make sure the directory path exists inside (on the sandbox's tmpfs); 0 or -1 with *err. */
static int mp_ensure_dir_close(struct mount_ctx *ctx, const char *path, char **err)
{
	int fd = mp_ensure(ctx, path, MP_DIR, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Attach treefd at path inside the new root (mount point created as kind). */
static int mount_at(struct mount_ctx *ctx, int treefd, const char *path, enum mp_kind kind,
		    char **err)
{
	int dst = mp_ensure(ctx, path, kind, err);

	if (dst < 0)
		return -1;
	if (attach(treefd, dst) < 0) {
		set_err_errno(err, "mount %s", path);
		close(dst);
		return -1;
	}
	close(dst);
	return 0;
}

/*
 * Open a host source (--ro, --rw, --copy, --copy-ro) through the path
 * guard: a symlink lying in any directory some sandbox could write (this
 * run's work directory and --rw/--mkdir mounts, and every earlier run's the
 * store remembers, plan->roots) resolves only beneath that directory. A run
 * can plant "config.json -> ~/.ssh/id_ed25519" or "dist -> ~/.ssh" there,
 * and a later run's --copy config.json or --ro dist, from any directory,
 * would carry the key in. A link that stays inside shows nothing a sandbox
 * could not already see. Elsewhere links are followed as on the host
 * (dotfile managers link ~/.config entries into a repository). A link that
 * leads out fails with EXDEV and *why names it.
 */
static int open_host_source(const struct mount_ctx *ctx, const char *src, int flags, char **why)
{
	struct path_roots roots = { ctx->plan->roots, strv_len(ctx->plan->roots) };

	/* (a borrowed view of the plan's vector: never freed here) */
	return path_guard_open(ctx->oldroot, src, flags, 0, &roots, 0, why);
}

/* The words for a source that could not be opened (EXDEV: a link leads out). */
static int source_err(char **err, const char *flag, const char *src, char *why)
{
	int r;

	if (errno == EXDEV)
		r = set_err(err, "%s %s: %s (a sandboxed run could have planted it); give its "
			    "target instead", flag, src, why ? why : "a symlink leads out of a "
			    "directory a sandbox could write");
	else
		r = set_err_errno(err, "%s %s", flag, src);
	free(why);
	return r;
}

/*
 * Bind host path src at dst inside with attr. Returns 0, 1 when src does not
 * exist on the host (the caller decides whether that matters), -1 on error.
 */
static int bind_host(struct mount_ctx *ctx, const char *src, const char *dst, uint64_t attr,
		     char **err)
{
	struct stat st;
	char *why = NULL;
	int fd, tree, r;

	fd = open_host_source(ctx, src, O_PATH, &why);
	if (fd < 0) {
		if (errno == ENOENT) {
			free(why);
			return 1;
		}
		if (errno == EXDEV)
			return source_err(err, attr & MOUNT_ATTR_RDONLY ? "--ro" : "--rw", src, why);
		free(why);
		return set_err_errno(err, "%s", src);
	}
	if (fstat(fd, &st) < 0 || (tree = clone_tree(fd, attr)) < 0) {
		set_err_errno(err, "bind %s", src);
		close(fd);
		return -1;
	}
	close(fd);
	r = mount_at(ctx, tree, dst, S_ISDIR(st.st_mode) ? MP_DIR : MP_FILE, err);
	close(tree);
	return r;
}

/*
 * Bind the sandbox path onto itself with attr: how --protect, the git
 * protection and read-only copies turn something already there read-only
 * (or into a mount point, which cannot be renamed or removed: EBUSY).
 * Returns 1 when path does not exist inside.
 */
int mount_rebind_inside(struct mount_ctx *ctx, const char *path, uint64_t attr, char **err)
{
	int fd = mount_open_in(ctx->root, path, O_PATH), tree;

	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		return set_err_errno(err, "%s", path);
	}
	tree = clone_tree(fd, attr);
	if (tree < 0 || attach(tree, fd) < 0) {
		set_err_errno(err, "bind %s onto itself", path);
		close_keep_errno(tree);
		close(fd);
		return -1;
	}
	close(tree);
	close(fd);
	return 0;
}

/*
 * Pin one directory above a protected path: bind it onto itself, so that it
 * is a mount point. rename(2) and rmdir(2) fail with EBUSY only on a mount
 * point itself, so a protected gitdir or --protect file is safe only when
 * no directory between it and its mount's root can be renamed away and
 * rebuilt with the payload's content. Recursive (clone_tree): protections
 * already bound below are carried along, and only attr_set is used, so a
 * read-only submount stays read-only. Nothing to do on a mount root, on a
 * read-only mount (EROFS stops the rename) or on a tmpfs of ours (no host
 * path behind it).
 */
static int pin_dir(struct mount_ctx *ctx, const char *dir, char **err)
{
	struct statx stx;
	struct statvfs sv;
	int fd = mount_open_in(ctx->root, dir, O_PATH | O_DIRECTORY), r = 0;

	if (fd < 0)
		return 0;       /* missing or not a directory: nothing below to pin */
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) == 0 &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		goto out;
	if ((fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY)) || on_scratch(ctx, fd))
		goto out;
	r = mount_rebind_inside(ctx, dir, BIND_ATTR_RW, err) < 0 ? -1 : 0;
out:
	close(fd);
	return r;
}

/*
 * Make every directory above path (a sandbox path) a mount point, shallowest
 * first: the later, deeper binds then land in the new mounts instead of
 * being copied into each. Mount roots on the way (nested writable mounts)
 * are passed through, not stopped at: the directory above a nested --rw
 * can be renamed as well. A symlink on the way is followed and its target
 * pinned; the link itself cannot be (doc/filesystem.md).
 */
int mount_pin_parents(struct mount_ctx *ctx, const char *path, char **err)
{
	char *p = path_absolute(path, "/");
	int r = 0;

	if (!p)
		return 0;
	for (char *s = strchr(p + 1, '/'); s && r == 0; s = strchr(s + 1, '/')) {
		*s = '\0';
		r = pin_dir(ctx, p, err);
		*s = '/';
	}
	free(p);
	return r;
}

/*
 * Bind path read-only when it lies on a writable bind from the host (not
 * on a read-only mount, not on a tmpfs of ours), its parents pinned first
 * (mount_pin_parents). How a file or directory the host will read later,
 * named by a repository's config, is kept out of the payload's reach.
 * 0 done or nothing to do, 1 path does not exist inside, -1 with *err.
 */
int mount_protect_ro(struct mount_ctx *ctx, const char *path, char **err)
{
	struct statvfs sv;
	int fd = mount_open_in(ctx->root, path, O_PATH);
	bool writable;

	if (fd < 0)
		return errno == ENOENT ? 1 : 0;
	writable = !(fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY)) && !on_scratch(ctx, fd);
	close(fd);
	if (!writable)
		return 0;
	if (mount_pin_parents(ctx, path, err) < 0)
		return -1;
	return mount_rebind_inside(ctx, path, BIND_ATTR_RO, err) < 0 ? -1 : 0;
}

/* A fresh tmpfs at path inside, registered as scratch. */
static int tmpfs_at(struct mount_ctx *ctx, const char *path, uint64_t size, int mode,
		    uint64_t attr, char **err)
{
	char sz[32], md[16];
	const char *opts[] = { "size", sz, "mode", md, NULL };
	int tree, fd;

	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	snprintf(md, sizeof(md), "%o", mode);
	tree = fs_create("tmpfs", opts, attr);
	if (tree < 0)
		return set_err_errno(err, "tmpfs %s", path);
	if (mount_at(ctx, tree, path, MP_DIR, err) < 0) {
		close(tree);
		return -1;
	}
	close(tree);
	fd = mount_open_in(ctx->root, path, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return set_err_errno(err, "%s", path);
	scratch_add(ctx, fd);
	close(fd);
	return 0;
}

/* Write a new file at path inside (its directory must be scratch). */
static int file_write_inside(struct mount_ctx *ctx, const char *path, const char *buf,
			     size_t len, int mode, char **err)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	const char *name = path + (slash - dir) + 1;
	int dfd, fd, r = -1;

	*slash = '\0';
	dfd = mp_ensure(ctx, dir[0] ? dir : "/", MP_DIR, err);
	if (dfd < 0)
		goto out;
	if (!on_scratch(ctx, dfd)) {
		set_err(err, "%s: not on the sandbox's own tmpfs (it would be written to "
			"the host)", path);
		goto out;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		set_err_errno(err, "create %s", path);
		goto out;
	}
	if (write_all(fd, buf, len) < 0 || fchmod(fd, (mode_t)mode) < 0) {
		set_err_errno(err, "write %s", path);
		close(fd);
		goto out;
	}
	close(fd);
	r = 0;
out:
	close_keep_errno(dfd);
	free(dir);
	return r;
}

/* ---- step 3: system directories --------------------------------------- */

/*
 * /usr and /opt read-only; /bin, /sbin and the lib dirs recreated as the
 * symlinks they are on a merged-/usr host, bound when they are directories.
 */
static int setup_system(struct mount_ctx *ctx, char **err)
{
	static const char *const dirs[] = { "usr", "opt" };
	static const char *const links[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };
	char target[PATH_MAX], path[64];

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "/%s", dirs[i]);
		if (bind_host(ctx, path, path, BIND_ATTR_RO, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		ssize_t n = readlinkat(ctx->oldroot, links[i], target, sizeof(target) - 1);

		snprintf(path, sizeof(path), "/%s", links[i]);
		if (n >= 0) {
			target[n] = '\0';
			if (symlinkat(target, ctx->root, links[i]) < 0)
				return set_err_errno(err, "symlink %s", path);
			continue;
		}
		if (errno == ENOENT)
			continue;
		if (errno != EINVAL)    /* EINVAL: not a symlink, a real directory */
			return set_err_errno(err, "readlink %s", path);
		if (bind_host(ctx, path, path, BIND_ATTR_RO, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- step 4: /etc ----------------------------------------------------- */

/*
 * What programs need from the host's /etc, bound read-only. Deliberately
 * absent: shadow, gshadow, sudoers, ssh/ (host keys), environment and npmrc
 * (may hold tokens), machine-id (a stable host identifier: synthesized),
 * nsswitch.conf (synthesized: the host's may route lookups to sssd, LDAP or
 * systemd, whose sockets are not here), passwd/group (synthesized).
 */
static const char *const etc_from_host[] = {
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"alternatives",                         /* Debian's awk, editor, … are links into it */
	"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"localtime", "timezone", "locale.alias",
	"os-release", "lsb-release", "debian_version",
	"mime.types", "mailcap", "magic", "magic.mime",
	"protocols", "services", "rpc", "gai.conf", "host.conf",
	"inputrc", "terminfo", "profile", "profile.d", "bash.bashrc", "shells",
	"gitconfig", "perl", "python3*", "fonts", "vim", "nanorc",
};

/*
 * Bind host DIR/NAME, not a symlink, at the new root's DIR/NAME with attr:
 * both ends resolved from the two directories opened once, instead of
 * walking from each root per entry (bind_host: path_guard_open's walk, then
 * mp_ensure's; 25 system calls an entry, ~40 entries of /etc, 1.3 ms of a
 * start). The same checks: the host end is what path_guard_open's last step
 * opens (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS from its directory; the
 * guard's rules are about links, and neither /etc nor /dev, whose parent is
 * / and so no writable root, nor a non-link entry is one); the mount point
 * is created only because newdir is on our tmpfs, and opened beneath it
 * without following a link. Returns 1 when the entry is a link (it turned
 * into one since it was read: the caller takes the slow path), 2 when it
 * does not exist, -1 with *err, else 0.
 */
static int bind_beneath(struct mount_ctx *ctx, int hostdir, int newdir, const char *dir,
			const char *name, uint64_t attr, char **err)
{
	struct stat st;
	int src, tree, dst, r;

	src = sys_openat2(hostdir, name, O_PATH | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (src < 0)
		return errno == ENOENT ? 2 : set_err_errno(err, "%s/%s", dir, name);
	if (fstat(src, &st) < 0) {
		close_keep_errno(src);
		return set_err_errno(err, "%s/%s", dir, name);
	}
	if (S_ISLNK(st.st_mode)) {
		close(src);
		return 1;
	}
	tree = clone_tree(src, attr);
	close_keep_errno(src);
	if (tree < 0)
		return set_err_errno(err, "bind %s/%s", dir, name);
	/* A file's mount point is the file this open creates (the descriptor is
	 * the target: no second open); a directory is made, then opened. */
	dst = -1;
	if (S_ISDIR(st.st_mode)) {
		r = mkdirat(newdir, name, 0755);
	} else {
		dst = openat(newdir, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			     0644);
		r = dst < 0 ? -1 : 0;
	}
	if (r < 0 && errno != EEXIST) {
		close_keep_errno(tree);
		return set_err_errno(err, "create %s/%s", dir, name);
	}
	if (dst < 0)
		dst = sys_openat2(newdir, name, O_PATH,
				  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (dst < 0 || attach(tree, dst) < 0) {
		set_err_errno(err, "mount %s/%s", dir, name);
		close_keep_errno(dst);
		close_keep_errno(tree);
		return -1;
	}
	close(dst);
	close(tree);
	return 0;
}

/*
 * Copy a host entry of dir (/etc or below): a symlink into /usr stays a
 * symlink (readlink of /etc/localtime names the zone), anything else is
 * bound read-only (bind_beneath when it is not a link and newdir, the new
 * root's dir on our tmpfs, is >= 0).
 */
static int etc_bind_entry(struct mount_ctx *ctx, int hostdir, const char *dir, int newdir,
			  const char *name, char **err)
{
	char target[PATH_MAX], *abs, *src, *dst;
	ssize_t n = readlinkat(hostdir, name, target, sizeof(target) - 1);
	int r;

	if (n < 0 && errno == EINVAL && newdir >= 0) {
		r = bind_beneath(ctx, hostdir, newdir, dir, name, BIND_ATTR_RO, err);
		if (r != 1)
			return r < 0 ? -1 : 0;
		/* A link now: read it again below, as if it had been one all along. */
		n = readlinkat(hostdir, name, target, sizeof(target) - 1);
	}
	if (n >= 0) {
		target[n] = '\0';
		abs = path_absolute(target, dir);
		if (abs && path_has_prefix(abs, "/usr")) {
			int in = mount_open_in(ctx->root, dir, O_PATH | O_DIRECTORY);

			r = in < 0 ? -1 : symlinkat(target, in, name);
			close_keep_errno(in);
			free(abs);
			if (r < 0)
				return set_err_errno(err, "symlink %s/%s", dir, name);
			return 0;
		}
		free(abs);
	} else if (errno == ENOENT) {
		return 0;
	}
	src = xasprintf("%s/%s", dir, name);
	dst = xstrdup(src);
	r = bind_host(ctx, src, dst, BIND_ATTR_RO, err);
	free(src);
	free(dst);
	return r < 0 ? -1 : 0;
}

/* ---- step 4b: the session CA (TLS inspection) --------------------------- */

#define CA_BUNDLE_MAX (32u << 20)       /* a host bundle larger than this is not read */

/* The host's trust bundle (malloc'd, NUL-terminated; "" when it has none). */
static char *ca_host_bundle(struct mount_ctx *ctx, size_t *len)
{
	static const char *const paths[] = {
		PLAN_CA_BUNDLE,                         /* Debian, Ubuntu, Arch, Alpine */
		"/etc/pki/tls/certs/ca-bundle.crt",     /* Fedora, RHEL */
	};
	char *buf = NULL;

	*len = 0;
	for (size_t i = 0; i < ARRAY_SIZE(paths) && !buf; i++) {
		int fd = mount_open_in(ctx->oldroot, paths[i], O_RDONLY);
		struct stat st;
		ssize_t n;

		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (uint64_t)st.st_size <= CA_BUNDLE_MAX) {
			buf = xmalloc((size_t)st.st_size + 1);
			n = read(fd, buf, (size_t)st.st_size);
			if (n != st.st_size) {
				free(buf);
				buf = NULL;
			} else {
				*len = (size_t)n;
				buf[n] = '\0';
			}
		}
		close(fd);
	}
	return buf ? buf : xstrdup("");
}

/*
 * With TLS inspection the sandbox trusts the session CA besides the host's
 * roots, and only this sandbox does. /etc/ssl is built on the sandbox's
 * tmpfs instead of being bound whole: every host entry but certs/ bound or
 * linked as etc_bind_entry does; certs/ a directory of its own holding the
 * host's entries (links recreated as they are — Debian's point into
 * /usr/share/ca-certificates or at each other — files and directories bound
 * read-only); then ca-certificates.crt, the host's bundle with the session
 * CA appended (SSL_CERT_FILE, and OpenSSL's default file through
 * /usr/lib/ssl/cert.pem); boxy-session-ca.pem, the CA alone
 * (NODE_EXTRA_CA_CERTS); and HASH.N, the link OpenSSL's hashed lookup
 * (SSL_CERT_DIR, -CApath) finds it by.
 */
static int etc_ssl_with_ca(struct mount_ctx *ctx, char **err)
{
	const struct plan *p = ctx->plan;
	int etc = -1, certs = -1, hostssl = -1, hostcerts = -1, r = -1;
	char *bundle = NULL, *text = NULL, link[16], target[PATH_MAX];
	size_t blen;
	DIR *d = NULL;
	struct dirent *de;

	etc = mount_open_in(ctx->root, "/etc", O_PATH | O_DIRECTORY);
	if (etc < 0 || mkdirat(etc, "ssl", 0755) < 0) {
		set_err_errno(err, "mkdir /etc/ssl");
		goto out;
	}
	hostssl = mount_open_in(ctx->oldroot, "/etc/ssl", O_RDONLY | O_DIRECTORY);
	if (hostssl >= 0) {
		d = fdopendir(hostssl);
		if (!d) {
			set_err_errno(err, "read /etc/ssl");
			goto out;
		}
		hostssl = -1;
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    strcmp(de->d_name, "certs") == 0)
				continue;
			if (etc_bind_entry(ctx, dirfd(d), "/etc/ssl", -1, de->d_name, err) < 0)
				goto out;
		}
		closedir(d);
		d = NULL;
	}
	if (mp_ensure_dir_close(ctx, PLAN_CA_DIR, err) < 0)
		goto out;
	certs = mount_open_in(ctx->root, PLAN_CA_DIR, O_PATH | O_DIRECTORY);
	if (certs < 0) {
		set_err_errno(err, "%s", PLAN_CA_DIR);
		goto out;
	}
	hostcerts = mount_open_in(ctx->oldroot, PLAN_CA_DIR, O_RDONLY | O_DIRECTORY);
	if (hostcerts >= 0) {
		d = fdopendir(hostcerts);
		if (!d) {
			set_err_errno(err, "read %s", PLAN_CA_DIR);
			goto out;
		}
		hostcerts = -1;
		while ((de = readdir(d))) {
			ssize_t n;

			if (de->d_name[0] == '.' || strcmp(de->d_name, "ca-certificates.crt") == 0)
				continue;
			n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
			if (n >= 0) {
				target[n] = '\0';
				if (symlinkat(target, certs, de->d_name) < 0) {
					set_err_errno(err, "symlink %s/%s", PLAN_CA_DIR, de->d_name);
					goto out;
				}
				continue;
			}
			if (etc_bind_entry(ctx, dirfd(d), PLAN_CA_DIR, -1, de->d_name, err) < 0)
				goto out;
		}
	}
	bundle = ca_host_bundle(ctx, &blen);
	text = xasprintf("%s%s# boxy: this session's CA (TLS inspection, doc/http-inspection.md)\n%s",
			 bundle, blen && bundle[blen - 1] != '\n' ? "\n" : "", p->tls_ca_pem);
	if (file_write_inside(ctx, PLAN_CA_BUNDLE, text, strlen(text), 0644, err) < 0 ||
	    file_write_inside(ctx, PLAN_CA_FILE, p->tls_ca_pem, strlen(p->tls_ca_pem), 0644,
			      err) < 0)
		goto out;
	/* The first free HASH.N: a host root with the same subject hash keeps its name. */
	for (int i = 0; i < 100; i++) {
		snprintf(link, sizeof(link), "%.8s.%d", p->tls_ca_hash, i);
		if (symlinkat("boxy-session-ca.pem", certs, link) == 0)
			break;
		if (errno != EEXIST) {
			set_err_errno(err, "symlink %s/%s", PLAN_CA_DIR, link);
			goto out;
		}
	}
	r = 0;
out:
	if (d)
		closedir(d);
	close_keep_errno(hostssl);
	close_keep_errno(hostcerts);
	close_keep_errno(certs);
	close_keep_errno(etc);
	free(bundle);
	free(text);
	return r;
}

/* True when s is safe inside a colon-separated, newline-terminated record. */
static bool passwd_field_ok(const char *s)
{
	return s && *s && !strpbrk(s, ":\n\r");
}

/* Build /etc on the new root: synthesized identity files, host binds. */
static int setup_etc(struct mount_ctx *ctx, char **err)
{
	const struct plan *p = ctx->plan;
	const char *host = p->hostname && *p->hostname ? p->hostname : "boxy";
	char *passwd, *group, *hosts, *hostname, machine_id[34];
	unsigned char rnd[16];
	int hostetc, newetc = -1, r = -1;
	DIR *d;
	struct dirent *de;
	struct {
		const char *name;
		char *text;
	} files[8];
	size_t nfiles = 0;
	bool ssl_done = false;

	if (!passwd_field_ok(p->user) || !passwd_field_ok(p->home) ||
	    strpbrk(host, " \t\n\r#"))
		return set_err(err, "refusing to synthesize /etc: bad user, home or hostname");
	if (mkdirat(ctx->root, "etc", 0755) < 0)
		return set_err_errno(err, "mkdir /etc");
	/* machine-id identifies the host for good: a fresh one per run instead. */
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return set_err_errno(err, "getrandom");

	/* Root and nobody exist on every system; the user is the only other. */
	passwd = xasprintf("%s%s:x:%u:%u::%s:/bin/sh\n"
			   "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			   p->uid == 0 ? "" : "root:x:0:0:root:/root:/bin/sh\n",
			   p->user, p->uid, p->gid, p->home);
	group = xasprintf("%s%s:x:%u:\nnogroup:x:65534:\n",
			  p->gid == 0 ? "" : "root:x:0:\n", p->user, p->gid);
	hosts = xasprintf("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
			  "127.0.1.1\t%s\n", host);
	hostname = xasprintf("%s\n", host);
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(machine_id + 2 * i, 3, "%02x", rnd[i]);
	machine_id[32] = '\n';
	machine_id[33] = '\0';

	files[nfiles].name = "passwd", files[nfiles++].text = passwd;
	files[nfiles].name = "group", files[nfiles++].text = group;
	files[nfiles].name = "hosts", files[nfiles++].text = hosts;
	files[nfiles].name = "hostname", files[nfiles++].text = hostname;
	files[nfiles].name = "machine-id", files[nfiles++].text = xstrdup(machine_id);
	/*
	 * The gateway answers DNS once the network exists, at both its addresses,
	 * and --tailscale's MagicDNS suffix is the search domain, so a bare "nas"
	 * is asked as nas.SUFFIX first, as on the host. Under --net none nothing
	 * listens at 10.0.2.2 and lookups fail fast, which is the point.
	 */
	files[nfiles].name = "resolv.conf";
	files[nfiles++].text = p->net == NET_PUBLIC || p->net == NET_ALLOWLIST ?
			       sandbox_net_resolv_conf(p->dns_search) :
			       xstrdup("nameserver 10.0.2.2\n");
	files[nfiles].name = "nsswitch.conf", files[nfiles++].text = xstrdup(
		"passwd: files\ngroup: files\nshadow: files\ngshadow: files\n"
		"hosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n"
		"ethers: files\nrpc: files\nnetgroup: files\n");
	for (size_t i = 0; i < nfiles; i++) {
		char *path = xasprintf("/etc/%s", files[i].name);
		int w = file_write_inside(ctx, path, files[i].text, strlen(files[i].text), 0644,
					  err);

		free(path);
		if (w < 0)
			goto out;
	}
	{
		int etc = mount_open_in(ctx->root, "/etc", O_PATH | O_DIRECTORY);

		/* mount(8), df and friends read /etc/mtab. */
		if (etc < 0 || symlinkat("../proc/self/mounts", etc, "mtab") < 0) {
			set_err_errno(err, "symlink /etc/mtab");
			close_keep_errno(etc);
			goto out;
		}
		close(etc);
	}

	hostetc = mount_open_in(ctx->oldroot, "/etc", O_RDONLY | O_DIRECTORY);
	if (hostetc < 0) {
		/* a host without /etc: only the synthesized files (and the session CA) */
		r = p->tls_ca_pem ? etc_ssl_with_ca(ctx, err) : 0;
		goto out;
	}
	d = fdopendir(hostetc);
	if (!d) {
		set_err_errno(err, "read /etc");
		close(hostetc);
		goto out;
	}
	/* Our /etc, for bind_beneath: made above on the new root's tmpfs (else -1: the slow path). */
	newetc = mount_open_in(ctx->root, "/etc", O_PATH | O_DIRECTORY);
	if (newetc >= 0 && !on_scratch(ctx, newetc)) {
		close(newetc);
		newetc = -1;
	}
	while ((de = readdir(d))) {
		bool want = false;

		if (de->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(etc_from_host) && !want; i++)
			want = fnmatch(etc_from_host[i], de->d_name, 0) == 0;
		if (want && p->tls_ca_pem && strcmp(de->d_name, "ssl") == 0) {
			ssl_done = true;
			if (etc_ssl_with_ca(ctx, err) < 0) {
				closedir(d);
				goto out;
			}
			continue;
		}
		if (want && etc_bind_entry(ctx, dirfd(d), "/etc", newetc, de->d_name, err) < 0) {
			closedir(d);
			goto out;
		}
	}
	closedir(d);
	/* A host without /etc/ssl still gets the session CA, alone. */
	if (p->tls_ca_pem && !ssl_done && etc_ssl_with_ca(ctx, err) < 0)
		goto out;
	r = 0;
out:
	if (newetc >= 0)
		close(newetc);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i].text);
	return r;
}

/* ---- step 5: /dev ----------------------------------------------------- */

/* A tmpfs /dev with the harmless character devices bound from the host (a
 * user namespace cannot mknod), a private devpts, and /dev/shm. */
static int setup_dev(struct mount_ctx *ctx, char **err)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom" };
	static const char *const links[][2] = {
		{ "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
		{ "ptmx", "pts/ptmx" },
	};
	/*
	 * A new devpts instance holds only the ptys the sandbox opens itself:
	 * mounted always, since script, expect and pty-based test suites need
	 * it, and it shows nothing of the host's terminals.
	 */
	static const char *const pts_opts[] = {
		"newinstance", NULL, "ptmxmode", "0666", "mode", "0620", NULL,
	};
	char path[32];
	int dev, hostdev, tree, r = 0;

	/* nodev on /dev itself is fine: each node is its own bind mount. */
	if (tmpfs_at(ctx, "/dev", 1 << 20, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		     MOUNT_ATTR_NOEXEC, err) < 0)
		return -1;
	dev = mount_open_in(ctx->root, "/dev", O_PATH | O_DIRECTORY);
	if (dev < 0)
		return set_err_errno(err, "/dev");
	/* Each node from the host's /dev opened once to ours (bind_beneath); a
	 * node that is a link there takes the full walk (bind_host). */
	hostdev = mount_open_in(ctx->oldroot, "/dev", O_PATH | O_DIRECTORY);
	for (size_t i = 0; i < ARRAY_SIZE(nodes) + 1 && r >= 0; i++) {
		const char *n = i < ARRAY_SIZE(nodes) ? nodes[i] : "tty";

		if (i == ARRAY_SIZE(nodes) && !ctx->plan->tty)
			break;
		snprintf(path, sizeof(path), "/dev/%s", n);
		r = hostdev < 0 ? 1 : bind_beneath(ctx, hostdev, dev, "/dev", n,
						   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
		if (r == 1) {
			r = bind_host(ctx, path, path, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
			if (r == 1)
				r = 2;
		}
		if (r == 2 && i < ARRAY_SIZE(nodes))
			r = set_err(err, "host has no %s", path);
	}
	close_keep_errno(hostdev);
	for (size_t i = 0; i < ARRAY_SIZE(links) && r >= 0; i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			r = set_err_errno(err, "symlink /dev/%s", links[i][0]);
	close_keep_errno(dev);
	if (r < 0)
		return -1;
	tree = fs_create("devpts", pts_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (tree < 0)
		return set_err_errno(err, "devpts");
	r = mount_at(ctx, tree, "/dev/pts", MP_DIR, err);
	close(tree);
	if (r < 0)
		return -1;
	return tmpfs_at(ctx, "/dev/shm", ctx->plan->tmpfs_size, 01777, BIND_ATTR_RW, err);
}

/* ---- step 6: /proc ---------------------------------------------------- */

/* Files of /proc that tell a payload about the host kernel and hardware,
 * or let it poke them: /dev/null goes over each. */
static const char *const proc_masked_files[] = {
	"kcore", "kallsyms", "keys", "key-users", "timer_list", "sched_debug",
	"sysrq-trigger", "kmsg", "latency_stats", "timer_stats", "modules",
	"iomem", "ioports", "slabinfo", "vmallocinfo", "pagetypeinfo", "zoneinfo",
	"buddyinfo", "lockdep", "lockdep_chains", "lockdep_stats", "config.gz",
	"mtrr", "kpagecount", "kpageflags", "kpagecgroup", "softirqs", "interrupts",
};
/* Directories of the same kind: an empty read-only tmpfs goes over each. */
static const char *const proc_masked_dirs[] = {
	"acpi", "asound", "bus", "driver", "fs", "irq", "scsi", "tty",
	"dynamic_debug", "sysvipc",
};

/*
 * A procfs of the sandbox's own pid namespace, mounted while the host's
 * /proc is still visible at /oldroot/proc (the kernel lets a user namespace
 * mount proc only when an unobscured one is already in view). Not
 * subset=pid: that hides cpuinfo and meminfo, which programs read.
 *
 * The directories are masked by one empty tmpfs, read-only down to its
 * superblock ("ro"), attached over the first and cloned over the others:
 * a new tmpfs superblock costs 30-60 us (the shrinker and list_lru it
 * registers), a clone of a mount 5; ten of them were a third of the stage.
 * Each mask is still its own read-only mount (the escape suite's
 * proc-masks-mounted reads them from mountinfo), and none can be written:
 * the filesystem behind them refuses it too.
 */
static int setup_proc(struct mount_ctx *ctx, char **err)
{
	static const char *const ro_opts[] = { "size", "4096", "mode", "0555", "ro", NULL, NULL };
	char path[64];
	int tree, null, mask = -1, r;

	tree = fs_create("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (tree < 0)
		return set_err_errno(err, "mount proc");
	r = mount_at(ctx, tree, "/proc", MP_DIR, err);
	close(tree);
	if (r < 0)
		return -1;

	null = mount_open_in(ctx->root, "/dev/null", O_PATH);
	if (null < 0)
		return set_err_errno(err, "/dev/null");
	for (size_t i = 0; i < ARRAY_SIZE(proc_masked_files); i++) {
		int dst;

		snprintf(path, sizeof(path), "/proc/%s", proc_masked_files[i]);
		dst = mount_open_in(ctx->root, path, O_PATH);
		if (dst < 0)
			continue;       /* this kernel has no such file */
		tree = clone_tree(null, BIND_ATTR_RO | MOUNT_ATTR_NOEXEC);
		if (tree < 0 || attach(tree, dst) < 0) {
			set_err_errno(err, "mask %s", path);
			close_keep_errno(tree);
			close(dst);
			close(null);
			return -1;
		}
		close(tree);
		close(dst);
	}
	close(null);
	for (size_t i = 0; i < ARRAY_SIZE(proc_masked_dirs); i++) {
		int dst;

		snprintf(path, sizeof(path), "/proc/%s", proc_masked_dirs[i]);
		dst = mount_open_in(ctx->root, path, O_PATH | O_DIRECTORY);
		if (dst < 0)
			continue;
		tree = mask < 0 ? fs_create("tmpfs", ro_opts, BIND_ATTR_RO | MOUNT_ATTR_NOEXEC)
				: clone_tree(mask, BIND_ATTR_RO | MOUNT_ATTR_NOEXEC);
		if (tree < 0 || attach(tree, dst) < 0) {
			set_err_errno(err, "mask %s", path);
			close_keep_errno(tree);
			close(dst);
			close_keep_errno(mask);
			return -1;
		}
		/* The first mask, attached now, is what the others are cloned from. */
		if (mask < 0)
			mask = tree;
		else
			close(tree);
		close(dst);
	}
	close_keep_errno(mask);
	/* /proc/sys stays readable (kernel/osrelease, …) but not writable. */
	if (mount_rebind_inside(ctx, "/proc/sys", BIND_ATTR_RO | MOUNT_ATTR_NOEXEC, err) < 0)
		return -1;
	return 0;
}

/* ---- steps 7–8: scratch, work directory, the user's mounts ------------ */

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Create a directory and its parents on the host (mkdir entries), 0700.
 * Each prefix is opened through the path guard, so a link a run planted
 * in a writable root (node_modules -> ~) cannot make us create directories
 * outside it; bind_host refuses such a path afterwards anyway.
 */
static int host_mkdir_p(struct mount_ctx *ctx, const char *path, char **err)
{
	struct path_roots roots = { ctx->plan->roots, strv_len(ctx->plan->roots) };
	char *norm = path_absolute(path, "/");
	char *end = norm;
	int r = 0;

	while (r == 0 && *end) {
		char save;
		int fd;

		end = strchr(end + 1, '/');
		if (!end)
			end = norm + strlen(norm);
		save = *end;
		*end = '\0';
		fd = path_guard_open(ctx->oldroot, norm, O_PATH | O_DIRECTORY, 0, &roots, 0, NULL);
		if (fd < 0 && errno == ENOENT) {
			char *slash = strrchr(norm, '/');
			char *parent = xstrndup(norm, (size_t)(slash - norm));

			fd = path_guard_open(ctx->oldroot, parent[0] ? parent : "/",
					     O_PATH | O_DIRECTORY, 0, &roots, 0, NULL);
			free(parent);
			if (fd >= 0 && mkdirat(fd, slash + 1, 0700) < 0 && errno != EEXIST) {
				close_keep_errno(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			r = set_err_errno(err, "mkdir %s", norm);
		else
			close(fd);
		*end = save;
	}
	free(norm);
	return r;
}

/*
 * --copy / --copy-ro: read the host file (symlinks followed, a regular file
 * of at most COPY_MAX_BYTES required) and write it at dst on the sandbox's
 * tmpfs, 0600. A read-only copy is then bound onto itself read-only; a
 * writable one on the root tmpfs likewise but writable, so it survives the
 * root turning read-only. A copy under $HOME or /tmp stays a plain file,
 * which programs can replace by rename (Claude Code does, for its config).
 */
static int do_copy(struct mount_ctx *ctx, const struct mount_spec *ms, const char *dst,
		   char **err)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, r = -1, dfd;
	char *why = NULL;

	fd = open_host_source(ctx, ms->src, O_RDONLY | O_NOCTTY | O_NONBLOCK, &why);
	if (fd < 0) {
		if (errno == ENOENT) {
			free(why);
			note_skipped(ctx, "%s %s: %s", spec_flag(ms->kind), ms->src,
				     strerror(errno));
			return 0;
		}
		return source_err(err, spec_flag(ms->kind), ms->src, why);
	}
	if (fstat(fd, &st) < 0) {
		set_err_errno(err, "%s %s", spec_flag(ms->kind), ms->src);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)COPY_MAX_BYTES) {
		set_err(err, "%s %s: %s", spec_flag(ms->kind), ms->src,
			S_ISREG(st.st_mode) ? "larger than 64MiB" : "not a regular file");
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_err_errno(err, "read %s", ms->src);
			goto out;
		}
		if (n == 0)
			break;          /* shrank while we read: copy what is there */
		len += (size_t)n;
	}
	if (file_write_inside(ctx, dst, buf, len, 0600, err) < 0)
		goto out;
	dfd = mount_open_in(ctx->root, dst, O_PATH);
	if (dfd < 0) {
		set_err_errno(err, "%s", dst);
		goto out;
	}
	{
		struct stat ds;
		bool on_root = fstat(dfd, &ds) == 0 && ds.st_dev == ctx->root_dev;

		close(dfd);
		if (ms->kind == MOUNT_COPY_RO)
			r = mount_rebind_inside(ctx, dst, BIND_ATTR_RO, err) < 0 ? -1 : 0;
		else if (on_root)
			r = mount_rebind_inside(ctx, dst, BIND_ATTR_RW, err) < 0 ? -1 : 0;
		else
			r = 0;
	}
out:
	free(buf);
	close(fd);
	return r;
}

/* One entry of the sorted pass. */
static int do_entry(struct mount_ctx *ctx, const struct entry *e, char **err)
{
	const struct mount_spec *ms = e->spec;
	int r;

	switch (e->kind) {
	case ENTRY_TMPFS:
		return tmpfs_at(ctx, e->dst, ctx->plan->tmpfs_size, e->mode, BIND_ATTR_RW, err);
	case ENTRY_WORKDIR:
		r = bind_host(ctx, ctx->plan->workdir, e->dst, BIND_ATTR_RW, err);
		if (r == 1)
			return set_err(err, "work directory %s: %s", ctx->plan->workdir,
				       strerror(ENOENT));
		return r;
	case ENTRY_SPEC:
		break;
	}
	switch (ms->kind) {
	case MOUNT_MKDIR:
		if (host_mkdir_p(ctx, ms->src, err) < 0)
			return -1;
		/* fall through */
	case MOUNT_RW:
	case MOUNT_RO:
		r = bind_host(ctx, ms->src, e->dst,
			      ms->kind == MOUNT_RO ? BIND_ATTR_RO : BIND_ATTR_RW, err);
		if (r == 1)
			note_skipped(ctx, "%s %s: %s", spec_flag(ms->kind), ms->src,
				     strerror(ENOENT));
		return r < 0 ? -1 : 0;
	case MOUNT_COPY:
	case MOUNT_COPY_RO:
		return do_copy(ctx, ms, e->dst, err);
	case MOUNT_PROTECT:
		break;          /* a later pass */
	}
	return 0;
}

/* ---- the stage --------------------------------------------------------- */

/* Step 2: staging tmpfs over /tmp, pivot into it; /newroot gets the root tmpfs. */
static int stage_enter(struct mount_ctx *ctx, char **err)
{
	char sz[32];
	const char *root_opts[] = { "size", sz, "mode", "0755", NULL };
	int tree;

	if (mount("tmpfs", STAGE_DIR, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") < 0)
		return set_err_errno(err, "tmpfs " STAGE_DIR);
	if (mkdir(STAGE_DIR "/oldroot", 0700) < 0 || mkdir(STAGE_DIR "/newroot", 0755) < 0)
		return set_err_errno(err, "mkdir in " STAGE_DIR);
	/*
	 * The root tmpfs turns read-only before the payload runs, so its size
	 * only bounds what this stage writes (/etc, mount points, copies).
	 */
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)ctx->plan->tmpfs_size);
	tree = fs_create("tmpfs", root_opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (tree < 0)
		return set_err_errno(err, "tmpfs for the new root");
	if (move_mount(tree, "", AT_FDCWD, STAGE_DIR "/newroot", MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		set_err_errno(err, "mount the new root");
		close(tree);
		return -1;
	}
	close(tree);
	if (chdir(STAGE_DIR) < 0 || syscall(SYS_pivot_root, ".", "oldroot") < 0 || chdir("/") < 0)
		return set_err_errno(err, "pivot_root into the staging tmpfs");
	ctx->oldroot = open("/oldroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ctx->root = open("/newroot", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->oldroot < 0 || ctx->root < 0)
		return set_err_errno(err, "open staging roots");
	scratch_add(ctx, ctx->root);
	ctx->root_dev = ctx->scratch[0];
	return 0;
}

/* Step 10: drop the host, make /newroot the root, read-only, cd workdir. */
static int stage_leave(struct mount_ctx *ctx, char **err)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };

	close(ctx->oldroot);
	close(ctx->root);
	ctx->oldroot = ctx->root = -1;
	/*
	 * pivot_root(".", ".") stacks the staging root, with the host's root
	 * still mounted at its /oldroot, under the new one at "/"; the detach
	 * below takes it away with everything mounted below it (a lazy unmount
	 * is recursive: the host's tree goes with the staging root, locked
	 * submounts still attached to their parents inside the detached tree),
	 * leaving no put_old directory. Everything is private (step 1): the
	 * detach propagates nowhere. One detach, not one for /oldroot and one
	 * for the staging root: each waits for an RCU grace period when it
	 * frees the mounts (namespace_unlock), 0.05 ms on an idle machine and
	 * up to tens of ms on a busy one (perf trace of umount2).
	 */
	if (chdir("/newroot") < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return set_err_errno(err, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return set_err_errno(err, "detach the staging root and the host's root below it");
	/* Only the root mount: /tmp, $HOME and the rw binds keep their rights. */
	if (mount_setattr(AT_FDCWD, "/", 0, &ro, sizeof(ro)) < 0)
		return set_err_errno(err, "make / read-only");
	if (chdir(ctx->plan->workdir) < 0)
		return set_err_errno(err, "chdir %s", ctx->plan->workdir);
	return 0;
}

/* Steps 7–9 and the --protect pass. */
static int setup_user(struct mount_ctx *ctx, char **err)
{
	const struct plan *p = ctx->plan;
	struct entry *ents = NULL;
	size_t n = 0;
	int r = -1;

	{
		struct entry *e;

		e = xappend(&ents, &n, sizeof(*e));
		e->kind = ENTRY_TMPFS, e->dst = xstrdup("/tmp"), e->mode = 01777;
		e = xappend(&ents, &n, sizeof(*e));
		e->kind = ENTRY_TMPFS, e->dst = xstrdup(p->home), e->mode = 0700;
		e = xappend(&ents, &n, sizeof(*e));
		e->kind = ENTRY_WORKDIR, e->dst = xstrdup(p->workdir);
	}
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct mount_spec *ms = &p->mounts[i];
		struct entry *e;

		if (ms->kind == MOUNT_PROTECT || !ms->src || ms->src[0] != '/')
			continue;
		e = xappend(&ents, &n, sizeof(*e));
		e->kind = ENTRY_SPEC;
		e->spec = ms;
		e->dst = xstrdup(ms->dst ? ms->dst : ms->src);
	}
	for (size_t i = 0; i < n; i++) {
		ents[i].depth = path_depth(ents[i].dst);
		ents[i].order = i;
	}
	/* Deeper after shallower: --rw ~/proj --ro ~/proj/secrets leaves secrets
	 * read-only whatever order they were given in. */
	qsort(ents, n, sizeof(*ents), entry_cmp);
	for (size_t i = 0; i < n; i++)
		if (do_entry(ctx, &ents[i], err) < 0)
			goto out;

	if (!p->allow_git_write) {
		for (size_t i = 0; i < n; i++) {
			const struct entry *e = &ents[i];
			bool rw = e->kind == ENTRY_WORKDIR ||
				  (e->kind == ENTRY_SPEC && (e->spec->kind == MOUNT_RW ||
							     e->spec->kind == MOUNT_MKDIR));

			if (rw && mount_git_protect_tree(ctx, e->dst, err) < 0)
				goto out;
		}
	}

	/* --protect last, deepest last, so it wins over every writable mount. */
	for (size_t i = 0; i < n; i++)
		free(ents[i].dst);
	free(ents);
	ents = NULL;
	n = 0;
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct mount_spec *ms = &p->mounts[i];
		struct entry *e;

		if (ms->kind != MOUNT_PROTECT || !ms->src || ms->src[0] != '/')
			continue;
		e = xappend(&ents, &n, sizeof(*e));
		e->kind = ENTRY_SPEC;
		e->spec = ms;
		e->dst = xstrdup(ms->src);
		e->depth = path_depth(e->dst);
		e->order = n;
	}
	if (n)
		qsort(ents, n, sizeof(*ents), entry_cmp);
	for (size_t i = 0; i < n; i++) {
		int q = mount_pin_parents(ctx, ents[i].dst, err);

		if (q == 0)
			q = mount_rebind_inside(ctx, ents[i].dst, BIND_ATTR_RO, err);

		if (q < 0)
			goto out;
		if (q == 1)
			note_skipped(ctx, "--protect %s: %s", ents[i].dst, strerror(ENOENT));
	}
	/* The decoys last: where the user's mounts and copies put something, none goes. */
	if (mount_write_decoys(ctx, err) < 0)
		goto out;
	r = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(ents[i].dst);
	free(ents);
	return r;
}

int mount_setup_report(const struct plan *plan, char ***skipped, char **err)
{
	struct mount_ctx ctx = { .plan = plan, .oldroot = -1, .root = -1, .skipped = skipped };
	struct plan p = *plan;
	int r = -1;

	/* Made absolute and normal once, by the client; here only checked (doc/internals-spec.md). */
	if (!path_is_normal(p.workdir) || !path_is_normal(p.home))
		return set_err(err, "work directory and home must be absolute paths");
	for (size_t i = 0; i < p.nmounts; i++)
		if ((p.mounts[i].src && p.mounts[i].src[0] == '/' && !path_is_normal(p.mounts[i].src)) ||
		    (p.mounts[i].dst && !path_is_normal(p.mounts[i].dst)))
			return set_err(err, "mount paths must be absolute, normal paths");
	if (strcmp(p.workdir, "/") == 0)
		return set_err(err, "refusing to expose / as the work directory");
	if (!p.tmpfs_size)
		p.tmpfs_size = RUNSPEC_DEFAULT_TMPFS;
	ctx.plan = &p;

	/* Step 1: nothing done from here on may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return set_err_errno(err, "make mounts private");
	if (stage_enter(&ctx, err) < 0 ||
	    setup_system(&ctx, err) < 0 ||
	    setup_etc(&ctx, err) < 0 ||
	    setup_dev(&ctx, err) < 0 ||
	    setup_proc(&ctx, err) < 0 ||
	    setup_user(&ctx, err) < 0 ||
	    stage_leave(&ctx, err) < 0)
		goto out;
	r = 0;
out:
	if (ctx.oldroot >= 0)
		close(ctx.oldroot);
	if (ctx.root >= 0)
		close(ctx.root);
	return r;
}

int mount_setup(const struct plan *plan, char **err)
{
	return mount_setup_report(plan, NULL, err);
}
