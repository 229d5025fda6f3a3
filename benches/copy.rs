//! Copy bandwidth, 64 B .. 64 MiB, hot and cold destination: every backend's Temporal and
//! NonTemporal copy, FlushCache and Auto on the active backend, and an NT memset (the write
//! bandwidth limit), each against `copy_from_slice` (glibc memcpy). Prints the ratios.
//!
//! `cargo bench --bench copy -- --warm-up-time 0.5 --measurement-time 2 --noplot`
//! (`CACHECOPY_BENCH_QUICK=1` takes every 16x size instead of every 4x.)

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;

use cachecopy::raw::copy_with;
use cachecopy::tune::Backend;
use cachecopy::{fill, Mode};
use criterion::Criterion;
use util::{print_ratios, sizes, timed, Dest};

fn bench(c: &mut Criterion) {
    let active = cachecopy::tune::Plan::current().tuning().engine.stream;
    let sizes = sizes(64 << 20);
    let mut arena = util::arena(sizes.last().copied().unwrap_or(64));
    for size in sizes {
        let src = vec![0x5au8; size];
        for dest in Dest::ALL {
            let mut g = util::group(c, "copy", dest, size);
            g.bench_function("memcpy", |b| {
                timed(b, ("copy", size, dest, "memcpy"), || {
                    arena.dest(dest, size).copy_from_slice(black_box(&src))
                })
            });
            for (backend, mode, name) in util::backend_variants() {
                g.bench_function(&name, |b| {
                    timed(b, ("copy", size, dest, &name), || {
                        copy_with(backend, arena.dest(dest, size), black_box(&src), mode).unwrap()
                    })
                });
            }
            for (mode, name) in [(Mode::FlushCache, "flush"), (Mode::Auto, "auto")] {
                let name = format!("{}-{name}", active.name());
                g.bench_function(&name, |b| {
                    timed(b, ("copy", size, dest, &name), || {
                        copy_with(active, arena.dest(dest, size), black_box(&src), mode).unwrap()
                    })
                });
            }
            g.bench_function("nt-memset", |b| {
                timed(b, ("copy", size, dest, "nt-memset"), || {
                    fill(arena.dest(dest, size), 0, Mode::NonTemporal)
                })
            });
            g.finish();
        }
    }
}

fn main() {
    util::run(bench);
    println!(
        "\nbackends: {:?}, active {}",
        Backend::supported(),
        cachecopy::tune::Plan::current().tuning().engine.stream
    );
    print_ratios("copy", "memcpy");
}
