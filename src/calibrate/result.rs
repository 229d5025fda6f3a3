//! What a calibration returns: the measurement of each tunable ([`Sweep`], [`Point`],
//! [`Outcome`]), of the engine ([`EngineCheck`], [`EngineTrial`]), and the [`Calibration`] that
//! holds them, whose record ([`Calibration::tuning`]) dispatch installs and whose `Display` is
//! the `CACHECOPY_TUNE` line that keeps it.

use core::fmt;
use core::time::Duration;

use super::{BUDGET, MAX_POINTS, MEMORY_BUDGET};
use crate::cpu::engine::Engine;
use crate::cpu::tune::{self, Tuning};

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
    pub(super) points: [Point; MAX_POINTS],
    pub(super) len: usize,
    /// The value measured, `usize::MAX` for never; `None` when the built-in rule stays.
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
    pub(super) base: Tuning,
}

/// The most engines [`EngineCheck`] compares.
pub(crate) const MAX_ENGINES: usize = 8;
/// How much faster than the rule's choice a candidate must be to replace it: 5 %.
pub(crate) const ENGINE_MARGIN: f64 = 0.95;

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

    /// A calibration that decided the `Auto` thresholds `copy` and `fill` and nothing else,
    /// over the record in force, measuring nothing (for tests of what `apply` publishes).
    #[cfg(test)]
    pub(crate) fn deciding(copy: Option<usize>, fill: Option<usize>) -> Calibration {
        let base = crate::dispatch::tuning();
        let blank = EngineTrial {
            engine: base.engine,
            temporal: f64::NAN,
            stream: f64::NAN,
            wins: (0, 0),
            rounds: 0,
        };
        Calibration {
            copy,
            fill,
            rep_movsb: None,
            fill_rep: None,
            elapsed: Duration::ZERO,
            copy_sweep: Sweep::new(&[]),
            fill_sweep: Sweep::new(&[]),
            rep_movsb_sweep: Sweep::new(&[]),
            fill_rep_sweep: Sweep::new(&[]),
            engine: None,
            engine_check: EngineCheck {
                rule: base.engine,
                trials: [blank; MAX_ENGINES],
                len: 0,
                outcome: Outcome::NotMeasured,
            },
            base,
        }
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
