//! The backend table: the one algorithm ([`crate::kernel`]) instantiated for each register type
//! of [`crate::arch`] inside `#[target_feature]` entry points, one [`Kernels`] table per
//! [`Backend`], and the list of every backend compiled for this target, best last.
//!
//! This is the only place that ties registers to algorithms: `arch/` names registers and knows
//! nothing of tables, `kernel` is generic and knows nothing of backends, and dispatch picks a
//! table from [`BACKENDS`] without knowing how it was made.

use super::engine::{Backend, Edges, Engine};
use crate::cpu::Features;
use crate::cpu::FlushOp;
use crate::kernel::gather::{At, Gather, Seg};
use crate::kernel::Knobs;

/// One engine's entry points, one per store kind, for copy, fill and checksum-and-copy: a
/// register set's own table ([`BACKENDS`], [`OVERLAP`]), or one composed of two of them ([`composed`]).
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    /// What runs each job.
    pub(crate) engine: Engine,
    /// What the entries that have a variant by size read, passed to them by every caller: the
    /// plain loops in a register set's own table, the plan's in the table a plan holds.
    pub(crate) knobs: Knobs,
    /// `extern "C"` (cannot unwind), as `fill_temporal`, so that the dispatched entries call
    /// it from the call site past the inline classes (`copy_via_table`) with no landing
    /// pad, and `copy_table` can tail-jump into it. Returns the destination, as C's `memcpy`
    /// does, so that a C-shaped caller (the preload's `memcpy`) can tail-jump into it too.
    ///
    /// This entry and every other that has a variant by size (`copy_nontemporal`,
    /// `fill_temporal`, the temporal and streaming moves) takes the table's `knobs` last.
    pub(crate) copy_temporal: unsafe extern "C" fn(*mut u8, *const u8, usize, &Knobs) -> *mut u8,
    pub(crate) copy_nontemporal: unsafe fn(*mut u8, *const u8, usize, &Knobs),
    pub(crate) copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp),
    pub(crate) fill_temporal: unsafe extern "C" fn(*mut u8, u8, usize, &Knobs) -> *mut u8,
    pub(crate) fill_nontemporal: unsafe fn(*mut u8, u8, usize),
    pub(crate) fill_flush: unsafe fn(*mut u8, u8, usize, FlushOp),
    /// RFC 1071 sum, folded to 16 bits: sum only, then fused with each copy kind.
    pub(crate) csum: unsafe fn(*const u8, usize) -> u32,
    pub(crate) csum_copy_temporal: unsafe fn(*mut u8, *const u8, usize) -> u32,
    pub(crate) csum_copy_nontemporal: unsafe fn(*mut u8, *const u8, usize) -> u32,
    pub(crate) csum_copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp) -> u32,
    /// Unfenced pieces for the scatter-gather cursors (`crate::iter`).
    pub(crate) iter: IterKernels,
    /// Moves whose ranges may overlap (`crate::moves`).
    pub(crate) moves: MoveKernels,
    /// The temporal entries with their variants by size (x86 `rep movsb` / `rep stosb`, the
    /// AVX-512 loop of large copies): what a plan whose knobs choose one of them puts in
    /// `copy_temporal`, `fill_temporal` and `moves.temporal` (`Plan::build`). The entries there
    /// by default read no knob at all.
    pub(crate) sized: SizedKernels,
}

/// The temporal entries that read the table's knobs (see [`Kernels::sized`]).
#[derive(Clone, Copy)]
pub(crate) struct SizedKernels {
    /// As `Kernels::copy_temporal`, with the string move and the AVX-512 loop.
    pub(crate) copy_temporal: unsafe extern "C" fn(*mut u8, *const u8, usize, &Knobs) -> *mut u8,
    /// As `Kernels::fill_temporal`, with the string store.
    pub(crate) fill_temporal: unsafe extern "C" fn(*mut u8, u8, usize, &Knobs) -> *mut u8,
    /// As `MoveKernels::temporal`, disjoint ranges as `copy_temporal` here.
    pub(crate) move_temporal: unsafe extern "C" fn(*mut u8, *const u8, usize, &Knobs) -> *mut u8,
}

