/*
 * test-termfilter.c — the terminal output filter: every family it keeps
 * passes byte for byte, every family it drops is gone, each row fed whole
 * and split at every byte, and hostile input (overlong sequences, garbage,
 * unterminated strings, 8-bit C1) stays bounded and never leaves the
 * terminal in the middle of a sequence.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/termfilter.h"

/* Feed in[0..n) to a fresh filter in chunks of `split` bytes (0: whole); out is malloc'd. */
static size_t run_split(const uint8_t *in, size_t n, size_t split, uint8_t **out)
{
	struct termfilter f;
	size_t o = 0;
	uint8_t *buf = malloc(n + 1), *tmp = malloc(n + TERMFILTER_SEQ_MAX + 1);

	assert_non_null(buf);
	assert_non_null(tmp);
	termfilter_init(&f);
	if (split == 0)
		split = n ? n : 1;
	for (size_t i = 0; i < n; i += split) {
		size_t k = n - i < split ? n - i : split;
		size_t got = termfilter_feed(&f, in + i, k, tmp);

		assert_true(got <= k + TERMFILTER_SEQ_MAX);
		assert_true(o + got <= i + k);  /* never more than was fed */
		memcpy(buf + o, tmp, got);
		o += got;
	}
	free(tmp);
	*out = buf;
	return o;
}

/* Feed s whole and split at every byte (and at each position once); all must give want. */
static void expect(const char *s, const char *want)
{
	size_t n = strlen(s), wn = strlen(want);

	for (size_t split = 0; split <= n; split++) {
		uint8_t *out;
		size_t o = run_split((const uint8_t *)s, n, split, &out);

		if (o != wn || memcmp(out, want, wn) != 0) {
			print_error("input \"%s\" split %zu: got %zu bytes \"%.*s\", want \"%s\"\n",
				    s, split, o, (int)o, (char *)out, want);
			free(out);
			fail();
		}
		free(out);
	}
	/* Two-chunk cut at every position. */
	for (size_t cut = 0; cut <= n; cut++) {
		struct termfilter f;
		uint8_t out[1024];
		size_t o;

		termfilter_init(&f);
		o = termfilter_feed(&f, (const uint8_t *)s, cut, out);
		o += termfilter_feed(&f, (const uint8_t *)s + cut, n - cut, out + o);
		if (o != wn || memcmp(out, want, wn) != 0) {
			print_error("input \"%s\" cut at %zu: got \"%.*s\"\n", s, cut, (int)o,
				    (char *)out);
			fail();
		}
	}
}

struct row {
	const char *what;
	const char *in;
};

