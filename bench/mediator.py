#!/usr/bin/env python3
"""make bench: requests and CONNECT tunnels through an HTTP proxy (not a test).

  mediator.py serve HTTP_PORT SINK_PORT
      The upstream, on 127.0.0.1: every GET on HTTP_PORT gets a 2-byte 200
      and the connection is closed; SINK_PORT reads a line "N" and N bytes
      and answers "got N" (no half-close: proxies end a tunnel at the
      first EOF). Runs until killed.
  mediator.py latency MODE N HOST PORT [PROXY_HOST PROXY_PORT]
      N requests, each on a new connection: MODE "direct" to HOST:PORT,
      "proxy" in absolute form to the proxy. Prints p50_us= p99_us= n=.
  mediator.py connect MODE MIB HOST PORT [PROXY_HOST PROXY_PORT]
      MIB MiB to the sink: "direct", or "proxy" through a CONNECT tunnel.
      Prints secs= mib= (from the first byte sent to the sink's answer).

The same client runs in every row, so its own cost is in each alike."""
import os
import socket
import statistics
import sys
import threading
import time


def serve(port, handler):
    """Accept on 127.0.0.1:port for ever, a thread per connection."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(256)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=handler, args=(c,), daemon=True).start()


def answer(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(4096)
        if not d:
            break
        buf += d
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    c.close()


def sink(c):
    head = b""
    while b"\n" not in head:
        d = c.recv(64)
        if not d:
            c.close()
            return
        head += d
    line, _, rest = head.partition(b"\n")
    want, n = int(line), len(rest)
    while n < want:
        d = c.recv(1 << 20)
        if not d:
            break
        n += len(d)
    c.sendall(b"got %d\n" % n)
    c.close()


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            raise OSError("closed before the head ended")
        buf += d
    return buf


counter = 0


def one_request(mode, host, port, proxy):
    # BENCH_AUTH_ENV names the variable holding a brokered credential's
    # placeholder: sent as a bearer token, swapped by the mediator.
    auth = b""
    if os.environ.get("BENCH_AUTH_ENV"):
        auth = b"Authorization: Bearer %s\r\n" % os.environ[os.environ["BENCH_AUTH_ENV"]].encode()
    # BENCH_IDEM: each request an operation of its own (a metered rule
    # reserves per operation; the same key again would be a replay).
    if os.environ.get("BENCH_IDEM"):
        global counter
        counter += 1
        auth += b"Idempotency-Key: %s-%d-%d\r\n" % (os.environ["BENCH_IDEM"].encode(),
                                                     os.getpid(), counter)
    if mode == "proxy":
        s = socket.create_connection(proxy)
        s.sendall(b"GET http://%s:%d/ HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n"
                  % (host.encode(), port, host.encode(), port, auth))
    else:
        s = socket.create_connection((host, port))
        s.sendall(b"GET / HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port))
    got = b""
    while True:
        d = s.recv(4096)
        if not d:
            break
        got += d
    s.close()
    if not got.startswith(b"HTTP/1.") or b" 200 " not in got.split(b"\r\n")[0]:
        raise OSError("no 200: %r" % got[:60])


def latency(mode, n, host, port, proxy):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        one_request(mode, host, port, proxy)
        times.append((time.perf_counter() - t) * 1e6)
    times.sort()
    print("p50_us=%.1f p99_us=%.1f n=%d" % (statistics.median(times),
                                            times[int(len(times) * 0.99) - 1], n))


def connect(mode, mib, host, port, proxy):
    if mode == "proxy":
        s = socket.create_connection(proxy)
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n"
                  % (host.encode(), port, host.encode(), port))
        head = read_head(s)
        if b" 200 " not in head.split(b"\r\n")[0] + b" ":
            raise OSError("CONNECT refused: %r" % head[:80])
    else:
        s = socket.create_connection((host, port))
    chunk = b"\0" * (1 << 20)
    t = time.perf_counter()
    s.sendall(b"%d\n" % (mib << 20))
    for _ in range(mib):
        s.sendall(chunk)
    got = b""
    while b"\n" not in got:
        d = s.recv(100)
        if not d:
            break
        got += d
    secs = time.perf_counter() - t
    if got.strip() != b"got %d" % (mib << 20):
        raise OSError("the sink got %r" % got)
    print("secs=%.3f mib=%d" % (secs, mib))


def main(a):
    if a[0] == "serve":
        threading.Thread(target=serve, args=(int(a[2]), sink), daemon=True).start()
        serve(int(a[1]), answer)
    proxy = (a[5], int(a[6])) if len(a) > 6 else None
    if a[0] == "latency":
        latency(a[1], int(a[2]), a[3], int(a[4]), proxy)
    elif a[0] == "connect":
        connect(a[1], int(a[2]), a[3], int(a[4]), proxy)
    else:
        sys.exit("usage: mediator.py serve|latency|connect ...")


if __name__ == "__main__":
    main(sys.argv[1:])
