//! Self-calibration of every tunable the built-in rules set, measured on the machine at hand in
//! at most [`Calibration::BUDGET`] of wall time:
//!
//! - `nt` and `fill_nt`: the size from which streaming into a destination that is already
//!   cached stops losing to ordinary stores, for copies and for fills;
//! - `rep_movsb` and `fill_rep` (x86_64 with ERMS): the size from which `Temporal` copies and
//!   fills are no slower with the string instruction than with the vector loop;
//! - the engine (`crate::engine`): which register set runs each job and which store writes the
//!   partial lines. Transmit frames (a 42-byte header, the payload at offset 42) are built with
//!   every candidate engine, `Temporal` and batched `NonTemporal`, each on a ring of its own
//!   whose slots are flushed out of the caches before each sample, in paired rounds against
//!   the CPU's rule; a candidate replaces the rule's choice for a job only if it is faster by
//!   [`Calibration::ENGINE_MARGIN`] in at least 7 of 9 rounds; the rule is confirmed when no candidate is, and kept, undecided, when the rounds
//!   disagree ([`EngineCheck`]).
//!
//! Why measure: no cache-size formula fits every CPU (the NT crossover is the L2 size on Intel
//! server parts and a quarter or a half of the L3 on AMD, by generation: `src/tune.rs`), and a
//! VM's cache report is a hint. Why the hot destination (the same buffer, copied into again and
//! again): into a cold destination streaming wins from a few KiB on every machine measured, so
//! the hot crossover is the one that can make `Auto` lose. The method is the report's section 5,
//! and the report prints this measurement's own ratios beside its sweep.
//!
//! How it spends its budget. The NT sizes run from the L2 size to twice the last-level cache as
//! detected, by factors of 2, capped at [`Calibration::MEMORY_BUDGET`] (on a VM that reports the
//! host's 260-300 MiB L3, the cap: 2-32 MiB). Sizes are measured upwards, one round each, until
//! two hold; then rounds go only where the answer is still open: the lowest size of the tail
//! where streaming does not lose, the size above it (the second size that backs it) and the
//! size below it (which must lose or tie), until a sign test over its rounds settles each (see
//! `side`). Sizes above those are never measured. A round preempted during a timed run is
//! discarded. A tunable whose sizes are not settled within the budget keeps its built-in rule,
//! and its [`Sweep::outcome`] says why. Measured decision rates: docs/performance.md
//! ("Calibration").
//!
//! The measurement neither allocates nor locks (its buffers come from `mmap`), so
//! `CACHECOPY_NT_THRESHOLD=calibrate`, which runs it inside the first call, is safe in an
//! allocator. To time the vector loop against the string instruction it sets the process-wide
//! `rep movsb` / `rep stosb` thresholds for the length of that sweep (every value is a valid
//! threshold, so a concurrent copy stays correct, only its speed changes) and restores them; if
//! another thread sets one meanwhile, that thread's value is kept and the sweep is abandoned.

use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use std::time::Instant;

use crate::backend::store::{copy_unfenced_on, Store};
use crate::backend::{self, Kernels, NAMES};
use crate::cpu::engine::{self, Backend, Edges, Engine};
use crate::cpu::tune::{self, Tuning};
use crate::cpu::{Cpu, FlushOp};

/// The most sizes one [`Sweep`] measures.
pub(crate) const MAX_POINTS: usize = 8;
/// The largest NT size measured, which is also the size of each of the two buffers mapped
/// (64 MiB of address space in all, touched once and unmapped before `calibrate()` returns).
pub(crate) const MEMORY_BUDGET: usize = 32 << 20;
/// The wall-time budget, mapping and touching the buffers included. A round whose cost
/// (projected from the last round at that size) would end past it is not started.
pub(crate) const BUDGET: Duration = Duration::from_millis(130);
/// Of [`Calibration::BUDGET`], the most the two string-instruction sweeps may take (they run first).
const REP_BUDGET: Duration = Duration::from_millis(10);
/// The most rounds at one size; a size still unsettled after this many is a tie.
const MAX_ROUNDS: u32 = 9;
/// Sizes of the string-instruction sweeps (glibc's `rep movsb` thresholds lie at 2-8 KiB).
const REP_SIZES: [usize; MAX_POINTS] = [
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    256 << 10,
];
/// Bytes of traffic per timed sample of the string-instruction sweeps (a small copy is timed
/// as a run of copies into successive slots).
const REP_SAMPLE: usize = 128 << 10;
/// A size whose median is within this of parity after five rounds is a tie (no more rounds).
const TIE: f64 = 0.03;

/// One size a sweep measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Bytes per operation.
    pub size: usize,
    /// Median over the rounds of (baseline time ÷ candidate time): above 1 the candidate
    /// (streaming stores; the string instruction) is faster. The report's "NonTemporal /
    /// Temporal" figure, same orientation. `NaN` when not measured.
    pub ratio: f64,
    /// Rounds measured.
    pub rounds: u32,
    /// Rounds in which the candidate was faster.
    pub wins: u32,
}

/// Why a [`Sweep`] decided or kept the built-in rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Decided: [`Sweep::decided`] holds the value.
    Decided,
    /// The candidate did not win at the largest size measured: for the NT thresholds the
    /// built-in rule stays (the crossover lies past the sizes tried, or nowhere); for the
    /// string instructions this decides `never`.
    NeverWins,
    /// The wall-time budget ran out before the sizes around the crossover were settled.
    OutOfTime,
    /// The rounds at a size around the crossover kept disagreeing, or only the largest size
    /// won (no second size backs it).
    Noisy,
    /// Not measured: no such instruction here (x86_64 with ERMS only), the buffers could not be
    /// mapped, or another thread set this threshold during the sweep.
    NotMeasured,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Decided => "decided",
            Outcome::NeverWins => "never wins in the sizes tried",
            Outcome::OutOfTime => "out of time",
            Outcome::Noisy => "too noisy to settle",
            Outcome::NotMeasured => "not measured",
        })
    }
}

/// One tunable's measurement: the sizes tried, with their ratios, and what they decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep {
    points: [Point; MAX_POINTS],
    len: usize,
    /// The value measured, `usize::MAX` for never; `None` when the built-in rule stays.
    pub decided: Option<usize>,
    /// Why.
    pub outcome: Outcome,
}

