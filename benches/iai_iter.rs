//! Instruction counts: a `Temporal` gather through the cursor versus a hand-written loop of
//! `copy_from_slice` over the same 64 segments (16 B, 256 B, 1500 B, 4 KiB). Target: the cursor
//! costs at most 1 % more instructions. `compare_by_id` prints cursor vs hand per segment size.
//!
//! `cargo bench --bench iai_iter` (needs `iai-callgrind-runner` 0.16.1 and valgrind).

use std::hint::black_box;

use cachecopy::iter::{copy_from_iter, IoVec, Source};
use cachecopy::policy::Temporal;
use iai_callgrind::{library_benchmark, library_benchmark_group, main};

const SEGS: usize = 64;

/// 64 segments of `size` bytes, 64 bytes apart, and a destination for all of them.
/// Both sides are warmed up first: the cursor's backend detection and libc's `memcpy` symbol
/// binding happen once per process and are not what is compared.
fn setup(size: usize) -> (Vec<IoVec<'static>>, Vec<u8>) {
    let mut warm = [0u8; 4096];
    let mut one = [0u8; 4096];
    for n in [16, 256, 1500, 4096] {
        let buf = black_box(&mut warm[..n]);
        buf.copy_from_slice(&black_box([1u8; 4096])[..n]);
        copy_from_iter(&mut one[..n], &mut Source::ubuf(buf), Temporal);
    }
    let src: &'static [u8] = Vec::leak((0..SEGS * (size + 64)).map(|i| i as u8).collect());
    let segs = (0..SEGS)
        .map(|i| IoVec::new(&src[i * (size + 64)..i * (size + 64) + size]))
        .collect();
    (segs, vec![0u8; SEGS * size])
}

#[library_benchmark]
#[bench::seg16(setup(16))]
#[bench::seg256(setup(256))]
#[bench::seg1500(setup(1500))]
#[bench::seg4096(setup(4096))]
fn hand_loop((segs, mut dst): (Vec<IoVec<'static>>, Vec<u8>)) -> Vec<u8> {
    let mut o = 0;
    for s in black_box(&segs) {
        let s = s.as_slice();
        dst[o..o + s.len()].copy_from_slice(s);
        o += s.len();
    }
    dst
}

#[library_benchmark]
#[bench::seg16(setup(16))]
#[bench::seg256(setup(256))]
#[bench::seg1500(setup(1500))]
#[bench::seg4096(setup(4096))]
fn cursor_temporal((segs, mut dst): (Vec<IoVec<'static>>, Vec<u8>)) -> Vec<u8> {
    let mut src = Source::iovec(black_box(&segs));
    black_box(copy_from_iter(&mut dst, &mut src, Temporal));
    dst
}

library_benchmark_group!(
    name = gather;
    compare_by_id = true;
    benchmarks = hand_loop, cursor_temporal
);

main!(library_benchmark_groups = gather);
