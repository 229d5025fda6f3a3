//! Calls of changing size: copies, fills and moves whose size, alignment and overlap change
//! every call, replaying the fleet-wide distributions Google's Fleetbench publishes
//! (Apache-2.0; `cachecopy_arena::mix`) and sizes uniform in 0-64, 65-256, 257-1024 and
//! 1025-4096 B, in an L2-sized, an LLC-sized and a cold working set: `copy_raw`, `fill_raw` and
//! `move_raw` in `Temporal` and `Auto` (the mode a constant) and `Auto` (a run-time value)
//! against glibc's `memcpy`, `memset` and `memmove` through a pointer (held in a register; every
//! variant runs in the one loop `mix::replay`, as in the report's calls of changing size), and AMD's AOCL-LibMem
//! when `CACHECOPY_LIBMEM` names a build (`cachecopy_arena::peer`; skipped with a message
//! otherwise). One criterion iteration is one slice of 1024 calls of a sequence drawn up front
//! (each iteration the next slice; a sequence covers 128 MiB of a larger set, more lines than its
//! calls touch, and moves on to the next 128 MiB each time round), every variant in its own buffers (criterion runs one variant at a
//! time: in the cold set each has the whole arena); the L2 set is read into the cache before each
//! iteration, outside the timing. Prints each variant's speed as a ratio of
//! glibc's (medians of iterations; > 1 faster). The report's calls of changing size make the same
//! comparison with interleaved rounds (lab/findings/small-calls.md).
//!
//! `cargo bench --bench mixes -- --warm-up-time 0.5 --measurement-time 2 --noplot`
//! (`CACHECOPY_BENCH_QUICK=1`: the fleet's mixes and 0-64 B, L2 and cold sets only.)

#[path = "util/mod.rs"]
mod util;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cachecopy::Mode;
use cachecopy_arena::mix::{per_call, replay, Call, Op, Sequence, Sizes};
use cachecopy_arena::peer::{self, MemcpyFn, MemsetFn};
use cachecopy_arena::Buf;
use criterion::{Criterion, Throughput};

/// Calls per criterion iteration.
const SLICE: usize = 1024;
/// Slices in a sequence: iterations go round them.
const SLICES: usize = 64;
/// The most a sequence covers: larger sets are walked a window at a time.
const WINDOW: usize = 128 << 20;

/// A timed variant: its name and the function that runs a slice of calls in a buffer.
type Run = fn(Op, *mut u8, &[Call], &Fns);

/// The C functions glibc's and LibMem's variants call.
#[derive(Clone, Copy)]
struct Fns {
    memcpy: MemcpyFn,
    memset: MemsetFn,
    memmove: MemcpyFn,
}

/// One call of each operation through C functions, every variant in the one loop
/// `mix::replay` (as the report's calls of changing size): the function's pointer and the fill's byte held in
/// registers, so that glibc's and LibMem's loops differ from ours in the call alone.
fn c_calls(op: Op, base: *mut u8, calls: &[Call], f: &Fns) {
    let f = black_box(*f);
    let (memcpy, memset, memmove) = (f.memcpy, f.memset, f.memmove);
    let byte = i32::from(black_box(0x5au8));
    // SAFETY (every arm): the sequence keeps every range inside its window, which lies in the
    // variant's buffer at `base` (see `bench`); a copy's ranges never overlap.
    unsafe {
        match op {
            Op::Copy => replay(base, calls, move |d, s, n| {
                memcpy(d.cast(), s.cast(), n);
            }),
            Op::Fill => replay(base, calls, move |d, _, n| {
                memset(d.cast(), byte, n);
            }),
            Op::Move => replay(base, calls, move |d, s, n| {
                memmove(d.cast(), s.cast(), n);
            }),
        }
    }
}

/// The constant mode of variant `M`: 0 `Temporal`, anything else `Auto`.
#[inline(always)]
fn konst<const M: u8>() -> Mode {
    if M == 0 {
        Mode::Temporal
    } else {
        Mode::Auto
    }
}

