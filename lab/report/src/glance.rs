//! The report's first screen: what to use on this machine, at a glance, in at most [`LINES`]
//! lines, printed before the sections (which measure first and print after it).
//!
//! It reads the findings the sections registered with a [`Place`] (a mode against the C
//! library's own function: `copy_raw` against `memcpy`, a frame builder against two `memcpy`s)
//! and groups them by operation, size band ([`Band`]) and destination (hot: cached; cold: not).
//! In each group it names the mode to use ([`pick`]) and what it is worth: the geometric mean of
//! its ratios to glibc over the group's shapes, the lowest of them, and, when the run measured
//! AOCL-LibMem, the same against LibMem. Then the tuning line `cachecopy::tune::calibrate()` found,
//! how many shapes the closing section lists as slower than their baseline, and the worst three.
//! `--html` shows the same figures as tables (`crate::html`).

use std::collections::HashMap;

use crate::findings::{Against, Finding, Place, What, SLOWER};
use crate::machine::Machine;
use crate::measure::Dest;
use crate::text::{self, size};

/// The most lines the first screen takes.
pub const LINES: usize = 40;

/// How many of the slowest shapes the screen names.
pub const WORST: usize = 3;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// A size band: calls of up to 1 KiB (where the cost of a call is its fixed part), up to
/// 1 MiB (in the L2 or near it), up to the last-level cache, and past it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Band {
    Small,
    Medium,
    Large,
    PastLlc,
}

impl Band {
    pub const ALL: [Band; 4] = [Band::Small, Band::Medium, Band::Large, Band::PastLlc];

    /// The band of a call of `bytes` on a machine whose last-level cache holds `llc` bytes.
    pub fn of(bytes: usize, llc: usize) -> Band {
        if bytes <= KIB {
            Band::Small
        } else if bytes <= MIB {
            Band::Medium
        } else if bytes <= llc {
            Band::Large
        } else {
            Band::PastLlc
        }
    }

    /// `up to 1 KiB`, `1 KiB-1 MiB`, `1 MiB-16 MiB`, `past 16 MiB`.
    pub fn label(self, llc: usize) -> String {
        match self {
            Band::Small => "up to 1 KiB".into(),
            Band::Medium => "1 KiB-1 MiB".into(),
            Band::Large => format!("1 MiB-{}", size(llc)),
            Band::PastLlc => format!("past {}", size(llc.max(MIB))),
        }
    }
}

/// The mode the screen names for one group, and what it is worth.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    pub mode: &'static str,
    /// The geometric mean of its median ratios to glibc (glibc's time ÷ its own).
    pub vs_glibc: f64,
    /// The lowest of them.
    pub lowest: f64,
    /// How many shapes they are.
    pub shapes: usize,
    /// The geometric mean of its ratios to LibMem, where LibMem was measured in the group.
    pub vs_libmem: Option<f64>,
}

/// One line of the table: an operation in a size band.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub what: What,
    /// The band's label (for frames: the frame's size).
    pub size: String,
    pub hot: Option<Pick>,
    pub cold: Option<Pick>,
}

/// The first screen's figures.
#[derive(Clone, Debug)]
pub struct Glance {
    /// `cachecopy 0.1.0 report, 2026-12-07 (--quick)`.
    pub title: String,
    /// The machine in one line.
    pub machine: String,
    /// `--only`: the sections run, when not all.
    pub only: Option<Vec<String>>,
    pub rows: Vec<Row>,
    /// Whether any group has figures against LibMem.
    pub libmem: bool,
    /// `CACHECOPY_TUNE=...` as `cachecopy::tune::calibrate()` found it; `None` when the run did not
    /// calibrate (`--only` without section 7).
    pub tune: Option<String>,
    /// How many figures are held to their baseline.
    pub held: usize,
    /// Those below [`SLOWER`] of it (section 10's list), the lowest first.
    pub slower: Vec<Finding>,
}

