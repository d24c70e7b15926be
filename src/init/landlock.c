/*
 * init/landlock.c — Landlock, the filesystem (and TCP port) layer under
 * the mount namespace.
 *
 * The mount stage decides what exists inside the sandbox and whether it is
 * read-only; Landlock decides what the payload may do with what exists, and
 * it keeps deciding if a mistake in the mount stage left something
 * reachable. boxy asks for every right the kernel's ABI knows (a right that
 * is not "handled" is simply allowed) and grants back, per path:
 *
 *   /                        read_dir only: directory listing is tree-wide
 *   /usr /etc /bin … /opt    read, execute, list
 *   /proc /dev               read, list; the few devices a program writes
 *                            (null, zero, full, tty, pts, ptmx) read/write;
 *                            /dev/shm everything
 *   /tmp, $HOME, workdir,
 *   --rw, mkdir, --copy      everything but making device nodes
 *   --ro, --protect,
 *   --copy-ro                read, execute, list (writes are refused by the
 *                            read-only bind; Landlock unions rights along the
 *                            path, so it cannot take away what a writable
 *                            parent grants)
 *
 * What a lower ABI cannot enforce is listed by landlock_losses() for
 * `boxy doctor` and the audit log. The one loss with a replacement is the
 * unix-socket restriction (ABI 9): landlock_mask_sockets() covers the
 * sockets found under read-only paths at start.
 *
 * The ABI probe and the ruleset calls are common/landlock-abi.c's (boxy-net
 * uses them too); adding rules is a raw syscall here, glibc having no
 * wrapper and Debian 12's headers stopping at ABI 1, so the rule structures
 * are declared with the kernel's layout.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init/stages.h"
#include "common/util.h"

#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif

#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

/* Read-only use of a tree: read, list, run. */
#define LL_FS_READ_EXEC (LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE)

/* The devices a program expects to write (and ioctl: terminals need TCGETS). */
#define LL_FS_DEVICE_RW (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

/* Never granted: a user namespace cannot mknod devices anyway; this is the layer below. */
#define LL_FS_NEVER (LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK)

/* The resolver port, allowed whenever TCP connects are restricted (DNS over TCP). */
#define LL_DNS_PORT 53

/* System directories exposed read-only by the mount stage (skipped when absent). */
static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
};

static const char *const rw_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts",
};

/* What each ABI step brings that boxy relies on, worded as what is lost without it. */
static const struct {
	int abi;
	const char *loss;
} abi_losses[] = {
	{ 2, N_("files cannot be renamed or linked into another directory (needs ABI 2); "
		"this costs function, not safety") },
	{ 3, N_("truncate() is not checked by Landlock (needs ABI 3); "
		"read-only bind mounts still refuse it") },
	{ 4, N_("TCP connect() is not limited to the run's ports (needs ABI 4); "
		"the network broker still decides every connection") },
	{ 5, N_("ioctl() on device files is not restricted (needs ABI 5); "
		"seccomp still filters TIOCSTI and TIOCLINUX") },
	{ 6, N_("abstract unix sockets and signals are not scoped to the sandbox (needs ABI 6); "
		"the network and pid namespaces still separate them") },
	{ 9, N_("connect() to unix sockets under a --ro path is not restricted (needs ABI 9); "
		"replaced by masking the sockets present there when the run starts") },
};

size_t landlock_losses(int abi, const char **out, size_t max)
{
	size_t n = 0;

	if (abi < 1) {
		if (max > 0)
			out[n++] = N_("Landlock is not available: no filesystem layer under the "
				      "mount namespace (enable it with lsm=...,landlock)");
		return n;
	}
	for (size_t i = 0; i < ARRAY_SIZE(abi_losses) && n < max; i++)
		if (abi < abi_losses[i].abi)
			out[n++] = abi_losses[i].loss;
	return n;
}

/* Append one rule to the list. */
static void rule_add(struct landlock_rule **rules, size_t *n, const char *path, uint64_t access)
{
	struct landlock_rule *r = xappend(rules, n, sizeof(**rules));

	r->path = xstrdup(path);
	r->access = access;
}

/* The sandbox-side path of a mount entry. */
static const char *mount_inside(const struct mount_spec *m)
{
	return m->dst ? m->dst : m->src;
}

static bool mount_is_readonly(enum mount_kind k)
{
	return k == MOUNT_RO || k == MOUNT_PROTECT || k == MOUNT_COPY_RO;
}

/* True when a read-only mount lies at or below dir (the ABI 9 unix-socket rule). */
static bool contains_readonly(const struct plan *plan, const char *dir)
{
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct mount_spec *m = &plan->mounts[i];

		if (mount_is_readonly(m->kind) && path_has_prefix(mount_inside(m), dir))
			return true;
	}
	return false;
}

