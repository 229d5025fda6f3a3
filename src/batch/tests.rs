//! Batches on every backend this CPU runs, against a reference; the fence count of a batch,
//! counted where the fence instruction is issued (`arch::fences`, unit-test builds only).

extern crate std;

use std::vec;
use std::vec::Vec;

use super::batch_on;
use crate::dispatch::table::Kernels;
use crate::iter::{Dest, IoVec, IoVecMut, Source};
use crate::mode::Mode;
use crate::testutil::{all_bytes, pattern};
use crate::{arch, net};

fn backends() -> impl Iterator<Item = &'static Kernels> {
    crate::dispatch::table::variants(&crate::arch::detect().features)
}

/// Lengths around every kernel boundary, the streaming minimum and a frame, several lines.
fn lengths() -> Vec<usize> {
    let mut v = vec![
        0, 1, 7, 31, 33, 64, 100, 255, 257, 1023, 1024, 1025, 1472, 1500, 4097,
    ];
    if !cfg!(miri) {
        v.extend([65_536 + 13, (1 << 20) + 7]);
    }
    v
}

/// Destinations laid out in one arena at odd offsets, each with a canary gap after it.
struct Arena {
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

const GAP: usize = 67;
const CANARY: u8 = 0xC5;

impl Arena {
    fn new(lens: &[usize]) -> Arena {
        let mut spans = Vec::new();
        let mut at = 13;
        for &len in lens {
            spans.push((at, len));
            at += len + GAP;
        }
        Arena {
            buf: vec![CANARY; at + GAP],
            spans,
        }
    }

    /// Every destination, disjoint, in order.
    fn slots(&mut self) -> Vec<&mut [u8]> {
        let mut out = Vec::new();
        let mut rest: &mut [u8] = &mut self.buf;
        let mut consumed = 0;
        for &(at, len) in &self.spans {
            let (_, tail) = rest.split_at_mut(at - consumed);
            let (slot, tail) = tail.split_at_mut(len);
            out.push(slot);
            rest = tail;
            consumed = at + len;
        }
        out
    }

