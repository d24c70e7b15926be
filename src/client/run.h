/*
 * client/run.h — `boxy run` through the per-user daemon.
 */
#ifndef BOXY_CLIENT_RUN_H
#define BOXY_CLIENT_RUN_H

#include "spec/runspec.h"

#define SESSION_ID_MAX 16

/*
 * Start rs as a session of the daemon (starting the daemon if needed) and
 * follow it to its end; returns the exit code boxy run exits with.
 * audit_fd (or -1) is the --audit-log the caller opened; it is passed on.
 */
int client_run(const struct runspec *rs, const char *cwd, const char *home, int audit_fd);

/*
 * The same, with the network's files: netlog_fd (--net-log) and pcap_fd
 * (--pcap), opened by the caller with its rights (or -1), passed in their
 * slots of MSG_RUN (proto/msg-run.h).
 */
int client_run_net(const struct runspec *rs, const char *cwd, const char *home, int audit_fd,
		   int netlog_fd, int pcap_fd);

#endif
