/*
 * init/caps.c — the capabilities of stage 2: carried in, then thrown away.
 *
 * The sandbox maps the user to itself, not to root. clone(CLONE_NEWUSER)
 * gives the child every capability over its new user namespace, but execve()
 * of boxy-init by a non-root uid recomputes the sets from the file and would
 * leave boxy-init with none. Ambient capabilities are the kernel's exception
 * for exactly this case: a capability that is in both the permitted and the
 * inheritable set can be raised into the ambient set, and the ambient set
 * survives execve() of an unprivileged file (it becomes permitted and
 * effective again on the other side). caps_raise_ambient() does that between
 * clone() and execve(); caps_drop_all() undoes everything once boxy-init has
 * built the root filesystem, before Landlock and seccomp.
 *
 * Raw capget/capset/prctl on purpose: caps_raise_ambient() runs in a child of
 * clone() in a process that may be multi-threaded (the daemon), where only
 * async-signal-safe calls are allowed, and libcap allocates.
 */
#include <config.h>

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init/stages.h"
#include "common/util.h"

/*
 * What stage 2 needs, and nothing else:
 *  CAP_SYS_ADMIN  mount(), pivot_root(), umount2() of the old root, sethostname()
 *                 and the bind mounts that mask /proc and unix sockets.
 *  CAP_NET_ADMIN  bring up lo and configure tap0 over netlink.
 *  CAP_SETPCAP    PR_CAPBSET_DROP and PR_SET_SECUREBITS in caps_drop_all().
 *  CAP_SYS_RESOURCE  writing the namespace's own /proc/sys/user/max_* limits
 *                 (stage ucounts); it exempts from nothing else here, the
 *                 rlimit and fork checks ask for it in the initial namespace.
 * Deliberately absent: CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH/CAP_FOWNER (stage 2
 * must see the filesystem with exactly the user's rights, so a mount source
 * the user cannot read stays unreadable), CAP_SYS_CHROOT (pivot_root needs
 * CAP_SYS_ADMIN only), CAP_MKNOD (useless in a user namespace), CAP_SETUID/
 * CAP_SETGID (the maps are written by the parent).
 */
static const int stage2_caps[] = { CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_SETPCAP, CAP_SYS_RESOURCE };

/* The securebits boxy-init leaves behind, every one locked. */
#define SECUREBITS_LOCKED_DOWN                                                    \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |                                   \
	 SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |                 \
	 SECBIT_KEEP_CAPS_LOCKED |                                                \
	 SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/* capget() into data[2] (version 3: 64 capabilities). */
static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return (int)syscall(SYS_capget, &hdr, data);
}

/* capset() from data[2]. */
static int caps_set(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return (int)syscall(SYS_capset, &hdr, data);
}

int caps_raise_ambient(void)
{
	struct __user_cap_data_struct data[2];

	if (caps_get(data) < 0)
		return -errno;
	/* A capability can be raised into the ambient set only if it is both
	 * permitted and inheritable: make it inheritable first. */
	for (size_t i = 0; i < ARRAY_SIZE(stage2_caps); i++) {
		int c = stage2_caps[i];

		if (!(data[c / 32].permitted & (1u << (c % 32))))
			return -EPERM;
		data[c / 32].inheritable |= 1u << (c % 32);
	}
	if (caps_set(data) < 0)
		return -errno;
	for (size_t i = 0; i < ARRAY_SIZE(stage2_caps); i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)stage2_caps[i],
			  0UL, 0UL) < 0)
			return -errno;
	return 0;
}

/* Highest capability number this kernel knows (probing, so no /proc is needed). */
static int caps_last_cap(void)
{
	int c = 0;

	/* PR_CAPBSET_READ fails with EINVAL past the last valid capability. */
	while (c < 64 && prctl(PR_CAPBSET_READ, (unsigned long)c, 0UL, 0UL, 0UL) >= 0)
		c++;
	return c - 1;
}

/* Read everything back: any capability left anywhere is an error. */
static int caps_verify_empty(int last, char **err)
{
	struct __user_cap_data_struct data[2];
	int bits;

	if (caps_get(data) < 0)
		return set_err_errno(err, "capget");
	for (int i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return set_err(err, "capabilities still set after capset "
				       "(eff %08x%08x prm %08x%08x inh %08x%08x)",
				       data[1].effective, data[0].effective, data[1].permitted,
				       data[0].permitted, data[1].inheritable, data[0].inheritable);
	for (int c = 0; c <= last; c++) {
		if (prctl(PR_CAPBSET_READ, (unsigned long)c, 0UL, 0UL, 0UL) != 0)
			return set_err(err, "capability %d still in the bounding set", c);
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, (unsigned long)c, 0UL, 0UL) != 0)
			return set_err(err, "capability %d still ambient", c);
	}
	bits = prctl(PR_GET_SECUREBITS, 0UL, 0UL, 0UL, 0UL);
	if (bits < 0 || (bits & SECUREBITS_LOCKED_DOWN) != SECUREBITS_LOCKED_DOWN)
		return set_err(err, "securebits are 0x%x, not locked down", bits);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0UL, 0UL, 0UL, 0UL) != 1)
		return set_err(err, "no_new_privs is not set");
	return 0;
}

int caps_drop_all(char **err)
{
	struct __user_cap_data_struct data[2];
	int last = caps_last_cap();

	if (last < 0)
		return set_err(err, "cannot read the bounding set");

	/*
	 * Securebits first, while CAP_SETPCAP is still effective: NOROOT and
	 * NO_SETUID_FIXUP make uid 0 mean nothing special to execve() should the
	 * payload ever become uid 0 of some namespace; KEEP_CAPS is left off and
	 * locked; NO_CAP_AMBIENT_RAISE closes the door this module opened.
	 */
	if (prctl(PR_SET_SECUREBITS, (unsigned long)SECUREBITS_LOCKED_DOWN, 0UL, 0UL, 0UL) < 0)
		return set_err_errno(err, "PR_SET_SECUREBITS");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0)
		return set_err_errno(err, "PR_CAP_AMBIENT_CLEAR_ALL");
	/* The bounding set also needs CAP_SETPCAP, so it goes before capset(). */
	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0UL, 0UL, 0UL) < 0)
			return set_err_errno(err, "PR_CAPBSET_DROP %d", c);
	memset(data, 0, sizeof(data));
	if (caps_set(data) < 0)
		return set_err_errno(err, "capset");
	/* landlock_restrict_self() and seccomp without CAP_SYS_ADMIN require it,
	 * and it makes setuid/file capabilities inert for everything exec'd after. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0)
		return set_err_errno(err, "PR_SET_NO_NEW_PRIVS");
	/*
	 * boxy-init and the payload share a uid, so without this the payload
	 * could open /proc/1/mem or ptrace its init (seccomp denies ptrace, this
	 * is the layer below it). The payload's own execve() makes it dumpable
	 * again, so its debuggers and core tools see it as usual.
	 */
	if (prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0)
		return set_err_errno(err, "PR_SET_DUMPABLE");
	return caps_verify_empty(last, err);
}
