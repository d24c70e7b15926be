/*
 * cli/lazy-libs.c — libcrypto, libsystemd, libsqlite3 and libncursesw loaded
 * when first called, not at every start of the boxy binary (doc/daemon.md,
 * "Where a start's time goes").
 *
 * Every `boxy` is one binary (the CLI, the client and the daemon), and the
 * dynamic loader maps and relocates every library it links before main().
 * With libcrypto (OpenSSL 3: the seal's Ed25519 signatures and SHA-256) and
 * libsystemd (sd-bus for a delegated scope, the journal), and the five
 * libraries libsystemd pulls in (libgcrypt, libgpg-error, liblzma, libzstd,
 * liblz4, libcap), an empty program linked the way boxy is took 2.6 ms of
 * CPU to start; without those two, 0.9 ms (perf stat -r 400, task-clock).
 * `boxy run` through the daemon calls neither: the client is the part of a
 * start the user waits for twice (its start and its exit). libsqlite3 (the
 * store: the daemon, and the commands that read it) and libncursesw with
 * libtinfo (`boxy top` alone) were 0.3 ms more each of every start's loader
 * (perf stat of an empty program linked with them).
 *
 * So the boxy binary does not link them: it defines the functions of theirs
 * it calls, each of which, on its first call, opens the library by its
 * soname (dlopen, the same search the loader does at start, RTLD_LOCAL) and
 * calls the real function. The prototypes are the headers' own (a wrapper
 * that disagrees with its header does not compile). The daemon, which signs
 * every session, opens libcrypto at its first session and keeps it. A
 * library that cannot be opened makes each call fail the way the library
 * reports failure (NULL, 0, -ENOSYS, SQLITE_CANTOPEN): the seal then fails
 * loudly, a scope request falls back as doc/limits.md says, the store cannot
 * be opened and says why. The programs and the unit tests
 * that use sign.c, chain.c, tlsca.c, limits-scope.c or the store directly
 * still link the libraries; tests/house.sh checks boxy's NEEDED list.
 *
 * Thread-safe: the daemon's worker threads may race to a first call; each
 * stores the same pointers (atomics, relaxed: dlopen and dlsym are
 * thread-safe and idempotent).
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <sqlite3.h>

#include <curses.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>
#endif

struct lazy_lib {
	const char *soname;
	void *handle;
	int failed;
};

/* The library's handle, opened on first use; NULL (said once on stderr) if it cannot be. */
static void *lazy_open(struct lazy_lib *lib)
{
	void *h = __atomic_load_n(&lib->handle, __ATOMIC_ACQUIRE);

	if (h || __atomic_load_n(&lib->failed, __ATOMIC_RELAXED))
		return h;
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		if (!__atomic_exchange_n(&lib->failed, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "boxy: cannot load %s: %s\n", lib->soname, dlerror());
		return NULL;
	}
	__atomic_store_n(&lib->handle, h, __ATOMIC_RELEASE);
	return h;
}

/* The real function name of lib, cached in *slot; NULL if the library or the symbol is missing. */
static void *lazy_sym(struct lazy_lib *lib, void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *h;

	if (f)
		return f;
	h = lazy_open(lib);
	if (!h)
		return NULL;
	f = dlsym(h, name);
	if (!f) {
		fprintf(stderr, "boxy: %s has no %s\n", lib->soname, name);
		return NULL;
	}
	__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}

/* Inside a wrapper of NAME: real, its pointer, or return FAIL when it cannot be had. */
#define LAZY(lib, name, fail) \
	static void *slot_; \
	__typeof__(name) *real = (__typeof__(name) *)lazy_sym(&(lib), &slot_, #name); \
	if (!real) \
		return fail

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- libcrypto (common/sign.c, common/chain.c, common/tlsca.c, daemon/lockfile.c) ---- */

static struct lazy_lib crypto = { .soname = "libcrypto.so." STR(OPENSSL_VERSION_MAJOR) };

long BIO_ctrl(BIO *bp, int cmd, long larg, void *parg)
{
	LAZY(crypto, BIO_ctrl, 0);
	return real(bp, cmd, larg, parg);
}

int BIO_free(BIO *a)
{
	LAZY(crypto, BIO_free, 0);
	return real(a);
}

BIO *BIO_new(const BIO_METHOD *type)
{
	LAZY(crypto, BIO_new, NULL);
	return real(type);
}

BIO *BIO_new_mem_buf(const void *buf, int len)
{
	LAZY(crypto, BIO_new_mem_buf, NULL);
	return real(buf, len);
}

const BIO_METHOD *BIO_s_mem(void)
{
	LAZY(crypto, BIO_s_mem, NULL);
	return real();
}

int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size,
	       const EVP_MD *type, ENGINE *impl)
{
	LAZY(crypto, EVP_Digest, 0);
	return real(data, count, md, size, type, impl);
}

