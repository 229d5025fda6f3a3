//! The calibration's decisions on made-up rounds, its line, and one real run within budget.

use super::frames::{
    blank_trial, decided_engine, engine_check, evidence, job_decision, ENGINE_BUDGET, ENGINE_ROUNDS,
};
use super::result::{
    Calibration, Decision, EngineCheck, Outcome, Point, Verdict, WorkingSet, MAX_ENGINES, SETS,
};
use super::stats::{decide, record, side, Side, Step, MAX_ROUNDS};
use super::sweep::{hot_round, hot_runs, nt_guard, nt_sizes, rep_decide, HOT_SAMPLE};
use super::*;
use crate::dispatch::engine::{Backend, Edges, Engine};
use crate::dispatch::plan;
use crate::dispatch::table::NAMES;
use crate::dispatch::tune;

/// The record of the plan in force.
fn tuning() -> crate::dispatch::tune::Tuning {
    plan::active().tuning
}
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
        rep_movsb: Some(usize::MAX),
        fill_rep: Some(2 << 10),
        ..Calibration::measuring_nothing(
            engine_check(&crate::arch::detect(), ENGINE_BUDGET),
            tuning(),
        )
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
        masks: true,
        pairs: true,
    };
    let mut back = c.base;
    let read = back.read_line(&s.as_str().as_bytes()[15..], "test", tune::ALL, &runs);
    assert_eq!(
        (read, back),
        ((c.decided(), false), c.tuning()),
        "the line reads back"
    );
    c.copy = None;
    c.rep_movsb = None;
    c.fill_rep = None;
    let mut s = Line::default();
    write!(s, "{c}").unwrap();
    assert_eq!(s.as_str(), "CACHECOPY_TUNE=");
    // A decided engine joins the line as its three fields, which dispatch reads back.
    // An engine equal to the rule's is no decision and stays off the line: the one backend
    // of an integer-only build is the rule there.
    let decided = Engine::new(Backend::Generic, Backend::Generic, Edges::Overlap);
    c.engine = Some(decided);
    c.copy = Some(4 << 20);
    let mut s = Line::default();
    write!(s, "{c}").unwrap();
    assert_eq!(
        s.as_str(),
        if decided == c.engine_check.rule {
            "CACHECOPY_TUNE=nt=4M"
        } else {
            "CACHECOPY_TUNE=nt=4M,temporal=generic,stream=generic,edges=overlap"
        }
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
        assert_ne!(c.outcome, Outcome::NotMeasured, "{c:?}");
        assert!(t.iter().all(|x| x.rounds == t[0].rounds), "{c:?}");
        assert!(t[1..].iter().all(|t| t.engine != c.rule));
        if t[0].rounds == 0 {
            // The budget ran out before the first round (a slow or loaded host, a sanitizer):
            // nothing measured, nothing taken.
            assert_eq!(c.outcome, Outcome::OutOfTime, "{c:?}");
            assert!(t[0].temporal.is_nan() && t[0].stream.is_nan());
            assert_eq!(decided_engine(&c), c.rule);
        } else {
            // Measured: the rule's own ratio is 1 in every round.
            assert!((t[0].temporal - 1.0).abs() < 1e-9 && (t[0].stream - 1.0).abs() < 1e-9);
        }
    }
    let decided = decided_engine(&c);
    assert!(Engine::supported().contains(&decided), "{decided}");
}

