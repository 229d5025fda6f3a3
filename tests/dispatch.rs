//! Detection and the crate's one door, `CACHECOPY_TUNE`: threads racing the first call of a
//! process all run one plan; the line's fields build the process's plan (the engine, every
//! threshold and variant), a bad field is reported once on stderr while the others are kept,
//! the record's own line builds the same plan again in another process, a bare `calibrate`
//! measures at first use, and no other variable is read. Each case runs in a fresh process (this
//! test binary re-executed with one ignored test selected), since the environment is read once
//! per process, at detection. What each field does to the copies is tests/plan.rs's, which
//! builds plans without the environment.

use std::sync::{Arc, Barrier};

use cachecopy::tune::{Backend, Edges, Engine, Plan, Tuning};
use cachecopy::Mode;

mod common;
use common::all_bytes;

/// Runs the ignored test `name` of this binary in a child with `env` set (and no other
/// `CACHECOPY_*` variable); returns its stdout and stderr.
fn child(name: &str, env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = common::run_target_binary(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        name,
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("CACHECOPY_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd.envs(env.iter().copied()).output().unwrap();
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "child {name} failed:\n{stdout}\n{err}"
    );
    (stdout, err)
}

/// The child's plan: its record's line, printed by [`child_prints_its_plan`], and its stderr.
fn plan_of(env: &[(&str, &str)]) -> (Tuning, String) {
    let (stdout, err) = child("child_prints_its_plan", env);
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("plan: ").map(|(_, v)| v))
        .unwrap_or_else(|| panic!("no plan line:\n{stdout}"));
    let t = Plan::rule().tuning().with_line(line).unwrap();
    (t, err)
}

/// The warning lines a child printed.
fn warnings(err: &str) -> usize {
    err.matches("cachecopy: ignoring CACHECOPY_TUNE").count()
}

#[test]
#[ignore = "run in a child"]
fn child_prints_its_plan() {
    // Copies and fills through the published plan stay exact whatever it holds.
    for len in [0, 22, 42, 1472, 3000, 70_000] {
        let src: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
        for mode in Mode::ALL {
            let mut dst = vec![0u8; len + 42];
            cachecopy::copy(&mut dst[42..], &src, mode);
            assert_eq!(dst[42..], src[..]);
            cachecopy::fill(&mut dst[..len], 0x77, mode);
            assert!(all_bytes(&dst[..len], 0x77));
        }
    }
    println!("plan: {}", Plan::current().tuning());
}

#[test]
#[ignore = "run in a child by threads_race_the_first_call"]
fn child_threads_race() {
    race_the_first_call();
}

/// Threads racing the first call of the process: every copy is exact (a thread that loses the
/// race while the winner still builds runs the stand-in plan for that call), and once every
/// racer's first call has returned, all of them see one plan, the rule's.
fn race_the_first_call() {
    let (n, len) = if common::miri() {
        (4, 2000)
    } else {
        (8, 100_000)
    };
    let barrier = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let src = common::periodic(len, 256, |j| (i * 31 + j) as u8);
                let mut dst = vec![0u8; src.len()];
                barrier.wait();
                cachecopy::copy(&mut dst, &src, Mode::ALL[i % 4]);
                assert_eq!(dst, src);
                // The winner's first call returns only once its plan is published.
                barrier.wait();
                *Plan::current().tuning()
            })
        })
        .collect();
    let picked: Vec<Tuning> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(picked.iter().all(|t| *t == picked[0]), "{picked:?}");
    assert_eq!(&picked[0], Plan::rule().tuning());
}

/// In a child, so the race is the process's first call. Under Miri, which cannot start
/// processes, in this process: every other test here starts processes and is ignored there, so
/// this one still makes the first call, and Miri checks the race for data races too.
#[test]
fn threads_race_the_first_call() {
    if common::miri() {
        race_the_first_call();
    } else {
        child("child_threads_race", &[]);
    }
}

