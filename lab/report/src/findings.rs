//! Every figure a section measured against a baseline, in one list ([`Findings`], kept in the
//! session; each section registers its own). The closing section, "Where cachecopy is slower
//! here" (`sections::slower`), prints the ones below [`SLOWER`] of their baseline. The JSON
//! carries them all; `cachecopy compare` (`compare.rs`) diffs two runs' lists.
//!
//! Every figure here is a speed ratio: the baseline's time ÷ cachecopy's, paired per round
//! (above 1: cachecopy is faster), whatever way round its own section prints it.

use serde::{Deserialize, Serialize};

use crate::measure::Dest;
use crate::stats::{paired_ratio, Summary};

/// Below this median ratio a figure is slower than its baseline: a margin about the size of the
/// run-to-run movement of a steady paired median (lab/findings/slower-here.md).
pub const SLOWER: f64 = 0.97;

/// One measured shape against its baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The table it comes from: `2`, `6`, `7`, `7b`, `8a`, `8b`, `8c`, `8d`, `8e`, `9`.
    pub section: String,
    /// What cachecopy ran, e.g. `copy Auto`, `copy Auto (run-time mode)`, `move Temporal`.
    pub op: String,
    /// What it ran against: glibc's `memcpy`, `memset` or `memmove`, the kernel-style
    /// checksum loop, or (for `Auto`) `Temporal` or `the better mode`.
    pub baseline: String,
    /// For `the better mode`: which one it was in this run (both names when they were within
    /// 3 % of each other: then their mean is the baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Size, destination (hot or cold), offset, distance: whatever the table varies.
    pub shape: String,
    /// The baseline's time ÷ cachecopy's, paired per round.
    pub ratio: Summary,
    /// Whether the closing section holds the figure to its baseline. False for `NonTemporal`,
    /// `FlushCache` and per-frame `NonTemporal`, which are chosen for what they leave in the
    /// cache (or in memory), not for speed, and lose to glibc by design where the destination
    /// is cached; they are kept for `compare`.
    pub target: bool,
    /// Where the first screen (`crate::glance`) counts the figure, if it does: set on the
    /// figures of a mode against the C library's own function, by which a user picks a mode.
    /// Not in the JSON: the screen is computed in the run.
    #[serde(skip)]
    pub place: Option<Place>,
}

/// What a figure measured, as the first screen groups figures: the operation, the mode (or the
/// way of building a frame), how many bytes a call handled, whether its destination was cached,
/// and the C library it ran against.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub what: What,
    /// `Temporal`, `NonTemporal`, `Auto`; for frames also `NT batched`, `NT gather`.
    pub mode: &'static str,
    /// Bytes per call (for calls of changing size, their mean).
    pub bytes: usize,
    pub dest: Dest,
    pub against: Against,
}

/// The operation of a [`Place`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Copy,
    Fill,
    Move,
    /// A header and a payload into a ring slot.
    Frame,
}

impl What {
    /// In the order the first screen lists them.
    pub const ALL: [What; 4] = [What::Copy, What::Fill, What::Move, What::Frame];

    /// `copies`, `fills`, `moves`, `frames`.
    pub fn plural(self) -> &'static str {
        match self {
            What::Copy => "copies",
            What::Fill => "fills",
            What::Move => "moves",
            What::Frame => "frames",
        }
    }
}

/// Whose function a [`Place`]d figure ran against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// glibc's `memcpy`, `memset` or `memmove`.
    Glibc,
    /// AOCL-LibMem's (`--libmem`).
    LibMem,
}

impl Place {
    /// A figure against glibc.
    pub fn glibc(what: What, mode: &'static str, bytes: usize, dest: Dest) -> Option<Place> {
        Some(Place {
            what,
            mode,
            bytes,
            dest,
            against: Against::Glibc,
        })
    }
}

impl Finding {
    /// What identifies a figure across runs.
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.section, self.op, self.baseline, self.shape
        )
    }

    /// Held to its baseline and below [`SLOWER`] of it.
    pub fn slower(&self) -> bool {
        self.target && self.ratio.median < SLOWER
    }

    /// The baseline as printed: `the better mode (Temporal)`.
    pub fn against(&self) -> String {
        match &self.note {
            Some(n) => format!("{} ({n})", self.baseline),
            None => self.baseline.clone(),
        }
    }
}