#[test]
fn an_engine_check_out_of_time_takes_nothing() {
    // No budget: the check stops before its first round, as on a loaded host or under a
    // sanitizer, and keeps the rule.
    let c = engine_check(&crate::arch::detect(), core::time::Duration::ZERO);
    let t = c.trials();
    assert_eq!(t[0].engine, c.rule);
    if t.len() > 1 {
        assert_eq!(c.outcome, Outcome::OutOfTime, "{c:?}");
        assert!(
            t.iter().all(|x| x.rounds == 0 && x.temporal.is_nan()),
            "{c:?}"
        );
    }
    assert_eq!(decided_engine(&c), c.rule);
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
    let p = plan::active();
    let k = &p.kernels;
    let c = run(k, tuning());
    assert!(c.copy_sweep.points().iter().any(|p| p.rounds > 0), "{c:?}");
    for s in [&c.copy_sweep, &c.fill_sweep] {
        if let Some(t) = s.decided {
            assert!(s.points().iter().any(|p| p.size == t), "{s:?}");
        }
        let taken = matches!(s.outcome, Outcome::Decided | Outcome::Confirmed);
        assert_eq!(s.decided.is_some(), taken, "{s:?}");
        if s.outcome == Outcome::Confirmed {
            let rules = [tuning().nt, tuning().fill_nt];
            assert!(
                rules.contains(&s.decided.unwrap()),
                "{s:?}: the rule's value"
            );
        }
    }
    // Measuring changed nothing process-wide: the same plan is in force.
    assert!(core::ptr::eq(p, plan::active()));
}

/// `ENGINE_ROUNDS` rounds of (candidate time ÷ the rule's): `fast` rounds at `a`, the rest at
/// `b`.
fn rounds(fast: usize, a: f64, b: f64) -> [f64; ENGINE_ROUNDS as usize] {
    core::array::from_fn(|i| if i < fast { a } else { b })
}

/// One working set's rounds.
type Rounds = [f64; ENGINE_ROUNDS as usize];

/// Evidence on every working set (in `WorkingSet::ALL`'s order) from their rounds.
fn sets(r: [Rounds; SETS]) -> [super::result::Evidence; SETS] {
    core::array::from_fn(|i| evidence(WorkingSet::ALL[i], &r[i]))
}

/// The same on every working set: ratios scattered evenly about parity.
const SAME: Rounds = [0.98, 1.02, 0.99, 1.01, 1.0, 0.97, 1.03, 0.99, 1.01];

/// A measured check against `rule`: each candidate with its `Temporal` and streamed rounds.
fn check(rule: Engine, cands: &[(Engine, [Rounds; SETS], [Rounds; SETS])]) -> EngineCheck {
    let mut c = EngineCheck {
        rule,
        trials: [blank_trial(rule); MAX_ENGINES],
        len: cands.len() + 1,
        outcome: Outcome::Decided,
    };
    let ones = [[1.0; ENGINE_ROUNDS as usize]; SETS];
    c.trials[0].temporal_on = sets(ones);
    c.trials[0].stream_on = sets(ones);
    c.trials[0].decision = (Decision::Rule, Decision::Rule);
    for (t, &(e, tr, sr)) in c.trials[1..].iter_mut().zip(cands) {
        *t = blank_trial(e);
        t.temporal_on = sets(tr);
        t.stream_on = sets(sr);
        t.decision = (job_decision(&t.temporal_on), job_decision(&t.stream_on));
    }
    c
}

/// A calibration that decided nothing but `engine_check`'s engine.
fn with_engine(check: EngineCheck) -> Calibration {
    Calibration {
        engine: Some(decided_engine(&check)),
        ..Calibration::measuring_nothing(check, tuning())
    }
}

fn line(c: &Calibration) -> Line {
    use core::fmt::Write;
    let mut s = Line::default();
    write!(s, "{c}").unwrap();
    s
}

#[test]
fn the_sign_test_judges_each_working_set() {
    use Verdict::*;
    let r = |fast, a, b| evidence(WorkingSet::Calls, &rounds(fast, a, b)).verdict;
    // 7 of 9 rounds 17 % faster: faster. 8 of 9 needed within 10 % of parity.
    assert_eq!(r(7, 0.83, 1.05), Faster);
    assert_eq!(r(7, 0.93, 1.05), Same);
    assert_eq!(r(8, 0.93, 1.05), Faster);
    // Faster in most rounds but by less than the margin at the median: the same.
    assert_eq!(r(9, 0.97, 1.0), Same);
    // Slower in 8 of 9, or by more than 3 % at the median however the rounds split.
    assert_eq!(r(1, 0.9, 1.02), Slower);
    assert_eq!(r(4, 0.99, 1.05), Slower);
    assert_eq!(evidence(WorkingSet::Calls, &SAME).verdict, Same);
    // The rule against itself, and too few rounds.
    assert_eq!(r(0, 1.0, 1.0), Same);
    assert_eq!(evidence(WorkingSet::Calls, &[0.5, 0.5]).verdict, Unsettled);
    assert_eq!(evidence(WorkingSet::Calls, &[]).verdict, Unsettled);
}

