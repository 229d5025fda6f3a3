//! Segment types: `struct iovec` and `struct bio_vec` shapes that borrow like slices.

use core::fmt;
use core::marker::PhantomData;

/// One readable segment with the layout of `struct iovec` (`iov_base`, `iov_len`), borrowing
/// like `&'a [u8]`. Like [`std::io::IoSlice`], which converts into it for free.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IoVec<'a> {
    base: *const u8,
    len: usize,
    _life: PhantomData<&'a [u8]>,
}

/// One writable segment with the layout of `struct iovec`, borrowing like `&'a mut [u8]`.
#[repr(C)]
pub struct IoVecMut<'a> {
    base: *mut u8,
    len: usize,
    _life: PhantomData<&'a mut [u8]>,
}

impl<'a> IoVec<'a> {
    /// A segment over `buf`.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Self {
        IoVec {
            base: buf.as_ptr(),
            len: buf.len(),
            _life: PhantomData,
        }
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &'a [u8] {
        // SAFETY: built from a `&'a [u8]` (or promised so by `from_raw_parts`).
        unsafe { core::slice::from_raw_parts(self.base, self.len) }
    }

    /// A segment from a raw `iov_base`/`iov_len` pair.
    ///
    /// # Safety
    /// As [`core::slice::from_raw_parts`]: `base..base + len` readable and not written for
    /// `'a`, `len <= isize::MAX`; `base` may be anything (even null) when `len == 0`.
    #[inline]
    pub const unsafe fn from_raw_parts(base: *const u8, len: usize) -> Self {
        IoVec {
            base,
            len,
            _life: PhantomData,
        }
    }

    /// Views `iovecs` (e.g. a `msghdr`'s `msg_iov`) as segments.
    ///
    /// # Safety
    /// Every element satisfies [`IoVec::from_raw_parts`] for `'a`.
    #[cfg(feature = "libc")]
    #[inline]
    pub unsafe fn from_iovecs(iovecs: &'a [libc::iovec]) -> &'a [IoVec<'a>] {
        // SAFETY: `IoVec` is `repr(C)` with the fields of `struct iovec` in order; the caller
        // vouches for the ranges.
        unsafe { core::slice::from_raw_parts(iovecs.as_ptr().cast(), iovecs.len()) }
    }

    /// Views `std::io::IoSlice`s as segments, without copying (on Unix `IoSlice` is
    /// guaranteed to be ABI-compatible with `struct iovec`).
    #[cfg(all(feature = "std", unix))]
    #[inline]
    pub fn from_io_slices<'b>(slices: &'b [std::io::IoSlice<'a>]) -> &'b [IoVec<'a>] {
        const _: () = assert!(
            core::mem::size_of::<std::io::IoSlice<'_>>() == core::mem::size_of::<IoVec<'_>>()
        );
        // SAFETY: std documents `IoSlice` as ABI-compatible with `iovec` on Unix, and so is
        // `IoVec`; both borrow the bytes for `'a`.
        unsafe { core::slice::from_raw_parts(slices.as_ptr().cast(), slices.len()) }
    }
}

impl<'a> IoVecMut<'a> {
    /// A segment over `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        IoVecMut {
            base: buf.as_mut_ptr(),
            len: buf.len(),
            _life: PhantomData,
        }
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: built from a `&'a mut [u8]`; `&self` forbids writes meanwhile.
        unsafe { core::slice::from_raw_parts(self.base, self.len) }
    }

    /// The bytes, writable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: built from a `&'a mut [u8]`; `&mut self` is exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.base, self.len) }
    }

    /// A segment from a raw `iov_base`/`iov_len` pair.
    ///
    /// # Safety
    /// As [`core::slice::from_raw_parts_mut`]: `base..base + len` writable and accessed only
    /// through this segment for `'a`, `len <= isize::MAX`; anything when `len == 0`.
    #[inline]
    pub unsafe fn from_raw_parts(base: *mut u8, len: usize) -> Self {
        IoVecMut {
            base,
            len,
            _life: PhantomData,
        }
    }

    /// Views `iovecs` (e.g. a `msghdr`'s `msg_iov` for `recvmsg`) as writable segments.
    ///
    /// # Safety
    /// Every element satisfies [`IoVecMut::from_raw_parts`] for `'a`, and no two overlap.
    #[cfg(feature = "libc")]
    #[inline]
    pub unsafe fn from_iovecs_mut(iovecs: &'a mut [libc::iovec]) -> &'a mut [IoVecMut<'a>] {
        // SAFETY: same layout; the caller vouches for the ranges.
        unsafe { core::slice::from_raw_parts_mut(iovecs.as_mut_ptr().cast(), iovecs.len()) }
    }

    /// Views `std::io::IoSliceMut`s as segments, without copying.
    #[cfg(all(feature = "std", unix))]
    #[inline]
    pub fn from_io_slices_mut<'b>(
        slices: &'b mut [std::io::IoSliceMut<'a>],
    ) -> &'b mut [IoVecMut<'a>] {
        const _: () = assert!(
            core::mem::size_of::<std::io::IoSliceMut<'_>>() == core::mem::size_of::<IoVecMut<'_>>()
        );
        // SAFETY: `IoSliceMut` is ABI-compatible with `iovec` on Unix, as is `IoVecMut`; the
        // exclusive borrow moves over.
        unsafe { core::slice::from_raw_parts_mut(slices.as_mut_ptr().cast(), slices.len()) }
    }
}

