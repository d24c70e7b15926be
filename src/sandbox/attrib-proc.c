/*
 * sandbox/attrib-proc.c — /proc's text → fields, and the package rules (see
 * sandbox/attrib-proc.h). Pure: buffers in, fixed buffers out.
 *
 * The kernel prints a socket table's addresses as the 32-bit words of the
 * address in the host's byte order ("%08X" of a __be32), so the bytes of
 * the word parsed back, in the host's order, are the address's bytes in
 * network order: memcpy of the parsed u32 gives them on either endianness.
 */
#include <config.h>

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "sandbox/attrib-proc.h"

/* TCP's states, as the tables number them. */
#define TCP_STATE_LISTEN 10

size_t attrib_clean(char *dst, size_t n, const char *src, size_t len)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t o = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; src && i < len && p[i];) {
		uint32_t cp = 0;
		size_t l = utf8_decode(p + i, len - i, &cp);

		if (l == 0 || unicode_is_control(cp)) {
			if (o + 1 >= n)
				break;
			dst[o++] = '?';
			i += l ? l : 1;
			continue;
		}
		if (o + l >= n)
			break;
		memcpy(dst + o, p + i, l);
		o += l;
		i += l;
	}
	dst[o] = '\0';
	return o;
}

/* ---- socket tables ------------------------------------------------------------------- */

/* n hex digits at *p (exactly: the next byte is not one) → *out; advances *p. */
static bool hex_field(const char **p, const char *end, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		char c = (*p + i < end) ? (*p)[i] : '\0';
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*p += n;
	*out = v;
	return true;
}

/* "ADDR:PORT" of a table (8 or 32 hex digits, then 4) → address and port. */
static bool sock_endpoint(const char **p, const char *end, int family, struct net_addr *a,
			  uint16_t *port)
{
	uint64_t w, pt;
	size_t words = family == AF_INET6 ? 4 : 1;
	uint8_t b[16];

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < words; i++) {
		uint32_t v;

		if (!hex_field(p, end, 8, &w))
			return false;
		v = (uint32_t)w;
		memcpy(b + 4 * i, &v, 4);      /* the host's order back: the address's bytes */
	}
	if (*p >= end || **p != ':')
		return false;
	(*p)++;
	if (!hex_field(p, end, 4, &pt))
		return false;
	*port = (uint16_t)pt;
	if (family == AF_INET) {
		net_addr_set_v4(a, b);
		return true;
	}
	/* An IPv4-mapped row of a v6 table is the IPv4 flow it carries. */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(b, mapped, 12) == 0)
		net_addr_set_v4(a, b + 12);
	else
		net_addr_set_v6(a, b);
	return true;
}

/* Skip spaces; false at the end. */
static bool skip_spaces(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
	return *p < end;
}

/* Skip one whitespace-separated field. */
static void skip_field(const char **p, const char *end)
{
	while (*p < end && **p != ' ' && **p != '\n')
		(*p)++;
}

bool attrib_sock_parse(const char *line, size_t len, int family, struct attrib_sock *out)
{
	const char *p = line, *end = line + len;
	uint64_t st, inode = 0;
	size_t digits = 0;

	memset(out, 0, sizeof(*out));
	if (family != AF_INET && family != AF_INET6)
		return false;
	/* "  12: " — the slot number and its colon. */
	if (!skip_spaces(&p, end))
		return false;
	while (p < end && *p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (!digits || p >= end || *p++ != ':')
		return false;
	if (!skip_spaces(&p, end) || !sock_endpoint(&p, end, family, &out->local, &out->lport))
		return false;
	if (!skip_spaces(&p, end) || !sock_endpoint(&p, end, family, &out->remote, &out->rport))
		return false;
	if (!skip_spaces(&p, end) || !hex_field(&p, end, 2, &st))
		return false;
	out->state = (uint8_t)st;
	/* tx_queue:rx_queue tr:tm->when retrnsmt uid timeout, then the inode. */
	for (int i = 0; i < 5; i++) {
		if (!skip_spaces(&p, end))
			return false;
		skip_field(&p, end);
	}
	if (!skip_spaces(&p, end) || *p < '0' || *p > '9')
		return false;
	for (digits = 0; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits >= 19)
			return false;
		inode = inode * 10 + (uint64_t)(*p - '0');
	}
	if (p < end && *p != ' ' && *p != '\n')
		return false;
	out->inode = inode;
	return true;
}


