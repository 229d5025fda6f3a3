//! The OS's base page size, asked once: a fact of the machine beside the caches, kept with
//! them so the cursors (`crate::iter`) and the page walks (`crate::page`, which re-exports it)
//! count pages in one unit without either depending on the other.

use core::sync::atomic::{AtomicU8, Ordering};

/// The page size assumed when the OS cannot be asked (no `libc`, or not Unix): 4 KiB.
pub const DEFAULT_PAGE_SIZE: usize = 4096;

/// log2 of the page size, 0 until first asked.
static PAGE_SHIFT: AtomicU8 = AtomicU8::new(0);

/// The base page size: the OS's (`sysconf(_SC_PAGESIZE)`) with `libc` on Unix (16 KiB on Apple
/// silicon, 4/16/64 KiB on aarch64 Linux), [`DEFAULT_PAGE_SIZE`] otherwise.
///
/// ```
/// let ps = cachecopy::page::page_size();
/// assert!(ps.is_power_of_two() && ps >= 4096);
/// ```
#[inline]
pub fn page_size() -> usize {
    1 << page_shift()
}

/// log2 of [`page_size`].
#[inline]
pub fn page_shift() -> u32 {
    match PAGE_SHIFT.load(Ordering::Relaxed) {
        0 => detect_page_shift(),
        s => u32::from(s),
    }
}

#[cold]
fn detect_page_shift() -> u32 {
    #[allow(unused_mut)]
    let mut size = DEFAULT_PAGE_SIZE;
    #[cfg(all(feature = "libc", unix))]
    {
        // SAFETY: sysconf has no preconditions.
        let s = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if s > 0 && (s as usize).is_power_of_two() {
            size = s as usize;
        }
    }
    let shift = size.trailing_zeros();
    // Racing threads store the same value.
    PAGE_SHIFT.store(shift as u8, Ordering::Relaxed);
    shift
}
