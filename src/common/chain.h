/*
 * common/chain.h — the hash chains that make boxy's records tamper-evident
 * (doc/verify.md).
 *
 * Two chains, both SHA-256:
 *  - the audit log: line k carries "prev", the hash of line k-1's bytes as
 *    written (from its '{' to its '\n' inclusive); line 1's prev is the
 *    chain's genesis, SHA-256("boxy audit-log chain v1 " ID) where ID is the
 *    session id (or the "chain" id of a --no-daemon run). The head is the
 *    hash of the last line written.
 *  - the store's decisions of a session: row k's hash is
 *    SHA-256(hash of row k-1, 32 raw bytes || canonical bytes of row k),
 *    row 1's predecessor SHA-256("boxy decisions chain v1 " ID).
 * The seal (a signed summary of both heads) is described in common/sign.h.
 */
#ifndef BOXY_CHAIN_H
#define BOXY_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHAIN_HASH_LEN 32
#define CHAIN_HEX_LEN  64

/* One chain's state: how many links it has and the hash of the last. */
struct chain {
	uint64_t n;
	unsigned char head[CHAIN_HASH_LEN];
};

/* SHA-256 of p[0..n). */
void chain_sha256(const void *p, size_t n, unsigned char out[CHAIN_HASH_LEN]);
/* h as 64 lower-case hex digits and a NUL. */
void chain_hex(const unsigned char *h, size_t n, char *out);
/* Exactly 2*n lower-case hex digits → n bytes; -1 on anything else. */
int chain_unhex(const char *s, unsigned char *out, size_t n);

/* The audit log's chain of id, before its first line. */
void chain_audit_init(struct chain *c, const char *id);
/* A line was written (bytes, '\n' included): it becomes the head. */
void chain_audit_step(struct chain *c, const void *line, size_t len);

/* The decisions chain of session id, before its first row. */
void chain_decisions_init(struct chain *c, const char *id);
/* A decision row's fields, as the store inserted them (strings may be NULL). */
struct chain_decision {
	const char *session_id;
	int64_t t_ms, t_rel_ms;
	const char *layer, *verdict, *subject, *reason;
};
/* The row's hash after c's head; c advances to it. */
void chain_decisions_step(struct chain *c, const struct chain_decision *d);

#endif
