/*
 * common/sha256.h — SHA-256 (FIPS 180-4) of one buffer, for checking that a
 * program handed across a process boundary is the one this build made
 * (init/seccomp.c checks the seccomp program it is given against the digest
 * compiled into it). One call, no streaming: the inputs are a few KiB.
 */
#ifndef BOXY_COMMON_SHA256_H
#define BOXY_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

/* The SHA-256 digest of len bytes at data, into out. */
void sha256_digest(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif
