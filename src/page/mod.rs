//! Pages and compound pages: the page type, "which compound page is this page part of" lookups,
//! and the zero-copy frag builder that asks that question once per compound page instead of
//! once per 4 KiB page.
//!
//! Linux learned it the hard way (net-zerocopy, "Reduce compound page head access", 2023):
//! `compound_head()` on every page of a pinned buffer touches one cold `struct page` line per
//! 4 KiB, when one lookup per huge page is enough; `tcp_stream -Z` system time fell from 37.7 s
//! to 30.3 s. [`FragBuilder`] keeps the current head and order and looks up again only when a
//! page falls outside `[head, head + 2^order)`.
//!
//! A [`Page`] is a page-aligned virtual address (page size from `sysconf` with `std` on Unix,
//! 4 KiB otherwise); a [`Compound`] is a head page and an order (`2^order` pages). Lookups
//! implement [`CompoundLookup`]:
//! - [`BasePages`]: no compound pages, every page is its own head (order 0);
//! - [`AlignedBlocks`]: naturally aligned blocks of one order (hugetlbfs, an allocator's 2 MiB
//!   arenas): the head is the address rounded down;
//! - [`PageTable`]: an allocator's own per-page metadata, Linux's `struct page` array in small;
//! - `Pagemap` (Linux, `std`): the kernel's answer from `/proc/self/pagemap` and
//!   `/proc/kpageflags`; it needs root or `CAP_SYS_ADMIN`, and says so with an error instead
//!   of guessing when frame numbers are hidden.
//!
//! [`FragBuilder::build`] is `__zerocopy_sg_from_iter`: it turns a source cursor's bytes into at
//! most `N` (default [`MAX_SKB_FRAGS`] = 17) frags of (head, offset, len), grows the previous frag
//! when the next bytes continue it, and takes page references in one callback per run of pages
//! sharing a head.
//!
//! [`copy_page_from_iter`] and [`copy_page_to_iter`] copy between a cursor and a page whose
//! range may cover its whole compound page (as one run: one non-temporal stream, one fence),
//! refused by [`page_copy_sane`] when it leaves it; a range inside one base page needs no
//! lookup. [`zero_page_range`] (Linux's `folio_zero_range`) zeroes such a range in any mode.
//!
//! ```
//! use cachecopy::iter::Source;
//! use cachecopy::page::{AlignedBlocks, FragBuilder, Frags};
//!
//! let arena = vec![0u8; 4 << 20]; // pretend it is made of 2 MiB huge pages
//! let mut src = Source::ubuf(&arena[100..(180 << 10) + 100]);
//! let mut builder = FragBuilder::new(AlignedBlocks::of_size(2 << 20).unwrap());
//! let mut frags: Frags = Frags::new();
//! let n = builder
//!     .build(&mut src, usize::MAX, &mut frags, |head, pages| {
//!         // take `pages` references on `head` at once
//!         let _ = (head, pages);
//!     })
//!     .unwrap();
//! assert_eq!(n, 180 << 10);
//! assert!(builder.stats().lookups <= 2); // not 45
//! ```

use core::fmt;

mod copy;
mod frags;
#[cfg(all(feature = "std", target_os = "linux"))]
mod pagemap;

pub use crate::cpu::page::{page_shift, page_size, DEFAULT_PAGE_SIZE};
pub use copy::{
    copy_page_from_iter, copy_page_to_iter, page_copy_sane, zero_page_range, PageCopyError,
};
pub use frags::{Frag, FragBuilder, FragError, FragStats, Frags, MAX_SKB_FRAGS};
#[cfg(all(feature = "std", target_os = "linux"))]
pub use pagemap::{KPageFlags, Pagemap, PhysFrame};

/// A base page: a virtual address aligned to [`page_size`]. It is only an address: making or
/// comparing pages never touches memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Page(usize);

impl Page {
    /// The page `addr` lies in.
    ///
    /// ```
    /// use cachecopy::page::{page_size, Page};
    /// let p = Page::containing(3 * page_size() + 5);
    /// assert_eq!(p.addr(), 3 * page_size());
    /// ```
    #[inline]
    pub fn containing(addr: usize) -> Page {
        Page(addr & !(page_size() - 1))
    }

    /// The page `ptr` points into.
    #[inline]
    pub fn of_ptr<T>(ptr: *const T) -> Page {
        Page::containing(ptr as usize)
    }