/// The machine in one line: CPU, CPUs, backend, caches, and where glibc starts streaming.
pub fn machine_line(m: &Machine) -> String {
    let cpu = if m.brand.is_empty() {
        &m.vendor
    } else {
        &m.brand
    };
    let opt = |v: Option<usize>| v.map_or("?".to_string(), size);
    let glibc = m
        .glibc
        .as_ref()
        .map(|g| format!(", glibc from {}", size(g.nt_threshold)))
        .unwrap_or_default();
    format!(
        "{cpu} ({}, {} CPUs, {}); L2 {}, L3 {}; Auto streams from {}{glibc}",
        m.arch,
        m.cpus,
        m.active,
        opt(m.l2),
        opt(m.l3),
        size(m.nt_threshold)
    )
}

/// The last-level cache the bands are cut at: the L3, else the L2, else 32 MiB.
pub fn llc(m: &Machine) -> usize {
    m.l3.or(m.l2).unwrap_or(32 * MIB)
}

/// Whether a baseline is glibc's function.
fn glibc(baseline: &str) -> bool {
    matches!(baseline, "memcpy" | "memset" | "memmove")
}

/// Geometric mean; `None` when empty.
fn geomean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// The mode to use among one group's figures (every [`Place`] of one operation, band and
/// destination): of the modes measured on at least half as many shapes as the most measured one
/// (so that a mode timed at one size of the band is not judged by it), `Auto` if the group has
/// it, else the first registered; another replaces it when its ratios to glibc on the shapes
/// both were measured at are higher by more than the margin section 10 allows (1 / [`SLOWER`]:
/// 3 %) in geometric mean. `None` without figures against glibc.
pub fn pick(figures: &[&Finding]) -> Option<Pick> {
    let of = |p: &Place| p.against == Against::Glibc;
    let placed = |f: &&Finding| f.place.as_ref().is_some_and(of);
    let vs_glibc: Vec<&Finding> = figures.iter().copied().filter(placed).collect();
    let mode = |f: &Finding| f.place.as_ref().map_or("", |p| p.mode);
    let mut modes = text::distinct(vs_glibc.iter().map(|f| mode(f)));
    if let Some(i) = modes.iter().position(|&m| m == "Auto") {
        let auto = modes.remove(i);
        modes.insert(0, auto);
    }
    let count = |m: &str| vs_glibc.iter().filter(|f| mode(f) == m).count();
    let most = modes.iter().map(|m| count(m)).max()?;
    modes.retain(|m| 2 * count(m) >= most);
    let by_shape = |m: &str| -> HashMap<(&str, &str), f64> {
        vs_glibc
            .iter()
            .filter(|f| mode(f) == m)
            .map(|f| ((f.section.as_str(), f.shape.as_str()), f.ratio.median))
            .collect()
    };
    let mut best = modes[0];
    for &m in &modes[1..] {
        let (ours, theirs) = (by_shape(best), by_shape(m));
        let gains: Vec<f64> = theirs
            .iter()
            .filter_map(|(k, r)| ours.get(k).map(|o| r / o))
            .collect();
        if geomean(&gains).is_some_and(|g| g > 1.0 / SLOWER) {
            best = m;
        }
    }
    let ratios: Vec<f64> = vs_glibc
        .iter()
        .filter(|f| mode(f) == best)
        .map(|f| f.ratio.median)
        .collect();
    let libmem: Vec<f64> = figures
        .iter()
        .filter(|f| {
            f.place
                .as_ref()
                .is_some_and(|p| p.against == Against::LibMem && p.mode == best)
        })
        .map(|f| f.ratio.median)
        .collect();
    Some(Pick {
        mode: best,
        vs_glibc: geomean(&ratios)?,
        lowest: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        shapes: ratios.len(),
        vs_libmem: geomean(&libmem),
    })
}