impl<'a> From<&'a [u8]> for IoVec<'a> {
    #[inline]
    fn from(buf: &'a [u8]) -> Self {
        IoVec::new(buf)
    }
}

impl<'a> From<&'a mut [u8]> for IoVecMut<'a> {
    #[inline]
    fn from(buf: &'a mut [u8]) -> Self {
        IoVecMut::new(buf)
    }
}

#[cfg(feature = "std")]
impl<'a> From<std::io::IoSlice<'a>> for IoVec<'a> {
    #[inline]
    fn from(s: std::io::IoSlice<'a>) -> Self {
        // `IoSlice<'a>` derefs to a slice that lives for `'a`; std has no accessor for that
        // lifetime, so rebuild it from the parts.
        let (base, len) = (s.as_ptr(), s.len());
        // SAFETY: `IoSlice<'a>` borrows `base..base + len` for `'a`.
        unsafe { IoVec::from_raw_parts(base, len) }
    }
}

#[cfg(feature = "std")]
impl<'a> From<std::io::IoSliceMut<'a>> for IoVecMut<'a> {
    #[inline]
    fn from(mut s: std::io::IoSliceMut<'a>) -> Self {
        let (base, len) = (s.as_mut_ptr(), s.len());
        // SAFETY: `IoSliceMut<'a>` borrows `base..base + len` exclusively for `'a`, and is
        // consumed here.
        unsafe { IoVecMut::from_raw_parts(base, len) }
    }
}

#[cfg(feature = "libc")]
impl From<IoVec<'_>> for libc::iovec {
    #[inline]
    fn from(v: IoVec<'_>) -> Self {
        libc::iovec {
            iov_base: v.base.cast_mut().cast(),
            iov_len: v.len,
        }
    }
}

#[cfg(feature = "libc")]
impl From<IoVecMut<'_>> for libc::iovec {
    #[inline]
    fn from(v: IoVecMut<'_>) -> Self {
        libc::iovec {
            iov_base: v.base.cast(),
            iov_len: v.len,
        }
    }
}

/// One readable page segment (`struct bio_vec`): `len` bytes at `offset` into the page (or run
/// of pages) at `page`. `Source::bvec` walks an array of them (Linux `ITER_BVEC`); the page
/// copies of [`crate::page`] take a [`Page`](crate::page::Page) and an offset instead.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BioVec<'a> {
    page: *const u8,
    offset: usize,
    len: usize,
    _life: PhantomData<&'a [u8]>,
}

/// One writable page segment (`struct bio_vec`).
#[repr(C)]
pub struct BioVecMut<'a> {
    page: *mut u8,
    offset: usize,
    len: usize,
    _life: PhantomData<&'a mut [u8]>,
}

/// Panics unless `len` bytes at `offset` lie within `page` bytes of page memory.
#[inline]
#[track_caller]
fn check_bvec(offset: usize, len: usize, page: usize) {
    if offset.checked_add(len).is_none_or(|end| end > page) {
        bad_bvec(offset, len, page);
    }
}

#[cold]
#[track_caller]
fn bad_bvec(offset: usize, len: usize, page: usize) -> ! {
    panic!("cachecopy::iter: bio_vec offset {offset} + len {len} exceeds its page memory ({page} bytes)")
}

impl<'a> BioVec<'a> {
    /// The `len` bytes at `offset` of `page` (one page, or a run of pages as one slice).
    ///
    /// # Panics
    /// When `offset + len > page.len()`.
    #[inline]
    #[track_caller]
    pub fn new(page: &'a [u8], offset: usize, len: usize) -> Self {
        check_bvec(offset, len, page.len());
        BioVec {
            page: page.as_ptr(),
            offset,
            len,
            _life: PhantomData,
        }
    }

    /// A segment from a page address.
    ///
    /// # Safety
    /// `page + offset .. page + offset + len` readable and not written for `'a`, inside one
    /// allocation (`offset + len <= isize::MAX`).
    #[inline]
    pub const unsafe fn from_raw_parts(page: *const u8, offset: usize, len: usize) -> Self {
        BioVec {
            page,
            offset,
            len,
            _life: PhantomData,
        }
    }

