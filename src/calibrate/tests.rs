//! The calibration's decisions on made-up rounds, its line, and one real run within budget.

use core::time::Duration;

use super::frames::{decided_engine, engine_check, ENGINE_BUDGET};
use super::result::{Calibration, Outcome, Point, Sweep};
use super::stats::{decide, record, side, Side, Step, MAX_ROUNDS};
use super::sweep::{hot_round, hot_runs, nt_sizes, HOT_SAMPLE};
use super::*;
use crate::backend::NAMES;
use crate::cpu::engine::{Backend, Edges, Engine};
use crate::cpu::tune;
use crate::dispatch::tuning;
use crate::thresholds::{fill_rep_threshold, rep_movsb_threshold};
use std::vec::Vec;

/// Points with these sizes (1, 2, 4, ...) and (rounds, wins, median) each.
fn pts(v: &[(u32, u32, f64)]) -> Vec<Point> {
    v.iter()
        .enumerate()
        .map(|(i, &(rounds, wins, ratio))| Point {
            size: 1 << i,
            ratio,
            rounds,
            wins,
        })
        .collect()
}

#[test]
fn a_sign_test_settles_each_size() {
    let p = |rounds, wins, ratio| Point {
        size: 1,
        ratio,
        rounds,
        wins,
    };
    use Side::*;
    // (rounds, wins, median, side); the last row: near parity two agreeing rounds are not
    // enough, four are.
    #[rustfmt::skip]
    let table = [
        (1, 1, 1.5, Open), (2, 2, 1.5, Win), (2, 0, 0.5, Lose), (3, 2, 1.1, Open),
        (5, 4, 1.1, Win), (5, 3, 1.01, Tie), (5, 3, 1.2, Open), (9, 5, 1.2, Tie),
        (2, 2, 1.05, Open), (2, 0, 0.95, Open), (4, 4, 1.05, Win), (4, 0, 0.95, Lose),
    ];
    for (rounds, wins, ratio, want) in table {
        assert_eq!(
            side(&p(rounds, wins, ratio)),
            want,
            "{rounds} {wins} {ratio}"
        );
    }
}

#[test]
fn rounds_go_where_the_answer_is_open() {
    use Step::*;
    let n = f64::NAN;
    // Sizes are measured upwards, one round each, until two hold.
    assert_eq!(decide(&pts(&[(0, 0, n), (0, 0, n)]), None), Measure(0));
    let t = pts(&[(1, 0, 0.5), (0, 0, n), (0, 0, n)]);
    assert_eq!(decide(&t, None), Measure(1));
    // Loses below 4, wins from there: settle 4, then 8, then 2; 1 and 16 need nothing more.
    let mut t = pts(&[
        (1, 0, 0.5),
        (1, 0, 0.7),
        (1, 1, 1.3),
        (1, 1, 1.4),
        (0, 0, n),
    ]);
    assert_eq!(decide(&t, None), Measure(2));
    t[2] = pts(&[(2, 2, 1.3)])[0];
    t[2].size = 4;
    assert_eq!(decide(&t, None), Measure(3));
    t[3] = Point {
        size: 8,
        ..pts(&[(2, 2, 1.4)])[0]
    };
    assert_eq!(decide(&t, None), Measure(1));
    t[1] = Point {
        size: 2,
        ..pts(&[(2, 0, 0.7)])[0]
    };
    assert_eq!(decide(&t, None), Done(Some(4), Outcome::Decided));
    // A tie below the first win does not lower the answer (streaming is no slower there, but
    // which way a near-tie reads changes from run to run; the first win does not).
    let t = pts(&[(2, 0, 0.5), (9, 5, 1.01), (2, 2, 1.3), (2, 2, 1.4)]);
    assert_eq!(decide(&t, None), Done(Some(4), Outcome::Decided));
    // A tie between wins stays in the tail.
    let t = pts(&[(2, 0, 0.5), (2, 2, 1.3), (9, 5, 1.01), (2, 2, 1.4)]);
    assert_eq!(decide(&t, None), Done(Some(2), Outcome::Decided));
    // Winning from the smallest size: that size.
    let t = pts(&[(2, 2, 1.4), (2, 2, 1.2), (1, 1, 1.6)]);
    assert_eq!(decide(&t, None), Done(Some(1), Outcome::Decided));
    // One preempted round is outvoted: 4-1 settles.
    let t = pts(&[(2, 0, 0.5), (5, 4, 1.2), (2, 2, 1.4)]);
    assert_eq!(decide(&t, None), Done(Some(2), Outcome::Decided));
}

