/*
 * store/store-chain.c — the chains' SQL (see store-chain.h): the chains
 * table the seal is kept in, and the walk that recomputes a session's
 * decisions chain row by row, in rowid order (the order they were stored).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "store/store-internal.h"
#include "store/store-chain.h"
#include "common/util.h"

int store_chain_begin(struct store *st, const char *id, const char *audit_path, char **err)
{
	sqlite3 *db = store_db(st, err);
	sqlite3_stmt *s = NULL;
	int rc;

	if (!db)
		return -1;
	if (sqlite3_prepare_v2(db, "INSERT INTO chains (session_id, audit_path) VALUES (?1, ?2)"
			       " ON CONFLICT (session_id) DO UPDATE SET audit_path = excluded.audit_path",
			       -1, &s, NULL) != SQLITE_OK)
		return set_err(err, "session store: recording the audit log: %s", sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, audit_path, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return set_err(err, "session store: recording the audit log: %s", sqlite3_errmsg(db));
	return 0;
}

int store_chain_save(struct store *st, const char *id, const struct chain *audit,
		     const char *seal, char **err)
{
	sqlite3 *db = store_db(st, err);
	sqlite3_stmt *s = NULL;
	char head[CHAIN_HEX_LEN + 1];
	int rc;

	if (!db)
		return -1;
	/* An upsert, not a replace: the row the session's start made keeps its audit_path. */
	if (!(s = store_stmt(st, "INSERT INTO chains (session_id, audit_lines, audit_head, seal)"
			     " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (session_id) DO UPDATE SET"
			     " audit_lines = excluded.audit_lines, audit_head = excluded.audit_head,"
			     " seal = excluded.seal", NULL)))
		return set_err(err, _("session store: recording the seal: %s"), sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, audit ? (int64_t)audit->n : 0);
	if (audit) {
		chain_hex(audit->head, CHAIN_HASH_LEN, head);
		sqlite3_bind_text(s, 3, head, -1, SQLITE_TRANSIENT);
	}
	if (seal)
		sqlite3_bind_text(s, 4, seal, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		set_err(err, _("session store: recording the seal: %s"), sqlite3_errmsg(db));
	store_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_chain_get(struct store *st, const char *id, struct store_chain *out, char **err)
{
	sqlite3 *db = store_db(st, err);
	sqlite3_stmt *s = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!db)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT audit_lines, audit_head, seal, audit_path FROM chains"
			       " WHERE session_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return set_err(err, _("session store: reading the seal: %s"), sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *head = (const char *)sqlite3_column_text(s, 1);
		const char *seal = (const char *)sqlite3_column_text(s, 2);
		const char *path = (const char *)sqlite3_column_text(s, 3);

		/* A row with neither head nor seal is only the start's record of the path. */
		out->found = head || seal;
		out->audit_path = path ? xstrdup(path) : NULL;
		out->audit.n = (uint64_t)sqlite3_column_int64(s, 0);
		if (!head || chain_unhex(head, out->audit.head, CHAIN_HASH_LEN) < 0)
			memset(out->audit.head, 0, CHAIN_HASH_LEN);
		out->seal = seal ? xstrdup(seal) : NULL;
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return set_err(err, _("session store: reading the seal: %s"), sqlite3_errmsg(db));
	return 0;
}

void store_chain_free(struct store_chain *c)
{
	free(c->seal);
	free(c->audit_path);
	c->seal = NULL;
	c->audit_path = NULL;
}

struct at_path {
	void (*row)(void *ctx, const char *id, uint64_t lines, const char *state);
	void *ctx;
};

static void at_path_row(void *ctx, int ncol, const char *const *v)
{
	struct at_path *a = ctx;

	if (ncol == 3 && v[0] && v[2])
		a->row(a->ctx, v[0], v[1] ? strtoull(v[1], NULL, 10) : 0, v[2]);
}

int store_chain_at_path(struct store *st, const char *path,
			void (*row)(void *ctx, const char *id, uint64_t lines, const char *state),
			void *ctx, char **err)
{
	struct at_path a = { row, ctx };

	return store_rows(st, "SELECT c.session_id, c.audit_lines, s.state FROM chains c"
			  " JOIN sessions s ON s.id = c.session_id WHERE c.audit_path = ?1"
			  " ORDER BY s.started_ms", path, NULL, 0, at_path_row, &a, err);
}

/* Column i as text, NULL kept NULL. */
static const char *col(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

int store_decisions_check(struct store *st, const char *id, struct chain *out, uint64_t *bad,
			  int64_t *bad_rowid, char **err)
{
	sqlite3 *db = store_db(st, err);
	sqlite3_stmt *s = NULL;
	int rc;

	chain_decisions_init(out, id);
	*bad = 0;
	*bad_rowid = 0;
	if (!db)
		return -1;
	if (!(s = store_stmt(st, "SELECT id, session_id, t_ms, coalesce(t_rel_ms, 0), layer,"
			     " verdict, subject, reason, hash FROM decisions WHERE session_id = ?1"
			     " ORDER BY id", NULL)))
		return set_err(err, _("session store: reading decisions: %s"), sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		unsigned char stored[CHAIN_HASH_LEN];
		struct chain_decision d = {
			.session_id = col(s, 1), .t_ms = sqlite3_column_int64(s, 2),
			.t_rel_ms = sqlite3_column_int64(s, 3), .layer = col(s, 4),
			.verdict = col(s, 5), .subject = col(s, 6), .reason = col(s, 7),
		};
		bool ok;

		chain_decisions_step(out, &d);
		ok = chain_unhex(col(s, 8), stored, CHAIN_HASH_LEN) == 0 &&
		     memcmp(stored, out->head, CHAIN_HASH_LEN) == 0;
		if (!ok && !*bad) {
			*bad = out->n;
			*bad_rowid = sqlite3_column_int64(s, 0);
		}
	}
	if (rc != SQLITE_DONE)
		set_err(err, _("session store: reading decisions: %s"), sqlite3_errmsg(db));
	store_stmt_done(st, s);
	return rc == SQLITE_DONE ? 0 : -1;
}
