/*
 * sandbox/limits-scope.c — a cgroup from the user's systemd: where boxy may not make
 * a cgroup of its own (the caller's cgroup holds processes, or is not the
 * user's), the user's systemd manager can. Like rootless podman, ask it over
 * D-Bus (org.freedesktop.systemd1.Manager.StartTransientUnit) for a
 * transient scope holding the sandbox's init, Delegate=yes, with the limits
 * as unit properties (MemoryMax and MemorySwapMax=0, TasksMax,
 * CPUQuotaPerSecUSec). systemd writes memory.max, pids.max and cpu.max; the
 * caller then reads them back from the scope's cgroup, because a manager
 * that has no controller to give applies nothing and still starts the unit.
 * The scope goes away by itself once its last process exits
 * (CollectMode=inactive-or-failed).
 *
 * The manager is reached on its private socket ($XDG_RUNTIME_DIR/systemd/
 * private, as `systemctl --user` does; no dbus-daemon needed), else on the
 * user bus. Built only with libsystemd (configure finds it; --without-systemd
 * turns it off); without it every request says so and the limits fall back.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-bus.h>
#endif

#include "sandbox/limits.h"
#include "common/util.h"

#define SCOPE_CALL_USEC     (5 * 1000 * 1000)   /* the manager's answer */
#define SCOPE_MOVE_TRIES    200                 /* × 10 ms for the pid to land in the scope */

/* Where the user's manager listens, malloc'd, or NULL with *why saying why not. */
static char *scope_socket(char **why)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	const char *names[] = { "systemd/private", "bus" };
	struct stat st;

	if (!rt || rt[0] != '/') {
		*why = xstrdup(_("no systemd user manager: XDG_RUNTIME_DIR is not set"));
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char *p = xasprintf("%s/%s", rt, names[i]);

		if (stat(p, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == getuid())
			return p;
		free(p);
	}
	*why = xasprintf(_("no systemd user manager (neither %s/systemd/private nor %s/bus "
			   "is a socket of this user)"), rt, rt);
	return NULL;
}

bool limits_scope_available(char **why)
{
	char *sock = scope_socket(why);

	if (!sock)
		return false;
	free(sock);
#ifdef HAVE_SYSTEMD
	return true;
#else
	*why = xstrdup(_("a systemd user manager runs, but this boxy was built without "
			 "libsystemd (configure --with-systemd) to ask it for a scope"));
	return false;
#endif
}

/* The cgroup v2 path of pid ("0::/path"), relative to the hierarchy's root, malloc'd. */
static char *scope_pid_cgroup(pid_t pid)
{
	char path[48], *buf = NULL, *line, *save = NULL, *out = NULL;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_file(path, 64 << 10, &buf, &len) < 0)
		return NULL;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0) {
			out = xstrdup(line + 3);
			break;
		}
	free(buf);
	return out;
}

#ifdef HAVE_SYSTEMD
/* Connect to the manager: its private socket directly, or the user bus. */
static int scope_connect(const char *sock, sd_bus **out)
{
	sd_bus *bus = NULL;
	char *addr;
	int r;

	if (strstr(sock, "/systemd/private") == NULL)
		return sd_bus_open_user(out);
	r = sd_bus_new(&bus);
	if (r < 0)
		return r;
	addr = xasprintf("unix:path=%s", sock);
	r = sd_bus_set_address(bus, addr);
	free(addr);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*out = bus;
	return 0;
}

/* The StartTransientUnit request for unit with pid and the limits. */
static int scope_message(sd_bus *bus, const char *unit, pid_t pid, uint64_t memory,
			 uint64_t pids, uint32_t cpus_milli, sd_bus_message **out)
{
	sd_bus_message *m = NULL;
	int r;

	r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
					   "/org/freedesktop/systemd1",
					   "org.freedesktop.systemd1.Manager", "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", unit, "fail");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "PIDs", "au", 1, (uint32_t)pid,
					  "Delegate", "b", 1, "CollectMode", "s",
					  "inactive-or-failed", "Description", "s", "boxy sandbox");
	if (r >= 0 && memory)
		r = sd_bus_message_append(m, "(sv)(sv)", "MemoryMax", "t", memory,
					  "MemorySwapMax", "t", (uint64_t)0);
	if (r >= 0 && pids)
		r = sd_bus_message_append(m, "(sv)", "TasksMax", "t", pids);
	if (r >= 0 && cpus_milli)
		r = sd_bus_message_append(m, "(sv)", "CPUQuotaPerSecUSec", "t",
					  (uint64_t)cpus_milli * 1000);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	*out = m;
	return 0;
}
#endif

int limits_scope_request(pid_t pid, uint64_t memory, uint64_t pids, uint32_t cpus_milli,
			 char **unit, char **cgroup, char **why)
{
#ifdef HAVE_SYSTEMD
	static unsigned counter;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	sd_bus *bus = NULL;
	char *sock = scope_socket(why), *name, *tail;
	int r;

	*unit = *cgroup = NULL;
	if (!sock)
		return -1;
	name = xasprintf("boxy-%ld-%d-%u.scope", (long)getpid(), (int)pid, counter++);
	r = scope_connect(sock, &bus);
	if (r < 0) {
		*why = xasprintf(_("cannot reach the systemd user manager at %s: %s"), sock,
				 strerror(-r));
		goto fail;
	}
	r = scope_message(bus, name, pid, memory, pids, cpus_milli, &m);
	if (r >= 0)
		r = sd_bus_call(bus, m, SCOPE_CALL_USEC, &e, &reply);
	if (r < 0) {
		*why = xasprintf(_("the systemd user manager refused scope %s: %s"), name,
				 e.message ? e.message : strerror(-r));
		goto fail;
	}
	/* systemd moves the pids when it starts the scope, after answering: wait for it. */
	tail = xasprintf("/%s", name);
	for (int i = 0; i < SCOPE_MOVE_TRIES && !*cgroup; i++) {
		char *cg = scope_pid_cgroup(pid);
		size_t n = cg ? strlen(cg) : 0;

		if (cg && n >= strlen(tail) && strcmp(cg + n - strlen(tail), tail) == 0)
			*cgroup = cg;
		else {
			free(cg);
			usleep(10000);
		}
	}
	free(tail);
	if (!*cgroup) {
		*why = xasprintf(_("systemd started scope %s but did not move the sandbox into it"),
				 name);
		goto fail;
	}
	*unit = name;
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
	free(sock);
	return 0;
fail:
	free(name);
	sd_bus_error_free(&e);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	if (bus)
		sd_bus_flush_close_unref(bus);
	free(sock);
	return -1;
#else
	(void)pid;
	(void)memory;
	(void)pids;
	(void)cpus_milli;
	*unit = *cgroup = NULL;
	limits_scope_available(why);
	return -1;
#endif
}
