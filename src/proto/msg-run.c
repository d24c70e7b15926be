/*
 * proto/msg-run.c — MSG_RUN on the daemon socket: the run request encoded by
 * the client and decoded by the daemon, both by walking the option table
 * (spec/options.h), so a field added there travels without a line here.
 *
 * Layout: for each field of the table (in order; rows sharing a field send
 * it once) its value by kind; then the client's environment, cwd, home, the
 * terminal mask and size, and a mask of the descriptor slots that follow in
 * the message's SCM_RIGHTS, in slot order. Every value arrives typed (a
 * number, an enum byte, a CIDR's address bytes and prefix) and is checked
 * as such (spec/values.h check_*): nothing is parsed from text a second
 * time. Every count and string is bounded, every enum and boolean checked,
 * every path must be absolute (the client made it so; doc/internals-spec.md).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/msg-run.h"
#include "spec/http-rule.h"
#include "spec/options.h"
#include "spec/values.h"
#include "common/util.h"

#define MAX_LIST     1024
#define MAX_PATH_LEN 4096
#define MAX_ARG_LEN  (128u << 10)
#define MAX_ARGS     4096
#define MAX_ENV      4096
#define MAX_NAME     256
#define MAX_HOST_PORTS 64
#define MAX_CIDR_TEXT  64

void run_request_init(struct run_request *q)
{
	memset(q, 0, sizeof(*q));
	runspec_init(&q->rs);
	for (int i = 0; i < RUN_FD_COUNT; i++)
		q->fd[i] = -1;
}

void run_request_free(struct run_request *q)
{
	runspec_free(&q->rs);
	strv_free(q->env);
	free(q->cwd);
	free(q->home);
	run_request_init(q);
}

/* ---- encoding ---------------------------------------------------------------- */

/* One field of rs, in its kind's form. */
static void put_field(struct wbuf *w, const struct spec_option *o, const struct runspec *rs)
{
	const void *f = spec_option_field(o, rs);
	size_t n = spec_kind_is_list(o->kind) ? *spec_option_count(o, rs) : 0;

	switch (o->kind) {
	case SPEC_ARGV:
		wire_put_strv(w, *(char **const *)f);
		return;
	case SPEC_SWITCH:
		wire_put_u8(w, *(const bool *)f);
		return;
	case SPEC_NAME: case SPEC_DIR: case SPEC_FILE: case SPEC_AUDIT_LOG: case SPEC_JOURNAL:
	case SPEC_FAIL_ON: case SPEC_ON_ALERT:
		wire_put_str(w, *(char *const *)f);
		return;
	case SPEC_SIZE: case SPEC_DURATION: case SPEC_COUNT:
		wire_put_u64(w, *(const uint64_t *)f);
		return;
	case SPEC_CPUS:
		wire_put_u32(w, *(const uint32_t *)f);
		return;
	case SPEC_NET_MODE:
		wire_put_u8(w, (uint8_t)*(const enum net_mode *)f);
		return;
	case SPEC_SECCOMP:
		wire_put_u8(w, (uint8_t)*(const enum seccomp_mode *)f);
		return;
	case SPEC_ONOFF:
		wire_put_u8(w, (uint8_t)*(const enum onoff *)f);
		return;
	default:
		break;
	}
	wire_put_u32(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		switch (o->kind) {
		case SPEC_MOUNT: case SPEC_COPY: {
			const struct mount_spec *m = &(*(struct mount_spec *const *)f)[i];

			wire_put_u8(w, (uint8_t)m->kind);
			wire_put_str(w, m->src);
			wire_put_str(w, m->dst);
			break;
		}
		case SPEC_HOST: {
			const struct host_spec *h = &(*(struct host_spec *const *)f)[i];

			wire_put_str(w, h->name);
			wire_put_u32(w, (uint32_t)h->nports);
			for (size_t j = 0; j < h->nports; j++)
				wire_put_u16(w, h->ports[j]);
			break;
		}
		case SPEC_PORT:
			wire_put_u16(w, (*(uint16_t *const *)f)[i]);
			break;
		case SPEC_CIDR: {
			const struct cidr *c = &(*(struct cidr *const *)f)[i];

			wire_put_u8(w, c->family == AF_INET6 ? 6 : 4);
			wire_put_u8(w, c->prefix);
			for (size_t j = 0; j < sizeof(c->addr); j++)
				wire_put_u8(w, c->addr[j]);
			wire_put_str(w, c->text);
			break;
		}
		case SPEC_ENV: case SPEC_ENV_SET: {
			const struct env_spec *e = &(*(struct env_spec *const *)f)[i];

			wire_put_str(w, e->name);
			wire_put_str(w, e->value);
			break;
		}
		case SPEC_HTTP_RULE:
			wire_put_str(w, (*(char **const *)f)[i]);
			break;
		default:
			fatal("msg-run: option kind %d has no wire form", (int)o->kind);
		}
	}
}

