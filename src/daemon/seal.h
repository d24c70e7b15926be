/*
 * daemon/seal.h — a session's end: its chains signed (doc/verify.md).
 */
#ifndef BOXY_SEAL_H
#define BOXY_SEAL_H

#include <stdint.h>

struct store;
struct audit_log;

/*
 * Sign id's chains (the audit log's, when al is set; the store's decisions,
 * when st is) with the user's key (created on first use), write the seal as
 * the log's last line, and keep the log's head, length and the seal in the
 * store. id NULL: al's own chain (--no-daemon). -1 with a reason when the
 * key is refused or a write fails; what could be done is done.
 */
int seal_session(struct store *st, const char *id, struct audit_log *al, uint64_t t_ms,
		 char **err);
/* Drop the key seal_session keeps between sessions (at the daemon's exit). */
void seal_forget_key(void);

#endif