/// Entry points of one backend for moves whose ranges may overlap (`kernel::moves`): `temporal`
/// belongs to the engine's temporal job, the others to its streaming job.
#[derive(Clone, Copy)]
pub(crate) struct MoveKernels {
    /// Ordinary stores; `extern "C"` (cannot unwind), as `Kernels::copy_temporal`, so that the
    /// dispatched move past the inline classes (`moves::move_via_table`) calls it from the
    /// call site with no landing pad. Returns the destination, as `Kernels::copy_temporal`.
    pub(crate) temporal: unsafe extern "C" fn(*mut u8, *const u8, usize, &Knobs) -> *mut u8,
    /// Whole lines streamed from `STREAM_MIN` bytes, then the store fence.
    pub(crate) nontemporal: unsafe fn(*mut u8, *const u8, usize, &Knobs),
    /// Streamed, every destination line written back, then the completion fence.
    pub(crate) flush: unsafe fn(*mut u8, *const u8, usize, FlushOp),
    /// As `nontemporal` from two lines up, without the fence; returns whether anything
    /// streamed (so a fence is owed).
    pub(crate) stream: unsafe fn(*mut u8, *const u8, usize, &Knobs) -> bool,
    /// As `flush`, without the completion fence.
    pub(crate) flush_unfenced: unsafe fn(*mut u8, *const u8, usize, FlushOp),
}

/// Entry points of one backend for the cursors. None of them fences.
#[derive(Clone, Copy)]
pub(crate) struct IterKernels {
    /// Streams the whole lines of a piece, ordinary stores for its partial end lines (all of it
    /// below two lines).
    pub(crate) copy_stream: unsafe fn(*mut u8, *const u8, usize),
    /// As `copy_stream`, with a repeated byte.
    pub(crate) fill_stream: unsafe fn(*mut u8, u8, usize),
    /// As `copy_stream`, then writes back the lines written with ordinary stores.
    pub(crate) copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp),
    /// As `copy_flush`, with a repeated byte.
    pub(crate) fill_flush: unsafe fn(*mut u8, u8, usize, FlushOp),
    /// Appends bytes of a segment list to a [`Gather`], walking the segments itself.
    pub(crate) gather_segs: unsafe fn(&mut Gather, *const Seg, usize, At, usize) -> At,
    /// As `gather_segs`, adding every line it streams to the writer's checksum.
    pub(crate) gather_segs_sum: unsafe fn(&mut Gather, *const Seg, usize, At, usize) -> At,
    /// Writes a [`Gather`]'s pending partial line (and with an op, writes back every line of
    /// the whole destination, `(start, len)`, written with ordinary stores).
    pub(crate) gather_finish: unsafe fn(&mut Gather, *mut u8, usize, Option<FlushOp>),
    /// As `copy_stream`, returning the piece's checksum (folded to 16 bits).
    pub(crate) csum_copy_stream: unsafe fn(*mut u8, *const u8, usize) -> u32,
    /// As `copy_flush`, returning the piece's checksum (folded to 16 bits).
    pub(crate) csum_copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp) -> u32,
}