/* A writable rule, minus the unix-socket right when a --ro path lies beneath it. */
static void rule_add_writable(const struct plan *plan, struct landlock_rule **rules, size_t *n,
			      const char *path, uint64_t rw)
{
	uint64_t access = rw;

	if (contains_readonly(plan, path))
		access &= ~LL_FS_RESOLVE_UNIX;
	rule_add(rules, n, path, access);
}

size_t landlock_plan_rules(const struct plan *plan, uint64_t fs_handled,
			   struct landlock_rule **rules)
{
	uint64_t rw = fs_handled & ~LL_FS_NEVER;
	uint64_t ro = fs_handled & LL_FS_READ_EXEC;
	size_t n = 0;

	*rules = NULL;
	/* Listing everywhere, nothing else: programs walk directories constantly. */
	rule_add(rules, &n, "/", fs_handled & LL_FS_READ_DIR);
	for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++)
		rule_add(rules, &n, system_dirs[i], ro);
	rule_add(rules, &n, "/proc", fs_handled & (LL_FS_READ_FILE | LL_FS_READ_DIR));
	rule_add(rules, &n, "/dev", fs_handled & (LL_FS_READ_FILE | LL_FS_READ_DIR));
	for (size_t i = 0; i < ARRAY_SIZE(rw_devices); i++)
		rule_add(rules, &n, rw_devices[i], fs_handled & (LL_FS_DEVICE_RW | LL_FS_READ_DIR));
	rule_add(rules, &n, "/dev/shm", rw);
	rule_add_writable(plan, rules, &n, "/tmp", rw);
	if (plan->home)
		rule_add_writable(plan, rules, &n, plan->home, rw);
	if (plan->workdir)
		rule_add_writable(plan, rules, &n, plan->workdir, rw);
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct mount_spec *m = &plan->mounts[i];

		switch (m->kind) {
		case MOUNT_RW:
		case MOUNT_MKDIR:
		case MOUNT_COPY:
			rule_add_writable(plan, rules, &n, mount_inside(m), rw);
			break;
		case MOUNT_RO:
		case MOUNT_PROTECT:
		case MOUNT_COPY_RO:
			rule_add(rules, &n, mount_inside(m), ro);
			break;
		}
	}
	return n;
}

void landlock_rules_free(struct landlock_rule *rules, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rules[i].path);
	free(rules);
}

/*
 * Network: the broker is the real TCP policy; Landlock is the backstop that
 * filters by port alone. Under --net none there is nothing but loopback, and
 * restricting it would only break programs that talk to themselves (test
 * servers), so no TCP right is handled. With a port list, connect() is
 * limited to it plus 53 (DNS over TCP to the resolver). bind() is never
 * handled: the sandbox's network namespace has no inbound path, so a bound
 * port is reachable from inside the sandbox only.
 */
void landlock_plan_net(const struct plan *plan, int abi, uint64_t *net_handled,
		       uint16_t **ports, size_t *nports)
{
	*net_handled = 0;
	*ports = NULL;
	*nports = 0;
	if (abi < 4 || plan->net == NET_NONE || plan->nports == 0)
		return;
	*net_handled = LL_NET_CONNECT_TCP;
	*ports = xcalloc(plan->nports + 1, sizeof(**ports));
	for (size_t i = 0; i < plan->nports; i++)
		(*ports)[(*nports)++] = plan->ports[i];
	bool have_dns = false;
	for (size_t i = 0; i < *nports; i++)
		have_dns |= (*ports)[i] == LL_DNS_PORT;
	if (!have_dns)
		(*ports)[(*nports)++] = LL_DNS_PORT;
}

