/*
 * cli/cmd-verify.c — `boxy verify FILE|ID`: is this audit log, or this
 * session's record in the store, what the daemon wrote (doc/verify.md)?
 *
 *   boxy verify audit.jsonl               # the log's chains, its seals, the store's heads
 *   boxy verify --key boxy.pub copy.jsonl # a copy shipped elsewhere
 *   boxy verify 9f3c1ba2                  # a session's decisions in the store
 *   boxy verify --print-key > boxy.pub    # the public key to ship with the logs
 *
 * Exit status: 0 intact, 1 broken (each break printed as FILE:LINE: why),
 * 2 usage, 125 nothing could be checked (unreadable file, store, refused key).
 * The trusted key is --key, else the user's own (when it exists); with
 * neither, a seal is checked against the key it names, and that is said.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/verify.h"
#include "common/sign.h"
#include "common/util.h"
#include "store/store.h"
#include "store/store-chain.h"

#define VERIFY_EXIT_BROKEN 1
#define VERIFY_FILE_MAX ((size_t)1024 * 1024 * 1024)   /* an audit log larger than 1 GiB is refused */

/* The store's record of a chain, for verify_audit_log. */
static void store_lookup(void *ctx, const char *id, struct verify_known *out)
{
	struct store *st = ctx;
	struct store_sessions ss = { 0 };
	struct store_chain c;

	memset(out, 0, sizeof(*out));
	if (strlen(id) != 16 || store_sessions_find(st, id, false, &ss, NULL) < 0 || ss.n != 1) {
		store_sessions_free(&ss);
		return;
	}
	out->running = strcmp(ss.v[0].state, "running") == 0;
	store_sessions_free(&ss);
	if (store_chain_get(st, id, &c, NULL) == 0 && c.found) {
		out->found = true;
		out->audit = c.audit;
	}
	store_chain_free(&c);
}

/* "by key 1a2b3c4d… (trusted)" or the caveat of an untrusted key. */
static void say_key(const struct verify_result *r)
{
	char hex[2 * SIGN_PUB_LEN + 1];

	if (!r->have_key)
		return;
	chain_hex(r->key, SIGN_PUB_LEN, hex);
	if (r->key_trusted)
		printf(_("  sealed by key %.16s… (the trusted key)\n"), hex);
	else
		printf(_("  sealed by key %.16s…, named by the log itself: no trusted key to check "
			 "it against (pass --key PUB)\n"), hex);
}

/* Verify an audit log file. */
static int verify_file(const char *path, const unsigned char *trusted)
{
	struct verify_opts o = { .trusted_key = trusted };
	struct verify_result r;
	struct store *st;
	char *err = NULL, *buf, *breaks = NULL, *lines = NULL, *chains = NULL;
	size_t len = 0;
	bool broken;

	if (read_file(path, VERIFY_FILE_MAX, &buf, &len) < 0) {
		fprintf(stderr, _("boxy verify: %s: %s\n"), path,
			errno == EFBIG ? _("larger than 1 GiB: refusing to read it") : strerror(errno));
		return EXIT_BOXY_FAILED;
	}
	st = cmd_store_open(&err);
	free(err);
	if (st) {
		o.lookup = store_lookup;
		o.ctx = st;
	}
	verify_audit_log(buf, len, &o, &r);
	if (r.nbreaks) {
		for (size_t i = 0; i < r.nbreaks; i++)
			printf("%s:%zu: %s\n", path, r.breaks[i].line, r.breaks[i].why);
		breaks = xasprintf(ngettext("%zu break", "%zu breaks", r.nbreaks), r.nbreaks);
		lines = xasprintf(ngettext("%zu line", "%zu lines", r.lines), r.lines);
		/* TRANSLATORS: "3 breaks" in "40 lines". */
		printf(_("%s: BROKEN: %s in %s\n"), path, breaks, lines);
	} else {
		lines = xasprintf(ngettext("%zu line", "%zu lines", r.lines), r.lines);
		chains = xasprintf(ngettext("%zu chain", "%zu chains", r.chains), r.chains);
		/* TRANSLATORS: "40 lines", "2 chains", and how many of the chains are sealed. */
		printf(_("%s: intact: %s, %s, %zu sealed"), path, lines, chains, r.sealed);
		if (r.running)
			printf(_(", %zu still running (not sealed yet)"), r.running);
		printf("\n");
		say_key(&r);
		if (!st)
			printf(_("  the session store was not available: lengths and heads were not "
				 "compared with it\n"));
	}
	broken = r.nbreaks > 0;
	free(breaks);
	free(lines);
	free(chains);
	verify_result_free(&r);
	store_close(st);
	free(buf);
	return broken ? VERIFY_EXIT_BROKEN : 0;
}