/// One entry point: `$call` inside a function compiled with the backend's target features.
macro_rules! entry {
    ([$($feature:literal)?] $(extern $abi:literal)? fn $name:ident($($arg:ident: $ty:ty),*)
        $(-> $ret:ty)? = $call:expr) => {
        $(#[target_feature(enable = $feature)])?
        unsafe $(extern $abi)? fn $name($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: (every entry point of every table) a table is handed out only by
            // dispatch, and only when the CPU runs its backend (`Backend::runs_on`), so the
            // target features hold; the caller upholds the range contract of the public
            // function that called it (`copy_raw`, `fill_raw`, `csum_and_copy_raw`, the cursor
            // engine), which is the algorithm's contract.
            unsafe { $call }
        }
    };
}

/// Instantiates the algorithms for one register type and names the table:
/// `kernels!(AVX2 = Engine::uniform(Backend::Avx2), arch::Avx2, "avx2");`.
macro_rules! kernels {
    ($name:ident = $engine:expr, $v:ty $(, $feature:literal)?) => {
        static $name: Kernels = {
            use crate::kernel::gather::{gather_finish, gather_segs, stream_piece};
            use crate::kernel::{flush_cache, flush_unfenced, nontemporal, sum};
            use crate::kernel::{copy_temporal, fill_temporal, Mem, Splat};
            entry!([$($feature)?]
                extern "C" fn copy_t(d: *mut u8, s: *const u8, n: usize, k: &Knobs) -> *mut u8 =
                    copy_temporal::<$v, false>(d, s, n, k));
            entry!([$($feature)?]
                extern "C" fn copy_ts(d: *mut u8, s: *const u8, n: usize, k: &Knobs) -> *mut u8 =
                    copy_temporal::<$v, true>(d, s, n, k));
            entry!([$($feature)?] fn copy_nt(d: *mut u8, s: *const u8, n: usize, k: &Knobs) =
                crate::kernel::copy_nontemporal::<$v>(d, s, n, k));
            entry!([$($feature)?] fn copy_fc(d: *mut u8, s: *const u8, n: usize, op: FlushOp) =
                flush_cache::<$v, Mem>(d, Mem(s), n, op));
            entry!([$($feature)?]
                extern "C" fn fill_t(d: *mut u8, b: u8, n: usize, k: &Knobs) -> *mut u8 = {
                fill_temporal::<$v, false>(d, b, n, k);
                d
            });
            entry!([$($feature)?]
                extern "C" fn fill_ts(d: *mut u8, b: u8, n: usize, k: &Knobs) -> *mut u8 = {
                fill_temporal::<$v, true>(d, b, n, k);
                d
            });
            entry!([$($feature)?] fn fill_nt(d: *mut u8, b: u8, n: usize) =
                nontemporal::<$v, Splat>(d, Splat(b), n));
            entry!([$($feature)?] fn fill_fc(d: *mut u8, b: u8, n: usize, op: FlushOp) =
                flush_cache::<$v, Splat>(d, Splat(b), n, op));
            entry!([$($feature)?] fn csum(s: *const u8, n: usize) -> u32 =
                sum::sum::<$v>(s, n));
            entry!([$($feature)?] fn csum_copy_t(d: *mut u8, s: *const u8, n: usize) -> u32 =
                sum::temporal::<$v>(d, s, n));
            entry!([$($feature)?] fn csum_copy_nt(d: *mut u8, s: *const u8, n: usize) -> u32 =
                sum::nontemporal::<$v>(d, s, n));
            entry!([$($feature)?]
                fn csum_copy_fc(d: *mut u8, s: *const u8, n: usize, op: FlushOp) -> u32 =
                sum::flush_cache::<$v>(d, s, n, op));
            entry!([$($feature)?] fn copy_s(d: *mut u8, s: *const u8, n: usize) =
                stream_piece::<$v, Mem>(d, Mem(s), n));
            entry!([$($feature)?] fn fill_s(d: *mut u8, b: u8, n: usize) =
                stream_piece::<$v, Splat>(d, Splat(b), n));
            entry!([$($feature)?] fn copy_f(d: *mut u8, s: *const u8, n: usize, op: FlushOp) =
                flush_unfenced::<$v, Mem>(d, Mem(s), n, op));
            entry!([$($feature)?] fn fill_f(d: *mut u8, b: u8, n: usize, op: FlushOp) =
                flush_unfenced::<$v, Splat>(d, Splat(b), n, op));
            entry!([$($feature)?]
                fn g_segs(w: &mut Gather, s: *const Seg, nr: usize, at: At, n: usize) -> At =
                    gather_segs::<$v, false>(w, s, nr, at, n));
            entry!([$($feature)?]
                fn g_segs_sum(w: &mut Gather, s: *const Seg, nr: usize, at: At, n: usize) -> At =
                    gather_segs::<$v, true>(w, s, nr, at, n));
            entry!([$($feature)?]
                fn g_finish(w: &mut Gather, d: *mut u8, n: usize, op: Option<FlushOp>) =
                gather_finish::<$v>(w, (d, n), op));
            entry!([$($feature)?] fn csum_copy_s(d: *mut u8, s: *const u8, n: usize) -> u32 =
                sum::stream_unfenced::<$v>(d, s, n));
            entry!([$($feature)?]
                fn csum_copy_f(d: *mut u8, s: *const u8, n: usize, op: FlushOp) -> u32 =
                sum::flush_unfenced::<$v>(d, s, n, op));
            entry!([$($feature)?]
                extern "C" fn move_t(d: *mut u8, s: *const u8, n: usize, k: &Knobs) -> *mut u8 = {
                    crate::kernel::moves::move_temporal::<$v, false>(d, s, n, k);
                    d
                });
            entry!([$($feature)?]
                extern "C" fn move_ts(d: *mut u8, s: *const u8, n: usize, k: &Knobs) -> *mut u8 = {
                    crate::kernel::moves::move_temporal::<$v, true>(d, s, n, k);
                    d
                });
            entry!([$($feature)?] fn move_nt(d: *mut u8, s: *const u8, n: usize, k: &Knobs) =
                crate::kernel::moves::move_nontemporal::<$v>(d, s, n, k));
            entry!([$($feature)?] fn move_fc(d: *mut u8, s: *const u8, n: usize, op: FlushOp) =
                crate::kernel::moves::move_flush::<$v>(d, s, n, op));
            entry!([$($feature)?]
                fn move_s(d: *mut u8, s: *const u8, n: usize, k: &Knobs) -> bool =
                crate::kernel::moves::move_stream::<$v>(d, s, n, k));
            entry!([$($feature)?] fn move_f(d: *mut u8, s: *const u8, n: usize, op: FlushOp) =
                crate::kernel::moves::move_flush_unfenced::<$v>(d, s, n, op));
            Kernels {
                engine: $engine,
                knobs: Knobs::PLAIN,
                copy_temporal: copy_t,
                copy_nontemporal: copy_nt,
                copy_flush: copy_fc,
                fill_temporal: fill_t,
                fill_nontemporal: fill_nt,
                fill_flush: fill_fc,
                csum,
                csum_copy_temporal: csum_copy_t,
                csum_copy_nontemporal: csum_copy_nt,
                csum_copy_flush: csum_copy_fc,
                iter: IterKernels {
                    copy_stream: copy_s,
                    fill_stream: fill_s,
                    copy_flush: copy_f,
                    fill_flush: fill_f,
                    gather_segs: g_segs,
                    gather_segs_sum: g_segs_sum,
                    gather_finish: g_finish,
                    csum_copy_stream: csum_copy_s,
                    csum_copy_flush: csum_copy_f,
                },
                moves: MoveKernels {
                    temporal: move_t,
                    nontemporal: move_nt,
                    flush: move_fc,
                    stream: move_s,
                    flush_unfenced: move_f,
                },
                sized: SizedKernels {
                    copy_temporal: copy_ts,
                    fill_temporal: fill_ts,
                    move_temporal: move_ts,
                },
            }
        };
    };
}

use crate::arch;

kernels!(GENERIC = Engine::uniform(Backend::Generic), arch::Word);

// The vector backends exist only where the target has vector registers (not soft-float targets:
// `x86_64-unknown-none`, `x86_64-unknown-uefi`, `aarch64-unknown-none-softfloat`) and the user
// has not asked for general-purpose registers only (`--cfg cachecopy_integer_only`, for kernel
// code that has not saved the vector state; docs/bare-metal.md). `arch` leaves out their
// registers under the same conditions.
cfg_if::cfg_if! {
    if #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(cachecopy_integer_only)))] {
        kernels!(SSE2 = Engine::uniform(Backend::Sse2), arch::Sse2, "sse2");
        kernels!(AVX2 = Engine::uniform(Backend::Avx2), arch::Avx2, "avx2");
        kernels!(AVX512 = Engine::uniform(Backend::Avx512), arch::Avx512, "avx512f,avx512bw");
        kernels!(
            AVX512_OVERLAP = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Overlap),
            crate::vector::Overlap<arch::Avx512>,
            "avx512f,avx512bw"
        );
        /// Every backend compiled for x86_64, best last. A CPU runs a prefix of this list
        /// (AVX-512 CPUs all have AVX2, and an OS that saves ZMM state saves YMM state).
        pub(crate) static BACKENDS: [&Kernels; 4] = [&GENERIC, &SSE2, &AVX2, &AVX512];
        /// The tables of [`BACKENDS`] with overlapping edges ([`Edges::Overlap`]): the same,
        /// except AVX-512's, which is instantiated again without masked moves.
        static OVERLAP: [&Kernels; 4] = [&GENERIC, &SSE2, &AVX2, &AVX512_OVERLAP];
    } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(cachecopy_integer_only)))] {
        kernels!(NEON = Engine::uniform(Backend::Neon), arch::Neon);
        /// Every backend compiled for aarch64, best last. Advanced SIMD is mandatory in every
        /// arm64 Linux/macOS/Windows ABI, so a CPU running this build runs both.
        pub(crate) static BACKENDS: [&Kernels; 2] = [&GENERIC, &NEON];
        /// No register set here has masked moves: the same tables.
        static OVERLAP: [&Kernels; 2] = BACKENDS;
    } else {
        /// Targets without a SIMD leaf, soft-float targets and `cachecopy_integer_only` builds:
        /// the word backend only.
        pub(crate) static BACKENDS: [&Kernels; 1] = [&GENERIC];
        /// The word backend has no masked moves: the same table.
        static OVERLAP: [&Kernels; 1] = BACKENDS;
    }
}

