//! Frames with headroom and tailroom: headers go in front and padding behind without moving the
//! payload (Linux's `sk_buff` head/data/tail/end, `skb_push`/`skb_put`/`skb_pull`/`skb_trim`).
//!
//! Clones share the buffer (one reference count). A shared buffer is never written: `push`,
//! `put` and `data_mut` on a shared frame, or `push`/`put` with too little room, first move the
//! frame into a new buffer with fresh room, once (Linux's `skb_cow_head`), and count it.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::mode::Mode;

/// Room a reallocation leaves at both ends beyond what the operation needs (at least the room
/// there was), so a frame that moved once does not move again for the next header or padding.
const FRESH_ROOM: usize = 64;

static REALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// How many times any frame in this process moved to a new buffer (shared, or out of room).
/// A driver that reserves enough room and never writes shared frames keeps this at zero.
pub fn frame_reallocations() -> usize {
    REALLOCATIONS.load(Ordering::Relaxed)
}

/// Why a frame operation was refused. The frame is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameError {
    /// `pull`/`trim` of more bytes than the frame holds.
    TooShort {
        /// Bytes asked for.
        requested: usize,
        /// Bytes the frame holds.
        len: usize,
    },
    /// `push`/`put` would need a buffer larger than `isize::MAX` bytes, or one the allocator
    /// refused.
    TooLarge {
        /// Bytes asked for.
        requested: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FrameError::TooShort { requested, len } => write!(
                f,
                "cannot remove {requested} bytes from a frame of {len} bytes"
            ),
            FrameError::TooLarge { requested } => write!(
                f,
                "cannot grow a frame by {requested} bytes: no allocation can hold it"
            ),
        }
    }
}

impl core::error::Error for FrameError {}

/// A packet buffer: `headroom | data | tailroom` in one allocation.
///
/// ```
/// use cachecopy::net::Frame;
/// use cachecopy::Mode;
///
/// // Room for a 4-byte device header in front and 4 bytes of padding behind.
/// let mut f = Frame::copy_from(4, b"payload", 4, Mode::Temporal);
/// f.push(4).unwrap().copy_from_slice(&7u32.to_le_bytes());
/// f.put(4).unwrap().fill(0);
/// assert_eq!(&f[4..11], b"payload");
/// assert_eq!(f.len(), 15);
/// assert_eq!(f.reallocations(), 0); // the payload never moved
///
/// let shared = f.clone(); // cheap: the buffer is shared
/// f.push(2).unwrap();     // copy-on-write, once
/// assert_eq!(f.reallocations(), 1);
/// assert_eq!(shared.len(), 15);
/// ```
#[derive(Clone)]
pub struct Frame {
    buf: Arc<Vec<u8>>,
    head: usize,
    len: usize,
    reallocations: u32,
}

impl Frame {
    /// A frame of `len` zero bytes with `headroom` bytes reserved in front and `tailroom` behind.
    ///
    /// # Panics
    /// When the total exceeds `isize::MAX` bytes (as `Vec`), or the allocation fails.
    pub fn with_room(headroom: usize, len: usize, tailroom: usize) -> Frame {
        let total = checked_total(headroom, len, tailroom);
        Frame {
            buf: Arc::new(alloc::vec![0; total]),
            head: headroom,
            len,
            reallocations: 0,
        }
    }

    /// A frame holding a copy of `data` (stored with the cache policy `mode`), with `headroom`
    /// bytes in front and `tailroom` behind. Only the room is zeroed: the payload is written once.
    ///
    /// # Panics
    /// As [`Frame::with_room`].
    pub fn copy_from(headroom: usize, data: &[u8], tailroom: usize, mode: Mode) -> Frame {
        Frame::fill_from(headroom, data.len(), tailroom, |dst| {
            // SAFETY: `dst` is `data.len()` writable bytes of a fresh allocation.
            unsafe { crate::copy::copy_raw(dst, data.as_ptr(), data.len(), mode) }
        })
        .unwrap_or_else(|e| panic!("cachecopy::net::Frame::copy_from: {e}"))
        .0
    }

    /// [`Frame::copy_from`] that also returns the RFC 1071 partial sum of `data`, summed while
    /// copying (see [`csum_and_copy`](super::csum_and_copy)).
    ///
    /// # Panics
    /// As [`Frame::with_room`].
    pub fn csum_copy_from(
        headroom: usize,
        data: &[u8],
        tailroom: usize,
        mode: Mode,
    ) -> (Frame, u32) {
        Frame::fill_from(headroom, data.len(), tailroom, |dst| {
            // SAFETY: `dst` is `data.len()` writable bytes of a fresh allocation.
            unsafe { super::csum::csum_and_copy_raw(dst, data.as_ptr(), data.len(), mode) }
        })
        .unwrap_or_else(|e| panic!("cachecopy::net::Frame::csum_copy_from: {e}"))
    }

