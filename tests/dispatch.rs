//! Dispatch under races and environment overrides. Each case runs in a fresh process (this test
//! binary re-executed with one ignored test selected), since detection happens once per process.

use std::sync::{Arc, Barrier};

use cachecopy::{Backend, Edges, Engine, Mode};

mod common;
use common::all_bytes;

/// Runs the ignored test `name` of this binary in a child with `env` set; returns its stderr.
fn child(name: &str, env: &[(&str, &str)]) -> String {
    let out = common::run_target_binary(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            name,
            "--nocapture",
            "--test-threads=1",
        ])
        .env_remove("CACHECOPY_BACKEND")
        .env_remove("CACHECOPY_ENGINE")
        .env_remove("CACHECOPY_TUNE")
        .env_remove("CACHECOPY_NT_THRESHOLD")
        .env_remove("CACHECOPY_FILL_REP_THRESHOLD")
        .env_remove("CACHECOPY_REP_MOVSB_THRESHOLD")
        .env_remove("CACHECOPY_FILL_NT_THRESHOLD")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "child {name} failed:\n{}\n{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    err
}

/// Runs the child `name` with the threshold variable `var` set to 4096, then to `bad`; `expect`
/// tells the child what to find: 4096, then the built-in `default` (`bad` ignored, with one line
/// on stderr).
fn good_then_bad(name: &str, (var, expect): (&str, &str), bad: &str, default: usize) {
    child(name, &[(var, "4096"), (expect, "4096")]);
    let err = child(name, &[(var, bad), (expect, &default.to_string())]);
    let warning = format!("cachecopy: ignoring {var}");
    assert_eq!(err.matches(&warning).count(), 1, "{err}");
}

#[test]
#[ignore = "run in a child by threads_race_the_first_call"]
fn child_threads_race() {
    race_the_first_call();
}

/// Threads racing the first call of the process: all of them see one engine, the rule's.
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
                cachecopy::engine()
            })
        })
        .collect();
    let picked: Vec<Engine> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(picked.iter().all(|&e| e == picked[0]), "{picked:?}");
    assert_eq!(picked[0], Engine::rule(&cachecopy::cpu()).0);
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