/* addr as family asks for it: itself, or IPv4-mapped in a v6 request. */
static void diag_addr(uint32_t out[4], int family, const struct net_addr *a)
{
	uint8_t *b = (uint8_t *)out;

	memset(out, 0, 16);
	if (family == AF_INET6 && a->family == AF_INET) {
		b[10] = b[11] = 0xff;
		memcpy(b + 12, a->a, 4);
	} else {
		memcpy(b, a->a, a->family == AF_INET ? 4 : 16);
	}
}

size_t attrib_diag_request(void *buf, uint32_t seq, uint8_t proto, int family,
			   const struct net_addr *local, uint16_t lport,
			   const struct net_addr *remote, uint16_t rport)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} m;
	bool udp = proto == IPPROTO_UDP;

	_Static_assert(sizeof(m) == ATTRIB_DIAG_REQ, "ATTRIB_DIAG_REQ");
	memset(&m, 0, sizeof(m));
	m.h.nlmsg_len = sizeof(m);
	m.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m.h.nlmsg_flags = NLM_F_REQUEST;
	m.h.nlmsg_seq = seq;
	m.r.sdiag_family = (uint8_t)family;
	m.r.sdiag_protocol = proto;
	m.r.idiag_states = ~0u;
	diag_addr(m.r.id.idiag_src, family, udp ? remote : local);
	diag_addr(m.r.id.idiag_dst, family, udp ? local : remote);
	m.r.id.idiag_sport = htons(udp ? rport : lport);
	m.r.id.idiag_dport = htons(udp ? lport : rport);
	m.r.id.idiag_cookie[0] = m.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	memcpy(buf, &m, sizeof(m));
	return sizeof(m);
}

int attrib_diag_parse(const void *buf, size_t len, uint32_t seq, uint64_t *inode)
{
	struct nlmsghdr h;

	*inode = 0;
	if (len < sizeof(h))
		return -1;
	memcpy(&h, buf, sizeof(h));
	if (h.nlmsg_len < sizeof(h) || h.nlmsg_len > len || h.nlmsg_seq != seq)
		return -1;
	if (h.nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;

		if (h.nlmsg_len < NLMSG_LENGTH(sizeof(e)))
			return -1;
		memcpy(&e, (const char *)buf + NLMSG_HDRLEN, sizeof(e));
		return e.error == -ENOENT ? 0 : -1;
	}
	if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
		struct inet_diag_msg d;

		if (h.nlmsg_len < NLMSG_LENGTH(sizeof(d)))
			return -1;
		memcpy(&d, (const char *)buf + NLMSG_HDRLEN, sizeof(d));
		*inode = d.idiag_inode;
		return 1;
	}
	return -1;
}

/* Is a the unspecified address of its family? */
static bool addr_any(const struct net_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->a, zero, a->family == AF_INET6 ? 16 : 4) == 0;
}

int attrib_sock_match(const struct attrib_sock *s, uint8_t proto, const struct net_addr *local,
		      uint16_t lport, const struct net_addr *remote, uint16_t rport)
{
	bool wild = false;

	if (s->inode == 0 || s->lport != lport || lport == 0)
		return 0;
	if (proto == 6 && s->state == TCP_STATE_LISTEN)
		return 0;
	if (!net_addr_equal(&s->local, local)) {
		/* TCP's connected socket always has its own address; a UDP one may be bound to any. */
		if (proto != 17 || !addr_any(&s->local))
			return 0;
		wild = true;
	}
	if (s->rport == 0 && addr_any(&s->remote)) {
		if (proto != 17)
			return 0;
		wild = true;            /* not connected: sendto() to anyone */
	} else if (s->rport != rport || !net_addr_equal(&s->remote, remote)) {
		return 0;
	}
	return wild ? 1 : 2;
}

uint64_t attrib_socket_link(const char *link, size_t len)
{
	static const char pre[] = "socket:[";
	uint64_t v = 0;
	size_t i = sizeof(pre) - 1, digits = 0;

	if (len < sizeof(pre) + 1 || memcmp(link, pre, sizeof(pre) - 1) != 0)
		return 0;
	for (; i < len && link[i] >= '0' && link[i] <= '9'; i++) {
		if (++digits > 19)
			return 0;
		v = v * 10 + (uint64_t)(link[i] - '0');
	}
	if (!digits || i + 1 != len || link[i] != ']')
		return 0;
	return v;
}

/* ---- a process ----------------------------------------------------------------------- */

