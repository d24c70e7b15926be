/*
 * sandbox/limits.c — --memory, --pids and --cpus.
 *
 * The real mechanism is a cgroup v2 child of the caller's own cgroup with
 * memory.max, pids.max and cpu.max written into it, which needs the
 * controllers delegated to the user (systemd does that for user@.service
 * with Delegate=yes; many hosts delegate nothing). When a controller is not
 * there, a limit is reported as what it is, never faked:
 *
 *   --pids    falls back to RLIMIT_NPROC set inside the sandbox. Since Linux
 *             5.14 the process count behind RLIMIT_NPROC is kept per user
 *             namespace (ucounts), and the sandbox has a user namespace of
 *             its own, so the limit counts the sandbox's processes only: a
 *             genuine equivalent of pids.max.
 *   --memory  is not enforced, and the audit log says so. RLIMIT_AS bounds
 *             address space, not memory: runtimes reserve address space they
 *             never touch, so it would fail workloads far below the limit and
 *             still not bound what they use.
 *   --cpus    is not enforced; there is no rlimit for a CPU share.
 *
 * Always, whatever was asked: the per-user-namespace counters of the kernel
 * (ucounts, /proc/sys/user/max_*) are lowered in the sandbox's user
 * namespace. They are hierarchical — a charge in the sandbox counts against
 * the host user's limit too — so without a lower limit inside, 128
 * inotify_init1 calls in the sandbox use up the host user's 128 instances
 * and the user's editor gets EMFILE. Only a process holding CAP_SYS_RESOURCE
 * in the namespace can write them, which is boxy-init before it drops its
 * capabilities; the payload cannot raise them back.
 *
 * One "cgroup" audit event per requested limit says which case applied.
 * The parent side (cgroup_probe, limits_prepare/attach/release) runs in the
 * caller before and after clone(); limits_apply_child and the ucounts run in
 * boxy-init (init/limits.c).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/memwatch.h"
#include "sandbox/limits.h"
#include "init/stages.h"
#include "common/lang.h"
#include "common/util.h"

#define MOUNTINFO_MAX (1u << 20)
#define CGFILE_MAX    (64u << 10)
#define CPU_PERIOD_US 100000u

/* Where runs get their cgroups once the daemon moved into a leaf (its service's cgroup). */
static char *limits_runs_root;

/* Decode mountinfo's octal escapes (\040 for a space) in place. */
static void mountinfo_unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* Find the cgroup2 mount: *mount and *root (the mount's root within the hierarchy). */
static bool find_cgroup2_mount(char **mount, char **root)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len;
	bool found = false;

	if (read_file("/proc/self/mountinfo", MOUNTINFO_MAX, &buf, &len) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
		/* id parent major:minor root mountpoint options [optional...] - fstype source super */
		char *sep = strstr(line, " - ");
		char *field[5] = { 0 }, *fsave = NULL, *tok;
		int nf = 0;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &fsave); tok && nf < 5; tok = strtok_r(NULL, " ", &fsave))
			field[nf++] = tok;
		if (nf < 5)
			continue;
		mountinfo_unescape(field[3]);
		mountinfo_unescape(field[4]);
		*root = xstrdup(field[3]);
		*mount = xstrdup(field[4]);
		found = true;
	}
	free(buf);
	return found;
}

/* This process's cgroup v2 path ("0::/path"), relative to its cgroup namespace. */
static char *own_cgroup_path(void)
{
	char *buf = NULL, *line, *save = NULL, *out = NULL;
	size_t len;

	if (read_file("/proc/self/cgroup", CGFILE_MAX, &buf, &len) < 0)
		return NULL;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0) {
			out = xstrdup(line + 3);
			break;
		}
	free(buf);
	return out;
}

/* True when the whitespace-separated list has word. */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* Read a small cgroup file into a malloc'd string ("" when unreadable). */
static char *cg_read(const char *dir, const char *file)
{
	char *path = xasprintf("%s/%s", dir, file), *buf = NULL;
	size_t len;

	if (read_file(path, CGFILE_MAX, &buf, &len) < 0)
		buf = xstrdup("");
	free(path);
	return buf;
}

/* Write a value to dir/file. -1 with errno set. */
static int cg_write(const char *dir, const char *file, const char *value)
{
	char *path = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(path, "we");
	int rc = 0, saved;

	free(path);
	if (!f)
		return -1;
	if (fputs(value, f) == EOF)
		rc = -1;
	saved = errno;
	if (fclose(f) == EOF)
		rc = -1;
	else
		errno = saved;
	return rc;
}