impl Sweep {
    fn new(sizes: &[usize]) -> Sweep {
        let mut points = [Point {
            size: 0,
            ratio: f64::NAN,
            rounds: 0,
            wins: 0,
        }; MAX_POINTS];
        let len = sizes.len().min(MAX_POINTS);
        for (p, &s) in points.iter_mut().zip(&sizes[..len]) {
            p.size = s;
        }
        Sweep {
            points,
            len,
            decided: None,
            outcome: Outcome::NotMeasured,
        }
    }

    /// The sizes tried, smallest first.
    pub fn points(&self) -> &[Point] {
        &self.points[..self.len]
    }
}

/// What [`calibrate`](crate::calibrate) found. See [`Calibration::apply`]; its `Display` is the
/// `CACHECOPY_TUNE=...` line that keeps it (decided fields only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The `Auto` copy threshold measured, or `None`: the built-in rule stays (`copy_sweep`
    /// says why).
    pub copy: Option<usize>,
    /// The same for fills (zeroing).
    pub fill: Option<usize>,
    /// The `rep movsb` threshold of `Temporal` copies (`usize::MAX`: never), or `None`: the
    /// built-in rule stays.
    pub rep_movsb: Option<usize>,
    /// The `rep stosb` threshold of `Temporal` fills, likewise.
    pub fill_rep: Option<usize>,
    /// Wall time the measurement took.
    pub elapsed: Duration,
    /// Streaming ÷ ordinary copies into a cached destination, per size.
    pub copy_sweep: Sweep,
    /// The same for fills.
    pub fill_sweep: Sweep,
    /// `rep movsb` ÷ the vector loop, `Temporal` copies.
    pub rep_movsb_sweep: Sweep,
    /// `rep stosb` ÷ the vector loop, `Temporal` fills.
    pub fill_rep_sweep: Sweep,
    /// The engine measured: `Some` when both jobs were settled (the rule confirmed, or a
    /// candidate faster than it), `None` when the rounds disagreed: the rule stays.
    pub engine: Option<Engine>,
    /// The engine measurement, candidate by candidate.
    pub engine_check: EngineCheck,
    /// The record in force when it measured, which the decided values refine.
    base: Tuning,
}

/// The most engines [`EngineCheck`] compares.
pub(crate) const MAX_ENGINES: usize = 8;
/// How much faster than the rule's choice a candidate must be to replace it: 5 %.
pub(crate) const ENGINE_MARGIN: f64 = 0.95;
/// The most the engine measurement may take (it runs last, and never past [`ENGINE_DEADLINE`]
/// from the calibration's start).
const ENGINE_BUDGET: Duration = Duration::from_millis(18);
/// Wall time since the calibration started past which the engine measurement stops: the whole
/// calibration stays within 150 ms.
const ENGINE_DEADLINE: Duration = Duration::from_millis(148);
/// Rounds of the engine measurement.
const ENGINE_ROUNDS: u32 = 9;
/// Frames built per timed sample (one batch).
const ENGINE_FRAMES: usize = 64;

/// One candidate engine's frames against the rule's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineTrial {
    /// The candidate.
    pub engine: Engine,
    /// Median over the rounds of (candidate time ÷ the rule's) building `Temporal` frames:
    /// below 1 the candidate is faster. `NaN` when not measured.
    pub temporal: f64,
    /// The same for batched `NonTemporal` frames.
    pub stream: f64,
    /// Rounds in which the candidate was faster by [`Calibration::ENGINE_MARGIN`]: `Temporal`,
    /// `NonTemporal`.
    pub wins: (u32, u32),
    /// Rounds measured.
    pub rounds: u32,
}

/// What the engine measurement compared and found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineCheck {
    /// The CPU's rule ([`Engine::rule`]), the baseline of every ratio.
    pub rule: Engine,
    trials: [EngineTrial; MAX_ENGINES],
    len: usize,
    /// Why the engine was decided or not.
    pub outcome: Outcome,
}

impl EngineCheck {
    /// The candidates measured, the rule's engine first.
    pub fn trials(&self) -> &[EngineTrial] {
        &self.trials[..self.len]
    }
}

impl Calibration {
    /// The wall-time budget of one calibration, mapping the buffers included: a round whose
    /// cost (the cheapest earlier round at that size) would end past it is not started.
    pub const BUDGET: Duration = BUDGET;
    /// The largest NT size measured, and the size of each of the two buffers mapped.
    pub const MEMORY_BUDGET: usize = MEMORY_BUDGET;
    /// The most sizes one [`Sweep`] holds.
    pub const MAX_POINTS: usize = MAX_POINTS;

    /// The most engines [`EngineCheck`] compares.
    pub const MAX_ENGINES: usize = MAX_ENGINES;
    /// A candidate engine replaces the rule's choice for a job only if its frames take at most
    /// this fraction of the rule's time in at least 7 of 9 rounds.
    pub const ENGINE_MARGIN: f64 = ENGINE_MARGIN;

    /// The record this calibration measured over (the one in force) with every value it
    /// decided in place: what [`apply`](Calibration::apply) installs.
    pub fn tuning(&self) -> Tuning {
        let mut t = self.base;
        let sizes = [
            (&mut t.nt, self.copy),
            (&mut t.fill_nt, self.fill),
            (&mut t.rep_movsb, self.rep_movsb),
            (&mut t.fill_rep, self.fill_rep),
        ];
        for (field, v) in sizes {
            if let Some(v) = v {
                *field = v;
            }
        }
        if let Some(e) = self.engine {
            t.engine = e;
        }
        t
    }

    /// The fields of the record it decided (a mask over `tune::FIELDS`).
    pub(crate) fn decided(&self) -> u16 {
        let sizes = [self.copy, self.fill, self.rep_movsb, self.fill_rep];
        let mut mask = 0;
        for (i, v) in [tune::NT, tune::FILL, tune::MOVSB, tune::STOSB]
            .into_iter()
            .zip(sizes)
        {
            mask |= u16::from(v.is_some()) << i;
        }
        if self.engine.is_some() {
            mask |= 1 << tune::TEMPORAL | 1 << tune::STREAM | 1 << tune::EDGES;
        }
        mask
    }
}

/// `CACHECOPY_TUNE=nt=16M,fill_nt=16M,rep_movsb=never,fill_rep=2K`: the decided fields, in
/// the order of the line's grammar (see [`calibrate`](crate::calibrate)); a field left out
/// keeps its built-in rule when the line is read back, as it did here. Writes into any
/// `fmt::Write` without allocating.
impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CACHECOPY_TUNE=")?;
        self.tuning().write_line(self.decided(), f)
    }
}

/// A private anonymous mapping, unmapped on drop (no global allocator involved).
struct Map {
    ptr: *mut u8,
    len: usize,
}

impl Map {
    fn new(len: usize) -> Option<Map> {
        // SAFETY: an anonymous private mapping; the result is checked.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(Map { ptr: p.cast(), len })
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, not used after this.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The NT sizes for these caches: from the L2 size (256 KiB without figures) to twice the
/// last-level cache, by factors of 2, at least three sizes, capped at [`Calibration::MEMORY_BUDGET`].
fn nt_sizes(l2: Option<usize>, llc: Option<usize>, out: &mut [usize; MAX_POINTS]) -> usize {
    let lo = l2
        .unwrap_or(256 << 10)
        .clamp(64 << 10, MEMORY_BUDGET / 4)
        .next_power_of_two()
        .min(MEMORY_BUDGET / 4);
    let hi = llc
        .map_or(MEMORY_BUDGET, |l| l.saturating_mul(2))
        .clamp(4 * lo, MEMORY_BUDGET);
    let mut n = 0;
    let mut s = lo;
    while s <= hi && n < MAX_POINTS {
        out[n] = s;
        n += 1;
        s *= 2;
    }
    n
}

/// Runs the calibration on the kernels `k` (which run on this CPU), over the record `base` in
/// force.
pub(crate) fn run(k: &Kernels, base: Tuning) -> Calibration {
    let t0 = Instant::now();
    let cpu = crate::arch::detect();
    let c = &cpu.caches;
    let mut sizes = [0; MAX_POINTS];
    let n = nt_sizes(c.l2, c.l3.or(c.l2), &mut sizes);
    let mut copy = Sweep::new(&sizes[..n]);
    let mut fill = Sweep::new(&sizes[..n]);
    let mut movsb = Sweep::new(&REP_SIZES);
    let mut stosb = Sweep::new(&REP_SIZES);
    let rep = cfg!(target_arch = "x86_64") && cpu.features.erms;
    if let (Some(src), Some(dst)) = (Map::new(MEMORY_BUDGET), Map::new(MEMORY_BUDGET)) {
        // Pages are faulted in as the sizes grow: by the untimed first op of each round for
        // the destination, here for the source (which must be written: unwritten anonymous
        // pages all read the one zero page).
        let written = core::cell::Cell::new(0usize);
        let source = |size: usize| {
            let from = written.get();
            if size > from {
                // SAFETY: `from < size <= MEMORY_BUDGET`, inside the source mapping.
                unsafe { (k.fill_temporal)(src.ptr.add(from), 0x5a, size - from) };
                written.set(size);
            }
        };
        source(REP_SAMPLE + 64);
        if rep {
            rep_sweeps(k, &cpu, &mut movsb, &mut stosb, &src, &dst, t0);
        }
        let (cs, ds) = (src.ptr as *const u8, dst.ptr);
        let copy_op = |nt: bool, size: usize| {
            source(size);
            // SAFETY: `size <= MEMORY_BUDGET`; disjoint mappings.
            unsafe {
                if nt {
                    (k.copy_nontemporal)(ds, cs, size)
                } else {
                    (k.copy_temporal)(ds, cs, size)
                }
            }
        };
        let fill_op = |nt: bool, size: usize| {
            // SAFETY: as above.
            unsafe {
                if nt {
                    (k.fill_nontemporal)(ds, 0, size)
                } else {
                    (k.fill_temporal)(ds, 0, size)
                }
            }
        };
        nt_sweeps(&mut copy, &mut fill, copy_op, fill_op, t0);
    }
    let left = ENGINE_DEADLINE
        .saturating_sub(t0.elapsed())
        .min(ENGINE_BUDGET);
    let check = engine_check(&cpu, left);
    let engine = (check.outcome == Outcome::Decided).then(|| decided_engine(&check));
    Calibration {
        copy: copy.decided,
        fill: fill.decided,
        rep_movsb: movsb.decided,
        fill_rep: stosb.decided,
        elapsed: t0.elapsed(),
        copy_sweep: copy,
        fill_sweep: fill,
        rep_movsb_sweep: movsb,
        fill_rep_sweep: stosb,
        engine,
        engine_check: check,
        base,
    }
}

/// The engines worth comparing here: the rule's, each vector register set this CPU runs alone
/// (AVX-512 with either edge store). The word backend is left out: it has no vector stores and
/// never wins.
fn engine_candidates(cpu: &Cpu, rule: Engine, out: &mut [Engine; MAX_ENGINES]) -> usize {
    out[0] = rule;
    let mut n = 1;
    for &b in &NAMES[..backend::runnable(&cpu.features)] {
        for edges in [Edges::Masked, Edges::Overlap] {
            let e = Engine::new(b, b, edges);
            if b != Backend::Generic && !out[..n].contains(&e) && n < MAX_ENGINES {
                out[n] = e;
                n += 1;
            }
        }
    }
    n
}

/// Builds frames with every candidate engine against the rule's, in paired rounds, each
/// candidate and job on a ring of its own. See the module docs.
fn engine_check(cpu: &Cpu, budget: Duration) -> EngineCheck {
    const SLOT: usize = 1536;
    const HDR: usize = 42;
    const PAYLOAD: usize = 1472;
    let widest = NAMES[backend::runnable(&cpu.features) - 1];
    let rule = engine::rule(cpu, widest).0;
    let mut engines = [rule; MAX_ENGINES];
    let n = engine_candidates(cpu, rule, &mut engines);
    let blank = EngineTrial {
        engine: rule,
        temporal: f64::NAN,
        stream: f64::NAN,
        wins: (0, 0),
        rounds: 0,
    };
    let mut check = EngineCheck {
        rule,
        trials: [blank; MAX_ENGINES],
        len: n,
        outcome: Outcome::NotMeasured,
    };
    for (t, &e) in check.trials.iter_mut().zip(&engines[..n]) {
        t.engine = e;
    }
    // Rings of four samples, two per candidate. Every slot a sample writes is first flushed out
    // of the caches (untimed), as the slots of a transmit ring larger than the caches are when
    // they come round again: where masked and partial stores cost most (examples/store_probe).
    let slots = 4 * ENGINE_FRAMES;
    let Some(op) = evicting_flush(cpu) else {
        return check;
    };
    let ring = slots * SLOT;
    let kernels: [Option<&'static Kernels>; MAX_ENGINES] = core::array::from_fn(|i| {
        if i < n {
            backend::composed(engines[i])
        } else {
            None
        }
    });
    if n < 2 || kernels[..n].iter().any(Option::is_none) {
        return check;
    }
    let (Some(src), Some(dst)) = (Map::new(HDR + PAYLOAD), Map::new(2 * n * ring)) else {
        return check;
    };
    let t0 = Instant::now();
    // SAFETY: both mappings are at least as large as the ranges written.
    unsafe {
        for i in 0..HDR + PAYLOAD {
            src.ptr.add(i).write((i * 7 + 3) as u8);
        }
        for i in (0..2 * n * ring).step_by(4096) {
            dst.ptr.add(i).write(0);
        }
    }
    let mut next = [0usize; 2 * MAX_ENGINES];
    // Builds `ENGINE_FRAMES` frames with engine `i`, `Temporal` (`nt == false`) or batched
    // `NonTemporal`, on its own ring, continuing where it stopped; returns the nanoseconds.
    let mut build = |i: usize, nt: bool| -> f64 {
        let k = kernels[i].expect("checked");
        let r = 2 * i + usize::from(nt);
        let base = dst.ptr.wrapping_add(r * ring);
        let store = if nt {
            Store::NonTemporal
        } else {
            Store::Temporal
        };
        for f in 0..ENGINE_FRAMES {
            let slot = base.wrapping_add(((next[r] + f) % slots) * SLOT);
            // SAFETY: `op` runs here; the slot lies inside ring `r` of the mapping.
            unsafe { crate::arch::flush_range(op, slot, SLOT) };
        }
        // SAFETY: as above.
        unsafe { crate::arch::flush_fence(op) };
        let t = Instant::now();
        for f in 0..ENGINE_FRAMES {
            let slot = base.wrapping_add(next[r] * SLOT);
            // SAFETY: the slot lies inside ring `r` of the mapping (`next < slots`); the
            // source mapping holds `HDR + PAYLOAD` bytes; `k` runs on this CPU; the batch's
            // fence follows every 64 frames and the last one.
            unsafe {
                copy_unfenced_on(k, slot, src.ptr, HDR, store);
                copy_unfenced_on(k, slot.add(HDR), src.ptr.add(HDR), PAYLOAD, store);
                if nt && f % 64 == 63 {
                    crate::arch::stream_fence();
                }
            }
            next[r] = (next[r] + 1) % slots;
        }
        if nt {
            // SAFETY: a store fence has no precondition.
            unsafe { crate::arch::stream_fence() };
        }
        t.elapsed().as_nanos() as f64
    };
    // One untimed sample of each, for the code and the TLB.
    for i in 0..n {
        for nt in [false, true] {
            build(i, nt);
        }
    }
    let mut ratios = [[[f64::NAN; ENGINE_ROUNDS as usize]; 2]; MAX_ENGINES];
    let mut rounds = 0;
    while rounds < ENGINE_ROUNDS as usize && t0.elapsed() < budget {
        for (job, nt) in [false, true].into_iter().enumerate() {
            let mut times = [0.0f64; MAX_ENGINES];
            for j in 0..n {
                // A fresh order every round: rotate, and reverse every other round.
                let i = if rounds % 2 == 0 {
                    (j + rounds) % n
                } else {
                    (n - 1 - j + rounds) % n
                };
                times[i] = build(i, nt);
            }
            for i in 0..n {
                ratios[i][job][rounds] = times[i] / times[0];
            }
        }
        rounds += 1;
    }
    for (t, r) in check.trials[..n].iter_mut().zip(&ratios) {
        t.rounds = rounds as u32;
        t.temporal = median_of(&r[0][..rounds]);
        t.stream = median_of(&r[1][..rounds]);
        let wins = |v: &[f64]| v.iter().filter(|&&r| r < ENGINE_MARGIN).count() as u32;
        t.wins = (wins(&r[0][..rounds]), wins(&r[1][..rounds]));
    }
    check.outcome = if rounds < ENGINE_ROUNDS as usize {
        Outcome::OutOfTime
    } else if check.trials[1..n].iter().any(|t| {
        // Faster in a majority of rounds, by the margin at the median, but not in 7 of 9: the
        // rounds disagree about a candidate that may be faster.
        let unsettled = |w: u32, r: f64| (5..7).contains(&w) && r < ENGINE_MARGIN;
        unsettled(t.wins.0, t.temporal) || unsettled(t.wins.1, t.stream)
    }) {
        Outcome::Noisy
    } else {
        Outcome::Decided
    };
    check
}

/// The median of `v` (`NaN` when empty), without allocating.
fn median_of(v: &[f64]) -> f64 {
    let mut buf = [f64::NAN; ENGINE_ROUNDS as usize];
    let n = v.len().min(buf.len());
    buf[..n].copy_from_slice(&v[..n]);
    let b = &mut buf[..n];
    b.sort_by(f64::total_cmp);
    if n == 0 {
        f64::NAN
    } else {
        b[n / 2]
    }
}

/// The engine a settled [`EngineCheck`] decides: per job, the candidate faster than the rule's
/// choice in at least 7 of its rounds with the lowest median, else the rule's; the edges of the
/// streaming winner (the job where partial lines cost most).
fn decided_engine(check: &EngineCheck) -> Engine {
    let best = |job: fn(&EngineTrial) -> (f64, u32)| {
        check.trials()[1..]
            .iter()
            .filter(|t| job(t).1 >= 7 && job(t).0 < ENGINE_MARGIN)
            .min_by(|a, b| job(a).0.total_cmp(&job(b).0))
            .map(|t| t.engine)
    };
    let rule = check.rule;
    let t = best(|t| (t.temporal, t.wins.0)).map_or(rule.temporal, |e| e.temporal);
    let s = best(|t| (t.stream, t.wins.1));
    let (stream, edges) = s.map_or((rule.stream, rule.edges), |e| (e.stream, e.edges));
    let edges = if stream == Backend::Avx512 || t != Backend::Avx512 {
        edges
    } else {
        Edges::Overlap
    };
    Engine::new(t, stream, edges)
}

/// What a sweep does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// One more round at this point.
    Measure(usize),
    /// Settled: the value, or `None` (the built-in rule stays), and why.
    Done(Option<usize>, Outcome),
}

