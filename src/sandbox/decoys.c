/*
 * sandbox/decoys.c — making a session's decoy credentials (see
 * sandbox/decoys.h for where they go and why only there).
 *
 * Every random part is drawn from getrandom(2) in the alphabet and length
 * of the real thing. A token handed to the detectors is a stretch of the
 * file as written that comes from random bytes alone: where an encoding
 * mixes random bytes with fixed ones (base64 of "user:dckr_pat_…", the
 * header of an OpenSSH key) the characters that carry fixed bits are left
 * out, since any other file of that format has them too.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "common/buf.h"
#include "common/util.h"
#include "parse/tripwire.h"
#include "sandbox/decoys.h"

#define DAY 86400

static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char b64std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ---- randomness ------------------------------------------------------------------ */

static void rnd(void *p, size_t n)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t r = getrandom(b, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fatal_errno("getrandom");
		b += r;
		n -= (size_t)r;
	}
}

/* A uniform number below n (n > 0). */
static uint32_t rnd_below(uint32_t n)
{
	uint32_t v, lim = UINT32_MAX - UINT32_MAX % n;

	do
		rnd(&v, sizeof(v));
	while (v >= lim);
	return v % n;
}

/* n characters of alpha (malloc'd, NUL-terminated). */
static char *rnd_chars(size_t n, const char *alpha)
{
	char *s = xmalloc(n + 1);
	uint32_t k = (uint32_t)strlen(alpha);

	for (size_t i = 0; i < n; i++)
		s[i] = alpha[rnd_below(k)];
	s[n] = '\0';
	return s;
}

/* ---- encodings ------------------------------------------------------------------- */

/*
 * base64 of in[0..n) (malloc'd; '=' padding when pad). With mask (a flag per
 * input byte: drawn at random), *at and *len say where the longest run of
 * characters lies all of whose bits come from random bytes, never crossing
 * a multiple of line (0: no lines).
 */
static char *b64_masked(const uint8_t *in, const bool *mask, size_t n, const char *alpha,
			bool pad, size_t line, size_t *at, size_t *len)
{
	size_t chars = (8 * n + 5) / 6, o = 0, run = 0;
	char *out = xmalloc(chars + 4);

	if (at)
		*at = *len = 0;
	for (size_t k = 0; k < chars; k++) {
		unsigned v = 0;
		bool random = mask != NULL;

		for (unsigned b = 0; b < 6; b++) {
			size_t bit = 6 * k + b, byte = bit / 8;
			unsigned val = byte < n ? (in[byte] >> (7 - bit % 8)) & 1u : 0;

			v = (v << 1) | val;
			if (byte >= n || (mask && !mask[byte]))
				random = false;
		}
		out[o++] = alpha[v];
		if (line && k % line == 0)
			run = 0;
		run = random ? run + 1 : 0;
		if (at && run > *len) {
			*len = run;
			*at = k + 1 - run;
		}
	}
	while (pad && o % 4)
		out[o++] = '=';
	out[o] = '\0';
	return out;
}

static char *b64(const void *in, size_t n, const char *alpha, bool pad)
{
	return b64_masked(in, NULL, n, alpha, pad, 0, NULL, NULL);
}

/* CRC-32 (the zlib and PNG one) of p[0..n). */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return c ^ 0xffffffffu;
}

void decoys_github_checksum(const char *s, size_t n, char out[7])
{
	static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	uint32_t c = crc32_of((const uint8_t *)s, n);

	for (int i = 5; i >= 0; i--) {
		out[i] = b62[c % 62];
		c /= 62;
	}
	out[6] = '\0';
}

/* A GitHub token of the given prefix ("ghp_", "gho_"): 30 random base62 and the checksum. */
static char *github_token(const char *prefix)
{
	char *body = rnd_chars(30, alnum), sum[7], *t;

	decoys_github_checksum(body, 30, sum);
	t = xasprintf("%s%s%s", prefix, body, sum);
	free(body);
	return t;
}

/* ---- building the set ------------------------------------------------------------ */

/* Append a decoy, its content taken (malloc'd). Returns its index. */
static size_t add_decoy(struct decoy_set *d, const char *path, char *content, uint32_t mode,
			int64_t now, const char *what)
{
	struct decoy *x = xappend(&d->v, &d->n, sizeof(*x));

	x->path = xstrdup(path);
	x->content = content;
	x->mode = mode;
	/* 40 to 400 days old, at any second of the day */
	x->mtime = now - (int64_t)(40 + rnd_below(360)) * DAY - (int64_t)rnd_below(DAY);
	x->what = what;
	return d->n - 1;
}

