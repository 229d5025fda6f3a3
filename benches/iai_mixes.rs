//! Instructions and branch mispredictions (callgrind, `--branch-sim=yes`) of a sequence of 1000
//! calls whose size, alignment and overlap change every call: the fleet-wide distributions
//! Google's Fleetbench publishes (Apache-2.0; `cachecopy_arena::mix`) and sizes uniform in
//! 0-64 B, in a 64 KiB buffer. `copy_raw`, `fill_raw` and `move_raw` in `Temporal` and `Auto`
//! (the mode a constant) and `Auto` (a value loaded at every call, as a per-socket policy)
//! beside glibc's `memcpy`, `memset` and `memmove` called through a pointer, and a harness that
//! calls an empty function the same way (the loop's own cost, to subtract). Every count ÷ 1000 is
//! per call: `Bc`/`Bcm` are conditional branches and their mispredictions under callgrind's
//! simple predictor model, `Bi`/`Bim` indirect ones. lab/findings/small-calls.md keeps the figures.
//!
//! `cargo bench --bench iai_mixes` (needs `iai-callgrind-runner` 0.16.1 on PATH).

mod util;

use std::hint::black_box;

use cachecopy_arena::mix::{Call, Op, Sequence, Sizes};
use iai_callgrind::{
    library_benchmark, library_benchmark_group, main, Callgrind, LibraryBenchmarkConfig,
};
use util::{copy, glibc_memcpy, glibc_memmove, mode, moves};

/// Calls per sequence: every count ÷ this is per call.
const CALLS: usize = 1000;
/// The buffer the calls land in.
const REGION: usize = 64 << 10;

/// A buffer and the calls into it; not measured.
fn input(op: Op, sizes: Sizes) -> (Vec<u8>, Vec<Call>) {
    let seq = Sequence::new(op, sizes, REGION, CALLS, 40 + op as u64);
    // Warm the dispatcher so detection is not in the measured calls.
    util::warm_dispatch();
    (vec![0x3c; REGION], seq.calls)
}

type CFn = unsafe extern "C" fn(*mut u8, *const u8, usize);

// Each variant's calls go through a function of its own with the C ABI, as in iai_small, so
// every variant is one call from the same kind of loop.

#[inline(never)]
unsafe extern "C" fn nop(d: *mut u8, s: *const u8, n: usize) {
    black_box((d, s, n));
}

#[inline(never)]
unsafe extern "C" fn glibc_memset(d: *mut u8, _: *const u8, n: usize) {
    // SAFETY: the caller's range lies in its buffer.
    unsafe { libc::memset(d.cast(), 0x5a, n) };
}

#[inline(never)]
unsafe extern "C" fn fill<const M: u8>(d: *mut u8, _: *const u8, n: usize) {
    // SAFETY: as `glibc_memset`.
    unsafe { cachecopy::fill_raw(d, 0x5a, n, mode::<M>()) }
}

/// Runs every call through `f`, a pointer the compiler cannot see through.
fn replay(f: CFn, (mut buf, calls): (Vec<u8>, Vec<Call>)) -> Vec<u8> {
    let f = black_box(f);
    let base = buf.as_mut_ptr();
    for c in &calls {
        // SAFETY: `Sequence` keeps every range inside the `REGION` bytes of `buf`; copies'
        // ranges apart, moves' as `memmove` allows.
        unsafe {
            f(
                base.add(c.dst as usize),
                base.add(c.src as usize),
                c.len as usize,
            )
        };
    }
    buf
}

type Input = (Vec<u8>, Vec<Call>);

#[library_benchmark]
#[bench::fleet(input(Op::Copy, Sizes::Fleet))]
fn harness(b: Input) -> Vec<u8> {
    replay(nop, b)
}

/// The benchmarks of each operation's variants: `name => f` replays the fleet's calls and calls
/// of 0-64 B of the operation through `f`.
macro_rules! variants {
    ($($op:ident: $($name:ident => $f:expr),+;)+) => {$($(
        #[library_benchmark]
        #[bench::fleet(input(Op::$op, Sizes::Fleet))]
        #[bench::uniform_0_64(input(Op::$op, Sizes::Uniform(0, 64)))]
        fn $name(b: Input) -> Vec<u8> {
            replay($f, b)
        }
    )+)+};
}

variants! {
    Copy: copy_glibc => glibc_memcpy, copy_temporal => copy::<0>, copy_auto => copy::<3>,
        copy_auto_run_time => copy::<9>;
    Fill: fill_glibc => glibc_memset, fill_temporal => fill::<0>, fill_auto => fill::<3>,
        fill_auto_run_time => fill::<9>;
    Move: move_glibc => glibc_memmove, move_temporal => moves::<0>, move_auto => moves::<3>,
        move_auto_run_time => moves::<9>;
}

library_benchmark_group!(
    name = mixes;
    benchmarks = harness, copy_glibc, copy_temporal, copy_auto, copy_auto_run_time, fill_glibc,
        fill_temporal, fill_auto, fill_auto_run_time, move_glibc, move_temporal, move_auto,
        move_auto_run_time
);

main!(
    config = LibraryBenchmarkConfig::default()
        .tool(Callgrind::with_args(["--branch-sim=yes", "--cache-sim=yes"]));
    library_benchmark_groups = mixes
);
