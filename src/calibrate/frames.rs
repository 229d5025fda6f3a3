//! The engine check: every candidate engine against the CPU's rule, job by job, on each working
//! set the job runs (see [`WorkingSet`]): transmit frames (a 42-byte header, the payload at
//! offset 42) into a ring whose slots are flushed out of the caches before each sample, the same
//! frames into a small ring that stays cached, and calls of 96 B-16 KiB into a hot destination;
//! `Temporal` and batched `NonTemporal`, in paired rounds. A candidate replaces the rule's choice
//! for a job only where it is faster on one working set and slower on none (see the module docs
//! of `super`, and `lab/findings/engine.md`, "Calibration").

use core::time::Duration;

use std::time::Instant;

use super::arena::{evicting_flush, Map};
use super::result::Point;
use super::result::{
    Decision, EngineCheck, EngineTrial, Evidence, Outcome, Verdict, WorkingSet, ENGINE_MARGIN,
    MAX_ENGINES, SETS,
};
use super::stats::{side, Side, TIE};
use crate::cpu::Cpu;
use crate::dispatch::engine::{self, Backend, Edges, Engine};
use crate::dispatch::store::{copy_on, copy_unfenced_on, fill_on, Store};
use crate::dispatch::table::{self, Kernels, NAMES};
use crate::net::layout::{HEADER as HDR, PAYLOAD, SLOT};

/// The most the engine measurement may take; it stops starting rounds past it (a round that
/// ran out leaves the engine undecided).
pub(super) const ENGINE_BUDGET: Duration = Duration::from_millis(20);
/// Rounds of the engine measurement.
pub(super) const ENGINE_ROUNDS: u32 = 9;
/// Frames built per timed sample (one batch).
pub(super) const ENGINE_FRAMES: usize = 64;
/// Slots of a cold ring: four samples' worth.
const COLD_SLOTS: usize = 4 * ENGINE_FRAMES;
/// Slots of a hot ring: one sample's worth, rewritten by every sample (96 KiB: past the L1d,
/// inside every L2 measured).
const HOT_SLOTS: usize = ENGINE_FRAMES;
/// Sizes of the calls of the `Temporal` job: where the engine's table runs (below 64 B the
/// inline path runs whatever the engine), up to sizes that stay in the L1d and the L2.
pub(super) const TEMPORAL_CALLS: [usize; 10] =
    [96, 128, 192, 256, 384, 512, 768, 1024, 4096, 16384];
/// Sizes of the calls of the streamed job: below `kernel::STREAM_MIN` (1 KiB) its backend's
/// ordinary stores run, from there its streaming stores and the fence.
pub(super) const STREAM_CALLS: [usize; 9] = [96, 128, 192, 256, 384, 512, 768, 4096, 16384];
/// Destination offsets of the calls.
pub(super) const OFFSETS: [usize; 2] = [0, 5];
/// Checksum sizes of the `Temporal` job's calls (the table's path runs from 512 B).
pub(super) const SUMS: [usize; 2] = [576, PAYLOAD];
/// The most shapes of one job's calls.
const MAX_SHAPES: usize = 2 * TEMPORAL_CALLS.len() * OFFSETS.len() + SUMS.len();
/// Bytes each timed batch of one shape moves (at least 4 calls, at most 256).
const CALL_BYTES: usize = 32 << 10;
/// Bytes of one candidate's call destination (the largest call at the largest offset).
const CALL_AREA: usize = 20 << 10;
/// Bytes of the shared source.
const SOURCE: usize = 20 << 10;

/// One call of the call sets ([`WorkingSet::ShortCalls`], [`WorkingSet::Calls`],
/// [`WorkingSet::LongCalls`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Call {
    /// A copy of this many bytes to the destination at this offset.
    Copy(usize, usize),
    /// A fill, likewise.
    Fill(usize, usize),
    /// A checksum of this many bytes of the source.
    Sum(usize),
}

impl Call {
    /// Bytes it moves or reads.
    fn size(self) -> usize {
        match self {
            Call::Copy(s, _) | Call::Fill(s, _) | Call::Sum(s) => s,
        }
    }

