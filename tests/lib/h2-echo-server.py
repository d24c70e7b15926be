#!/usr/bin/python3
# h2-echo-server.py — an HTTP/2 server over TLS for the hermetic test network
# (tests/e2e/http-inspect.sh), with Debian's python3-h2: each request's body
# is answered back with the request's content-type, then trailers
# (grpc-status 0, x-echo-len), which is the shape of a gRPC call.
#
#   h2-echo-server.py ADDR PORT CERT KEY LOG
#
# LOG gets one line a request: "METHOD PATH len=N" once its body has ended,
# and "HEADERS n=COUNT bytes=BYTES authority=A host=H path=P" for each request's
# header block.
import socket
import ssl
import sys
import threading

import h2.config
import h2.connection
import h2.events

addr, port, cert, key, logpath = sys.argv[1:6]
log = open(logpath, 'a', buffering=1)
lock = threading.Lock()


def note(line):
    with lock:
        log.write(line + '\n')


def serve(sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False,
                                                                 header_encoding='utf-8'))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    streams = {}
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return
            for ev in conn.receive_data(data):
                if isinstance(ev, h2.events.RequestReceived):
                    h = dict(ev.headers)
                    streams[ev.stream_id] = [h, b'']
                    note('HEADERS n=%d bytes=%d authority=%s host=%s path=%s' % (
                        len(ev.headers), sum(len(k) + len(v) for k, v in ev.headers),
                        h.get(':authority', '-'), h.get('host', '-'), h.get(':path', '-')))
                elif isinstance(ev, h2.events.DataReceived):
                    streams[ev.stream_id][1] += ev.data
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    h, body = streams.pop(ev.stream_id)
                    note('%s %s len=%d' % (h.get(':method'), h.get(':path'), len(body)))
                    conn.send_headers(ev.stream_id, [
                        (':status', '200'),
                        ('content-type', h.get('content-type', 'application/octet-stream'))])
                    off = 0
                    while off < len(body):
                        n = min(len(body) - off, conn.local_flow_control_window(ev.stream_id),
                                conn.max_outbound_frame_size)
                        if n <= 0:
                            sock.sendall(conn.data_to_send())
                            for e2 in conn.receive_data(sock.recv(65536)):
                                pass
                            continue
                        conn.send_data(ev.stream_id, body[off:off + n])
                        off += n
                    conn.send_headers(ev.stream_id, [('grpc-status', '0'),
                                                     ('x-echo-len', str(len(body)))],
                                      end_stream=True)
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    return
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
    except (OSError, h2.exceptions.ProtocolError):
        pass
    finally:
        sock.close()


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ctx.set_alpn_protocols(['h2'])
lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind((addr, int(port)))
lsock.listen(64)
while True:
    c, _ = lsock.accept()
    try:
        s = ctx.wrap_socket(c, server_side=True)
    except (OSError, ssl.SSLError):
        c.close()
        continue
    threading.Thread(target=serve, args=(s,), daemon=True).start()
