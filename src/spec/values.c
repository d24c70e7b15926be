/*
 * spec/values.c — validators for every value a user can write: sizes, durations,
 * counts, CPU shares, ports, network and seccomp modes, hostnames with their
 * ports, address ranges, environment entries and copy specs.
 *
 * The same functions serve the command line and the YAML profiles, so a
 * value means the same thing wherever it is written. They are strict on
 * purpose: a sandbox flag that is silently read as something else ("2GB "
 * with a trailing space becoming 2 bytes, "-5s" wrapping to centuries) is a
 * policy the user did not ask for. Every refusal is one line that repeats
 * the offending value and says what was expected; callers prefix the flag
 * or the profile key.
 *
 * Numbers are read digit by digit rather than with strtoull(), which
 * accepts leading blanks and a minus sign and then wraps.
 */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "spec/values.h"
#include "common/util.h"

/* A value shown in an error: long values are cut, unprintable bytes escaped. */
#define QUOTE_MAX 80

/* Quote s for an error message (malloc'd): never lets a control byte reach the terminal. */
static char *quote(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = xmalloc(QUOTE_MAX * 4 + 8);

	out[o++] = '\'';
	for (size_t i = 0; i < n && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
			out[o++] = (char)c;
		} else {
			snprintf(out + o, 5, "\\x%02x", c);
			o += 4;
		}
	}
	if (n > QUOTE_MAX) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '\'';
	out[o] = '\0';
	return out;
}

/* "WHAT 'VALUE'REST" into *err; rest starts with its own separator. Always -1. */
__attribute__((format(printf, 4, 5)))
static int fail(char **err, const char *what, const char *value, const char *rest, ...)
{
	char *q = quote(value), *msg;
	va_list ap;

	va_start(ap, rest);
	msg = xvasprintf(rest, ap);
	va_end(ap);
	set_err(err, "%s%s%s%s", what, *what ? " " : "", q, msg);
	free(msg);
	free(q);
	return -1;
}

/* A decimal number as written: whole part, and the fraction frac/scale. */
struct decimal {
	uint64_t whole;
	uint64_t frac;
	uint64_t scale;         /* 10^(digits after the point); 1 when there is none */
};

/* The most digits after the point we keep; more is noise for every unit we have. */
#define DECIMAL_MAX_FRAC 9

enum decimal_status {
	DECIMAL_OK,
	DECIMAL_NONE,           /* no digit where the number should start */
	DECIMAL_OVERFLOW,       /* whole part does not fit 64 bits */
	DECIMAL_PRECISION,      /* more than DECIMAL_MAX_FRAC digits after the point */
	DECIMAL_POINT,          /* a point with no digit after it */
};

/* Read [0-9]+(.[0-9]+)? at *pp and advance *pp past it. */
static enum decimal_status decimal_read(const char **pp, struct decimal *d)
{
	const char *p = *pp;
	int nfrac = 0;

	d->whole = 0;
	d->frac = 0;
	d->scale = 1;
	if (!isdigit((unsigned char)*p))
		return DECIMAL_NONE;
	while (isdigit((unsigned char)*p)) {
		if (__builtin_mul_overflow(d->whole, 10, &d->whole) ||
		    __builtin_add_overflow(d->whole, (uint64_t)(*p - '0'), &d->whole))
			return DECIMAL_OVERFLOW;
		p++;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return DECIMAL_POINT;
		while (isdigit((unsigned char)*p)) {
			if (++nfrac > DECIMAL_MAX_FRAC)
				return DECIMAL_PRECISION;
			d->frac = d->frac * 10 + (uint64_t)(*p - '0');
			d->scale *= 10;
			p++;
		}
	}
	*pp = p;
	return DECIMAL_OK;
}

