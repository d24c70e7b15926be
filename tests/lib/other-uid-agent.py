# tests/lib/other-uid-agent.py — a client of another uid, for the daemon's
# peer-uid refusal test when that test runs as the unprivileged test user
# (who cannot become anyone else). tests/e2e/daemon-lifecycle.sh, started as root, runs
# this as a second unprivileged user (boxytest2) before dropping to the test
# user, and passes the agent's socket on to test-daemon-proto.
#
#   python3 - AGENT_SOCKET WATCH_PID <other-uid-agent.py
#
# Each connection to AGENT_SOCKET sends one line "PATH<TAB>BUILD[<TAB>ID]"; the
# agent connects to PATH as its own uid, sends a MSG_HELLO for BUILD — and with
# ID, a MSG_RESUME for that session right behind it, as a client that does not
# wait for the welcome would (tests/e2e/react.sh) — and answers one line:
# "refused" (the daemon hung up without a reply), "served TYPE" (it replied),
# "noconnect ERRNO" or "timeout". It exits when WATCH_PID is gone.
import errno
import os
import select
import socket
import struct
import sys

MSG_HELLO = 0x0101
MSG_RESUME = 0x0207
MSG_PROTOCOL = 1


def hello(build):
    b = build.encode()
    payload = struct.pack("<I", MSG_PROTOCOL) + struct.pack("<I", len(b)) + b
    return struct.pack("<IHH", len(payload), MSG_HELLO, 0) + payload


def resume(sid):
    b = sid.encode()
    payload = struct.pack("<I", len(b)) + b + b"\x00"
    return struct.pack("<IHH", len(payload), MSG_RESUME, 0) + payload


def probe(path, build, sid=""):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        return "noconnect %s" % errno.errorcode.get(e.errno, e.errno)
    try:
        s.sendall(hello(build) + (resume(sid) if sid else b""))
    except OSError:
        return "refused"
    s.settimeout(3)
    try:
        head = s.recv(8)
    except socket.timeout:
        return "timeout"
    except OSError:
        return "refused"
    if len(head) < 8:
        return "refused"
    return "served 0x%04x" % struct.unpack("<IHH", head)[1]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def main():
    path, watch = sys.argv[1], int(sys.argv[2])
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o666)
    srv.listen(4)
    while alive(watch):
        r, _, _ = select.select([srv], [], [], 1.0)
        if not r:
            continue
        c, _ = srv.accept()
        c.settimeout(5)
        try:
            line = b""
            while not line.endswith(b"\n") and len(line) < 8192:
                chunk = c.recv(4096)
                if not chunk:
                    break
                line += chunk
            fields = line.decode(errors="replace").rstrip("\n").split("\t")
            target, build = fields[0], fields[1] if len(fields) > 1 else ""
            sid = fields[2] if len(fields) > 2 else ""
            c.sendall((probe(target, build, sid) + "\n").encode())
        except OSError:
            pass
        finally:
            c.close()
    try:
        os.unlink(path)
    except OSError:
        pass


main()
