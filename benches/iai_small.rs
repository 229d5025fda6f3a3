//! Instruction counts (callgrind, cache simulation on) of the small calls a network stack or an
//! allocator makes most: `copy_raw` and `fill_raw` in `Temporal` and `Auto` (a constant, and
//! `Auto` as a value loaded at run time, as a per-socket policy or a C caller passes it; inline size
//! classes below `kernel::small::MAX`, the backend table past them) beside glibc `memcpy` and
//! `memset` called for real (through the PLT), at 8, 64, 128 and 256 bytes, the length opaque to the
//! compiler; and `move_raw` in `Temporal` and `Auto` beside glibc `memmove` at 8, 64 and 256 bytes,
//! each moving its bytes down by a third of the length plus one (overlapping, as the report's
//! moves do). Every figure includes the same benchmark-function overhead (the `black_box`es, the
//! caller's frame, freeing the source), so the differences are the calls' own. lab/findings/small-calls.md keeps the figures.
//!
//! `cargo bench --bench iai_small` (needs `iai-callgrind-runner` 0.16.1 on PATH).

mod util;

use std::hint::black_box;

use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, LibraryBenchmarkConfig,
};
use util::{copy, mode, moves};

fn bufs(len: usize) -> (Vec<u8>, Vec<u8>) {
    let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
    // Warm the dispatcher so detection is not in the measured call (the table path at 256 B).
    util::warm_dispatch();
    (src, vec![0u8; len])
}

// Each call sits in a function of its own with the C ABI, so every variant is measured as one
// call from the same kind of caller: the caller's register saves and landing pads (which
// depend on what else it holds) are then the same for all, and the counts differ by the calls.
// The copy and move ones, shared with iai_mixes, are `util`'s.

/// glibc `memset`, through the PLT.
#[inline(never)]
unsafe extern "C" fn call_memset(d: *mut u8, b: u8, n: usize) {
    // SAFETY: the caller's buffer holds `n` bytes.
    unsafe { libc::memset(d.cast(), i32::from(b), n) };
}

#[inline(never)]
unsafe extern "C" fn fill<const M: u8>(d: *mut u8, b: u8, n: usize) {
    // SAFETY: as above.
    unsafe { cachecopy::fill_raw(d, b, n, mode::<M>()) }
}

/// One buffer of `len + len / 3 + 1` bytes, for a move of `len` bytes down by `len / 3 + 1`.
fn move_buf(len: usize) -> (Vec<u8>, usize) {
    let (buf, _) = bufs(len + len / 3 + 1);
    (buf, len)
}

fn move_with(f: CopyFn, (mut buf, len): (Vec<u8>, usize)) -> Vec<u8> {
    let p = buf.as_mut_ptr();
    // SAFETY: source `len / 3 + 1..len / 3 + 1 + len` and destination `0..len` lie in `buf`.
    unsafe { f(p, p.add(black_box(len / 3 + 1)), black_box(len)) };
    buf
}

type CopyFn = unsafe extern "C" fn(*mut u8, *const u8, usize);
type FillFn = unsafe extern "C" fn(*mut u8, u8, usize);

fn copy_with(f: CopyFn, (src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: both buffers hold `src.len()` bytes and do not overlap.
    unsafe { f(dst.as_mut_ptr(), src.as_ptr(), black_box(src.len())) };
    dst
}

fn fill_with(f: FillFn, (_src, mut dst): (Vec<u8>, Vec<u8>)) -> Vec<u8> {
    // SAFETY: `dst` holds `dst.len()` bytes.
    unsafe { f(dst.as_mut_ptr(), black_box(0x5a), black_box(dst.len())) };
    dst
}

/// The benchmarks of each operation's variants: `name => f` runs `f` through `with` on what
/// `setup` makes for each of `sizes`.
macro_rules! variants {
    ($($with:ident($setup:ident: $input:ty) at $sizes:tt: $($name:ident => $f:expr),+;)+) => {
        $($(
            #[library_benchmark]
            #[benches::sizes(args = $sizes, setup = $setup)]
            fn $name(b: $input) -> Vec<u8> {
                $with($f, b)
            }
        )+)+
    };
}

variants! {
    copy_with(bufs: (Vec<u8>, Vec<u8>)) at [8, 64, 128, 256]:
        glibc_memcpy => util::glibc_memcpy, copy_temporal => copy::<0>, copy_auto => copy::<3>,
        copy_auto_run_time => copy::<9>;
    fill_with(bufs: (Vec<u8>, Vec<u8>)) at [8, 64, 128, 256]:
        glibc_memset => call_memset, fill_temporal => fill::<0>, fill_auto => fill::<3>,
        fill_auto_run_time => fill::<9>;
    move_with(move_buf: (Vec<u8>, usize)) at [8, 64, 256]:
        glibc_memmove => util::glibc_memmove, move_temporal => moves::<0>, move_auto => moves::<3>,
        move_auto_run_time => moves::<9>;
}

library_benchmark_group!(
    name = small;
    benchmarks = glibc_memcpy, copy_temporal, copy_auto, copy_auto_run_time, glibc_memset,
        fill_temporal, fill_auto, fill_auto_run_time, glibc_memmove, move_temporal, move_auto,
        move_auto_run_time
);

main!(
    config = LibraryBenchmarkConfig::default().tool(Callgrind::with_args(["--cache-sim=yes"]));
    library_benchmark_groups = small
);
