//! Arbitrary backend, mode, offsets, length and bytes versus the reference copy and fill, with
//! canaries around the destination.
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::{Backend, FlushOp, Mode};
use libfuzzer_sys::fuzz_target;

/// The flush instructions this CPU runs, detected once: `cpu()` executes CPUID (a VM exit each,
/// microseconds) on every call, which would cost more than the copy it picks for.
fn flush_ops() -> &'static [FlushOp] {
    static OPS: std::sync::OnceLock<Vec<FlushOp>> = std::sync::OnceLock::new();
    OPS.get_or_init(|| cachecopy::cpu().flush_ops().collect())
}

#[derive(Arbitrary, Debug)]
struct Case {
    backend: u8,
    mode: u8,
    src_off: u8,
    dst_off: u8,
    len: u16,
    fill: Option<u8>,
    flush: u8,
    bytes: Vec<u8>,
}

const CANARY: u8 = 0xA7;

fuzz_target!(|c: Case| {
    let backends = Backend::supported();
    let backend = backends[c.backend as usize % backends.len()];
    let mode = [Mode::Temporal, Mode::NonTemporal, Mode::FlushCache, Mode::Auto][c.mode as usize % 4];
    let (so, d_o) = (c.src_off as usize % 64, c.dst_off as usize % 64);
    let len = c.len as usize % 9000;
    // Source: the fuzzer's bytes, repeated to length.
    let src: Vec<u8> = if c.bytes.is_empty() {
        vec![0x11; so + len]
    } else {
        c.bytes.iter().copied().cycle().take(so + len).collect()
    };
    let mut dst = vec![CANARY; d_o + len + 64];
    match c.fill {
        None => {
            let ops = flush_ops();
            if mode == Mode::FlushCache && c.flush % 2 == 1 {
                let op = ops[c.flush as usize / 2 % ops.len()];
                cachecopy::copy_with_flush(backend, op, &mut dst[d_o..d_o + len], &src[so..]).unwrap();
            } else {
                cachecopy::copy_with(backend, &mut dst[d_o..d_o + len], &src[so..], mode).unwrap();
            }
            assert_eq!(&dst[d_o..d_o + len], &src[so..]);
        }
        Some(byte) => {
            cachecopy::fill_with(backend, &mut dst[d_o..d_o + len], byte, mode).unwrap();
            assert!(dst[d_o..d_o + len].iter().all(|&b| b == byte));
        }
    }
    assert!(dst[..d_o].iter().chain(&dst[d_o + len..]).all(|&b| b == CANARY));
});
