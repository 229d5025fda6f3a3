//! Test helpers shared by the unit tests and the integration tests (`tests/common` includes
//! this file by path), written so that Miri, which interprets every loop iteration, runs them in
//! a few block copies and comparisons instead of a loop per byte.

extern crate std;

use std::vec::Vec;

/// `f(i % period)` for every `i < len`: one period is computed and the rest copied from it.
pub fn periodic(len: usize, period: usize, f: impl Fn(usize) -> u8) -> Vec<u8> {
    assert!(period > 0, "a period of zero bytes");
    let mut v: Vec<u8> = (0..len.min(period)).map(f).collect();
    while v.len() < len {
        // `v.len()` is a multiple of `period` here, so the copy continues the period.
        let n = v.len().min(len - v.len());
        v.extend_from_within(..n);
    }
    v
}

/// A byte pattern that differs at every position within 251 bytes and between seeds:
/// `(i % 251) ^ seed * 37`.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    periodic(len, 251, |i| i as u8 ^ seed.wrapping_mul(37))
}

/// The disjoint ranges `(start, len)` of `buf`, in increasing order, as mutable slices: the
/// segments of a scatter destination carved from one backing buffer.
pub fn carve_mut<'a>(buf: &'a mut [u8], ranges: &[(usize, usize)]) -> Vec<&'a mut [u8]> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut rest = buf;
    let mut at = 0;
    for &(start, len) in ranges {
        let (_, tail) = core::mem::take(&mut rest).split_at_mut(start - at);
        let (seg, tail) = tail.split_at_mut(len);
        out.push(seg);
        rest = tail;
        at = start + len;
    }
    out
}

/// Every byte of `s` is `v`, compared 256 bytes at a time (one `memcmp` each).
pub fn all_bytes(s: &[u8], v: u8) -> bool {
    let probe = [v; 256];
    s.chunks(256).all(|c| *c == probe[..c.len()])
}

/// The RFC 1071 sum the plain way, the reference the library's sums are held to: native-endian
/// 16-bit words (an odd last byte padded with zero), added with end-around carry and folded to
/// `1..=0xffff` (0 only for all-zero data). Eight bytes per step: the four 16-bit lanes of a
/// native-endian `u64` are its four words (in an order that depends on the byte order, which a
/// sum does not see).
pub fn ones_sum(data: &[u8]) -> u32 {
    let mut words = data.chunks_exact(8);
    let mut s: u64 = 0;
    for w in &mut words {
        let x = u64::from_ne_bytes(w.try_into().expect("8 bytes"));
        s += (x & 0xffff) + (x >> 16 & 0xffff) + (x >> 32 & 0xffff) + (x >> 48);
    }
    for c in words.remainder().chunks(2) {
        s += u16::from_ne_bytes([c[0], c.get(1).copied().unwrap_or(0)]) as u64;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u32
}
