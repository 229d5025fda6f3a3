//! Frags over 64 MiB of 2 MiB compound pages: the head cached (one lookup per compound page)
//! versus one lookup per 4 KiB page (Linux before "net-zerocopy: Reduce compound page head
//! access"), with an allocator page table whose descriptors are one cache line each, like
//! `struct page`, so a lookup per page touches a line per page.
//!
//! `cargo bench --bench pages -- --warm-up-time 0.5 --measurement-time 2`
//!
//! Besides criterion's times, each group prints the ratio it exists for, from medians of
//! interleaved runs (per-page ÷ cached, page-by-page ÷ one run).

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::Source;
use cachecopy::page::{
    copy_page_from_iter, page_size, AlignedBlocks, CompoundLookup, FragBuilder, Frags, Page,
    PageLink, PageMeta, PageTable, MAX_SKB_FRAGS,
};
use cachecopy::Mode;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const TOTAL: usize = 64 << 20;
const HUGE: usize = 2 << 20;
/// The seed's largest skb.
const SKB: usize = 180 << 10;

/// One cache line per page, like Linux's 64-byte `struct page`.
#[repr(C, align(64))]
struct Desc {
    link: PageLink,
    _rest: [u8; 40],
}

impl PageMeta for Desc {
    #[inline]
    fn link(&self) -> PageLink {
        self.link
    }
}

fn table() -> (Page, Vec<Desc>) {
    let pages = TOTAL / page_size();
    let per = HUGE / page_size();
    let order = per.trailing_zeros() as u8;
    let meta = (0..pages)
        .map(|i| Desc {
            link: if i % per == 0 {
                PageLink::Head { order }
            } else {
                PageLink::Tail { head: i - i % per }
            },
            _rest: [0; 40],
        })
        .collect();
    // Only addresses: the frag builder never touches the memory itself.
    (Page::from_addr(1 << 40).unwrap(), meta)
}

/// The whole 64 MiB in one build (room for the 32 frags): lookups, bytes.
fn whole<L: CompoundLookup>(table: L, cache: bool) -> (usize, usize) {
    let mut b = FragBuilder::new(table).cache_heads(cache);
    let mut frags = Frags::<32>::new();
    let mut refs = 0;
    let n = b
        .build_ranges([(1usize << 40, TOTAL)], &mut frags, |_, n| refs += n)
        .unwrap();
    black_box((&frags, refs));
    (b.stats().lookups, n)
}

/// The 64 MiB as 180 KiB socket buffers of at most 17 frags.
fn skbs<L: CompoundLookup>(table: L, cache: bool) -> (usize, usize) {
    let mut b = FragBuilder::new(table).cache_heads(cache);
    let mut frags = Frags::<MAX_SKB_FRAGS>::new();
    let (mut at, mut refs) = (0, 0);
    while at < TOTAL {
        frags.clear();
        at += b
            .build_ranges(
                [((1usize << 40) + at, SKB.min(TOTAL - at))],
                &mut frags,
                |_, n| refs += n,
            )
            .unwrap();
        black_box(&frags);
    }
    black_box(refs);
    (b.stats().lookups, at)
}

/// Medians of `rounds` interleaved timings of each of `fs`, in seconds.
fn interleaved_n(rounds: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut t = vec![Vec::new(); fs.len()];
    for _ in 0..rounds {
        for (f, t) in fs.iter_mut().zip(&mut t) {
            let start = Instant::now();
            f();
            t.push(start.elapsed().as_secs_f64());
        }
    }
    t.into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect()
}

/// Medians of `rounds` interleaved timings of `a` and `b`, in seconds.
fn interleaved(rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let m = interleaved_n(rounds, &mut [&mut a, &mut b]);
    (m[0], m[1])
}