/* Hand the detectors text[0..n) of decoy i, if the matcher can take it (at most its maximum). */
static void add_token(struct decoy_set *d, size_t i, const char *text, size_t n, const char *what)
{
	struct decoy_token *t;
	char *s;

	if (n > TW_TOKEN_MAX)
		n = TW_TOKEN_MAX;
	s = xstrndup(text, n);
	if (!tw_token_ok(s) || d->ntokens >= TW_TOKENS_MAX) {
		free(s);
		return;
	}
	t = xappend(&d->tokens, &d->ntokens, sizeof(*t));
	t->text = s;
	t->label = xasprintf("%s in ~/%s", what, d->v[i].path);
	t->decoy = i;
}

/*
 * Does a key id's body (the 16 base32 characters after AKIA) encode what a
 * key made since 2019 does: its first 48 bits, a set top bit and, below it,
 * an account number that has 12 digits (bits 46 to 7)? Offline tools decode
 * the account from a key; a random body says 13 digits one time in eleven.
 */
static bool aws_key_plausible(const char *id)
{
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	uint64_t z = 0;

	for (int i = 0; i < 10; i++)
		z = (z << 5) | (uint64_t)(strchr(b32, id[i]) - b32);
	z >>= 2;
	return (z >> 47) == 1 && ((z & 0x7fffffffff80ull) >> 7) < 1000000000000ull;
}

/* ~/.aws/credentials: a key id (AKIA and 16 base32 characters) and a 40-character secret. */
static void make_aws(struct decoy_set *d, int64_t now)
{
	char *id = rnd_chars(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), *secret = rnd_chars(40, b64std);
	char *keyid;

	while (!aws_key_plausible(id)) {
		free(id);
		id = rnd_chars(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
	}
	keyid = xasprintf("AKIA%s", id);
	size_t i = add_decoy(d, ".aws/credentials",
			     xasprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n",
				       keyid, secret), 0600, now, "AWS credentials");

	add_token(d, i, keyid, strlen(keyid), "AWS access key id");
	add_token(d, i, secret, strlen(secret), "AWS secret access key");
	free(id);
	free(secret);
	free(keyid);
}

