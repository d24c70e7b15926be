/*
 * net/tls.c — TLS inspection in boxy-net: the sandbox's TLS terminated with a
 * certificate the session CA mints for the name the broker allowed, the
 * upstream's TLS spoken and verified against the host's trust store, and
 * HTTP/1.x between them through the gate (net/http-gate.h); HTTP/2 is
 * net/h2.c's. net/tls.h has a flow's life from the verdict to its end,
 * doc/http-inspection.md the reasons.
 *
 * Everything OpenSSL needs from the filesystem (its configuration, the
 * trust store) is read in tls_engine_create, before the lockdown; after it,
 * OpenSSL only computes, reads and writes through the two BIOs below, and
 * draws randomness with getrandom. A handshake in memory at the start makes
 * OpenSSL set up what it would otherwise set up at the first real one.
 *
 * The sandbox side's SSL is a server on a BIO over the flow's lwIP queue
 * (reads take bytes off the pbufs and reopen lwIP's window for them; writes
 * go into lwIP's send queue, at most what it has room for). The upstream
 * side's is a client on a BIO over the socket the broker dialled (recv and
 * send, never blocking). Nothing is copied beyond what TLS itself needs:
 * ciphertext moves between OpenSSL and lwIP or the socket directly, and
 * plaintext is held only while it waits for the other side (TLS_PLAIN_MAX
 * per direction).
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/tlsca.h"
#include "common/util.h"
#include "net/http-gate.h"
#include "net/tls.h"
#include "parse/sni.h"
#include "proto/netproto.h"

/* A handshake (either side) that has not finished in this long ends the flow. */
#define TLS_HANDSHAKE_TIMEOUT 30.0
/* Room in lwIP below this is no room: a record is worth a syscall's work. */
#define TLS_ROOM_MIN 2048
/* TLS adds at most this much to a record (header, tag, padding byte). */
#define TLS_RECORD_OVERHEAD 64

struct mint_entry {
	char name[DNS_NAME_BUF];
	X509 *cert;
};

struct tls_engine {
	SSL_CTX *down_ctx, *up_ctx;
	struct tls_ca ca;
	EVP_PKEY *leaf_key;             /* one key for every leaf: minting is one signature */
	struct mint_entry mint[TLS_MINT_CACHE];
	size_t nmint, mint_next;
	size_t nflows;
	BIO_METHOD *down_meth, *up_meth;
};

/* What a step of a flow's service asks for. */
enum tls_step {
	STEP_GO,            /* carry on */
	STEP_CLOSE,         /* end the flow cleanly (what was queued for the sandbox still goes) */
	STEP_RESET,         /* end it with a reset */
};

/* ---- buffers ---------------------------------------------------------------------- */

/* Room for n more bytes at the end, moving the data to the front first. */
static void buf_reserve(struct tls_buf *b, size_t n)
{
	if (b->off && b->off + b->len + n > b->cap) {
		memmove(b->p, b->p + b->off, b->len);
		b->off = 0;
	}
	if (b->off + b->len + n > b->cap) {
		b->cap = b->off + b->len + n;
		b->p = xrealloc(b->p, b->cap);
	}
}

/* Add n bytes at the end. */
static void buf_append(struct tls_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	buf_reserve(b, n);
	memcpy(b->p + b->off + b->len, p, n);
	b->len += n;
}

/* Drop n bytes from the front. */
static void buf_consume(struct tls_buf *b, size_t n)
{
	b->off += n;
	b->len -= n;
	if (b->len == 0)
		b->off = 0;
}

/* Free the buffer and empty it. */
static void buf_free(struct tls_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- the two BIOs ------------------------------------------------------------------ */

/* The sandbox side reads its ciphertext off the flow's lwIP queue. */
static int down_bread(BIO *b, char *out, int outl)
{
	struct flow *f = BIO_get_data(b);
	size_t n;

	BIO_clear_retry_flags(b);
	if (!f || outl <= 0)
		return 0;
	if (f->upq_len == 0) {
		if (f->up_eof || !f->pcb)
			return 0;
		BIO_set_retry_read(b);
		return -1;
	}
	n = stack_upq_peek(f, (uint8_t *)out, (size_t)outl);
	stack_upq_consume(f, n);
	/* The window reopens as TLS takes the bytes; TLS takes them only when
	 * its plaintext has somewhere to go (the callers read only then). */
	stack_tcp_recved(f, n);
	return (int)n;
}

/* ... and writes into lwIP's send queue, as much as it has room for. */
static int down_bwrite(BIO *b, const char *in, int inl)
{
	struct flow *f = BIO_get_data(b);
	size_t room, n;
	enum stack_write e;

	BIO_clear_retry_flags(b);
	if (!f || !f->pcb || inl < 0)
		return -1;
	room = stack_tcp_queue_full(f) ? 0 : stack_tcp_sndbuf(f);
	n = (size_t)inl < room ? (size_t)inl : room;
	if (n > 0xffff)
		n = 0xffff;
	if (n == 0) {
		BIO_set_retry_write(b);
		return -1;
	}
	e = stack_tcp_write(f, in, n, n < (size_t)inl);
	if (e == STACK_FULL) {
		BIO_set_retry_write(b);
		return -1;
	}
	if (e != STACK_WROTE)
		return -1;
	flow_held(f, (ssize_t)n);
	if (f->tls)
		f->tls->wrote_down = true;
	return (int)n;
}

/* The upstream side reads and writes the dialled socket, never blocking. */
static int up_bread(BIO *b, char *out, int outl)
{
	struct flow *f = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	if (!f || f->fd < 0 || outl <= 0)
		return -1;
	n = recv(f->fd, out, (size_t)outl, MSG_DONTWAIT);
	if (n > 0) {
		f->down_bytes += (uint64_t)n;
		return (int)n;
	}
	if (n == 0) {
		if (f->tls)
			f->tls->sock_eof = true;
		return 0;
	}
	if (errno == EAGAIN || errno == EINTR)
		BIO_set_retry_read(b);
	return -1;
}

/* ... and writes what the kernel takes, counting it. */
static int up_bwrite(BIO *b, const char *in, int inl)
{
	struct flow *f = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	if (!f || f->fd < 0 || inl < 0)
		return -1;
	n = send(f->fd, in, (size_t)inl, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n >= 0) {
		f->up_bytes += (uint64_t)n;
		return (int)n;
	}
	if (errno == EAGAIN || errno == EINTR)
		BIO_set_retry_write(b);
	return -1;
}

/*
 * Both BIOs: a flush succeeds (the bytes are already with lwIP or the
 * kernel), and BIO_eof says whether the peer's FIN came. OpenSSL 3.0 asks
 * BIO_eof to tell an end without close_notify (SSL_R_UNEXPECTED_EOF_WHILE_READING)
 * from a failed read.
 */
static long down_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct flow *f = BIO_get_data(b);

	(void)num;
	(void)ptr;
	if (cmd == BIO_CTRL_FLUSH)
		return 1;
	return cmd == BIO_CTRL_EOF && f && f->up_eof && f->upq_len == 0;
}

