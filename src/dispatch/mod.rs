//! Dispatch: which code runs on this CPU, chosen once, then one indirect call per copy.
//!
//! The folder holds everything about that choice, bottom up: what an engine is ([`mod@engine`]:
//! `Backend`, `Edges`, `Engine`), the kernel tables this target compiles ([`table`]) and the one
//! mapping from a store kind to a table entry ([`store`]), the environment reader ([`mod@env`]),
//! the per-CPU record and its parser ([`tune`]), the built-in rules ([`rules`]); this file,
//! which detects and publishes; and what this CPU runs, asked of what was published
//! ([`supported`]). Beside them, for the unit tests, the CPU zoo (`zoo`): every CPU the project
//! has met as a record, every rule checked for each.
//!
//! Until the first detection the published table is a bootstrap table whose temporal entries
//! detect first; the first call (from any number of racing threads) detects the CPU, publishes
//! the chosen engine's table with a release store and returns it. Every racer computes the same
//! answer, so a lost race only repeats detection. Later calls are one acquire load (a plain
//! `mov` on x86_64) and the indirect call. A table rather than a function pointer per routine
//! keeps the entry points of one engine together.

pub(crate) mod engine;
pub(crate) mod env;
pub(crate) mod rules;
pub(crate) mod store;
pub(crate) mod supported;
pub(crate) mod table;
pub(crate) mod tune;
// Every CPU the project met, as test data, with every rule checked for each (unit tests).
#[cfg(all(test, feature = "std"))]
mod zoo;

use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

use crate::arch;
use crate::cpu::{Cpu, FlushOp};
use crate::kernel::STREAM_MIN;
use crate::threshold_cells;
use engine::{Backend, Engine};
use table::{Kernels, BACKENDS, NAMES};
use tune::{Runs, Small, Tuning};

/// Detects the CPU: features (with the OS state they need), cache geometry and the flush
/// instruction.
///
/// This executes CPUID (a VM exit under virtualization, microseconds each) every call; dispatch
/// itself detects once and caches what it needs, so call this for reports, not in a loop.
///
/// ```
/// let cpu = cachecopy::cpu();
/// println!("{} {} line {} B, flush with {}", cpu.vendor(), cpu.brand(), cpu.caches.line, cpu.flush);
/// ```
pub fn cpu() -> Cpu {
    arch::detect()
}

/// The active engine: which backend runs each job and how partial lines are written. See
/// [`Engine`] and `lab/findings/engine.md`.
///
/// ```
/// let e = cachecopy::engine();
/// assert!(cachecopy::Engine::supported().contains(&e));
/// println!("engine: {e}"); // e.g. "temporal avx2, stream avx2, edges overlap"
/// ```
pub fn engine() -> Engine {
    active().engine
}

/// What every call reads: the active table, and below how many bytes each mode stores
/// temporally (copies and moves, fills). One static, so that an entry point inlined at a call
/// site in another crate reaches the table and a bound from one address (one GOT entry: the
/// bound is then one compare with a memory operand beside the table's load).
struct Published {
    /// The active engine's table; [`BOOTSTRAP`] until detection has published it.
    table: AtomicPtr<Kernels>,
    /// See [`copy_below`].
    copy: Bounds,
    /// See [`fill_below`].
    fill: Bounds,
}

static PUBLISHED: Published = Published {
    table: AtomicPtr::new(ptr::addr_of!(BOOTSTRAP).cast_mut()),
    copy: bounds(),
    fill: bounds(),
};

/// The table in force before the first detection: the portable backend's, except that the
/// three entries a call reaches from its call site without detecting (`copy_temporal`,
/// `fill_temporal`, `moves.temporal`: [`detected`]) detect first and go on into the detected
/// table. So the published table is never null, and the call-site path is the table's load and
/// the call, with no test for "not yet detected" on every call (two instructions fewer, which
/// brought `Auto`'s resolution within glibc's instruction count at 128 and 256 B: docs/
/// small-calls.md, "Auto at the cost of Temporal"). Every other entry is only reached through
/// [`active`], which detects while this table is in force.
static BOOTSTRAP: Kernels = Kernels {
    copy_temporal: bootstrap_copy,
    fill_temporal: bootstrap_fill,
    moves: table::MoveKernels {
        temporal: bootstrap_move,
        ..BACKENDS[0].moves
    },
    ..*BACKENDS[0]
};

