/* common/gettext.h — NLS wrapper: real gettext when enabled, identity otherwise. */
#ifndef BOXY_GETTEXT_H
#define BOXY_GETTEXT_H
#include <config.h>
#if ENABLE_NLS
#include <libintl.h>
#else
#define gettext(s) ((const char *)(s))
#define textdomain(d) ((const char *)(d))
#define bindtextdomain(d, dir) ((const char *)(dir))
#endif
#endif
