//! Section 5: where `Auto` should switch to streaming stores on this machine, measured, for
//! copies and for fills (a fill has no source stream, so its crossover is its own), beside what
//! the library's own `cachecopy::tune::calibrate()` measured in the same run: its ratio at every size
//! it tried (the same figure, NonTemporal ÷ Temporal into a hot destination), its decision and
//! whether that agrees with this sweep's within 2x, and its string-instruction thresholds.

use cachecopy::tune::calibrate::Outcome;
use cachecopy::Mode;
use serde::Serialize;

use crate::measure::{self, Arena, Dest, Kind};
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, field, ratio, size};

/// One calibration figure.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Bytes per operation.
    pub size: usize,
    /// Where the destination was.
    #[serde(serialize_with = "measure::serialize_dest")]
    pub dest: Dest,
    /// NonTemporal ÷ Temporal, per round.
    pub ratio: Summary,
}

/// A section 5 (copies) or 5b (fills).
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// Copies or fills.
    pub kind: Kind,
    /// Every size, cold then hot.
    pub points: Vec<Point>,
    /// Where streaming stops losing to temporal stores (see [`crossover`]), for a cold and a hot
    /// destination.
    pub crossover_cold: Option<usize>,
    /// As `crossover_cold`, for a hot destination.
    pub crossover_hot: Option<usize>,
    /// The recommended `nt` (or `fill_nt`) field: see [`recommend`].
    pub recommended: Option<usize>,
    /// The threshold `Auto` uses now.
    pub builtin: usize,
    /// glibc `memcpy`'s own switch to streaming stores (copies only).
    pub glibc: Option<usize>,
    /// What the library's own `cachecopy::tune::calibrate()` found on this run (the function
    /// `CACHECOPY_TUNE=calibrate` runs at start-up).
    pub library: Library,
}

/// One `cachecopy::tune::calibrate()` sweep, as the report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct LibrarySweep {
    /// The threshold it decided (`usize::MAX`: never), or `None`: the built-in rule stays.
    pub decided: Option<usize>,
    /// Why (`cachecopy::tune::calibrate::Outcome`).
    pub outcome: String,
    /// Every size it measured: (size, median ratio, rounds the candidate won, rounds).
    pub points: Vec<(usize, f64, u32, u32)>,
    /// The sizes it confirmed over steady-state samples before lowering an NT threshold, the
    /// same way.
    pub steady: Vec<(usize, f64, u32, u32)>,
}

impl LibrarySweep {
    fn of(s: &cachecopy::tune::calibrate::Sweep) -> LibrarySweep {
        let measured = |pts: &[cachecopy::tune::calibrate::Point]| -> Vec<(usize, f64, u32, u32)> {
            pts.iter()
                .filter(|p| p.rounds > 0)
                .map(|p| (p.size, p.ratio, p.wins, p.rounds))
                .collect()
        };
        LibrarySweep {
            decided: s.decided,
            outcome: s.outcome.to_string(),
            points: measured(s.points()),
            steady: measured(s.steady()),
        }
    }

    fn empty() -> LibrarySweep {
        LibrarySweep {
            decided: None,
            outcome: String::new(),
            points: Vec::new(),
            steady: Vec::new(),
        }
    }
}

/// `cachecopy::tune::calibrate()`'s part of a section.
#[derive(Clone, Debug, Serialize)]
pub struct Library {
    /// The NT sweep of this kind (hot destination, NonTemporal ÷ Temporal).
    pub nt: LibrarySweep,
    /// Whether its decision is within 2x of this section's recommendation (`None` when either
    /// has none).
    pub agrees: Option<bool>,
    /// The string-instruction sweep of this kind (`rep movsb` for copies, `rep stosb` for
    /// fills; cold destination, vector loop time ÷ string time) and the decision, which rests
    /// on it and on `rep_hot`.
    pub rep: LibrarySweep,
    /// The same sizes into a hot destination (the same buffer again and again).
    pub rep_hot: LibrarySweep,
    /// The string-instruction threshold in force (the plan's `rep_movsb` or `fill_rep`).
    pub rep_builtin: usize,
    /// How long `cachecopy::tune::calibrate()` took, in milliseconds.
    pub ms: f64,
}