/* Verify a session's record in the store: its decisions chain and its seal. */
static int verify_session(const char *prefix, const unsigned char *trusted)
{
	struct store_sessions ss = { 0 };
	struct store_chain c = { 0 };
	struct store *st;
	struct chain dec;
	struct seal s;
	struct verify_result r = { 0 };
	char *err = NULL, id[17];
	uint64_t bad = 0, seq = 0;
	int64_t bad_rowid = 0;
	unsigned char prev[CHAIN_HASH_LEN];
	bool running;

	st = cmd_store_open(&err);
	if (!st || store_sessions_find(st, prefix, false, &ss, &err) < 0) {
		fprintf(stderr, "boxy verify: %s\n", err ? err : _("the store cannot be read"));
		free(err);
		store_close(st);
		return EXIT_BOXY_FAILED;
	}
	if (ss.n != 1) {
		fprintf(stderr, ss.n ? _("boxy verify: '%s' matches %zu sessions; give more of the "
					 "id\n") : _("boxy verify: no session matches '%s'\n"),
			prefix, ss.n);
		store_sessions_free(&ss);
		store_close(st);
		return EXIT_BOXY_USAGE;
	}
	snprintf(id, sizeof(id), "%s", ss.v[0].id);
	running = strcmp(ss.v[0].state, "running") == 0;
	store_sessions_free(&ss);
	if (store_decisions_check(st, id, &dec, &bad, &bad_rowid, &err) < 0 ||
	    store_chain_get(st, id, &c, &err) < 0) {
		fprintf(stderr, "boxy verify: %s\n", err);
		free(err);
		store_close(st);
		return EXIT_BOXY_FAILED;
	}
	if (bad)
		printf(_("%s: decision %llu (row %lld) was changed, or one before it removed\n"), id,
		       (unsigned long long)bad, (long long)bad_rowid);
	if (!c.found || !c.seal) {
		if (running)
			printf(ngettext("%s: running: %llu decision chained so far, not sealed yet\n",
					"%s: running: %llu decisions chained so far, not sealed yet\n",
					dec.n), id, (unsigned long long)dec.n);
		else
			printf(_("%s: no seal recorded (the session ended before chains, or its daemon "
				 "died)\n"), id);
		bad += !running;
	} else if (verify_parse_seal(c.seal, strlen(c.seal), &s, &seq, prev) < 0 ||
		   strcmp(s.id, id) != 0 || !seal_verify(&s)) {
		printf(_("%s: the seal recorded in the store does not verify\n"), id);
		bad++;
	} else if (trusted && memcmp(trusted, s.key, SIGN_PUB_LEN) != 0) {
		printf(_("%s: sealed by a key other than the trusted one\n"), id);
		bad++;
	} else if (s.decisions.n != dec.n ||
		   memcmp(s.decisions.head, dec.head, CHAIN_HASH_LEN) != 0) {
		printf(ngettext("%s: the store holds %llu decision; the seal signed %llu with another "
				"head: rows were removed, added or changed\n",
				"%s: the store holds %llu decisions; the seal signed %llu with "
				"another head: rows were removed, added or changed\n", dec.n), id,
		       (unsigned long long)dec.n, (unsigned long long)s.decisions.n);
		bad++;
	} else if (!bad) {
		char *decisions = xasprintf(ngettext("%llu decision", "%llu decisions", dec.n),
					    (unsigned long long)dec.n);
		char *lines = xasprintf(ngettext("%llu line", "%llu lines", c.audit.n),
					(unsigned long long)c.audit.n);

		/* TRANSLATORS: "12 decisions", "14 lines". */
		printf(_("%s: intact: %s; audit log: %s\n"), id, decisions, lines);
		free(decisions);
		free(lines);
		memcpy(r.key, s.key, SIGN_PUB_LEN);
		r.have_key = true;
		r.key_trusted = trusted != NULL;
		say_key(&r);
	}
	store_chain_free(&c);
	store_close(st);
	return bad ? VERIFY_EXIT_BROKEN : 0;
}

