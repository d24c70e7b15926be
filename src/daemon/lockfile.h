/*
 * daemon/lockfile.h — which dependencies a run started from: one digest of
 * the lockfiles in its work directory, so the run can be compared with the
 * last one that started from the same (doc/store.md, "baseline").
 */
#ifndef BOXY_DAEMON_LOCKFILE_H
#define BOXY_DAEMON_LOCKFILE_H

/* Files bigger than this are identified by name, size and mtime, not content. */
#define LOCKFILE_MAX_BYTES (16u << 20)
/* At most this many requirements*.txt are taken, in name order. */
#define LOCKFILE_MAX_REQUIREMENTS 16

/*
 * "sha256:HEX" over every lockfile present in workdir (package-lock.json,
 * npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml, poetry.lock, Pipfile.lock,
 * uv.lock, requirements*.txt, Cargo.lock, go.sum, Gemfile.lock,
 * composer.lock), or NULL when there is none or the directory cannot be
 * read. Never follows a link (the sandbox could have planted one); only
 * regular files count. malloc'd.
 */
char *lockfile_digest(const char *workdir);

#endif
