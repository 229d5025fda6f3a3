//! Pages, compound lookups and the frag builder, against a naive one-lookup-per-page model.

use cachecopy::page::{
    page_size, AlignedBlocks, BasePages, Compound, CompoundLookup, Frag, FragBuilder, FragStats,
    Frags, LookupError, Page, PageLink, PageTable, MAX_SKB_FRAGS,
};
#[macro_use]
mod common;
#[path = "model/frags.rs"]
mod model;
use common::{all_bytes, periodic};
use quickcheck::{Arbitrary, Gen};
use quickcheck_macros::quickcheck;

const MIB2: usize = 2 << 20;

/// What a build produced: frags, reference batches, bytes, and the stats.
#[derive(Debug, PartialEq)]
struct Out {
    frags: Vec<Frag>,
    batches: Vec<(Page, usize)>,
    result: Result<usize, cachecopy::page::FragError>,
}

fn build<L: CompoundLookup, const N: usize>(
    lookup: L,
    cache: bool,
    ranges: &[(usize, usize)],
) -> (Out, FragStats) {
    let mut b = FragBuilder::new(lookup).cache_heads(cache);
    let mut frags = Frags::<N>::new();
    let mut batches = Vec::new();
    let result = b.build_ranges(ranges.iter().copied(), &mut frags, |h, n| {
        batches.push((h, n))
    });
    let out = Out {
        frags: frags.to_vec(),
        batches,
        result,
    };
    (out, b.stats())
}

/// The model (`tests/model/frags.rs`, shared with the fuzz target): one lookup per base page.
fn naive<L: CompoundLookup>(lookup: &L, max: usize, ranges: &[(usize, usize)]) -> (Out, usize) {
    let (frags, batches, result, lookups) = model::naive(lookup, max, ranges);
    (
        Out {
            frags,
            batches,
            result,
        },
        lookups,
    )
}

#[test]
fn two_huge_pages_two_lookups() {
    // The seed's case: a 180 KiB skb straddling two 2 MiB pages.
    let start = 7 * MIB2 - (60 << 10);
    let (out, stats) = build::<_, MAX_SKB_FRAGS>(
        AlignedBlocks::of_size(MIB2).unwrap(),
        true,
        &[(start, 180 << 10)],
    );
    assert_eq!(stats.lookups, 2);
    assert_eq!(out.result, Ok(180 << 10));
    let h0 = Page::containing(6 * MIB2);
    let h1 = Page::containing(7 * MIB2);
    assert_eq!(
        out.frags,
        [
            Frag {
                head: h0,
                offset: MIB2 - (60 << 10),
                len: 60 << 10
            },
            Frag {
                head: h1,
                offset: 0,
                len: 120 << 10
            },
        ]
    );
    let ps = page_size();
    assert_eq!(out.batches, [(h0, (60 << 10) / ps), (h1, (120 << 10) / ps)]);
    assert_eq!(stats.ref_batches, 2);
    assert_eq!(stats.refs, (180 << 10) / ps);

    // The same build without the cache: same frags and batches, a lookup per page.
    let (slow, slow_stats) = build::<_, MAX_SKB_FRAGS>(
        AlignedBlocks::of_size(MIB2).unwrap(),
        false,
        &[(start, 180 << 10)],
    );
    assert_eq!(slow, out);
    assert_eq!(slow_stats.lookups, (180 << 10) / ps);
}

#[test]
fn inside_one_huge_page_one_lookup() {
    let (out, stats) = build::<_, MAX_SKB_FRAGS>(
        AlignedBlocks::of_size(MIB2).unwrap(),
        true,
        &[(MIB2 + 4000, 180 << 10)],
    );
    assert_eq!(
        (stats.lookups, out.frags.len(), stats.ref_batches),
        (1, 1, 1)
    );
}

#[test]
fn base_pages_one_lookup_per_page() {
    let ps = page_size();
    // Ten pages from mid-page: eleven pages touched, each its own head, so eleven frags.
    let (out, stats) = build::<_, MAX_SKB_FRAGS>(BasePages, true, &[(100 * ps + 10, 10 * ps)]);
    assert_eq!(stats.lookups, 11);
    assert_eq!(out.frags.len(), 11);
    assert_eq!(out.batches.len(), 11);
    assert!(out.batches.iter().all(|&(_, n)| n == 1));
    assert_eq!(out.result, Ok(10 * ps));
}

