#!/usr/bin/env python3
"""pty_progress.py — runs a command with its stderr on a pseudo-terminal.

The progress line of silt is drawn only when stderr is a terminal; this
helper gives the command one (stdin and stdout are left as they are, so the
command's results can be captured separately), records every byte written
to the terminal, and can press Ctrl-C when the terminal shows something.

    pty_progress.py [--tty-out FILE] [--cols N] [--interrupt-on REGEX]
                    [--interrupt-after SECONDS] [--timeout SECONDS] -- CMD...

--tty-out FILE          the bytes written to the terminal (default: discarded)
--cols N                terminal width (default 200)
--interrupt-on REGEX    send SIGINT to the command once the terminal output
                        matches REGEX (Python re, searched in the bytes
                        decoded as UTF-8), like Ctrl-C on a terminal
--interrupt-after S     send SIGINT S seconds after the start
--timeout S             kill the command after S seconds (default 120)

Exit status: the command's (128 + N when a signal N ended it); 124 after a
timeout; 125 when --interrupt-on never matched (the command ended first).
Standard library only.
"""
import argparse
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tty-out")
    ap.add_argument("--cols", type=int, default=200)
    ap.add_argument("--interrupt-on")
    ap.add_argument("--interrupt-after", type=float)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, a.cols, 0, 0))
    proc = subprocess.Popen(cmd, stderr=slave, close_fds=True)
    os.close(slave)
    out = bytearray()
    start = time.monotonic()
    pattern = re.compile(a.interrupt_on) if a.interrupt_on else None
    sent = False
    timed_out = False
    while True:
        now = time.monotonic()
        if now - start > a.timeout:
            proc.kill()
            timed_out = True
        if not sent and a.interrupt_after is not None and now - start >= a.interrupt_after:
            proc.send_signal(signal.SIGINT)
            sent = True
        r, _, _ = select.select([master], [], [], 0.01)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the slave side is closed
                chunk = b""
            if not chunk:
                break
            out += chunk
            if pattern and not sent and pattern.search(out.decode("utf-8", "replace")):
                proc.send_signal(signal.SIGINT)
                sent = True
        elif proc.poll() is not None:
            # drain what is left, then stop
            try:
                while True:
                    r, _, _ = select.select([master], [], [], 0.05)
                    if not r:
                        break
                    chunk = os.read(master, 65536)
                    if not chunk:
                        break
                    out += chunk
            except OSError:
                pass
            break
    rc = proc.wait()
    os.close(master)
    if a.tty_out:
        with open(a.tty_out, "wb") as f:
            f.write(out)
    if timed_out:
        return 124
    if pattern and not sent:
        return 125
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main())