bool attrib_stat_parse(const char *buf, size_t len, struct attrib_stat *out)
{
	const char *open = memchr(buf, '(', len), *close = NULL, *p, *end = buf + len;
	unsigned long long v;
	int field;

	memset(out, 0, sizeof(*out));
	if (!open)
		return false;
	/* comm is the payload's (prctl PR_SET_NAME): it may hold ')' — the last one ends it. */
	for (p = buf + len; p > open; p--)
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	if (!close)
		return false;
	attrib_clean(out->comm, sizeof(out->comm), open + 1, (size_t)(close - open - 1));
	p = close + 1;
	/* state is field 3, ppid 4, starttime 22; env_start and env_end 51 and 52, optional. */
	for (field = 3; field <= 52; field++) {
		const char *f;

		if (p >= end || *p != ' ' || p + 1 >= end || p[1] == '\n') {
			if (field > 22)
				break;  /* an older kernel's shorter line: no addresses */
			return false;
		}
		p++;
		f = p;
		skip_field(&p, end);
		if (p == f)
			return false;
		if (field == 3) {
			out->state = *f;
		} else if (field == 4 || field == 22 || field == 51 || field == 52) {
			char num[24];
			size_t n = (size_t)(p - f);
			char *e;

			if (n >= sizeof(num))
				return false;
			memcpy(num, f, n);
			num[n] = '\0';
			v = strtoull(num, &e, 10);
			if (*e || num[0] == '-')
				return false;
			if (field == 4)
				out->ppid = (pid_t)v;
			else if (field == 22)
				out->start = v;
			else if (field == 51)
				out->env_start = v;
			else
				out->env_end = v;
		}
	}
	return true;
}

pid_t attrib_status_nspid(const char *buf, size_t len, int *levels)
{
	const char *p = buf, *end = buf + len;
	long last = 0;
	int n = 0;

	if (levels)
		*levels = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;

		if ((size_t)(e - p) > 6 && memcmp(p, "NSpid:", 6) == 0) {
			for (const char *q = p + 6; q < e;) {
				long v = 0;
				int digits = 0;

				while (q < e && (*q == ' ' || *q == '\t'))
					q++;
				while (q < e && *q >= '0' && *q <= '9' && digits < 10) {
					v = v * 10 + (*q - '0');
					q++;
					digits++;
				}
				if (!digits)
					break;
				last = v;
				n++;
			}
			if (levels)
				*levels = n;
			return (pid_t)last;
		}
		p = e + 1;
	}
	return 0;
}

void attrib_cmdline_parse(const char *buf, size_t len, struct attrib_argv *out)
{
	size_t o = 0;

	memset(out, 0, sizeof(*out));
	/* A rewritten title (process.title, setproctitle) pads with spaces or NULs. */
	while (len && (buf[len - 1] == '\0' || buf[len - 1] == ' '))
		len--;
	for (size_t i = 0; i < len;) {
		const char *arg = buf + i, *nul = memchr(arg, '\0', len - i);
		size_t alen = nul ? (size_t)(nul - arg) : len - i;

		if (out->nargs == 0)
			attrib_clean(out->argv0, sizeof(out->argv0), arg, alen);
		if (out->nargs < ATTRIB_ARGS_KEPT)
			attrib_clean(out->arg[out->nargs], sizeof(out->arg[0]), arg, alen);
		out->nargs++;
		if (o + 1 < sizeof(out->cmdline)) {
			if (o)
				out->cmdline[o++] = ' ';
			o += attrib_clean(out->cmdline + o, sizeof(out->cmdline) - o, arg, alen);
		}
		i += alen + 1;
	}
	/* Trailing spaces of a padded title, once more after the join. */
	while (o && out->cmdline[o - 1] == ' ')
		out->cmdline[--o] = '\0';
	if (out->nargs > ATTRIB_ARGS_KEPT)
		out->nargs = ATTRIB_ARGS_KEPT;
}

/* If entry (len bytes, no NUL) is "name=value", the value's start and length. */
static bool env_value(const char *entry, size_t len, const char *name, const char **v,
		      size_t *vlen)
{
	size_t n = strlen(name);

	if (len <= n || memcmp(entry, name, n) != 0 || entry[n] != '=')
		return false;
	*v = entry + n + 1;
	*vlen = len - n - 1;
	return true;
}

