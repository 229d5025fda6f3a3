//! Shared bench plumbing: the hot/cold destination arena (the report's, from `cachecopy-arena`),
//! a recorder of per-iteration times taken through criterion's `iter_custom`, and the ratio
//! tables each bench prints.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cachecopy::tune::Backend;
use cachecopy::Mode;
use criterion::measurement::WallTime;
use criterion::{Bencher, BenchmarkGroup, Criterion, Throughput};

pub use cachecopy_arena::{Arena, Dest};

/// The mode as a run-time value, as a per-socket policy is: a byte in memory, loaded at each
/// call (3: `Auto`).
pub static RUN_TIME_MODE: AtomicU8 = AtomicU8::new(3);

/// [`RUN_TIME_MODE`] as a `Mode`.
#[inline(always)]
pub fn run_time_mode() -> Mode {
    match RUN_TIME_MODE.load(Ordering::Relaxed) {
        0 => Mode::Temporal,
        1 => Mode::NonTemporal,
        2 => Mode::FlushCache,
        _ => Mode::Auto,
    }
}

/// The mode of the benchmark variant `M` of the callgrind benches: 0 `Temporal` and 3 `Auto`
/// (constants once inlined), anything else [`run_time_mode`].
#[inline(always)]
pub fn mode<const M: u8>() -> Mode {
    match M {
        0 => Mode::Temporal,
        3 => Mode::Auto,
        _ => run_time_mode(),
    }
}

/// Runs one copy and one fill, so that the dispatcher's detection is not in a measured call.
pub fn warm_dispatch() {
    let mut warm = [0u8; 4096];
    cachecopy::copy(&mut warm, &[1; 4096], Mode::Temporal);
    cachecopy::fill(&mut warm, 0, Mode::Temporal);
}

// The callgrind benches call each variant through a function of its own with the C ABI, so
// that every variant is one call from the same kind of caller; the copy and move ones follow.

/// glibc `memcpy`, through the PLT (a tail jump).
///
/// # Safety
/// `s` readable and `d` writable for `n` bytes, not overlapping.
#[inline(never)]
pub unsafe extern "C" fn glibc_memcpy(d: *mut u8, s: *const u8, n: usize) {
    // SAFETY: the caller's buffers hold `n` bytes each and do not overlap.
    unsafe { libc::memcpy(d.cast(), s.cast(), n) };
}

/// glibc `memmove`, through the PLT.
///
/// # Safety
/// `s` readable and `d` writable for `n` bytes; they may overlap.
#[inline(never)]
pub unsafe extern "C" fn glibc_memmove(d: *mut u8, s: *const u8, n: usize) {
    // SAFETY: the caller's ranges hold `n` bytes each; `memmove` allows overlap.
    unsafe { libc::memmove(d.cast(), s.cast(), n) };
}

/// cachecopy's copy in mode `M` ([`mode`]: 0 Temporal, 3 Auto, 9 the run-time mode).
///
/// # Safety
/// As [`glibc_memcpy`].
#[inline(never)]
pub unsafe extern "C" fn copy<const M: u8>(d: *mut u8, s: *const u8, n: usize) {
    // SAFETY: as `glibc_memcpy`.
    unsafe { cachecopy::copy_raw(d, s, n, mode::<M>()) }
}

/// cachecopy's move in mode `M` ([`mode`]).
///
/// # Safety
/// As [`glibc_memmove`].
#[inline(never)]
pub unsafe extern "C" fn moves<const M: u8>(d: *mut u8, s: *const u8, n: usize) {
    // SAFETY: as `glibc_memmove`; `move_raw` allows overlap.
    unsafe { cachecopy::move_raw(d, s, n, mode::<M>()) }
}

/// Sizes 64 B .. `max` by factors of 4.
pub fn sizes(max: usize) -> Vec<usize> {
    let quick = std::env::var_os("CACHECOPY_BENCH_QUICK").is_some();
    let mut v = Vec::new();
    let mut s = 64;
    while s <= max {
        v.push(s);
        s *= if quick { 16 } else { 4 };
    }
    v
}

