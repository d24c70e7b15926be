/*
 * common/landlock-abi.c — the ABI probe and the ruleset calls of
 * common/landlock-abi.h. Raw syscalls: glibc has no wrappers, and Debian
 * 12's headers stop at ABI 1, so the structure is declared here with the
 * kernel's layout.
 */
#include <config.h>

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/landlock-abi.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)

/* struct landlock_ruleset_attr as of ABI 6; older kernels get a shorter prefix. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;        /* ABI 4 */
	uint64_t scoped;                    /* ABI 6 */
};

/* The 13 filesystem rights of ABI 1. */
#define LL_FS_ABI1 ((1ULL << 13) - 1)

/* The rights an ABI knows (see the header). */
void landlock_abi_masks(int abi, struct landlock_info *info)
{
	memset(info, 0, sizeof(*info));
	info->abi = abi;
	if (abi < 1)
		return;
	info->fs_handled = LL_FS_ABI1;
	if (abi >= 2)
		info->fs_handled |= LL_FS_REFER;
	if (abi >= 3)
		info->fs_handled |= LL_FS_TRUNCATE;
	if (abi >= 4)
		info->net_handled = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (abi >= 5)
		info->fs_handled |= LL_FS_IOCTL_DEV;
	if (abi >= 6)
		info->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	/* ABI 7 adds audit-logging flags and ABI 8 thread synchronisation:
	 * neither is a right boxy's policy depends on. */
	if (abi >= 9)
		info->fs_handled |= LL_FS_RESOLVE_UNIX;
}

/* Ask the kernel for its ABI (0 and -1 when Landlock is unavailable). */
int landlock_probe(struct landlock_info *info)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	if (abi < 0) {
		/* ENOSYS: not built in; EOPNOTSUPP: built in but not in lsm=. */
		landlock_abi_masks(0, info);
		return -1;
	}
	landlock_abi_masks((int)abi, info);
	return 0;
}

/* A ruleset of the given handled rights, with the structure length the ABI defines. */
int landlock_ruleset_create(int abi, uint64_t fs_handled, uint64_t net_handled, uint64_t scoped)
{
	struct ll_ruleset_attr attr;
	size_t size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = fs_handled;
	attr.handled_access_net = net_handled;
	attr.scoped = scoped;
	return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
}

/* landlock_restrict_self. */
int landlock_ruleset_enforce(int ruleset)
{
	return syscall(SYS_landlock_restrict_self, ruleset, 0) < 0 ? -1 : 0;
}
