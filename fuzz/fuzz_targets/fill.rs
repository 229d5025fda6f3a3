//! Arbitrary backend, mode, flush instruction, offset, length, byte and `rep stosb` threshold
//! versus the reference fill, through `fill_with`, `fill_with_flush` or the public `fill` (inline
//! small sizes), with canaries around the destination.
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::Mode;
use libfuzzer_sys::fuzz_target;

mod common;
use common::{all_are, backend_and_mode, canaries_intact, flush_ops};

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

fuzz_target!(|c: Case| {
    let (backend, mode) = backend_and_mode(c.backend, c.mode);
    let (off, len) = (c.offset as usize % 64, c.len as usize % (1 << 17));
    let mut dst = vec![CANARY; off + len + 64];
    // A plan of the backend with `rep stosb` from `rep * 8` bytes (odd) or never (even).
    let mut t = *cachecopy::tune::Plan::current().tuning();
    t.engine = cachecopy::tune::Engine::uniform(backend);
    t.fill_rep = if c.rep % 2 == 1 { c.rep as usize * 8 } else { usize::MAX };
    let plan = cachecopy::tune::Plan::new(t).unwrap();
    if c.flush % 4 == 2 {
        cachecopy::fill(&mut dst[off..off + len], c.byte, mode);
    } else if c.flush % 4 == 0 {
        plan.fill(&mut dst[off..off + len], c.byte, mode);
    } else if mode == Mode::FlushCache && c.flush % 2 == 1 {
        let ops = flush_ops();
        let op = ops[c.flush as usize / 2 % ops.len()];
        cachecopy::raw::fill_with_flush(backend, op, &mut dst[off..off + len], c.byte).unwrap();
    } else {
        cachecopy::raw::fill_with(backend, &mut dst[off..off + len], c.byte, mode).unwrap();
    }
    assert!(all_are(&dst[off..off + len], c.byte));
    assert!(canaries_intact(&dst, off, len, CANARY));
});
