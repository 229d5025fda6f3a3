//! What several fuzz targets share (included as `mod common;`; not a target itself): how a
//! case's bytes pick a backend, a mode and a source, the block-at-a-time comparisons, and the
//! project's RFC 1071 reference sum.
#![allow(dead_code)] // each target uses its own part

use cachecopy::Mode;
use cachecopy::tune::{Backend, FlushOp};

#[path = "../../src/testutil.rs"]
mod testutil;
#[allow(unused_imports)] // each target uses some of them
pub use testutil::{carve_mut, ones_sum};

/// The flush instructions this CPU runs, detected once: `cpu()` executes CPUID (a VM exit each,
/// microseconds) on every call, which would cost more than the copy it picks for.
pub fn flush_ops() -> &'static [FlushOp] {
    static OPS: std::sync::OnceLock<Vec<FlushOp>> = std::sync::OnceLock::new();
    OPS.get_or_init(|| cachecopy::tune::cpu().flush_ops().collect())
}

/// The supported backend and the mode that a case's two bytes pick.
pub fn backend_and_mode(backend: u8, mode: u8) -> (Backend, Mode) {
    let backends = Backend::supported();
    (backends[backend as usize % backends.len()], Mode::ALL[mode as usize % Mode::ALL.len()])
}

/// Where a copy-shaped case runs, as the first fields of its `Case`: a backend and a mode (as
/// [`backend_and_mode`] picks them), the source's and the destination's offset into their first
/// line, and a length.
#[derive(arbitrary::Arbitrary, Debug)]
pub struct Placement {
    backend: u8,
    mode: u8,
    src_off: u8,
    dst_off: u8,
    len: u16,
}

impl Placement {
    /// `(backend, mode, source offset, destination offset, length)`: offsets below 64, lengths
    /// below 9000 (past every vector path's head, loop and tail, about six frames).
    pub fn pick(&self) -> (Backend, Mode, usize, usize, usize) {
        let (backend, mode) = backend_and_mode(self.backend, self.mode);
        let (so, d_o) = (self.src_off as usize % 64, self.dst_off as usize % 64);
        (backend, mode, so, d_o, self.len as usize % 9000)
    }
}

/// `n` bytes: the fuzzer's `bytes` repeated to length, or `empty` throughout when it gave none.
pub fn repeated(bytes: &[u8], n: usize, empty: u8) -> Vec<u8> {
    if bytes.is_empty() {
        vec![empty; n]
    } else {
        bytes.iter().copied().cycle().take(n).collect()
    }
}

/// Every byte of `s` is `b`, compared a block at a time (`memcmp`): a byte loop ran
/// SanitizerCoverage's comparison hook per byte, most of the target's time
/// (lab/findings/testing-guarantees.md, "Fuzzing").
pub fn all_are(s: &[u8], b: u8) -> bool {
    let block = [b; 4096];
    s.chunks(block.len()).all(|c| c == &block[..c.len()])
}

/// Every byte of `buf` outside `at..at + len` is still `canary`.
pub fn canaries_intact(buf: &[u8], at: usize, len: usize, canary: u8) -> bool {
    all_are(&buf[..at], canary) && all_are(&buf[at + len..], canary)
}
