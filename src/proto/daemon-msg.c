/*
 * proto/daemon-msg.c — the daemon protocol's payloads (proto/daemon-msg.h).
 * Each message's fields are written in one encoder and read in one decoder,
 * so the two sides cannot drift; a decoder reads every field, then checks
 * once (wire_done: nothing short, nothing left over).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/lang.h"
#include "common/util.h"
#include "proto/daemon-msg.h"

/* MSG_HELLO: the client's protocol and build. */
void dmsg_encode_hello(struct wbuf *w, uint32_t protocol, const char *build)
{
	wire_put_u32(w, protocol);
	wire_put_str(w, build);
}

/* The shape of a hello and an exit: u32, str within max (required: not absent), nothing more. */
static int get_u32_str(const void *p, size_t len, uint32_t *u, char **s, size_t max,
		       bool required)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*u = wire_get_u32(&r);
	*s = wire_get_str(&r, max);
	if (!wire_done(&r) || (required && !*s)) {
		free(*s);
		*s = NULL;
		return -1;
	}
	return 0;
}

/* A client's hello: a build id must be there, at most DMSG_BUILD_MAX bytes. */
int dmsg_decode_hello(const void *p, size_t len, uint32_t *protocol, char **build)
{
	return get_u32_str(p, len, protocol, build, DMSG_BUILD_MAX, true);
}

/* The welcome's fields, after a refusal's head or alone. */
static void put_info(struct wbuf *w, const struct daemon_info *info)
{
	wire_put_str(w, info->build);
	wire_put_u32(w, info->pid);
	wire_put_u64(w, info->started_ms);
	wire_put_u32(w, info->sessions);
	wire_put_u32(w, info->subscribers);
	wire_put_str(w, info->state_dir);       /* the store it serves: a client checks it */
}

/* MSG_WELCOME: who the daemon is. */
void dmsg_encode_welcome(struct wbuf *w, const struct daemon_info *info)
{
	put_info(w, info);
}

/* A welcome, every field checked. */
int dmsg_decode_welcome(const void *p, size_t len, struct daemon_info *info)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	memset(info, 0, sizeof(*info));
	info->build = wire_get_str(&r, DMSG_BUILD_MAX);
	info->pid = wire_get_u32(&r);
	info->started_ms = wire_get_u64(&r);
	info->sessions = wire_get_u32(&r);
	info->subscribers = wire_get_u32(&r);
	info->state_dir = wire_get_str(&r, 4096);
	return wire_done(&r) ? 0 : -1;
}

/* MSG_REFUSE: why, then who the daemon is. */
void dmsg_encode_refuse(struct wbuf *w, uint16_t reason, const char *words,
			const struct daemon_info *info)
{
	wire_put_u16(w, reason);
	wire_put_str(w, words);
	put_info(w, info);
}

/* A refusal, as far as its fields go (nothing is checked: it is reported, not used). */
void dmsg_decode_refuse(const void *p, size_t len, uint16_t *reason, char **words,
			struct daemon_info *info)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	memset(info, 0, sizeof(*info));
	*reason = wire_get_u16(&r);
	*words = wire_get_str(&r, DMSG_WORDS_MAX);
	info->build = wire_get_str(&r, DMSG_BUILD_MAX);
	info->pid = wire_get_u32(&r);
	info->started_ms = wire_get_u64(&r);
	info->sessions = wire_get_u32(&r);
}

/* Free the strings a decoded welcome or refusal holds. */
void daemon_info_free(struct daemon_info *info)
{
	free(info->build);
	info->build = NULL;
	free(info->state_dir);
	info->state_dir = NULL;
}

/* MSG_ATTACH and MSG_WATCH: the session's id prefix (NULL: the only one, for watch). */
void dmsg_encode_target(struct wbuf *w, const char *prefix)
{
	wire_put_str(w, prefix);
}

/* A session id prefix, present and lower-case hex (it is matched against ids). */
static char *get_hex_prefix(struct rbuf *r)
{
	char *prefix = wire_get_str(r, DMSG_ID_LEN);

	if (prefix && strspn(prefix, "0123456789abcdef") != strlen(prefix)) {
		free(prefix);
		r->failed = true;
		return NULL;
	}
	return prefix;
}

/* An attach request: a hex prefix, nothing else. */
int dmsg_decode_attach(const void *p, size_t len, char **prefix)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*prefix = get_hex_prefix(&r);
	if (!wire_done(&r) || !*prefix) {
		free(*prefix);
		*prefix = NULL;
		return -1;
	}
	return 0;
}