/* The upstream BIO: a flush succeeds; BIO_eof is the socket's FIN. */
static long up_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct flow *f = BIO_get_data(b);

	(void)num;
	(void)ptr;
	if (cmd == BIO_CTRL_FLUSH)
		return 1;
	return cmd == BIO_CTRL_EOF && f && f->tls && f->tls->sock_eof;
}

static BIO_METHOD *bio_method(const char *name, int (*rd)(BIO *, char *, int),
			      int (*wr)(BIO *, const char *, int), long (*ctl)(BIO *, int, long, void *))
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, name);

	if (!m || !BIO_meth_set_read(m, rd) || !BIO_meth_set_write(m, wr) ||
	    !BIO_meth_set_ctrl(m, ctl))
		fatal("cannot make the %s BIO", name);
	return m;
}

/* A BIO of method m over flow f. */
static BIO *bio_for(BIO_METHOD *m, struct flow *f)
{
	BIO *b = BIO_new(m);

	if (!b)
		fatal("cannot make a BIO");
	BIO_set_data(b, f);
	BIO_set_init(b, 1);
	return b;
}

/* ---- reporting ---------------------------------------------------------------------- */

/* OpenSSL's last error in words (the error queue is emptied), into out. */
static void ossl_words(char *out, size_t cap, const char *fallback)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	snprintf(out, cap, "%s", r ? r : fallback);
	ERR_clear_error();
}

/* NET_TLS_FAIL for the flow, once; detail cut to printable ASCII. */
static void tls_report(struct tls_flow *t, uint8_t code, const char *detail)
{
	char clean[TLS_DETAIL_MAX + 1];
	size_t n = 0;

	if (t->fail_code)
		return;
	t->fail_code = code;
	for (size_t i = 0; detail && detail[i] && n < TLS_DETAIL_MAX; i++)
		clean[n++] = detail[i] >= 0x20 && detail[i] < 0x7f ? detail[i] : '?';
	clean[n] = '\0';
	send_tls_fail(t->f->gw, t->f, code, clean);
}

/*
 * The client ended the connection after the handshake without a request.
 * A client that pins another certificate (curl --pinnedpubkey, an app with
 * its own key list) completes the handshake and then gives up, often
 * without an alert: said so in the record, with the alert if it sent one.
 */
void tls_client_quiet(struct tls_flow *t)
{
	tls_report(t, NETTLS_CLIENT_QUIET,
		   t->client_alert >= 0 ? SSL_alert_desc_string_long(t->client_alert) : "");
}

/* ---- the engine ----------------------------------------------------------------------- */

/* Load every certificate file of a directory (OpenSSL would open them lazily, after the lockdown). */
static void trust_load_dir(X509_STORE *st, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *path;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (X509_STORE_load_file(st, path) != 1)
			ERR_clear_error();
		free(path);
	}
	closedir(d);
}

/*
 * The host's trust store, whole: SSL_CERT_FILE (else OpenSSL's default file),
 * and SSL_CERT_DIR's directories (else, when the file gave nothing, the
 * default directory). The daemon's environment reaches boxy-net with these
 * variables, which is how a test makes boxy trust its own CA.
 */
static X509_STORE *trust_load(char **note)
{
	X509_STORE *st = X509_STORE_new();
	const char *file = getenv(X509_get_default_cert_file_env());
	const char *dirs = getenv(X509_get_default_cert_dir_env());
	int n;

	if (!st)
		fatal("cannot make a certificate store");
	if (!file || !*file)
		file = X509_get_default_cert_file();
	if (X509_STORE_load_file(st, file) != 1)
		ERR_clear_error();
	n = sk_X509_OBJECT_num(X509_STORE_get0_objects(st));
	if ((dirs && *dirs) || n == 0) {
		char *copy = xstrdup(dirs && *dirs ? dirs : X509_get_default_cert_dir()), *save = NULL;

		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			trust_load_dir(st, d);
		free(copy);
		n = sk_X509_OBJECT_num(X509_STORE_get0_objects(st));
	}
	if (n == 0)
		*note = xasprintf("TLS inspection: no trusted certificate in %s or %s: every "
				  "upstream will fail verification", file,
				  dirs && *dirs ? dirs : X509_get_default_cert_dir());
	return st;
}

static int hello_cb(SSL *s, int *al, void *arg);
static int alpn_cb(SSL *s, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned int inlen, void *arg);
static void info_cb(const SSL *s, int where, int ret);

/* Both contexts: TLS 1.2 at least, no renegotiation, buffers given back when idle. */
static SSL_CTX *ctx_new(const SSL_METHOD *m)
{
	SSL_CTX *c = SSL_CTX_new(m);

	if (!c || !SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION))
		return NULL;
	SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_ENABLE_PARTIAL_WRITE);
	return c;
}

/*
 * One handshake and a few bytes each way between the two contexts, in
 * memory, and one chain verification: OpenSSL fetches its algorithms,
 * seeds its generators and builds its tables at first use, and the first
 * use must not come after the lockdown.
 */