/// The list every section adds to.
#[derive(Default)]
pub struct Findings(Vec<Finding>);

impl Findings {
    /// Adds a figure the closing section holds to its baseline; returns it for a note.
    pub fn add(
        &mut self,
        section: &str,
        op: impl Into<String>,
        baseline: impl Into<String>,
        shape: impl Into<String>,
        ratio: Summary,
    ) -> &mut Finding {
        self.0.push(Finding {
            section: section.to_string(),
            op: op.into(),
            baseline: baseline.into(),
            note: None,
            shape: shape.into(),
            ratio,
            target: true,
            place: None,
        });
        self.0.last_mut().expect("just pushed")
    }

    /// Adds `Auto`'s figure against the better of two explicit modes of the same shape (see
    /// [`vs_better`]); nothing when a series is empty.
    #[allow(clippy::too_many_arguments)]
    pub fn add_vs_better(
        &mut self,
        section: &str,
        op: impl Into<String>,
        shape: impl Into<String>,
        auto: &[f64],
        a: (&str, &[f64]),
        b: (&str, &[f64]),
    ) {
        if let Some((r, which)) = vs_better(auto, a, b) {
            self.add(section, op, "the better mode", shape, r).note = Some(which);
        }
    }

    /// Every figure, in the order the sections added them.
    pub fn all(&self) -> &[Finding] {
        &self.0
    }

    /// The figures below [`SLOWER`] of their baseline.
    pub fn slower(&self) -> Vec<Finding> {
        self.0.iter().filter(|f| f.slower()).cloned().collect()
    }
}

/// `auto` against the better of the explicit modes `a` and `b`, from per-round speeds (any unit,
/// higher is faster; the same rounds in all three). The better mode is the one whose paired
/// ratio to the other has a median above 1; when that median is within 3 % of 1 the two are
/// tied, and each round's baseline is their mean, so that a tie between two modes running the
/// same code does not pick the luckier one and count its luck against `Auto`. Returns the
/// paired ratio and the better mode's name (`a ≈ b` when tied).
pub fn vs_better(auto: &[f64], a: (&str, &[f64]), b: (&str, &[f64])) -> Option<(Summary, String)> {
    let ab = paired_ratio(a.1, b.1)?.median;
    let (base, which): (Vec<f64>, String) = if (SLOWER..=1.0 / SLOWER).contains(&ab) {
        let mean = a.1.iter().zip(b.1).map(|(x, y)| (x + y) / 2.0).collect();
        (mean, format!("{} ≈ {}", a.0, b.0))
    } else if ab > 1.0 {
        (a.1.to_vec(), a.0.to_string())
    } else {
        (b.1.to_vec(), b.0.to_string())
    };
    Some((paired_ratio(auto, &base)?, which))
}

/// Per-round times to per-round speeds (their reciprocals).
pub fn speeds(ns: &[f64]) -> Vec<f64> {
    ns.iter().map(|t| 1.0 / t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_better_mode_wins_and_a_tie_is_a_mean() {
        let auto = [10.0, 10.0, 10.0];
        let t = [10.0, 10.0, 10.0];
        let nt = [20.0, 20.0, 20.0];
        let (r, which) = vs_better(&auto, ("Temporal", &t), ("NonTemporal", &nt)).unwrap();
        assert_eq!((r.median, which.as_str()), (0.5, "NonTemporal"));
        let (r, which) = vs_better(&nt, ("Temporal", &t), ("NonTemporal", &nt)).unwrap();
        assert_eq!((r.median, which.as_str()), (1.0, "NonTemporal"));
        // Within 3 %: the mean, whichever is luckier.
        let t2 = [10.2, 10.2, 10.2];
        let (r, which) = vs_better(&auto, ("Temporal", &t2), ("NonTemporal", &t)).unwrap();
        assert_eq!(which, "Temporal ≈ NonTemporal");
        assert!((r.median - 10.0 / 10.1).abs() < 1e-12);
        assert!(vs_better(&[], ("a", &[]), ("b", &[])).is_none());
    }
}
