#!/usr/bin/env python3
# frame-seeds.py — write the seed corpus of fuzz-frame (tests/fuzz/corpus/frame/).
#
#   python3 tests/fuzz/frame-seeds.py tests/fuzz/corpus/frame
#
# Each seed is in fuzz-frame.c's input format: frames, each preceded by its
# 2-byte big-endian length. The IPv4 seeds use the target's hint (a zero first
# byte: the target writes the Ethernet header, the sandbox's source address,
# the lengths and the checksums), so that the fuzzer's mutations of them stay
# well-formed enough to reach lwIP. The ARP and IPv6 seeds are complete frames
# with valid checksums. Run it again only to change the seeds; the files are
# kept in the tree so that the corpus does not depend on Python.
import os
import struct
import sys

SANDBOX_MAC = bytes([0x52, 0x54, 0, 0x12, 0x34, 0x56])
GW_MAC = bytes([0x02, 0xb0, 0xc5, 0, 0, 2])
SANDBOX4, GATEWAY4 = bytes([10, 0, 2, 15]), bytes([10, 0, 2, 2])
REMOTE4 = bytes([192, 0, 2, 80])
SANDBOX6 = bytes.fromhex("fd00b0c5000000000000000000000015")
GATEWAY6 = bytes.fromhex("fd00b0c5000000000000000000000002")


def csum(data, start=0):
    """The Internet checksum (RFC 1071) of data, starting from the sum start."""
    if len(data) % 2:
        data += b"\0"
    s = start + sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def hinted4(tcp, dst, l4):
    """An IPv4 frame in the hint form: fuzz-frame fixes header, lengths, sums.
    The target reads an odd protocol byte as TCP and an even one as UDP."""
    proto = 7 if tcp else 16
    eth = b"\0" * 14
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 0, 0, 0x4000, 64, proto, 0, SANDBOX4, dst)
    return eth + ip + l4


def dns_query(name, qtype, qid=0x1234):
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", qtype, 1)


def tcp_syn(sport, dport):
    opts = struct.pack("!BBH", 2, 4, 1460) + b"\x01\x01\x04\x02"   # MSS, NOP, NOP, SACK ok
    off = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, off << 4, 0x02, 65535, 0, 0) + opts


def ipv6_frame(nexthdr, dst_mac, dst, l4, l4_sum_offset):
    """A complete IPv6 frame from the sandbox with a correct L4 checksum."""
    pseudo = SANDBOX6 + dst + struct.pack("!IxxxB", len(l4), nexthdr)
    l4 = bytearray(l4)
    l4[l4_sum_offset:l4_sum_offset + 2] = b"\0\0"
    c = csum(pseudo + bytes(l4))
    l4[l4_sum_offset:l4_sum_offset + 2] = struct.pack("!H", c)
    ip = struct.pack("!IHBB16s16s", 0x60000000, len(l4), nexthdr, 255 if nexthdr == 58 else 64,
                     SANDBOX6, dst)
    return dst_mac + SANDBOX_MAC + b"\x86\xdd" + ip + bytes(l4)


def arp_request(target):
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, SANDBOX_MAC, SANDBOX4,
                      b"\0" * 6, target)
    return b"\xff" * 6 + SANDBOX_MAC + b"\x08\x06" + arp


def neighbour_solicit(target):
    sol_mac = bytes([0x33, 0x33, 0xff]) + target[13:]
    sol_ip = bytes.fromhex("ff0200000000000000000001ff") + target[13:]
    icmp = struct.pack("!BBHI16s", 135, 0, 0, 0, target) + bytes([1, 1]) + SANDBOX_MAC
    return ipv6_frame(58, sol_mac, sol_ip, icmp, 2)


def udp6(dport, payload):
    udp = struct.pack("!HHHH", 40000, dport, 8 + len(payload), 0) + payload
    return ipv6_frame(17, GW_MAC, GATEWAY6, udp, 6)


def framed(*frames):
    return b"".join(struct.pack("!H", len(f)) + f for f in frames)


def vnet(flags, gso, hdr_len, gso_size, cs_start, cs_off, frame):
    """A frame behind its own virtio-net header (little-endian fields), marked
    for fuzz-frame by the length's top bit; without it the target puts a zero
    header in front."""
    return struct.pack("<BBHHHH", flags, gso, hdr_len, gso_size, cs_start, cs_off) + frame


def framed_vnet(*reads):
    return b"".join(struct.pack("!H", 0x8000 | len(r)) + r for r in reads)


SEEDS = {
    "arp-request": framed(arp_request(GATEWAY4)),
    "dns-udp4": framed(hinted4(False, GATEWAY4,
                               struct.pack("!HHHH", 40000, 53, 0, 0)
                               + dns_query("www.example.com", 1))),
    "tcp4-syn": framed(hinted4(True, REMOTE4, tcp_syn(40001, 443))),
    "tcp4-syn-dns": framed(hinted4(True, GATEWAY4, tcp_syn(40002, 53)),
                           hinted4(False, GATEWAY4, struct.pack("!HHHH", 40003, 53, 0, 0)
                                   + dns_query("example.org", 28, 0x4321))),
    "ns-udp6-dns": framed(neighbour_solicit(GATEWAY6),
                          udp6(53, dns_query("www.example.com", 28, 0x5678))),
    "vnet-tcp4-partial": framed_vnet(vnet(1, 0, 0, 0, 34, 16,
                                          hinted4(True, REMOTE4, tcp_syn(40004, 80)))),
    "vnet-udp4-partial": framed_vnet(vnet(1, 0, 0, 0, 34, 6,
                                          hinted4(False, GATEWAY4,
                                                  struct.pack("!HHHH", 40005, 53, 0, 0)
                                                  + dns_query("example.net", 1, 0x1111)))),
    "vnet-tcp4-gso": framed_vnet(vnet(1, 1, 54, 1448, 34, 16,
                                      hinted4(True, GATEWAY4, tcp_syn(40006, 53)))),
    "vnet-udp6-partial": framed_vnet(vnet(1, 0, 0, 0, 54, 6,
                                          udp6(53, dns_query("www.example.com", 1, 0x2222)))),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/frame"
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