    /// A frame holding everything `src` holds, gathered by the cursor engine with one fused
    /// checksum-and-copy per segment (see
    /// [`csum_and_copy_from_iter`](super::csum_and_copy_from_iter)); returns it with the RFC 1071
    /// partial sum of the data. `src` ends empty.
    ///
    /// # Panics
    /// As [`Frame::with_room`].
    ///
    /// ```
    /// use cachecopy::iter::{IoVec, Source};
    /// use cachecopy::net::{csum_partial, Frame};
    /// use cachecopy::Mode;
    /// let iov = [IoVec::new(b"odd"), IoVec::new(b"-sized parts")];
    /// let (f, sum) = Frame::csum_copy_from_iter(42, &mut Source::iovec(&iov), 0, Mode::NonTemporal);
    /// assert_eq!(&f[..], b"odd-sized parts");
    /// assert_eq!(sum, csum_partial(b"odd-sized parts", 0));
    /// ```
    pub fn csum_copy_from_iter<M: crate::policy::Select>(
        headroom: usize,
        src: &mut crate::iter::Source<'_>,
        tailroom: usize,
        mode: M,
    ) -> (Frame, u32) {
        let len = src.count();
        let mode = mode.select(src.mode());
        Frame::fill_from(headroom, len, tailroom, |dst| {
            // SAFETY: `dst` is `len` writable bytes of a fresh allocation, overlapping nothing;
            // the cursor holds exactly `len` bytes, so all of them are written.
            unsafe { super::iter::csum_and_copy_from_iter_raw(dst, len, src, mode).1 }
        })
        .unwrap_or_else(|e| panic!("cachecopy::net::Frame::csum_copy_from_iter: {e}"))
    }

    /// Allocates `headroom + len + tailroom` bytes, zeroes the room, lets `write` initialize the
    /// `len` data bytes.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] when the size exceeds `isize::MAX` or the allocation fails.
    fn fill_from<R>(
        headroom: usize,
        len: usize,
        tailroom: usize,
        write: impl FnOnce(*mut u8) -> R,
    ) -> Result<(Frame, R), FrameError> {
        let total = headroom
            .checked_add(len)
            .and_then(|x| x.checked_add(tailroom))
            .ok_or(FrameError::TooLarge {
                requested: usize::MAX,
            })?;
        let mut v: Vec<u8> = Vec::new();
        v.try_reserve_exact(total)
            .map_err(|_| FrameError::TooLarge { requested: total })?;
        let p = v.as_mut_ptr();
        // SAFETY: `p..p + total` is the fresh, unaliased allocation; `write` initializes exactly
        // the `len` bytes at `headroom` (its contract), the two `write_bytes` the rest, so all
        // `total` bytes are initialized before `set_len`.
        let r = unsafe {
            p.write_bytes(0, headroom);
            let r = write(p.add(headroom));
            p.add(headroom + len).write_bytes(0, tailroom);
            v.set_len(total);
            r
        };
        let f = Frame {
            buf: Arc::new(v),
            head: headroom,
            len,
            reallocations: 0,
        };
        Ok((f, r))
    }

    /// Bytes of data.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the frame holds no data.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes free in front of the data.
    pub fn headroom(&self) -> usize {
        self.head
    }

    /// Bytes free behind the data.
    pub fn tailroom(&self) -> usize {
        self.buf.len() - self.head - self.len
    }

