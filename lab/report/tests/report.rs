//! `cachecopy report` end to end: a tiny run prints the first screen before the sections, writes
//! JSON with every section and positive figures, the findings of every section with a baseline
//! and the closing section's list, and a page of HTML with every plot;
//! `compare` of a run with itself finds nothing moved; `engines` lists what CI forces; bad flags
//! exit with status 2.

use std::process::Command;

#[path = "../../../tests/common/mod.rs"]
mod common;

fn bin() -> Command {
    common::run_target_binary(env!("CARGO_BIN_EXE_cachecopy"))
}

#[test]
fn report_writes_every_section() {
    let dir = std::env::temp_dir();
    let json = dir.join(format!("cachecopy-report-{}.json", std::process::id()));
    let svg = dir.join(format!("cachecopy-report-{}.svg", std::process::id()));
    let html = dir.join(format!("cachecopy-report-{}.html", std::process::id()));
    let out = bin()
        .args(["report", "--quick", "--tiny", "--json"])
        .arg(&json)
        .arg("--svg")
        .arg(&svg)
        .arg("--html")
        .arg(&html)
        .output()
        .expect("run cachecopy");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for heading in [
        "1. Machine",
        "2. Copy bandwidth",
        "3. The MSG_NTCOPY",
        "4. Cache pollution",
        "5. Auto calibration, copies",
        "5b. Auto calibration, fills",
        "6. Fill bandwidth",
        "7. Frames",
        "8. Small calls",
        "8a. copy_raw vs glibc memcpy",
        "8b. fill_raw vs glibc memset",
        "8c. Auto against Temporal",
        "8d. net::csum_partial",
        "8e. Safe slice calls in a loop",
        "8f. Calls of changing size",
        "LibMem: skipped",
        "9. Moves",
        "cold, near: by one page",
        "cold, far: by",
        "10. Where cachecopy is slower here",
    ] {
        assert!(stdout.contains(heading), "missing {heading:?} in\n{stdout}");
    }
    first_screen(&stdout, &["copies", "fills", "moves", "frames"]);
    let text = std::fs::read_to_string(&json).expect("JSON written");
    let svg_text = std::fs::read_to_string(&svg).expect("SVG written");
    let page = std::fs::read_to_string(&html).expect("HTML written");
    std::fs::remove_file(&html).ok();
    // The page: the first screen, the plots of sections 2 and 6, 8a and 8b, and 8f's three
    // operations, and section 10's table; nothing to fetch or run.
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<h2>At a glance</h2>"));
    assert_eq!(page.matches("<svg").count(), 2 + 2 + 3, "one per plot");
    assert!(page.contains("Where cachecopy is slower here (section 10)"));
    assert!(!page.contains("<script"));
    // A run compared with itself: every figure matched, none moved.
    let cmp = bin()
        .arg("compare")
        .arg(&json)
        .arg(&json)
        .output()
        .expect("run cachecopy compare");
    let cmp_out = String::from_utf8_lossy(&cmp.stdout);
    assert!(cmp.status.success(), "{cmp_out}");
    assert!(cmp_out.contains("lower in B (0)"), "{cmp_out}");
    assert!(cmp_out.contains("0 of "), "{cmp_out}");
    std::fs::remove_file(&json).ok();
    std::fs::remove_file(&svg).ok();
    assert!(svg_text.starts_with("<svg"));
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");

    let m = &v["machine"];
    assert!(m["nt_threshold"].as_u64().unwrap() > 0);
    assert!(m["line"].as_u64().unwrap() > 0);
    assert!(!m["backends"].as_array().unwrap().is_empty());
    assert!(m["active"].is_string());

    let positive = |x: &serde_json::Value, what: &str| {
        let f = x
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: not a number: {x}"));
        assert!(f > 0.0 && f.is_finite(), "{what}: {f}");
    };
    for table in ["bandwidth", "fill"] {
        let cells = v[table].as_array().unwrap();
        // 5 ops x 2 destinations x at least one size.
        assert!(cells.len() >= 10, "{table}: {} cells", cells.len());
        for c in cells {
            positive(&c["gbps"]["median"], table);
            positive(&c["gbps"]["min"], table);
            if !c["ratio"].is_null() {
                positive(&c["ratio"]["median"], table);
            }
        }
        let ops: Vec<&str> = cells.iter().map(|c| c["op"].as_str().unwrap()).collect();
        for op in ["Temporal", "NonTemporal", "FlushCache", "Auto"] {
            assert!(ops.contains(&op), "{table} lacks {op}");
        }
    }
    let rows = v["seed"]["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        positive(&r["temporal_gbps"]["median"], "seed");
        positive(&r["nontemporal_gbps"]["median"], "seed");
        positive(&r["ratio"]["median"], "seed");
    }
    let rows = v["pollution"]["rows"].as_array().unwrap();
    assert_eq!(rows.len() % 6, 0);
    for r in rows {
        positive(&r["reread_ns"]["median"], "pollution");
        positive(&r["slowdown"]["median"], "pollution");
    }
    for (key, kind) in [("calibration", "copy"), ("fill_calibration", "fill")] {
        let c = &v[key];
        assert_eq!(c["kind"], kind, "{key}");
        assert!(!c["points"].as_array().unwrap().is_empty());
        for p in c["points"].as_array().unwrap() {
            positive(&p["ratio"]["median"], key);
        }
        positive(&c["builtin"], key);
    }

    // Every section with a baseline registered its figures; the closing list is theirs.
    let findings = v["findings"].as_array().unwrap();
    let sections: std::collections::HashSet<&str> = findings
        .iter()
        .map(|f| f["section"].as_str().unwrap())
        .collect();
    for s in ["2", "6", "7", "7b", "8a", "8b", "8c", "8d", "8e", "8f", "9"] {
        assert!(sections.contains(s), "no findings of section {s}");
    }
    for f in findings {
        positive(&f["ratio"]["median"], "findings");
        for key in ["op", "baseline", "shape"] {
            assert!(!f[key].as_str().unwrap().is_empty(), "{f}");
        }
        assert!(f["target"].is_boolean(), "{f}");
    }
    for op in [
        "copy Auto (run-time mode)",
        "fill Auto",
        "zero Auto (run-time mode)",
        "move Auto",
        "csum_partial",
    ] {
        assert!(findings.iter().any(|f| f["op"] == op), "no finding of {op}");
    }
    assert!(findings
        .iter()
        .any(|f| f["baseline"] == "the better mode" && f["note"].is_string()));
    for f in v["slower_here"].as_array().unwrap() {
        assert!(f["ratio"]["median"].as_f64().unwrap() < 0.97, "{f}");
        assert_eq!(f["target"], true, "{f}");
        assert!(findings.contains(f), "{f}");
    }
    // Section 8f: every operation, mix and working set, glibc and cachecopy's three variants.
    let rows = v["mixes"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3 * 5 * 3, "{}", v["mixes"]);
    for r in rows {
        let ns = r["ns"].as_array().unwrap();
        assert_eq!(ns.len(), 4, "{r}");
        for pair in ns {
            positive(&pair[1]["median"], "mixes");
        }
    }
}

