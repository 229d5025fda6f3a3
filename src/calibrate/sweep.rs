//! The size sweeps: the hot-destination `Auto` crossovers of copies and fills (NT sizes from
//! the L2 to twice the last-level cache) and the string-instruction thresholds (`rep movsb`,
//! `rep stosb`, into cold destinations), each round spent where the answer is still open.

use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;

use std::time::Instant;

use super::arena::{evicting_flush, Map};
use super::result::{Outcome, Sweep};
use super::stats::{decide, record, Step, MAX_ROUNDS};
use super::{BUDGET, MAX_POINTS, MEMORY_BUDGET};
use crate::backend::Kernels;
use crate::cpu::{tune, Cpu};

/// Of [`Calibration::BUDGET`], the most the two string-instruction sweeps may take (they run first).
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

/// The NT sizes for these caches: from the L2 size (256 KiB without figures) to twice the
/// last-level cache, by factors of 2, at least three sizes, capped at [`Calibration::MEMORY_BUDGET`].
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
    /// The cheapest round so far, per byte it moved (0 before the first).
    ns_per_byte: f64,
    /// Bytes a round at a size moves (what its cost is projected from).
    traffic: fn(usize) -> usize,
    /// Preempted rounds in a row, discarded.
    retries: u32,
    never_wins: Option<usize>,
    done: bool,
}

impl<'a> Progress<'a> {
    fn new(sweep: &'a mut Sweep, never_wins: Option<usize>, traffic: fn(usize) -> usize) -> Self {
        Progress {
            sweep,
            rounds: [[f64::NAN; MAX_ROUNDS as usize]; MAX_POINTS],
            ns_per_byte: 0.0,
            traffic,
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
                let bytes = (self.traffic)(self.sweep.points[i].size);
                let cost = Duration::from_nanos((self.ns_per_byte * bytes as f64) as u64);
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
        let per_byte = cost.as_nanos() as f64 / (self.traffic)(self.sweep.points[i].size) as f64;
        if self.ns_per_byte == 0.0 || per_byte < self.ns_per_byte {
            self.ns_per_byte = per_byte;
        }
        record(&mut self.sweep.points[i], &mut self.rounds[i], ratio);
    }
}

/// Bytes each op of a hot-destination round moves in its timed sample: the op runs
/// [`hot_runs`]`(size)` times in a row, at least once. Why several runs: right after the other
/// op, the caches and the memory controller are still in that op's state (lines it streamed
/// still draining to memory, or lines it cached still dirty), and a single timed run of a few
/// MiB pays part of that transition: timed once, streaming won about two rounds in three at
/// 512 KiB-4 MiB on the quiet Zen 3 where samples of many runs, like the report's section 5,
/// have it lose almost every round, and that is what scattered ten calibrations over
/// 512 KiB-8 MiB. 8 MiB is the smallest sample that read every size below the crossover as a
/// loss there, and twice it ran out of the budget (docs/performance.md, "Steady-state
/// samples").
pub(super) const HOT_SAMPLE: usize = 8 << 20;

/// Runs of one op per timed sample at `size`: [`HOT_SAMPLE`] bytes, at least one run.
pub(super) fn hot_runs(size: usize) -> usize {
    HOT_SAMPLE.div_ceil(size.max(1)).max(1)
}

/// Bytes one hot round at `size` moves: per op, one untimed run and the timed sample.
fn hot_traffic(size: usize) -> usize {
    2 * size * (hot_runs(size) + 1)
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
pub(super) fn hot_round(
    op: &impl Fn(bool, usize),
    size: usize,
    round: u32,
    strict: bool,
) -> Option<(f64, Duration)> {
    let runs = hot_runs(size);
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

/// The copy and fill NT sweeps until both are settled or the budget is spent: each time the
/// round projected cheaper of the two next rounds, so a sweep settled by small sizes is not
/// kept waiting behind the other's large ones when the budget runs short.
pub(super) fn nt_sweeps(
    copy: &mut Sweep,
    fill: &mut Sweep,
    copy_op: impl Fn(bool, usize),
    fill_op: impl Fn(bool, usize),
    t0: Instant,
) {
    let mut sweeps = [
        Progress::new(copy, None, hot_traffic),
        Progress::new(fill, None, hot_traffic),
    ];
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

/// The string-instruction sweeps, copies then fills, into cold destinations: each timed
/// sample is a run of `Temporal` ops into successive slots of the destination (about
/// `REP_SAMPLE` bytes), every line of which was first flushed out of the caches, as for a
/// buffer the program has not touched lately (where the string instruction's saving, no
/// read-for-ownership of lines it overwrites whole, shows). The copies' source is hot and
/// 24 bytes off the destination's line alignment (the string move's weaker case on some AMD
/// parts).
pub(super) fn rep_sweeps(
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

/// Bytes one string-instruction round at `size` moves: two samples of [`REP_SAMPLE`] bytes.
fn rep_traffic(size: usize) -> usize {
    2 * (REP_SAMPLE / size).max(1) * size
}

/// One string-instruction sweep: at each size, `REP_SAMPLE` bytes of `op(size, slot)` into
/// flushed slots (`cold(bytes)` flushes them) with `cell` at `usize::MAX` (the vector loop),
/// then at 0 (the string instruction), in alternating order. `cell` is restored at the end; if
/// another thread stored into it meanwhile, its value stays and the sweep is left unmeasured.
pub(super) fn rep_sweep(
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
        let mut p = Progress::new(sweep, Some(usize::MAX), rep_traffic);
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