/// Runs `bench` with criterion's command-line configuration and prints criterion's summary;
/// each bench's `main` prints its own lines after it.
pub fn run(bench: fn(&mut Criterion)) {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}

/// The group `name/dest/size` (the size in `human` units) with its byte throughput; from
/// 16 MiB, 10 samples (each takes long enough there).
pub fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    dest: Dest,
    size: usize,
) -> BenchmarkGroup<'c, WallTime> {
    let mut g = c.benchmark_group(format!("{name}/{}/{}", dest.name(), human(size)));
    g.throughput(Throughput::Bytes(size as u64));
    if size >= 16 << 20 {
        g.sample_size(10);
    }
    g
}

/// Every supported backend with `Temporal` and `NonTemporal`, named `backend-t` / `backend-nt`.
pub fn backend_variants() -> impl Iterator<Item = (Backend, Mode, String)> {
    Backend::supported().iter().flat_map(|&backend| {
        [(Mode::Temporal, "t"), (Mode::NonTemporal, "nt")]
            .map(|(mode, m)| (backend, mode, format!("{}-{m}", backend.name())))
    })
}

/// One arena for every destination of a bench, hot and cold, of up to `largest` bytes, sized
/// by the shared rule from this machine's last-level cache (see `cachecopy_arena`).
pub fn arena(largest: usize) -> Arena {
    let caches = cachecopy::tune::cpu().caches;
    Arena::new(caches.l3.or(caches.l2), largest)
}

/// (group, size, destination, variant).
type Key = (String, usize, Dest, String);

static RECORD: Mutex<BTreeMap<Key, Vec<f64>>> = Mutex::new(BTreeMap::new());

/// Times `f` through criterion and records seconds per iteration under (group, size, dest, name).
pub fn timed(b: &mut Bencher, key: (&str, usize, Dest, &str), mut f: impl FnMut()) {
    b.iter_custom(|iters| {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let d: Duration = t.elapsed();
        let (g, s, dest, n) = key;
        RECORD
            .lock()
            .unwrap()
            .entry((g.to_string(), s, dest, n.to_string()))
            .or_default()
            .push(d.as_secs_f64() / iters as f64);
        d
    });
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Prints, for `group`, a table per destination: size, baseline GB/s, and each variant's speed
/// as a ratio of the baseline's (baseline time / variant time; > 1 is faster).
pub fn print_ratios(group: &str, baseline: &str) {
    let mut rec = RECORD.lock().unwrap();
    let mut names: Vec<String> = Vec::new();
    for (g, _, _, n) in rec.keys() {
        if g == group && n != baseline && !names.contains(n) {
            names.push(n.clone());
        }
    }
    for dest in Dest::ALL {
        let sizes: Vec<usize> = {
            let mut s: Vec<usize> = rec
                .keys()
                .filter(|k| k.0 == group && k.2 == dest)
                .map(|k| k.1)
                .collect();
            s.dedup();
            s
        };
        if sizes.is_empty() {
            continue;
        }
        println!(
            "\n{group}, {} destination: speed relative to {baseline} (medians; >1 = faster)",
            dest.name()
        );
        print!("{:>10} {:>10}", "size", format!("{baseline} GB/s"));
        for n in &names {
            print!(" {:>16}", n);
        }
        println!();
        for s in sizes {
            let key = |n: &str| (group.to_string(), s, dest, n.to_string());
            let Some(base) = rec.get_mut(&key(baseline)).map(|v| median(v)) else {
                continue;
            };
            print!("{:>10} {:>10.2}", human(s), s as f64 / base / 1e9);
            for n in &names {
                match rec.get_mut(&key(n)) {
                    Some(v) => print!(" {:>16.2}", base / median(v)),
                    None => print!(" {:>16}", "-"),
                }
            }
            println!();
        }
    }
}

pub fn human(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}
