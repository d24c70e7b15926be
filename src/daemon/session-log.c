/*
 * daemon/session-log.c — a session's terminal output on disk (see daemon/session-log.h).
 *
 * The daemon writes; `boxy logs` reads. Both find the file from the state
 * directory (client_state_dir), which the daemon refuses to expose to any
 * sandbox, and the file is created O_EXCL|O_NOFOLLOW under a directory
 * opened O_NOFOLLOW: nothing a payload planted can turn the log into a
 * write to another file of the user.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/place.h"
#include "daemon/session-log.h"
#include "store/store.h"
#include "common/util.h"

struct session_log {
	int fd;
	uint64_t written, dropped;
	bool cut;
};

char *session_log_path(const char *id)
{
	char *state = client_state_dir(), *path;

	if (!state)
		return NULL;
	path = xasprintf("%s/logs/%s.log", state, id);
	free(state);
	return path;
}

struct session_log *session_log_create(const char *id, char **err)
{
	char *state = client_state_dir(), name[64];
	struct session_log *l;
	int dfd, fd;
	struct stat st;

	if (!state) {
		set_err(err, "no state directory for the session's log");
		return NULL;
	}
	dfd = open(state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(state);
	if (dfd < 0) {
		set_err(err, "opening the state directory: %s", strerror(errno));
		return NULL;
	}
	if (mkdirat(dfd, "logs", 0700) < 0 && errno != EEXIST) {
		set_err(err, "creating the logs directory: %s", strerror(errno));
		close(dfd);
		return NULL;
	}
	fd = openat(dfd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != getuid()) {
		set_err(err, "the logs directory is not this user's");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	dfd = fd;
	snprintf(name, sizeof(name), "%s.log", id);
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND,
		    0600);
	close(dfd);
	if (fd < 0) {
		set_err(err, "creating the session's log: %s", strerror(errno));
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->fd = fd;
	return l;
}

void session_log_write(struct session_log *l, const void *p, size_t n)
{
	static const char cut[] = "\r\n[boxy: the log keeps the first 16 MiB of output; the rest "
				  "was shown but not kept]\r\n";
	size_t room;

	if (!l)
		return;
	if (l->cut || l->fd < 0) {
		l->dropped += n;
		return;
	}
	room = SESSION_LOG_MAX - l->written;
	if (n > room) {
		l->dropped += n - room;
		n = room;
	}
	while (n) {
		ssize_t w = write(l->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			l->dropped += n;
			close(l->fd);
			l->fd = -1;
			return;
		}
		l->written += (size_t)w;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	if (l->written >= SESSION_LOG_MAX) {
		l->cut = true;
		if (write(l->fd, cut, sizeof(cut) - 1) < 0) {
			/* the marker is a courtesy; the cap holds without it */
		}
	}
}

uint64_t session_log_dropped(const struct session_log *l)
{
	return l ? l->dropped : 0;
}

void session_log_close(struct session_log *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l);
}

int session_logs_prune(struct store *st)
{
	char *state = client_state_dir(), *dir;
	DIR *d;
	struct dirent *e;
	int dfd, n = 0;

	if (!state)
		return 0;
	dir = xasprintf("%s/logs", state);
	free(state);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(dir);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while ((e = readdir(d))) {
		struct store_sessions ss = { 0 };
		char id[17];
		size_t len = strlen(e->d_name);

		/* Only names this module makes: 16 hex digits and ".log". */
		if (len != 20 || strcmp(e->d_name + 16, ".log") != 0 ||
		    strspn(e->d_name, "0123456789abcdef") != 16)
			continue;
		memcpy(id, e->d_name, 16);
		id[16] = '\0';
		if (store_sessions_find(st, id, false, &ss, NULL) == 0 && ss.n == 0 &&
		    unlinkat(dirfd(d), e->d_name, 0) == 0)
			n++;
		store_sessions_free(&ss);
	}
	closedir(d);
	return n;
}
