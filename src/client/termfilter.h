/*
 * client/termfilter.h — the filter every byte a session writes to the user's
 * terminal passes through (boxy run attached, boxy attach).
 *
 * A pure state machine: fed chunks of bytes in order, it writes what may
 * reach the terminal and keeps its state across chunk boundaries. It keeps
 * what programs need to draw (text as valid UTF-8, the C0 controls of
 * layout, SGR, cursor motion, erase, scrolling regions, the alternate
 * screen, mouse and bracketed-paste modes, cursor shape and visibility) and
 * drops everything else: OSC strings (clipboard, titles, colour queries),
 * DCS/SOS/PM/APC strings, screen's ESC k titles, every sequence that makes
 * the terminal answer (DSR, DA, DECRQSS, DECRQM, window reports, XTVERSION,
 * ENQ, DECID, ...), sequences that change how the terminal parses (S8C1T,
 * DOCS), 8-bit C1 controls, and anything it does not know.
 *
 * The filter emits only whole sequences it recognised and whole UTF-8
 * characters, so after each write the terminal is back in its ground state
 * whatever came before: output is safe from any starting point (a ring
 * replayed mid-sequence, a chunk split anywhere). Output never exceeds the
 * input fed so far. No allocation, no I/O.
 */
#ifndef BOXY_TERMFILTER_H
#define BOXY_TERMFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest control sequence kept; a longer one is dropped whole. */
#define TERMFILTER_SEQ_MAX 128
/* The most termfilter_finish() writes. */
#define TERMFILTER_FINISH_MAX 192

struct termfilter {
	uint8_t state;              /* enum in client/termfilter.c */
	uint8_t utf8_need;          /* continuation bytes still expected */
	uint8_t utf8_len;
	uint8_t utf8[4];
	uint16_t len;               /* bytes of seq[] in use */
	bool overflow;              /* the sequence outgrew seq[]: drop it at its end */
	uint8_t seq[TERMFILTER_SEQ_MAX];
	uint32_t modes;             /* TF_MODE_* left on by what was emitted */
	bool legacy;                /* an 8-bit (not UTF-8) terminal: see termfilter_set_8bit */
	uint64_t dropped;           /* sequences and bytes dropped, for the curious */
};

void termfilter_init(struct termfilter *f);
/*
 * The terminal is not a UTF-8 one (the locale's codeset is not UTF-8): text
 * bytes 0xa0-0xff pass as they are, and every byte 0x80-0x9f is dropped,
 * since such a terminal may take any of them for a C1 control (0x9b CSI)
 * even inside what would be a UTF-8 character.
 */
void termfilter_set_8bit(struct termfilter *f);

/*
 * Filter n bytes of in into out, which must hold at least n + TERMFILTER_SEQ_MAX
 * bytes; returns the number of bytes written to out.
 */
size_t termfilter_feed(struct termfilter *f, const uint8_t *in, size_t n, uint8_t *out);

/*
 * The bytes that turn off the modes the emitted output left on (mouse and
 * focus reports, bracketed paste, application cursor keys and keypad, the
 * alternate screen, a hidden cursor, insert and newline modes, no wrap,
 * reverse video, origin mode, a scrolling region, another character set,
 * attributes), so that nothing the session set keeps typing into the user's
 * shell or garbling its screen after it; written to out (at least
 * TERMFILTER_FINISH_MAX bytes), returns the length. Resets the tracking.
 */
size_t termfilter_finish(struct termfilter *f, uint8_t *out);

#endif
