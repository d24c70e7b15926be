#!/usr/bin/python3
# tls-attack.py — a hostile payload against boxy's TLS inspection, run inside the
# sandbox by tests/e2e/http-inspect-attacks.sh. Each subcommand tries one way to get
# a request past the gate, or to crash or confuse boxy-net, and prints what it saw;
# the suite judges by what the test servers received (each attack asks for a path
# under /v2/atk-NAME, which no rule allows) and by whether boxy-net is still alive.
#
#   tls-attack.py hellos | h2smuggle | resume | alpn | headers
#   tls-attack.py pipeslow BYTES SECONDS     a refusal pipelined behind a long answer read slowly
#   tls-attack.py h2streams CONNS SECONDS    long HTTP/2 downloads, a hundred a connection
import os
import random
import socket
import ssl
import sys
import time

API, GRPC = 'api.test', 'grpc.test'


def ctx(alpn=None, verify=True):
    c = ssl.create_default_context()
    if not verify:
        c.check_hostname = False
        c.verify_mode = ssl.CERT_NONE
    if alpn:
        c.set_alpn_protocols(alpn)
    return c


def tls(host, alpn=None, **kw):
    s = socket.create_connection((host, 443), timeout=5)
    return ctx(alpn).wrap_socket(s, server_hostname=host, **kw)


def drain(s, limit=5.0):
    out = b''
    s.settimeout(limit)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (socket.timeout, OSError, ssl.SSLError):
        pass
    return out


