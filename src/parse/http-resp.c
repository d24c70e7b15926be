/*
 * parse/http-resp.c — where an HTTP/1.x server's answers end
 * (parse/http-resp.h).
 *
 * A state machine fed arbitrary chunks, reading lines only where framing is
 * written (the status line, the headers, chunk sizes, trailers) and keeping
 * of each line only its first HTTP_RESP_LINE_KEEP bytes: a framing header
 * longer than that cannot be read and makes the stream unframed. Body bytes
 * are counted. The server is the one the payload was allowed to reach, and
 * its answers go to the client whatever this reads in them: a mistake here
 * can only withhold a refusal's 403 (an unframed stream), never reorder or
 * change a byte.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "parse/http-resp.h"

enum {
	S_LINE,                 /* a line of an answer's head (status_next: its status line) */
	S_BODY,                 /* Content-Length bytes */
	S_CHUNK_SIZE,           /* a chunk-size line */
	S_CHUNK_DATA,           /* a chunk's bytes */
	S_CHUNK_END,            /* the empty line after a chunk's bytes */
	S_TRAILER,              /* trailer lines, to the empty one */
	S_CLOSE,                /* an answer that runs to the server's close */
	S_LOST,                 /* bytes the framer cannot read */
};

void http_resp_init(struct http_resp_framer *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->state = S_LINE;
	fr->status_next = true;
}

void http_resp_expect(struct http_resp_framer *fr, bool head)
{
	if (head) {
		if (fr->nheads == HTTP_RESP_HEADS)
			fr->state = S_LOST;     /* too many to follow: say so rather than guess */
		else
			fr->heads[fr->nheads++] = fr->sent;
	}
	fr->sent++;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* The answer just ended: count it, and expect the next one's status line. */
static void answer_done(struct http_resp_framer *fr)
{
	if (fr->nheads && fr->heads[0] == fr->answered) {
		memmove(fr->heads, fr->heads + 1, (fr->nheads - 1) * sizeof(fr->heads[0]));
		fr->nheads--;
	}
	fr->answered++;
	fr->state = S_LINE;
	fr->status_next = true;
	fr->head_bytes = 0;
}

/* "HTTP/1.x DDD": the status, or 0. */
static unsigned status_of(const char *l, size_t n)
{
	if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') ||
	    l[8] != ' ')
		return 0;
	for (int i = 9; i < 12; i++)
		if (l[i] < '0' || l[i] > '9')
			return 0;
	if (n > 12 && l[12] != ' ')
		return 0;
	return (unsigned)(l[9] - '0') * 100 + (unsigned)(l[10] - '0') * 10 + (unsigned)(l[11] - '0');
}

/* Is the header line (kept bytes n, whole when !cut) the field name, and where does its value start? */
static const char *field(const char *l, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(l, name, k) != 0 || l[k] != ':')
		return NULL;
	l += k + 1;
	while (*l == ' ' || *l == '\t')
		l++;
	return l;
}

/* A header line of the answer's head (NUL-terminated, without its CRLF; cut: longer than kept). */
static void head_line(struct http_resp_framer *fr, const char *l, size_t n, bool cut)
{
	const char *v;

	if (fr->status_next) {
		fr->status = status_of(l, n);
		fr->status_next = false;
		fr->te = fr->chunked = fr->cl = fr->cl_bad = false;
		fr->length = 0;
		if (!fr->status)
			fr->state = S_LOST;
		return;
	}
	if ((v = field(l, n, "content-length")) != NULL) {
		uint64_t len = 0;
		size_t digits = 0;

		for (; *v >= '0' && *v <= '9' && digits < 19; v++, digits++)
			len = len * 10 + (uint64_t)(*v - '0');
		while (*v == ' ' || *v == '\t')
			v++;
		if (cut || digits == 0 || *v || (fr->cl && fr->length != len))
			fr->cl_bad = true;
		fr->cl = true;
		fr->length = len;
	} else if ((v = field(l, n, "transfer-encoding")) != NULL) {
		const char *end = l + n;
		size_t k;

		fr->te = true;
		if (cut) {
			fr->state = S_LOST;
			return;
		}
		/* chunked is the last coding of the last Transfer-Encoding, or the answer
		 * runs to the close (RFC 9112 §6.3) */
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		k = (size_t)(end - v);
		fr->chunked = k >= 7 && strncasecmp(end - 7, "chunked", 7) == 0 &&
			      (k == 7 || end[-8] == ',' || end[-8] == ' ' || end[-8] == '\t');
	}
}