#[test]
fn a_candidate_slower_on_one_working_set_is_not_taken() {
    // The Intel Xeon's case (its report's engines on frames and engine check;
    // lab/findings/engine.md):
    // SSE2 faster than the rule on flushed slots in most rounds, but slower on a ring the
    // caches hold and on calls of 96 B-1 KiB.
    let avx512 = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Overlap);
    let sse2 = Engine::new(Backend::Sse2, Backend::Sse2, Edges::Overlap);
    let faster_cold = rounds(7, 0.83, 1.05);
    let slow_calls = rounds(0, 1.0, 1.6);
    let c = check(
        avx512,
        &[(
            sse2,
            [
                faster_cold,
                rounds(1, 0.95, 1.15),
                slow_calls,
                slow_calls,
                SAME,
            ],
            [rounds(0, 1.0, 1.47), SAME, SAME, SAME, SAME],
        )],
    );
    let t = c.trials()[1];
    assert_eq!(t.temporal_on[0].verdict, Verdict::Faster);
    assert_eq!(t.decision.0, Decision::Slower(WorkingSet::HotRing));
    assert_eq!(t.decision.1, Decision::Slower(WorkingSet::ColdRing));
    assert_eq!(decided_engine(&c), avx512);
    // The rule stays, and the line leaves every engine field out.
    let cal = with_engine(c);
    assert_eq!(line(&cal).as_str(), "CACHECOPY_TUNE=");
    assert_eq!(cal.tuning().engine, cal.base.engine);
    // Faster on both rings and most calls but slower on the shortest: still not taken.
    let c = check(
        avx512,
        &[(
            sse2,
            [faster_cold, faster_cold, slow_calls, faster_cold, SAME],
            [SAME; SETS],
        )],
    );
    assert_eq!(
        c.trials()[1].decision.0,
        Decision::Slower(WorkingSet::ShortCalls)
    );
    assert_eq!(decided_engine(&c), avx512);
}

#[test]
fn a_candidate_is_taken_for_the_job_it_wins_alone() {
    let avx512 = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Overlap);
    let avx2 = Engine::new(Backend::Avx2, Backend::Avx2, Edges::Overlap);
    // AVX2 streams frames faster (cold ring), the same elsewhere; its Temporal job is the
    // same everywhere: only the streamed job changes.
    let c = check(
        avx512,
        &[(
            avx2,
            [SAME; SETS],
            [rounds(9, 0.6, 1.0), SAME, SAME, SAME, SAME],
        )],
    );
    assert_eq!(c.trials()[1].decision.0, Decision::NotFaster);
    let e = decided_engine(&c);
    assert_eq!(
        e,
        Engine::new(Backend::Avx512, Backend::Avx2, Edges::Overlap)
    );
    let cal = with_engine(c);
    let l = line(&cal);
    assert_eq!(l.as_str(), "CACHECOPY_TUNE=stream=avx2,edges=overlap");
    // It reads back as the record the calibration installs.
    let runs = tune::Runs {
        backends: &Backend::ALL,
        flush: 0,
        masks: true,
        pairs: true,
    };
    let mut back = cal.base;
    back.read_line(&l.as_str().as_bytes()[15..], "test", tune::ALL, &runs);
    assert_eq!(back, cal.tuning());
    assert_eq!(back.engine.stream, Backend::Avx2);
    assert_eq!(back.engine.temporal, cal.base.engine.temporal);
}

