//! What a calibration returns: the measurement of each tunable ([`Sweep`], [`Point`],
//! [`Outcome`]), of the engine ([`EngineCheck`], [`EngineTrial`]), and the [`Calibration`] that
//! holds them, whose record ([`Calibration::tuning`]) dispatch installs and whose `Display` is
//! the `CACHECOPY_TUNE` line that keeps it.

use core::fmt;
use core::time::Duration;

use super::{BUDGET, MAX_POINTS, MEMORY_BUDGET};
use crate::dispatch::engine::Engine;
use crate::dispatch::plan::{self, Plan};
use crate::dispatch::tune::{self, Tuning};

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
    /// Decided: [`Sweep::decided`] holds the value, which differs from the rule in force.
    Decided,
    /// The rule in force is what was measured: the answer was the rule's own value, or a
    /// change the measurement pointed to was refuted by the sizes it would move (slower there,
    /// or no faster). [`Sweep::decided`] holds the rule's value.
    Confirmed,
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
    /// The value measured would make a working set it changes slower (for the NT thresholds, a
    /// value above the rule's: cold destinations between the two would stop streaming, which
    /// wins there from a few KiB on every CPU measured; for the string thresholds, a size the
    /// change hands to the other loop loses there, hot or cold): the rule stays.
    Slower,
    /// The value measured would change sizes no round measured (the rule's value lies past the
    /// sizes tried): the rule stays.
    Unmeasured,
    /// The value measured is no faster than the rule's anywhere it would change: the rule stays.
    NotFaster,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Decided => "decided",
            Outcome::Confirmed => "the rule in force confirmed",
            Outcome::NeverWins => "never wins in the sizes tried",
            Outcome::OutOfTime => "out of time",
            Outcome::Noisy => "too noisy to settle",
            Outcome::NotMeasured => "not measured",
            Outcome::Slower => "slower on a working set it would change",
            Outcome::Unmeasured => "would change sizes not measured",
            Outcome::NotFaster => "no faster where it would change",
        })
    }
}

/// One tunable's measurement: the sizes tried, with their ratios, and what they decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep {
    pub(super) points: [Point; MAX_POINTS],
    /// The same sizes timed over longer, steady-state samples (NT sweeps, sizes a lower
    /// threshold would start streaming at).
    pub(super) steady: [Point; MAX_POINTS],
    pub(super) len: usize,
    /// The value measured, `usize::MAX` for never (the rule's own value when
    /// [`Outcome::Confirmed`]); `None` when the built-in rule stays unconfirmed.
    pub decided: Option<usize>,
    /// Why.
    pub outcome: Outcome,
}

impl Sweep {
    pub(super) fn new(sizes: &[usize]) -> Sweep {
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
            steady: points,
            len,
            decided: None,
            outcome: Outcome::NotMeasured,
        }
    }

    /// The sizes tried, smallest first.
    pub fn points(&self) -> &[Point] {
        &self.points[..self.len]
    }

    /// The same sizes over steady-state samples (4x longer), measured only where an NT sweep's
    /// answer would lower the rule: every size from the answer up to the rule is confirmed
    /// this way before the answer is taken. `rounds` is 0 where none ran (and always for the
    /// string sweeps).
    pub fn steady(&self) -> &[Point] {
        &self.steady[..self.len]
    }
}

