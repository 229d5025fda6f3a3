//! `cachecopy compare A B`: the figures of two report runs' JSON ([`Finding`]s) that moved
//! between them.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::findings::Finding;
use crate::text;

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
    use crate::findings::Findings;
    use crate::stats::summary as sum;

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
