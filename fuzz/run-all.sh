#!/usr/bin/env bash
# A long fuzz campaign: every target (or those named) for SECONDS each, one after another, each
# starting from its growing corpus (fuzz/corpus/<target>/, git-ignored, where new inputs go)
# and the seeds kept in the repository (fuzz/seeds/<target>/, read only here).
#
#   usage: fuzz/run-all.sh [--runs N] [SECONDS_PER_TARGET (default 600)] [TARGET...]
#   e.g.   fuzz/run-all.sh --runs 1000000 3600   # the campaign in lab/findings/testing-guarantees.md
#          fuzz/run-all.sh 30 copy fill          # a smoke
#
# Prints a Markdown table (target, wall seconds, executions, executions/s, crashes, corpus size) at
# the end and keeps each target's log in fuzz/logs/<target>.log. Exits non-zero if any target
# found a crash (its input is in fuzz/artifacts/<target>/). A crashing target does not stop the
# others. Seeds are refreshed from a campaign with `fuzz/run-all.sh --update-seeds`, which
# minimises each corpus (cargo fuzz cmin) into fuzz/seeds/<target>/.
set -uo pipefail
cd "$(dirname "$0")"

if [ "${1:-}" = "--update-seeds" ]; then
    shift
    targets=("$@")
    [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)
    for t in "${targets[@]}"; do
        tmp=$(mktemp -d)
        cp -r "corpus/$t/." "$tmp/" 2>/dev/null || true
        cp -r "seeds/$t/." "$tmp/" 2>/dev/null || true
        rm -rf "seeds/$t" && mkdir -p "seeds/$t"
        # cmin keeps the fewest inputs that reach every edge the union reaches (edges only, not hit
        # counts: a few dozen files, not hundreds), smallest first.
        cargo +nightly fuzz cmin "$t" "$tmp" -- -use_counters=0 -use_cmp=0 >/dev/null 2>&1
        cp "$tmp"/* "seeds/$t/"
        rm -rf "$tmp"
        echo "$t: $(ls "seeds/$t" | wc -l) seeds, $(du -sk "seeds/$t" | cut -f1) KiB"
    done
    exit 0
fi

# `--runs N`: each target runs until N executions (libFuzzer -runs=N), with SECONDS as a cap;
# the campaign recorded in lab/findings/testing-guarantees.md is `fuzz/run-all.sh --runs 1000000 3600`.
runs=
if [ "${1:-}" = "--runs" ]; then runs=$2; shift 2; fi
secs=${1:-600}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)
mkdir -p logs

cargo +nightly fuzz build || exit 1
status=0
rows=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t"
    echo "==> $t: ${runs:+$runs runs, at most }${secs}s, corpus/$t + seeds/$t (one process, one core)"
    t0=$(date +%s)
    # One libFuzzer process, no -jobs/-workers (-jobs=1 would fork a worker logging to
    # fuzz-0.log): the campaign uses one core.
    cargo +nightly fuzz run "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" ${runs:+-runs="$runs"} \
        -print_final_stats=1 >"logs/$t.log" 2>&1
    rc=$?
    wall=$(($(date +%s) - t0))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "logs/$t.log" | tail -1)
    crashes=0
    if [ "$rc" -ne 0 ] || grep -qE '^==[0-9]+==ERROR|deadly signal|panicked at' "logs/$t.log"; then
        crashes=1
        status=1
        tail -40 "logs/$t.log"
    fi
    rows+=("| $t | $wall | ${execs:-?} | ${rate:-?} | $crashes | $(ls "corpus/$t" | wc -l) |")
    echo "    $t: ${execs:-?} executions in ${wall}s, ${rate:-?}/s, exit $rc"
done

echo
echo "| target | seconds | executions | executions/s | crashes | corpus files |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
exit "$status"
