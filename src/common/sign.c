/*
 * common/sign.c — the per-user ed25519 key (load, create, refuse) and the
 * seals it signs, through OpenSSL's EVP interface. What is signed and why a
 * key file is refused: common/sign.h.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "common/json.h"
#include "common/sha256.h"
#include "common/sign.h"
#include "common/util.h"

struct sign_key {
	EVP_PKEY *pkey;
	uint8_t digest[SHA256_LEN];     /* of the file's bytes it was parsed from (sign_key_reload) */
};

char *sign_key_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (state && state[0] == '/')
		return xasprintf("%s/boxy/signing.key", state);
	if (home && home[0] == '/')
		return xasprintf("%s/.local/state/boxy/signing.key", home);
	return NULL;
}

/* Read at most SIGN_KEY_MAX bytes of fd into a NUL-terminated buffer. */
static char *read_small(int fd, size_t *len)
{
	char *buf = xmalloc(SIGN_KEY_MAX + 1);
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, buf + n, SIGN_KEY_MAX + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r == 0 && n == 0) || n + (size_t)r > SIGN_KEY_MAX) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* A new key written to path with O_EXCL (0 created, 1 someone else just did, -1 failed). */
static int key_create(const char *path, char **err)
{
	EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	BIO *mem = BIO_new(BIO_s_mem());
	char *pem = NULL, *dir = xstrdup(path), *slash;
	long n = 0;
	int fd = -1, rc = -1;

	/* The state directory and its parents, as the store makes them (0700). */
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	for (char *p = dir + 1; slash && slash != dir; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			set_err_errno(err, _("signing key: creating %s"), dir);
			goto out;
		}
		*p = c;
		if (!c)
			break;
	}
	if (!pk || !mem || PEM_write_bio_PrivateKey(mem, pk, NULL, NULL, 0, NULL, NULL) != 1) {
		set_err(err, _("signing key: libcrypto cannot make an ed25519 key"));
		goto out;
	}
	n = BIO_get_mem_data(mem, &pem);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		rc = 1;
		goto out;
	}
	if (fd < 0 || fchmod(fd, 0600) < 0 || write_all(fd, pem, (size_t)n) < 0 || fsync(fd) < 0) {
		set_err_errno(err, _("signing key: writing %s"), path);
		if (fd >= 0)
			unlink(path);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	BIO_free(mem);
	EVP_PKEY_free(pk);
	free(dir);
	return rc;
}

