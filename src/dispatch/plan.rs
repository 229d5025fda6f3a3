//! The per-CPU plan: every choice this process runs with, built once and never changed.
//!
//! A [`Plan`] is the record of choices ([`Tuning`]: the engine, the thresholds, the variant of
//! each path) together with everything a call derives from it: the kernel table composed for
//! the engine, below how many bytes each mode stores temporally, the knobs the kernels read,
//! and what this CPU runs (so a plan can be checked against it). It is built from a record by
//! [`Plan::new`] and never changes afterwards.
//!
//! One plan is published for the process, through one pointer ([`current`]): detection builds
//! it on the first call from the CPU's rule and `CACHECOPY_TUNE`; [`publish`] replaces it with
//! another. Every call loads the pointer once and reads what it needs from the plan it found,
//! kernels included (they get the plan's [`Knobs`] as an argument), so a call never mixes two
//! plans and a plan swapped in mid-call changes nothing for calls in flight, which finish on the
//! old one: published plans are `'static` and are never freed or written again. This is how
//! glibc treats its per-CPU record (computed once, read by its resolvers) and how memchr
//! publishes its one function pointer.
//!
//! Until the first detection the pointer holds [`BOOTSTRAP`], whose temporal entries detect
//! first, so that the call-site path never tests "detected yet?".

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

use super::engine::{Backend, Edges, Engine};
use super::supported::{Unsupportable, Unsupported};
use super::table::{self, Kernels, BACKENDS, NAMES, POSITION};
use super::tune::{EntryCopy, FrameBuild, Runs, Small, Tuning};
use crate::cpu::{Cpu, FlushOp};
use crate::kernel::{Knobs, STREAM_MIN};

/// One per-CPU plan: the choices of a [`Tuning`] record, checked against this CPU, with the
/// kernels and bounds a call derives from them. Immutable: [`Plan::new`] builds one, [`publish`]
/// makes one the process's, and [`Plan::current`] returns the one in force.
///
/// A plan is also a value a test or a benchmark runs directly, without publishing it
/// ([`Plan::copy`], [`Plan::fill`], [`Plan::copy_within`]):
///
/// ```
/// use cachecopy::tune::Plan;
/// use cachecopy::Mode;
///
/// // The plan in force, with `Auto` copies streaming from 64 KiB.
/// let mut t = *Plan::current().tuning();
/// t.nt = 64 << 10;
/// let plan = Plan::new(t).unwrap();
/// let src = vec![7u8; 1 << 20];
/// let mut dst = vec![0u8; 1 << 20];
/// plan.copy(&mut dst, &src, Mode::Auto); // streams: 1 MiB >= 64 KiB
/// assert_eq!(dst, src);
/// ```
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Plan {
    /// Below how many bytes each mode stores temporally, copies and moves (by the mode's
    /// discriminant; see `Mode::stores_temporally`): `Temporal` never streams, `NonTemporal`
    /// from `STREAM_MIN`, `FlushCache` never stores temporally, `Auto` from
    /// `max(STREAM_MIN, nt)`. First in the plan, beside the fills' bounds and the small fills'
    /// choice: what a short call reads.
    pub(crate) copy_below: Bounds,
    /// As `copy_below`, for fills (`Auto` from `max(STREAM_MIN, fill_nt)`).
    pub(crate) fill_below: Bounds,
    /// A short fill whose destination's offset in its 4 KiB page is below this takes the
    /// plan's small-fill variant (`kernel::small`, `small`): 0 for the plain classes (no fill
    /// takes a variant), `MASKED_FILL_WINDOWS` for masked fills (a 64-byte window at such an
    /// offset stays in its page), 4096 for the AVX pairs (every fill; they store exactly).
    pub(crate) small_below: usize,
    /// The record's small-fill variant, beside `small_below` (read only where that admits it).
    pub(crate) small: Small,
    /// The kernel table of the record's engine, with the knobs its kernels read (from which
    /// size a path takes its variant).
    pub(crate) kernels: Kernels,
    /// The record this plan was built from.
    pub(crate) tuning: Tuning,
    /// What this CPU runs (the same for every plan of a process).
    pub(crate) facts: Facts,
}

