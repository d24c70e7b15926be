/*
 * client/termfilter.c — the terminal output filter (see client/termfilter.h for what is
 * kept and dropped, and doc/daemon.md for why).
 *
 * The parser follows the shape of the DEC VT500 state diagram that xterm and
 * most emulators implement: ground, escape, escape-intermediate, CSI, and
 * the control strings (OSC, DCS, SOS, PM, APC, screen's ESC k), which end at
 * ST (ESC \), at BEL for OSC, or at any ESC, CAN or SUB, exactly where a
 * terminal would leave them. A sequence is collected in a bounded buffer and
 * judged only when its final byte arrives: an allowlisted one is written
 * whole, anything else is dropped whole. A C0 control inside a sequence
 * drops the sequence and is then handled in ground (a terminal would execute
 * it in place; losing the half sequence is the safe side of that).
 *
 * Text must be valid UTF-8 (the terminal is assumed to be a UTF-8 one):
 * invalid bytes, overlong forms, surrogates, and the C1 controls in either
 * form (0x80-0x9f raw, U+0080-U+009F encoded) are dropped, so an 8-bit CSI
 * never reaches a terminal that would honour it.
 */
#include <config.h>

#include <string.h>

#include "client/termfilter.h"

enum {
	ST_GROUND,
	ST_ESC,             /* ESC seen */
	ST_ESC_INTER,       /* ESC and intermediates (0x20-0x2f) */
	ST_CSI,             /* ESC [ and parameters */
	ST_STRING,          /* inside DCS, SOS, PM, APC, ESC k: dropped to its end */
	ST_OSC,             /* inside an OSC string: the same, and BEL ends it */
	ST_STRING_ESC,      /* ESC inside a control string */
};

/* Modes the emitted output turned on, reset by termfilter_finish(). */
enum {
	TF_MODE_CKM = 1u << 0,      /* ?1 application cursor keys */
	TF_MODE_HIDDEN = 1u << 1,   /* ?25l cursor hidden */
	TF_MODE_ALT47 = 1u << 2,
	TF_MODE_ALT1047 = 1u << 3,
	TF_MODE_ALT1049 = 1u << 4,
	TF_MODE_FOCUS = 1u << 5,    /* ?1004 */
	TF_MODE_PASTE = 1u << 6,    /* ?2004 */
	TF_MODE_SYNC = 1u << 7,     /* ?2026: a terminal left in it stops drawing */
	TF_MODE_KEYPAD = 1u << 8,   /* ESC = */
	TF_MODE_SGR = 1u << 9,      /* attributes may be set */
	TF_MODE_MOUSE0 = 1u << 10,  /* ?9, ?1000, ?1002, ?1003, ?1005, ?1006, ?1015, ?1016 */
	/* 1u << 10 .. 1u << 17: the mouse modes */
	TF_MODE_IRM = 1u << 18,     /* ANSI 4: insert mode */
	TF_MODE_LNM = 1u << 19,     /* ANSI 20: Enter sends CR LF */
	TF_MODE_REVERSE = 1u << 20, /* ?5 reverse video */
	TF_MODE_ORIGIN = 1u << 21,  /* ?6 origin mode */
	TF_MODE_NOWRAP = 1u << 22,  /* ?7l autowrap off */
	TF_MODE_MARGINS = 1u << 23, /* a scrolling region (CSI r with parameters) */
	TF_MODE_CHARSET = 1u << 24, /* a designated G0-G3 other than ASCII, or SO */
};

static const unsigned mouse_modes[] = { 9, 1000, 1002, 1003, 1005, 1006, 1015, 1016 };

void termfilter_init(struct termfilter *f)
{
	memset(f, 0, sizeof(*f));
}

void termfilter_set_8bit(struct termfilter *f)
{
	f->legacy = true;
}

