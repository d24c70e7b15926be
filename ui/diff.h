/*
 * ui/diff.h — `boxy diff`'s text: what one session did that another did not.
 */
#ifndef BOXY_UI_DIFF_H
#define BOXY_UI_DIFF_H

#include <stddef.h>

/* One half of a diff: n rows of four strings (kind, subject, detail, count). */
struct diff_rows {
	char **v;
	size_t n;
};

/* The half under heading, "  SUBJECT  DETAIL (COUNT)" a line, or "  nothing"; sanitized. */
void diff_print_half(const char *heading, const struct diff_rows *d);

#endif
