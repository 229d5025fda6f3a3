//! Run-time dispatch: detect once, lock-free, then one indirect call per copy.
//!
//! `ACTIVE` starts null; the first call (from any number of racing threads) detects the CPU,
//! publishes the chosen backend's table with a release store and returns it. Every racer computes
//! the same answer, so a lost race only repeats detection. Later calls are one acquire load (a
//! plain `mov` on x86_64), a predicted branch and the indirect call. A table rather than a
//! function pointer per routine keeps the six entry points of one backend together.

use core::fmt;
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

use crate::arch;
use crate::kernel::Kernels;
use crate::{Cpu, FlushOp};

/// A copy backend: the register set the one algorithm is instantiated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable 64-bit words (x86_64 streams them with `movnti`).
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
    /// The backend dispatch picked: the best this CPU runs, unless `CACHECOPY_BACKEND` chose
    /// another (with `std`).
    ///
    /// ```
    /// assert!(cachecopy::Backend::supported().contains(&cachecopy::Backend::active()));
    /// ```
    pub fn active() -> Backend {
        active().backend
    }

    /// Every backend this CPU can run, best last.
    pub fn supported() -> &'static [Backend] {
        active();
        &NAMES[..SUPPORTED.load(Ordering::Relaxed)]
    }

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

    /// The backend with this [`name`](Backend::name), if any target knows it.
    pub fn from_name(name: &str) -> Option<Backend> {
        [
            Backend::Generic,
            Backend::Sse2,
            Backend::Avx2,
            Backend::Avx512,
            Backend::Neon,
        ]
        .into_iter()
        .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    /// This backend's kernels, if this CPU runs it.
    /// One table lookup (this sits on the path of every `copy_with`, `fill_with` and cursor op).
    #[inline]
    pub(crate) fn kernels(self) -> Result<&'static Kernels, Unsupported> {
        active();
        let i = POSITION[self as usize] as usize;
        if i < SUPPORTED.load(Ordering::Relaxed) {
            Ok(arch::BACKENDS[i])
        } else {
            Err(Unsupported(Unsupportable::Backend(self)))
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned by the `*_with` functions when this CPU cannot run the requested backend or flush
/// instruction. Nothing was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported(pub(crate) Unsupportable);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsupportable {
    Backend(Backend),
    Flush(FlushOp),
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unsupportable::Backend(b) => write!(f, "the {b} backend is not supported by this CPU"),
            Unsupportable::Flush(op) => {
                write!(f, "the {op} instruction is not supported by this CPU")
            }
        }
    }
}

impl core::error::Error for Unsupported {}

/// `arch::BACKENDS` by name, so `supported()` can hand out a `'static` slice.
static NAMES: [Backend; arch::BACKENDS.len()] = {
    let mut names = [Backend::Generic; arch::BACKENDS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = arch::BACKENDS[i].backend;
        i += 1;
    }
    names
};

/// Each `Backend`'s index in `arch::BACKENDS` (by discriminant), or `u8::MAX` when this target
/// has no such backend.
static POSITION: [u8; 5] = {
    let mut pos = [u8::MAX; 5];
    let mut i = 0;
    while i < NAMES.len() {
        pos[NAMES[i] as usize] = i as u8;
        i += 1;
    }
    pos
};

static ACTIVE: AtomicPtr<Kernels> = AtomicPtr::new(ptr::null_mut());
static SUPPORTED: AtomicUsize = AtomicUsize::new(1);
static FLUSH: AtomicU8 = AtomicU8::new(0);
static FLUSH_SUPPORTED: AtomicU8 = AtomicU8::new(0);
const UNSET: usize = usize::MAX;
static COPY_NT: AtomicUsize = AtomicUsize::new(UNSET);
static FILL_NT: AtomicUsize = AtomicUsize::new(UNSET);
/// From this many bytes `Temporal` fills use the CPU's string store (x86 `rep stosb`);
/// `usize::MAX` (also before detection) means never. Read by `kernel::fill_temporal`.
pub(crate) static FILL_REP: AtomicUsize = AtomicUsize::new(UNSET);

/// The active backend's table, detecting on first use.
#[inline(always)]
pub(crate) fn active() -> &'static Kernels {
    let p = ACTIVE.load(Ordering::Acquire);
    if p.is_null() {
        init()
    } else {
        // SAFETY: only ever set to a `&'static Kernels`.
        unsafe { &*p }
    }
}

/// The flush instruction flush-cache copies use.
#[inline(always)]
pub(crate) fn flush_op() -> FlushOp {
    active();
    FlushOp::ALL[FLUSH.load(Ordering::Relaxed) as usize]
}

/// Whether this CPU executes `op`.
pub(crate) fn flush_supported(op: FlushOp) -> bool {
    active();
    FLUSH_SUPPORTED.load(Ordering::Relaxed) & (1 << op.index()) != 0
}

