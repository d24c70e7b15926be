/*
 * bench/bench-httpd.c — the smallest HTTP responder that keeps up with wrk,
 * for bench/net.sh's short-connections figure.
 *
 * One thread, one epoll set, non-blocking sockets. Every connection gets the
 * same tiny "200 OK" with "Connection: close" as soon as the end of a request
 * header ("\r\n\r\n") has arrived, and is then closed by the server, so every
 * request wrk makes costs a full TCP open and close through the network path
 * under test: that is what the figure measures, not the server. Python's
 * http.server tops out far below what the paths can do, hence this file.
 *
 *   bench-httpd ADDR PORT      listen on ADDR:PORT (IPv4) until killed
 *
 * It is a bench helper, not part of boxy: it only ever listens on an address
 * inside the hermetic test network that bench/net.sh builds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FD 65536

static const char httpd_reply[] =
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n"
	"Connection: close\r\n\r\nok\n";

/* Per-descriptor state: how many bytes of "\r\n\r\n" the request has matched so far. */
static unsigned char httpd_match[MAX_FD];

/* Advance the end-of-header matcher over BUF; nonzero once "\r\n\r\n" was seen. */
static int httpd_scan(int fd, const char *buf, ssize_t n)
{
	static const char end[] = "\r\n\r\n";
	unsigned char m = httpd_match[fd];

	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == end[m])
			m++;
		else
			m = buf[i] == '\r' ? 1 : 0;
		if (m == 4)
			return 1;
	}
	httpd_match[fd] = m;
	return 0;
}

/* Read what FD has; answer and close once the request header is complete, or on EOF/error. */
static void httpd_serve(int ep, int fd)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			if (!httpd_scan(fd, buf, n))
				continue;
			/* The reply is smaller than any socket buffer: one write suffices. */
			if (write(fd, httpd_reply, sizeof(httpd_reply) - 1) < 0) {
				/* nothing to do: the peer is gone, close below */
			}
			break;
		}
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0 && errno == EINTR)
			continue;
		break;	/* EOF or a real error */
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	httpd_match[fd] = 0;
	close(fd);
}

/* Accept every pending connection on LFD into the epoll set. */
static void httpd_accept(int ep, int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd, one = 1;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (fd >= MAX_FD) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		httpd_match[fd] = 0;
		ev.data.fd = fd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			close(fd);
	}
}

/* Listen on argv[1]:argv[2] and serve forever. */
int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN }, evs[256];
	int lfd, ep, one = 1;

	if (argc != 3 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: bench-httpd IPV4-ADDR PORT\n");
		return 2;
	}
	sin.sin_port = htons((unsigned short)atoi(argv[2]));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd, 4096) < 0) {
		perror("bench-httpd: listen");
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) {
		perror("bench-httpd: epoll");
		return 1;
	}
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		if (n < 0 && errno != EINTR) {
			perror("bench-httpd: epoll_wait");
			return 1;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == lfd)
				httpd_accept(ep, lfd);
			else
				httpd_serve(ep, evs[i].data.fd);
		}
	}
}
