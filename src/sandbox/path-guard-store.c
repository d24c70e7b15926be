/*
 * sandbox/path-guard-store.c — filling a set of writable roots from the session
 * store (a run's own come from spec/runspec.h's mounts_add_writable_roots).
 * Apart from common/path-guard.c so that boxy-init, which links the walker,
 * never links SQLite.
 */
#include <config.h>

#include <stdlib.h>
#include <unistd.h>

#include "common/path-guard.h"
#include "store/store.h"
#include "common/util.h"

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