/// The smallest size from which streaming does not lose, given (size, NonTemporal ÷ Temporal)
/// summaries: the start of the longest run of sizes, up to the largest, where no point loses.
/// A point loses when its median is more than [`TIE`] below 1 (within it, it ties, as a size
/// `cachecopy::tune::calibrate()` settles within 3 % of parity does: otherwise a size at parity, read
/// a little either side of 1 from one run to the next, moved the recommendation past the sizes
/// above it: lab/findings/performance.md, "Calibration"), except a noisy point within 10 % of
/// parity (on a shared VM one preempted round moves a median by that much). `None` when the
/// largest size loses. Requiring the whole tail keeps one lucky point below the real crossover
/// from moving it.
pub fn crossover(points: &[(usize, Summary)]) -> Option<usize> {
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.0);
    let loses = |r: &Summary| r.median < 1.0 - TIE && !(r.noisy && r.median >= 0.9);
    let mut best = None;
    for (size, ratio) in pts.iter().rev() {
        if loses(ratio) {
            break;
        }
        if ratio.median >= 1.0 {
            best = Some(*size);
        }
    }
    best
}

/// How far below parity a median still ties (`cachecopy::tune::calibrate()`'s own tie).
pub const TIE: f64 = 0.03;

/// The threshold to recommend: the hot crossover, the size from which streaming is no slower
/// even when the destination was cached, so `Auto` never loses to `Temporal` by streaming;
/// below it a cached destination favours temporal stores. When streaming never catches up with
/// a hot destination in the measured range, the cold crossover times 4 bounds it instead (that
/// many bytes are already past what the caches keep).
pub fn recommend(cold: Option<usize>, hot: Option<usize>) -> Option<usize> {
    hot.or(cold.map(|c| c.saturating_mul(4)))
}

/// Whether two thresholds are within 2x of each other.
pub fn within_2x(a: usize, b: usize) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    hi / 2 <= lo
}

/// Measures and prints section 5 (`Kind::Copy`) or 5b (`Kind::Fill`), beside `lib`, a
/// `cachecopy::tune::calibrate()` of this run.
pub fn section(
    s: &mut Session,
    kind: Kind,
    lib: &cachecopy::tune::calibrate::Calibration,
) -> Calibration {
    s.start(match kind {
        Kind::Copy => "5. Auto calibration",
        Kind::Fill => "5b. Auto calibration, fills",
    });
    let tick = s.ticker();
    let p = &s.plan;
    let glibc = s.machine.glibc.as_ref().map(|g| g.nt_threshold);
    let mut c = run(
        kind,
        &p.calib_sizes,
        s.src.as_slice(),
        &mut s.arena,
        p.calib_samples,
        p.sample_bytes,
        glibc,
        tick,
    );
    c.library = library(kind, lib, c.recommended);
    s.print(&print(&c));
    c
}

/// `lib`'s sweeps of `kind`, compared with the recommendation `recommended`.
fn library(
    kind: Kind,
    lib: &cachecopy::tune::calibrate::Calibration,
    recommended: Option<usize>,
) -> Library {
    let (nt, rep, rep_hot, rep_builtin) = match kind {
        Kind::Copy => (
            &lib.copy_sweep,
            &lib.rep_movsb_sweep,
            &lib.rep_movsb_hot,
            cachecopy::tune::Plan::current().tuning().rep_movsb,
        ),
        Kind::Fill => (
            &lib.fill_sweep,
            &lib.fill_rep_sweep,
            &lib.fill_rep_hot,
            cachecopy::tune::Plan::current().tuning().fill_rep,
        ),
    };
    Library {
        nt: LibrarySweep::of(nt),
        agrees: nt.decided.zip(recommended).map(|(a, b)| within_2x(a, b)),
        rep: LibrarySweep::of(rep),
        rep_hot: LibrarySweep::of(rep_hot),
        rep_builtin,
        ms: lib.elapsed.as_secs_f64() * 1e3,
    }
}

