//! Fill/zero bandwidth, 64 B .. 256 MiB, hot and cold destination: every backend's Temporal and
//! NonTemporal zeroing (`fill_with`), FlushCache and Auto through the public `fill` (dispatch and
//! all), against `slice.fill(0)` (glibc memset). Prints the ratios.
//!
//! `cargo bench --bench fill -- --warm-up-time 0.5 --measurement-time 2 --noplot`

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;

use cachecopy::raw::fill_with;
use cachecopy::tune::Backend;
use cachecopy::Mode;
use criterion::Criterion;
use util::{print_ratios, sizes, timed, Dest};

fn bench(c: &mut Criterion) {
    let sizes = sizes(256 << 20);
    let mut arena = util::arena(sizes.last().copied().unwrap_or(64));
    for size in sizes {
        for dest in Dest::ALL {
            if dest == Dest::Cold && size > 64 << 20 {
                continue; // already far beyond L3: the hot run is cold.
            }
            let mut g = util::group(c, "fill", dest, size);
            g.bench_function("memset", |b| {
                timed(b, ("fill", size, dest, "memset"), || {
                    arena.dest(dest, size).fill(black_box(0))
                })
            });
            for (backend, mode, name) in util::backend_variants() {
                g.bench_function(&name, |b| {
                    timed(b, ("fill", size, dest, &name), || {
                        fill_with(backend, arena.dest(dest, size), black_box(0), mode).unwrap()
                    })
                });
            }
            for (mode, name) in [
                (Mode::Temporal, "fill(T)"),
                (Mode::FlushCache, "fill(FC)"),
                (Mode::Auto, "fill(Auto)"),
            ] {
                g.bench_function(name, |b| {
                    timed(b, ("fill", size, dest, name), || {
                        cachecopy::fill(arena.dest(dest, size), black_box(0), mode)
                    })
                });
            }
            g.finish();
        }
    }
}

fn main() {
    util::run(bench);
    println!(
        "\nbackends: {:?}, active {}, fill NT threshold {}, rep stosb from {}",
        Backend::supported(),
        cachecopy::tune::Plan::current().tuning().engine.stream,
        cachecopy::tune::Plan::current().tuning().fill_nt,
        cachecopy::tune::Plan::current().tuning().fill_rep
    );
    print_ratios("fill", "memset");
}
