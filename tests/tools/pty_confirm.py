#!/usr/bin/env python3
"""pty_confirm.py — runs a command with its stdin, stdout and stderr on a
pseudo-terminal, answers a confirmation prompt, and prints what the
terminal showed.

Usage: pty_confirm.py PROMPT ANSWER CMD [ARG...]

Waits until the terminal output contains PROMPT (at most 10 s), types
ANSWER and a newline, then reads until the command exits. With PROMPT ''
nothing is awaited or typed (a command that must not ask). The terminal
output goes to stdout with CR LF turned into LF; the exit status is the
command's (124 if PROMPT never appeared, the command then being killed).
"""
import os
import pty
import select
import signal
import sys
import time


def read_some(fd, timeout):
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return b""
    try:
        return os.read(fd, 4096)
    except OSError:  # EIO: the other side is closed
        return None


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    prompt, answer, cmd = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    seen = b""
    if prompt:
        deadline = time.monotonic() + 10
        while prompt not in seen:
            chunk = read_some(fd, max(0.0, deadline - time.monotonic()))
            if chunk is None or (not chunk and time.monotonic() >= deadline):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                sys.stdout.write(seen.decode(errors="replace").replace("\r\n", "\n"))
                return 124
            seen += chunk
        os.write(fd, answer + b"\n")
    while True:
        chunk = read_some(fd, 10)
        if chunk is None:
            break
        if not chunk:  # 10 s without output: a hung command
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stdout.write(seen.decode(errors="replace").replace("\r\n", "\n"))
            return 124
        seen += chunk
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(seen.decode(errors="replace").replace("\r\n", "\n"))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