int sign_key_check_stat(const char *path, const struct stat *st, uid_t me, char **err)
{
	if (!S_ISREG(st->st_mode))
		return set_err(err, _("signing key %s is not a regular file: refusing it"), path);
	if (st->st_uid != me)
		return set_err(err, _("signing key %s belongs to uid %u, not to you: refusing it"),
			       path, (unsigned)st->st_uid);
	if ((st->st_mode & 077) != 0 || (st->st_mode & 0400) == 0)
		return set_err(err, _("signing key %s has mode %04o; it must be 0600 (no access for "
				      "group or others): refusing it"), path,
			       (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Open the key file, refusing a link and whatever sign_key_check_stat refuses (-2). */
static int key_open_checked(const char *path, char **err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0 && errno == ELOOP) {
		set_err(err, _("signing key %s is a symbolic link: refusing it"), path);
		return -2;
	}
	if (fd < 0)
		return -1;          /* errno says why; ENOENT means "create it" */
	if (fstat(fd, &st) < 0) {
		set_err_errno(err, _("signing key %s"), path);
		close(fd);
		return -2;
	}
	if (sign_key_check_stat(path, &st, geteuid(), err) < 0) {
		close(fd);
		return -2;
	}
	return fd;
}

/* Open the key file as key_open_checked does, making it first when missing and create is set. */
static int key_open(const char *path, bool create, char **err)
{
	int fd;

	for (int tries = 0; ; tries++) {
		fd = key_open_checked(path, err);
		if (fd >= 0 || fd == -2)
			break;
		if (fd == -1 && errno == ENOENT && create && tries < 2) {
			if (key_create(path, err) < 0)
				return -1;
			continue;   /* load what was written (by us, or by a racing daemon) */
		}
		if (err && !*err)
			set_err_errno(err, _("signing key %s"), path);
		return -1;
	}
	return fd < 0 ? -1 : fd;
}

int sign_key_reload(const char *path, bool create, struct sign_key **key, char **err)
{
	uint8_t digest[SHA256_LEN];
	EVP_PKEY *pk = NULL;
	char *buf = NULL;
	size_t len = 0;
	BIO *mem;
	int fd = key_open(path, create, err);

	if (fd >= 0) {
		buf = read_small(fd, &len);
		close(fd);
		if (!buf)
			set_err(err, _("signing key %s: unreadable, empty or larger than %d bytes"),
				path, SIGN_KEY_MAX);
	}
	if (buf)
		sha256_digest(buf, len, digest);
	if (!buf || (*key && memcmp((*key)->digest, digest, SHA256_LEN) != 0)) {
		sign_key_free(*key);
		*key = NULL;
	}
	if (!buf)
		return -1;
	if (*key) {
		OPENSSL_cleanse(buf, len);
		free(buf);
		return 0;
	}
	mem = BIO_new_mem_buf(buf, (int)len);
	if (mem)
		pk = PEM_read_bio_PrivateKey(mem, NULL, NULL, NULL);
	BIO_free(mem);
	OPENSSL_cleanse(buf, len);
	free(buf);
	if (!pk || EVP_PKEY_get_id(pk) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pk);
		return set_err(err, _("signing key %s is not an ed25519 private key in PEM"), path);
	}
	*key = xcalloc(1, sizeof(**key));
	(*key)->pkey = pk;
	memcpy((*key)->digest, digest, SHA256_LEN);
	return 0;
}

int sign_key_load(const char *path, bool create, struct sign_key **out, char **err)
{
	*out = NULL;
	return sign_key_reload(path, create, out, err);
}

void sign_key_free(struct sign_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

void sign_key_public(const struct sign_key *k, unsigned char pub[SIGN_PUB_LEN])
{
	size_t len = SIGN_PUB_LEN;

	if (EVP_PKEY_get_raw_public_key(k->pkey, pub, &len) != 1 || len != SIGN_PUB_LEN)
		fatal("ed25519: cannot read the public key (libcrypto)");
}

char *sign_key_public_pem(const struct sign_key *k)
{
	BIO *mem = BIO_new(BIO_s_mem());
	char *p = NULL, *s;
	long n;

	if (!mem || PEM_write_bio_PUBKEY(mem, k->pkey) != 1)
		fatal("ed25519: cannot write the public key (libcrypto)");
	n = BIO_get_mem_data(mem, &p);
	s = xmalloc((size_t)n + 1);
	memcpy(s, p, (size_t)n);
	s[n] = '\0';
	BIO_free(mem);
	return s;
}

int sign_read_public(const char *path, unsigned char pub[SIGN_PUB_LEN], char **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	EVP_PKEY *pk = NULL;
	size_t len = 0, plen = SIGN_PUB_LEN;
	char *buf;
	BIO *mem;

	if (fd < 0)
		return set_err_errno(err, "--key %s", path);
	buf = read_small(fd, &len);
	close(fd);
	if (!buf)
		return set_err(err, _("--key %s: unreadable, empty or larger than %d bytes"), path,
			       SIGN_KEY_MAX);
	if (buf[0] != '-') {
		/* 64 hex digits on a line, as the seal line carries the key. */
		buf[strcspn(buf, "\r\n")] = '\0';
		if (chain_unhex(buf, pub, SIGN_PUB_LEN) == 0) {
			free(buf);
			return 0;
		}
	}
	mem = BIO_new_mem_buf(buf, (int)strlen(buf));
	if (mem)
		pk = PEM_read_bio_PUBKEY(mem, NULL, NULL, NULL);
	BIO_free(mem);
	free(buf);
	if (!pk || EVP_PKEY_get_id(pk) != EVP_PKEY_ED25519 ||
	    EVP_PKEY_get_raw_public_key(pk, pub, &plen) != 1 || plen != SIGN_PUB_LEN) {
		EVP_PKEY_free(pk);
		return set_err(err, _("--key %s: not an ed25519 public key (PEM, or 64 hex digits)"),
			       path);
	}
	EVP_PKEY_free(pk);
	return 0;
}

char *seal_message(const struct seal *s)
{
	char ah[CHAIN_HEX_LEN + 1], dh[CHAIN_HEX_LEN + 1];

	chain_hex(s->audit.head, CHAIN_HASH_LEN, ah);
	chain_hex(s->decisions.head, CHAIN_HASH_LEN, dh);
	return xasprintf("boxy seal v1\nsession %s\nt %llu\naudit %llu %s\ndecisions %llu %s\n",
			 s->id, (unsigned long long)s->t_ms, (unsigned long long)s->audit.n, ah,
			 (unsigned long long)s->decisions.n, dh);
}

int sign_seal(const struct sign_key *k, struct seal *s, char **err)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *msg = seal_message(s);
	size_t len = SIGN_SIG_LEN;
	int rc = 0;

	sign_key_public(k, s->key);
	if (!md || EVP_DigestSignInit(md, NULL, NULL, NULL, k->pkey) != 1 ||
	    EVP_DigestSign(md, s->sig, &len, (const unsigned char *)msg, strlen(msg)) != 1 ||
	    len != SIGN_SIG_LEN)
		rc = set_err(err, _("signing key: libcrypto cannot sign the seal"));
	EVP_MD_CTX_free(md);
	free(msg);
	return rc;
}

bool seal_verify(const struct seal *s)
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, s->key, SIGN_PUB_LEN);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *msg = seal_message(s);
	bool ok = pk && md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, pk) == 1 &&
		  EVP_DigestVerify(md, s->sig, SIGN_SIG_LEN, (const unsigned char *)msg,
				   strlen(msg)) == 1;

	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	free(msg);
	return ok;
}

