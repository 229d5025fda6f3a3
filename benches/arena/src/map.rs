//! Anonymous mappings whose page size a measurement chooses: 4 KiB pages, where nearly every
//! cold line also misses the TLB, or transparent huge pages, where the line is cold and its
//! translation is not. [`Buf`](crate::Buf) leaves that choice to the allocator; a probe that
//! compares the two needs a mapping of its own, and the huge-page count the kernel actually gave
//! ([`Mapping::huge_kib`]), since `MADV_HUGEPAGE` is advice.
//!
//! Linux only (`madvise` with `MADV_HUGEPAGE`, `/proc/self/smaps`).

use std::hint::black_box;

use crate::PAGE;

/// Transparent huge pages are 2 MiB on x86_64 and on aarch64 with 4 KiB base pages; a mapping
/// is rounded up to whole ones so that its advice covers every byte.
pub const HUGE: usize = 2 << 20;

/// The pages a [`Mapping`] asks the kernel for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pages {
    /// 4 KiB pages (`MADV_NOHUGEPAGE`).
    Base,
    /// Transparent huge pages (`MADV_HUGEPAGE`): the kernel gives them as it can.
    Huge,
}

impl Pages {
    fn advice(self) -> libc::c_int {
        match self {
            Pages::Base => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        }
    }
}

/// A private anonymous mapping, its length rounded up to [`HUGE`], advised to `pages`, every
/// page written (so no timed run takes a page fault); unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    huge_kib: usize,
}

impl Mapping {
    /// At least `len` bytes on `pages`.
    ///
    /// # Panics
    /// When `len` is 0 or the kernel refuses the mapping.
    pub fn new(len: usize, pages: Pages) -> Mapping {
        const PROT: libc::c_int = libc::PROT_READ | libc::PROT_WRITE;
        const FLAGS: libc::c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        let len = len.next_multiple_of(HUGE);
        // SAFETY: a fresh private anonymous mapping, checked for failure below.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, PROT, FLAGS, -1, 0) };
        assert!(p != libc::MAP_FAILED, "mmap of {len} bytes failed");
        // SAFETY: the mapping just made. Advice only: `huge_kib` says what the kernel gave.
        unsafe { libc::madvise(p, len, pages.advice()) };
        let ptr = p.cast::<u8>();
        for off in (0..len).step_by(PAGE) {
            // SAFETY: inside the mapping; volatile, so the write that faults the page in stays.
            unsafe { ptr.add(off).write_volatile(black_box(1)) };
        }
        Mapping {
            ptr,
            len,
            huge_kib: anon_huge_kib(ptr as usize),
        }
    }

    /// The first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The length in bytes (a multiple of [`HUGE`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping has no bytes: never, as `new` maps at least one byte or panics.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How much of the mapping the kernel gave on huge pages when it was made, in KiB.
    pub fn huge_kib(&self) -> usize {
        self.huge_kib
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, not used after this.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The `AnonHugePages` of the mapping that starts at `start`, in KiB, from /proc/self/smaps (0
/// when it cannot be read or no mapping starts there).
pub fn anon_huge_kib(start: usize) -> usize {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    // A mapping's block: its header line (`start-end perms ...`), then `Key: value` lines.
    let header_start = |line: &str| {
        let range = line.split_whitespace().next()?;
        let (a, b) = range.split_once('-')?;
        usize::from_str_radix(b, 16).ok()?;
        usize::from_str_radix(a, 16).ok()
    };
    smaps
        .lines()
        .skip_while(|l| header_start(l) != Some(start))
        .skip(1)
        .take_while(|l| header_start(l).is_none())
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_is_rounded_written_and_found_in_smaps() {
        for pages in [Pages::Base, Pages::Huge] {
            let m = Mapping::new(1, pages);
            assert_eq!((m.len(), m.is_empty()), (HUGE, false));
            // SAFETY: inside the mapping, every page written by `new`.
            let s = unsafe { std::slice::from_raw_parts(m.as_ptr(), m.len()) };
            assert!(s.chunks(PAGE).all(|p| p[0] == 1));
            assert!(m.huge_kib() <= HUGE >> 10);
            if pages == Pages::Base {
                assert_eq!(m.huge_kib(), 0, "MADV_NOHUGEPAGE gave huge pages");
            }
        }
        // No mapping starts at address 1.
        assert_eq!(anon_huge_kib(1), 0);
    }
}
