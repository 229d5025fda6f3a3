//! Section 8: small calls, where network stacks and allocators make most of theirs (headers,
//! ACKs, small datagrams, small `calloc`/`realloc`, IP header checksums).
//!
//! Nanoseconds per call at 1 B to 1 KiB, the length opaque to the compiler (`measure::opaque` per
//! call), into a hot destination (the same buffer every call) and a cold one (a new slot of the
//! arena's scattered walk every call), at destination offsets 0, 5 and 24 (a buffer behind a
//! header): `copy_raw` in `Temporal` and `Auto` against glibc `memcpy`, `fill_raw` in `Temporal`
//! against glibc `memset`, both glibc functions called for real through a pointer the compiler
//! cannot see through (as a call through the PLT), never inlined or turned into a builtin; and
//! `net::csum_partial` against a kernel-style scalar loop (8-byte words, end-around carry).
//! Every variant has its own buffers; the variants of one size run interleaved, in a fresh
//! order every round, and each ratio is paired per round (glibc's time ÷ ours: above 1, ours
//! is faster).

use std::ffi::c_void;
use std::hint::black_box;
use std::time::Instant;

use cachecopy::Mode;
use cachecopy_arena::csum::kernel_loop;

use crate::measure::{opaque, round_order, Buf, Dest};
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, ratio, size};

/// The sizes of the copy and fill tables.
const SIZES: [usize; 17] = [
    1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
];
/// The checksum sizes: IPv4 and IPv6 headers, a minimal frame, up to a full Ethernet payload.
const CSUM_SIZES: [usize; 6] = [20, 40, 64, 128, 256, 1472];
/// How far into its page the source of every call starts (see [`section`]).
const SRC_SKEW: usize = 2048 + 64;
/// Destination offsets: aligned, odd, and behind a 24-byte header.
const OFFSETS: [usize; 3] = [0, 5, 24];

/// `memcpy`'s and `memset`'s C signatures.
type MemcpyFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void;
type MemsetFn = unsafe extern "C" fn(*mut c_void, i32, usize) -> *mut c_void;

/// One timed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Memcpy,
    Copy(Mode),
    Memset,
    Fill(Mode),
    KernelLoop,
    Csum,
}

impl Call {
    fn name(self) -> String {
        match self {
            Call::Memcpy => "memcpy".into(),
            Call::Memset => "memset".into(),
            Call::Copy(m) => format!("copy {m}"),
            Call::Fill(m) => format!("fill {m}"),
            Call::KernelLoop => "scalar loop".into(),
            Call::Csum => "csum_partial".into(),
        }
    }

    /// Runs the call once per destination in `dsts`, from `src`, `len` bytes; ns per call.
    fn time(self, dsts: &[*mut u8], src: *const u8, len: usize) -> f64 {
        // SAFETY (every arm): each destination and the source are valid for `len` bytes (see
        // `Buffers`), in distinct buffers.
        match self {
            Call::Memcpy => {
                let f: MemcpyFn = black_box(libc::memcpy as MemcpyFn);
                each(dsts, |d| unsafe {
                    f(d.cast(), src.cast(), opaque(len));
                })
            }
            Call::Memset => {
                let f: MemsetFn = black_box(libc::memset as MemsetFn);
                each(dsts, |d| unsafe {
                    f(d.cast(), opaque(0x5a) as i32, opaque(len));
                })
            }
            Call::Copy(Mode::Temporal) => each(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), Mode::Temporal)
            }),
            Call::Copy(Mode::Auto) => each(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), Mode::Auto)
            }),
            Call::Copy(m) => each(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), m)
            }),
            Call::Fill(Mode::Temporal) => each(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), Mode::Temporal)
            }),
            Call::Fill(m) => each(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), m)
            }),
            Call::KernelLoop => each(dsts, |_| {
                // SAFETY: `src` is valid for `len` bytes.
                let data = unsafe { std::slice::from_raw_parts(src, opaque(len)) };
                opaque(kernel_loop(data) as usize);
            }),
            Call::Csum => each(dsts, |_| {
                // SAFETY: as above.
                let data = unsafe { std::slice::from_raw_parts(src, opaque(len)) };
                opaque(cachecopy::net::csum_partial(data, 0) as usize);
            }),
        }
    }
}

