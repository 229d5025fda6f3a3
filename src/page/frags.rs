//! The zero-copy frag builder: Linux's `__zerocopy_sg_from_iter` with the head cache of
//! "net-zerocopy: Reduce compound page head access".

use core::fmt;
use core::ops::Deref;

use super::{page_shift, Compound, CompoundLookup, LookupError, Page};
use crate::iter::Source;

/// Linux's default `MAX_SKB_FRAGS`: the frags one socket buffer holds.
pub const MAX_SKB_FRAGS: usize = 17;

/// A piece of a compound page handed out without copying: `len` bytes at `offset` from the
/// head page (the offset can exceed one base page), like Linux's `skb_frag_t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Frag {
    /// The head page of the compound page the bytes are in.
    pub head: Page,
    /// Offset of the first byte from the head page.
    pub offset: usize,
    /// Number of bytes.
    pub len: usize,
}

impl Frag {
    /// Address of the first byte.
    #[inline]
    pub fn addr(&self) -> usize {
        self.head.addr() + self.offset
    }
}

/// Up to `N` frags (default [`MAX_SKB_FRAGS`]), filled by [`FragBuilder`]; the frags of one
/// socket buffer. Derefs to the filled part.
#[derive(Clone, Debug)]
pub struct Frags<const N: usize = MAX_SKB_FRAGS> {
    frags: [Frag; N],
    len: usize,
}

impl<const N: usize> Default for Frags<N> {
    fn default() -> Self {
        Frags::new()
    }
}

impl<const N: usize> Frags<N> {
    /// An empty list.
    pub const fn new() -> Self {
        Frags {
            frags: [Frag {
                head: Page(0),
                offset: 0,
                len: 0,
            }; N],
            len: 0,
        }
    }

    /// The most frags this list holds: `N`.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Whether no further frag fits (the last one can still grow).
    pub fn is_full(&self) -> bool {
        self.len == N
    }

    /// Empties the list.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Total bytes in the frags.
    pub fn bytes(&self) -> usize {
        self.iter().map(|f| f.len).sum()
    }

    /// Appends `frag`, or grows the last frag when `frag` continues it in the same compound
    /// page (Linux's `skb_can_coalesce`). Returns `false` when neither is possible (full).
    #[inline]
    pub fn push(&mut self, frag: Frag) -> bool {
        if let Some(last) = self.frags[..self.len].last_mut() {
            if last.head == frag.head && last.offset + last.len == frag.offset {
                last.len += frag.len;
                return true;
            }
        }
        if self.len == N {
            return false;
        }
        self.frags[self.len] = frag;
        self.len += 1;
        true
    }
}

impl<const N: usize> Deref for Frags<N> {
    type Target = [Frag];
    fn deref(&self) -> &[Frag] {
        &self.frags[..self.len]
    }
}

/// What [`FragBuilder`] did, summed over its builds since creation or
/// [`reset_stats`](FragBuilder::reset_stats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FragStats {
    /// Compound lookups made (the cold metadata touched).
    pub lookups: usize,
    /// Page references taken (one per base page a byte range touched, Linux's pins).
    pub refs: usize,
    /// Calls of the reference callback (one per run of pages sharing a head).
    pub ref_batches: usize,
    /// Bytes turned into frags.
    pub bytes: usize,
}

/// A build stopped because a lookup failed; the frags and references up to `built` bytes stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FragError {
    /// Bytes turned into frags before the failure (the source advanced by exactly this much).
    pub built: usize,
    /// Why the lookup failed.
    pub cause: LookupError,
}

impl fmt::Display for FragError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "frag build stopped after {} bytes: {}",
            self.built, self.cause
        )
    }
}