/// [`BOOTSTRAP`]'s `copy_temporal`: detects, then the detected table's.
///
/// # Safety
/// `Kernels::copy_temporal`'s contract.
unsafe extern "C" fn bootstrap_copy(dst: *mut u8, src: *const u8, len: usize) -> *mut u8 {
    // SAFETY: forwarded contract; the detected table's entries run on this CPU.
    unsafe { (active().copy_temporal)(dst, src, len) }
}

/// [`BOOTSTRAP`]'s `fill_temporal`, as [`bootstrap_copy`].
///
/// # Safety
/// `Kernels::fill_temporal`'s contract.
unsafe extern "C" fn bootstrap_fill(dst: *mut u8, byte: u8, len: usize) -> *mut u8 {
    // SAFETY: forwarded contract; the detected table's entries run on this CPU.
    unsafe { (active().fill_temporal)(dst, byte, len) }
}

/// [`BOOTSTRAP`]'s `moves.temporal`, as [`bootstrap_copy`].
///
/// # Safety
/// `MoveKernels::temporal`'s contract.
unsafe extern "C" fn bootstrap_move(dst: *mut u8, src: *const u8, len: usize) -> *mut u8 {
    // SAFETY: forwarded contract; the detected table's entries run on this CPU.
    unsafe { (active().moves.temporal)(dst, src, len) }
}

/// Below how many bytes each mode stores temporally, for copies (and moves): the one published
/// resolution of a mode, indexed by the mode's discriminant ([`index`]; `crate::mode` checks the
/// order at compile time). A call resolves any mode, a run-time value included, with one load
/// and one compare and no match on the mode (`Mode::stores_temporally`; a constant `Temporal`
/// loads nothing):
/// - `Temporal`: `usize::MAX`, never streams (no length reaches it);
/// - `NonTemporal`: `STREAM_MIN`, below which a streamed store and its fence cost more than the
///   whole call;
/// - `FlushCache`: 0, never temporal (its kernels write every line back);
/// - `Auto`: `max(STREAM_MIN, nt_threshold())`, kept in step with the threshold by every writer
///   of it (the setters, detection and `Calibration::apply`, each through [`refresh_bounds`]).
#[inline(always)]
pub(crate) fn copy_below() -> &'static Bounds {
    &PUBLISHED.copy
}

/// [`copy_below`] for fills: `Auto` at `max(STREAM_MIN, fill_nt_threshold())`.
#[inline(always)]
pub(crate) fn fill_below() -> &'static Bounds {
    &PUBLISHED.fill
}

/// One bound per mode (see [`copy_below`]).
pub(crate) type Bounds = [AtomicUsize; 4];
/// The index of each mode's bound in [`Bounds`].
pub(crate) mod index {
    /// `Mode::Temporal`'s.
    pub(crate) const TEMPORAL: usize = 0;
    /// `Mode::NonTemporal`'s.
    pub(crate) const NONTEMPORAL: usize = 1;
    /// `Mode::FlushCache`'s.
    pub(crate) const FLUSH_CACHE: usize = 2;
    /// `Mode::Auto`'s.
    pub(crate) const AUTO: usize = 3;
}

/// The bounds before detection. A call below its mode's bound goes straight to the published
/// table's temporal entry, which before detection is [`BOOTSTRAP`]'s (it detects, then stores
/// temporally), so every bound here must be one below which the mode stores temporally
/// whatever detection decides: `Temporal` always, `NonTemporal` below `STREAM_MIN`,
/// `FlushCache` never, `Auto` below `STREAM_MIN` (its least threshold). A longer `Auto` call
/// goes to the out-of-line path, which detects and resolves it on the detected threshold;
/// detection then raises the `Auto` bound ([`refresh_bounds`]).
const fn bounds() -> Bounds {
    let mut b = [const { AtomicUsize::new(STREAM_MIN) }; 4];
    b[index::TEMPORAL] = AtomicUsize::new(usize::MAX);
    b[index::FLUSH_CACHE] = AtomicUsize::new(0);
    b
}

