#!/usr/bin/env bash
# The preload on a real command: `sort` of a 24 MB file, with and without libcachecopy_preload,
# whose memcpy, memmove and memset are cachecopy's (`Auto`: ordinary stores for small calls,
# streaming stores from the streaming threshold up). The two outputs must be the same bytes; the
# statistics line says how many calls the library served.
#
#   bash examples/preload.sh [LIB]
#
# LIB is a built libcachecopy_preload.so; without it the script builds one with cargo-c
# (`cargo install cargo-c`, which needs pkg-config and OpenSSL's headers). Linux only.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:-}
if [ -z "$lib" ]; then
    cargo cbuild -p cachecopy-preload --release --library-type cdylib
    target=$(cargo metadata --format-version 1 --no-deps | sed -E 's/.*"target_directory":"([^"]*)".*/\1/')
    lib=$target/$(uname -m)-unknown-linux-gnu/release/libcachecopy_preload.so
fi
lib=$(realpath "$lib")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1.5 million lines to sort: sort moves every line at least once.
awk 'BEGIN { srand(7); for (i = 0; i < 1500000; i++) printf "%08x %s\n", int(rand() * 4294967296), i }' \
    > "$work/in.txt"

sort "$work/in.txt" > "$work/glibc.txt"
# One command, preloaded; the statistics line goes to a file (or `stderr`).
LD_PRELOAD=$lib CACHECOPY_PRELOAD_STATS=$work/stats.txt sort "$work/in.txt" > "$work/preload.txt"
# Per function: streamed memcpy at every size, glibc's memset (`off`).
LD_PRELOAD=$lib CACHECOPY_PRELOAD=memcpy=nontemporal,memset=off sort "$work/in.txt" > "$work/nt.txt"

cmp "$work/glibc.txt" "$work/preload.txt"
cmp "$work/glibc.txt" "$work/nt.txt"
grep -E '(memcpy|memmove) Auto [1-9][0-9]* calls' "$work/stats.txt" \
    || { echo "the preload served no call" >&2; exit 1; }
echo "sort with the preload: the same $(wc -c < "$work/in.txt") bytes as without it"
