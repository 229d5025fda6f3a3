#!/usr/bin/env bash
# preload/tests/run.sh LIB [OUT]: builds the preload's C tests into OUT (target/preload) and runs
# them with LIB (libcachecopy_preload.so) preloaded, in every variant below, then
# preload/tests/safety.sh (docs/preload.md, "Tests"). Every run writes its statistics line (CACHECOPY_PRELOAD_STATS) and the line must show
# the modes and engine the variant asked for, with calls counted: a run the library did not
# serve fails. Run from the repository root. About 25 s of CPU on the 2-core VM, most of it the
# 4 GiB case.
set -Eeuo pipefail
lib=$(realpath "$1")
out=${2:-target/preload}
mkdir -p "$out"
cflags=(-O2 -std=gnu11 -Wall -Wextra -Werror -fno-builtin -fno-tree-loop-distribute-patterns -Icapi/tests)
gcc "${cflags[@]}" preload/tests/preload.c -o "$out/preload" -pthread -ldl
gcc "${cflags[@]}" -DREENTRY preload/tests/preload.c -o "$out/reentry" -pthread -ldl
stats=$out/stats.txt

# run EXPECT PROGRAM [ARGS] with the environment already set by `env` before it: the program's
# own closing line must say it passed, and its statistics line must match EXPECT (an extended
# regular expression).
run() {
    local expect=$1; shift
    rm -f "$stats"
    echo "==> ${VARIANT:-default}: $(basename "$1") ${*:2}"
    CACHECOPY_PRELOAD_STATS=$stats LD_PRELOAD=$lib "$@"
    cat "$stats"
    grep -qE "$expect" "$stats" || { echo "preload: the statistics line does not match /$expect/" >&2; exit 1; }
}
calls='[1-9][0-9]* calls'
auto="memcpy Auto $calls [0-9]+ bytes, memmove Auto $calls [0-9]+ bytes, memset Auto $calls"

VARIANT=default run "$auto" "$out/preload"
for m in Temporal NonTemporal FlushCache; do
    VARIANT="all=$m" CACHECOPY_PRELOAD="all=${m,,}" \
        run "memcpy $m $calls.*memmove $m $calls.*memset $m $calls" "$out/preload"
done
VARIANT=off CACHECOPY_PRELOAD=off run "memcpy off $calls.*memmove off $calls.*memset off $calls" "$out/preload"
VARIANT=mixed CACHECOPY_PRELOAD="off, memcpy=nontemporal,memset=flushcache" \
    run "memcpy NonTemporal $calls.*memmove off $calls.*memset FlushCache $calls" "$out/preload"
# Auto streaming from 1 KiB: every streaming path of every group through the exports.
VARIANT=nt=0 CACHECOPY_TUNE=nt=0,fill_nt=0 run "$auto" "$out/preload"
# Every engine this CPU runs (the body field of CACHECOPY_TUNE, read by the library at
# detection: the statistics line names the engine in force).
backends="generic sse2"
grep -qw avx2 /proc/cpuinfo && backends+=" avx2"
grep -qw avx512bw /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo && backends+=" avx512"
for b in $backends; do
    VARIANT="backend=$b" CACHECOPY_TUNE=body=$b run "$auto.*; engine $b/$b/" "$out/preload"
done
# The C entries' variants this CPU runs (the statistics' counting function calls the entry
# the group is bound to): the string move and store from 0 bytes (the sized entries), the AVX
# pairs of small fills; and without statistics, the exports bound to the entries themselves.
VARIANT=sized CACHECOPY_TUNE=rep_movsb=0,fill_rep=0 run "$auto" "$out/preload"
grep -qw avx2 /proc/cpuinfo && VARIANT=avx-pairs CACHECOPY_TUNE=small=avx-pairs run "$auto" "$out/preload"
echo "==> nostats: preload (no statistics: every export bound to its C entry)"
LD_PRELOAD=$lib "$out/preload"
# CACHECOPY_TUNE, the crate's one variable, read at detection: its engine must be the one in
# force.
VARIANT=tune CACHECOPY_TUNE=body=sse2,nt=0,fill_nt=0 run "$auto.*; engine sse2/sse2/" "$out/preload"
# A bad item is reported and ignored; the rest keeps its default.
VARIANT=bad CACHECOPY_PRELOAD="memcpy=bogus,memset=temporal" \
    run "memcpy Auto $calls.*memset Temporal $calls" "$out/preload" 2> "$out/bad.err"
grep -q "CACHECOPY_PRELOAD: ignored \`memcpy=bogus\`" "$out/bad.err" || { cat "$out/bad.err"; echo "preload: no warning" >&2; exit 1; }
# The library's calibration inside the first call: its record moves call memcpy, which the
# initialisation guard sends to the fallback copy (no recursion, correct results).
VARIANT=calibrate CACHECOPY_TUNE=calibrate run "$auto" "$out/preload"

# Re-entry: the executable's own memcpy & co. (first in the lookup order) count any call the
# library makes to them, in every mode and in the warning path.
VARIANT=reentry run "$auto" "$out/reentry"
VARIANT="reentry nt=0" CACHECOPY_TUNE=nt=0,fill_nt=0 run "$auto" "$out/reentry"
VARIANT="reentry flushcache" CACHECOPY_PRELOAD=flushcache run "memcpy FlushCache $calls" "$out/reentry"
VARIANT="reentry warnings" CACHECOPY_TUNE=nt=lots CACHECOPY_PRELOAD=memcpy=x \
    run "$auto" "$out/reentry" 2> /dev/null
# The counter can fail: under the calibration (which is allowed its calls, see above) it sees
# them.
rm -f "$stats"
if CACHECOPY_TUNE=calibrate LD_PRELOAD=$lib "$out/reentry" > "$out/reentry-calibrate.log" 2>&1; then
    cat "$out/reentry-calibrate.log"
    echo "preload: the re-entry counter saw no call from the calibration: it cannot fail" >&2
    exit 1
fi
grep -E "^reentry: .* [1-9][0-9]* calls from inside it" "$out/reentry-calibrate.log"

# Past 4 GiB: memcpy, an overlapping memmove and memset of 4 GiB + a few bytes.
VARIANT=huge run "$auto" "$out/preload" huge

# Safe in every process: the early callers, errno, `off` (preload/tests/safety.sh).
bash preload/tests/safety.sh "$lib" "$out"