#[cold]
#[inline(never)]
fn init() -> &'static Kernels {
    let cpu = arch::detect();
    let n = cpu.backends.clamp(1, arch::BACKENDS.len());
    SUPPORTED.store(n, Ordering::Relaxed);
    FLUSH.store(cpu.flush.index(), Ordering::Relaxed);
    let mask = cpu.flush_ops().fold(0u8, |m, op| m | 1 << op.index());
    FLUSH_SUPPORTED.store(mask, Ordering::Relaxed);
    let (copy_nt, fill_nt) = env_thresholds(default_thresholds(&cpu));
    let _ = COPY_NT.compare_exchange(UNSET, copy_nt, Ordering::Relaxed, Ordering::Relaxed);
    let _ = FILL_NT.compare_exchange(UNSET, fill_nt, Ordering::Relaxed, Ordering::Relaxed);
    let fill_rep = env_bytes("CACHECOPY_FILL_REP_THRESHOLD")
        .unwrap_or_else(|| default_fill_rep_threshold(&cpu));
    let _ = FILL_REP.compare_exchange(UNSET, fill_rep, Ordering::Relaxed, Ordering::Relaxed);
    let best = arch::BACKENDS[n - 1];
    let chosen = env_backend(&arch::BACKENDS[..n]).unwrap_or(best);
    ACTIVE.store(ptr::from_ref(chosen).cast_mut(), Ordering::Release);
    chosen
}

/// The NT thresholds `Auto` uses when nothing overrides them, from the detected caches.
///
/// Copy: a quarter of one last-level cache instance (at least twice the L2 and 1 MiB). A copy
/// of `len` bytes brings `2 * len` into the caches with ordinary stores; from `L3 / 4` up that is
/// half the L3, so the copy evicts most of what its neighbours (and its own destination, by the
/// time it is read) had cached, and streaming wins. Measured here (Zen3 VM, one 32 MiB L3 from
/// CPUID 0x8000001D): the hot-destination crossover of Temporal and NonTemporal is 8 MiB
/// (`cachecopy report`, 2026-11-29), which is `L3 / 4`. glibc computes its threshold from the
/// legacy leaf 0x80000006, which reports 256 MiB on this VM, and lands at 192 MiB. Without
/// cache figures: 4 MiB.
///
/// Fill: the same rule. A fill has only the destination stream, so its crossover was measured
/// on its own (`cachecopy report`, section 5b, and an interleaved probe, 2026-11-30): streaming
/// fills break even with cached ones at 5-6 MiB here, win 1.1-1.2x at 8 MiB and 2-3x from
/// 12 MiB; the copy rule's 8 MiB is the first power of two past that.
fn default_thresholds(cpu: &Cpu) -> (usize, usize) {
    const FALLBACK: usize = 4 << 20;
    let c = &cpu.caches;
    let copy = match (c.l2, c.l3) {
        (l2, Some(l3)) => (l3 / 4).max(2 * l2.unwrap_or(0)),
        (Some(l2), None) => 2 * l2,
        _ => FALLBACK,
    }
    .max(1 << 20);
    (copy, copy)
}

/// The copy threshold the crate derives from `cpu`'s caches when nothing overrides it: a quarter
/// of one last-level cache instance, at least twice the L2 and at least 1 MiB (4 MiB without
/// cache figures). On a Zen3 VM with a 32 MiB L3 slice: 8 MiB, where the measured hot-destination
/// crossover of temporal and streaming copies lies.
///
/// ```
/// let cpu = cachecopy::cpu();
/// assert!(cachecopy::default_nt_threshold(&cpu) >= 1 << 20);
/// ```
pub fn default_nt_threshold(cpu: &Cpu) -> usize {
    default_thresholds(cpu).0
}

/// The size from which `Temporal` fills use `rep stosb` on x86_64 CPUs with ERMS (fast
/// strings), when nothing overrides it: twice the copy threshold, so half the L3 here (16 MiB).
///
/// `rep stosb` writes whole lines without first reading them for ownership once the fill is
/// large; the vector loop pays that read for every line that is not cached. Measured on the Zen3
/// VM (interleaved, `benches/fill.rs`): below 12 MiB the vector loop is 1.05-1.2x `rep stosb`
/// with the destination cached, and equal to it with a cold one, and at 4-16 KiB it is 2x (the
/// string store's start-up); from 16 MiB `rep stosb` is ahead, 1.7x at 64 MiB and 2.2x at
/// 256 MiB. glibc uses `rep stosb` from 2 KiB (`x86_rep_stosb_threshold`), which is why the
/// vector loop beats its `memset` from 4 KiB to 8 MiB. Other CPUs and architectures: never
/// (`usize::MAX`).
fn default_fill_rep_threshold(cpu: &Cpu) -> usize {
    if cfg!(target_arch = "x86_64") && cpu.features.erms {
        default_thresholds(cpu).1.saturating_mul(2)
    } else {
        usize::MAX
    }
}

/// `CACHECOPY_NT_THRESHOLD=bytes` (std) overrides the copy and fill thresholds,
/// `CACHECOPY_FILL_NT_THRESHOLD=bytes` the fill threshold alone; each falls back to `default`.
fn env_thresholds(default: (usize, usize)) -> (usize, usize) {
    let both = env_bytes("CACHECOPY_NT_THRESHOLD");
    let copy = both.unwrap_or(default.0);
    let fill = env_bytes("CACHECOPY_FILL_NT_THRESHOLD")
        .or(both)
        .unwrap_or(default.1);
    (copy, fill)
}