int EVP_DigestInit_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl)
{
	LAZY(crypto, EVP_DigestInit_ex, 0);
	return real(ctx, type, impl);
}

int EVP_DigestUpdate(EVP_MD_CTX *ctx, const void *d, size_t cnt)
{
	LAZY(crypto, EVP_DigestUpdate, 0);
	return real(ctx, d, cnt);
}

int EVP_DigestFinal_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s)
{
	LAZY(crypto, EVP_DigestFinal_ex, 0);
	return real(ctx, md, s);
}

int EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e,
		       EVP_PKEY *pkey)
{
	LAZY(crypto, EVP_DigestSignInit, 0);
	return real(ctx, pctx, type, e, pkey);
}

int EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sigret, size_t *siglen,
		   const unsigned char *tbs, size_t tbslen)
{
	LAZY(crypto, EVP_DigestSign, 0);
	return real(ctx, sigret, siglen, tbs, tbslen);
}

int EVP_DigestVerifyInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e,
			 EVP_PKEY *pkey)
{
	LAZY(crypto, EVP_DigestVerifyInit, 0);
	return real(ctx, pctx, type, e, pkey);
}

int EVP_DigestVerify(EVP_MD_CTX *ctx, const unsigned char *sigret, size_t siglen,
		     const unsigned char *tbs, size_t tbslen)
{
	LAZY(crypto, EVP_DigestVerify, -1);
	return real(ctx, sigret, siglen, tbs, tbslen);
}

EVP_MD_CTX *EVP_MD_CTX_new(void)
{
	LAZY(crypto, EVP_MD_CTX_new, NULL);
	return real();
}

void EVP_MD_CTX_free(EVP_MD_CTX *ctx)
{
	LAZY(crypto, EVP_MD_CTX_free, );
	real(ctx);
}

/*
 * Variadic in OpenSSL: "RSA" takes a size_t, "EC" a curve name, the others
 * (boxy asks for "ED25519") nothing. The one entry point without a va_list
 * twin, so the known types are forwarded by hand.
 */
EVP_PKEY *EVP_PKEY_Q_keygen(OSSL_LIB_CTX *libctx, const char *propq, const char *type, ...)
{
	EVP_PKEY *k;
	va_list ap;

	LAZY(crypto, EVP_PKEY_Q_keygen, NULL);
	va_start(ap, type);
	if (strcmp(type, "RSA") == 0)
		k = real(libctx, propq, type, va_arg(ap, size_t));
	else if (strcmp(type, "EC") == 0)
		k = real(libctx, propq, type, va_arg(ap, const char *));
	else
		k = real(libctx, propq, type);
	va_end(ap);
	return k;
}

void EVP_PKEY_free(EVP_PKEY *pkey)
{
	LAZY(crypto, EVP_PKEY_free, );
	real(pkey);
}

int EVP_PKEY_get_id(const EVP_PKEY *pkey)
{
	LAZY(crypto, EVP_PKEY_get_id, 0);
	return real(pkey);
}

int EVP_PKEY_get_raw_public_key(const EVP_PKEY *pkey, unsigned char *pub, size_t *len)
{
	LAZY(crypto, EVP_PKEY_get_raw_public_key, 0);
	return real(pkey, pub, len);
}

EVP_PKEY *EVP_PKEY_new_raw_public_key(int type, ENGINE *e, const unsigned char *pub, size_t len)
{
	LAZY(crypto, EVP_PKEY_new_raw_public_key, NULL);
	return real(type, e, pub, len);
}

/* The tripwires' decoy SSH key (sandbox/decoys.c): its public half from a random seed. */
EVP_PKEY *EVP_PKEY_new_raw_private_key(int type, ENGINE *e, const unsigned char *priv,
				       size_t len)
{
	LAZY(crypto, EVP_PKEY_new_raw_private_key, NULL);
	return real(type, e, priv, len);
}

const EVP_MD *EVP_sha256(void)
{
	LAZY(crypto, EVP_sha256, NULL);
	return real();
}

/* A key's bytes are wiped even without the library: the one wrapper that cannot just fail. */
void OPENSSL_cleanse(void *ptr, size_t len)
{
	static void *slot_;
	__typeof__(OPENSSL_cleanse) *real =
		(__typeof__(OPENSSL_cleanse) *)lazy_sym(&crypto, &slot_, "OPENSSL_cleanse");

	if (real) {
		real(ptr, len);
		return;
	}
	explicit_bzero(ptr, len);
}

EVP_PKEY *PEM_read_bio_PUBKEY(BIO *bp, EVP_PKEY **x, pem_password_cb *cb, void *u)
{
	LAZY(crypto, PEM_read_bio_PUBKEY, NULL);
	return real(bp, x, cb, u);
}

int PEM_write_bio_PUBKEY(BIO *bp, const EVP_PKEY *x)
{
	LAZY(crypto, PEM_write_bio_PUBKEY, 0);
	return real(bp, x);
}

EVP_PKEY *PEM_read_bio_PrivateKey(BIO *bp, EVP_PKEY **x, pem_password_cb *cb, void *u)
{
	LAZY(crypto, PEM_read_bio_PrivateKey, NULL);
	return real(bp, x, cb, u);
}

int PEM_write_bio_PrivateKey(BIO *bp, const EVP_PKEY *x, const EVP_CIPHER *enc,
			     const unsigned char *kstr, int klen, pem_password_cb *cb, void *u)
{
	LAZY(crypto, PEM_write_bio_PrivateKey, 0);
	return real(bp, x, enc, kstr, klen, cb, u);
}

/*
 * The same for a function that only forwards: RET NAME PARAMS calls the real
 * one with ARGS, or returns FAIL. LAZY_VOID for one returning nothing.
 */
#define LAZY_FN(lib, ret, name, params, args, fail) \
	ret name params \
	{ \
		LAZY(lib, name, fail); \
		return real args; \
	}
#define LAZY_VOID(lib, name, params, args) \
	void name params \
	{ \
		LAZY(lib, name, ); \
		real args; \
	}

/*
 * The session CA of TLS inspection (common/tlsca.c), made in the daemon: its
 * key, certificate and name constraints, and OpenSSL's error queue.
 */
LAZY_FN(crypto, ASN1_TIME *, ASN1_TIME_set, (ASN1_TIME *s, time_t t), (s, t), NULL)
LAZY_FN(crypto, int, ASN1_STRING_set, (ASN1_STRING *str, const void *data, int len),
	(str, data, len), 0)
LAZY_FN(crypto, ASN1_OCTET_STRING *, ASN1_OCTET_STRING_new, (void), (), NULL)
LAZY_VOID(crypto, ASN1_OCTET_STRING_free, (ASN1_OCTET_STRING *a), (a))
LAZY_FN(crypto, int, ASN1_OCTET_STRING_set,
	(ASN1_OCTET_STRING *str, const unsigned char *data, int len), (str, data, len), 0)
LAZY_FN(crypto, ASN1_IA5STRING *, ASN1_IA5STRING_new, (void), (), NULL)
LAZY_VOID(crypto, ASN1_IA5STRING_free, (ASN1_IA5STRING *a), (a))
LAZY_FN(crypto, BIGNUM *, BN_bin2bn, (const unsigned char *s, int len, BIGNUM *ret),
	(s, len, ret), NULL)
LAZY_VOID(crypto, BN_free, (BIGNUM *a), (a))
LAZY_FN(crypto, ASN1_INTEGER *, BN_to_ASN1_INTEGER, (const BIGNUM *bn, ASN1_INTEGER *ai),
	(bn, ai), NULL)
LAZY_FN(crypto, EVP_PKEY *, d2i_AutoPrivateKey,
	(EVP_PKEY **a, const unsigned char **pp, long length), (a, pp, length), NULL)
LAZY_FN(crypto, X509 *, d2i_X509, (X509 **a, const unsigned char **in, long len),
	(a, in, len), NULL)
LAZY_FN(crypto, unsigned long, ERR_get_error, (void), (), 0)
LAZY_VOID(crypto, ERR_error_string_n, (unsigned long e, char *buf, size_t len), (e, buf, len))
LAZY_VOID(crypto, ERR_clear_error, (void), ())
LAZY_FN(crypto, GENERAL_NAME *, GENERAL_NAME_new, (void), (), NULL)
LAZY_VOID(crypto, GENERAL_NAME_free, (GENERAL_NAME *a), (a))
LAZY_VOID(crypto, GENERAL_NAME_set0_value, (GENERAL_NAME *a, int type, void *value),
	  (a, type, value))
LAZY_VOID(crypto, GENERAL_NAMES_free, (GENERAL_NAMES *a), (a))
LAZY_FN(crypto, GENERAL_SUBTREE *, GENERAL_SUBTREE_new, (void), (), NULL)
LAZY_VOID(crypto, GENERAL_SUBTREE_free, (GENERAL_SUBTREE *a), (a))
LAZY_FN(crypto, int, i2d_PrivateKey, (const EVP_PKEY *a, unsigned char **pp), (a, pp), -1)
LAZY_FN(crypto, int, i2d_X509, (const X509 *a, unsigned char **out), (a, out), -1)
LAZY_FN(crypto, NAME_CONSTRAINTS *, NAME_CONSTRAINTS_new, (void), (), NULL)
LAZY_VOID(crypto, NAME_CONSTRAINTS_free, (NAME_CONSTRAINTS *a), (a))
LAZY_FN(crypto, OPENSSL_STACK *, OPENSSL_sk_new_null, (void), (), NULL)
LAZY_FN(crypto, int, OPENSSL_sk_push, (OPENSSL_STACK *st, const void *data), (st, data), 0)
LAZY_VOID(crypto, OPENSSL_sk_free, (OPENSSL_STACK *st), (st))
LAZY_FN(crypto, int, PEM_write_bio_X509, (BIO *out, const X509 *x), (out, x), 0)
LAZY_FN(crypto, int, RAND_bytes, (unsigned char *buf, int num), (buf, num), 0)
LAZY_FN(crypto, X509 *, X509_new, (void), (), NULL)
LAZY_VOID(crypto, X509_free, (X509 *a), (a))
LAZY_FN(crypto, int, X509_add_ext, (X509 *x, X509_EXTENSION *ex, int loc), (x, ex, loc), 0)
LAZY_FN(crypto, int, X509_add1_ext_i2d,
	(X509 *x, int nid, void *value, int crit, unsigned long flags),
	(x, nid, value, crit, flags), 0)
LAZY_FN(crypto, int, X509_check_private_key, (const X509 *x509, const EVP_PKEY *pkey),
	(x509, pkey), 0)
LAZY_FN(crypto, int, X509_digest,
	(const X509 *data, const EVP_MD *type, unsigned char *md, unsigned int *len),
	(data, type, md, len), 0)
LAZY_VOID(crypto, X509_EXTENSION_free, (X509_EXTENSION *a), (a))
LAZY_FN(crypto, const ASN1_TIME *, X509_get0_notAfter, (const X509 *x), (x), NULL)
LAZY_FN(crypto, ASN1_TIME *, X509_getm_notAfter, (const X509 *x), (x), NULL)
LAZY_FN(crypto, ASN1_TIME *, X509_getm_notBefore, (const X509 *x), (x), NULL)
LAZY_FN(crypto, ASN1_INTEGER *, X509_get_serialNumber, (X509 *x), (x), NULL)
LAZY_FN(crypto, X509_NAME *, X509_get_subject_name, (const X509 *a), (a), NULL)
LAZY_FN(crypto, X509_NAME *, X509_NAME_new, (void), (), NULL)
LAZY_VOID(crypto, X509_NAME_free, (X509_NAME *a), (a))
LAZY_FN(crypto, int, X509_NAME_add_entry_by_txt,
	(X509_NAME *name, const char *field, int type, const unsigned char *bytes, int len,
	 int loc, int set), (name, field, type, bytes, len, loc, set), 0)
