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

/// Every byte of `s` is `v`, compared 256 bytes at a time (one `memcmp` each).
pub fn all_bytes(s: &[u8], v: u8) -> bool {
    let probe = [v; 256];
    s.chunks(256).all(|c| *c == probe[..c.len()])
}
