//! Large copies on AVX-512 registers (`wide_copy=`, the kernel `copy_wide`), forced from 0
//! bytes with `CACHECOPY_TUNE=temporal=avx2,wide_copy=0` before the first call of this process,
//! so that every `Temporal` copy of the 256-bit backend past four registers (and every `Auto`
//! copy stored temporally) runs the AVX-512 loop: every length to 1 KiB at several offset
//! pairs, all 64 x 64 offsets at every size-class boundary, multi-MiB sizes, and source and
//! destination flush against `PROT_NONE` pages on both sides. Run twice:
//! - natively by `cargo test`: on a CPU without AVX-512 the field is refused (asserted) and the
//!   same tables check the 256-bit loop;
//! - under Bochs (AVX-512 F/BW) by `.ci/run`, where the ignored test asserts that the AVX-512
//!   loop is in force and prints a marker `.ci/run` looks for.

mod common;

use cachecopy::{Backend, Mode};
use common::*;

/// Sets the line before anything in this process detects the CPU (every test calls this
/// first; they set the same value). Not under Miri, as in tests/small_masked.rs (std's
/// environment reader allocates there, which Miri reports as a leak); Miri runs no AVX2.
fn force_wide() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // No other thread of this process reads the environment before the `Once` completes:
    // every test waits on it first.
    if !miri() {
        ONCE.call_once(|| std::env::set_var("CACHECOPY_TUNE", "temporal=avx2,wide_copy=0"));
    }
}

/// Whether this CPU runs AVX-512 (what the field needs).
fn runs_wide() -> bool {
    Backend::supported().contains(&Backend::Avx512)
}

/// The copy tables on the 256-bit backend (`copy_with(Backend::Avx2)` runs exactly it, so its
/// `copy_temporal` hands every loop-class copy to the AVX-512 loop here), and copies through
/// the dispatched entry points. `light`: the guard pages and the large sizes only (Bochs).
fn sweep(light: bool) {
    if !Backend::supported().contains(&Backend::Avx2) {
        return;
    }
    if !light {
        table_all_lengths(Backend::Avx2);
        table_offsets(Backend::Avx2);
    }
    table_large(Backend::Avx2);
    table_guard_pages(Backend::Avx2);

    // The dispatched entry points (the engine in force is `temporal=avx2`), `Temporal` and
    // `Auto`, at lengths around the AVX-512 classes and the loop, at odd offsets.
    let lens = [
        129,
        200,
        256,
        257,
        511,
        512,
        513,
        1000,
        4097,
        70_001,
        (1 << 20) + 3,
    ];
    let src = pattern(lens[lens.len() - 1] + 64, 9);
    for mode in [Mode::Temporal, Mode::Auto] {
        for len in lens {
            for (so, d_o) in [(0, 0), (3, 61), (33, 7)] {
                let mut dst = vec![CANARY; d_o + len + 64];
                cachecopy::copy(&mut dst[d_o..d_o + len], &src[so..so + len], mode);
                assert!(
                    dst[d_o..d_o + len] == src[so..so + len],
                    "{mode:?} src+{so} dst+{d_o} len {len}"
                );
                assert!(
                    all_bytes(&dst[..d_o], CANARY) && all_bytes(&dst[d_o + len..], CANARY),
                    "{mode:?} src+{so} dst+{d_o} len {len}: byte outside the destination changed"
                );
            }
        }
    }
}

#[test]
fn wide_copies_match_the_reference() {
    force_wide();
    // The field where the CPU runs AVX-512, else refused with a warning and left at never.
    let want = if runs_wide() && !miri() {
        0
    } else {
        usize::MAX
    };
    assert_eq!(cachecopy::tuning().wide_copy, want);
    sweep(false);
}

#[test]
#[ignore = "asserts AVX-512; .ci/run runs it under Bochs"]
fn wide_copies_avx512() {
    force_wide();
    assert!(
        runs_wide(),
        "no AVX-512 here: {:?}",
        cachecopy::cpu().features
    );
    assert_eq!(cachecopy::tuning().wide_copy, 0);
    assert_eq!(cachecopy::engine().temporal, Backend::Avx2);
    sweep(true);
    println!("cachecopy: AVX512 WIDE COPIES EXERCISED");
}
