//! The resolution of every mode through the published bounds (`dispatch::copy_below`,
//! `fill_below`) against the rule it replaced (the reference below): every mode, a constant at
//! the call site and a value read at run time, at lengths around `STREAM_MIN` and around the
//! thresholds, after the setters and after a calibration's `apply`; and the bounds while
//! setters race.

extern crate std;

use core::hint::black_box;
use core::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::vec::Vec;

use super::{Mode, Store};
use crate::dispatch::{self, copy_below, fill_below, index, Bounds};
use crate::kernel::STREAM_MIN;
use crate::thresholds::{
    fill_nt_threshold, nt_threshold, set_fill_nt_threshold, set_nt_threshold, HeldThresholds,
};

/// The rule before the bounds (`Mode::resolve` with a threshold getter), the reference.
fn reference(mode: Mode, len: usize, threshold: usize) -> Store {
    match mode {
        Mode::Temporal => Store::Temporal,
        Mode::FlushCache => Store::Flush(dispatch::flush_op()),
        Mode::NonTemporal if len >= STREAM_MIN => Store::NonTemporal,
        Mode::Auto if len >= STREAM_MIN && len >= threshold => Store::NonTemporal,
        Mode::NonTemporal | Mode::Auto => Store::Temporal,
    }
}

/// `mode.resolve` with the mode a constant at the call site, so each arm is folded as an
/// entry point's is.
#[inline(always)]
fn constant(mode: Mode, len: usize, below: &Bounds) -> Store {
    match mode {
        Mode::Temporal => Mode::Temporal.resolve(len, below),
        Mode::NonTemporal => Mode::NonTemporal.resolve(len, below),
        Mode::FlushCache => Mode::FlushCache.resolve(len, below),
        Mode::Auto => Mode::Auto.resolve(len, below),
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
/// distance, against the reference under the thresholds in force.
fn check_all(what: &str) {
    let (nt, fill_nt) = (nt_threshold(), fill_nt_threshold());
    for (below, threshold, op) in [(copy_below(), nt, "copy"), (fill_below(), fill_nt, "fill")] {
        assert_eq!(
            below[index::AUTO].load(Ordering::Relaxed),
            threshold.max(STREAM_MIN),
            "{what}: {op} Auto bound"
        );
        for len in lengths(threshold) {
            for mode in Mode::ALL {
                let want = reference(mode, len, threshold);
                let tag = || std::format!("{what}: {op} {mode} {len} B, threshold {threshold}");
                assert_eq!(constant(mode, len, below), want, "{} (constant)", tag());
                assert_eq!(
                    black_box(mode).resolve(len, below),
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
                        black_box(mode).resolve_move(d, s, len),
                        reference(mode, n, nt),
                        "{what}: move {mode} {len} B by {dist}, threshold {nt}"
                    );
                }
            }
        }
    }
}

/// The thresholds the tests set: both sides of `STREAM_MIN`, a page and a bit, a few MiB,
/// the largest length, never, and `UNSET`'s stand-in (reads back as never).
const VALUES: [usize; 10] = [
    0,
    1,
    STREAM_MIN - 1,
    STREAM_MIN,
    4097,
    3 << 20,
    isize::MAX as usize,
    isize::MAX as usize + 1,
    usize::MAX - 1,
    usize::MAX,
];

#[test]
fn every_mode_resolves_as_the_old_rule_after_every_setter() {
    let _held = HeldThresholds::take();
    check_all("detected");
    let values: &[usize] = if cfg!(miri) { &VALUES[2..5] } else { &VALUES };
    for (i, &nt) in values.iter().enumerate() {
        let fill = values[(i + 3) % values.len()];
        set_nt_threshold(nt);
        set_fill_nt_threshold(fill);
        check_all(&std::format!("set nt {nt}, fill {fill}"));
    }
}

#[test]
#[cfg(unix)]
fn a_calibrations_apply_moves_the_bounds() {
    use crate::tune::calibrate::Calibration;
    let _held = HeldThresholds::take();
    for (copy, fill) in [
        (Some(5 << 20), Some(700)),
        (Some(1), None),
        (None, Some(9 << 20)),
    ] {
        let (nt, fill_nt) = (nt_threshold(), fill_nt_threshold());
        Calibration::deciding(copy, fill).apply();
        assert_eq!(nt_threshold(), copy.unwrap_or(nt));
        assert_eq!(fill_nt_threshold(), fill.unwrap_or(fill_nt));
        check_all(&std::format!("applied {copy:?} {fill:?}"));
    }
}

/// Setters race each other and readers: every bound a reader sees is `max(STREAM_MIN, t)` for
/// a threshold `t` some setter set, and once the setters are done each bound is its
/// threshold's.
#[test]
fn racing_setters_leave_valid_bounds() {
    let _held = HeldThresholds::take();
    let stored = |v: usize| if v == usize::MAX - 1 { usize::MAX } else { v };
    let mut valid: Vec<usize> = VALUES.iter().map(|&v| stored(v).max(STREAM_MIN)).collect();
    valid.extend([nt_threshold(), fill_nt_threshold()].map(|t| t.max(STREAM_MIN)));
    let flips = if cfg!(miri) { 6 } else { 2000 };
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (stop, valid) = (stop.clone(), valid.clone());
            std::thread::spawn(move || {
                let mut seen = 0usize;
                while !stop.load(Ordering::Relaxed) || seen == 0 {
                    for below in [copy_below(), fill_below()] {
                        let b = below[index::AUTO].load(Ordering::Relaxed);
                        assert!(valid.contains(&b), "a bound no setter set: {b}");
                        assert_eq!(below[index::TEMPORAL].load(Ordering::Relaxed), usize::MAX);
                        assert_eq!(
                            below[index::NONTEMPORAL].load(Ordering::Relaxed),
                            STREAM_MIN
                        );
                        assert_eq!(below[index::FLUSH_CACHE].load(Ordering::Relaxed), 0);
                    }
                    seen += 1;
                    if cfg!(miri) {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    let setters: Vec<_> = (0..2)
        .map(|s| {
            std::thread::spawn(move || {
                for i in 0..flips {
                    let v = VALUES[(i * 7 + s * 3) % VALUES.len()];
                    if (i + s) % 2 == 0 {
                        set_nt_threshold(v);
                    } else {
                        set_fill_nt_threshold(v);
                    }
                    if cfg!(miri) {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for s in setters {
        s.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    check_all("after the race");
}