    /// Every byte outside the destinations is still the canary.
    fn canaries_intact(&self) -> bool {
        let mut from = 0;
        for &(at, len) in &self.spans {
            if !all_bytes(&self.buf[from..at], CANARY) {
                return false;
            }
            from = at + len;
        }
        all_bytes(&self.buf[from..], CANARY)
    }
}

#[test]
fn copies_fills_and_checksums_match_the_reference_on_every_backend_and_mode() {
    let lens = lengths();
    for k in backends() {
        for mode in Mode::ALL {
            let srcs: Vec<Vec<u8>> = lens
                .iter()
                .enumerate()
                .map(|(i, &l)| pattern(l, i as u8))
                .collect();
            // Four arenas: plain copies, fills, zeroes, checksum-copies.
            let (mut a, mut f, mut z, mut c) = (
                Arena::new(&lens),
                Arena::new(&lens),
                Arena::new(&lens),
                Arena::new(&lens),
            );
            let sums = batch_on(crate::dispatch::plan::active(), k, mode, |b| {
                for (slot, src) in a.slots().into_iter().zip(&srcs) {
                    b.copy(slot, src);
                }
                for (i, slot) in f.slots().into_iter().enumerate() {
                    b.fill(slot, i as u8 | 0x40);
                }
                for slot in z.slots() {
                    b.zero(slot);
                }
                c.slots()
                    .into_iter()
                    .zip(&srcs)
                    .map(|(slot, src)| b.csum_and_copy(slot, src))
                    .collect::<Vec<u32>>()
            });
            let what =
                |op: &str, i: usize| std::format!("{:?} {mode:?} {op} len {}", k.engine, lens[i]);
            for (i, src) in srcs.iter().enumerate() {
                let (at, len) = a.spans[i];
                assert_eq!(&a.buf[at..at + len], &src[..], "{}", what("copy", i));
                let (at, len) = f.spans[i];
                assert!(
                    all_bytes(&f.buf[at..at + len], i as u8 | 0x40),
                    "{}",
                    what("fill", i)
                );
                let (at, len) = z.spans[i];
                assert!(all_bytes(&z.buf[at..at + len], 0), "{}", what("zero", i));
                let (at, len) = c.spans[i];
                assert_eq!(&c.buf[at..at + len], &src[..], "{}", what("csum copy", i));
                assert_eq!(
                    net::csum_fold(sums[i]),
                    net::csum_fold(net::csum_partial(src, 0)),
                    "{}",
                    what("csum", i)
                );
            }
            for (arena, op) in [(&a, "copy"), (&f, "fill"), (&z, "zero"), (&c, "csum")] {
                assert!(
                    arena.canaries_intact(),
                    "{:?} {mode:?} {op}: byte outside",
                    k.engine
                );
            }
        }
    }
}

#[test]
fn cursor_operations_match_the_reference_on_every_backend_and_mode() {
    // Segments of awkward sizes, so streamed lines straddle segments.
    let seg_lens: &[usize] = if cfg!(miri) {
        &[3, 64, 1, 130, 2, 1100, 33]
    } else {
        &[3, 64, 1, 700, 129, 1500, 2, 4096, 33]
    };
    let total: usize = seg_lens.iter().sum();
    let data = pattern(total, 9);
    for k in backends() {
        for mode in Mode::ALL {
            let mut pieces = Vec::new();
            let mut at = 0;
            for &l in seg_lens {
                pieces.push(&data[at..at + l]);
                at += l;
            }
            let iov: Vec<IoVec<'_>> = pieces.iter().map(|p| IoVec::new(p)).collect();
            let mut gathered = vec![0u8; total];
            let mut summed = vec![0u8; total];
            let mut scattered: Vec<Vec<u8>> = seg_lens.iter().map(|&l| vec![0u8; l]).collect();
            let mut scattered_sum: Vec<Vec<u8>> = seg_lens.iter().map(|&l| vec![0u8; l]).collect();
            let mut zeroed: Vec<Vec<u8>> = seg_lens.iter().map(|&l| vec![0xffu8; l]).collect();
            let mut out: Vec<IoVecMut<'_>> =
                scattered.iter_mut().map(|s| IoVecMut::new(s)).collect();
            let mut out_sum: Vec<IoVecMut<'_>> =
                scattered_sum.iter_mut().map(|s| IoVecMut::new(s)).collect();
            let mut out_zero: Vec<IoVecMut<'_>> =
                zeroed.iter_mut().map(|s| IoVecMut::new(s)).collect();
            let (n1, (n2, s2), n3, (n4, s4), n5) =
                batch_on(crate::dispatch::plan::active(), k, mode, |b| {
                    let n1 = b.copy_from_iter(&mut gathered, &mut Source::iovec(&iov));
                    let r2 = b.csum_and_copy_from_iter(&mut summed, &mut Source::iovec(&iov));
                    let n3 = b.copy_to_iter(&data, &mut Dest::iovec(&mut out));
                    let r4 = b.csum_and_copy_to_iter(&data, &mut Dest::iovec(&mut out_sum));
                    let n5 = b.zero_iter(&mut Dest::iovec(&mut out_zero), total);
                    (n1, r2, n3, r4, n5)
                });
            let tag = std::format!("{:?} {mode:?}", k.engine);
            assert_eq!(
                (n1, n2, n3, n4, n5),
                (total, total, total, total, total),
                "{tag}"
            );
            assert_eq!(gathered, data, "{tag} copy_from_iter");
            assert_eq!(summed, data, "{tag} csum_and_copy_from_iter");
            assert_eq!(scattered.concat(), data, "{tag} copy_to_iter");
            assert_eq!(scattered_sum.concat(), data, "{tag} csum_and_copy_to_iter");
            assert!(zeroed.iter().flatten().all(|&b| b == 0), "{tag} zero_iter");
            let want = net::csum_fold(net::csum_partial(&data, 0));
            assert_eq!(net::csum_fold(s2), want, "{tag} sum from_iter");
            assert_eq!(net::csum_fold(s4), want, "{tag} sum to_iter");
        }
    }
}

/// Fences this thread issued while `f` ran.
fn fences_during(f: impl FnOnce()) -> usize {
    let before = arch::fences();
    f();
    arch::fences() - before
}

#[test]
fn a_batch_fences_exactly_once_whatever_it_stores() {
    let slots = if cfg!(miri) { 4 } else { 64 };
    let src = pattern(4096, 1);
    let mut ring = vec![0u8; slots * 4096];
    for k in backends() {
        // The reference: 64 plain streaming copies fence 64 times.
        let plain = fences_during(|| {
            for slot in ring.chunks_mut(4096) {
                // SAFETY: disjoint live slices of 4096 bytes.
                unsafe { (k.copy_nontemporal)(slot.as_mut_ptr(), src.as_ptr(), 4096, &k.knobs) };
            }
        });
        assert_eq!(plain, slots, "{:?}: the counter counts", k.engine);
        for mode in [Mode::NonTemporal, Mode::FlushCache] {
            let n = fences_during(|| {
                batch_on(crate::dispatch::plan::active(), k, mode, |b| {
                    for slot in ring.chunks_mut(4096) {
                        let (lo, hi) = slot.split_at_mut(2048);
                        b.copy(lo, &src[..2048]);
                        b.csum_and_copy(hi, &src[2048..]);
                    }
                    let iov = [IoVec::new(&src)];
                    b.copy_from_iter(&mut [0u8; 0][..], &mut Source::iovec(&iov));
                });
            });
            assert_eq!(n, 1, "{:?} {mode:?}: one fence per batch", k.engine);
            assert!(ring.chunks(4096).all(|s| s == &src[..]));
        }
        for mode in Mode::ALL {
            assert_eq!(
                fences_during(|| batch_on(crate::dispatch::plan::active(), k, mode, |_| {})),
                0,
                "{:?} {mode:?}: an empty batch costs no fence",
                k.engine
            );
        }
        // Nothing streamed: short copies in any mode but FlushCache, everything in Temporal.
        for mode in [Mode::Temporal, Mode::NonTemporal, Mode::Auto] {
            let n = fences_during(|| {
                batch_on(crate::dispatch::plan::active(), k, mode, |b| {
                    for slot in ring.chunks_mut(4096) {
                        b.copy(&mut slot[..100], &src[..100]);
                    }
                })
            });
            assert_eq!(n, 0, "{:?} {mode:?}: short copies owe no fence", k.engine);
        }
    }
}

#[test]
fn a_panicking_batch_still_fences() {
    let src = pattern(8192, 3);
    for k in backends() {
        let mut dst = vec![0u8; 8192];
        let n = fences_during(|| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                batch_on(crate::dispatch::plan::active(), k, Mode::NonTemporal, |b| {
                    b.copy(&mut dst, &src);
                    panic!("inside the batch");
                })
            }));
            assert!(r.is_err());
        });
        assert_eq!(n, 1, "{:?}: the unwinding batch fenced", k.engine);
        assert_eq!(dst, src);
    }
}

