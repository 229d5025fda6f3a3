//! The dispatched entry points (`copy`, `copy_raw`, `fill`, `zero`, `fill_raw` and the unfenced
//! forms), which store short lengths inline at the call site (`src/kernel/small.rs`) and go to
//! the backend table past them: every length 0..=1024 at every destination offset 0..=63 (the
//! source offset turning through every residue too), every mode, beside canaries; and flush
//! against guard pages on both sides. The `*_with` tables (tests/copy.rs) cover each backend.

mod common;

use cachecopy::Mode;
use common::{all_bytes, cases, guarded_pair, miri, pattern, Guarded, CANARY};

/// The lengths: all of them natively; under Miri every inline class boundary and the table's
/// first sizes past them.
fn lens() -> Vec<usize> {
    cases(
        0..=1024,
        (0..=34).chain([47, 63, 64, 65, 127, 128, 129, 1023, 1024]),
    )
}

fn offsets() -> Vec<usize> {
    cases(0..64, [0, 5, 63])
}

/// The copy entry points, one per index.
fn copy_entry(i: usize, dst: &mut [u8], src: &[u8], mode: Mode) {
    assert_eq!(dst.len(), src.len());
    // SAFETY (raw forms): two live, non-overlapping slices of equal length; the unfenced form
    // is fenced before anything reads the destination.
    match i {
        0 => cachecopy::copy(dst, src, mode),
        1 => unsafe { cachecopy::copy_raw(dst.as_mut_ptr(), src.as_ptr(), src.len(), mode) },
        _ => {
            unsafe {
                cachecopy::raw::copy_raw_unfenced(dst.as_mut_ptr(), src.as_ptr(), src.len(), mode)
            };
            cachecopy::fence();
        }
    }
}

/// The fill entry points, one per index.
fn fill_entry(i: usize, dst: &mut [u8], byte: u8, mode: Mode) {
    // SAFETY (raw forms): a live slice; the unfenced form is fenced before the check.
    match i {
        0 => cachecopy::fill(dst, byte, mode),
        1 if byte == 0 => cachecopy::zero(dst, mode),
        1 => unsafe { cachecopy::fill_raw(dst.as_mut_ptr(), byte, dst.len(), mode) },
        _ => {
            unsafe { cachecopy::raw::fill_raw_unfenced(dst.as_mut_ptr(), byte, dst.len(), mode) };
            cachecopy::fence();
        }
    }
}

#[test]
fn every_length_every_offset_every_mode() {
    let src = pattern(1024 + 64, 9);
    let mut buf = vec![CANARY; 64 + 1024 + 64];
    for mode in Mode::ALL {
        for (k, &d_o) in offsets().iter().enumerate() {
            // Each destination offset with a different source offset, so both turn through
            // every residue mod 64; the entry point turns with them.
            let so = (d_o * 37 + 11) % 64;
            for len in lens() {
                let entry = (k + len) % 3;
                let want = &src[so..so + len];
                copy_entry(entry, &mut buf[d_o..d_o + len], want, mode);
                assert!(
                    buf[d_o..d_o + len] == *want,
                    "copy #{entry} {mode:?} len {len} dst+{d_o} src+{so}"
                );
                assert!(
                    all_bytes(&buf[..d_o], CANARY) && all_bytes(&buf[d_o + len..], CANARY),
                    "copy #{entry} {mode:?} len {len} dst+{d_o}: a byte outside changed"
                );
                let byte = if len % 2 == 0 { 0 } else { (len as u8) | 1 };
                fill_entry(entry, &mut buf[d_o..d_o + len], byte, mode);
                assert!(
                    all_bytes(&buf[d_o..d_o + len], byte),
                    "fill #{entry} {mode:?} {byte:#x} len {len} dst+{d_o}"
                );
                assert!(
                    all_bytes(&buf[..d_o], CANARY) && all_bytes(&buf[d_o + len..], CANARY),
                    "fill #{entry} {mode:?} len {len} dst+{d_o}: a byte outside changed"
                );
                buf[d_o..d_o + len].fill(CANARY);
            }
        }
    }
}

/// Source and destination flush against `PROT_NONE` pages: a class that read or wrote one
/// byte past either end faults.
#[test]
fn guard_pages_on_both_sides() {
    if miri() {
        return; // `Guarded` is exact-size allocations there; the canary test covers Miri.
    }
    let lens: Vec<usize> = (0..=300).chain([511, 512, 513, 1023, 1024]).collect();
    let mut s = Guarded::new(4096);
    let mut d = Guarded::new(4096);
    for mode in Mode::ALL {
        for &len in &lens {
            let want = pattern(len, len as u8);
            for placement in [(false, false), (true, true), (false, true), (true, false)] {
                let (src, dst) = guarded_pair(&mut s, &mut d, placement, &want);
                for entry in 0..3 {
                    dst.fill(0);
                    copy_entry(entry, dst, src, mode);
                    assert!(
                        dst == want.as_slice(),
                        "guarded copy #{entry} {mode:?} len {len}"
                    );
                    for byte in [0x3c, 0] {
                        fill_entry(entry, dst, byte, mode);
                        assert!(
                            all_bytes(dst, byte),
                            "guarded fill #{entry} {mode:?} len {len}"
                        );
                    }
                }
            }
        }
    }
}
