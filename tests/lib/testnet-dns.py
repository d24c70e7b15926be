#!/usr/bin/python3
# testnet-dns.py — the hermetic test network's DNS resolver (UDP and TCP).
#
#   testnet-dns.py ADDR ZONE LOG
#
# ZONE has one record a line: "NAME TYPE ADDRESS" (TYPE A or AAAA). Names in
# the zone get their records (TTL 60), or an empty NOERROR for the other
# type; every other name gets NXDOMAIN. Every question is appended to LOG as
# "NAME TYPE" and flushed at once, so a test can assert that a name was
# never asked for.
import socket
import socketserver
import struct
import sys
import threading

ADDR, ZONE, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
records = {}
for line in open(ZONE):
    parts = line.split()
    if len(parts) == 3:
        records.setdefault(parts[0].lower().rstrip('.'), []).append((parts[1], parts[2]))
log = open(LOG, 'a', buffering=1)
lock = threading.Lock()


def parse_question(msg):
    """Return (name, qtype, end offset of the question) or None."""
    if len(msg) < 12:
        return None
    off, labels = 12, []
    while True:
        if off >= len(msg):
            return None
        n = msg[off]
        off += 1
        if n == 0:
            break
        if n & 0xC0 or off + n > len(msg):
            return None
        labels.append(msg[off:off + n].decode('ascii', 'replace'))
        off += n
    if off + 4 > len(msg):
        return None
    qtype = struct.unpack('!H', msg[off:off + 2])[0]
    return '.'.join(labels).lower(), qtype, off + 4


def answer(msg):
    q = parse_question(msg)
    if q is None:
        return None
    name, qtype, end = q
    with lock:
        log.write('%s %s\n' % (name, {1: 'A', 28: 'AAAA'}.get(qtype, str(qtype))))
    rrs = []
    if name in records:
        rcode = 0
        for typ, addr in records[name]:
            if typ == 'A' and qtype == 1:
                rrs.append(struct.pack('!HHHIH', 0xC00C, 1, 1, 60, 4) +
                           socket.inet_pton(socket.AF_INET, addr))
            elif typ == 'AAAA' and qtype == 28:
                rrs.append(struct.pack('!HHHIH', 0xC00C, 28, 1, 60, 16) +
                           socket.inet_pton(socket.AF_INET6, addr))
    else:
        rcode = 3
    flags = 0x8000 | (msg[2] & 0x01) << 8 | 0x0080 | rcode
    head = msg[:2] + struct.pack('!HHHHH', flags, 1, len(rrs), 0, 0)
    return head + msg[12:end] + b''.join(rrs)


class UDP(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        out = answer(data)
        if out:
            sock.sendto(out, self.client_address)


class TCP(socketserver.StreamRequestHandler):
    def handle(self):
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            data = self.rfile.read(struct.unpack('!H', head)[0])
            out = answer(data)
            if not out:
                return
            self.wfile.write(struct.pack('!H', len(out)) + out)


class UDPServer(socketserver.ThreadingUDPServer):
    allow_reuse_address = True


class TCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


if ':' in ADDR:
    UDPServer.address_family = TCPServer.address_family = socket.AF_INET6
udp = UDPServer((ADDR, 53), UDP)
tcp = TCPServer((ADDR, 53), TCP)
threading.Thread(target=tcp.serve_forever, daemon=True).start()
udp.serve_forever()
