//! Small calls, 1 B .. 1 KiB, hot and cold destination, destination offsets 0, 5 and 24:
//! `copy_raw` `Temporal` and `Auto` against glibc `memcpy`, `fill_raw` `Temporal` against glibc
//! `memset` (both called for real through a pointer the compiler cannot see through, the length
//! opaque), and `net::csum_partial` against a kernel-style scalar loop (8-byte words, end-around
//! carry) at 20 B .. 1472 B. Prints the ratios (glibc's time ÷ ours: above 1, ours is faster).
//! The report's small calls make the same comparison with interleaved rounds.
//!
//! `cargo bench --bench small -- --warm-up-time 0.5 --measurement-time 2 --noplot`
//! (`CACHECOPY_BENCH_QUICK=1`: 8, 64, 256 and 1024 B at offsets 0 and 5 only.)

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;

use cachecopy::Mode;
use cachecopy_arena::csum::kernel_loop;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use util::{print_ratios, timed, Dest};

use cachecopy_arena::peer::{MemcpyFn, MemsetFn};

/// The group `{name}/{dest}/{size}`, its figures in bytes per second.
fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    dest: Dest,
    size: usize,
) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(format!("{name}/{}/{size}", dest.name()));
    g.throughput(Throughput::Bytes(size as u64));
    g
}

fn bench(c: &mut Criterion) {
    let quick = std::env::var_os("CACHECOPY_BENCH_QUICK").is_some();
    let sizes: &[usize] = if quick {
        &[8, 64, 256, 1024]
    } else {
        &[
            1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
        ]
    };
    let offsets: &[usize] = if quick { &[0, 5] } else { &[0, 5, 24] };
    let mut arena = util::arena(1024 + 64);
    let src = vec![0x5au8; 1024];
    let memcpy: MemcpyFn = black_box(libc::memcpy as MemcpyFn);
    let memset: MemsetFn = black_box(libc::memset as MemsetFn);
    for &off in offsets {
        let copy_group = format!("small copy +{off}");
        let fill_group = format!("small fill +{off}");
        for &size in sizes {
            for dest in Dest::ALL {
                let s = src.as_ptr();
                let mut g = group(c, &copy_group, dest, size);
                let key = |n| (copy_group.as_str(), size, dest, n);
                g.bench_function("memcpy", |b| {
                    timed(b, key("memcpy"), || {
                        let d = arena.dest(dest, size + off)[off..].as_mut_ptr();
                        // SAFETY: `d` and `s` hold `size` bytes each, in different buffers.
                        unsafe { memcpy(d.cast(), s.cast(), black_box(size)) };
                    })
                });
                for (mode, name) in [(Mode::Temporal, "Temporal"), (Mode::Auto, "Auto")] {
                    g.bench_function(name, |b| {
                        timed(b, key(name), || {
                            let d = arena.dest(dest, size + off)[off..].as_mut_ptr();
                            // SAFETY: as above.
                            unsafe { cachecopy::copy_raw(d, s, black_box(size), mode) };
                        })
                    });
                }
                g.finish();
                let mut g = group(c, &fill_group, dest, size);
                let key = |n| (fill_group.as_str(), size, dest, n);
                g.bench_function("memset", |b| {
                    timed(b, key("memset"), || {
                        let d = arena.dest(dest, size + off)[off..].as_mut_ptr();
                        // SAFETY: `d` holds `size` bytes.
                        unsafe { memset(d.cast(), i32::from(black_box(0x5au8)), black_box(size)) };
                    })
                });
                g.bench_function("Temporal", |b| {
                    timed(b, key("Temporal"), || {
                        let d = arena.dest(dest, size + off)[off..].as_mut_ptr();
                        // SAFETY: as above.
                        unsafe {
                            cachecopy::fill_raw(d, black_box(0x5a), black_box(size), Mode::Temporal)
                        };
                    })
                });
                g.finish();
            }
        }
    }
    let data: Vec<u8> = (0..1472u32).map(|i| (i * 7) as u8).collect();
    let csum_sizes: &[usize] = if quick {
        &[20, 40, 1472]
    } else {
        &[20, 40, 64, 128, 256, 1472]
    };
    for &size in csum_sizes {
        let mut g = c.benchmark_group(format!("small csum/{size}"));
        g.throughput(Throughput::Bytes(size as u64));
        let key = |n| ("small csum", size, Dest::Hot, n);
        g.bench_function("scalar loop", |b| {
            timed(b, key("scalar loop"), || {
                black_box(kernel_loop(&data[..black_box(size)]));
            })
        });
        g.bench_function("csum_partial", |b| {
            timed(b, key("csum_partial"), || {
                black_box(cachecopy::net::csum_partial(&data[..black_box(size)], 0));
            })
        });
        g.finish();
    }
    for &off in offsets {
        print_ratios(&format!("small copy +{off}"), "memcpy");
        print_ratios(&format!("small fill +{off}"), "memset");
    }
    print_ratios("small csum", "scalar loop");
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
