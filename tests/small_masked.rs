//! The masked small class (`Small::MaskedFills`: one AVX-512 byte-masked store for fills of 0 to
//! 64 bytes at the call site, `arch/x86_64/masked.rs`), forced on with
//! `CACHECOPY_TUNE=small=masked-fills` before the first call of this process, through every
//! dispatched fill entry point: every length 0..=130 (the class, its edge and the table past it)
//! at every destination offset within 64 bytes of either guard page (a masked-off byte on a
//! `PROT_NONE` page must neither fault nor be written), beside canaries; copies and moves keep
//! the plain classes and are checked the same way (moves at every distance). Run twice:
//! - natively by `cargo test`: on a CPU without the masked class the field is refused and the
//!   same sweep checks the plain classes;
//! - under Bochs (AVX-512 F/BW/VL, BMI2) by `.ci/run`, where the ignored test asserts that the
//!   masked class is in force and prints a marker `.ci/run` looks for.

mod common;

use cachecopy::{Mode, Small};
use common::{cases, miri, pattern, Guarded, CANARY};

/// Sets the field before anything in this process detects the CPU (every test calls this
/// first; they set the same value). Not under Miri: there std's environment reader allocates the
/// value, which detection keeps for the whole process (`dispatch::env`), and Miri fails the run
/// on it as a leak; Miri has no AVX-512, so the sweep checks the plain classes either way.
fn force_masked() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // No other thread of this process reads the environment before the `Once` completes:
    // every test waits on it first.
    if !miri() {
        ONCE.call_once(|| std::env::set_var("CACHECOPY_TUNE", "small=masked-fills"));
    }
}

use common::runs_masked_small as runs_masked;

fn lens() -> Vec<usize> {
    cases(0..=130, [0, 1, 3, 4, 15, 16, 31, 32, 63, 64, 65])
}

fn gaps() -> Vec<usize> {
    cases(0..64, [0, 1, 63])
}

/// `len` bytes of `d` `gap` bytes away from one guard page (the upper one when `at_end`), and
/// the `gap` bytes between them and the guard, all set to the canary.
fn destination(d: &mut Guarded, at_end: bool, len: usize, gap: usize) -> (&mut [u8], &mut [u8]) {
    let buf = d.at(at_end, len + gap);
    buf.fill(CANARY);
    if at_end {
        let (dst, pad) = buf.split_at_mut(len);
        (pad, dst)
    } else {
        buf.split_at_mut(gap)
    }
}

/// The copy entry points, one per index: `copy` with a mode known at compile time,
/// `copy_raw` with a run-time one and `copy_raw_unfenced` (fenced here).
fn copy_entry(entry: usize, dst: &mut [u8], src: &[u8]) {
    let len = src.len();
    assert_eq!(dst.len(), len);
    // SAFETY (raw forms): live, disjoint buffers of `len` bytes; the unfenced form is fenced
    // before anything reads the destination.
    unsafe {
        match entry {
            0 => cachecopy::copy(dst, src, Mode::Temporal),
            1 => cachecopy::copy_raw(
                dst.as_mut_ptr(),
                src.as_ptr(),
                len,
                std::hint::black_box(Mode::Auto),
            ),
            _ => {
                cachecopy::copy_raw_unfenced(
                    dst.as_mut_ptr(),
                    src.as_ptr(),
                    len,
                    Mode::NonTemporal,
                );
                cachecopy::fence();
            }
        }
    }
}

/// The fill entry points, as [`copy_entry`]'s.
fn fill_entry(entry: usize, dst: &mut [u8], byte: u8) {
    let len = dst.len();
    // SAFETY: as in `copy_entry`.
    unsafe {
        match entry {
            0 => cachecopy::fill(dst, byte, Mode::Temporal),
            1 => cachecopy::fill_raw(
                dst.as_mut_ptr(),
                byte,
                len,
                std::hint::black_box(Mode::Auto),
            ),
            _ => {
                cachecopy::fill_raw_unfenced(dst.as_mut_ptr(), byte, len, Mode::NonTemporal);
                cachecopy::fence();
            }
        }
    }
}

/// Every copy and fill entry point, every length and offset, both buffers flush against a guard
/// page or `gap` bytes short of it, against the reference; the bytes between the buffer and the
/// guard keep their canary.
fn sweep() {
    let room = 130 + 64;
    let (mut s, mut d) = (Guarded::new(room), Guarded::new(room));
    for len in lens() {
        let want = pattern(len, len as u8);
        for gap in gaps() {
            for (s_end, d_end) in [(false, false), (true, true), (false, true), (true, false)] {
                // The source: `len` bytes `gap` bytes away from one guard page.
                let sbuf = s.at(s_end, len + gap);
                let src = if s_end {
                    &mut sbuf[..len]
                } else {
                    &mut sbuf[gap..]
                };
                src.copy_from_slice(&want);
                let src: &[u8] = src;
                for entry in 0..3 {
                    let (pad, dst) = destination(&mut d, d_end, len, gap);
                    copy_entry(entry, dst, src);
                    assert_eq!(dst, &want[..], "copy {entry}: {len} B, gap {gap}");
                    assert!(pad.iter().all(|&b| b == CANARY), "copy {entry}: {len} B");
                }
                for entry in 0..3 {
                    let (pad, dst) = destination(&mut d, d_end, len, gap);
                    let byte = 0x5a ^ len as u8;
                    fill_entry(entry, dst, byte);
                    assert!(dst.iter().all(|&b| b == byte), "fill {entry}: {len} B");
                    assert!(pad.iter().all(|&b| b == CANARY), "fill {entry}: {len} B");
                }
            }
        }
    }
    // Moves (plain classes whatever the field says) at every distance in both directions,
    // inside a buffer flush against both guard pages.
    let max = if miri() { 20 } else { 64 };
    let mut g = Guarded::new(3 * max);
    for len in 0..=max {
        for dist in 0..=max {
            for up in [false, true] {
                let n = len + dist;
                let buf = g.at_end(n);
                let init = pattern(n, dist as u8);
                buf.copy_from_slice(&init);
                let (from, to) = if up { (0, dist) } else { (dist, 0) };
                cachecopy::copy_within(buf, from..from + len, to, Mode::Temporal);
                let mut want = init.clone();
                want.copy_within(from..from + len, to);
                assert_eq!(buf, &want[..], "move {len} B by {dist}, up {up}");
            }
        }
    }
}

#[test]
fn small_masked_classes() {
    force_masked();
    let want = if runs_masked() {
        Small::MaskedFills
    } else {
        Small::Plain
    };
    assert_eq!(cachecopy::tuning().small, want);
    sweep();
}

#[test]
#[ignore = "asserts AVX-512 with BMI2; .ci/run runs it under Bochs"]
fn small_masked_avx512() {
    force_masked();
    assert!(
        runs_masked(),
        "no masked class here: {:?}",
        cachecopy::cpu().features
    );
    assert_eq!(cachecopy::tuning().small, Small::MaskedFills);
    sweep();
    println!("cachecopy: AVX512 MASKED SMALL CLASSES EXERCISED");
}