impl core::fmt::Debug for Plan {
    /// The record's tuning line: every choice of the plan (the rest is derived from it).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Plan({})", self.tuning)
    }
}

/// A short fill at a page offset below this keeps its 64-byte window inside its page.
pub(crate) const MASKED_FILL_WINDOWS: usize = 4096 - 63;

/// What a CPU runs, as far as a plan is concerned: found once by detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Facts {
    /// How many entries of [`BACKENDS`] the CPU runs (a prefix: best last).
    pub(crate) backends: u8,
    /// One bit per [`FlushOp::index`] the CPU executes.
    pub(crate) flush: u8,
    /// Whether the CPU runs the masked small class (AVX-512 F and BW, BMI2, in this build).
    pub(crate) masks: bool,
    /// Whether the CPU runs the AVX pairs of small fills (AVX2, in this build).
    pub(crate) pairs: bool,
    /// Only [`SAFE`]'s: facts that a thread racing the first detection assumed, not found.
    pub(crate) assumed: bool,
}

impl Facts {
    /// What `cpu` runs in this build.
    pub(crate) fn of(cpu: &Cpu) -> Facts {
        Facts {
            backends: table::runnable(&cpu.features) as u8,
            flush: cpu.flush_ops().fold(0u8, |m, op| m | 1 << op.index()),
            masks: super::rules::masked_small(cpu) && small_asm_runs() && masked_small_bmi2(),
            pairs: cpu.features.avx2 && small_asm_runs(),
            assumed: false,
        }
    }

    /// The form the record's parser checks values against.
    pub(crate) fn runs(&self) -> Runs<'static> {
        Runs {
            backends: &NAMES[..self.backends as usize],
            flush: self.flush,
            masks: self.masks,
            pairs: self.pairs,
        }
    }

    /// Whether the CPU runs `backend`.
    pub(crate) fn runs_backend(&self, backend: Backend) -> bool {
        POSITION[backend as usize] < self.backends
    }
}

/// Whether this build has the small fills' inline assembly (`arch::masked`, `arch::pair`):
/// x86_64 with vector registers, not Miri (which runs no assembly).
const fn small_asm_runs() -> bool {
    cfg!(all(
        target_arch = "x86_64",
        target_feature = "sse2",
        not(cachecopy_integer_only),
        not(miri)
    ))
}

/// Whether the CPU has what the masked small class needs beyond its record's AVX-512
/// (`rules::masked_small`): BMI2.
fn masked_small_bmi2() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(all(
            target_arch = "x86_64",
            target_feature = "sse2",
            not(cachecopy_integer_only),
            not(miri)
        ))] {
            crate::arch::masked::runs()
        } else {
            false
        }
    }
}

/// Below how many bytes each mode stores temporally, indexed by the mode's discriminant (in
/// the order of [`index`]; `crate::mode` checks it at compile time): one operation's bounds in
/// a plan ([`Plan::copy_below`], [`Plan::fill_below`]).
pub(crate) type Bounds = [usize; 4];

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

/// The bounds of a record's `Auto` threshold `nt` (see [`Plan::copy_below`]).
const fn bounds(nt: usize) -> Bounds {
    let mut b = [STREAM_MIN; 4];
    b[index::TEMPORAL] = usize::MAX;
    b[index::NONTEMPORAL] = STREAM_MIN;
    b[index::FLUSH_CACHE] = 0;
    b[index::AUTO] = if nt > STREAM_MIN { nt } else { STREAM_MIN };
    b
}

impl Plan {
    /// Builds the plan of `tuning` on this CPU (detecting it on first use).
    ///
    /// # Errors
    /// [`Unsupported`] when this CPU cannot run one of the record's choices: a backend of its
    /// engine, its flush instruction, masked fills ([`Small::MaskedFills`]) or copies
    /// ([`EntryCopy::Masked`]), AVX-512 loops
    /// (`wide_copy` below `usize::MAX`), or a `pages` other than 1, 2, 4 or 8.
    ///
    /// ```
    /// use cachecopy::tune::{Backend, Engine, Plan};
    /// let mut t = *Plan::current().tuning();
    /// t.engine = Engine::uniform(Backend::Generic); // every CPU runs the word backend
    /// let plan = Plan::new(t).unwrap();
    /// assert_eq!(plan.tuning().engine.temporal, Backend::Generic);
    /// ```
    pub fn new(tuning: Tuning) -> Result<Plan, Unsupported> {
        Plan::build(&tuning, facts())
    }

