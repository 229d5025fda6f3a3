//! Arbitrary backend, mode, flush instruction, offset, length, byte and `rep stosb` threshold
//! versus the reference fill, through `fill_with`, `fill_with_flush` or the public `fill` (inline
//! small sizes), with canaries around the destination.
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::{Backend, Mode};
use libfuzzer_sys::fuzz_target;

mod common;
use common::flush_ops;

#[derive(Arbitrary, Debug)]
struct Case {
    backend: u8,
    mode: u8,
    flush: u8,
    offset: u8,
    len: u32,
    byte: u8,
    /// Odd: `rep stosb` from `rep * 8` bytes (x86_64); even: never.
    rep: u8,
}

const CANARY: u8 = 0x3D;

/// Every byte of `s` is `b`, compared a block at a time (`memcmp`): a byte loop over up to
/// 128 KiB ran SanitizerCoverage's comparison hook per byte, 60 % of the target's time.
fn all_are(s: &[u8], b: u8) -> bool {
    let block = [b; 4096];
    s.chunks(block.len()).all(|c| c == &block[..c.len()])
}

fuzz_target!(|c: Case| {
    let backends = Backend::supported();
    let backend = backends[c.backend as usize % backends.len()];
    let mode = [Mode::Temporal, Mode::NonTemporal, Mode::FlushCache, Mode::Auto][c.mode as usize % 4];
    let (off, len) = (c.offset as usize % 64, c.len as usize % (1 << 17));
    let mut dst = vec![CANARY; off + len + 64];
    cachecopy::set_fill_rep_threshold(if c.rep % 2 == 1 { c.rep as usize * 8 } else { usize::MAX });
    if c.flush % 4 == 2 {
        cachecopy::fill(&mut dst[off..off + len], c.byte, mode);
    } else if mode == Mode::FlushCache && c.flush % 2 == 1 {
        let ops = flush_ops();
        let op = ops[c.flush as usize / 2 % ops.len()];
        cachecopy::fill_with_flush(backend, op, &mut dst[off..off + len], c.byte).unwrap();
    } else {
        cachecopy::fill_with(backend, &mut dst[off..off + len], c.byte, mode).unwrap();
    }
    assert!(all_are(&dst[off..off + len], c.byte));
    assert!(all_are(&dst[..off], CANARY) && all_are(&dst[off + len..], CANARY));
});