char *seal_line(const struct seal *s, bool own_id, uint64_t seq)
{
	char dhead[CHAIN_HEX_LEN + 1], prev[CHAIN_HEX_LEN + 1], key[2 * SIGN_PUB_LEN + 1];
	char sig[2 * SIGN_SIG_LEN + 1], *words;
	struct jbuf b;

	chain_hex(s->decisions.head, CHAIN_HASH_LEN, dhead);
	chain_hex(s->audit.head, CHAIN_HASH_LEN, prev);
	chain_hex(s->key, SIGN_PUB_LEN, key);
	chain_hex(s->sig, SIGN_SIG_LEN, sig);
	words = xasprintf("the session's %llu line(s) and %llu decision(s), signed",
			  (unsigned long long)s->audit.n, (unsigned long long)s->decisions.n);
	jbuf_init(&b);
	json_obj_begin(&b);
	json_kv_uint(&b, "t", s->t_ms);
	json_kv_str(&b, own_id ? "chain" : "session", s->id);
	json_kv_str(&b, "layer", "audit");
	json_kv_str(&b, "verdict", "seal");
	json_kv_str(&b, "subject", "chain");
	json_kv_str(&b, "reason", words);
	json_kv_uint(&b, "lines", s->audit.n);
	json_kv_uint(&b, "decisions", s->decisions.n);
	json_kv_str(&b, "decisions_head", dhead);
	json_kv_str(&b, "key", key);
	json_kv_str(&b, "sig", sig);
	json_kv_uint(&b, "seq", seq);
	json_kv_str(&b, "prev", prev);
	json_obj_end(&b);
	jbuf_raw(&b, "\n");
	free(words);
	return jbuf_steal(&b);
}
