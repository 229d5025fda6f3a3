//! Interop: `std::io::{Read, BufRead, Write}` and `bytes::{Buf, BufMut}`. Every copy uses the
//! cursor's default mode ([`Cursor::mode`](super::Cursor::mode)).

#[allow(unused_imports)]
use super::ops::{copy_from_iter, copy_from_iter_full, copy_to_iter, copy_to_iter_full};
#[allow(unused_imports)] // `Cursor` for the `bytes` impls
use super::{Cursor, Dest, Source};
#[allow(unused_imports)]
use crate::policy::CursorDefault;

#[cfg(feature = "std")]
impl std::io::Read for Source<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(copy_from_iter(buf, self, CursorDefault))
    }
}

#[cfg(feature = "std")]
impl std::io::BufRead for Source<'_> {
    /// The rest of the current segment (no copy).
    #[inline]
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let (p, n) = self.current();
        // SAFETY: a piece of a shared source segment, alive for the cursor's lifetime.
        Ok(unsafe { core::slice::from_raw_parts(p, n) })
    }
    #[inline]
    fn consume(&mut self, amt: usize) {
        self.advance(amt.min(self.count()));
    }
}

#[cfg(feature = "std")]
impl std::io::Write for Dest<'_> {
    /// Writes what fits; `Ok(0)` once the cursor is full (so `write_all` reports `WriteZero`).
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(copy_to_iter(buf, self, CursorDefault))
    }
    #[inline]
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "bytes")]
impl bytes::Buf for Source<'_> {
    #[inline]
    fn remaining(&self) -> usize {
        self.count()
    }
    #[inline]
    fn chunk(&self) -> &[u8] {
        let (p, n) = Cursor { ..*self }.current();
        // SAFETY: a piece of a shared source segment, alive for the cursor's lifetime.
        unsafe { core::slice::from_raw_parts(p, n) }
    }
    #[inline]
    #[track_caller]
    fn advance(&mut self, cnt: usize) {
        Cursor::advance(self, cnt)
    }
    #[inline]
    #[track_caller]
    fn copy_to_slice(&mut self, dst: &mut [u8]) {
        if let Err(e) = copy_from_iter_full(dst, self, CursorDefault) {
            panic!("cachecopy::iter: Buf::copy_to_slice: {e}");
        }
    }
}

// SAFETY: `chunk_mut` hands out an exclusive piece of a destination segment (or the discard
// scratch) that stays valid until the next `&mut self` call; `advance_mut` moves the cursor by
// at most `remaining_mut`, checked.
#[cfg(feature = "bytes")]
unsafe impl bytes::BufMut for Dest<'_> {
    #[inline]
    fn remaining_mut(&self) -> usize {
        self.count()
    }
    #[inline]
    #[track_caller]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        self.advance(cnt)
    }
    #[inline]
    fn chunk_mut(&mut self) -> &mut bytes::buf::UninitSlice {
        let (p, n) = self.current();
        // SAFETY: `p..p + n` is exclusively ours for the `&mut self` borrow.
        unsafe { bytes::buf::UninitSlice::from_raw_parts_mut(p, n) }
    }
    #[inline]
    #[track_caller]
    fn put_slice(&mut self, src: &[u8]) {
        if let Err(e) = copy_to_iter_full(src, self, CursorDefault) {
            panic!("cachecopy::iter: BufMut::put_slice: {e}");
        }
    }
}
