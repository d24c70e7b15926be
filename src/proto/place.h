/*
 * proto/place.h — where the per-user daemon lives, as the client and the
 * daemon both find it: the state directory (its store, its log, its
 * record), the runtime directory holding its socket, the address of a unix
 * socket, the record a running daemon writes, and this build's id (the
 * handshake compares it). One home below client/ and daemon/ so that
 * neither includes the other for it.
 */
#ifndef BOXY_PLACE_H
#define BOXY_PLACE_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

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

/* This executable's build id: its ELF build-id note in hex (proto/place.c), else a hash of its bytes. */
const char *build_id(void);

#endif
