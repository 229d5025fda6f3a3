#!/usr/bin/env python3
"""Large copies under the preload, checked (preload/apps/run.sh): numpy's array assignment,
copyto, concatenation into existing arrays, copies into new arrays and copies at odd byte
offsets, 64 MiB each, and Python's own bytes and bytearray copies of the same size, each result
compared with what it must hold. The copies go through memmove and memcpy, which stream past
the cache from the plan's threshold (a few MiB), where glibc stores through it.

Usage: python3 numpy_check.py [MIB]
"""
import sys

import numpy as np

MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 64
n = (MIB << 20) // 8
passed = failed = 0


def check(what, ok):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("numpy_check: %s: wrong" % what)


a = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
b = np.empty_like(a)
b[:] = a
check("b[:] = a", np.array_equal(a, b))
b.fill(0)
np.copyto(b, a)
check("copyto", np.array_equal(a, b))
c = np.empty(2 * n, dtype=np.uint64)
np.concatenate((a, b), out=c)
check("concatenate out=", np.array_equal(c[:n], a) and np.array_equal(c[n:], a))
d = a.copy()
check("copy", np.array_equal(d, a))
e = np.concatenate((a[:n // 2], a[n // 2:]))
check("concatenate", np.array_equal(e, a))
# Byte views at odd offsets: unaligned sources and destinations.
ab, bb = a.view(np.uint8), b.view(np.uint8)
for off in (1, 7, 63, 4093):
    bb[: len(ab) - off] = ab[off:]
    check("offset %d" % off, np.array_equal(bb[: len(ab) - off], ab[off:]))
# Overlapping moves inside one array (memmove), both directions.
f = a.copy()
f[5:] = f[:-5].copy()
g = a.copy()
g[5:] = g[:-5]
check("overlap up", np.array_equal(f, g))
g = a.copy()
g[:-5] = g[5:]
check("overlap down", np.array_equal(g[:-5], a[5:]))
x = ab.tobytes()
y = bytearray(x)
check("bytearray", y == x and len(y) == len(x))
check("bytes slice", x[3:] == bytes(y[3:]))
z = np.zeros(n, dtype=np.uint64)
check("zeros", not z.any())
z.fill(7)
check("fill", int(z.sum()) == 7 * n)
print("numpy_check: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
