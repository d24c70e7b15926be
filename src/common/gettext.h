/* common/gettext.h — NLS wrapper: real gettext when enabled, identity otherwise. */
#ifndef BOXY_GETTEXT_H
#define BOXY_GETTEXT_H
#include <config.h>
#if ENABLE_NLS
#include <libintl.h>
#else
#define gettext(s) ((const char *)(s))
#define ngettext(s, p, n) ((const char *)((n) == 1 ? (s) : (p)))
#define textdomain(d) ((const char *)(d))
#define bindtextdomain(d, dir) ((const char *)(dir))
#endif
#endif
