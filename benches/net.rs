//! Network helpers: what fusing the checksum into the copy is worth, and what headroom saves.
//!
//! - fused `csum_and_copy` (Temporal) vs `copy` then `csum_partial`, hot buffers (target ≤ 0.7x);
//! - fused NonTemporal vs a plain NonTemporal copy, cold destination (target within 15 %);
//! - `Frame::push` of a 4-byte header into reserved headroom vs the copy without room;
//! - transmit frames as a stack builds them (a 42-byte header, the 1472-byte payload at offset
//!   42; and an aligned payload alone), 64 per batch into a page-aligned ring of 1536-byte slots
//!   larger than the L2, each variant on its own ring: `Temporal`, batched copies of header and
//!   payload, a batched gather of `[header, payload]`, beside glibc `memcpy` of the same bytes
//!   and the limit (the frame's whole lines streamed from an image), with both ratios;
//! - small checksums: `csum_partial` at 20 B (an IPv4 header) to 64 KiB beside a kernel-style
//!   scalar loop (8-byte words, end-around carry), and the fused `csum_and_copy` in every mode
//!   beside the same loop fused with the copy (target ≥ 1.0x everywhere, ≥ 1.5x at 40 B); the
//!   1472-byte payload at destination offset 42 fused in every mode beside glibc `memcpy` then
//!   `csum_partial` (target ≥ 1.0x).
//!
//! Criterion reports each function; then every pair is timed again side by side, interleaved
//! round by round on the same buffers, and the medians and ratios are printed.
//!
//! `cargo bench --bench net -- --warm-up-time 0.5 --measurement-time 2 --noplot`

#[path = "util/mod.rs"]
mod util;

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::{IoVec, Source};
use cachecopy::net::{csum_and_copy, csum_fold, csum_partial, Frame};
use cachecopy::{copy, Mode};
use cachecopy_arena::csum::kernel_loop;
use cachecopy_arena::frame::{self, Shape, BATCH, HEADER, PAYLOAD, SLOT};
use cachecopy_arena::{opaque, Buf};
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
    for (name, room) in [("push into headroom", 4), ("push without room (copy)", 0)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || Frame::copy_from(room, &payload, room, Mode::Temporal),
                push_header,
                criterion::BatchSize::SmallInput,
            )
        });
    }
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
        cachecopy::tune::Plan::current().tuning().engine.stream
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
    // Each side takes its frames from a stock of 2000, refilled when empty.
    let push_from = |stock: &mut Vec<Frame>, room: usize| {
        if stock.is_empty() {
            *stock = (0..2000)
                .map(|_| Frame::copy_from(room, &payload, room, Mode::Temporal))
                .collect();
        }
        black_box(push_header(stock.pop().unwrap()));
    };
    let (a, b) = interleaved(
        31,
        2000,
        || push_from(&mut with_room, 4),
        || push_from(&mut without, 0),
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

/// Pushes a 4-byte header in front of `f`'s payload and writes its first byte: into the
/// headroom when `f` has it, otherwise the frame moves (the cost the headroom saves).
fn push_header(mut f: Frame) -> Frame {
    f.push(4).unwrap()[0] = 1;
    f
}

/// A kernel-style scalar checksum: one 8-byte word per step with end-around carry, then the
/// 4-, 2- and 1-byte tail (the loop a C programmer writes, and the checksums' baseline). The
/// destination, when given, gets each word from the register it was summed from.
#[inline(always)]
fn scalar_loop(data: &[u8], mut dst: Option<&mut [u8]>) -> u32 {
    let add = |s: u64, w: u64| {
        let (s, c) = s.overflowing_add(w);
        s + c as u64
    };
    let mut s = 0u64;
    let mut words = data.chunks_exact(8);
    let mut off = 0;
    for w in &mut words {
        let w = u64::from_ne_bytes(w.try_into().unwrap());
        if let Some(d) = dst.as_deref_mut() {
            d[off..off + 8].copy_from_slice(&w.to_ne_bytes());
        }
        s = add(s, w);
        off += 8;
    }
    let rest = words.remainder();
    if let Some(d) = dst {
        d[off..].copy_from_slice(rest);
    }
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        s = add(s, u16::from_ne_bytes([p[0], p[1]]) as u64);
    }
    if let [b] = pairs.remainder() {
        s = add(s, u16::from_ne_bytes([*b, 0]) as u64);
    }
    let s = (s & 0xffff_ffff) + (s >> 32);
    let s = (s & 0xffff) + (s >> 16);
    let s = (s & 0xffff) + (s >> 16);
    ((s & 0xffff) + (s >> 16)) as u32
}