    /// The page starting at `addr`, or `None` when `addr` is not page-aligned.
    #[inline]
    pub fn from_addr(addr: usize) -> Option<Page> {
        (addr & (page_size() - 1) == 0).then_some(Page(addr))
    }

    /// The first byte's address.
    #[inline]
    pub fn addr(self) -> usize {
        self.0
    }

    /// The first byte as a pointer (dereferencing it is the caller's business).
    #[inline]
    pub fn as_ptr(self) -> *mut u8 {
        self.0 as *mut u8
    }

    /// The virtual page number: `addr / page_size`.
    #[inline]
    pub fn number(self) -> usize {
        self.0 >> page_shift()
    }

    /// The page `n` pages further, or `None` past the end of the address space.
    #[inline]
    pub fn checked_add(self, n: usize) -> Option<Page> {
        let bytes = n.checked_mul(page_size())?;
        self.0.checked_add(bytes).map(Page)
    }
}

/// A compound page: `2^order` contiguous base pages starting at the head page, handled as one
/// unit (one reference count, one mapping). Order 0 is a single base page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Compound {
    head: Page,
    order: u8,
}

impl Compound {
    /// The compound page of `2^order` pages at `head`, or `None` when it would run past the end
    /// of the address space.
    ///
    /// ```
    /// use cachecopy::page::{page_size, Compound, Page};
    /// let head = Page::from_addr(1 << 30).unwrap();
    /// let c = Compound::new(head, 9).unwrap();
    /// assert_eq!(c.len(), 512 * page_size());
    /// assert!(c.contains((1 << 30) + c.len() - 1) && !c.contains((1 << 30) + c.len()));
    /// ```
    pub fn new(head: Page, order: u8) -> Option<Compound> {
        let pages = 1usize.checked_shl(u32::from(order))?;
        let len = pages.checked_mul(page_size())?;
        head.0.checked_add(len - 1)?;
        Some(Compound { head, order })
    }

    /// A base page on its own (order 0).
    #[inline]
    pub fn single(page: Page) -> Compound {
        Compound {
            head: page,
            order: 0,
        }
    }

    /// The head page.
    #[inline]
    pub fn head(self) -> Page {
        self.head
    }

    /// log2 of the number of base pages.
    #[inline]
    pub fn order(self) -> u8 {
        self.order
    }

    /// Number of base pages: `2^order`.
    #[inline]
    pub fn pages(self) -> usize {
        1 << self.order
    }

    /// Size in bytes.
    #[inline]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(self) -> usize {
        page_size() << self.order
    }

    /// Whether the byte at `addr` is inside. One subtraction and compare, wrapping below the
    /// head, as Linux's `pages[n] - head > (1UL << order) - 1`.
    #[inline]
    pub fn contains(self, addr: usize) -> bool {
        addr.wrapping_sub(self.head.0) < self.len()
    }

    /// Offset of `addr` from the head, when inside.
    #[inline]
    pub fn offset_of(self, addr: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.head.0);
        (off < self.len()).then_some(off)
    }
}

/// Answers "which compound page is this page part of" (Linux's `compound_head()` plus
/// `compound_order()`).
///
/// Implementations must never give a wrong answer: when they cannot tell, they return an error.
pub trait CompoundLookup {
    /// The compound page `page` belongs to.
    ///
    /// # Errors
    /// A [`LookupError`] when the lookup cannot tell (page not described, not present, no
    /// permission, inconsistent metadata).
    fn compound(&self, page: Page) -> Result<Compound, LookupError>;
}

impl<L: CompoundLookup + ?Sized> CompoundLookup for &L {
    #[inline]
    fn compound(&self, page: Page) -> Result<Compound, LookupError> {
        (**self).compound(page)
    }
}

/// No compound pages: every page is its own head, order 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct BasePages;

impl CompoundLookup for BasePages {
    #[inline]
    fn compound(&self, page: Page) -> Result<Compound, LookupError> {
        Ok(Compound::single(page))
    }
}