/* d × mult, fraction truncated; -1 on overflow. 128-bit so "1.5T" cannot wrap midway. */
static int decimal_times(const struct decimal *d, uint64_t mult, uint64_t *out)
{
	unsigned __int128 v = (unsigned __int128)d->whole * mult +
			      (unsigned __int128)d->frac * mult / d->scale;

	if (v > UINT64_MAX)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Case-insensitive equality of an ASCII unit. */
static bool unit_is(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

struct size_unit {
	const char *name;
	uint64_t mult;
};

/* Binary throughout: "M" and "MB" both mean MiB, as they do to every tool that sizes memory. */
static const struct size_unit size_units[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1ULL << 10 }, { "kb", 1ULL << 10 }, { "kib", 1ULL << 10 },
	{ "m", 1ULL << 20 }, { "mb", 1ULL << 20 }, { "mib", 1ULL << 20 },
	{ "g", 1ULL << 30 }, { "gb", 1ULL << 30 }, { "gib", 1ULL << 30 },
	{ "t", 1ULL << 40 }, { "tb", 1ULL << 40 }, { "tib", 1ULL << 40 },
};

#define SIZE_EXPECTED N_("a number followed by B, K, KiB, M, MiB, G, GiB, T or TiB")

int parse_size(const char *s, uint64_t *out, char **err)
{
	const char *p = s;
	const struct size_unit *unit = NULL;
	struct decimal d;
	uint64_t v;

	if (*s == '-')
		return fail(err, _("size"), s, _(" is negative; expected %s"), _(SIZE_EXPECTED));
	switch (decimal_read(&p, &d)) {
	case DECIMAL_OK:
		break;
	case DECIMAL_OVERFLOW:
		return fail(err, _("size"), s, _(" is too large"));
	case DECIMAL_PRECISION:
		return fail(err, _("size"), s, _(" has too many decimal places (at most %d)"),
			    DECIMAL_MAX_FRAC);
	default:
		return fail(err, _("size"), s, _(": expected %s (\"2GiB\", \"512M\")"),
			    _(SIZE_EXPECTED));
	}
	for (size_t i = 0; i < ARRAY_SIZE(size_units); i++)
		if (unit_is(p, size_units[i].name))
			unit = &size_units[i];
	if (!unit)
		return fail(err, _("size"), s, _(": unknown unit; expected %s"), _(SIZE_EXPECTED));
	if (unit->mult == 1 && d.frac != 0)
		return fail(err, _("size"), s,
			    _(" is a fraction of a byte; give a unit (\"1.5G\")"));
	if (decimal_times(&d, unit->mult, &v) < 0)
		return fail(err, _("size"), s, _(" is too large"));
	if (v == 0)
		return fail(err, _("size"), s, _(" must be greater than zero"));
	*out = v;
	return 0;
}

struct duration_unit {
	const char *name;
	uint64_t ms;
};

/* Longest names first so that "ms" is not read as "m" followed by garbage. */
static const struct duration_unit duration_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 3600 * 1000 },
	{ "d", 24ULL * 3600 * 1000 },
};

#define DURATION_EXPECTED N_("a number with ms, s, m, h or d (\"10m\", \"90s\", \"1h30m\")")

int parse_duration(const char *s, uint64_t *out_ms, char **err)
{
	const char *p = s;
	uint64_t total = 0, last_unit = UINT64_MAX;

	if (*s == '-')
		return fail(err, _("duration"), s, _(" is negative; expected %s"),
			    _(DURATION_EXPECTED));
	do {
		const struct duration_unit *unit = NULL;
		struct decimal d;
		uint64_t part;
		size_t ulen = 0;

		switch (decimal_read(&p, &d)) {
		case DECIMAL_OK:
			break;
		case DECIMAL_OVERFLOW:
			return fail(err, _("duration"), s, _(" is too long"));
		case DECIMAL_PRECISION:
			return fail(err, _("duration"), s, _(" has too many decimal places"));
		default:
			return fail(err, _("duration"), s, _(": expected %s"),
				    _(DURATION_EXPECTED));
		}
		while (isalpha((unsigned char)p[ulen]))
			ulen++;
		if (ulen == 0 && *p == '\0' && last_unit == UINT64_MAX) {
			/* a bare number is seconds, but only alone: "1h30" is a typo, not 30s */
			unit = &duration_units[1];
		} else {
			for (size_t i = 0; i < ARRAY_SIZE(duration_units); i++)
				if (strlen(duration_units[i].name) == ulen &&
				    strncmp(p, duration_units[i].name, ulen) == 0)
					unit = &duration_units[i];
			if (!unit)
				return fail(err, _("duration"), s,
					    _(": missing or unknown unit; expected %s"),
					    _(DURATION_EXPECTED));
		}
		if (unit->ms >= last_unit)
			return fail(err, _("duration"), s,
				    _(": units must go from largest to smallest, "
				    "each once (\"1h30m\")"));
		last_unit = unit->ms;
		p += ulen;
		if (decimal_times(&d, unit->ms, &part) < 0 ||
		    __builtin_add_overflow(total, part, &total))
			return fail(err, _("duration"), s, _(" is too long"));
	} while (*p != '\0');
	if (total == 0)
		return fail(err, _("duration"), s, _(" must be at least 1ms"));
	*out_ms = total;
	return 0;
}