/// Where one size stands after its rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// The candidate wins: of `n` rounds it won `k` and lost `m` with `k >= 2 + 2m` (2-0,
    /// 4-1, 6-2, 8-3): one preempted round either way is outvoted.
    Win,
    /// The candidate loses, by the same test.
    Lose,
    /// Neither after `MAX_ROUNDS`, or a median within `TIE` of parity after five: it
    /// does not matter which way this size goes.
    Tie,
    /// Not enough rounds yet.
    Open,
}

fn side(p: &Point) -> Side {
    let (w, l) = (p.wins, p.rounds - p.wins);
    if w >= 2 + 2 * l {
        Side::Win
    } else if l >= 2 + 2 * w {
        Side::Lose
    } else if p.rounds >= MAX_ROUNDS || (p.rounds >= 5 && (p.ratio - 1.0).abs() < TIE) {
        Side::Tie
    } else {
        Side::Open
    }
}

/// The next step of a sweep over `pts` (smallest size first). The answer is the lowest size
/// `c` of the tail where the candidate does not lose: from the largest size down, the sizes
/// that win or tie (an open size counts while its median is at least 1, an unmeasured one
/// counts). `c` and the size above it must be settled, one size of the tail must win, and the
/// size below `c` must lose or tie (or `c` is the smallest size tried). Until then, the first
/// of these still open gets another round. So sizes are first measured upwards, one round
/// each, until two of them hold; sizes above the two that settle the answer are never
/// measured (streaming's lead grows with the size on every machine measured: docs/machines/).
/// `never_wins` is the answer when the largest size loses or ties.
fn decide(pts: &[Point], never_wins: Option<usize>) -> Step {
    let top = pts.len() - 1;
    let holds = |p: &Point| match side(p) {
        Side::Win | Side::Tie => true,
        Side::Lose => false,
        Side::Open => p.rounds == 0 || p.ratio >= 1.0,
    };
    let open = |i: usize| side(&pts[i]) == Side::Open;
    let Some(c) = (0..=top).rev().take_while(|&i| holds(&pts[i])).last() else {
        return if open(top) {
            Step::Measure(top)
        } else {
            Step::Done(never_wins, Outcome::NeverWins)
        };
    };
    if c == top {
        // Only the largest size holds: settle it and the one below before concluding.
        return match (open(top), top > 0 && open(top - 1)) {
            (true, _) => Step::Measure(top),
            (_, true) => Step::Measure(top - 1),
            _ => Step::Done(None, Outcome::Noisy),
        };
    }
    for i in [c, c + 1] {
        if open(i) {
            return Step::Measure(i);
        }
    }
    if !pts[c..].iter().any(|p| side(p) == Side::Win) {
        // Ties only so far: the next size up must show a win.
        return match pts[c..].iter().position(|p| p.rounds == 0) {
            Some(j) => Step::Measure(c + j),
            None => Step::Done(None, Outcome::Noisy),
        };
    }
    if c > 0 && open(c - 1) {
        return Step::Measure(c - 1);
    }
    Step::Done(Some(pts[c].size), Outcome::Decided)
}

/// Adds one round's ratio (baseline time ÷ candidate time) to `p`, keeping its median.
/// `all` holds every round's ratio of this point so far (`p.rounds` of them).
fn record(p: &mut Point, all: &mut [f64; MAX_ROUNDS as usize], ratio: f64) {
    all[p.rounds as usize] = ratio;
    p.rounds += 1;
    p.wins += u32::from(ratio > 1.0);
    let mut v = *all;
    let v = &mut v[..p.rounds as usize];
    v.sort_by(f64::total_cmp);
    let n = v.len();
    p.ratio = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
}

/// One sweep in progress: its rounds so far and the cost of its cheapest round per byte.
struct Progress<'a> {
    sweep: &'a mut Sweep,
    rounds: [[f64; MAX_ROUNDS as usize]; MAX_POINTS],
    /// The cheapest round so far, per byte of its size (0 before the first).
    ns_per_byte: f64,
    /// Preempted rounds in a row, discarded.
    retries: u32,
    never_wins: Option<usize>,
    done: bool,
}

impl<'a> Progress<'a> {
    fn new(sweep: &'a mut Sweep, never_wins: Option<usize>) -> Self {
        Progress {
            sweep,
            rounds: [[f64::NAN; MAX_ROUNDS as usize]; MAX_POINTS],
            ns_per_byte: 0.0,
            retries: 0,
            never_wins,
            done: false,
        }
    }

    /// The point to measure next and the projected cost of its round, or `None` once settled
    /// (outcome recorded). A round whose projected end passes `end` settles the sweep as out of
    /// time.
    fn next(&mut self, now: Duration, end: Duration) -> Option<(usize, Duration)> {
        if self.done {
            return None;
        }
        match decide(self.sweep.points(), self.never_wins) {
            Step::Done(v, o) => self.finish(v, o),
            Step::Measure(i) => {
                // Projected from the fastest round so far per byte (a preempted round is no
                // guide): the time to the first round is unknown, so that one always runs.
                let cost = Duration::from_nanos(
                    (self.ns_per_byte * self.sweep.points[i].size as f64) as u64,
                );
                if now + cost > end {
                    self.finish(None, Outcome::OutOfTime)
                } else {
                    return Some((i, cost));
                }
            }
        }
        None
    }

