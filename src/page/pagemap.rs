//! The kernel's own answer, from `/proc/self/pagemap` (virtual page → frame) and
//! `/proc/kpageflags` (frame → flags). Documented in Linux's
//! `Documentation/admin-guide/mm/pagemap.rst`.

use std::fs::File;
use std::os::unix::fs::FileExt;

use super::{page_shift, Compound, CompoundLookup, LookupError, Page};

/// pagemap: bits 0-54 frame number, 63 present.
const PFN_MASK: u64 = (1 << 55) - 1;
const PRESENT: u64 = 1 << 63;

/// Largest compound order searched for: 1 GiB hugetlb pages are order 18 with 4 KiB pages.
const MAX_ORDER: u32 = 20;

/// Entries read per `pread` when checking a compound page's mapping (one 4 KiB read).
const BATCH: usize = 512;

/// A frame's `/proc/kpageflags` word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KPageFlags(pub u64);

impl KPageFlags {
    /// `KPF_COMPOUND_HEAD`: the first page of a compound page.
    pub const COMPOUND_HEAD: u64 = 1 << 15;
    /// `KPF_COMPOUND_TAIL`: a later page of a compound page.
    pub const COMPOUND_TAIL: u64 = 1 << 16;
    /// `KPF_HUGE`: part of a hugetlbfs page.
    pub const HUGE: u64 = 1 << 17;
    /// `KPF_THP`: part of a transparent huge page.
    pub const THP: u64 = 1 << 22;

    /// Whether `KPF_COMPOUND_HEAD` is set.
    pub fn is_head(self) -> bool {
        self.0 & Self::COMPOUND_HEAD != 0
    }
    /// Whether `KPF_COMPOUND_TAIL` is set.
    pub fn is_tail(self) -> bool {
        self.0 & Self::COMPOUND_TAIL != 0
    }
    /// Whether `KPF_HUGE` is set (hugetlbfs).
    pub fn is_hugetlb(self) -> bool {
        self.0 & Self::HUGE != 0
    }
    /// Whether `KPF_THP` is set (transparent huge page).
    pub fn is_thp(self) -> bool {
        self.0 & Self::THP != 0
    }
}

/// The physical frame behind a virtual page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PhysFrame {
    /// The page frame number.
    pub pfn: u64,
    /// Its `/proc/kpageflags` word.
    pub flags: KPageFlags,
}

/// The real compound-page lookup on Linux: the frame from `/proc/self/pagemap`, the compound
/// head and tail flags from `/proc/kpageflags`.
///
/// Reading frame numbers needs `CAP_SYS_ADMIN` (without it Linux reports frame 0: the lookup
/// then fails with [`LookupError::NoFrameNumbers`], never guesses), and `/proc/kpageflags` is
/// readable by root only. Each answer is a snapshot: the kernel may split or collapse a huge
/// page right after.
///
/// A lookup finds the head frame (compound pages are naturally aligned in frame space: the head
/// is the first of `pfn` rounded down to 2, 4, 8, … that has `KPF_COMPOUND_HEAD`), the order
/// (doubling until the frame after the compound is no tail) and then checks, with one read per
/// 512 pages, that the virtual pages around `page` map the whole compound page in order:
/// otherwise (a huge page mapped in pieces) it returns [`LookupError::NotContiguous`]. That is
/// a few dozen system calls, which is why [`FragBuilder`](super::FragBuilder) asks once per
/// compound page.
#[derive(Debug)]
pub struct Pagemap {
    pagemap: File,
    kpageflags: File,
}