/* The answer's head ended: how its body is framed. */
static void head_end(struct http_resp_framer *fr)
{
	bool head = fr->nheads && fr->heads[0] == fr->answered;
	unsigned s = fr->status;

	if (s / 100 == 1) {
		if (s == 101) {
			fr->state = S_LOST;     /* a switch the gate did not ask for: not HTTP now */
			return;
		}
		fr->status_next = true;     /* an interim answer: the final one follows */
		fr->head_bytes = 0;
		return;
	}
	if (head || s == 204 || s == 304) {
		answer_done(fr);
	} else if (fr->te) {
		if (fr->cl)
			fr->state = S_LOST;     /* both: clients disagree; this one will not guess */
		else if (fr->chunked)
			fr->state = S_CHUNK_SIZE;
		else
			fr->state = S_CLOSE;
	} else if (fr->cl_bad) {
		fr->state = S_LOST;
	} else if (fr->cl) {
		if (fr->length == 0)
			answer_done(fr);
		else {
			fr->state = S_BODY;
			fr->left = fr->length;
		}
	} else {
		fr->state = S_CLOSE;
	}
}

/* A chunk-size line: hex digits, perhaps extensions. */
static void chunk_size_line(struct http_resp_framer *fr, const char *l, bool cut)
{
	uint64_t size = 0;
	size_t digits = 0;

	for (; hex_val(*l) >= 0; l++, digits++) {
		if (digits == 15) {
			fr->state = S_LOST;
			return;
		}
		size = size * 16 + (uint64_t)hex_val(*l);
	}
	if (digits == 0 || (cut && !*l) || (*l && *l != ';' && *l != ' ' && *l != '\t')) {
		fr->state = S_LOST;
		return;
	}
	if (size == 0) {
		fr->state = S_TRAILER;
	} else {
		fr->state = S_CHUNK_DATA;
		fr->left = size;
	}
}

/* A whole line arrived (the kept bytes in fr->line, NUL-terminated): act on it. */
static void line_done(struct http_resp_framer *fr)
{
	size_t n = fr->line_len < HTTP_RESP_LINE_KEEP ? fr->line_len : HTTP_RESP_LINE_KEEP - 1;
	bool cut = fr->line_len >= HTTP_RESP_LINE_KEEP;
	char *l = fr->line;

	/* line_len counted the LF: drop it and a CR before it */
	if (!cut) {
		n = fr->line_len - 1;
		if (n && l[n - 1] == '\r')
			n--;
	}
	l[n] = '\0';
	fr->line_len = 0;
	switch (fr->state) {
	case S_LINE:
		if (n == 0 && !cut && !fr->status_next)
			head_end(fr);
		else if (n == 0 && !cut)
			;               /* an empty line before a status line: clients skip it */
		else
			head_line(fr, l, n, cut);
		break;
	case S_CHUNK_SIZE:
		chunk_size_line(fr, l, cut);
		break;
	case S_CHUNK_END:
		fr->state = n == 0 && !cut ? S_CHUNK_SIZE : S_LOST;
		break;
	case S_TRAILER:
		if (n == 0 && !cut)
			answer_done(fr);
		break;
	}
}

size_t http_resp_feed(struct http_resp_framer *fr, const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c;

		switch (fr->state) {
		case S_CLOSE:
		case S_LOST:
			return n;
		case S_BODY:
		case S_CHUNK_DATA: {
			uint64_t take = n - i < fr->left ? n - i : fr->left;

			i += (size_t)take;
			fr->left -= take;
			if (fr->left)
				continue;
			if (fr->state == S_CHUNK_DATA) {
				fr->state = S_CHUNK_END;
				continue;
			}
			answer_done(fr);
			return i;
		}
		default:
			c = p[i++];
			if (fr->line_len < HTTP_RESP_LINE_KEEP - 1)
				fr->line[fr->line_len] = (char)c;
			fr->line_len++;
			if (fr->state == S_LINE && ++fr->head_bytes > HTTP_RESP_HEAD_MAX) {
				fr->state = S_LOST;
				return n;
			}
			if (c != '\n')
				continue;
			{
				uint64_t before = fr->answered;

				line_done(fr);
				if (fr->answered != before)
					return i;
			}
		}
	}
	return i;
}

bool http_resp_complete(const struct http_resp_framer *fr)
{
	return fr->state == S_LINE && fr->status_next && fr->line_len == 0 &&
	       fr->answered >= fr->sent;
}

bool http_resp_unframed(const struct http_resp_framer *fr)
{
	return fr->state == S_CLOSE || fr->state == S_LOST;
}
