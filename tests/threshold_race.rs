//! The threshold setters race copies and fills on other threads: whatever value a copy sees
//! (0, small, huge, `usize::MAX`, or a change halfway through a cursor walk), every byte must be
//! right. Its own test binary: the thresholds are process-wide.
//!
//! Two setter threads flip `set_nt_threshold`, `set_fill_nt_threshold` and
//! `set_fill_rep_threshold` through the values while worker threads run every mode of copy,
//! fill, checksum-and-copy and the cursors at lengths on both sides of every value, each checked
//! against its reference. Reduced under Miri.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cachecopy::iter::{copy_from_iter, copy_to_iter, Dest, IoVec, IoVecMut, Source};
use cachecopy::net::{csum_and_copy, csum_fold};
use cachecopy::{Backend, Mode};

mod common;
use common::{all_bytes, miri, pattern, reference_sum};

#[test]
fn setters_race_copies_and_fills() {
    let values: [usize; 6] = [0, 1, 1024, 4097, 1 << 30, usize::MAX];
    let lens: &[usize] = if miri() {
        &[1, 40, 1100]
    } else {
        &[0, 1, 31, 33, 1023, 1024, 1025, 4096, 4097, 65_537, 300_001]
    };
    let rounds = if miri() { 2 } else { 40 };
    let workers = if miri() { 2 } else { 4 };

    let stop = Arc::new(AtomicBool::new(false));
    let setters: Vec<_> = (0..2)
        .map(|s| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                // Every (setter, value) pair in turn, the two threads half a cycle apart.
                let mut i = s * 3 * values.len() / 2;
                let mut flips = 0u64;
                while !stop.load(Ordering::Relaxed) || flips < 3 * values.len() as u64 {
                    let v = values[i / 3 % values.len()];
                    match i % 3 {
                        0 => cachecopy::set_nt_threshold(v),
                        1 => cachecopy::set_fill_nt_threshold(v),
                        _ => cachecopy::set_fill_rep_threshold(v),
                    }
                    i += 1;
                    flips += 1;
                    if miri() {
                        std::thread::yield_now();
                    }
                }
                flips
            })
        })
        .collect();

    let work: Vec<_> = (0..workers)
        .map(|w| {
            let lens = lens.to_vec();
            std::thread::spawn(move || {
                let backends = Backend::supported();
                let mut checked = 0usize;
                for round in 0..rounds {
                    for &len in &lens {
                        let mode = Mode::ALL[(round + w + len) % 4];
                        let src = pattern(len, (round * 7 + w) as u8);
                        let what = format!("worker {w} round {round} {mode} len {len}");

                        let mut dst = vec![0u8; len];
                        cachecopy::copy(&mut dst, &src, mode);
                        assert!(dst == src, "copy {what}");

                        let b = backends[(round + len) % backends.len()];
                        dst.fill(0);
                        cachecopy::copy_with(b, &mut dst, &src, mode).unwrap();
                        assert!(dst == src, "copy_with {b} {what}");

                        let byte = (round + len) as u8 | 1;
                        cachecopy::fill(&mut dst, byte, mode);
                        assert!(all_bytes(&dst, byte), "fill {what}");
                        cachecopy::fill_with(b, &mut dst, !byte, mode).unwrap();
                        assert!(all_bytes(&dst, !byte), "fill_with {b} {what}");

                        let sum = csum_and_copy(&mut dst, &src, mode);
                        assert!(dst == src, "csum_and_copy {what}");
                        assert_eq!(csum_fold(sum), reference_sum(&src), "sum {what}");

                        // Cursors: the threshold is read once per call, pieces are many.
                        let (a, c) = (len / 3, len / 3 + len / 7);
                        let segs = [
                            IoVec::new(&src[..a]),
                            IoVec::new(&src[a..a + c]),
                            IoVec::new(&src[a + c..]),
                        ];
                        dst.fill(0);
                        let n = copy_from_iter(&mut dst, &mut Source::iovec(&segs), mode);
                        assert!(n == len && dst == src, "copy_from_iter {what}");
                        let mut out = vec![0u8; len];
                        {
                            let (x, rest) = out.split_at_mut(a);
                            let (y, z) = rest.split_at_mut(c);
                            let mut segs = [IoVecMut::new(x), IoVecMut::new(y), IoVecMut::new(z)];
                            let n = copy_to_iter(&src, &mut Dest::iovec(&mut segs), mode);
                            assert_eq!(n, len, "copy_to_iter {what}");
                        }
                        assert!(out == src, "copy_to_iter {what}");
                        checked += 1;
                    }
                }
                checked
            })
        })
        .collect();

    let checked: usize = work.into_iter().map(|h| h.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    let flips: u64 = setters.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(checked, workers * rounds * lens.len());
    assert!(flips >= 6 * values.len() as u64);
    // Whatever the last flip left, the getters read a value that was set.
    for t in [
        cachecopy::nt_threshold(),
        cachecopy::fill_nt_threshold(),
        cachecopy::fill_rep_threshold(),
    ] {
        assert!(values.contains(&t), "{t}");
    }
    // `usize::MAX` is a value, not "unset"; the internal placeholder just below it reads back
    // as `usize::MAX` (both mean never).
    cachecopy::set_nt_threshold(usize::MAX);
    cachecopy::set_fill_nt_threshold(usize::MAX - 1);
    cachecopy::set_fill_rep_threshold(usize::MAX - 1);
    assert_eq!(cachecopy::nt_threshold(), usize::MAX);
    assert_eq!(cachecopy::fill_nt_threshold(), usize::MAX);
    assert_eq!(cachecopy::fill_rep_threshold(), usize::MAX);
    let mut dst = vec![0u8; 5000];
    cachecopy::fill(&mut dst, 7, Mode::Auto);
    assert!(all_bytes(&dst, 7));
}
