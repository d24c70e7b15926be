/*
 * client/client.h — the client side of the daemon socket: where the socket lives,
 * starting the daemon on demand, the build-id handshake.
 */
#ifndef BOXY_CLIENT_H
#define BOXY_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "proto/daemon-msg.h"
#include "proto/place.h"

/*
 * Register this user's daemon directories as ones no sandbox may write
 * (common/protected.h): the state directory, the runtime directory and the socket
 * directory the store's record names. For a run without the daemon.
 */
void client_protect_own_dirs(void);

/*
 * Connect to the daemon and say hello. When start is true and none answers,
 * start one (under a lock, so two clients do not start two) and wait for it,
 * bounded. When the daemon is of another build: if it is idle and
 * replace_stale is true, stop it, say so on stderr in one line, and start
 * this build's; if it is busy, fail with a message saying so.
 * Returns the connected socket, or -1 with *err.
 */
int client_connect(bool start, bool replace_stale, struct daemon_info *info, char **err);

/* Ask the daemon to stop (refused while sessions run). */
int client_stop_daemon(int fd, char **err);

#endif
