//! Scatter-gather cursor overhead.
//!
//! 1. Per-segment cost of `copy_from_iter` (gather of 64 KiB in 16 B / 256 B / 1500 B / 4 KiB
//!    segments into one buffer) versus a hand-written loop of `copy_from_slice` over the same
//!    segments, hot (same 64 KiB every time) and cold (a fresh window of a 96 MiB arena every
//!    time, so source and destination come from memory), in each mode.
//! 2. Non-temporal gather of 1500-byte segments versus one contiguous non-temporal copy of the
//!    same bytes, and versus a naive per-segment non-temporal copy (fence per segment).
//!
//! Criterion measures each variant; then an interleaved pass (variants alternate round by round,
//! median of the rounds) prints the comparisons: ns per segment and ours ÷ baseline.
//!
//! `cargo bench --bench iter -- --warm-up-time 0.5 --measurement-time 2` (tables only:
//! `ITER_SUMMARY_ONLY=1 cargo bench --bench iter`)

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::{copy_from_iter, IoVec, Source};
use cachecopy::Mode;
use criterion::{criterion_group, Criterion, Throughput};

const TOTAL: usize = 64 << 10;
const ARENA: usize = 96 << 20;
const SIZES: [usize; 4] = [16, 256, 1500, 4096];
/// Segments of `size` bytes, 64 bytes apart (scattered like socket buffers), in windows of
/// `TOTAL` bytes; `windows` windows. `hot`: 1 window.
struct Setup {
    src: Vec<u8>,
    dst: Vec<u8>,
    /// Per window, (offset, len) of each segment in `src`.
    windows: Vec<Vec<(usize, usize)>>,
    next: usize,
}

impl Setup {
    fn new(size: usize, hot: bool) -> Self {
        let n = TOTAL / size;
        let span = n * (size + 64);
        let windows = if hot { 1 } else { (ARENA / span).max(2) };
        let src: Vec<u8> = (0..span * windows).map(|i| i as u8).collect();
        let dst_windows = if hot { 1 } else { ARENA / (n * size) };
        // Written now, so no page is first touched (faulted in) inside a measurement.
        let dst = vec![1u8; n * size * dst_windows];
        let windows = (0..windows)
            .map(|w| (0..n).map(|i| (w * span + i * (size + 64), size)).collect())
            .collect();
        Setup {
            src,
            dst,
            windows,
            next: 0,
        }
    }

    /// The next window's segments and destination (the same ones when hot), and the window's
    /// source bytes as one contiguous run of the same length (same temperature).
    fn next(&mut self) -> (Vec<IoVec<'_>>, &mut [u8], &[u8]) {
        let w = self.next % self.windows.len();
        let len: usize = self.windows[w].iter().map(|s| s.1).sum();
        let d = (self.next % (self.dst.len() / len)) * len;
        self.next += 1;
        let segs = self.windows[w]
            .iter()
            .map(|&(o, l)| IoVec::new(&self.src[o..o + l]))
            .collect();
        let start = self.windows[w][0].0;
        (
            segs,
            &mut self.dst[d..d + len],
            &self.src[start..start + len],
        )
    }
}

#[derive(Clone, Copy, Debug)]
enum Variant {
    Hand,
    Cursor(Mode),
    Contiguous(Mode),
    PerSegment(Mode),
}