#[test]
fn the_built_in_rule_stays_when_nothing_is_settled() {
    use Step::*;
    // Loses at the largest size: never wins (the string sweeps decide never).
    let t = pts(&[(1, 0, 0.5), (2, 0, 0.7)]);
    assert_eq!(decide(&t, None), Done(None, Outcome::NeverWins));
    assert_eq!(
        decide(&t, Some(usize::MAX)),
        Done(Some(usize::MAX), Outcome::NeverWins)
    );
    // Only the largest size wins: no second size backs it.
    let t = pts(&[(1, 0, 0.5), (2, 0, 0.7), (2, 2, 1.2)]);
    assert_eq!(decide(&t, None), Done(None, Outcome::Noisy));
    // Ties and no win: nothing shows streaming ahead.
    let t = pts(&[(2, 0, 0.5), (9, 5, 1.01), (9, 4, 0.99)]);
    assert_eq!(decide(&t, None), Done(None, Outcome::Noisy));
    // An open largest size that looks lost gets rounds before anything is concluded.
    let t = pts(&[(1, 0, 0.5), (1, 0, 0.9)]);
    assert_eq!(decide(&t, None), Measure(1));
}

#[test]
fn medians_follow_the_rounds() {
    let mut p = Point {
        size: 1,
        ratio: f64::NAN,
        rounds: 0,
        wins: 0,
    };
    let mut all = [f64::NAN; MAX_ROUNDS as usize];
    for r in [1.5, 0.5, 1.2] {
        record(&mut p, &mut all, r);
    }
    assert_eq!((p.rounds, p.wins, p.ratio), (3, 2, 1.2));
    record(&mut p, &mut all, 2.0);
    assert_eq!(p.ratio, 1.35);
}

#[test]
#[cfg_attr(miri, ignore = "getrusage (the preemption count)")]
fn a_hot_round_times_a_steady_sample_of_each_op() {
    // Every NT size gets at least HOT_SAMPLE bytes per timed sample, and no more runs than that
    // takes (a run of the largest size is its own sample).
    for size in [1, 64, 512 << 10, 3 << 20, 8 << 20, 9 << 20, 32 << 20] {
        let runs = hot_runs(size);
        assert!(runs >= 1 && runs * size >= HOT_SAMPLE, "{size}: {runs}");
        assert!((runs - 1) * size < HOT_SAMPLE, "{size}: {runs}");
    }
    // One untimed run and the timed sample per op, the order flipping every round.
    for round in 0..2 {
        let calls = core::cell::RefCell::new(Vec::new());
        let op = |nt: bool, size: usize| calls.borrow_mut().push((nt, size));
        let (ratio, _) = hot_round(&op, 4 << 20, round, false).expect("not strict");
        assert!(ratio > 0.0);
        let calls = calls.into_inner();
        let runs = hot_runs(4 << 20);
        assert_eq!(calls.len(), 2 * (runs + 1));
        let first = round % 2 == 1;
        assert!(calls[..=runs]
            .iter()
            .all(|&(nt, s)| nt == first && s == 4 << 20));
        assert!(calls[runs + 1..].iter().all(|&(nt, _)| nt != first));
    }
}

#[test]
fn the_nt_range_follows_the_caches_within_the_budget() {
    let mut s = [0; MAX_POINTS];
    let n = nt_sizes(Some(2 << 20), Some(260 << 20), &mut s);
    assert_eq!(&s[..n], [2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20]);
    let n = nt_sizes(Some(1 << 20), Some(32 << 20), &mut s);
    assert_eq!(n, 6);
    assert_eq!((s[0], s[n - 1]), (1 << 20, 32 << 20));
    let n = nt_sizes(Some(512 << 10), Some(4 << 20), &mut s);
    assert_eq!(&s[..n], [512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]);
    let n = nt_sizes(None, None, &mut s);
    assert_eq!((s[0], s[n - 1], n), (256 << 10, 32 << 20, 8));
}