    /// [`Plan::new`] against the facts of a CPU.
    pub(crate) fn build(t: &Tuning, facts: Facts) -> Result<Plan, Unsupported> {
        let mut p = MaybeUninit::<Plan>::uninit();
        // SAFETY: `p` is ours to write; on `Ok` every field was written.
        unsafe {
            Plan::build_into(t, facts, p.as_mut_ptr())?;
            Ok(p.assume_init())
        }
    }

    /// Checks the record `t` against `facts`, then builds its plan at `out`, field by field: no
    /// copy of a whole plan or table, which the compiler would make a call to `memcpy` (the
    /// first detection runs inside the first `memcpy` of a process that preloads cachecopy).
    ///
    /// # Safety
    /// `out` valid for writes of a `Plan`; on `Err` nothing was written.
    unsafe fn build_into(t: &Tuning, facts: Facts, out: *mut Plan) -> Result<(), Unsupported> {
        let engine = Engine::new(t.engine.temporal, t.engine.stream, t.engine.edges);
        for b in [engine.temporal, engine.stream] {
            if !facts.runs_backend(b) {
                return Err(Unsupported(Unsupportable::Backend(b)));
            }
        }
        if facts.flush & (1 << t.flush.index()) == 0 {
            return Err(Unsupported(Unsupportable::Flush(t.flush)));
        }
        if !facts.runs().small(t.small) {
            return Err(Unsupported(Unsupportable::Small(t.small)));
        }
        if !facts.runs().entry_copy(t.entry_copy) {
            return Err(Unsupported(Unsupportable::EntryCopy(t.entry_copy)));
        }
        if t.wide_copy != usize::MAX && !facts.runs_backend(Backend::Avx512) {
            return Err(Unsupported(Unsupportable::Wide));
        }
        if !matches!(t.pages, 1 | 2 | 4 | 8) {
            return Err(Unsupported(Unsupportable::Pages(t.pages)));
        }
        // Both backends run here, so the composed table exists.
        let table = table::composed(engine).unwrap_or(BACKENDS[0]);
        // SAFETY: `out` is valid for writes (caller); each field is written through a raw
        // place, the table a word at a time from a live table of the same type.
        unsafe {
            let k = ptr::addr_of_mut!((*out).kernels);
            copy_words(k, table);
            (*k).knobs = Knobs {
                rep_movsb: t.rep_movsb,
                fill_rep: t.fill_rep,
                wide_copy: t.wide_copy,
                pages: t.pages,
            };
            // The temporal entries that read a size threshold only where one is set: every
            // other plan's copies and fills read none.
            if t.rep_movsb != usize::MAX || t.wide_copy != usize::MAX {
                (*k).copy_temporal = table.sized.copy_temporal;
                (*k).moves.temporal = table.sized.move_temporal;
            }
            if t.fill_rep != usize::MAX {
                (*k).fill_temporal = table.sized.fill_temporal;
            }
            write_bounds(ptr::addr_of_mut!((*out).copy_below), t.nt);
            write_bounds(ptr::addr_of_mut!((*out).fill_below), t.fill_nt);
            ptr::addr_of_mut!((*out).small_below).write(match t.small {
                Small::MaskedFills => MASKED_FILL_WINDOWS,
                Small::AvxPairs => 4096,
                Small::Plain => 0,
            });
            ptr::addr_of_mut!((*out).small).write(t.small);
            let tuning = ptr::addr_of_mut!((*out).tuning);
            copy_words(tuning, t);
            (*tuning).engine = engine;
            ptr::addr_of_mut!((*out).facts).write(facts);
        }
        Ok(())
    }