impl Glance {
    /// The screen of a run: `findings` are every figure it registered, `llc` the last-level
    /// cache's bytes (where the large band ends), `tune` the line `cachecopy::tune::calibrate()`
    /// printed, if it ran.
    pub fn new(
        title: String,
        machine: String,
        llc: usize,
        findings: &[Finding],
        tune: Option<String>,
        only: Option<Vec<String>>,
    ) -> Glance {
        let mut rows = Vec::new();
        for what in What::ALL {
            let of_what: Vec<&Finding> = findings
                .iter()
                .filter(|f| f.place.as_ref().is_some_and(|p| p.what == what))
                .collect();
            let place = |f: &Finding| f.place.clone().expect("filtered");
            let bands: Vec<Band> = if what == What::Frame {
                // Frames have one size: one row.
                vec![Band::Small]
            } else {
                Band::ALL.to_vec()
            };
            for band in bands {
                let group = |dest: Dest| -> Vec<&Finding> {
                    of_what
                        .iter()
                        .copied()
                        .filter(|f| {
                            let p = place(f);
                            p.dest == dest
                                && (what == What::Frame || Band::of(p.bytes, llc) == band)
                        })
                        .collect()
                };
                let (hot, cold) = (pick(&group(Dest::Hot)), pick(&group(Dest::Cold)));
                if hot.is_none() && cold.is_none() {
                    continue;
                }
                let size = match (what, of_what.first()) {
                    (What::Frame, Some(f)) => format!("{} each", text::size(place(f).bytes)),
                    _ => band.label(llc),
                };
                rows.push(Row {
                    what,
                    size,
                    hot,
                    cold,
                });
            }
        }
        let libmem = rows
            .iter()
            .flat_map(|r| [&r.hot, &r.cold])
            .any(|p| p.as_ref().is_some_and(|p| p.vs_libmem.is_some()));
        let mut slower: Vec<Finding> = findings.iter().filter(|f| f.slower()).cloned().collect();
        slower.sort_by(|a, b| a.ratio.median.total_cmp(&b.ratio.median));
        Glance {
            title,
            machine,
            only,
            rows,
            libmem,
            tune,
            held: findings.iter().filter(|f| f.target).count(),
            slower,
        }
    }

    /// How many of the slower shapes are against glibc's own function.
    pub fn slower_than_glibc(&self) -> usize {
        self.slower.iter().filter(|f| glibc(&f.baseline)).count()
    }

    /// The slowest shapes, at most [`WORST`].
    pub fn worst(&self) -> &[Finding] {
        &self.slower[..self.slower.len().min(WORST)]
    }

    /// The sentence before the table.
    pub fn legend(&self) -> String {
        let theirs = match &self.only {
            Some(only) => format!(" (of sections {} alone)", only.join(", ")),
            None => String::new(),
        };
        let libmem = if self.libmem { " (and LibMem's)" } else { "" };
        format!(
            "The mode to use here{theirs} by size and destination (hot: cached; cold: not), and \
             its speed ÷ glibc's{libmem}: the geometric mean over the band's shapes (above \
             1.00x: faster), and the lowest"
        )
    }

    /// The tuning lines: what to set, or that there is nothing to set.
    pub fn tuning(&self) -> Vec<String> {
        match self.tune.as_deref() {
            None => vec!["Tuning: this run did not calibrate (sections 5, 5b and 7c)".into()],
            Some(line) if line.ends_with('=') => vec![format!(
                "Tuning: cachecopy::tune::calibrate() kept every built-in rule here ({line} sets nothing)"
            )],
            Some(line) => vec![
                "Tuning to keep (what cachecopy::tune::calibrate() found; in a unit file, Environment= \
                 and the line):"
                    .into(),
                format!("   {line}"),
            ],
        }
    }

    /// The sentence on section 10.
    pub fn slower_line(&self) -> String {
        if self.slower.is_empty() {
            return format!(
                "Slower than the baseline here: none of {} shapes below {SLOWER:.2}x (section 10)",
                self.held
            );
        }
        format!(
            "Slower than the baseline here: {} of {} shapes below {SLOWER:.2}x (section 10; {} \
             against glibc), the worst:",
            self.slower.len(),
            self.held,
            self.slower_than_glibc()
        )
    }