int tls_engine_selftest(struct tls_engine *e, char **err)
{
	SSL *srv = SSL_new(e->down_ctx), *cli = SSL_new(e->up_ctx);
	BIO *a = BIO_new(BIO_s_mem()), *b = BIO_new(BIO_s_mem());
	X509 *leaf = tls_leaf_mint(&e->ca, e->leaf_key, "warm-up.boxy.invalid", time(NULL), err);
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	static const unsigned char h2[] = "\x02h2\x08http/1.1";
	char buf[64];
	int r = -1, done_s = 0, done_c = 0;

	if (!srv || !cli || !a || !b || !leaf || !st || !vc) {
		BIO_free(a);
		BIO_free(b);
		goto out;
	}
	SSL_use_certificate(srv, leaf);
	SSL_use_PrivateKey(srv, e->leaf_key);
	SSL_set_bio(srv, a, b);         /* the server reads a, writes b; each SSL owns a reference */
	BIO_up_ref(a);
	BIO_up_ref(b);
	SSL_set_bio(cli, b, a);
	SSL_set_accept_state(srv);
	SSL_set_connect_state(cli);
	SSL_set_verify(cli, SSL_VERIFY_NONE, NULL);
	SSL_set_tlsext_host_name(cli, "warm-up.boxy.invalid");
	SSL_set_alpn_protos(cli, h2, sizeof(h2) - 1);
	for (int i = 0; i < 20 && !(done_s && done_c); i++) {
		done_c = done_c || SSL_do_handshake(cli) == 1;
		done_s = done_s || SSL_do_handshake(srv) == 1;
	}
	if (!done_s || !done_c || SSL_write(cli, "ping", 4) != 4 || SSL_read(srv, buf, 4) != 4 ||
	    SSL_write(srv, "pong", 4) != 4 || SSL_read(cli, buf, 4) != 4) {
		char w[128];

		ossl_words(w, sizeof(w), "the handshake did not complete");
		set_err(err, "TLS self-test: %s", w);
		goto out;
	}
	X509_STORE_add_cert(st, e->ca.cert);
	X509_STORE_CTX_init(vc, st, leaf, NULL);
	X509_verify_cert(vc);          /* fails (the name is outside the constraints): the point is the code */
	r = 0;
out:
	ERR_clear_error();
	SSL_free(srv);
	SSL_free(cli);
	X509_free(leaf);
	X509_STORE_CTX_free(vc);
	X509_STORE_free(st);
	if (r < 0 && err && !*err)
		set_err(err, "TLS self-test failed");
	return r;
}

/* OpenSSL, the CA, the contexts and the trust store, before the lockdown (net/tls.h). */
struct tls_engine *tls_engine_create(const uint8_t *ca, size_t ca_len, const uint8_t *key,
				     size_t key_len, char **note, char **err)
{
	struct tls_engine *e;
	X509_STORE *trust;

	*note = NULL;
	if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL) != 1) {
		set_err(err, "OpenSSL did not initialise");
		return NULL;
	}
	e = xcalloc(1, sizeof(*e));
	if (tls_ca_decode(ca, ca_len, key, key_len, &e->ca, err) < 0)
		goto fail;
	e->leaf_key = tls_key_new(err);
	if (!e->leaf_key)
		goto fail;
	e->down_ctx = ctx_new(TLS_server_method());
	e->up_ctx = ctx_new(TLS_client_method());
	if (!e->down_ctx || !e->up_ctx) {
		set_err(err, "cannot make the TLS contexts");
		goto fail;
	}
	/*
	 * The sandbox's side: no session tickets, no session cache, no early
	 * data, so every connection is a full handshake whose ClientHello names
	 * the server the broker checked (a resumed session could carry another
	 * name's keys, early data would reach us before any check).
	 */
	SSL_CTX_set_options(e->down_ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_num_tickets(e->down_ctx, 0);
	SSL_CTX_set_session_cache_mode(e->down_ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_max_early_data(e->down_ctx, 0);
	SSL_CTX_set_client_hello_cb(e->down_ctx, hello_cb, NULL);
	SSL_CTX_set_alpn_select_cb(e->down_ctx, alpn_cb, NULL);
	SSL_CTX_set_info_callback(e->down_ctx, info_cb);
	/* The upstream's side: its certificate verified against the host's roots and the name. */
	trust = trust_load(note);
	SSL_CTX_set_cert_store(e->up_ctx, trust);
	SSL_CTX_set_verify(e->up_ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_session_cache_mode(e->up_ctx, SSL_SESS_CACHE_OFF);
	e->down_meth = bio_method("boxy-lwip", down_bread, down_bwrite, down_ctrl);
	e->up_meth = bio_method("boxy-upstream", up_bread, up_bwrite, up_ctrl);
	if (tls_engine_selftest(e, err) < 0)
		goto fail;
	return e;
fail:
	free(*note);
	*note = NULL;
	tls_engine_free(e);
	return NULL;
}

/* Free the engine: contexts, leaves, keys (OpenSSL clears them). */
void tls_engine_free(struct tls_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nmint; i++)
		X509_free(e->mint[i].cert);
	SSL_CTX_free(e->down_ctx);
	SSL_CTX_free(e->up_ctx);
	EVP_PKEY_free(e->leaf_key);
	tls_ca_clear(&e->ca);
	BIO_meth_free(e->down_meth);
	BIO_meth_free(e->up_meth);
	free(e);
}

/* The leaf for name, minted once and kept (at most TLS_MINT_CACHE, the oldest replaced). */
X509 *tls_engine_leaf(struct tls_engine *e, const char *name, char **err)
{
	struct mint_entry *m;
	X509 *x;

	for (size_t i = 0; i < e->nmint; i++)
		if (strcmp(e->mint[i].name, name) == 0)
			return e->mint[i].cert;
	x = tls_leaf_mint(&e->ca, e->leaf_key, name, time(NULL), err);
	if (!x)
		return NULL;
	if (e->nmint < TLS_MINT_CACHE) {
		m = &e->mint[e->nmint++];
	} else {
		m = &e->mint[e->mint_next];
		e->mint_next = (e->mint_next + 1) % TLS_MINT_CACHE;
		X509_free(m->cert);     /* an SSL using it holds its own reference */
	}
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->cert = x;
	return x;
}

/* ---- reading and writing one side ---------------------------------------------------- */

/* An SSL call's failure in TLS_IO_* terms; AGAIN arms the upstream's watchers as needed. */
static ssize_t io_result(struct tls_flow *t, SSL *s, int r)
{
	struct flow *f = t->f;
	int e = SSL_get_error(s, r);

	switch (e) {
	case SSL_ERROR_WANT_READ:
		if (s == t->up && f->fd >= 0)
			ev_io_start(f->gw->loop, &f->rio);
		return TLS_IO_AGAIN;
	case SSL_ERROR_WANT_WRITE:
		if (s == t->up && f->fd >= 0)
			ev_io_start(f->gw->loop, &f->wio);
		return TLS_IO_AGAIN;
	case SSL_ERROR_ZERO_RETURN:
		/* close_notify: said on, the other side gets one too; an end without it
		 * is passed on as a FIN alone, so a truncation stays visible. */
		if (s == t->up)
			t->up_notify = true;
		else
			t->down_notify = true;
		return TLS_IO_EOF;
	case SSL_ERROR_SYSCALL:
		/* A read that returned 0 with nothing queued: the peer's FIN. */
		if (r == 0 && ERR_peek_error() == 0)
			return TLS_IO_EOF;
		ERR_clear_error();
		return TLS_IO_ERROR;
	case SSL_ERROR_SSL:
		/* The peer closed without close_notify: an end, not a failure (the other
		 * side then sees the same: a FIN without close_notify). */
		if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			ERR_clear_error();
			return TLS_IO_EOF;
		}
		if (s == t->up && !t->up_heard && t->state == TLS_OPEN) {
			/*
			 * A TLS 1.3 server's verdict on the handshake can come after
			 * it, as its first record: a server that requires a client
			 * certificate refuses our empty one with an alert the client
			 * side only reads now. Said as the handshake's failure.
			 */
			char why[160];

			ossl_words(why, sizeof(why), "the server ended the connection");
			tls_report(t, NETTLS_UPSTREAM, why);
		}
		ERR_clear_error();
		return TLS_IO_ERROR;
	default:
		ERR_clear_error();
		return TLS_IO_ERROR;
	}
}