    /// The plan in force: the one detection built on the first call (the CPU's rule, refined by
    /// `CACHECOPY_TUNE`), or the last one [`publish`]ed since.
    ///
    /// Like a copy, it never waits (a signal handler or an allocator may ask): on a thread that
    /// races another thread's first call while that one is still building the process's plan,
    /// it returns the conservative stand-in plan this thread's calls run meanwhile (baseline
    /// engine, no streaming). Once any call on any thread has returned, every thread sees the
    /// detected plan.
    ///
    /// ```
    /// let plan = cachecopy::tune::Plan::current();
    /// println!("CACHECOPY_TUNE={}", plan.tuning()); // the line that builds it again
    /// ```
    pub fn current() -> &'static Plan {
        active()
    }

    /// The plan of this CPU's built-in rule, without the environment: what
    /// [`Tuning::rule`](crate::tune::Tuning::rule) chooses, built.
    pub fn rule() -> Plan {
        let cpu = crate::arch::detect();
        let facts = Facts::of(&cpu);
        let widest = NAMES[facts.backends as usize - 1];
        // The rule only chooses what the CPU runs.
        Plan::build(&super::rules::rule(&cpu, widest), facts)
            .expect("the built-in rule chose something this CPU does not run")
    }

    /// The record this plan was built from: every choice in it. Its `Display` is the
    /// `CACHECOPY_TUNE` line that builds the plan again.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }
}

/// The plan in force, loaded once (an acquire load: a plain `mov` on x86_64). Before the first
/// detection, [`BOOTSTRAP`]: take only its temporal entries, which detect (see [`active`] for
/// everything else).
#[inline(always)]
pub(crate) fn current() -> &'static Plan {
    // SAFETY: only ever set to a `&'static Plan`, never null.
    unsafe { &*CURRENT.load(Ordering::Acquire) }
}

/// The plan in force, detecting first if nothing is published yet.
#[inline(always)]
pub(crate) fn active() -> &'static Plan {
    let p = current();
    if ptr::eq(p, &BOOTSTRAP) {
        init()
    } else {
        p
    }
}

/// The plan in force as [`active`] finds it, except that a thread racing the first detection
/// waits for the winner's plan instead of taking [`SAFE`] for one call: for whoever builds a new
/// plan on the one in force (`update`, the calibration, which allocate anyway), never for a
/// copy, a fill or [`Plan::current`], which must not wait. The wait is the winner's build of one
/// plan (any calibration it then runs happens after it published), spinning, with no lock.
#[cfg(feature = "alloc")]
#[cold]
pub(crate) fn settled() -> &'static Plan {
    loop {
        let p = active();
        // `SAFE` is never published (a failed build copies it into the slot): seeing it means
        // another thread is still writing the detected plan.
        if !ptr::eq(p, &SAFE) {
            return p;
        }
        #[cfg(feature = "std")]
        std::thread::yield_now();
        #[cfg(not(feature = "std"))]
        core::hint::spin_loop();
    }
}

/// Whether `p` is the bootstrap plan (nothing detected yet).
#[inline(always)]
pub(crate) fn is_bootstrap(p: &Plan) -> bool {
    ptr::eq(p, &BOOTSTRAP)
}

/// What this CPU runs: the published plan's facts, or found now where the plan in force only
/// assumed them (a thread that lost the first detection's race, for its one call).
#[inline]
pub(crate) fn facts() -> Facts {
    facts_of(active())
}

/// What this CPU runs, from the plan `p` in hand (found now where `p` only assumed it).
#[inline]
pub(crate) fn facts_of(p: &Plan) -> Facts {
    if p.facts.assumed {
        facts_found()
    } else {
        p.facts
    }
}

/// [`facts`] where the plan in force only assumed them: found now.
#[cold]
#[inline(never)]
fn facts_found() -> Facts {
    Facts::of(&crate::arch::detect())
}

/// Makes `plan` the process's: every call that starts after this returns uses it; calls in
/// flight finish on the plan they started with, which stays valid (both are `'static`).
///
/// ```
/// use cachecopy::tune::{self, Plan};
/// let mut t = *Plan::current().tuning();
/// t.nt = 32 << 20;
/// let plan: &'static Plan = Box::leak(Box::new(Plan::new(t).unwrap()));
/// tune::publish(plan);
/// assert_eq!(Plan::current().tuning().nt, 32 << 20);
/// ```
pub fn publish(plan: &'static Plan) {
    CURRENT.store(ptr::from_ref(plan).cast_mut(), Ordering::Release);
}

