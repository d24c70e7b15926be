/*
 * init/plan.c — the wire form of a plan, the one message the parent sends to
 * boxy-init.
 *
 * The encoding is deliberately dull: an 8-byte magic, a 32-bit version, then
 * a sequence of tagged fields, each "u16 tag, u32 length, value", all in
 * proto/wire.h's fields (its only codec). Integers are little-endian; a
 * string is "u32 length, bytes" with no NUL inside; a string vector is
 * "u32 count" followed by that many strings. Parent and
 * boxy-init always come from the same build, so an unknown tag or version is
 * an error rather than something to skip.
 *
 * boxy-init decodes bytes that crossed a process boundary, so plan_decode()
 * trusts nothing: every length is checked against what remains before it is
 * used, every count against a cap and against the bytes left before anything
 * is allocated, booleans must be 0 or 1, enums in range, paths absolute, and
 * required fields present exactly once. It is a pure function of its input
 * (no I/O, no globals) so that it can be fuzzed.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "parse/dns.h"
#include "init/plan.h"
#include "init/tap.h"
#include "proto/wire.h"

#define PLAN_MAGIC       "BOXYPLAN"
#define PLAN_MAGIC_LEN   8
#define PLAN_VERSION     1u

#define PLAN_MAX_STRV    65536u   /* argv or envp entries */
#define PLAN_MAX_MOUNTS  4096u
#define PLAN_MAX_HOST    64u      /* HOST_NAME_MAX */

enum plan_tag {
	TAG_ARGV = 1,
	TAG_ENVP,
	TAG_WORKDIR,
	TAG_HOME,
	TAG_USER,
	TAG_HOSTNAME,
	TAG_UID,
	TAG_GID,
	TAG_MOUNT,              /* the only tag that may repeat: one per mount, in order */
	TAG_ALLOW_GIT_WRITE,
	TAG_NET,
	TAG_SECCOMP,
	TAG_TTY,
	TAG_FOREGROUND,
	TAG_TMPFS_SIZE,
	TAG_PIDS,
	TAG_PORTS,
	TAG_LANDLOCK_ABI,
	TAG_NEW_SESSION,
	TAG_DNS_SEARCH,         /* optional: absent means no search line */
	TAG_ROOTS,              /* optional: the writable roots, absolute paths */
	TAG_SECCOMP_BPF,        /* optional here; boxy-init refuses to run without it */
	TAG_HOLD_MS,            /* optional: the test suite's start delay (plan.h) */
	TAG_NET_QUEUES,         /* optional: queues of tap0, absent: one */
	TAG_TLS_CA,             /* optional: the session CA's PEM and subject hash (two strings) */
	TAG_DECOY,              /* optional, repeated: one per decoy credential, in order */
	TAG_LAST = TAG_DECOY,
};

/* Fields a plan cannot be run without. */
static const enum plan_tag plan_required[] = {
	TAG_ARGV, TAG_ENVP, TAG_WORKDIR, TAG_HOME, TAG_USER, TAG_HOSTNAME,
	TAG_UID, TAG_GID, TAG_NET, TAG_SECCOMP,
};

/* An empty plan: every pointer NULL, every number 0. */
void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
}

/* Free everything p owns and leave it empty. */
void plan_free(struct plan *p)
{
	if (!p)
		return;
	strv_free(p->argv);
	strv_free(p->envp);
	free(p->workdir);
	free(p->home);
	free(p->user);
	free(p->hostname);
	free(p->dns_search);
	free(p->tls_ca_pem);
	free(p->tls_ca_hash);
	for (size_t i = 0; i < p->nmounts; i++) {
		free(p->mounts[i].src);
		free(p->mounts[i].dst);
	}
	free(p->mounts);
	free(p->ports);
	strv_free(p->roots);
	free(p->seccomp_bpf);
	for (size_t i = 0; i < p->ndecoys; i++) {
		free(p->decoys[i].path);
		free(p->decoys[i].content);
	}
	free(p->decoys);
	plan_init(p);
}