void run_request_encode(const struct run_request *q, struct wbuf *w, int fds[MSG_MAX_FDS],
			size_t *nfds)
{
	uint8_t mask = 0;

	for (size_t i = 0; i < spec_noptions; i++)
		if (spec_option_owns_field(&spec_options[i]))
			put_field(w, &spec_options[i], &q->rs);
	wire_put_strv(w, q->env);
	wire_put_str(w, q->cwd);
	wire_put_str(w, q->home);
	wire_put_u8(w, q->ttys);
	wire_put_u16(w, q->rows);
	wire_put_u16(w, q->cols);
	*nfds = 0;
	for (int i = 0; i < RUN_FD_COUNT; i++) {
		if (q->fd[i] < 0)
			continue;
		mask |= (uint8_t)(1u << i);
		fds[(*nfds)++] = q->fd[i];
	}
	wire_put_u8(w, mask);
}

/* ---- decoding ---------------------------------------------------------------- */

static bool get_bool(struct rbuf *r)
{
	uint8_t v = wire_get_u8(r);

	if (v > 1)
		r->failed = true;
	return v == 1;
}

/* A count of list entries, bounded. */
static size_t get_count(struct rbuf *r, size_t max)
{
	uint32_t n = wire_get_u32(r);

	if (n > max) {
		r->failed = true;
		return 0;
	}
	return n;
}

/*
 * A run-spec path: NULL (when not required) or absolute and normal, as the
 * client's runspec_finish made it; any other form is malformed, never
 * converted here (doc/internals-spec.md).
 */
static bool path_ok(const char *p, bool required)
{
	return p ? path_is_normal(p) : !required;
}

/* The row sharing o's field that adds mounts of kind k; NULL when none does. */
static const struct spec_option *mount_row(const struct spec_option *o, uint8_t k)
{
	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *p = &spec_options[i];

		if (p->field == o->field && (p->kind == SPEC_MOUNT || p->kind == SPEC_COPY) &&
		    (unsigned)p->mount == k)
			return p;
	}
	return NULL;
}

