/*
 * sandbox/path-guard-store.c — filling a set of writable roots from a run-spec's
 * mounts and from the session store. Apart from common/path-guard.c so that
 * boxy-init, which links the walker, never links SQLite, and the walker
 * (common/) needs no run-spec (spec/).
 */
#include <config.h>

#include <stdlib.h>
#include <unistd.h>

#include "common/path-guard.h"
#include "spec/runspec.h"
#include "store/store.h"
#include "common/util.h"

/* Workdir and every --rw / mkdir source, both ways. */
void path_roots_add_run(struct path_roots *r, const char *workdir,
			const struct mount_spec *mounts, size_t n)
{
	path_roots_add_real(r, workdir);
	for (size_t i = 0; i < n; i++)
		if (mounts[i].kind == MOUNT_RW || mounts[i].kind == MOUNT_MKDIR)
			path_roots_add_real(r, mounts[i].src);
}

/* store_writable_roots' callback. */
static void roots_add_cb(void *ctx, const char *path)
{
	path_roots_add_real(ctx, path);
}

void path_roots_add_store(struct path_roots *r, struct store *st)
{
	char *err = NULL;

	if (st && store_writable_roots(st, roots_add_cb, r, &err) < 0) {
		warnx_(_("the session store: %s; links planted by earlier runs are not "
			 "recognised"), err);
		free(err);
	}
}

void path_roots_add_default_store(struct path_roots *r)
{
	char *path = store_default_path(), *err = NULL;
	struct store *st = NULL;

	if (path && access(path, F_OK) == 0) {
		if (store_open(path, &st, &err) < 0) {
			warnx_(_("the session store: %s; links planted by earlier runs are not "
				 "recognised"), err);
			free(err);
		} else {
			path_roots_add_store(r, st);
			store_close(st);
		}
	}
	free(path);
}