/// NonTemporal ÷ Temporal of `kind` at every size into cold, then hot destinations, and the
/// crossovers and recommendation they give.
#[allow(clippy::too_many_arguments)]
fn run(
    kind: Kind,
    sizes: &[usize],
    src: &[u8],
    arena: &mut Arena,
    samples: usize,
    sample_bytes: usize,
    glibc: Option<usize>,
    mut tick: impl FnMut(),
) -> Calibration {
    let ops = [kind.op(Mode::Temporal), kind.op(Mode::NonTemporal)];
    let mut points = Vec::new();
    for dest in [Dest::Cold, Dest::Hot] {
        for &size in sizes {
            let runs = measure::runs_per_sample(size, sample_bytes);
            let r = measure::interleaved_at(&ops, size, 0, dest, src, arena, samples, runs);
            points.push(Point {
                size,
                dest,
                ratio: paired_ratio(&r[1], &r[0]).expect("samples ≥ 1"),
            });
            tick();
        }
    }
    let of = |d: Dest| -> Vec<(usize, Summary)> {
        points
            .iter()
            .filter(|p| p.dest == d)
            .map(|p| (p.size, p.ratio))
            .collect()
    };
    let (crossover_cold, crossover_hot) = (crossover(&of(Dest::Cold)), crossover(&of(Dest::Hot)));
    Calibration {
        kind,
        points,
        crossover_cold,
        crossover_hot,
        recommended: recommend(crossover_cold, crossover_hot),
        builtin: kind.threshold().1,
        glibc: glibc.filter(|_| kind == Kind::Copy),
        library: Library {
            nt: LibrarySweep::empty(),
            agrees: None,
            rep: LibrarySweep::empty(),
            rep_hot: LibrarySweep::empty(),
            rep_builtin: usize::MAX,
            ms: 0.0,
        },
    }
}

/// Section 5's or 5b's text: the ratios, the crossovers and what to set.
fn print(c: &Calibration) -> String {
    let mut s = String::from(match c.kind {
        Kind::Copy => {
            "5. Auto calibration, copies: NonTemporal / Temporal, paired per round (above 1: \
             streaming wins)\n"
        }
        Kind::Fill => {
            "5b. Auto calibration, fills (zero): NonTemporal / Temporal, paired per round\n"
        }
    });
    let lib = &c.library;
    let mut sizes = text::distinct(
        c.points
            .iter()
            .map(|p| p.size)
            .chain(lib.nt.points.iter().map(|p| p.0)),
    );
    sizes.sort_unstable();
    /// A column: the report's sweep into a destination, or the library's sweep, or its
    /// steady-state confirmations.
    #[derive(Clone, Copy)]
    enum Col {
        Sweep(Dest),
        Library,
        Steady,
    }
    let mut cols = vec![
        ("cold dst", Col::Sweep(Dest::Cold)),
        ("hot dst", Col::Sweep(Dest::Hot)),
        ("calibrate() hot", Col::Library),
    ];
    if !lib.nt.steady.is_empty() {
        cols.push(("calibrate() steady", Col::Steady));
    }
    let lib_cell = |pts: &[(usize, f64, u32, u32)], sz: usize| {
        let &(_, r, wins, rounds) = pts.iter().find(|p| p.0 == sz)?;
        Some(format!("{r:.2}x {wins}/{rounds}"))
    };
    s.push_str(&text::by_size("size", &sizes, &cols, |sz, col| match col {
        Col::Sweep(d) => {
            let p = c.points.iter().find(|p| p.size == sz && p.dest == d)?;
            Some(ratio(&p.ratio))
        }
        Col::Library => lib_cell(&lib.nt.points, sz),
        Col::Steady => lib_cell(&lib.nt.steady, sz),
    }));
    let opt = |v: Option<usize>| v.map_or("none in range".to_string(), size);
    let crossover = format!(
        "cold destination {}, hot destination {}",
        opt(c.crossover_cold),
        opt(c.crossover_hot)
    );
    field(&mut s, "crossover", crossover);
    let recommended = match c.recommended {
        Some(r) => format!(
            "CACHECOPY_TUNE={}={r}  ({}: from here streaming is no slower even into a cached \
             destination)",
            c.kind.field(),
            size(r)
        ),
        None => "none: streaming never won in the measured range".to_string(),
    };
    field(&mut s, "recommended", recommended);
    let builtin = format!("{} (the plan's {})", size(c.builtin), c.kind.threshold().0);
    field(&mut s, "built-in", builtin);
    let confirmed = lib.nt.outcome == Outcome::Confirmed.to_string();
    let library = match (lib.nt.decided, lib.agrees) {
        (Some(t), agrees) => format!(
            "{}{} in {:.0} ms ({}; CACHECOPY_TUNE=calibrate applies it at start-up)",
            if confirmed { "confirms the rule: " } else { "" },
            size(t),
            lib.ms,
            match agrees {
                Some(true) => "agrees with the recommendation within 2x",
                Some(false) => "DISAGREES with the recommendation by more than 2x",
                None => "no recommendation to compare",
            }
        ),
        (None, _) => format!(
            "undecided in {:.0} ms ({}): the built-in rule stays",
            lib.ms, lib.nt.outcome
        ),
    };
    field(&mut s, "calibrate()", library);
    let rep_name = match c.kind {
        Kind::Copy => "rep movsb",
        Kind::Fill => "rep stosb",
    };
    if !lib.rep.points.is_empty() {
        let rep = format!(
            "calibrate(): {} (built-in {}); vector loop time ÷ string time (above 1: the string \
             instruction is faster), rounds it won; a threshold is taken only where the sizes it \
             moves were measured, hot and cold, and are slower nowhere",
            match lib.rep.decided {
                Some(t) if lib.rep.outcome == Outcome::Confirmed.to_string() => {
                    format!("confirms the rule, {}", threshold(t))
                }
                Some(t) => threshold(t),
                None => format!("undecided ({}), the built-in rule stays", lib.rep.outcome),
            },
            threshold(lib.rep_builtin),
        );
        field(&mut s, rep_name, rep);
        let pts = |sweep: &LibrarySweep| -> String {
            let v: Vec<String> = sweep
                .points
                .iter()
                .map(|&(sz, r, wins, rounds)| format!("{} {r:.2}x {wins}/{rounds}", size(sz)))
                .collect();
            v.join(", ")
        };
        field(&mut s, "  cold dst", pts(&lib.rep));
        if !lib.rep_hot.points.is_empty() {
            field(&mut s, "  hot dst", pts(&lib.rep_hot));
        }
    }
    if let Some(g) = c.glibc {
        let glibc = format!("{} (memcpy's own switch to streaming stores)", size(g));
        field(&mut s, "glibc", glibc);
    }
    s.push('\n');
    s
}

