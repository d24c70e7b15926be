/*
 * common/util.h — allocation wrappers that never return NULL, error strings the
 * caller owns, and the few helpers every module needs.
 *
 * Conventions used across boxy:
 *  - Out-of-memory and broken invariants are fatal().
 *  - A recoverable failure returns -1 and, when err is not NULL, stores a
 *    malloc'd one-line reason in *err that the caller frees.
 */
#ifndef BOXY_UTIL_H
#define BOXY_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/gettext.h"
#define _(s) gettext(s)
#define N_(s) (s)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Exit codes for boxy's own failures (the env/podman convention). */
#define EXIT_BOXY_USAGE   2     /* bad flag, bad profile */
#define EXIT_BOXY_GATE    123   /* the payload succeeded, the --fail-on gate failed (doc/ci.md) */
#define EXIT_BOXY_FAILED  125   /* boxy itself failed */
#define EXIT_BOXY_NOEXEC  126   /* the command was found but could not run */
#define EXIT_BOXY_NOENT   127   /* the command was not found */

/* Program name used as the prefix of messages ("boxy"). */
extern const char *util_progname;

/* Print "boxy: MESSAGE" to stderr and exit(EXIT_BOXY_FAILED). */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Like fatal() but appends ": strerror(errno)". */
void fatal_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Print "boxy: MESSAGE" to stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow an array of nmemb elements of size by one, returning the new slot (zeroed). */
void *xappend(void *arrayp, size_t *nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/* Store a formatted reason in *err (if err is not NULL); always returns -1. */
int set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, appending ": strerror(errno)". */
int set_err_errno(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* NULL-terminated string vectors. */
size_t strv_len(char *const *v);
char **strv_dup(char *const *v);
void strv_push(char ***v, const char *s);     /* copies s */
void strv_free(char **v);

/* Write all of buf; -1 on error. Read exactly n bytes; 0 on EOF before any byte, -1 on error/short. */
int write_all(int fd, const void *buf, size_t n);
int read_exact(int fd, void *buf, size_t n);
/* Read a whole file of at most max bytes; NUL-terminated; -1 on error (errno set). */
int read_file(const char *path, size_t max, char **out, size_t *outlen);
/* Write a whole file (O_CREAT|O_TRUNC, mode); -1 on error. */
int write_file(const char *path, const void *buf, size_t n, int mode);

/* Milliseconds on CLOCK_MONOTONIC / CLOCK_REALTIME. */
uint64_t now_mono_ms(void);

/*
 * Paint on fd? Only a terminal, never under NO_COLOR (set and not empty,
 * as no-color.org defines it) nor TERM=dumb. Every place boxy colours asks this.
 */
bool color_wanted(int fd);
uint64_t now_real_ms(void);

/* Absolute, lexically normalised path (no symlink resolution); relative paths are
 * taken against base (or the cwd when base is NULL). Returns malloc'd string. */
char *path_absolute(const char *path, const char *base);
/* True if path is absolute and already what path_absolute makes of it (no "//", ".", "..",
 * trailing '/'): the form every path of a run-spec has after runspec_finish. */
bool path_is_normal(const char *path);
/* True if path equals prefix or lies below it (both normalised absolute). */
bool path_has_prefix(const char *path, const char *prefix);

/* Directory holding the running executable (/proc/self/exe), malloc'd. */
char *util_exe_dir(void);

/*
 * True when the peer of the unix socket fd runs as this uid and in this
 * process's pid namespace. A process inside a sandbox is in a pid namespace
 * of its own, so neither side of the daemon socket will talk to one: the
 * daemon refuses it as a client, a client refuses it as a daemon. Fails
 * closed: a peer whose namespace cannot be read is not the same.
 */
bool peer_is_local_user(int fd);

/* Human-readable size ("38.4KiB") into buf. */
const char *format_size(uint64_t bytes, char *buf, size_t len);

/*
 * The daemon holds a descriptor per connection being dialled, per session
 * and per client, so it raises its soft RLIMIT_NOFILE to the hard limit
 * (capped at 65536) at start. Its children must not inherit that: programs
 * that use select() break on descriptors past 1024, which is why the soft
 * limit is 1024 to begin with. nofile_restore() puts the original back;
 * it is one system call, safe between clone() and execve().
 */
void nofile_raise(void);
void nofile_restore(void);

/*
 * Text a hostile payload may have chosen (DNS names, SNI, paths, argv)
 * reaches terminals and JSON. utf8_decode() is the one strict decoder:
 * the length (1..4) of the well-formed UTF-8 sequence at s and its code
 * point in *cp, or 0 for an invalid byte (overlong forms such as C0 9B,
 * surrogates, code points past U+10FFFF, a truncated sequence).
 * unicode_is_control() is true for what must never reach a terminal raw:
 * C0, DEL, C1 (U+0080..U+009F: U+009B is a one-byte CSI) and the invisible
 * format characters that reorder or hide text (bidi embeddings, overrides
 * and isolates such as U+202E, zero-width characters, the BOM, tags).
 */
size_t utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp);
bool unicode_is_control(uint32_t cp);
/*
 * The one sanitizer for the screen: a copy of s (NULL → "") with every
 * control (above) and every invalid UTF-8 byte replaced by '?'. malloc'd.
 * Everything payload-controlled that boxy prints to a terminal goes
 * through it: watch, ps, show, the end-of-run table, error lines.
 */
char *text_sanitize(const char *s);

struct winsize;
/*
 * Open a pty pair sized ws: the master non-blocking, both close-on-exec and
 * neither the caller's controlling terminal. -1 with *err (nothing left open).
 */
int pty_open(int *master, int *slave, const struct winsize *ws, char **err);

#endif
