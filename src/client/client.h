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

/* The directory holding daemon.sock: $XDG_RUNTIME_DIR/boxy, or the state
 * directory's run/ (~/.local/state/boxy/run) when XDG_RUNTIME_DIR is unset.
 * Created 0700; refused unless owned by the user, a real directory and 0700.
 * malloc'd path in *out. */
int client_runtime_dir(char **out, char **err);
/* The state directory: $XDG_STATE_HOME/boxy or ~/.local/state/boxy. malloc'd. */
char *client_state_dir(void);
/* The same, created (0700, with its parents) and checked: a directory of the
 * user's that nobody else can write. malloc'd path in *out. */
int client_state_dir_make(char **out, char **err);

/*
 * The address of a unix socket: path is a file name, or "@name" for an
 * abstract socket. A file name too long for sun_path is reached through
 * /proc/self/fd/N/NAME, N a descriptor of its directory returned in *dirfd
 * (-1 otherwise), which the caller closes after bind() or connect().
 */
int client_sock_addr(const char *path, struct sockaddr_un *sa, socklen_t *len, int *dirfd);

/*
 * The record of the daemon that serves a store: STATE/daemon.lock, which
 * that daemon holds an exclusive flock on for its whole life, and in which
 * it writes its pid, its socket file and its abstract socket's name:
 *     pid 1234
 *     socket /run/user/1000/boxy/daemon.sock
 *     abstract @boxy-1000-0123456789abcdef0123456789abcdef
 */
struct daemon_record {
	pid_t pid;
	char *sock;                 /* NULL when absent */
	char *abstract;             /* "@name", NULL when absent */
};
char *client_record_path(const char *state);
int client_record_read(const char *state, struct daemon_record *r);
void daemon_record_free(struct daemon_record *r);

/*
 * Register this user's daemon directories as ones no sandbox may write
 * (common/protected.h): the state directory, the runtime directory and the socket
 * directory the store's record names. For a run without the daemon.
 */
void client_protect_own_dirs(void);

/* This executable's build id: 16 hex digits hashing the binary's bytes. */
const char *build_id(void);

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
