/*
 * sandbox/decoys.h — the decoy credentials a run with tripwires finds in its
 * fresh $HOME, made by the daemon for each session (doc/tripwires.md).
 *
 * Each decoy is a file in the place credential stealers read first, in its
 * tool's real format, holding tokens drawn fresh for the session in their
 * real shapes (an AWS key id "AKIA" and 16 base32 characters with a 40
 * character secret, an OpenSSH ed25519 key that ssh-keygen parses, a
 * "ghp_" token whose last six characters are the CRC32 checksum GitHub's
 * own format carries, a JWT-shaped Kubernetes token...), so that a
 * stealer's regular expression takes them. Only places no legitimate tool
 * of the node, python and claude profiles reads: no ~/.npmrc (npm would
 * send its token and fail), no ~/.netrc (pip, git and curl read it), no
 * ~/.ssh/config, no ~/.ssh/id_rsa or id_ed25519 (ssh loads those by
 * default on every connection).
 *
 * The daemon keeps the set: boxy-init writes the files from the plan, the
 * watch (sandbox/tripwatch.h) tells when one is opened, and the tokens go to
 * the broker and boxy-net, which look for them in what leaves the sandbox
 * (parse/tripwire.h).
 */
#ifndef BOXY_SANDBOX_DECOYS_H
#define BOXY_SANDBOX_DECOYS_H

#include <stddef.h>
#include <stdint.h>

#define DECOYS_MAX          16          /* files a session gets, at most */
#define DECOY_CONTENT_MAX   16384       /* bytes of one file, at most */
#define DECOY_PATH_MAX      128         /* its path below $HOME, at most */

struct decoy {
	char *path;             /* below $HOME, relative: ".aws/credentials" */
	char *content;          /* the file, text (no NUL) */
	uint32_t mode;          /* the file's (the directories made for it: 0700 in .ssh, else 0755) */
	int64_t mtime;          /* seconds since the epoch: a plausible age */
	const char *what;       /* "AWS credentials": for messages (static) */
};

/* One token the detectors look for, and what it is. */
struct decoy_token {
	char *text;             /* as written in the file (parse/tripwire.h's tw_token_ok) */
	char *label;            /* "AWS secret access key in ~/.aws/credentials" */
	size_t decoy;           /* the decoy it is in */
};

struct decoy_set {
	struct decoy *v;
	size_t n;
	struct decoy_token *tokens;
	size_t ntokens;
};

/*
 * A fresh set for a user (user: the login name, for the places that name
 * one), with mtimes before now (seconds). Never fails: randomness comes from
 * getrandom(2), which does not fail for these sizes once the pool is ready.
 */
void decoys_make(struct decoy_set *out, const char *user, int64_t now);
void decoys_free(struct decoy_set *d);

/* The tokens' texts as a vector (borrowed from d; the vector is malloc'd, free it alone). */
char **decoys_token_texts(const struct decoy_set *d);

/* The GitHub token checksum: base62 of the CRC32 of s, six characters. Exported for tests. */
void decoys_github_checksum(const char *s, size_t n, char out[7]);

#endif
