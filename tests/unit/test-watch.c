/*
 * test-watch.c — boxy watch's lines and model: the specification's RECENT
 * lines reproduced, hostile names neutralised before they reach a
 * terminal, snapshots decoded (and malformed ones refused). The render
 * tests put one hostile name in every field a screen shows (header,
 * destinations, RECENT, the end-of-run table) and check the bytes written
 * with a validator of their own, so a render path that skips the
 * sanitizer fails here whatever the sanitizer does.
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

#include "ui/dests.h"
#include "common/util.h"
#include "ui/watch.h"
#include "proto/daemon-msg.h"
#include "proto/wire.h"

static void test_sanitize(void **state)
{
	static const struct { const char *in, *want; } rows[] = {
		{ "registry.npmjs.org", "registry.npmjs.org" },
		{ "evil\x1b]0;pwned\x07.com", "evil?]0;pwned?.com" },    /* OSC title injection */
		{ "a\x1b[2Jb", "a?[2Jb" },                                 /* clear screen */
		{ "\xc2\x9b" "31m", "?31m" },                              /* C1 CSI: one character */
		{ "a\xc2\x85" "b", "a?b" },                               /* C1 NEL */
		{ "\xc0\x9b" "31m", "??31m" },                             /* overlong CSI */
		{ "\xc1\xbf", "??" },                                      /* overlong DEL */
		{ "\xe0\x80\x9b", "???" },                                 /* 3-byte overlong */
		{ "\xf0\x80\x80\x9b", "????" },                             /* 4-byte overlong */
		{ "\xed\xa0\x80", "???" },                                 /* a surrogate */
		{ "\xf4\x90\x80\x80", "????" },                             /* past U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", "?????" },                         /* 5-byte form */
		{ "ab\xe2\x80", "ab??" },                                  /* truncated */
		{ "evil\xe2\x80\xae" "gpj.exe", "evil?gpj.exe" },           /* U+202E RLO */
		{ "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", "????" },  /* LRE RLE PDF LRO */
		{ "\xe2\x81\xa6x\xe2\x81\xa9", "?x?" },                   /* LRI .. PDI */
		{ "\xe2\x80\x8f\xd8\x9c", "??" },                          /* RLM, ALM */
		{ "a\xe2\x80\x8b" "b", "a?b" },                              /* zero-width space */
		{ "\xef\xbb\xbf" "x", "?x" },                                /* BOM */
		{ "x\xf3\xa0\x80\x81", "x?" },                              /* a tag character */
		{ "\xe2\x80\xa8", "?" },                                    /* line separator */
		{ "\x7f", "?" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac" },          /* CJK kept */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },                  /* emoji kept */
		{ "\xc2\xa0", "\xc2\xa0" },                                  /* NBSP kept (not C1) */
		{ "\xff\xfe", "??" },
		{ "line\nbreak\r", "line?break?" },
		{ NULL, "" },
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char *got = watch_sanitize(rows[i].in);

		assert_string_equal(got, rows[i].want);
		free(got);
	}
}

