/*
 * parse/http-resp.h — where each answer of an HTTP/1.x server ends, for the
 * gate (net/http-gate.h): a refusal after pipelined requests may be written
 * to the client only once the answers to the requests before it are
 * complete, never inside one of them.
 *
 * The framer is told of every request that went up (http_resp_expect: only
 * whether it was HEAD matters) and fed the server's bytes as they come. It
 * reads status lines and the framing headers (Content-Length,
 * Transfer-Encoding) and counts body bytes without copying them, as a
 * client does (RFC 9112 §6.3): no body for HEAD, 1xx, 204 and 304; chunked;
 * Content-Length; otherwise the answer runs to the server's close. Such a
 * close-delimited answer, or one the framer cannot read (no status line, two
 * different lengths, a 101 nobody switched on, a header section over
 * HTTP_RESP_HEAD_MAX), makes the stream unframed: from then on nothing may
 * be written after the server's bytes, since the client cannot tell where
 * they end. Pure, no allocation; one struct per connection.
 */
#ifndef BOXY_PARSE_HTTP_RESP_H
#define BOXY_PARSE_HTTP_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_RESP_LINE_KEEP  64         /* of each line, what is looked at */
#define HTTP_RESP_HEAD_MAX   (64 * 1024) /* an answer's status line and headers */
#define HTTP_RESP_HEADS      32         /* HEAD requests awaiting their answers */

struct http_resp_framer {
	int state;                      /* parse/http-resp.c's */
	char line[HTTP_RESP_LINE_KEEP]; /* the line being read, its first bytes */
	size_t line_len;                /* bytes of it seen (may pass the kept ones) */
	size_t head_bytes;              /* of the answer's head so far */
	bool status_next;               /* the next line is a status line */
	unsigned status;
	bool te, chunked, cl, cl_bad;
	uint64_t length;                /* Content-Length */
	uint64_t left;                  /* body or chunk bytes to come */
	uint64_t sent;                  /* requests that went up */
	uint64_t answered;              /* final answers complete */
	uint64_t heads[HTTP_RESP_HEADS]; /* indices of the HEAD requests not yet answered */
	size_t nheads;
};

void http_resp_init(struct http_resp_framer *fr);
/* A request went up (in order); head: it was HEAD (its answer has no body). */
void http_resp_expect(struct http_resp_framer *fr, bool head);
/*
 * Take the server's next bytes. Returns how many: all n, or fewer when an
 * answer ended at that byte (so a caller can stop there); feed the rest on.
 */
size_t http_resp_feed(struct http_resp_framer *fr, const uint8_t *p, size_t n);
/* Every request that went up has its whole answer, and nothing of another has begun. */
bool http_resp_complete(const struct http_resp_framer *fr);
/* An answer ends only with the server's close, or the stream could not be read. */
bool http_resp_unframed(const struct http_resp_framer *fr);

#endif