    /// The working set it belongs to (its index in [`WorkingSet::ALL`]).
    pub(super) fn set(self) -> usize {
        match self {
            Call::Sum(_) => 3,
            c if c.size() <= 256 => 2,
            c if c.size() <= 1024 => 3,
            _ => 4,
        }
    }
}

/// The calls of one job (`nt`: the streamed one) into `out`; returns how many.
pub(super) fn calls(nt: bool, out: &mut [Call; MAX_SHAPES]) -> usize {
    let sizes: &[usize] = if nt { &STREAM_CALLS } else { &TEMPORAL_CALLS };
    let mut n = 0;
    for fill in [false, true] {
        for &size in sizes {
            for &off in &OFFSETS {
                out[n] = if fill {
                    Call::Fill(size, off)
                } else {
                    Call::Copy(size, off)
                };
                n += 1;
            }
        }
    }
    if !nt {
        for &size in &SUMS {
            out[n] = Call::Sum(size);
            n += 1;
        }
    }
    n
}

/// The engines worth comparing here: the rule's, each vector register set this CPU runs alone
/// (AVX-512 with either edge store). The word backend is left out: it has no vector stores and
/// never wins.
pub(super) fn engine_candidates(cpu: &Cpu, rule: Engine, out: &mut [Engine; MAX_ENGINES]) -> usize {
    out[0] = rule;
    let mut n = 1;
    for e in engine::candidates(&NAMES[..table::runnable(&cpu.features)]) {
        if e != rule && n < MAX_ENGINES {
            out[n] = e;
            n += 1;
        }
    }
    n
}

/// A trial not yet measured.
pub(super) fn blank_trial(engine: Engine) -> EngineTrial {
    let unmeasured = |set| Evidence {
        set,
        ratio: f64::NAN,
        faster: 0,
        rounds: 0,
        verdict: Verdict::Unsettled,
    };
    let sets = WorkingSet::ALL.map(unmeasured);
    EngineTrial {
        engine,
        temporal: f64::NAN,
        stream: f64::NAN,
        wins: (0, 0),
        rounds: 0,
        temporal_on: sets,
        stream_on: sets,
        decision: (Decision::Unsettled, Decision::Unsettled),
    }
}

/// Where a candidate stands on one working set after `ratios` (candidate time ÷ the rule's,
/// one per round): [`side`]'s sign test over the rounds that went either way, and the median.
/// Slower when the test says so or the median is more than `TIE` (3 %) slower; faster when the
/// test says so and the median is at least `1 - ENGINE_MARGIN` (5 %) faster; unsettled with
/// fewer than `ENGINE_ROUNDS` rounds (nothing is taken on fewer).
pub(super) fn evidence(set: WorkingSet, ratios: &[f64]) -> Evidence {
    let ratio = median_of(ratios);
    let faster = ratios.iter().filter(|&&r| r < 1.0).count() as u32;
    let slower = ratios.iter().filter(|&&r| r > 1.0).count() as u32;
    let rounds = ratios.len() as u32;
    // The sign test over the rounds that went either way (the rule against itself: none).
    let p = Point {
        size: 0,
        ratio: 1.0 / ratio,
        rounds: faster + slower,
        wins: faster,
    };
    let verdict = match side(&p) {
        _ if rounds < ENGINE_ROUNDS => Verdict::Unsettled,
        Side::Lose => Verdict::Slower,
        _ if ratio > 1.0 + TIE => Verdict::Slower,
        Side::Win if ratio <= ENGINE_MARGIN => Verdict::Faster,
        _ => Verdict::Same,
    };
    Evidence {
        set,
        ratio,
        faster,
        rounds,
        verdict,
    }
}

/// What a job's working sets say of a candidate: slower on one (the first), unsettled on one,
/// faster on none, or eligible (`Taken`, until [`decided_engine`] picks among the eligible).
pub(super) fn job_decision(sets: &[Evidence]) -> Decision {
    if let Some(e) = sets.iter().find(|e| e.verdict == Verdict::Slower) {
        Decision::Slower(e.set)
    } else if sets.iter().any(|e| e.verdict == Verdict::Unsettled) {
        Decision::Unsettled
    } else if sets.iter().any(|e| e.verdict == Verdict::Faster) {
        Decision::Taken
    } else {
        Decision::NotFaster
    }
}