/* SSL_read in TLS_IO_* terms (net/tls.h). */
ssize_t tls_read_side(struct tls_flow *t, SSL *s, void *buf, size_t n)
{
	size_t got = 0;
	int r;

	ERR_clear_error();
	r = SSL_read_ex(s, buf, n, &got);
	if (r == 1 && s == t->up)
		t->up_heard = true;
	return r == 1 ? (ssize_t)got : io_result(t, s, r);
}

/* SSL_write in TLS_IO_* terms (net/tls.h). */
ssize_t tls_write_side(struct tls_flow *t, SSL *s, const void *buf, size_t n)
{
	size_t put = 0;
	int r;

	if (n == 0)
		return 0;
	ERR_clear_error();
	r = SSL_write_ex(s, buf, n, &put);
	return r == 1 ? (ssize_t)put : io_result(t, s, r);
}

/* What lwIP can take for the sandbox now, less a record's overhead (0: wait). */
size_t tls_down_room(const struct tls_flow *t)
{
	const struct flow *f = t->f;
	size_t room;

	if (!f->pcb || stack_tcp_queue_full(f) || f->gw->down_held >= GW_DOWN_BUDGET)
		return 0;
	room = stack_tcp_sndbuf(f);
	return room < TLS_ROOM_MIN + TLS_RECORD_OVERHEAD ? 0 : room - TLS_RECORD_OVERHEAD;
}

/* ---- the handshakes -------------------------------------------------------------------- */

/* The flow on its way to an end because of why: recorded, and the sandbox told (alert or close). */
static enum tls_step tls_fail(struct tls_flow *t, uint8_t code, const char *why, int alert)
{
	bool waiting = t->state == TLS_UPSTREAM;

	tls_report(t, code, why);
	t->fail_alert = alert;
	t->state = TLS_FAILING;
	if (waiting) {
		/* The sandbox's handshake waits in the ClientHello callback: resumed,
		 * the callback refuses it with the alert, which OpenSSL sends. */
		ERR_clear_error();
		SSL_do_handshake(t->down);
		ERR_clear_error();
	}
	return STEP_CLOSE;
}