void attrib_environ_parse(const char *buf, size_t len, bool truncated, struct attrib_env *out)
{
	bool got_name = false, got_version = false, got_event = false;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < len;) {
		const char *e = buf + i, *nul = memchr(e, '\0', len - i), *v;
		size_t elen = nul ? (size_t)(nul - e) : len - i, vlen;

		if (!nul && truncated)
			break;          /* cut by the read: not the whole entry */
		/* The first of each name is the one getenv() finds: the process's own view. */
		if (!got_name && env_value(e, elen, "npm_package_name", &v, &vlen)) {
			attrib_clean(out->package, sizeof(out->package), v, vlen);
			got_name = true;
		} else if (!got_version && env_value(e, elen, "npm_package_version", &v, &vlen)) {
			attrib_clean(out->version, sizeof(out->version), v, vlen);
			got_version = true;
		} else if (!got_event && env_value(e, elen, "npm_lifecycle_event", &v, &vlen)) {
			attrib_clean(out->script, sizeof(out->script), v, vlen);
			got_event = true;
		}
		i += elen + 1;
	}
	out->has = (got_name && out->package[0]) || (got_event && out->script[0]);
}

/* The last path component of s up to its first space (a rewritten title: "npm install x"). */
static void arg_base(const char *s, char *out, size_t n)
{
	const char *sp = strchr(s, ' '), *end = sp ? sp : s + strlen(s), *slash = end;
	size_t len;

	while (slash > s && slash[-1] != '/')
		slash--;
	len = (size_t)(end - slash);
	if (len >= n)
		len = n - 1;
	memcpy(out, slash, len);
	out[len] = '\0';
}

static bool one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(s, *words) == 0)
			return true;
	return false;
}

/* "pip", "pip3", "pip3.11". */
static bool pip_name(const char *b)
{
	if (strncmp(b, "pip", 3) != 0)
		return false;
	for (b += 3; *b; b++)
		if (!(*b >= '0' && *b <= '9') && *b != '.')
			return false;
	return true;
}

/* A yarn release kept in a project: .yarn/releases/yarn-4.1.0.cjs */
static bool yarn_release(const char *b)
{
	size_t n = strlen(b);

	return strncmp(b, "yarn-", 5) == 0 && n > 9 && strcmp(b + n - 4, ".cjs") == 0;
}

/* What one word (a basename) names, if a package manager. */
static enum attrib_manager manager_word(const char *b)
{
	static const char *const npm[] = { "npm", "npm-cli.js", "npx", "npx-cli.js", NULL };
	static const char *const yarn[] = { "yarn", "yarn.js", "yarn.cjs", "yarnpkg", NULL };
	static const char *const pnpm[] = { "pnpm", "pnpm.cjs", "pnpm.js", "pnpx", "pnpx.cjs",
					    NULL };

	if (one_of(b, npm))
		return ATTRIB_PM_NPM;
	if (one_of(b, yarn) || yarn_release(b))
		return ATTRIB_PM_YARN;
	if (one_of(b, pnpm))
		return ATTRIB_PM_PNPM;
	if (pip_name(b))
		return ATTRIB_PM_PIP;
	return ATTRIB_PM_NONE;
}

enum attrib_manager attrib_manager_of(const char *comm, const struct attrib_argv *argv)
{
	char b[ATTRIB_ARG_MAX];
	enum attrib_manager m;

	/* The program itself, or the script an interpreter runs (node npm-cli.js, python pip). */
	for (int i = 0; i < argv->nargs && i < 2; i++) {
		arg_base(argv->arg[i], b, sizeof(b));
		if ((m = manager_word(b)) != ATTRIB_PM_NONE)
			return m;
	}
	/* python -m pip */
	if (argv->nargs >= 3 && strcmp(argv->arg[1], "-m") == 0) {
		arg_base(argv->arg[2], b, sizeof(b));
		if (pip_name(b))
			return ATTRIB_PM_PIP;
	}
	/* A title the process set for itself (node's process.title renames comm too). */
	if (comm && comm[0]) {
		arg_base(comm, b, sizeof(b));
		m = manager_word(b);
		if (m != ATTRIB_PM_PIP)
			return m;
	}
	return ATTRIB_PM_NONE;
}

const char *attrib_manager_name(enum attrib_manager m)
{
	switch (m) {
	case ATTRIB_PM_NPM:
		return "npm";
	case ATTRIB_PM_YARN:
		return "yarn";
	case ATTRIB_PM_PNPM:
		return "pnpm";
	case ATTRIB_PM_PIP:
		return "pip";
	default:
		return NULL;
	}
}