    /// The table: a header and a row per operation and band, hot then cold.
    fn table(&self) -> String {
        let mut header: Vec<String> = vec!["what".into(), "size".into()];
        for dest in ["hot", "cold"] {
            header.extend([format!("{dest}: use"), "÷ glibc".into(), "lowest".into()]);
            if self.libmem {
                header.push("÷ LibMem".into());
            }
        }
        let mut rows = Vec::new();
        let mut last = None;
        for r in &self.rows {
            let what = if last == Some(r.what) {
                String::new()
            } else {
                r.what.plural().to_string()
            };
            last = Some(r.what);
            let mut row = vec![what, r.size.clone()];
            for p in [&r.hot, &r.cold] {
                match p {
                    Some(p) => {
                        row.extend([
                            p.mode.to_string(),
                            format!("{:.2}x", p.vs_glibc),
                            format!("{:.2}x", p.lowest),
                        ]);
                        if self.libmem {
                            row.push(p.vs_libmem.map_or(String::new(), |r| format!("{r:.2}x")));
                        }
                    }
                    None => {
                        row.extend(["-".to_string(), String::new(), String::new()]);
                        if self.libmem {
                            row.push(String::new());
                        }
                    }
                }
            }
            rows.push(row);
        }
        let mode_cols = if self.libmem { [2, 6] } else { [2, 5] };
        text::aligned_grid(&header, &rows, |i| i < 2 || mode_cols.contains(&i))
    }

