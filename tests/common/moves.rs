//! The move rig (tests/moves.rs, tests/avx512.rs): a non-repeating pattern, one move checked
//! against `slice::copy_within` inside guard pages, and the distances and lengths to sweep.

use cachecopy::raw::copy_within_with_engine;
use cachecopy::tune::Engine;
use cachecopy::Mode;

use super::{boundary_lengths, emulated, miri, Guarded};

/// Bytes that never repeat within 64 KiB (a periodic pattern would let a move by its period
/// pass without moving anything): a xorshift stream.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_ne_bytes());
    }
    v.truncate(len);
    v
}

/// Moves `len` bytes by `dist` (the destination `dist` bytes above the source) inside a buffer
/// of exactly `len + |dist|` bytes, flush against the low guard page and then against the high
/// one, and compares the whole buffer with `slice::copy_within`: the destination holds the
/// source's old bytes and no other byte changed.
pub fn check(g: &mut Guarded, data: &[u8], engine: Engine, mode: Mode, len: usize, dist: isize) {
    let n = len + dist.unsigned_abs();
    let src = if dist < 0 { dist.unsigned_abs() } else { 0 };
    let dest = src.wrapping_add_signed(dist);
    let mut want = data[..n].to_vec();
    want.copy_within(src..src + len, dest);
    for at_end in [false, true] {
        let buf = if at_end { g.at_end(n) } else { g.at_start(n) };
        buf.copy_from_slice(&data[..n]);
        copy_within_with_engine(engine, buf, src..src + len, dest, mode).unwrap();
        if *buf != want[..] {
            let at = (0..n).find(|&i| buf[i] != want[i]).unwrap();
            panic!(
                "{engine} {mode:?} len {len} by {dist} ({}): first wrong byte at buffer offset \
                 {at} (destination {dest}..{})",
                if at_end {
                    "at the high guard"
                } else {
                    "at the low guard"
                },
                dest + len
            );
        }
    }
}

/// Distances to sweep: every one in -256..=256 (every third under an emulator), plus line and
/// page multiples and their neighbours.
pub fn distances() -> Vec<isize> {
    let mut v: Vec<isize> = if miri() {
        vec![1, 2, 7, 8, 15, 16, 31, 33, 63, 64, 65, 127, 129]
    } else {
        let step = if emulated() { 3 } else { 1 };
        (1..=256).step_by(step).chain([256]).collect()
    };
    // Line multiples; page multiples natively (under Miri they only repeat the disjoint copy).
    let mults: &[isize] = if miri() {
        &[64, 128]
    } else {
        &[64, 128, 4096, 8192]
    };
    for &m in mults {
        for k in [1, 2, 3] {
            v.extend([k * m - 1, k * m, k * m + 1]);
        }
    }
    v.sort_unstable();
    v.dedup();
    let down: Vec<isize> = v.iter().map(|d| -d).collect();
    v.extend(down);
    v.push(0);
    v
}

/// Lengths: every size class of the copy (scalars, register pairs and quads, the 8-register
/// shapes, the loops), the streaming cut-over and whole/partial lines around it, a few KiB.
pub fn lengths() -> Vec<usize> {
    if miri() {
        return vec![0, 3, 17, 33, 65, 130, 257, 1100];
    }
    let mut v = boundary_lengths();
    v.extend([0, 3000, 4095, 4096, 4097, 5000]);
    v.sort_unstable();
    v.dedup();
    v
}

/// Every distance of `dists` (both directions) at every length of `lens`, every mode, with
/// `engine`: the sweep for one engine.
pub fn table(engine: Engine, dists: &[isize], lens: &[usize]) {
    let max = lens.iter().max().unwrap() + dists.iter().map(|d| d.unsigned_abs()).max().unwrap();
    let data = noise(max, 5);
    let mut g = Guarded::new(max);
    for mode in Mode::ALL {
        for &len in lens {
            for &dist in dists {
                check(&mut g, &data, engine, mode, len, dist);
                check(&mut g, &data, engine, mode, len, -dist);
            }
        }
    }
}