/* The mode bit of DEC private mode m, 0 for a mode not tracked. */
static uint32_t dec_mode_bit(unsigned m)
{
	switch (m) {
	case 1:    return TF_MODE_CKM;
	case 5:    return TF_MODE_REVERSE;
	case 6:    return TF_MODE_ORIGIN;
	case 7:    return TF_MODE_NOWRAP;
	case 25:   return TF_MODE_HIDDEN;
	case 47:   return TF_MODE_ALT47;
	case 1047: return TF_MODE_ALT1047;
	case 1049: return TF_MODE_ALT1049;
	case 1004: return TF_MODE_FOCUS;
	case 2004: return TF_MODE_PASTE;
	case 2026: return TF_MODE_SYNC;
	default:
		for (unsigned i = 0; i < sizeof(mouse_modes) / sizeof(mouse_modes[0]); i++)
			if (mouse_modes[i] == m)
				return TF_MODE_MOUSE0 << i;
		return 0;
	}
}

/* DEC private modes (CSI ? Pm h / l) a program may set: drawing, keys, mouse, paste. */
static bool dec_mode_allowed(unsigned m)
{
	switch (m) {
	case 1:     /* application cursor keys */
	case 4:     /* smooth scroll */
	case 5:     /* reverse video */
	case 6:     /* origin mode */
	case 7:     /* autowrap */
	case 8:     /* autorepeat */
	case 12:    /* blinking cursor */
	case 25:    /* cursor visible */
	case 45:    /* reverse wraparound */
	case 47: case 1047: case 1048: case 1049:  /* alternate screen, saved cursor */
	case 1004:  /* focus events */
	case 2004:  /* bracketed paste */
	case 2026:  /* synchronized output */
		return true;
	default:
		return dec_mode_bit(m) != 0;    /* the mouse modes */
	}
}

/*
 * Parse the decimal parameters of a CSI body p[0..n) (no prefix, no
 * intermediates) into v; false when a field is not a plain number (or too
 * many). Empty fields are 0.
 */
static bool csi_numbers(const uint8_t *p, size_t n, unsigned *v, size_t *nv, size_t max)
{
	size_t k = 0;
	unsigned cur = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || p[i] == ';') {
			if (k == max)
				return false;
			v[k++] = cur;
			cur = 0;
			continue;
		}
		if (p[i] < '0' || p[i] > '9')
			return false;
		if (cur > 100000)
			return false;
		cur = cur * 10 + (unsigned)(p[i] - '0');
	}
	*nv = k;
	return true;
}

/*
 * Judge a complete CSI sequence seq[0..n) (ESC [ ... final); true to emit it.
 * Updates the tracked modes when it is emitted.
 */
