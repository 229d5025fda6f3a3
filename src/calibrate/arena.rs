//! The calibration's memory: private anonymous mappings (no global allocator involved, so a
//! calibration inside an allocator's first call is safe) and the instruction that makes a
//! range of them cold.

use crate::cpu::{Cpu, FlushOp};

/// A private anonymous mapping, unmapped on drop (no global allocator involved).
pub(super) struct Map {
    pub(super) ptr: *mut u8,
    len: usize,
}

impl Map {
    pub(super) fn new(len: usize) -> Option<Map> {
        const PROT: libc::c_int = libc::PROT_READ | libc::PROT_WRITE;
        const FLAGS: libc::c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: an anonymous private mapping; the result is checked.
        let p = unsafe { libc::mmap(core::ptr::null_mut(), len, PROT, FLAGS, -1, 0) };
        (p != libc::MAP_FAILED).then_some(Map { ptr: p.cast(), len })
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, not used after this.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The instruction that evicts lines to make a destination cold: `clflushopt`, else `clflush`;
/// `None` when the CPU has neither.
pub(super) fn evicting_flush(cpu: &Cpu) -> Option<FlushOp> {
    [FlushOp::Clflushopt, FlushOp::Clflush]
        .into_iter()
        .find(|op| cpu.flush_ops().any(|o| o == *op))
}
