#!/usr/bin/env python3
"""Verified reads against a redis-server: SET keys with values of 1 B to 1 MiB (every power of
two and its neighbours, plus random sizes), pipelined, then GET every key back and compare it
byte for byte; APPEND, GETRANGE and SETRANGE on large values, compared against a model; closing
line "redis_verify: N passed, N failed". Plain sockets and RESP, no client library.

Usage: redis_verify.py PORT [ROUNDS]
"""
import os
import random
import socket
import sys


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))

    def _fill(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill(len(self.buf) + 1)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            self._fill(n + 2)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        raise RuntimeError("unexpected reply %r" % line)


def sizes(rng):
    out = [0, 1, 2, 3]
    p = 4
    while p <= 1 << 20:
        out += [p - 1, p, p + 1]
        p *= 2
    out += [rng.randrange(1, 1 << 20) for _ in range(40)]
    out += [rng.randrange(1, 4096) for _ in range(200)]
    return [n for n in out if n <= 1 << 20]


def main():
    port = int(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            if failed <= 20:
                print("FAIL", what, file=sys.stderr)

    c = Conn(port)
    rng = random.Random(43)
    for r in range(rounds):
        model = {}
        ns = sizes(rng)
        for i, n in enumerate(ns):
            key = b"k:%d:%d" % (r, i)
            val = os.urandom(n)
            model[key] = val
            c.send("SET", key, val)
        for _ in ns:
            check(c.reply() == b"OK", "SET reply")
        for key in model:
            c.send("GET", key)
        for key, val in model.items():
            got = c.reply()
            check(got == val, "GET %s: %s bytes, want %d" % (key, None if got is None else len(got), len(val)))
        # In-place edits of large values: APPEND, SETRANGE (inside and past the end), GETRANGE.
        for key in list(model)[-30:]:
            extra = os.urandom(rng.randrange(1, 70000))
            c.send("APPEND", key, extra)
            check(c.reply() == len(model[key]) + len(extra), "APPEND length")
            model[key] += extra
            off = rng.randrange(0, len(model[key]) + 100)
            patch = os.urandom(rng.randrange(1, 5000))
            c.send("SETRANGE", key, off, patch)
            v = model[key]
            v = v + b"\0" * max(0, off - len(v))
            model[key] = v[:off] + patch + v[off + len(patch):]
            check(c.reply() == len(model[key]), "SETRANGE length")
            a = rng.randrange(0, len(model[key]))
            b = rng.randrange(a, len(model[key]))
            c.send("GETRANGE", key, a, b)
            check(c.reply() == model[key][a:b + 1], "GETRANGE %s %d %d" % (key, a, b))
            c.send("GET", key)
            check(c.reply() == model[key], "GET after edits %s" % key)
        c.send("FLUSHALL")
        check(c.reply() == b"OK", "FLUSHALL")
    print("redis_verify: %d passed, %d failed" % (passed, failed))
    sys.exit(0 if failed == 0 and passed > 0 else 1)


if __name__ == "__main__":
    main()