/// Checksum sizes: the IPv4 and IPv6 headers, small datagrams, a full payload, up to 64 KiB.
const SUM_SIZES: [usize; 9] = [20, 40, 64, 128, 256, 512, 1472, 4096, 65536];

/// ns per call of `csum_partial` and the fused copies beside the scalar loop, interleaved, with
/// `scalar ÷ ours` (≥ 1.0: ours is faster).
fn sum_ratios(quick: bool) {
    let rounds = if quick { 5 } else { 31 };
    println!(
        "\n== net: checksums beside a kernel-style scalar loop (engine {}, medians per call, \
         speedup = scalar ÷ ours; target >= 1.0, >= 1.5 at 40 B) ==",
        cachecopy::tune::Plan::current().tuning().engine
    );
    println!(
        "{:<26} {:>7} {:>9} {:>9} {:>8}",
        "call", "size", "ours", "scalar", "speedup"
    );
    for size in SUM_SIZES {
        let src: Vec<u8> = (0..size).map(|i| (i * 7 + 3) as u8).collect();
        // Each variant writes its own destination.
        let (mut ours_dst, mut scalar_dst) = (vec![0u8; size], vec![0u8; size]);
        let per_round = ((1 << 20) / size).clamp(64, 20_000) / if quick { 8 } else { 1 };
        let row = |name: &str, a: f64, b: f64| {
            println!(
                "{name:<26} {:>7} {:>7.2}ns {:>7.2}ns {:>7.2}x",
                human(size),
                a * 1e9,
                b * 1e9,
                b / a
            )
        };
        let (a, b) = interleaved(
            rounds,
            per_round,
            || {
                black_box(csum_partial(black_box(&src[..]), 0));
            },
            || {
                black_box(scalar_loop(black_box(&src[..]), None));
            },
        );
        assert_eq!(
            csum_fold(csum_partial(&src, 0)),
            csum_fold(scalar_loop(&src, None))
        );
        row("csum_partial", a, b);
        for mode in [Mode::Temporal, Mode::NonTemporal, Mode::Auto] {
            let (a, b) = interleaved(
                rounds,
                per_round,
                || {
                    black_box(csum_and_copy(&mut ours_dst, black_box(&src), mode));
                },
                || {
                    black_box(scalar_loop(black_box(&src), Some(&mut scalar_dst)));
                },
            );
            row(&format!("csum_and_copy {mode}"), a, b);
        }
    }
    // The transmit copy: a 1472-byte payload behind a 42-byte header, hot.
    let src: Vec<u8> = (0..PAYLOAD).map(|i| (i * 5 + 1) as u8).collect();
    let (mut ours_buf, mut glibc_buf) = (vec![0u8; 4096], vec![0u8; 4096]);
    println!(
        "fused 1472 B at destination offset 42 (hot; each variant its own destination) beside \
         glibc memcpy then csum_partial:"
    );
    for mode in [Mode::Temporal, Mode::NonTemporal, Mode::Auto] {
        let (a, b) = interleaved(
            rounds,
            if quick { 500 } else { 5000 },
            || {
                let d = &mut ours_buf[42..42 + PAYLOAD];
                black_box(csum_and_copy(d, black_box(&src), mode));
            },
            || {
                let d = &mut glibc_buf[42..42 + PAYLOAD];
                frame::memcpy(d, black_box(&src));
                black_box(csum_partial(d, 0));
            },
        );
        println!(
            "  {:<24} {:>7.1}ns {:>7.1}ns {:>7.2}x  (target >= 1.0)",
            format!("{mode}"),
            a * 1e9,
            b * 1e9,
            b / a
        );
    }
}