    fn finish(&mut self, v: Option<usize>, o: Outcome) {
        self.sweep.decided = v;
        self.sweep.outcome = o;
        self.done = true;
    }

    /// Records a round at point `i` that took `cost`.
    fn record(&mut self, i: usize, ratio: f64, cost: Duration) {
        let per_byte = cost.as_nanos() as f64 / self.sweep.points[i].size as f64;
        if self.ns_per_byte == 0.0 || per_byte < self.ns_per_byte {
            self.ns_per_byte = per_byte;
        }
        record(&mut self.sweep.points[i], &mut self.rounds[i], ratio);
    }
}

/// One round of a hot-destination pair at `size`: each op runs once untimed, which leaves the
/// destination in that op's own steady state (cached after a temporal op, written back after
/// a streamed one), then once timed; the order flips every round. Returns temporal time ÷
/// streaming time and the round's projected cost, or `None` when the scheduler preempted a timed run (Linux: the thread's
/// involuntary context switches, `getrusage`) and `strict` asks for a clean round: such a
/// round says nothing about the two ops. (The faster of two timed runs would discard
/// preempted runs too, but it favours the op whose time varies more, here the temporal one,
/// whose cached lines other tenants of a shared L3 evict: that made fills at 4 MiB read
/// 0.82-0.94 where single runs, and the report, read 1.0-1.2.)
fn hot_round(
    op: &impl Fn(bool, usize),
    size: usize,
    round: u32,
    strict: bool,
) -> Option<(f64, Duration)> {
    let mut t = [0f64; 2];
    for k in 0..2 {
        let nt = (round + k) % 2 == 1;
        op(nt, size);
        let before = preemptions();
        let start = Instant::now();
        op(nt, size);
        t[usize::from(nt)] = start.elapsed().as_nanos().max(1) as f64;
        if strict && preemptions() != before {
            return None;
        }
    }
    // The round's cost is about twice its timed part: the untimed runs take as long, except the
    // first round at a size, which also faults the pages in (no guide to the next).
    Some((t[0] / t[1], Duration::from_nanos(2 * (t[0] + t[1]) as u64)))
}

/// The calling thread's involuntary context switches so far (Linux; 0 elsewhere, where no
/// round is ever taken for preempted).
fn preemptions() -> i64 {
    cfg_if::cfg_if! {
        if #[cfg(any(target_os = "linux", target_os = "android"))] {
            // SAFETY: all-zero is a valid `rusage` (plain integers); `getrusage` writes it.
            let mut u: libc::rusage = unsafe { core::mem::zeroed() };
            // SAFETY: a valid out-pointer; RUSAGE_THREAD exists since Linux 2.6.26.
            if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) } != 0 {
                return 0;
            }
            u.ru_nivcsw as i64
        } else {
            0
        }
    }
}

/// Preempted rounds in a row at one size after which a round counts anyway (on a machine so
/// loaded that hardly a run goes unpreempted, the sign test has to do).
const RETRIES: u32 = 2;

/// The copy and fill NT sweeps until both are settled or the budget is spent: each time the
/// round projected cheaper of the two next rounds, so a sweep settled by small sizes is not
/// kept waiting behind the other's large ones when the budget runs short.
fn nt_sweeps(
    copy: &mut Sweep,
    fill: &mut Sweep,
    copy_op: impl Fn(bool, usize),
    fill_op: impl Fn(bool, usize),
    t0: Instant,
) {
    let mut sweeps = [Progress::new(copy, None), Progress::new(fill, None)];
    loop {
        let now = t0.elapsed();
        let plans = [sweeps[0].next(now, BUDGET), sweeps[1].next(now, BUDGET)];
        let which = match plans {
            [None, None] => break,
            [Some(_), None] => 0,
            [None, Some(_)] => 1,
            [Some((_, a)), Some((_, b))] => usize::from(b < a),
        };
        let (i, _) = plans[which].expect("chosen above");
        let p = &mut sweeps[which];
        let size = p.sweep.points[i].size;
        let round = p.sweep.points[i].rounds;
        let strict = p.retries < RETRIES;
        let r = if which == 0 {
            hot_round(&copy_op, size, round, strict)
        } else {
            hot_round(&fill_op, size, round, strict)
        };
        match r {
            Some((r, cost)) => {
                p.retries = 0;
                p.record(i, r, cost);
            }
            None => p.retries += 1,
        }
    }
}

/// The instruction that evicts lines to make a destination cold: `clflushopt`, else `clflush`;
/// `None` when the CPU has neither.
fn evicting_flush(cpu: &Cpu) -> Option<FlushOp> {
    [FlushOp::Clflushopt, FlushOp::Clflush]
        .into_iter()
        .find(|op| cpu.flush_ops().any(|o| o == *op))
}

/// The string-instruction sweeps, copies then fills, into cold destinations: each timed
/// sample is a run of `Temporal` ops into successive slots of the destination (about
/// `REP_SAMPLE` bytes), every line of which was first flushed out of the caches, as for a
/// buffer the program has not touched lately (where the string instruction's saving, no
/// read-for-ownership of lines it overwrites whole, shows). The copies' source is hot and
/// 24 bytes off the destination's line alignment (the string move's weaker case on some AMD
/// parts).
fn rep_sweeps(
    k: &Kernels,
    cpu: &Cpu,
    movsb: &mut Sweep,
    stosb: &mut Sweep,
    src: &Map,
    dst: &Map,
    t0: Instant,
) {
    let Some(op) = evicting_flush(cpu) else {
        return;
    };
    let cold = |bytes: usize| {
        // SAFETY: `op` runs here (checked above; `clflush` comes with SSE2); the range lies in
        // the destination mapping (`bytes <= 2 * REP_SAMPLE < MEMORY_BUDGET`).
        unsafe {
            crate::arch::flush_range(op, dst.ptr, bytes);
            crate::arch::flush_fence(op);
        }
    };
    let src24 = src.ptr.wrapping_add(24).cast_const();
    let end = t0.elapsed() + REP_BUDGET;
    rep_sweep(movsb, &tune::REP_MOVSB, end, t0, &cold, |size, slot| {
        // SAFETY: `slot * size < REP_SAMPLE + size`, inside both mappings; disjoint.
        unsafe { (k.copy_temporal)(dst.ptr.add(slot * size), src24, size) }
    });
    let end = t0.elapsed() + REP_BUDGET;
    rep_sweep(stosb, &tune::FILL_REP, end, t0, &cold, |size, slot| {
        // SAFETY: as above.
        unsafe { (k.fill_temporal)(dst.ptr.add(slot * size), 0, size) }
    });
}