/// What [`calibrate()`](crate::tune::calibrate()) found. See [`Calibration::apply`]; its `Display` is the
/// `CACHECOPY_TUNE=...` line that keeps it (decided fields only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The `Auto` copy threshold measured (the rule's own when the measurement confirmed it:
    /// `copy_sweep.outcome` is then [`Outcome::Confirmed`]), or `None`: the built-in rule stays
    /// unconfirmed (`copy_sweep` says why).
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
    /// `rep movsb` ÷ the vector loop, `Temporal` copies into cold destinations (lines flushed
    /// out of the caches), and the decision (which rests on these and
    /// [`rep_movsb_hot`](Calibration::rep_movsb_hot)).
    pub rep_movsb_sweep: Sweep,
    /// `rep stosb` ÷ the vector loop, `Temporal` fills, likewise.
    pub fill_rep_sweep: Sweep,
    /// `rep movsb` ÷ the vector loop, `Temporal` copies into a hot destination (the same one
    /// again and again), at the sizes of `rep_movsb_sweep`; its `decided` and `outcome` are
    /// that sweep's.
    pub rep_movsb_hot: Sweep,
    /// `rep stosb` ÷ the vector loop, `Temporal` fills into a hot destination, likewise.
    pub fill_rep_hot: Sweep,
    /// The engine measured: `Some` when every round ran (the rule's engine where no candidate
    /// was taken for a job: [`EngineTrial::decision`]), `None` when the time ran out: the rule
    /// stays. Only the jobs a candidate was taken for change ([`Calibration::tuning`]).
    pub engine: Option<Engine>,
    /// The engine measurement, candidate by candidate.
    pub engine_check: EngineCheck,
    /// The record in force when it measured, which the decided values refine.
    pub(super) base: Tuning,
}

/// The most engines [`EngineCheck`] compares.
pub(crate) const MAX_ENGINES: usize = 8;
/// How much faster than the rule's choice a candidate must be to replace it: 5 %.
pub(crate) const ENGINE_MARGIN: f64 = 0.95;

/// A working set a candidate engine is judged on, for each job (see [`EngineTrial`]). A job's
/// engine runs all of them: a candidate that is faster on one and slower on another is not
/// taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkingSet {
    /// Frames (a 42-byte header, the payload at offset 42) into ring slots flushed out of the
    /// caches before each sample, as the slots of a ring larger than the caches are when they
    /// come round again.
    ColdRing,
    /// The same frames into the same 64 slots (96 KiB) again and again, after an untimed pass:
    /// a ring that stays in the L2 (the report's "hot destination" of copy bandwidth).
    HotRing,
    /// Calls of 96-256 B into a hot destination: copies and fills at destination offsets 0
    /// and 5 (the smallest sizes the engine's table runs: below 64 B the inline path runs
    /// whatever the engine). For the streamed job its backend's ordinary stores (below 1 KiB
    /// nothing streams). Each shape counts alike: a round's ratio is the geometric mean over
    /// the shapes.
    ShortCalls,
    /// Calls of 384 B-1 KiB, likewise (the streamed job: 384-768 B); for the `Temporal` job
    /// also checksums of 576 and 1472 B (the table's path runs from 512 B).
    Calls,
    /// Calls of 4 and 16 KiB into a hot destination (the L1d and the L2), likewise; the
    /// streamed job streams them.
    LongCalls,
}

impl WorkingSet {
    /// Every working set, in the order of [`EngineTrial::temporal_on`].
    pub const ALL: [WorkingSet; SETS] = [
        WorkingSet::ColdRing,
        WorkingSet::HotRing,
        WorkingSet::ShortCalls,
        WorkingSet::Calls,
        WorkingSet::LongCalls,
    ];

    /// `cold ring`, `hot ring`, `calls 96-256 B`, `calls 384 B-1 KiB`, `calls 4-16 KiB`.
    pub fn name(self) -> &'static str {
        match self {
            WorkingSet::ColdRing => "cold ring",
            WorkingSet::HotRing => "hot ring",
            WorkingSet::ShortCalls => "calls 96-256 B",
            WorkingSet::Calls => "calls 384 B-1 KiB",
            WorkingSet::LongCalls => "calls 4-16 KiB",
        }
    }
}

impl fmt::Display for WorkingSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Working sets per job.
pub(crate) const SETS: usize = 5;