#[test]
#[ignore = "run in a child"]
fn child_expect_backend() {
    let want = std::env::var("EXPECT_BACKEND").unwrap();
    assert_eq!(Backend::active().name(), want);
    let src = vec![5u8; 3000];
    let mut dst = vec![0u8; 3000];
    cachecopy::copy(&mut dst, &src, Mode::NonTemporal);
    assert_eq!(dst, src);
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_forces_each_supported_backend() {
    for &b in Backend::supported() {
        let err = child(
            "child_expect_backend",
            &[
                ("CACHECOPY_BACKEND", b.name()),
                ("EXPECT_BACKEND", b.name()),
            ],
        );
        assert!(!err.contains("ignoring"), "{err}");
    }
}

#[test]
#[ignore = "run in a child"]
fn child_expect_engine() {
    let want = std::env::var("EXPECT_ENGINE").unwrap();
    assert_eq!(cachecopy::engine().to_string(), want);
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
}

/// `CACHECOPY_ENGINE` sets the engine field by field, over the rule and over
/// `CACHECOPY_BACKEND`; a bad field is reported once and the others are kept.
#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_sets_the_engine_field_by_field() {
    let rule = Engine::rule(&cachecopy::cpu()).0;
    let widest = *Backend::supported().last().unwrap();
    // (variables, the engine expected, whether one warning is expected)
    type Case = (Vec<(&'static str, String)>, Engine, bool);
    let mut cases: Vec<Case> = vec![
        (
            vec![("CACHECOPY_ENGINE", "body=generic".into())],
            Engine::new(Backend::Generic, Backend::Generic, rule.edges),
            false,
        ),
        (
            vec![(
                "CACHECOPY_ENGINE",
                format!("temporal=generic, stream={widest}"),
            )],
            Engine::new(Backend::Generic, widest, rule.edges),
            false,
        ),
        (
            vec![
                ("CACHECOPY_BACKEND", "generic".into()),
                ("CACHECOPY_ENGINE", format!("stream={widest}")),
            ],
            Engine::new(Backend::Generic, widest, rule.edges),
            false,
        ),
        (
            vec![("CACHECOPY_ENGINE", "stream=sse9,temporal=generic,,".into())],
            Engine::new(Backend::Generic, rule.stream, rule.edges),
            true,
        ),
        (vec![("CACHECOPY_ENGINE", "speed=max".into())], rule, true),
    ];
    if widest == Backend::Avx512 {
        for edges in [Edges::Masked, Edges::Overlap] {
            cases.push((
                vec![("CACHECOPY_ENGINE", format!("body=avx512,edges={edges}"))],
                Engine::new(Backend::Avx512, Backend::Avx512, edges),
                false,
            ));
        }
    }
    for (env, want, warns) in cases {
        let mut vars: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let want_s = want.to_string();
        vars.push(("EXPECT_ENGINE", &want_s));
        let err = child("child_expect_engine", &vars);
        assert_eq!(
            err.matches("cachecopy: ignoring CACHECOPY_ENGINE").count(),
            usize::from(warns),
            "{env:?}: {err}"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_refuses_unknown_and_unsupported_backends_once() {
    let best = Engine::rule(&cachecopy::cpu()).0.stream.name();
    let mut refused = vec!["sse9".to_string()];
    for b in [Backend::Avx512, Backend::Neon, Backend::Avx2] {
        if !Backend::supported().contains(&b) {
            refused.push(b.name().to_string());
        }
    }
    for name in refused {
        let err = child(
            "child_expect_backend",
            &[("CACHECOPY_BACKEND", &name), ("EXPECT_BACKEND", best)],
        );
        assert_eq!(
            err.matches("cachecopy: ignoring CACHECOPY_BACKEND").count(),
            1,
            "{err}"
        );
        assert!(err.contains(best), "{err}");
    }
}

#[test]
#[ignore = "run in a child"]
fn child_expect_threshold() {
    let want: usize = std::env::var("EXPECT_THRESHOLD").unwrap().parse().unwrap();
    assert_eq!(cachecopy::nt_threshold(), want);
    let fill: usize = std::env::var("EXPECT_FILL_THRESHOLD").map_or(want, |v| v.parse().unwrap());
    assert_eq!(cachecopy::fill_nt_threshold(), fill);
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_sets_the_threshold() {
    child(
        "child_expect_threshold",
        &[
            ("CACHECOPY_NT_THRESHOLD", "12345"),
            ("EXPECT_THRESHOLD", "12345"),
        ],
    );
    // The fill threshold alone; and both, the fill one winning for fills.
    let copy = cachecopy::default_nt_threshold(&cachecopy::cpu()).to_string();
    child(
        "child_expect_threshold",
        &[
            ("CACHECOPY_FILL_NT_THRESHOLD", "777"),
            ("EXPECT_THRESHOLD", &copy),
            ("EXPECT_FILL_THRESHOLD", "777"),
        ],
    );
    child(
        "child_expect_threshold",
        &[
            ("CACHECOPY_NT_THRESHOLD", "12345"),
            ("CACHECOPY_FILL_NT_THRESHOLD", "777"),
            ("EXPECT_THRESHOLD", "12345"),
            ("EXPECT_FILL_THRESHOLD", "777"),
        ],
    );
}

#[test]
#[ignore = "run in a child"]
fn child_expect_fill_rep() {
    let want: usize = std::env::var("EXPECT_FILL_REP").unwrap().parse().unwrap();
    assert_eq!(cachecopy::fill_rep_threshold(), want);
    // Whatever the threshold, fills stay exact (through `rep stosb` from 4 KiB here on x86_64).
    let mut v = vec![1u8; 70_000];
    cachecopy::fill(&mut v[5..], 0x42, cachecopy::Mode::Temporal);
    assert_eq!(v[..5], [1; 5]);
    assert!(all_bytes(&v[5..], 0x42));
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_sets_the_fill_rep_threshold() {
    good_then_bad(
        "child_expect_fill_rep",
        ("CACHECOPY_FILL_REP_THRESHOLD", "EXPECT_FILL_REP"),
        "lots",
        cachecopy::fill_rep_threshold(),
    );
}

#[test]
#[ignore = "run in a child by env_sets_the_rep_movsb_threshold"]
fn child_expect_rep_movsb() {
    let want: usize = std::env::var("EXPECT_REP_MOVSB").unwrap().parse().unwrap();
    assert_eq!(cachecopy::rep_movsb_threshold(), want);
    // Whatever the threshold, copies stay exact (through `rep movsb` from 4 KiB on x86_64).
    let src: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let mut v = vec![1u8; 70_005];
    cachecopy::copy(&mut v[5..], &src, cachecopy::Mode::Temporal);
    assert_eq!(v[..5], [1; 5]);
    assert_eq!(v[5..], src[..]);
}

#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_sets_the_rep_movsb_threshold() {
    good_then_bad(
        "child_expect_rep_movsb",
        ("CACHECOPY_REP_MOVSB_THRESHOLD", "EXPECT_REP_MOVSB"),
        "many",
        cachecopy::rep_movsb_threshold(),
    );
}

#[test]
#[ignore = "run in a child by env_calibrate_measures_on_first_use"]
fn child_calibrated() {
    let defaults = (
        cachecopy::default_nt_threshold(&cachecopy::cpu()),
        usize::MAX, // the fill default is checked below through the copy rule
    );
    let src = vec![3u8; 1 << 16];
    let mut dst = vec![0u8; 1 << 16];
    cachecopy::copy(&mut dst, &src, cachecopy::Mode::Auto);
    assert_eq!(dst, src);
    let sizes: Vec<usize> = (18..=24).map(|s| 1usize << s).collect();
    let t = cachecopy::nt_threshold();
    assert!(
        sizes.contains(&t) || t == defaults.0,
        "copy threshold {t}: neither a calibrated size nor the default"
    );
    let f = cachecopy::fill_nt_threshold();
    assert!(f >= 1 << 18, "fill threshold {f}");
}

#[cfg(unix)]
#[test]
#[cfg_attr(miri, ignore = "starts processes")]
fn env_calibrate_measures_on_first_use() {
    if common::emulated() {
        return; // timing under an emulator says nothing; the native run covers it
    }
    let err = child(
        "child_calibrated",
        &[("CACHECOPY_NT_THRESHOLD", "calibrate")],
    );
    assert!(
        !err.contains("ignoring"),
        "calibrate is a valid value: {err}"
    );
}
