//! Arbitrary backend, mode, offsets, length and bytes versus the reference copy and fill, with
//! canaries around the destination; and overlapping moves (`copy_within`) by an arbitrary
//! distance, down or up, versus `slice::copy_within` over the whole buffer.
#![no_main]

use arbitrary::Arbitrary;
use cachecopy::Mode;
use libfuzzer_sys::fuzz_target;

mod common;
use common::{canaries_intact, flush_ops, repeated, Placement};

#[derive(Arbitrary, Debug)]
struct Case {
    at: Placement,
    fill: Option<u8>,
    flush: u8,
    /// When set, a move within one buffer by this many bytes (negative: down) instead.
    moved: Option<i16>,
    bytes: Vec<u8>,
}

const CANARY: u8 = 0xA7;

fuzz_target!(|c: Case| {
    let (backend, mode, so, d_o, len) = c.at.pick();
    // Source: the fuzzer's bytes, repeated to length.
    let src = repeated(&c.bytes, so + len, 0x11);
    if let Some(dist) = c.moved {
        // A buffer of `len + |dist|` bytes plus `so` and a canary tail: the move's source at
        // `so` (down) or its destination there (up); the reference is std's move.
        let d = dist.unsigned_abs() as usize;
        let n = so + len + d + 64;
        let mut buf: Vec<u8> = src.iter().copied().cycle().take(n).collect();
        if buf.len() < n {
            buf.resize(n, 0x22);
        }
        for (i, b) in buf.iter_mut().enumerate() {
            *b ^= (i as u32).wrapping_mul(0x9e37_79b9).to_be_bytes()[0]; // break the cycle's period
        }
        let (from, to) = if dist < 0 { (so + d, so) } else { (so, so + d) };
        let mut want = buf.clone();
        want.copy_within(from..from + len, to);
        let e = cachecopy::tune::Engine::from(backend);
        cachecopy::raw::copy_within_with_engine(e, &mut buf, from..from + len, to, mode).unwrap();
        assert!(buf == want, "move {len} by {dist} from {from}: differs from copy_within");
        return;
    }
    let mut dst = vec![CANARY; d_o + len + 64];
    match c.fill {
        None => {
            let ops = flush_ops();
            if mode == Mode::FlushCache && c.flush % 2 == 1 {
                let op = ops[c.flush as usize / 2 % ops.len()];
                cachecopy::raw::copy_with_flush(backend, op, &mut dst[d_o..d_o + len], &src[so..]).unwrap();
            } else {
                cachecopy::raw::copy_with(backend, &mut dst[d_o..d_o + len], &src[so..], mode).unwrap();
            }
            assert_eq!(&dst[d_o..d_o + len], &src[so..]);
        }
        Some(byte) => {
            cachecopy::raw::fill_with(backend, &mut dst[d_o..d_o + len], byte, mode).unwrap();
            assert!(dst[d_o..d_o + len].iter().all(|&b| b == byte));
        }
    }
    assert!(canaries_intact(&dst, d_o, len, CANARY));
});
