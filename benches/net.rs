//! Network helpers: what fusing the checksum into the copy is worth, and what headroom saves.
//!
//! - fused `csum_and_copy` (Temporal) vs `copy` then `csum_partial`, hot buffers (target ≤ 0.7x);
//! - fused NonTemporal vs a plain NonTemporal copy, cold destination (target within 15 %);
//! - `Frame::push` of a 4-byte header into reserved headroom vs the copy without room.
//!
//! Criterion reports each function; then every pair is timed again side by side, interleaved
//! round by round on the same buffers, and the medians and ratios are printed.
//!
//! `cargo bench --bench net -- --warm-up-time 0.5 --measurement-time 2 --noplot`

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;
use std::time::Instant;

use cachecopy::net::{csum_and_copy, csum_partial, Frame};
use cachecopy::{copy, Backend, Mode};
use criterion::{Criterion, Throughput};
use util::Dest;

fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{}MiB", n >> 20),
        n if n >= 1 << 10 && n % 1024 == 0 => format!("{}KiB", n >> 10),
        n => format!("{n}B"),
    }
}

fn fused_t(dst: &mut [u8], src: &[u8]) -> u32 {
    csum_and_copy(dst, src, Mode::Temporal)
}
fn copy_then_sum(dst: &mut [u8], src: &[u8]) -> u32 {
    copy(dst, src, Mode::Temporal);
    csum_partial(dst, 0)
}
fn fused_nt(dst: &mut [u8], src: &[u8]) -> u32 {
    csum_and_copy(dst, src, Mode::NonTemporal)
}
fn copy_nt(dst: &mut [u8], src: &[u8]) -> u32 {
    copy(dst, src, Mode::NonTemporal);
    0
}

type CopyFn = fn(&mut [u8], &[u8]) -> u32;

/// One comparison: (name, ours, baseline, sizes, destination, target ratio, target text).
type Pair = (
    &'static str,
    CopyFn,
    CopyFn,
    &'static [usize],
    Dest,
    f64,
    &'static str,
);

const PAIRS: [Pair; 2] = [
    (
        "fused t / copy+csum (hot)",
        fused_t,
        copy_then_sum,
        &[64, 256, 1500, 4096, 65536],
        Dest::Hot,
        0.7,
        "<= 0.70",
    ),
    (
        "fused nt / copy nt (cold dst)",
        fused_nt,
        copy_nt,
        &[4096, 65536, 1 << 20],
        Dest::Cold,
        1.15,
        "<= 1.15",
    ),
];

/// The largest size in [`PAIRS`]: what the destination arena must hold.
const LARGEST: usize = 1 << 20;

fn criterion_benches(c: &mut Criterion) {
    let mut arena = util::arena(LARGEST);
    for (name, ours, base, sizes, dest, _, _) in PAIRS {
        for &size in sizes.iter().filter(|&&s| s >= 1500) {
            let src: Vec<u8> = (0..size).map(|i| i as u8).collect();
            let mut g = c.benchmark_group(format!(
                "net/{}/{}",
                name.split(' ').next().unwrap_or(name),
                human(size)
            ));
            g.throughput(Throughput::Bytes(size as u64));
            let label = |f: CopyFn| {
                if f as usize == ours as usize {
                    "ours"
                } else {
                    "baseline"
                }
            };
            for f in [ours, base] {
                g.bench_function(format!("{} {}", label(f), name), |b| {
                    b.iter(|| f(arena.dest(dest, size), black_box(&src)))
                });
            }
            g.finish();
        }
    }
    let payload = vec![0x42u8; 1500];
    let mut g = c.benchmark_group("net/frame-1500B");
    g.bench_function("push into headroom", |b| {
        b.iter_batched(
            || Frame::copy_from(4, &payload, 4, Mode::Temporal),
            |mut f| {
                f.push(4).unwrap()[0] = 1;
                f
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("push without room (copy)", |b| {
        b.iter_batched(
            || Frame::copy_from(0, &payload, 0, Mode::Temporal),
            |mut f| {
                f.push(4).unwrap()[0] = 1;
                f
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Median seconds per call of `a` and `b`, measured in alternating rounds.
fn interleaved(
    rounds: usize,
    per_round: usize,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        // Alternate which goes first, so neither always finds the other's cache state.
        let run = |f: &mut dyn FnMut(), t: &mut Vec<f64>| {
            let s = Instant::now();
            for _ in 0..per_round {
                f();
            }
            t.push(s.elapsed().as_secs_f64() / per_round as f64);
        };
        if r % 2 == 0 {
            run(&mut a, &mut ta);
            run(&mut b, &mut tb);
        } else {
            run(&mut b, &mut tb);
            run(&mut a, &mut ta);
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(ta), median(tb))
}

fn ratios() {
    println!(
        "\n== net: side by side, interleaved (backend {}, medians per call) ==",
        Backend::active()
    );
    println!(
        "{:<32} {:>8} {:>11} {:>11} {:>7}  target",
        "pair", "size", "ours", "baseline", "ratio"
    );
    let arena = std::cell::RefCell::new(util::arena(LARGEST));
    for (name, ours, base, sizes, dest, target, text) in PAIRS {
        for &size in sizes {
            let src: Vec<u8> = (0..size).map(|i| (i * 7) as u8).collect();
            let per_round = ((4 << 20) / size).clamp(16, 20_000);
            let (a, b) = interleaved(
                31,
                per_round,
                || {
                    black_box(ours(arena.borrow_mut().dest(dest, size), black_box(&src)));
                },
                || {
                    black_box(base(arena.borrow_mut().dest(dest, size), black_box(&src)));
                },
            );
            let r = a / b;
            println!(
                "{name:<32} {:>8} {:>9.1}ns {:>9.1}ns {:>7.3}  {text} {}",
                human(size),
                a * 1e9,
                b * 1e9,
                r,
                if r <= target { "met" } else { "MISSED" }
            );
        }
    }
    let payload = vec![0x42u8; 1500];
    let (mut with_room, mut without) = (Vec::new(), Vec::new());
    let (a, b) = interleaved(
        31,
        2000,
        || {
            if with_room.is_empty() {
                with_room = (0..2000)
                    .map(|_| Frame::copy_from(4, &payload, 4, Mode::Temporal))
                    .collect();
            }
            let mut f: Frame = with_room.pop().unwrap();
            f.push(4).unwrap()[0] = 1;
            black_box(f);
        },
        || {
            if without.is_empty() {
                without = (0..2000)
                    .map(|_| Frame::copy_from(0, &payload, 0, Mode::Temporal))
                    .collect();
            }
            let mut f: Frame = without.pop().unwrap();
            f.push(4).unwrap()[0] = 1;
            black_box(f);
        },
    );
    println!(
        "{:<32} {:>8} {:>9.1}ns {:>9.1}ns {:>7.3}  (frame refills amortized in both)",
        "frame push: room / no room",
        "1500B",
        a * 1e9,
        b * 1e9,
        a / b
    );
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
    ratios();
}