fn frags(c: &mut Criterion) {
    let (base, meta) = table();
    let table = PageTable::new(base, &meta);
    let mut g = c.benchmark_group("frags_64MiB_2MiB_pages");
    g.throughput(Throughput::Bytes(TOTAL as u64));
    g.bench_function("whole/cached", |b| b.iter(|| whole(&table, true)));
    g.bench_function("whole/per_page", |b| b.iter(|| whole(&table, false)));
    g.bench_function("skb180k/cached", |b| b.iter(|| skbs(&table, true)));
    g.bench_function("skb180k/per_page", |b| b.iter(|| skbs(&table, false)));
    g.finish();

    // The same builds with an arithmetic lookup (`AlignedBlocks`: no metadata read) split the
    // per-page cost into walking page by page and touching a descriptor line per page.
    let blocks = AlignedBlocks::of_size(HUGE).unwrap();
    let pages = TOTAL / page_size();
    macro_rules! report {
        ($name:expr, $f:ident) => {{
            let (cached_lookups, _) = $f(&table, true);
            let (per_page_lookups, _) = $f(&table, false);
            let m = interleaved_n(
                31,
                &mut [
                    &mut || {
                        black_box($f(&table, true));
                    },
                    &mut || {
                        black_box($f(&table, false));
                    },
                    &mut || {
                        black_box($f(blocks, false));
                    },
                ],
            );
            println!(
                "pages: frags, {}: {:.1} pages per lookup cached ({cached_lookups} lookups) vs \
                 {:.1} per page ({per_page_lookups}); cached {:.1} us, per-page {:.1} us \
                 (per-page without metadata {:.1} us): per-page / cached = {:.2}x",
                $name,
                pages as f64 / cached_lookups as f64,
                pages as f64 / per_page_lookups as f64,
                m[0] * 1e6,
                m[1] * 1e6,
                m[2] * 1e6,
                m[1] / m[0]
            );
        }};
    }
    report!("whole 64 MiB, 32 frags", whole);
    report!("180 KiB skbs, <=17 frags", skbs);
}

/// 2 MiB, aligned to 2 MiB, freed on drop.
struct Huge(*mut u8);
const LAYOUT: std::alloc::Layout = match std::alloc::Layout::from_size_align(HUGE, HUGE) {
    Ok(l) => l,
    Err(_) => panic!(),
};
impl Huge {
    fn new() -> Huge {
        // SAFETY: nonzero size.
        let p = unsafe { std::alloc::alloc_zeroed(LAYOUT) };
        assert!(!p.is_null());
        Huge(p)
    }
}
impl Drop for Huge {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { std::alloc::dealloc(self.0, LAYOUT) }
    }
}

/// `len` bytes from `src` into the compound page at `dst`: one call (one run, one fence), or
/// one call per 4 KiB page (Linux's per-page `kmap` loop: a fence and a stream start per page).
fn into_compound(dst: &Huge, src: &[u8], mode: Mode, per_page: bool) {
    let blocks = AlignedBlocks::of_size(HUGE).unwrap();
    let head = Page::from_addr(dst.0 as usize).unwrap();
    let mut cur = Source::ubuf(src);
    let ps = page_size();
    // SAFETY: every range lies inside the 2 MiB allocation, used by nothing else.
    unsafe {
        if per_page {
            for i in 0..src.len().div_ceil(ps) {
                let page = head.checked_add(i).unwrap();
                let n = ps.min(src.len() - i * ps);
                copy_page_from_iter(page, 0, n, &mut cur, mode, &blocks).unwrap();
            }
        } else {
            copy_page_from_iter(head, 0, src.len(), &mut cur, mode, &blocks).unwrap();
        }
    }
}

fn copy_into_compound(c: &mut Criterion) {
    let dst = Huge::new();
    let src = vec![0x5au8; HUGE];
    for len in [64 << 10, HUGE] {
        let mut g = c.benchmark_group(format!("copy_page_from_iter_{}KiB", len >> 10));
        g.throughput(Throughput::Bytes(len as u64));
        for mode in [Mode::Temporal, Mode::NonTemporal, Mode::FlushCache] {
            for (name, per_page) in [("one_run", false), ("page_by_page", true)] {
                g.bench_function(format!("{mode:?}/{name}"), |b| {
                    b.iter(|| into_compound(&dst, &src[..len], mode, per_page))
                });
            }
        }
        g.finish();
        for mode in [Mode::Temporal, Mode::NonTemporal, Mode::FlushCache] {
            let (one, each) = interleaved(
                if len == HUGE { 41 } else { 401 },
                || into_compound(&dst, &src[..len], mode, false),
                || into_compound(&dst, &src[..len], mode, true),
            );
            println!(
                "pages: copy_page_from_iter {} KiB into a 2 MiB compound page, {mode:?}: one run \
                 {:.1} us, page by page {:.1} us: page-by-page / one run = {:.2}x",
                len >> 10,
                one * 1e6,
                each * 1e6,
                each / one
            );
        }
    }
}

criterion_group!(benches, frags, copy_into_compound);
criterion_main!(benches);