/* ---- encoding (proto/wire.h fields) ------------------------------------ */

/* Start a field: its tag, then a length filled in by wire_put_len_end. */
static size_t field_begin(struct wbuf *w, enum plan_tag tag)
{
	wire_put_u16(w, (uint16_t)tag);
	return wire_put_len_begin(w);
}

/* One field per value type; a NULL string or vector is left out. */
static void field_str(struct wbuf *w, enum plan_tag tag, const char *s)
{
	size_t at;

	if (!s)
		return;         /* absent: plan_decode will say which field is missing */
	at = field_begin(w, tag);
	wire_put_raw(w, s, strlen(s));
	wire_put_len_end(w, at);
}

static void field_strv(struct wbuf *w, enum plan_tag tag, char *const *v)
{
	size_t at;

	if (!v)
		return;
	at = field_begin(w, tag);
	wire_put_strv(w, v);
	wire_put_len_end(w, at);
}

static void field_u32(struct wbuf *w, enum plan_tag tag, uint32_t v)
{
	size_t at = field_begin(w, tag);

	wire_put_u32(w, v);
	wire_put_len_end(w, at);
}

static void field_u64(struct wbuf *w, enum plan_tag tag, uint64_t v)
{
	size_t at = field_begin(w, tag);

	wire_put_u64(w, v);
	wire_put_len_end(w, at);
}

static void field_bool(struct wbuf *w, enum plan_tag tag, bool v)
{
	size_t at = field_begin(w, tag);

	wire_put_u8(w, v ? 1 : 0);
	wire_put_len_end(w, at);
}

/* The compiled seccomp program and the test hold, when the plan has them. */
static void plan_encode_seccomp(struct wbuf *b, const struct plan *p)
{
	if (p->seccomp_bpf_len > 0) {
		size_t at = field_begin(b, TAG_SECCOMP_BPF);

		wire_put_raw(b, p->seccomp_bpf, p->seccomp_bpf_len);
		wire_put_len_end(b, at);
	}
	if (p->hold_ms > 0)
		field_u32(b, TAG_HOLD_MS, p->hold_ms);
	if (p->net_queues > 1)
		field_u32(b, TAG_NET_QUEUES, p->net_queues);
}

/* The session CA, when the run inspects TLS. */
static void plan_encode_tls(struct wbuf *b, const struct plan *p)
{
	size_t at;

	if (!p->tls_ca_pem)
		return;
	at = field_begin(b, TAG_TLS_CA);
	wire_put_str(b, p->tls_ca_pem);
	wire_put_str(b, p->tls_ca_hash ? p->tls_ca_hash : "");
	wire_put_len_end(b, at);
}

