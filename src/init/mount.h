/*
 * init/mount.h — private to the mount stage: the state of one
 * mount_setup() and the few helpers its two files share (init/mount.c
 * builds the root, init/mount-git.c protects repositories in it).
 * Other modules use init/stages.h, never this.
 */
#ifndef BOXY_SANDBOX_MOUNT_H
#define BOXY_SANDBOX_MOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/types.h>

#include "init/plan.h"

#define MOUNT_MAX_SCRATCH    8
#define MOUNT_MAX_GITDIRS    1024       /* gitdirs protected per run, at most (~5 mounts each) */
#define MOUNT_MAX_GITREFS    256        /* hooksPath and include targets per run, at most */

/* Attributes of everything bound from the host read-only. */
#define BIND_ATTR_RO  (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
/* Attributes of writable binds and scratch tmpfs. */
#define BIND_ATTR_RW  (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

struct mount_ctx {
	const struct plan *plan;
	int oldroot;                    /* O_PATH: the host's root, /oldroot */
	int root;                       /* O_PATH: the new root, /newroot */
	dev_t root_dev;                 /* the new root's tmpfs */
	dev_t scratch[MOUNT_MAX_SCRATCH]; /* tmpfs made here: mount points may be created there */
	size_t nscratch;
	char ***skipped;                /* notes for the caller, or NULL */
	struct {                        /* gitdirs already protected, by (dev, ino) */
		dev_t dev;
		ino_t ino;
	} gitdirs[MOUNT_MAX_GITDIRS];
	size_t ngitdirs;
	size_t ngitrefs;                /* hooksPath and include targets protected */
};

/*
 * Open an absolute path inside the tree rooted at rootfd as if rootfd were
 * "/" (openat2 RESOLVE_IN_ROOT, magic links refused). O_CLOEXEC is added.
 */
int mount_open_in(int rootfd, const char *path, int flags);

/*
 * Bind the sandbox path onto itself with attr (MOUNT_ATTR_*), recursively.
 * 0 done, 1 path does not exist inside, -1 with *err.
 */
int mount_rebind_inside(struct mount_ctx *ctx, const char *path, uint64_t attr, char **err);

/*
 * Make every directory above path a mount point (bound onto itself,
 * read-write, recursively), so none can be renamed away and rebuilt with a
 * payload's content; mount roots, read-only mounts and our tmpfs are left
 * as they are. 0 done, -1 with *err.
 */
int mount_pin_parents(struct mount_ctx *ctx, const char *path, char **err);

/*
 * Bind path read-only, its parents pinned, when it lies on a writable bind
 * from the host. 0 done or nothing to do, 1 absent, -1 with *err.
 */
int mount_protect_ro(struct mount_ctx *ctx, const char *path, char **err);

/*
 * Step 11 (init/decoys.c): write the plan's decoy credentials into $HOME,
 * where nothing of the user's is; init/decoys.c remembers which it wrote for
 * decoys_hand_over. 0, or -1 with *err when $HOME cannot be opened.
 */
int mount_write_decoys(struct mount_ctx *ctx, char **err);

/* Step 9 (init/mount-git.c): protect the repositories at root, a writable
 * mount's path inside, and one level below it. */
int mount_git_protect_tree(struct mount_ctx *ctx, const char *root, char **err);

/*
 * Pure helpers of the git protection, exported for the unit tests: the value
 * of section.key in a git config text (malloc'd, "true" for a bare key, NULL
 * when absent), and whether a config value is git's true.
 */
char *mount_git_config_value(const char *text, const char *section, const char *key);
/*
 * Every value of section.key, in order, as a strv (NULL when none); with
 * any_sub, [section "sub"] for any sub matches too (includeIf.*.path).
 */
char **mount_git_config_values(const char *text, const char *section, const char *key,
			       bool any_sub);
bool mount_git_bool_true(const char *v);

#endif
