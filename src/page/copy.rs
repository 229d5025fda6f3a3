//! `copy_page_from_iter` / `copy_page_to_iter`: copies between a cursor and a (compound) page,
//! refused when the range leaves the compound page (Linux's `page_copy_sane`).

use core::fmt;

use super::{page_size, CompoundLookup, LookupError, Page};
use crate::iter::{copy_from_iter, copy_to_iter, Dest, Source};
use crate::policy::Select;

/// Why a page copy was refused. Nothing was copied and the cursor did not move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PageCopyError {
    /// `offset + bytes` runs past the end of the compound page `page` belongs to.
    OutsideCompound {
        /// The page passed.
        page: Page,
        /// The offset passed.
        offset: usize,
        /// The length passed.
        bytes: usize,
        /// Bytes from `page` to the end of its compound page.
        room: usize,
    },
    /// The compound page could not be looked up.
    Lookup(LookupError),
}

impl From<LookupError> for PageCopyError {
    fn from(e: LookupError) -> Self {
        PageCopyError::Lookup(e)
    }
}

impl fmt::Display for PageCopyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PageCopyError::OutsideCompound {
                page,
                offset,
                bytes,
                room,
            } => write!(
                f,
                "{bytes} bytes at offset {offset} from page {:#x} leave its compound page \
                 ({room} bytes from the page to its end)",
                page.addr()
            ),
            PageCopyError::Lookup(e) => write!(f, "compound page lookup failed: {e}"),
        }
    }
}

impl core::error::Error for PageCopyError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PageCopyError::Lookup(e) => Some(e),
            PageCopyError::OutsideCompound { .. } => None,
        }
    }
}

/// Checks that `bytes` bytes at `offset` from `page` stay inside `page`'s compound page
/// (Linux's `page_copy_sane`). A range inside the first base page needs no lookup at all: that
/// is the common case, and it skips the cold head.
///
/// # Errors
/// [`PageCopyError::OutsideCompound`] when the range leaves the compound page (or `offset +
/// bytes` overflows), [`PageCopyError::Lookup`] when the lookup fails.
///
/// ```
/// use cachecopy::page::{page_copy_sane, page_size, AlignedBlocks, BasePages, Page};
/// let page = Page::from_addr(1 << 30).unwrap();
/// assert!(page_copy_sane(page, 100, 200, &BasePages).is_ok());
/// assert!(page_copy_sane(page, 100, page_size(), &BasePages).is_err());
/// // Inside a 2 MiB block, the range may run over many base pages.
/// assert!(page_copy_sane(page, 100, 1 << 20, &AlignedBlocks::of_size(2 << 20).unwrap()).is_ok());
/// ```
#[inline]
pub fn page_copy_sane<L: CompoundLookup + ?Sized>(
    page: Page,
    offset: usize,
    bytes: usize,
    lookup: &L,
) -> Result<(), PageCopyError> {
    let end = offset.checked_add(bytes);
    if matches!(end, Some(end) if end <= page_size()) {
        return Ok(());
    }
    let c = lookup.compound(page)?;
    let room = c
        .offset_of(page.addr())
        .map(|o| c.len() - o)
        .ok_or(LookupError::Inconsistent { addr: page.addr() })?;
    match end {
        Some(end) if end <= room => Ok(()),
        _ => Err(PageCopyError::OutsideCompound {
            page,
            offset,
            bytes,
            room,
        }),
    }
}

/// Copies up to `bytes` bytes from `src` to `offset` bytes past `page`, and advances `src`;
/// returns how many (fewer when `src` runs out). Linux's `copy_page_from_iter`: `offset +
/// bytes` may run past the first base page when the page is part of a compound page, whose
/// range is then copied as one contiguous run (one non-temporal stream, one fence), not page by
/// page.
///
/// `mode` is a [`Mode`](crate::Mode), a [`crate::policy`] marker or
/// [`CursorDefault`](crate::policy::CursorDefault).
///
/// # Errors
/// See [`page_copy_sane`]; nothing is copied then.
///
/// # Safety
/// The `offset + bytes` bytes from `page` on must be valid for writes, must not overlap `src`'s
/// segments and must not be accessed by anything else during the call.
///
/// ```
/// use cachecopy::iter::Source;
/// use cachecopy::page::{copy_page_from_iter, page_size, BasePages, Page};
/// use cachecopy::Mode;
///
/// let mut mem = vec![0u8; 2 * page_size()];
/// let page = Page::containing(mem.as_ptr() as usize + page_size()); // inside `mem`
/// let mut src = Source::ubuf(b"hello");
/// // SAFETY: the page lies inside `mem`, which nothing else uses meanwhile.
/// let n = unsafe { copy_page_from_iter(page, 10, 5, &mut src, Mode::Temporal, &BasePages) };
/// assert_eq!(n, Ok(5));
/// let at = page.addr() - mem.as_ptr() as usize + 10;
/// assert_eq!(&mem[at..at + 5], b"hello");
/// ```
pub unsafe fn copy_page_from_iter<M: Select, L: CompoundLookup + ?Sized>(
    page: Page,
    offset: usize,
    bytes: usize,
    src: &mut Source<'_>,
    mode: M,
    lookup: &L,
) -> Result<usize, PageCopyError> {
    page_copy_sane(page, offset, bytes, lookup)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: the caller guarantees the range is writable and exclusive for the call;
    // `page_copy_sane` checked that `offset + bytes` does not overflow.
    let dst = unsafe { core::slice::from_raw_parts_mut(page.as_ptr().add(offset), bytes) };
    Ok(copy_from_iter(dst, src, mode))
}

