#!/usr/bin/env python3
"""Real programs' own benchmarks with and without the preload, interleaved (docs/preload.md,
"Figures"): redis-benchmark SET and GET with 1 KiB, 64 KiB and 1 MiB values against a
redis-server on loopback (server and client both preloaded, or neither), zstd's benchmark mode
(levels 1-3, compression and decompression MB/s), the sqlite3 workload of apps/sqlite.sql
(wall seconds), and Python's own `timeit` on large copies: numpy's array assignment and
concatenation into arrays that exist (64 MiB; numpy from PyPI, in the Python named by
$NUMPY_PYTHON, skipped without it) and `bytearray(bytes)` of 64 MiB (a copy into memory the
allocator maps afresh, where streaming stores lose: docs/preload.md). Each round runs every case once per variant in a fresh order; the figures are
medians, the ratio is the median of the per-round ratios (preloaded ÷ plain for rates, plain ÷
preloaded for times: above 1.00x the preload is faster).

Usage (from the repository root, under /work/bin/ccquiet on the shared VM):
  [NUMPY_PYTHON=venv/bin/python] preload/apps/bench.py LIBCACHECOPY_PRELOAD.so [ROUNDS]
"""
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LIB = os.path.realpath(sys.argv[1])
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
HERE = os.path.dirname(os.path.abspath(__file__))


def env(pre):
    e = dict(os.environ)
    e.pop("CACHECOPY_PRELOAD_STATS", None)
    if pre:
        e["LD_PRELOAD"] = LIB
    else:
        e.pop("LD_PRELOAD", None)
    return e


def run(cmd, pre, **kw):
    return subprocess.run(cmd, env=env(pre), capture_output=True, text=True, check=True, **kw)


def redis_cases(tmp):
    servers = {}
    for pre in (False, True):
        port = 21000 + random.randrange(20000)
        p = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--loglevel", "warning"],
            env=env(pre), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        servers[pre] = (p, port)

    def case(d, n):
        def go(pre):
            out = run(["redis-benchmark", "-p", str(servers[pre][1]), "-t", "set,get", "-n", str(n),
                       "-d", str(d), "-q"], pre).stdout.replace("\r", "\n")
            rps = dict(re.findall(r"^(SET|GET): ([0-9.]+) requests per second", out, re.M))
            return {k: float(v) for k, v in rps.items()}
        return go

    cases = [("redis %s B" % d, case(d, n), "rps") for d, n in
             ((1024, 20000), (65536, 4000), (1 << 20, 400))]
    return cases, servers


def zstd_case(tmp):
    path = os.path.join(tmp, "zstd.in")
    with open(path, "wb") as out:
        for name in sorted(os.listdir("/usr/lib/python3.11")):
            if name.endswith(".py"):
                with open(os.path.join("/usr/lib/python3.11", name), "rb") as f:
                    out.write(f.read())
        with open("/usr/bin/python3.11", "rb") as f:
            out.write(f.read())

    def go(pre):
        p = run(["zstd", "-b1", "-e3", "-i1", path], pre)
        out = (p.stdout + p.stderr).replace("\r", "\n")
        # Each level's last progress line holds both speeds; its "N#" marker follows it.
        res, last = {}, None
        for line in out.split("\n"):
            m = re.search(r"([0-9.]+) MB/s, *([0-9.]+) MB/s", line)
            if m:
                last = m.groups()
            m = re.match(r"^ *(\d+)#", line)
            if m and last:
                res["L%s compress" % m.group(1)] = float(last[0])
                res["L%s decompress" % m.group(1)] = float(last[1])
                last = None
        if not res:
            raise RuntimeError("no zstd figures in %r" % out[-500:])
        return res
    return ("zstd -b", go, "MB/s")


def sqlite_case(tmp):
    sql = open(os.environ.get("SQLITE_SQL", os.path.join(HERE, "sqlite.sql"))).read()

    def go(pre):
        db = os.path.join(tmp, "bench.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        t0 = time.monotonic()
        out = run(["sqlite3", db], pre, input=sql).stdout
        t = time.monotonic() - t0
        if " 0 failed" not in out:
            raise RuntimeError("sqlite workload failed: " + out)
        return {"workload": t}
    return ("sqlite3", go, "s")


def timeit_case(name, python, setup, stmt):
    def go(pre):
        out = run([python, "-m", "timeit", "-n", "10", "-r", "3", "-s", setup, stmt], pre).stdout
        m = re.search(r"best of \d+: ([0-9.]+) (n|u|m)?sec per loop", out)
        if not m:
            raise RuntimeError("no timeit figure in %r" % out)
        scale = {"n": 1e-9, "u": 1e-6, "m": 1e-3, None: 1.0}[m.group(2)]
        return {stmt: float(m.group(1)) * scale * 1e3}
    return (name, go, "ms")


def python_cases():
    cases = [timeit_case("python", "/usr/bin/python3.11", "x = bytes(64 << 20)", "bytearray(x)")]
    numpy = os.environ.get("NUMPY_PYTHON")
    if numpy:
        setup = "import numpy as np; a = np.ones(8 << 20); b = np.empty_like(a); c = np.empty(16 << 20)"
        cases += [timeit_case("numpy", numpy, setup, "b[:] = a"),
                  timeit_case("numpy", numpy, setup, "np.concatenate((a, a), out=c)")]
    return cases


def main():
    tmp = tempfile.mkdtemp(prefix="preload-bench-")
    random.seed(43)
    rcases, servers = redis_cases(tmp)
    cases = rcases + [zstd_case(tmp), sqlite_case(tmp)] + python_cases()
    results = {}  # (case, key) -> {pre: [values]}, and ratios
    try:
        for r in range(ROUNDS):
            for name, go, unit in cases:
                order = [False, True]
                random.shuffle(order)
                got = {pre: go(pre) for pre in order}
                for key in got[False]:
                    cell = results.setdefault((name, key, unit), {False: [], True: [], "ratio": []})
                    a, b = got[False][key], got[True][key]
                    cell[False].append(a)
                    cell[True].append(b)
                    cell["ratio"].append(a / b if unit in ("s", "ms") else b / a)
            print("round %d/%d done" % (r + 1, ROUNDS), file=sys.stderr)
    finally:
        for p, port in servers.values():
            subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d rounds, interleaved; median (min-max); ratio = preloaded over plain, paired per round "
          "(above 1.00x the preload is faster)" % ROUNDS)
    print("%-12s %-14s %8s %22s %22s %8s" % ("program", "figure", "unit", "plain", "preloaded", "ratio"))
    for (name, key, unit), cell in results.items():
        def fmt(v):
            return "%.4g (%.4g-%.4g)" % (statistics.median(v), min(v), max(v))
        print("%-12s %-14s %8s %22s %22s %7.3fx" % (name, key, unit, fmt(cell[False]), fmt(cell[True]),
                                                   statistics.median(cell["ratio"])))


if __name__ == "__main__":
    main()