/// The next destination's partial lines are fetched only once the batch's destinations have
/// been evenly spaced twice, with one shape, and never for ordinary stores; a change of
/// spacing or shape stops it until the new one repeats.
#[test]
fn the_next_frame_is_fetched_only_when_the_spacing_repeats() {
    use crate::mode::Store;
    let k = &crate::dispatch::plan::active().kernels;
    let mut ring = vec![0u8; 16 * 1536];
    let base = ring.as_mut_ptr();
    let nt = Store::NonTemporal;
    batch_on(crate::dispatch::plan::active(), k, Mode::NonTemporal, |b| {
        let at = |slot: usize, off: usize| {
            // SAFETY: inside `ring` (16 slots); the pointers are only compared, never written.
            unsafe { base.add(slot * 1536 + off) }
        };
        let calls: Vec<bool> = (0..5).map(|i| b.ahead(at(i, 22), 1514, 42, nt)).collect();
        assert_eq!(calls, [false, false, true, true, true]);
        // Another spacing: not until it repeats.
        assert!(!b.ahead(at(7, 22), 1514, 42, nt));
        assert!(!b.ahead(at(9, 22), 1514, 42, nt));
        assert!(b.ahead(at(11, 22), 1514, 42, nt));
        // Another shape at the same spacing.
        assert!(!b.ahead(at(13, 22), 1472, 0, nt));
        assert!(b.ahead(at(15, 22), 1472, 0, nt));
        // Ordinary stores: nothing is fetched and nothing recorded.
        assert!(!b.ahead(at(15, 0), 1472, 0, Store::Temporal));
    });
}