/// Naturally aligned blocks of one order: the head is the address rounded down to the block
/// size (hugetlbfs mappings, an allocator's 2 MiB arenas).
///
/// ```
/// use cachecopy::page::{AlignedBlocks, CompoundLookup, Page};
/// let blocks = AlignedBlocks::of_size(2 << 20).unwrap();
/// let c = blocks.compound(Page::containing((6 << 20) + 12345)).unwrap();
/// assert_eq!(c.head().addr(), 6 << 20);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AlignedBlocks {
    order: u8,
}

impl AlignedBlocks {
    /// Blocks of `2^order` base pages.
    ///
    /// # Panics
    /// When a block would be larger than half the address space.
    pub fn new(order: u8) -> AlignedBlocks {
        assert!(
            u32::from(order) + page_shift() < usize::BITS,
            "cachecopy::page::AlignedBlocks: order {order} is too large for this address space"
        );
        AlignedBlocks { order }
    }

    /// Blocks of `bytes` bytes, or `None` unless `bytes` is a power of two of at least one page.
    pub fn of_size(bytes: usize) -> Option<AlignedBlocks> {
        (bytes.is_power_of_two() && bytes >= page_size())
            .then(|| AlignedBlocks::new((bytes.trailing_zeros() - page_shift()) as u8))
    }

    /// The blocks' order.
    pub fn order(self) -> u8 {
        self.order
    }
}

impl CompoundLookup for AlignedBlocks {
    #[inline]
    fn compound(&self, page: Page) -> Result<Compound, LookupError> {
        let mask = (page_size() << self.order) - 1;
        Ok(Compound {
            head: Page(page.0 & !mask),
            order: self.order,
        })
    }
}

/// What an allocator's per-page metadata says about its page, in the shape of Linux's
/// `struct page`: a head records the order, a tail records where its head is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PageLink {
    /// The first page of a compound page of `2^order` pages (order 0: a base page on its own).
    Head {
        /// log2 of the compound page's number of base pages.
        order: u8,
    },
    /// A tail page; `head` is the index of its head page in the same table.
    Tail {
        /// Index of the head page in the table.
        head: usize,
    },
}

/// Per-page metadata that can say which compound page its page belongs to. Implement it for
/// your allocator's page descriptor; [`PageLink`] implements it for itself.
pub trait PageMeta {
    /// This page's link.
    fn link(&self) -> PageLink;
}

impl PageMeta for PageLink {
    #[inline]
    fn link(&self) -> PageLink {
        *self
    }
}

/// An allocator's page table: one metadata entry per base page of a contiguous range starting
/// at `base`. A lookup reads the page's own entry and, for a tail, its head's entry (as Linux's
/// `compound_head()` then `compound_order()`): with descriptors of a cache line each, that is
/// the cold line per page that [`FragBuilder`] avoids.
///
/// ```
/// use cachecopy::page::{CompoundLookup, Page, PageLink, PageTable, page_size};
/// let base = Page::from_addr(64 * page_size()).unwrap();
/// // A base page, then an order-1 compound page (head + one tail).
/// let meta = [PageLink::Head { order: 0 }, PageLink::Head { order: 1 }, PageLink::Tail { head: 1 }];
/// let table = PageTable::new(base, &meta);
/// let c = table.compound(base.checked_add(2).unwrap()).unwrap();
/// assert_eq!((c.head(), c.order()), (base.checked_add(1).unwrap(), 1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct PageTable<'a, M> {
    base: Page,
    meta: &'a [M],
}

impl<'a, M: PageMeta> PageTable<'a, M> {
    /// The table describing `meta.len()` pages from `base` on.
    pub fn new(base: Page, meta: &'a [M]) -> PageTable<'a, M> {
        PageTable { base, meta }
    }

    /// The page table's metadata.
    pub fn meta(&self) -> &'a [M] {
        self.meta
    }
}

impl<M: PageMeta> CompoundLookup for PageTable<'_, M> {
    #[inline]
    fn compound(&self, page: Page) -> Result<Compound, LookupError> {
        let addr = page.addr();
        let index = addr.wrapping_sub(self.base.0) >> page_shift();
        let entry = self
            .meta
            .get(index)
            .filter(|_| addr >= self.base.0)
            .ok_or(LookupError::OutOfRange { addr })?;
        let (head, order) = match entry.link() {
            PageLink::Head { order } => (index, order),
            PageLink::Tail { head } => match self.meta.get(head).map(PageMeta::link) {
                Some(PageLink::Head { order })
                    if head < index
                        && u32::from(order) < usize::BITS
                        && index - head < 1 << order =>
                {
                    (head, order)
                }
                _ => return Err(LookupError::Inconsistent { addr }),
            },
        };
        // The whole compound page must be described by the table.
        match 1usize.checked_shl(u32::from(order)).map(|n| head + n) {
            Some(end) if end <= self.meta.len() => {}
            _ => return Err(LookupError::Inconsistent { addr }),
        }
        let head = Page(self.base.0 + (head << page_shift()));
        Compound::new(head, order).ok_or(LookupError::Inconsistent { addr })
    }
}

