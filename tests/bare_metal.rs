//! What soft-float targets and `--cfg cachecopy_integer_only` builds promise at run time
//! (docs/bare-metal.md): only the word backend is offered, dispatched or accepted, and the inline
//! small-fill path (which uses a 16-byte `u128` store pair in vector builds) stays exact in every
//! mode. The copy, fill, cursor and checksum tables (`tests/copy.rs`, `tests/net_csum.rs`,
//! `src/iter/tests.rs`, ...) run every supported backend, so under the cfg they test the word
//! backend in every mode; CI runs them so (`.ci/run`, section "bare metal").

mod common;

use cachecopy::raw::{copy_with, fill_with};
use cachecopy::tune::Backend;
use cachecopy::Mode;
use common::*;

/// Vector builds hand out the vector backends the CPU runs; integer-only builds none of them.
#[test]
fn backends_follow_the_build() {
    let s = Backend::supported();
    if cfg!(cachecopy_integer_only) {
        assert_eq!(s, &[Backend::Generic]);
        assert_eq!(
            cachecopy::tune::Plan::current().tuning().engine.stream,
            Backend::Generic
        );
    } else if cfg!(all(target_arch = "x86_64", target_feature = "sse2")) {
        assert!(s.contains(&Backend::Sse2), "{s:?}");
    } else if cfg!(all(target_arch = "aarch64", target_feature = "neon")) {
        assert!(s.contains(&Backend::Neon), "{s:?}");
    }
}

/// A backend the build does not offer is refused, even when the CPU has its registers, and
/// nothing is written.
#[test]
fn vector_backends_are_refused_when_not_offered() {
    let refused: Vec<Backend> = [Backend::Sse2, Backend::Avx2, Backend::Avx512, Backend::Neon]
        .into_iter()
        .filter(|b| !Backend::supported().contains(b))
        .collect();
    if cfg!(cachecopy_integer_only) {
        assert_eq!(refused.len(), 4, "{refused:?}");
    }
    let src = pattern(4096, 3);
    for b in refused {
        for mode in Mode::ALL {
            let mut dst = vec![CANARY; 4096];
            assert!(
                copy_with(b, &mut dst, &src, mode).is_err(),
                "{b:?} {mode:?}"
            );
            assert!(
                fill_with(b, &mut dst, 0x11, mode).is_err(),
                "{b:?} {mode:?}"
            );
            assert!(all_bytes(&dst, CANARY), "{b:?} {mode:?} wrote");
        }
    }
}

/// `cachecopy::fill` (not `fill_with`) takes the inline path up to 32 bytes: every length
/// around it, every mode, against both guard pages.
#[test]
fn inline_fills_stay_inside_guard_pages() {
    let mut g = Guarded::new(4096);
    for mode in Mode::ALL {
        for len in 0..=80 {
            for at_end in [false, true] {
                for byte in [0xa7, 0] {
                    let dst = g.at(at_end, len + 16);
                    dst.fill(CANARY);
                    // The fill at the very start or end of the mapping, canaries on the inner side.
                    let (lo, hi) = if at_end { (16, len + 16) } else { (0, len) };
                    cachecopy::fill(&mut dst[lo..hi], byte, mode);
                    assert!(
                        all_bytes(&dst[lo..hi], byte),
                        "{mode:?} len {len} end {at_end}: wrong byte"
                    );
                    assert!(
                        dst[..lo].iter().chain(&dst[hi..]).all(|&x| x == CANARY),
                        "{mode:?} len {len} end {at_end}: byte outside changed"
                    );
                }
            }
        }
    }
}

/// Word-backend builds fill with `rep stosb` from 1 KiB on ERMS CPUs (their loop stores 8 bytes
/// at a time; lab/findings/bare-metal.md has the measurements), never elsewhere: the rule of this build,
/// in force (the zoo's tests check it for every recorded CPU).
#[test]
fn word_builds_use_the_string_store_from_1_kib() {
    if !cfg!(cachecopy_integer_only) || tuned("fill_rep") {
        return;
    }
    let rule = cachecopy::tune::Tuning::rule(&cachecopy::tune::cpu()).fill_rep;
    assert!(rule == 1024 || rule == usize::MAX, "{rule}");
    assert_eq!(cachecopy::tune::Plan::current().tuning().fill_rep, rule);
}
