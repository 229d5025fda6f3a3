//! Instruction counts and simulated cache misses (callgrind, `--cache-sim=yes`) of the frag
//! builder with the compound head cached versus one lookup per page: the seed's 180 KiB buffer
//! across two 2 MiB pages, and 64 MiB of 2 MiB pages behind a page table of 64-byte
//! descriptors (the per-page build touches one descriptor line per 4 KiB page).
//!
//! `cargo bench --bench iai_pages` (needs `iai-callgrind-runner` 0.16.1 on PATH).

use std::hint::black_box;

use cachecopy::page::{AlignedBlocks, FragBuilder, Frags, Page, PageLink, PageMeta, PageTable};
use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, LibraryBenchmarkConfig,
};

const HUGE: usize = 2 << 20;
const BASE: usize = 1 << 40;

#[repr(C, align(64))]
struct Desc(PageLink);

impl PageMeta for Desc {
    fn link(&self) -> PageLink {
        self.0
    }
}

fn descs() -> Vec<Desc> {
    let per = HUGE / cachecopy::page::page_size();
    (0..(64 << 20) / cachecopy::page::page_size())
        .map(|i| {
            Desc(if i % per == 0 {
                PageLink::Head {
                    order: per.trailing_zeros() as u8,
                }
            } else {
                PageLink::Tail { head: i - i % per }
            })
        })
        .collect()
}

fn with_descs(cache: bool) -> (bool, Vec<Desc>) {
    (cache, descs())
}

#[library_benchmark]
#[bench::cached(true)]
#[bench::per_page(false)]
fn skb_180k_two_huge_pages(cache: bool) -> usize {
    let mut b = FragBuilder::new(AlignedBlocks::of_size(HUGE).unwrap()).cache_heads(cache);
    let mut frags: Frags = Frags::new();
    let mut refs = 0;
    let ranges = [(BASE + HUGE - (60 << 10), 180 << 10)];
    b.build_ranges(black_box(ranges), &mut frags, |_, n| refs += n)
        .unwrap();
    black_box(&frags);
    refs
}

#[library_benchmark]
#[bench::cached(args = (true), setup = with_descs)]
#[bench::per_page(args = (false), setup = with_descs)]
fn page_table_64m((cache, meta): (bool, Vec<Desc>)) -> usize {
    let table = PageTable::new(Page::from_addr(BASE).unwrap(), &meta);
    let mut b = FragBuilder::new(&table).cache_heads(cache);
    let mut frags = Frags::<32>::new();
    let mut refs = 0;
    b.build_ranges(black_box([(BASE, 64 << 20)]), &mut frags, |_, n| refs += n)
        .unwrap();
    black_box(&frags);
    refs
}

library_benchmark_group!(name = frags; benchmarks = skb_180k_two_huge_pages, page_table_64m);

main!(
    config = LibraryBenchmarkConfig::default().tool(Callgrind::with_args(["--cache-sim=yes"]));
    library_benchmark_groups = frags
);