void cgroup_probe(struct cgroup_info *info)
{
	char *root = NULL, *own, *controllers, *rel;

	memset(info, 0, sizeof(*info));
	if (!find_cgroup2_mount(&info->mount, &root))
		return;
	info->v2 = true;
	own = own_cgroup_path();
	if (!own) {
		free(root);
		return;
	}
	/* /proc/self/cgroup is relative to our cgroup namespace; so is the mount's
	 * root field. Strip the mount root to get the path below the mount point. */
	rel = own;
	if (strcmp(root, "/") != 0 && path_has_prefix(own, root))
		rel = own + strlen(root);
	info->own = strcmp(rel, "/") == 0 || *rel == '\0'
		? xstrdup(info->mount) : xasprintf("%s%s", info->mount, rel);
	free(own);
	free(root);
	/* The daemon in its leaf: runs are made beside it, in the delegated cgroup. */
	if (limits_runs_root) {
		free(info->own);
		info->own = xstrdup(limits_runs_root);
	}

	/* Delegation: we may create a child here and enable controllers for it. */
	char *stc = xasprintf("%s/cgroup.subtree_control", info->own);
	info->writable = access(info->own, W_OK) == 0 && access(stc, W_OK) == 0;
	free(stc);
	if (!info->writable)
		return;
	controllers = cg_read(info->own, "cgroup.controllers");
	info->memory = word_in(controllers, "memory");
	info->pids = word_in(controllers, "pids");
	info->cpu = word_in(controllers, "cpu");
	free(controllers);
}

void cgroup_info_free(struct cgroup_info *info)
{
	free(info->mount);
	free(info->own);
	memset(info, 0, sizeof(*info));
}

/* ---- a cgroup delegated to the daemon (systemd's Delegate=yes) -------------------- */

int limits_leaf_move(const char *own, pid_t pid, char **err)
{
	char *procs = cg_read(own, "cgroup.procs"), *line, *save = NULL, *leaf, val[24];
	size_t n = 0;
	long first = -1;

	for (line = strtok_r(procs, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (n++ == 0)
			first = strtol(line, NULL, 10);
	free(procs);
	/* Alone there, as a Delegate=yes service's one process is: otherwise the cgroup is
	 * shared (a login scope, a terminal's), and moving ourselves would not empty it. */
	if (n != 1 || first != (long)pid)
		return 0;
	leaf = xasprintf("%s/%s", own, LIMITS_DAEMON_LEAF);
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST) {
		set_err_errno(err, _("creating %s"), leaf);
		free(leaf);
		return -1;
	}
	snprintf(val, sizeof(val), "%ld", (long)pid);
	if (cg_write(leaf, "cgroup.procs", val) < 0) {
		set_err_errno(err, _("moving the daemon into %s"), leaf);
		rmdir(leaf);
		free(leaf);
		return -1;
	}
	free(leaf);
	free(limits_runs_root);
	limits_runs_root = xstrdup(own);
	return 1;
}

int limits_delegated_leaf(char **err)
{
	struct cgroup_info info;
	int rc = 0;

	cgroup_probe(&info);
	if (info.writable && info.own && info.mount && strcmp(info.own, info.mount) != 0)
		rc = limits_leaf_move(info.own, getpid(), err);
	cgroup_info_free(&info);
	return rc;
}

const char *limits_runs_cgroup(void)
{
	return limits_runs_root;
}

/* Why controller `name` cannot be used, in words (malloc'd). */
static char *why_no_controller(const struct cgroup_info *info, const char *name)
{
	if (!info->v2)
		return xstrdup(_("no cgroup v2 hierarchy is mounted"));
	if (!info->own)
		return xstrdup(_("this process's cgroup v2 path is unknown"));
	if (!info->writable)
		return xasprintf(_("no cgroup is delegated to this user (%s is not writable)"),
				 info->own);
	return xasprintf(_("the %s controller is not delegated to %s"), name, info->own);
}

/* Make the run's cgroup under info->own with the controllers it needs. */
static int cgroup_create(const struct cgroup_info *info, bool mem, bool pids, bool cpu,
			 char **dir, char **why)
{
	static unsigned counter;
	char *subtree = cg_read(info->own, "cgroup.subtree_control");
	const char *names[] = { "memory", "pids", "cpu" };
	bool want[] = { mem, pids, cpu };

	/* A child sees only the controllers its parent enables in subtree_control.
	 * Enabling fails with EBUSY when the parent holds processes itself (the
	 * "no internal processes" rule), which is why this is a delegation
	 * question and not just a permission one. */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *plus;

		if (!want[i] || word_in(subtree, names[i]))
			continue;
		plus = xasprintf("+%s", names[i]);
		if (cg_write(info->own, "cgroup.subtree_control", plus) < 0) {
			*why = xasprintf(_("cannot enable the %s controller in %s: %s"), names[i],
					 info->own, strerror(errno));
			free(plus);
			free(subtree);
			return -1;
		}
		free(plus);
	}
	free(subtree);
	*dir = xasprintf("%s/boxy-%ld-%u", info->own, (long)getpid(), counter++);
	if (mkdir(*dir, 0755) < 0) {
		*why = xasprintf(_("cannot create %s: %s"), *dir, strerror(errno));
		free(*dir);
		*dir = NULL;
		return -1;
	}
	return 0;
}

