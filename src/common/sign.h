/*
 * common/sign.h — the per-user signing key and the seal it puts on each
 * session's chains (doc/verify.md).
 *
 * The key is ed25519, kept as PKCS#8 PEM in the state directory
 * ($XDG_STATE_HOME/boxy/signing.key, default ~/.local/state/boxy), mode
 * 0600, created on first use. A key file that is a symbolic link, not a
 * regular file, not the user's own, or readable or writable by anyone else
 * is refused, never repaired: someone else may hold a copy of it.
 *
 * A seal signs exactly these bytes (every number decimal, every hash 64
 * lower-case hex digits, each line ending in '\n'):
 *   boxy seal v1
 *   session ID
 *   t MS
 *   audit LINES HEAD
 *   decisions ROWS HEAD
 * where audit is the audit log's chain before its seal line (LINES 0 and the
 * genesis when the session had no --audit-log) and decisions the store's.
 */
#ifndef BOXY_SIGN_H
#define BOXY_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/chain.h"

#define SIGN_PUB_LEN 32
#define SIGN_SIG_LEN 64
#define SIGN_KEY_MAX 16384      /* a key file is never larger */

struct sign_key;

/* What a seal says; key and sig are filled by sign_seal. */
struct seal {
	char id[33];
	uint64_t t_ms;
	struct chain audit, decisions;
	unsigned char key[SIGN_PUB_LEN];
	unsigned char sig[SIGN_SIG_LEN];
};

/* $XDG_STATE_HOME/boxy/signing.key (or ~/.local/state/boxy/...), or NULL. malloc'd. */
char *sign_key_path(void);
/*
 * Load the key at path; when it does not exist and create is set, make one
 * (mode 0600, never through a link). Refused as above, with a reason.
 */
int sign_key_load(const char *path, bool create, struct sign_key **out, char **err);
/*
 * The same for a key kept between calls (the daemon's, one seal per session:
 * parsing the PEM cost more than everything else a session's end does). The
 * file is opened, checked and read every time, as by sign_key_load; *key is
 * kept when it was parsed from the same bytes (SHA-256), else it is freed and
 * the bytes parsed. On failure *key is freed and NULL.
 */
int sign_key_reload(const char *path, bool create, struct sign_key **key, char **err);
void sign_key_free(struct sign_key *k);
/* The rule a key file must pass, on its fstat: regular, owned by me, no group/other bits. */
int sign_key_check_stat(const char *path, const struct stat *st, uid_t me, char **err);
/* The raw 32-byte public key. */
void sign_key_public(const struct sign_key *k, unsigned char pub[SIGN_PUB_LEN]);
/* The public key as PEM (SubjectPublicKeyInfo), for --key elsewhere. malloc'd. */
char *sign_key_public_pem(const struct sign_key *k);
/* A public key file for --key: PEM, or 64 hex digits on one line. */
int sign_read_public(const char *path, unsigned char pub[SIGN_PUB_LEN], char **err);

/* The bytes a seal signs (above). malloc'd. */
char *seal_message(const struct seal *s);
/* The seal line for s (signed) at position seq of its audit log, exactly as the log
 * carries it (doc/verify.md); own_id: the id is a "chain", not a "session". malloc'd. */
char *seal_line(const struct seal *s, bool own_id, uint64_t seq);
/* Sign s with k: fills s->key and s->sig. */
int sign_seal(const struct sign_key *k, struct seal *s, char **err);
/* True when s->sig is s->key's signature of s. */
bool seal_verify(const struct seal *s);

#endif