static void test_spec_lines(void **state)
{
	struct event dns = {
		.kind = "dns", .verdict = "resolve", .subject = "registry.npmjs.org",
		.detail = "104.16.0.35 104.16.1.35", .t_rel_ms = 104,
	};
	struct event allow = {
		.kind = "tcp", .verdict = "allow", .addr = "104.16.0.35", .port = 443,
		.host = "registry.npmjs.org", .t_rel_ms = 118,
	};
	struct event close_ = {
		.kind = "tcp", .verdict = "close", .addr = "104.16.0.35", .port = 443,
		.host = "registry.npmjs.org", .up = 1434, .down = 2202010, .t_rel_ms = 2905,
	};
	struct event dnsdeny = {
		.kind = "dns", .verdict = "deny", .layer = "net.dns",
		.subject = "c2.5f3a1.example.net", .detail = "hostname not on the allowlist",
		.t_rel_ms = 7914,
	};
	struct event tcpdeny = {
		.kind = "tcp", .verdict = "deny", .layer = "net.ip", .addr = "169.254.169.254",
		.port = 80, .detail = "link-local / cloud metadata", .t_rel_ms = 8002,
	};
	struct event audit = {
		.kind = "audit", .verdict = "degraded", .layer = "cgroup", .subject = "memory",
		.detail = "not enforced", .t_rel_ms = 61234,
	};
	char *l;

	(void)state;
	l = watch_format_event(&dns);
	assert_string_equal(l, "00:00.104 dns      resolve registry.npmjs.org"
			    "                 104.16.0.35 104.16.1.35");
	free(l);
	l = watch_format_event(&allow);
	assert_string_equal(l, "00:00.118 tcp      allow   registry.npmjs.org:443");
	free(l);
	l = watch_format_event(&close_);
	assert_string_equal(l, "00:02.905 tcp      close   registry.npmjs.org:443"
			    "             up 1.4KiB  down 2.1MiB");
	free(l);
	l = watch_format_event(&dnsdeny);
	assert_string_equal(l, "00:07.914 net.dns  deny    c2.5f3a1.example.net"
			    "               hostname not on the allowlist");
	assert_true(watch_event_is_deny(&dnsdeny));
	free(l);
	l = watch_format_event(&tcpdeny);
	assert_string_equal(l, "00:08.002 tcp      deny    169.254.169.254:80"
			    "                 link-local / cloud metadata");
	free(l);
	l = watch_format_event(&audit);
	assert_string_equal(l, "01:01.234 cgroup   degraded memory"
			    "                             not enforced");
	free(l);
}

static void test_snapshot(void **state)
{
	char *argv[] = { "npm", "ci", NULL };
	struct watch_model m;
	struct wbuf w;

	(void)state;
	wbuf_init(&w);
	wire_put_str(&w, "9f3c1ba2aaaaaaaa");
	wire_put_str(&w, "running");
	wire_put_strv(&w, argv);
	wire_put_u64(&w, 9000);
	wire_put_u64(&w, 15);
	wire_put_u64(&w, 2);
	wire_put_u64(&w, 39322);
	wire_put_u64(&w, 6396314);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "registry.npmjs.org");
	for (int i = 0; i < 5; i++)
		wire_put_u64(&w, (uint64_t)i + 1);
	/* What was refused, grouped: 3 in all, 1 past the table, one group of 2. */
	wire_put_u64(&w, 3);
	wire_put_u64(&w, 1);
	wire_put_u32(&w, 1);
	wire_put_str(&w, "other.example.test");
	wire_put_str(&w, "net.dns");
	wire_put_str(&w, "hostname not on the allowlist");
	wire_put_u64(&w, 2);
	wire_put_str(&w, "curl -s http://other.example.test/ (pid 7)");     /* who */
	wire_put_u8(&w, 0);
	watch_model_init(&m);
	assert_int_equal(watch_model_snapshot(&m, w.p, w.len), 0);
	assert_int_equal(m.refusals.total, 3);
	assert_int_equal(m.refusals.n, 1);
	assert_string_equal(m.refusals.v[0].layer, "net.dns");
	assert_string_equal(m.cmdline, "npm ci");
	assert_int_equal(m.ndests, 1);
	assert_int_equal(m.dests[0].received, 5);
	/* Every truncation is refused and leaves the model as it was. */
	for (size_t cut = 0; cut < w.len; cut++)
		assert_int_equal(watch_model_snapshot(&m, w.p, cut), -1);
	assert_string_equal(m.cmdline, "npm ci");
	watch_model_free(&m);
	wbuf_free(&w);
}

