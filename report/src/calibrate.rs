//! Section 5: where `Auto` should switch to streaming stores on this machine, measured, for
//! copies and for fills (a fill has no source stream, so its crossover is its own).

use cachecopy::Mode;
use serde::Serialize;

use crate::measure::{self, Arena, Dest, Op};
use crate::stats::{paired_ratio, Summary};

#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub size: usize,
    #[serde(serialize_with = "measure::serialize_dest")]
    pub dest: Dest,
    /// NonTemporal ÷ Temporal, per round.
    pub ratio: Summary,
}

/// What is calibrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `cachecopy::copy`, threshold `nt_threshold()` / `CACHECOPY_NT_THRESHOLD`.
    Copy,
    /// `cachecopy::zero`, threshold `fill_nt_threshold()` / `CACHECOPY_FILL_NT_THRESHOLD`.
    Fill,
}

impl Kind {
    /// The environment variable that sets this kind's threshold.
    pub fn env(self) -> &'static str {
        match self {
            Kind::Copy => "CACHECOPY_NT_THRESHOLD",
            Kind::Fill => "CACHECOPY_FILL_NT_THRESHOLD",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    pub kind: Kind,
    pub points: Vec<Point>,
    /// Where streaming stops losing to temporal stores (see [`crossover`]), for a cold and a hot
    /// destination.
    pub crossover_cold: Option<usize>,
    pub crossover_hot: Option<usize>,
    /// The recommended `CACHECOPY_NT_THRESHOLD`: see [`recommend`].
    pub recommended: Option<usize>,
    pub builtin: usize,
    pub glibc: Option<usize>,
}

/// The smallest size from which streaming does not lose, given (size, NonTemporal ÷ Temporal)
/// summaries: the start of the longest run of sizes, up to the largest, where no point loses.
/// A point loses when its median is below 1, except a noisy point within 10 % of parity (on a
/// shared VM one preempted round moves a median by that much). `None` when the largest size
/// loses. Requiring the whole tail keeps one lucky point below the real crossover from moving it.
pub fn crossover(points: &[(usize, Summary)]) -> Option<usize> {
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.0);
    let loses = |r: &Summary| r.median < 1.0 && !(r.noisy && r.median >= 0.9);
    let mut best = None;
    for (size, ratio) in pts.iter().rev() {
        if loses(ratio) {
            break;
        }
        if ratio.median >= 1.0 {
            best = Some(*size);
        }
    }
    best
}

/// The threshold to recommend: the hot crossover, the size from which streaming is no slower
/// even when the destination was cached, so `Auto` never loses to `Temporal` by streaming;
/// below it a cached destination favours temporal stores. When streaming never catches up with
/// a hot destination in the measured range, the cold crossover times 4 bounds it instead (that
/// many bytes are already past what the caches keep).
pub fn recommend(cold: Option<usize>, hot: Option<usize>) -> Option<usize> {
    hot.or(cold.map(|c| c.saturating_mul(4)))
}

#[allow(clippy::too_many_arguments)]
pub fn run(
    kind: Kind,
    sizes: &[usize],
    src: &[u8],
    arena: &mut Arena,
    samples: usize,
    sample_bytes: usize,
    glibc: Option<usize>,
    mut tick: impl FnMut(),
) -> Calibration {
    let ops = match kind {
        Kind::Copy => [Op::Copy(Mode::Temporal), Op::Copy(Mode::NonTemporal)],
        Kind::Fill => [Op::Zero(Mode::Temporal), Op::Zero(Mode::NonTemporal)],
    };
    let mut points = Vec::new();
    for dest in [Dest::Cold, Dest::Hot] {
        for &size in sizes {
            let runs = measure::runs_per_sample(size, sample_bytes);
            let r = measure::interleaved(&ops, size, dest, src, arena, samples, runs);
            points.push(Point {
                size,
                dest,
                ratio: paired_ratio(&r[1], &r[0]).expect("samples ≥ 1"),
            });
            tick();
        }
    }
    let of = |d: Dest| -> Vec<(usize, Summary)> {
        points
            .iter()
            .filter(|p| p.dest == d)
            .map(|p| (p.size, p.ratio))
            .collect()
    };
    let (crossover_cold, crossover_hot) = (crossover(&of(Dest::Cold)), crossover(&of(Dest::Hot)));
    Calibration {
        kind,
        points,
        crossover_cold,
        crossover_hot,
        recommended: recommend(crossover_cold, crossover_hot),
        builtin: match kind {
            Kind::Copy => cachecopy::nt_threshold(),
            Kind::Fill => cachecopy::fill_nt_threshold(),
        },
        glibc: glibc.filter(|_| kind == Kind::Copy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tight summary with this median.
    fn at(median: f64) -> Summary {
        Summary::of(&[median]).unwrap()
    }

    /// A noisy summary with this median.
    fn noisy(median: f64) -> Summary {
        Summary::of(&[median * 0.2, median, median * 2.0]).unwrap()
    }

    #[test]
    fn crossover_needs_the_whole_tail() {
        let t = [
            (1 << 10, at(0.5)),
            (4 << 10, at(1.1)),
            (16 << 10, at(0.9)),
            (64 << 10, at(1.2)),
            (256 << 10, at(1.4)),
        ];
        assert_eq!(crossover(&t), Some(64 << 10));
        // Order does not matter.
        let mut r = t;
        r.reverse();
        assert_eq!(crossover(&r), Some(64 << 10));
    }

    #[test]
    fn noisy_near_parity_does_not_break_the_tail() {
        let t = [(1, at(0.5)), (2, at(1.5)), (4, noisy(0.93)), (8, at(1.2))];
        assert!(t[2].1.noisy);
        assert_eq!(crossover(&t), Some(2));
        // A tight 0.93 is a real loss, and so is a noisy 0.8.
        let t = [(1, at(1.5)), (2, at(0.93)), (4, at(1.2))];
        assert_eq!(crossover(&t), Some(4));
        let t = [(1, at(1.5)), (2, noisy(0.8)), (4, at(1.2))];
        assert_eq!(crossover(&t), Some(4));
        // A tail of near-parity noise alone is no crossover.
        assert_eq!(crossover(&[(1, noisy(0.95))]), None);
    }

    #[test]
    fn crossover_edges() {
        assert_eq!(crossover(&[]), None);
        assert_eq!(crossover(&[(1, at(2.0)), (2, at(0.99))]), None);
        assert_eq!(crossover(&[(1, at(1.0)), (2, at(1.5))]), Some(1));
    }

    #[test]
    fn recommendation_prefers_hot() {
        assert_eq!(recommend(Some(16 << 10), Some(8 << 20)), Some(8 << 20));
        assert_eq!(recommend(Some(16 << 10), None), Some(64 << 10));
        assert_eq!(recommend(None, None), None);
    }
}
