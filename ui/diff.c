/*
 * ui/diff.c — `boxy diff`'s text (see ui/diff.h). Subjects and details are
 * names and words the payload chose: each goes through the screen sanitizer.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"
#include "ui/diff.h"

void diff_print_half(const char *heading, const struct diff_rows *d)
{
	printf("%s\n", heading);
	if (d->n == 0)
		printf(_("  nothing\n"));
	for (size_t i = 0; i < d->n; i++) {
		char *subject = text_sanitize(d->v[4 * i + 1]), *detail = text_sanitize(d->v[4 * i + 2]);

		printf("  %-40s %s (%s)\n", subject, detail, d->v[4 * i + 3]);
		free(subject);
		free(detail);
	}
}