#[test]
fn full_mid_buffer_stops_at_first_unplaced_byte() {
    let ps = page_size();
    let start = 100 * ps + 10;
    let (out, stats) = build::<_, 4>(BasePages, true, &[(start, 2 * ps), (start + 9 * ps, ps)]);
    // Pages 100, 101, 102 from the first range, 109 from the second; its second page does not fit.
    assert_eq!(out.frags.len(), 4);
    assert_eq!(out.result, Ok(2 * ps + (ps - 10)));
    assert_eq!(out.frags[3].addr(), start + 9 * ps);
    // The lookup of the page that did not fit was made, but no reference was taken for it.
    assert_eq!(stats.lookups, 5);
    assert_eq!(stats.refs, 4);
}

#[test]
fn mixed_layout_from_a_page_table() {
    // 3 base pages, an order-9 compound page (aligned at 512), base pages after it.
    let ps = page_size();
    let mut meta = vec![PageLink::Head { order: 0 }; 1100];
    meta[512] = PageLink::Head { order: 9 };
    for (i, m) in meta.iter_mut().enumerate().take(1024).skip(513) {
        *m = PageLink::Tail { head: 512 };
        let _ = i;
    }
    let base = Page::from_addr(1 << 32).unwrap();
    let table = PageTable::new(base, &meta);
    let at = |i: usize| base.addr() + i * ps;
    // Three base pages before, the whole huge page, two base pages after.
    let ranges = [(at(509), 3 * ps), (at(512), 512 * ps), (at(1024), 2 * ps)];
    let (out, stats) = build::<_, MAX_SKB_FRAGS>(table, true, &ranges);
    assert_eq!(stats.lookups, 3 + 1 + 2);
    assert_eq!(out.frags.len(), 6);
    assert_eq!(out.frags[3].len, 512 * ps);
    assert_eq!(out.batches[3], (Page::containing(at(512)), 512));
    let (model, lookups) = naive(&table, MAX_SKB_FRAGS, &ranges);
    assert_eq!(out, model);
    assert_eq!(lookups, 3 + 512 + 2);
}

#[test]
fn lookup_failure_keeps_what_was_built() {
    let ps = page_size();
    let meta = [PageLink::Head { order: 0 }; 4];
    let base = Page::from_addr(1 << 32).unwrap();
    let (out, _) = build::<_, MAX_SKB_FRAGS>(
        PageTable::new(base, &meta),
        true,
        &[(base.addr() + ps, 4 * ps)],
    );
    let err = out.result.unwrap_err();
    assert_eq!(err.built, 3 * ps);
    assert_eq!(
        err.cause,
        LookupError::OutOfRange {
            addr: base.addr() + 4 * ps
        }
    );
    assert_eq!(out.frags.len(), 3);
    assert_eq!(out.batches.len(), 3);
}

/// A random page table of naturally aligned compound pages, and random byte ranges in it.
#[derive(Clone, Debug)]
struct Layout {
    meta: Vec<PageLink>,
    ranges: Vec<(usize, usize)>,
    max: usize,
}

const BASE: usize = 1 << 36;

impl Arbitrary for Layout {
    fn arbitrary(g: &mut Gen) -> Self {
        let ps = page_size();
        let pages = 1 + usize::arbitrary(g) % 600;
        // The largest naturally aligned order that fits, or a random one up to it.
        let meta = model::compound_table(pages, 9, |fit| {
            let order = u8::arbitrary(g) % (fit + 1);
            if bool::arbitrary(g) {
                order
            } else {
                fit
            }
        });
        let span = pages * ps;
        let mut prev_end = 0;
        let ranges = (0..usize::arbitrary(g) % 8)
            .map(|_| {
                // Sometimes continue the previous range, to exercise coalescing.
                let start = match u8::arbitrary(g) % 3 {
                    0 if prev_end < span => prev_end,
                    _ => usize::arbitrary(g) % span,
                };
                let len = match u8::arbitrary(g) % 4 {
                    0 => 0,
                    1 => usize::arbitrary(g) % 64,
                    _ => usize::arbitrary(g) % (span - start + 1),
                };
                prev_end = start + len;
                (BASE + start, len)
            })
            .collect();
        Layout {
            meta,
            ranges,
            max: 1 + usize::arbitrary(g) % 20,
        }
    }
}