/// How much faster a job's working sets are, all counted alike: minus the mean logarithm of
/// their median ratios (0 for the rule's engine, above 0 faster).
fn gain(sets: &[Evidence]) -> f64 {
    -sets.iter().map(|e| e.ratio.ln()).sum::<f64>() / sets.len() as f64
}

/// Measures every candidate engine against the rule's, in paired rounds, each candidate, job
/// and working set on buffers of its own, and settles which the jobs take. See the module docs.
pub(super) fn engine_check(cpu: &Cpu, budget: Duration) -> EngineCheck {
    let widest = NAMES[table::runnable(&cpu.features) - 1];
    let rule = crate::dispatch::rules::engine_rule(cpu, widest).0;
    let mut engines = [rule; MAX_ENGINES];
    let n = engine_candidates(cpu, rule, &mut engines);
    let mut check = EngineCheck {
        rule,
        trials: [blank_trial(rule); MAX_ENGINES],
        len: n,
        outcome: Outcome::NotMeasured,
    };
    for (t, &e) in check.trials.iter_mut().zip(&engines[..n]) {
        *t = blank_trial(e);
    }
    let Some(op) = evicting_flush(cpu) else {
        return check;
    };
    let kernels: [Option<&'static Kernels>; MAX_ENGINES] = core::array::from_fn(|i| {
        if i < n {
            table::composed(engines[i])
        } else {
            None
        }
    });
    if n < 2 || kernels[..n].iter().any(Option::is_none) {
        return check;
    }
    // Per candidate and job (`2 * i + nt`): a cold ring, a hot ring and a call area.
    let cold_ring = COLD_SLOTS * SLOT;
    let hot_ring = HOT_SLOTS * SLOT;
    let per = cold_ring + hot_ring + CALL_AREA;
    let (Some(src), Some(dst)) = (Map::new(SOURCE), Map::new(2 * n * per)) else {
        return check;
    };
    let t0 = Instant::now();
    // SAFETY: both mappings are at least as large as the ranges written.
    unsafe {
        for i in 0..SOURCE {
            src.ptr.add(i).write((i * 7 + 3) as u8);
        }
        for i in (0..2 * n * per).step_by(4096) {
            dst.ptr.add(i).write(0);
        }
    }
    let area = |i: usize, nt: bool| dst.ptr.wrapping_add((2 * i + usize::from(nt)) * per);
    let store = |nt: bool| {
        if nt {
            Store::NonTemporal
        } else {
            Store::Temporal
        }
    };
    // Builds `count` frames from slot `first` of the ring at `base` with `k`, batched: the
    // fence after every 64 streamed frames and the last.
    let frames =
        |k: &Kernels, base: *mut u8, first: usize, count: usize, slots: usize, nt: bool| {
            let st = store(nt);
            for f in 0..count {
                let slot = base.wrapping_add(((first + f) % slots) * SLOT);
                // SAFETY: the slot lies inside the ring at `base` (`% slots`); the source mapping
                // holds `HDR + PAYLOAD` bytes; `k` runs on this CPU; the batch's fence follows
                // every 64 frames and the last one.
                unsafe {
                    copy_unfenced_on(k, slot, src.ptr, HDR, st);
                    copy_unfenced_on(k, slot.add(HDR), src.ptr.add(HDR), PAYLOAD, st);
                    if nt && f % 64 == 63 {
                        crate::arch::stream_fence();
                    }
                }
            }
            if nt {
                // SAFETY: a store fence has no precondition.
                unsafe { crate::arch::stream_fence() };
            }
        };
    let mut next = [0usize; 2 * MAX_ENGINES];
    // The cold ring: `ENGINE_FRAMES` frames with engine `i` where its ring stopped, every slot
    // first flushed out of the caches (untimed); returns the nanoseconds.
    let mut cold = |i: usize, nt: bool| -> f64 {
        let k = kernels[i].expect("checked");
        let r = 2 * i + usize::from(nt);
        let base = area(i, nt);
        for f in 0..ENGINE_FRAMES {
            let slot = base.wrapping_add(((next[r] + f) % COLD_SLOTS) * SLOT);
            // SAFETY: `op` runs here; the slot lies inside ring `r` of the mapping.
            unsafe { crate::arch::flush_range(op, slot, SLOT) };
        }
        // SAFETY: as above.
        unsafe { crate::arch::flush_fence(op) };
        let t = Instant::now();
        frames(k, base, next[r], ENGINE_FRAMES, COLD_SLOTS, nt);
        let ns = t.elapsed().as_nanos() as f64;
        next[r] = (next[r] + ENGINE_FRAMES) % COLD_SLOTS;
        ns
    };
    // The hot ring: its `HOT_SLOTS` frames once untimed (the ring in this op's own steady
    // state), then timed.
    let hot = |i: usize, nt: bool| -> f64 {
        let k = kernels[i].expect("checked");
        let base = area(i, nt).wrapping_add(cold_ring);
        frames(k, base, 0, HOT_SLOTS, HOT_SLOTS, nt);
        let t = Instant::now();
        frames(k, base, 0, HOT_SLOTS, HOT_SLOTS, nt);
        t.elapsed().as_nanos() as f64
    };
    // One shape of the calls: once untimed, then a batch of `CALL_BYTES`, timed.
    let call = |i: usize, nt: bool, c: Call| -> f64 {
        let k = kernels[i].expect("checked");
        let base = area(i, nt).wrapping_add(cold_ring + hot_ring);
        let st = store(nt);
        let size = c.size();
        let one = || {
            // SAFETY: every size and offset fits the call area (`CALL_AREA`) and the source
            // (`SOURCE`); `k` runs on this CPU; `copy_on`/`fill_on` fence what they stream.
            unsafe {
                match c {
                    Call::Copy(s, off) => copy_on(k, base.add(off), src.ptr, s, st),
                    Call::Fill(s, off) => fill_on(k, base.add(off), 0x5a, s, st),
                    Call::Sum(s) => {
                        core::hint::black_box((k.csum)(src.ptr, s));
                    }
                }
            }
        };
        one();
        let reps = (CALL_BYTES / size).clamp(4, 256);
        let t = Instant::now();
        for _ in 0..reps {
            one();
        }
        t.elapsed().as_nanos() as f64
    };
    let mut shapes = [[Call::Sum(0); MAX_SHAPES]; 2];
    let counts = [calls(false, &mut shapes[0]), calls(true, &mut shapes[1])];
    // One untimed sample of each, for the code and the TLB.
    for i in 0..n {
        for nt in [false, true] {
            cold(i, nt);
            hot(i, nt);
        }
    }
    // ratios[candidate][job][set][round]: candidate time ÷ the rule's.
    let mut ratios = [[[[f64::NAN; ENGINE_ROUNDS as usize]; SETS]; 2]; MAX_ENGINES];
    let mut rounds = 0;
    while rounds < ENGINE_ROUNDS as usize && t0.elapsed() < budget {
        // A fresh order every round: rotate, and reverse every other round.
        let order = |j: usize| {
            if rounds % 2 == 0 {
                (j + rounds) % n
            } else {
                (n - 1 - j + rounds) % n
            }
        };
        for (job, nt) in [false, true].into_iter().enumerate() {
            let mut times = [[0.0f64; MAX_ENGINES]; 2];
            for j in 0..n {
                let i = order(j);
                times[0][i] = cold(i, nt);
            }
            for j in 0..n {
                let i = order(j);
                times[1][i] = hot(i, nt);
            }
            // The calls: per shape, every candidate in turn; a call set's ratio in a round is
            // the geometric mean of its shapes' ratios.
            let mut logs = [[0.0f64; SETS]; MAX_ENGINES];
            let mut shapes_in = [0usize; SETS];
            for &c in &shapes[job][..counts[job]] {
                let mut t = [0.0f64; MAX_ENGINES];
                for j in 0..n {
                    let i = order(j);
                    t[i] = call(i, nt, c);
                }
                let set = c.set();
                shapes_in[set] += 1;
                for i in 0..n {
                    logs[i][set] += (t[i] / t[0]).ln();
                }
            }
            for i in 0..n {
                ratios[i][job][0][rounds] = times[0][i] / times[0][0];
                ratios[i][job][1][rounds] = times[1][i] / times[1][0];
                for set in 2..SETS {
                    ratios[i][job][set][rounds] =
                        (logs[i][set] / shapes_in[set].max(1) as f64).exp();
                }
            }
        }
        rounds += 1;
    }
    for (t, r) in check.trials[..n].iter_mut().zip(&ratios) {
        t.rounds = rounds as u32;
        for (set, &ws) in WorkingSet::ALL.iter().enumerate() {
            t.temporal_on[set] = evidence(ws, &r[0][set][..rounds]);
            t.stream_on[set] = evidence(ws, &r[1][set][..rounds]);
        }
        t.temporal = t.temporal_on[0].ratio;
        t.stream = t.stream_on[0].ratio;
        let wins = |v: &[f64]| v.iter().filter(|&&r| r < ENGINE_MARGIN).count() as u32;
        t.wins = (wins(&r[0][0][..rounds]), wins(&r[1][0][..rounds]));
        t.decision = (job_decision(&t.temporal_on), job_decision(&t.stream_on));
    }
    if rounds < ENGINE_ROUNDS as usize {
        // Out of time: nothing is taken on fewer rounds.
        for t in check.trials[..n].iter_mut() {
            t.decision = (Decision::Unsettled, Decision::Unsettled);
        }
        check.outcome = Outcome::OutOfTime;
    } else {
        check.outcome = Outcome::Decided;
    }
    check.trials[0].decision = (Decision::Rule, Decision::Rule);
    let e = decided_engine(&check);
    mark(&mut check, e);
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

