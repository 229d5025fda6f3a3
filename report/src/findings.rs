//! Every figure a section measured against a baseline, in one list ([`Findings`], kept in the
//! session). The closing section, "Where cachecopy is slower here", prints the ones below
//! [`SLOWER`] of their baseline. The JSON carries them all. `cachecopy compare` diffs two runs'
//! lists.
//!
//! Every figure here is a speed ratio: the baseline's time ÷ cachecopy's, paired per round
//! (above 1: cachecopy is faster), whatever way round its own section prints it.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::stats::{paired_ratio, Summary};
use crate::text::{self, ratio};

/// Below this median ratio a figure is slower than its baseline (issue 34: a 3 % margin, about
/// the run-to-run movement of a steady paired median).
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
}

impl Finding {
    /// What identifies a figure across runs.
    fn key(&self) -> String {
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
    fn against(&self) -> String {
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

/// Registers sections 7 and 7b (frames into rings, each variant against glibc `memcpy` of the
/// same pieces): `Temporal` and the batched `NonTemporal` copies and gather held to it, per-frame
/// `NonTemporal` (a fence per frame, the cost batching avoids) kept for `compare` only. On the
/// hot ring (one batch, in the L2) only `Temporal` is held: there glibc's stores stay in the
/// cache while a streaming builder's go to memory, so its figure is the larger of its CPU cost
/// and the write limit, and loses to glibc by design. 7b's rows name their engine.
pub fn register_frames(f: &crate::frames::Frames, out: &mut Findings) {
    let hot = f.batch * f.slot;
    let mut add = |section: &str, row: &crate::frames::Row, names: &[String], engine: &str| {
        // `names[i]` goes with the figures' `i`; 0 and 1 are glibc and the limit.
        for (i, name) in names.iter().enumerate().skip(2) {
            let (Some(r), Some(_)) = (row.vs_glibc.get(i), row.ns_per_frame.get(i)) else {
                continue;
            };
            let shape = format!("{} ring, {}", text::size(row.ring), row.shape);
            let op = format!("frames {name}{engine}");
            let held = name == "Temporal" || (row.ring > hot && name != "NonTemporal");
            out.add(section, op, "memcpy", shape, r.recip()).target = held;
        }
    };
    for row in &f.rows {
        add("7", row, &row.variants, "");
    }
    for row in &f.engines {
        let Some((engine, names)) = row.variants.split_first() else {
            continue;
        };
        add("7b", row, names, &format!(" ({engine})"));
    }
}

/// The closing section's text.
pub fn section(findings: &Findings) -> String {
    let held = findings.all().iter().filter(|f| f.target).count();
    let slower = findings.slower();
    let mut s = format!(
        "10. Where cachecopy is slower here: every measured shape whose median ratio to its \
         baseline is below {SLOWER:.2}x (the baseline's time ÷ cachecopy's, paired per round; \
         ~ = noisy). Baselines: glibc memcpy, memset, memmove and a kernel-style checksum loop; \
         for Auto also Temporal and the better explicit mode of the same shape. Held to them: \
         Temporal, Auto, checksums and batched frames (NonTemporal and FlushCache trade speed \
         for the cache and are judged in their sections)\n"
    );
    if slower.is_empty() {
        s.push_str(&format!(
            "   none: all {held} figures at {SLOWER:.2}x or above\n\n"
        ));
        return s;
    }
    // One group per section, operation and baseline, in section order, its shapes in the order
    // measured: first a line each (how many, the lowest), then every shape with its figure.
    let mut groups: Vec<(String, Vec<&Finding>)> = Vec::new();
    for f in &slower {
        let head = format!("{} {} against {}", f.section, f.op, f.baseline);
        match groups.iter_mut().find(|g| g.0 == head) {
            Some(g) => g.1.push(f),
            None => groups.push((head, vec![f])),
        }
    }
    groups.sort_by(|a, b| a.1[0].section.cmp(&b.1[0].section));
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(head, fs)| {
            let low = fs
                .iter()
                .min_by(|a, b| a.ratio.median.total_cmp(&b.ratio.median))
                .expect("a group has a finding");
            vec![
                head.clone(),
                fs.len().to_string(),
                ratio(&low.ratio),
                low.shape.clone(),
            ]
        })
        .collect();
    let header = ["cachecopy against its baseline", "shapes", "lowest", "at"].map(String::from);
    s.push_str(&text::aligned_grid(&header, &rows, |i| i == 0 || i == 3));
    s.push_str(&format!(
        "   {} of {held} figures below {SLOWER:.2}x; every one:\n",
        slower.len()
    ));
    for (head, fs) in &groups {
        s.push_str(&format!("   {head} ({}):\n", fs.len()));
        let items: Vec<String> = fs
            .iter()
            .map(|f| match &f.note {
                Some(n) => format!("{} {} ({n})", f.shape, ratio(&f.ratio)),
                None => format!("{} {}", f.shape, ratio(&f.ratio)),
            })
            .collect();
        s.push_str(&wrap(&items, "      ", 100));
    }
    s.push('\n');
    s
}

/// `items` joined by `; `, in lines of at most `width` characters after `indent`.
fn wrap(items: &[String], indent: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() {
            format!("{item};")
        } else {
            item.clone()
        };
        if !line.is_empty() && line.chars().count() + 1 + piece.chars().count() > width {
            out.push_str(&format!("{indent}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    if !line.is_empty() {
        out.push_str(&format!("{indent}{line}\n"));
    }
    out
}

/// A table of findings: section, op, baseline, shape, then `extra`'s cells.
fn grid(fs: &[Finding], extra: impl Fn(&Finding) -> Vec<String>, heads: &[&str]) -> String {
    let mut header: Vec<String> = ["section", "cachecopy", "baseline", "shape"]
        .map(String::from)
        .to_vec();
    header.extend(heads.iter().map(|h| h.to_string()));
    let rows: Vec<Vec<String>> = fs
        .iter()
        .map(|f| {
            let mut r = vec![
                f.section.clone(),
                f.op.clone(),
                f.against(),
                f.shape.clone(),
            ];
            r.extend(extra(f));
            r
        })
        .collect();
    text::left_grid(&header, &rows, 4)
}

/// What `compare` reads of a report's JSON.
#[derive(Deserialize)]
struct Run {
    date: String,
    scale: String,
    machine: RunMachine,
    #[serde(default)]
    findings: Vec<Finding>,
}

#[derive(Deserialize)]
struct RunMachine {
    #[serde(default)]
    brand: String,
    #[serde(default)]
    tuning: String,
}

/// The sections `compare` looks at: copy and fill bandwidth and the small calls.
fn compared(section: &str) -> bool {
    section == "2" || section == "6" || section.starts_with('8')
}

/// `cachecopy compare A B`: every figure of sections 2, 6 and 8 whose median moved more than
/// `pct` % from run `a` to run `b`, lower ones first; the text, or what is wrong with a file.
pub fn compare(a: &Path, b: &Path, pct: f64) -> Result<String, String> {
    let read = |p: &Path| -> Result<Run, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
    };
    let (ra, rb) = (read(a)?, read(b)?);
    if ra.findings.is_empty() || rb.findings.is_empty() {
        return Err(format!(
            "{}: no findings (a report from before `compare` existed?)",
            if ra.findings.is_empty() { a } else { b }.display()
        ));
    }
    let in_b: HashMap<String, &Finding> = rb
        .findings
        .iter()
        .filter(|f| compared(&f.section))
        .map(|f| (f.key(), f))
        .collect();
    let mut pairs: Vec<(&Finding, &Finding, f64)> = Vec::new();
    let mut only = 0;
    let mut total = 0;
    for fa in ra.findings.iter().filter(|f| compared(&f.section)) {
        match in_b.get(&fa.key()) {
            Some(fb) => {
                total += 1;
                pairs.push((fa, fb, fb.ratio.median / fa.ratio.median));
            }
            None => only += 1,
        }
    }
    only += in_b.len() - total;
    let bound = pct / 100.0;
    let mut lower: Vec<_> = pairs.iter().filter(|p| p.2 < 1.0 - bound).collect();
    let mut higher: Vec<_> = pairs.iter().filter(|p| p.2 > 1.0 + bound).collect();
    lower.sort_by(|x, y| x.2.total_cmp(&y.2));
    higher.sort_by(|x, y| y.2.total_cmp(&x.2));

    let mut s = String::new();
    for (name, path, r) in [("A", a, &ra), ("B", b, &rb)] {
        s.push_str(&format!(
            "{name}: {} ({}, {} run, {}), {}\n",
            path.display(),
            r.date,
            r.scale,
            r.machine.brand,
            r.machine.tuning
        ));
    }
    s.push_str(&format!(
        "\nFigures of sections 2, 6 and 8 (each the baseline's time ÷ cachecopy's, paired per \
         round) that moved more than {pct} % from A to B; B ÷ A below 1: cachecopy got slower \
         against its baseline; ~ = noisy in either run\n"
    ));
    let table = |rows: &[&(&Finding, &Finding, f64)]| {
        let fs: Vec<Finding> = rows.iter().map(|p| p.0.clone()).collect();
        let by_key: HashMap<String, (&Finding, f64)> =
            rows.iter().map(|p| (p.0.key(), (p.1, p.2))).collect();
        grid(
            &fs,
            |fa| {
                let (fb, q) = by_key[&fa.key()];
                let noisy = if fa.ratio.noisy || fb.ratio.noisy {
                    "~"
                } else {
                    ""
                };
                vec![
                    format!("{:.2}x", fa.ratio.median),
                    format!("{:.2}x", fb.ratio.median),
                    format!("{noisy}{q:.2}"),
                ]
            },
            &["A", "B", "B ÷ A"],
        )
    };
    s.push_str(&format!("\nlower in B ({}):\n", lower.len()));
    if !lower.is_empty() {
        s.push_str(&table(&lower));
    }
    s.push_str(&format!("\nhigher in B ({}):\n", higher.len()));
    if !higher.is_empty() {
        s.push_str(&table(&higher));
    }
    s.push_str(&format!(
        "\n{} of {total} figures in both runs moved more than {pct} %: {} lower, {} higher",
        lower.len() + higher.len(),
        lower.len(),
        higher.len()
    ));
    if only > 0 {
        s.push_str(&format!("; {only} in one run only"));
    }
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(v: &[f64]) -> Summary {
        Summary::of(v).unwrap()
    }

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

    #[test]
    fn the_closing_section_lists_what_is_slower_or_says_none() {
        let mut f = Findings::default();
        f.add("2", "copy Auto", "memcpy", "256 B hot", sum(&[1.2]));
        assert!(section(&f).contains("none: all 1 figures at 0.97x or above"));
        f.add(
            "8a",
            "copy Temporal",
            "memcpy",
            "96 B hot +5",
            sum(&[0.5, 0.9, 0.96]),
        );
        f.add("2", "copy NonTemporal", "memcpy", "1 KiB hot", sum(&[0.1]))
            .target = false;
        f.add_vs_better(
            "9",
            "move Auto",
            "48 MiB cold, by 4 KiB, down",
            &[7.0],
            ("Temporal", &[10.0]),
            ("NonTemporal", &[7.0]),
        );
        f.add("8a", "copy Temporal", "memcpy", "128 B hot +5", sum(&[0.8]));
        let t = section(&f);
        assert!(t.starts_with("10. Where cachecopy is slower here"), "{t}");
        assert!(
            t.contains("   8a copy Temporal against memcpy (2):\n      96 B hot +5 ~0.90x; 128 B hot +5 0.80x\n"),
            "{t}"
        );
        assert!(!t.contains("1 KiB hot"), "NonTemporal is not held: {t}");
        assert!(
            t.contains("9 move Auto against the better mode (1):\n      48 MiB cold, by 4 KiB, down 0.70x (Temporal)\n"),
            "{t}"
        );
        assert!(t.contains("3 of 4 figures below 0.97x; every one:"), "{t}");
        // The summary: a line per group, in section order, with the lowest figure.
        let summary = t
            .find("   8a copy Temporal against memcpy  ")
            .expect("summary line");
        assert!(summary < t.find("   9 move Auto against").unwrap(), "{t}");
        assert!(t.contains("0.80x  128 B hot +5\n"), "{t}");
    }

    #[test]
    fn long_lists_wrap() {
        let items: Vec<String> = (0..5).map(|i| format!("item{i}")).collect();
        assert_eq!(
            wrap(&items, "  ", 11),
            "  item0;\n  item1;\n  item2;\n  item3;\n  item4\n"
        );
        assert_eq!(wrap(&items[..2], "  ", 80), "  item0; item1\n");
    }

    #[test]
    fn compare_lists_what_moved() {
        let dir = std::env::temp_dir();
        let path = |n: &str| dir.join(format!("cachecopy-compare-{}-{n}.json", std::process::id()));
        let run = |ratios: &[(&str, f64)]| {
            let mut f = Findings::default();
            for &(shape, r) in ratios {
                f.add("8a", "copy Auto", "memcpy", shape, sum(&[r]));
            }
            f.add("9", "move Auto", "memmove", "1 B hot", sum(&[1.0]));
            serde_json::json!({
                "date": "2026-12-03", "scale": "quick",
                "machine": {"cpu": "cpu", "tuning": "CACHECOPY_TUNE=x"},
                "findings": f.all(),
            })
            .to_string()
        };
        let (a, b) = (path("a"), path("b"));
        std::fs::write(
            &a,
            run(&[("1 B", 1.0), ("2 B", 1.0), ("4 B", 1.0), ("8 B", 1.0)]),
        )
        .unwrap();
        std::fs::write(
            &b,
            run(&[("1 B", 0.9), ("2 B", 1.02), ("4 B", 1.1), ("16 B", 1.0)]),
        )
        .unwrap();
        let t = compare(&a, &b, 3.0).unwrap();
        let none = std::fs::write(&b, r#"{"date":"","scale":"","machine":{}}"#);
        let e = none.map(|_| compare(&a, &b, 3.0));
        std::fs::remove_file(&a).ok();
        std::fs::remove_file(&b).ok();
        assert!(t.contains("lower in B (1)"), "{t}");
        assert!(t.contains("higher in B (1)"), "{t}");
        assert!(t.contains("0.90"), "{t}");
        assert!(!t.contains("2 B"), "within 3 %: {t}");
        assert!(!t.contains("move Auto"), "section 9 is not compared: {t}");
        assert!(
            t.contains("2 of 3 figures in both runs moved more than 3 %"),
            "{t}"
        );
        assert!(t.contains("2 in one run only"), "{t}");
        assert!(e.unwrap().unwrap_err().contains("no findings"));
    }
}