#[test]
fn cached_build_matches_per_page_model() {
    quick!().quickcheck(cached_build_case as fn(Layout) -> bool);
}

fn cached_build_case(l: Layout) -> bool {
    let table = PageTable::new(Page::from_addr(BASE).unwrap(), &l.meta);
    let (model, naive_lookups) = naive(&table, l.max.min(20), &l.ranges);
    macro_rules! check {
        ($($n:literal)*) => {$(
            if l.max == $n {
                let (out, stats) = build::<_, $n>(&table, true, &l.ranges);
                let (slow, slow_stats) = build::<_, $n>(&table, false, &l.ranges);
                return out == model
                    && slow == model
                    && slow_stats.lookups == naive_lookups
                    && stats.lookups <= naive_lookups
                    && stats.ref_batches == model.batches.len()
                    && stats.refs == model.batches.iter().map(|b| b.1).sum::<usize>();
            }
        )*};
    }
    check!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20);
    unreachable!()
}

#[quickcheck]
fn aligned_blocks_lookup_is_rounding(addr: usize, order: u8) -> bool {
    let order = order % 12;
    let c: Compound = AlignedBlocks::new(order)
        .compound(Page::containing(addr))
        .unwrap();
    c.contains(addr) && c.head().addr().is_multiple_of(c.len()) && c.order() == order
}

#[cfg(target_os = "linux")]
mod huge {
    use super::*;
    use cachecopy::page::Pagemap;

