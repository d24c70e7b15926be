/*
 * ui/doctor.h — `boxy doctor`'s report for people: the checks as plain data
 * (cli/doctor.c probes the host and fills them) and their text form, one
 * line per check with its mark, wrapped at 80 columns, notes indented.
 */
#ifndef BOXY_UI_DOCTOR_H
#define BOXY_UI_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

enum doctor_status {
	DOCTOR_OK,      /* "+": what boxy needs is there */
	DOCTOR_WARN,    /* "!": boxy runs, something is weaker or unavailable */
	DOCTOR_FAIL,    /* "x": boxy cannot run */
};

struct doctor_check {
	const char *name;           /* "kernel", "landlock", "seccomp", "userns", "apparmor", "tun",
				     * "cgroup2", "memory" */
	enum doctor_status status;
	char *detail;               /* one line, malloc'd */
	char **notes;               /* what is lost and what to do, NULL-terminated strv; may be NULL */
};

#define DOCTOR_NCHECKS 11

struct doctor_report {
	struct doctor_check checks[DOCTOR_NCHECKS];
	size_t n;
};

/* "ok" / "warn" / "fail", and the mark "+" / "!" / "x". */
const char *doctor_status_word(enum doctor_status s);
char doctor_status_mark(enum doctor_status s);

/* The text report's lines wrap at this many columns; notes start at column 16. */
#define DOCTOR_WIDTH    80
#define DOCTOR_NOTE_COL 16

/*
 * The report as the specification's lines (wrapped at DOCTOR_WIDTH; with
 * color, the marks coloured for a terminal). malloc'd.
 */
char *doctor_format_text(const struct doctor_report *r);
char *doctor_format_text_color(const struct doctor_report *r, bool color);

#endif
