//! Random page tables of naturally aligned compound pages and random byte ranges: the frag
//! builder with its head cache must give the same frags, reference batches and stopping point as
//! a naive builder looking up every page, with no more lookups (and one per compound page run
//! when the ranges are one contiguous run).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use cachecopy::page::{page_size, CompoundLookup, FragBuilder, Frags, Page, PageLink, PageTable};
use libfuzzer_sys::fuzz_target;

const BASE: usize = 1 << 36;

#[derive(Debug)]
struct Case {
    meta: Vec<PageLink>,
    ranges: Vec<(usize, usize)>,
}

impl<'a> Arbitrary<'a> for Case {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let ps = page_size();
        let pages = u.int_in_range(1..=2048usize)?;
        let meta = compound_table(pages, 10, |fit| u.int_in_range(0..=fit).unwrap_or(0));
        // Ranges may run past the table, to reach the lookup error path.
        let span = (pages + 2) * ps;
        let mut ranges = Vec::new();
        let mut prev = 0;
        for _ in 0..u.int_in_range(0..=12)? {
            let start = if u.arbitrary()? { prev } else { u.int_in_range(0..=span)? };
            let len = u.int_in_range(0..=span - start.min(span))?;
            prev = start + len;
            ranges.push((BASE + start, len));
        }
        Ok(Case { meta, ranges })
    }
}

#[path = "../../tests/model/frags.rs"]
mod model;
use model::{compound_table, naive, Outcome};

fn ours<L: CompoundLookup>(lookup: &L, cache: bool, ranges: &[(usize, usize)]) -> Outcome {
    let mut b = FragBuilder::new(lookup).cache_heads(cache);
    let mut frags: Frags = Frags::new();
    let mut batches = Vec::new();
    let r = b.build_ranges(ranges.iter().copied(), &mut frags, |h, n| batches.push((h, n)));
    let s = b.stats();
    assert_eq!(s.ref_batches, batches.len());
    assert_eq!(s.refs, batches.iter().map(|b| b.1).sum::<usize>());
    (frags.to_vec(), batches, r, s.lookups)
}

fuzz_target!(|case: Case| {
    let table = PageTable::new(Page::from_addr(BASE).unwrap(), &case.meta);
    let model = naive(&table, cachecopy::page::MAX_SKB_FRAGS, &case.ranges);
    let cached = ours(&table, true, &case.ranges);
    let per_page = ours(&table, false, &case.ranges);
    assert_eq!((&cached.0, &cached.1, &cached.2), (&model.0, &model.1, &model.2));
    assert_eq!(per_page, model);
    assert!(cached.3 <= model.3, "{} lookups cached, {} per page", cached.3, model.3);
    // One contiguous range: exactly one lookup per compound page it reaches.
    if let [(addr, len)] = case.ranges[..] {
        if cached.2.is_ok() && len > 0 {
            let heads = (addr..addr + cached.2.unwrap())
                .step_by(page_size())
                .chain(core::iter::once(addr + cached.2.unwrap() - 1))
                .map(|a| table.compound(Page::containing(a)).unwrap().head())
                .collect::<std::collections::BTreeSet<_>>();
            assert!(cached.3 <= heads.len() + 1);
        }
    }
});