#[test]
fn the_line_has_the_decided_fields() {
    use core::fmt::Write;
    let mut c = Calibration {
        copy: Some(16 << 20),
        fill: None,
        rep_movsb: Some(usize::MAX),
        fill_rep: Some(2 << 10),
        elapsed: Duration::ZERO,
        copy_sweep: Sweep::new(&[]),
        fill_sweep: Sweep::new(&[]),
        rep_movsb_sweep: Sweep::new(&[]),
        fill_rep_sweep: Sweep::new(&[]),
        engine: None,
        engine_check: engine_check(&crate::arch::detect(), ENGINE_BUDGET),
        base: tuning(),
    };
    let mut s = Line::default();
    write!(s, "{c}").unwrap();
    assert_eq!(
        s.as_str(),
        "CACHECOPY_TUNE=nt=16M,rep_movsb=never,fill_rep=2K"
    );
    let runs = tune::Runs {
        backends: &NAMES,
        flush: 0,
    };
    let mut back = c.base;
    let read = back.read_line(&s.as_str().as_bytes()[15..], "test", tune::ALL, &runs);
    assert_eq!(
        (read, back),
        (c.decided(), c.tuning()),
        "the line reads back"
    );
    c.copy = None;
    c.rep_movsb = None;
    c.fill_rep = None;
    let mut s = Line::default();
    write!(s, "{c}").unwrap();
    assert_eq!(s.as_str(), "CACHECOPY_TUNE=");
    // A decided engine joins the line as its three fields, which dispatch reads back.
    c.engine = Some(Engine::new(
        Backend::Generic,
        Backend::Generic,
        Edges::Overlap,
    ));
    c.copy = Some(4 << 20);
    let mut s = Line::default();
    write!(s, "{c}").unwrap();
    assert_eq!(
        s.as_str(),
        "CACHECOPY_TUNE=nt=4M,temporal=generic,stream=generic,edges=overlap"
    );
    let mut back = c.base;
    back.read_line(&s.as_str().as_bytes()[15..], "test", tune::ALL, &runs);
    assert_eq!(back, c.tuning());
    assert_eq!(Some(back.engine), c.engine);
}

#[test]
fn the_engine_check_compares_every_candidate_against_the_rule() {
    let c = engine_check(&crate::arch::detect(), ENGINE_BUDGET);
    let t = c.trials();
    assert_eq!(t[0].engine, c.rule);
    if t.len() > 1 {
        // Measured: the rule's own ratio is 1 in every round.
        assert_ne!(c.outcome, Outcome::NotMeasured, "{c:?}");
        assert!((t[0].temporal - 1.0).abs() < 1e-9 && (t[0].stream - 1.0).abs() < 1e-9);
        assert!(t[1..].iter().all(|t| t.engine != c.rule && t.rounds > 0));
    }
    let decided = decided_engine(&c);
    assert!(Engine::supported().contains(&decided), "{decided}");
}

/// A fixed buffer, to show the line needs no allocation.
struct Line {
    buf: [u8; 128],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            buf: [0; 128],
            len: 0,
        }
    }
}

impl Line {
    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap()
    }
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(core::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[test]
#[cfg_attr(miri, ignore = "mmap and timing")]
fn a_calibration_measures_within_its_budget_and_applies() {
    let k = crate::dispatch::active();
    let c = run(k, tuning());
    assert!(c.copy_sweep.points().iter().any(|p| p.rounds > 0), "{c:?}");
    for s in [&c.copy_sweep, &c.fill_sweep] {
        if let Some(t) = s.decided {
            assert!(s.points().iter().any(|p| p.size == t), "{s:?}");
        }
        assert_eq!(s.decided.is_some(), s.outcome == Outcome::Decided, "{s:?}");
    }
    // The string sweeps restored the thresholds they toggled.
    let before = (rep_movsb_threshold(), fill_rep_threshold());
    let _ = run(k, tuning());
    assert_eq!(before, (rep_movsb_threshold(), fill_rep_threshold()));
}