/* Digits only, no sign, no blanks; -1 when s is not that or exceeds max. */
static int read_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

int parse_count(const char *s, uint64_t *out, char **err)
{
	uint64_t v;

	if (read_uint(s, VALUE_COUNT_MAX, &v) < 0 || v == 0)
		return fail(err, _("count"), s, _(": expected a whole number from 1 to %llu"),
			    (unsigned long long)VALUE_COUNT_MAX);
	*out = v;
	return 0;
}

int parse_cpus(const char *s, uint32_t *out_milli, char **err)
{
	const char *p = s;
	struct decimal d;
	uint64_t v;

	if (decimal_read(&p, &d) != DECIMAL_OK || *p != '\0')
		return fail(err, _("cpus"), s, _(": expected a number of CPUs (\"2\", \"0.5\")"));
	if (d.scale > 1000)
		return fail(err, _("cpus"), s, _(": at most three decimal places"));
	if (decimal_times(&d, 1000, &v) < 0 || v > VALUE_CPUS_MAX_MILLI)
		return fail(err, _("cpus"), s, _(": at most %u"), VALUE_CPUS_MAX_MILLI / 1000);
	if (v == 0)
		return fail(err, _("cpus"), s, _(" must be greater than zero"));
	*out_milli = (uint32_t)v;
	return 0;
}

int parse_port(const char *s, uint16_t *out, char **err)
{
	uint64_t v;

	if (read_uint(s, 65535, &v) < 0 || v == 0)
		return fail(err, _("port"), s, _(": expected a number from 1 to 65535"));
	*out = (uint16_t)v;
	return 0;
}

int parse_net_mode(const char *s, enum net_mode *out, char **err)
{
	static const enum net_mode modes[] = { NET_PUBLIC, NET_ALLOWLIST, NET_NONE };

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		if (strcmp(s, net_mode_name(modes[i])) == 0) {
			*out = modes[i];
			return 0;
		}
	}
	return fail(err, _("network mode"), s, _(": expected public, allowlist or none"));
}

int parse_seccomp_mode(const char *s, enum seccomp_mode *out, char **err)
{
	if (strcmp(s, "strict") == 0)
		*out = SECCOMP_STRICT;
	else if (strcmp(s, "compat") == 0)
		*out = SECCOMP_COMPAT;
	else
		return fail(err, _("seccomp mode"), s, _(": expected strict or compat"));
	return 0;
}

int parse_onoff(const char *s, enum onoff *out, char **err)
{
	if (strcmp(s, "on") == 0)
		*out = ONOFF_ON;
	else if (strcmp(s, "off") == 0)
		*out = ONOFF_OFF;
	else
		return fail(err, _("value"), s, _(": expected on or off"));
	return 0;
}

/* The gate's words, in their canonical order. */
static const struct { const char *word; unsigned bit; } fail_on_words[] = {
	{ "deny", FAIL_ON_DENY },
	{ "new-destination", FAIL_ON_NEW },
	{ "tripwire", FAIL_ON_TRIPWIRE },
	{ "alert", FAIL_ON_ALERT },
};

