/*
 * store-internal.h — what store.c lends the other files of store/ (never
 * included outside store/: SQL and sqlite3.h stay here).
 */
#ifndef BOXY_STORE_INTERNAL_H
#define BOXY_STORE_INTERNAL_H

#include <sqlite3.h>

#include "common/json.h"
#include "store/store.h"

/* The open database, every count still in memory written first; NULL and err on failure. */
sqlite3 *store_db(struct store *st, char **err);

/* Each row of sql (?1 bound to id) appended to b under key as an object by column name. */
int store_rows_json(struct store *st, struct jbuf *b, const char *key, const char *sql,
		    const char *id, char **err);

/*
 * Each row of sql (?1 bound to id, ?2 to limit when the statement has a
 * second parameter) → row, as strings (NULL for SQL NULL), at most 16 columns.
 */
int store_rows(struct store *st, const char *sql, const char *id, int64_t limit,
	       void (*row)(void *ctx, int ncol, const char *const *vals), void *ctx, char **err);

#endif