    /// Whether another frame shares this frame's buffer (so writes will copy it first).
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.buf) > 1
    }

    /// How many times this frame moved to a new buffer (copy-on-write or too little room).
    pub fn reallocations(&self) -> u32 {
        self.reallocations
    }

    /// The data.
    pub fn data(&self) -> &[u8] {
        &self.buf[self.head..self.head + self.len]
    }

    /// The data, writable: copies the frame first if its buffer is shared.
    ///
    /// # Panics
    /// When that copy cannot be allocated.
    pub fn data_mut(&mut self) -> &mut [u8] {
        if let Err(e) = self.unique(0, 0) {
            panic!("cachecopy::net::Frame::data_mut: {e}");
        }
        let (head, len) = (self.head, self.len);
        &mut self.buf_mut()[head..head + len]
    }

    /// Prepends `n` bytes taken from the headroom and returns them for the caller to fill
    /// (their previous contents are unspecified). Moves the frame (once) only when it is shared
    /// or has less than `n` bytes of headroom.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] when the grown frame cannot be allocated (more than `isize::MAX`
    /// bytes, or refused by the allocator); the frame is unchanged.
    pub fn push(&mut self, n: usize) -> Result<&mut [u8], FrameError> {
        self.unique(n, 0)?;
        self.head -= n;
        self.len += n;
        let head = self.head;
        Ok(&mut self.buf_mut()[head..head + n])
    }

    /// Appends `n` bytes taken from the tailroom and returns them for the caller to fill (their
    /// previous contents are unspecified). Moves the frame (once) only when it is shared or has
    /// less than `n` bytes of tailroom.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] when the grown frame cannot be allocated (more than `isize::MAX`
    /// bytes, or refused by the allocator); the frame is unchanged.
    pub fn put(&mut self, n: usize) -> Result<&mut [u8], FrameError> {
        self.unique(0, n)?;
        let end = self.head + self.len;
        self.len += n;
        Ok(&mut self.buf_mut()[end..end + n])
    }

    /// Removes `n` bytes from the front (they become headroom); returns them.
    ///
    /// # Errors
    /// [`FrameError::TooShort`] when the frame holds fewer than `n` bytes; it is unchanged.
    pub fn pull(&mut self, n: usize) -> Result<&[u8], FrameError> {
        if n > self.len {
            return Err(FrameError::TooShort {
                requested: n,
                len: self.len,
            });
        }
        self.head += n;
        self.len -= n;
        Ok(&self.buf[self.head - n..self.head])
    }

    /// Removes `n` bytes from the end (they become tailroom).
    ///
    /// # Errors
    /// [`FrameError::TooShort`] when the frame holds fewer than `n` bytes; it is unchanged.
    pub fn trim(&mut self, n: usize) -> Result<(), FrameError> {
        if n > self.len {
            return Err(FrameError::TooShort {
                requested: n,
                len: self.len,
            });
        }
        self.len -= n;
        Ok(())
    }

    /// The buffer, known unique.
    fn buf_mut(&mut self) -> &mut Vec<u8> {
        Arc::get_mut(&mut self.buf).expect("frame buffer made unique before writing")
    }

    /// Makes the buffer unique with at least `head` bytes of headroom and `tail` of tailroom,
    /// reallocating (once) when it is shared or short.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] when the new buffer would exceed `isize::MAX` bytes or cannot be
    /// allocated; the frame is unchanged.
    fn unique(&mut self, head: usize, tail: usize) -> Result<(), FrameError> {
        let short = self.head < head || self.tailroom() < tail;
        if short || Arc::get_mut(&mut self.buf).is_none() {
            let fresh = |room: usize, need: usize| room.max(need.saturating_add(FRESH_ROOM));
            let (h, t) = (fresh(self.head, head), fresh(self.tailroom(), tail));
            let grown = h.checked_add(self.len).and_then(|x| x.checked_add(t));
            if grown.is_none_or(|g| g > isize::MAX as usize) {
                return Err(FrameError::TooLarge {
                    requested: head.max(tail),
                });
            }
            let data = self.data();
            let (f, ()) = Frame::fill_from(h, data.len(), t, |dst| {
                // SAFETY: `dst` is `data.len()` writable bytes of a fresh allocation.
                unsafe { crate::copy::copy_raw(dst, data.as_ptr(), data.len(), Mode::Temporal) }
            })
            .map_err(|_| FrameError::TooLarge {
                requested: head.max(tail),
            })?;
            self.buf = f.buf;
            self.head = h;
            self.reallocations += 1;
            REALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// `headroom + len + tailroom`, which must fit an allocation.
#[track_caller]
fn checked_total(headroom: usize, len: usize, tailroom: usize) -> usize {
    headroom
        .checked_add(len)
        .and_then(|x| x.checked_add(tailroom))
        .filter(|&t| t <= isize::MAX as usize)
        .unwrap_or_else(|| {
            panic!("cachecopy::net::Frame: {headroom} + {len} + {tailroom} bytes exceed isize::MAX")
        })
}

impl core::ops::Deref for Frame {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.data()
    }
}

impl AsRef<[u8]> for Frame {
    fn as_ref(&self) -> &[u8] {
        self.data()
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("headroom", &self.headroom())
            .field("len", &self.len)
            .field("tailroom", &self.tailroom())
            .field("shared", &self.is_shared())
            .field("reallocations", &self.reallocations)
            .finish()
    }
}