/// Times `f` over every destination; ns per call. Not inlined: each variant's closure makes a
/// function of its own, so the loop a variant is timed in starts at a function boundary and
/// does not move when another variant's code changes (inlined into one function, the hot 96-256 B
/// copies read 0.70x or 1.35x of `memcpy` from one build to the next with the copy's own code
/// unchanged).
#[inline(never)]
fn each(dsts: &[*mut u8], mut f: impl FnMut(*mut u8)) -> f64 {
    let t = Instant::now();
    for &d in dsts {
        f(d);
        opaque(d as usize);
    }
    t.elapsed().as_nanos() as f64 / dsts.len().max(1) as f64
}

/// One row of a table: a size, and per (destination, offset) the ratio of the baseline's time
/// to the variant's, with both times at the first column.
#[derive(Clone, Debug)]
struct Row {
    size: usize,
    base_ns: f64,
    ours_ns: f64,
    ratios: Vec<Summary>,
}

/// How many rounds and calls per sample.
struct Budget {
    rounds: usize,
    hot_calls: usize,
    cold_calls: usize,
}

/// Measures `calls` (the baseline first) at every size, destination and offset of `cols`;
/// returns per variant after the baseline its rows.
fn measure(
    s: &mut Session,
    calls: &[Call],
    sizes: &[usize],
    cols: &[(Dest, usize)],
    b: &Budget,
) -> Vec<Vec<Row>> {
    // Each variant its own hot source and destination, 4 KiB apart from the others'.
    let mut hot: Vec<(Buf, Buf)> = calls
        .iter()
        .map(|_| (Buf::new(8192, 0x5a), Buf::new(4096, 0)))
        .collect();
    let mut out = vec![Vec::new(); calls.len() - 1];
    let mut dsts: Vec<*mut u8> = Vec::new();
    for &len in sizes {
        let mut rows: Vec<Row> = (1..calls.len())
            .map(|_| Row {
                size: len,
                base_ns: 0.0,
                ours_ns: 0.0,
                ratios: Vec::new(),
            })
            .collect();
        for (c, &(dest, offset)) in cols.iter().enumerate() {
            let n = match dest {
                Dest::Hot => b.hot_calls,
                Dest::Cold => b.cold_calls,
            };
            let mut ns = vec![Vec::with_capacity(b.rounds); calls.len()];
            for round in 0..=b.rounds {
                for i in round_order(calls.len(), round) {
                    let (src, dst) = &mut hot[i];
                    let src = src.as_slice()[SRC_SKEW..].as_ptr();
                    dsts.clear();
                    match dest {
                        Dest::Hot => {
                            let d = dst.as_mut_slice()[offset..].as_mut_ptr();
                            dsts.resize(n, d);
                        }
                        Dest::Cold => {
                            for _ in 0..n {
                                let slot = s.arena.cold(len + offset);
                                dsts.push(slot[offset..].as_mut_ptr());
                            }
                        }
                    }
                    let t = calls[i].time(&dsts, src, len);
                    // Round 0 warms code, TLB and dispatch up; it is not kept.
                    if round > 0 {
                        ns[i].push(t);
                    }
                }
            }
            let median = |v: &[f64]| Summary::of(v).expect("rounds ≥ 1").median;
            for (k, row) in rows.iter_mut().enumerate() {
                if c == 0 {
                    row.base_ns = median(&ns[0]);
                    row.ours_ns = median(&ns[k + 1]);
                }
                row.ratios
                    .push(paired_ratio(&ns[0], &ns[k + 1]).expect("rounds ≥ 1"));
            }
        }
        for (k, row) in rows.into_iter().enumerate() {
            out[k].push(row);
        }
    }
    out
}

