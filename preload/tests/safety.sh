#!/usr/bin/env bash
# preload/tests/safety.sh LIB [OUT]: libcachecopy_preload where it must be safe in every process
# (docs/preload.md, "Safe in every process" and "Tests"): the callers that arrive before it is
# ready, errno, `off`. Builds preload/tests/safety.c with libearly.so (early.c) and libspy.so
# (spy.c) into OUT (target/preload) and runs each variant with LIB preloaded; every run's
# statistics line (CACHECOPY_PRELOAD_STATS) must match what the variant expects. For another
# architecture: CC (the cross compiler) and RUNNER (e.g. `qemu-aarch64 -L /usr/aarch64-linux-gnu`).
# Run from the repository root; about 2 s natively, 5 s under QEMU.
set -Eeuo pipefail
lib=$(realpath "$1")
out=$(realpath -m "${2:-target/preload}")
mkdir -p "$out"
cc=${CC:-gcc}
read -r -a runner <<< "${RUNNER:-}"
cflags=(-O2 -std=gnu11 -Wall -Wextra -Werror -fno-builtin -fno-tree-loop-distribute-patterns -Icapi/tests)
"$cc" "${cflags[@]}" -fPIC -shared preload/tests/early.c -o "$out/libearly.so"
"$cc" "${cflags[@]}" -fPIC -shared preload/tests/spy.c -o "$out/libspy.so" -ldl
"$cc" "${cflags[@]}" preload/tests/safety.c -o "$out/safety" -L"$out" -learly -Wl,-rpath,"$out" -ldl
stats=$out/stats-safety.txt

# run EXPECT PROGRAM [ARGS]: PROGRAM under RUNNER with LD_PRELOAD=LIB (PRELOAD_LIST when set) and
# the environment set before it; its statistics line must match EXPECT (an extended regular
# expression).
run() {
    local expect=$1; shift
    rm -f "$stats"
    echo "==> ${VARIANT:-default}: $(basename "$1") ${*:2}"
    CACHECOPY_PRELOAD_STATS=$stats LD_PRELOAD=${PRELOAD_LIST:-$lib} "${runner[@]}" "$@"
    cat "$stats"
    grep -qE "$expect" "$stats" || { echo "preload: the statistics line does not match /$expect/" >&2; exit 1; }
}
calls='[1-9][0-9]* calls'
auto="memcpy Auto $calls [0-9]+ bytes, memmove Auto $calls [0-9]+ bytes, memset Auto $calls"

# safety.c with libearly.so: an IFUNC resolver of libearly copies while the loader relocates it,
# before this library is relocated (the plain copy serves it: counted), libearly's constructor
# makes the first call after the environment exists (the library initialises inside it, errno
# kept), then main's checks. `getenv: PHASE NAME` lines are libearly's getenv log (phase 1: in
# that constructor).
safety() {
    local log=$out/safety-$VARIANT.log
    run "$1" "$out/safety" "${@:2}" > "$log" || { cat "$log"; echo "preload: safety $VARIANT failed"; exit 1; }
    cat "$log"
}
# getenv_log VARIANT: the names its run asked for, sorted, on one line.
getenv_log() { grep -E '^getenv: ' "$out/safety-$1.log" | sed 's/^getenv: [0-9] //' | sort -u | tr '\n' ' '; }
VARIANT=early safety "$auto [0-9]+ bytes; plain copy [3-9][0-9]* calls .*; engine "
head -n 1 < <(grep '^getenv: ' "$out/safety-early.log") | grep -qx "getenv: 1 CACHECOPY_PRELOAD" \
    || { echo "preload: the library was not initialised first in libearly's constructor" >&2; exit 1; }
# errno across a first call whose warnings fail: the standard error closed (EBADF) in the
# constructor, and a bad item for the library and for cachecopy.
VARIANT=errno EARLY_CLOSE_STDERR=1 CACHECOPY_PRELOAD="memcpy=bogus" CACHECOPY_TUNE=nt=lots \
    safety "$auto" 2> "$out/errno.err"
grep -q "safety: .*(stderr closed), errno kept" "$out/safety-errno.log" || { echo "preload: errno case did not close stderr" >&2; exit 1; }
! grep -q "cachecopy" "$out/errno.err" || { cat "$out/errno.err"; echo "preload: a warning reached the closed stderr" >&2; exit 1; }

# `off` runs nothing of cachecopy's: with every group off, a bad CACHECOPY_TUNE and the
# calibration asked for, nothing but the library's two variables is read (the crate reads
# CACHECOPY_TUNE first whenever it detects), no warning appears, the engine is not detected, and
# every call main makes reaches the next definition (libspy.so, preloaded after the library,
# counts them). The calls before the library's constructor take the plain copy (counted).
VARIANT="off" CACHECOPY_PRELOAD=off CACHECOPY_TUNE=calibrate,nt=lots \
    PRELOAD_LIST="$lib $out/libspy.so" \
    safety "memcpy off $calls.*memmove off $calls.*memset off $calls.*plain copy [1-9][0-9]* calls.*; engine not detected" spy \
    2> "$out/off.err"
[ "$(getenv_log off)" = "CACHECOPY_PRELOAD CACHECOPY_PRELOAD_STATS " ] \
    || { echo "preload: under off, variables read: $(getenv_log off)" >&2; exit 1; }
! grep -q "cachecopy" "$out/off.err" || { cat "$out/off.err"; echo "preload: a warning under off" >&2; exit 1; }
grep -q "every call reached the next definitions" "$out/safety-off.log"
# The control: the same with every group `auto` reads CACHECOPY_TUNE and warns.
VARIANT="off-control" CACHECOPY_PRELOAD=auto CACHECOPY_TUNE=nt=lots safety "$auto" 2> "$out/off-control.err"
getenv_log off-control | grep -qw CACHECOPY_TUNE || { echo "preload: the control did not read CACHECOPY_TUNE: the off check cannot fail" >&2; exit 1; }
grep -q "cachecopy: ignoring CACHECOPY_TUNE" "$out/off-control.err" || { echo "preload: the control did not warn" >&2; exit 1; }

# `off` with no next definition: the C library preloaded before this one, so dlsym(RTLD_NEXT)
# finds nothing after it. Said once on stderr, the statistics name the groups `plain`, and the
# library's functions (called through its handle) still copy, with the plain copy.
VARIANT=nonext CACHECOPY_PRELOAD=off PRELOAD_LIST="libc.so.6 $lib" \
    safety "memcpy plain $calls.*memmove plain $calls.*memset plain $calls.*; plain copy [1-9][0-9]* calls.*; engine not detected" nonext "$lib" \
    2> "$out/nonext.err"
cat "$out/nonext.err"
[ "$(grep -c "no next definition of memcpy memmove memset" "$out/nonext.err")" = 1 ] \
    || { echo "preload: no (or more than one) line about the missing next definitions" >&2; exit 1; }
# Again with a standard error that cannot be written (read-only): that line's write fails
# (EBADF) in the constructor, and main must still find libearly's errno.
VARIANT=nonext-errno CACHECOPY_PRELOAD=off PRELOAD_LIST="libc.so.6 $lib" \
    safety "memcpy plain $calls" nonext "$lib" 2< /dev/null
echo "preload safety: passed"