/* One list entry of o into rs; NULL, or what was wrong with it. */
static const char *get_entry(struct rbuf *r, const struct spec_option *o, struct runspec *rs)
{
	void *f = spec_option_field(o, rs);
	size_t *n = spec_option_count(o, rs);
	char *e = NULL;
	int bad;

	switch (o->kind) {
	case SPEC_MOUNT: case SPEC_COPY: {
		struct mount_spec *m = xappend(f, n, sizeof(*m));
		uint8_t k = wire_get_u8(r);
		const struct spec_option *row = mount_row(o, k);

		m->src = wire_get_str(r, MAX_PATH_LEN);
		m->dst = wire_get_str(r, MAX_PATH_LEN);
		if (!row)
			return "mount kind";
		m->kind = row->mount;
		if (!path_ok(m->src, true))
			return "mount source";
		if (row->kind == SPEC_COPY ? !path_ok(m->dst, false) : m->dst != NULL)
			return "mount destination";
		return NULL;
	}
	case SPEC_HOST: {
		struct host_spec *h = xappend(f, n, sizeof(*h));
		size_t np;

		h->name = wire_get_str(r, MAX_NAME);
		np = get_count(r, MAX_HOST_PORTS);
		for (size_t j = 0; j < np && !r->failed; j++)
			*(uint16_t *)xappend(&h->ports, &h->nports, sizeof(*h->ports)) =
				wire_get_u16(r);
		if (r->failed)
			return "host";
		bad = check_host_spec(h, &e);
		free(e);
		return bad < 0 ? "host" : NULL;
	}
	case SPEC_PORT: {
		uint16_t p = wire_get_u16(r);

		*(uint16_t *)xappend(f, n, sizeof(p)) = p;
		return p == 0 ? "port" : NULL;
	}
	case SPEC_CIDR: {
		struct cidr *c = xappend(f, n, sizeof(*c));
		uint8_t fam = wire_get_u8(r);

		c->family = fam == 4 ? AF_INET : fam == 6 ? AF_INET6 : 0;
		c->prefix = wire_get_u8(r);
		for (size_t j = 0; j < sizeof(c->addr); j++)
			c->addr[j] = wire_get_u8(r);
		c->text = wire_get_str(r, MAX_CIDR_TEXT);
		if (r->failed)
			return "cidr";
		bad = check_cidr(c, &e);
		free(e);
		return bad < 0 ? "cidr" : NULL;
	}
	case SPEC_ENV: case SPEC_ENV_SET: {
		struct env_spec *es = xappend(f, n, sizeof(*es));

		es->name = wire_get_str(r, MAX_NAME);
		es->value = wire_get_str(r, MAX_ARG_LEN);
		bad = check_env_name(es->name, &e);
		free(e);
		return bad < 0 ? "environment variable name" : NULL;
	}
	case SPEC_HTTP_RULE: {
		char **t = xappend(f, n, sizeof(char *));
		struct http_rule hr;
		struct http_rule_error he;

		*t = wire_get_str(r, HTTP_RULE_TEXT_MAX);
		if (!*t || *n > HTTP_RULES_MAX || http_rule_parse(*t, &hr, &he) < 0)
			return "HTTP rule";
		http_rule_free(&hr);
		return NULL;
	}
	default:
		return "field";
	}
}

/* One field of o into rs; NULL, or what was wrong with it. */
static const char *get_field(struct rbuf *r, const struct spec_option *o, struct runspec *rs)
{
	void *f = spec_option_field(o, rs);
	uint8_t v;

	switch (o->kind) {
	case SPEC_ARGV: {
		char **argv = wire_get_strv(r, MAX_ARGS, MAX_ARG_LEN);

		*(char ***)f = argv;
		return argv && argv[0] && argv[0][0] ? NULL : "command";
	}
	case SPEC_SWITCH:
		*(bool *)f = get_bool(r);
		return NULL;
	case SPEC_NAME:
		*(char **)f = wire_get_str(r, MAX_PATH_LEN);
		return *(char **)f && !**(char **)f ? o->flag : NULL;
	case SPEC_DIR:
	case SPEC_FILE:
		*(char **)f = wire_get_str(r, MAX_PATH_LEN);
		return path_ok(*(char **)f, o->kind == SPEC_DIR) ? NULL : o->flag;
	case SPEC_AUDIT_LOG:
	case SPEC_JOURNAL:
		/* a file as SPEC_FILE, or the journal: the word itself, nothing else relative */
		*(char **)f = wire_get_str(r, MAX_PATH_LEN);
		return path_ok(*(char **)f, false) ||
		       (*(char **)f && strcmp(*(char **)f, "journal") == 0) ? NULL : o->flag;
	case SPEC_FAIL_ON: {
		unsigned bits;
		char *e = NULL;
		bool ok;

		/* absent, or the words the flag accepts */
		*(char **)f = wire_get_str(r, MAX_PATH_LEN);
		ok = !*(char **)f || parse_fail_on(*(char **)f, &bits, &e) == 0;
		free(e);
		return ok ? NULL : o->flag;
	}
	case SPEC_ON_ALERT: {
		struct react_policy p = { 0 };
		char *e = NULL, *canon = NULL;
		bool ok;

		/* absent, or exactly the canonical text of what the flag accepts */
		*(char **)f = wire_get_str(r, MAX_PATH_LEN);
		ok = !*(char **)f || (parse_on_alert(*(char **)f, &p, &e) == 0 &&
				      (canon = on_alert_text(&p)) && strcmp(canon, *(char **)f) == 0);
		free(canon);
		free(e);
		return ok ? NULL : o->flag;
	}
	case SPEC_SIZE: case SPEC_DURATION:
		*(uint64_t *)f = wire_get_u64(r);
		return NULL;
	case SPEC_COUNT:
		*(uint64_t *)f = wire_get_u64(r);
		return *(uint64_t *)f > VALUE_COUNT_MAX ? o->flag : NULL;
	case SPEC_CPUS:
		*(uint32_t *)f = wire_get_u32(r);
		return *(uint32_t *)f > VALUE_CPUS_MAX_MILLI ? o->flag : NULL;
	case SPEC_NET_MODE:
		v = wire_get_u8(r);
		*(enum net_mode *)f = (enum net_mode)v;
		return v == NET_UNSET || v > NET_NONE ? "network mode" : NULL;
	case SPEC_SECCOMP:
		v = wire_get_u8(r);
		*(enum seccomp_mode *)f = (enum seccomp_mode)v;
		return v == SECCOMP_UNSET || v > SECCOMP_COMPAT ? "seccomp mode" : NULL;
	case SPEC_ONOFF:
		/* finished by the client: on or off, never left unset */
		v = wire_get_u8(r);
		*(enum onoff *)f = (enum onoff)v;
		return v == ONOFF_UNSET || v > ONOFF_OFF ? o->flag : NULL;
	default:
		break;
	}
	{
		size_t n = get_count(r, MAX_LIST);

		for (size_t i = 0; i < n && !r->failed; i++) {
			const char *what = get_entry(r, o, rs);

			if (what)
				return what;
		}
	}
	return NULL;
}