/// Zeroes `bytes` bytes from `offset` bytes past `page` with the cache policy `mode`: Linux's
/// `zero_user_segment`/`folio_zero_range`. As in [`copy_page_from_iter`], the range may run past
/// the first base page inside its compound page and is then zeroed as one run, with the fill
/// kernels (`rep stosb` or `dc zva` for large `Temporal` ranges, streaming for `NonTemporal`).
///
/// # Errors
/// See [`page_copy_sane`]; nothing is written then.
///
/// # Safety
/// The `offset + bytes` bytes from `page` on must be valid for writes and must not be accessed
/// by anything else during the call.
///
/// ```
/// use cachecopy::page::{page_size, zero_page_range, AlignedBlocks, Page};
/// use cachecopy::Mode;
///
/// // A 64 KiB "compound page" inside a buffer, as an allocator with 64 KiB blocks sees it.
/// let block = 64 << 10;
/// let mut mem = vec![7u8; 2 * block];
/// let start = (mem.as_ptr() as usize).next_multiple_of(block);
/// let lookup = AlignedBlocks::of_size(block).unwrap();
/// let page = Page::containing(start);
/// // SAFETY: the block lies inside `mem`, which nothing else uses meanwhile.
/// unsafe { zero_page_range(page, 100, block - 100, Mode::NonTemporal, &lookup) }.unwrap();
/// let at = start - mem.as_ptr() as usize;
/// assert!(mem[at + 100..at + block].iter().all(|&b| b == 0));
/// assert_eq!(mem[at + 99], 7);
/// // Past the end of the block: refused, nothing written.
/// let r = unsafe { zero_page_range(page, 100, block, Mode::Temporal, &lookup) };
/// assert!(r.is_err());
/// ```
pub unsafe fn zero_page_range<L: CompoundLookup + ?Sized>(
    page: Page,
    offset: usize,
    bytes: usize,
    mode: crate::mode::Mode,
    lookup: &L,
) -> Result<(), PageCopyError> {
    page_copy_sane(page, offset, bytes, lookup)?;
    // SAFETY: `page_copy_sane` checked that `offset + bytes` does not overflow and stays in the
    // (compound) page; the caller guarantees it is writable and exclusive for the call.
    unsafe { crate::copy::fill_raw(page.as_ptr().add(offset), 0, bytes, mode) };
    Ok(())
}

/// Copies up to `bytes` bytes from `offset` bytes past `page` into `dst`, and advances `dst`;
/// returns how many (fewer when `dst` runs out). Linux's `copy_page_to_iter`, with the compound
/// range copied as one run as in [`copy_page_from_iter`].
///
/// # Errors
/// See [`page_copy_sane`]; nothing is copied then.
///
/// # Safety
/// The `offset + bytes` bytes from `page` on must be valid for reads, must not overlap `dst`'s
/// segments and must not be written by anything else during the call.
pub unsafe fn copy_page_to_iter<M: Select, L: CompoundLookup + ?Sized>(
    page: Page,
    offset: usize,
    bytes: usize,
    dst: &mut Dest<'_>,
    mode: M,
    lookup: &L,
) -> Result<usize, PageCopyError> {
    page_copy_sane(page, offset, bytes, lookup)?;
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: the caller guarantees the range is readable and not written meanwhile;
    // `page_copy_sane` checked that `offset + bytes` does not overflow.
    let src = unsafe { core::slice::from_raw_parts(page.as_ptr().add(offset), bytes) };
    Ok(copy_to_iter(src, dst, mode))
}
