//! Self-calibration of every tunable the built-in rules set, measured on the machine at hand in
//! at most [`Calibration::BUDGET`] of wall time:
//!
//! - `nt` and `fill_nt`: the size from which streaming into a destination that is already
//!   cached stops losing to ordinary stores, for copies and for fills;
//! - `rep_movsb` and `fill_rep` (x86_64 with ERMS): the size from which `Temporal` copies and
//!   fills are no slower with the string instruction than with the vector loop, into cold and
//!   into hot destinations;
//! - the engine (`crate::engine`): which register set runs each job and which store writes the
//!   partial lines. Every candidate engine is judged against the CPU's rule, per job, on each
//!   working set the job runs ([`WorkingSet`]: frames into flushed ring slots, frames into a
//!   ring the caches hold, and calls of 96 B-16 KiB), in 9 paired rounds (`frames`).
//!
//! What the advice may change: a decision is taken only where it was measured and makes none of
//! the working sets of the job it changes slower; otherwise the rule stays and the line leaves
//! the field out ([`Outcome::Slower`], [`Outcome::Unmeasured`], [`Outcome::NotFaster`];
//! [`Decision`] for the engine). The NT thresholds are only lowered (cold destinations stream
//! to advantage from a few KiB on every CPU measured), down to a size below which every size to
//! the rule was settled no slower hot (`sweep::nt_guard`); the string thresholds move only
//! within the sizes tried, where every size handed to the other loop is slower nowhere, hot nor
//! cold (`sweep::rep_decide`); an engine candidate replaces a job's choice only where it is
//! faster on one working set and slower on none (`frames::job_decision`).
//!
//! Why measure: no cache-size formula fits every CPU (the NT crossover is the L2 size on Intel
//! server parts and a quarter or a half of the L3 on AMD, by generation:
//! `src/dispatch/rules.rs`), and a VM's cache report is a hint. Why the hot destination (the same buffer, copied into again and
//! again): into a cold destination streaming wins from a few KiB on every machine measured, so
//! the hot crossover is the one that can make `Auto` lose. The method is the report's `Auto`
//! calibration of copies,
//! and the report prints this measurement's own ratios beside its sweep.
//!
//! How it spends its budget. The NT sizes run from the L2 size to twice the last-level cache as
//! detected, by factors of 2, capped at [`Calibration::MEMORY_BUDGET`] (which a VM that reports
//! its host's whole L3 reaches). Sizes are measured upwards, one round each, until
//! two hold; then rounds go only where the answer is still open: the lowest size of the tail
//! where streaming does not lose, the size above it (the second size that backs it) and the
//! size below it (which must lose or tie), until a sign test over its rounds settles each (see
//! `side`). Sizes above those are never measured. A round preempted during a timed run is
//! discarded. A tunable whose sizes are not settled within the budget keeps its built-in rule,
//! and its [`Sweep::outcome`] says why. The string sweeps (10 ms each) run first, the engine
//! check (at most `frames::ENGINE_BUDGET`) last, and the NT sweeps stop that much before the
//! budget's end. Measured decision rates: lab/findings/performance.md ("Calibration").
//!
//! The measurement neither allocates nor locks (its buffers come from `mmap`), so
//! `CACHECOPY_TUNE=calibrate`, which runs it inside the first call, is safe in an allocator. It
//! changes nothing process-wide while it measures: each variant it times runs with knobs of its
//! own, passed to the kernels, and only [`Calibration::apply`] publishes a plan.

use core::time::Duration;

use std::time::Instant;

use crate::dispatch::plan::{self, FirstUse, Plan};
use crate::dispatch::table::Kernels;
use crate::dispatch::tune::Tuning;

mod arena;
mod frames;
mod result;
mod stats;
mod sweep;
#[cfg(test)]
mod tests;

use arena::Map;
use frames::{engine_check, ENGINE_BUDGET};
use sweep::{nt_sizes, nt_sweeps, rep_sweeps, REP_EXTENT, REP_SIZES};

pub use result::{
    Calibration, Decision, EngineCheck, EngineTrial, Evidence, Outcome, Point, Sweep, Verdict,
    WorkingSet,
};

/// The most sizes one [`Sweep`] measures.
pub(crate) const MAX_POINTS: usize = 8;
/// The largest NT size measured, which is also the size of each of the two buffers mapped
/// (64 MiB of address space in all, touched once and unmapped before `calibrate()` returns).
pub(crate) const MEMORY_BUDGET: usize = 32 << 20;
/// The wall-time budget, mapping and touching the buffers included. A round whose cost
/// (projected from the last round at that size) would end past it is not started.
pub(crate) const BUDGET: Duration = Duration::from_millis(130);

