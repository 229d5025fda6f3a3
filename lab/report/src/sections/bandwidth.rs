//! Sections 2 and 6: copy and fill bandwidth of every mode against glibc's `memcpy` and
//! `memset`, into hot and cold destinations. One module for both: the tables differ only in
//! their operations and sizes.

use std::fmt::Write as _;

use crate::findings::{Findings, Place, What};
use crate::measure::{self, Cell, Dest, Kind};
use crate::plot::{Figure, Panel, Series, Style};
use crate::session::Session;
use crate::stats::NOISY_SPREAD;
use crate::text::{self, range, ratio, size};

/// Measures and prints section 2 (`Kind::Copy`) or 6 (`Kind::Fill`).
pub fn section(s: &mut Session, kind: Kind) -> Vec<Cell> {
    let (what, heading, baseline, sizes) = match kind {
        Kind::Copy => (
            "2. copy bandwidth",
            "2. Copy bandwidth",
            "memcpy (copy_from_slice)",
            &s.plan.sizes,
        ),
        Kind::Fill => (
            "6. fill bandwidth",
            "6. Fill bandwidth (cachecopy::zero)",
            "memset (slice.fill(0))",
            &s.plan.fill_sizes,
        ),
    };
    s.start(what);
    let tick = s.ticker();
    let cells = measure::table(
        &kind.ops(),
        sizes,
        s.dst_offset,
        s.src.as_slice(),
        &mut s.arena,
        s.plan.samples,
        s.plan.sample_bytes,
        tick,
    );
    let mut text = print(heading, baseline, &cells, s.arena.len());
    if s.dst_offset != 0 {
        text = text.replacen(
            "\n",
            &format!(
                " (every destination {} bytes past a slot's start)\n",
                s.dst_offset
            ),
            1,
        );
    }
    s.print(&text);
    register(&mut s.findings, kind, &cells, s.dst_offset);
    cells
}

/// Adds every mode's ratio to glibc (`Temporal` and `Auto` held to it), and `Auto`'s to the
/// better of `Temporal` and `NonTemporal` at the same size and destination.
fn register(out: &mut Findings, kind: Kind, cells: &[Cell], offset: usize) {
    let (section, what, base, place) = match kind {
        Kind::Copy => ("2", "copy", "memcpy", What::Copy),
        Kind::Fill => ("6", "zero", "memset", What::Fill),
    };
    let shape = |c: &Cell| {
        let at = if offset == 0 {
            String::new()
        } else {
            format!(" +{offset}")
        };
        format!("{} {}{at}", size(c.size), c.dest.name())
    };
    for c in cells {
        if let Some(r) = c.ratio {
            let f = out.add(section, format!("{what} {}", c.op), base, shape(c), r);
            f.target = matches!(c.op, "Temporal" | "Auto");
            // `FlushCache` is chosen for what it leaves in the cache, never for speed.
            if c.op != "FlushCache" {
                f.place = Place::glibc(place, c.op, c.size, c.dest);
            }
        }
    }
    for auto in cells.iter().filter(|c| c.op == "Auto") {
        let find = |op: &str| {
            cells
                .iter()
                .find(|c| c.op == op && c.size == auto.size && c.dest == auto.dest)
        };
        if let (Some(t), Some(nt)) = (find("Temporal"), find("NonTemporal")) {
            out.add_vs_better(
                section,
                format!("{what} Auto"),
                shape(auto),
                &auto.samples,
                ("Temporal", &t.samples),
                ("NonTemporal", &nt.samples),
            );
        }
    }
}

/// The section's plot: GB/s against size, a line per op (glibc's grey), a panel per destination;
/// `threshold` marks where `Auto` switches.
pub fn figure(kind: Kind, cells: &[Cell], threshold: usize, title: String) -> Figure {
    let ops = text::distinct(cells.iter().map(|c| c.op));
    let panels = Dest::ALL
        .into_iter()
        .map(|dest| Panel {
            caption: match dest {
                Dest::Hot => "hot destination (cached when it fits)".into(),
                Dest::Cold => "cold destination (not cached)".into(),
            },
            series: ops
                .iter()
                .map(|&op| Series {
                    name: match op {
                        "memcpy" | "memset" => format!("glibc {op}"),
                        _ => op.to_string(),
                    },
                    style: Style::of_mode(op),
                    points: cells
                        .iter()
                        .filter(|c| c.dest == dest && c.op == op)
                        .map(|c| (c.size, c.gbps.median))
                        .collect(),
                    extra: Vec::new(),
                })
                .collect(),
        })
        .collect();
    let what = match kind {
        Kind::Copy => "copy",
        Kind::Fill => "fill",
    };
    Figure {
        title,
        x_desc: format!("{what} size (log scale)"),
        y_desc: "GB/s, median (log scale)".into(),
        panels,
        mark: Some((threshold, format!("Auto threshold {}", size(threshold)))),
        extra: None,
    }
}

/// A table per destination: a row per size, a column per op, `median (min-max)` and the ratio
/// to the baseline.
fn print(heading: &str, baseline: &str, cells: &[Cell], arena: usize) -> String {
    let ops = text::distinct(cells.iter().map(|c| c.op));
    let sizes = text::distinct(cells.iter().map(|c| c.size));
    let cols: Vec<(&str, &str)> = ops.iter().map(|&op| (op, op)).collect();
    let mut s = format!(
        "{heading}, GB/s: median (min-max) over interleaved rounds; ratio = op / {baseline}, \
         paired per round; ~ = noisy (spread > {:.0} % of the median)\n",
        NOISY_SPREAD * 100.0
    );
    for dest in Dest::ALL {
        let _ = writeln!(
            s,
            "   {} destination{}",
            dest.name(),
            match dest {
                Dest::Hot => " (the same buffer every time)".to_string(),
                Dest::Cold => format!(" (scattered over a {} arena)", size(arena)),
            }
        );
        s.push_str(&text::by_size("size", &sizes, &cols, |sz, op| {
            let c = cells
                .iter()
                .find(|c| c.size == sz && c.dest == dest && c.op == op)?;
            Some(match &c.ratio {
                None => range(&c.gbps),
                Some(r) => format!("{} {}", range(&c.gbps), ratio(r)),
            })
        }));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    #[test]
    fn tables_show_every_destination_op_and_ratio() {
        let cell = |dest, op, ratio: Option<f64>| Cell {
            size: 4096,
            dest,
            op,
            gbps: Summary::of(&[2.0]).unwrap(),
            ratio: ratio.and_then(|r| Summary::of(&[r])),
            samples: vec![2.0],
        };
        let cells = [
            cell(Dest::Hot, "memcpy", None),
            cell(Dest::Hot, "Auto", Some(1.5)),
            cell(Dest::Cold, "memcpy", None),
        ];
        let t = print("2. Copy bandwidth", "memcpy", &cells, 1 << 20);
        assert!(t.starts_with("2. Copy bandwidth, GB/s"), "{t}");
        assert!(t.contains("hot destination (the same buffer every time)"));
        assert!(t.contains("cold destination (scattered over a 1 MiB arena)"));
        assert!(t.contains("2.00 (2.00-2.00) 1.50x"), "{t}");
        assert_eq!(t.matches("4 KiB").count(), 2, "{t}");
    }
}
