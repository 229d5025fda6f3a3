//! Streamed copies reading the source one page at a time or several at once
//! (the plan's `pages`, a plan per count), against glibc's `memcpy`, at the sizes where copies stream:
//! the figures behind the `pages=` rule (lab/findings/performance.md, "Reading pages at once").
//!
//! Each variant copies between buffers of its own, in interleaved rounds (the order rotated and
//! reversed round by round). Two source states: **memory** (source and destination flushed out
//! of the caches before every timed copy) and **cached** (the source read just before, the
//! destination flushed). Prints the median time of each variant and glibc's time ÷ its time.
//!
//! `cargo run --release -p cachecopy-probes --example stream_probe -- [--quick] [--pages=1,4]` (`--quick`: 16 and
//! 64 MiB, three rounds; else 2 MiB to 1 GiB, seven rounds; `--pages`: the page counts compared,
//! 1 and 4 by default).

use std::time::Instant;

use cachecopy::Mode;
use cachecopy_arena::rotated_order;

/// A copy under test: glibc, or cachecopy `NonTemporal` reading this many pages at once.
#[derive(Clone, Copy)]
enum Variant {
    Glibc,
    Pages(usize),
}

impl Variant {
    fn name(self) -> String {
        match self {
            Variant::Glibc => "glibc memcpy".into(),
            Variant::Pages(p) => format!("NonTemporal pages={p}"),
        }
    }
}

/// Writes every line of `buf` back and drops it from the caches. Elsewhere than x86_64 it does
/// nothing (no flush instruction is used here), so the "memory" rows there are not cold.
fn flush(buf: &[u8]) {
    #[cfg(not(target_arch = "x86_64"))]
    let _ = buf;
    #[cfg(target_arch = "x86_64")]
    for line in buf.chunks(64) {
        // SAFETY: `clflush` (SSE2, the x86_64 baseline) of an address inside `buf`.
        unsafe { core::arch::x86_64::_mm_clflush(line.as_ptr()) };
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a fence has no precondition.
    unsafe {
        core::arch::x86_64::_mm_mfence()
    };
}

/// Reads every line of `buf` (brings the source into the caches).
fn touch(buf: &[u8]) -> u64 {
    buf.iter().step_by(64).map(|&b| u64::from(b)).sum()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[16 << 20, 64 << 20]
    } else {
        &[2 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
    };
    let rounds = if quick { 3 } else { 7 };
    let cpu = cachecopy::tune::cpu();
    let rule = cachecopy::tune::Plan::current().tuning().pages;
    println!(
        "stream_probe: {} ({}), rule pages={rule}, {rounds} rounds",
        cpu.brand(),
        cpu.vendor()
    );
    let pages = std::env::args()
        .find_map(|a| a.strip_prefix("--pages=").map(str::to_owned))
        .unwrap_or_else(|| "1,4".into());
    let variants: Vec<Variant> =
        std::iter::once(Variant::Glibc)
            .chain(pages.split(',').map(|p| {
                Variant::Pages(p.parse().expect("--pages: 1, 2, 4 or 8, comma-separated"))
            }))
            .collect();
    for &len in sizes {
        let mut bufs: Vec<(Vec<u8>, Vec<u8>)> = variants
            .iter()
            .enumerate()
            .map(|(i, _)| {
                (
                    (0..len).map(|j| (j * 7 + i) as u8).collect(),
                    vec![1u8; len],
                )
            })
            .collect();
        for cached in [false, true] {
            let mut ns = vec![Vec::new(); variants.len()];
            for round in 0..rounds {
                for i in rotated_order(variants.len(), round) {
                    let (src, dst) = &mut bufs[i];
                    flush(dst);
                    if cached {
                        std::hint::black_box(touch(src));
                    } else {
                        flush(src);
                    }
                    let t = Instant::now();
                    match variants[i] {
                        Variant::Glibc => {
                            // SAFETY: two distinct buffers of `len` bytes.
                            unsafe {
                                libc::memcpy(dst.as_mut_ptr().cast(), src.as_ptr().cast(), len)
                            };
                        }
                        Variant::Pages(p) => plan(p).copy(dst, src, Mode::NonTemporal),
                    }
                    ns[i].push(t.elapsed().as_nanos() as f64);
                    assert!(
                        dst[..] == src[..],
                        "{} copied wrong bytes",
                        variants[i].name()
                    );
                }
            }
            let med: Vec<f64> = ns.iter_mut().map(|v| median(v)).collect();
            for (v, &t) in variants.iter().zip(&med) {
                println!(
                    "{:>5} MiB source {:<6} {:<22} {:>9.2} ms {:>6.2} GB/s  glibc/this {:.2}x",
                    len >> 20,
                    if cached { "cached" } else { "memory" },
                    v.name(),
                    t / 1e6,
                    len as f64 / t,
                    med[0] / t
                );
            }
        }
    }
}

/// The plan in force with `pages` pages read at once (each variant runs its own plan; nothing is
/// published).
fn plan(pages: usize) -> cachecopy::tune::Plan {
    let mut t = *cachecopy::tune::Plan::current().tuning();
    t.pages = pages;
    cachecopy::tune::Plan::new(t).expect("pages: 1, 2, 4 or 8")
}
