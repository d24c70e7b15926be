/*
 * common/landlock-abi.h — the kernel's Landlock interface as boxy's two
 * confined programs both use it: boxy-init (init/landlock.c, the sandbox's
 * rules) and boxy-net (net/lockdown.c, every right handled and no rule).
 * The ABI probe, the rights each ABI knows, and the two system calls that
 * make and enforce a ruleset; what to allow is each program's own policy.
 */
#ifndef BOXY_COMMON_LANDLOCK_ABI_H
#define BOXY_COMMON_LANDLOCK_ABI_H

#include <stdint.h>

struct landlock_info {
	int abi;                    /* 0: Landlock unavailable */
	uint64_t fs_handled;        /* LANDLOCK_ACCESS_FS_* this ABI knows */
	uint64_t net_handled;       /* LANDLOCK_ACCESS_NET_* this ABI knows */
	uint64_t scoped;            /* LANDLOCK_SCOPE_* this ABI knows */
};

/*
 * Landlock's constants, defined here because Debian 12's <linux/landlock.h>
 * knows only ABI 1 (the kernel this runs on may know far more). Values are
 * the kernel's UAPI.
 */
#define LL_FS_EXECUTE        (1ULL << 0)
#define LL_FS_WRITE_FILE     (1ULL << 1)
#define LL_FS_READ_FILE      (1ULL << 2)
#define LL_FS_READ_DIR       (1ULL << 3)
#define LL_FS_REMOVE_DIR     (1ULL << 4)
#define LL_FS_REMOVE_FILE    (1ULL << 5)
#define LL_FS_MAKE_CHAR      (1ULL << 6)
#define LL_FS_MAKE_DIR       (1ULL << 7)
#define LL_FS_MAKE_REG       (1ULL << 8)
#define LL_FS_MAKE_SOCK      (1ULL << 9)
#define LL_FS_MAKE_FIFO      (1ULL << 10)
#define LL_FS_MAKE_BLOCK     (1ULL << 11)
#define LL_FS_MAKE_SYM       (1ULL << 12)
#define LL_FS_REFER          (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE       (1ULL << 14)     /* ABI 3 */
#define LL_FS_IOCTL_DEV      (1ULL << 15)     /* ABI 5 */
#define LL_FS_RESOLVE_UNIX   (1ULL << 16)     /* ABI 9: connect() to a pathname unix socket */
#define LL_NET_BIND_TCP      (1ULL << 0)      /* ABI 4 */
#define LL_NET_CONNECT_TCP   (1ULL << 1)      /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)     /* ABI 6 */
#define LL_SCOPE_SIGNAL      (1ULL << 1)      /* ABI 6 */

/* Ask the kernel which ABI it has (landlock_create_ruleset VERSION). */
int landlock_probe(struct landlock_info *info);
/* The handled masks an ABI knows (pure: landlock_probe uses it, tests check it). */
void landlock_abi_masks(int abi, struct landlock_info *info);

/*
 * A ruleset handling these rights (the ABI says how long a structure the
 * kernel takes: an older kernel rejects a longer one unless its tail is
 * zero, so exactly the prefix it defines is passed). Returns the ruleset
 * descriptor, or -1 with errno set.
 */
int landlock_ruleset_create(int abi, uint64_t fs_handled, uint64_t net_handled, uint64_t scoped);
/* Enforce the ruleset on this thread and its future children: 0, or -1 with errno. */
int landlock_ruleset_enforce(int ruleset);

#endif