/* Start the upstream's handshake: SNI the name, ALPN the client's inspectable protocols. */
static int up_start(struct tls_flow *t)
{
	struct flow *f = t->f;
	struct tls_engine *e = f->gw->tls;

	t->up = SSL_new(e->up_ctx);
	if (!t->up)
		return -1;
	SSL_set_app_data(t->up, t);
	SSL_set_bio(t->up, bio_for(e->up_meth, f), bio_for(e->up_meth, f));
	SSL_set_connect_state(t->up);
	if (!SSL_set_tlsext_host_name(t->up, t->name) || !SSL_set1_host(t->up, t->name))
		return -1;
	SSL_set_hostflags(t->up, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (t->client_alpn && SSL_set_alpn_protos(t->up, t->offer, (unsigned)t->offer_len) != 0)
		return -1;
	/* One recv reads as much as has come (up to four records), not a header and
	 * then a body: a quarter of the system calls of a download. */
	SSL_set_read_ahead(t->up, 1);
	SSL_set_default_read_buffer_len(t->up, 4 * (TLS_RECORD_MAX + TLS_RECORD_OVERHEAD));
	return 0;
}

/*
 * The sandbox's ClientHello, as OpenSSL read it. The first time: its server
 * name must be the one the broker allowed (sni_parse read the same bytes;
 * this is OpenSSL's reading of them), its ALPN list well formed; then the
 * upstream's handshake starts and this one is suspended until it is done.
 * After that (and for a second ClientHello after a HelloRetryRequest, which
 * must name the same server): go on, or refuse with the failure's alert.
 */
static int hello_cb(SSL *s, int *al, void *arg)
{
	struct tls_flow *t = SSL_get_app_data(s);
	const unsigned char *ext;
	size_t len;
	struct sni_result sr;
	int n;

	(void)arg;
	if (!t)
		return SSL_CLIENT_HELLO_SUCCESS;        /* the self-test's own handshake */
	if (t->state == TLS_FAILING) {
		*al = t->fail_alert ? t->fail_alert : SSL_AD_HANDSHAKE_FAILURE;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (!SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &ext, &len) ||
	    sni_parse_server_name(ext, len, &sr) != SNI_OK || !sr.has_sni ||
	    strcmp(sr.host, t->name) != 0) {
		tls_report(t, NETTLS_NAME, "the ClientHello OpenSSL read names another server");
		t->state = TLS_FAILING;
		*al = SSL_AD_UNRECOGNIZED_NAME;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (t->state != TLS_HELLO)
		return SSL_CLIENT_HELLO_SUCCESS;
	t->client_alpn = SSL_client_hello_get0_ext(s, TLSEXT_TYPE_application_layer_protocol_negotiation,
						   &ext, &len) == 1;
	if (t->client_alpn) {
		n = alpn_filter(ext, len, t->offer);
		if (n <= 0) {
			tls_report(t, NETTLS_NO_PROTOCOL, n < 0 ? "a malformed ALPN list" :
				   "the client offers no protocol boxy can inspect (HTTP/1.1, h2)");
			t->state = TLS_FAILING;
			*al = n < 0 ? SSL_AD_DECODE_ERROR : SSL_AD_NO_APPLICATION_PROTOCOL;
			return SSL_CLIENT_HELLO_ERROR;
		}
		t->offer_len = (size_t)n;
	}
	if (up_start(t) < 0) {
		tls_report(t, NETTLS_UPSTREAM, "cannot start the upstream handshake");
		t->state = TLS_FAILING;
		*al = SSL_AD_INTERNAL_ERROR;
		ERR_clear_error();
		return SSL_CLIENT_HELLO_ERROR;
	}
	t->state = TLS_UPSTREAM;
	return SSL_CLIENT_HELLO_RETRY;
}

/* The ALPN answer to the client: the upstream's protocol (alpn_choose decided it). */
static int alpn_cb(SSL *s, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned int inlen, void *arg)
{
	struct tls_flow *t = SSL_get_app_data(s);

	(void)in;
	(void)inlen;
	(void)arg;
	if (!t || !t->answer)
		return SSL_TLSEXT_ERR_NOACK;
	*out = t->answer;
	*outlen = (unsigned char)t->answer_len;
	return SSL_TLSEXT_ERR_OK;
}

/* An alert the sandbox's client sent: remembered, it says why a handshake failed. */
static void info_cb(const SSL *s, int where, int ret)
{
	struct tls_flow *t = SSL_get_app_data(s);

	/* Fatal alerts only: a close_notify (a warning) is how every client ends. */
	if (t && (where & SSL_CB_READ_ALERT) && (ret >> 8) == SSL3_AL_FATAL && t->client_alert < 0)
		t->client_alert = ret & 0xff;
}

static enum tls_step tls_open(struct gw *gw, struct tls_flow *t);

/* The sandbox's handshake: started, suspended for the upstream, resumed, done. */
static enum tls_step down_handshake(struct gw *gw, struct tls_flow *t)
{
	struct flow *f = t->f;
	char why[160];
	int r, e;

	ERR_clear_error();
	r = SSL_do_handshake(t->down);
	if (r == 1)
		return tls_open(gw, t);
	e = SSL_get_error(t->down, r);
	if (e == SSL_ERROR_WANT_CLIENT_HELLO_CB || e == SSL_ERROR_WANT_WRITE)
		return STEP_GO;
	if (e == SSL_ERROR_WANT_READ) {
		if (f->up_eof && f->upq_len == 0) {
			tls_report(t, NETTLS_CLIENT, "the client closed during the handshake");
			return STEP_CLOSE;
		}
		return STEP_GO;
	}
	if (t->state == TLS_FAILING)
		return STEP_CLOSE;      /* our alert went out; the failure is recorded */
	if (t->client_alert >= 0) {
		snprintf(why, sizeof(why), "%s",
			 SSL_alert_desc_string_long(t->client_alert));
		tls_report(t, NETTLS_CLIENT_ALERT, why);
	} else {
		ossl_words(why, sizeof(why), "the handshake failed");
		tls_report(t, NETTLS_CLIENT, why);
	}
	t->state = TLS_FAILING;
	return STEP_CLOSE;
}

/* The upstream's handshake; done, it decides the protocol and resumes the sandbox's. */
static enum tls_step up_handshake(struct gw *gw, struct tls_flow *t)
{
	const unsigned char *sel = NULL;
	unsigned sel_len = 0;
	char why[160];
	long v;
	int r, e;

	ERR_clear_error();
	r = SSL_do_handshake(t->up);
	if (r == 1) {
		SSL_get0_alpn_selected(t->up, &sel, &sel_len);
		t->proto = alpn_choose(t->client_alpn, t->offer, t->offer_len, sel, sel_len,
				       &t->answer, &t->answer_len);
		if (t->proto == ALPN_REFUSE) {
			snprintf(why, sizeof(why), "the server speaks %.*s, the client offered "
				 "only what the server does not", sel_len ? (int)sel_len : 8,
				 sel_len ? (const char *)sel : "HTTP/1.1");
			return tls_fail(t, NETTLS_NO_PROTOCOL, why, SSL_AD_NO_APPLICATION_PROTOCOL);
		}
		t->state = TLS_CLIENT;
		return down_handshake(gw, t);
	}
	e = SSL_get_error(t->up, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		io_result(t, t->up, r);         /* arms the socket's watcher */
		return STEP_GO;
	}
	v = SSL_get_verify_result(t->up);
	if (v != X509_V_OK) {
		ERR_clear_error();
		return tls_fail(t, NETTLS_UPSTREAM_CERT, X509_verify_cert_error_string(v),
				SSL_AD_ACCESS_DENIED);
	}
	ossl_words(why, sizeof(why), e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN ?
		   "the server closed the connection" : "the handshake failed");
	return tls_fail(t, NETTLS_UPSTREAM, why, SSL_AD_HANDSHAKE_FAILURE);
}

/* Both handshakes are done: the gate (HTTP/1) or the HTTP/2 proxy takes over. */
static enum tls_step tls_open(struct gw *gw, struct tls_flow *t)
{
	struct flow *f = t->f;
	char *err = NULL;

	t->state = TLS_OPEN;
	f->deadline = HUGE_VAL;
	if (t->proto == ALPN_H2) {
		t->h2 = h2_proxy_create(gw, t, &err);
		if (!t->h2) {
			broker_log(gw, err);
			free(err);
			return STEP_RESET;
		}
	} else {
		t->gate = http_gate_create(gw, f, t->name, HTTP_GATE_TLS);
	}
	return STEP_GO;
}

/* ---- HTTP/1 over the two TLS connections ------------------------------------------------- */

/* Queue the gate's refusal for the sandbox; nothing more comes from upstream. */
static void h1_queue_refusal(struct tls_flow *t)
{
	struct http_gate_refusal r;
	char resp[HTTP_GATE_RESPONSE_MAX];
	size_t n;

	if (t->refusal_queued)
		return;
	t->refusal_queued = true;
	http_gate_refusal(t->gate, &r);
	n = http_gate_refusal_h1(&r, resp, sizeof(resp));
	buf_append(&t->downb, resp, n);
	t->up_eof = true;
}

/* Close the upstream's sending direction: close_notify, then the socket's FIN. */
static void up_close(struct tls_flow *t)
{
	struct flow *f = t->f;

	if (t->up_closed)
		return;
	t->up_closed = true;
	/* A refusal's drain needs the server to see the end: close_notify then too. */
	if (t->up && (t->down_notify || t->refusing || !t->down_eof)) {
		ERR_clear_error();
		SSL_shutdown(t->up);
		ERR_clear_error();
	}
	if (f->fd >= 0)
		shutdown(f->fd, SHUT_WR);
	f->up_shut = true;
}

/*
 * The gate stopped reading: a refusal, a declined or unreadable switch. What
 * it allowed went up already (h1_up sends it first); nothing else ever does.
 * A refusal of the connection's first request is answered at once; after
 * earlier requests, the server first answers those (it reads our
 * close_notify as the end), for at most TLS_DRAIN seconds.
 */
static int h1_stopped(struct gw *gw, struct tls_flow *t, enum http_gate_state st)
{
	struct flow *f = t->f;

	if (st == HTTP_GATE_RESET) {
		broker_log(gw, "an inspected HTTP connection switched to a protocol boxy cannot "
			   "read (not a websocket): reset");
		return -1;
	}
	if (st == HTTP_GATE_SWITCHING)
		return 0;               /* the server's answer decides (h1_down feeds it) */
	if (t->upb.len) {
		buf_consume(&t->upb, t->upb.len);
		t->up_fed = t->up_sent;
	}
	if (t->refusing)
		return 0;
	t->refusing = true;
	if (st == HTTP_GATE_REFUSED && t->up_sent == 0) {
		up_close(t);
		if (f->fd >= 0) {
			ev_io_stop(gw->loop, &f->rio);
			ev_io_stop(gw->loop, &f->wio);
		}
		h1_queue_refusal(t);
		return 1;
	}
	up_close(t);
	/* REFUSED: the 403 waits for the server's answers; DECLINED: the server's answer
	 * goes down, then the end. Either way the server has TLS_DRAIN to close. */
	t->drain_deadline = ev_now(gw->loop) + TLS_DRAIN;
	f->deadline = t->drain_deadline;
	return 1;
}

/* The sandbox's plaintext through the gate and up. 1 moved, 0 not, -1 reset. */
static int h1_up(struct gw *gw, struct tls_flow *t)
{
	int moved = 0;

	for (int guard = 0; guard < 256; guard++) {
		enum http_gate_state st = http_gate_state(t->gate);
		uint64_t allowed = http_gate_allowed(t->gate);
		size_t sendable = 0;
		ssize_t n;

		if (allowed > t->up_sent)
			sendable = allowed - t->up_sent < t->upb.len ? (size_t)(allowed - t->up_sent) :
				t->upb.len;
		if (sendable && !t->up_closed) {
			n = tls_write_side(t, t->up, t->upb.p + t->upb.off, sendable);
			if (n > 0) {
				t->up_sent += (uint64_t)n;
				buf_consume(&t->upb, (size_t)n);
				moved = 1;
				continue;
			}
			if (n == TLS_IO_AGAIN)
				break;
			return -1;
		}
		if (st != HTTP_GATE_OPEN && st != HTTP_GATE_TUNNEL) {
			int r = h1_stopped(gw, t, st);

			return r < 0 ? -1 : (moved | r);
		}
		if (t->up_fed < t->up_sent + t->upb.len) {
			size_t off = (size_t)(t->up_fed - t->up_sent);
			size_t unfed = t->upb.len - off, k;
			uint64_t skip = http_gate_opaque(t->gate);

			if (skip) {
				k = skip < unfed ? (size_t)skip : unfed;
				http_gate_skip(t->gate, k);
			} else {
				k = http_gate_feed(t->gate, t->upb.p + t->upb.off + off, unfed);
			}
			t->up_fed += k;
			if (k) {
				moved = 1;
				continue;
			}
			if (http_gate_state(t->gate) == st)
				break;  /* took nothing and did not stop: wait for more */
			continue;
		}
		if (t->down_eof || t->upb.len >= TLS_PLAIN_MAX)
			break;
		buf_reserve(&t->upb, TLS_PLAIN_MAX - t->upb.len);
		n = tls_read_side(t, t->down, t->upb.p + t->upb.off + t->upb.len,
				  TLS_PLAIN_MAX - t->upb.len);
		if (n > 0) {
			t->upb.len += (size_t)n;
			moved = 1;
			continue;
		}
		if (n == TLS_IO_EOF) {
			t->down_eof = true;
			if (t->up_fed == 0)
				tls_client_quiet(t);
			/* all of it was fed: a head left half-sent is refused (400), not held */
			if (t->up_fed == t->up_sent + t->upb.len)
				http_gate_client_eof(t->gate);
			return 1;
		}
		if (n == TLS_IO_AGAIN)
			break;
		if (t->up_fed == 0)
			tls_client_quiet(t);
		return -1;
	}
	return moved;
}

/* Upstream's plaintext down to the sandbox, as far as lwIP takes it. 1 moved, 0 not, -1 reset. */
static int h1_down(struct gw *gw, struct tls_flow *t)
{
	struct flow *f = t->f;
	int moved = 0;

	for (int guard = 0; guard < 64 && !t->down_closed && f->pcb; guard++) {
		size_t room;
		ssize_t n, w;

		if (t->downb.len) {
			w = tls_write_side(t, t->down, t->downb.p + t->downb.off, t->downb.len);
			if (w > 0) {
				buf_consume(&t->downb, (size_t)w);
				moved = 1;
				continue;
			}
			if (w == TLS_IO_AGAIN)
				break;
			return -1;
		}
		if (t->up_eof || !t->up)
			break;
		room = tls_down_room(t);
		if (room == 0) {
			/* lwIP is full (tcp_on_sent brings us back) or the budget is spent. */
			if (gw->down_held >= GW_DOWN_BUDGET)
				gw->down_starved = true;
			if (f->fd >= 0)
				ev_io_stop(gw->loop, &f->rio);
			break;
		}
		n = tls_read_side(t, t->up, gw->rbuf, room < TLS_RECORD_MAX ? room : TLS_RECORD_MAX);
		if (n == TLS_IO_AGAIN)
			break;
		if (n == TLS_IO_EOF) {
			t->up_eof = true;
			moved = 1;
			break;
		}
		if (n < 0)
			return -1;
		if (t->refusing && !t->refusal_queued) {
			/* The server still answers the requests before the refusal: its
			 * TLS_DRAIN counts from its last byte (tls_closes). */
			t->drain_deadline = ev_now(gw->loop) + TLS_DRAIN;
			f->deadline = t->drain_deadline;
		}
		/* Framed (or, after a switching request, decided) by the gate: after a
		 * refusal, nothing past the last answer it waits for goes down. */
		n = (ssize_t)http_gate_server(t->gate, gw->rbuf, (size_t)n);
		moved = 1;
		if (n > 0) {
			w = tls_write_side(t, t->down, gw->rbuf, (size_t)n);
			if (w == TLS_IO_ERROR || w == TLS_IO_EOF)
				return -1;
			if (w < n)
				buf_append(&t->downb, gw->rbuf + (w > 0 ? w : 0),
					   (size_t)(n - (w > 0 ? w : 0)));
		}
		if (t->refusing && http_gate_state(t->gate) == HTTP_GATE_REFUSED &&
		    http_gate_answers(t->gate) == HTTP_GATE_ANSWERED) {
			/* every answer before the refusal is whole: the 403 follows it */
			h1_queue_refusal(t);
		}
	}
	return moved;
}

/* ---- ends --------------------------------------------------------------------------------- */

/*
 * Close what is finished: the sandbox's direction once upstream said all it
 * will and all of it went down (close_notify, then FIN); upstream's once the
 * sandbox did and everything allowed went up. Both closed: the flow is over.
 */
static enum tls_step tls_closes(struct gw *gw, struct tls_flow *t)
{
	struct flow *f = t->f;
	bool h1 = t->h2 == NULL;

	if (!f->pcb) {
		/* lwIP freed the pcb after a clean close: nothing more reaches the sandbox. */
		t->down_closed = true;
		t->down_eof = true;
	}
	if (h1 && t->refusing && !t->refusal_queued && !t->cut &&
	    http_gate_state(t->gate) == HTTP_GATE_REFUSED) {
		if (http_gate_answers(t->gate) == HTTP_GATE_ANSWERED) {
			/* The answers before the refusal are whole (the gate frames them):
			 * the 403 follows the last byte of the last. */
			h1_queue_refusal(t);
			h1_down(gw, t);
		} else if (t->up_eof) {
			/*
			 * The server closed after an answer only its close ends (no
			 * length, not chunked), or before its answers were whole: a
			 * 403 now would be read as part of that answer. The end is
			 * passed on as it came, without the 403 (it is recorded).
			 */
			t->cut = true;
		} else if (ev_now(gw->loop) >= t->drain_deadline) {
			/*
			 * The server fell silent inside an answer (or the client
			 * stopped reading it): a 403 now would land inside that
			 * answer, which the client would take for its body. Cut
			 * instead, without close_notify, so the truncation shows.
			 */
			t->cut = true;
			t->up_eof = true;
			buf_consume(&t->downb, t->downb.len);
		}
	}
	if (h1 && t->refusing && http_gate_state(t->gate) == HTTP_GATE_DECLINED &&
	    !t->up_eof && ev_now(gw->loop) >= t->drain_deadline)
		t->up_eof = true;
	if (t->down_eof && !t->up_closed && (!h1 || t->upb.len == 0 || t->refusing))
		up_close(t);
	if (t->up_eof && !t->down_closed && t->downb.len == 0 && (!t->h2 || h2_proxy_done(t->h2))) {
		t->down_closed = true;
		if (t->up_notify || t->refusal_queued || t->h2) {
			ERR_clear_error();
			SSL_shutdown(t->down);
			ERR_clear_error();
		}
		stack_tcp_shutdown(f);
		f->down_fin = true;
		t->wrote_down = true;
	}
	if (t->down_closed && (t->up_closed || t->refusing)) {
		/*
		 * Our side is closed both ways, but the sandbox's client may not have
		 * read it all yet, and answers our close_notify with its own: closed
		 * now, lwIP would reset the connection at those bytes, and a reset
		 * makes the client's kernel drop what it had not read (a 403 with
		 * it). So the flow lingers, reading and dropping, until the client
		 * closes too, or TLS_LINGER passes.
		 */
		if (t->down_eof || !f->pcb)
			return STEP_CLOSE;
		if (!t->lingering) {
			t->lingering = true;
			f->deadline = ev_now(gw->loop) + TLS_LINGER;
		} else if (ev_now(gw->loop) >= f->deadline) {
			return STEP_CLOSE;
		}
	}
	return STEP_GO;
}

/* ---- a flow ------------------------------------------------------------------------------- */

/* Take an inspected flow: its leaf, its sandbox-side SSL; the ClientHello is next. */
void tls_flow_start(struct gw *gw, struct flow *f)
{
	struct tls_engine *e = gw->tls;
	struct tls_flow *t;
	char *err = NULL;
	X509 *leaf;

	if (!e || !f->name) {
		broker_log(gw, "a flow to inspect, but this boxy-net has no session CA: reset");
		f->reset = true;
		flow_dirty(f);
		return;
	}
	t = xcalloc(1, sizeof(*t));
	t->f = f;
	t->client_alert = -1;
	snprintf(t->name, sizeof(t->name), "%s", f->name);
	f->tls = t;
	e->nflows++;
	f->deadline = ev_now(gw->loop) + TLS_HANDSHAKE_TIMEOUT;
	if (e->nflows > TLS_MAX_FLOWS) {
		tls_report(t, NETTLS_BUSY, "");
		f->reset = true;
		flow_dirty(f);
		return;
	}
	leaf = tls_engine_leaf(e, t->name, &err);
	t->down = SSL_new(e->down_ctx);
	if (!leaf || !t->down || SSL_use_certificate(t->down, leaf) != 1 ||
	    SSL_use_PrivateKey(t->down, e->leaf_key) != 1) {
		tls_report(t, NETTLS_CLIENT, err ? err : "cannot set up the certificate");
		free(err);
		ERR_clear_error();
		f->reset = true;
		flow_dirty(f);
		return;
	}
	SSL_set_app_data(t->down, t);
	SSL_set_bio(t->down, bio_for(e->down_meth, f), bio_for(e->down_meth, f));
	SSL_set_accept_state(t->down);
	t->state = TLS_HELLO;
	flow_dirty(f);
}

/* Free a flow's TLS state, the gate or HTTP/2 proxy with it. */
void tls_flow_free(struct flow *f)
{
	struct tls_flow *t = f->tls;

	if (!t)
		return;
	if (f->gw->tls && f->gw->tls->nflows)
		f->gw->tls->nflows--;
	h2_proxy_free(t->h2);
	http_gate_free(t->gate);
	SSL_free(t->down);
	SSL_free(t->up);
	buf_free(&t->upb);
	buf_free(&t->downb);
	free(t);
	f->tls = NULL;
}

/* The flow's HTTP both ways until nothing moves (a bounded number of rounds a pass). */
static enum tls_step tls_pump(struct gw *gw, struct tls_flow *t)
{
	int round;

	for (round = 0; round < 32; round++) {
		int a, b = 0;

		if (t->h2) {
			a = h2_pump(gw, t);
		} else {
			a = h1_up(gw, t);
			if (a >= 0)
				b = h1_down(gw, t);
		}
		if (a < 0 || b < 0)
			return STEP_RESET;
		if (!a && !b)
			break;
	}
	if (round == 32)
		flow_dirty(t->f);       /* more to do: the next pass, after the other flows */
	return tls_closes(gw, t);
}

/* One pass over a flow: its timeouts, its handshakes or its bytes, its end. */
void tls_service(struct gw *gw, struct flow *f)
{
	struct tls_flow *t = f->tls;
	enum tls_step s = STEP_GO;

	t->wrote_down = false;
	if (t->state != TLS_OPEN && ev_now(gw->loop) >= f->deadline) {
		tls_report(t, t->state == TLS_UPSTREAM ? NETTLS_UPSTREAM : NETTLS_CLIENT,
			   "the handshake did not finish in time");
		s = STEP_RESET;
	} else {
		switch (t->state) {
		case TLS_HELLO:
		case TLS_CLIENT:
			s = down_handshake(gw, t);
			if (s == STEP_GO && t->state == TLS_UPSTREAM)
				s = up_handshake(gw, t);
			break;
		case TLS_UPSTREAM:
			s = up_handshake(gw, t);
			break;
		case TLS_OPEN:
			break;
		case TLS_FAILING:
			s = STEP_CLOSE;
			break;
		}
		if (s == STEP_GO && t->state == TLS_OPEN && t->gate && !t->refusing)
			http_gate_head_expire(t->gate, ev_now(gw->loop));      /* 408, then h1_up */
		if (s == STEP_GO && t->state == TLS_OPEN)
			s = tls_pump(gw, t);
		/* The flow's timer, while nothing else owns it: the head being read. */
		if (s == STEP_GO && t->state == TLS_OPEN && t->gate && !t->refusing &&
		    !t->lingering)
			f->deadline = http_gate_head_deadline(t->gate);
	}
	if (t->wrote_down && f->pcb)
		stack_tcp_output(f);
	if (s == STEP_RESET)
		flow_kill(f, true);
	else if (s == STEP_CLOSE)
		flow_kill(f, false);
}

/* A reset: what the client left may be its alert; recorded before the flow goes. */
void tls_flow_reset(struct gw *gw, struct flow *f)
{
	struct tls_flow *t = f->tls;

	if (t->fail_code)
		return;
	if (t->state == TLS_CLIENT && f->upq_len) {
		/* What it sent before the reset may be its alert, or the end of a handshake
		 * it then gave up on: read it (nothing is written). */
		ERR_clear_error();
		if (SSL_do_handshake(t->down) == 1)
			t->state = TLS_OPEN;
		ERR_clear_error();
	}
	if (t->state == TLS_CLIENT && t->client_alert >= 0)
		tls_report(t, NETTLS_CLIENT_ALERT, SSL_alert_desc_string_long(t->client_alert));
	else if (t->state == TLS_CLIENT)
		tls_report(t, NETTLS_CLIENT, "the client reset the connection during the handshake");
	else if (t->state == TLS_OPEN && t->up_fed == 0 && !t->h2)
		tls_client_quiet(t);
	(void)gw;
}

/* The upstream socket is readable: the same pass. */
void tls_upstream_ready(struct gw *gw, struct flow *f)
{
	tls_service(gw, f);
}