/* Write one limit; on failure *why says so. */
static bool cgroup_set(const char *dir, const char *file, const char *value, char **why)
{
	if (cg_write(dir, file, value) == 0)
		return true;
	*why = xasprintf(_("cannot write %s/%s: %s"), dir, file, strerror(errno));
	return false;
}

static char *limits_watchdog_words(const char *sz, const char *why);
static bool limits_scope_defer(struct limits *lim, const struct cgroup_info *info,
			       const struct event_sink *events, char **why_mem, char **why_pids,
			       char **why_cpu);
static void limits_scope_attach(struct limits *lim, pid_t pid);

/* One "cgroup" audit event per requested limit: enforced in cgroup `where`, or how not. */
static void limits_audit(const struct limits *lim, const struct event_sink *events,
			 const char *where, const char *why_mem, const char *why_pids,
			 const char *why_cpu)
{
	char sz[32], *msg;

	if (lim->memory) {
		format_size(lim->memory, sz, sizeof(sz));
		if (lim->memory_enforced) {
			msg = xasprintf(_("memory.max = %s in %s"), sz, where);
			event_audit(events, "cgroup", "allow", "memory", msg);
		} else {
			msg = limits_watchdog_words(sz, why_mem);
			event_audit(events, "cgroup", "degraded", "memory", msg);
		}
		free(msg);
	}
	if (lim->pids) {
		if (lim->pids_enforced)
			msg = xasprintf(_("pids.max = %llu in %s"), (unsigned long long)lim->pids,
					where);
		else
			msg = xasprintf(_("--pids %llu falls back to RLIMIT_NPROC, counted in the "
					  "sandbox's own user namespace: %s"),
					(unsigned long long)lim->pids, why_pids);
		event_audit(events, "cgroup", lim->pids_enforced ? "allow" : "degraded", "pids", msg);
		free(msg);
	}
	if (lim->cpus_milli) {
		if (lim->cpu_enforced)
			msg = xasprintf(_("cpu.max = %u.%03u CPUs in %s"), lim->cpus_milli / 1000,
					lim->cpus_milli % 1000, where);
		else
			msg = xasprintf(_("--cpus %u.%03u is not enforced: %s"), lim->cpus_milli / 1000,
					lim->cpus_milli % 1000, why_cpu);
		event_audit(events, "cgroup", lim->cpu_enforced ? "allow" : "degraded", "cpu", msg);
		free(msg);
	}
}


/* Why no cgroup of its own can hold the sandbox for the freezer, in words (malloc'd). */
static char *why_no_freezer(const struct cgroup_info *info)
{
	if (!info->v2)
		return xstrdup(_("no cgroup v2 hierarchy is mounted"));
	if (!info->own)
		return xstrdup(_("this process's cgroup v2 path is unknown"));
	return xasprintf(_("no cgroup is delegated to this user (%s is not writable)"), info->own);
}

/*
 * A cgroup the freezer can take the whole sandbox in: the limits' own when
 * there is one; else, where the caller's cgroup is delegated, one made for
 * the freezer alone (no controller needed: cgroup.freeze is in every
 * non-root cgroup of v2); a systemd scope gets a child at attach time.
 */