static bool csi_allowed(struct termfilter *f, const uint8_t *seq, size_t n)
{
	const uint8_t *p = seq + 2;
	size_t len = n - 3, plen, nv;
	uint8_t final = seq[n - 1], prefix = 0;
	unsigned v[32];
	const uint8_t *inter;
	size_t ninter = 0;

	if (len && p[0] >= 0x3c && p[0] <= 0x3f) {
		prefix = p[0];
		p++;
		len--;
	}
	/* parameters [0-9;:]*, then intermediates [ -/]*; anything else is malformed */
	for (plen = 0; plen < len && ((p[plen] >= '0' && p[plen] <= '9') || p[plen] == ';' ||
				      p[plen] == ':'); plen++)
		;
	inter = p + plen;
	for (ninter = 0; plen + ninter < len && inter[ninter] >= 0x20 && inter[ninter] <= 0x2f;
	     ninter++)
		;
	if (plen + ninter != len)
		return false;
	if (ninter) {
		if (prefix || ninter != 1)
			return false;
		if (inter[0] == ' ' && final == 'q')        /* DECSCUSR cursor shape */
			return csi_numbers(p, plen, v, &nv, 1);
		if (inter[0] == '!' && final == 'p' && plen == 0)   /* DECSTR soft reset */
			return true;
		return false;
	}
	if (prefix == '?') {
		if (final == 'J' || final == 'K')           /* selective erase */
			return csi_numbers(p, plen, v, &nv, 1);
		if (final != 'h' && final != 'l')
			return false;
		if (!csi_numbers(p, plen, v, &nv, 32) || plen == 0)
			return false;
		for (size_t i = 0; i < nv; i++)
			if (!dec_mode_allowed(v[i]))
				return false;
		for (size_t i = 0; i < nv; i++) {
			uint32_t bit = dec_mode_bit(v[i]);
			bool on = final == 'h';

			if (v[i] == 25 || v[i] == 7)
				on = !on;   /* the tracked states are "hidden" and "no wrap" */
			if (on)
				f->modes |= bit;
			else
				f->modes &= ~bit;
		}
		return true;
	}
	if (prefix)
		return false;           /* > = < : DA2/DA3, XTVERSION, key modes, ... */
	if (final == 'm') {
		/* SGR: any numbers, with colon sub-parameters (38:2::r:g:b) */
		f->modes |= TF_MODE_SGR;
		return true;
	}
	/* The rest take plain numbers. */
	if (!csi_numbers(p, plen, v, &nv, 32))
		return false;
	switch (final) {
	case '@': case 'A': case 'B': case 'C': case 'D': case 'E': case 'F': case 'G':
	case 'H': case 'I': case 'J': case 'K': case 'L': case 'M': case 'P': case 'S':
	case 'X': case 'Z': case '`': case 'a': case 'b': case 'd': case 'e': case 'f':
	case 'g': case 's': case 'u':
		return true;
	case 'r':
		/* DECSTBM: with parameters a scrolling region, without them the whole screen */
		if (plen)
			f->modes |= TF_MODE_MARGINS;
		else
			f->modes &= ~TF_MODE_MARGINS;
		return true;
	case 'T':
		/* SD; with more parameters it is xterm's mouse highlight tracking */
		return nv <= 1;
	case 'h':
	case 'l':
		/* ANSI modes: insert (4) and newline (20) only; not KAM (2) or SRM (12) */
		if (plen == 0)
			return false;
		for (size_t i = 0; i < nv; i++)
			if (v[i] != 4 && v[i] != 20)
				return false;
		for (size_t i = 0; i < nv; i++) {
			uint32_t bit = v[i] == 4 ? TF_MODE_IRM : TF_MODE_LNM;

			if (final == 'h')
				f->modes |= bit;
			else
				f->modes &= ~bit;
		}
		return true;
	default:
		/* n (DSR), c (DA), t (window ops and reports), x (DECREQTPARM), i (MC), q, y, ... */
		return false;
	}
}

/* Judge ESC [intermediates] final in seq[0..n); true to emit it. */
static bool esc_allowed(struct termfilter *f, const uint8_t *seq, size_t n)
{
	uint8_t final = seq[n - 1];

	if (n == 2) {
		switch (final) {
		case '7': case '8':     /* save / restore cursor */
		case 'D': case 'E': case 'M':   /* index, next line, reverse index */
		case 'H':               /* tab set */
		case 'c':               /* full reset */
			return true;
		case '=':
			f->modes |= TF_MODE_KEYPAD;
			return true;
		case '>':
			f->modes &= ~TF_MODE_KEYPAD;
			return true;
		default:
			/* Z (DECID answers), N/O single shifts, n/o/|/}/~ locking shifts, ... */
			return false;
		}
	}
	if (n != 3)
		return false;
	switch (seq[1]) {
	case '(': case ')': case '*': case '+':    /* designate a 94-set: line drawing, ASCII */
		if (final < 0x30 || final > 0x7e)
			return false;
		if (final != 'B')
			f->modes |= TF_MODE_CHARSET;
		return true;
	case '#':               /* double-size lines, alignment test */
		return final == '3' || final == '4' || final == '5' || final == '6' || final == '8';
	default:
		/* ESC SP F/G (8-bit controls), ESC % (UTF-8 on/off), and the rest */
		return false;
	}
}

static size_t emit(uint8_t *out, size_t o, const uint8_t *p, size_t n)
{
	memcpy(out + o, p, n);
	return o + n;
}

/* C0 controls that may reach the terminal from ground. */
static bool c0_allowed(uint8_t c)
{
	switch (c) {
	case 0x07:  /* BEL */
	case 0x08:  /* BS */
	case 0x09:  /* HT */
	case 0x0a:  /* LF */
	case 0x0b:  /* VT */
	case 0x0c:  /* FF */
	case 0x0d:  /* CR */
	case 0x0e:  /* SO */
	case 0x0f:  /* SI */
		return true;
	default:
		return false;   /* ENQ (answerback), NUL, CAN, SUB, DEL, ... */
	}
}

