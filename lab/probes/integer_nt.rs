//! The integer-only streaming copy (the `generic` backend's `NonTemporal`: `movnti` from
//! general-purpose registers, what soft-float and `cachecopy_integer_only` builds run) against
//! glibc `memcpy` and the vector backends, into a cold destination, 16 KiB .. 64 MiB.
//!
//! Interleaved: every round runs every variant once, in a fresh shuffled order, so a noisy
//! neighbour slows all variants alike; the table prints each variant's median and its ratio to
//! glibc (> 1: faster than glibc).
//!
//! `cargo run --release -p cachecopy-probes --example integer_nt [rounds [min_kib [max_kib]]]` (31 rounds, 16 KiB ..
//! 64 MiB by factors of 4)

use std::hint::black_box;
use std::time::Instant;

use cachecopy::raw::copy_with;
use cachecopy::tune::Backend;
use cachecopy::Mode;

/// Destination slots spread over far more than any last-level cache, visited round-robin, so
/// every copy writes lines that are in no cache ("cold").
struct Pool {
    buf: Vec<u8>,
    size: usize,
    stride: usize,
    slots: usize,
    next: usize,
}

impl Pool {
    fn new(size: usize, span: usize) -> Pool {
        let stride = size.div_ceil(4096) * 4096 + 4096;
        let slots = (span / stride).max(3);
        let mut buf = vec![0u8; stride * slots];
        // Touch every page so "cold" means not cached, not "not mapped".
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

    fn next(&mut self) -> &mut [u8] {
        let i = self.next;
        self.next = if i + 1 == self.slots { 0 } else { i + 1 };
        &mut self.buf[i * self.stride..i * self.stride + self.size]
    }
}

#[derive(Clone, Copy)]
enum Variant {
    Glibc,
    Copy(Backend, Mode),
}

impl Variant {
    fn name(self) -> String {
        match self {
            Variant::Glibc => "glibc memcpy".into(),
            Variant::Copy(b, Mode::NonTemporal) => format!("{b} nt"),
            Variant::Copy(b, _) => format!("{b} t"),
        }
    }

    fn run(self, dst: &mut [u8], src: &[u8]) {
        match self {
            // SAFETY: two live, disjoint slices of the same length.
            Variant::Glibc => unsafe {
                libc::memcpy(dst.as_mut_ptr().cast(), src.as_ptr().cast(), src.len());
            },
            Variant::Copy(b, m) => copy_with(b, dst, src, m).unwrap(),
        }
    }
}

/// SplitMix64: a fresh variant order every round.
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut s = seed;
    for i in (1..v.len()).rev() {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        v.swap(i, (z % (i as u64 + 1)) as usize);
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (rounds, min, max) = (arg(1, 31), arg(2, 16) << 10, arg(3, 64 << 10) << 10);
    let cpu = cachecopy::tune::cpu();
    // Cold: the pool spans three last-level caches (at least 768 MiB).
    let span = (3 * cpu.caches.l3.unwrap_or(0)).max(768 << 20);
    println!(
        "cpu: {} ({}); backends {:?}; {rounds} interleaved rounds; cold pool {} MiB",
        cpu.brand(),
        cpu.vendor(),
        Backend::supported(),
        span >> 20
    );

    let mut variants = vec![
        Variant::Glibc,
        Variant::Copy(Backend::Generic, Mode::NonTemporal),
        Variant::Copy(Backend::Generic, Mode::Temporal),
    ];
    for &b in Backend::supported()
        .iter()
        .filter(|&&b| b != Backend::Generic)
    {
        variants.push(Variant::Copy(b, Mode::NonTemporal));
    }
    let names: Vec<String> = variants.iter().map(|v| v.name()).collect();
    print!("{:>8}", "size");
    for n in &names {
        print!(" {n:>22}");
    }
    println!("\n{:>8} (median GB/s, and ratio to glibc memcpy)", "");

    let mut size = min;
    while size <= max {
        // The source at SRC_OFF bytes past a line boundary (default 0; glibc's malloc hands
        // out large blocks 16 bytes past a page boundary).
        let src_off: usize = std::env::var("SRC_OFF")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let backing = vec![0x5au8; size + 64];
        let start = backing.as_ptr().align_offset(64) + src_off;
        let src = &backing[start..start + size];
        let mut pool = Pool::new(size, span);
        // About 4 MiB per timed sample, at least one copy.
        let reps = ((4 << 20) / size).max(1);
        let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); variants.len()];
        let mut order: Vec<usize> = (0..variants.len()).collect();
        for round in 0..rounds + 1 {
            shuffle(&mut order, round as u64);
            for &i in &order {
                let v = variants[i];
                let t = Instant::now();
                for _ in 0..reps {
                    v.run(black_box(pool.next()), black_box(src));
                }
                let ns = t.elapsed().as_nanos() as f64 / reps as f64;
                // Round 0 warms up (page tables, code) and is not recorded.
                if round > 0 {
                    times[i].push(ns);
                }
            }
        }
        let med: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
        let human = if size >= 1 << 20 {
            format!("{}MiB", size >> 20)
        } else {
            format!("{}KiB", size >> 10)
        };
        print!("{human:>8}");
        for m in &med {
            let gbs = size as f64 / m;
            print!(" {:>13.2} {:>7.2}x", gbs, med[0] / m);
        }
        println!();
        size *= 4;
    }
}