impl Pagemap {
    /// Opens `/proc/self/pagemap` and `/proc/kpageflags`.
    ///
    /// # Errors
    /// [`LookupError::Os`] when either cannot be opened (`/proc/kpageflags` needs root).
    pub fn open() -> Result<Pagemap, LookupError> {
        let open = |path: &'static str| {
            File::open(path).map_err(|e| LookupError::Os {
                op: path,
                errno: e.raw_os_error().unwrap_or(0),
            })
        };
        Ok(Pagemap {
            pagemap: open("/proc/self/pagemap")?,
            kpageflags: open("/proc/kpageflags")?,
        })
    }

    /// The frame behind `page` and its flags.
    ///
    /// # Errors
    /// [`LookupError::NotPresent`] when the page is not in memory,
    /// [`LookupError::NoFrameNumbers`] without `CAP_SYS_ADMIN`, [`LookupError::Os`] when a read
    /// fails.
    pub fn frame(&self, page: Page) -> Result<PhysFrame, LookupError> {
        let pfn = self.pfn(page)?;
        Ok(PhysFrame {
            pfn,
            flags: self.flags(pfn)?,
        })
    }

    fn pfn(&self, page: Page) -> Result<u64, LookupError> {
        let mut e = [0u64; 1];
        self.read(
            &self.pagemap,
            "read /proc/self/pagemap",
            page.number() as u64,
            &mut e,
        )?;
        entry_pfn(e[0], page.addr())
    }

    fn flags(&self, pfn: u64) -> Result<KPageFlags, LookupError> {
        let mut e = [0u64; 1];
        // Past the last frame the file ends: no flags.
        self.read(&self.kpageflags, "read /proc/kpageflags", pfn, &mut e)?;
        Ok(KPageFlags(e[0]))
    }

    /// Reads `out.len()` 64-bit entries from entry `index` on; entries past the end read as 0.
    fn read(
        &self,
        file: &File,
        op: &'static str,
        index: u64,
        out: &mut [u64],
    ) -> Result<(), LookupError> {
        out.fill(0);
        let mut bytes = [0u8; BATCH * 8];
        let bytes = &mut bytes[..out.len() * 8];
        let mut got = 0;
        while got < bytes.len() {
            match file.read_at(&mut bytes[got..], index * 8 + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(LookupError::Os {
                        op,
                        errno: e.raw_os_error().unwrap_or(0),
                    })
                }
            }
        }
        for (o, b) in out.iter_mut().zip(bytes[..got].chunks_exact(8)) {
            *o = u64::from_ne_bytes(b.try_into().unwrap());
        }
        Ok(())
    }
}

fn entry_pfn(entry: u64, addr: usize) -> Result<u64, LookupError> {
    if entry & PRESENT == 0 {
        return Err(LookupError::NotPresent { addr });
    }
    match entry & PFN_MASK {
        0 => Err(LookupError::NoFrameNumbers),
        pfn => Ok(pfn),
    }
}

impl CompoundLookup for Pagemap {
    fn compound(&self, page: Page) -> Result<Compound, LookupError> {
        let addr = page.addr();
        let inconsistent = LookupError::Inconsistent { addr };
        let PhysFrame { pfn, flags } = self.frame(page)?;
        if !flags.is_head() && !flags.is_tail() {
            return Ok(Compound::single(page));
        }
        // The head: the first aligned candidate at or below `pfn` flagged as head. Every
        // candidate before it lies between the head and `pfn`, so must be a tail.
        let (mut k, mut f) = (0u32, flags);
        let head = loop {
            let cand = pfn & !((1u64 << k) - 1);
            if cand != pfn & !((1u64 << k.saturating_sub(1)) - 1) {
                f = self.flags(cand)?;
            }
            if f.is_head() {
                break cand;
            }
            if !f.is_tail() || k == MAX_ORDER {
                return Err(inconsistent);
            }
            k += 1;
        };
        // The order: the compound page holds at least 2^k frames (the candidate at k - 1 was a
        // tail) and is aligned to its size, so the frame 2^n after the head is a tail exactly
        // when the order exceeds n.
        let mut order = k.max(1);
        while self.flags(head + (1 << order))?.is_tail() {
            order += 1;
            if order > MAX_ORDER {
                return Err(inconsistent);
            }
        }
        // The virtual pages standing for the whole compound page must map it in order.
        let shift = page_shift();
        let index = (pfn - head) as usize;
        let vhead = addr
            .checked_sub(index << shift)
            .ok_or(LookupError::NotContiguous { addr })?;
        let c =
            Compound::new(Page(vhead), order as u8).ok_or(LookupError::NotContiguous { addr })?;
        let mut entries = [0u64; BATCH];
        let mut i = 0;
        while i < c.pages() {
            let n = BATCH.min(c.pages() - i);
            let first = (vhead >> shift) + i;
            self.read(
                &self.pagemap,
                "read /proc/self/pagemap",
                first as u64,
                &mut entries[..n],
            )?;
            for (j, &e) in entries[..n].iter().enumerate() {
                match entry_pfn(e, vhead + ((i + j) << shift)) {
                    Ok(p) if p == head + (i + j) as u64 => {}
                    Err(LookupError::NoFrameNumbers) => return Err(LookupError::NoFrameNumbers),
                    _ => return Err(LookupError::NotContiguous { addr }),
                }
            }
            i += n;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_frame_numbers_are_an_error_not_frame_zero() {
        // Without CAP_SYS_ADMIN, Linux reports present pages with PFN bits zeroed.
        assert_eq!(entry_pfn(PRESENT, 0x1000), Err(LookupError::NoFrameNumbers));
        assert_eq!(
            entry_pfn(PRESENT | (1 << 62), 0x1000),
            Err(LookupError::NoFrameNumbers)
        );
        assert_eq!(
            entry_pfn(0, 0x1000),
            Err(LookupError::NotPresent { addr: 0x1000 })
        );
        assert_eq!(entry_pfn(PRESENT | (1 << 55) | 0x1234, 0), Ok(0x1234));
    }
}