/* Tags in a fixed order; plan_decode accepts any order, but this one is what tests see. */
int plan_encode(const struct plan *p, char **buf, size_t *len)
{
	struct wbuf b;

	wbuf_init(&b);
	wire_put_raw(&b, PLAN_MAGIC, PLAN_MAGIC_LEN);
	wire_put_u32(&b, PLAN_VERSION);
	field_strv(&b, TAG_ARGV, p->argv);
	field_strv(&b, TAG_ENVP, p->envp);
	field_str(&b, TAG_WORKDIR, p->workdir);
	field_str(&b, TAG_HOME, p->home);
	field_str(&b, TAG_USER, p->user);
	field_str(&b, TAG_HOSTNAME, p->hostname);
	field_u32(&b, TAG_UID, p->uid);
	field_u32(&b, TAG_GID, p->gid);
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct mount_spec *m = &p->mounts[i];
		size_t at = field_begin(&b, TAG_MOUNT);

		wire_put_u32(&b, (uint32_t)m->kind);
		wire_put_str(&b, m->src ? m->src : "");
		wire_put_str(&b, m->dst ? m->dst : (m->src ? m->src : ""));
		wire_put_len_end(&b, at);
	}
	field_bool(&b, TAG_ALLOW_GIT_WRITE, p->allow_git_write);
	field_u32(&b, TAG_NET, (uint32_t)p->net);
	field_u32(&b, TAG_SECCOMP, (uint32_t)p->seccomp);
	field_bool(&b, TAG_TTY, p->tty);
	field_bool(&b, TAG_FOREGROUND, p->foreground);
	field_u64(&b, TAG_TMPFS_SIZE, p->tmpfs_size);
	field_u64(&b, TAG_PIDS, p->pids);
	if (p->nports > 0) {
		size_t at = field_begin(&b, TAG_PORTS);

		for (size_t i = 0; i < p->nports; i++)
			wire_put_u16(&b, p->ports[i]);
		wire_put_len_end(&b, at);
	}
	field_u32(&b, TAG_LANDLOCK_ABI, (uint32_t)(p->landlock_abi < 0 ? 0 : p->landlock_abi));
	field_bool(&b, TAG_NEW_SESSION, p->new_session);
	field_str(&b, TAG_DNS_SEARCH, p->dns_search);
	if (p->roots)
		field_strv(&b, TAG_ROOTS, p->roots);
	plan_encode_seccomp(&b, p);
	plan_encode_tls(&b, p);
	for (size_t i = 0; i < p->ndecoys; i++) {
		const struct plan_decoy *d = &p->decoys[i];
		size_t at = field_begin(&b, TAG_DECOY);

		wire_put_str(&b, d->path);
		wire_put_str(&b, d->content);
		wire_put_u32(&b, d->mode);
		wire_put_u64(&b, (uint64_t)d->mtime);
		wire_put_len_end(&b, at);
	}

	if (b.len > PLAN_MAX_BYTES) {
		wbuf_free(&b);
		errno = E2BIG;
		return -1;
	}
	*buf = (char *)b.p;
	*len = b.len;
	return 0;
}

/* ---- decoding ---------------------------------------------------------- */

/* A length-prefixed string; NULL (and r failed) when short or holding a NUL. */
static char *get_str(struct rbuf *r)
{
	uint32_t n = wire_get_u32(r);

	return r->failed ? NULL : wire_get_strn(r, n);
}

/*
 * The search domain ends up as a line of the sandbox's /etc/resolv.conf, so
 * it must be exactly a DNS name in canonical form (dns_name_normalize's
 * alphabet: lower-case letters, digits, '-' and '_'; labels of 1-63 joined
 * by single dots; at most 253 in all; no trailing dot).
 * A newline or a space could otherwise add a nameserver line of its own.
 */
static bool plan_dns_name_ok(const char *s)
{
	char norm[DNS_NAME_BUF];

	return dns_name_normalize(s, strlen(s), norm) == 0 && strcmp(norm, s) == 0;
}

/*
 * The session CA goes into files of the sandbox's /etc/ssl/certs, one of
 * them named after the hash: one PEM certificate block of base64 lines and
 * nothing else, and exactly eight lower-case hex digits.
 */
static bool plan_tls_ca_ok(const char *pem, const char *hash)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----\n";
	static const char end[] = "-----END CERTIFICATE-----\n";
	size_t n = strlen(pem), b = sizeof(begin) - 1, e = sizeof(end) - 1;

	if (n > PLAN_CA_PEM_MAX || n <= b + e || strncmp(pem, begin, b) != 0 ||
	    strcmp(pem + n - e, end) != 0 || strlen(hash) != 8)
		return false;
	for (size_t i = b; i < n - e; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n",
			    pem[i]))
			return false;
	for (size_t i = 0; i < 8; i++)
		if (!strchr("0123456789abcdef", hash[i]))
			return false;
	return true;
}

/*
 * A decoy's path below $HOME: relative, normal (no empty, "." or ".."
 * component), short, of printable ASCII. The mount stage creates what is
 * missing of it, on $HOME's tmpfs only.
 */
