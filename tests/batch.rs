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
                all_bytes(fl.at_end(len), 0x3c),
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
        // Under Miri (which interprets every byte) the largest is 64 KiB, not 1 MiB.
        let large = if miri() { (64 << 10) + 3 } else { 1 << 20 };
        for len in [0usize, 5, 1023, 1024, 4096 + 33, large] {
            let src = pattern(len, 7);
            let mut g = Guarded::new(len);
            let dst = g.at_end(len);
            // SAFETY: `src` and `dst` are live, disjoint and `len` long; the fence follows
            // before `dst` is read.
            unsafe { cachecopy::raw::copy_raw_unfenced(dst.as_mut_ptr(), src.as_ptr(), len, mode) };
            cachecopy::fence();
            assert_eq!(dst, &src[..], "{mode:?} copy len {len}");
            // SAFETY: as above.
            unsafe { cachecopy::raw::fill_raw_unfenced(dst.as_mut_ptr(), 0xa7, len, mode) };
            cachecopy::fence();
            assert!(all_bytes(dst, 0xa7), "{mode:?} fill len {len}");
        }
    }
}

/// Transmit frames as a stack builds them: a 42-byte header at slot offset 0 and a 1472-byte
/// payload at offset 42, 64 frames per batch into a page-aligned ring of 1536-byte slots, built
/// with separate copies and with a gather of `[header, payload]`, on every engine this CPU
/// runs; and the aligned shape (payload alone at offset 0). Every frame byte is checked, and so
/// is every slot byte behind the frame (untouched).
#[test]
fn frames_with_a_header_at_offset_42_on_every_engine() {
    use cachecopy::iter::{IoVec, Source};
    use cachecopy::tune::Engine;
    const SLOT: usize = 1536;
    let (hdr, payload) = (pattern(42, 3), pattern(1472, 4));
    let frames = if miri() { 3 } else { 130 };
    let engines: Vec<Engine> = if miri() {
        vec![cachecopy::tune::Plan::current().tuning().engine]
    } else {
        Engine::supported().to_vec()
    };
    for e in engines {
        for h in [42usize, 0] {
            let len = h + payload.len();
            for gather in [false, true] {
                let mut ring = Guarded::new(frames * SLOT);
                let ring = ring.at_start(frames * SLOT);
                ring.fill(CANARY);
                for group in ring.chunks_mut(64 * SLOT) {
                    cachecopy::raw::batch_with(e, Mode::NonTemporal, |b| {
                        for slot in group.chunks_exact_mut(SLOT) {
                            if gather {
                                let segs = [IoVec::new(&hdr[..h]), IoVec::new(&payload)];
                                let n =
                                    b.copy_from_iter(&mut slot[..len], &mut Source::iovec(&segs));
                                assert_eq!(n, len);
                            } else {
                                let (a, rest) = slot[..len].split_at_mut(h);
                                b.copy(a, &hdr[..h]);
                                b.copy(rest, &payload);
                            }
                        }
                    })
                    .unwrap();
                }
                for (i, slot) in ring.chunks_exact(SLOT).enumerate() {
                    let what = format!("{e} header {h} gather {gather} frame {i}");
                    assert_eq!(&slot[..h], &hdr[..h], "{what}: header");
                    assert_eq!(&slot[h..len], &payload[..], "{what}: payload");
                    assert!(all_bytes(&slot[len..], CANARY), "{what}: past the frame");
                }
            }
        }
    }
}
