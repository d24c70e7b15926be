/*
 * init/decoys.c — boxy-init's part of the tripwires (doc/tripwires.md): the
 * decoy credentials of the plan written into the fresh $HOME during the
 * mount stage, then, once the root is final, opened and handed to the daemon,
 * which watches them from outside (sandbox/tripwatch.c).
 *
 * A decoy goes only where nothing of the user's is: every directory of its
 * path that exists must lie on $HOME's own tmpfs (not a --ro/--rw/mkdir bind
 * of the host's, not a link), and the file itself must not exist (a --copy
 * of the real one wins). Directories made for a decoy are 0700 (.ssh) or
 * 0755, files the plan's mode; file and directory times are set to the
 * decoy's age. A few anonymous files are made before each decoy so that the
 * decoys' inode numbers do not run one after another.
 *
 * The hand-over is the one synchronisation with the daemon a run with
 * tripwires pays for: the descriptors go over the plan socket, a
 * PLAN_REPORT_DECOYS record says so on the report pipe, and boxy-init waits
 * for the daemon's byte before it goes on to start the payload, so the first
 * instruction of the payload already runs watched.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "init/mount.h"
#include "init/stages.h"

/* Which of the plan's decoys the mount stage wrote (boxy-init is single-threaded). */
static bool decoy_written[PLAN_DECOYS_MAX];

/* A random number below n, from getrandom; 0 when the pool says nothing. */
static unsigned decoys_rnd(unsigned n)
{
	unsigned v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		return 0;
	return v % n;
}

/* Spend a few inode numbers of dfd's tmpfs on files nobody will see. */
static void decoys_spread_inodes(int dfd)
{
	for (unsigned i = decoys_rnd(8); i > 0; i--) {
		int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

		if (fd >= 0)
			close(fd);
	}
}

/*
 * Open (creating when missing) the directory of d under home (homefd), every
 * component on the tmpfs home_dev. -1 when a component is a link, not a
 * directory, or somewhere else: the user put something of theirs there.
 */
static int decoys_open_dir(int homefd, dev_t home_dev, const char *path)
{
	char *copy = xstrdup(path), *comp = copy, *slash;
	int dfd = fcntl(homefd, F_DUPFD_CLOEXEC, 3);

	while (dfd >= 0 && (slash = strchr(comp, '/'))) {
		struct stat st;
		int next;

		*slash = '\0';
		next = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(dfd, comp, strcmp(comp, ".ssh") == 0 ? 0700 : 0755) == 0)
				next = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		close(dfd);
		dfd = next;
		if (dfd >= 0 && (fstat(dfd, &st) < 0 || st.st_dev != home_dev)) {
			close(dfd);
			dfd = -1;
		}
		comp = slash + 1;
	}
	free(copy);
	return dfd;
}

/* Write one decoy; false when it was left out (something of the user's is there). */
static bool decoys_write_one(int homefd, dev_t home_dev, const struct plan_decoy *d)
{
	const char *name = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
	struct timespec ts[2] = { { d->mtime, 0 }, { d->mtime, 0 } };
	int dfd = decoys_open_dir(homefd, home_dev, d->path), fd;
	bool ok;

	if (dfd < 0)
		return false;
	decoys_spread_inodes(dfd);
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, d->mode);
	close(dfd);
	if (fd < 0)
		return false;
	ok = write_all(fd, d->content, strlen(d->content)) == 0 && fchmod(fd, d->mode) == 0 &&
	     futimens(fd, ts) == 0;
	close(fd);
	return ok;
}

