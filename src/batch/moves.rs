//! [`Batch::copy_within`]: moves whose ranges may overlap, unfenced inside a batch
//! (`crate::moves` has the algorithm's face, `kernel::moves` the algorithm).

use core::ops::RangeBounds;

use super::Batch;
use crate::kernel::small;
use crate::mode::Mode;
use crate::moves::{checked_range, move_unfenced_on};

impl<'scope> Batch<'scope, '_> {
    /// Moves `buf[src]` to `buf[dest..]`, the ranges may overlap ([`crate::copy_within`]
    /// without the fence). `buf` stays borrowed until the batch has fenced.
    ///
    /// # Panics
    /// As [`crate::copy_within`] (as [`slice::copy_within`]); nothing is written then.
    ///
    /// ```
    /// use cachecopy::{batch, Mode};
    ///
    /// // Compact two log segments: each slides its live records down by a page.
    /// let (mut a, mut b) = (vec![1u8; 8 << 10], vec![2u8; 8 << 10]);
    /// a[4096..].fill(3);
    /// batch(Mode::NonTemporal, |bt| {
    ///     bt.copy_within(&mut a, 4096.., 0);
    ///     bt.copy_within(&mut b, 4096.., 0);
    /// }); // one fence here
    /// assert_eq!(a, [3u8; 8 << 10]);
    /// assert_eq!(b, [2u8; 8 << 10]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn copy_within(&self, buf: &'scope mut [u8], src: impl RangeBounds<usize>, dest: usize) {
        let (start, count) = checked_range("Batch::copy_within", src, dest, buf.len());
        let p = buf.as_mut_ptr();
        if count <= small::MAX && self.mode != Mode::FlushCache {
            // SAFETY: both ranges inside the live buffer (checked above); ordinary stores owe
            // no fence.
            unsafe { small::move_(p.add(dest), p.add(start), count) };
            return;
        }
        // SAFETY: both ranges inside the live, exclusively borrowed buffer (checked above); the
        // move allows overlap; `self.k` runs here; the batch fences before `buf` is released.
        let owed = unsafe {
            let (d, s) = (p.add(dest), p.add(start));
            {
                let store =
                    self.mode
                        .resolve_move(d, s, count, &self.p.copy_below, self.p.tuning.flush);
                move_unfenced_on(self.k, d, s, count, store)
            }
        };
        if owed {
            self.owed.set(true);
        }
    }
}
