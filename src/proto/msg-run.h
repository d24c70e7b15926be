/*
 * proto/msg-run.h — MSG_RUN, the run request: one struct, one encoder (the
 * client's), one decoder (the daemon's). The run-spec travels field by field
 * as the option table (spec/options.h) lists them, in typed form; the
 * decoder checks every value with the typed checks of spec/values.h, so a
 * hostile client gets an error reply and never a sandbox built from values
 * the command line would have refused. Descriptors are named slots with a
 * presence mask, not counted. There are no optional parts: the client and
 * the daemon are the same build (checked by HELLO/WELCOME).
 */
#ifndef BOXY_MSG_RUN_H
#define BOXY_MSG_RUN_H

#include <stdint.h>

#include "spec/runspec.h"
#include "proto/msg.h"
#include "proto/wire.h"

/* The descriptors a run request can carry, each in its slot. */
enum run_fd {
	RUN_FD_STDIN,       /* the client's fds 0-2 that are not terminals (none with -d) */
	RUN_FD_STDOUT,
	RUN_FD_STDERR,
	RUN_FD_AUDIT,       /* --audit-log, opened by the client with its rights */
	RUN_FD_NETLOG,      /* --net-log */
	RUN_FD_PCAP,        /* --pcap */
	RUN_FD_COUNT,
};

struct run_request {
	struct runspec rs;          /* finished (runspec_finish): paths absolute */
	char **env;                 /* the client's environment */
	char *cwd;                  /* absolute */
	char *home;                 /* absolute */
	uint8_t ttys;               /* bit i: the client's fd i is a terminal (relayed via the pty) */
	uint16_t rows, cols;        /* the terminal's size, when ttys */
	int fd[RUN_FD_COUNT];       /* -1: absent; the decoder's are the message's (not owned) */
};

/* Empty, every descriptor slot -1. */
void run_request_init(struct run_request *q);
/* Free what q owns (not its descriptors) and re-initialise it. */
void run_request_free(struct run_request *q);

/*
 * The payload into w (initialised by the caller) and the present
 * descriptors, in slot order, into fds[0..*nfds).
 */
void run_request_encode(const struct run_request *q, struct wbuf *w, int fds[MSG_MAX_FDS],
			size_t *nfds);

/*
 * Decode a MSG_RUN payload and its descriptors into q (initialised here).
 * Returns 0, or -1 with *err "malformed run request: WHAT" and q empty.
 */
int run_request_decode(const void *p, size_t len, const int *fds, size_t nfds,
		       struct run_request *q, char **err);

#endif