/* Kept byte for byte. */
static const struct row kept[] = {
	{ "text", "hello, world" },
	{ "utf-8 two, three, four bytes", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	{ "layout controls", "a\tb\r\nc\bd\x07" "e\x0b\x0c" },
	{ "charset shifts", "\x0e" "q" "\x0f" },
	{ "SGR", "\033[0m\033[1;31m\033[38;5;208m\033[38;2;1;2;3m\033[m" },
	{ "SGR colon subparameters", "\033[38:2::10:20:30m\033[4:3m" },
	{ "cursor motion", "\033[A\033[2B\033[3C\033[4D\033[5E\033[6F\033[7G\033[1;1H\033[3;4f" },
	{ "erase", "\033[J\033[2J\033[K\033[1K\033[3X\033[?2J\033[?K" },
	{ "insert/delete", "\033[2@\033[3L\033[4M\033[5P" },
	{ "scroll", "\033[1;20r\033[3S\033[2T\033[r" },
	{ "position", "\033[5`\033[2a\033[3d\033[4e\033[2b" },
	{ "tabs", "\033H\033[g\033[3g\033[2I\033[Z" },
	{ "save/restore cursor", "\0337\0338\033[s\033[u" },
	{ "index", "\033D\033E\033M" },
	{ "alternate screen", "\033[?1049h\033[?1049l\033[?47h\033[?47l\033[?1047h\033[?1047l" },
	{ "bracketed paste", "\033[?2004h\033[?2004l" },
	{ "mouse modes", "\033[?1000h\033[?1002h\033[?1003h\033[?1006h\033[?1015h"
	  "\033[?1006l\033[?1003l\033[?1002l\033[?1000l\033[?1015l" },
	{ "cursor show/hide", "\033[?25l\033[?25h" },
	{ "wrap modes", "\033[?7l\033[?7h\033[?45h\033[?45l" },
	{ "cursor keys and keypad", "\033[?1h\033=\033[?1l\033>" },
	{ "several modes at once", "\033[?1049;1h\033[?1;1049l" },
	{ "ANSI insert mode", "\033[4h\033[4l\033[20l" },
	{ "cursor shape", "\033[2 q\033[ q" },
	{ "soft and hard reset", "\033[!p\033c" },
	{ "line drawing charset", "\033(0lqk\033(B\033)0" },
	{ "double-size lines", "\033#3\033#4\033#5\033#6\033#8" },
	{ "synchronized output", "\033[?2026h\033[?2026l" },
	{ "focus events", "\033[?1004h\033[?1004l" },
};

/* Dropped whole: each row is surrounded by text, and only the text remains. */
static const struct row dropped[] = {
	{ "OSC 52 clipboard, BEL", "\033]52;c;Y3VybCBldmlsIHwgc2g=\007" },
	{ "OSC 52 clipboard, ST", "\033]52;p;Y3VybA==\033\\" },
	{ "OSC 0 title", "\033]0;pwned\007" },
	{ "OSC 1 icon", "\033]1;pwned\033\\" },
	{ "OSC 2 title", "\033]2;pwned\007" },
	{ "OSC 4 colour query", "\033]4;1;?\007" },
	{ "OSC 10 query", "\033]10;?\007" },
	{ "OSC 11 query", "\033]11;?\033\\" },
	{ "OSC 8 hyperlink", "\033]8;;http://evil.example/\033\\" },
	{ "OSC 7 cwd", "\033]7;file:///etc\007" },
	{ "OSC 1337 (iTerm2)", "\033]1337;File=inline=1:AAAA\007" },
	{ "OSC cancelled by CAN", "\033]52;c;AAAA\030" },
	{ "screen title", "\033kpwned\033\\" },
	{ "DCS DECRQSS", "\033P$qm\033\\" },
	{ "DCS tmux passthrough", "\033Ptmux;\033\033]52;c;AAAA\007\033\\" },
	{ "DCS XTGETTCAP", "\033P+q544e\033\\" },
	{ "DCS sixel", "\033Pq#0;2;0;0;0~~\033\\" },
	{ "APC", "\033_Gf=100;AAAA\033\\" },
	{ "PM", "\033^privacy\033\\" },
	{ "SOS", "\033Xstart of string\033\\" },
	{ "DSR status", "\033[5n" },
	{ "DSR cursor position", "\033[6n" },
	{ "DECXCPR", "\033[?6n" },
	{ "DSR private", "\033[?15n\033[?25n\033[?996n" },
	{ "DA1", "\033[c" },
	{ "DA1 with 0", "\033[0c" },
	{ "DA2", "\033[>c" },
	{ "DA2 with 0", "\033[>0c" },
	{ "DA3", "\033[=c" },
	{ "DECRQM ANSI", "\033[4$p" },
	{ "DECRQM private", "\033[?2004$p" },
	{ "XTVERSION", "\033[>q" },
	{ "XTVERSION 0", "\033[>0q" },
	{ "window report 14t", "\033[14t" },
	{ "window report 18t", "\033[18t" },
	{ "title report 21t", "\033[21t" },
	{ "title stack", "\033[22;0t\033[23;0t" },
	{ "window move/resize/iconify", "\033[3;0;0t\033[8;100;100t\033[2t\033[11t\033[13t\033[19t" },
	{ "DECREQTPARM", "\033[x\033[1x" },
	{ "DECID", "\033Z" },
	{ "ENQ", "\005" },
	{ "media copy", "\033[5i\033[4i\033[0i" },
	{ "keyboard lock KAM", "\033[2h" },
	{ "local echo SRM", "\033[12l" },
	{ "S8C1T", "\033 G" },
	{ "UTF-8 off", "\033%@" },
	{ "UTF-8 on", "\033%G" },
	{ "DECSCL", "\033[62;1\"p" },
	{ "DECRQCRA checksum", "\033[1;1;1;1;1;1*y" },
	{ "DECRQPSR", "\033[1$w" },
	{ "DECRQTSR", "\033[1$u" },
	{ "locator", "\033[1;1'z\033[1'{\033['|" },
	{ "XTREPORTSGR", "\033[1;1;1;1#|" },
	{ "XTPUSHSGR", "\033[#{\033[#}" },
	{ "kitty keyboard", "\033[?u\033[>1u\033[<u\033[=1;1u" },
	{ "modifyOtherKeys query", "\033[?4m\033[>4;2m\033[>4n" },
	{ "XTSAVE/XTRESTORE", "\033[?1049s\033[?1049r" },
	{ "unknown private mode", "\033[?12345h\033[?1001h\033[?1;999h" },
	{ "mouse highlight tracking", "\033[1;2;3;4;5T" },
	{ "DECLL", "\033[1q" },
	{ "DECTST", "\033[4;1y" },
	{ "unknown CSI final", "\033[1~\033[1w\033[1z\033[1}" },
	{ "CSI malformed order", "\033[1?h\033[ 1q\033[1;?m" },
	{ "private intermediate mix", "\033[?1 q" },
	{ "single shifts", "\033N\033O" },
	{ "locking shifts", "\033n\033o\033|\033}\033~" },
	{ "lone ST", "\033\\" },
	{ "8-bit CSI DA", "\x9b" },
	{ "8-bit OSC start", "\x9d" },
	{ "8-bit DCS start", "\x90" },
	{ "8-bit ST", "\x9c" },
	{ "encoded C1 CSI", "\xc2\x9b" },
	{ "encoded C1 OSC", "\xc2\x9d" },
	{ "overlong ESC", "\xc0\x9b" },
	{ "overlong three-byte", "\xe0\x80\x9b" },
	{ "surrogate", "\xed\xa0\x80" },
	{ "beyond U+10FFFF", "\xf4\x90\x80\x80" },
	{ "invalid leads", "\xf5\xff\xfe" },
	{ "stray continuations", "\x80\xbf" },
	{ "NUL and other C0", "\x00\x01\x02\x03\x04\x06\x10\x11\x12\x13\x14\x15\x16\x17" },
	{ "CAN SUB and separators", "\x18\x1a\x1c\x1d\x1e\x1f" },
	{ "DEL", "\x7f" },
	{ "ESC then control", "\033\x01" },
	{ "ESC ESC", "\033\033\\" },
	{ "CSI cut by ESC", "\033[1;2\033\\" },
};

static void test_kept(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		char in[512];

		snprintf(in, sizeof(in), "A%sZ", kept[i].in);
		print_message("kept: %s\n", kept[i].what);
		expect(in, in);
	}
}