/* The user's own public key, when the key file exists (refused keys are an error). */
static int own_key(unsigned char pub[SIGN_PUB_LEN], bool create, bool *have)
{
	struct sign_key *k = NULL;
	char *path = sign_key_path(), *err = NULL;
	struct stat st;

	*have = false;
	if (!path)
		return 0;
	if (!create && lstat(path, &st) < 0 && errno == ENOENT) {
		free(path);
		return 0;
	}
	if (sign_key_load(path, create, &k, &err) < 0) {
		fprintf(stderr, "boxy verify: %s\n", err);
		free(err);
		free(path);
		return -1;
	}
	sign_key_public(k, pub);
	*have = true;
	sign_key_free(k);
	free(path);
	return 0;
}

/* --print-key: the public key in PEM (made on first use). */
static int print_key(void)
{
	struct sign_key *k = NULL;
	char *path = sign_key_path(), *err = NULL, *pem;

	if (!path || sign_key_load(path, true, &k, &err) < 0) {
		fprintf(stderr, "boxy verify: %s\n", err ? err : _("no state directory"));
		free(err);
		free(path);
		return EXIT_BOXY_FAILED;
	}
	pem = sign_key_public_pem(k);
	fputs(pem, stdout);
	free(pem);
	sign_key_free(k);
	free(path);
	return 0;
}

static int run_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "print-key", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *keyfile = NULL;
	unsigned char pub[SIGN_PUB_LEN];
	bool printkey = false, have = false;
	char *err = NULL;
	struct stat st;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c == 'k')
			keyfile = optarg;
		else if (c == 'p')
			printkey = true;
		else
			return cmd_usage_error(&cmd_verify_entry, _("unknown option '%s'"),
					       argv[optind - 1]);
	}
	if (printkey)
		return optind == argc && !keyfile ? print_key() :
		       cmd_usage_error(&cmd_verify_entry, _("--print-key takes nothing else"));
	if (optind + 1 != argc)
		return cmd_usage_error(&cmd_verify_entry, _("give one FILE or session ID"));
	if (keyfile) {
		if (sign_read_public(keyfile, pub, &err) < 0) {
			fprintf(stderr, "boxy verify: %s\n", err);
			free(err);
			return EXIT_BOXY_USAGE;
		}
		have = true;
	} else if (own_key(pub, false, &have) < 0) {
		return EXIT_BOXY_FAILED;
	}
	/* A name that exists is a file; otherwise hex digits are a session id. */
	if (stat(argv[optind], &st) == 0 || !cmd_session_id_ok(argv[optind]))
		return verify_file(argv[optind], have ? pub : NULL);
	return verify_session(argv[optind], have ? pub : NULL);
}

const struct cmd_entry cmd_verify_entry = {
	"verify", N_("check that an audit log or a session's record was not rewritten"),
	N_("Usage: boxy verify [--key PUB] FILE|ID\n"
	   "       boxy verify --print-key\n"
	   "Check an --audit-log FILE: each line's hash chain, each session's signed\n"
	   "seal, and (on this machine) the length and head the store recorded. A\n"
	   "session ID checks its decisions in the store against its seal.\n"
	   "Each break is printed as FILE:LINE: what was found.\n"
	   "  --key PUB     trust only this public key (PEM, or 64 hex digits); default:\n"
	   "                your own key, when it exists\n"
	   "  --print-key   print your public key (PEM), to verify copies elsewhere\n"
	   "Exit status: 0 intact, 1 broken, 2 usage, 125 nothing could be checked.\n"),
	run_verify,
};