/// The first screen: at most 40 lines before section 1, the title first, a row of the table
/// for each operation in `ops`, the slower-here count; the sections after it.
fn first_screen(stdout: &str, ops: &[&str]) {
    let lines: Vec<&str> = stdout.lines().collect();
    let machine = lines
        .iter()
        .position(|l| *l == "1. Machine")
        .expect("section 1");
    let screen = lines[..machine].join("\n");
    assert!(machine <= 40, "{machine} lines before section 1:\n{screen}");
    assert!(lines[0].starts_with("cachecopy "), "{screen}");
    assert!(screen.contains("hot: use"), "{screen}");
    for op in ops {
        assert!(
            screen.contains(&format!("\n   {op} ")),
            "no {op} in\n{screen}"
        );
    }
    assert!(
        screen.contains("Slower than the baseline here: "),
        "{screen}"
    );
    assert!(screen.contains("Tuning"), "{screen}");
}

/// `--only 8f`: section 1, the one section and the closing one; JSON that `compare` reads;
/// a LibMem path that is not one is skipped with the reason, not fatal.
#[test]
fn only_runs_the_sections_named() {
    let json = std::env::temp_dir().join(format!("cachecopy-only-{}.json", std::process::id()));
    let out = bin()
        .args([
            "--only",
            "8f",
            "--tiny",
            "--libmem",
            "/nonexistent/libmem.so",
            "--json",
        ])
        .arg(&json)
        .output()
        .expect("run cachecopy");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for heading in [
        "1. Machine",
        "8f. Calls of changing size",
        "10. Where cachecopy",
    ] {
        assert!(stdout.contains(heading), "missing {heading:?} in\n{stdout}");
    }
    assert!(
        stdout.contains("LibMem: skipped (/nonexistent/libmem.so"),
        "{stdout}"
    );
    for absent in ["2. Copy bandwidth", "8. Small calls", "9. Moves"] {
        assert!(!stdout.contains(absent), "{absent:?} ran:\n{stdout}");
    }
    // The first screen covers what ran: 8f's copies, fills and moves, no frames, no tuning.
    first_screen(&stdout, &["copies", "fills", "moves"]);
    assert!(stdout.starts_with("cachecopy 0.1.0 report, "));
    assert!(stdout
        .lines()
        .next()
        .unwrap()
        .ends_with("(--tiny --only 8f)"));
    assert!(!stdout.contains("\n   frames "), "{stdout}");
    assert!(
        stdout.contains("Tuning: this run did not calibrate"),
        "{stdout}"
    );
    let cmp = bin().arg("compare").arg(&json).arg(&json).output().unwrap();
    let text = std::fs::read_to_string(&json).expect("JSON written");
    std::fs::remove_file(&json).ok();
    assert!(
        cmp.status.success(),
        "{}",
        String::from_utf8_lossy(&cmp.stdout)
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["only"][0], "8f");
    assert!(v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["section"] == "8f"));
    assert!(!v["mixes"]["rows"].as_array().unwrap().is_empty());
}

