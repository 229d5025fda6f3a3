//! Which store kind an `Auto` move runs, near and far (`Mode::resolve_move`), observed through
//! the fences it issues (`arch::fences`, unit-test builds only: a streaming move fences once, a
//! temporal one never), through every entry point that moves, against `slice::copy_within`.

extern crate std;

use std::vec::Vec;

use super::{copy_within, copy_within_with_engine, move_raw, move_raw_unfenced};
use crate::arch;
use crate::batch::batch;
use crate::dispatch::engine::Engine;
use crate::dispatch::plan::{self, HeldPlan};
use crate::fence;
use crate::kernel::STREAM_MIN;
use crate::mode::Mode;
use crate::testutil::pattern;

/// Publishes the plan in force with `Auto` copies streaming from `nt` bytes.
fn set_nt_threshold(nt: usize) {
    plan::update(|t| t.nt = nt).unwrap();
}

/// Fences this thread issued while `f` ran.
fn fences_during(f: impl FnOnce()) -> usize {
    let before = arch::fences();
    f();
    arch::fences() - before
}

/// One entry point moving `len` bytes of `buf` from `from` to `to` in `mode`.
type Entry = fn(&mut [u8], usize, usize, usize, Mode);

fn by_copy_within(b: &mut [u8], from: usize, to: usize, len: usize, m: Mode) {
    copy_within(b, from..from + len, to, m)
}

fn by_move_raw(b: &mut [u8], from: usize, to: usize, len: usize, m: Mode) {
    assert!(from.max(to) + len <= b.len());
    let p = b.as_mut_ptr();
    // SAFETY: both ranges inside `b` (checked above); overlap is allowed.
    unsafe { move_raw(p.add(to), p.add(from), len, m) }
}

fn by_batch(b: &mut [u8], from: usize, to: usize, len: usize, m: Mode) {
    batch(m, |bt| bt.copy_within(b, from..from + len, to))
}

fn by_engine(b: &mut [u8], from: usize, to: usize, len: usize, m: Mode) {
    copy_within_with_engine(plan::active().tuning.engine, b, from..from + len, to, m).unwrap()
}

fn by_generic(b: &mut [u8], from: usize, to: usize, len: usize, m: Mode) {
    let e: Engine = crate::tune::Backend::Generic.into();
    copy_within_with_engine(e, b, from..from + len, to, m).unwrap()
}

fn by_plan(b: &mut [u8], from: usize, to: usize, len: usize, m: Mode) {
    plan::active().copy_within(b, from..from + len, to, m)
}

/// Every entry point that resolves a move's mode and fences what it owes before returning
/// (`Batch::copy_within` when its batch ends).
const ENTRIES: [(&str, Entry); 6] = [
    ("copy_within", by_copy_within),
    ("move_raw", by_move_raw),
    ("Batch::copy_within", by_batch),
    ("copy_within_with_engine", by_engine),
    ("copy_within_with_engine (generic)", by_generic),
    ("Plan::copy_within", by_plan),
];

/// Moves `len` bytes by `dist` (down, then up) through every entry point in `mode` and returns
/// whether each streamed (fenced); the bytes checked against `slice::copy_within`.
fn streamed(mode: Mode, len: usize, dist: usize) -> Vec<bool> {
    let data = pattern(len + dist, 3);
    let mut out = Vec::new();
    for (name, entry) in ENTRIES {
        for (from, to) in [(dist, 0), (0, dist)] {
            let mut buf = data.clone();
            let n = fences_during(|| entry(&mut buf, from, to, len, mode));
            let mut want = data.clone();
            want.copy_within(from..from + len, to);
            assert!(buf == want, "{name} {mode} {len} B from {from} to {to}");
            assert!(n <= 1, "{name}: {n} fences");
            out.push(n == 1);
        }
    }
    out
}

#[test]
fn auto_moves_stream_only_past_the_threshold_in_distance() {
    let _held = HeldPlan::take();
    // Small enough for Miri: `Auto` streams from `STREAM_MIN` here, in length and distance.
    set_nt_threshold(0);
    let (len, near, far) = (3 * STREAM_MIN, STREAM_MIN / 2, STREAM_MIN + STREAM_MIN / 2);
    let cases = [
        // (mode, length, distance, streams)
        (Mode::Auto, len, 1, false),
        (Mode::Auto, len, near, false),
        (Mode::Auto, len, STREAM_MIN - 1, false),
        (Mode::Auto, len, STREAM_MIN, true),
        (Mode::Auto, len, far, true),
        // Disjoint ranges: the copy's rule, on the length.
        (Mode::Auto, len, len + 64, true),
        (Mode::Auto, STREAM_MIN - 1, 2 * STREAM_MIN, false),
        // The caller asked: `NonTemporal` streams near too, from `STREAM_MIN` bytes.
        (Mode::NonTemporal, len, near, true),
        (Mode::NonTemporal, len, 1, true),
        (Mode::NonTemporal, STREAM_MIN - 1, near, false),
        (Mode::Temporal, len, far, false),
    ];
    for (mode, len, dist, want) in cases {
        for (i, got) in streamed(mode, len, dist).into_iter().enumerate() {
            assert_eq!(got, want, "{mode} {len} B by {dist}, entry {}", i / 2);
        }
    }
    // A larger threshold moves the distance with it.
    if !cfg!(miri) {
        set_nt_threshold(64 << 10);
        for (dist, want) in [(4096, false), ((64 << 10) - 1, false), (64 << 10, true)] {
            assert!(
                streamed(Mode::Auto, 256 << 10, dist)
                    .iter()
                    .all(|&s| s == want),
                "{dist}"
            );
        }
        // Below the threshold in length, far or not: temporal.
        assert!(streamed(Mode::Auto, 60 << 10, 1 << 20).iter().all(|&s| !s));
    }
}

/// The unfenced form fences nothing itself: what it resolved shows in the bytes only, and in
/// the fence the caller then owes.
#[test]
fn move_raw_unfenced_moves_near_and_far() {
    let _held = HeldPlan::take();
    set_nt_threshold(0);
    let len = 3 * STREAM_MIN;
    for dist in [1, STREAM_MIN / 2, STREAM_MIN, len + 64] {
        for (from, to) in [(dist, 0), (0, dist)] {
            for mode in Mode::ALL {
                let data = pattern(len + dist, 5);
                let mut buf = data.clone();
                let p = buf.as_mut_ptr();
                let n = fences_during(|| {
                    // SAFETY: both ranges inside `buf`.
                    unsafe { move_raw_unfenced(p.add(to), p.add(from), len, mode) };
                });
                fence();
                let mut want = data.clone();
                want.copy_within(from..from + len, to);
                assert!(buf == want, "{mode} {len} B from {from} to {to}");
                assert_eq!(n, 0, "{mode}: the unfenced form fenced");
            }
        }
    }
}
