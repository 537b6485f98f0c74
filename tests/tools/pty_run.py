#!/usr/bin/env python3
"""pty_run.py — runs a command on a pseudo-terminal and prints what it wrote.

    pty_run.py [--cols N] [--raw] [--timeout S] -- CMD [ARG...]  < INPUT

stdin, stdout and stderr of CMD are the slave side of a new pseudo-terminal
(N columns, default 80; CMD is the session leader, so it sees a terminal on
all three). Each line of INPUT is typed into the terminal after CMD shows a
prompt ("silt> " or "   ...> " at the end of its output so far) and has
switched the terminal out of canonical mode (libedit reads); the line
"<EOF>" types Ctrl-D, "<C-P>" Ctrl-P (previous history entry) followed by
Enter. Without INPUT lines nothing is typed and the output is read until CMD
exits. The transcript (what the terminal showed: prompts, echoed input,
output) is printed with terminal control sequences and carriage returns
removed, unless --raw. Exit status: that of CMD; 124 when a prompt or the
end did not come within the timeout (default 20 s).
"""
import argparse
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

PROMPTS = (b"silt> ", b"   ...> ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cols", type=int, default=80)
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    lines = [] if sys.stdin.isatty() else sys.stdin.read().splitlines()

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, a.cols, 0, 0))

    def child_setup():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = dict(os.environ)
    env["TERM"] = "xterm"  # libedit edits lines (a dumb terminal echoes twice)
    p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, preexec_fn=child_setup,
                         env=env, close_fds=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + a.timeout

    def read_some(wait):
        r, _, _ = select.select([master], [], [], wait)
        if not r:
            return True
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        out.extend(data)
        return True

    alive = True
    for line in lines:
        # wait for a prompt after what we typed last, and for the line editor
        # to own the terminal (no canonical mode): typed earlier, the line
        # would be echoed twice (by the terminal and by the editor)
        while alive and not (any(out.endswith(pr) for pr in PROMPTS) and editing(master)):
            if time.monotonic() > deadline:
                sys.stdout.write(clean(bytes(out), a.raw))
                print("\npty_run: timeout waiting for a prompt", file=sys.stderr)
                p.kill()
                return 124
            alive = read_some(0.05)
        if not alive:
            break
        mark = len(out)
        if line == "<EOF>":
            os.write(master, b"\x04")
        elif line == "<C-P>":
            os.write(master, b"\x10\r")
        else:
            os.write(master, line.encode() + b"\r")
        # let the echo of this line arrive before looking for the next prompt
        while alive and len(out) == mark and time.monotonic() < deadline:
            alive = read_some(0.05)
        time.sleep(0.01)
    while alive:  # the rest, until the child closes the terminal
        if time.monotonic() > deadline:
            sys.stdout.write(clean(bytes(out), a.raw))
            print("\npty_run: timeout waiting for the end", file=sys.stderr)
            p.kill()
            return 124
        alive = read_some(0.1)
    rc = p.wait()
    os.close(master)
    sys.stdout.write(clean(bytes(out), a.raw))
    return rc


def editing(fd):
    try:
        return not termios.tcgetattr(fd)[3] & termios.ICANON
    except termios.error:
        return True


def clean(b, raw):
    s = b.decode("utf-8", "replace")
    if raw:
        return s
    s = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]|\x1b[=>]", "", s)
    s = s.replace("\r", "").replace("\x07", "")
    return s


if __name__ == "__main__":
    sys.exit(main())