/// `engines`: one `CACHECOPY_TUNE` line per engine whose code differs, each of backends this
/// CPU runs, the rule's among them, the same whatever the environment forces.
#[test]
fn engines_lists_every_engine_to_test() {
    use cachecopy::tune::{Backend, Engine};
    let run = |args: &[&str], tune: Option<&str>| {
        let mut cmd = bin();
        cmd.args(args).env_remove("CACHECOPY_TUNE");
        if let Some(t) = tune {
            cmd.env("CACHECOPY_TUNE", t);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let list = run(&["engines"], None);
    let lines: Vec<&str> = list.lines().collect();
    let rule = Engine::rule(&cachecopy::tune::cpu()).0;
    let s = Backend::supported();
    let avx512 = usize::from(s.contains(&Backend::Avx512));
    let mixed = usize::from(s.len() >= 3);
    assert_eq!(lines.len(), s.len() + avx512 + mixed, "{list}");
    let mut seen = std::collections::HashSet::new();
    for l in &lines {
        assert!(seen.insert(*l), "{l} twice");
        let f: Vec<(&str, &str)> = l.split(',').filter_map(|f| f.split_once('=')).collect();
        assert_eq!(f.len(), 3, "{l}");
        let b = |i: usize| Backend::from_name(f[i].1).filter(|b| s.contains(b));
        assert!(f[0].0 == "temporal" && b(0).is_some(), "{l}");
        assert!(f[1].0 == "stream" && b(1).is_some(), "{l}");
        assert!(
            f[2].0 == "edges" && ["masked", "overlap"].contains(&f[2].1),
            "{l}"
        );
    }
    let rule_line = run(&["engines", "--rule"], None);
    assert!(
        lines.contains(&rule_line.trim()),
        "{rule_line} not in {list}"
    );
    assert!(rule_line.contains(&format!("temporal={},", rule.temporal)));
    for l in &lines {
        assert_eq!(run(&["engines"], Some(l)), list, "under CACHECOPY_TUNE={l}");
    }
}

#[test]
fn help_and_bad_flags() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--json FILE"));

    for args in [
        &["--bogus"][..],
        &["--iterations", "0"],
        &["frobnicate"],
        &["compare", "a.json"],
        &["--only", "2"],
    ] {
        let out = bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("cachecopy: "), "{args:?}: {err}");
        assert!(err.contains("Usage"), "{err}");
    }
    let out = bin()
        .args(["compare", "/nonexistent/a.json", "/nonexistent/b.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/a.json"));
}