/// Measures, on this machine, every tunable the built-in rules set: the sizes from which
/// streaming into an already cached destination stops losing to ordinary stores, for copies
/// and for fills (the `Auto` crossovers), and on x86_64 with ERMS the sizes from which
/// `Temporal` copies and fills are no slower with `rep movsb` / `rep stosb` than with the
/// vector loop; within [`Calibration::BUDGET`] (130 ms) of wall time. Returns them with the
/// ratios it saw and the time it took; nothing changes until [`Calibration::apply`].
///
/// The NT sizes run from the L2 size to twice the last-level cache as detected, capped at
/// 32 MiB ([`Calibration::MEMORY_BUDGET`], two buffers of that size are mapped); rounds go to the
/// sizes around the crossover until a sign test settles them. Where that does not happen within
/// the budget, or streaming never wins within the sizes tried, the threshold is `None` and the
/// built-in rule stays ([`Sweep::outcome`] says why). It never picks a size below the one where
/// streaming into a cached destination stops losing, so `Auto` never streams where that costs,
/// and never one above the rule in force (cold destinations between would lose streaming). The
/// engine and the string thresholds change a job only where every working set it runs (hot and
/// cold destinations, small calls) was measured and is slower nowhere; anything else keeps its
/// rule and is left out of the line ([`Outcome`],
/// [`Decision`]).
/// Its buffers come from `mmap`: it neither allocates nor locks.
/// `CACHECOPY_TUNE=calibrate` runs it (and applies it) on first use; its `Display` is the
/// `CACHECOPY_TUNE` line that keeps the result without measuring again:
///
/// ```no_run
/// let c = cachecopy::tune::calibrate();
/// println!("copies stream from {:?}, fills from {:?} ({:?})", c.copy, c.fill, c.elapsed);
/// println!("{c}"); // CACHECOPY_TUNE=nt=2M,rep_movsb=4K,fill_rep=2K
/// c.apply();
/// ```
pub fn calibrate() -> Calibration {
    let p = plan::settled();
    run(&p.kernels, p.tuning)
}

/// `CACHECOPY_TUNE=calibrate`: detection's first call measures with the plan it just published
/// and returns the plan of what was decided.
impl plan::Calibrate for FirstUse {
    fn calibrate(p: &'static Plan) -> Option<Tuning> {
        Some(run(&p.kernels, p.tuning).tuning())
    }
}

/// Runs the calibration on the kernels `k` (which run on this CPU, with the knobs of the plan
/// in force), over the record `base` in force.
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
    let mut movsb_hot = Sweep::new(&REP_SIZES);
    let mut stosb_hot = Sweep::new(&REP_SIZES);
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
                unsafe { (k.fill_temporal)(src.ptr.add(from), 0x5a, size - from, &k.knobs) };
                written.set(size);
            }
        };
        // The string sweeps read up to their largest size past a 24-byte offset.
        source(REP_EXTENT + 64);
        if rep {
            rep_sweeps(
                k,
                &cpu,
                (&mut movsb, &mut movsb_hot),
                (&mut stosb, &mut stosb_hot),
                &src,
                &dst,
                t0,
            );
        }
        let (cs, ds) = (src.ptr as *const u8, dst.ptr);
        let copy_op = |nt: bool, size: usize| {
            source(size);
            // SAFETY: `size <= MEMORY_BUDGET`; disjoint mappings.
            unsafe {
                if nt {
                    (k.copy_nontemporal)(ds, cs, size, &k.knobs)
                } else {
                    (k.copy_temporal)(ds, cs, size, &k.knobs);
                }
            }
        };
        let fill_op = |nt: bool, size: usize| {
            // SAFETY: as above.
            unsafe {
                if nt {
                    (k.fill_nontemporal)(ds, 0, size)
                } else {
                    (k.fill_temporal)(ds, 0, size, &k.knobs);
                }
            }
        };
        nt_sweeps(
            &mut copy,
            &mut fill,
            (base.nt, base.fill_nt),
            copy_op,
            fill_op,
            t0,
            BUDGET.saturating_sub(ENGINE_BUDGET),
        );
    }
    let left = BUDGET.saturating_sub(t0.elapsed()).min(ENGINE_BUDGET);
    let check = engine_check(&cpu, left);
    let engine = (check.outcome == Outcome::Decided).then(|| frames::decided_engine(&check));
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
        rep_movsb_hot: movsb_hot,
        fill_rep_hot: stosb_hot,
        engine,
        engine_check: check,
        base,
    }
}
