//! Section 5: where `Auto` should switch to streaming stores on this machine, measured, for
//! copies and for fills (a fill has no source stream, so its crossover is its own).

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
    /// The recommended `CACHECOPY_NT_THRESHOLD`: see [`recommend`].
    pub recommended: Option<usize>,
    /// The threshold `Auto` uses now.
    pub builtin: usize,
    /// glibc `memcpy`'s own switch to streaming stores (copies only).
    pub glibc: Option<usize>,
    /// What the library's own `cachecopy::calibrate()` found on this run (the function
    /// `CACHECOPY_NT_THRESHOLD=calibrate` runs at start-up): its threshold for this kind, or
    /// `None` when it kept the built-in rule.
    pub library: Option<usize>,
    /// How long `cachecopy::calibrate()` took, in milliseconds.
    pub library_ms: f64,
}

/// The smallest size from which streaming does not lose, given (size, NonTemporal ÷ Temporal)
/// summaries: the start of the longest run of sizes, up to the largest, where no point loses.
/// A point loses when its median is below 1, except a noisy point within 10 % of parity (on a
/// shared VM one preempted round moves a median by that much). `None` when the largest size
/// loses. Requiring the whole tail keeps one lucky point below the real crossover from moving it.
pub fn crossover(points: &[(usize, Summary)]) -> Option<usize> {
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.0);
    let loses = |r: &Summary| r.median < 1.0 && !(r.noisy && r.median >= 0.9);
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

/// The threshold to recommend: the hot crossover, the size from which streaming is no slower
/// even when the destination was cached, so `Auto` never loses to `Temporal` by streaming;
/// below it a cached destination favours temporal stores. When streaming never catches up with
/// a hot destination in the measured range, the cold crossover times 4 bounds it instead (that
/// many bytes are already past what the caches keep).
pub fn recommend(cold: Option<usize>, hot: Option<usize>) -> Option<usize> {
    hot.or(cold.map(|c| c.saturating_mul(4)))
}

/// Measures and prints section 5 (`Kind::Copy`) or 5b (`Kind::Fill`).
pub fn section(s: &mut Session, kind: Kind) -> Calibration {
    s.start(match kind {
        Kind::Copy => "5. Auto calibration",
        Kind::Fill => "5b. Auto calibration, fills",
    });
    let tick = s.ticker();
    let p = &s.plan;
    let glibc = s.machine.glibc.as_ref().map(|g| g.nt_threshold);
    let lib = cachecopy::calibrate();
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
    c.library = match kind {
        Kind::Copy => lib.copy,
        Kind::Fill => lib.fill,
    };
    c.library_ms = lib.elapsed.as_secs_f64() * 1e3;
    s.print(&print(&c));
    c
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
            let r = measure::interleaved(&ops, size, dest, src, arena, samples, runs);
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
        library: None,
        library_ms: 0.0,
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
    let mut sizes = text::distinct(c.points.iter().map(|p| p.size));
    sizes.sort_unstable();
    let cols = [("cold dst", Dest::Cold), ("hot dst", Dest::Hot)];
    s.push_str(&text::by_size("size", &sizes, &cols, |sz, d| {
        let p = c.points.iter().find(|p| p.size == sz && p.dest == d)?;
        Some(ratio(&p.ratio))
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
            "{}={r}  ({}: from here streaming is no slower even into a cached destination)",
            c.kind.env(),
            size(r)
        ),
        None => "none: streaming never won in the measured range".to_string(),
    };
    field(&mut s, "recommended", recommended);
    let builtin = format!(
        "{} (cachecopy::{}())",
        size(c.builtin),
        c.kind.threshold().0
    );
    field(&mut s, "built-in", builtin);
    let library = match c.library {
        Some(t) => format!(
            "{} in {:.0} ms (cachecopy::calibrate(); CACHECOPY_NT_THRESHOLD=calibrate applies it at \
             start-up)",
            size(t),
            c.library_ms
        ),
        None => format!(
            "undecided in {:.0} ms: too noisy, the built-in rule stays (cachecopy::calibrate())",
            c.library_ms
        ),
    };
    field(&mut s, "calibrate()", library);
    if let Some(g) = c.glibc {
        let glibc = format!("{} (memcpy's own switch to streaming stores)", size(g));
        field(&mut s, "glibc", glibc);
    }
    s.push('\n');
    s
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
        assert_eq!(crossover(&[(1, at(2.0)), (2, at(0.99))]), None);
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
            library: Some(2 << 20),
            library_ms: 60.0,
        };
        let t = print(&c);
        assert!(t.starts_with("5b. Auto calibration, fills"), "{t}");
        // Sorted by size; a missing point is an empty cell.
        assert!(t.find("4 KiB").unwrap() < t.find("8 KiB").unwrap(), "{t}");
        assert!(t.contains("0.50x    0.25x\n"), "{t}");
        assert!(t.contains("1.25x"), "{t}");
        assert!(t.contains("hot destination none in range"), "{t}");
        assert!(
            t.contains("CACHECOPY_FILL_NT_THRESHOLD=32768  (32 KiB"),
            "{t}"
        );
        assert!(t.contains("1 MiB (cachecopy::fill_nt_threshold())"), "{t}");
        assert!(!t.contains("   glibc  "), "{t}");
    }

    #[test]
    fn recommendation_prefers_hot() {
        assert_eq!(recommend(Some(16 << 10), Some(8 << 20)), Some(8 << 20));
        assert_eq!(recommend(Some(16 << 10), None), Some(64 << 10));
        assert_eq!(recommend(None, None), None);
    }
}