    /// Returns why real huge pages cannot be tested here, if they cannot.
    fn thp_unavailable() -> Option<String> {
        let enabled = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !enabled.contains("[always]") && !enabled.contains("[madvise]") {
            return Some(format!(
                "transparent huge pages are off ({})",
                enabled.trim()
            ));
        }
        if page_size() != 4096 {
            return Some(format!("page size {} is not 4 KiB", page_size()));
        }
        None
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads the host's /sys and /proc/self/pagemap")]
    fn pagemap_sees_transparent_huge_pages() {
        if let Some(why) = thp_unavailable() {
            eprintln!("SKIPPED pagemap_sees_transparent_huge_pages: {why}");
            return;
        }
        let pm = match Pagemap::open() {
            Ok(pm) => pm,
            Err(e) => {
                eprintln!("SKIPPED pagemap_sees_transparent_huge_pages: {e}");
                return;
            }
        };
        const LEN: usize = 8 << 20;
        // Map 10 MiB and use the 2 MiB-aligned 8 MiB inside.
        // SAFETY: a fresh private anonymous mapping; unmapped at the end.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                LEN + MIB2,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let start = (map as usize + MIB2 - 1) & !(MIB2 - 1);
        // SAFETY: the range is inside the mapping.
        let r = unsafe { libc::madvise(start as *mut _, LEN, libc::MADV_HUGEPAGE) };
        assert_eq!(r, 0);
        // SAFETY: writes inside the mapping.
        unsafe { std::ptr::write_bytes(start as *mut u8, 1, LEN) };

        let result = (|| -> Result<(), String> {
            let mut heads = Vec::new();
            for p in (start..start + LEN).step_by(page_size()) {
                match pm.compound(Page::containing(p)) {
                    Ok(c) => heads.push(c),
                    Err(LookupError::NoFrameNumbers) => {
                        return Err("SKIPPED: no CAP_SYS_ADMIN, pagemap hides frames".into())
                    }
                    Err(e) => return Err(format!("lookup of {p:#x}: {e}")),
                }
            }
            heads.dedup();
            if heads.iter().any(|c| c.order() != 9) {
                // The kernel could not find 2 MiB of contiguous memory: not our failure.
                return Err(format!("SKIPPED: THP not granted: {heads:x?}"));
            }
            assert_eq!(heads.len(), 4, "{heads:x?}");
            for (i, c) in heads.iter().enumerate() {
                assert_eq!(c.head().addr(), start + i * MIB2);
                assert!(pm.frame(c.head()).unwrap().flags.is_thp());
            }
            // Frags over 8 MiB less 100 bytes each end: 4 frags ending at huge-page boundaries,
            // 4 lookups.
            let mut b = FragBuilder::new(&pm);
            let mut frags: Frags = Frags::new();
            // SAFETY: inside the mapping, written above, only read while the slice lives.
            let mem = unsafe { std::slice::from_raw_parts((start + 100) as *const u8, LEN - 200) };
            let mut src = cachecopy::iter::Source::ubuf(mem);
            let n = b
                .build(&mut src, usize::MAX, &mut frags, |_, _| {})
                .unwrap();
            assert_eq!(n, LEN - 200);
            assert_eq!(b.stats().lookups, 4);
            assert_eq!(frags.len(), 4);
            for (i, f) in frags.iter().enumerate() {
                assert_eq!(f.head.addr(), start + i * MIB2);
                let end = f.addr() + f.len;
                assert!(end == start + (i + 1) * MIB2 || end == start + LEN - 100);
            }
            Ok(())
        })();
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(map, LEN + MIB2) };
        match result {
            Ok(()) => {}
            Err(why) if why.starts_with("SKIPPED") => {
                eprintln!("{why} (pagemap_sees_transparent_huge_pages)")
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads the host's /sys and /proc/self/pagemap")]
    fn pagemap_base_page_and_absent_page() {
        let Ok(pm) = Pagemap::open() else {
            eprintln!("SKIPPED pagemap_base_page_and_absent_page: /proc/kpageflags unreadable");
            return;
        };
        let mut v = vec![1u8; 3 * page_size()];
        let p = Page::containing(v.as_mut_ptr() as usize + page_size());
        match pm.compound(p) {
            Ok(c) => assert!(c.contains(p.addr())),
            Err(LookupError::NoFrameNumbers) => {
                eprintln!("SKIPPED pagemap_base_page_and_absent_page: no CAP_SYS_ADMIN");
                return;
            }
            Err(e) => panic!("{e}"),
        }
        // A reserved, never touched page has no frame.
        // SAFETY: a fresh anonymous mapping, unmapped below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page_size(),
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let r = pm.compound(Page::containing(map as usize));
        // SAFETY: the mapping above.
        unsafe { libc::munmap(map, page_size()) };
        assert_eq!(r, Err(LookupError::NotPresent { addr: map as usize }));
    }
}

mod cursors {
    use super::*;
    use cachecopy::iter::{copy_from_iter, Dest, IoVec, IoVecMut, Source};
    use cachecopy::page::{copy_page_from_iter, copy_page_to_iter, PageCopyError};
    use cachecopy::Mode;
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    use std::cell::Cell;

    /// `len` zeroed bytes aligned to 2 MiB, freed on drop.
    struct Aligned(*mut u8, Layout);
    impl Aligned {
        fn new(len: usize) -> Aligned {
            let layout = Layout::from_size_align(len, MIB2).unwrap();
            // SAFETY: nonzero size.
            let p = unsafe { alloc_zeroed(layout) };
            assert!(!p.is_null());
            Aligned(p, layout)
        }
        fn bytes(&mut self) -> &mut [u8] {
            // SAFETY: the allocation, zero-initialised.
            unsafe { std::slice::from_raw_parts_mut(self.0, self.1.size()) }
        }
        fn page(&self, i: usize) -> Page {
            Page::from_addr(self.0 as usize + i * page_size()).unwrap()
        }
    }
    impl Drop for Aligned {
        fn drop(&mut self) {
            // SAFETY: allocated with this layout.
            unsafe { dealloc(self.0, self.1) }
        }
    }

    /// Counts the lookups it forwards.
    struct Counting<L>(L, Cell<usize>);
    impl<L: CompoundLookup> CompoundLookup for Counting<L> {
        fn compound(&self, page: Page) -> Result<Compound, LookupError> {
            self.1.set(self.1.get() + 1);
            self.0.compound(page)
        }
    }

    #[test]
    fn build_from_cursor_stops_at_first_unplaced_byte() {
        let ps = page_size();
        let buf = periodic(20 * ps, 251, |i| (i * 7 % 251) as u8);
        let (a, b) = buf.split_at(5 * ps + 123);
        let segs = [IoVec::new(a), IoVec::new(&[]), IoVec::new(b)];
        let mut src = Source::iovec(&segs);
        let mut frags = Frags::<6>::new();
        let mut builder = FragBuilder::new(BasePages);
        let n = builder
            .build(&mut src, usize::MAX, &mut frags, |_, _| {})
            .unwrap();
        assert!(frags.is_full());
        // The frags cover exactly the first `n` bytes, in order.
        let mut at = buf.as_ptr() as usize;
        for f in frags.iter() {
            assert_eq!(f.addr(), at);
            at += f.len;
        }
        assert_eq!(at - buf.as_ptr() as usize, n);
        assert_eq!(src.count(), buf.len() - n);
        let mut next = [0u8; 1];
        assert_eq!(copy_from_iter(&mut next, &mut src, Mode::Temporal), 1);
        assert_eq!(next[0], buf[n]);
    }

    #[test]
    fn build_from_cursor_one_lookup_per_huge_page() {
        let mut mem = Aligned::new(2 * MIB2);
        let base = mem.bytes().as_ptr() as usize;
        let blocks = Counting(AlignedBlocks::of_size(MIB2).unwrap(), Cell::new(0));
        let mut builder = FragBuilder::new(&blocks);
        let bytes = mem.bytes();
        let mut src = Source::ubuf(&bytes[MIB2 - (60 << 10)..MIB2 + (120 << 10)]);
        let mut frags: Frags = Frags::new();
        let n = builder.build(&mut src, 180 << 10, &mut frags, |_, _| {});
        assert_eq!(n, Ok(180 << 10));
        assert_eq!((blocks.1.get(), builder.stats().lookups), (2, 2));
        assert_eq!(frags.len(), 2);
        assert_eq!(frags[1].head.addr(), base + MIB2);
        assert_eq!(src.count(), 0);
    }

    #[test]
    fn copy_page_round_trips_over_a_compound_page() {
        let ps = page_size();
        let mut mem = Aligned::new(2 * MIB2);
        let blocks = Counting(AlignedBlocks::of_size(MIB2).unwrap(), Cell::new(0));
        // Under Miri (which interprets every byte): 40 KiB, still ten base pages.
        let (len, mid) = if cfg!(miri) {
            (40 << 10, 16 << 10)
        } else {
            (300 << 10, 64 << 10)
        };
        let data = periodic(len, 253, |i| (i * 13 % 253) as u8);
        for mode in Mode::ALL {
            mem.bytes().fill(0);
            // 300 KiB from the 3rd page on, offset 100: many base pages, one compound page,
            // gathered from three iovecs.
            let (a, rest) = data.split_at(1500);
            let (b, c) = rest.split_at(mid);
            let segs = [IoVec::new(a), IoVec::new(b), IoVec::new(c)];
            let mut src = Source::iovec(&segs);
            let page = mem.page(3);
            let before = blocks.1.get();
            // SAFETY: inside `mem`, which nothing else touches.
            let n = unsafe { copy_page_from_iter(page, 100, data.len(), &mut src, mode, &blocks) };
            assert_eq!(n, Ok(data.len()), "{mode:?}");
            assert_eq!(blocks.1.get(), before + 1);
            let at = 3 * ps + 100;
            let bytes = mem.bytes();
            assert_eq!(&bytes[at..at + data.len()], &data[..], "{mode:?}");
            assert!(all_bytes(&bytes[..at], 0));
            assert!(all_bytes(&bytes[at + data.len()..], 0));

            // And back out, scattered over two destination segments.
            let (mut x, mut y) = (vec![0u8; 777], vec![0u8; data.len() - 777]);
            let mut dsegs = [IoVecMut::new(&mut x), IoVecMut::new(&mut y)];
            let mut dst = Dest::iovec(&mut dsegs);
            // SAFETY: as above, read only.
            let n = unsafe { copy_page_to_iter(page, 100, data.len(), &mut dst, mode, &blocks) };
            assert_eq!(n, Ok(data.len()));
            assert_eq!((&x[..], &y[..]), data.split_at(777), "{mode:?}");
        }
    }

    #[test]
    fn copy_page_inside_one_page_skips_the_lookup() {
        let mut mem = Aligned::new(MIB2);
        let blocks = Counting(AlignedBlocks::of_size(MIB2).unwrap(), Cell::new(0));
        let mut src = Source::ubuf(b"0123456789");
        let page = mem.page(7);
        // SAFETY: inside `mem`.
        let n = unsafe {
            copy_page_from_iter(
                page,
                page_size() - 10,
                10,
                &mut src,
                Mode::NonTemporal,
                &blocks,
            )
        };
        assert_eq!(n, Ok(10));
        assert_eq!(blocks.1.get(), 0);
        let at = 8 * page_size() - 10;
        assert_eq!(&mem.bytes()[at..at + 10], b"0123456789");
    }

    #[test]
    fn copy_page_refuses_ranges_leaving_the_compound_page() {
        let ps = page_size();
        let mut mem = Aligned::new(2 * MIB2);
        let blocks = AlignedBlocks::of_size(MIB2).unwrap();
        let data = vec![0xa5u8; 3 * ps];
        let last = MIB2 / ps - 1;
        for (page, offset, bytes, lookup) in [
            // One byte past the end of the huge page.
            (last, 1, ps, &blocks as &dyn CompoundLookup),
            (last - 1, ps, ps + 1, &blocks),
            // Base pages: the first page only.
            (5, 1, ps, &BasePages),
            (5, usize::MAX, 2, &BasePages),
        ] {
            let mut src = Source::ubuf(&data);
            // SAFETY: refused before anything is written, so nothing outside `mem` is touched.
            let r = unsafe {
                copy_page_from_iter(
                    mem.page(page),
                    offset,
                    bytes,
                    &mut src,
                    Mode::Temporal,
                    lookup,
                )
            };
            assert!(
                matches!(r, Err(PageCopyError::OutsideCompound { .. })),
                "{page} {offset} {bytes}: {r:?}"
            );
            assert_eq!(src.count(), data.len());
        }
        assert!(all_bytes(mem.bytes(), 0));
        // Exactly to the end is fine.
        let mut src = Source::ubuf(&data);
        // SAFETY: the last 4 KiB of the first huge page, inside `mem`.
        let r = unsafe {
            copy_page_from_iter(
                mem.page(last - 1),
                ps,
                ps,
                &mut src,
                Mode::Temporal,
                &blocks,
            )
        };
        assert_eq!(r, Ok(ps));
    }
}

/// `zero_page_range`: every mode zeroes exactly the range inside a base page and across a
/// compound page, and refuses (writing nothing) a range past the end of either.
#[test]
fn zero_page_range_every_mode() {
    use cachecopy::page::zero_page_range;
    use cachecopy::Mode;
    let ps = page_size();
    let block = 16 * ps;
    let mut mem = vec![0x5au8; 3 * block];
    let start = (mem.as_ptr() as usize).next_multiple_of(block);
    let base_off = start - mem.as_ptr() as usize;
    let blocks = AlignedBlocks::of_size(block).unwrap();
    for mode in Mode::ALL {
        for (page_i, off, len, ok_base, ok_block) in [
            (0, 0, ps, true, true),
            (1, 7, ps - 7, true, true),
            (2, 100, 2000, true, true),
            (0, 10, ps, false, true),                  // crosses a base page
            (3, 33, block - 3 * ps - 33, false, true), // to the end of the block
            (3, 33, block - 3 * ps - 32, false, false), // one byte past it
            (0, usize::MAX, 2, false, false),          // overflows
        ] {
            let page = Page::containing(start + page_i * ps);
            for (lookup, ok) in [
                (&BasePages as &dyn CompoundLookup, ok_base),
                (&blocks as &dyn CompoundLookup, ok_block),
            ] {
                mem.fill(0x5a);
                // SAFETY: every accepted range lies inside the block inside `mem`.
                let r = unsafe { zero_page_range(page, off, len, mode, lookup) };
                assert_eq!(
                    r.is_ok(),
                    ok,
                    "{mode:?} page {page_i} +{off} len {len}: {r:?}"
                );
                let at = base_off + page_i * ps + off.min(block);
                let zeroed = if ok { at..at + len } else { at..at };
                let image_ok = all_bytes(&mem[..zeroed.start], 0x5a)
                    && all_bytes(&mem[zeroed.clone()], 0)
                    && all_bytes(&mem[zeroed.end..], 0x5a);
                if !image_ok {
                    let i = (0..mem.len())
                        .find(|&i| mem[i] != if zeroed.contains(&i) { 0 } else { 0x5a })
                        .unwrap();
                    panic!(
                        "{mode:?} page {page_i} +{off} len {len}: byte {i} is {:#x}",
                        mem[i]
                    );
                }
            }
        }
    }
}
