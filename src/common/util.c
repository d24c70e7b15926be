/*
 * common/util.c — allocation wrappers, error strings, string vectors, whole-file
 * I/O and path arithmetic shared by every module.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

const char *util_progname = "boxy";

static void vmessage(const char *fmt, va_list ap, int errnum)
{
	fprintf(stderr, "%s: ", util_progname);
	vfprintf(stderr, fmt, ap);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, 0);
	va_end(ap);
	exit(EXIT_BOXY_FAILED);
}

void fatal_errno(const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, e);
	va_end(ap);
	exit(EXIT_BOXY_FAILED);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap, 0);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fatal("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fatal("out of memory allocating %zu×%zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		fatal("out of memory allocating %zu bytes", n);
	return q;
}

void *xappend(void *arrayp, size_t *nmemb, size_t size)
{
	void **ap = arrayp;
	char *slot;

	if (*nmemb >= SIZE_MAX / size - 1)
		fatal("array too large");
	*ap = xrealloc(*ap, (*nmemb + 1) * size);
	slot = (char *)*ap + *nmemb * size;
	memset(slot, 0, size);
	(*nmemb)++;
	return slot;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		fatal("out of memory");
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		fatal("out of memory");
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		fatal("out of memory");
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int set_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	free(*err);
	va_start(ap, fmt);
	*err = xvasprintf(fmt, ap);
	va_end(ap);
	return -1;
}

int set_err_errno(char **err, const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	char *msg;

	if (!err)
		return -1;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	free(*err);
	*err = xasprintf("%s: %s", msg, strerror(e));
	free(msg);
	errno = e;
	return -1;
}

size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **strv_dup(char *const *v)
{
	size_t n = strv_len(v);
	char **out = xcalloc(n + 1, sizeof(*out));

	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

void strv_push(char ***v, const char *s)
{
	size_t n = strv_len(*v);

	*v = xrealloc(*v, (n + 2) * sizeof(**v));
	(*v)[n] = xstrdup(s);
	(*v)[n + 1] = NULL;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int read_exact(int fd, void *buf, size_t n)
{
	char *p = buf;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			if (got == 0)
				return 0;
			errno = EPROTO;
			return -1;
		}
		got += (size_t)r;
	}
	return 1;
}

int read_file(const char *path, size_t max, char **out, size_t *outlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len = 0, cap = 4096;
	char *buf;

	if (fd < 0)
		return -1;
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap >= max) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return -1;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	if (outlen)
		*outlen = len;
	return 0;
}

int write_file(const char *path, const void *buf, size_t n, int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);

	if (fd < 0)
		return -1;
	if (write_all(fd, buf, n) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static uint64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t now_mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

uint64_t now_real_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

bool path_is_normal(const char *path)
{
	char *norm;
	bool same;

	if (!path || path[0] != '/')
		return false;
	norm = path_absolute(path, "/");
	same = norm && strcmp(norm, path) == 0;
	free(norm);
	return same;
}

/*
 * Lexical normalisation: collapse "//", drop ".", resolve ".." against what
 * came before (never above "/"). Symlinks are deliberately not resolved
 * here; the mount stage resolves sources itself, where it matters.
 */
char *path_absolute(const char *path, const char *base)
{
	char *joined, *out, *seg, *save = NULL;
	size_t olen = 0;
	char cwd[PATH_MAX];

	if (path[0] == '/') {
		joined = xstrdup(path);
	} else {
		if (!base) {
			if (!getcwd(cwd, sizeof(cwd)))
				return NULL;
			base = cwd;
		}
		joined = xasprintf("%s/%s", base, path);
	}
	out = xmalloc(strlen(joined) + 2);
	out[0] = '\0';
	for (seg = strtok_r(joined, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			char *slash = strrchr(out, '/');

			if (slash) {
				*slash = '\0';
				olen = (size_t)(slash - out);
			}
			continue;
		}
		out[olen++] = '/';
		strcpy(out + olen, seg);
		olen += strlen(seg);
	}
	if (olen == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	free(joined);
	return out;
}

bool path_has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strcmp(prefix, "/") == 0)
		return path[0] == '/';
	if (strncmp(path, prefix, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/';
}

char *util_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(buf[0] ? buf : "/");
}

const char *format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024.0 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f%s", v, units[u]);
	return buf;
}

bool peer_is_local_user(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64], *text = NULL, *line;
	int fields = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid() ||
	    cred.pid <= 0)
		return false;
	/*
	 * NSpid lists the peer's pid in our pid namespace and in every namespace
	 * below it down to its own: exactly one entry means it is in ours. This
	 * needs no ptrace access (unlike /proc/PID/ns/pid, which sibling user
	 * namespaces cannot read), and the pid cannot be reused while the peer
	 * holds the socket.
	 */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cred.pid);
	if (read_file(path, 1 << 16, &text, NULL) < 0)
		return false;
	line = strstr(text, "\nNSpid:");
	if (line) {
		char *eol, *save = NULL;

		line += 7;
		eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			fields++;
	}
	free(text);
	return fields == 1;
}

static struct rlimit nofile_saved;
static bool nofile_raised;

void nofile_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	nofile_saved = rl;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 65536)
		rl.rlim_cur = rl.rlim_max;
	else
		rl.rlim_cur = 65536;
	if (rl.rlim_cur > nofile_saved.rlim_cur && setrlimit(RLIMIT_NOFILE, &rl) == 0)
		nofile_raised = true;
}

void nofile_restore(void)
{
	if (nofile_raised)
		setrlimit(RLIMIT_NOFILE, &nofile_saved);
}

bool color_wanted(int fd)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (no && no[0])
		return false;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fd) == 1;
}

size_t utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
	size_t n;
	uint32_t c;

	if (avail == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;       /* a continuation byte, C0/C1 (always overlong), F5..FF */
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

bool unicode_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       cp == 0xad ||                            /* soft hyphen */
	       cp == 0x61c ||                           /* arabic letter mark */
	       cp == 0x180e ||                          /* mongolian vowel separator */
	       (cp >= 0x200b && cp <= 0x200f) ||        /* zero widths, LRM, RLM */
	       (cp >= 0x2028 && cp <= 0x202e) ||        /* LS, PS, LRE, RLE, PDF, LRO, RLO */
	       (cp >= 0x2060 && cp <= 0x206f) ||        /* word joiner .. isolates, deprecated */
	       cp == 0xfeff ||                          /* BOM, zero-width no-break space */
	       (cp >= 0xfff9 && cp <= 0xfffb) ||        /* interlinear annotation */
	       cp == 0xfffe || cp == 0xffff ||
	       (cp >= 0xe0000 && cp <= 0xe007f);        /* tags */
}

char *text_sanitize(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	char *out = xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t len = utf8_decode(p + i, n - i, &cp);

		if (len == 0 || unicode_is_control(cp)) {
			/* One '?' per byte of an invalid sequence, one per control character. */
			*o++ = '?';
			i += len ? len : 1;
			continue;
		}
		memcpy(o, p + i, len);
		o += len;
		i += len;
	}
	*o = '\0';
	return out;
}

int pty_open(int *master, int *slave, const struct winsize *ws, char **err)
{
	char name[64];
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK), sl;

	if (m < 0)
		return set_err_errno(err, _("opening a pty"));
	if (grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof(name)) != 0) {
		close(m);
		return set_err_errno(err, _("preparing a pty"));
	}
	sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0) {
		close(m);
		return set_err_errno(err, _("opening %s"), name);
	}
	ioctl(m, TIOCSWINSZ, ws);
	*master = m;
	*slave = sl;
	return 0;
}
