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
#include "common/path-guard.h"
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

/* The ended sessions the store records as writing to one file (store_chain_at_path). */
struct expected {
	struct verify_expected *v;
	size_t n;
};

static void expected_row(void *ctx, const char *id, uint64_t lines, const char *state)
{
	struct expected *e = ctx;
	struct verify_expected *x;

	if (strcmp(state, "running") == 0)
		return;         /* it may not have written its first line yet */
	x = xappend(&e->v, &e->n, sizeof(*e->v));
	x->id = xstrdup(id);
	x->lines = lines;
}

static void expected_free(struct expected *e)
{
	for (size_t i = 0; i < e->n; i++)
		free((char *)e->v[i].id);
	free(e->v);
}

/*
 * Read the log a session recorded (a path the store holds, in a directory a
 * sandbox may have written): never through a symbolic link a sandbox could
 * have planted (common/path-guard.h), the last component never a link at
 * all, only a regular file. -1 with errno (ELOOP, EXDEV: a link; EFBIG).
 */
static int read_recorded(const char *path, struct store *st, char **buf, size_t *len)
{
	struct path_roots roots;
	struct stat sb;
	size_t cap = 0;
	int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1, rc = -1, e = 0;
	char *why = NULL;

	*buf = NULL;
	*len = 0;
	path_roots_init(&roots);
	path_roots_add_store(&roots, st);
	if (rootfd >= 0)
		fd = path_guard_open(rootfd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0,
				     &roots, PATH_GUARD_NOFOLLOW_LAST, &why);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		e = errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		e = EINVAL;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (*len == cap) {
			if (cap >= VERIFY_FILE_MAX) {
				e = EFBIG;
				goto out;
			}
			cap = cap ? 2 * cap : 65536;
			*buf = xrealloc(*buf, cap + 1);
		}
		n = read(fd, *buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			goto out;
		}
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	(*buf)[*len] = '\0';
	rc = 0;
out:
	if (rc < 0) {
		free(*buf);
		*buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	if (rootfd >= 0)
		close(rootfd);
	path_roots_free(&roots);
	free(why);
	errno = e;
	return rc;
}

/*
 * Verify an audit log file: one the user named (followed like any path they
 * give), or the one the store recorded for a session (recorded: read through
 * read_recorded, with st the store already open).
 */
static int verify_file(const char *path, const unsigned char *trusted, struct store *recorded)
{
	struct verify_opts o = { .trusted_key = trusted };
	struct verify_result r;
	struct expected ex = { 0 };
	struct store *st = recorded;
	char *err = NULL, *buf, *real, *breaks = NULL, *lines = NULL, *chains = NULL;
	size_t len = 0;
	bool broken;
	int rc = recorded ? read_recorded(path, recorded, &buf, &len)
			  : read_file(path, VERIFY_FILE_MAX, &buf, &len);

	if (rc < 0) {
		fprintf(stderr, _("boxy verify: %s: %s\n"), path,
			errno == EFBIG ? _("larger than 1 GiB: refusing to read it") :
			errno == ELOOP || errno == EXDEV ?
			_("a symbolic link now; boxy does not follow it (a sandboxed run could have "
			  "planted it)") :
			errno == EINVAL ? _("not a regular file") : strerror(errno));
		return EXIT_BOXY_FAILED;
	}
	if (!st) {
		st = cmd_store_open(&err);
		free(err);
		err = NULL;
	}
	if (st) {
		o.lookup = store_lookup;
		o.ctx = st;
		/* The sessions that wrote to this file, by the path the daemon resolved. */
		real = realpath(path, NULL);
		if (real && store_chain_at_path(st, real, expected_row, &ex, &err) < 0) {
			fprintf(stderr, "boxy verify: %s\n", err);
			free(err);
		}
		free(real);
		o.expect = ex.v;
		o.nexpect = ex.n;
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
	expected_free(&ex);
	if (!recorded)
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
	/* The session's own audit log, where it was: its chain must be there, whole. */
	if (c.audit_path && !running) {
		int frc = verify_file(c.audit_path, trusted, st);

		if (frc == EXIT_BOXY_FAILED)
			printf(_("%s: its audit log %s cannot be read (above): what it held cannot be "
				 "checked\n"), id, c.audit_path);
		bad += frc != 0;
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
		return verify_file(argv[optind], have ? pub : NULL, NULL);
	return verify_session(argv[optind], have ? pub : NULL);
}

const struct cmd_entry cmd_verify_entry = {
	"verify", N_("check that an audit log or a session's record was not rewritten"),
	N_("Usage: boxy verify [--key PUB] FILE|ID\n"
	   "       boxy verify --print-key\n"
	   "Check an --audit-log FILE: each line's hash chain, each session's signed\n"
	   "seal, and (on this machine) the length and head the store recorded and\n"
	   "that every session recorded as writing to it is in it. A session ID\n"
	   "checks its decisions in the store against its seal, then its audit log.\n"
	   "Each break is printed as FILE:LINE: what was found.\n"
	   "  --key PUB     trust only this public key (PEM, or 64 hex digits); default:\n"
	   "                your own key, when it exists\n"
	   "  --print-key   print your public key (PEM), to verify copies elsewhere\n"
	   "Exit status: 0 intact, 1 broken, 2 usage, 125 nothing could be checked.\n"),
	run_verify,
};