/* A length-prefixed SSH string into w, and its bytes' randomness into the mask. */
static void ssh_put(struct wbuf *w, struct wbuf *m, const void *p, size_t n, bool random)
{
	uint8_t len[4] = { (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n };
	bool f = false;

	wbuf_put(w, len, 4);
	for (int i = 0; i < 4; i++)
		wbuf_put(m, &f, 1);
	wbuf_put(w, p, n);
	for (size_t i = 0; i < n; i++)
		wbuf_put(m, &random, 1);
}

static void ssh_raw(struct wbuf *w, struct wbuf *m, const void *p, size_t n, bool random)
{
	wbuf_put(w, p, n);
	for (size_t i = 0; i < n; i++)
		wbuf_put(m, &random, 1);
}

/* An ed25519 key pair: pub from seed (OpenSSL). */
static void ed25519_pair(uint8_t seed[32], uint8_t pub[32])
{
	EVP_PKEY *k;
	size_t len = 32;

	rnd(seed, 32);
	k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	if (!k || EVP_PKEY_get_raw_public_key(k, pub, &len) != 1 || len != 32)
		fatal("decoys: OpenSSL cannot make an ed25519 key");
	EVP_PKEY_free(k);
}

/*
 * ~/.ssh/id_ed25519_github: an unencrypted OpenSSH ed25519 private key, as
 * ssh-keygen writes it. Not id_ed25519 or id_rsa: ssh reads those on every
 * connection, and a git+ssh dependency would trip the wire.
 */
static void make_ssh(struct decoy_set *d, const char *user, int64_t now)
{
	struct wbuf blob, mask, pubblob, priv, pmask;
	uint8_t seed[32], pub[32], check[4], sk[64];
	static const char magic[] = "openssh-key-v1";
	char *host = rnd_chars(4, "0123456789abcdef"), *comment, *text;
	size_t at, len, i;
	struct wbuf pem;

	ed25519_pair(seed, pub);
	rnd(check, 4);
	comment = xasprintf("%s@dev-%s", user, host);
	wbuf_init(&blob);
	wbuf_init(&mask);
	wbuf_init(&pubblob);
	wbuf_init(&priv);
	wbuf_init(&pmask);
	{
		struct wbuf dummy;

		wbuf_init(&dummy);
		ssh_put(&pubblob, &dummy, "ssh-ed25519", 11, false);
		ssh_put(&pubblob, &dummy, pub, 32, true);
		wbuf_free(&dummy);
	}
	ssh_raw(&blob, &mask, magic, sizeof(magic), false);      /* with its NUL */
	ssh_put(&blob, &mask, "none", 4, false);
	ssh_put(&blob, &mask, "none", 4, false);
	ssh_put(&blob, &mask, "", 0, false);
	ssh_raw(&blob, &mask, "\0\0\0\1", 4, false);
	{
		/* the public key blob: its bytes random where the key is */
		struct wbuf pm;

		wbuf_init(&pm);
		ssh_put(&blob, &pm, pubblob.p, pubblob.len, false);
		wbuf_free(&pm);
		for (i = 0; i < 4 + pubblob.len; i++) {
			bool r = i >= 4 + 4 + 11 + 4;

			wbuf_put(&mask, &r, 1);
		}
	}
	ssh_raw(&priv, &pmask, check, 4, true);
	ssh_raw(&priv, &pmask, check, 4, true);
	ssh_put(&priv, &pmask, "ssh-ed25519", 11, false);
	ssh_put(&priv, &pmask, pub, 32, true);
	memcpy(sk, seed, 32);
	memcpy(sk + 32, pub, 32);
	ssh_put(&priv, &pmask, sk, 64, true);
	ssh_put(&priv, &pmask, comment, strlen(comment), false);
	for (uint8_t pad = 1; priv.len % 8; pad++)
		ssh_raw(&priv, &pmask, &pad, 1, false);
	ssh_put(&blob, &mask, priv.p, priv.len, false);
	/* ssh_put marked the section's bytes fixed: copy the section's own marks over them */
	memcpy(mask.p + mask.len - pmask.len, pmask.p, pmask.len);
	text = b64_masked(blob.p, (const bool *)mask.p, blob.len, b64std, true, 70, &at, &len);
	wbuf_init(&pem);
	wbuf_put(&pem, "-----BEGIN OPENSSH PRIVATE KEY-----\n", 36);
	for (size_t o = 0; o < strlen(text); o += 70) {
		size_t n = strlen(text + o) < 70 ? strlen(text + o) : 70;

		wbuf_put(&pem, text + o, n);
		wbuf_put(&pem, "\n", 1);
	}
	wbuf_put(&pem, "-----END OPENSSH PRIVATE KEY-----\n", 35);    /* with the NUL */
	i = add_decoy(d, ".ssh/id_ed25519_github", (char *)pem.p, 0600, now, "SSH private key");
	add_token(d, i, text + at, len, "SSH private key");
	explicit_bzero(seed, sizeof(seed));
	explicit_bzero(sk, sizeof(sk));
	free(text);
	free(comment);
	free(host);
	wbuf_free(&blob);
	wbuf_free(&mask);
	wbuf_free(&pubblob);
	wbuf_free(&priv);
	wbuf_free(&pmask);
}

/* ~/.config/gcloud/application_default_credentials.json: an authorized user's refresh token. */
static void make_gcloud(struct decoy_set *d, int64_t now)
{
	char *num = rnd_chars(12, "0123456789"), *cid = rnd_chars(32, "abcdefghijklmnopqrstuvwxyz0123456789");
	char *csec = rnd_chars(28, b64url), *refresh = rnd_chars(100, b64url);
	char *proj = rnd_chars(6, "0123456789");
	size_t i;

	if (num[0] == '0')
		num[0] = '7';
	i = add_decoy(d, ".config/gcloud/application_default_credentials.json",
		      xasprintf("{\n  \"account\": \"\",\n"
				"  \"client_id\": \"%s-%s.apps.googleusercontent.com\",\n"
				"  \"client_secret\": \"GOCSPX-%s\",\n"
				"  \"quota_project_id\": \"prod-%s\",\n"
				"  \"refresh_token\": \"1//0%s\",\n"
				"  \"type\": \"authorized_user\",\n"
				"  \"universe_domain\": \"googleapis.com\"\n}\n",
				num, cid, csec, proj, refresh), 0600, now,
		      "Google Cloud credentials");
	add_token(d, i, refresh, strlen(refresh), "Google Cloud refresh token");
	add_token(d, i, csec, strlen(csec), "Google Cloud client secret");
	free(num);
	free(cid);
	free(csec);
	free(refresh);
	free(proj);
}

/* ~/.kube/config: an EKS-looking cluster and a service-account token shaped as a JWT. */
static void make_kube(struct decoy_set *d, int64_t now)
{
	char *srv = rnd_chars(32, "0123456789ABCDEF"), *kid = rnd_chars(43, b64url);
	char *sig = rnd_chars(342, b64url), *uid = rnd_chars(32, "0123456789abcdef");
	char *hdr_json, *pay_json, *hdr, *pay, *ca_body, *ca_pem, *ca;
	uint8_t cab[768];
	size_t i;

	hdr_json = xasprintf("{\"alg\":\"RS256\",\"kid\":\"%s\"}", kid);
	pay_json = xasprintf("{\"aud\":[\"https://kubernetes.default.svc\"],\"exp\":%lld,"
			     "\"iat\":%lld,\"iss\":\"https://kubernetes.default.svc\","
			     "\"kubernetes.io\":{\"namespace\":\"default\",\"serviceaccount\":"
			     "{\"name\":\"deployer\",\"uid\":\"%.8s-%.4s-%.4s-%.4s-%.12s\"}},"
			     "\"nbf\":%lld,\"sub\":\"system:serviceaccount:default:deployer\"}",
			     (long long)(now + 300 * DAY), (long long)(now - 60 * DAY), uid, uid + 8,
			     uid + 12, uid + 16, uid + 20, (long long)(now - 60 * DAY));
	hdr = b64(hdr_json, strlen(hdr_json), b64url, false);
	pay = b64(pay_json, strlen(pay_json), b64url, false);
	rnd(cab, sizeof(cab));
	cab[0] = 0x30;
	cab[1] = 0x82;
	ca_body = b64(cab, sizeof(cab), b64std, true);
	{
		struct wbuf w;

		wbuf_init(&w);
		wbuf_put(&w, "-----BEGIN CERTIFICATE-----\n", 28);
		for (size_t o = 0; o < strlen(ca_body); o += 64) {
			size_t n = strlen(ca_body + o) < 64 ? strlen(ca_body + o) : 64;

			wbuf_put(&w, ca_body + o, n);
			wbuf_put(&w, "\n", 1);
		}
		wbuf_put(&w, "-----END CERTIFICATE-----\n", 27);    /* with the NUL */
		ca_pem = (char *)w.p;
	}
	ca = b64(ca_pem, strlen(ca_pem), b64std, true);
	i = add_decoy(d, ".kube/config",
		      xasprintf("apiVersion: v1\nclusters:\n- cluster:\n"
				"    certificate-authority-data: %s\n"
				"    server: https://%s.gr7.eu-west-1.eks.amazonaws.com\n"
				"  name: prod\ncontexts:\n- context:\n    cluster: prod\n"
				"    user: deployer\n  name: prod\ncurrent-context: prod\n"
				"kind: Config\npreferences: {}\nusers:\n- name: deployer\n  user:\n"
				"    token: %s.%s.%s\n", ca, srv, hdr, pay, sig), 0600, now,
		      "Kubernetes config");
	add_token(d, i, sig, strlen(sig), "Kubernetes service-account token");
	free(srv);
	free(kid);
	free(sig);
	free(uid);
	free(hdr_json);
	free(pay_json);
	free(hdr);
	free(pay);
	free(ca_body);
	free(ca_pem);
	free(ca);
}

/* ~/.docker/config.json: Docker Hub credentials, "user:dckr_pat_…" in base64. */
static void make_docker(struct decoy_set *d, int64_t now)
{
	char *user = rnd_chars(9, "abcdefghijklmnopqrstuvwxyz0123456789");
	char *pat = rnd_chars(27, b64url), *plain, *auth;
	bool mask[64];
	size_t n, at, len, i;

	user[0] = (char)('a' + rnd_below(26));
	plain = xasprintf("%s:dckr_pat_%s", user, pat);
	n = strlen(plain);
	for (size_t k = 0; k < n && k < sizeof(mask); k++)
		mask[k] = k < 9 || k >= 19;     /* the user and the token's body were drawn */
	auth = b64_masked((const uint8_t *)plain, mask, n, b64std, true, 0, &at, &len);
	i = add_decoy(d, ".docker/config.json",
		      xasprintf("{\n\t\"auths\": {\n\t\t\"https://index.docker.io/v1/\": {\n"
				"\t\t\t\"auth\": \"%s\"\n\t\t}\n\t}\n}", auth), 0600, now,
		      "Docker registry credentials");
	add_token(d, i, auth + at, len, "Docker Hub access token");
	free(user);
	free(pat);
	free(plain);
	free(auth);
}

/* ~/.git-credentials: git's credential store, one GitHub token (git reads it only with
 * credential.helper store, which a fresh $HOME does not set). */
static void make_git_credentials(struct decoy_set *d, const char *user, int64_t now)
{
	char *tok = github_token("ghp_");
	size_t i = add_decoy(d, ".git-credentials", xasprintf("https://%s:%s@github.com\n", user, tok),
			     0600, now, "git credentials");

	add_token(d, i, tok + 4, strlen(tok + 4), "GitHub token");
	free(tok);
}

/* ~/.config/gh/hosts.yml: the GitHub CLI's login. */
static void make_gh(struct decoy_set *d, const char *user, int64_t now)
{
	char *tok = github_token("gho_");
	size_t i = add_decoy(d, ".config/gh/hosts.yml",
			     xasprintf("github.com:\n    users:\n        %s:\n            "
				       "oauth_token: %s\n    git_protocol: https\n    oauth_token: %s\n"
				       "    user: %s\n", user, tok, tok, user), 0600, now,
			     "GitHub CLI login");

	add_token(d, i, tok + 4, strlen(tok + 4), "GitHub CLI token");
	free(tok);
}

/* ~/.pypirc: an upload token for PyPI (twine reads it to upload; pip never does). */
static void make_pypirc(struct decoy_set *d, int64_t now)
{
	char *body = rnd_chars(170, b64url);
	size_t i = add_decoy(d, ".pypirc",
			     xasprintf("[distutils]\nindex-servers =\n    pypi\n\n[pypi]\n"
				       "username = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJ%s\n",
				       body), 0600, now, "PyPI upload token");

	add_token(d, i, body, strlen(body), "PyPI upload token");
	free(body);
}

/* ~/.config/solana/id.json: a wallet's keypair, as solana-keygen writes it (no token: digits). */
static void make_solana(struct decoy_set *d, int64_t now)
{
	uint8_t seed[32], pub[32];
	struct wbuf w;

	ed25519_pair(seed, pub);
	wbuf_init(&w);
	wbuf_put(&w, "[", 1);
	for (int i = 0; i < 64; i++) {
		char num[8];
		int n = snprintf(num, sizeof(num), "%s%u", i ? "," : "", i < 32 ? seed[i] : pub[i - 32]);

		wbuf_put(&w, num, (size_t)n);
	}
	wbuf_put(&w, "]", 2);
	add_decoy(d, ".config/solana/id.json", (char *)w.p, 0600, now, "Solana wallet keypair");
	explicit_bzero(seed, sizeof(seed));
}

void decoys_make(struct decoy_set *out, const char *user, int64_t now)
{
	memset(out, 0, sizeof(*out));
	make_aws(out, now);
	make_ssh(out, user, now);
	make_gcloud(out, now);
	make_kube(out, now);
	make_docker(out, now);
	make_git_credentials(out, user, now);
	make_gh(out, user, now);
	make_pypirc(out, now);
	make_solana(out, now);
}

void decoys_free(struct decoy_set *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].path);
		if (d->v[i].content)
			explicit_bzero(d->v[i].content, strlen(d->v[i].content));
		free(d->v[i].content);
	}
	for (size_t i = 0; i < d->ntokens; i++) {
		free(d->tokens[i].text);
		free(d->tokens[i].label);
	}
	free(d->v);
	free(d->tokens);
	memset(d, 0, sizeof(*d));
}

char **decoys_token_texts(const struct decoy_set *d)
{
	char **v = xcalloc(d->ntokens + 1, sizeof(char *));

	for (size_t i = 0; i < d->ntokens; i++)
		v[i] = d->tokens[i].text;
	return v;
}