/* Begin a sequence in seq[] with its first byte(s). */
static void seq_start(struct termfilter *f, uint8_t state)
{
	f->state = state;
	f->seq[0] = 0x1b;
	f->len = 1;
	f->overflow = false;
}

static void seq_add(struct termfilter *f, uint8_t c)
{
	if (f->len < TERMFILTER_SEQ_MAX)
		f->seq[f->len++] = c;
	else
		f->overflow = true;
}

/* Drop the sequence being collected and return to ground. */
static void seq_drop(struct termfilter *f)
{
	f->dropped++;
	f->state = ST_GROUND;
	f->len = 0;
	f->overflow = false;
}

/* One byte in ground: text, a C0 control or the start of a sequence. */
static size_t ground_byte(struct termfilter *f, uint8_t c, uint8_t *out, size_t o)
{
	if (f->utf8_need) {
		bool ok = (c & 0xc0) == 0x80;

		/* the second byte's narrower ranges: no overlongs, surrogates or > U+10FFFF */
		if (ok && f->utf8_len == 1) {
			uint8_t l = f->utf8[0];

			if ((l == 0xe0 && c < 0xa0) || (l == 0xed && c > 0x9f) ||
			    (l == 0xf0 && c < 0x90) || (l == 0xf4 && c > 0x8f))
				ok = false;
			/* U+0080-U+009F, the C1 controls, encoded as C2 80-C2 9F */
			if (l == 0xc2 && c < 0xa0)
				ok = false;
		}
		if (!ok) {
			f->dropped++;
			f->utf8_need = f->utf8_len = 0;
			return ground_byte(f, c, out, o);   /* reconsider c on its own */
		}
		f->utf8[f->utf8_len++] = c;
		if (--f->utf8_need == 0) {
			o = emit(out, o, f->utf8, f->utf8_len);
			f->utf8_len = 0;
		}
		return o;
	}
	if (c >= 0x20 && c < 0x7f) {
		out[o++] = c;
		return o;
	}
	if (c == 0x1b) {
		seq_start(f, ST_ESC);
		return o;
	}
	if (c < 0x20) {
		if (c == 0x0e)
			f->modes |= TF_MODE_CHARSET;    /* SO: G1 in use */
		if (c0_allowed(c))
			out[o++] = c;
		else
			f->dropped++;
		return o;
	}
	if (f->legacy) {
		if (c >= 0xa0)
			out[o++] = c;
		else
			f->dropped++;       /* DEL and the 8-bit C1 controls */
		return o;
	}
	if (c >= 0xc2 && c <= 0xdf)
		f->utf8_need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		f->utf8_need = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		f->utf8_need = 3;
	else {
		/* DEL, 8-bit C1 (0x80-0x9f), stray continuation, C0/C1 leads, F5-FF */
		f->dropped++;
		return o;
	}
	f->utf8[0] = c;
	f->utf8_len = 1;
	return o;
}