static void limits_freeze_prepare(struct limits *lim, const struct cgroup_info *info)
{
	if (!lim->cgroup_dir && !lim->scope_pending) {
		if (!info->v2 || !info->own || !info->writable) {
			lim->why_no_freeze = why_no_freezer(info);
			return;
		}
		if (cgroup_create(info, false, false, false, &lim->cgroup_dir,
				  &lim->why_no_freeze) < 0)
			return;
	}
	if (lim->cgroup_dir)
		lim->freeze_dir = xstrdup(lim->cgroup_dir);
	else
		lim->why_no_freeze = why_no_freezer(info);  /* until the scope gives a child */
}

char *limits_freeze_probe(bool *cgroup)
{
	struct cgroup_info info;
	char *why = NULL, *out;

	cgroup_probe(&info);
	*cgroup = info.v2 && info.own && info.writable;
	if (*cgroup) {
		out = xasprintf(_("cgroup freezer, in a cgroup of its own under %s"), info.own);
	} else if (limits_scope_available(&why)) {
		*cgroup = true;
		out = xstrdup(_("cgroup freezer, in a child cgroup of the run's systemd scope"));
	} else {
		char *no = why_no_freezer(&info);

		out = xasprintf(_("SIGSTOP to every process of the sandbox, swept until none runs "
				  "(%s; %s)"), no, why ? why : "?");
		free(no);
	}
	free(why);
	cgroup_info_free(&info);
	return out;
}

int limits_prepare(const struct runspec *rs, bool freeze, struct limits *lim,
		   const struct event_sink *events, char **err)
{
	struct cgroup_info info;
	char *why_mem = NULL, *why_pids = NULL, *why_cpu = NULL, *why_cg = NULL;
	char *val;
	bool mem, pids, cpu;
	locale_t old;

	(void)err;
	memset(lim, 0, sizeof(*lim));
	lim->want_freeze = freeze;
	if (!rs->memory && !rs->pids && !rs->cpus_milli && !lim->want_freeze)
		return 0;

	old = lang_use(lang_records());     /* what it says are records: worded in C */
	cgroup_probe(&info);
	mem = rs->memory && info.memory;
	pids = rs->pids && info.pids;
	cpu = rs->cpus_milli && info.cpu;
	if (rs->memory && !mem)
		why_mem = why_no_controller(&info, "memory");
	if (rs->pids && !pids)
		why_pids = why_no_controller(&info, "pids");
	if (rs->cpus_milli && !cpu)
		why_cpu = why_no_controller(&info, "cpu");

	if ((mem || pids || cpu) &&
	    cgroup_create(&info, mem, pids, cpu, &lim->cgroup_dir, &why_cg) < 0) {
		if (mem)
			why_mem = xstrdup(why_cg);
		if (pids)
			why_pids = xstrdup(why_cg);
		if (cpu)
			why_cpu = xstrdup(why_cg);
		mem = pids = cpu = false;
	}
	if (mem) {
		val = xasprintf("%llu", (unsigned long long)rs->memory);
		mem = cgroup_set(lim->cgroup_dir, "memory.max", val, &why_mem);
		free(val);
		/* Without this the payload could page out to swap past memory.max;
		 * absent when the host has no swap accounting, which is fine. */
		if (mem && cg_write(lim->cgroup_dir, "memory.swap.max", "0") < 0 && errno != ENOENT)
			mem = cgroup_set(lim->cgroup_dir, "memory.swap.max", "0", &why_mem);
		/* Past memory.max the kernel kills every process of the run, as the
		 * watchdog does, not only the largest (Linux 4.19). */
		if (mem)
			cg_write(lim->cgroup_dir, "memory.oom.group", "1");
	}
	if (pids) {
		val = xasprintf("%llu", (unsigned long long)rs->pids);
		pids = cgroup_set(lim->cgroup_dir, "pids.max", val, &why_pids);
		free(val);
	}
	if (cpu) {
		val = xasprintf("%llu %u", (unsigned long long)rs->cpus_milli * CPU_PERIOD_US / 1000,
				CPU_PERIOD_US);
		cpu = cgroup_set(lim->cgroup_dir, "cpu.max", val, &why_cpu);
		free(val);
	}
	lim->memory_enforced = mem;
	lim->pids_enforced = pids;
	lim->cpu_enforced = cpu;
	lim->pids_rlimit = rs->pids && !pids;
	if (lim->cgroup_dir && !mem && !pids && !cpu) {
		rmdir(lim->cgroup_dir);
		free(lim->cgroup_dir);
		lim->cgroup_dir = NULL;
	}

	lim->memory = rs->memory;
	lim->pids = rs->pids;
	lim->cpus_milli = rs->cpus_milli;
	if (!limits_scope_defer(lim, &info, events, &why_mem, &why_pids, &why_cpu))
		limits_audit(lim, events, lim->cgroup_dir, why_mem, why_pids, why_cpu);
	if (lim->want_freeze)
		limits_freeze_prepare(lim, &info);
	free(why_mem);
	free(why_pids);
	free(why_cpu);
	free(why_cg);
	cgroup_info_free(&info);
	lang_use(old);
	return 0;
}