/// cachecopy with the mode `M` a constant ([`konst`], written in each closure so that it stays
/// a constant inside `replay`) or, for `RT`, `Auto` as a run-time value: loaded at every call
/// ([`per_call`]), as a per-socket policy is.
fn ours<const M: u8, const RT: bool>(op: Op, base: *mut u8, calls: &[Call], _: &Fns) {
    let mode = Mode::Auto;
    let byte = black_box(0x5au8);
    // SAFETY (every arm): as in `c_calls`.
    unsafe {
        match (op, RT) {
            (Op::Copy, false) => replay(base, calls, |d, s, n| {
                cachecopy::copy_raw(d, s, n, konst::<M>())
            }),
            (Op::Copy, true) => replay(base, calls, move |d, s, n| {
                cachecopy::copy_raw(d, s, n, per_call(&mode))
            }),
            (Op::Fill, false) => replay(base, calls, move |d, _, n| {
                cachecopy::fill_raw(d, byte, n, konst::<M>())
            }),
            (Op::Fill, true) => replay(base, calls, move |d, _, n| {
                cachecopy::fill_raw(d, byte, n, per_call(&mode))
            }),
            (Op::Move, false) => replay(base, calls, |d, s, n| {
                cachecopy::move_raw(d, s, n, konst::<M>())
            }),
            (Op::Move, true) => replay(base, calls, move |d, s, n| {
                cachecopy::move_raw(d, s, n, per_call(&mode))
            }),
        }
    }
}

/// (group, variant) → seconds per call, one per batch of iterations.
type Key = (String, String);
static RECORD: Mutex<BTreeMap<Key, Vec<f64>>> = Mutex::new(BTreeMap::new());

/// Reads a byte of every line of `buf`.
fn touch(buf: &[u8]) {
    let mut sum = 0u8;
    for line in buf.chunks(64) {
        sum = sum.wrapping_add(line[0]);
    }
    black_box(sum);
}

