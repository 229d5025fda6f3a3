//! Shared bench plumbing: destination pools for hot/cold runs, a recorder of per-iteration
//! times taken through criterion's `iter_custom`, and the ratio tables each bench prints.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::Bencher;

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

/// `hot` or `cold` destination.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Temp {
    Hot,
    Cold,
}

impl Temp {
    pub fn name(self) -> &'static str {
        match self {
            Temp::Hot => "hot",
            Temp::Cold => "cold",
        }
    }
}

/// Destination slots: one slot re-used (hot), or slots spread over 192 MiB, far more than the
/// 32 MiB L3, visited round-robin 4 KiB apart at least, so every write finds a cold line (cold).
pub struct Pool {
    buf: Vec<u8>,
    size: usize,
    stride: usize,
    slots: usize,
    next: usize,
}

impl Pool {
    pub fn new(size: usize, temp: Temp) -> Pool {
        let stride = (size.div_ceil(4096) * 4096 + 4096).max(8192);
        let slots = match temp {
            Temp::Hot => 1,
            Temp::Cold => ((192usize << 20) / stride).max(3),
        };
        let mut buf = vec![0u8; stride * slots + 64];
        // Touch every page so cold means "not cached", not "not mapped".
        for p in buf.chunks_mut(4096) {
            p[0] = 1;
        }
        Pool {
            buf,
            size,
            stride,
            slots,
            next: 0,
        }
    }

    /// The next destination slot.
    pub fn next(&mut self) -> &mut [u8] {
        let i = self.next;
        // No `%`: a division per call would sit in the timed loop's dependency chain (~4 ns).
        self.next = if i + 1 == self.slots { 0 } else { i + 1 };
        let at = i * self.stride;
        &mut self.buf[at..at + self.size]
    }
}

/// (group, size, temperature, variant).
type Key = (String, usize, Temp, String);

static RECORD: Mutex<BTreeMap<Key, Vec<f64>>> = Mutex::new(BTreeMap::new());

/// Times `f` through criterion and records seconds per iteration under (group, size, temp, name).
pub fn timed(b: &mut Bencher, key: (&str, usize, Temp, &str), mut f: impl FnMut()) {
    b.iter_custom(|iters| {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        let d: Duration = t.elapsed();
        let (g, s, temp, n) = key;
        RECORD
            .lock()
            .unwrap()
            .entry((g.to_string(), s, temp, n.to_string()))
            .or_default()
            .push(d.as_secs_f64() / iters as f64);
        d
    });
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Prints, for `group`, a table per temperature: size, baseline GB/s, and each variant's speed
/// as a ratio of the baseline's (baseline time / variant time; > 1 is faster).
pub fn print_ratios(group: &str, baseline: &str) {
    let mut rec = RECORD.lock().unwrap();
    let mut names: Vec<String> = Vec::new();
    for (g, _, _, n) in rec.keys() {
        if g == group && n != baseline && !names.contains(n) {
            names.push(n.clone());
        }
    }
    for temp in [Temp::Hot, Temp::Cold] {
        let sizes: Vec<usize> = {
            let mut s: Vec<usize> = rec
                .keys()
                .filter(|k| k.0 == group && k.2 == temp)
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
            temp.name()
        );
        print!("{:>10} {:>10}", "size", format!("{baseline} GB/s"));
        for n in &names {
            print!(" {:>16}", n);
        }
        println!();
        for s in sizes {
            let key = |n: &str| (group.to_string(), s, temp, n.to_string());
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