int limits_attach(struct limits *lim, pid_t pid, char **err)
{
	char val[24];

	if (lim->scope_pending) {
		locale_t old = lang_use(lang_records());

		limits_scope_attach(lim, pid);
		lang_use(old);
	}
	if (!lim->cgroup_dir)
		return 0;
	snprintf(val, sizeof(val), "%ld", (long)pid);
	if (cg_write(lim->cgroup_dir, "cgroup.procs", val) < 0)
		return set_err_errno(err, "move pid %ld into %s", (long)pid, lim->cgroup_dir);
	return 0;
}

uint64_t limits_oom_kills(const struct limits *lim)
{
	char *dir = lim->cgroup_dir ? xstrdup(lim->cgroup_dir)
		    : lim->scope_cgroup && lim->scope_mount
		    ? xasprintf("%s%s", lim->scope_mount, lim->scope_cgroup) : NULL;
	char *events, *p;
	uint64_t n = 0;

	if (!dir || !lim->memory_enforced) {
		free(dir);
		return 0;
	}
	events = cg_read(dir, "memory.events");
	for (p = events; (p = strstr(p, "oom_kill ")) != NULL; p++)
		if (p == events || p[-1] == '\n') {
			n = strtoull(p + 9, NULL, 10);
			break;
		}
	free(events);
	free(dir);
	return n;
}

void limits_release(struct limits *lim)
{
	if (lim->freeze_dir && (!lim->cgroup_dir || strcmp(lim->freeze_dir, lim->cgroup_dir) != 0)) {
		/* the scope's child: empty once the pid namespace's last process is gone */
		for (int i = 0; i < 100 && rmdir(lim->freeze_dir) < 0 && errno == EBUSY; i++)
			usleep(10000);
	}
	free(lim->freeze_dir);
	free(lim->why_no_freeze);
	if (lim->cgroup_dir) {
		/* The pid namespace's last processes can still be exiting when init
		 * has been reaped; rmdir succeeds once the cgroup is empty. */
		for (int i = 0; i < 100 && rmdir(lim->cgroup_dir) < 0 && errno == EBUSY; i++)
			usleep(10000);
		free(lim->cgroup_dir);
	}
	free(lim->why_mem);
	free(lim->why_pids);
	free(lim->why_cpu);
	free(lim->scope_unit);
	free(lim->scope_cgroup);
	free(lim->scope_mount);
	memset(lim, 0, sizeof(*lim));
}

/* ---- memory without a cgroup (the watchdog is sandbox/memwatch.c) ---------------- */

/* The audit words for --memory enforced by the watchdog instead of a cgroup (malloc'd). */
static char *limits_watchdog_words(const char *sz, const char *why)
{
	return xasprintf(_("--memory %s is enforced by boxy's watchdog, not the kernel: %s. "
			   "Every %d ms (%d ms past half the limit) it counts the memory of "
			   "every process in the sandbox, its tmpfs mounts and its memfds, and "
			   "kills the sandbox past the limit; an allocation faster than a sample "
			   "can overshoot. RLIMIT_AS would bound address space, not memory, so "
			   "none is imposed"), sz, why, MEMWATCH_SLOW_MS, MEMWATCH_FAST_MS);
}

/* ---- a scope from the user's systemd (the request is sandbox/limits-scope.c) ----- */

/*
 * Nothing could be made here, but a systemd user manager runs: keep the
 * reasons and let limits_attach() ask it for a scope once the sandbox's pid
 * exists, recording the events then. True when deferred (the reasons are
 * taken). A cgroup made here for some limits is never mixed with a scope.
 */