/// One string-instruction sweep: at each size, `REP_SAMPLE` bytes of `op(size, slot)` into
/// flushed slots (`cold(bytes)` flushes them) with `cell` at `usize::MAX` (the vector loop),
/// then at 0 (the string instruction), in alternating order. `cell` is restored at the end; if
/// another thread stored into it meanwhile, its value stays and the sweep is left unmeasured.
fn rep_sweep(
    sweep: &mut Sweep,
    cell: &AtomicUsize,
    end: Duration,
    t0: Instant,
    cold: &impl Fn(usize),
    op: impl Fn(usize, usize),
) {
    let saved = cell.load(Ordering::Relaxed);
    let mut ours = saved;
    let mut set = |v: usize| -> bool {
        let ok = cell
            .compare_exchange(ours, v, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        if ok {
            ours = v;
        }
        ok
    };
    let mut lost = false;
    {
        let mut p = Progress::new(sweep, Some(usize::MAX));
        'sweep: while let Some((i, _)) = p.next(t0.elapsed(), end) {
            let size = p.sweep.points[i].size;
            let round = p.sweep.points[i].rounds;
            let runs = (REP_SAMPLE / size).max(1);
            let start = Instant::now();
            let mut t = [0f64; 2];
            for k in 0..2 {
                let rep = (round + k) % 2 == 1;
                if !set(if rep { 0 } else { usize::MAX }) {
                    lost = true;
                    break 'sweep;
                }
                cold(runs * size);
                let s = Instant::now();
                for slot in 0..runs {
                    op(size, slot);
                }
                t[usize::from(rep)] = s.elapsed().as_nanos().max(1) as f64;
            }
            p.record(i, t[0] / t[1], start.elapsed());
        }
    }
    if lost || !set(saved) {
        sweep.decided = None;
        sweep.outcome = Outcome::NotMeasured;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// Points with these sizes (1, 2, 4, ...) and (rounds, wins, median) each.
    fn pts(v: &[(u32, u32, f64)]) -> Vec<Point> {
        v.iter()
            .enumerate()
            .map(|(i, &(rounds, wins, ratio))| Point {
                size: 1 << i,
                ratio,
                rounds,
                wins,
            })
            .collect()
    }

    #[test]
    fn a_sign_test_settles_each_size() {
        let p = |rounds, wins, ratio| Point {
            size: 1,
            ratio,
            rounds,
            wins,
        };
        assert_eq!(side(&p(1, 1, 1.5)), Side::Open);
        assert_eq!(side(&p(2, 2, 1.5)), Side::Win);
        assert_eq!(side(&p(2, 0, 0.5)), Side::Lose);
        assert_eq!(side(&p(3, 2, 1.1)), Side::Open);
        assert_eq!(side(&p(5, 4, 1.1)), Side::Win);
        assert_eq!(side(&p(5, 3, 1.01)), Side::Tie);
        assert_eq!(side(&p(5, 3, 1.2)), Side::Open);
        assert_eq!(side(&p(9, 5, 1.2)), Side::Tie);
    }

    #[test]
    fn rounds_go_where_the_answer_is_open() {
        use Step::*;
        let n = f64::NAN;
        // Sizes are measured upwards, one round each, until two hold.
        assert_eq!(decide(&pts(&[(0, 0, n), (0, 0, n)]), None), Measure(0));
        let t = pts(&[(1, 0, 0.5), (0, 0, n), (0, 0, n)]);
        assert_eq!(decide(&t, None), Measure(1));
        // Loses below 4, wins from there: settle 4, then 8, then 2; 1 and 16 need nothing more.
        let mut t = pts(&[
            (1, 0, 0.5),
            (1, 0, 0.7),
            (1, 1, 1.3),
            (1, 1, 1.4),
            (0, 0, n),
        ]);
        assert_eq!(decide(&t, None), Measure(2));
        t[2] = pts(&[(2, 2, 1.3)])[0];
        t[2].size = 4;
        assert_eq!(decide(&t, None), Measure(3));
        t[3] = Point {
            size: 8,
            ..pts(&[(2, 2, 1.4)])[0]
        };
        assert_eq!(decide(&t, None), Measure(1));
        t[1] = Point {
            size: 2,
            ..pts(&[(2, 0, 0.7)])[0]
        };
        assert_eq!(decide(&t, None), Done(Some(4), Outcome::Decided));
        // A tie joins the tail (streaming is no slower there).
        let t = pts(&[(2, 0, 0.5), (9, 5, 1.01), (2, 2, 1.3), (2, 2, 1.4)]);
        assert_eq!(decide(&t, None), Done(Some(2), Outcome::Decided));
        // Winning from the smallest size: that size.
        let t = pts(&[(2, 2, 1.4), (2, 2, 1.2), (1, 1, 1.6)]);
        assert_eq!(decide(&t, None), Done(Some(1), Outcome::Decided));
        // One preempted round is outvoted: 4-1 settles.
        let t = pts(&[(2, 0, 0.5), (5, 4, 1.2), (2, 2, 1.4)]);
        assert_eq!(decide(&t, None), Done(Some(2), Outcome::Decided));
    }

    #[test]
    fn the_built_in_rule_stays_when_nothing_is_settled() {
        use Step::*;
        // Loses at the largest size: never wins (the string sweeps decide never).
        let t = pts(&[(1, 0, 0.5), (2, 0, 0.7)]);
        assert_eq!(decide(&t, None), Done(None, Outcome::NeverWins));
        assert_eq!(
            decide(&t, Some(usize::MAX)),
            Done(Some(usize::MAX), Outcome::NeverWins)
        );
        // Only the largest size wins: no second size backs it.
        let t = pts(&[(1, 0, 0.5), (2, 0, 0.7), (2, 2, 1.2)]);
        assert_eq!(decide(&t, None), Done(None, Outcome::Noisy));
        // Ties and no win: nothing shows streaming ahead.
        let t = pts(&[(2, 0, 0.5), (9, 5, 1.01), (9, 4, 0.99)]);
        assert_eq!(decide(&t, None), Done(None, Outcome::Noisy));
        // An open largest size that looks lost gets rounds before anything is concluded.
        let t = pts(&[(1, 0, 0.5), (1, 0, 0.9)]);
        assert_eq!(decide(&t, None), Measure(1));
    }

    #[test]
    fn medians_follow_the_rounds() {
        let mut p = Point {
            size: 1,
            ratio: f64::NAN,
            rounds: 0,
            wins: 0,
        };
        let mut all = [f64::NAN; MAX_ROUNDS as usize];
        for r in [1.5, 0.5, 1.2] {
            record(&mut p, &mut all, r);
        }
        assert_eq!((p.rounds, p.wins, p.ratio), (3, 2, 1.2));
        record(&mut p, &mut all, 2.0);
        assert_eq!(p.ratio, 1.35);
    }

    #[test]
    fn the_nt_range_follows_the_caches_within_the_budget() {
        let mut s = [0; MAX_POINTS];
        let n = nt_sizes(Some(2 << 20), Some(260 << 20), &mut s);
        assert_eq!(&s[..n], [2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20]);
        let n = nt_sizes(Some(1 << 20), Some(32 << 20), &mut s);
        assert_eq!(n, 6);
        assert_eq!((s[0], s[n - 1]), (1 << 20, 32 << 20));
        let n = nt_sizes(Some(512 << 10), Some(4 << 20), &mut s);
        assert_eq!(&s[..n], [512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]);
        let n = nt_sizes(None, None, &mut s);
        assert_eq!((s[0], s[n - 1], n), (256 << 10, 32 << 20, 8));
    }

    #[test]
    fn the_line_has_the_decided_fields() {
        use core::fmt::Write;
        let mut c = Calibration {
            copy: Some(16 << 20),
            fill: None,
            rep_movsb: Some(usize::MAX),
            fill_rep: Some(2 << 10),
            elapsed: Duration::ZERO,
            copy_sweep: Sweep::new(&[]),
            fill_sweep: Sweep::new(&[]),
            rep_movsb_sweep: Sweep::new(&[]),
            fill_rep_sweep: Sweep::new(&[]),
            engine: None,
            engine_check: engine_check(&crate::arch::detect(), ENGINE_BUDGET),
            base: crate::tuning(),
        };
        let mut s = Line::default();
        write!(s, "{c}").unwrap();
        assert_eq!(
            s.as_str(),
            "CACHECOPY_TUNE=nt=16M,rep_movsb=never,fill_rep=2K"
        );
        let runs = tune::Runs {
            backends: &NAMES,
            flush: 0,
        };
        let mut back = c.base;
        let read = back.read_line(&s.as_str().as_bytes()[15..], "test", tune::ALL, &runs);
        assert_eq!(
            (read, back),
            (c.decided(), c.tuning()),
            "the line reads back"
        );
        c.copy = None;
        c.rep_movsb = None;
        c.fill_rep = None;
        let mut s = Line::default();
        write!(s, "{c}").unwrap();
        assert_eq!(s.as_str(), "CACHECOPY_TUNE=");
        // A decided engine joins the line as its three fields, which dispatch reads back.
        c.engine = Some(Engine::new(
            Backend::Generic,
            Backend::Generic,
            Edges::Overlap,
        ));
        c.copy = Some(4 << 20);
        let mut s = Line::default();
        write!(s, "{c}").unwrap();
        assert_eq!(
            s.as_str(),
            "CACHECOPY_TUNE=nt=4M,temporal=generic,stream=generic,edges=overlap"
        );
        let mut back = c.base;
        back.read_line(&s.as_str().as_bytes()[15..], "test", tune::ALL, &runs);
        assert_eq!(back, c.tuning());
        assert_eq!(Some(back.engine), c.engine);
    }

    #[test]
    fn the_engine_check_compares_every_candidate_against_the_rule() {
        let c = engine_check(&crate::arch::detect(), ENGINE_BUDGET);
        let t = c.trials();
        assert_eq!(t[0].engine, c.rule);
        if t.len() > 1 {
            // Measured: the rule's own ratio is 1 in every round.
            assert_ne!(c.outcome, Outcome::NotMeasured, "{c:?}");
            assert!((t[0].temporal - 1.0).abs() < 1e-9 && (t[0].stream - 1.0).abs() < 1e-9);
            assert!(t[1..].iter().all(|t| t.engine != c.rule && t.rounds > 0));
        }
        let decided = decided_engine(&c);
        assert!(Engine::supported().contains(&decided), "{decided}");
    }

    /// A fixed buffer, to show the line needs no allocation.
    struct Line {
        buf: [u8; 128],
        len: usize,
    }

    impl Default for Line {
        fn default() -> Self {
            Line {
                buf: [0; 128],
                len: 0,
            }
        }
    }

    impl Line {
        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.buf[..self.len]).unwrap()
        }
    }

    impl core::fmt::Write for Line {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let end = self.len + s.len();
            self.buf
                .get_mut(self.len..end)
                .ok_or(core::fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "mmap and timing")]
    fn a_calibration_measures_within_its_budget_and_applies() {
        let k = crate::dispatch::active();
        let c = run(k, crate::tuning());
        assert!(c.copy_sweep.points().iter().any(|p| p.rounds > 0), "{c:?}");
        for s in [&c.copy_sweep, &c.fill_sweep] {
            if let Some(t) = s.decided {
                assert!(s.points().iter().any(|p| p.size == t), "{s:?}");
            }
            assert_eq!(s.decided.is_some(), s.outcome == Outcome::Decided, "{s:?}");
        }
        // The string sweeps restored the thresholds they toggled.
        let before = (crate::rep_movsb_threshold(), crate::fill_rep_threshold());
        let _ = run(k, crate::tuning());
        assert_eq!(
            before,
            (crate::rep_movsb_threshold(), crate::fill_rep_threshold())
        );
    }
}