LAZY_FN(crypto, int, X509_set_issuer_name, (X509 *x, const X509_NAME *name), (x, name), 0)
LAZY_FN(crypto, int, X509_set_subject_name, (X509 *x, const X509_NAME *name), (x, name), 0)
LAZY_FN(crypto, int, X509_set_pubkey, (X509 *x, EVP_PKEY *pkey), (x, pkey), 0)
LAZY_FN(crypto, int, X509_set_version, (X509 *x, long version), (x, version), 0)
LAZY_FN(crypto, int, X509_set1_notAfter, (X509 *x, const ASN1_TIME *tm), (x, tm), 0)
LAZY_FN(crypto, int, X509_sign, (X509 *x, EVP_PKEY *pkey, const EVP_MD *md), (x, pkey, md), 0)
LAZY_FN(crypto, unsigned long, X509_subject_name_hash, (X509 *x), (x), 0)
LAZY_VOID(crypto, X509V3_set_ctx,
	  (X509V3_CTX *ctx, X509 *issuer, X509 *subject, X509_REQ *req, X509_CRL *crl, int flags),
	  (ctx, issuer, subject, req, crl, flags))
LAZY_FN(crypto, X509_EXTENSION *, X509V3_EXT_conf_nid,
	(LHASH_OF(CONF_VALUE) *conf, X509V3_CTX *ctx, int ext_nid, const char *value),
	(conf, ctx, ext_nid, value), NULL)

/* ---- libsqlite3 (store/, the daemon and the commands that read the store) -------- */

static struct lazy_lib sqlite = { .soname = "libsqlite3.so.0" };

int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs)
{
	*db = NULL;
	{
		LAZY(sqlite, sqlite3_open_v2, SQLITE_CANTOPEN);
		return real(filename, db, flags, vfs);
	}
}

int sqlite3_close(sqlite3 *db)
{
	LAZY(sqlite, sqlite3_close, SQLITE_OK);
	return real(db);
}

const char *sqlite3_errmsg(sqlite3 *db)
{
	LAZY(sqlite, sqlite3_errmsg, "libsqlite3.so.0 cannot be loaded");
	return real(db);
}

int sqlite3_extended_result_codes(sqlite3 *db, int onoff)
{
	LAZY(sqlite, sqlite3_extended_result_codes, SQLITE_MISUSE);
	return real(db, onoff);
}

int sqlite3_busy_timeout(sqlite3 *db, int ms)
{
	LAZY(sqlite, sqlite3_busy_timeout, SQLITE_MISUSE);
	return real(db, ms);
}

int sqlite3_exec(sqlite3 *db, const char *sql, int (*cb)(void *, int, char **, char **),
		 void *arg, char **errmsg)
{
	if (errmsg)
		*errmsg = NULL;
	{
		LAZY(sqlite, sqlite3_exec, SQLITE_MISUSE);
		return real(db, sql, cb, arg, errmsg);
	}
}

void sqlite3_free(void *p)
{
	LAZY(sqlite, sqlite3_free, );
	real(p);
}

int sqlite3_changes(sqlite3 *db)
{
	LAZY(sqlite, sqlite3_changes, 0);
	return real(db);
}

sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *db)
{
	LAZY(sqlite, sqlite3_last_insert_rowid, 0);
	return real(db);
}

int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt,
		       const char **tail)
{
	*stmt = NULL;
	{
		LAZY(sqlite, sqlite3_prepare_v2, SQLITE_MISUSE);
		return real(db, sql, n, stmt, tail);
	}
}

int sqlite3_prepare_v3(sqlite3 *db, const char *sql, int n, unsigned int flags,
		       sqlite3_stmt **stmt, const char **tail)
{
	*stmt = NULL;
	{
		LAZY(sqlite, sqlite3_prepare_v3, SQLITE_MISUSE);
		return real(db, sql, n, flags, stmt, tail);
	}
}

const char *sqlite3_sql(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_sql, NULL);
	return real(stmt);
}

int sqlite3_bind_parameter_count(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_bind_parameter_count, 0);
	return real(stmt);
}

int sqlite3_bind_int(sqlite3_stmt *stmt, int i, int v)
{
	LAZY(sqlite, sqlite3_bind_int, SQLITE_MISUSE);
	return real(stmt, i, v);
}