/// Where a candidate stands on one working set, by the sign test over its rounds
/// (`stats::side`: e.g. 7 of 9 rounds, 8 of 9 near parity) and its median.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Faster in enough rounds, and by [`Calibration::ENGINE_MARGIN`] at the median.
    Faster,
    /// Neither faster nor slower beyond noise.
    Same,
    /// Slower in enough rounds, or by more than 3 % at the median.
    Slower,
    /// Too few rounds to say (out of time).
    Unsettled,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Same => "same",
            Verdict::Slower => "slower",
            Verdict::Unsettled => "unsettled",
        })
    }
}

/// One candidate's rounds on one working set of one job, against the rule's engine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evidence {
    /// The working set.
    pub set: WorkingSet,
    /// Median over the rounds of (candidate time ÷ the rule's): below 1 the candidate is
    /// faster. `NaN` when not measured.
    pub ratio: f64,
    /// Rounds in which the candidate took less time than the rule's engine.
    pub faster: u32,
    /// Rounds measured.
    pub rounds: u32,
    /// What the rounds say.
    pub verdict: Verdict,
}

/// What became of a candidate for one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// The rule's own engine: the baseline.
    Rule,
    /// Taken: faster on a working set of the job, slower on none, and the best such candidate.
    Taken,
    /// Faster on a working set and slower on none, but another candidate did better, or its
    /// edge store could not join the other job's choice (one engine has one edge store).
    Beaten,
    /// Slower on this working set: not taken.
    Slower(WorkingSet),
    /// Not faster on any working set: not taken.
    NotFaster,
    /// The rounds ran out before every working set was settled: not taken.
    Unsettled,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Rule => f.write_str("the rule"),
            Decision::Taken => f.write_str("taken: faster, slower nowhere"),
            Decision::Beaten => f.write_str("faster, slower nowhere, but another was taken"),
            Decision::Slower(set) => write!(f, "not taken: slower on the {set}"),
            Decision::NotFaster => f.write_str("not taken: faster nowhere"),
            Decision::Unsettled => f.write_str("not taken: unsettled"),
        }
    }
}

/// One candidate engine against the rule's, job by job and working set by working set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineTrial {
    /// The candidate.
    pub engine: Engine,
    /// Median over the rounds of (candidate time ÷ the rule's) building `Temporal` frames on
    /// the cold ring (`temporal_on[0]`): below 1 the candidate is faster. `NaN` when not
    /// measured.
    pub temporal: f64,
    /// The same for batched `NonTemporal` frames (`stream_on[0]`).
    pub stream: f64,
    /// Rounds in which the candidate was faster by [`Calibration::ENGINE_MARGIN`] on the cold
    /// ring: `Temporal`, `NonTemporal`.
    pub wins: (u32, u32),
    /// Rounds measured.
    pub rounds: u32,
    /// The `Temporal` job (ordinary stores) on each working set, in [`WorkingSet::ALL`]'s
    /// order.
    pub temporal_on: [Evidence; SETS],
    /// The streamed job (`NonTemporal`, batched: one fence per 64 frames) on each working set.
    pub stream_on: [Evidence; SETS],
    /// What became of it for the `Temporal` job and for the streamed job.
    pub decision: (Decision, Decision),
}

