//! The engine check: transmit frames (a 42-byte header, the payload at offset 42) built with
//! every candidate engine, `Temporal` and batched `NonTemporal`, each on a ring of its own whose
//! slots are flushed out of the caches before each sample, in paired rounds against the CPU's
//! rule (see the module docs of `super`).

use core::time::Duration;

use std::time::Instant;

use super::arena::{evicting_flush, Map};
use super::result::{EngineCheck, EngineTrial, Outcome, ENGINE_MARGIN, MAX_ENGINES};
use crate::backend::store::{copy_unfenced_on, Store};
use crate::backend::{self, Kernels, NAMES};
use crate::cpu::engine::{self, Backend, Edges, Engine};
use crate::cpu::Cpu;
use crate::frame_layout::{HEADER as HDR, PAYLOAD, SLOT};

/// The most the engine measurement may take (it runs last, and never past [`ENGINE_DEADLINE`]
/// from the calibration's start).
pub(super) const ENGINE_BUDGET: Duration = Duration::from_millis(18);
/// Wall time since the calibration started past which the engine measurement stops: the whole
/// calibration stays within 150 ms.
pub(super) const ENGINE_DEADLINE: Duration = Duration::from_millis(148);
/// Rounds of the engine measurement.
pub(super) const ENGINE_ROUNDS: u32 = 9;
/// Frames built per timed sample (one batch).
pub(super) const ENGINE_FRAMES: usize = 64;

/// The engines worth comparing here: the rule's, each vector register set this CPU runs alone
/// (AVX-512 with either edge store). The word backend is left out: it has no vector stores and
/// never wins.
pub(super) fn engine_candidates(cpu: &Cpu, rule: Engine, out: &mut [Engine; MAX_ENGINES]) -> usize {
    out[0] = rule;
    let mut n = 1;
    for e in engine::candidates(&NAMES[..backend::runnable(&cpu.features)]) {
        if e != rule && n < MAX_ENGINES {
            out[n] = e;
            n += 1;
        }
    }
    n
}

/// Builds frames with every candidate engine against the rule's, in paired rounds, each
/// candidate and job on a ring of its own. See the module docs.
pub(super) fn engine_check(cpu: &Cpu, budget: Duration) -> EngineCheck {
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
pub(super) fn median_of(v: &[f64]) -> f64 {
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
pub(super) fn decided_engine(check: &EngineCheck) -> Engine {
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
