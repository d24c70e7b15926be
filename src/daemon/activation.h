/*
 * daemon/activation.h — a listening socket handed over by systemd (the
 * sd_listen_fds protocol, without libsystemd): doc/systemd.md.
 */
#ifndef BOXY_ACTIVATION_H
#define BOXY_ACTIVATION_H

#include <stdbool.h>

/* The one fd passed in, as systemd numbers it. */
#define ACTIVATION_FD 3

/*
 * The listening socket systemd passed for want_path, non-blocking and
 * close-on-exec; -1 when none was passed to this process (*why NULL) or
 * the one passed is refused (*why says why, malloc'd). LISTEN_PID,
 * LISTEN_FDS and LISTEN_FDNAMES are removed from the environment either way.
 */
int activation_take_listener(const char *want_path, char **why);

/* True once activation_take_listener returned a socket: the file is systemd's to remove. */
bool activation_inherited(void);

#endif
