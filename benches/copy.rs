//! Copy bandwidth, 64 B .. 64 MiB, hot and cold destination: every backend's Temporal and
//! NonTemporal copy, FlushCache and Auto on the active backend, and an NT memset (the write
//! bandwidth limit), each against `copy_from_slice` (glibc memcpy). Prints the ratios.
//!
//! `cargo bench --bench copy -- --warm-up-time 0.5 --measurement-time 2 --noplot`
//! (`CACHECOPY_BENCH_QUICK=1` takes every 16x size instead of every 4x.)

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;

use cachecopy::{copy_with, fill, Backend, Mode};
use criterion::{Criterion, Throughput};
use util::{print_ratios, sizes, timed, Pool, Temp};

fn bench(c: &mut Criterion) {
    let active = Backend::active();
    for size in sizes(64 << 20) {
        let src = vec![0x5au8; size];
        for temp in [Temp::Hot, Temp::Cold] {
            let mut g = c.benchmark_group(format!("copy/{}/{}", temp.name(), util::human(size)));
            g.throughput(Throughput::Bytes(size as u64));
            if size >= 16 << 20 {
                g.sample_size(10);
            }
            let mut pool = Pool::new(size, temp);
            g.bench_function("memcpy", |b| {
                timed(b, ("copy", size, temp, "memcpy"), || {
                    pool.next().copy_from_slice(black_box(&src))
                })
            });
            for &backend in Backend::supported() {
                for mode in [Mode::Temporal, Mode::NonTemporal] {
                    let name = format!(
                        "{}-{}",
                        backend.name(),
                        if mode == Mode::Temporal { "t" } else { "nt" }
                    );
                    g.bench_function(&name, |b| {
                        timed(b, ("copy", size, temp, &name), || {
                            copy_with(backend, pool.next(), black_box(&src), mode).unwrap()
                        })
                    });
                }
            }
            for (mode, name) in [(Mode::FlushCache, "flush"), (Mode::Auto, "auto")] {
                let name = format!("{}-{name}", active.name());
                g.bench_function(&name, |b| {
                    timed(b, ("copy", size, temp, &name), || {
                        copy_with(active, pool.next(), black_box(&src), mode).unwrap()
                    })
                });
            }
            g.bench_function("nt-memset", |b| {
                timed(b, ("copy", size, temp, "nt-memset"), || {
                    fill(pool.next(), 0, Mode::NonTemporal)
                })
            });
            g.finish();
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    println!(
        "\nbackends: {:?}, active {}",
        Backend::supported(),
        Backend::active()
    );
    print_ratios("copy", "memcpy");
}