int parse_fail_on(const char *s, unsigned *out, char **err)
{
	unsigned bits = 0;
	const char *p = s;

	if (!*s)
		return set_err(err, _("empty; expected a comma list of deny, "
				      "new-destination, tripwire, alert"));
	for (;;) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < ARRAY_SIZE(fail_on_words); i++)
			if (strlen(fail_on_words[i].word) == n &&
			    strncmp(p, fail_on_words[i].word, n) == 0)
				break;
		if (i < ARRAY_SIZE(fail_on_words)) {
			bits |= fail_on_words[i].bit;
		} else {
			char *word = xstrndup(p, n);
			char *clean = text_sanitize(word);
			int rc = set_err(err, _("unknown word '%s'; expected deny, "
						"new-destination, tripwire, alert"), clean);

			free(clean);
			free(word);
			return rc;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	*out = bits;
	return 0;
}

char *fail_on_text(unsigned bits)
{
	char buf[64] = "";

	for (size_t i = 0; i < ARRAY_SIZE(fail_on_words); i++)
		if (bits & fail_on_words[i].bit) {
			if (*buf)
				strcat(buf, ",");
			strcat(buf, fail_on_words[i].word);
		}
	return xstrdup(buf);
}

/* ---- --on-alert ------------------------------------------------------------------ */

static const char *const react_action_names[] = {
	[REACT_UNSET] = "unset", [REACT_LOG] = "log", [REACT_FREEZE] = "freeze",
	[REACT_STOP] = "stop",
};
static const char *const react_kind_names[REACT_NKINDS] = {
	[REACT_ALERT] = "alert", [REACT_TRIPWIRE] = "tripwire", [REACT_DNS] = "dns",
	[REACT_GIT] = "git", [REACT_DENIALS] = "denials",
};

const char *react_action_name(enum react_action a)
{
	return (unsigned)a < ARRAY_SIZE(react_action_names) ? react_action_names[a] : "unset";
}

const char *react_kind_name(enum react_kind k)
{
	return (unsigned)k < REACT_NKINDS ? react_kind_names[k] : "alert";
}

/* The action word p[0..n), or REACT_UNSET. */
static enum react_action react_action_word(const char *p, size_t n)
{
	for (size_t i = REACT_LOG; i < ARRAY_SIZE(react_action_names); i++)
		if (strlen(react_action_names[i]) == n && strncmp(p, react_action_names[i], n) == 0)
			return (enum react_action)i;
	return REACT_UNSET;
}

/* One line for a word that is not what was expected (the word sanitised: it is shown). */
static int react_bad_word(char **err, const char *what, const char *p, size_t n,
			  const char *expected)
{
	char *word = xstrndup(p, n), *clean = text_sanitize(word);
	int rc = set_err(err, _("unknown %s '%s'; expected %s"), what, clean, expected);

	free(clean);
	free(word);
	return rc;
}

int parse_on_alert(const char *s, struct react_policy *out, char **err)
{
	static const char actions[] = "log, freeze or stop";
	static const char kinds[] = "alert, tripwire, dns, git or denials";
	struct react_policy p = *out;
	const char *item = s;

	if (!*s)
		return set_err(err, _("empty; expected ACTION or KIND=ACTION, comma-separated "
				      "(ACTION: log, freeze, stop)"));
	for (;;) {
		size_t n = strcspn(item, ","), kn;
		const char *eq = memchr(item, '=', n);
		enum react_action a;

		if (!eq) {
			/* A bare action: every kind, the ones named before included. */
			a = react_action_word(item, n);
			if (a == REACT_UNSET)
				return react_bad_word(err, _("action"), item, n, actions);
			for (size_t k = 0; k < REACT_NKINDS; k++)
				p.act[k] = (uint8_t)a;
		} else {
			size_t k;

			kn = (size_t)(eq - item);
			for (k = 0; k < REACT_NKINDS; k++)
				if (strlen(react_kind_names[k]) == kn &&
				    strncmp(item, react_kind_names[k], kn) == 0)
					break;
			if (k == REACT_NKINDS)
				return react_bad_word(err, _("alert kind"), item, kn, kinds);
			a = react_action_word(eq + 1, n - kn - 1);
			if (a == REACT_UNSET)
				return react_bad_word(err, _("action"), eq + 1, n - kn - 1, actions);
			p.act[k] = (uint8_t)a;
		}
		if (!item[n])
			break;
		item += n + 1;
	}
	*out = p;
	return 0;
}

