//! The backend table: the one algorithm ([`crate::kernel`]) instantiated for each register type
//! of [`crate::arch`] inside `#[target_feature]` entry points, one [`Kernels`] table per
//! [`Backend`], and the list of every backend compiled for this target, best last.
//!
//! This is the only place that ties registers to algorithms: `arch/` names registers and knows
//! nothing of tables, `kernel` is generic and knows nothing of backends, and dispatch picks a
//! table from [`BACKENDS`] without knowing how it was made.

use core::fmt;

use crate::cpu::Features;
use crate::cpu::FlushOp;
use crate::kernel::gather::Gather;

/// A copy backend: the register set the one algorithm is instantiated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable 64-bit words in general-purpose registers (x86_64 streams them with `movnti`;
    /// aarch64 moves them in `ldp`/`stp x` pairs and streams with `stnp x, x`). The only backend
    /// on soft-float targets and under `--cfg cachecopy_integer_only`.
    Generic,
    /// x86_64 SSE2, 16-byte registers.
    Sse2,
    /// x86_64 AVX2, 32-byte registers.
    Avx2,
    /// x86_64 AVX-512 F+BW, 64-byte registers and masked tails.
    Avx512,
    /// aarch64 Advanced SIMD.
    Neon,
}

impl Backend {
    /// Every backend any target knows, in declaration order.
    pub(crate) const ALL: [Backend; 5] = [
        Backend::Generic,
        Backend::Sse2,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
    ];

    /// Lower-case name, as accepted by `CACHECOPY_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Generic => "generic",
            Backend::Sse2 => "sse2",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }

    /// The backend with this [`name`](Backend::name) (ignoring ASCII case), if any target knows
    /// it.
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    /// Whether a CPU with `features` runs this backend's entry points.
    pub(crate) fn runs_on(self, features: &Features) -> bool {
        match self {
            Backend::Generic => true,
            Backend::Sse2 => features.sse2,
            Backend::Avx2 => features.avx2,
            Backend::Avx512 => features.avx512f && features.avx512bw,
            Backend::Neon => features.neon,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One backend's entry points, one per store kind, for copy, fill and checksum-and-copy.
pub(crate) struct Kernels {
    pub(crate) backend: Backend,
    pub(crate) copy_temporal: unsafe fn(*mut u8, *const u8, usize),
    pub(crate) copy_nontemporal: unsafe fn(*mut u8, *const u8, usize),
    pub(crate) copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp),
    pub(crate) fill_temporal: unsafe fn(*mut u8, u8, usize),
    pub(crate) fill_nontemporal: unsafe fn(*mut u8, u8, usize),
    pub(crate) fill_flush: unsafe fn(*mut u8, u8, usize, FlushOp),
    /// RFC 1071 sum, folded to 16 bits: sum only, then fused with each copy kind.
    pub(crate) csum: unsafe fn(*const u8, usize) -> u32,
    pub(crate) csum_copy_temporal: unsafe fn(*mut u8, *const u8, usize) -> u32,
    pub(crate) csum_copy_nontemporal: unsafe fn(*mut u8, *const u8, usize) -> u32,
    pub(crate) csum_copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp) -> u32,
    /// Unfenced pieces for the scatter-gather cursors (`crate::iter`).
    pub(crate) iter: IterKernels,
}

/// Entry points of one backend for the cursors. None of them fences.
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
    /// Appends bytes to a [`Gather`].
    pub(crate) gather_append: unsafe fn(&mut Gather, *const u8, usize),
    /// Writes a [`Gather`]'s pending partial line (and with an op, writes back every line
    /// written with ordinary stores).
    pub(crate) gather_finish: unsafe fn(&mut Gather, Option<FlushOp>),
    /// As `copy_stream`, returning the piece's checksum (folded to 16 bits).
    pub(crate) csum_copy_stream: unsafe fn(*mut u8, *const u8, usize) -> u32,
    /// As `copy_flush`, returning the piece's checksum (folded to 16 bits).
    pub(crate) csum_copy_flush: unsafe fn(*mut u8, *const u8, usize, FlushOp) -> u32,
}