    /// The page address.
    #[inline]
    pub const fn page(&self) -> *const u8 {
        self.page
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &'a [u8] {
        // SAFETY: the constructor's contract.
        unsafe { core::slice::from_raw_parts(self.page.wrapping_add(self.offset), self.len) }
    }
}

impl<'a> BioVecMut<'a> {
    /// The `len` bytes at `offset` of `page`.
    ///
    /// # Panics
    /// When `offset + len > page.len()`.
    #[inline]
    #[track_caller]
    pub fn new(page: &'a mut [u8], offset: usize, len: usize) -> Self {
        check_bvec(offset, len, page.len());
        BioVecMut {
            page: page.as_mut_ptr(),
            offset,
            len,
            _life: PhantomData,
        }
    }

    /// A segment from a page address.
    ///
    /// # Safety
    /// `page + offset .. page + offset + len` writable and accessed only through this segment
    /// for `'a`, inside one allocation.
    #[inline]
    pub const unsafe fn from_raw_parts(page: *mut u8, offset: usize, len: usize) -> Self {
        BioVecMut {
            page,
            offset,
            len,
            _life: PhantomData,
        }
    }

    /// The page address.
    #[inline]
    pub const fn page(&self) -> *mut u8 {
        self.page
    }

    /// The bytes, writable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the constructor's contract; `&mut self` is exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.page.wrapping_add(self.offset), self.len) }
    }
}

/// What the segment types share, written once: `Send` and `Sync` (`IoVec` and `BioVec` are a
/// `&[u8]`, `IoVecMut` and `BioVecMut` a `&mut [u8]`, all `Send + Sync`); `Debug`, the name and
/// the address, offset and length fields, never the bytes; and a getter for each field but the
/// address (`len`, and the page segments' `offset`), with `is_empty`.
macro_rules! shared {
    ($($ty:ident: $addr:ident $(, $field:ident)+;)+) => {$(
        // SAFETY: a shared or an exclusive byte borrow (above).
        unsafe impl Send for $ty<'_> {}
        // SAFETY: as above.
        unsafe impl Sync for $ty<'_> {}

        impl fmt::Debug for $ty<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field(stringify!($addr), &self.$addr)
                    $(.field(stringify!($field), &self.$field))+
                    .finish()
            }
        }

        impl $ty<'_> {
            $(shared!(@get $field);)+

            /// Whether the segment is empty.
            #[inline]
            pub const fn is_empty(&self) -> bool {
                self.len == 0
            }
        }
    )+};
    (@get offset) => {
        /// Offset of the bytes in the page.
        #[inline]
        pub const fn offset(&self) -> usize {
            self.offset
        }
    };
    (@get len) => {
        /// Segment length in bytes.
        #[inline]
        pub const fn len(&self) -> usize {
            self.len
        }
    };
}

shared! {
    IoVec: base, len;
    IoVecMut: base, len;
    BioVec: page, offset, len;
    BioVecMut: page, offset, len;
}

/// Where a segment kind's bytes are, for the engine: the `i`-th segment's base and length.
pub(crate) trait Table: Copy {
    /// # Safety
    /// `i` is below the table's segment count.
    unsafe fn seg(self, i: usize) -> (*mut u8, usize);
}

/// An iovec array (either direction: `IoVec` and `IoVecMut` share the layout).
#[derive(Clone, Copy)]
pub(crate) struct Iovecs(pub(crate) *const IoVec<'static>);

/// A bio_vec array (either direction: `BioVec` and `BioVecMut` share the layout).
#[derive(Clone, Copy)]
pub(crate) struct Bvecs(pub(crate) *const BioVec<'static>);

/// One buffer as a one-segment table.
#[derive(Clone, Copy)]
pub(crate) struct Ubuf(pub(crate) *mut u8, pub(crate) usize);

impl Table for Iovecs {
    #[inline(always)]
    unsafe fn seg(self, i: usize) -> (*mut u8, usize) {
        // SAFETY: `i` in bounds (caller); the array outlives the cursor.
        let v = unsafe { &*self.0.add(i) };
        (v.base.cast_mut(), v.len)
    }
}

impl Table for Bvecs {
    #[inline(always)]
    unsafe fn seg(self, i: usize) -> (*mut u8, usize) {
        // SAFETY: as above; `page + offset` is in the page allocation (constructor contract).
        let v = unsafe { &*self.0.add(i) };
        (v.page.cast_mut().wrapping_add(v.offset), v.len)
    }
}

impl Table for Ubuf {
    #[inline(always)]
    unsafe fn seg(self, _i: usize) -> (*mut u8, usize) {
        (self.0, self.1)
    }
}

const _: () = {
    use core::mem::{align_of, size_of};
    assert!(size_of::<IoVec<'_>>() == size_of::<IoVecMut<'_>>());
    assert!(align_of::<IoVec<'_>>() == align_of::<IoVecMut<'_>>());
    assert!(size_of::<BioVec<'_>>() == size_of::<BioVecMut<'_>>());
};