/// The frame builders: glibc, the limit, then cachecopy's.
const BUILDS: [&str; 5] = [
    "glibc memcpy",
    "limit",
    "Temporal",
    "NT batched",
    "NT gather",
];

/// Builds a frame of `shape` in every slot of `ring` (whole batches) the way `BUILDS[v]` says.
fn build(v: usize, shape: Shape, ring: &mut [u8], hdr: &[u8], payload: &[u8], image: &[u8]) {
    let (h, len) = (shape.header(), shape.bytes());
    let hdr = &hdr[..h];
    for group in ring.chunks_mut(BATCH * SLOT) {
        match v {
            0 => {
                for slot in group.chunks_exact_mut(SLOT) {
                    frame::memcpy(&mut slot[..h], hdr);
                    frame::memcpy(&mut slot[h..len], payload);
                }
            }
            1 => {
                for slot in group.chunks_exact_mut(SLOT) {
                    frame::stream_lines(&mut slot[..image.len()], image);
                }
                frame::fence();
            }
            2 => {
                for slot in group.chunks_exact_mut(SLOT) {
                    copy(&mut slot[..h], hdr, Mode::Temporal);
                    copy(&mut slot[h..len], payload, Mode::Temporal);
                }
            }
            3 => cachecopy::batch(Mode::NonTemporal, |b| {
                for slot in group.chunks_exact_mut(SLOT) {
                    let (a, rest) = slot[..len].split_at_mut(h);
                    b.copy(a, hdr);
                    b.copy(rest, payload);
                }
            }),
            _ => {
                let segs = [IoVec::new(hdr), IoVec::new(payload)];
                let segs = if h == 0 { &segs[1..] } else { &segs[..] };
                cachecopy::batch(Mode::NonTemporal, |b| {
                    for slot in group.chunks_exact_mut(SLOT) {
                        b.copy_from_iter(&mut slot[..len], &mut Source::iovec(segs));
                    }
                });
            }
        }
    }
    black_box(ring);
}

/// A ring of `frames` slots per builder, each written once in its own way.
fn rings(frames: usize) -> Vec<Buf> {
    (0..BUILDS.len())
        .map(|_| Buf::new(frames * SLOT, 0))
        .collect()
}

fn frame_pieces() -> (Vec<u8>, Vec<u8>) {
    let hdr: Vec<u8> = (0..HEADER).map(|i| (i * 3 + 1) as u8).collect();
    let payload: Vec<u8> = (0..PAYLOAD).map(|i| (i * 7 + 5) as u8).collect();
    (hdr, payload)
}

/// Frames per ring: 4 x the L2 (at least 8 MiB; 2 MiB with `CACHECOPY_BENCH_QUICK`), whole
/// batches.
fn ring_frames() -> usize {
    let l2 = cachecopy::tune::cpu().caches.l2.unwrap_or(1 << 20);
    let bytes = if std::env::var_os("CACHECOPY_BENCH_QUICK").is_some() {
        2 << 20
    } else {
        (4 * l2).max(8 << 20)
    };
    (bytes / SLOT).div_ceil(BATCH) * BATCH
}

fn frame_benches(c: &mut Criterion) {
    let (hdr, payload) = frame_pieces();
    let frames = ring_frames();
    for shape in Shape::ALL {
        let image = shape.image(&hdr, &payload);
        let mut rings = rings(frames);
        let mut g = c.benchmark_group(format!("net/frames/{}", shape.name()));
        g.throughput(Throughput::Elements(frames as u64));
        for (v, ring) in rings.iter_mut().enumerate() {
            g.bench_function(BUILDS[v], |b| {
                b.iter(|| build(v, shape, ring.as_mut_slice(), &hdr, &payload, &image))
            });
        }
        g.finish();
    }
}

