//! `--json`: every figure of a run, as one document.

use std::path::Path;

use serde::Serialize;

use crate::findings::{Finding, Findings};
use crate::machine::Machine;
use crate::measure::Cell;
use crate::sections::calibrate::Calibration;
use crate::sections::frames::Frames;
use crate::sections::mixes::Mixes;
use crate::sections::pollution::Pollution;
use crate::sections::seed::Seed;
use crate::text::out;

/// Everything a run measured.
#[derive(Serialize)]
pub struct Report {
    /// The crate's version.
    pub cachecopy: &'static str,
    /// UTC, `YYYY-MM-DD`.
    pub date: String,
    /// `full`, `quick` or `tiny`.
    pub scale: &'static str,
    /// Samples per bandwidth figure.
    pub iterations: usize,
    /// How long the run took.
    pub seconds: f64,
    /// Section 1.
    pub machine: Machine,
    /// Section 2.
    pub bandwidth: Vec<Cell>,
    /// Section 6.
    pub fill: Vec<Cell>,
    /// Section 3.
    pub seed: Seed,
    /// Section 4.
    pub pollution: Pollution,
    /// Section 5.
    pub calibration: Calibration,
    /// Section 5b.
    pub fill_calibration: Calibration,
    /// Section 7.
    pub frames: Frames,
    /// Section 8f.
    pub mixes: Mixes,
    /// The findings, the document's last fields.
    #[serde(flatten)]
    pub verdicts: Verdicts,
}

/// What a run with `--only` measured: the machine, the sections run, their findings.
#[derive(Serialize)]
pub struct Only {
    pub cachecopy: &'static str,
    pub date: String,
    /// `full`, `quick` or `tiny`.
    pub scale: &'static str,
    /// The sections run.
    pub only: Vec<String>,
    pub seconds: f64,
    pub machine: Machine,
    /// Section 7, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<Frames>,
    /// Section 8f, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixes: Option<Mixes>,
    /// The findings of the sections run, the document's last fields.
    #[serde(flatten)]
    pub verdicts: Verdicts,
}

/// The closing fields of every run's document, a full run's or an `--only` one's.
#[derive(Serialize)]
pub struct Verdicts {
    /// Every figure of the sections run (2 and 6-9 in a full run) against its baseline
    /// (`findings::Finding`): the baseline's time ÷ cachecopy's, paired per round.
    pub findings: Vec<Finding>,
    /// Section 10: the findings below 0.97 of their baseline.
    pub slower_here: Vec<Finding>,
}

impl From<&Findings> for Verdicts {
    fn from(f: &Findings) -> Verdicts {
        Verdicts {
            findings: f.all().to_vec(),
            slower_here: f.slower(),
        }
    }
}

/// Writes `report` to `path`, pretty-printed.
pub fn write(report: &impl Serialize, path: &Path) -> Result<(), String> {
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// The run's last lines: how long it took, then the JSON written to `path` if one was asked for.
pub fn done(report: &impl Serialize, seconds: f64, path: Option<&Path>) -> Result<(), String> {
    out(&format!("Done in {seconds:.0} s.\n"));
    if let Some(path) = path {
        write(report, path)?;
        out(&format!("JSON: {}\n", path.display()));
    }
    Ok(())
}