/* Hostile names: each must come out of every render path harmless. */
static const char *const hostile[] = {
	"evil\x1b]52;c;Y3VybCBldmlsfHNo\x07.com",     /* OSC 52 clipboard */
	"a\x1b[2J\x1b[6nb",                           /* clear screen, cursor report */
	"\xc2\x9b" "31mred",                           /* C1 CSI */
	"\xc0\x9b" "31mover",                          /* overlong CSI */
	"\xe0\x80\x9b" "0c",                            /* 3-byte overlong CSI */
	"x\xe2\x80\xae" "gpj.exe",                      /* bidi override */
	"\xe2\x81\xa6" "iso\xe2\x81\xa9",                  /* bidi isolates */
	"\xc2\x90" "dcs\xc2\x9c",                          /* C1 DCS .. ST */
	"\xed\xa0\x80" "sur",                           /* a surrogate */
	"trunc\xe2\x80",                              /* truncated sequence */
};

/*
 * The test's own check of screen bytes, independent of text_sanitize: the
 * only escape sequences are the renderer's own (cursor home, erase, red,
 * reset); the rest is printable, well-formed UTF-8 with no C1, no bidi or
 * zero-width character; and no line is wider than cols bytes.
 */
static void assert_screen_clean(const char *buf, size_t len, int cols)
{
	static const char *const own[] = { "\x1b[H", "\x1b[K", "\x1b[J", "\x1b[31m", "\x1b[0m",
					    "\x1b[1;31m" };
	const unsigned char *p = (const unsigned char *)buf;
	size_t line = 0;

	for (size_t i = 0; i < len;) {
		size_t k, n;
		uint32_t cp;

		if (p[i] == 0x1b) {
			for (k = 0; k < ARRAY_SIZE(own); k++)
				if (strncmp(buf + i, own[k], strlen(own[k])) == 0)
					break;
			if (k == ARRAY_SIZE(own))
				fail_msg("a foreign escape sequence at byte %zu: %.12s", i, buf + i);
			i += strlen(own[k]);
			continue;
		}
		if (p[i] == '\n') {
			line = 0;
			i++;
			continue;
		}
		if (p[i] < 0x20 || p[i] == 0x7f)
			fail_msg("control byte 0x%02x at %zu", p[i], i);
		if (p[i] < 0x80) {
			n = 1;
			cp = p[i];
		} else if (p[i] >= 0xc2 && p[i] <= 0xdf) {
			n = 2;
			cp = p[i] & 0x1fu;
		} else if (p[i] >= 0xe0 && p[i] <= 0xef) {
			n = 3;
			cp = p[i] & 0x0fu;
		} else if (p[i] >= 0xf0 && p[i] <= 0xf4) {
			n = 4;
			cp = p[i] & 0x07u;
		} else {
			fail_msg("invalid UTF-8 lead byte 0x%02x at %zu", p[i], i);
			return;
		}
		if (i + n > len)
			fail_msg("truncated UTF-8 at %zu", i);
		for (k = 1; k < n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				fail_msg("bad continuation at %zu", i + k);
			cp = cp << 6 | (p[i + k] & 0x3fu);
		}
		if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			fail_msg("overlong or invalid code point U+%04X at %zu", (unsigned)cp, i);
		if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
		    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
		    cp == 0xfeff)
			fail_msg("control or bidi character U+%04X at %zu", (unsigned)cp, i);
		line += n;
		if (cols > 0 && line > (size_t)cols)
			fail_msg("a line wider than %d bytes at %zu", cols, i);
		i += n;
	}
}

/* A snapshot payload whose every string is name (the id and state cut to fit). */
static void hostile_snapshot(struct wbuf *w, const char *name)
{
	char *argv[] = { "npm", (char *)name, NULL };

	char shortname[61];

	snprintf(shortname, sizeof(shortname), "%s", name);     /* the wire allows 64 */
	wbuf_init(w);
	wire_put_str(w, shortname);
	wire_put_str(w, shortname);
	wire_put_strv(w, argv);
	for (int i = 0; i < 5; i++)
		wire_put_u64(w, 1000);
	wire_put_u32(w, 2);
	wire_put_str(w, name);
	for (int i = 0; i < 5; i++)
		wire_put_u64(w, 7);
	wire_put_str(w, "registry.npmjs.org");
	for (int i = 0; i < 5; i++)
		wire_put_u64(w, 1);
	/* What was refused, grouped: the name again, in every field. */
	wire_put_u64(w, 1);
	wire_put_u64(w, 0);
	wire_put_u32(w, 1);
	wire_put_str(w, name);
	wire_put_str(w, name);
	wire_put_str(w, name);
	wire_put_u64(w, 1);
	wire_put_str(w, name);                  /* who */
	wire_put_u8(w, 1);
}