/// Sets the `Auto` bounds from the published thresholds (`threshold_cells::COPY_NT`, `threshold_cells::FILL_NT`)
/// after any writer changed them: the setters, detection and `Calibration::apply` call it
/// after their (sequentially consistent) stores. Writers may race: each re-reads its threshold
/// after storing the bound and goes round again when another writer changed it meanwhile, so
/// once the writers are done every bound is its threshold's. Every value a bound ever holds is
/// `max(STREAM_MIN, t)` for a threshold `t` some writer set, a valid setting, so a call that
/// reads it mid-race runs with the old or the new one. No allocation, no lock.
pub(crate) fn refresh_bounds() {
    for (threshold, below) in [
        (&threshold_cells::COPY_NT, copy_below()),
        (&threshold_cells::FILL_NT, fill_below()),
    ] {
        loop {
            let t = threshold.load(Ordering::SeqCst);
            // Before detection a threshold not set yet is `UNSET`: the bound stays at the
            // least one, so that a long `Auto` call still goes out of line and is resolved
            // on the detected threshold (see `bounds`).
            let bound = if t == threshold_cells::UNSET {
                STREAM_MIN
            } else {
                t.max(STREAM_MIN)
            };
            below[index::AUTO].store(bound, Ordering::SeqCst);
            if threshold.load(Ordering::SeqCst) == t {
                break;
            }
        }
    }
}

/// Held by the unit tests that set the process-wide thresholds, one at a time (the other tests
/// of the binary copy right whatever the thresholds are, and assert no store kind that a
/// threshold decides).
#[cfg(all(test, feature = "std"))]
pub(crate) static TEST_THRESHOLDS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// How many entries of [`BACKENDS`] this CPU runs.
static SUPPORTED: AtomicUsize = AtomicUsize::new(1);
/// How many engines of [`table::SUPPORTED_ENGINES`] this CPU runs.
static ENGINES: AtomicUsize = AtomicUsize::new(1);
static FLUSH: AtomicU8 = AtomicU8::new(0);
static FLUSH_SUPPORTED: AtomicU8 = AtomicU8::new(0);

/// The active backend's table, detecting on first use.
#[inline(always)]
pub(crate) fn active() -> &'static Kernels {
    let p = PUBLISHED.table.load(Ordering::Acquire);
    if ptr::eq(p, &BOOTSTRAP) {
        init()
    } else {
        // SAFETY: only ever set to a `&'static Kernels`.
        unsafe { &*p }
    }
}

/// The published table, without detecting: the active backend's, or before the first
/// detection [`BOOTSTRAP`], whose `copy_temporal`, `fill_temporal` and `moves.temporal` detect
/// and go on into the detected table (its other entries are the portable backend's: take only
/// those three from it). For callers that keep their fast path free of the detection call
/// (`copy_raw`'s table path).
#[inline(always)]
pub(crate) fn detected() -> &'static Kernels {
    // SAFETY: only ever set to a `&'static Kernels`, never null.
    unsafe { &*PUBLISHED.table.load(Ordering::Acquire) }
}

/// The backends this CPU runs, best last (detecting on first use).
#[inline(always)]
pub(crate) fn backends() -> &'static [Backend] {
    active();
    &NAMES[..SUPPORTED.load(Ordering::Relaxed)]
}

/// The engines this CPU runs (detecting on first use).
pub(crate) fn engines() -> &'static [Engine] {
    active();
    &table::SUPPORTED_ENGINES[..ENGINES.load(Ordering::Relaxed)]
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

/// Whether this CPU has what the masked small class needs beyond its record's AVX-512
/// (`rules::masked_small`): BMI2.
fn masked_small_runs() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(all(
            target_arch = "x86_64",
            target_feature = "sse2",
            not(cachecopy_integer_only),
            not(miri)
        ))] {
            arch::masked::runs()
        } else {
            false
        }
    }
}

/// Whether this CPU runs the masked small class (set at detection).
static MASKS: AtomicBool = AtomicBool::new(false);

