//! The naive frag builder both the frag tests (`tests/pages.rs`) and the frag fuzz target
//! (`fuzz/fuzz_targets/frags.rs`) hold `FragBuilder` against: one compound lookup per base
//! page, written plainly; and the random page tables both build. Included by both with
//! `#[path]`, so the model exists once.

use cachecopy::page::{page_size, CompoundLookup, Frag, FragError, Page, PageLink};

/// What a build produced: frags, reference batches (head, pages), bytes or the error, and the
/// lookups it made.
pub type Outcome = (
    Vec<Frag>,
    Vec<(Page, usize)>,
    Result<usize, FragError>,
    usize,
);

/// The model: one lookup per base page, at most `max` frags.
pub fn naive<L: CompoundLookup>(lookup: &L, max: usize, ranges: &[(usize, usize)]) -> Outcome {
    let ps = page_size();
    let (mut frags, mut batches, mut lookups, mut built) = (Vec::<Frag>::new(), Vec::new(), 0, 0);
    let mut error = None;
    'outer: for &(addr, len) in ranges {
        let mut a = addr;
        while a < addr + len {
            let n = (ps - a % ps).min(addr + len - a);
            lookups += 1;
            let c = match lookup.compound(Page::containing(a)) {
                Ok(c) => c,
                Err(e) => {
                    error = Some(e);
                    break 'outer;
                }
            };
            let off = a - c.head().addr();
            let full = frags.len() == max;
            match frags.last_mut() {
                Some(f) if f.head == c.head() && f.offset + f.len == off => f.len += n,
                _ if full => break 'outer,
                _ => frags.push(Frag {
                    head: c.head(),
                    offset: off,
                    len: n,
                }),
            }
            match batches.last_mut() {
                Some((h, k)) if *h == c.head() => *k += 1,
                _ => batches.push((c.head(), 1)),
            }
            built += n;
            a += n;
        }
    }
    let result = match error {
        None => Ok(built),
        Some(cause) => Err(FragError { built, cause }),
    };
    (frags, batches, result, lookups)
}

/// A page table of `pages` base pages cut into naturally aligned compound pages: at each
/// head, `pick(fit)` chooses the order (at most `fit`, the largest naturally aligned order up
/// to `max_order` that fits).
pub fn compound_table(
    pages: usize,
    max_order: u8,
    mut pick: impl FnMut(u8) -> u8,
) -> Vec<PageLink> {
    let mut meta = Vec::with_capacity(pages);
    while meta.len() < pages {
        let i = meta.len();
        let fit = (0..=max_order)
            .filter(|&o| i % (1 << o) == 0 && i + (1 << o) <= pages)
            .max()
            .unwrap();
        let order = pick(fit).min(fit);
        meta.push(PageLink::Head { order });
        meta.extend((1..1usize << order).map(|_| PageLink::Tail { head: i }));
    }
    meta
}
