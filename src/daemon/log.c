/*
 * daemon/log.c — the daemon's log, bounded in size and in rate (see
 * daemon/log.h for the rules).
 *
 * Why: anything that can make the daemon log can make it log a lot — a
 * payload that had reached the socket made 60 MB of refused connects in
 * ten seconds, and another local user can connect to the daemon's
 * abstract socket as often as it likes. So each line is one write(2) of at
 * most DLOG_LINE_MAX bytes, repeated lines become a count, and the file is
 * rotated past DLOG_MAX_BYTES (checked before each line and once a second,
 * for what other writers of stderr added).
 */
#include <config.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "common/util.h"

#define DLOG_LINE_MAX  2048
#define DLOG_CLASSES   8
#define WINDOW_MS      1000

struct dlog_class {
	const char *name;           /* static */
	uint64_t window_ms;         /* start of the current second */
	unsigned in_window;
	size_t held;
};

static char *log_path;
static struct dlog_class classes[DLOG_CLASSES];
static char last_line[DLOG_LINE_MAX];
static uint64_t last_ms;
static size_t last_held;

void dlog_set_path(const char *path)
{
	free(log_path);
	log_path = path ? xstrdup(path) : NULL;
}

/* Rename a full log to daemon.log.1 and point stdout and stderr at a fresh one. */
static void dlog_rotate_if_full(void)
{
	struct stat fst, pst;
	char *old;
	int fd;

	if (!log_path || fstat(STDERR_FILENO, &fst) < 0 || fst.st_size < (off_t)DLOG_MAX_BYTES)
		return;
	/* Only our own file: a daemon started by hand logs to whatever it was given. */
	if (lstat(log_path, &pst) < 0 || pst.st_dev != fst.st_dev || pst.st_ino != fst.st_ino)
		return;
	old = xasprintf("%s.1", log_path);
	if (rename(log_path, old) == 0) {
		fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
	}
	free(old);
}

/* Write one line, stamped, in one write(2). */
static void dlog_write(const char *text)
{
	char line[DLOG_LINE_MAX + 96], stamp[32];
	time_t t = time(NULL);
	int n;

	dlog_rotate_if_full();
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", localtime(&t));
	n = snprintf(line, sizeof(line), "%s boxy-daemon[%d]: %s\n", stamp, (int)getpid(), text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (write_all(STDERR_FILENO, line, (size_t)n) < 0)
		return;     /* nowhere to say so */
}

/* Say how often the last line repeated, if it did. */
static void dlog_flush_repeats(void)
{
	char *s;

	if (last_held == 0)
		return;
	s = xasprintf("(the line before was repeated %zu more times in the last second)",
		      last_held);
	last_held = 0;
	dlog_write(s);
	free(s);
}

/* Write text unless it repeats the last line within the second. */
static void dlog_emit(const char *text)
{
	uint64_t now = now_mono_ms();

	if (strcmp(text, last_line) == 0 && now - last_ms < WINDOW_MS) {
		last_held++;
		return;
	}
	dlog_flush_repeats();
	snprintf(last_line, sizeof(last_line), "%s", text);
	last_ms = now;
	dlog_write(text);
}

/* Format a line and hand it on. */
static void dlog_vmsg(const char *fmt, va_list ap)
{
	char text[DLOG_LINE_MAX];

	vsnprintf(text, sizeof(text), fmt, ap);
	dlog_emit(text);
}

void dlog_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dlog_vmsg(fmt, ap);
	va_end(ap);
}

/* Close a class's second: one line for what it held back. */
static void dlog_class_flush(struct dlog_class *c)
{
	char *s;

	if (c->held == 0)
		return;
	s = xasprintf("%zu more %s in the last second", c->held, c->name);
	c->held = 0;
	dlog_emit(s);
	free(s);
}

void dlog_limited(const char *class, const char *fmt, ...)
{
	uint64_t now = now_mono_ms();
	struct dlog_class *c = NULL;
	va_list ap;

	for (size_t i = 0; i < DLOG_CLASSES && !c; i++)
		if (classes[i].name == class || !classes[i].name)
			c = &classes[i];
	if (!c)
		c = &classes[DLOG_CLASSES - 1];     /* more classes than slots: they share */
	if (c->name != class) {
		dlog_class_flush(c);
		c->name = class;
		c->in_window = 0;
		c->window_ms = now;
	}
	if (now - c->window_ms >= WINDOW_MS) {
		dlog_class_flush(c);
		c->window_ms = now;
		c->in_window = 0;
	}
	if (++c->in_window > DLOG_CLASS_BURST) {
		c->held++;
		return;
	}
	va_start(ap, fmt);
	dlog_vmsg(fmt, ap);
	va_end(ap);
}

void dlog_tick(void)
{
	uint64_t now = now_mono_ms();

	for (size_t i = 0; i < DLOG_CLASSES && classes[i].name; i++)
		if (now - classes[i].window_ms >= WINDOW_MS)
			dlog_class_flush(&classes[i]);
	if (last_held && now - last_ms >= WINDOW_MS)
		dlog_flush_repeats();
	dlog_rotate_if_full();
}