#[test]
fn one_engine_has_one_edge_store() {
    // On a Zen 4-like rule (AVX2), AVX-512 with masked edges is faster for the Temporal job
    // and AVX-512 with overlapping edges for the streamed one: one engine cannot run both, so
    // the combination that gains most of those whose every changed job was measured wins.
    let avx2 = Engine::new(Backend::Avx2, Backend::Avx2, Edges::Overlap);
    let masked = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Masked);
    let overlap = Engine::new(Backend::Avx512, Backend::Avx512, Edges::Overlap);
    let c = check(
        avx2,
        &[
            (
                masked,
                [rounds(9, 0.9, 1.0), SAME, SAME, SAME, SAME],
                [SAME; SETS],
            ),
            (
                overlap,
                [SAME; SETS],
                [rounds(9, 0.7, 1.0), SAME, SAME, SAME, SAME],
            ),
        ],
    );
    let e = decided_engine(&c);
    assert_eq!(
        e,
        Engine::new(Backend::Avx2, Backend::Avx512, Edges::Overlap)
    );
    let cal = with_engine(c);
    let t = cal.engine_check.trials();
    assert_eq!(t[1].decision.0, Decision::Taken);
    let mut c = cal.engine_check;
    super::frames::mark(&mut c, e);
    assert_eq!(c.trials()[1].decision.0, Decision::Beaten);
    assert_eq!(c.trials()[2].decision.1, Decision::Taken);
}

#[test]
fn an_nt_threshold_is_only_lowered_and_only_where_measured() {
    use Step::*;
    // Sizes 1, 2, 4, 8 (see `pts`); the steady-state rounds agree unless said.
    let won = pts(&[(2, 0, 0.5), (2, 2, 1.3), (2, 2, 1.4), (2, 2, 1.5)]);
    // Above the rule: cold destinations between would stop streaming.
    assert_eq!(nt_guard(&won, &won, 2, 1), Done(None, Outcome::Slower));
    // At it: the rule is confirmed, an outcome of its own, with its value.
    assert_eq!(
        nt_guard(&won, &won, 2, 2),
        Done(Some(2), Outcome::Confirmed)
    );
    // Below it: every size between settled no slower, over both samples.
    assert_eq!(nt_guard(&won, &won, 2, 8), Done(Some(2), Outcome::Decided));
    let open = pts(&[(2, 0, 0.5), (2, 2, 1.3), (0, 0, f64::NAN), (2, 2, 1.5)]);
    assert_eq!(nt_guard(&open, &won, 2, 8), Measure(2));
    // A size between that loses refutes the change: the sizes below the rule lose and the
    // rule's wins, so the rule is what was measured.
    let lost = pts(&[(2, 0, 0.5), (2, 2, 1.3), (9, 4, 0.95), (2, 2, 1.5)]);
    assert_eq!(
        nt_guard(&lost, &won, 2, 8),
        Done(Some(8), Outcome::Confirmed)
    );
    // The sweep's samples won where the steady ones have not run: a steady round first; where
    // they lose (the Zen 3's 4 MiB copies, the Zen 4's 8 MiB ones), the rule is confirmed.
    assert_eq!(nt_guard(&won, &open, 2, 8), Confirm(2));
    let lost_steady = pts(&[(2, 0, 0.5), (2, 2, 1.3), (2, 0, 0.85), (2, 2, 1.5)]);
    assert_eq!(
        nt_guard(&won, &lost_steady, 2, 8),
        Done(Some(8), Outcome::Confirmed)
    );
    // A tie over the steady samples is not enough: nothing shows no size gets slower.
    assert_eq!(
        nt_guard(&won, &lost, 2, 8),
        Done(Some(8), Outcome::Confirmed)
    );
    // A rule past the sizes tried: the sizes up to it were not measured.
    assert_eq!(nt_guard(&won, &won, 2, 16), Done(None, Outcome::Unmeasured));
}