impl core::error::Error for FragError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// Turns page-backed byte ranges into [`Frags`] without copying, looking up each compound page
/// once: it keeps the current head and order and asks its [`CompoundLookup`] again only when a
/// byte falls outside `[head, head + 2^order)`. A 180 KiB buffer inside one 2 MiB huge page is
/// one lookup, one frag and one reference batch, not 45 of each.
///
/// ```
/// use cachecopy::page::{AlignedBlocks, FragBuilder, Frags};
/// // 180 KiB straddling two 2 MiB blocks.
/// let start = (2 << 20) - (90 << 10);
/// let mut builder = FragBuilder::new(AlignedBlocks::of_size(2 << 20).unwrap());
/// let mut frags: Frags = Frags::new();
/// let mut batches = Vec::new();
/// let n = builder
///     .build_ranges([(start, 180 << 10)], &mut frags, |head, refs| batches.push((head.addr(), refs)))
///     .unwrap();
/// assert_eq!(n, 180 << 10);
/// assert_eq!(frags.len(), 2);
/// assert_eq!(builder.stats().lookups, 2);
/// // One reference batch per huge page, for the 23 pages 90 KiB touch on each side.
/// let pages = (90usize << 10).div_ceil(cachecopy::page::page_size());
/// assert_eq!(batches, [(0, pages), (2 << 20, pages)]);
/// ```
#[derive(Clone, Debug)]
pub struct FragBuilder<L> {
    lookup: L,
    cache_heads: bool,
    stats: FragStats,
}

impl<L: CompoundLookup> FragBuilder<L> {
    /// A builder asking `lookup`, with the head cache on.
    pub fn new(lookup: L) -> Self {
        FragBuilder {
            lookup,
            cache_heads: true,
            stats: FragStats::default(),
        }
    }

    /// With `false`, look up every base page again (Linux before the 2023 fix): the same frags
    /// and reference batches, one lookup per page. For comparisons and tests.
    pub fn cache_heads(mut self, on: bool) -> Self {
        self.cache_heads = on;
        self
    }

    /// The lookup.
    pub fn lookup(&self) -> &L {
        &self.lookup
    }

    /// What the builds so far did.
    pub fn stats(&self) -> FragStats {
        self.stats
    }

    /// Zeroes the [`stats`](FragBuilder::stats).
    pub fn reset_stats(&mut self) {
        self.stats = FragStats::default();
    }

    /// Linux's `__zerocopy_sg_from_iter`: appends up to `length` bytes of `src`'s segments to
    /// `frags` until `frags` is full, calling `refs(head, n)` once per run of `n` page references
    /// sharing a head, and advances `src` by exactly the bytes turned into frags, which are
    /// returned. Fewer than `length` (and `src.count()`) means `frags` filled up (Linux's
    /// `-EMSGSIZE`): `src` is then at the first byte not turned into a frag.
    ///
    /// Nothing is read or copied: the frags point into `src`'s memory, which must outlive their
    /// use (the caller's business, as with the references).
    ///
    /// # Errors
    /// [`FragError`] when a lookup fails; frags and references up to `built` bytes stand and
    /// `src` has advanced by `built`.
    ///
    /// ```
    /// use cachecopy::iter::Source;
    /// use cachecopy::page::{BasePages, FragBuilder, Frags};
    ///
    /// let buf = vec![7u8; 64 << 10];
    /// let mut src = Source::ubuf(&buf);
    /// let mut frags = Frags::<4>::new();
    /// let mut builder = FragBuilder::new(BasePages);
    /// let n = builder.build(&mut src, usize::MAX, &mut frags, |_, _| {}).unwrap();
    /// assert!(frags.is_full() && n < buf.len());
    /// assert_eq!(src.count(), buf.len() - n);
    /// ```
    pub fn build<R, const N: usize>(
        &mut self,
        src: &mut Source<'_>,
        length: usize,
        frags: &mut Frags<N>,
        refs: R,
    ) -> Result<usize, FragError>
    where
        R: FnMut(Page, usize),
    {
        let mut walk = self.walk(frags, refs);
        src.iterate(length, |base, n, _| n - walk.step(base as usize, n));
        walk.finish()
    }

