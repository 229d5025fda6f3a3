//! The resolution of every mode through a plan's bounds (`Plan::copy_below`, `fill_below`)
//! against the rule they stand for (the reference below): every mode, a constant at the call
//! site and a value read at run time, at lengths around `STREAM_MIN` and around the thresholds,
//! for plans built with every kind of threshold, and for the plan a calibration's `apply`
//! publishes.

extern crate std;

use core::hint::black_box;
use std::vec::Vec;

use super::{Bounds, Mode, Store};
use crate::cpu::FlushOp;
use crate::dispatch::plan::{self, Plan};
use crate::kernel::STREAM_MIN;

/// The rule the bounds stand for (`Mode::resolve` with a threshold), the reference.
fn reference(mode: Mode, len: usize, threshold: usize, flush: FlushOp) -> Store {
    match mode {
        Mode::Temporal => Store::Temporal,
        Mode::FlushCache => Store::Flush(flush),
        Mode::NonTemporal if len >= STREAM_MIN => Store::NonTemporal,
        Mode::Auto if len >= STREAM_MIN && len >= threshold => Store::NonTemporal,
        Mode::NonTemporal | Mode::Auto => Store::Temporal,
    }
}

/// `mode.resolve` with the mode a constant at the call site, so each arm is folded as an
/// entry point's is.
#[inline(always)]
fn constant(mode: Mode, len: usize, below: &Bounds, flush: FlushOp) -> Store {
    match mode {
        Mode::Temporal => Mode::Temporal.resolve(len, below, flush),
        Mode::NonTemporal => Mode::NonTemporal.resolve(len, below, flush),
        Mode::FlushCache => Mode::FlushCache.resolve(len, below, flush),
        Mode::Auto => Mode::Auto.resolve(len, below, flush),
    }
}

/// Lengths on both sides of the streaming minimum, the inline classes' end and `threshold`.
fn lengths(threshold: usize) -> Vec<usize> {
    let mut v = std::vec![
        0,
        1,
        63,
        64,
        65,
        1000,
        STREAM_MIN - 1,
        STREAM_MIN,
        STREAM_MIN + 1
    ];
    v.extend([
        threshold.saturating_sub(1),
        threshold,
        threshold.saturating_add(1),
    ]);
    v.extend([isize::MAX as usize - 1, isize::MAX as usize]);
    v.retain(|&l| l <= isize::MAX as usize);
    v
}

/// Every mode, constant and at run time, copies and fills, and moves at a near and a far
/// distance, against the reference under the thresholds of `p`.
fn check_all(p: &Plan, what: &str) {
    let (nt, fill_nt, flush) = (p.tuning.nt, p.tuning.fill_nt, p.tuning.flush);
    for (below, threshold, op) in [
        (&p.copy_below, nt, "copy"),
        (&p.fill_below, fill_nt, "fill"),
    ] {
        assert_eq!(
            below[Mode::Auto as usize],
            threshold.max(STREAM_MIN),
            "{what}: {op} Auto bound"
        );
        for len in lengths(threshold) {
            for mode in Mode::ALL {
                let want = reference(mode, len, threshold, flush);
                let tag = || std::format!("{what}: {op} {mode} {len} B, threshold {threshold}");
                assert_eq!(
                    constant(mode, len, below, flush),
                    want,
                    "{} (constant)",
                    tag()
                );
                assert_eq!(
                    black_box(mode).resolve(len, below, flush),
                    want,
                    "{} (run time)",
                    tag()
                );
                assert_eq!(
                    black_box(mode).stores_temporally(len, below),
                    want == Store::Temporal,
                    "{}",
                    tag()
                );
            }
        }
    }
    // Moves: the copy's rule on the length, and for `Auto` on the distance too. The pointers
    // are only compared, never dereferenced.
    for len in lengths(nt) {
        for dist in [
            1,
            64,
            4096,
            nt.saturating_sub(1),
            nt,
            len,
            len.saturating_add(1),
        ] {
            let dst = 0x1_0000usize as *mut u8;
            for (d, s) in [(dst, dst.wrapping_add(dist)), (dst.wrapping_add(dist), dst)] {
                for mode in Mode::ALL {
                    let n = if mode == Mode::Auto {
                        len.min(dist)
                    } else {
                        len
                    };
                    assert_eq!(
                        black_box(mode).resolve_move(d, s, len, &p.copy_below, flush),
                        reference(mode, n, nt, flush),
                        "{what}: move {mode} {len} B by {dist}, threshold {nt}"
                    );
                }
            }
        }
    }
}

/// The thresholds the tests build plans with: both sides of `STREAM_MIN`, a page and a bit, a
/// few MiB, the largest length, and never.
const VALUES: [usize; 9] = [
    0,
    1,
    STREAM_MIN - 1,
    STREAM_MIN,
    4097,
    3 << 20,
    isize::MAX as usize,
    isize::MAX as usize + 1,
    usize::MAX,
];

#[test]
fn every_mode_resolves_as_the_rule_in_every_plan() {
    check_all(plan::active(), "detected");
    let values: &[usize] = if cfg!(miri) { &VALUES[2..5] } else { &VALUES };
    for (i, &nt) in values.iter().enumerate() {
        let fill = values[(i + 3) % values.len()];
        let mut t = plan::active().tuning;
        (t.nt, t.fill_nt) = (nt, fill);
        let p = Plan::new(t).unwrap();
        check_all(&p, &std::format!("nt {nt}, fill {fill}"));
    }
}

#[test]
#[cfg(unix)]
fn a_calibrations_apply_publishes_its_bounds() {
    use crate::tune::calibrate::Calibration;
    let _held = plan::HeldPlan::take();
    for (copy, fill) in [
        (Some(5 << 20), Some(700)),
        (Some(1), None),
        (None, Some(9 << 20)),
    ] {
        let before = plan::active().tuning;
        Calibration::deciding(copy, fill).apply();
        let p = plan::active();
        assert_eq!(p.tuning.nt, copy.unwrap_or(before.nt));
        assert_eq!(p.tuning.fill_nt, fill.unwrap_or(before.fill_nt));
        check_all(p, &std::format!("applied {copy:?} {fill:?}"));
    }
}