/* Give each directory made for the decoys the age of the newest decoy in it. */
static void decoys_date_dirs(int homefd, const struct plan *p)
{
	for (size_t i = 0; i < p->ndecoys; i++) {
		char *dir = xstrdup(p->decoys[i].path), *slash;

		while ((slash = strrchr(dir, '/'))) {
			int64_t newest = 0;
			size_t len;
			struct timespec ts[2];

			*slash = '\0';
			len = strlen(dir);
			for (size_t j = 0; j < p->ndecoys; j++)
				if (decoy_written[j] && strncmp(p->decoys[j].path, dir, len) == 0 &&
				    p->decoys[j].path[len] == '/' && p->decoys[j].mtime > newest)
					newest = p->decoys[j].mtime;
			if (!newest)
				continue;
			ts[0] = ts[1] = (struct timespec){ newest + (int64_t)decoys_rnd(600), 0 };
			utimensat(homefd, dir, ts, AT_SYMLINK_NOFOLLOW);
		}
		free(dir);
	}
}

int mount_write_decoys(struct mount_ctx *ctx, char **err)
{
	const struct plan *p = ctx->plan;
	struct stat st;
	int homefd;

	memset(decoy_written, 0, sizeof(decoy_written));
	if (p->ndecoys == 0)
		return 0;
	homefd = mount_open_in(ctx->root, p->home, O_PATH | O_DIRECTORY);
	if (homefd < 0)
		return set_err_errno(err, "decoys: %s", p->home);
	if (fstat(homefd, &st) < 0) {
		close(homefd);
		return set_err_errno(err, "decoys: %s", p->home);
	}
	for (size_t i = 0; i < p->ndecoys && i < PLAN_DECOYS_MAX; i++)
		decoy_written[i] = decoys_write_one(homefd, st.st_dev, &p->decoys[i]);
	decoys_date_dirs(homefd, p);
	close(homefd);
	return 0;
}

int decoys_hand_over(const struct plan *p, int sock, int report_fd, char **err)
{
	int fds[1 + PLAN_DECOYS_MAX], back[2];
	uint8_t msg[2 + PLAN_DECOYS_MAX], ack = 0;
	size_t n = 0;
	int rc = -1;

	/*
	 * The daemon's answer comes over a socket of our own, whose other end goes
	 * first with the decoys: the plan socket's other half is shut (the plan
	 * ended at its EOF).
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, back) < 0)
		return set_err_errno(err, "socketpair");
	fds[0] = back[1];

	for (size_t i = 0; i < p->ndecoys && i < PLAN_DECOYS_MAX; i++) {
		char *path;
		struct stat st;
		int fd;

		if (!decoy_written[i])
			continue;
		path = xasprintf("%s/%s", p->home, p->decoys[i].path);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		free(path);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		fds[1 + n] = fd;
		msg[2 + n] = (uint8_t)i;
		n++;
	}
	msg[0] = 'D';
	msg[1] = (uint8_t)n;
	{
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int) * (1 + PLAN_DECOYS_MAX))];
		} ctl;
		struct iovec iov = { .iov_base = msg, .iov_len = 2 + n };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				     .msg_controllen = CMSG_SPACE(sizeof(int) * (1 + n)) };
		struct cmsghdr *c;
		ssize_t w;

		memset(&ctl, 0, sizeof(ctl));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (1 + n));
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (1 + n));
		do
			w = sendmsg(sock, &mh, MSG_NOSIGNAL);
		while (w < 0 && errno == EINTR);
		if (w != (ssize_t)(2 + n)) {
			set_err_errno(err, "sending the decoys");
			goto out;
		}
	}
	{
		char rec[2] = { (char)PLAN_REPORT_DECOYS, 'D' };
		ssize_t r;

		if (write(report_fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
			set_err_errno(err, "reporting the decoys");
			goto out;
		}
		/* The daemon watches them now; until it says so, the payload must not start. */
		close(back[1]);
		back[1] = -1;
		do
			r = read(back[0], &ack, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1 || ack != 'A') {
			set_err(err, "the daemon did not take the decoys over");
			goto out;
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		close(fds[1 + i]);
	close(back[0]);
	if (back[1] >= 0)
		close(back[1]);
	return rc;
}