/* Render the whole watch screen with name in every field; check the bytes. */
static void render_one(const char *name, int cols)
{
	struct event evs[] = {
		{ .kind = "dns", .verdict = "deny", .layer = "net.dns", .subject = name,
		  .detail = name },
		{ .kind = "tcp", .verdict = "deny", .layer = "net.ip", .addr = name, .port = 443,
		  .host = name, .detail = name },
		{ .kind = "tcp", .verdict = "sni", .addr = "1.2.3.4", .port = 443, .host = "a",
		  .sni = name, .detail = name },
		{ .kind = "tcp", .verdict = "close", .addr = "1.2.3.4", .port = 443, .host = name },
		{ .kind = "audit", .verdict = name, .layer = name, .subject = name, .detail = name },
		{ .kind = name, .verdict = name, .subject = name },
	};
	struct watch_model m;
	struct wbuf w;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	hostile_snapshot(&w, name);
	watch_model_init(&m);
	assert_int_equal(watch_model_snapshot(&m, w.p, w.len), 0);
	for (size_t i = 0; i < ARRAY_SIZE(evs); i++)
		watch_model_event(&m, &evs[i]);
	for (int color = 0; color < 2; color++) {
		out = open_memstream(&buf, &len);
		assert_non_null(out);
		watch_render(&m, out, 40, cols, color);
		fclose(out);
		assert_screen_clean(buf, len, cols);
		/* Nothing was dropped silently: the harmless part of the name is there. */
		if (cols == 0 || cols >= 80)
			assert_non_null(strstr(buf, "registry.npmjs.org"));
		free(buf);
		buf = NULL;
	}
	/* The piped form of each event line. */
	for (size_t i = 0; i < ARRAY_SIZE(evs); i++) {
		char *line = watch_format_event(&evs[i]);

		assert_screen_clean(line, strlen(line), 0);
		free(line);
	}
	/* The end-of-run destination table (daemon/session-net.c). */
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	assert_int_equal(net_summary_print(out, w.p, w.len), 0);
	fclose(out);
	assert_screen_clean(buf, len, 0);
	free(buf);
	watch_model_free(&m);
	wbuf_free(&w);
}

static void test_render_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		render_one(hostile[i], 80);
		render_one(hostile[i], 0);
	}
}

/* A name far wider than the screen: cut at cols, never mid-character, never wrapped. */
static void test_render_long(void **state)
{
	char name[1000];

	(void)state;
	for (size_t i = 0; i + 2 < sizeof(name); i += 2)
		memcpy(name + i, "\xc3\xa9", 2);     /* é: a cut at an odd byte would split it */
	name[sizeof(name) - 2] = '\0';
	for (int cols = 1; cols < 90; cols += 7)
		render_one(name, cols);
	/* And the hostile names, cut at every width. */
	for (int cols = 1; cols < 60; cols += 3)
		for (size_t i = 0; i < ARRAY_SIZE(hostile); i++)
			render_one(hostile[i], cols);
}

/*
 * An event the daemon sends always decodes: a payload that names a path longer
 * than the decoder's cap (a repository planted 5,000 bytes deep) once made the
 * alert about it undecodable, so `boxy run` neither printed it nor let its gate
 * fail on it. The encoder cuts at a character boundary; `what`, `told` and the
 * who (its strings cut to their caps too) travel after the rest.
 */
