#!/usr/bin/env python3
"""Helpers for net-e2e.sh, run inside the sandbox's network namespace.

  frames.py dns-udp SERVER NAME QTYPE      print "rcode=N answers=A,B"
  frames.py dns-tcp SERVER NAME QTYPE      same, over TCP
  frames.py hostile IFACE                  write hostile frames to the TAP (AF_PACKET)
  frames.py udp-echo HOST PORT TEXT        send one datagram, print the reply
  frames.py ping HOST                      one ICMP echo; exit 0 if answered within 2 s
"""
import socket
import struct
import sys

GW_MAC = bytes.fromhex("02b0c5000002")


def dns_query(name, qtype):
    q = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", qtype, 1)


def dns_summary(resp):
    rcode = resp[3] & 0x0F
    an = struct.unpack("!H", resp[6:8])[0]
    off = 12
    while resp[off]:
        off += resp[off] + 1
    off += 5
    addrs = []
    for _ in range(an):
        if resp[off] & 0xC0 == 0xC0:
            off += 2
        else:
            while resp[off]:
                off += resp[off] + 1
            off += 1
        rtype, _, _, rdlen = struct.unpack("!HHIH", resp[off:off + 10])
        off += 10
        rdata = resp[off:off + rdlen]
        off += rdlen
        if rtype == 1:
            addrs.append(socket.inet_ntop(socket.AF_INET, rdata))
        elif rtype == 28:
            addrs.append(socket.inet_ntop(socket.AF_INET6, rdata))
    return "rcode=%d answers=%s" % (rcode, ",".join(addrs))


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4_frame(src_mac, src, dst, proto, l4):
    src_b, dst_b = socket.inet_aton(src), socket.inet_aton(dst)
    if proto == 6:
        pseudo = src_b + dst_b + struct.pack("!BBH", 0, 6, len(l4))
        l4 = l4[:16] + struct.pack("!H", csum(pseudo + l4)) + l4[18:]
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64, proto, 0,
                      src_b, dst_b)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return GW_MAC + src_mac + b"\x08\x00" + hdr + l4


def ipv6_frame(src_mac, src, dst, proto, l4):
    src_b = socket.inet_pton(socket.AF_INET6, src)
    dst_b = socket.inet_pton(socket.AF_INET6, dst)
    if proto == 6:
        pseudo = src_b + dst_b + struct.pack("!IxxxB", len(l4), 6)
        l4 = l4[:16] + struct.pack("!H", csum(pseudo + l4)) + l4[18:]
    if proto == 17:
        pseudo = src_b + dst_b + struct.pack("!IxxxB", len(l4), 17)
        l4 = l4[:6] + struct.pack("!H", csum(pseudo + l4) or 0xFFFF) + l4[8:]
    hdr = struct.pack("!IHBB16s16s", 0x60000000, len(l4), proto, 64, src_b, dst_b)
    return GW_MAC + src_mac + b"\x86\xdd" + hdr + l4


def syn(sport, dport):
    return struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 5 << 4, 0x02, 65535, 0, 0)


def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def hostile(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    mac = s.getsockname()[4]
    frames = {
        "spoofed-source SYN": ipv4_frame(mac, "10.0.2.99", "192.0.2.1", 6, syn(4000, 80)),
        "src==dst SYN (sandbox)": ipv4_frame(mac, "10.0.2.15", "10.0.2.15", 6, syn(4001, 80)),
        "src==dst SYN (gateway)": ipv4_frame(mac, "10.0.2.2", "10.0.2.2", 6, syn(4002, 80)),
        "loopback destination": ipv4_frame(mac, "10.0.2.15", "127.0.0.1", 6, syn(4003, 80)),
        ".255 broadcast UDP": ipv4_frame(mac, "10.0.2.15", "10.0.2.255", 17, udp(4004, 53, b"x")),
        "limited broadcast UDP": ipv4_frame(mac, "10.0.2.15", "255.255.255.255", 17,
                                            udp(4005, 9, b"x")),
        "multicast UDP": ipv4_frame(mac, "10.0.2.15", "224.0.0.251", 17, udp(5353, 5353, b"x")),
        "IPv6 src==dst SYN": ipv6_frame(mac, "fd00:b0c5::15", "fd00:b0c5::15", 6,
                                        syn(4006, 80)),
        "IPv6 spoofed SYN": ipv6_frame(mac, "fd00:b0c5::99", "2001:db8::1", 6, syn(4007, 80)),
        "IPv6 loopback SYN": ipv6_frame(mac, "fd00:b0c5::15", "::1", 6, syn(4008, 80)),
        "IPv6 DNS query to a mapped address": ipv6_frame(
            mac, "fd00:b0c5::15", "::ffff:8.8.8.8", 17, udp(4010, 53, dns_query("m.test", 1))),
        "IPv6 DNS query (raw frame)": ipv6_frame(
            mac, "fd00:b0c5::15", "2001:db8::53", 17, udp(4013, 53, dns_query("raw.test", 1))),
        "IPv6 SYN to port 53 of a mapped address": ipv6_frame(
            mac, "fd00:b0c5::15", "::ffff:8.8.4.4", 6, syn(4011, 53)),
        "IPv6 SYN to port 53 of a NAT64 address": ipv6_frame(
            mac, "fd00:b0c5::15", "64:ff9b::808:808", 6, syn(4012, 53)),
        "runt": GW_MAC + mac + b"\x08\x00\x45",
        "truncated TCP": ipv4_frame(mac, "10.0.2.15", "192.0.2.1", 6, syn(4009, 80))[:40],
    }
    for name, frame in frames.items():
        s.send(frame)
        print("sent", name)


def ping(host):
    v6 = ":" in host
    if v6:
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        msg = struct.pack("!BBHHH", 128, 0, 0, 0x4242, 1) + b"boxy"
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        msg = struct.pack("!BBHHH", 8, 0, 0, 0x4242, 1) + b"boxy"
        msg = msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]
    s.settimeout(2)
    s.sendto(msg, (host, 0))
    try:
        while True:
            data = s.recv(2048)
            icmp = data if v6 else data[(data[0] & 15) * 4:]
            if icmp[0] == (129 if v6 else 0) and icmp[4:6] == b"\x42\x42":
                print("echo reply from", host)
                return 0
    except socket.timeout:
        return 1


def main():
    cmd = sys.argv[1]
    if cmd in ("dns-udp", "dns-tcp"):
        server, name, qtype = sys.argv[2], sys.argv[3], int(sys.argv[4])
        q = dns_query(name, qtype)
        if cmd == "dns-udp":
            s = socket.socket(family(server), socket.SOCK_DGRAM)
            s.settimeout(5)
            s.sendto(q, (server, 53))
            resp = s.recv(4096)
        else:
            s = socket.create_connection((server, 53), timeout=5)
            s.sendall(struct.pack("!H", len(q)) + q)
            n = struct.unpack("!H", s.recv(2))[0]
            resp = b""
            while len(resp) < n:
                resp += s.recv(n - len(resp))
        print(dns_summary(resp))
    elif cmd == "hostile":
        hostile(sys.argv[2])
    elif cmd == "udp-echo":
        host, port, text = sys.argv[2], int(sys.argv[3]), sys.argv[4]
        s = socket.socket(family(host), socket.SOCK_DGRAM)
        s.settimeout(5)
        s.sendto(text.encode(), (host, port))
        print(s.recv(4096).decode())
    elif cmd == "ping":
        sys.exit(ping(sys.argv[2]))


main()
