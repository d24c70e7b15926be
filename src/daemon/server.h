/*
 * daemon/server.h — the per-user daemon's entry point, and every daemon
 * header at once for the daemon's tests (tests/unit/test-daemon-proto.c).
 * The daemon's own files include only the ones below them (daemon/daemon.h).
 */
#ifndef BOXY_SERVER_H
#define BOXY_SERVER_H

#include "daemon/bus.h"
#include "daemon/clients.h"
#include "daemon/daemon.h"
#include "daemon/session.h"

/* `boxy daemon serve`: run the daemon until it is stopped or idle. */
int server_main(void);

#endif
