#!/usr/bin/env bash
# preload/apps/run.sh LIB [OUT]: real programs' own tests with LIB (libcachecopy_preload.so)
# preloaded (docs/preload.md, "Real programs"): Debian's Python 3.11 test suite (a list of its
# tests), redis-server driven over loopback by redis-benchmark and by verified reads of 1 B to
# 1 MiB values (apps/redis_verify.py), zstd's benchmark mode and a compress/decompress round
# trip, sqlite3 on a generated workload with hash and integrity checks (apps/sqlite.sql), numpy's
# large array copies (apps/numpy_check.py), and this project's own test binaries. Each program
# must pass its own checks, and each must have been served by the library: every process writes
# its CACHECOPY_PRELOAD_STATS line, and the line of the program under test must count calls (a
# run the library did not serve fails).
# Needs python3.11, libpython3.11-testsuite, python3-numpy, redis-server, redis-tools, zstd,
# sqlite3 (Debian).
# Run from the repository root, after `cargo test --all-features` built the test binaries.
set -Eeuo pipefail
lib=$(realpath "$1")
out=$(realpath -m "${2:-target/preload-apps}")
mkdir -p "$out"
stats=$out/stats.txt
rm -f "$stats"
export CACHECOPY_PRELOAD_STATS=$stats

# served PROGRAM: a statistics line of PROGRAM's executable counted memcpy and memset calls.
served() {
    local line
    line=$(grep -E " $1: memcpy Auto [1-9][0-9]* calls .* memset Auto [1-9][0-9]* calls" "$stats" | tail -1) \
        || { echo "preload apps: no statistics line of $1 with calls counted" >&2; cat "$stats" >&2; exit 1; }
    echo "served: $line"
}
pre() { LD_PRELOAD=$lib "$@"; }

echo "==> Python 3.11's own tests (Debian's python3.11 and libpython3.11-testsuite)"
py_tests=(test_bytes test_memoryview test_array test_struct test_io test_zlib test_hashlib
    test_mmap test_pickle test_memoryio test_marshal test_bz2 test_lzma test_codecs test_re test_json)
pre /usr/bin/python3.11 -m test "${py_tests[@]}" 2>&1 | tee "$out/python.log" | tail -12
grep -q "^Tests result: SUCCESS" "$out/python.log" || { echo "Python's tests failed" >&2; exit 1; }
served /usr/bin/python3.11

echo "==> redis-server over loopback: verified reads of 1 B to 1 MiB values, redis-benchmark"
port=$((20000 + RANDOM % 20000))
LD_PRELOAD=$lib redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --loglevel warning > "$out/redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
grep -q libcachecopy_preload "/proc/$redis_pid/maps" || { echo "redis-server has not loaded the preload" >&2; exit 1; }
pre python3 preload/apps/redis_verify.py "$port" 3
for d in 1 1024 65536 1048576; do
    n=$((d >= 65536 ? 2000 : 20000))
    pre redis-benchmark -p "$port" -t set,get -n "$n" -d "$d" -q 2>&1 | tr '\r' '\n' | grep -E "^(SET|GET):.*requests per second" \
        | sed "s/^/  $d B values: /"
done
# redis-benchmark does not read back: one value of each size checked after it ran.
pre python3 preload/apps/redis_verify.py "$port" 1
redis-cli -p "$port" shutdown nosave > /dev/null 2>&1 || true
wait "$redis_pid" || true
trap - EXIT
served /usr/bin/redis-check-rdb # Debian's redis-server is a link to it
served /usr/bin/redis-benchmark

echo "==> zstd: benchmark mode (checks every round trip) and a round trip through files"
zin=$out/zstd.in
cat /usr/lib/python3.11/*.py /usr/bin/python3.11 > "$zin" # text and code, about 12 MB
pre zstd -b1 -e3 -i1 "$zin" 2>&1 | tr "\r" "\n" | grep -E "MB/s.*MB/s|WARNING|rror|nvalid" | sort -u | tee "$out/zstd.log"
! grep -qiE "warning|error|invalid" "$out/zstd.log" || { echo "zstd's benchmark reported an error" >&2; exit 1; }
pre zstd -q -f -19 -T2 "$zin" -o "$zin.zst"
pre zstd -q -f -d "$zin.zst" -o "$zin.out"
cmp "$zin" "$zin.out"
echo "zstd round trip: identical"
served /usr/bin/zstd

echo "==> sqlite3: a generated workload, every row's hash and the integrity check"
rm -f "$out"/sqlite.db*
pre sqlite3 "$out/sqlite.db" < preload/apps/sqlite.sql | tee "$out/sqlite.log"
grep -qE "^sqlite: [1-9][0-9]* passed, 0 failed$" "$out/sqlite.log" || { echo "sqlite's checks failed" >&2; exit 1; }
served /usr/bin/sqlite3

echo "==> numpy (Debian's python3-numpy): large array copies and Python's bytes, checked"
# 64 MiB copies stream past the cache under the preload (glibc's do not below its own
# threshold): the results of each checked (apps/numpy_check.py). The speed: docs/preload.md.
pre /usr/bin/python3.11 preload/apps/numpy_check.py 64 | tee "$out/numpy.log"
grep -qE "^numpy_check: [1-9][0-9]* passed, 0 failed$" "$out/numpy.log" || { echo "numpy's checks failed" >&2; exit 1; }
grep -E " /usr/bin/python3.11: memcpy Auto " "$stats" | tail -1 \
    | grep -qE "memmove Auto [1-9][0-9]* calls [0-9]{9,} bytes" || { echo "numpy's copies did not reach the preload" >&2; exit 1; }

echo "==> this project's test binaries (built by the README's test command), preloaded"
# The executables `cargo test --all-features` ran (unit and integration tests, no doctests, which
# would compile again), each from its package's directory as cargo runs them.
cargo test --all-features --no-run --message-format=json 2> /dev/null \
    | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]), m["executable"])' > "$out/tests.txt"
[ -s "$out/tests.txt" ] || { echo "no test binaries found" >&2; exit 1; }
# Left out, because they assert what a process without a second cachecopy does: the tests that
# count the crate's warning lines in a child's stderr (the preload's own copy of cachecopy reads
# the same CACHECOPY_* variables and prints each warning too: two lines where they expect one;
# tests/no_alloc.rs counts them in its parent, after its allocation and lock checks, so the
# whole binary is left out), and the peer loader's refusal of a library whose memcpy is
# glibc's (it recognises glibc's by the process's own memcpy, which here is the preload's).
skips=()
for t in the_line_sets_the_engine_field_by_field \
    the_line_sets_every_threshold_and_reports_a_bad_field_once \
    peer::tests::a_library_without_the_functions_is_refused; do
    skips+=(--skip "$t")
done
: > "$out/tests.log"
while read -r dir exe; do
    case $(basename "$exe") in no_alloc-*) continue ;; esac
    echo "--- $(basename "$exe")"
    (cd "$dir" && LD_PRELOAD=$lib "$exe" -q "${skips[@]}" 2>&1 | tail -3) | tee -a "$out/tests.log"
done < "$out/tests.txt"
[ "$(grep -c "^test result: ok" "$out/tests.log")" -ge 20 ] || { echo "fewer test binaries ran than expected" >&2; exit 1; }
if grep -qE "test result: FAILED|[1-9][0-9]* failed" "$out/tests.log"; then
    echo "a test binary failed under the preload" >&2
    exit 1
fi
served "$(awk '{print $2}' "$out/tests.txt" | head -1)"
echo "preload apps: $(wc -l < "$stats") processes served"