/* -1 with "malformed run request: what", q emptied. */
static int bad(struct run_request *q, char **err, const char *what)
{
	run_request_free(q);
	return set_err(err, _("malformed run request: %s"), what);
}

int run_request_decode(const void *p, size_t len, const int *fds, size_t nfds,
		       struct run_request *q, char **err)
{
	struct rbuf r;
	uint8_t mask;
	size_t k = 0;

	run_request_init(q);
	rbuf_init(&r, p, len);
	for (size_t i = 0; i < spec_noptions; i++) {
		const struct spec_option *o = &spec_options[i];
		const char *what;

		if (!spec_option_owns_field(o))
			continue;
		what = get_field(&r, o, &q->rs);
		if (what || r.failed)
			return bad(q, err, what ? what : o->json);
	}
	q->env = wire_get_strv(&r, MAX_ENV, MAX_ARG_LEN);
	q->cwd = wire_get_str(&r, MAX_PATH_LEN);
	q->home = wire_get_str(&r, MAX_PATH_LEN);
	q->ttys = wire_get_u8(&r);
	q->rows = wire_get_u16(&r);
	q->cols = wire_get_u16(&r);
	mask = wire_get_u8(&r);
	if (!wire_done(&r) || !q->env || !q->cwd || q->cwd[0] != '/' || !q->home ||
	    q->home[0] != '/')
		return bad(q, err, "fields missing or out of range");
	if (q->ttys > 7 || (q->rs.detach && q->ttys))
		return bad(q, err, "terminal mask");
	if (mask >> RUN_FD_COUNT)
		return bad(q, err, "descriptor mask");
	for (int i = 0; i < RUN_FD_STDERR + 1; i++) {
		/* Each of fds 0-2 comes unless it is a terminal (the pty takes its place), or -d. */
		bool want = !q->rs.detach && !(q->ttys & (1u << i));

		if (want != !!(mask & (1u << i)))
			return bad(q, err, "descriptors");
	}
	for (int i = 0; i < RUN_FD_COUNT; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (k == nfds)
			return bad(q, err, "descriptors");
		q->fd[i] = fds[k++];
	}
	if (k != nfds)
		return bad(q, err, "descriptors");
	return 0;
}