/// Builds the plan in force with `change` applied to its record, publishes it and returns it:
/// the one-line form of [`Plan::new`] and [`publish`], for callers that tune the process (the C
/// library's setters, a program reading its own configuration).
///
/// A published plan must outlive every call that may still hold it, so each distinct record
/// gets one plan, allocated the first time and never freed; publishing a record again reuses
/// its plan. Not for a data path: it allocates (once per distinct record) and walks the list of
/// plans made so far.
///
/// # Errors
/// As [`Plan::new`]; nothing is published then.
///
/// ```
/// use cachecopy::tune;
/// let p = tune::update(|t| t.fill_nt = 64 << 20).unwrap();
/// assert_eq!(tune::Plan::current().tuning().fill_nt, 64 << 20);
/// assert!(core::ptr::eq(p, tune::Plan::current()));
/// ```
#[cfg(feature = "alloc")]
pub fn update(change: impl FnOnce(&mut Tuning)) -> Result<&'static Plan, Unsupported> {
    let mut t = settled().tuning;
    change(&mut t);
    let plan = Plan::new(t)?;
    let p = made(plan);
    publish(p);
    Ok(p)
}

/// A plan [`update`] made, in a list that only grows.
#[cfg(feature = "alloc")]
struct Made {
    plan: Plan,
    next: *const Made,
}

/// The newest plan [`update`] made (each links to the one before).
#[cfg(feature = "alloc")]
static MADE: AtomicPtr<Made> = AtomicPtr::new(ptr::null_mut());

/// The `'static` plan of `plan`'s record: one made before, or `plan`, allocated and listed.
#[cfg(feature = "alloc")]
pub(crate) fn made(plan: Plan) -> &'static Plan {
    /// The listed plan of `plan`'s record among the nodes from `at` up to `stop`.
    fn find(mut at: *const Made, stop: *const Made, plan: &Plan) -> Option<&'static Plan> {
        while !at.is_null() && at != stop {
            // SAFETY: every listed node was leaked (never freed) and fully written before it
            // was published with release ordering, which the caller's acquire load saw.
            let m = unsafe { &*at };
            if m.plan.tuning == plan.tuning {
                return Some(&m.plan);
            }
            at = m.next;
        }
        None
    }
    let mut head = MADE.load(Ordering::Acquire).cast_const();
    if let Some(p) = find(head, ptr::null(), &plan) {
        return p;
    }
    let node = alloc::boxed::Box::leak(alloc::boxed::Box::new(Made { plan, next: head }));
    loop {
        match MADE.compare_exchange(head.cast_mut(), node, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return &node.plan,
            Err(now) => {
                // Another thread listed plans meanwhile: one of them may be this record's (then
                // this node stays unlisted: one plan leaked per such race).
                if let Some(p) = find(now, head, &node.plan) {
                    return p;
                }
                head = now;
                node.next = head;
            }
        }
    }
}

/// The published plan.
static CURRENT: AtomicPtr<Plan> = AtomicPtr::new(ptr::addr_of!(BOOTSTRAP).cast_mut());

/// The record a plan is built from before anything is known: the word backend, no variant, no
/// streaming from `Auto`, the fence for flushes.
const NOTHING: Tuning = Tuning {
    engine: Engine {
        temporal: Backend::Generic,
        stream: Backend::Generic,
        edges: Edges::Overlap,
    },
    flush: FlushOp::Fence,
    nt: usize::MAX,
    fill_nt: usize::MAX,
    rep_movsb: usize::MAX,
    fill_rep: usize::MAX,
    small: Small::Plain,
    pages: 1,
    wide_copy: usize::MAX,
    entry_copy: EntryCopy::Plain,
    frame: FrameBuild::Plain,
};