/// What the engine measurement compared and found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineCheck {
    /// The CPU's rule ([`Engine::rule`]), the baseline of every ratio.
    pub rule: Engine,
    pub(super) trials: [EngineTrial; MAX_ENGINES],
    pub(super) len: usize,
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
    /// A candidate engine replaces the rule's choice for a job only if it is faster on one of
    /// the job's working sets, in enough rounds (7 of 9; 8 of 9 near parity) and by taking at
    /// most this fraction of the rule's time at the median, and slower on none
    /// ([`EngineTrial::decision`]).
    pub const ENGINE_MARGIN: f64 = ENGINE_MARGIN;

    /// Publishes the plan in force with every value this calibration decided in place (the
    /// others as they are), for the whole process ([`publish`](crate::tune::publish)). Calls in
    /// flight finish on the plan they started with. The new plan is allocated once per distinct
    /// record and never freed (a published plan must outlive every call that may still hold it),
    /// kept in the list [`update`](crate::tune::update) keeps, so it stays reachable.
    pub fn apply(&self) {
        let now = plan::settled();
        let t = now.tuning.with(&self.tuning(), self.decided());
        // Every value decided was measured on this CPU's own kernels: the plan builds.
        if let Ok(p) = Plan::build(&t, now.facts) {
            plan::publish(plan::made(p));
        }
    }

    /// The record this calibration measured over (the one in force) with every value it
    /// decided in place: what [`apply`](Calibration::apply) installs. Of the engine, only the
    /// fields of the jobs a candidate was taken for change (with the edge store it was
    /// measured with); the others stay as they are in force.
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
            let mask = self.engine_fields();
            let (temporal, stream, edges) = (
                if mask & 1 << tune::TEMPORAL != 0 {
                    e.temporal
                } else {
                    t.engine.temporal
                },
                if mask & 1 << tune::STREAM != 0 {
                    e.stream
                } else {
                    t.engine.stream
                },
                if mask & 1 << tune::EDGES != 0 {
                    e.edges
                } else {
                    t.engine.edges
                },
            );
            t.engine = Engine::new(temporal, stream, edges);
        }
        t
    }

    /// A calibration that decided the `Auto` thresholds `copy` and `fill` and nothing else,
    /// over the record in force, measuring nothing (for tests of what `apply` publishes).
    #[cfg(test)]
    pub(crate) fn deciding(copy: Option<usize>, fill: Option<usize>) -> Calibration {
        let base = plan::active().tuning;
        let blank = super::frames::blank_trial(base.engine);
        let check = EngineCheck {
            rule: base.engine,
            trials: [blank; MAX_ENGINES],
            len: 0,
            outcome: Outcome::NotMeasured,
        };
        Calibration {
            copy,
            fill,
            ..Calibration::measuring_nothing(check, base)
        }
    }

    /// A calibration over `base` that swept nothing and decided nothing, with `engine_check`
    /// as its engine check (for tests: each sets the decisions it is about on top).
    #[cfg(test)]
    pub(crate) fn measuring_nothing(engine_check: EngineCheck, base: Tuning) -> Calibration {
        Calibration {
            copy: None,
            fill: None,
            rep_movsb: None,
            fill_rep: None,
            elapsed: Duration::ZERO,
            copy_sweep: Sweep::new(&[]),
            fill_sweep: Sweep::new(&[]),
            rep_movsb_sweep: Sweep::new(&[]),
            fill_rep_sweep: Sweep::new(&[]),
            rep_movsb_hot: Sweep::new(&[]),
            fill_rep_hot: Sweep::new(&[]),
            engine: None,
            engine_check,
            base,
        }
    }

    /// The engine's fields of the record it decided: `temporal` and `stream` where the engine
    /// decided differs from the rule's, and `edges` with either (a job's candidate was
    /// measured with its edge store). None where no candidate was taken: the rule stays.
    fn engine_fields(&self) -> u16 {
        let Some(e) = self.engine else {
            return 0;
        };
        let rule = self.engine_check.rule;
        let mut mask = 0;
        if e.temporal != rule.temporal {
            mask |= 1 << tune::TEMPORAL;
        }
        if e.stream != rule.stream {
            mask |= 1 << tune::STREAM;
        }
        if mask != 0 || e.edges != rule.edges {
            mask |= 1 << tune::EDGES;
        }
        mask
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
        mask | self.engine_fields()
    }
}

/// `CACHECOPY_TUNE=nt=16M,fill_nt=16M,rep_movsb=never,fill_rep=2K`: the decided fields, in
/// the order of the line's grammar (see [`calibrate()`](crate::tune::calibrate())); a field left out
/// (undecided, or an engine job no candidate was taken for) keeps its built-in rule when the
/// line is read back, as it did here. Writes into any
/// `fmt::Write` without allocating.
impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CACHECOPY_TUNE=")?;
        self.tuning().write_line(self.decided(), f)
    }
}