static void test_dropped(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		char in[512];
		size_t n = strlen(dropped[i].in);

		/* NUL in a row: the rows give the length by their own first byte rule */
		if (dropped[i].in[0] == '\0')
			n = 14;
		print_message("dropped: %s\n", dropped[i].what);
		in[0] = 'A';
		memcpy(in + 1, dropped[i].in, n);
		in[n + 1] = 'Z';
		in[n + 2] = '\0';
		if (n == 14 && dropped[i].in[0] == '\0') {
			/* embedded NULs: fed by length, not as a string */
			struct termfilter f;
			uint8_t out[64];
			size_t o;

			termfilter_init(&f);
			o = termfilter_feed(&f, (const uint8_t *)in, n + 2, out);
			assert_int_equal(o, 2);
			assert_memory_equal(out, "AZ", 2);
			continue;
		}
		expect(in, "AZ");
	}
}

/* Within a string, the payload cannot end it early and smuggle the rest. */
static void test_string_contents(void **state)
{
	(void)state;
	/* BEL ends OSC; the text after it is text */
	expect("\033]0;a\007visible", "visible");
	/* a DCS is not ended by BEL: its contents stay dropped until ST */
	expect("\033P1$r\007x\033\\y", "y");
	/* ESC inside a string ends it and starts a sequence, as in a terminal */
	expect("\033]2;t\033[1mX", "\033[1mX");
	/* SGR right after an OSC terminated by ST */
	expect("\033]52;c;QQ==\033\\\033[31mred", "\033[31mred");
	/* the C0 inside a CSI drops the CSI and is itself processed */
	expect("\033[1\n;2H", "\n;2H");
	/* an 8-bit CSI followed by a query's parameters prints them as harmless text */
	expect("\x9b" "6n", "6n");
	/* a UTF-8 character cut by ESC is dropped, the ESC sequence kept */
	expect("\xe2\x82\033[m", "\033[m");
}

