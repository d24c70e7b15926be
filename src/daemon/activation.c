/*
 * daemon/activation.c — accept the listening socket of a systemd socket unit
 * (dist/systemd/boxy.socket) instead of binding one.
 *
 * The protocol (sd_listen_fds(3)): the manager sets LISTEN_PID to the pid it
 * execs and LISTEN_FDS to the number of descriptors passed from fd 3 on.
 * boxy takes the socket only when every part holds: LISTEN_PID is this
 * process (an inherited variable meant for an ancestor names another pid,
 * and fd 3 is then whatever the ancestor left there), exactly one
 * descriptor, and that descriptor is a listening AF_UNIX stream socket
 * bound at the path clients connect to. Anything else is logged by the
 * caller and the daemon binds its own socket as without systemd; a passed
 * descriptor it refuses is closed, so no sandbox can inherit it.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/activation.h"
#include "common/util.h"

static bool inherited;

bool activation_inherited(void)
{
	return inherited;
}

/* A decimal number of digits only, at most max; -1 otherwise. */
static long activation_parse(const char *s, long max)
{
	char *end;
	long v;

	if (!s || s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	return v;
}

/* Is fd a listening AF_UNIX stream socket bound at path? NULL, or why not (static text). */
static const char *activation_check_socket(int fd, const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int v = 0;
	socklen_t vl = sizeof(v);
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return "it is not a socket";
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &vl) < 0 || v != AF_UNIX)
		return "it is not a unix socket";
	vl = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vl) < 0 || v != SOCK_STREAM)
		return "it is not a stream socket";
	vl = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl) < 0 || v != 1)
		return "it is not listening";
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || sa.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] == '\0' ||
	    strncmp(sa.sun_path, path, sizeof(sa.sun_path)) != 0)
		return "it is not bound at the daemon's socket path";
	return NULL;
}

int activation_take_listener(const char *want_path, char **why)
{
	long pid = activation_parse(getenv("LISTEN_PID"), INT_MAX);
	long nfds = activation_parse(getenv("LISTEN_FDS"), 1024);
	bool present = getenv("LISTEN_FDS") != NULL;
	const char *bad;
	int flags;

	*why = NULL;
	/* Never passed on: not to sandboxes, not to a daemon this one starts. */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (!present)
		return -1;
	if (pid != (long)getpid()) {
		*why = xasprintf("LISTEN_FDS is meant for another process (LISTEN_PID %s): "
				 "not taking fd %d", pid < 0 ? "invalid" : "not this one",
				 ACTIVATION_FD);
		return -1;
	}
	if (nfds != 1) {
		/* Ours by the protocol, and none of them usable: closed, not leaked. */
		for (long i = 0; i < nfds; i++)
			close(ACTIVATION_FD + (int)i);
		*why = xasprintf("systemd passed %ld sockets, boxy.socket has one: binding our own",
				 nfds);
		return -1;
	}
	bad = activation_check_socket(ACTIVATION_FD, want_path);
	if (bad) {
		close(ACTIVATION_FD);
		*why = xasprintf("the socket systemd passed is refused (%s): binding our own", bad);
		return -1;
	}
	flags = fcntl(ACTIVATION_FD, F_GETFL);
	if (flags < 0 || fcntl(ACTIVATION_FD, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl(ACTIVATION_FD, F_SETFD, FD_CLOEXEC) < 0) {
		close(ACTIVATION_FD);
		*why = xasprintf("the socket systemd passed: %s: binding our own", strerror(errno));
		return -1;
	}
	inherited = true;
	return ACTIVATION_FD;
}