fn bench(c: &mut Criterion) {
    let quick = std::env::var_os("CACHECOPY_BENCH_QUICK").is_some();
    let glibc = Fns {
        memcpy: libc::memcpy as MemcpyFn,
        memset: libc::memset as MemsetFn,
        memmove: libc::memmove as MemcpyFn,
    };
    let libmem = match peer::libmem(None) {
        Ok(Some(l)) => {
            println!("LibMem: {}", l.path.display());
            Some(Fns {
                memcpy: l.peer.memcpy,
                memset: l.peer.memset,
                memmove: l.peer.memmove,
            })
        }
        Ok(None) => {
            println!(
                "LibMem: skipped ({}=PATH names a build; lab/findings/small-calls.md)",
                peer::ENV
            );
            None
        }
        Err(e) => {
            println!("LibMem: skipped ({e})");
            None
        }
    };
    let mut variants: Vec<(&str, Run, Fns)> = vec![("glibc", c_calls, glibc)];
    if let Some(l) = libmem {
        variants.push(("LibMem", c_calls, l));
    }
    variants.extend([
        ("Temporal", ours::<0, false> as Run, glibc),
        ("Auto", ours::<3, false>, glibc),
        ("Auto rt", ours::<3, true>, glibc),
    ]);
    let nv = variants.len();

    let caches = cachecopy::tune::cpu().caches;
    let l2 = caches.l2.unwrap_or(1 << 20);
    let llc = caches.l3.unwrap_or(16 * l2);
    let pow2 = |n: usize| 1usize << (usize::BITS - 1 - n.max(1).leading_zeros());
    let mut sets = vec![("L2", pow2(l2 / 2))];
    if !quick {
        sets.push(("LLC", pow2((llc / (2 * nv)).max(4 * l2))));
    }
    // Cold: criterion runs one variant at a time, so each has the whole arena while it runs
    // (the lines the variant before it left are as cold as its own).
    let mut arena = util::arena(1 << 20);
    sets.push(("cold", arena.len() & !(WINDOW - 1)));
    let mixes: Vec<Sizes> = if quick {
        vec![Sizes::Fleet, Sizes::Uniform(0, 64)]
    } else {
        Sizes::all()
    };

    for &(set, bytes) in &sets {
        // A sequence covers one window of the set; each time the iterations have gone round
        // its slices they move on to the next window, so a line comes back only after the
        // whole set has been walked.
        let window = bytes.min(WINDOW);
        let mut own: Vec<Buf> = if set == "cold" {
            Vec::new()
        } else {
            (0..nv).map(|_| Buf::new(bytes, 0x3c)).collect()
        };
        let cold = if set == "cold" {
            Some(arena.hot(bytes).as_mut_ptr())
        } else {
            None
        };
        let bases: Vec<*mut u8> = match cold {
            Some(p) => vec![p; nv],
            None => own
                .iter_mut()
                .map(|b| b.as_mut_slice().as_mut_ptr())
                .collect(),
        };
        for op in Op::ALL {
            for (k, &sizes) in mixes.iter().enumerate() {
                let seq = Sequence::new(
                    op,
                    sizes,
                    window,
                    SLICE * SLICES,
                    (k as u64) << 8 | op as u64,
                );
                let name = format!("mixes {}/{sizes}/{set} {}", op.name(), util::human(bytes));
                let mut g = c.benchmark_group(&name);
                g.throughput(Throughput::Elements(SLICE as u64));
                for (i, &(vname, run, fns)) in variants.iter().enumerate() {
                    let base = bases[i];
                    let (mut next, mut lap) = (0, 0);
                    g.bench_function(vname, |b| {
                        b.iter_custom(|iters| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let calls = &seq.calls[next * SLICE..(next + 1) * SLICE];
                                let at = base.wrapping_add(lap * window);
                                next = (next + 1) % SLICES;
                                if next == 0 {
                                    lap = (lap + 1) % (bytes / window);
                                }
                                if set == "L2" {
                                    // SAFETY: `at` starts the variant's own `bytes`-byte buffer
                                    // (one window), which nothing else uses meanwhile.
                                    touch(unsafe { std::slice::from_raw_parts(at, bytes) });
                                }
                                let t = Instant::now();
                                run(op, at, calls, &fns);
                                total += t.elapsed();
                            }
                            RECORD
                                .lock()
                                .unwrap()
                                .entry((name.clone(), vname.to_string()))
                                .or_default()
                                .push(total.as_secs_f64() / (iters as f64 * SLICE as f64));
                            total
                        })
                    });
                }
                g.finish();
            }
        }
        drop(own);
    }
    print_ratios(&variants.iter().map(|v| v.0).collect::<Vec<_>>());
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A line per group: glibc's ns per call, then each variant's speed ÷ glibc's.
fn print_ratios(names: &[&str]) {
    let mut rec = RECORD.lock().unwrap();
    let groups: Vec<String> = {
        let mut g: Vec<String> = rec.keys().map(|k| k.0.clone()).collect();
        g.dedup();
        g
    };
    println!("\nCalls of changing size: glibc ns per call, then glibc's time ÷ each variant's (medians; > 1 = faster)");
    print!("{:<44} {:>9}", "group", "glibc ns");
    for n in &names[1..] {
        print!(" {n:>9}");
    }
    println!();
    for g in groups {
        let mut med = |n: &str| rec.get_mut(&(g.clone(), n.to_string())).map(|v| median(v));
        let Some(base) = med("glibc") else { continue };
        print!("{g:<44} {:>9.2}", base * 1e9);
        for n in &names[1..] {
            match med(n) {
                Some(t) => print!(" {:>8.2}x", base / t),
                None => print!(" {:>9}", "-"),
            }
        }
        println!();
    }
}

fn main() {
    util::run(bench);
}