/* Overlong sequences are dropped whole, even when their final byte would be allowed. */
static void test_bounds(void **state)
{
	char in[4096], *p = in;

	(void)state;
	*p++ = 'A';
	*p++ = '\033';
	*p++ = '[';
	for (int i = 0; i < 1000; i++)
		*p++ = i % 2 ? ';' : '1';
	*p++ = 'm';
	*p++ = 'Z';
	*p = '\0';
	expect(in, "AZ");

	/* exactly at the bound: kept; one over: dropped */
	{
		char ok[TERMFILTER_SEQ_MAX + 8], over[TERMFILTER_SEQ_MAX + 8];
		size_t n = TERMFILTER_SEQ_MAX;

		ok[0] = '\033';
		ok[1] = '[';
		memset(ok + 2, '1', n - 3);
		ok[n - 1] = 'm';
		ok[n] = '\0';
		expect(ok, ok);
		over[0] = '\033';
		over[1] = '[';
		memset(over + 2, '1', n - 2);
		over[n] = 'm';
		over[n + 1] = '\0';
		expect(over, "");
	}

	/* an unterminated OSC swallows what follows (as the terminal would) and stays bounded */
	{
		struct termfilter f;
		static uint8_t big[1 << 16], out[(1 << 16) + TERMFILTER_SEQ_MAX];

		memset(big, 'x', sizeof(big));
		termfilter_init(&f);
		assert_int_equal(termfilter_feed(&f, (const uint8_t *)"\033]52;c;", 7, out), 0);
		assert_int_equal(termfilter_feed(&f, big, sizeof(big), out), 0);
		assert_int_equal(termfilter_feed(&f, (const uint8_t *)"\007ok", 3, out), 2);
	}
}

