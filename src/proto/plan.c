/*
 * proto/plan.c — the wire form of a plan, the one message the parent sends to
 * boxy-init.
 *
 * The encoding is deliberately dull: an 8-byte magic, a 32-bit version, then
 * a sequence of tagged fields, each "u16 tag, u32 length, value". Integers
 * are little-endian; a string is "u32 length, bytes" with no NUL inside; a
 * string vector is "u32 count" followed by that many strings. Parent and
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

#include "parse/dns.h"
#include "proto/plan.h"
#include "common/util.h"

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
	TAG_LAST = TAG_HOLD_MS,
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
	for (size_t i = 0; i < p->nmounts; i++) {
		free(p->mounts[i].src);
		free(p->mounts[i].dst);
	}
	free(p->mounts);
	free(p->ports);
	strv_free(p->roots);
	free(p->seccomp_bpf);
	plan_init(p);
}

/* ---- encoding ---------------------------------------------------------- */

struct obuf {
	char *data;
	size_t len, cap;
	bool overflow;          /* the plan grew past PLAN_MAX_BYTES */
};

/* Append n bytes, growing geometrically; past the cap only remember that it overflowed. */
static void obuf_put(struct obuf *b, const void *p, size_t n)
{
	if (b->overflow || n > PLAN_MAX_BYTES - b->len) {
		b->overflow = true;
		return;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Little-endian integers and length-prefixed strings. */
static void obuf_u16(struct obuf *b, uint16_t v)
{
	uint8_t x[2] = { v & 0xff, v >> 8 };

	obuf_put(b, x, sizeof(x));
}

static void obuf_u32(struct obuf *b, uint32_t v)
{
	uint8_t x[4];

	for (int i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	obuf_put(b, x, sizeof(x));
}

static void obuf_u64(struct obuf *b, uint64_t v)
{
	uint8_t x[8];

	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	obuf_put(b, x, sizeof(x));
}

static void obuf_str(struct obuf *b, const char *s)
{
	size_t n = strlen(s);

	if (n > UINT32_MAX) {
		b->overflow = true;
		return;
	}
	obuf_u32(b, (uint32_t)n);
	obuf_put(b, s, n);
}

/* Start a field; returns the offset of its length, patched by field_end(). */
static size_t field_begin(struct obuf *b, enum plan_tag tag)
{
	size_t at;

	obuf_u16(b, (uint16_t)tag);
	at = b->len;
	obuf_u32(b, 0);
	return at;
}

/* Patch the length of the field started at `at` now that its value is written. */
static void field_end(struct obuf *b, size_t at)
{
	size_t n;

	if (b->overflow)
		return;
	n = b->len - at - 4;
	for (int i = 0; i < 4; i++)
		b->data[at + i] = (char)(uint8_t)(n >> (8 * i));
}

/* One field per value type; a NULL string or vector is left out. */
static void field_str(struct obuf *b, enum plan_tag tag, const char *s)
{
	size_t at;

	if (!s)
		return;         /* absent: plan_decode will say which field is missing */
	at = field_begin(b, tag);
	obuf_put(b, s, strlen(s));
	field_end(b, at);
}

static void field_strv(struct obuf *b, enum plan_tag tag, char *const *v)
{
	size_t at, n = strv_len(v);

	if (!v)
		return;
	at = field_begin(b, tag);
	obuf_u32(b, (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n));
	for (size_t i = 0; i < n; i++)
		obuf_str(b, v[i]);
	field_end(b, at);
}

static void field_u32(struct obuf *b, enum plan_tag tag, uint32_t v)
{
	size_t at = field_begin(b, tag);

	obuf_u32(b, v);
	field_end(b, at);
}

static void field_u64(struct obuf *b, enum plan_tag tag, uint64_t v)
{
	size_t at = field_begin(b, tag);

	obuf_u64(b, v);
	field_end(b, at);
}

static void field_bool(struct obuf *b, enum plan_tag tag, bool v)
{
	size_t at = field_begin(b, tag);
	uint8_t x = v ? 1 : 0;

	obuf_put(b, &x, 1);
	field_end(b, at);
}

/* The compiled seccomp program and the test hold, when the plan has them. */
static void plan_encode_seccomp(struct obuf *b, const struct plan *p)
{
	if (p->seccomp_bpf_len > 0) {
		size_t at = field_begin(b, TAG_SECCOMP_BPF);

		obuf_put(b, p->seccomp_bpf, p->seccomp_bpf_len);
		field_end(b, at);
	}
	if (p->hold_ms > 0)
		field_u32(b, TAG_HOLD_MS, p->hold_ms);
}

/* Tags in a fixed order; plan_decode accepts any order, but this one is what tests see. */
int plan_encode(const struct plan *p, char **buf, size_t *len)
{
	struct obuf b = { 0 };

	obuf_put(&b, PLAN_MAGIC, PLAN_MAGIC_LEN);
	obuf_u32(&b, PLAN_VERSION);
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

		obuf_u32(&b, (uint32_t)m->kind);
		obuf_str(&b, m->src ? m->src : "");
		obuf_str(&b, m->dst ? m->dst : (m->src ? m->src : ""));
		field_end(&b, at);
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
			obuf_u16(&b, p->ports[i]);
		field_end(&b, at);
	}
	field_u32(&b, TAG_LANDLOCK_ABI, (uint32_t)(p->landlock_abi < 0 ? 0 : p->landlock_abi));
	field_bool(&b, TAG_NEW_SESSION, p->new_session);
	field_str(&b, TAG_DNS_SEARCH, p->dns_search);
	if (p->roots)
		field_strv(&b, TAG_ROOTS, p->roots);
	plan_encode_seccomp(&b, p);

	if (b.overflow) {
		free(b.data);
		errno = E2BIG;
		return -1;
	}
	*buf = b.data;
	*len = b.len;
	return 0;
}

/* ---- decoding ---------------------------------------------------------- */

/* A read cursor over untrusted bytes: every take checks what remains. */
struct cursor {
	const uint8_t *p;
	size_t left;
};

static bool cur_take(struct cursor *c, void *out, size_t n)
{
	if (n > c->left)
		return false;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

/* Little-endian integers off the cursor; false when too few bytes remain. */
static bool cur_u8(struct cursor *c, uint8_t *v)
{
	return cur_take(c, v, 1);
}

static bool cur_u16(struct cursor *c, uint16_t *v)
{
	uint8_t x[2];

	if (!cur_take(c, x, 2))
		return false;
	*v = (uint16_t)(x[0] | (x[1] << 8));
	return true;
}

static bool cur_u32(struct cursor *c, uint32_t *v)
{
	uint8_t x[4];

	if (!cur_take(c, x, 4))
		return false;
	*v = (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
	return true;
}

static bool cur_u64(struct cursor *c, uint64_t *v)
{
	uint32_t lo, hi;

	if (!cur_u32(c, &lo) || !cur_u32(c, &hi))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/* n bytes as a new NUL-terminated string; fails on short input or an embedded NUL. */
static bool cur_bytes_str(struct cursor *c, size_t n, char **out)
{
	if (n > c->left || memchr(c->p, '\0', n))
		return false;
	*out = xstrndup((const char *)c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

/* A length-prefixed string. */
static bool cur_str(struct cursor *c, char **out)
{
	uint32_t n;

	return cur_u32(c, &n) && cur_bytes_str(c, n, out);
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

/* Decode the value of one field (c covers exactly the field's bytes). */
static int decode_field(struct plan *p, enum plan_tag tag, struct cursor *c, char **err)
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
		if (c->left > DNS_NAME_MAX)
			return set_err(err, "plan: the DNS search domain is too long");
		str = &p->dns_search;
		break;
	case TAG_UID:
	case TAG_GID:
		if (!cur_u32(c, &u32))
			return set_err(err, "plan: truncated %s", tag == TAG_UID ? "uid" : "gid");
		if (u32 == UINT32_MAX)  /* (uid_t)-1 means "no change" to the kernel */
			return set_err(err, "plan: invalid %s", tag == TAG_UID ? "uid" : "gid");
		*(tag == TAG_UID ? &p->uid : &p->gid) = u32;
		break;
	case TAG_MOUNT: {
		struct mount_spec m = { 0 };

		if (p->nmounts >= PLAN_MAX_MOUNTS)
			return set_err(err, "plan: more than %u mounts", PLAN_MAX_MOUNTS);
		if (!cur_u32(c, &u32) || u32 > MOUNT_COPY_RO)
			return set_err(err, "plan: mount %zu: bad kind", p->nmounts + 1);
		m.kind = (enum mount_kind)u32;
		if (!cur_str(c, &m.src) || !cur_str(c, &m.dst) ||
		    m.src[0] != '/' || m.dst[0] != '/') {
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
		if (!cur_u8(c, &u8) || u8 > 1)
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
		if (!cur_u32(c, &u32) || u32 > NET_NONE)
			return set_err(err, "plan: bad network mode");
		p->net = (enum net_mode)u32;
		break;
	case TAG_SECCOMP:
		if (!cur_u32(c, &u32) || u32 < SECCOMP_STRICT || u32 > SECCOMP_COMPAT)
			return set_err(err, "plan: bad seccomp mode");
		p->seccomp = (enum seccomp_mode)u32;
		break;
	case TAG_SECCOMP_BPF:
		/* Whole 8-byte instructions, at most the kernel's BPF_MAXINSNS (4096). */
		if (c->left == 0 || c->left % PLAN_BPF_INSN != 0 ||
		    c->left > PLAN_BPF_MAX_INSNS * PLAN_BPF_INSN)
			return set_err(err, "plan: bad seccomp program length %zu", c->left);
		p->seccomp_bpf_len = c->left;
		p->seccomp_bpf = xmalloc(c->left);
		cur_take(c, p->seccomp_bpf, c->left);
		break;
	case TAG_HOLD_MS:
		if (!cur_u32(c, &p->hold_ms) || p->hold_ms > PLAN_HOLD_MAX_MS)
			return set_err(err, "plan: bad start hold");
		break;
	case TAG_TMPFS_SIZE:
		if (!cur_u64(c, &p->tmpfs_size))
			return set_err(err, "plan: truncated tmpfs size");
		break;
	case TAG_PIDS:
		if (!cur_u64(c, &p->pids))
			return set_err(err, "plan: truncated pids");
		break;
	case TAG_PORTS:
		if (c->left == 0 || c->left % 2 != 0)
			return set_err(err, "plan: bad port list");
		p->nports = c->left / 2;
		p->ports = xcalloc(p->nports, sizeof(*p->ports));
		for (size_t i = 0; i < p->nports; i++) {
			if (!cur_u16(c, &p->ports[i]) || p->ports[i] == 0)
				return set_err(err, "plan: bad port");
		}
		break;
	case TAG_LANDLOCK_ABI:
		if (!cur_u32(c, &u32) || u32 > 1000)
			return set_err(err, "plan: bad Landlock ABI");
		p->landlock_abi = (int)u32;
		break;
	}

	if (str) {
		if (!cur_bytes_str(c, c->left, str))
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
		if (!cur_u32(c, &n) || n > PLAN_MAX_STRV || n > c->left / 4)
			return set_err(err, "plan: bad vector count in field %d", (int)tag);
		*strv = xcalloc((size_t)n + 1, sizeof(char *));
		for (uint32_t i = 0; i < n; i++) {
			if (!cur_str(c, &(*strv)[i]))
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
	if (c->left != 0)
		return set_err(err, "plan: trailing bytes in field %d", (int)tag);
	return 0;
}

/* Header, then fields until the bytes end; then every required field must have come. */
int plan_decode(const char *buf, size_t len, struct plan *p, char **err)
{
	struct cursor c = { (const uint8_t *)buf, len };
	bool seen[TAG_LAST + 1] = { false };
	char magic[PLAN_MAGIC_LEN];
	uint32_t version;

	plan_init(p);
	if (len > PLAN_MAX_BYTES)
		return set_err(err, "plan: larger than %u bytes", PLAN_MAX_BYTES);
	if (!cur_take(&c, magic, sizeof(magic)) || memcmp(magic, PLAN_MAGIC, sizeof(magic)) != 0)
		return set_err(err, "plan: bad magic");
	if (!cur_u32(&c, &version) || version != PLAN_VERSION)
		return set_err(err, "plan: unsupported version");

	while (c.left > 0) {
		uint16_t tag;
		uint32_t flen;
		struct cursor field;

		if (!cur_u16(&c, &tag) || !cur_u32(&c, &flen))
			goto truncated;
		if (tag < TAG_ARGV || tag > TAG_LAST) {
			set_err(err, "plan: unknown field %u", tag);
			goto fail;
		}
		if (seen[tag] && tag != TAG_MOUNT) {
			set_err(err, "plan: field %u repeated", tag);
			goto fail;
		}
		seen[tag] = true;
		if (flen > c.left)
			goto truncated;
		field.p = c.p;
		field.left = flen;
		cur_take(&c, NULL, flen);
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
