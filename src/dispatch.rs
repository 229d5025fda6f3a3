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
use crate::cpu::{Cpu, FlushOp};
use crate::engine::{self, Engine};
use crate::tune;

impl Backend {
    /// The backend of the active engine's streaming job ([`Engine::stream`]); see
    /// [`engine()`](crate::engine()) for every job. The engine's rule for this CPU picks it,
    /// unless `CACHECOPY_BACKEND` or `CACHECOPY_ENGINE` chose another (with `std`).
    ///
    /// ```
    /// assert!(cachecopy::Backend::supported().contains(&cachecopy::Backend::active()));
    /// ```
    pub fn active() -> Backend {
        active().engine.stream
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

impl Engine {
    /// The built-in engine for `cpu` (what dispatch runs when no variable overrides it), and
    /// the rule that chose it, citing its evidence (`docs/engine.md`).
    ///
    /// ```
    /// let cpu = cachecopy::cpu();
    /// let (engine, why) = cachecopy::Engine::rule(&cpu);
    /// assert!(cachecopy::Engine::supported().contains(&engine));
    /// assert!(!why.is_empty());
    /// ```
    pub fn rule(cpu: &Cpu) -> (Engine, &'static str) {
        let n = backend::runnable(&cpu.features);
        engine::rule(cpu, BACKENDS[n - 1].engine.stream)
    }

    /// Every engine this CPU runs: each pair of supported backends for the two jobs, with each
    /// edge store that differs (AVX-512: masked and overlapping). For tests and comparisons.
    pub fn supported() -> &'static [Engine] {
        active();
        &SUPPORTED_ENGINES[..ENGINES.load(Ordering::Relaxed)]
    }

    /// This engine's table, if this CPU runs it.
    #[inline]
    pub(crate) fn kernels(self) -> Result<&'static Kernels, Unsupported> {
        active();
        let n = SUPPORTED.load(Ordering::Relaxed);
        for b in [self.temporal, self.stream] {
            if POSITION[b as usize] as usize >= n {
                return Err(Unsupported(Unsupportable::Backend(b)));
            }
        }
        backend::composed(self).ok_or(Unsupported(Unsupportable::Backend(self.stream)))
    }
}

/// The active engine: which backend runs each job and how partial lines are written. See
/// [`Engine`] and `docs/engine.md`.
///
/// ```
/// let e = cachecopy::engine();
/// assert!(cachecopy::Engine::supported().contains(&e));
/// println!("engine: {e}"); // e.g. "temporal avx2, stream avx2, edges overlap"
/// ```
pub fn engine() -> Engine {
    active().engine
}