/// One entry point: `$call` inside a function compiled with the backend's target features.
macro_rules! entry {
    ([$($feature:literal)?] fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? = $call:expr) => {
        $(#[target_feature(enable = $feature)])?
        unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
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
/// `kernels!(static AVX2 = Backend::Avx2, arch::Avx2, "avx2");`.
macro_rules! kernels {
    ($name:ident = $backend:expr, $v:ty $(, $feature:literal)?) => {
        static $name: Kernels = {
            use crate::kernel::gather::{gather_append, gather_finish, stream_piece};
            use crate::kernel::{flush_cache, flush_unfenced, nontemporal, sum};
            use crate::kernel::{copy_temporal, fill_temporal, Mem, Splat};
            entry!([$($feature)?] fn copy_t(d: *mut u8, s: *const u8, n: usize) =
                copy_temporal::<$v>(d, s, n));
            entry!([$($feature)?] fn copy_nt(d: *mut u8, s: *const u8, n: usize) =
                nontemporal::<$v, Mem>(d, Mem(s), n));
            entry!([$($feature)?] fn copy_fc(d: *mut u8, s: *const u8, n: usize, op: FlushOp) =
                flush_cache::<$v, Mem>(d, Mem(s), n, op));
            entry!([$($feature)?] fn fill_t(d: *mut u8, b: u8, n: usize) =
                fill_temporal::<$v>(d, b, n));
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
            entry!([$($feature)?] fn g_append(w: &mut Gather, s: *const u8, n: usize) =
                gather_append::<$v>(w, s, n));
            entry!([$($feature)?] fn g_finish(w: &mut Gather, op: Option<FlushOp>) =
                gather_finish::<$v>(w, op));
            entry!([$($feature)?] fn csum_copy_s(d: *mut u8, s: *const u8, n: usize) -> u32 =
                sum::stream_unfenced::<$v>(d, s, n));
            entry!([$($feature)?]
                fn csum_copy_f(d: *mut u8, s: *const u8, n: usize, op: FlushOp) -> u32 =
                sum::flush_unfenced::<$v>(d, s, n, op));
            Kernels {
                backend: $backend,
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
                    gather_append: g_append,
                    gather_finish: g_finish,
                    csum_copy_stream: csum_copy_s,
                    csum_copy_flush: csum_copy_f,
                },
            }
        };
    };
}

use crate::arch;

kernels!(GENERIC = Backend::Generic, arch::Word);

// The vector backends exist only where the target has vector registers (not soft-float targets:
// `x86_64-unknown-none`, `x86_64-unknown-uefi`, `aarch64-unknown-none-softfloat`) and the user
// has not asked for general-purpose registers only (`--cfg cachecopy_integer_only`, for kernel
// code that has not saved the vector state; docs/bare-metal.md). `arch` leaves out their
// registers under the same conditions.
cfg_if::cfg_if! {
    if #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(cachecopy_integer_only)))] {
        kernels!(SSE2 = Backend::Sse2, arch::Sse2, "sse2");
        kernels!(AVX2 = Backend::Avx2, arch::Avx2, "avx2");
        kernels!(AVX512 = Backend::Avx512, arch::Avx512, "avx512f,avx512bw");
        /// Every backend compiled for x86_64, best last. A CPU runs a prefix of this list
        /// (AVX-512 CPUs all have AVX2, and an OS that saves ZMM state saves YMM state).
        pub(crate) static BACKENDS: [&Kernels; 4] = [&GENERIC, &SSE2, &AVX2, &AVX512];
    } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(cachecopy_integer_only)))] {
        kernels!(NEON = Backend::Neon, arch::Neon);
        /// Every backend compiled for aarch64, best last. Advanced SIMD is mandatory in every
        /// arm64 Linux/macOS/Windows ABI, so a CPU running this build runs both.
        pub(crate) static BACKENDS: [&Kernels; 2] = [&GENERIC, &NEON];
    } else {
        /// Targets without a SIMD leaf, soft-float targets and `cachecopy_integer_only` builds:
        /// the word backend only.
        pub(crate) static BACKENDS: [&Kernels; 1] = [&GENERIC];
    }
}

/// How many entries of [`BACKENDS`] a CPU with `features` runs (at least the portable one).
pub(crate) fn runnable(features: &Features) -> usize {
    BACKENDS
        .iter()
        .take_while(|k| k.backend.runs_on(features))
        .count()
        .max(1)
}

/// [`BACKENDS`] by name, so `Backend::supported()` can hand out a `'static` slice.
pub(crate) static NAMES: [Backend; BACKENDS.len()] = {
    let mut names = [Backend::Generic; BACKENDS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = BACKENDS[i].backend;
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