/* A watch request: a prefix, or none. */
int dmsg_decode_watch(const void *p, size_t len, char **prefix)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*prefix = wire_get_str(&r, DMSG_ID_LEN);
	if (!wire_done(&r)) {
		free(*prefix);
		*prefix = NULL;
		return -1;
	}
	return 0;
}

/* MSG_STOP: the prefix and whether to kill at once. */
void dmsg_encode_stop(struct wbuf *w, const char *prefix, bool now)
{
	wire_put_str(w, prefix);
	wire_put_u8(w, now);
}

void dmsg_encode_resume(struct wbuf *w, const char *prefix, bool log_only)
{
	wire_put_str(w, prefix);
	wire_put_u8(w, log_only);
}

/* A resume request: a hex prefix and a flag, 0 or 1. */
int dmsg_decode_resume(const void *p, size_t len, char **prefix, bool *log_only)
{
	struct rbuf r;
	uint8_t flag;

	rbuf_init(&r, p, len);
	*prefix = get_hex_prefix(&r);
	flag = wire_get_u8(&r);
	*log_only = flag == 1;
	if (!wire_done(&r) || !*prefix || flag > 1) {
		free(*prefix);
		*prefix = NULL;
		return -1;
	}
	return 0;
}

/* A stop request: a hex prefix and a flag. */
int dmsg_decode_stop(const void *p, size_t len, char **prefix, bool *now)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*prefix = get_hex_prefix(&r);
	*now = wire_get_u8(&r) != 0;
	if (!wire_done(&r) || !*prefix) {
		free(*prefix);
		*prefix = NULL;
		return -1;
	}
	return 0;
}

/* MSG_GATE: the ended session and the --fail-on words its gate failed on. */
void dmsg_encode_gate(struct wbuf *w, const char *id, const char *words)
{
	wire_put_str(w, id);
	wire_put_str(w, words);
}

/* A gate verdict: a whole session id (16 hex digits) and at most a line of words. */
int dmsg_decode_gate(const void *p, size_t len, char **id, char **words)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*id = get_hex_prefix(&r);
	*words = wire_get_str(&r, DMSG_GATE_WORDS_MAX);
	if (!wire_done(&r) || !*id || strlen(*id) != DMSG_ID_LEN || !*words) {
		free(*id);
		free(*words);
		*id = *words = NULL;
		return -1;
	}
	return 0;
}

/* MSG_LANG: the language this client reads. */
void dmsg_encode_lang(struct wbuf *w, const char *lang, const char *locale)
{
	wire_put_str(w, lang);
	wire_put_str(w, locale);
}

/* A client's language: two names, both there, each within LANG_NAME_MAX. */
int dmsg_decode_lang(const void *p, size_t len, char **lang, char **locale)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*lang = wire_get_str(&r, LANG_NAME_MAX);
	*locale = wire_get_str(&r, LANG_NAME_MAX);
	if (!wire_done(&r) || !*lang || !*locale) {
		free(*lang);
		free(*locale);
		*lang = *locale = NULL;
		return -1;
	}
	return 0;
}

/* MSG_WINSIZE: the terminal's rows and columns. */
void dmsg_encode_winsize(struct wbuf *w, uint16_t rows, uint16_t cols)
{
	wire_put_u16(w, rows);
	wire_put_u16(w, cols);
}

/* A window size: exactly two u16. */
int dmsg_decode_winsize(const void *p, size_t len, uint16_t *rows, uint16_t *cols)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*rows = wire_get_u16(&r);
	*cols = wire_get_u16(&r);
	return wire_done(&r) ? 0 : -1;
}

/* MSG_OK: the words of a success (may be NULL). */
void dmsg_encode_ok(struct wbuf *w, const char *words)
{
	wire_put_str(w, words);
}

/* MSG_ERROR: an exit code and its words. */
void dmsg_encode_error(struct wbuf *w, uint16_t code, const char *words)
{
	wire_put_u16(w, code);
	wire_put_str(w, words);
}

/* An error's code and words, as far as they go. */
char *dmsg_decode_error(const void *p, size_t len, uint16_t *code)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	*code = wire_get_u16(&r);
	return wire_get_str(&r, DMSG_WORDS_MAX);
}

/* MSG_STARTED: the session's id and whether its terminal is raw. */
void dmsg_encode_started(struct wbuf *w, const char *id, bool raw_terminal)
{
	wire_put_str(w, id);
	wire_put_u8(w, raw_terminal);
}