/// A threshold as text: a size, or `never`.
fn threshold(t: usize) -> String {
    if t > isize::MAX as usize {
        "never".into()
    } else {
        size(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tight summary with this median.
    fn at(median: f64) -> Summary {
        Summary::of(&[median]).unwrap()
    }

    /// A noisy summary with this median.
    fn noisy(median: f64) -> Summary {
        Summary::of(&[median * 0.2, median, median * 2.0]).unwrap()
    }

    #[test]
    fn crossover_needs_the_whole_tail() {
        let t = [
            (1 << 10, at(0.5)),
            (4 << 10, at(1.1)),
            (16 << 10, at(0.9)),
            (64 << 10, at(1.2)),
            (256 << 10, at(1.4)),
        ];
        assert_eq!(crossover(&t), Some(64 << 10));
        // Order does not matter.
        let mut r = t;
        r.reverse();
        assert_eq!(crossover(&r), Some(64 << 10));
    }

    #[test]
    fn noisy_near_parity_does_not_break_the_tail() {
        let t = [(1, at(0.5)), (2, at(1.5)), (4, noisy(0.93)), (8, at(1.2))];
        assert!(t[2].1.noisy);
        assert_eq!(crossover(&t), Some(2));
        // A tight 0.93 is a real loss, and so is a noisy 0.8.
        let t = [(1, at(1.5)), (2, at(0.93)), (4, at(1.2))];
        assert_eq!(crossover(&t), Some(4));
        let t = [(1, at(1.5)), (2, noisy(0.8)), (4, at(1.2))];
        assert_eq!(crossover(&t), Some(4));
        // A tail of near-parity noise alone is no crossover.
        assert_eq!(crossover(&[(1, noisy(0.95))]), None);
    }

    #[test]
    fn crossover_edges() {
        assert_eq!(crossover(&[]), None);
        assert_eq!(crossover(&[(1, at(2.0)), (2, at(0.96))]), None);
        // Within 3 % of parity a size ties: it neither ends the tail nor starts it.
        assert_eq!(crossover(&[(1, at(2.0)), (2, at(0.99))]), Some(1));
        let t = [(1, at(0.5)), (2, at(1.25)), (4, at(0.998)), (8, at(1.1))];
        assert_eq!(crossover(&t), Some(2));
        assert_eq!(crossover(&[(1, at(1.0)), (2, at(1.5))]), Some(1));
    }

    #[test]
    fn the_text_has_the_table_and_the_advice() {
        let point = |size, dest, r| Point {
            size,
            dest,
            ratio: at(r),
        };
        let c = Calibration {
            kind: Kind::Fill,
            points: vec![
                point(8192, Dest::Cold, 1.25),
                point(4096, Dest::Cold, 0.5),
                point(4096, Dest::Hot, 0.25),
            ],
            crossover_cold: Some(8192),
            crossover_hot: None,
            recommended: Some(32768),
            builtin: 1 << 20,
            glibc: None,
            library: Library {
                nt: LibrarySweep {
                    decided: Some(16384),
                    outcome: "decided".into(),
                    points: vec![(4096, 0.75, 0, 2), (16384, 1.5, 2, 2)],
                    steady: vec![],
                },
                agrees: Some(true),
                rep: LibrarySweep {
                    decided: Some(usize::MAX),
                    outcome: "never wins in the sizes tried".into(),
                    points: vec![(1024, 0.5, 0, 2)],
                    steady: vec![],
                },
                rep_hot: LibrarySweep {
                    decided: Some(usize::MAX),
                    outcome: "never wins in the sizes tried".into(),
                    points: vec![(1024, 0.75, 0, 2)],
                    steady: vec![],
                },
                rep_builtin: 2048,
                ms: 60.0,
            },
        };
        let t = print(&c);
        assert!(t.starts_with("5b. Auto calibration, fills"), "{t}");
        // Sorted by size; a missing point is an empty cell.
        assert!(t.find("4 KiB").unwrap() < t.find("8 KiB").unwrap(), "{t}");
        assert!(t.contains("1.25x"), "{t}");
        assert!(t.contains("hot destination none in range"), "{t}");
        assert!(t.contains("CACHECOPY_TUNE=fill_nt=32768  (32 KiB"), "{t}");
        assert!(t.contains("1 MiB (the plan's fill_nt)"), "{t}");
        assert!(!t.contains("   glibc  "), "{t}");
        // The library's own ratios beside the sweep's, in the same rows.
        assert!(t.contains("0.50x    0.25x        0.75x 0/2\n"), "{t}");
        assert!(t.contains("16 KiB") && t.contains("1.50x 2/2"), "{t}");
        assert!(t.contains("16 KiB in 60 ms (agrees"), "{t}");
        assert!(
            t.contains("rep stosb      calibrate(): never (built-in 2 KiB)"),
            "{t}"
        );
        // Both working sets of the string instruction, each with its rounds.
        assert!(t.contains("  cold dst     1 KiB 0.50x 0/2\n"), "{t}");
        assert!(t.contains("  hot dst      1 KiB 0.75x 0/2\n"), "{t}");
        // A confirmed rule says so, with its value, and is compared like a decision.
        let mut c = c;
        let confirmed = Outcome::Confirmed.to_string();
        c.library.nt.outcome = confirmed.clone();
        c.library.rep.outcome = confirmed;
        let t = print(&c);
        assert!(
            t.contains("confirms the rule: 16 KiB in 60 ms (agrees"),
            "{t}"
        );
        assert!(t.contains("calibrate(): confirms the rule, never"), "{t}");
    }

    #[test]
    fn the_steady_confirmations_get_a_column() {
        let mut lib = LibrarySweep::empty();
        lib.points = vec![(4 << 20, 1.2, 2, 2), (8 << 20, 1.6, 2, 2)];
        lib.steady = vec![(4 << 20, 0.8, 0, 2)];
        let c = Calibration {
            kind: Kind::Copy,
            points: vec![],
            crossover_cold: None,
            crossover_hot: None,
            recommended: None,
            builtin: 8 << 20,
            glibc: None,
            library: Library {
                nt: lib,
                agrees: None,
                rep: LibrarySweep::empty(),
                rep_hot: LibrarySweep::empty(),
                rep_builtin: usize::MAX,
                ms: 60.0,
            },
        };
        let t = print(&c);
        assert!(t.contains("calibrate() steady"), "{t}");
        assert!(t.contains("1.20x 2/2") && t.contains("0.80x 0/2"), "{t}");
    }

    #[test]
    fn agreement_is_within_2x() {
        assert!(within_2x(2 << 20, 4 << 20));
        assert!(within_2x(4 << 20, 2 << 20));
        assert!(!within_2x(2 << 20, 8 << 20));
        assert!(within_2x(3, 3));
    }

    #[test]
    fn recommendation_prefers_hot() {
        assert_eq!(recommend(Some(16 << 10), Some(8 << 20)), Some(8 << 20));
        assert_eq!(recommend(Some(16 << 10), None), Some(64 << 10));
        assert_eq!(recommend(None, None), None);
    }
}