/* ---- pip ------------------------------------------------------------------------------ */

/* A name pip could have written: letters, digits, '.', '-', '_'. */
static bool pip_name_chars(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

enum attrib_pipdir attrib_pip_dir(const char *cwd, char *name, size_t n)
{
	const char *p = cwd;

	if (n)
		name[0] = '\0';
	while (p && *p) {
		const char *c, *e;
		size_t clen;

		while (*p == '/')
			p++;
		c = p;
		e = strchr(c, '/');
		clen = e ? (size_t)(e - c) : strlen(c);
		if (clen > 14 && strncmp(c, "pip-req-build-", 14) == 0)
			return ATTRIB_PIPDIR_UNNAMED;
		if (clen > 12 && strncmp(c, "pip-install-", 12) == 0 && e && e[1]) {
			/* The next component: NAME_<uuid4 hex>, as pip makes it for a named
			 * requirement (or NAME alone, as older pips did). */
			const char *nc = e + 1, *ne = strchr(nc, '/'), *us;
			size_t nlen = ne ? (size_t)(ne - nc) : strlen(nc);

			us = NULL;
			for (size_t i = nlen; i > 0; i--)
				if (nc[i - 1] == '_') {
					us = nc + i - 1;
					break;
				}
			if (us && (size_t)(nc + nlen - us - 1) == 32) {
				bool hex = true;

				for (const char *h = us + 1; h < nc + nlen; h++)
					hex = hex && ((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'));
				if (hex)
					nlen = (size_t)(us - nc);
			}
			if (!pip_name_chars(nc, nlen) || nlen >= ATTRIB_PACKAGE_MAX)
				return ATTRIB_PIPDIR_NONE;
			if (n)
				attrib_clean(name, n, nc, nlen);
			return ATTRIB_PIPDIR_NAMED;
		}
		p = e;
	}
	return ATTRIB_PIPDIR_NONE;
}

/* Copy the value of "Key: value" when line is that header (case-insensitive key). */
static bool header_value(const char *line, size_t len, const char *key, char *out, size_t n)
{
	size_t k = strlen(key);

	if (len <= k || strncasecmp(line, key, k) != 0 || line[k] != ':')
		return false;
	line += k + 1;
	len -= k + 1;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\r' || line[len - 1] == '\t'))
		len--;
	attrib_clean(out, n, line, len);
	return true;
}

bool attrib_pkginfo_parse(const char *buf, size_t len, char *name, size_t nn, char *version,
			  size_t vn)
{
	bool got = false, gotv = false;

	name[0] = '\0';
	version[0] = '\0';
	for (size_t i = 0; i < len;) {
		const char *l = buf + i, *nl = memchr(l, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - l) : len - i;

		if (ll == 0 || (ll == 1 && l[0] == '\r'))
			break;          /* the headers end; the description follows */
		if (!got)
			got = header_value(l, ll, "Name", name, nn) && name[0];
		if (!gotv)
			gotv = header_value(l, ll, "Version", version, vn);
		i += ll + 1;
	}
	return got;
}

/* `key = "value"` (or 'value') on one line of TOML: the value, cleaned. */
static bool toml_string(const char *l, size_t len, const char *key, char *out, size_t n)
{
	size_t k = strlen(key), i;
	const char *v, *q;
	char quote;

	while (len && (*l == ' ' || *l == '\t')) {
		l++;
		len--;
	}
	if (len <= k || strncmp(l, key, k) != 0)
		return false;
	for (i = k; i < len && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	if (i >= len || l[i] != '=')
		return false;
	for (i++; i < len && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	if (i >= len || (l[i] != '"' && l[i] != '\''))
		return false;
	quote = l[i];
	v = l + i + 1;
	q = memchr(v, quote, len - i - 1);
	if (!q)
		return false;
	attrib_clean(out, n, v, (size_t)(q - v));
	return true;
}

bool attrib_pyproject_parse(const char *buf, size_t len, char *name, size_t nn, char *version,
			    size_t vn)
{
	bool in_project = false, got = false;

	name[0] = '\0';
	version[0] = '\0';
	for (size_t i = 0; i < len;) {
		const char *l = buf + i, *nl = memchr(l, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - l) : len - i, j = 0;

		while (j < ll && (l[j] == ' ' || l[j] == '\t'))
			j++;
		if (j < ll && l[j] == '[') {
			in_project = ll - j >= 9 && strncmp(l + j, "[project]", 9) == 0;
		} else if (in_project) {
			if (!got)
				got = toml_string(l, ll, "name", name, nn) && name[0];
			if (!version[0])
				toml_string(l, ll, "version", version, vn);
		}
		i += ll + 1;
	}
	return got;
}

/* The next character of a canonical Python name (lower case; a run of -_. is one '-'). */
static const char *canon_next(const char *p, char *c)
{
	if (*p == '-' || *p == '_' || *p == '.') {
		while (*p == '-' || *p == '_' || *p == '.')
			p++;
		*c = '-';
		return p;
	}
	*c = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
	return *p ? p + 1 : p;
}

bool attrib_pip_same_name(const char *a, const char *b)
{
	char x, y;

	if (!*a || !*b)
		return false;
	do {
		a = canon_next(a, &x);
		b = canon_next(b, &y);
		if (x != y)
			return false;
	} while (x);
	return true;
}

/* ---- the rules ------------------------------------------------------------------------ */

/* Is chain[i] a frame: a process whose package manager (its parent) put the package there? */
static enum attrib_manager frame_of(const struct attrib_link *chain, size_t n, size_t i)
{
	enum attrib_manager parent;

	if (i + 1 >= n)
		return ATTRIB_PM_NONE;
	parent = chain[i + 1].manager;
	if (chain[i].env.has && (parent == ATTRIB_PM_NPM || parent == ATTRIB_PM_YARN ||
				 parent == ATTRIB_PM_PNPM))
		return parent;
	if (chain[i].pipdir != ATTRIB_PIPDIR_NONE && chain[i].pip_name[0] && parent == ATTRIB_PM_PIP)
		return ATTRIB_PM_PIP;
	return ATTRIB_PM_NONE;
}

/* The package fields of link l (a frame or a claim) into out. */
static void take_package(const struct attrib_link *l, enum attrib_manager m, struct attrib_proc *out)
{
	out->manager = m;
	if (m == ATTRIB_PM_PIP) {
		snprintf(out->package, sizeof(out->package), "%s", l->pip_name);
		snprintf(out->version, sizeof(out->version), "%s", l->pip_version);
		snprintf(out->script, sizeof(out->script), "build");
		return;
	}
	snprintf(out->package, sizeof(out->package), "%s", l->env.package);
	snprintf(out->version, sizeof(out->version), "%s", l->env.version);
	snprintf(out->script, sizeof(out->script), "%s", l->env.script);
}

/* Do two frames name the same package and script? */
static bool same_frame(const struct attrib_proc *a, const struct attrib_proc *b)
{
	return strcmp(a->package, b->package) == 0 && strcmp(a->version, b->version) == 0 &&
	       strcmp(a->script, b->script) == 0;
}

void attrib_decide(const struct attrib_link *chain, size_t n, struct attrib_proc *out)
{
	size_t root = n, inner = n, outer = n;

	out->manager = ATTRIB_PM_NONE;
	out->package[0] = out->version[0] = out->script[0] = out->via[0] = '\0';
	out->claimed = false;
	for (size_t i = 0; i < n; i++)
		if (chain[i].root) {
			root = i;
			break;
		}
	/* Attested frames: below the session's own command, on an unbroken chain to it. */
	for (size_t i = 0; root < n && i < root; i++) {
		if (frame_of(chain, n, i) == ATTRIB_PM_NONE)
			continue;
		if (inner == n)
			inner = i;
		outer = i;
	}
	if (inner < n) {
		take_package(&chain[inner], frame_of(chain, n, inner), out);
		if (outer != inner) {
			struct attrib_proc o = { 0 };

			take_package(&chain[outer], frame_of(chain, n, outer), &o);
			if (!same_frame(&o, out))
				snprintf(out->via, sizeof(out->via), "%s%s%s%s%s",
					 o.script[0] ? o.script : "", o.script[0] ? " of " : "",
					 o.package, o.version[0] ? "@" : "", o.version);
		}
		return;
	}
	/* None attested: the nearest process's own word, shown as a claim. */
	for (size_t i = 0; i < n; i++) {
		if (chain[i].env.has) {
			take_package(&chain[i], ATTRIB_PM_NPM, out);
			out->claimed = true;
			return;
		}
		if (chain[i].pipdir != ATTRIB_PIPDIR_NONE && chain[i].pip_name[0]) {
			take_package(&chain[i], ATTRIB_PM_PIP, out);
			out->claimed = true;
			return;
		}
	}
}