static bool limits_scope_defer(struct limits *lim, const struct cgroup_info *info,
			       const struct event_sink *events, char **why_mem, char **why_pids,
			       char **why_cpu)
{
	char *why = NULL;

	if (lim->cgroup_dir || !info->mount)
		return false;
	if (!limits_scope_available(&why)) {
		/* Say what was tried in each reason. */
		char **whys[] = { why_mem, why_pids, why_cpu };

		for (size_t i = 0; i < ARRAY_SIZE(whys); i++)
			if (*whys[i]) {
				char *w = xasprintf("%s; %s", *whys[i], why);

				free(*whys[i]);
				*whys[i] = w;
			}
		free(why);
		return false;
	}
	lim->scope_pending = true;
	lim->events = events;
	lim->scope_mount = xstrdup(info->mount);
	lim->why_mem = *why_mem;
	lim->why_pids = *why_pids;
	lim->why_cpu = *why_cpu;
	*why_mem = *why_pids = *why_cpu = NULL;
	return true;
}

/* True when dir/file holds exactly want (a first word of it, for cpu.max). */
static bool limits_scope_reads(const char *dir, const char *file, const char *want)
{
	char *got = cg_read(dir, file);
	size_t n = strlen(want);
	bool ok = strncmp(got, want, n) == 0 && (got[n] == '\n' || got[n] == ' ' || !got[n]);

	free(got);
	return ok;
}

/*
 * The freezer in a systemd scope: systemd delegates the scope's cgroup.procs
 * and subtree_control, not its cgroup.freeze, but a child the user makes in
 * a delegated scope is the user's whole. The sandbox's init moves into one
 * (the scope's limits still bound it: they apply to the subtree).
 */
static void limits_scope_freezer(struct limits *lim, const char *dir, pid_t pid)
{
	char *child = xasprintf("%s/boxy-sandbox", dir), val[24];

	snprintf(val, sizeof(val), "%ld", (long)pid);
	if (mkdir(child, 0755) < 0 || cg_write(child, "cgroup.procs", val) < 0) {
		free(lim->why_no_freeze);
		lim->why_no_freeze = xasprintf(_("no cgroup of its own could be made in systemd scope "
						 "%s (%s): %s"), lim->scope_unit, child,
					       strerror(errno));
		rmdir(child);
		free(child);
		return;
	}
	free(lim->why_no_freeze);
	lim->why_no_freeze = NULL;
	lim->freeze_dir = child;
}

/* Ask for the scope, read back what the kernel enforces in it, record every limit. */
static void limits_scope_attach(struct limits *lim, pid_t pid)
{
	char *why = NULL, *dir = NULL, *where = NULL, val[48];
	char *whys[3] = { lim->why_mem, lim->why_pids, lim->why_cpu };

	lim->scope_pending = false;
	if (limits_scope_request(pid, lim->memory, lim->pids, lim->cpus_milli, &lim->scope_unit,
				 &lim->scope_cgroup, &why) == 0) {
		dir = xasprintf("%s%s", lim->scope_mount, lim->scope_cgroup);
		where = xasprintf(_("systemd scope %s (%s)"), lim->scope_unit, dir);
		/* systemd starts the scope even when it has no controller to apply the
		 * limits with: only the kernel's files say what is enforced. */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)lim->memory);
		lim->memory_enforced = lim->memory && limits_scope_reads(dir, "memory.max", val);
		if (lim->memory_enforced)
			cg_write(dir, "memory.oom.group", "1");     /* the scope is delegated */
		snprintf(val, sizeof(val), "%llu", (unsigned long long)lim->pids);
		lim->pids_enforced = lim->pids && limits_scope_reads(dir, "pids.max", val);
		snprintf(val, sizeof(val), "%llu",
			 (unsigned long long)lim->cpus_milli * CPU_PERIOD_US / 1000);
		lim->cpu_enforced = lim->cpus_milli && limits_scope_reads(dir, "cpu.max", val);
		free(why);
		why = xasprintf(_("systemd scope %s was made, but its cgroup %s does not apply "
				  "the limit (the user manager has no such controller delegated)"),
				lim->scope_unit, dir);
		if (lim->want_freeze)
			limits_scope_freezer(lim, dir, pid);
	}
	for (size_t i = 0; i < ARRAY_SIZE(whys); i++) {
		char *w = xasprintf("%s; %s", whys[i] ? whys[i] : "", why);

		free(whys[i]);
		whys[i] = w;
	}
	lim->why_mem = lim->why_pids = lim->why_cpu = NULL;
	limits_audit(lim, lim->events, where, whys[0], whys[1], whys[2]);
	for (size_t i = 0; i < ARRAY_SIZE(whys); i++)
		free(whys[i]);
	free(why);
	free(where);
	free(dir);
}
