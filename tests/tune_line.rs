//! `CACHECOPY_TUNE`: the line a [`cachecopy::calibrate::Calibration`] writes (the one `cargo run
//! --release` ends with) sets, in a fresh process, the same thresholds through the public
//! getters; fields parse with their suffixes and `never`; a bad field is reported once and
//! ignored while the others are kept; an individual variable wins over its field. Each case runs
//! in a child (this binary re-executed with one ignored test selected), since the environment is
//! read once per process, at detection.

mod common;

/// The variables cleared in every child before its own are set.
const VARS: [&str; 7] = [
    "CACHECOPY_TUNE",
    "CACHECOPY_ENGINE",
    "CACHECOPY_NT_THRESHOLD",
    "CACHECOPY_FILL_NT_THRESHOLD",
    "CACHECOPY_REP_MOVSB_THRESHOLD",
    "CACHECOPY_FILL_REP_THRESHOLD",
    "CACHECOPY_BACKEND",
];

/// The four thresholds, in the line's field order.
type Thresholds = [usize; 4];

fn getters() -> Thresholds {
    [
        cachecopy::nt_threshold(),
        cachecopy::fill_nt_threshold(),
        cachecopy::rep_movsb_threshold(),
        cachecopy::fill_rep_threshold(),
    ]
}

/// The built-in thresholds, as a fresh process reads them. Not this process's getters: another
/// test here may be calibrating, and a calibration sets the `rep` thresholds for the length of
/// its sweep.
fn builtin() -> Thresholds {
    child(&[]).0
}

/// Runs the child with `env`; returns the thresholds it read and its stderr.
fn child(env: &[(&str, &str)]) -> (Thresholds, String) {
    let (t, _, err) = child_engine(env);
    (t, err)
}

/// Runs the child with `env` (and no other `CACHECOPY_*` variable); returns its stdout and
/// stderr.
fn run_child(env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = common::run_target_binary(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "child_prints_thresholds",
        "--nocapture",
        "--test-threads=1",
    ]);
    for k in VARS {
        cmd.env_remove(k);
    }
    let out = cmd.envs(env.iter().copied()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child failed:\n{stdout}\n{err}");
    (stdout, err)
}

/// As [`child`], with the engine the child ran (`cachecopy::engine()`, as it prints).
fn child_engine(env: &[(&str, &str)]) -> (Thresholds, String, String) {
    let (stdout, err) = run_child(env);
    let line = stdout
        .lines()
        .find_map(|l| l.rsplit_once("thresholds: ").map(|(_, v)| v))
        .unwrap_or_else(|| panic!("no thresholds line:\n{stdout}\n{err}"));
    let v: Vec<usize> = line
        .split_whitespace()
        .take(4)
        .map(|n| n.parse().unwrap())
        .collect();
    let engine = stdout
        .lines()
        .find_map(|l| l.rsplit_once("engine: ").map(|(_, v)| v.to_string()))
        .unwrap_or_else(|| panic!("no engine line:\n{stdout}\n{err}"));
    (v.try_into().unwrap(), engine, err)
}

#[test]
#[ignore = "run in a child by the tests below"]
fn child_prints_thresholds() {
    let t = getters();
    println!("thresholds: {} {} {} {}", t[0], t[1], t[2], t[3]);
    println!("engine: {}", cachecopy::engine());
    println!("tuning: {}", cachecopy::tuning());
}

