/*
 * daemon/lockfile.c — the digest of a work directory's lockfiles (see
 * daemon/lockfile.h).
 *
 * The work directory is writable by every sandbox that ran there, so each
 * name is opened relative to the directory with O_NOFOLLOW and O_NONBLOCK
 * (a planted link or fifo is skipped, never followed or waited on), and only
 * a regular file is read. The digest covers, for each file in name order,
 * its name, its length and its bytes, so renaming a lockfile or moving bytes
 * between two of them changes it. Files past LOCKFILE_MAX_BYTES count by
 * name, size and mtime: the daemon does not stall its loop on a huge file.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/util.h"
#include "daemon/lockfile.h"

static const char *const lockfile_names[] = {
	"Cargo.lock", "Gemfile.lock", "Pipfile.lock", "composer.lock", "go.sum",
	"npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml", "poetry.lock",
	"uv.lock", "yarn.lock",
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lockfile names present in dfd (any type: filtered when opened), sorted. */
static char **lockfile_list(int dfd)
{
	char **v = NULL;
	size_t nreq = 0;
	int fd = dup(dfd);
	DIR *d;
	struct dirent *e;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((e = readdir(d)) != NULL) {
		bool take = false;

		for (size_t i = 0; i < sizeof(lockfile_names) / sizeof(lockfile_names[0]); i++)
			take = take || strcmp(e->d_name, lockfile_names[i]) == 0;
		if (!take && fnmatch("requirements*.txt", e->d_name, 0) == 0 &&
		    nreq < LOCKFILE_MAX_REQUIREMENTS && strlen(e->d_name) < 128) {
			take = true;
			nreq++;
		}
		if (take)
			strv_push(&v, e->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, strv_len(v), sizeof(*v), name_cmp);
	return v;
}

/* A file's name and a word about it, each NUL-terminated: one field of the digest. */
static void digest_field(EVP_MD_CTX *ctx, const char *name, const char *text)
{
	EVP_DigestUpdate(ctx, name, strlen(name) + 1);
	EVP_DigestUpdate(ctx, text, strlen(text) + 1);
}

/* Feed one file into ctx; false when it is not a regular file we may read. */
static bool lockfile_feed(EVP_MD_CTX *ctx, int dfd, const char *name)
{
	char buf[65536], head[64];
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	ssize_t n;
	uint64_t left;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	if ((uint64_t)st.st_size > LOCKFILE_MAX_BYTES) {
		snprintf(head, sizeof(head), "%llu mtime %lld.%09ld", (unsigned long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		digest_field(ctx, name, head);
		close(fd);
		return true;
	}
	snprintf(head, sizeof(head), "%llu", (unsigned long long)st.st_size);
	digest_field(ctx, name, head);
	left = (uint64_t)st.st_size;
	while (left > 0 && (n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		left -= (uint64_t)n;
	}
	close(fd);
	return true;
}

char *lockfile_digest(const char *workdir)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	char **names;
	size_t taken = 0;
	EVP_MD_CTX *ctx;
	int dfd;

	if (!workdir || workdir[0] != '/')
		return NULL;
	dfd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	names = lockfile_list(dfd);
	if (!names) {
		close(dfd);
		return NULL;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		fatal("the SHA-256 digest cannot be set up");
	for (size_t i = 0; names[i]; i++)
		taken += lockfile_feed(ctx, dfd, names[i]);
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	strv_free(names);
	close(dfd);
	if (taken == 0)
		return NULL;
	for (unsigned i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return xasprintf("sha256:%s", hex);
}
