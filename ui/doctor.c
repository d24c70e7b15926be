/*
 * ui/doctor.c — `boxy doctor`'s report as text (see doctor.h):
 *
 *    + kernel    ok  6.18.44
 *
 * a mark, the check's name in 10 columns, its status and detail, then its
 * notes from column DOCTOR_NOTE_COL; every line wrapped at DOCTOR_WIDTH on
 * spaces, the marks coloured when the output is a terminal.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/doctor.h"
#include "common/util.h"

/* "ok", "warn" or "fail". */
const char *doctor_status_word(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_WARN:
		return "warn";
	case DOCTOR_FAIL:
		break;
	}
	return "fail";
}

/* "+", "!" or "x". */
char doctor_status_mark(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK:
		return '+';
	case DOCTOR_WARN:
		return '!';
	case DOCTOR_FAIL:
		break;
	}
	return 'x';
}

/* Display columns of a UTF-8 string: every byte but continuation bytes. */
static size_t doctor_columns(const char *s, size_t n)
{
	size_t cols = 0;

	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cols;
}

/*
 * text at column col, wrapped at DOCTOR_WIDTH on spaces; continuation lines
 * start at column indent. A word wider than the line stays whole.
 */
static void doctor_put_wrapped(FILE *f, const char *text, size_t col, size_t indent)
{
	const char *p = text;
	bool first = true;

	while (*p) {
		size_t wl = strcspn(p, " "), cols = doctor_columns(p, wl);

		if (!first && col + 1 + cols > DOCTOR_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, wl, f);
		col += cols;
		first = false;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

/* The report's lines, without colour. */
char *doctor_format_text(const struct doctor_report *r)
{
	return doctor_format_text_color(r, false);
}

/* The report's lines, the marks coloured when color. */
char *doctor_format_text_color(const struct doctor_report *r, bool color)
{
	static const char *const mark_color[] = {
		[DOCTOR_OK] = "\x1b[32m", [DOCTOR_WARN] = "\x1b[33m", [DOCTOR_FAIL] = "\x1b[31m",
	};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		fatal("out of memory");
	for (size_t i = 0; i < r->n; i++) {
		const struct doctor_check *c = &r->checks[i];
		const char *word = doctor_status_word(c->status);
		size_t col;

		/* " + kernel    ok  6.18.44": mark, name in 10 columns, status, detail. */
		if (color)
			fprintf(f, " %s%c\x1b[0m %-10s%s  ", mark_color[c->status],
				doctor_status_mark(c->status), c->name, word);
		else
			fprintf(f, " %c %-10s%s  ", doctor_status_mark(c->status), c->name, word);
		col = 3 + (strlen(c->name) > 10 ? strlen(c->name) : 10) + strlen(word) + 2;
		doctor_put_wrapped(f, c->detail ? c->detail : "", col, DOCTOR_NOTE_COL + 2);
		for (char **n = c->notes; n && *n; n++) {
			fprintf(f, "%*s", DOCTOR_NOTE_COL, "");
			doctor_put_wrapped(f, *n, DOCTOR_NOTE_COL, DOCTOR_NOTE_COL + 2);
		}
	}
	if (fclose(f) != 0)
		fatal("out of memory");
	return out;
}
