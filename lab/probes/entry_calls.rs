//! What a call of `memcpy`, `memmove` or `memset` costs by the way it is reached: glibc's through
//! a pointer (what a PLT call lands in), the crate's C entry of the published plan through a
//! pointer (what a GNU indirect function bound to it would cost a caller: `raw::c_entries`), and
//! the exported functions of each library named with `--lib` (the preload library: its exports
//! jump through a slot into the same entries; an older build reads a state byte first), loaded
//! with `dlopen(RTLD_LOCAL)` as the report's `--libmem` loads a peer.
//!
//! ```sh
//! cargo run --release -p cachecopy-probes --example entry_calls -- --lib target/x86_64-unknown-linux-gnu/release/libcachecopy_preload.so
//! # instruction counts of one way, one mix, as callgrind counts them (lab/findings/preload.md):
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
//!     --toggle-collect='*entry_calls::measure*' target/release/examples/entry_calls \
//!     --lib LIB --only 'preload memcpy' --mix 0-64 --callgrind
//! ```
//!
//! Timing: calls of changing size from a fixed pseudo-random sequence (uniform in the mix's
//! range), 15 interleaved rounds of 100 000 calls, destinations walking a 64 KiB set (hot);
//! medians, and glibc's time over each way's, paired per round. With `--callgrind` each way
//! runs once, for the instruction count (callgrind's total for the toggled function, divided
//! by the calls, is the cost of one call with the loop's few instructions).

use std::ffi::{c_int, c_void, CString};
use std::time::Instant;

type Move = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void;
type Set = unsafe extern "C" fn(*mut c_void, c_int, usize) -> *mut c_void;

/// One way to reach a call.
#[derive(Clone, Copy)]
enum Way {
    Move(Move),
    Set(Set),
}

const CALLS: usize = 100_000;
const SET_BYTES: usize = 64 << 10;

/// The mixes: uniform sizes in `lo..=hi`.
const MIXES: [(&str, usize, usize); 6] = [
    ("0-64", 0, 64),
    ("65-256", 65, 256),
    ("257-1024", 257, 1024),
    ("8", 8, 8),
    ("48", 48, 48),
    ("200", 200, 200),
];

/// A fixed pseudo-random size sequence in `lo..=hi` (xorshift).
fn sizes(lo: usize, hi: usize) -> Vec<u32> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..CALLS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (lo + (x as usize) % (hi - lo + 1)) as u32
        })
        .collect()
}

/// Runs the calls of `sizes` through `way`, destinations and sources walking the sets.
#[inline(never)]
fn measure(way: Way, dst: &mut [u8], src: &[u8], sizes: &[u32]) {
    let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
    let mut at = 0usize;
    for &n in sizes {
        let n = n as usize;
        // SAFETY: `at + n <= SET_BYTES + 1024 <= len` of both buffers; the functions are C's.
        unsafe {
            match way {
                Way::Move(f) => {
                    f(d.add(at).cast(), s.add(at ^ 64).cast(), n);
                }
                Way::Set(f) => {
                    f(d.add(at).cast(), 0x5a, n);
                }
            }
        }
        at = (at + 1088) & (SET_BYTES - 1);
    }
    std::hint::black_box(dst);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut libs = vec![];
    let (mut only, mut mix, mut callgrind) = (None, None, false);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--lib" => {
                i += 1;
                libs.push(args[i].clone());
            }
            "--only" => {
                i += 1;
                only = Some(args[i].clone());
            }
            "--mix" => {
                i += 1;
                mix = Some(args[i].clone());
            }
            "--callgrind" => callgrind = true,
            a => panic!("entry_calls: unknown argument {a}"),
        }
        i += 1;
    }
    let e = cachecopy::raw::c_entries(cachecopy::tune::Plan::current());
    let mut ways: Vec<(String, Way)> = vec![
        ("glibc memcpy".into(), Way::Move(libc::memcpy as Move)),
        ("glibc memmove".into(), Way::Move(libc::memmove as Move)),
        ("glibc memset".into(), Way::Set(libc::memset as Set)),
        ("entry memmove".into(), Way::Move(e.memmove)),
        ("entry memset".into(), Way::Set(e.memset)),
    ];
    for (k, lib) in libs.iter().enumerate() {
        let path = CString::new(lib.as_str()).unwrap();
        // SAFETY: a path; the library's constructor runs.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!h.is_null(), "entry_calls: cannot load {lib}");
        let tag = if k == 0 {
            "preload".to_string()
        } else {
            format!("lib{k}")
        };
        for name in ["memcpy", "memmove", "memset"] {
            let c = CString::new(name).unwrap();
            // SAFETY: a symbol lookup in a live handle.
            let f = unsafe { libc::dlsym(h, c.as_ptr()) };
            assert!(!f.is_null(), "{lib}: no {name}");
            // SAFETY: the library exports C's functions of these names.
            let way = unsafe {
                if name == "memset" {
                    Way::Set(std::mem::transmute::<*mut c_void, Set>(f))
                } else {
                    Way::Move(std::mem::transmute::<*mut c_void, Move>(f))
                }
            };
            ways.push((format!("{tag} {name}"), way));
        }
    }
    if let Some(o) = &only {
        ways.retain(|(n, _)| n == o);
        assert!(!ways.is_empty(), "entry_calls: no way named {o}");
    }
    let mut dst = vec![0u8; SET_BYTES + 2048];
    let src = vec![7u8; SET_BYTES + 2048];
    for (name, lo, hi) in MIXES {
        if mix.as_deref().is_some_and(|m| m != name) {
            continue;
        }
        let sz = sizes(lo, hi);
        if callgrind {
            for (_, way) in &ways {
                measure(*way, &mut dst, &src, &sz);
            }
            continue;
        }
        const ROUNDS: usize = 15;
        let mut t = vec![Vec::with_capacity(ROUNDS); ways.len()];
        for _ in 0..ROUNDS {
            for (tw, (_, way)) in t.iter_mut().zip(&ways) {
                let t0 = Instant::now();
                measure(*way, &mut dst, &src, &sz);
                tw.push(t0.elapsed().as_secs_f64() * 1e9 / CALLS as f64);
            }
        }
        println!("mix {name} B (ns per call, median; glibc's time / this, paired median)");
        for (w, (n, way)) in ways.iter().enumerate() {
            let glibc = match way {
                Way::Set(_) => 2,
                Way::Move(_) if n.ends_with("memcpy") => 0,
                Way::Move(_) => 1,
            };
            let mut ratio: Vec<f64> = (0..ROUNDS).map(|r| t[glibc][r] / t[w][r]).collect();
            let mut ns = t[w].clone();
            ns.sort_by(f64::total_cmp);
            ratio.sort_by(f64::total_cmp);
            println!(
                "  {n:<16} {:6.2} ns  {:.2}x (range {:.2}-{:.2})",
                ns[ROUNDS / 2],
                ratio[ROUNDS / 2],
                ratio[0],
                ratio[ROUNDS - 1]
            );
        }
    }
}