/* MSG_EXIT: the exit code and the reason of a boxy failure. */
void dmsg_encode_exit(struct wbuf *w, uint32_t code, const char *reason)
{
	wire_put_u32(w, code);
	wire_put_str(w, reason);
}

/* An exit: the code, a reason or none, nothing more. */
int dmsg_decode_exit(const void *p, size_t len, uint32_t *code, char **reason)
{
	return get_u32_str(p, len, code, reason, DMSG_WORDS_MAX, false);
}

/* MSG_LOSS: how many events the watcher lost. */
void dmsg_encode_loss(struct wbuf *w, uint64_t lost)
{
	wire_put_u64(w, lost);
}

/* The count of a MSG_LOSS (0 when short). */
uint64_t dmsg_decode_loss(const void *p, size_t len)
{
	struct rbuf r;

	rbuf_init(&r, p, len);
	return wire_get_u64(&r);
}

/* MSG_EVENT: one event, every field. */
/* s, cut to at most max bytes, never inside a UTF-8 sequence. */
static void put_str_cut(struct wbuf *w, const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (n <= max) {
		wire_put_str(w, s);
		return;
	}
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	wire_put_bytes(w, s, n);
}

void dmsg_encode_event(struct wbuf *w, const struct event *ev)
{
	wire_put_u64(w, ev->t_ms);
	wire_put_u64(w, ev->t_rel_ms);
	put_str_cut(w, ev->session, DMSG_EVENT_WORD_MAX);
	put_str_cut(w, ev->kind, DMSG_EVENT_WORD_MAX);
	put_str_cut(w, ev->verdict, DMSG_EVENT_WORD_MAX);
	put_str_cut(w, ev->layer, DMSG_EVENT_WORD_MAX);
	put_str_cut(w, ev->subject, DMSG_EVENT_TEXT_MAX);
	put_str_cut(w, ev->detail, DMSG_EVENT_TEXT_MAX);
	put_str_cut(w, ev->addr, DMSG_EVENT_ADDR_MAX);
	wire_put_u16(w, ev->port);
	put_str_cut(w, ev->host, DMSG_EVENT_NAME_MAX);
	put_str_cut(w, ev->sni, DMSG_EVENT_NAME_MAX);
	wire_put_u32(w, ev->ttl);
	wire_put_u64(w, ev->up);
	wire_put_u64(w, ev->down);
	put_str_cut(w, ev->what, DMSG_EVENT_WORD_MAX);
	put_str_cut(w, ev->told, DMSG_EVENT_TEXT_MAX);
	/* Who made it (common/event.h): a byte saying whether it was looked for, then its fields. */
	wire_put_u8(w, ev->who ? 1 : 0);
	if (ev->who) {
		const struct event_who *who = ev->who;

		wire_put_u8(w, who->found);
		wire_put_u32(w, who->pid);
		put_str_cut(w, who->comm, DMSG_EVENT_WORD_MAX);
		put_str_cut(w, who->argv0, DMSG_EVENT_NAME_MAX);
		put_str_cut(w, who->cmdline, DMSG_EVENT_NAME_MAX);
		put_str_cut(w, who->package, DMSG_EVENT_NAME_MAX);
		put_str_cut(w, who->version, DMSG_EVENT_WHO_SHORT_MAX);
		put_str_cut(w, who->script, DMSG_EVENT_WHO_SHORT_MAX);
		put_str_cut(w, who->via, DMSG_EVENT_WHO_VIA_MAX);
		wire_put_u8(w, who->claimed);
	}
}

/* MSG_SNAPSHOT up to its destinations: the session and its counters. */
void dmsg_encode_snapshot_head(struct wbuf *w, const char *id, const char *state,
			       char *const *argv, uint64_t elapsed_ms, uint64_t conns,
			       uint64_t denied, uint64_t up, uint64_t down, uint32_t ndests)
{
	wire_put_str(w, id);
	wire_put_str(w, state);
	wire_put_strv(w, argv);
	wire_put_u64(w, elapsed_ms);
	wire_put_u64(w, conns);
	wire_put_u64(w, denied);
	wire_put_u64(w, up);
	wire_put_u64(w, down);
	wire_put_u32(w, ndests);
}

/* One destination row of a MSG_SNAPSHOT. */
void dmsg_encode_dest(struct wbuf *w, const struct dmsg_dest *d)
{
	wire_put_str(w, d->name);
	wire_put_u64(w, d->conns);
	wire_put_u64(w, d->denied);
	wire_put_u64(w, d->addrs);
	wire_put_u64(w, d->up);
	wire_put_u64(w, d->down);
}