/// The plan in force before the first detection: the portable backend's table, except that the
/// three entries a call reaches from its call site without detecting (`copy_temporal`,
/// `fill_temporal`, `moves.temporal`) detect first and go on into the detected plan. So the
/// published pointer is never null, and the call-site path is the plan's load and the call, with
/// no test for "not yet detected" on every call. Its bounds are ones below which every mode stores
/// temporally whatever detection decides (`Auto` below `STREAM_MIN`, its least threshold): a
/// longer `Auto` call goes out of line, which detects and resolves it on the detected plan.
/// Every other entry is only reached through [`active`], which detects while this plan is in
/// force.
static BOOTSTRAP: Plan = Plan {
    copy_below: bounds(STREAM_MIN),
    fill_below: bounds(STREAM_MIN),
    small_below: 0,
    small: Small::Plain,
    kernels: Kernels {
        copy_temporal: bootstrap_copy,
        fill_temporal: bootstrap_fill,
        moves: table::MoveKernels {
            temporal: bootstrap_move,
            ..BACKENDS[0].moves
        },
        ..*BACKENDS[0]
    },
    tuning: NOTHING,
    facts: Facts {
        backends: 1,
        flush: 1 << 5,
        masks: false,
        pairs: false,
        assumed: true,
    },
};

/// [`BOOTSTRAP`]'s `copy_temporal`: detects, then the detected plan's.
///
/// # Safety
/// `Kernels::copy_temporal`'s contract.
unsafe extern "C" fn bootstrap_copy(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    _: &Knobs,
) -> *mut u8 {
    let p = active();
    // SAFETY: forwarded contract; the detected plan's entries run on this CPU.
    unsafe { (p.kernels.copy_temporal)(dst, src, len, &p.kernels.knobs) }
}

/// [`BOOTSTRAP`]'s `fill_temporal`, as [`bootstrap_copy`].
///
/// # Safety
/// `Kernels::fill_temporal`'s contract.
unsafe extern "C" fn bootstrap_fill(dst: *mut u8, byte: u8, len: usize, _: &Knobs) -> *mut u8 {
    let p = active();
    // SAFETY: forwarded contract; the detected plan's entries run on this CPU.
    unsafe { (p.kernels.fill_temporal)(dst, byte, len, &p.kernels.knobs) }
}

/// [`BOOTSTRAP`]'s `moves.temporal`, as [`bootstrap_copy`].
///
/// # Safety
/// `MoveKernels::temporal`'s contract.
unsafe extern "C" fn bootstrap_move(
    dst: *mut u8,
    src: *const u8,
    len: usize,
    _: &Knobs,
) -> *mut u8 {
    let p = active();
    // SAFETY: forwarded contract; the detected plan's entries run on this CPU.
    unsafe { (p.kernels.moves.temporal)(dst, src, len, &p.kernels.knobs) }
}

/// The plan a thread runs its one call with when it lost the race to publish the first plan and
/// the winner has not finished writing it: what every CPU of the target runs (its baseline
/// backend, the flush instruction every such CPU has), `Auto` never streaming, no variant. Its
/// facts are assumed ([`Facts::assumed`]): a query of what the CPU runs detects afresh.
static SAFE: Plan = {
    let base = BASELINE;
    let mut t = NOTHING;
    t.engine = Engine::new(base.engine.temporal, base.engine.stream, Edges::Overlap);
    t.flush = SAFE_FLUSH;
    Plan {
        copy_below: bounds(usize::MAX),
        fill_below: bounds(usize::MAX),
        small_below: 0,
        small: Small::Plain,
        kernels: *base,
        tuning: t,
        facts: Facts {
            backends: 1,
            flush: 1 << SAFE_FLUSH_INDEX,
            masks: false,
            pairs: false,
            assumed: true,
        },
    }
};

cfg_if::cfg_if! {
    if #[cfg(all(target_arch = "x86_64", target_feature = "sse2", not(cachecopy_integer_only)))] {
        /// SSE2: in every x86_64 CPU.
        const BASELINE: &Kernels = BACKENDS[1];
    } else if #[cfg(all(target_arch = "aarch64", target_feature = "neon", not(cachecopy_integer_only)))] {
        /// Advanced SIMD: in every arm64 CPU this build runs on.
        const BASELINE: &Kernels = BACKENDS[1];
    } else {
        /// The word backend.
        const BASELINE: &Kernels = BACKENDS[0];
    }
}

