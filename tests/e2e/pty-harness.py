#!/usr/bin/python3
"""pty-harness.py — run a shell command on a fresh pty, as a terminal and a
user would: the command's session has the pty as its controlling terminal
and fds 0-2 (the command line's own redirections apply on top), the harness
holds the master and records everything written to it.

    pty-harness.py [options] --capture FILE -- 'shell command'

Options:
  --send REGEX=KEYS   when REGEX (bytes, Python syntax) has appeared in the
                      output, type KEYS (\\xNN escapes allowed); in order, each
                      once, matched only in output after the previous send
  --answer SECS       act as a terminal that answers queries (DSR CSI 6n,
                      DA CSI c, OSC 11 ?) SECS seconds after seeing them
  --kill-when FILE    once FILE exists, SIGKILL the command (its pid; the
                      command should `exec` boxy), then type --type-after
                      and keep recording for --linger seconds
  --type-after KEYS   what the user types into the "host shell" after the kill
  --linger SECS       (default 3)
  --pending FILE      after the command ended and 1 s more, read what is
                      waiting in the pty's input (what the shell would read
                      next) into FILE
  --rdev-file FILE    write the pty's device as MAJOR:MINOR to FILE first
  --timeout SECS      kill everything after SECS (default 60)
  --rows/--cols       the window size (24x80)

Prints the command's exit status (or "killed") on stdout. The capture
after a --kill-when kill is written to FILE.after.
"""
import argparse
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time


def unescape(s):
    """\\xNN, \\r, \\n, \\t and \\\\ to bytes; any other backslash stays as it is."""
    out, i = bytearray(), 0
    b = s.encode()
    while i < len(b):
        c = b[i:i + 1]
        nxt = b[i + 1:i + 2]
        if c == b"\\" and nxt == b"x" and i + 3 < len(b):
            out += bytes([int(b[i + 2:i + 4], 16)])
            i += 4
        elif c == b"\\" and nxt in (b"r", b"n", b"t"):
            out += {b"r": b"\r", b"n": b"\n", b"t": b"\t"}[nxt]
            i += 2
        elif c == b"\\" and nxt == b"\\":
            out += b"\\"
            i += 2
        else:
            out += c
            i += 1
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--capture", required=True)
    ap.add_argument("--send", action="append", default=[])
    ap.add_argument("--answer", type=float)
    ap.add_argument("--kill-when")
    ap.add_argument("--type-after", default="")
    ap.add_argument("--linger", type=float, default=3.0)
    ap.add_argument("--pending")
    ap.add_argument("--rdev-file")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--cols", type=int, default=80)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", a.rows, a.cols, 0, 0))
    if a.rdev_file:
        st = os.fstat(slave)
        with open(a.rdev_file, "w") as f:
            f.write("%d:%d\n" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
    sends = []
    for s in a.send:
        pat, _, keys = s.partition("=")
        sends.append((re.compile(unescape(pat), re.S), unescape(keys)))

    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        os.execv("/bin/sh", ["sh", "-c", " ".join(a.cmd)])

    out = bytearray()
    after = bytearray()
    seen_from = 0
    answers = []            # (time, bytes)
    answered = 0            # output offset scanned for queries
    status = None
    killed_at = None
    deadline = time.time() + a.timeout
    query = re.compile(rb"\x1b\[6n|\x1b\[0?c|\x1b\]11;\?(\x07|\x1b\\)")

    def drain(timeout):
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            return b""
        try:
            return os.read(master, 65536)
        except OSError:
            return b""

    while True:
        now = time.time()
        if now > deadline:
            # the command's whole session: boxy, and a sh around it
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = "timeout"
            break
        chunk = drain(0.05)
        if killed_at is None:
            out += chunk
        else:
            after += chunk
        if sends:
            m = sends[0][0].search(bytes(out), seen_from)
            if m:
                os.write(master, sends[0][1])
                seen_from = m.end()
                sends.pop(0)
        if a.answer is not None:
            for m in query.finditer(bytes(out), answered):
                reply = b"\x1b[7;7R" if b"6n" in m.group(0) else (
                    b"\x1b[?62;22c" if m.group(0).endswith(b"c") else
                    b"\x1b]11;rgb:0000/0000/0000\x1b\\")
                answers.append((now + a.answer, reply))
                answered = m.end()
            for t, reply in list(answers):
                if t <= now:
                    os.write(master, reply)
                    answers.remove((t, reply))
        if a.kill_when and killed_at is None and os.path.exists(a.kill_when):
            os.kill(pid, signal.SIGKILL)
            # What the command wrote before it died may still sit unread in
            # the pty: wait until it is dead (not reaping it), take all of
            # that as "before", and only then count what arrives as "after" —
            # a heavily loaded machine otherwise showed its last line as a leak.
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            while True:
                chunk = drain(0)
                if not chunk:
                    break
                out += chunk
            now = time.time()
            killed_at = now
            time.sleep(0.3)
            if a.type_after:
                os.write(master, unescape(a.type_after))
        if killed_at is not None:
            if now - killed_at > a.linger:
                os.waitpid(pid, 0)
                status = "killed"
                break
            continue
        if status is None:
            w, st = os.waitpid(pid, os.WNOHANG)
            if w == pid:
                status = os.waitstatus_to_exitcode(st)
                # what is still on its way, and the answers still due
                end = time.time() + (1.0 if a.answer is None else a.answer + 1.0)
                while time.time() < end:
                    now = time.time()
                    out += drain(0.05)
                    for t, reply in list(answers):
                        if t <= now:
                            os.write(master, reply)
                            answers.remove((t, reply))
                break

    if a.pending:
        # What the user's shell would read next: take the line discipline out
        # of canonical mode so that an unterminated answer is readable too.
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~(termios.ICANON | termios.ECHO)
        attrs[6][termios.VMIN] = 0
        attrs[6][termios.VTIME] = 0
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        fl = fcntl.fcntl(slave, fcntl.F_GETFL)
        fcntl.fcntl(slave, fcntl.F_SETFL, fl | os.O_NONBLOCK)
        pending = b""
        try:
            pending = os.read(slave, 65536)
        except OSError:
            pass
        with open(a.pending, "wb") as f:
            f.write(pending)
    with open(a.capture, "wb") as f:
        f.write(out)
    if a.kill_when:
        with open(a.capture + ".after", "wb") as f:
            f.write(after)
    print(status)


if __name__ == "__main__":
    main()
