//! Run-time dispatch: detect once, lock-free, then one indirect call per copy.
//!
//! `ACTIVE` starts null; the first call (from any number of racing threads) detects the CPU,
//! publishes the chosen backend's table with a release store and returns it. Every racer computes
//! the same answer, so a lost race only repeats detection. Later calls are one acquire load (a
//! plain `mov` on x86_64), a predicted branch and the indirect call. A table rather than a
//! function pointer per routine keeps the sixteen entry points of one backend together.

use core::fmt;
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

use crate::arch;
use crate::backend::{self, Backend, Kernels, BACKENDS, NAMES, POSITION};
use crate::cpu::FlushOp;
use crate::tune;

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

    /// This backend's kernels, if this CPU runs it.
    /// One table lookup (this sits on the path of every `copy_with`, `fill_with` and cursor op).
    #[inline]
    pub(crate) fn kernels(self) -> Result<&'static Kernels, Unsupported> {
        active();
        let i = POSITION[self as usize] as usize;
        if i < SUPPORTED.load(Ordering::Relaxed) {
            Ok(BACKENDS[i])
        } else {
            Err(Unsupported(Unsupportable::Backend(self)))
        }
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

static ACTIVE: AtomicPtr<Kernels> = AtomicPtr::new(ptr::null_mut());
static SUPPORTED: AtomicUsize = AtomicUsize::new(1);
static FLUSH: AtomicU8 = AtomicU8::new(0);
static FLUSH_SUPPORTED: AtomicU8 = AtomicU8::new(0);

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
    let n = backend::runnable(&cpu.features);
    SUPPORTED.store(n, Ordering::Relaxed);
    FLUSH.store(cpu.flush.index(), Ordering::Relaxed);
    let mask = cpu.flush_ops().fold(0u8, |m, op| m | 1 << op.index());
    FLUSH_SUPPORTED.store(mask, Ordering::Relaxed);
    tune::init(&cpu);
    let best = BACKENDS[n - 1];
    let chosen = env_backend(&BACKENDS[..n]).unwrap_or(best);
    ACTIVE.store(ptr::from_ref(chosen).cast_mut(), Ordering::Release);
    // `CACHECOPY_NT_THRESHOLD=calibrate`: measure now, on the table just published (so the
    // measurement's own copies find it), once however many threads race here.
    #[cfg(all(feature = "std", unix))]
    if tune::take_calibration_request() {
        crate::calibrate::run(chosen).apply();
    }
    chosen
}

/// `CACHECOPY_BACKEND=name` (std): forces a backend this CPU supports.
fn env_backend(supported: &[&'static Kernels]) -> Option<&'static Kernels> {
    let raw = tune::env(c"CACHECOPY_BACKEND")?;
    let v = core::str::from_utf8(raw).unwrap_or("").trim();
    let found =
        Backend::from_name(v).and_then(|b| supported.iter().find(|k| k.backend == b).copied());
    if found.is_none() {
        let best = supported[supported.len() - 1].backend;
        tune::warn(format_args!(
            "cachecopy: ignoring CACHECOPY_BACKEND={v:?}: not a backend this CPU supports \
             ({}); using {best}",
            SupportedList(supported)
        ));
    }
    found
}

struct SupportedList<'a>(&'a [&'static Kernels]);

impl fmt::Display for SupportedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            write!(f, "{}{}", if i > 0 { ", " } else { "" }, k.backend)?;
        }
        Ok(())
    }
}