/// Why a [`CompoundLookup`] could not tell which compound page a page belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LookupError {
    /// The lookup does not describe this page (outside a [`PageTable`]).
    OutOfRange {
        /// The page's address.
        addr: usize,
    },
    /// The metadata contradicts itself (a tail whose head does not cover it, a compound page
    /// running past its table, or kernel flags that changed under a lookup).
    Inconsistent {
        /// The page's address.
        addr: usize,
    },
    /// The page is not in memory (never touched, or swapped out), so it has no frame.
    NotPresent {
        /// The page's address.
        addr: usize,
    },
    /// `/proc/self/pagemap` reports frame number 0: the process lacks `CAP_SYS_ADMIN`, without
    /// which Linux (4.2+) hides frame numbers.
    NoFrameNumbers,
    /// The compound page is not mapped whole and in order around this page (a huge page split
    /// into 4 KiB mappings, or partly unmapped), so no virtual head can stand for it.
    NotContiguous {
        /// The page's address.
        addr: usize,
    },
    /// A system call failed.
    Os {
        /// What was being done.
        op: &'static str,
        /// The `errno` value.
        errno: i32,
    },
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LookupError::OutOfRange { addr } => {
                write!(f, "page {addr:#x} is not described by the page table")
            }
            LookupError::Inconsistent { addr } => {
                write!(f, "inconsistent compound-page metadata for page {addr:#x}")
            }
            LookupError::NotPresent { addr } => write!(f, "page {addr:#x} is not in memory"),
            LookupError::NoFrameNumbers => f.write_str(
                "/proc/self/pagemap hides frame numbers: CAP_SYS_ADMIN is needed to read them",
            ),
            LookupError::NotContiguous { addr } => write!(
                f,
                "the compound page under {addr:#x} is not mapped whole and contiguously"
            ),
            LookupError::Os { op, errno } => write!(f, "{op} failed with errno {errno}"),
        }
    }
}

impl core::error::Error for LookupError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_table_rejects_lies() {
        let ps = page_size();
        let base = Page(1 << 30);
        let at = |i: usize| Page(base.0 + i * ps);
        // Tail pointing forward, tail outside its head's order, head running past the table.
        let meta = [
            PageLink::Tail { head: 1 },
            PageLink::Head { order: 1 },
            PageLink::Tail { head: 1 },
            PageLink::Tail { head: 1 },
            PageLink::Head { order: 2 },
        ];
        let t = PageTable::new(base, &meta);
        assert_eq!(
            t.compound(at(0)),
            Err(LookupError::Inconsistent { addr: at(0).0 })
        );
        assert_eq!(t.compound(at(2)).unwrap(), Compound::new(at(1), 1).unwrap());
        assert!(matches!(
            t.compound(at(3)),
            Err(LookupError::Inconsistent { .. })
        ));
        assert!(matches!(
            t.compound(at(4)),
            Err(LookupError::Inconsistent { .. })
        ));
        assert!(matches!(
            t.compound(at(5)),
            Err(LookupError::OutOfRange { .. })
        ));
        assert!(matches!(
            t.compound(Page(base.0 - ps)),
            Err(LookupError::OutOfRange { .. })
        ));
    }

    #[test]
    fn compound_bounds() {
        let c = Compound::new(Page(1 << 21), 9).unwrap();
        assert!(c.contains(1 << 21) && c.contains((2 << 21) - 1));
        assert!(!c.contains((1 << 21) - 1) && !c.contains(2 << 21));
        assert_eq!(c.offset_of((1 << 21) + 7), Some(7));
        assert!(Compound::new(Page(usize::MAX & !(page_size() - 1)), 1).is_none());
        assert_eq!(AlignedBlocks::of_size(3 << 20).map(|b| b.order()), None);
    }
}