#[cold]
#[inline(never)]
fn init() -> &'static Kernels {
    // The first call's caller keeps its `errno` (sysfs reads, a failed warning write).
    let _keep = env::KeepErrno::new();
    let cpu = arch::detect();
    let n = table::runnable(&cpu.features);
    SUPPORTED.store(n, Ordering::Relaxed);
    ENGINES.store(table::runnable_engines(n), Ordering::Relaxed);
    let mask = cpu.flush_ops().fold(0u8, |m, op| m | 1 << op.index());
    FLUSH_SUPPORTED.store(mask, Ordering::Relaxed);
    let masks = rules::masked_small(&cpu) && masked_small_runs();
    MASKS.store(masks, Ordering::Relaxed);
    let runs = Runs {
        backends: &NAMES[..n],
        flush: mask,
        masks,
    };
    let mut t = rules::rule(&cpu, NAMES[n - 1]);
    let calibrate = t.read_env(&runs);
    let chosen = publish(&t, true);
    // `CACHECOPY_NT_THRESHOLD=calibrate`: measure now, on the table just published (so the
    // measurement's own copies find it), once however many threads race here.
    #[cfg(all(feature = "std", unix))]
    if calibrate && !CALIBRATED.swap(true, Ordering::Relaxed) {
        <FirstUse as Calibrate>::calibrate_and_apply(chosen, t);
    }
    #[cfg(not(all(feature = "std", unix)))]
    let _ = calibrate;
    chosen
}

/// Whether `CACHECOPY_NT_THRESHOLD=calibrate` was taken (by exactly one detecting thread).
#[cfg(all(feature = "std", unix))]
static CALIBRATED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// The measurement `CACHECOPY_NT_THRESHOLD=calibrate` asks detection to run inside the first
/// call. The calibration (`src/calibrate/`), a client that sits above the copy path, implements
/// it for [`FirstUse`]: dispatch calls it without naming anything above itself.
#[cfg(all(feature = "std", unix))]
pub(crate) trait Calibrate {
    /// Measures on `table` (the one just published) over the record `rule` and installs what
    /// it decided, without allocating or locking (an allocator may be the first caller).
    fn calibrate_and_apply(table: &'static Kernels, rule: Tuning);
}

/// The first call's detection, for which the calibration implements [`Calibrate`].
#[cfg(all(feature = "std", unix))]
pub(crate) struct FirstUse;

/// Publishes the record `t` (whose backends and flush instruction this CPU runs): its engine's
/// table, its flush instruction and its thresholds (`first`: only where detection has not
/// stored one yet, so a setter that ran first keeps its value). Returns the table. Every
/// record is correct, so a copy racing this runs with the old or the new one.
pub(crate) fn publish(t: &Tuning, first: bool) -> &'static Kernels {
    FLUSH.store(t.flush.index(), Ordering::Relaxed);
    // A masked class only where the CPU runs it (every writer's record was checked against
    // `MASKS`; this keeps a hand-built one honest too).
    let small = if MASKS.load(Ordering::Relaxed) {
        t.small.fill_bound()
    } else {
        0
    };
    threshold_cells::MASKED_FILL_BELOW.store(small, Ordering::Relaxed);
    // AVX-512 loops for large copies only where the CPU runs them (the field was checked as it
    // was read; this keeps a hand-built record honest too): `kernel::copy_temporal` runs
    // AVX-512 code for any other value.
    let n = SUPPORTED.load(Ordering::Relaxed);
    let wide = if NAMES[..n].contains(&Backend::Avx512) {
        t.wide_copy
    } else {
        usize::MAX
    };
    threshold_cells::WIDE_COPY.store(wide, Ordering::Relaxed);
    t.store_thresholds(first);
    refresh_bounds();
    // Both backends are runnable (checked as each field was read), so the table exists.
    let chosen = table::composed(t.engine).unwrap_or(BACKENDS[n - 1]);
    PUBLISHED
        .table
        .store(ptr::from_ref(chosen).cast_mut(), Ordering::Release);
    chosen
}

/// Every per-CPU choice in force: the record detection built (rules, then `CACHECOPY_TUNE`,
/// then the single variables), with what setters and an applied calibration changed since. Its
/// `Display` is the `CACHECOPY_TUNE` value that sets all of it again.
///
/// ```
/// let t = cachecopy::tuning();
/// assert_eq!(t.fill_nt, cachecopy::fill_nt_threshold());
/// assert_eq!(t.flush, cachecopy::cpu().flush_ops().find(|&op| op == t.flush).unwrap());
/// ```
pub fn tuning() -> Tuning {
    let k = active();
    let mut t = Tuning {
        engine: k.engine,
        flush: flush_op(),
        nt: 0,
        fill_nt: 0,
        rep_movsb: 0,
        fill_rep: 0,
        small: Small::from_fill_bound(threshold_cells::MASKED_FILL_BELOW.load(Ordering::Relaxed)),
        pages: 0,
        wide_copy: threshold_cells::WIDE_COPY.load(Ordering::Relaxed),
    };
    t.load_thresholds();
    t
}