char *on_alert_text(const struct react_policy *p)
{
	char buf[160] = "";
	bool all = true, any = false;

	for (size_t k = 0; k < REACT_NKINDS; k++) {
		all = all && p->act[k] != REACT_UNSET;
		any = any || p->act[k] != REACT_UNSET;
	}
	if (!any)
		return NULL;
	/* Every kind set: alert's action bare (it sets them all), then those that differ. */
	if (all)
		strcat(buf, react_action_name(p->act[REACT_ALERT]));
	for (size_t k = 0; k < REACT_NKINDS; k++) {
		if (p->act[k] == REACT_UNSET || (all && p->act[k] == p->act[REACT_ALERT]))
			continue;
		if (*buf)
			strcat(buf, ",");
		strcat(buf, react_kind_names[k]);
		strcat(buf, "=");
		strcat(buf, react_action_name(p->act[k]));
	}
	return xstrdup(buf);
}

bool on_alert_may_freeze(const char *text)
{
	struct react_policy p = { 0 };
	char *err = NULL;
	bool yes = false;

	if (!text || parse_on_alert(text, &p, &err) < 0) {
		free(err);
		return false;
	}
	for (size_t k = 0; k < REACT_NKINDS; k++)
		yes = yes || react_policy_action(&p, (enum react_kind)k) == REACT_FREEZE;
	return yes;
}

enum react_action react_policy_action(const struct react_policy *p, enum react_kind k)
{
	if ((unsigned)k < REACT_NKINDS && p->act[k] != REACT_UNSET)
		return (enum react_action)p->act[k];
	if (p->act[REACT_ALERT] != REACT_UNSET)
		return (enum react_action)p->act[REACT_ALERT];
	return REACT_LOG;
}

#define HOST_MAX 253
#define LABEL_MAX 63
#define IP_NOT_HOST N_(" is an IP address, not a hostname; use --allow-cidr for addresses")

/* True when name (lower-case, no trailing dot) looks like an address: last label numeric. */
static bool host_looks_numeric(const char *name)
{
	const char *last = strrchr(name, '.');
	struct in_addr a4;

	if (inet_pton(AF_INET, name, &a4) == 1)
		return true;
	last = last ? last + 1 : name;
	if (*last == '\0')
		return false;
	for (; *last; last++)
		if (!isdigit((unsigned char)*last))
			return false;
	return true;
}

/* Check RFC 1123 labels of name (already lower-cased, wildcard removed). */
static int host_check_labels(const char *whole, const char *name, char **err)
{
	const char *label = name;

	for (;;) {
		const char *end = strchr(label, '.');
		size_t len = end ? (size_t)(end - label) : strlen(label);

		if (len == 0)
			return fail(err, _("host"), whole,
				    _(" has an empty label (\"..\" or a leading "
				    "'.')"));
		if (len > LABEL_MAX)
			return fail(err, _("host"), whole,
				    _(" has a label longer than %d characters"),
				    LABEL_MAX);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)label[i];

			if (c == '*')
				return fail(err, _("host"), whole,
					    _(": '*' is only allowed as the whole "
					    "first label (\"*.example.com\")"));
			if (!(islower(c) || isdigit(c) || c == '-')) {
				char shown[8];

				if (c >= 0x20 && c < 0x7f)
					snprintf(shown, sizeof(shown), "'%c'", c);
				else
					snprintf(shown, sizeof(shown), "\\x%02x", c);
				return fail(err, _("host"), whole,
					    _(": %s is not allowed in a hostname "
					    "(letters, digits, '-' and '.')"), shown);
			}
		}
		if (label[0] == '-' || label[len - 1] == '-')
			return fail(err, _("host"), whole,
				    _(": a label cannot start or end with '-'"));
		if (!end)
			return 0;
		label = end + 1;
	}
}

