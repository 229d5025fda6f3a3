//! The public batch scope: every mode, destinations flush against `PROT_NONE` guard pages at
//! both ends (a streamed head or tail that strays outside faults), data checked against the
//! source. The fence count and every backend are tested inside the crate (`src/batch/tests.rs`).

mod common;
use cachecopy::{batch, Mode};
use common::*;

#[test]
fn batch_operations_stay_inside_guard_pages() {
    let lens: Vec<usize> = boundary_lengths()
        .into_iter()
        .filter(|&l| l <= 70_000)
        .collect();
    for mode in Mode::ALL {
        for &len in &lens {
            let src = pattern(len, len as u8);
            let (mut lo, mut hi, mut fl, mut cs) = (
                Guarded::new(len),
                Guarded::new(len),
                Guarded::new(len),
                Guarded::new(len),
            );
            let sum = batch(mode, |b| {
                b.copy(lo.at_start(len), &src);
                b.copy(hi.at_end(len), &src);
                b.fill(fl.at_end(len), 0x3c);
                b.csum_and_copy(cs.at_start(len), &src)
            });
            assert_eq!(
                lo.at_start(len),
                &src[..],
                "{mode:?} copy at start, len {len}"
            );
            assert_eq!(hi.at_end(len), &src[..], "{mode:?} copy at end, len {len}");
            assert!(
                fl.at_end(len).iter().all(|&b| b == 0x3c),
                "{mode:?} fill at end, len {len}"
            );
            assert_eq!(cs.at_start(len), &src[..], "{mode:?} csum copy, len {len}");
            assert_eq!(
                cachecopy::net::csum_fold(sum),
                cachecopy::net::csum_fold(cachecopy::net::csum_partial(&src, 0)),
                "{mode:?} csum, len {len}"
            );
        }
    }
}

#[test]
fn unfenced_raw_forms_then_fence() {
    for mode in Mode::ALL {
        for len in [0usize, 5, 1023, 1024, 4096 + 33, 1 << 20] {
            let src = pattern(len, 7);
            let mut g = Guarded::new(len);
            let dst = g.at_end(len);
            // SAFETY: `src` and `dst` are live, disjoint and `len` long; the fence follows
            // before `dst` is read.
            unsafe { cachecopy::copy_raw_unfenced(dst.as_mut_ptr(), src.as_ptr(), len, mode) };
            cachecopy::fence();
            assert_eq!(dst, &src[..], "{mode:?} copy len {len}");
            // SAFETY: as above.
            unsafe { cachecopy::fill_raw_unfenced(dst.as_mut_ptr(), 0xa7, len, mode) };
            cachecopy::fence();
            assert!(dst.iter().all(|&b| b == 0xa7), "{mode:?} fill len {len}");
        }
    }
}
