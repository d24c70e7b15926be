#!/usr/bin/python3
# http-recorder.py — an HTTP/1.1 test server that records what reaches it
# (tests/e2e/http-rules.sh).
#
#   http-recorder.py ADDR PORT LOG RAW
#
# Keep-alive and pipelining as a real server does them: requests are read
# one after another from each connection (Content-Length and chunked bodies
# consumed), each answered "200 ok PATH" with a Content-Length. LOG gets one
# line per request, "CONN METHOD TARGET HOST", flushed at once; RAW gets
# every byte any connection sent, so a test can assert that bytes never
# arrived at all. An Upgrade: websocket (or h2c) request is answered 101 and
# the connection then echoes what it receives.
import socket
import sys
import threading

ADDR, PORT, LOG, RAW = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
log = open(LOG, 'a', buffering=1)
raw = open(RAW, 'ab', buffering=0)
lock = threading.Lock()
counter = [0]


def serve(c, n):
    buf = b''

    def more():
        nonlocal buf
        d = c.recv(65536)
        if not d:
            raise EOFError
        with lock:
            raw.write(d)
        buf += d

    try:
        while True:
            while b'\r\n\r\n' not in buf:
                more()
            head, buf = buf.split(b'\r\n\r\n', 1)
            lines = head.decode('latin-1').split('\r\n')
            parts = lines[0].split(' ')
            hdr = {}
            for l in lines[1:]:
                k, _, v = l.partition(':')
                hdr[k.strip().lower()] = v.strip()
            with lock:
                log.write('%d %s %s %s\n' % (n, parts[0], parts[1] if len(parts) > 1 else '-',
                                             hdr.get('host', '-')))
            if hdr.get('transfer-encoding', '').lower() == 'chunked':
                while True:
                    while b'\r\n' not in buf:
                        more()
                    size, buf = buf.split(b'\r\n', 1)
                    size = int(size, 16)
                    while len(buf) < size + 2:
                        more()
                    buf = buf[size + 2:]
                    if size == 0:
                        break
            else:
                cl = int(hdr.get('content-length', '0') or 0)
                while len(buf) < cl:
                    more()
                buf = buf[cl:]
            if hdr.get('upgrade'):
                c.sendall(b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: %s\r\n'
                          b'Connection: Upgrade\r\n\r\n' % hdr['upgrade'].encode())
                if buf:
                    c.sendall(buf)
                while True:
                    d = c.recv(65536)
                    if not d:
                        return
                    with lock:
                        raw.write(d)
                    c.sendall(d)
            body = ('ok %s\n' % (parts[1] if len(parts) > 1 else '-')).encode()
            c.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n'
                      b'\r\n%s' % (len(body), body))
            if hdr.get('connection', '').lower() == 'close':
                return
    except (EOFError, ConnectionError, ValueError):
        return
    finally:
        c.close()


s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((ADDR, PORT))
s.listen(64)
while True:
    c, _ = s.accept()
    counter[0] += 1
    threading.Thread(target=serve, args=(c, counter[0]), daemon=True).start()