/// The Zen 4 VM's 8 MiB copies (rule 16 MiB): the sweep's samples read streaming ahead, so the
/// answer is 8 MiB; the threshold moves there only if the steady samples win by the margin.
/// A win by the sign test with a smaller gain, a tie or a loss confirms the rule instead:
/// `Auto` never starts streaming at a size whose own measurement does not show it faster.
#[test]
fn a_lower_nt_threshold_needs_a_clear_steady_win() {
    use super::sweep::LOWER_BY;
    use Step::*;
    let mib = |v: &[(u32, u32, f64)]| -> Vec<Point> {
        let mut p = pts(v);
        for q in &mut p {
            q.size <<= 20;
        }
        p
    };
    // 1, 2, 4, 8, 16 MiB: losing up to 4 MiB, winning from 8 MiB in the sweep's samples.
    let sweep = mib(&[
        (2, 0, 0.56),
        (2, 0, 0.56),
        (2, 0, 0.52),
        (2, 2, 1.18),
        (2, 2, 1.47),
    ]);
    let c = match decide(&sweep, None) {
        Done(Some(c), Outcome::Decided) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(c, 8 << 20);
    let rule = 16 << 20;
    // The rule's own size over the steady samples: 1.40x (the report's 16 MiB hot figure).
    let steady = |rounds: u32, wins: u32, ratio: f64| {
        let mut s = mib(&[(0, 0, f64::NAN); 5]);
        s[3] = Point {
            size: 8 << 20,
            ratio,
            rounds,
            wins,
        };
        s[4] = Point {
            size: rule,
            ratio: 1.4,
            rounds: 2,
            wins: 2,
        };
        s
    };
    let confirmed = Done(Some(rule), Outcome::Confirmed);
    assert_eq!(
        nt_guard(&sweep, &steady(0, 0, f64::NAN), c, rule),
        Confirm(3)
    );
    // Refuted, and the rule's size not yet measured over steady samples: it is, first.
    let mut unbacked = steady(4, 0, 0.87);
    unbacked[4].rounds = 0;
    unbacked[4].wins = 0;
    assert_eq!(nt_guard(&sweep, &unbacked, c, rule), Confirm(4));
    // The report's call: 0.87x, 0 of 4.
    assert_eq!(nt_guard(&sweep, &steady(4, 0, 0.87), c, rule), confirmed);
    // Four wins of four, but 3 % ahead: under the margin.
    const { assert!(1.03 < LOWER_BY) };
    assert_eq!(nt_guard(&sweep, &steady(4, 4, 1.03), c, rule), confirmed);
    // A tie after nine rounds.
    assert_eq!(nt_guard(&sweep, &steady(9, 5, 1.01), c, rule), confirmed);
    // A clear win: lowered.
    assert_eq!(
        nt_guard(&sweep, &steady(2, 2, 1.25), c, rule),
        Done(Some(c), Outcome::Decided)
    );
}

/// The Xeon family 6 model 167's fills (rule 4 MiB): the sweep's samples read 4 MiB as a win,
/// so the answer is the rule; the report's fill calibration read streaming at 0.81x there. A
/// confirmation needs the steady samples at the rule's size not to lose: where they lose, the
/// rule is kept but not confirmed (the crossover lies above it, where cold destinations
/// forbid it).
#[test]
fn a_rule_is_confirmed_only_where_its_own_size_holds_over_steady_samples() {
    use Step::*;
    // Sizes 1, 2, 4, 8: losing at 2, winning from 4.
    let sweep = pts(&[(2, 0, 0.5), (2, 0, 0.6), (2, 2, 1.25), (2, 2, 1.7)]);
    let nan = (0, 0, f64::NAN);
    assert_eq!(nt_guard(&sweep, &pts(&[nan; 4]), 4, 4), Confirm(2));
    let lost = pts(&[nan, nan, (2, 0, 0.81), nan]);
    assert_eq!(nt_guard(&sweep, &lost, 4, 4), Done(None, Outcome::Slower));
    let tie = pts(&[nan, nan, (9, 4, 0.99), nan]);
    assert_eq!(
        nt_guard(&sweep, &tie, 4, 4),
        Done(Some(4), Outcome::Confirmed)
    );
    let won = pts(&[nan, nan, (2, 2, 1.2), nan]);
    assert_eq!(
        nt_guard(&sweep, &won, 4, 4),
        Done(Some(4), Outcome::Confirmed)
    );
}

/// String sweep points at 1, 2, 4, ... KiB.
fn kib(v: &[(u32, u32, f64)]) -> Vec<Point> {
    let mut p = pts(v);
    for q in &mut p {
        q.size <<= 10;
    }
    p
}

#[test]
fn a_string_threshold_rests_on_hot_and_cold() {
    use Step::*;
    let k = 1 << 10;
    let tie = (9, 5, 1.0);
    // Every size gets a round first.
    let none = kib(&[(0, 0, f64::NAN); 4]);
    assert_eq!(rep_decide(&none, &none, 2 * k), Measure(0));
    // The Intel copies' shape: into a cold destination the string move loses at 1-2 KiB, ties
    // at 4 KiB, wins from 8 KiB; hot it ties. The rule (2 KiB) rises to 8 KiB (the first
    // win; the tie at 4 KiB does not lower it), and the sizes handed to the vector loop
    // (2-4 KiB) lose nothing.
    let cold = kib(&[(2, 0, 0.59), (2, 0, 0.71), tie, (2, 2, 1.19), (2, 2, 1.74)]);
    let hot = kib(&[tie; 5]);
    assert_eq!(
        rep_decide(&cold, &hot, 2 * k),
        Done(Some(8 * k), Outcome::Decided)
    );
    // Hot, the string move wins at 2 KiB: raising the rule would slow that size down.
    let mut hot2 = hot.clone();
    hot2[1] = kib(&[(0, 0, 0.0), (2, 2, 1.3)])[1];
    assert_eq!(rep_decide(&cold, &hot2, 2 * k), Done(None, Outcome::Slower));
    // At the rule: confirmed.
    assert_eq!(
        rep_decide(&cold, &hot, 8 * k),
        Done(Some(8 * k), Outcome::Confirmed)
    );
    // The Zen 3 fills' shape: cold the string store ties or wins from 2 KiB, hot it loses
    // up to 8 KiB. Against a rule of 16 KiB the threshold stays (it would hand 2-8 KiB to a
    // store that loses hot); with the rule past the sizes tried nothing is decided.
    let cold = kib(&[tie, (2, 2, 1.2), (2, 2, 1.2), (2, 2, 1.2), (2, 2, 1.2)]);
    let hot = kib(&[(2, 0, 0.5), (2, 0, 0.5), (2, 0, 0.6), (2, 0, 0.8), tie]);
    assert_eq!(
        rep_decide(&cold, &hot, 16 * k),
        Done(Some(16 * k), Outcome::Confirmed)
    );
    assert_eq!(rep_decide(&cold, &hot, 8 * k), Done(None, Outcome::Slower));
    assert_eq!(
        rep_decide(&cold, &hot, usize::MAX),
        Done(None, Outcome::Unmeasured)
    );
    assert_eq!(
        rep_decide(&cold, &hot, 32 << 20),
        Done(None, Outcome::Unmeasured)
    );
    // Lowering needs a win at a size it moves; ties alone keep the rule.
    let hot = kib(&[tie; 5]);
    assert_eq!(
        rep_decide(&cold, &hot, 8 * k),
        Done(Some(2 * k), Outcome::Decided)
    );
    let cold = kib(&[tie; 5]);
    assert_eq!(
        rep_decide(&cold, &hot, 8 * k),
        Done(None, Outcome::NotFaster)
    );
    assert_eq!(
        rep_decide(&cold, &hot, usize::MAX),
        Done(Some(usize::MAX), Outcome::Confirmed)
    );
    // Slower at the largest size: never, the rule where it is never.
    let cold = kib(&[(2, 0, 0.5); 3]);
    let hot = kib(&[tie; 3]);
    assert_eq!(
        rep_decide(&cold, &hot, usize::MAX),
        Done(Some(usize::MAX), Outcome::Confirmed)
    );
    assert_eq!(
        rep_decide(&cold, &hot, 2 * k),
        Done(None, Outcome::Unmeasured)
    );
    // An open size the decision moves gets the next round.
    let cold = kib(&[(2, 0, 0.59), (1, 1, 1.2), (2, 2, 1.3)]);
    let hot = kib(&[tie, (1, 1, 1.1), tie]);
    assert_eq!(rep_decide(&cold, &hot, 4 * k), Measure(1));
}