/// The frames side by side: every builder on its own ring, interleaved rounds in a rotating
/// order, medians of ns per frame, and each ÷ glibc and ÷ the limit paired per round.
fn frame_ratios() {
    let (hdr, payload) = frame_pieces();
    let frames = ring_frames();
    println!(
        "\n== net: frames into a {} MiB ring of {SLOT} B slots, {BATCH} per batch, each builder on its own ring (engine {}) ==",
        (frames * SLOT) >> 20,
        cachecopy::tune::Plan::current().tuning().engine
    );
    for shape in Shape::ALL {
        let image = shape.image(&hdr, &payload);
        let mut rings = rings(frames);
        for (v, ring) in rings.iter_mut().enumerate() {
            build(v, shape, ring.as_mut_slice(), &hdr, &payload, &image);
        }
        let mut ns = vec![Vec::new(); BUILDS.len()];
        for round in 0..15 {
            let mut order: Vec<usize> = (0..BUILDS.len()).collect();
            order.rotate_left(round % BUILDS.len());
            for v in order {
                let t = Instant::now();
                build(v, shape, rings[v].as_mut_slice(), &hdr, &payload, &image);
                ns[v].push(t.elapsed().as_nanos() as f64 / frames as f64);
            }
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!("{}:", shape.name());
        for (v, t) in ns.iter().enumerate() {
            let vs = |base: &Vec<f64>| median(t.iter().zip(base).map(|(a, b)| a / b).collect());
            println!(
                "  {:<14} {:>8.1} ns/frame  {:>6.3}x glibc  {:>6.3}x limit",
                BUILDS[v],
                median(t.clone()),
                vs(&ns[0]),
                vs(&ns[1])
            );
        }
    }
}

/// The sizes of the checksum sweep: every range a cut-over could fall in, from the IPv4 header
/// to 64 KiB: `csum_partial` is held to the kernel-style loop at each (lab/findings/checksums.md).
const SWEEP_SIZES: [usize; 19] = [
    20, 40, 52, 64, 100, 128, 200, 256, 384, 500, 512, 576, 700, 1024, 1472, 1500, 4096, 9000,
    65536,
];

/// ns per call of `f` on `data`, `calls` times, the slice's address and length opaque at every
/// call. Not inlined: each variant is timed in a loop of its own that starts at a function
/// boundary, so one variant's code does not move the other's (the rule of the report's small calls).
#[inline(never)]
fn sum_calls(data: &[u8], calls: usize, f: impl Fn(&[u8]) -> u32) -> f64 {
    let t = Instant::now();
    for _ in 0..calls {
        let p = opaque(data.as_ptr() as usize) as *const u8;
        // SAFETY: the same live slice; only the optimizer's view of it is hidden.
        let d = unsafe { std::slice::from_raw_parts(p, opaque(data.len())) };
        opaque(f(d) as usize);
    }
    t.elapsed().as_nanos() as f64 / calls as f64
}

/// CPU time (jiffies) spent by every process but this one since boot, and in all, from
/// `/proc/stat` and `/proc/self/stat` (Linux; `None` elsewhere): how much else ran during a
/// timed table, which a timing lock cannot rule out for processes outside it.
fn others_busy() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let total: u64 = cpu.iter().sum();
    let idle = cpu.get(3)? + cpu.get(4)?;
    let me = std::fs::read_to_string("/proc/self/stat").ok()?;
    let f: Vec<&str> = me.rsplit(')').next()?.split_whitespace().collect();
    let mine = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some((total - idle - mine, total))
}