/// How many entries of [`BACKENDS`] a CPU with `features` runs (at least the portable one).
pub(crate) fn runnable(features: &Features) -> usize {
    BACKENDS
        .iter()
        .take_while(|k| k.engine.stream.runs_on(features))
        .count()
        .max(1)
}

/// [`BACKENDS`] by name, so `Backend::supported()` can hand out a `'static` slice.
pub(crate) static NAMES: [Backend; BACKENDS.len()] = {
    let mut names = [Backend::Generic; BACKENDS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = BACKENDS[i].engine.stream;
        i += 1;
    }
    names
};

/// Each `Backend`'s index in [`BACKENDS`] (by discriminant), or `u8::MAX` when this target has
/// no such backend.
pub(crate) static POSITION: [u8; Backend::ALL.len()] = {
    let mut pos = [u8::MAX; Backend::ALL.len()];
    let mut i = 0;
    while i < NAMES.len() {
        pos[NAMES[i] as usize] = i as u8;
        i += 1;
    }
    pos
};

/// Every engine [`Engine::supported`](crate::tune::Engine::supported) can list, in a fixed order (the runnable ones first once
/// detection has sorted them in).
pub(crate) static SUPPORTED_ENGINES: [Engine; 2 * BACKENDS.len() * BACKENDS.len()] = ENGINE_LIST.0;

