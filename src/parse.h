/*
 * parse.h — validators for every value a user can write, on the command
 * line or in a profile. Pure functions: no I/O, no globals.
 * Each returns 0 on success, or -1 with a one-line reason in *err
 * ("size must be a number followed by B, K, KiB, M, MiB, G or GiB").
 */
#ifndef BOXY_PARSE_H
#define BOXY_PARSE_H

#include <stdint.h>
#include "runspec.h"

/* "2GiB", "512M", "1048576", "1.5G" → bytes. Binary units (K = KiB). Zero refused. */
int parse_size(const char *s, uint64_t *out, char **err);
/* "10m", "90s", "1h30m", "250ms", "2" (seconds) → milliseconds. Zero refused. */
int parse_duration(const char *s, uint64_t *out_ms, char **err);
/* "512" → count, 1..2^31. */
int parse_count(const char *s, uint64_t *out, char **err);
/* "2", "0.5", "1.25" → millicpus, 1..(1024*1000). */
int parse_cpus(const char *s, uint32_t *out_milli, char **err);
/* "443" → 1..65535. */
int parse_port(const char *s, uint16_t *out, char **err);
/* "public" | "allowlist" | "none". */
int parse_net_mode(const char *s, enum net_mode *out, char **err);
/* "strict" | "compat". */
int parse_seccomp_mode(const char *s, enum seccomp_mode *out, char **err);
/* HOST[:PORT[,PORT...]]; HOST is a DNS name (letters, digits, '-', '.', optional
 * leading "*." wildcard), lower-cased, trailing dot removed. Fills *out (caller frees fields). */
int parse_host_spec(const char *s, struct host_spec *out, char **err);
/* "10.0.0.0/8", "fd00::/8", "192.168.1.7" (= /32). Host bits must be zero. */
int parse_cidr(const char *s, struct cidr *out, char **err);
/* "NAME" or "NAME=VALUE"; NAME is [A-Za-z_][A-Za-z0-9_]*. */
int parse_env_spec(const char *s, struct env_spec *out, char **err);
/* "SRC" or "SRC:DST" for --copy/--copy-ro. */
int parse_copy_spec(const char *s, enum mount_kind kind, struct mount_spec *out, char **err);

void host_spec_free(struct host_spec *h);
void cidr_free(struct cidr *c);
void env_spec_free(struct env_spec *e);
void mount_spec_free(struct mount_spec *m);

#endif