/// The engine fields: every engine this CPU runs, by `body`, by `temporal` and `stream`, with
/// either edge store; a backend it does not run, or no backend at all, is refused with one line
/// and the rule's choice stays.
#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn the_line_sets_the_engine_field_by_field() {
    let rule = *Plan::rule().tuning();
    let widest = *Backend::supported().last().unwrap();
    let mut cases: Vec<(String, Engine, bool)> = vec![
        (
            "body=generic".into(),
            Engine::new(Backend::Generic, Backend::Generic, rule.engine.edges),
            false,
        ),
        (
            format!("temporal=generic, stream={widest}"),
            Engine::new(Backend::Generic, widest, rule.engine.edges),
            false,
        ),
        (
            "stream=sse9,temporal=generic,,".into(),
            Engine::new(Backend::Generic, rule.engine.stream, rule.engine.edges),
            true,
        ),
        ("speed=max".into(), rule.engine, true),
    ];
    for &b in Backend::supported() {
        cases.push((
            format!("body={b}"),
            Engine::new(b, b, rule.engine.edges),
            false,
        ));
    }
    for b in common::ALL_BACKENDS {
        if !Backend::supported().contains(&b) {
            cases.push((format!("body={b}"), rule.engine, true));
        }
    }
    if widest == Backend::Avx512 {
        for edges in [Edges::Masked, Edges::Overlap] {
            cases.push((
                format!("body=avx512,edges={edges}"),
                Engine::new(Backend::Avx512, Backend::Avx512, edges),
                false,
            ));
        }
    }
    for (line, want, warns) in cases {
        let (t, err) = plan_of(&[("CACHECOPY_TUNE", &line)]);
        assert_eq!(t.engine, want, "{line}: {err}");
        assert_eq!(warnings(&err), usize::from(warns), "{line}: {err}");
    }
}

/// The size fields, with their suffixes and `never`; a bad field is reported once (the first)
/// and ignored, the others kept.
#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn the_line_sets_every_threshold_and_reports_a_bad_field_once() {
    let rule = *Plan::rule().tuning();
    let (t, err) = plan_of(&[(
        "CACHECOPY_TUNE",
        "nt=12345,fill_nt=777,fill_rep=4K,rep_movsb=2M",
    )]);
    assert_eq!(
        (t.nt, t.fill_nt, t.fill_rep, t.rep_movsb),
        (12345, 777, 4096, 2 << 20)
    );
    assert_eq!(err, "");
    let (t, err) = plan_of(&[("CACHECOPY_TUNE", "nt=lots, fill_nt=never,rep_movsb=many")]);
    assert_eq!(
        (t.nt, t.fill_nt, t.rep_movsb),
        (rule.nt, usize::MAX, rule.rep_movsb)
    );
    assert_eq!(warnings(&err), 1, "{err}");
    assert!(
        err.contains("\"nt=lots\""),
        "the first bad field is named: {err}"
    );
}

/// The record's line, printed whole by one process, builds the same plan in another with no
/// warning; every field is set by it.
#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn the_records_line_sets_every_choice_again() {
    let (builtin, err) = plan_of(&[]);
    assert_eq!(&builtin, Plan::rule().tuning(), "{err}");
    let line = builtin.to_string();
    let (again, err) = plan_of(&[("CACHECOPY_TUNE", &line)]);
    assert_eq!(again, builtin);
    assert_eq!(err, "");
    // Fields every CPU runs.
    let line = format!("{line},nt=4M,fill_rep=never,flush=fence only,small=plain,pages=2");
    let (got, err) = plan_of(&[("CACHECOPY_TUNE", &line)]);
    assert_eq!(
        got,
        builtin
            .with_line("nt=4M,fill_rep=never,flush=fence only,pages=2")
            .unwrap()
    );
    assert_eq!(err, "");
}

/// `calibrate` measures at first use and builds the plan from what it decided.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "starts processes")]
fn a_calibration_at_first_use() {
    if common::emulated() {
        return; // timing under an emulator says nothing; the native run covers it
    }
    let (t, err) = plan_of(&[("CACHECOPY_TUNE", "calibrate")]);
    assert_eq!(warnings(&err), 0, "calibrate is a valid field: {err}");
    let rule = *Plan::rule().tuning();
    let sizes: Vec<usize> = (18..=24).map(|s| 1usize << s).collect();
    assert!(
        sizes.contains(&t.nt) || t.nt == rule.nt,
        "copy threshold {}: neither a calibrated size nor the rule's",
        t.nt
    );
    assert!(t.fill_nt >= 1 << 18, "fill threshold {}", t.fill_nt);
}

/// The crate reads `CACHECOPY_TUNE` and nothing else: the variables of earlier versions change
/// nothing and are not reported.
#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn no_other_variable_is_read() {
    let (t, err) = plan_of(&[
        ("CACHECOPY_NT_THRESHOLD", "12345"),
        ("CACHECOPY_FILL_NT_THRESHOLD", "777"),
        ("CACHECOPY_REP_MOVSB_THRESHOLD", "0"),
        ("CACHECOPY_FILL_REP_THRESHOLD", "0"),
        ("CACHECOPY_BACKEND", "generic"),
        ("CACHECOPY_ENGINE", "body=generic"),
    ]);
    assert_eq!(&t, Plan::rule().tuning());
    assert_eq!(err, "");
}