cfg_if::cfg_if! {
    if #[cfg(all(target_arch = "x86_64", not(miri)))] {
        /// `clflush`: every x86_64 CPU has it (SSE2 requires it).
        const SAFE_FLUSH: FlushOp = FlushOp::Clflush;
        const SAFE_FLUSH_INDEX: u8 = 2;
    } else if #[cfg(all(target_arch = "aarch64", not(miri)))] {
        /// `dc cvac`: every arm64 CPU has it.
        const SAFE_FLUSH: FlushOp = FlushOp::DcCvac;
        const SAFE_FLUSH_INDEX: u8 = 4;
    } else {
        /// No cache maintenance: the fence alone.
        const SAFE_FLUSH: FlushOp = FlushOp::Fence;
        const SAFE_FLUSH_INDEX: u8 = 5;
    }
}

/// Writes [`bounds`]`(nt)` to `dst` one word at a time with volatile stores, which the compiler
/// can neither merge into vector stores nor load from a constant with a vector register (what
/// it does with an array built whole): the first detection runs this, in builds that may use
/// no vector register (`--cfg cachecopy_integer_only`) too.
///
/// # Safety
/// `dst` valid for writes.
unsafe fn write_bounds(dst: *mut Bounds, nt: usize) {
    let b = bounds(nt);
    let d = dst.cast::<usize>();
    for (i, &v) in b.iter().enumerate() {
        // SAFETY: `i < 4`, inside `*dst` (caller).
        unsafe { d.add(i).write_volatile(core::hint::black_box(v)) };
    }
}

/// Copies `*src` to `dst` a word at a time with volatile accesses, which the compiler cannot
/// turn into a call to `memcpy` (see [`Plan::build_into`]). Padding is copied as the possibly
/// uninitialised bytes it is (`MaybeUninit` words).
///
/// # Safety
/// `dst` valid for writes and `src` for reads of a `T`; `T`'s size a multiple of a word's and
/// its alignment at least a word's (checked at compile time).
unsafe fn copy_words<T>(dst: *mut T, src: *const T) {
    const W: usize = size_of::<usize>();
    const { assert!(size_of::<T>().is_multiple_of(W) && align_of::<T>() >= align_of::<usize>()) };
    let (d, s) = (
        dst.cast::<MaybeUninit<usize>>(),
        src.cast::<MaybeUninit<usize>>(),
    );
    for i in 0..size_of::<T>() / W {
        // SAFETY: word `i` lies inside both (`size_of::<T>()` is a multiple of a word's),
        // aligned.
        unsafe { d.add(i).write_volatile(s.add(i).read_volatile()) };
    }
}

/// A `'static` home for one plan, written once: the first detection's, and the one a calibration
/// at first use decides. A writer claims it (`EMPTY` to `WRITING`), writes the plan, then marks
/// it `READY` with a release store; a reader sees `READY` before it reads.
struct Slot {
    state: AtomicU8,
    plan: UnsafeCell<MaybeUninit<Plan>>,
}

const EMPTY: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

// SAFETY: the plan is written once, by the one thread that claimed the slot, before `READY` is
// stored with release ordering; every reader reads it only after an acquire load saw `READY`.
unsafe impl Sync for Slot {}

