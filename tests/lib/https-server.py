#!/usr/bin/python3
# https-server.py — an HTTPS test server for the hermetic test network
# (tests/e2e/http-inspect.sh): HTTP/1.1 with keep-alive, one thread a
# connection, logging every request and every byte it receives, so a test
# can say a refused request never arrived, not even in part.
#
#   https-server.py ADDR PORT CERT KEY LOG RAW [--git ROOT] [--alpn PROTO,...]
#
# Routes: /big?n=BYTES answers n bytes; /git/… runs `git http-backend` on
# ROOT (smart HTTP, for git clone over HTTPS); a path ending in /close-notify
# or /close-bare answers without a length and ends the connection, with or
# without TLS's close_notify; everything else answers "ok METHOD PATH
# host=HOST" and, for a body, its length. LOG gets one line
# a request ("METHOD TARGET HOST"), RAW every byte read, as it came.
# --alpn sets what the server offers in ALPN (default: http/1.1 only).
import http.server
import os
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import urllib.parse

addr, port, cert, key, logpath, rawpath = sys.argv[1:7]
opts = sys.argv[7:]
git_root = opts[opts.index('--git') + 1] if '--git' in opts else None
alpn = opts[opts.index('--alpn') + 1].split(',') if '--alpn' in opts else ['http/1.1']
log = open(logpath, 'a', buffering=1)
raw = open(rawpath, 'ab', buffering=0)
lock = threading.Lock()


class Recording:
    """A file-like wrapper of the connection's reader that logs every byte read."""

    def __init__(self, f):
        self.f = f

    def _note(self, b):
        if b:
            with lock:
                raw.write(b)
        return b

    def readline(self, *a):
        return self._note(self.f.readline(*a))

    def read(self, *a):
        return self._note(self.f.read(*a))

    def read1(self, *a):
        return self._note(self.f.read1(*a))

    def readinto(self, b):
        n = self.f.readinto(b)
        self._note(bytes(b[:n or 0]))
        return n

    def close(self):
        self.f.close()

    def __getattr__(self, name):
        return getattr(self.f, name)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def setup(self):
        super().setup()
        self.rfile = Recording(self.rfile)

    def log_message(self, fmt, *args):
        pass

    def body(self):
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            data = b''
            while True:
                size = int(self.rfile.readline().strip() or b'0', 16)
                if size == 0:
                    while self.rfile.readline() not in (b'\r\n', b'\n', b''):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n else b''

    def reply(self, status, data, ctype='text/plain'):
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)

    def handle_any(self):
        with lock:
            log.write('%s %s %s\n' % (self.command, self.path, self.headers.get('Host', '-')))
        body = self.body()
        url = urllib.parse.urlsplit(self.path)
        if url.path.startswith('/git/') and git_root:
            return self.git(url, body)
        if url.path == '/big':
            n = int(urllib.parse.parse_qs(url.query).get('n', ['1048576'])[0])
            self.send_response(200)
            self.send_header('Content-Type', 'application/octet-stream')
            self.send_header('Content-Length', str(n))
            self.end_headers()
            chunk = b'x' * 65536
            while n > 0:
                self.wfile.write(chunk[:min(n, len(chunk))])
                n -= len(chunk)
            return
        if url.path.endswith('/close-notify') or url.path.endswith('/close-bare'):
            self.send_response(200)
            self.send_header('Connection', 'close')
            self.end_headers()
            self.wfile.write(b'until the end\n')
            self.wfile.flush()
            self.close_connection = True
            try:
                if url.path.endswith('/close-notify'):
                    self.connection.unwrap()    # close_notify, then the FIN
                else:
                    # the socket's own shutdown, under TLS: a FIN and no close_notify
                    socket.socket.shutdown(self.connection, socket.SHUT_RDWR)
            except (OSError, ValueError):
                pass
            return
        text = 'ok %s %s host=%s' % (self.command, self.path, self.headers.get('Host', '-'))
        if body:
            text += ' body=%d' % len(body)
        self.reply(200, (text + '\n').encode())

    def git(self, url, body):
        env = {
            'GIT_PROJECT_ROOT': git_root, 'GIT_HTTP_EXPORT_ALL': '1',
            'PATH_INFO': url.path[len('/git'):], 'QUERY_STRING': url.query,
            'REQUEST_METHOD': self.command,
            'CONTENT_TYPE': self.headers.get('Content-Type', ''),
            'CONTENT_LENGTH': str(len(body)), 'REMOTE_ADDR': self.client_address[0],
            'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
        }
        if self.headers.get('Git-Protocol'):
            env['GIT_PROTOCOL'] = self.headers['Git-Protocol']
        out = subprocess.run(['git', 'http-backend'], input=body, env=env,
                             capture_output=True).stdout
        head, _, data = out.partition(b'\r\n\r\n')
        status = 200
        headers = []
        for line in head.split(b'\r\n'):
            name, _, value = line.decode().partition(':')
            if name.lower() == 'status':
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ctx.set_alpn_protocols(alpn)
srv = Server((addr, int(port)), Handler)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
