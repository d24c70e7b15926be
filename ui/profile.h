/*
 * ui/profile.h — profiles for people: `boxy profile list`'s table and
 * `boxy profile show`'s view of a profile (ui/profile.c).
 */
#ifndef BOXY_UI_PROFILE_H
#define BOXY_UI_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "spec/profile.h"
#include "spec/runspec.h"

/* The table of profiles v (n of them), then where the user's own go (udir; NULL: the default). */
void profile_print_table(FILE *out, const struct profile_info *v, size_t n, const char *udir);

/* A resolved profile as `boxy profile show` prints it. */
void profile_print_runspec(FILE *out, const struct runspec *rs);

#endif
