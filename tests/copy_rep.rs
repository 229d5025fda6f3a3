//! Temporal copies through the string move (x86_64 `rep movsb`): the default threshold by CPU
//! family, then, with the threshold forced to 0, the copy tables and guard pages on every
//! backend, so the 64-byte alignment head and the string body meet every offset and length,
//! and a source and destination placed at chosen distances modulo 4 KiB (the 4K-aliasing rule
//! sends the close ones to the vector loop; both must copy right). Its own test binary: the
//! threshold is process-wide.

mod common;
use cachecopy::{copy_with, rep_movsb_threshold, set_rep_movsb_threshold, Backend, Mode};
use common::*;

#[test]
fn string_move_copies_match_the_reference() {
    let t = rep_movsb_threshold();
    if !tuned("rep_movsb", "CACHECOPY_REP_MOVSB_THRESHOLD") && !miri() {
        // The rule's value for this CPU (each recorded CPU's is checked by the zoo's tests,
        // src/dispatch/zoo/).
        assert_eq!(t, cachecopy::Tuning::rule(&cachecopy::cpu()).rep_movsb);
    }

    // Everything above eight registers (the loop class) through the string move.
    set_rep_movsb_threshold(0);
    assert_eq!(rep_movsb_threshold(), 0);
    for &b in Backend::supported() {
        table_all_lengths(b);
        table_offsets(b);
        table_large(b);
        table_guard_pages(b);
    }

    // Source and destination in one buffer, `gap` bytes apart modulo 4 KiB, at every head
    // offset: far apart (the string move) and within the aliasing window (the vector loop).
    let lens: &[usize] = if miri() {
        &[65, 300]
    } else {
        &[65, 127, 300, 4095, 4096, 70_001]
    };
    for &b in Backend::supported() {
        for gap in [
            0usize,
            64,
            255,
            256,
            1024,
            2048,
            4096 - 256,
            4096 - 64,
            4096 - 1,
        ] {
            for &len in lens {
                for d_o in [0usize, 1, 33, 63] {
                    let src_at = 8192 + d_o;
                    let dst_at = src_at + len.next_multiple_of(4096) + 4096 + gap;
                    let mut buf = pattern(dst_at + len + 64, (gap + len) as u8);
                    let want = buf[src_at..src_at + len].to_vec();
                    let before = buf.clone();
                    let (lo, hi) = buf.split_at_mut(dst_at);
                    copy_with(b, &mut hi[..len], &lo[src_at..src_at + len], Mode::Temporal)
                        .unwrap();
                    assert_eq!(
                        &buf[dst_at..dst_at + len],
                        &want[..],
                        "{b:?} gap {gap} len {len}"
                    );
                    assert_eq!(
                        buf[..dst_at],
                        before[..dst_at],
                        "{b:?} gap {gap}: below changed"
                    );
                    assert_eq!(
                        buf[dst_at + len..],
                        before[dst_at + len..],
                        "{b:?} gap {gap}: above changed"
                    );
                }
            }
        }
    }

    // And never: the vector loop at every size.
    set_rep_movsb_threshold(usize::MAX);
    let mut dst = Vec::new();
    // Under Miri (which interprets every byte): 16 KiB + 5 for the 3 MiB (four pages, many
    // loop iterations past the streaming cut-over, an odd tail).
    let large = scaled((3 << 20) + 5, (16 << 10) + 5);
    let src = pattern(large + 64, 9);
    for &b in Backend::supported() {
        for len in [4095, large] {
            check_copy(b, Mode::Temporal, 3, 7, len, &src, &mut dst);
        }
    }
}