    /// The first screen's text, at most [`LINES`] lines, ending in a blank line.
    pub fn text(&self) -> String {
        let mut s = format!("{}\n   {}\n\n", self.title, self.machine);
        if self.rows.is_empty() {
            s.push_str("No figure against glibc in the sections run.\n");
        } else {
            for line in wrap(&self.legend(), 100) {
                s.push_str(&line);
                s.push('\n');
            }
            s.push_str(&self.table());
        }
        s.push('\n');
        for line in self.tuning() {
            s.push_str(&line);
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.slower_line());
        s.push('\n');
        for f in self.worst() {
            s.push_str(&format!(
                "   {:>6}  {} {} against {}, {}\n",
                text::ratio(&f.ratio),
                f.section,
                f.op,
                f.against(),
                f.shape
            ));
        }
        match &self.only {
            None => s.push_str(
                "\nThe sections follow: 1 the machine, 2-6 bandwidth, calibration and pollution, \
                 7 frames, 8 small calls,\n9 moves, 10 every shape slower than its baseline.\n\n",
            ),
            Some(only) => s.push_str(&format!(
                "\nThe sections follow: 1 the machine, {}, 10 every shape slower than its \
                 baseline.\n\n",
                only.join(", ")
            )),
        }
        debug_assert!(s.lines().count() <= LINES, "{s}");
        s
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Findings;
    use crate::stats::summary;

    /// A finding of `mode` doing `what` at `bytes` into `dest`, against glibc unless `libmem`.
    fn fig(
        f: &mut Findings,
        what: What,
        mode: &'static str,
        bytes: usize,
        dest: Dest,
        ratio: f64,
        libmem: bool,
    ) {
        let shape = format!("{} {}", size(bytes), dest.name());
        let base = if libmem { "LibMem memcpy" } else { "memcpy" };
        f.add("2", format!("copy {mode}"), base, shape, summary(&[ratio]))
            .place = Some(Place {
            what,
            mode,
            bytes,
            dest,
            against: if libmem {
                Against::LibMem
            } else {
                Against::Glibc
            },
        });
    }

    fn picked(f: &Findings) -> Option<Pick> {
        pick(&f.all().iter().collect::<Vec<_>>())
    }

    #[test]
    fn auto_is_named_unless_another_mode_is_clearly_faster() {
        let mut f = Findings::default();
        for (bytes, t, a) in [(4096, 1.00, 0.99), (65536, 1.10, 1.08)] {
            fig(&mut f, What::Copy, "Temporal", bytes, Dest::Hot, t, false);
            fig(&mut f, What::Copy, "Auto", bytes, Dest::Hot, a, false);
        }
        // Within 3 % of Temporal: Auto, worth its own figures.
        let p = picked(&f).unwrap();
        assert_eq!(p.mode, "Auto");
        assert!((p.vs_glibc - (0.99f64 * 1.08).sqrt()).abs() < 1e-12);
        assert_eq!((p.lowest, p.shapes, p.vs_libmem), (0.99, 2, None));
        // NonTemporal 1.5x on the same shapes: it is named.
        for bytes in [4096, 65536] {
            fig(
                &mut f,
                What::Copy,
                "NonTemporal",
                bytes,
                Dest::Hot,
                1.5,
                false,
            );
        }
        let p = picked(&f).unwrap();
        assert_eq!((p.mode, p.vs_glibc, p.lowest), ("NonTemporal", 1.5, 1.5));
    }

    #[test]
    fn a_mode_measured_at_few_shapes_is_not_named_by_them() {
        let mut f = Findings::default();
        for bytes in [1, 8, 64, 512] {
            fig(&mut f, What::Copy, "Auto", bytes, Dest::Cold, 1.0, false);
        }
        // One shape, far faster: not enough of the band to judge by.
        fig(
            &mut f,
            What::Copy,
            "NonTemporal",
            64,
            Dest::Cold,
            3.0,
            false,
        );
        assert_eq!(picked(&f).unwrap().mode, "Auto");
        // Without Auto, the first registered mode is preferred; a faster one replaces it.
        let mut f = Findings::default();
        for (bytes, t, nt) in [(1 << 20, 1.0, 1.02), (4 << 20, 1.0, 1.03)] {
            fig(&mut f, What::Move, "Temporal", bytes, Dest::Cold, t, false);
            fig(
                &mut f,
                What::Move,
                "NonTemporal",
                bytes,
                Dest::Cold,
                nt,
                false,
            );
        }
        assert_eq!(picked(&f).unwrap().mode, "Temporal", "2.5 % is a tie");
        fig(
            &mut f,
            What::Move,
            "Temporal",
            8 << 20,
            Dest::Cold,
            1.0,
            false,
        );
        fig(
            &mut f,
            What::Move,
            "NonTemporal",
            8 << 20,
            Dest::Cold,
            1.2,
            false,
        );
        assert_eq!(picked(&f).unwrap().mode, "NonTemporal");
    }

    #[test]
    fn libmem_figures_go_with_the_mode_named() {
        let mut f = Findings::default();
        fig(&mut f, What::Copy, "Temporal", 100, Dest::Hot, 1.2, false);
        fig(&mut f, What::Copy, "Auto", 100, Dest::Hot, 1.19, false);
        fig(&mut f, What::Copy, "Temporal", 100, Dest::Hot, 0.5, true);
        fig(&mut f, What::Copy, "Auto", 100, Dest::Hot, 0.9, true);
        let p = picked(&f).unwrap();
        assert_eq!((p.mode, p.vs_libmem), ("Auto", Some(0.9)));
        // Figures against LibMem alone name nothing.
        let mut f = Findings::default();
        fig(&mut f, What::Copy, "Auto", 100, Dest::Hot, 0.9, true);
        assert_eq!(picked(&f), None);
    }

    #[test]
    fn bands_cut_at_1_kib_1_mib_and_the_llc() {
        let llc = 16 << 20;
        assert_eq!(Band::of(1, llc), Band::Small);
        assert_eq!(Band::of(1024, llc), Band::Small);
        assert_eq!(Band::of(1025, llc), Band::Medium);
        assert_eq!(Band::of(1 << 20, llc), Band::Medium);
        assert_eq!(Band::of(16 << 20, llc), Band::Large);
        assert_eq!(Band::of((16 << 20) + 1, llc), Band::PastLlc);
        assert_eq!(Band::Large.label(llc), "1 MiB-16 MiB");
        assert_eq!(Band::PastLlc.label(llc), "past 16 MiB");
    }

    /// Every operation in every band, both destinations, against glibc and LibMem, and a long
    /// list of slower shapes: the most the screen can hold.
    fn everything() -> Glance {
        let mut f = Findings::default();
        let llc = 32 << 20;
        for what in What::ALL {
            let modes: &[&'static str] = match what {
                What::Frame => &["Temporal", "NonTemporal", "NT batched", "NT gather"],
                _ => &["Temporal", "NonTemporal", "Auto"],
            };
            let sizes: &[usize] = match what {
                What::Frame => &[1514],
                _ => &[64, 4096, 4 << 20, 256 << 20],
            };
            for &bytes in sizes {
                for dest in Dest::ALL {
                    for (k, &mode) in modes.iter().enumerate() {
                        let r = 0.5 + k as f64 * 0.1 + bytes.ilog2() as f64 / 100.0;
                        fig(&mut f, what, mode, bytes, dest, r, false);
                        fig(&mut f, what, mode, bytes, dest, r * 0.9, true);
                    }
                }
            }
        }
        Glance::new(
            "cachecopy 0.1.0 report, 2026-12-07".into(),
            "a machine".into(),
            llc,
            f.all(),
            Some("CACHECOPY_TUNE=nt=16M,fill_nt=2M,rep_movsb=1K".into()),
            None,
        )
    }

    #[test]
    fn the_screen_holds_everything_in_40_lines() {
        let g = everything();
        assert_eq!(g.rows.len(), 3 * 4 + 1, "a row per band, one for frames");
        assert!(g.libmem);
        let t = g.text();
        assert!(
            t.lines().count() <= LINES,
            "{} lines:\n{t}",
            t.lines().count()
        );
        assert!(
            t.starts_with("cachecopy 0.1.0 report, 2026-12-07\n   a machine\n"),
            "{t}"
        );
        assert!(t.contains("hot: use"), "{t}");
        assert!(t.contains("÷ LibMem"), "{t}");
        assert!(
            t.contains("\n   CACHECOPY_TUNE=nt=16M,fill_nt=2M,rep_movsb=1K\n"),
            "{t}"
        );
        assert!(t.contains("   frames  1.5 KiB each  NT gather "), "{t}");
        // Each operation named once, on its first row.
        assert_eq!(t.matches("   copies  ").count(), 1, "{t}");
        assert!(t.contains("   moves   up to 1 KiB   Auto "), "{t}");
        assert!(t.contains("\n           past 32 MiB   Auto "), "{t}");
        // Every shape's ratio is below 0.97x: all listed, three named.
        assert_eq!(g.worst().len(), WORST);
        assert!(
            t.contains(&format!("{} of {}", g.slower.len(), g.held)),
            "{t}"
        );
    }

    #[test]
    fn the_worst_three_are_the_lowest_held_ones() {
        let mut f = Findings::default();
        for (k, r) in [0.9, 0.5, 1.2, 0.7, 0.95, 0.6].into_iter().enumerate() {
            f.add(
                "8a",
                "copy Auto",
                "memcpy",
                format!("{k} B hot"),
                summary(&[r]),
            );
        }
        f.add(
            "2",
            "copy NonTemporal",
            "memcpy",
            "1 KiB hot",
            summary(&[0.1]),
        )
        .target = false;
        f.add("8c", "copy Auto", "Temporal", "9 B hot", summary(&[0.8]));
        let g = Glance::new("t".into(), "m".into(), 1 << 20, f.all(), None, None);
        let worst: Vec<f64> = g.worst().iter().map(|f| f.ratio.median).collect();
        assert_eq!(worst, [0.5, 0.6, 0.7], "NonTemporal is not held");
        assert_eq!((g.slower.len(), g.held, g.slower_than_glibc()), (6, 7, 5));
        let t = g.text();
        assert!(
            t.contains("6 of 7 shapes below 0.97x (section 10; 5 against glibc)"),
            "{t}"
        );
        assert!(
            t.contains("\n    0.50x  8a copy Auto against memcpy, 1 B hot\n"),
            "{t}"
        );
        assert!(t.contains("No figure against glibc"), "{t}");
        assert!(t.contains("did not calibrate"), "{t}");
        // Fewer than three, or none.
        let g = Glance::new("t".into(), "m".into(), 1 << 20, &f.all()[2..4], None, None);
        assert_eq!(g.worst().len(), 1);
        let g = Glance::new("t".into(), "m".into(), 1 << 20, &f.all()[2..3], None, None);
        assert!(g.worst().is_empty());
        assert!(g.text().contains("none of 1 shapes"));
    }

    #[test]
    fn an_empty_tuning_line_says_so() {
        let mut g = everything();
        g.tune = Some("CACHECOPY_TUNE=".into());
        assert!(g
            .text()
            .contains("kept every built-in rule here (CACHECOPY_TUNE= sets nothing)"));
    }
}