static bool plan_decoy_path_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PLAN_DECOY_PATH_MAX || s[0] == '/' || s[n - 1] == '/')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	for (const char *c = s; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t len = strcspn(c, "/");

		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

/* One TAG_DECOY: path, content, mode, mtime, each checked. */
static int decode_decoy(struct plan *p, struct rbuf *c, char **err)
{
	struct plan_decoy d = { 0 };
	uint64_t mtime;

	if (p->ndecoys >= PLAN_DECOYS_MAX)
		return set_err(err, "plan: more than %u decoys", PLAN_DECOYS_MAX);
	d.path = wire_get_str(c, PLAN_DECOY_PATH_MAX);
	d.content = wire_get_str(c, PLAN_DECOY_CONTENT_MAX);
	d.mode = wire_get_u32(c);
	mtime = wire_get_u64(c);
	if (c->failed || !d.path || !d.content || !plan_decoy_path_ok(d.path) ||
	    d.mode & ~0777u || mtime == 0 || mtime > ((uint64_t)1 << 40)) {
		free(d.path);
		free(d.content);
		return set_err(err, "plan: decoy %zu: malformed", p->ndecoys + 1);
	}
	d.mtime = (int64_t)mtime;
	*(struct plan_decoy *)xappend(&p->decoys, &p->ndecoys, sizeof(d)) = d;
	return 0;
}

/* Decode the value of one field (c covers exactly the field's bytes). */
static int decode_field(struct plan *p, enum plan_tag tag, struct rbuf *c, char **err)
{
	uint32_t u32, n;
	uint8_t u8;
	char ***strv = NULL;
	char **str = NULL;

	switch (tag) {
	case TAG_ARGV:
		strv = &p->argv;
		break;
	case TAG_ENVP:
		strv = &p->envp;
		break;
	case TAG_ROOTS:
		strv = &p->roots;
		break;
	case TAG_WORKDIR:
		str = &p->workdir;
		break;
	case TAG_HOME:
		str = &p->home;
		break;
	case TAG_USER:
		str = &p->user;
		break;
	case TAG_HOSTNAME:
		str = &p->hostname;
		break;
	case TAG_DNS_SEARCH:
		if (wire_left(c) > DNS_NAME_MAX)
			return set_err(err, "plan: the DNS search domain is too long");
		str = &p->dns_search;
		break;
	case TAG_UID:
	case TAG_GID:
		u32 = wire_get_u32(c);
		if (c->failed)
			return set_err(err, "plan: truncated %s", tag == TAG_UID ? "uid" : "gid");
		if (u32 == UINT32_MAX)  /* (uid_t)-1 means "no change" to the kernel */
			return set_err(err, "plan: invalid %s", tag == TAG_UID ? "uid" : "gid");
		*(tag == TAG_UID ? &p->uid : &p->gid) = u32;
		break;
	case TAG_MOUNT: {
		struct mount_spec m = { 0 };

		if (p->nmounts >= PLAN_MAX_MOUNTS)
			return set_err(err, "plan: more than %u mounts", PLAN_MAX_MOUNTS);
		u32 = wire_get_u32(c);
		if (c->failed || u32 > MOUNT_COPY_RO)
			return set_err(err, "plan: mount %zu: bad kind", p->nmounts + 1);
		m.kind = (enum mount_kind)u32;
		m.src = get_str(c);
		m.dst = get_str(c);
		if (c->failed || m.src[0] != '/' || m.dst[0] != '/') {
			free(m.src);
			free(m.dst);
			return set_err(err, "plan: mount %zu: bad path", p->nmounts + 1);
		}
		*(struct mount_spec *)xappend(&p->mounts, &p->nmounts, sizeof(m)) = m;
		break;
	}
	case TAG_ALLOW_GIT_WRITE:
	case TAG_TTY:
	case TAG_FOREGROUND:
	case TAG_NEW_SESSION:
		u8 = wire_get_u8(c);
		if (c->failed || u8 > 1)
			return set_err(err, "plan: bad boolean in field %d", (int)tag);
		if (tag == TAG_ALLOW_GIT_WRITE)
			p->allow_git_write = u8;
		else if (tag == TAG_TTY)
			p->tty = u8;
		else if (tag == TAG_FOREGROUND)
			p->foreground = u8;
		else
			p->new_session = u8;
		break;
	case TAG_NET:
		u32 = wire_get_u32(c);
		if (c->failed || u32 > NET_NONE)
			return set_err(err, "plan: bad network mode");
		p->net = (enum net_mode)u32;
		break;
	case TAG_SECCOMP:
		u32 = wire_get_u32(c);
		if (c->failed || u32 < SECCOMP_STRICT || u32 > SECCOMP_COMPAT)
			return set_err(err, "plan: bad seccomp mode");
		p->seccomp = (enum seccomp_mode)u32;
		break;
	case TAG_SECCOMP_BPF:
		/* Whole 8-byte instructions, at most the kernel's BPF_MAXINSNS (4096). */
		if (wire_left(c) == 0 || wire_left(c) % PLAN_BPF_INSN != 0 ||
		    wire_left(c) > PLAN_BPF_MAX_INSNS * PLAN_BPF_INSN)
			return set_err(err, "plan: bad seccomp program length %zu", wire_left(c));
		p->seccomp_bpf_len = wire_left(c);
		p->seccomp_bpf = xmalloc(p->seccomp_bpf_len);
		if (!wire_get_raw(c, p->seccomp_bpf, p->seccomp_bpf_len))
			return set_err(err, "plan: truncated seccomp program");
		break;
	case TAG_TLS_CA:
		p->tls_ca_pem = get_str(c);
		p->tls_ca_hash = get_str(c);
		if (c->failed || !p->tls_ca_pem || !p->tls_ca_hash || wire_left(c) != 0 ||
		    !plan_tls_ca_ok(p->tls_ca_pem, p->tls_ca_hash))
			return set_err(err, "plan: a malformed session CA");
		break;
	case TAG_DECOY:
		if (decode_decoy(p, c, err) < 0)
			return -1;
		break;
	case TAG_HOLD_MS:
		p->hold_ms = wire_get_u32(c);
		if (c->failed || p->hold_ms > PLAN_HOLD_MAX_MS)
			return set_err(err, "plan: bad start hold");
		break;
	case TAG_NET_QUEUES:
		p->net_queues = wire_get_u32(c);
		if (c->failed || p->net_queues < 1 || p->net_queues > SANDBOX_NET_MAX_QUEUES)
			return set_err(err, "plan: bad number of network queues");
		break;
	case TAG_TMPFS_SIZE:
		p->tmpfs_size = wire_get_u64(c);
		if (c->failed)
			return set_err(err, "plan: truncated tmpfs size");
		break;
	case TAG_PIDS:
		p->pids = wire_get_u64(c);
		if (c->failed)
			return set_err(err, "plan: truncated pids");
		break;
	case TAG_PORTS:
		if (wire_left(c) == 0 || wire_left(c) % 2 != 0)
			return set_err(err, "plan: bad port list");
		p->nports = wire_left(c) / 2;
		p->ports = xcalloc(p->nports, sizeof(*p->ports));
		for (size_t i = 0; i < p->nports; i++) {
			p->ports[i] = wire_get_u16(c);
			if (c->failed || p->ports[i] == 0)
				return set_err(err, "plan: bad port");
		}
		break;
	case TAG_LANDLOCK_ABI:
		u32 = wire_get_u32(c);
		if (c->failed || u32 > 1000)
			return set_err(err, "plan: bad Landlock ABI");
		p->landlock_abi = (int)u32;
		break;
	}

	if (str) {
		*str = wire_get_strn(c, wire_left(c));
		if (!*str)
			return set_err(err, "plan: bad string in field %d", (int)tag);
		if ((*str)[0] == '\0')
			return set_err(err, "plan: empty string in field %d", (int)tag);
		if ((tag == TAG_WORKDIR || tag == TAG_HOME) && (*str)[0] != '/')
			return set_err(err, "plan: relative path in field %d", (int)tag);
		if (tag == TAG_HOSTNAME && strlen(*str) > PLAN_MAX_HOST)
			return set_err(err, "plan: hostname too long");
		if (tag == TAG_DNS_SEARCH && !plan_dns_name_ok(*str))
			return set_err(err, "plan: the DNS search domain is not a DNS name");
	}
	if (strv) {
		/* Each entry needs at least its 4-byte length: bound the count, then allocate. */
		n = wire_get_u32(c);
		if (c->failed || n > PLAN_MAX_STRV || n > wire_left(c) / 4)
			return set_err(err, "plan: bad vector count in field %d", (int)tag);
		*strv = xcalloc((size_t)n + 1, sizeof(char *));
		for (uint32_t i = 0; i < n; i++) {
			(*strv)[i] = get_str(c);
			if (!(*strv)[i])
				return set_err(err, "plan: bad vector entry %u in field %d",
					       i, (int)tag);
		}
		if (tag == TAG_ARGV && (n == 0 || (*strv)[0][0] == '\0'))
			return set_err(err, "plan: empty command");
		if (tag == TAG_ROOTS) {
			for (uint32_t i = 0; i < n; i++)
				if ((*strv)[i][0] != '/')
					return set_err(err, "plan: relative writable root %u", i);
		}
		if (tag == TAG_ENVP) {
			for (uint32_t i = 0; i < n; i++) {
				const char *eq = strchr((*strv)[i], '=');

				if (!eq || eq == (*strv)[i])
					return set_err(err, "plan: bad environment entry %u", i);
			}
		}
	}
	if (wire_left(c) != 0)
		return set_err(err, "plan: trailing bytes in field %d", (int)tag);
	return 0;
}

/* Header, then fields until the bytes end; then every required field must have come. */
int plan_decode(const char *buf, size_t len, struct plan *p, char **err)
{
	struct rbuf c;
	bool seen[TAG_LAST + 1] = { false };
	char magic[PLAN_MAGIC_LEN];
	uint32_t version;

	plan_init(p);
	if (len > PLAN_MAX_BYTES)
		return set_err(err, "plan: larger than %u bytes", PLAN_MAX_BYTES);
	rbuf_init(&c, buf, len);
	if (!wire_get_raw(&c, magic, sizeof(magic)) || memcmp(magic, PLAN_MAGIC, sizeof(magic)) != 0)
		return set_err(err, "plan: bad magic");
	version = wire_get_u32(&c);
	if (c.failed || version != PLAN_VERSION)
		return set_err(err, "plan: unsupported version");

	while (wire_left(&c) > 0) {
		uint16_t tag = wire_get_u16(&c);
		uint32_t flen = wire_get_u32(&c);
		struct rbuf field;

		if (c.failed)
			goto truncated;
		if (tag < TAG_ARGV || tag > TAG_LAST) {
			set_err(err, "plan: unknown field %u", tag);
			goto fail;
		}
		if (seen[tag] && tag != TAG_MOUNT && tag != TAG_DECOY) {
			set_err(err, "plan: field %u repeated", tag);
			goto fail;
		}
		seen[tag] = true;
		if (!wire_get_sub(&c, flen, &field))
			goto truncated;
		if (decode_field(p, (enum plan_tag)tag, &field, err) < 0)
			goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(plan_required); i++) {
		if (!seen[plan_required[i]]) {
			set_err(err, "plan: missing field %d", (int)plan_required[i]);
			goto fail;
		}
	}
	return 0;

truncated:
	set_err(err, "plan: truncated");
fail:
	plan_free(p);
	return -1;
}