static void test_event_long_strings(void **state)
{
	char *subject = xmalloc(9001), *detail = xmalloc(5001), *via = xmalloc(3001);
	struct event_who who = { .found = true, .pid = 812, .comm = "node", .argv0 = "node",
				 .cmdline = "node evil.js", .package = "evil-pkg", .version = "1.2.3",
				 .script = "postinstall", .claimed = true };
	struct event ev = { .kind = "audit", .verdict = "alert", .layer = "git",
			    .session = "0123456789abcdef", .what = "finding", .told = "gesagt",
			    .who = &who };
	struct event_copy c;
	const struct event *got = &c.ev;
	struct wbuf w;

	(void)state;
	for (size_t i = 0; i + 2 <= 9000; i += 2)
		memcpy(subject + i, "\xc3\xa9", 2);
	subject[9000] = '\0';
	memset(detail, 'x', 5000);
	detail[5000] = '\0';
	detail[4095] = '\xc3';   /* an "é" across the cap: cut before it, not inside */
	detail[4096] = '\xa9';
	memset(via, 'v', 3000);
	via[3000] = '\0';
	who.via = via;
	ev.subject = subject;
	ev.detail = detail;
	wbuf_init(&w);
	dmsg_encode_event(&w, &ev);
	assert_int_equal(watch_event_decode(w.p, w.len, &c), 0);
	assert_int_equal(strlen(got->subject), DMSG_EVENT_TEXT_MAX);
	assert_memory_equal(got->subject, subject, DMSG_EVENT_TEXT_MAX);
	assert_int_equal(strlen(got->detail), 4095);
	assert_string_equal(got->what, "finding");
	assert_string_equal(got->told, "gesagt");
	assert_string_equal(got->verdict, "alert");
	assert_non_null(got->who);
	assert_true(got->who->found && got->who->claimed);
	assert_int_equal(got->who->pid, 812);
	assert_string_equal(got->who->package, "evil-pkg");
	assert_string_equal(got->who->script, "postinstall");
	assert_int_equal(strlen(got->who->via), DMSG_EVENT_WHO_VIA_MAX);
	event_copy_free(&c);
	wbuf_free(&w);
	free(subject);
	free(detail);
	free(via);
}

/*
 * An alert (a tripwire) stays on top of the screen, red, after hundreds of
 * events pushed it out of RECENT; a watcher sent it twice (replayed when it
 * joined) pins it once; past WATCH_ALERTS the rest is counted.
 */
static void test_alerts_pinned(void **state)
{
	struct watch_model m;
	struct event alert = {
		.kind = "audit", .verdict = "alert", .layer = "tripwire",
		.subject = "~/.aws/credentials",
		.detail = "the decoy AWS credentials was opened by postinstall of evil-pkg@1.2.3",
	};
	struct event busy = { .kind = "dns", .verdict = "resolve", .layer = "net.dns",
			      .subject = "registry.npmjs.org", .detail = "104.16.0.35" };
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	watch_model_init(&m);
	watch_model_event(&m, &alert);
	watch_model_event(&m, &alert);
	for (int i = 0; i < WATCH_RECENT + 50; i++)
		watch_model_event(&m, &busy);
	assert_int_equal(m.nalerts, 1);
	assert_true(m.alerts[0].alert);
	f = open_memstream(&out, &len);
	watch_render(&m, f, 40, 200, true);
	fclose(f);
	assert_non_null(strstr(out, "\x1b[1;31mALERTS: act on these"));
	assert_non_null(strstr(out, "postinstall of evil-pkg@1.2.3"));
	assert_true(strstr(out, "ALERTS") < strstr(out, "DESTINATION"));
	free(out);
	for (int i = 0; i < WATCH_ALERTS + 3; i++) {
		char d[64];
		struct event e = alert;

		snprintf(d, sizeof(d), "alert number %d", i);
		e.detail = d;
		watch_model_event(&m, &e);
	}
	assert_int_equal(m.nalerts, WATCH_ALERTS);
	assert_int_equal(m.more_alerts, 4);
	watch_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alerts_pinned),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_spec_lines),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_render_hostile),
		cmocka_unit_test(test_render_long),
		cmocka_unit_test(test_event_long_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