const M: usize = 1 << 20;
const K: usize = 1 << 10;

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn the_calibrations_line_reads_back_as_the_same_thresholds() {
    // What this process would keep: the calibration applied over the built-in rules.
    let c = cachecopy::calibrate();
    let builtin = builtin();
    let line = c.to_string();
    let value = line
        .strip_prefix("CACHECOPY_TUNE=")
        .expect("the line's variable");
    let want: Vec<usize> = [c.copy, c.fill, c.rep_movsb, c.fill_rep]
        .iter()
        .zip(builtin)
        .map(|(v, b)| v.unwrap_or(b))
        .collect();
    let (got, engine, err) = child_engine(&[("CACHECOPY_TUNE", value)]);
    assert_eq!(got.to_vec(), want, "{line}");
    let want_engine = c
        .engine
        .unwrap_or(cachecopy::Engine::rule(&cachecopy::cpu()).0);
    assert_eq!(engine, want_engine.to_string(), "{line}");
    assert!(!err.contains("cachecopy: ignoring"), "{line}: {err}");
    // A decided engine round-trips too (the calibration above may have left it undecided).
    let e = cachecopy::Engine::supported()[cachecopy::Engine::supported().len() / 2];
    let with_engine = format!(
        "{value}{}temporal={},stream={},edges={}",
        if value.is_empty() { "" } else { "," },
        e.temporal,
        e.stream,
        e.edges
    );
    let (got, engine, err) = child_engine(&[("CACHECOPY_TUNE", &with_engine)]);
    assert_eq!(got.to_vec(), want, "{with_engine}");
    assert_eq!(engine, e.to_string(), "{with_engine}");
    assert!(!err.contains("cachecopy: ignoring"), "{with_engine}: {err}");
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn engine_fields_in_the_line_and_who_wins() {
    let builtin = builtin();
    let rule = cachecopy::Engine::rule(&cachecopy::cpu()).0;
    let generic = |stream: cachecopy::Backend| {
        cachecopy::Engine::new(cachecopy::Backend::Generic, stream, rule.edges).to_string()
    };
    let (got, engine, err) = child_engine(&[("CACHECOPY_TUNE", "nt=4M,body=generic")]);
    assert_eq!(got, [4 * M, builtin[1], builtin[2], builtin[3]]);
    assert_eq!(engine, generic(cachecopy::Backend::Generic));
    assert_eq!(err, "");
    // `CACHECOPY_ENGINE` (and `CACHECOPY_BACKEND`) win over the line's engine fields.
    let (_, engine, _) = child_engine(&[
        ("CACHECOPY_TUNE", "body=generic"),
        ("CACHECOPY_ENGINE", &format!("stream={}", rule.stream)),
    ]);
    assert_eq!(engine, generic(rule.stream));
    // A bad engine field: one warning, the other fields kept.
    let (got, engine, err) =
        child_engine(&[("CACHECOPY_TUNE", "nt=4M,stream=sse9,temporal=generic")]);
    assert_eq!(got[0], 4 * M);
    assert_eq!(engine, generic(rule.stream));
    assert_eq!(
        err.matches("cachecopy: ignoring CACHECOPY_TUNE field")
            .count(),
        1,
        "{err}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn every_field_with_its_suffix_and_never() {
    let (got, err) = child(&[(
        "CACHECOPY_TUNE",
        "nt=16M,fill_nt=16m, rep_movsb = never ,fill_rep=2K",
    )]);
    assert_eq!(got, [16 * M, 16 * M, usize::MAX, 2 * K]);
    assert_eq!(err, "");
    let (got, _) = child(&[("CACHECOPY_TUNE", "nt=1G,fill_nt=3000,,fill_rep=0")]);
    let builtin = builtin();
    assert_eq!(got, [1 << 30, 3000, builtin[2], 0]);
    // A later field overrides an earlier one.
    let (got, _) = child(&[("CACHECOPY_TUNE", "nt=1M,nt=2M")]);
    assert_eq!(got[0], 2 * M);
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn a_bad_field_is_reported_once_and_the_others_kept() {
    let builtin = builtin();
    for (line, want) in [
        (
            "nt=4M,bogus=1,fill_rep=8K",
            [4 * M, builtin[1], builtin[2], 8 * K],
        ),
        (
            "nt=4X,fill_nt=2M",
            [builtin[0], 2 * M, builtin[2], builtin[3]],
        ),
        (
            "nt,fill_nt=2M,rep_movsb=",
            [builtin[0], 2 * M, builtin[2], builtin[3]],
        ),
        (
            "nt=99999999999999999999G,fill_rep=1K",
            [builtin[0], builtin[1], builtin[2], K],
        ),
    ] {
        let (got, err) = child(&[("CACHECOPY_TUNE", line)]);
        assert_eq!(got, want, "{line}");
        assert_eq!(
            err.matches("cachecopy: ignoring CACHECOPY_TUNE field")
                .count(),
            1,
            "{line}: {err}"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn an_individual_variable_wins_over_its_field() {
    let tune = (
        "CACHECOPY_TUNE",
        "nt=16M,fill_nt=8M,rep_movsb=never,fill_rep=2K",
    );
    let (got, _) = child(&[
        tune,
        ("CACHECOPY_NT_THRESHOLD", "12345"),
        ("CACHECOPY_FILL_REP_THRESHOLD", "4096"),
    ]);
    // `CACHECOPY_NT_THRESHOLD` sets copies; for fills it yields to the `fill_nt` field.
    assert_eq!(got, [12345, 8 * M, usize::MAX, 4096]);
    let (got, _) = child(&[tune, ("CACHECOPY_FILL_NT_THRESHOLD", "1000")]);
    assert_eq!(got, [16 * M, 1000, usize::MAX, 2 * K]);
    // Without a `fill_nt` field, `CACHECOPY_NT_THRESHOLD` still sets fills too.
    let (got, _) = child(&[
        ("CACHECOPY_TUNE", "rep_movsb=4K"),
        ("CACHECOPY_NT_THRESHOLD", "777"),
    ]);
    assert_eq!(got[..3], [777, 777, 4 * K]);
}

/// The record's line in a child run with `env`, and its stderr.
fn child_tuning(env: &[(&str, &str)]) -> (String, String) {
    let (stdout, err) = run_child(env);
    let line = stdout
        .lines()
        .find_map(|l| l.rsplit_once("tuning: ").map(|(_, v)| v.to_string()))
        .unwrap_or_else(|| panic!("no tuning line:\n{stdout}"));
    (line, err)
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn the_records_line_sets_every_choice_again() {
    // The built-in record, printed whole, reads back as itself with no warning.
    let (builtin, _) = child_tuning(&[]);
    assert!(builtin.starts_with("nt="), "{builtin}");
    let (again, err) = child_tuning(&[("CACHECOPY_TUNE", &builtin)]);
    assert_eq!(again, builtin);
    assert_eq!(err, "");
    // Every field is set by the line; the flush instruction too ("fence only" runs anywhere),
    // and the small calls' classes (`plain` runs anywhere).
    // `wide_copy=never` runs anywhere too.
    let line = format!(
        "{builtin},nt=4M,fill_rep=never,flush=fence only,small=plain,pages=2,wide_copy=never"
    );
    let (got, err) = child_tuning(&[("CACHECOPY_TUNE", &line)]);
    assert!(got.starts_with("nt=4M,"), "{got}");
    assert!(
        got.contains(",fill_rep=never,")
            && got.ends_with(",flush=fence only,small=plain,pages=2,wide_copy=never"),
        "{got}"
    );
    assert_eq!(err, "");
    // The value of a field of the built-in line.
    let rule = |name: &str| {
        let at = builtin
            .split(',')
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='));
        at.unwrap_or_else(|| panic!("no {name} field: {builtin}"))
            .to_string()
    };
    // Pages: 1, 2, 4 or 8; anything else is refused and the rule's count stays.
    let rule_pages = rule("pages");
    for bad in ["3", "0", "16", "4K"] {
        let (got, err) = child_tuning(&[("CACHECOPY_TUNE", &format!("pages={bad}"))]);
        assert!(got.contains(&format!(",pages={rule_pages},")), "{got}");
        assert!(
            err.contains(&format!("pages={bad}")) && err.contains("1, 2, 4 or 8"),
            "{err}"
        );
    }
    // The masked classes only where the CPU runs them; elsewhere the field is refused.
    let masks = common::runs_masked_small();
    let (got, err) = child_tuning(&[("CACHECOPY_TUNE", "small=masked-fills")]);
    if masks {
        assert!(got.contains(",small=masked-fills,"), "{got}");
        assert_eq!(err, "");
    } else {
        assert!(got.contains(",small=plain,"), "{got}");
        assert!(err.contains("small=masked-fills"), "{err}");
    }
    // Copies never take masks: a value that asked for them is refused on every CPU, and the
    // rule's own choice stays.
    let (got, err) = child_tuning(&[("CACHECOPY_TUNE", "small=masked")]);
    assert!(!got.contains(",small=masked,"), "{got}");
    assert!(err.contains("small=masked"), "{err}");
    // Large copies on AVX-512 registers: a size only where the CPU runs AVX-512; elsewhere the
    // field is refused and the rule's value (never) stays.
    let avx512 = cachecopy::Backend::supported().contains(&cachecopy::Backend::Avx512);
    let (got, err) = child_tuning(&[("CACHECOPY_TUNE", "wide_copy=64K")]);
    if avx512 {
        assert!(got.ends_with(",wide_copy=64K"), "{got}");
        assert_eq!(err, "");
    } else {
        assert!(
            got.ends_with(&format!(",wide_copy={}", rule("wide_copy"))),
            "{got}"
        );
        assert!(
            err.contains("wide_copy=64K") && err.contains("does not run AVX-512"),
            "{err}"
        );
    }
}
