//! The size sweeps: the hot-destination `Auto` crossovers of copies and fills (NT sizes from
//! the L2 to twice the last-level cache) and the string-instruction thresholds (`rep movsb`,
//! `rep stosb`, into cold destinations), each round spent where the answer is still open.

use core::time::Duration;

use std::time::Instant;

use super::arena::{evicting_flush, Map};
use super::result::Point;
use super::result::{Outcome, Sweep};
use super::stats::{decide, record, side, Side, Step, MAX_ROUNDS, TIE};
use super::{MAX_POINTS, MEMORY_BUDGET};
use crate::cpu::Cpu;
use crate::dispatch::table::Kernels;
use crate::kernel::Knobs;

/// Of [`Calibration::BUDGET`](super::Calibration::BUDGET), the most the two string-instruction sweeps may take (they run first).
pub(super) const REP_BUDGET: Duration = Duration::from_millis(10);
/// Sizes of the string-instruction sweeps (glibc's `rep movsb` thresholds lie at 2-8 KiB).
pub(super) const REP_SIZES: [usize; MAX_POINTS] = [
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
pub(super) const REP_SAMPLE: usize = 128 << 10;
/// Bytes of the destination (and, past 24, of the source) the string-instruction sweeps touch.
pub(super) const REP_EXTENT: usize = if REP_SAMPLE > REP_SIZES[MAX_POINTS - 1] {
    REP_SAMPLE
} else {
    REP_SIZES[MAX_POINTS - 1]
};

/// The NT sizes for these caches: from the L2 size (256 KiB without figures) to twice the
/// last-level cache, by factors of 2, at least three sizes, capped at [`Calibration::MEMORY_BUDGET`](super::Calibration::MEMORY_BUDGET).
pub(super) fn nt_sizes(
    l2: Option<usize>,
    llc: Option<usize>,
    out: &mut [usize; MAX_POINTS],
) -> usize {
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

/// One sweep in progress: its rounds so far and the cost of its cheapest round per byte.
pub(super) struct Progress<'a> {
    sweep: &'a mut Sweep,
    rounds: [[f64; MAX_ROUNDS as usize]; MAX_POINTS],
    /// The steady-state rounds, likewise.
    steady: [[f64; MAX_ROUNDS as usize]; MAX_POINTS],
    /// The cheapest round so far, per byte it moved (0 before the first).
    ns_per_byte: f64,
    /// Bytes a round at a size moves (what its cost is projected from).
    traffic: fn(usize) -> usize,
    /// Preempted rounds in a row, discarded.
    retries: u32,
    never_wins: Option<usize>,
    /// The value in force, which an answer may only lower (see [`nt_guard`]).
    rule: usize,
    done: bool,
}

impl<'a> Progress<'a> {
    fn new(
        sweep: &'a mut Sweep,
        never_wins: Option<usize>,
        traffic: fn(usize) -> usize,
        rule: usize,
    ) -> Self {
        Progress {
            sweep,
            rounds: [[f64::NAN; MAX_ROUNDS as usize]; MAX_POINTS],
            steady: [[f64::NAN; MAX_ROUNDS as usize]; MAX_POINTS],
            ns_per_byte: 0.0,
            traffic,
            retries: 0,
            never_wins,
            rule,
            done: false,
        }
    }

    /// The point to measure next, whether over a steady-state sample, and the projected cost
    /// of its round, or `None` once settled (outcome recorded). A round whose projected end
    /// passes `end` settles the sweep as out of time.
    fn next(&mut self, now: Duration, end: Duration) -> Option<(usize, bool, Duration)> {
        if self.done {
            return None;
        }
        let step = match decide(self.sweep.points(), self.never_wins) {
            Step::Done(Some(c), Outcome::Decided) => {
                nt_guard(self.sweep.points(), self.sweep.steady(), c, self.rule)
            }
            step => step,
        };
        let (i, steady) = match step {
            Step::Done(v, o) => {
                self.finish(v, o);
                return None;
            }
            Step::Measure(i) => (i, false),
            Step::Confirm(i) => (i, true),
        };
        // Projected from the fastest round so far per byte (a preempted round is no guide):
        // the time to the first round is unknown, so that one always runs.
        let size = self.sweep.points[i].size;
        let bytes = if steady {
            steady_traffic(size)
        } else {
            (self.traffic)(size)
        };
        let cost = Duration::from_nanos((self.ns_per_byte * bytes as f64) as u64);
        if now + cost > end {
            self.finish(None, Outcome::OutOfTime);
            return None;
        }
        Some((i, steady, cost))
    }

    fn finish(&mut self, v: Option<usize>, o: Outcome) {
        self.sweep.decided = v;
        self.sweep.outcome = o;
        self.done = true;
    }

    /// Records a round at point `i` (over a steady-state sample if `steady`) that took `cost`.
    fn record(&mut self, i: usize, steady: bool, ratio: f64, cost: Duration) {
        let size = self.sweep.points[i].size;
        let bytes = if steady {
            steady_traffic(size)
        } else {
            (self.traffic)(size)
        };
        let per_byte = cost.as_nanos() as f64 / bytes as f64;
        if self.ns_per_byte == 0.0 || per_byte < self.ns_per_byte {
            self.ns_per_byte = per_byte;
        }
        if steady {
            record(&mut self.sweep.steady[i], &mut self.steady[i], ratio);
        } else {
            record(&mut self.sweep.points[i], &mut self.rounds[i], ratio);
        }
    }
}

/// How much faster streaming must be over the steady-state samples, at the median, at every
/// size a lower threshold would start streaming at: 5 %, the engine check's margin
/// ([`Calibration::ENGINE_MARGIN`](super::Calibration::ENGINE_MARGIN)). A gain smaller than
/// that is no reason to move a working set: one calibration's samples and the report's read
/// the same size on either side of parity by more (lab/findings/performance.md, "Calibration").
pub(super) const LOWER_BY: f64 = 1.0 / super::result::ENGINE_MARGIN;

/// What an NT sweep's answer `c` (the lowest size from which streaming into a cached
/// destination wins, with nothing losing above it) becomes against `rule`, the threshold in
/// force. `Auto` runs on hot and on cold destinations, and the sweep measures hot ones only:
/// - at the rule: the rule is confirmed ([`Outcome::Confirmed`]) once its own size does not
///   lose over the steady samples either (if it does, the hot crossover lies above the rule:
///   the next case);
/// - above the rule, the sizes between would stop streaming, which into a cold destination
///   wins from a few KiB on every CPU measured: slower there, so the rule stays;
/// - below it, every size between (`c` up to the rule) must be settled no slower hot over the
///   sweep's samples (`pts`: a win or a tie by the sign test, at most 3 % below parity at the
///   median) and a win over steady-state samples four times longer (`steady`), by
///   [`LOWER_BY`] at the median. The sweep's samples are a cost compromise and can read a size
///   as a win where the report's longer ones read a loss. A size between that loses or ties
///   refutes the change: the rule is confirmed as at the rule, the sizes below it losing. The
///   rule must lie within the sizes tried. Until each is settled it gets rounds (`Confirm` for
///   the steady ones).
///
/// lab/findings/performance.md ("Calibration") has the runs behind each case.
pub(super) fn nt_guard(pts: &[Point], steady: &[Point], c: usize, rule: usize) -> Step {
    // The rule is confirmed only if its own size does not lose hot over the steady samples
    // either: the evidence a confirmation rests on is a decision's.
    let confirmed = || match pts.iter().position(|p| p.size == rule) {
        None => Step::Done(None, Outcome::Unmeasured),
        Some(i) => match side(&steady[i]) {
            Side::Open => Step::Confirm(i),
            // The hot crossover lies above the rule, where cold destinations forbid it.
            Side::Lose => Step::Done(None, Outcome::Slower),
            _ => Step::Done(Some(rule), Outcome::Confirmed),
        },
    };
    if c > rule {
        return Step::Done(None, Outcome::Slower);
    }
    if c == rule {
        return confirmed();
    }
    if pts.last().is_none_or(|p| p.size < rule) {
        return Step::Done(None, Outcome::Unmeasured);
    }
    for (i, (p, q)) in pts.iter().zip(steady).enumerate() {
        if p.size < c || p.size >= rule {
            continue;
        }
        match side(p) {
            Side::Open => return Step::Measure(i),
            Side::Lose => return confirmed(),
            _ if p.ratio < 1.0 - TIE => return confirmed(),
            _ => {}
        }
        match side(q) {
            Side::Open => return Step::Confirm(i),
            Side::Win if q.ratio >= LOWER_BY => {}
            _ => return confirmed(),
        }
    }
    Step::Done(Some(c), Outcome::Decided)
}

/// Bytes each op of a hot-destination round moves in its timed sample: the op runs
/// [`hot_runs`]`(size)` times in a row, at least once. Why several runs: right after the other
/// op, the caches and the memory controller are still in that op's state (lines it streamed
/// still draining to memory, or lines it cached still dirty), and a single timed run of a few
/// MiB pays part of that transition: timed once, streaming won rounds near the crossover that
/// samples of many runs, like the report's `Auto` calibration, have it lose, which scattered the
/// calibrations' answers. 8 MiB is the smallest sample that read every size below the
/// crossover as a loss on the CPU measured, and twice it ran out of the budget
/// (lab/findings/performance.md, "Steady-state samples").
pub(super) const HOT_SAMPLE: usize = 8 << 20;

/// Runs of one op per timed sample at `size`: [`HOT_SAMPLE`] bytes, at least one run.
pub(super) fn hot_runs(size: usize) -> usize {
    HOT_SAMPLE.div_ceil(size.max(1)).max(1)
}

/// Bytes one hot round at `size` moves: per op, one untimed run and the timed sample.
fn hot_traffic(size: usize) -> usize {
    2 * size * (hot_runs(size) + 1)
}

/// Bytes of a steady-state sample ([`nt_guard`]): four times [`HOT_SAMPLE`], twice the report's:
/// short samples flatter streaming at the sizes near the crossover (lab/findings/performance.md,
/// "Steady-state samples").
pub(super) const STEADY_SAMPLE: usize = 4 * HOT_SAMPLE;

/// Runs of one op per steady-state sample at `size`.
pub(super) fn steady_runs(size: usize) -> usize {
    STEADY_SAMPLE.div_ceil(size.max(1)).max(1)
}

/// Bytes one steady-state round at `size` moves.
fn steady_traffic(size: usize) -> usize {
    2 * size * (steady_runs(size) + 1)
}

/// One round of a hot-destination pair at `size`: each op runs once untimed, which leaves the
/// destination in that op's own steady state (cached after a temporal op, written back after
/// a streamed one), then [`hot_runs`] times timed; the order flips every round. Returns
/// temporal time ÷ streaming time and the round's cost, or `None` when the scheduler preempted
/// a timed run (Linux: the thread's involuntary context switches, `getrusage`) and `strict`
/// asks for a clean round: such a round says nothing about the two ops. (The faster of two
/// timed runs would discard preempted runs too, but it favours the op whose time varies more,
/// here the temporal one, whose cached lines other tenants of a shared L3 evict: that made
/// fills at 4 MiB read 0.82-0.94 where single runs, and the report, read 1.0-1.2.)
#[cfg(test)]
pub(super) fn hot_round(
    op: &impl Fn(bool, usize),
    size: usize,
    round: u32,
    strict: bool,
) -> Option<(f64, Duration)> {
    hot_round_of(op, size, hot_runs(size), round, strict)
}

/// `hot_round` with `runs` timed runs per op.
pub(super) fn hot_round_of(
    op: &impl Fn(bool, usize),
    size: usize,
    runs: usize,
    round: u32,
    strict: bool,
) -> Option<(f64, Duration)> {
    let start = Instant::now();
    let mut t = [0f64; 2];
    for k in 0..2 {
        let nt = (round + k) % 2 == 1;
        op(nt, size);
        let before = preemptions();
        let s = Instant::now();
        for _ in 0..runs {
            op(nt, size);
        }
        t[usize::from(nt)] = s.elapsed().as_nanos().max(1) as f64;
        if strict && preemptions() != before {
            return None;
        }
    }
    Some((t[0] / t[1], start.elapsed()))
}

/// The calling thread's involuntary context switches so far (Linux; 0 elsewhere, where no
/// round is ever taken for preempted).
pub(super) fn preemptions() -> i64 {
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
pub(super) const RETRIES: u32 = 2;

/// The copy and fill NT sweeps until both are settled or `end` (since `t0`) is reached: each
/// time the round projected cheaper of the two next rounds, so a sweep settled by small sizes
/// is not kept waiting behind the other's large ones when the budget runs short. `rules`: the
/// thresholds in force (copies, fills), which an answer may only lower ([`nt_guard`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn nt_sweeps(
    copy: &mut Sweep,
    fill: &mut Sweep,
    rules: (usize, usize),
    copy_op: impl Fn(bool, usize),
    fill_op: impl Fn(bool, usize),
    t0: Instant,
    end: Duration,
) {
    let mut sweeps = [
        Progress::new(copy, None, hot_traffic, rules.0),
        Progress::new(fill, None, hot_traffic, rules.1),
    ];
    loop {
        let now = t0.elapsed();
        let plans = [sweeps[0].next(now, end), sweeps[1].next(now, end)];
        let which = match plans {
            [None, None] => break,
            [Some(_), None] => 0,
            [None, Some(_)] => 1,
            [Some((_, _, a)), Some((_, _, b))] => usize::from(b < a),
        };
        let (i, steady, _) = plans[which].expect("chosen above");
        let p = &mut sweeps[which];
        let size = p.sweep.points[i].size;
        let (round, runs) = if steady {
            (p.sweep.steady[i].rounds, steady_runs(size))
        } else {
            (p.sweep.points[i].rounds, hot_runs(size))
        };
        let strict = p.retries < RETRIES;
        let r = if which == 0 {
            hot_round_of(&copy_op, size, runs, round, strict)
        } else {
            hot_round_of(&fill_op, size, runs, round, strict)
        };
        match r {
            Some((r, cost)) => {
                p.retries = 0;
                p.record(i, steady, r, cost);
            }
            None => p.retries += 1,
        }
    }
}

/// The string-instruction sweeps, copies then fills, each into cold and hot destinations.
/// Cold: each timed sample is a run of `Temporal` ops into successive slots of the destination
/// (about `REP_SAMPLE` bytes), every line of which was first flushed out of the caches, as for
/// a buffer the program has not touched lately (where the string instruction's saving, no
/// read-for-ownership of lines it overwrites whole, shows). Hot: the same number of ops into
/// the first slot again and again, after one untimed (the hot destination of the report's copy and fill bandwidth,
/// where the string instruction's start-up shows). The copies' source is hot and 24 bytes off
/// the destination's line alignment (the string move's weaker case on some AMD parts).
#[allow(clippy::too_many_arguments)]
pub(super) fn rep_sweeps(
    k: &Kernels,
    cpu: &Cpu,
    movsb: (&mut Sweep, &mut Sweep),
    stosb: (&mut Sweep, &mut Sweep),
    src: &Map,
    dst: &Map,
    t0: Instant,
) {
    let Some(op) = evicting_flush(cpu) else {
        return;
    };
    let cold = |bytes: usize| {
        // SAFETY: `op` runs here (checked above; `clflush` comes with SSE2); the range lies in
        // the destination mapping (`bytes <= REP_EXTENT < MEMORY_BUDGET`).
        unsafe {
            crate::arch::flush_range(op, dst.ptr, bytes);
            crate::arch::flush_fence(op);
        }
    };
    let src24 = src.ptr.wrapping_add(24).cast_const();
    // Fault in every destination page the sweeps write, untimed: a page first touched inside a
    // timed sample charged its fault to whichever loop ran first, and read as a large win for
    // the other (lab/findings/performance.md, "Calibration").
    // SAFETY: `REP_EXTENT < MEMORY_BUDGET`, inside the destination mapping.
    unsafe { (k.fill_temporal)(dst.ptr, 0, REP_EXTENT, &k.knobs) };
    let end = t0.elapsed() + REP_BUDGET;
    rep_sweep(
        movsb,
        (k.knobs, k.knobs.rep_movsb, |knobs, v| knobs.rep_movsb = v),
        end,
        t0,
        &cold,
        |size, slot, knobs| {
            // SAFETY: `slot * size < REP_SAMPLE + size`, inside both mappings; disjoint.
            unsafe { (k.copy_temporal)(dst.ptr.add(slot * size), src24, size, knobs) };
        },
    );
    let end = t0.elapsed() + REP_BUDGET;
    rep_sweep(
        stosb,
        (k.knobs, k.knobs.fill_rep, |knobs, v| knobs.fill_rep = v),
        end,
        t0,
        &cold,
        |size, slot, knobs| {
            // SAFETY: as above.
            unsafe { (k.fill_temporal)(dst.ptr.add(slot * size), 0, size, knobs) };
        },
    );
}

/// Bytes one string-instruction round at `size` moves: four samples of [`REP_SAMPLE`] bytes
/// (cold and hot, each loop) and the hot samples' untimed runs.
fn rep_traffic(size: usize) -> usize {
    (4 * (REP_SAMPLE / size).max(1) + 2) * size
}

/// Whether the string instruction is slower than the vector loop at a point (the ratio is
/// vector time ÷ string time): by the sign test, or, once settled, by more than `TIE` at the
/// median. A point still open counts by its median alone (below parity: slower).
fn string_slower(p: &Point) -> bool {
    match side(p) {
        Side::Lose => true,
        Side::Open => p.rounds > 0 && p.ratio < 1.0,
        _ => p.ratio < 1.0 - TIE,
    }
}

/// Whether the string instruction is faster at a point, by the sign test (settled).
fn string_faster(p: &Point) -> bool {
    side(p) == Side::Win
}

/// The next step of a string-instruction sweep: `cold` and `hot` are the ratios (vector time ÷
/// string time) at the same sizes, smallest first; `rule` the threshold in force (`usize::MAX`
/// never). Every size gets one round first. The threshold measured, `t`, is the lowest size that
/// the string instruction wins (hot or cold, by the sign test) in the tail of sizes where it is
/// slower nowhere (hot nor cold); ties at the bottom of that tail do not lower it, and an open
/// size below `t` in the tail gets rounds first (it may win). Never when it is slower at the
/// largest size. `t` replaces the rule only where that makes nothing slower and something
/// faster, and only where it was measured:
/// - the sizes it hands from one loop to the other (`t` up to the rule, or the rule up to `t`)
///   must lie within the sizes tried (so on a CPU whose rule is never or past the largest size,
///   only never is confirmed: `Unmeasured`);
/// - lowering: the string instruction no slower at each of them, hot and cold, and faster at
///   one;
/// - raising: the string instruction faster at none of them, hot or cold (else `Slower`: a
///   size where it wins cold and loses hot is a trade, and the rule stays), and slower at one
///   (else `NotFaster`).
///
/// Each of those sizes is settled by the sign test first (rounds go to the one with fewest);
/// `t` at the rule confirms it.
pub(super) fn rep_decide(cold: &[Point], hot: &[Point], rule: usize) -> Step {
    let n = cold.len().min(hot.len());
    if n == 0 {
        return Step::Done(None, Outcome::NotMeasured);
    }
    if let Some(i) = (0..n).find(|&i| cold[i].rounds == 0 || hot[i].rounds == 0) {
        return Step::Measure(i);
    }
    let open = |i: usize| side(&cold[i]) == Side::Open || side(&hot[i]) == Side::Open;
    let slower = |i: usize| string_slower(&cold[i]) || string_slower(&hot[i]);
    let faster = |i: usize| string_faster(&cold[i]) || string_faster(&hot[i]);
    let tail = (0..n).rev().take_while(|&i| !slower(i)).last();
    let t = match tail {
        None => usize::MAX,
        Some(s) => match (s..n).find(|&i| faster(i) || open(i)) {
            Some(i) if open(i) && !faster(i) => return Step::Measure(i),
            Some(i) => cold[i].size,
            // Slower nowhere in the tail, faster nowhere either: whichever loop runs there.
            None if rule == usize::MAX => return Step::Done(Some(rule), Outcome::Confirmed),
            None => return Step::Done(None, Outcome::NotFaster),
        },
    };
    if t == rule {
        return Step::Done(Some(rule), Outcome::Confirmed);
    }
    let (lo, hi) = (t.min(rule), t.max(rule));
    if lo < cold[0].size || hi > cold[n - 1].size {
        return Step::Done(None, Outcome::Unmeasured);
    }
    let changed = (0..n).filter(|&i| (lo..hi).contains(&cold[i].size));
    let unsettled = changed
        .clone()
        .filter(|&i| open(i))
        .min_by_key(|&i| cold[i].rounds.min(hot[i].rounds));
    if let Some(i) = unsettled {
        return Step::Measure(i);
    }
    let lowering = t < rule;
    let mut gains = false;
    for i in changed {
        if lowering && slower(i) {
            // The string instruction loses at a size the change would hand it: the rule is
            // what was measured.
            return Step::Done(Some(rule), Outcome::Confirmed);
        }
        if !lowering && faster(i) {
            // A trade: it wins in one working set at a size the change would take from it.
            return Step::Done(None, Outcome::Slower);
        }
        gains |= if lowering { faster(i) } else { slower(i) };
    }
    if gains {
        Step::Done(Some(t), Outcome::Decided)
    } else {
        // Ties at every size the change moves: nothing measured argues against the rule.
        Step::Done(Some(rule), Outcome::Confirmed)
    }
}

/// One string-instruction sweep into `sweeps` (cold, hot): each round at a size times
/// `REP_SAMPLE` bytes of `op(size, slot, knobs)` into flushed slots (`cold(bytes)` flushes
/// them), then into slot 0 again and again after one untimed op, each with the knob (`knob`:
/// the plan's knobs, the swept knob's value in them, and its setter) at `usize::MAX` (the vector loop) and at 0
/// (the string instruction), in alternating order; [`rep_decide`] says where the next round goes
/// and what is decided, against the plan's value. Both sweeps get the decision. Nothing
/// process-wide changes: the knobs are the sweep's own.
pub(super) fn rep_sweep(
    sweeps: (&mut Sweep, &mut Sweep),
    knob: (Knobs, usize, fn(&mut Knobs, usize)),
    end: Duration,
    t0: Instant,
    cold: &impl Fn(usize),
    op: impl Fn(usize, usize, &Knobs),
) {
    let (cs, hs) = sweeps;
    let (base, saved, set) = knob;
    let with = |v: usize| {
        let mut k = base;
        set(&mut k, v);
        k
    };
    let (vector, string) = (with(usize::MAX), with(0));
    let mut all = [[[f64::NAN; MAX_ROUNDS as usize]; MAX_POINTS]; 2];
    let mut ns_per_byte = 0.0f64;
    let (decided, outcome) = 'sweep: loop {
        let i = match rep_decide(cs.points(), hs.points(), saved) {
            Step::Done(v, o) => break 'sweep (v, o),
            Step::Measure(i) | Step::Confirm(i) => i,
        };
        let size = cs.points[i].size;
        let round = cs.points[i].rounds;
        let cost = Duration::from_nanos((ns_per_byte * rep_traffic(size) as f64) as u64);
        if round >= MAX_ROUNDS || t0.elapsed() + cost > end {
            break 'sweep (None, Outcome::OutOfTime);
        }
        let runs = (REP_SAMPLE / size).max(1);
        let start = Instant::now();
        let mut t = [[0f64; 2]; 2];
        for (hot, times) in t.iter_mut().enumerate() {
            for k in 0..2 {
                let rep = (round + k) % 2 == 1;
                let knobs = if rep { &string } else { &vector };
                if hot == 1 {
                    op(size, 0, knobs);
                } else {
                    cold(runs * size);
                }
                let s = Instant::now();
                for slot in 0..runs {
                    op(size, if hot == 1 { 0 } else { slot }, knobs);
                }
                times[usize::from(rep)] = s.elapsed().as_nanos().max(1) as f64;
            }
        }
        let spent = start.elapsed();
        let per_byte = spent.as_nanos() as f64 / rep_traffic(size) as f64;
        if ns_per_byte == 0.0 || per_byte < ns_per_byte {
            ns_per_byte = per_byte;
        }
        record(&mut cs.points[i], &mut all[0][i], t[0][0] / t[0][1]);
        record(&mut hs.points[i], &mut all[1][i], t[1][0] / t[1][1]);
    };
    for s in [cs, hs] {
        s.decided = decided;
        s.outcome = outcome;
    }
}
