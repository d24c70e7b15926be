/*
 * proto/place.c — the daemon's directories, socket address, record and the
 * build id (proto/place.h). Every directory is created 0700 and refused
 * unless it is the user's, a real directory and private: the socket and
 * the store are only as safe as the directories holding them.
 */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "proto/place.h"

/* Bytes of the build-id note the id keeps (GNU ld writes 20 for sha1): 16 hex digits, as before. */
#define BUILD_ID_MAX_BYTES 8

/* Create dir 0700 if missing; then insist it is ours, a directory, and private. */
static int private_dir(const char *dir, char **err)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return set_err_errno(err, _("creating %s"), dir);
	if (lstat(dir, &st) < 0)
		return set_err_errno(err, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return set_err(err, _("%s is not a directory"), dir);
	if (st.st_uid != getuid())
		return set_err(err, _("%s belongs to uid %u, not to you"), dir, (unsigned)st.st_uid);
	if ((st.st_mode & 0077) != 0)
		return set_err(err, _("%s is accessible to others (mode %03o); it must be 0700"),
			       dir, (unsigned)(st.st_mode & 0777));
	return 0;
}

char *client_state_dir(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (state && state[0] == '/')
		return xasprintf("%s/boxy", state);
	if (home && home[0] == '/')
		return xasprintf("%s/.local/state/boxy", home);
	pw = getpwuid(getuid());
	return pw ? xasprintf("%s/.local/state/boxy", pw->pw_dir) : NULL;
}

/* mkdir -p path, each missing directory 0700; what exists is left as it is. */
static void mkdir_parents(const char *path)
{
	char *p = xstrdup(path), *q = p;

	while ((q = strchr(q + 1, '/'))) {
		*q = '\0';
		mkdir(p, 0700);
		*q = '/';
	}
	mkdir(p, 0700);
	free(p);
}

int client_state_dir_make(char **out, char **err)
{
	char *state = client_state_dir();
	struct stat st;

	if (!state)
		return set_err(err, _("cannot find a state directory (set HOME or XDG_STATE_HOME)"));
	mkdir_parents(state);
	if (lstat(state, &st) < 0) {
		set_err_errno(err, "%s", state);
		free(state);
		return -1;
	}
	/* The daemon's record and lock live here: nobody else may write it. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0022) != 0) {
		set_err(err, _("%s must be a directory of yours that only you can write"), state);
		free(state);
		return -1;
	}
	*out = state;
	return 0;
}

/*
 * Without XDG_RUNTIME_DIR the socket lives in the state directory
 * (~/.local/state/boxy/run): a directory of the user's own, so no other
 * user can create it first (as they could /tmp/boxy-UID) to block or
 * hijack it.
 */
int client_runtime_dir(char **out, char **err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir, *state;

	if (xdg && xdg[0] == '/') {
		dir = xasprintf("%s/boxy", xdg);
	} else {
		if (client_state_dir_make(&state, err) < 0)
			return -1;
		dir = xasprintf("%s/run", state);
		free(state);
	}
	if (private_dir(dir, err) < 0) {
		free(dir);
		return -1;
	}
	*out = dir;
	return 0;
}

int client_sock_addr(const char *path, struct sockaddr_un *sa, socklen_t *len, int *dirfd)
{
	const char *slash;
	char *dir;

	*dirfd = -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (path[0] == '@') {
		/* Abstract: a NUL, then the name, no terminator. */
		size_t n = strlen(path + 1);

		if (n == 0 || n >= sizeof(sa->sun_path) - 1) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(sa->sun_path + 1, path + 1, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
		return 0;
	}
	if (strlen(path) < sizeof(sa->sun_path)) {
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
		*len = sizeof(*sa);
		return 0;
	}
	/* Too long for sun_path: reach it through a descriptor of its directory. */
	slash = strrchr(path, '/');
	if (!slash || strlen(slash) > 64) {
		errno = ENAMETOOLONG;
		return -1;
	}
	dir = xstrndup(path, (size_t)(slash - path));
	*dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (*dirfd < 0)
		return -1;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d%s", *dirfd, slash);
	*len = sizeof(*sa);
	return 0;
}

/*
 * The build id tells two builds of boxy apart — even of the same version —
 * which is the point: the daemon assembles every sandbox, so its rules must
 * be this binary's rules. It is the linker's build-id note (-Wl,--build-id: a
 * hash of the whole linked output) read from the running image's program
 * headers, so no file is read: its first 8 bytes, as 16 hex digits. A binary
 * linked without the note falls back to FNV-1a over the executable's bytes.
 */
static char build_id_hex[2 * BUILD_ID_MAX_BYTES + 1];

/* dl_iterate_phdr callback: hex the GNU build-id note of the main program (the first object). */
static int build_id_from_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		size_t left = ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (left >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t namesz = (nh->n_namesz + 3u) & ~(size_t)3;
			size_t descsz = (nh->n_descsz + 3u) & ~(size_t)3;
			size_t total = sizeof(*nh) + namesz + descsz;

			if (namesz > left || descsz > left || total > left)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0 &&
			    nh->n_descsz >= BUILD_ID_MAX_BYTES) {
				const unsigned char *d = p + sizeof(*nh) + namesz;

				for (size_t j = 0; j < BUILD_ID_MAX_BYTES; j++)
					snprintf(build_id_hex + 2 * j, 3, "%02x", d[j]);
				return 1;
			}
			p += total;
			left -= total;
		}
	}
	return 1; /* only the main program counts */
}

/* FNV-1a over /proc/self/exe: the id of a binary linked without a build-id note. */
static void build_id_from_file(void)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[65536];
	ssize_t n;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fatal_errno("reading /proc/self/exe");
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ULL;
		}
	}
	close(fd);
	snprintf(build_id_hex, sizeof(build_id_hex), "%016llx", (unsigned long long)h);
}

/* This binary's build id, as lowercase hex (computed once). */
const char *build_id(void)
{
	if (build_id_hex[0])
		return build_id_hex;
	dl_iterate_phdr(build_id_from_phdr, NULL);
	if (!build_id_hex[0])
		build_id_from_file();
	return build_id_hex;
}

char *client_record_path(const char *state)
{
	return xasprintf("%s/daemon.lock", state);
}

void daemon_record_free(struct daemon_record *r)
{
	free(r->sock);
	free(r->abstract);
	memset(r, 0, sizeof(*r));
}

int client_record_read(const char *state, struct daemon_record *r)
{
	char *path = client_record_path(state), *text = NULL, *save = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = read_file(path, 4096, &text, NULL);
	free(path);
	if (rc < 0)
		return -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "pid ", 4) == 0) {
			char *end;
			long v = strtol(line + 4, &end, 10);

			if (!*end && v > 0 && v < (1L << 30))
				r->pid = (pid_t)v;
		} else if (strncmp(line, "socket /", 8) == 0 && !r->sock) {
			r->sock = xstrdup(line + 7);
		} else if (strncmp(line, "abstract @", 10) == 0 && !r->abstract) {
			r->abstract = xstrdup(line + 9);
		}
	}
	free(text);
	if (r->pid <= 0) {
		daemon_record_free(r);
		return -1;
	}
	return 0;
}