/* Garbage never leaves ESC ] 52, ESC P or an unfinished sequence in the output. */
static void test_garbage(void **state)
{
	uint32_t seed = 12345;

	(void)state;
	for (int round = 0; round < 2000; round++) {
		static const uint8_t alphabet[] = "\033[]P_^Xk\\\007\x9b\x9d\x90\x9c\xc2\xe2?;:>=$ 0125cnqtmhl";
		uint8_t in[256], out[256 + TERMFILTER_SEQ_MAX];
		struct termfilter f;
		size_t o;

		for (size_t i = 0; i < sizeof(in); i++) {
			seed = seed * 1103515245u + 12345u;
			in[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		termfilter_init(&f);
		o = termfilter_feed(&f, in, sizeof(in), out);
		assert_true(o <= sizeof(in));
		for (size_t i = 0; i + 1 < o; i++) {
			if (out[i] != 0x1b)
				continue;
			assert_true(out[i + 1] != ']' && out[i + 1] != 'P' && out[i + 1] != '_' &&
				    out[i + 1] != '^' && out[i + 1] != 'X' && out[i + 1] != 'k');
		}
		for (size_t i = 0; i + 1 < o; i++)
			assert_false(out[i] == 0xc2 && out[i + 1] < 0xa0);     /* encoded C1 */
		if (o)
			assert_true(out[o - 1] != 0x1b);
	}
}

/* An 8-bit terminal: 0x80-0x9f never pass, not even inside a UTF-8 character. */
static void test_8bit_terminal(void **state)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
		{ "caf\xe9 \xa0\xff", "caf\xe9 \xa0\xff" },                 /* Latin-1 text */
		{ "\xc3\x9b" "6n", "\xc3" "6n" },     /* U+00DB: its 0x9b is CSI to such a terminal */
		{ "\xe2\x82\xac", "\xe2\xac" },
		{ "\x9b" "c\x9d" "0;t\x07\x90q\x9c", "c0;t\x07q" },
		{ "\033[31mx\033]52;c;QQ==\007", "\033[31mx" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct termfilter f;
		uint8_t out[256];
		size_t o, n = strlen(rows[i].in);

		termfilter_init(&f);
		termfilter_set_8bit(&f);
		o = 0;
		for (size_t k = 0; k < n; k++)      /* byte by byte */
			o += termfilter_feed(&f, (const uint8_t *)rows[i].in + k, 1, out + o);
		assert_int_equal(o, strlen(rows[i].want));
		assert_memory_equal(out, rows[i].want, o);
	}
}

/* termfilter_finish turns off exactly the modes left on. */
static void test_finish(void **state)
{
	struct termfilter f;
	uint8_t out[TERMFILTER_FINISH_MAX + TERMFILTER_SEQ_MAX + 64];
	size_t o;
	const char *all = "\033[?1049h\033[?1000h\033[?1006h\033[?2004h\033[?1004h\033[?25l"
			  "\033[?1h\033=\033[?2026h\033[?9h\033[?1002h\033[?1003h\033[?1005h"
			  "\033[?1015h\033[?1016h\033[?47h\033[?1047h\033[1m"
			  "\033[4h\033[20h\033[?5h\033[?6h\033[?7l\033[2;20r\033(0\016";

	(void)state;
	termfilter_init(&f);
	assert_int_equal(termfilter_finish(&f, out), 0);
	o = termfilter_feed(&f, (const uint8_t *)"\033[?1049h\033[?2004h\033[?2004l", 24, out);
	assert_int_equal(o, 24);
	o = termfilter_finish(&f, out);
	assert_int_equal(o, 8);
	assert_memory_equal(out, "\033[?1049l", 8);
	assert_int_equal(termfilter_finish(&f, out), 0);

	/* every tracked mode at once stays within TERMFILTER_FINISH_MAX */
	termfilter_init(&f);
	termfilter_feed(&f, (const uint8_t *)all, strlen(all), out);
	o = termfilter_finish(&f, out);
	assert_true(o > 100 && o <= TERMFILTER_FINISH_MAX);
	out[o] = '\0';
	assert_non_null(strstr((char *)out, "\033[?1000l"));
	assert_non_null(strstr((char *)out, "\033[?2004l"));
	assert_non_null(strstr((char *)out, "\033[?25h"));
	assert_non_null(strstr((char *)out, "\033>"));
	assert_non_null(strstr((char *)out, "\033[?7h"));
	assert_non_null(strstr((char *)out, "\0337\033[r\0338"));
	assert_non_null(strstr((char *)out, "\033(B"));
	assert_non_null(strstr((char *)out, "\033[20l"));
	/* a region reset and wrap back on clear their tracking */
	termfilter_init(&f);
	{
		const char *undo = "\033[2;5r\033[r\033[?7l\033[?7h\033(0\033(B";

		termfilter_feed(&f, (const uint8_t *)undo, strlen(undo), out);
	}
	o = termfilter_finish(&f, out);
	assert_int_equal(o, 7);     /* only the charset reset: ESC ( 0 was used */
	assert_memory_equal(out, "\033(B\033)B\017", 7);
	/* a dropped mode is not tracked */
	termfilter_init(&f);
	termfilter_feed(&f, (const uint8_t *)"\033[?1000;999h", 12, out);
	assert_int_equal(termfilter_finish(&f, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_dropped),
		cmocka_unit_test(test_string_contents),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_8bit_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
