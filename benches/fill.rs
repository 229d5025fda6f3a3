//! Fill/zero bandwidth, 64 B .. 256 MiB, hot and cold destination: every backend's Temporal and
//! NonTemporal zeroing (`fill_with`), FlushCache and Auto through the public `fill` (dispatch and
//! all), against `slice.fill(0)` (glibc memset). Prints the ratios.
//!
//! `cargo bench --bench fill -- --warm-up-time 0.5 --measurement-time 2 --noplot`

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;

use cachecopy::{fill_with, Backend, Mode};
use criterion::{Criterion, Throughput};
use util::{print_ratios, sizes, timed, Pool, Temp};

fn bench(c: &mut Criterion) {
    for size in sizes(256 << 20) {
        for temp in [Temp::Hot, Temp::Cold] {
            if temp == Temp::Cold && size > 64 << 20 {
                continue; // already far beyond L3: the hot run is cold.
            }
            let mut g = c.benchmark_group(format!("fill/{}/{}", temp.name(), util::human(size)));
            g.throughput(Throughput::Bytes(size as u64));
            if size >= 16 << 20 {
                g.sample_size(10);
            }
            let mut pool = Pool::new(size, temp);
            g.bench_function("memset", |b| {
                timed(b, ("fill", size, temp, "memset"), || {
                    pool.next().fill(black_box(0))
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
                        timed(b, ("fill", size, temp, &name), || {
                            fill_with(backend, pool.next(), black_box(0), mode).unwrap()
                        })
                    });
                }
            }
            for (mode, name) in [
                (Mode::Temporal, "fill(T)"),
                (Mode::FlushCache, "fill(FC)"),
                (Mode::Auto, "fill(Auto)"),
            ] {
                g.bench_function(name, |b| {
                    timed(b, ("fill", size, temp, name), || {
                        cachecopy::fill(pool.next(), black_box(0), mode)
                    })
                });
            }
            g.finish();
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    println!(
        "\nbackends: {:?}, active {}, fill NT threshold {}, rep stosb from {}",
        Backend::supported(),
        Backend::active(),
        cachecopy::fill_nt_threshold(),
        cachecopy::fill_rep_threshold()
    );
    print_ratios("fill", "memset");
}