/// `csum_partial` against `cachecopy_arena::csum::kernel_loop` (the loop the report's small checksums
/// run) at
/// every size of [`SWEEP_SIZES`], hot, the source 64-byte aligned and at an odd address: each
/// variant its own page-aligned buffer, the two timed in alternating order every round, the
/// ratio (loop ÷ ours: above 1, ours is faster) paired per round; medians and lower quartiles.
/// `CACHECOPY_BENCH_NET=csum` runs this table alone (under `CACHECOPY_TUNE=body=sse2` too: the
/// checksum runs on the temporal engine's registers, which need not be the widest).
fn csum_sweep(quick: bool) {
    let rounds = if quick { 11 } else { 51 };
    println!(
        "\n== net: csum_partial beside cachecopy_arena::csum::kernel_loop, hot (engine {}; {rounds} \
         rounds, alternating order; ratio = loop ÷ ours, median and lower quartile of the \
         per-round ratios) ==",
        cachecopy::tune::Plan::current().tuning().engine
    );
    println!(
        "{:>7} {:>4} {:>10} {:>10} {:>7} {:>7}",
        "size", "off", "loop ns", "ours ns", "ratio", "q1"
    );
    // `CACHECOPY_BENCH_SIZES=448,512,576` times those sizes instead (a cut-over's neighbourhood).
    let sizes: Vec<usize> = match std::env::var("CACHECOPY_BENCH_SIZES") {
        Ok(v) => v
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .expect("CACHECOPY_BENCH_SIZES: sizes in bytes")
            })
            .collect(),
        Err(_) => SWEEP_SIZES.to_vec(),
    };
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let fill = |b: &mut Buf| {
        for (i, x) in b.as_mut_slice().iter_mut().enumerate() {
            *x = (i * 7 + 3) as u8;
        }
    };
    let (mut a, mut b) = (Buf::new(largest + 128, 0), Buf::new(largest + 128, 0));
    fill(&mut a);
    fill(&mut b);
    let busy0 = others_busy();
    let mut lowest = (f64::INFINITY, 0, 0);
    for off in [64, 65] {
        for &size in &sizes {
            let (ours, base) = (
                &a.as_slice()[off..off + size],
                &b.as_slice()[off..off + size],
            );
            // The loop sums little-endian words, `csum_partial` native-endian ones.
            let k = csum_fold(kernel_loop(base));
            let k = if cfg!(target_endian = "big") {
                k.swap_bytes()
            } else {
                k
            };
            assert_eq!(csum_fold(csum_partial(ours, 0)), k, "{size} B +{off}");
            let calls = ((256 << 10) / size).clamp(4, 10_000);
            let (mut t_ours, mut t_base, mut r) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..rounds {
                let (o, k) = if round % 2 == 0 {
                    let o = sum_calls(ours, calls, |d| csum_partial(d, 0));
                    (o, sum_calls(base, calls, kernel_loop))
                } else {
                    let k = sum_calls(base, calls, kernel_loop);
                    (sum_calls(ours, calls, |d| csum_partial(d, 0)), k)
                };
                t_ours.push(o);
                t_base.push(k);
                r.push(k / o);
            }
            let q = |mut v: Vec<f64>, n: usize| {
                v.sort_by(f64::total_cmp);
                v[v.len() * n / 4]
            };
            let med = q(r.clone(), 2);
            if med < lowest.0 {
                lowest = (med, size, off % 64);
            }
            println!(
                "{:>7} {:>4} {:>10.2} {:>10.2} {:>6.2}x {:>6.2}x",
                size,
                format!("+{}", off % 64),
                q(t_base, 2),
                q(t_ours, 2),
                med,
                q(r, 1)
            );
        }
    }
    println!(
        "lowest median ratio: {:.2}x at {} B +{}",
        lowest.0, lowest.1, lowest.2
    );
    if let (Some(a), Some(b)) = (busy0, others_busy()) {
        println!(
            "other processes ran {:.1} % of the CPU time meanwhile",
            100.0 * (b.0 - a.0) as f64 / (b.1 - a.1).max(1) as f64
        );
    }
}

fn main() {
    // `CACHECOPY_BENCH_NET=csum` (or `sums`: the fused table) runs that table alone.
    match std::env::var("CACHECOPY_BENCH_NET").as_deref() {
        Ok("csum") => return csum_sweep(std::env::var_os("CACHECOPY_BENCH_QUICK").is_some()),
        Ok("sums") => return sum_ratios(std::env::var_os("CACHECOPY_BENCH_QUICK").is_some()),
        _ => {}
    }
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    frame_benches(&mut c);
    c.final_summary();
    ratios();
    sum_ratios(std::env::var_os("CACHECOPY_BENCH_QUICK").is_some());
    csum_sweep(std::env::var_os("CACHECOPY_BENCH_QUICK").is_some());
    frame_ratios();
}
