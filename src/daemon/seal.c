/*
 * daemon/seal.c — what happens to the chains when a session ends: the
 * store's decisions chain is recomputed from the rows it holds, the audit
 * log's chain taken from its writer, both heads signed with the user's key
 * (common/sign.h), the seal written as the log's last line and kept, with
 * the log's final head and length, in the store's chains table, where the
 * payload never reaches (the state directory is outside every sandbox).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sign.h"
#include "common/util.h"
#include "daemon/audit.h"
#include "daemon/seal.h"
#include "store/store-chain.h"

/* The user's key as last loaded, kept for the next seal (sign_key_reload). */
static struct sign_key *seal_key;

void seal_forget_key(void)
{
	sign_key_free(seal_key);
	seal_key = NULL;
}

int seal_session(struct store *st, const char *id, struct audit_log *al, uint64_t t_ms,
		 char **err)
{
	struct seal s = { .t_ms = t_ms };
	struct chain final;
	char *path = sign_key_path(), *line = NULL;
	uint64_t bad = 0;
	int64_t bad_rowid = 0;
	int rc = -1;

	if (audit_log_is_journal(al))
		al = NULL;      /* the journal has no chain of ours: the store's seal only */
	if (!id && !al)
		return set_err(err, "seal: no session and no audit log");
	if (al)
		audit_log_chain(al, id, &s.audit);
	else
		chain_audit_init(&s.audit, id);
	snprintf(s.id, sizeof(s.id), "%s", id ? id : audit_log_id(al));
	if (!st || store_decisions_check(st, s.id, &s.decisions, &bad, &bad_rowid, NULL) < 0)
		chain_decisions_init(&s.decisions, s.id);
	if (!path) {
		set_err(err, _("signing key: no state directory ($XDG_STATE_HOME or $HOME)"));
		goto keep;
	}
	if (sign_key_reload(path, true, &seal_key, err) < 0 || sign_seal(seal_key, &s, err) < 0)
		goto keep;
	if (al) {
		if (audit_log_write_seal(al, &s, &line) < 0) {
			set_err(err, _("audit log: its seal could not be written"));
			goto keep;
		}
	} else {
		line = seal_line(&s, false, 1);
	}
	rc = 0;
keep:
	/* The log's head and length are kept even when it could not be sealed. */
	if (al)
		audit_log_chain(al, s.id, &final);
	if (st && store_chain_save(st, s.id, al ? &final : NULL, line,
				   rc == 0 ? err : NULL) < 0)
		rc = -1;
	free(line);
	free(path);
	return rc;
}