/// Every engine [`Engine::supported`] can list, in a fixed order (the runnable ones first once
/// detection has sorted them in).
static SUPPORTED_ENGINES: [Engine; 2 * BACKENDS.len() * BACKENDS.len()] = ENGINE_LIST.0;

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
                    out[i] = Engine::new(tb, sb, engine::Edges::Masked);
                    i += 1;
                    if matches!(tb, Backend::Avx512) || matches!(sb, Backend::Avx512) {
                        out[i] = Engine::new(tb, sb, engine::Edges::Overlap);
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

/// How many engines of [`SUPPORTED_ENGINES`] this CPU runs.
static ENGINES: AtomicUsize = AtomicUsize::new(1);

/// How many of [`SUPPORTED_ENGINES`] a CPU running the first `n` backends runs.
fn runnable_engines(n: usize) -> usize {
    SUPPORTED_ENGINES[..ENGINE_LIST.1]
        .iter()
        .take_while(|e| {
            POSITION[e.temporal as usize] < n as u8 && POSITION[e.stream as usize] < n as u8
        })
        .count()
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

/// The active backend's table, or `None` before the first detection: for callers that keep
/// their fast path free of the detection call (`copy_raw`'s table path).
#[inline(always)]
pub(crate) fn detected() -> Option<&'static Kernels> {
    // SAFETY: only ever set to a `&'static Kernels` (or left null).
    unsafe { ACTIVE.load(Ordering::Acquire).as_ref() }
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
    ENGINES.store(runnable_engines(n), Ordering::Relaxed);
    FLUSH.store(cpu.flush.index(), Ordering::Relaxed);
    let mask = cpu.flush_ops().fold(0u8, |m, op| m | 1 << op.index());
    FLUSH_SUPPORTED.store(mask, Ordering::Relaxed);
    tune::init(&cpu);
    let (rule, _) = engine::rule(&cpu, BACKENDS[n - 1].engine.stream);
    let mut e = rule;
    // Which wins, field by field: `CACHECOPY_ENGINE`, then `CACHECOPY_BACKEND`, then the
    // engine fields of `CACHECOPY_TUNE`, then the rule.
    if let Some(line) = tune::env(c"CACHECOPY_TUNE") {
        apply_engine_fields(&mut e, line, n, "CACHECOPY_TUNE");
    }
    if let Some(k) = env_backend(&BACKENDS[..n], rule) {
        (e.temporal, e.stream) = (k.engine.stream, k.engine.stream);
    }
    env_engine(&mut e, n);
    let e = Engine::new(e.temporal, e.stream, e.edges);
    // Both backends are runnable (checked as each was set), so the table exists.
    let chosen = backend::composed(e).unwrap_or(BACKENDS[n - 1]);
    ACTIVE.store(ptr::from_ref(chosen).cast_mut(), Ordering::Release);
    // `CACHECOPY_NT_THRESHOLD=calibrate`: measure now, on the table just published (so the
    // measurement's own copies find it), once however many threads race here.
    #[cfg(all(feature = "std", unix))]
    if tune::take_calibration_request() {
        crate::calibrate::run(chosen).apply();
    }
    chosen
}

/// Makes `e` the active engine (a calibration's decision), if this CPU runs it. Every table is
/// correct, so a copy racing this runs with the old or the new one.
#[cfg(all(feature = "std", unix))]
pub(crate) fn install(e: Engine) {
    if let Ok(k) = e.kernels() {
        ACTIVE.store(ptr::from_ref(k).cast_mut(), Ordering::Release);
    }
}

/// `CACHECOPY_BACKEND=name` (std): forces a backend this CPU supports.
fn env_backend(supported: &[&'static Kernels], engine_rule: Engine) -> Option<&'static Kernels> {
    let raw = tune::env(c"CACHECOPY_BACKEND")?;
    let v = core::str::from_utf8(raw).unwrap_or("").trim();
    let found = Backend::from_name(v)
        .and_then(|b| supported.iter().find(|k| k.engine.stream == b).copied());
    if found.is_none() {
        tune::warn(format_args!(
            "cachecopy: ignoring CACHECOPY_BACKEND={v:?}: not a backend this CPU supports \
             ({}); keeping this CPU's engine ({})",
            SupportedList(supported),
            engine_rule
        ));
    }
    found
}

/// `CACHECOPY_ENGINE=temporal=avx2,stream=avx512,edges=overlap` (std): sets the engine field by
/// field (`body=` sets both jobs); fields not named keep the rule's (or `CACHECOPY_BACKEND`'s)
/// choice. A field that names no backend this CPU runs, or no field, is reported once and
/// ignored; the others are kept. Parsed in place: no allocation.
fn env_engine(e: &mut Engine, n: usize) {
    let Some(raw) = tune::env(c"CACHECOPY_ENGINE") else {
        return;
    };
    apply_engine_fields(e, raw, n, "CACHECOPY_ENGINE");
}

/// Applies the comma-separated `key=value` fields of `raw` to `e` (see [`env_engine`]); `what`
/// names the variable in the warning. In `CACHECOPY_TUNE`, which carries the thresholds too,
/// only the engine's fields are read (`tune::tune_line` reads and checks the others).
pub(crate) fn apply_engine_fields(e: &mut Engine, raw: &[u8], n: usize, what: &str) {
    let text = core::str::from_utf8(raw).unwrap_or("");
    let line = what == "CACHECOPY_TUNE";
    for field in text.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        let (key, value) = field.split_once('=').unwrap_or((field, ""));
        let (key, value) = (key.trim(), value.trim());
        if line && !tune::ENGINE_FIELDS.contains(&key) {
            continue;
        }
        let mut next = *e;
        let ok = next.set_field(key, value).is_ok()
            && [next.temporal, next.stream]
                .iter()
                .all(|b| (POSITION[*b as usize] as usize) < n);
        if ok {
            *e = next;
        } else {
            tune::warn(format_args!(
                "cachecopy: ignoring {what} field {field:?}: expected temporal=, stream= or \
                 body= a backend this CPU supports ({}), or edges=masked|overlap",
                SupportedList(&BACKENDS[..n])
            ));
        }
    }
}

struct SupportedList<'a>(&'a [&'static Kernels]);

impl fmt::Display for SupportedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            write!(f, "{}{}", if i > 0 { ", " } else { "" }, k.engine.stream)?;
        }
        Ok(())
    }
}