impl Slot {
    const fn new() -> Slot {
        Slot {
            state: AtomicU8::new(EMPTY),
            plan: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Builds a plan here with `build` (which must write a whole plan at the pointer it gets)
    /// if nobody has, and returns the slot's plan once it is written: `Err(())` while another
    /// thread is still writing it (nothing waits: no lock).
    fn fill(&'static self, build: impl FnOnce(*mut Plan)) -> Result<&'static Plan, ()> {
        match self
            .state
            .compare_exchange(EMPTY, WRITING, Ordering::Acquire, Ordering::Acquire)
        {
            Ok(_) => {
                // This thread claimed the slot; nobody reads it before `READY`.
                build(self.plan.get().cast());
                self.state.store(READY, Ordering::Release);
            }
            Err(WRITING) => return Err(()),
            Err(_) => {}
        }
        // SAFETY: `READY` was seen (or stored by this thread): the plan is written and never
        // written again.
        Ok(unsafe { (*self.plan.get()).assume_init_ref() })
    }
}

/// The first detection's plan.
static DETECTED: Slot = Slot::new();

/// The plan a calibration at first use (`CACHECOPY_TUNE=calibrate`) decided.
#[cfg(all(feature = "std", unix))]
static CALIBRATED: Slot = Slot::new();

/// Detects the CPU, builds its plan (the rule, then `CACHECOPY_TUNE`) and publishes it; on a
/// thread that raced another's detection and lost while the winner still writes, returns
/// [`SAFE`] for this one call. With `CACHECOPY_TUNE=calibrate`, the winner then measures on the
/// plan just published and publishes what it decided.
#[cold]
#[inline(never)]
fn init() -> &'static Plan {
    // The first call's caller keeps its `errno` (sysfs reads, a failed warning write).
    let _keep = super::env::KeepErrno::new();
    let cpu = crate::arch::detect();
    let facts = Facts::of(&cpu);
    let widest = NAMES[facts.backends as usize - 1];
    let mut t = super::rules::rule(&cpu, widest);
    let calibrate = t.read_env(&facts.runs());
    // Every value the record holds was checked against the CPU as it was read: the plan
    // builds (else the safe one stands in).
    let built = DETECTED.fill(|out| {
        // SAFETY: `out` is the slot's, ours to write.
        if unsafe { Plan::build_into(&t, facts, out) }.is_err() {
            // SAFETY: as above; `SAFE` is a live plan.
            unsafe { copy_words(out, &SAFE) };
        }
    });
    let Ok(published) = built else {
        return &SAFE;
    };
    // Publish only over the bootstrap plan: a plan published by hand meanwhile stays.
    let _ = CURRENT.compare_exchange(
        ptr::addr_of!(BOOTSTRAP).cast_mut(),
        ptr::from_ref(published).cast_mut(),
        Ordering::AcqRel,
        Ordering::Acquire,
    );
    #[cfg(all(feature = "std", unix))]
    if calibrate && ptr::eq(current(), published) {
        if let Some(decided) = <FirstUse as Calibrate>::calibrate(published) {
            let built = CALIBRATED.fill(|out| {
                // SAFETY: `out` is the slot's, ours to write.
                if unsafe { Plan::build_into(&decided, published.facts, out) }.is_err() {
                    // SAFETY: as above; `published` is a live plan.
                    unsafe { copy_words(out, published) };
                }
            });
            if let Ok(p) = built {
                publish(p);
                return p;
            }
        }
    }
    #[cfg(not(all(feature = "std", unix)))]
    let _ = calibrate;
    published
}

/// The measurement `CACHECOPY_TUNE=calibrate` asks detection to run inside the first call. The
/// calibration (`src/calibrate/`), a client that sits above the copy path, implements it for
/// [`FirstUse`]: dispatch calls it without naming anything above itself.
#[cfg(all(feature = "std", unix))]
pub(crate) trait Calibrate {
    /// Measures with `plan` (the one just published, so the measurement's own copies find it)
    /// and returns the record it decided, without allocating or locking (an allocator may be
    /// the first caller); `None` to keep `plan`.
    fn calibrate(plan: &'static Plan) -> Option<Tuning>;
}

/// The first call's detection, for which the calibration implements [`Calibrate`].
#[cfg(all(feature = "std", unix))]
pub(crate) struct FirstUse;

/// The unit tests that publish plans, one at a time: the plan in force when taken is published
/// again when dropped (also when a test fails), before the lock is released. The other tests of
/// the binary copy right whatever plan is published.
#[cfg(all(test, feature = "std"))]
pub(crate) struct HeldPlan {
    before: &'static Plan,
    _lock: std::sync::MutexGuard<'static, ()>,
}

#[cfg(all(test, feature = "std"))]
impl HeldPlan {
    /// Waits for the other tests that publish plans, then holds the published one.
    pub(crate) fn take() -> HeldPlan {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        HeldPlan {
            before: active(),
            _lock: lock,
        }
    }
}

#[cfg(all(test, feature = "std"))]
impl Drop for HeldPlan {
    fn drop(&mut self) {
        publish(self.before);
    }
}