/// [`SUPPORTED_ENGINES`] and how many of its entries are filled.
const ENGINE_LIST: ([Engine; 2 * BACKENDS.len() * BACKENDS.len()], usize) = {
    let mut out = [Engine::uniform(Backend::Generic); 2 * BACKENDS.len() * BACKENDS.len()];
    let mut i = 0;
    // Runnable prefixes of `BACKENDS` nest, so listing by the larger position first puts every
    // engine a CPU with `n` backends runs before every one it does not: `(t, s)` pairs with
    // `max(t, s) < n` come first.
    let mut m = 0;
    while m < BACKENDS.len() {
        let mut t = 0;
        while t <= m {
            let mut s = 0;
            while s <= m {
                if t == m || s == m {
                    let (tb, sb) = (NAMES[t], NAMES[s]);
                    out[i] = Engine::new(tb, sb, Edges::Masked);
                    i += 1;
                    if matches!(tb, Backend::Avx512) || matches!(sb, Backend::Avx512) {
                        out[i] = Engine::new(tb, sb, Edges::Overlap);
                        i += 1;
                    }
                }
                s += 1;
            }
            t += 1;
        }
        m += 1;
    }
    (out, i)
};

/// How many of [`SUPPORTED_ENGINES`] a CPU running the first `n` backends runs.
pub(crate) fn runnable_engines(n: usize) -> usize {
    SUPPORTED_ENGINES[..ENGINE_LIST.1]
        .iter()
        .take_while(|e| {
            POSITION[e.temporal as usize] < n as u8 && POSITION[e.stream as usize] < n as u8
        })
        .count()
}