int sqlite3_bind_int64(sqlite3_stmt *stmt, int i, sqlite3_int64 v)
{
	LAZY(sqlite, sqlite3_bind_int64, SQLITE_MISUSE);
	return real(stmt, i, v);
}

int sqlite3_bind_null(sqlite3_stmt *stmt, int i)
{
	LAZY(sqlite, sqlite3_bind_null, SQLITE_MISUSE);
	return real(stmt, i);
}

int sqlite3_bind_text(sqlite3_stmt *stmt, int i, const char *v, int n, void (*del)(void *))
{
	LAZY(sqlite, sqlite3_bind_text, SQLITE_MISUSE);
	return real(stmt, i, v, n, del);
}

int sqlite3_clear_bindings(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_clear_bindings, SQLITE_MISUSE);
	return real(stmt);
}

int sqlite3_step(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_step, SQLITE_MISUSE);
	return real(stmt);
}

int sqlite3_reset(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_reset, SQLITE_MISUSE);
	return real(stmt);
}

int sqlite3_finalize(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_finalize, SQLITE_OK);
	return real(stmt);
}

int sqlite3_column_count(sqlite3_stmt *stmt)
{
	LAZY(sqlite, sqlite3_column_count, 0);
	return real(stmt);
}

const char *sqlite3_column_name(sqlite3_stmt *stmt, int i)
{
	LAZY(sqlite, sqlite3_column_name, NULL);
	return real(stmt, i);
}

int sqlite3_column_type(sqlite3_stmt *stmt, int i)
{
	LAZY(sqlite, sqlite3_column_type, SQLITE_NULL);
	return real(stmt, i);
}

int sqlite3_column_int(sqlite3_stmt *stmt, int i)
{
	LAZY(sqlite, sqlite3_column_int, 0);
	return real(stmt, i);
}

sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *stmt, int i)
{
	LAZY(sqlite, sqlite3_column_int64, 0);
	return real(stmt, i);
}

const unsigned char *sqlite3_column_text(sqlite3_stmt *stmt, int i)
{
	LAZY(sqlite, sqlite3_column_text, NULL);
	return real(stmt, i);
}

/* ---- libncursesw and libtinfo (ui/top.c, `boxy top` alone) ------------------------ */

/*
 * The three variables of curses that top.c reads. A program that links
 * ncurses gets them as copies the linker makes in the program, which the
 * library's own references bind to; here they are defined in the program
 * and exported (-Wl,--export-dynamic-symbol, Makefile.am), so that the
 * library opened later binds to them the same way (its references go
 * through the global scope, the program, first).
 */
WINDOW *stdscr;
int LINES, COLS;

static struct lazy_lib curses = { .soname = "libncursesw.so.6" };

/* initscr, which exits when it cannot start curses; so does this when it cannot load it. */
WINDOW *initscr(void)
{
	static void *slot_;
	__typeof__(initscr) *real = (__typeof__(initscr) *)lazy_sym(&curses, &slot_, "initscr");

	if (!real)
		exit(EXIT_FAILURE);
	return real();
}

int endwin(void)
{
	LAZY(curses, endwin, ERR);
	return real();
}

int cbreak(void)
{
	LAZY(curses, cbreak, ERR);
	return real();
}

int noecho(void)
{
	LAZY(curses, noecho, ERR);
	return real();
}

int nonl(void)
{
	LAZY(curses, nonl, ERR);
	return real();
}

int keypad(WINDOW *w, bool on)
{
	LAZY(curses, keypad, ERR);
	return real(w, on);
}

int nodelay(WINDOW *w, bool on)
{
	LAZY(curses, nodelay, ERR);
	return real(w, on);
}

int curs_set(int visibility)
{
	LAZY(curses, curs_set, ERR);
	return real(visibility);
}

int set_escdelay(int ms)
{
	LAZY(curses, set_escdelay, ERR);
	return real(ms);
}

int def_prog_mode(void)
{
	LAZY(curses, def_prog_mode, ERR);
	return real();
}

int reset_prog_mode(void)
{
	LAZY(curses, reset_prog_mode, ERR);
	return real();
}

mmask_t mousemask(mmask_t mask, mmask_t *old)
{
	LAZY(curses, mousemask, 0);
	return real(mask, old);
}

