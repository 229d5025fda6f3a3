//! Instruction counts (callgrind, cache simulation on) of the small calls a network stack or an
//! allocator makes most: `copy_raw` and `fill_raw` in `Temporal` and `Auto` (inline size
//! classes below `kernel::small::MAX`, the backend table past them) beside glibc `memcpy` and
//! `memset` called for real (through the PLT), at 8, 64 and 256 bytes, the length opaque to the
//! compiler. Every figure includes the same benchmark-function overhead (the `black_box`es, the
//! prologue), so the differences are the calls' own. docs/small-calls.md keeps the figures.
//!
//! `cargo bench --bench iai_small` (needs `iai-callgrind-runner` 0.16.1 on PATH).

use std::hint::black_box;

use cachecopy::Mode;
use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, LibraryBenchmarkConfig,
};

fn bufs(len: usize) -> (Vec<u8>, Vec<u8>) {
    let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
    // Warm the dispatcher so detection is not in the measured call (the table path at 256 B).
    let mut warm = [0u8; 4096];
    cachecopy::copy(&mut warm, &[1; 4096], Mode::Temporal);
    cachecopy::fill(&mut warm, 0, Mode::Temporal);
    (src, vec![0u8; len])
}

#[library_benchmark]
#[benches::sizes(args = [8, 64, 256], setup = bufs)]
fn glibc_memcpy((src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: both buffers hold `src.len()` bytes and do not overlap.
    unsafe {
        libc::memcpy(
            dst.as_mut_ptr().cast(),
            src.as_ptr().cast(),
            black_box(src.len()),
        )
    };
    dst
}

#[library_benchmark]
#[benches::sizes(args = [8, 64, 256], setup = bufs)]
fn copy_temporal((src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: as above.
    unsafe {
        cachecopy::copy_raw(
            dst.as_mut_ptr(),
            src.as_ptr(),
            black_box(src.len()),
            Mode::Temporal,
        )
    };
    dst
}

#[library_benchmark]
#[benches::sizes(args = [8, 64, 256], setup = bufs)]
fn copy_auto((src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: as above.
    unsafe {
        cachecopy::copy_raw(
            dst.as_mut_ptr(),
            src.as_ptr(),
            black_box(src.len()),
            Mode::Auto,
        )
    };
    dst
}

#[library_benchmark]
#[benches::sizes(args = [8, 64, 256], setup = bufs)]
fn glibc_memset((_src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: `dst` holds `dst.len()` bytes.
    unsafe {
        libc::memset(
            dst.as_mut_ptr().cast(),
            i32::from(black_box(0x5au8)),
            black_box(dst.len()),
        )
    };
    dst
}

#[library_benchmark]
#[benches::sizes(args = [8, 64, 256], setup = bufs)]
fn fill_temporal((_src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: as above.
    unsafe {
        cachecopy::fill_raw(
            dst.as_mut_ptr(),
            black_box(0x5a),
            black_box(dst.len()),
            Mode::Temporal,
        )
    };
    dst
}

#[library_benchmark]
#[benches::sizes(args = [8, 64, 256], setup = bufs)]
fn fill_auto((_src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: as above.
    unsafe {
        cachecopy::fill_raw(
            dst.as_mut_ptr(),
            black_box(0x5a),
            black_box(dst.len()),
            Mode::Auto,
        )
    };
    dst
}

library_benchmark_group!(
    name = small;
    benchmarks = glibc_memcpy, copy_temporal, copy_auto, glibc_memset, fill_temporal, fill_auto
);

main!(
    config = LibraryBenchmarkConfig::default().tool(Callgrind::with_args(["--cache-sim=yes"]));
    library_benchmark_groups = small
);