fn run(v: Variant, segs: &[IoVec<'_>], dst: &mut [u8], contiguous: &[u8]) {
    match v {
        Variant::Hand => {
            let mut o = 0;
            for s in segs {
                let s = s.as_slice();
                dst[o..o + s.len()].copy_from_slice(s);
                o += s.len();
            }
        }
        Variant::Cursor(m) => {
            black_box(copy_from_iter(dst, &mut Source::iovec(segs), m));
        }
        Variant::Contiguous(m) => cachecopy::copy(dst, &contiguous[..dst.len()], m),
        Variant::PerSegment(m) => {
            let mut o = 0;
            for s in segs {
                let s = s.as_slice();
                cachecopy::copy(&mut dst[o..o + s.len()], s, m);
                o += s.len();
            }
        }
    }
    black_box(dst);
}

/// Median ns per call of each variant, interleaved round by round.
fn compare(size: usize, hot: bool, variants: &[Variant]) -> Vec<f64> {
    let mut setup = Setup::new(size, hot);
    let calls = if hot { 200 } else { 40 };
    let rounds = 15;
    let mut times = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (i, &v) in variants.iter().enumerate() {
            let mut ns = 0u128;
            for _ in 0..calls {
                let (segs, dst, contiguous) = setup.next();
                let t = Instant::now();
                run(v, &segs, dst, contiguous);
                ns += t.elapsed().as_nanos();
            }
            times[i].push(ns as f64 / calls as f64);
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

fn summary() {
    println!("\n== cursor vs hand loop of copy_from_slice: ns per segment (cursor / hand) ==");
    for hot in [true, false] {
        for size in SIZES {
            let n = (TOTAL / size) as f64;
            let mut vs = vec![Variant::Hand];
            vs.extend(Mode::ALL.map(Variant::Cursor));
            let t = compare(size, hot, &vs);
            let hand = t[0] / n;
            print!(
                "{:4} {:5} B x {:4}: hand {:7.2}",
                if hot { "hot" } else { "cold" },
                size,
                n,
                hand
            );
            for (m, t) in Mode::ALL.iter().zip(&t[1..]) {
                let ns = t / n;
                print!(
                    " | {m:?} {ns:7.2} ({:+.2} ns, x{:.3})",
                    ns - hand,
                    ns / hand
                );
            }
            println!();
        }
    }

    println!("\n== NT gather of 1500-B segments vs one contiguous NT copy of the same bytes ==");
    for hot in [true, false] {
        let n = (TOTAL / 1500) as f64;
        let vs = [
            Variant::Contiguous(Mode::NonTemporal),
            Variant::Cursor(Mode::NonTemporal),
            Variant::PerSegment(Mode::NonTemporal),
        ];
        let t = compare(1500, hot, &vs);
        println!(
            "{:4}: contiguous {:7.1} ns/seg | cursor {:7.1} ({:+.1} ns/seg, x{:.3}) | per-segment NT copy {:7.1} ({:+.1} ns/seg)",
            if hot { "hot" } else { "cold" },
            t[0] / n,
            t[1] / n,
            (t[1] - t[0]) / n,
            t[1] / t[0],
            t[2] / n,
            (t[2] - t[0]) / n
        );
    }
}

fn bench(c: &mut Criterion) {
    for hot in [true, false] {
        for size in SIZES {
            let mut g = c.benchmark_group(format!(
                "gather/{}/{size}B",
                if hot { "hot" } else { "cold" }
            ));
            g.throughput(Throughput::Elements((TOTAL / size) as u64));
            let mut setup = Setup::new(size, hot);
            let mut vs = vec![Variant::Hand];
            vs.extend(Mode::ALL.map(Variant::Cursor));
            if size == 1500 {
                vs.push(Variant::Contiguous(Mode::NonTemporal));
            }
            for v in vs {
                g.bench_function(format!("{v:?}"), |b| {
                    b.iter_custom(|iters| {
                        let mut t = std::time::Duration::ZERO;
                        for _ in 0..iters {
                            let (segs, dst, contiguous) = setup.next();
                            let start = Instant::now();
                            run(v, &segs, dst, contiguous);
                            t += start.elapsed();
                        }
                        t
                    })
                });
            }
            g.finish();
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    // Criterion's own runs (also what `cargo test --benches` executes, once each); the
    // interleaved comparison tables only under `cargo bench`. ITER_SUMMARY_ONLY=1 skips the
    // criterion runs.
    if std::env::var_os("ITER_SUMMARY_ONLY").is_none() {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    if std::env::args().any(|a| a == "--bench") {
        summary();
    }
}