/// Runs section 8 and prints it.
pub fn section(s: &mut Session) {
    s.start("8. small calls");
    let t0 = Instant::now();
    let tiny = s.plan.sample_bytes < (1 << 20);
    let quick = s.plan.samples < 11;
    let b = if tiny {
        Budget {
            rounds: 2,
            hot_calls: 50,
            cold_calls: 10,
        }
    } else if quick {
        Budget {
            rounds: 9,
            hot_calls: 4000,
            cold_calls: 400,
        }
    } else {
        Budget {
            rounds: 31,
            hot_calls: 20_000,
            cold_calls: 2000,
        }
    };
    let cols: Vec<(Dest, usize)> = Dest::ALL
        .into_iter()
        .flat_map(|d| OFFSETS.map(|o| (d, o)))
        .collect();
    let copies = [
        Call::Memcpy,
        Call::Copy(Mode::Temporal),
        Call::Copy(Mode::Auto),
    ];
    let copy = measure(s, &copies, &SIZES, &cols, &b);
    let fills = [Call::Memset, Call::Fill(Mode::Temporal)];
    let fill = measure(s, &fills, &SIZES, &cols, &b);
    let sums = [Call::KernelLoop, Call::Csum];
    let csum = measure(s, &sums, &CSUM_SIZES, &[(Dest::Hot, 0)], &b);

    let mut t = format!(
        "8. Small calls: ns per call (median of {} interleaved rounds of {} calls hot, {} cold), \
         the length opaque; ratio = the baseline's time ÷ ours, paired per round (above 1.00x: \
         ours is faster); columns: destination and its offset; engine: {}\n",
        b.rounds,
        b.hot_calls,
        b.cold_calls,
        cachecopy::engine()
    );
    let header = |base: &str, ours: &str, cols: &[(Dest, usize)]| {
        let mut h = vec![
            "size".to_string(),
            format!("{base} ns"),
            format!("{ours} ns"),
        ];
        h.extend(cols.iter().map(|(d, o)| format!("{} +{o}", d.name())));
        h
    };
    let table = |t: &mut String, title: &str, base: Call, ours: Call, rows: &[Row], cols| {
        t.push_str(&format!("\n{title}\n"));
        let grid: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let mut cells = vec![size(r.size), num(r.base_ns), num(r.ours_ns)];
                cells.extend(r.ratios.iter().map(ratio));
                cells
            })
            .collect();
        t.push_str(&text::grid(
            &header(&base.name(), &ours.name(), cols),
            &grid,
        ));
        let worst = rows
            .iter()
            .flat_map(|r| r.ratios.iter().map(move |x| (x.median, r.size)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((w, at)) = worst {
            t.push_str(&format!("   lowest ratio: {w:.2}x at {}\n", size(at)));
        }
    };
    let hot0 = "(ns columns: hot, offset 0)";
    table(
        &mut t,
        &format!("8a. copy_raw Temporal vs glibc memcpy {hot0}"),
        Call::Memcpy,
        Call::Copy(Mode::Temporal),
        &copy[0],
        &cols,
    );
    table(
        &mut t,
        &format!("8b. copy_raw Auto vs glibc memcpy {hot0}"),
        Call::Memcpy,
        Call::Copy(Mode::Auto),
        &copy[1],
        &cols,
    );
    table(
        &mut t,
        &format!("8c. fill_raw Temporal vs glibc memset {hot0}"),
        Call::Memset,
        Call::Fill(Mode::Temporal),
        &fill[0],
        &cols,
    );
    table(
        &mut t,
        "8d. net::csum_partial vs a kernel-style scalar loop (8-byte words, end-around carry), \
         source hot and aligned",
        Call::KernelLoop,
        Call::Csum,
        &csum[0],
        &[(Dest::Hot, 0)],
    );
    t.push_str(&format!("   ({:.1} s)\n\n", t0.elapsed().as_secs_f64()));
    s.print(&t);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_loop_is_the_internet_checksum() {
        // RFC 1071's example words 0001 f203 f4f5 f6f7, summed big-endian: ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let fold = |s: u32| {
            let s = (s >> 16) + (s & 0xffff);
            ((s >> 16) + s) as u16
        };
        assert_eq!(fold(kernel_loop(&data)).swap_bytes(), 0xddf2);
        // Odd tails and long buffers agree with the library.
        let long: Vec<u8> = (0..1473u32).map(|i| (i * 31 + 7) as u8).collect();
        for n in [0, 1, 7, 9, 20, 40, 1473] {
            let ours = fold(kernel_loop(&long[..n]));
            let lib = fold(cachecopy::net::csum_partial(&long[..n], 0));
            assert_eq!(ours, lib, "{n} bytes");
        }
    }

    #[test]
    fn every_call_does_its_job() {
        let src: Vec<u8> = (0..64u8).collect();
        for call in [
            Call::Memcpy,
            Call::Copy(Mode::Temporal),
            Call::Copy(Mode::Auto),
        ] {
            let mut d = vec![0u8; 64];
            call.time(&[d.as_mut_ptr()], src.as_ptr(), 64);
            assert_eq!(d, src, "{call:?}");
        }
        for call in [Call::Memset, Call::Fill(Mode::Temporal)] {
            let mut d = vec![0u8; 64];
            call.time(&[d.as_mut_ptr()], src.as_ptr(), 64);
            assert!(d.iter().all(|&b| b == 0x5a), "{call:?}");
        }
    }
}
