//! Instruction counts (callgrind, cache simulation on) of the copy and fill kernels against
//! `copy_from_slice`/`fill` (glibc). Callgrind counts instructions and simulates caches, but it
//! treats non-temporal stores as ordinary stores and cannot execute `clwb`/`clflushopt` (under
//! valgrind 3.19 CPUID hides them, so flush-cache copies use `clflush` there): the NT and flush
//! figures below are instruction counts only, never cache evidence.
//!
//! `cargo bench --bench iai_copy` (needs `iai-callgrind-runner` 0.16.1 on PATH).

use std::hint::black_box;

use cachecopy::{copy, fill, Mode};
use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, LibraryBenchmarkConfig,
};

fn bufs(len: usize) -> (Vec<u8>, Vec<u8>) {
    let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
    // Warm the dispatcher so detection is not in the measured call.
    let mut warm = [0u8; 1];
    copy(&mut warm, &[1], Mode::Temporal);
    (src, vec![0u8; len + 1])
}

/// Copies the source into the destination one byte past its start with `f`, the source opaque
/// to the compiler; returns the destination.
#[inline(always)]
fn copy_off_by_one(
    (src, mut dst): (Vec<u8>, Vec<u8>),
    f: impl FnOnce(&mut [u8], &[u8]),
) -> Vec<u8> {
    let n = src.len();
    f(&mut dst[1..=n], black_box(&src));
    dst
}

#[library_benchmark]
#[benches::sizes(args = [16, 64, 1500, 4096, 65536], setup = bufs)]
fn glibc_memcpy(b: (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    copy_off_by_one(b, |d, s| d.copy_from_slice(s))
}

#[library_benchmark]
#[benches::sizes(args = [16, 64, 1500, 4096, 65536], setup = bufs)]
fn temporal(b: (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    copy_off_by_one(b, |d, s| copy(d, s, Mode::Temporal))
}

#[library_benchmark]
#[benches::sizes(args = [1500, 4096, 65536], setup = bufs)]
fn nontemporal(b: (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    copy_off_by_one(b, |d, s| copy(d, s, Mode::NonTemporal))
}

#[library_benchmark]
#[benches::sizes(args = [64, 4096, 65536], setup = bufs)]
fn glibc_memset((_src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    black_box(&mut dst[1..]).fill(0);
    dst
}

#[library_benchmark]
#[benches::sizes(args = [64, 4096, 65536], setup = bufs)]
fn fill_temporal((_src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    fill(black_box(&mut dst[1..]), 0, Mode::Temporal);
    dst
}

library_benchmark_group!(name = copies; benchmarks = glibc_memcpy, temporal, nontemporal, glibc_memset, fill_temporal);

main!(
    config = LibraryBenchmarkConfig::default().tool(Callgrind::with_args(["--cache-sim=yes"]));
    library_benchmark_groups = copies
);
