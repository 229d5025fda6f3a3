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

use core::time::Duration;

use std::time::Instant;

use crate::backend::Kernels;
use crate::cpu::tune::Tuning;

mod arena;
mod frames;
mod result;
mod stats;
mod sweep;
#[cfg(test)]
mod tests;

use arena::Map;
use frames::{decided_engine, engine_check, ENGINE_BUDGET, ENGINE_DEADLINE};
use sweep::{nt_sizes, nt_sweeps, rep_sweeps, REP_SAMPLE, REP_SIZES};

pub use result::{Calibration, EngineCheck, EngineTrial, Outcome, Point, Sweep};

/// The most sizes one [`Sweep`] measures.
pub(crate) const MAX_POINTS: usize = 8;
/// The largest NT size measured, which is also the size of each of the two buffers mapped
/// (64 MiB of address space in all, touched once and unmapped before `calibrate()` returns).
pub(crate) const MEMORY_BUDGET: usize = 32 << 20;
/// The wall-time budget, mapping and touching the buffers included. A round whose cost
/// (projected from the last round at that size) would end past it is not started.
pub(crate) const BUDGET: Duration = Duration::from_millis(130);

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
