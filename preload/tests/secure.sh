#!/usr/bin/env bash
# preload/tests/secure.sh LIB [OUT]: libcachecopy_preload in secure mode (docs/preload.md,
# "Secure mode"). Needs root. In a mount namespace of its own (unshare -m: nothing outside sees
# it), /etc/ld.so.preload becomes a private copy naming LIB, and a set-user-ID root helper
# (preload/tests/secure.c) runs as the user nobody with CACHECOPY_PRELOAD_STATS naming a file in
# a directory only root can write, CACHECOPY_PRELOAD=memcpy=bogus and CACHECOPY_TUNE=nt=lots.
# It must run in secure mode under the library and copy right, and:
#   - no statistics file appears (a root-owned file anywhere would be the attack);
#   - no warning on stderr: neither the library's nor cachecopy's read their variable;
#   - no CACHECOPY_* name reaches getenv (the helper's own, logged).
# Then the control, which shows each of these can fail: the same helper run by root (not secure)
# writes the statistics file, prints both warnings and asks for the variables. Run from the
# repository root; about 1 s.
set -Eeuo pipefail
lib=$(realpath "$1")
out=$(realpath -m "${2:-target/preload}")
fail() { echo "preload secure: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (a set-user-ID root helper, a mount namespace)"

if [ "${SECURE_INSIDE:-}" != 1 ]; then
    mkdir -p "$out"
    gcc -O2 -std=gnu11 -Wall -Wextra -Werror -fno-builtin -fno-tree-loop-distribute-patterns \
        -Icapi/tests preload/tests/secure.c -o "$out/secure" -rdynamic -ldl
    # A mount point every user can reach (the checkout may sit under a directory they cannot).
    d=$(mktemp -d /tmp/cachecopy-secure.XXXXXX)
    chmod 755 "$d"
    status=0
    # A clean environment (no CACHECOPY_* from outside); the namespace's mounts end with it.
    env -i PATH="$PATH" SECURE_INSIDE=1 SECURE_DIR="$d" \
        unshare --mount --propagation private bash "$0" "$lib" "$out" || status=$?
    rmdir "$d"
    exit "$status"
fi

# ---------------------------------------------------------------- inside the namespace
d=$SECURE_DIR
# A tmpfs of this namespace: set-user-ID works there whatever /tmp's mount options are.
mount -t tmpfs -o mode=755,size=64m tmpfs "$d"
cp "$lib" "$d/libcachecopy_preload.so"
cp "$out/secure" "$d/helper"
chown root:root "$d/helper"
chmod 4755 "$d/helper"
mkdir -m 755 "$d/stats"
{ cat /etc/ld.so.preload 2>/dev/null || true; echo "$d/libcachecopy_preload.so"; } > "$d/ld.so.preload"
if [ -e /etc/ld.so.preload ]; then
    mount --bind "$d/ld.so.preload" /etc/ld.so.preload
else
    # No file to bind over: an overlay on /etc whose upper layer adds it.
    mkdir "$d/upper" "$d/work"
    cp "$d/ld.so.preload" "$d/upper/ld.so.preload"
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$d/upper,workdir=$d/work" /etc
fi
grep -qxF "$d/libcachecopy_preload.so" /etc/ld.so.preload || fail "/etc/ld.so.preload does not name the library"

# run NAME [PREFIX...]: the helper under PREFIX, the variables set by `env` at the last exec (so
# that no process before the helper reads them), stdout and stderr to OUT/secure-NAME.{out,err}.
run() {
    local name=$1; shift
    echo "==> secure: $name"
    "$@" env CACHECOPY_PRELOAD_STATS="$d/stats/$name" CACHECOPY_PRELOAD=memcpy=bogus \
        CACHECOPY_TUNE=nt=lots "$d/helper" > "$out/secure-$name.out" 2> "$out/secure-$name.err" \
        || { cat "$out/secure-$name.out" "$out/secure-$name.err"; fail "$name: the helper failed"; }
    cat "$out/secure-$name.out" "$out/secure-$name.err"
    grep -q "^secure: at_secure .* memcpy from $d/libcachecopy_preload.so$" "$out/secure-$name.out" \
        || fail "$name: the helper's memcpy is not the library's"
}

run secure setpriv --reuid=65534 --regid=65534 --clear-groups
grep -q "^secure: at_secure 1 uid 65534 euid 0 " "$out/secure-secure.out" \
    || fail "the helper did not run set-user-ID root in secure mode"
[ ! -e "$d/stats/secure" ] || { cat "$d/stats/secure"; fail "secure mode: the statistics file was written"; }
! grep -q cachecopy "$out/secure-secure.err" || fail "secure mode: a CACHECOPY_* variable was read (warning above)"
! grep -q "^getenv: " "$out/secure-secure.out" || fail "secure mode: CACHECOPY_* variables were asked for (above)"

# The control: root, not secure. The same observables must all fire.
run control
grep -q "^secure: at_secure 0 uid 0 euid 0 " "$out/secure-control.out" || fail "control: not a plain root process"
grep -q "/helper: memcpy Auto [1-9][0-9]* calls" "$d/stats/control" || fail "control: no statistics line"
grep -q "CACHECOPY_PRELOAD: ignored \`memcpy=bogus\`" "$out/secure-control.err" || fail "control: no warning from the library"
grep -q "cachecopy: ignoring CACHECOPY_TUNE" "$out/secure-control.err" || fail "control: no warning from cachecopy"
for v in CACHECOPY_PRELOAD CACHECOPY_PRELOAD_STATS CACHECOPY_TUNE; do
    grep -qx "getenv: $v" "$out/secure-control.out" || fail "control: $v was not asked for"
done
echo "preload secure: secure mode wrote nothing, warned of nothing, read no CACHECOPY_* variable; the control did all three: passed"