/* Add one path_beneath rule; a path that does not exist is skipped. */
static int apply_path_rule(int ruleset, const struct landlock_rule *r, char **err)
{
	struct ll_path_beneath_attr pb;
	struct stat st;
	int fd, rc = 0;

	if (r->access == 0)
		return 0;
	fd = open(r->path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return set_err_errno(err, "open %s", r->path);
	}
	if (fstat(fd, &st) < 0) {
		rc = set_err_errno(err, "stat %s", r->path);
		goto out;
	}
	pb.allowed_access = r->access;
	/* The kernel refuses directory-only rights on a file with EINVAL. */
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= LL_FS_FILE_RIGHTS;
	pb.parent_fd = fd;
	if (pb.allowed_access &&
	    syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		rc = set_err_errno(err, "landlock_add_rule %s", r->path);
out:
	close(fd);
	return rc;
}

int landlock_apply(const struct plan *plan, char **err)
{
	struct landlock_info info;
	struct landlock_rule *rules = NULL;
	uint16_t *ports = NULL;
	uint64_t net_handled;
	size_t nrules = 0, nports = 0;
	int abi, ruleset = -1, rc = -1;

	if (landlock_probe(&info) < 0)
		return set_err(err, "Landlock is not available in this kernel");
	abi = info.abi;
	/* Never more than the parent probed (and told the user about). */
	if (plan->landlock_abi > 0 && plan->landlock_abi < abi)
		abi = plan->landlock_abi;
	landlock_abi_masks(abi, &info);

	landlock_plan_net(plan, abi, &net_handled, &ports, &nports);
	ruleset = landlock_ruleset_create(abi, info.fs_handled, net_handled, info.scoped);
	if (ruleset < 0) {
		set_err_errno(err, "landlock_create_ruleset (ABI %d)", abi);
		goto out;
	}
	nrules = landlock_plan_rules(plan, info.fs_handled, &rules);
	for (size_t i = 0; i < nrules; i++)
		if (apply_path_rule(ruleset, &rules[i], err) < 0)
			goto out;
	for (size_t i = 0; i < nports; i++) {
		struct ll_net_port_attr np = { LL_NET_CONNECT_TCP, ports[i] };

		if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0) < 0) {
			set_err_errno(err, "landlock_add_rule tcp port %u", ports[i]);
			goto out;
		}
	}
	/* Needs no_new_privs (caps_drop_all set it) since there is no CAP_SYS_ADMIN left. */
	if (landlock_ruleset_enforce(ruleset) < 0) {
		set_err_errno(err, "landlock_restrict_self");
		goto out;
	}
	rc = 0;
out:
	if (ruleset >= 0)
		close(ruleset);
	landlock_rules_free(rules, nrules);
	free(ports);
	return rc;
}

/* ---- the unix-socket replacement below ABI 9 ----------------------------- */

#define MASK_MAX_DEPTH   64
#define MASK_MAX_ENTRIES 1000000

struct mask_walk {
	size_t entries;
	size_t masked;
	char **err;
};

/* Cover one socket with /dev/null: connect() then finds no socket and fails. */
static int mask_one(struct mask_walk *w, const char *path)
{
	if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0)
		return set_err_errno(w->err, "mask unix socket %s", path);
	w->masked++;
	return 0;
}

/* Walk dir (already open as dfd, which this closes) and mask every socket below it. */
static int mask_walk_dir(struct mask_walk *w, int dfd, const char *path, int depth)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth > MASK_MAX_DEPTH) {
		close(dfd);
		return set_err(w->err, "mask unix sockets: %s is nested deeper than %d levels",
			       path, MASK_MAX_DEPTH);
	}
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return set_err_errno(w->err, "mask unix sockets: open %s", path);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		char child[PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->entries > MASK_MAX_ENTRIES) {
			rc = set_err(w->err, "mask unix sockets: more than %d entries under the "
				     "read-only paths; name fewer or narrower --ro paths",
				     MASK_MAX_ENTRIES);
			break;
		}
		if ((size_t)snprintf(child, sizeof(child), "%s/%s",
				     strcmp(path, "/") ? path : "", de->d_name) >= sizeof(child)) {
			rc = set_err(w->err, "mask unix sockets: path too long under %s", path);
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			rc = set_err_errno(w->err, "mask unix sockets: stat %s", child);
			break;
		}
		if (S_ISSOCK(st.st_mode)) {
			rc = mask_one(w, child);
		} else if (S_ISDIR(st.st_mode)) {
			int cfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			/* A directory the user cannot read is one the payload cannot
			 * reach into either. */
			if (cfd < 0) {
				if (errno == EACCES || errno == ENOENT)
					continue;
				rc = set_err_errno(w->err, "mask unix sockets: open %s", child);
				break;
			}
			rc = mask_walk_dir(w, cfd, child, depth + 1);
		}
	}
	if (rc == 0 && errno != 0)
		rc = set_err_errno(w->err, "mask unix sockets: read %s", path);
	closedir(d);
	return rc;
}

int landlock_mask_sockets(const struct plan *plan, int abi, size_t *masked, char **err)
{
	struct mask_walk w = { 0, 0, err };

	if (masked)
		*masked = 0;
	if (abi >= LL_ABI_WANTED)
		return 0;
	for (size_t i = 0; i < plan->nmounts; i++) {
		const struct mount_spec *m = &plan->mounts[i];
		const char *path = mount_inside(m);
		struct stat st;

		if (m->kind != MOUNT_RO && m->kind != MOUNT_PROTECT)
			continue;
		/* A missing mount source was skipped by the mount stage. */
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISSOCK(st.st_mode)) {
			if (mask_one(&w, path) < 0)
				return -1;
		} else if (S_ISDIR(st.st_mode)) {
			int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0) {
				if (errno == EACCES)
					continue;
				return set_err_errno(err, "mask unix sockets: open %s", path);
			}
			if (mask_walk_dir(&w, fd, path, 0) < 0)
				return -1;
		}
	}
	if (masked)
		*masked = w.masked;
	return 0;
}