/// The byte count in environment variable `name` (std); a value that is not one is ignored
/// with one line on stderr.
fn env_bytes(name: &str) -> Option<usize> {
    #[cfg(feature = "std")]
    {
        let v = std::env::var(name).ok()?;
        match v.trim().parse::<usize>() {
            Ok(n) => return Some(n),
            Err(_) => warn_once(format_args!(
                "cachecopy: ignoring {name}={v:?}: not a byte count"
            )),
        }
    }
    #[cfg(not(feature = "std"))]
    let _ = name;
    None
}

/// `CACHECOPY_BACKEND=name` (std): forces a backend this CPU supports.
fn env_backend(supported: &[&'static Kernels]) -> Option<&'static Kernels> {
    #[cfg(feature = "std")]
    {
        let v = std::env::var("CACHECOPY_BACKEND").ok()?;
        let found = Backend::from_name(v.trim())
            .and_then(|b| supported.iter().find(|k| k.backend == b).copied());
        if found.is_none() {
            let best = supported[supported.len() - 1].backend;
            warn_once(format_args!(
                "cachecopy: ignoring CACHECOPY_BACKEND={v:?}: not a backend this CPU supports \
                 ({}); using {best}",
                SupportedList(supported)
            ));
        }
        found
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = supported;
        None
    }
}

#[cfg(feature = "std")]
struct SupportedList<'a>(&'a [&'static Kernels]);

#[cfg(feature = "std")]
impl fmt::Display for SupportedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            write!(f, "{}{}", if i > 0 { ", " } else { "" }, k.backend)?;
        }
        Ok(())
    }
}

/// Prints one line on stderr, once per process, however many threads race detection.
#[cfg(feature = "std")]
fn warn_once(msg: fmt::Arguments<'_>) {
    use core::sync::atomic::AtomicBool;
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        std::eprintln!("{msg}");
    }
}

/// The size from which [`Mode::Auto`](crate::Mode::Auto) copies stream.
///
/// Set from the detected caches (see the crate docs for the formula), from
/// `CACHECOPY_NT_THRESHOLD=bytes` (with `std`), or by [`set_nt_threshold`].
///
/// ```
/// assert!(cachecopy::nt_threshold() >= 1 << 20);
/// ```
pub fn nt_threshold() -> usize {
    active();
    COPY_NT.load(Ordering::Relaxed)
}

/// Sets the size from which [`Mode::Auto`](crate::Mode::Auto) copies stream, for the whole
/// process. `0` streams every `Auto` copy; `usize::MAX` never does.
pub fn set_nt_threshold(bytes: usize) {
    active();
    COPY_NT.store(bytes, Ordering::Relaxed);
}

/// The size from which [`Mode::Auto`](crate::Mode::Auto) fills stream: the copy rule (see
/// [`nt_threshold`]), which measured right for fills too; `CACHECOPY_FILL_NT_THRESHOLD=bytes`
/// (else `CACHECOPY_NT_THRESHOLD`) or [`set_fill_nt_threshold`] overrides it.
pub fn fill_nt_threshold() -> usize {
    active();
    FILL_NT.load(Ordering::Relaxed)
}

/// Sets the size from which [`Mode::Auto`](crate::Mode::Auto) fills stream.
pub fn set_fill_nt_threshold(bytes: usize) {
    active();
    FILL_NT.store(bytes, Ordering::Relaxed);
}

/// The size from which [`Mode::Temporal`](crate::Mode::Temporal) fills (and `Auto` fills below
/// [`fill_nt_threshold`]) use the CPU's string store, x86 `rep stosb`, instead of vector stores.
///
/// Set on x86_64 CPUs with ERMS to twice the copy threshold (16 MiB on a 32 MiB L3), where
/// `rep stosb` starts to win because it skips reading lines it overwrites whole; overridden by
/// `CACHECOPY_FILL_REP_THRESHOLD=bytes` (with `std`) or [`set_fill_rep_threshold`].
/// `usize::MAX` (never) without ERMS and on other architectures. Fills of at most four
/// registers never use it, whatever the threshold.
///
/// ```
/// let t = cachecopy::fill_rep_threshold();
/// if !cachecopy::cpu().features.erms {
///     assert_eq!(t, usize::MAX);
/// }
/// ```
pub fn fill_rep_threshold() -> usize {
    active();
    FILL_REP.load(Ordering::Relaxed)
}

/// Sets [`fill_rep_threshold`] for the whole process (glibc's equivalent tunable is
/// `glibc.cpu.x86_rep_stosb_threshold`, 2 KiB by default). Ignored where the string store is
/// not used (other architectures); on an x86_64 CPU without ERMS `rep stosb` still works, only
/// slower, so a value below `usize::MAX` is honoured there too.
pub fn set_fill_rep_threshold(bytes: usize) {
    active();
    FILL_REP.store(bytes, Ordering::Relaxed);
}
