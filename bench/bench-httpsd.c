/*
 * bench-httpsd.c — a one-file HTTPS responder for bench/http.sh: one thread,
 * epoll, non-blocking OpenSSL, HTTP/1.1 keep-alive, so that the server is
 * never what a row measures. "GET /big?n=BYTES" answers that many bytes;
 * any other request a short text. Built by the script with the system's cc:
 *
 *   bench-httpsd ADDR PORT CERT KEY
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define MAXC 4096
#define CHUNK (64 * 1024)

struct conn {
	SSL *ssl;
	int fd;
	char in[8192];
	size_t inlen;
	const char *head;               /* the response head still to write, or NULL */
	size_t headlen, headoff;
	unsigned long long left;        /* body bytes still to write */
};

static char zeros[CHUNK];
static char reply_head[256];

static void conn_close(int ep, struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	SSL_free(c->ssl);
	close(c->fd);
	free(c);
}

/* Write what is due; 1 done, 0 blocked, -1 broken. */
static int conn_write(struct conn *c)
{
	while (c->head || c->left) {
		size_t n, put = 0;
		const char *p;

		if (c->head) {
			p = c->head + c->headoff;
			n = c->headlen - c->headoff;
		} else {
			p = zeros;
			n = c->left < CHUNK ? (size_t)c->left : CHUNK;
		}
		if (SSL_write_ex(c->ssl, p, n, &put) != 1) {
			int e = SSL_get_error(c->ssl, 0);

			return e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? 0 : -1;
		}
		if (c->head) {
			c->headoff += put;
			if (c->headoff == c->headlen)
				c->head = NULL;
		} else {
			c->left -= put;
		}
	}
	return 1;
}

/* Answer every whole request head in the buffer. 0 on, -1 close. */
static int conn_serve(struct conn *c)
{
	for (;;) {
		char *end = memmem(c->in, c->inlen, "\r\n\r\n", 4);
		size_t used;
		static char bighead[128];

		if (!end)
			return c->inlen == sizeof(c->in) ? -1 : 0;
		used = (size_t)(end + 4 - c->in);
		if (strncmp(c->in, "GET /big?n=", 11) == 0) {
			unsigned long long n = strtoull(c->in + 11, NULL, 10);
			int k = snprintf(bighead, sizeof(bighead), "HTTP/1.1 200 OK\r\n"
					 "Content-Type: application/octet-stream\r\n"
					 "Content-Length: %llu\r\n\r\n", n);

			c->head = bighead;
			c->headlen = (size_t)k;
			c->left = n;
		} else {
			c->head = reply_head;
			c->headlen = strlen(reply_head);
		}
		c->headoff = 0;
		memmove(c->in, c->in + used, c->inlen - used);
		c->inlen -= used;
		if (conn_write(c) <= 0)
			return 0;       /* the rest after EPOLLOUT; requests wait meanwhile */
	}
}

int main(int argc, char **argv)
{
	SSL_CTX *ctx;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int ls, ep, one = 1;
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];

	if (argc != 5)
		return fprintf(stderr, "usage: bench-httpsd ADDR PORT CERT KEY\n"), 2;
	/* wrk ends its connections with answers in flight: EPIPE, not death */
	signal(SIGPIPE, SIG_IGN);
	snprintf(reply_head, sizeof(reply_head), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
		 "Content-Length: 3\r\n\r\nok\n");
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, argv[3]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, argv[4], SSL_FILETYPE_PEM) != 1)
		return ERR_print_errors_fp(stderr), 1;
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &sa.sin_addr);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1024) < 0)
		return perror("bind"), 1;
	ep = epoll_create1(0);
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;

			if (!c) {
				int fd;

				while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct epoll_event e = { .events = EPOLLIN | EPOLLOUT | EPOLLET };

					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					c = calloc(1, sizeof(*c));
					c->fd = fd;
					c->ssl = SSL_new(ctx);
					SSL_set_fd(c->ssl, fd);
					SSL_set_accept_state(c->ssl);
					e.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
				}
				continue;
			}
			/* edge-triggered: write what is due (and answer what waited behind it),
			 * then read until it would block */
			if (c->head || c->left) {
				int w = conn_write(c);

				if (w < 0 || (w > 0 && conn_serve(c) < 0)) {
					conn_close(ep, c);
					continue;
				}
			}
			for (;;) {
				size_t got = 0;

				if (c->head || c->left)
					break;
				if (SSL_read_ex(c->ssl, c->in + c->inlen, sizeof(c->in) - c->inlen,
						&got) != 1) {
					int e = SSL_get_error(c->ssl, 0);

					if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
						conn_close(ep, c);
						c = NULL;
					}
					break;
				}
				c->inlen += got;
				if (conn_serve(c) < 0) {
					conn_close(ep, c);
					c = NULL;
					break;
				}
			}
			ERR_clear_error();
		}
	}
}
