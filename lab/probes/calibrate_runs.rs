//! Runs `cachecopy::tune::calibrate()` several times in a row and prints each run's decisions, one
//! line per run, then, per tunable, how many runs decided a new value, how many confirmed the
//! rule, and whether the runs agree: every value in force after a run (decided, confirmed, or
//! the rule kept) within 2x of the others. The figures lab/findings/performance.md ("Calibration")
//! quotes.
//!
//! `cargo run --release -p cachecopy-probes --example calibrate_runs -- [runs] [-v]` (10 by default; `-v` prints every
//! size's ratio, candidate wins and rounds). Each line ends with the
//! `CACHECOPY_TUNE` line that run would keep.

use cachecopy::tune::calibrate::{Calibration, Outcome, Point, Sweep};

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .filter(|a| a != "-v")
        .map(|a| a.parse().expect("runs: a number"))
        .unwrap_or(10);
    let verbose = std::env::args().any(|a| a == "-v");
    let cpu = cachecopy::tune::cpu();
    println!(
        "{} {}, L2 {:?}, L3 {:?}; built-in: nt {}, fill_nt {}, rep_movsb {}, fill_rep {}",
        cpu.vendor(),
        cpu.brand(),
        cpu.caches.l2,
        cpu.caches.l3,
        show(Some(cachecopy::tune::Plan::current().tuning().nt)),
        show(Some(cachecopy::tune::Plan::current().tuning().fill_nt)),
        show(Some(cachecopy::tune::Plan::current().tuning().rep_movsb)),
        show(Some(cachecopy::tune::Plan::current().tuning().fill_rep)),
    );
    let rules = [
        cachecopy::tune::Plan::current().tuning().nt,
        cachecopy::tune::Plan::current().tuning().fill_nt,
        cachecopy::tune::Plan::current().tuning().rep_movsb,
        cachecopy::tune::Plan::current().tuning().fill_rep,
    ];
    let mut decided = [0usize; 4];
    let mut confirmed = [0usize; 4];
    let mut in_force: [Vec<usize>; 4] = Default::default();
    let mut engines = 0;
    for run in 1..=runs {
        let c = cachecopy::tune::calibrate();
        let sweeps = sweeps(&c);
        let mut line = format!("run {run:2}: {:3.0} ms", c.elapsed.as_secs_f64() * 1e3);
        for (i, (name, s)) in sweeps.iter().enumerate() {
            let confirms = s.outcome == Outcome::Confirmed;
            decided[i] += usize::from(s.decided.is_some() && !confirms);
            confirmed[i] += usize::from(confirms);
            in_force[i].push(s.decided.unwrap_or(rules[i]));
            line.push_str(&format!("  {name} {}", show(s.decided)));
            if confirms {
                line.push_str(" (confirmed)");
            } else if s.decided.is_none() {
                line.push_str(&format!(" ({})", s.outcome));
            }
        }
        let check = &c.engine_check;
        engines += usize::from(c.engine.is_some());
        match c.engine {
            Some(e) => line.push_str(&format!("  engine {e}")),
            None => line.push_str(&format!("  engine - ({})", check.outcome)),
        }
        println!("{line}  {c}");
        if verbose {
            for t in check.trials() {
                for (job, sets, d) in [
                    ("Temporal", &t.temporal_on, t.decision.0),
                    ("NT batched", &t.stream_on, t.decision.1),
                ] {
                    let sets: Vec<String> = sets
                        .iter()
                        .map(|e| {
                            format!(
                                "{} {:.2}x {}/{} {}",
                                e.set, e.ratio, e.faster, e.rounds, e.verdict
                            )
                        })
                        .collect();
                    println!(
                        "    engine    {} {job}: {} of the rule's; {d}",
                        t.engine,
                        sets.join(", ")
                    );
                }
            }
            for (name, s) in sweeps.iter().chain(&hot_sweeps(&c)) {
                let pts: Vec<String> = s.points().iter().map(point).collect();
                println!("    {name:9} {}", pts.join(" | "));
                let steady: Vec<String> = s
                    .steady()
                    .iter()
                    .filter(|p| p.rounds > 0)
                    .map(point)
                    .collect();
                if !steady.is_empty() {
                    println!("    {:9} {}", "  steady", steady.join(" | "));
                }
            }
        }
    }
    let names = sweeps(&cachecopy::tune::calibrate()).map(|(n, _)| n);
    let summary: Vec<String> = (0..4)
        .map(|i| {
            let v = &in_force[i];
            let (lo, hi) = (v.iter().min(), v.iter().max());
            let agree = match (lo, hi) {
                (Some(&lo), Some(&hi)) => hi / 2 <= lo,
                _ => true,
            };
            format!(
                "{} decided {}/{runs}, confirmed {}/{runs}, in force {}-{} ({})",
                names[i],
                decided[i],
                confirmed[i],
                show(lo.copied()),
                show(hi.copied()),
                if agree {
                    "within 2x"
                } else {
                    "MORE than 2x apart"
                }
            )
        })
        .collect();
    println!("{}; engine {engines}/{runs}", summary.join("; "));
}

fn sweeps(c: &Calibration) -> [(&'static str, &Sweep); 4] {
    [
        ("nt", &c.copy_sweep),
        ("fill_nt", &c.fill_sweep),
        ("rep_movsb", &c.rep_movsb_sweep),
        ("fill_rep", &c.fill_rep_sweep),
    ]
}

/// The hot-destination string sweeps, printed with `-v` beside the cold ones.
fn hot_sweeps(c: &Calibration) -> [(&'static str, &Sweep); 2] {
    [
        ("movsb hot", &c.rep_movsb_hot),
        ("stosb hot", &c.fill_rep_hot),
    ]
}

/// One point of a sweep: its size, ratio, and the candidate's wins of the rounds.
fn point(p: &Point) -> String {
    format!(
        "{} {:.2}x {}/{}",
        show(Some(p.size)),
        p.ratio,
        p.wins,
        p.rounds
    )
}

fn show(v: Option<usize>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v > isize::MAX as usize => "never".into(),
        Some(v) if v >= 1 << 20 && v % (1 << 20) == 0 => format!("{}M", v >> 20),
        Some(v) if v >= 1 << 10 && v % (1 << 10) == 0 => format!("{}K", v >> 10),
        Some(v) => v.to_string(),
    }
}