    /// Appends the byte ranges `(addr, len)` to `frags` until they end or `frags` is full,
    /// calling `refs(head, n)` once per run of `n` page references sharing a head. Returns the
    /// bytes turned into frags: fewer than the ranges hold when `frags` filled up (Linux's
    /// `-EMSGSIZE`), and the remaining bytes start exactly there.
    ///
    /// The ranges are only addresses: nothing is read. Keeping the memory alive for as long as
    /// the frags are used is the caller's business, as with the references.
    ///
    /// # Errors
    /// [`FragError`] when a lookup fails; frags and references up to `built` bytes stand.
    pub fn build_ranges<I, R, const N: usize>(
        &mut self,
        ranges: I,
        frags: &mut Frags<N>,
        refs: R,
    ) -> Result<usize, FragError>
    where
        I: IntoIterator<Item = (usize, usize)>,
        R: FnMut(Page, usize),
    {
        let mut walk = self.walk(frags, refs);
        for (addr, len) in ranges {
            if walk.step(addr, len) < len {
                break;
            }
        }
        walk.finish()
    }

    /// The one walk, fed a range at a time (by [`build_ranges`](Self::build_ranges) or by a
    /// cursor's segment engine).
    pub(crate) fn walk<'b, R: FnMut(Page, usize), const N: usize>(
        &'b mut self,
        frags: &'b mut Frags<N>,
        refs: R,
    ) -> Walk<'b, L, R, N> {
        Walk {
            lookup: &self.lookup,
            cache_heads: self.cache_heads,
            stats: &mut self.stats,
            frags,
            refs,
            cached: None,
            run: None,
            built: 0,
            error: None,
        }
    }
}

/// One build in progress.
pub(crate) struct Walk<'b, L, R, const N: usize> {
    lookup: &'b L,
    cache_heads: bool,
    stats: &'b mut FragStats,
    frags: &'b mut Frags<N>,
    refs: R,
    /// The compound page of the last byte placed: the seed's `head` and `order`.
    cached: Option<Compound>,
    /// References not yet handed to `refs`: (head, count), the seed's `last_head` and `refs`.
    run: Option<(Page, usize)>,
    built: usize,
    error: Option<LookupError>,
}

impl<L: CompoundLookup, R: FnMut(Page, usize), const N: usize> Walk<'_, L, R, N> {
    /// Turns as much of `addr..addr + len` into frags as fits; returns the bytes placed (fewer
    /// than `len` only when the build must stop).
    #[inline]
    pub(crate) fn step(&mut self, addr: usize, len: usize) -> usize {
        if self.error.is_some() {
            return 0;
        }
        let shift = page_shift();
        let mut done = 0;
        while done < len {
            let a = addr + done;
            let c = match self.cached {
                Some(c) if self.cache_heads && c.contains(a) => c,
                _ => {
                    self.stats.lookups += 1;
                    match self.lookup.compound(Page::containing(a)) {
                        Ok(c) if c.contains(a) => c,
                        Ok(_) => {
                            self.error = Some(LookupError::Inconsistent { addr: a });
                            break;
                        }
                        Err(e) => {
                            self.error = Some(e);
                            break;
                        }
                    }
                }
            };
            self.cached = Some(c);
            let offset = a - c.head().addr();
            // With the cache, a piece runs to the end of the compound page; without it, to the
            // end of the base page (the next one is looked up again).
            let room = if self.cache_heads {
                c.len() - offset
            } else {
                (1 << shift) - (a & ((1 << shift) - 1))
            };
            let n = room.min(len - done);
            if !self.frags.push(Frag {
                head: c.head(),
                offset,
                len: n,
            }) {
                break;
            }
            let pages = ((a + n - 1) >> shift) - (a >> shift) + 1;
            match &mut self.run {
                Some((head, count)) if *head == c.head() => *count += pages,
                run => {
                    if let Some((head, count)) = run.replace((c.head(), pages)) {
                        self.stats.ref_batches += 1;
                        (self.refs)(head, count);
                    }
                }
            }
            self.stats.refs += pages;
            done += n;
        }
        self.built += done;
        self.stats.bytes += done;
        done
    }

    /// Hands out the last reference batch; the bytes built, or the lookup failure.
    pub(crate) fn finish(mut self) -> Result<usize, FragError> {
        if let Some((head, count)) = self.run.take() {
            self.stats.ref_batches += 1;
            (self.refs)(head, count);
        }
        match self.error {
            None => Ok(self.built),
            Some(cause) => Err(FragError {
                built: self.built,
                cause,
            }),
        }
    }
}
