//! Temporal fills through the string store (x86_64 `rep stosb`): the default threshold, a fill
//! above it, and then, with the threshold forced to 0, the whole fill table and guard pages on
//! every backend, so the 64-byte alignment head and the string body meet every offset and
//! length. Its own test binary: the threshold is process-wide.

mod common;
use cachecopy::{fill_rep_threshold, fill_with, set_fill_rep_threshold, Backend, Mode};
use common::*;

#[test]
fn string_store_fills_match_the_reference() {
    let t = fill_rep_threshold();
    if !tuned("fill_rep", "CACHECOPY_FILL_REP_THRESHOLD") && !miri() {
        // The rule's value for this CPU (each recorded CPU's is checked by the zoo's tests,
        // src/dispatch/zoo/).
        assert_eq!(t, cachecopy::Tuning::rule(&cachecopy::cpu()).fill_rep);
    }

    // One fill above the default threshold on every backend, at three destination alignments.
    if t != usize::MAX && !miri() && !emulated() {
        let len = t + 4099;
        let mut dst = Vec::new();
        for &b in Backend::supported() {
            for d_o in [0, 1, 63] {
                check_fill(b, Mode::Temporal, d_o, len, 0x5a, &mut dst);
            }
        }
    }

    // Everything above eight registers (the loop class) through the string store.
    set_fill_rep_threshold(0);
    assert_eq!(fill_rep_threshold(), 0);
    let mut lens: Vec<usize> = (0..=300).collect();
    lens.extend(boundary_lengths());
    lens.extend([4095, 4096, 4097, 65537]);
    for &b in Backend::supported() {
        table_fill(b);
        table_fill_guard_pages(b, &lens);
    }

    // And never: the vector loop at every size.
    set_fill_rep_threshold(usize::MAX);
    let mut dst = Vec::new();
    // Under Miri (which interprets every byte): 64 KiB for the 3 MiB.
    let large = scaled((3 << 20) + 5, (64 << 10) + 5);
    for &b in Backend::supported() {
        for len in [4095, large] {
            check_fill(b, Mode::Temporal, 7, len, 0xa5, &mut dst);
        }
        assert!(fill_with(b, &mut [0u8; 0], 1, Mode::Temporal).is_ok());
    }
}