/* "443,8443" → ports, refusing empty entries and duplicates. */
static int host_parse_ports(const char *whole, const char *list, struct host_spec *h, char **err)
{
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char buf[8];
		uint64_t v;

		if (len == 0)
			return fail(err, _("host"), whole, _(" has an empty port; expected "
				    "HOST:PORT[,PORT...]"));
		if (len >= sizeof(buf))
			return fail(err, _("host"), whole, _(": port out of range (1-65535)"));
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (read_uint(buf, 65535, &v) < 0 || v == 0)
			return fail(err, _("host"), whole,
				    _(": ports must be numbers from 1 to 65535"));
		for (size_t i = 0; i < h->nports; i++)
			if (h->ports[i] == v)
				return fail(err, _("host"), whole, _(" lists port %s twice"), buf);
		*(uint16_t *)xappend(&h->ports, &h->nports, sizeof(uint16_t)) = (uint16_t)v;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int parse_host_spec(const char *s, struct host_spec *out, char **err)
{
	struct host_spec h = { 0 };
	const char *colon = strchr(s, ':');
	struct in6_addr a6;
	char *name;
	size_t len;

	if (*s == '\0')
		return fail(err, _("host"), s, _(" is empty; expected HOST[:PORT[,PORT...]]"));
	if (s[0] == '[' || (colon && strchr(colon + 1, ':'))) {
		/* two colons can only be an IPv6 literal, bracketed or not */
		char *bare = xstrdup(s + (s[0] == '['));
		char *close = strchr(bare, ']');
		bool is_v6;

		if (close)
			*close = '\0';
		is_v6 = inet_pton(AF_INET6, bare, &a6) == 1;
		free(bare);
		if (is_v6 || s[0] == '[')
			return fail(err, _("host"), s, _(IP_NOT_HOST));
		return fail(err, _("host"), s, _(": expected HOST[:PORT[,PORT...]]"));
	}
	len = colon ? (size_t)(colon - s) : strlen(s);
	name = xstrndup(s, len);
	for (char *c = name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (len > 0 && name[len - 1] == '.')
		name[--len] = '\0';
	if (len == 0) {
		free(name);
		return fail(err, _("host"), s, _(" has no name; expected HOST[:PORT[,PORT...]]"));
	}
	if (len > HOST_MAX) {
		free(name);
		return fail(err, _("host"), s, _(" is longer than %d characters"), HOST_MAX);
	}
	if (host_looks_numeric(name)) {
		free(name);
		return fail(err, _("host"), s, _(IP_NOT_HOST));
	}
	if (host_check_labels(s, strncmp(name, "*.", 2) == 0 ? name + 2 : name, err) < 0) {
		free(name);
		return -1;
	}
	h.name = name;
	if (colon && host_parse_ports(s, colon + 1, &h, err) < 0) {
		host_spec_free(&h);
		return -1;
	}
	*out = h;
	return 0;
}

/* addr with the bits past prefix cleared into masked; true when that changed nothing. */
static bool cidr_mask(const uint8_t addr[16], unsigned bits, unsigned prefix, uint8_t masked[16])
{
	memcpy(masked, addr, 16);
	for (unsigned i = 0; i < bits / 8; i++) {
		unsigned first = i * 8;         /* prefix bits that fall in byte i: keep them */
		unsigned keep = prefix >= first + 8 ? 8 : prefix > first ? prefix - first : 0;

		masked[i] &= (uint8_t)(0xff00u >> keep);
	}
	return memcmp(masked, addr, bits / 8) == 0;
}

int parse_cidr(const char *s, struct cidr *out, char **err)
{
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	char *addr = xstrndup(s, alen);
	struct cidr c = { 0 };
	uint8_t masked[16];
	unsigned bits;
	uint64_t prefix;

	if (strchr(addr, ':')) {
		c.family = AF_INET6;
		bits = 128;
	} else {
		c.family = AF_INET;
		bits = 32;
	}
	if (inet_pton(c.family, addr, c.addr) != 1) {
		free(addr);
		return fail(err, _("address range"), s, _(": expected an IPv4 or IPv6 prefix "
			    "(\"10.0.0.0/8\", \"fd00::/8\")"));
	}
	free(addr);
	if (slash) {
		if (read_uint(slash + 1, bits, &prefix) < 0)
			return fail(err, _("address range"), s,
				    _(": prefix length must be a number "
				    "from 1 to %u"), bits);
	} else {
		prefix = bits;
	}
	if (prefix == 0)
		return fail(err, _("address range"), s,
			    _(" would lift the private-address denylist "
			    "for every address; name the ranges you need"));
	if (!cidr_mask(c.addr, bits, (unsigned)prefix, masked)) {
		char text[INET6_ADDRSTRLEN];

		inet_ntop(c.family, masked, text, sizeof(text));
		return fail(err, _("address range"), s,
			    _(" has host bits set; did you mean %s/%u?"), text,
			    (unsigned)prefix);
	}
	c.prefix = (uint8_t)prefix;
	c.text = xstrdup(s);
	*out = c;
	return 0;
}

/* [A-Za-z_][A-Za-z0-9_]* over s[0..len). */
static bool env_name_ok(const char *s, size_t len)
{
	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

int parse_env_spec(const char *s, struct env_spec *out, char **err)
{
	const char *eq = strchr(s, '=');
	size_t len = eq ? (size_t)(eq - s) : strlen(s);

	if (!env_name_ok(s, len))
		goto bad;
	out->name = xstrndup(s, len);
	out->value = eq ? xstrdup(eq + 1) : NULL;
	return 0;
bad:
	{
		char *name = xstrndup(s, len);

		fail(err, _("environment variable name"), name, _(": expected a letter or '_' "
		     "followed by letters, digits or '_'"));
		free(name);
		return -1;
	}
}

int parse_copy_spec(const char *s, enum mount_kind kind, struct mount_spec *out, char **err)
{
	const char *colon = strchr(s, ':');
	size_t slen = colon ? (size_t)(colon - s) : strlen(s);

	if (kind != MOUNT_COPY && kind != MOUNT_COPY_RO)
		fatal("parse_copy_spec: kind %d is not a copy", (int)kind);
	if (slen == 0)
		return fail(err, _("copy"), s, _(" has no source file; expected SRC[:DST]"));
	if (colon && colon[1] == '\0')
		return fail(err, _("copy"), s, _(" has an empty destination; expected SRC[:DST]"));
	if (colon && colon[1] != '/')
		return fail(err, _("copy"), s,
			    _(": the destination must be an absolute path inside "
			    "the sandbox"));
	out->kind = kind;
	out->src = xstrndup(s, slen);
	out->dst = colon ? xstrdup(colon + 1) : NULL;
	return 0;
}

/* ---- typed checks (values already parsed, e.g. decoded from the wire) ------------ */

int check_host_spec(const struct host_spec *h, char **err)
{
	const char *name = h->name;
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len > HOST_MAX || name[len - 1] == '.')
		return set_err(err, "host name empty, too long or not canonical");
	for (const char *c = name; *c; c++)
		if (isupper((unsigned char)*c))
			return set_err(err, "host name not lower-case");
	if (host_looks_numeric(name))
		return set_err(err, "host name is an address");
	if (host_check_labels(name, strncmp(name, "*.", 2) == 0 ? name + 2 : name, err) < 0)
		return -1;
	for (size_t i = 0; i < h->nports; i++) {
		if (h->ports[i] == 0)
			return set_err(err, "host port 0");
		for (size_t j = 0; j < i; j++)
			if (h->ports[j] == h->ports[i])
				return set_err(err, "host port twice");
	}
	return 0;
}

int check_cidr(const struct cidr *c, char **err)
{
	unsigned bits = c->family == AF_INET ? 32 : c->family == AF_INET6 ? 128 : 0;
	uint8_t masked[16];

	if (bits == 0)
		return set_err(err, "address family");
	if (c->prefix == 0 || c->prefix > bits)
		return set_err(err, "prefix length");
	if (bits == 32 && memcmp(c->addr + 4, (const uint8_t[12]){ 0 }, 12) != 0)
		return set_err(err, "IPv4 address longer than 4 bytes");
	if (!cidr_mask(c->addr, bits, c->prefix, masked))
		return set_err(err, "host bits set");
	if (!c->text || !c->text[0])
		return set_err(err, "no text");
	for (const char *t = c->text; *t; t++)
		if (!(isxdigit((unsigned char)*t) || *t == '.' || *t == ':' || *t == '/'))
			return set_err(err, "text is not an address range");
	return 0;
}

int check_env_name(const char *name, char **err)
{
	if (!name || !env_name_ok(name, strlen(name)))
		return set_err(err, "environment variable name");
	return 0;
}
