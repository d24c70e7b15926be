/*
 * client-run.h — `boxy run` through the per-user daemon.
 */
#ifndef BOXY_CLIENT_RUN_H
#define BOXY_CLIENT_RUN_H

#include "runspec.h"

#define SESSION_ID_MAX 16

/*
 * Start rs as a session of the daemon (starting the daemon if needed) and
 * follow it to its end; returns the exit code boxy run exits with.
 * audit_fd (or -1) is the --audit-log the caller opened; it is passed on.
 */
int client_run(const struct runspec *rs, const char *cwd, const char *home, int audit_fd);

#endif
