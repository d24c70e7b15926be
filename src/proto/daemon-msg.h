/*
 * proto/daemon-msg.h — the payload of every message on the daemon's socket
 * (proto/msg.h lists the types), encoded and decoded here and nowhere else:
 * the client (client/, cli/) and the daemon (daemon/) both call these.
 * MSG_RUN, the one request with a run-spec in it, is spec/runspec-wire.h's.
 *
 * An encoder appends to a wire buffer (proto/wire.h); a decoder reads the
 * payload bytes of one frame, checks every field and that nothing is left
 * over, and returns -1 on anything malformed, with every string it made
 * freed. The decoders of what a client sends (hello, attach, stop, watch,
 * winsize) take hostile bytes: each has a fuzz target (tests/fuzz/).
 */
#ifndef BOXY_DAEMON_MSG_H
#define BOXY_DAEMON_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/event.h"
#include "proto/wire.h"

#define DMSG_ID_LEN      16        /* a session id: 16 hex digits */
#define DMSG_BUILD_MAX   64        /* a build id */
#define DMSG_WORDS_MAX   4096      /* words of a reply */

/* MSG_WELCOME (and MSG_STATUS's reply, and the tail of MSG_REFUSE): who the daemon is. */
struct daemon_info {
	char *build;
	uint32_t pid;
	uint64_t started_ms;
	uint32_t sessions;
	uint32_t subscribers;
	char *state_dir;        /* the daemon's state directory (its store), NULL on a refusal */
};

/* MSG_HELLO: u32 protocol, str build. */
void dmsg_encode_hello(struct wbuf *w, uint32_t protocol, const char *build);
int dmsg_decode_hello(const void *p, size_t len, uint32_t *protocol, char **build);

/* MSG_WELCOME: str build, u32 pid, u64 started_ms, u32 sessions, u32 subscribers, str state_dir. */
void dmsg_encode_welcome(struct wbuf *w, const struct daemon_info *info);
int dmsg_decode_welcome(const void *p, size_t len, struct daemon_info *info);
/*
 * MSG_REFUSE: u16 reason, str words, then the welcome's fields. Decoded
 * leniently (a refusal is reported, whatever its shape): reason, words and
 * the daemon's build, pid, start and sessions as far as they are there.
 */
void dmsg_encode_refuse(struct wbuf *w, uint16_t reason, const char *words,
			const struct daemon_info *info);
void dmsg_decode_refuse(const void *p, size_t len, uint16_t *reason, char **words,
			struct daemon_info *info);
/* Free what a decoded daemon_info holds. */
void daemon_info_free(struct daemon_info *info);

/*
 * MSG_ATTACH: str id-prefix, present, lower-case hex. MSG_WATCH: str
 * id-prefix, may be absent (the only running session), any bytes.
 * MSG_STOP: the attach prefix, then u8 kill-now.
 */
void dmsg_encode_target(struct wbuf *w, const char *prefix);
int dmsg_decode_attach(const void *p, size_t len, char **prefix);
int dmsg_decode_watch(const void *p, size_t len, char **prefix);
void dmsg_encode_stop(struct wbuf *w, const char *prefix, bool now);
int dmsg_decode_stop(const void *p, size_t len, char **prefix, bool *now);
/* MSG_RESUME: a frozen session's id prefix; log_only: its later alerts are logged only. */
void dmsg_encode_resume(struct wbuf *w, const char *prefix, bool log_only);
int dmsg_decode_resume(const void *p, size_t len, char **prefix, bool *log_only);
/*
 * MSG_GATE: an ended session's whole id and the --fail-on words its CI gate
 * failed on (doc/ci.md), at most DMSG_GATE_WORDS_MAX bytes; the daemon checks
 * the words with the option's own parser.
 */
#define DMSG_GATE_WORDS_MAX 256
void dmsg_encode_gate(struct wbuf *w, const char *id, const char *words);
int dmsg_decode_gate(const void *p, size_t len, char **id, char **words);

/*
 * MSG_LANG: str language, str locale (common/lang.h). Either may be empty;
 * each is at most LANG_NAME_MAX bytes.
 */
void dmsg_encode_lang(struct wbuf *w, const char *lang, const char *locale);
int dmsg_decode_lang(const void *p, size_t len, char **lang, char **locale);

/* MSG_WINSIZE: u16 rows, u16 cols. */
void dmsg_encode_winsize(struct wbuf *w, uint16_t rows, uint16_t cols);
int dmsg_decode_winsize(const void *p, size_t len, uint16_t *rows, uint16_t *cols);

/* MSG_OK: str words (may be absent). MSG_ERROR: u16 exit code, str words. */
void dmsg_encode_ok(struct wbuf *w, const char *words);
void dmsg_encode_error(struct wbuf *w, uint16_t code, const char *words);
/* The words of an error (NULL when absent), its code in *code; never fails. */
char *dmsg_decode_error(const void *p, size_t len, uint16_t *code);

/* MSG_STARTED: str session id, u8 raw terminal. */
void dmsg_encode_started(struct wbuf *w, const char *id, bool raw_terminal);

/* MSG_EXIT: u32 exit code, str reason (may be absent). */
void dmsg_encode_exit(struct wbuf *w, uint32_t code, const char *reason);
int dmsg_decode_exit(const void *p, size_t len, uint32_t *code, char **reason);

/* MSG_LOSS: u64 events the subscriber lost (decoded leniently: 0 when short). */
void dmsg_encode_loss(struct wbuf *w, uint64_t lost);
uint64_t dmsg_decode_loss(const void *p, size_t len);

/*
 * MSG_EVENT: u64 t_ms, u64 t_rel_ms, str session, kind, verdict, layer,
 * subject, detail, addr, u16 port, str host, sni, u32 ttl, u64 up, down,
 * str what, str told (the detail in the reader's language, common/event.h;
 * may be absent), u8 who (0: not looked for, 1: these follow:) u8 found,
 * u32 pid, str comm, argv0, cmdline, package, version, script, via, u8
 * claimed. Each string is at most its cap below: the encoder cuts a longer
 * one (at a character boundary) so that the decoder (ui/watch.c) never
 * refuses an event for its length — a payload names its own paths, and an
 * alert nobody could read would be an alert the gate never saw.
 */
#define DMSG_EVENT_WORD_MAX 64          /* session, kind, verdict, layer, what, comm */
#define DMSG_EVENT_TEXT_MAX 4096        /* subject, detail, told */
#define DMSG_EVENT_ADDR_MAX 128         /* addr */
#define DMSG_EVENT_NAME_MAX 1024        /* host, sni, argv0, cmdline, package */
#define DMSG_EVENT_WHO_SHORT_MAX 256    /* version, script */
#define DMSG_EVENT_WHO_VIA_MAX 2048     /* via */
void dmsg_encode_event(struct wbuf *w, const struct event *ev);

/* One destination of a MSG_SNAPSHOT. */
struct dmsg_dest {
	const char *name;
	uint64_t conns, denied, addrs, up, down;
};
/*
 * MSG_SNAPSHOT's head: str id, str state, strv argv, u64 elapsed_ms,
 * u64 conns, denied, up, down, u32 n; then n dmsg_encode_dest; then the
 * refusals (proto/refusals.h).
 */
void dmsg_encode_snapshot_head(struct wbuf *w, const char *id, const char *state,
			       char *const *argv, uint64_t elapsed_ms, uint64_t conns,
			       uint64_t denied, uint64_t up, uint64_t down, uint32_t ndests);
void dmsg_encode_dest(struct wbuf *w, const struct dmsg_dest *d);

#endif
