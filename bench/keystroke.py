#!/usr/bin/env python3
"""make bench: keystroke round trip through a terminal relay.

Usage: keystroke.py N CMD [ARG]... - runs CMD with a new pty as its
controlling terminal (the "caller's terminal"), waits until it echoes,
then N times writes one byte to the pty master and times how long until
the byte comes back (the echo of the pty the relay feeds: paddock's own
pty in the sandbox, script's pty). Prints "rtt_us=MEDIAN p90_us=P90 n=N" (and " stuck=1" when CMD did
not end within 10 s of two ^D and was killed).
The harness's own cost is the same for every CMD, so only ratios and
differences between CMDs of one run mean anything."""
import os, pty, select, statistics, sys, time

n = int(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])


def wait_for(byte, timeout=10.0):
    end = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            buf += os.read(fd, 4096)
            if byte in buf:
                return True
    return False


os.write(fd, b"r")
if not wait_for(b"r", 30):
    sys.exit("keystroke: no echo from " + sys.argv[2])
time.sleep(0.2)
while select.select([fd], [], [], 0.05)[0]:
    os.read(fd, 4096)
rtts = []
for i in range(n):
    c = b"abcdefghij"[i % 10:i % 10 + 1]
    t = time.monotonic_ns()
    os.write(fd, c)
    if not wait_for(c):
        sys.exit("keystroke: an echo was lost")
    rtts.append((time.monotonic_ns() - t) / 1000)
os.write(fd, b"\x04\x04")
# The end of CMD, up to 10 s: a `docker run -it` once never ended on ^D
# (its container's cat kept running) and the bench waited for it. Then
# our child is killed (the harness removes a container it left) and the
# line says so.
stuck = 0
end = time.monotonic() + 10
while True:
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            break
    except ChildProcessError:
        break
    if time.monotonic() > end:
        stuck = 1
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        break
    time.sleep(0.05)
rtts.sort()
print(f"rtt_us={statistics.median(rtts):.1f} p90_us={rtts[int(len(rtts) * 0.9)]:.1f} n={n}"
      + (" stuck=1" if stuck else ""))