/// The table for `engine`, if this target compiles its backends: the temporal job's entry points
/// from `engine.temporal`'s table, the streaming job's from `engine.stream`'s, each with
/// `engine.edges` (see [`Engine`]). Whether the CPU runs it is the caller's check.
pub(crate) fn composed(engine: Engine) -> Option<&'static Kernels> {
    let t = POSITION[engine.temporal as usize] as usize;
    let s = POSITION[engine.stream as usize] as usize;
    let e = engine.edges as usize;
    COMPOSED.get(e)?.get(t)?.get(s)
}

/// Every engine this target compiles, by `[edges][temporal][stream]` (positions in
/// [`BACKENDS`]): pointers into the register sets' own tables, no code of their own.
static COMPOSED: [[[Kernels; BACKENDS.len()]; BACKENDS.len()]; 2] = {
    let mut out = [[[GENERIC; BACKENDS.len()]; BACKENDS.len()]; 2];
    let mut e = 0;
    while e < 2 {
        let tables = if e == Edges::Masked as usize {
            &BACKENDS
        } else {
            &OVERLAP
        };
        let edges = if e == Edges::Masked as usize {
            Edges::Masked
        } else {
            Edges::Overlap
        };
        let mut t = 0;
        while t < BACKENDS.len() {
            let mut s = 0;
            while s < BACKENDS.len() {
                out[e][t][s] = compose(tables[t], tables[s], edges);
                s += 1;
            }
            t += 1;
        }
        e += 1;
    }
    out
};

/// The temporal job of `t` and the streaming job of `s`.
const fn compose(t: &Kernels, s: &Kernels, edges: Edges) -> Kernels {
    Kernels {
        engine: Engine::new(t.engine.temporal, s.engine.stream, edges),
        knobs: Knobs::PLAIN,
        copy_temporal: t.copy_temporal,
        fill_temporal: t.fill_temporal,
        csum: t.csum,
        csum_copy_temporal: t.csum_copy_temporal,
        copy_nontemporal: s.copy_nontemporal,
        copy_flush: s.copy_flush,
        fill_nontemporal: s.fill_nontemporal,
        fill_flush: s.fill_flush,
        csum_copy_nontemporal: s.csum_copy_nontemporal,
        csum_copy_flush: s.csum_copy_flush,
        iter: s.iter,
        moves: MoveKernels {
            temporal: t.moves.temporal,
            ..s.moves
        },
        sized: t.sized,
    }
}

/// Every register set's own table this CPU runs, with each edge store it has (AVX-512 twice):
/// what the unit tests iterate, so every instantiation of the algorithm is exercised.
#[cfg(test)]
pub(crate) fn variants(features: &Features) -> impl Iterator<Item = &'static Kernels> {
    let n = runnable(features);
    BACKENDS[..n]
        .iter()
        .chain(
            OVERLAP[..n]
                .iter()
                .filter(|k| !BACKENDS.iter().any(|b| core::ptr::eq(*b, **k))),
        )
        .copied()
}