def hello_bytes(host=API, alpn=('h2', 'http/1.1')):
    """A real ClientHello, from OpenSSL itself (python's ssl on memory BIOs)."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    o = ctx(list(alpn)).wrap_bio(inc, out, server_hostname=host)
    try:
        o.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def raw(data, wait=0.4):
    """Send bytes on a fresh TCP connection to api.test:443; what came back."""
    try:
        s = socket.create_connection((API, 443), timeout=2)
        s.sendall(data)
        got = drain(s, wait)
        s.close()
        return got
    except OSError as e:
        return ('error %s' % e.errno).encode()


def records(body, size):
    """A handshake message cut into TLS records of size bytes."""
    out = b''
    for i in range(0, len(body), size):
        part = body[i:i + size]
        out += b'\x16\x03\x01' + len(part).to_bytes(2, 'big') + part
    return out


def cmd_hellos():
    """ClientHellos built to crash or confuse the terminator."""
    rnd = random.Random(1234)
    h = hello_bytes()
    body = h[5:]
    variants = [
        records(body, 1),                           # a record per byte
        records(body, 7) + b'\x17\x03\x03\x00\x05hello',   # application data before a reply
        h + b'\x16\x03\x01\x00\x04\x01\x00\x00\x00',        # a second ClientHello
        h + os.urandom(300),                        # junk after it
        h[:len(h) // 2],                            # half of it, then silence
        h.replace(b'api.test', b'API.TEST'),        # the name in capitals (same name)
        h + b'\x15\x03\x03\x00\x02\x02\x28',        # an alert right behind it
    ]
    for _ in range(120):                            # bytes flipped anywhere
        b = bytearray(h)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        variants.append(bytes(b))
    for n in range(6, len(h), max(1, len(h) // 30)):  # truncated everywhere
        variants.append(h[:n])
    answers = 0
    for v in variants:
        if raw(v):
            answers += 1
    print('hellos sent', len(variants), 'answered', answers)


def h2_conn(host=GRPC, validate=True):
    import h2.config
    import h2.connection
    s = tls(host, alpn=['h2'])
    cfg = h2.config.H2Configuration(client_side=True, header_encoding='utf-8',
                                    validate_outbound_headers=validate,
                                    normalize_outbound_headers=validate,
                                    validate_inbound_headers=False)
    c = h2.connection.H2Connection(cfg)
    c.initiate_connection()
    s.sendall(c.data_to_send())
    return s, c


def h2_exchange(s, c, limit=3.0):
    """Read events until the connection ends or limit passes: (statuses, resets, goaway)."""
    import h2.events
    st, resets, goaway = {}, [], False
    s.settimeout(0.5)
    end = time.time() + limit
    while time.time() < end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except (OSError, ssl.SSLError):
            break
        if not d:
            break
        try:
            evs = c.receive_data(d)
        except Exception:
            break
        for ev in evs:
            if isinstance(ev, h2.events.ResponseReceived):
                st[ev.stream_id] = dict(ev.headers).get(':status')
            elif isinstance(ev, h2.events.StreamReset):
                resets.append(ev.stream_id)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                goaway = True
        out = c.data_to_send()
        if out:
            s.sendall(out)
    return st, resets, goaway


def h2_one(headers, body=None, validate=False, extra=None):
    s, c = h2_conn(validate=validate)
    c.send_headers(1, headers, end_stream=body is None and extra is None)
    if body is not None:
        c.send_data(1, body, end_stream=extra is None)
    if extra is not None:
        c.send_headers(1, extra, end_stream=True)
    s.sendall(c.data_to_send())
    r = h2_exchange(s, c)
    s.close()
    return r


def base(path, authority=GRPC, method='GET'):
    return [(':method', method), (':scheme', 'https'), (':authority', authority), (':path', path)]


def cmd_h2smuggle():
    """Requests smuggled through HTTP/2 toward the gate."""
    cases = [
        ('host-header', base('/v1/ok-host') + [('host', 'evil.test')], None, None),
        ('dot-segment', base('/v1/../v2/atk-dot'), None, None),
        ('encoded-dot', base('/v1/%2e%2e/v2/atk-enc'), None, None),
        ('absolute', base('https://evil.test/v2/atk-abs'), None, None),
        ('scheme-relative', base('//evil.test/v2/atk-sr'), None, None),
        ('userinfo', base('/v1/x-ui', authority='grpc.test@evil.test'), None, None),
        ('other-authority', base('/v1/x-oa', authority='evil.test'), None, None),
        ('other-port', base('/v1/x-op', authority='grpc.test:8443'), None, None),
        ('crlf-in-path', base('/v1/x HTTP/1.1\r\nX: GET /v2/atk-crlf'), None, None),
        ('cl-mismatch', base('/v1/x-cl', method='POST') + [('content-length', '0')],
         b'GET /v2/atk-cl HTTP/1.1\r\nHost: grpc.test\r\n\r\n', None),
        ('path-in-trailers', base('/v1/x-tr', method='POST'), b'x',
         [(':path', '/v2/atk-trailer')]),
        ('two-paths', base('/v1/x-two') + [(':path', '/v2/atk-two')], None, None),
        ('connect', [(':method', 'CONNECT'), (':authority', 'grpc.test:443')], None, None),
        ('extended-connect', base('/v2/atk-ws') + [(':protocol', 'websocket')], None, None),
    ]
    for name, hdrs, body, extra in cases:
        try:
            st, resets, goaway = h2_one(hdrs, body, extra=extra)
            print('h2', name, 'status', st.get(1, '-'), 'reset', 1 in resets, 'goaway', goaway)
        except Exception as e:
            print('h2', name, 'error', type(e).__name__)


def cmd_resume():
    """A resumed session, to carry a name or a request past the checks."""
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        c = ctx()
        c.maximum_version = version
        s1 = c.wrap_socket(socket.create_connection((API, 443), timeout=5),
                           server_hostname=API)
        s1.sendall(b'GET /v1/resume-one HTTP/1.1\r\nHost: api.test\r\n\r\n')
        drain(s1, 1.0)
        sess = s1.session
        s1.close()
        reused = None
        try:
            s2 = c.wrap_socket(socket.create_connection((API, 443), timeout=5),
                               server_hostname=API, session=sess)
            reused = s2.session_reused
            s2.sendall(b'GET /v2/atk-resume HTTP/1.1\r\nHost: api.test\r\n\r\n')
            got = drain(s2, 1.0)
            print('resume', version.name, 'reused', reused, 'answer', got.split(b'\r\n')[0])
        except (OSError, ssl.SSLError) as e:
            print('resume', version.name, 'reused', reused, 'error', e)
        # the session again, under another name than the one the broker allowed
        try:
            s3 = c.wrap_socket(socket.create_connection((API, 443), timeout=5),
                               server_hostname='other.example.test', session=sess)
            print('resume', version.name, 'other-name connected', s3.session_reused)
        except (OSError, ssl.SSLError, ValueError) as e:
            print('resume', version.name, 'other-name refused', type(e).__name__)


def cmd_alpn():
    """ALPN tricks to get an unchecked protocol."""
    def attempt(name, host, alpn, send):
        try:
            s = tls(host, alpn=alpn)
            sel = s.selected_alpn_protocol()
            s.sendall(send)
            got = drain(s, 1.5)
            print('alpn', name, 'selected', sel, 'answer', got[:40])
        except (OSError, ssl.SSLError) as e:
            print('alpn', name, 'refused', getattr(e, 'reason', e))
    preface = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
    attempt('h2c-only', API, ['h2c'], b'GET /v2/atk-h2c HTTP/1.1\r\nHost: api.test\r\n\r\n')
    attempt('spdy-only', API, ['spdy/3.1', 'h3'], b'GET /v2/atk-spdy HTTP/1.1\r\nHost: api.test\r\n\r\n')
    attempt('h2-to-h1-server', API, ['h2'], preface)
    attempt('preface-on-http11', API, ['http/1.1'], preface +
            b'\x00\x00\x00\x04\x00\x00\x00\x00\x00GET /v2/atk-preface HTTP/1.1\r\n\r\n')
    attempt('h1-on-h2', GRPC, ['h2', 'http/1.1'],
            b'GET /v2/atk-h1inh2 HTTP/1.1\r\nHost: grpc.test\r\n\r\n')
    attempt('no-alpn-h2-server', GRPC, None,
            b'GET /v2/atk-noalpn HTTP/1.1\r\nHost: grpc.test\r\n\r\n')


def cmd_headers():
    """A huge header list, both protocols."""
    big = 'x' * 100
    try:
        s = tls(API)
        s.sendall(b'GET /v2/atk-h1big HTTP/1.1\r\nHost: api.test\r\n' +
                  b''.join(b'X-%d: %s\r\n' % (i, big.encode()) for i in range(1000)) + b'\r\n')
        print('headers h1', drain(s, 2.0).split(b'\r\n')[0])
    except (OSError, ssl.SSLError) as e:
        print('headers h1 error', e)
    for name, hdrs in [
        ('many', base('/v2/atk-many') + [('x-%d' % i, big) for i in range(1000)]),
        ('bomb', base('/v2/atk-bomb') + [('x-bomb', 'b' * 4000)] * 400),
    ]:
        try:
            st, resets, goaway = h2_one(hdrs, validate=True)
            print('headers h2', name, 'status', st.get(1, '-'), 'reset', 1 in resets,
                  'goaway', goaway)
        except Exception as e:
            print('headers h2', name, 'error', type(e).__name__)


def cmd_pipeslow():
    """A long answer read slowly, a refused request pipelined behind it: where does the 403 land?"""
    n, slow = int(sys.argv[2]), float(sys.argv[3])
    s = tls(API, alpn=['http/1.1'])
    s.sendall(b'GET /big?n=%d HTTP/1.1\r\nHost: api.test\r\n\r\n'
              b'GET /v2/atk-pipe HTTP/1.1\r\nHost: api.test\r\n\r\n' % n)
    got, t0 = b'', time.time()
    s.settimeout(20)
    try:
        while True:
            d = s.recv(16384)
            if not d:
                break
            got += d
            if time.time() - t0 < slow:
                time.sleep(0.01)
    except (OSError, ssl.SSLError) as e:
        print('pipeslow error', type(e).__name__)
    head, _, body = got.partition(b'\r\n\r\n')
    print('pipeslow body', len(body), 'of', n, '403 at', body.find(b'HTTP/1.1 403'))


def cmd_h2streams():
    """A hundred long downloads on each of CONNS HTTP/2 connections, read for SECONDS."""
    import select
    import h2.config
    import h2.connection
    import h2.events
    nconn, secs = int(sys.argv[2]), float(sys.argv[3])
    conns = []
    for _ in range(nconn):
        s = tls('h2.test', alpn=['h2'])
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                                 header_encoding='utf-8'))
        c.initiate_connection()
        for k in range(100):
            c.send_headers(2 * k + 1, base('/v1/big', authority='h2.test'), end_stream=True)
        s.sendall(c.data_to_send())
        conns.append((s, c))
    got, end = 0, time.time() + secs
    while time.time() < end:
        ready, _, _ = select.select([s for s, _ in conns], [], [], 0.2)
        for s, c in conns:
            if s not in ready:
                continue
            try:
                d = s.recv(65536)
            except (OSError, ssl.SSLError):
                continue
            for ev in c.receive_data(d) if d else []:
                if isinstance(ev, h2.events.DataReceived):
                    got += len(ev.data)
                    c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            s.sendall(c.data_to_send())
    print('h2streams read', got)


{'hellos': cmd_hellos, 'h2smuggle': cmd_h2smuggle, 'resume': cmd_resume, 'alpn': cmd_alpn,
 'headers': cmd_headers, 'pipeslow': cmd_pipeslow, 'h2streams': cmd_h2streams}[sys.argv[1]]()