int mouseinterval(int ms)
{
	LAZY(curses, mouseinterval, ERR);
	return real(ms);
}

int getmouse(MEVENT *ev)
{
	LAZY(curses, getmouse, ERR);
	return real(ev);
}

bool has_colors(void)
{
	LAZY(curses, has_colors, FALSE);
	return real();
}

int start_color(void)
{
	LAZY(curses, start_color, ERR);
	return real();
}

int use_default_colors(void)
{
	LAZY(curses, use_default_colors, ERR);
	return real();
}

int init_pair(NCURSES_PAIRS_T pair, NCURSES_COLOR_T fg, NCURSES_COLOR_T bg)
{
	LAZY(curses, init_pair, ERR);
	return real(pair, fg, bg);
}

int wattrset(WINDOW *w, int attrs)
{
	LAZY(curses, wattrset, ERR);
	return real(w, attrs);
}

int waddnstr(WINDOW *w, const char *s, int n)
{
	LAZY(curses, waddnstr, ERR);
	return real(w, s, n);
}

int wmove(WINDOW *w, int y, int x)
{
	LAZY(curses, wmove, ERR);
	return real(w, y, x);
}

int wclear(WINDOW *w)
{
	LAZY(curses, wclear, ERR);
	return real(w);
}

int wrefresh(WINDOW *w)
{
	LAZY(curses, wrefresh, ERR);
	return real(w);
}

int wgetch(WINDOW *w)
{
	LAZY(curses, wgetch, ERR);
	return real(w);
}

/* ---- libsystemd (sandbox/limits-scope.c, daemon/journal.c) ----------------------- */

#ifdef HAVE_SYSTEMD
static struct lazy_lib systemd = { .soname = "libsystemd.so.0" };

int sd_bus_new(sd_bus **ret)
{
	LAZY(systemd, sd_bus_new, -ENOSYS);
	return real(ret);
}

int sd_bus_open_user(sd_bus **ret)
{
	LAZY(systemd, sd_bus_open_user, -ENOSYS);
	return real(ret);
}

int sd_bus_set_address(sd_bus *bus, const char *address)
{
	LAZY(systemd, sd_bus_set_address, -ENOSYS);
	return real(bus, address);
}

int sd_bus_start(sd_bus *bus)
{
	LAZY(systemd, sd_bus_start, -ENOSYS);
	return real(bus);
}

sd_bus *sd_bus_unref(sd_bus *bus)
{
	LAZY(systemd, sd_bus_unref, NULL);
	return real(bus);
}

sd_bus *sd_bus_flush_close_unref(sd_bus *bus)
{
	LAZY(systemd, sd_bus_flush_close_unref, NULL);
	return real(bus);
}

int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination,
				   const char *path, const char *interface, const char *member)
{
	LAZY(systemd, sd_bus_message_new_method_call, -ENOSYS);
	return real(bus, m, destination, path, interface, member);
}

/* Variadic: forwarded through its va_list twin. */
int sd_bus_message_append(sd_bus_message *m, const char *types, ...)
{
	va_list ap;
	int r;

	LAZY(systemd, sd_bus_message_appendv, -ENOSYS);
	va_start(ap, types);
	r = real(m, types, ap);
	va_end(ap);
	return r;
}

int sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents)
{
	LAZY(systemd, sd_bus_message_open_container, -ENOSYS);
	return real(m, type, contents);
}

int sd_bus_message_close_container(sd_bus_message *m)
{
	LAZY(systemd, sd_bus_message_close_container, -ENOSYS);
	return real(m);
}

sd_bus_message *sd_bus_message_unref(sd_bus_message *m)
{
	LAZY(systemd, sd_bus_message_unref, NULL);
	return real(m);
}

int sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
		sd_bus_message **reply)
{
	LAZY(systemd, sd_bus_call, -ENOSYS);
	return real(bus, m, usec, ret_error, reply);
}

void sd_bus_error_free(sd_bus_error *e)
{
	LAZY(systemd, sd_bus_error_free, );
	real(e);
}

int sd_journal_sendv_with_location(const char *file, const char *line, const char *func,
				   const struct iovec *iov, int n)
{
	LAZY(systemd, sd_journal_sendv_with_location, -ENOSYS);
	return real(file, line, func, iov, n);
}
#endif