/// What job `nt` of engine `e` runs on: its backend, and its edge store where that backend has
/// a choice (AVX-512), else `None`.
fn component(e: Engine, nt: bool) -> (Backend, Option<Edges>) {
    let b = if nt { e.stream } else { e.temporal };
    (b, (b == Backend::Avx512).then_some(e.edges))
}

/// The engine a measured [`EngineCheck`] decides: per job, the rule's component unless a
/// candidate is eligible there (`Decision::Taken` from [`job_decision`]: faster on a working
/// set, slower on none); among the combinations of eligible components whose edge stores agree
/// (one engine has one edge store, and each job runs with the store it was measured with), the
/// one that gains most over both jobs. The rule's engine when nothing is eligible.
pub(super) fn decided_engine(check: &EngineCheck) -> Engine {
    let rule = check.rule;
    let trials = check.trials();
    let eligible = |t: &EngineTrial, nt: bool| {
        let d = if nt { t.decision.1 } else { t.decision.0 };
        matches!(d, Decision::Taken | Decision::Beaten)
    };
    let mut best = (0.0f64, rule);
    // Index 0 stands for the rule's own component of that job.
    for a in 0..trials.len() {
        if a > 0 && !eligible(&trials[a], false) {
            continue;
        }
        for b in 0..trials.len() {
            if b > 0 && !eligible(&trials[b], true) {
                continue;
            }
            let (tb, te) = component(if a == 0 { rule } else { trials[a].engine }, false);
            let (sb, se) = component(if b == 0 { rule } else { trials[b].engine }, true);
            let edges = match (te, se) {
                (Some(x), Some(y)) if x != y => continue,
                (Some(x), _) | (None, Some(x)) => x,
                (None, None) => rule.edges,
            };
            let g = if a > 0 {
                gain(&trials[a].temporal_on)
            } else {
                0.0
            } + if b > 0 {
                gain(&trials[b].stream_on)
            } else {
                0.0
            };
            if g > best.0 {
                best = (g, Engine::new(tb, sb, edges));
            }
        }
    }
    best.1
}

/// Marks each eligible candidate `Taken` where `e` runs its component of that job, `Beaten`
/// elsewhere.
pub(super) fn mark(check: &mut EngineCheck, e: Engine) {
    let rule = check.rule;
    let changed = |nt: bool| component(e, nt) != component(rule, nt);
    for t in check.trials[1..check.len].iter_mut() {
        for nt in [false, true] {
            let d = if nt {
                &mut t.decision.1
            } else {
                &mut t.decision.0
            };
            if *d == Decision::Taken
                && !(changed(nt) && component(t.engine, nt) == component(e, nt))
            {
                *d = Decision::Beaten;
            }
        }
    }
}