/* One byte of any state. */
static size_t filter_byte(struct termfilter *f, uint8_t c, uint8_t *out, size_t o)
{
	switch (f->state) {
	case ST_GROUND:
		return ground_byte(f, c, out, o);

	case ST_ESC:
		if (c == 0x1b) {
			seq_drop(f);
			seq_start(f, ST_ESC);
			return o;
		}
		if (c < 0x20 || c >= 0x7f) {
			seq_drop(f);
			return ground_byte(f, c, out, o);
		}
		seq_add(f, c);
		if (c == '[') {
			f->state = ST_CSI;
		} else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_' || c == 'k') {
			/* OSC, DCS, SOS, PM, APC, screen's title: dropped whole */
			f->state = c == ']' ? ST_OSC : ST_STRING;
			f->len = 0;
			f->dropped++;
		} else if (c >= 0x20 && c <= 0x2f) {
			f->state = ST_ESC_INTER;
		} else {
			if (esc_allowed(f, f->seq, f->len))
				o = emit(out, o, f->seq, f->len);
			else
				f->dropped++;
			f->state = ST_GROUND;
			f->len = 0;
		}
		return o;

	case ST_ESC_INTER:
		if (c == 0x1b) {
			seq_drop(f);
			seq_start(f, ST_ESC);
			return o;
		}
		if (c < 0x20 || c >= 0x7f) {
			seq_drop(f);
			return ground_byte(f, c, out, o);
		}
		seq_add(f, c);
		if (c >= 0x30) {
			if (!f->overflow && esc_allowed(f, f->seq, f->len))
				o = emit(out, o, f->seq, f->len);
			else
				f->dropped++;
			f->state = ST_GROUND;
			f->len = 0;
			f->overflow = false;
		}
		return o;

	case ST_CSI:
		if (c == 0x1b) {
			seq_drop(f);
			seq_start(f, ST_ESC);
			return o;
		}
		if (c < 0x20 || c >= 0x7f) {
			seq_drop(f);
			return ground_byte(f, c, out, o);
		}
		seq_add(f, c);
		if (c >= 0x40) {
			if (!f->overflow && csi_allowed(f, f->seq, f->len))
				o = emit(out, o, f->seq, f->len);
			else
				f->dropped++;
			f->state = ST_GROUND;
			f->len = 0;
			f->overflow = false;
		}
		return o;

	case ST_OSC:
	case ST_STRING:
		/* A terminal ends a control string at CAN, SUB or ESC, an OSC also at BEL. */
		if ((c == 0x07 && f->state == ST_OSC) || c == 0x18 || c == 0x1a)
			f->state = ST_GROUND;
		else if (c == 0x1b)
			f->state = ST_STRING_ESC;
		return o;

	case ST_STRING_ESC:
		/* ESC \ is the string terminator; ESC anything else starts a sequence. */
		f->state = ST_GROUND;
		if (c == '\\')
			return o;
		seq_start(f, ST_ESC);
		return filter_byte(f, c, out, o);

	default:
		f->state = ST_GROUND;
		return o;
	}
}

size_t termfilter_feed(struct termfilter *f, const uint8_t *in, size_t n, uint8_t *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		o = filter_byte(f, in[i], out, o);
	return o;
}

size_t termfilter_finish(struct termfilter *f, uint8_t *out)
{
	static const struct {
		uint32_t bit;
		const char *off;
	} resets[] = {
		{ TF_MODE_SYNC, "\033[?2026l" },
		{ TF_MODE_MOUSE0 << 0, "\033[?9l" },
		{ TF_MODE_MOUSE0 << 1, "\033[?1000l" },
		{ TF_MODE_MOUSE0 << 2, "\033[?1002l" },
		{ TF_MODE_MOUSE0 << 3, "\033[?1003l" },
		{ TF_MODE_MOUSE0 << 4, "\033[?1005l" },
		{ TF_MODE_MOUSE0 << 5, "\033[?1006l" },
		{ TF_MODE_MOUSE0 << 6, "\033[?1015l" },
		{ TF_MODE_MOUSE0 << 7, "\033[?1016l" },
		{ TF_MODE_FOCUS, "\033[?1004l" },
		{ TF_MODE_PASTE, "\033[?2004l" },
		{ TF_MODE_ALT1049, "\033[?1049l" },
		{ TF_MODE_ALT1047, "\033[?1047l" },
		{ TF_MODE_ALT47, "\033[?47l" },
		{ TF_MODE_CKM, "\033[?1l" },
		{ TF_MODE_KEYPAD, "\033>" },
		{ TF_MODE_HIDDEN, "\033[?25h" },
		{ TF_MODE_NOWRAP, "\033[?7h" },
		{ TF_MODE_REVERSE, "\033[?5l" },
		{ TF_MODE_ORIGIN, "\033[?6l" },
		{ TF_MODE_IRM, "\033[4l" },
		{ TF_MODE_LNM, "\033[20l" },
		/* the region reset homes the cursor: keep it where it is */
		{ TF_MODE_MARGINS, "\0337\033[r\0338" },
		{ TF_MODE_CHARSET, "\033(B\033)B\017" },
		{ TF_MODE_SGR, "\033[m" },
	};
	size_t o = 0;

	for (size_t i = 0; i < sizeof(resets) / sizeof(resets[0]); i++) {
		if (f->modes & resets[i].bit)
			o = emit(out, o, (const uint8_t *)resets[i].off, strlen(resets[i].off));
	}
	f->modes = 0;
	return o;
}
