//! `cachecopy`: what each copy mode is worth on this machine. `cargo run --release` runs
//! `cachecopy report`: the machine, copy and fill bandwidth per mode, the MSG_NTCOPY ring
//! experiment, cache pollution and the `Auto` calibration, as text, JSON and SVG; `--help` lists
//! the flags.

mod calibrate;
mod cli;
mod machine;
mod measure;
mod plot;
mod pollution;
mod seed;
mod stats;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use cli::{Command, Options, Scale};
use machine::{size, Machine};
use measure::{Arena, Buf, Cell, Dest, Op};
use stats::Summary;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Everything a run measured: what `--json` writes.
#[derive(Serialize)]
pub struct Report {
    pub cachecopy: &'static str,
    pub date: String,
    pub scale: &'static str,
    pub iterations: usize,
    pub seconds: f64,
    pub machine: Machine,
    pub bandwidth: Vec<Cell>,
    pub fill: Vec<Cell>,
    pub seed: seed::Seed,
    pub pollution: pollution::Pollution,
    pub calibration: calibrate::Calibration,
    pub fill_calibration: calibrate::Calibration,
}

/// The sizes and sample counts of one scale.
struct Plan {
    sizes: Vec<usize>,
    samples: usize,
    sample_bytes: usize,
    fill_sizes: Vec<usize>,
    rings: Vec<usize>,
    chunks: Vec<usize>,
    seed_bytes: usize,
    seed_rounds: usize,
    victims: Vec<usize>,
    pollution_copy: usize,
    pollution_samples: usize,
    calib_sizes: Vec<usize>,
    calib_samples: usize,
}

fn geometric(from: usize, to: usize, step: usize) -> Vec<usize> {
    std::iter::successors(Some(from), |&s| Some(s * step))
        .take_while(|&s| s <= to)
        .collect()
}

impl Plan {
    fn new(o: &Options) -> Plan {
        let mut p = match o.scale {
            Scale::Full => Plan {
                sizes: geometric(64, 256 * MIB, 4),
                samples: 11,
                sample_bytes: 16 * MIB,
                fill_sizes: geometric(64, 256 * MIB, 4),
                rings: vec![2 * MIB, 64 * MIB],
                chunks: vec![512 * KIB, 128 * KIB],
                seed_bytes: 512 * MIB,
                seed_rounds: 5,
                victims: vec![256 * KIB, 8 * MIB],
                pollution_copy: 4 * MIB,
                pollution_samples: 15,
                calib_sizes: geometric(4 * KIB, 64 * MIB, 2),
                calib_samples: 7,
            },
            Scale::Quick => Plan {
                sizes: geometric(64, 64 * MIB, 16),
                samples: 5,
                sample_bytes: 4 * MIB,
                fill_sizes: vec![64 * KIB, 4 * MIB],
                rings: vec![2 * MIB, 64 * MIB],
                chunks: vec![512 * KIB, 128 * KIB],
                seed_bytes: 128 * MIB,
                seed_rounds: 3,
                victims: vec![256 * KIB, 8 * MIB],
                pollution_copy: 4 * MIB,
                pollution_samples: 7,
                calib_sizes: geometric(16 * KIB, 64 * MIB, 4),
                calib_samples: 5,
            },
            Scale::Tiny => Plan {
                sizes: vec![64, 64 * KIB, MIB],
                samples: 2,
                sample_bytes: 256 * KIB,
                fill_sizes: vec![64 * KIB],
                rings: vec![MIB],
                chunks: vec![128 * KIB],
                seed_bytes: 4 * MIB,
                seed_rounds: 1,
                victims: vec![64 * KIB],
                pollution_copy: 256 * KIB,
                pollution_samples: 2,
                calib_sizes: vec![16 * KIB, 256 * KIB, MIB],
                calib_samples: 2,
            },
        };
        if let Some(s) = &o.sizes {
            p.sizes = s.clone();
            p.fill_sizes = s.clone();
        }
        if let Some(n) = o.iterations {
            p.samples = n;
            p.pollution_samples = n;
            p.calib_samples = n;
            p.seed_rounds = n.div_ceil(2);
        }
        p
    }

    /// Progress-bar steps: one per table row, seed round, pollution round.
    fn steps(&self) -> u64 {
        let n = 2 * self.sizes.len()
            + 2 * self.fill_sizes.len()
            + self.rings.len() * self.chunks.len() * self.seed_rounds
            + self.victims.len() * self.pollution_samples
            + 4 * self.calib_sizes.len();
        n as u64
    }
}

fn main() {
    std::process::exit(run());
}

/// Runs the command line; returns the exit code.
fn run() -> i32 {
    match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            0
        }
        Ok(Command::Report(o)) => match report(&o) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("cachecopy: {e}");
                1
            }
        },
        Err(e) => {
            eprintln!("cachecopy: {e}\n\n{}", cli::USAGE);
            2
        }
    }
}

fn report(o: &Options) -> Result<(), String> {
    let t0 = Instant::now();
    let plan = Plan::new(o);
    let machine = machine::detect();
    let date = today();
    let out = |s: String| {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(s.as_bytes());
        let _ = stdout.flush();
    };
    out(format!(
        "cachecopy {} report, {date}{}\n\n",
        env!("CARGO_PKG_VERSION"),
        match o.scale {
            Scale::Full => "",
            Scale::Quick => " (--quick)",
            Scale::Tiny => " (--tiny)",
        }
    ));
    out(print_machine(&machine));

    let pb = ProgressBar::new(plan.steps());
    pb.set_style(
        ProgressStyle::with_template("{msg:<28} [{bar:32}] {pos}/{len} {elapsed}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let print = |s: String| pb.suspend(|| out(s));

    let max = plan
        .sizes
        .iter()
        .chain(&plan.fill_sizes)
        .copied()
        .max()
        .unwrap_or(MIB);
    let max = max
        .max(plan.pollution_copy)
        .max(*plan.calib_sizes.last().unwrap_or(&MIB));
    pb.set_message("allocating buffers");
    let src = Buf::new(max, 0x5a);
    let mut arena = if o.scale == Scale::Tiny {
        Arena::with_len(2 * max)
    } else {
        Arena::new(machine.l3.or(machine.l2), max)
    };

    pb.set_message("2. copy bandwidth");
    let mut ops = vec![Op::Memcpy];
    ops.extend(cachecopy::Mode::ALL.map(Op::Copy));
    let bandwidth = measure::table(
        &ops,
        &plan.sizes,
        src.as_slice(),
        &mut arena,
        plan.samples,
        plan.sample_bytes,
        || pb.inc(1),
    );
    print(print_table(
        "2. Copy bandwidth",
        "memcpy (copy_from_slice)",
        &bandwidth,
        arena.len(),
    ));

    pb.set_message("3. seed experiment");
    let seed = seed::run(
        &plan.rings,
        &plan.chunks,
        plan.seed_bytes,
        plan.seed_rounds,
        || pb.inc(1),
    );
    print(print_seed(&seed));

    pb.set_message("4. cache pollution");
    let pollution = pollution::run(
        &plan.victims,
        plan.pollution_copy,
        src.as_slice(),
        &mut arena,
        plan.pollution_samples,
        || pb.inc(1),
    );
    print(print_pollution(&pollution));

    pb.set_message("5. Auto calibration");
    let calibrate = |kind, arena: &mut measure::Arena| {
        calibrate::run(
            kind,
            &plan.calib_sizes,
            src.as_slice(),
            arena,
            plan.calib_samples,
            plan.sample_bytes,
            machine.glibc.as_ref().map(|g| g.nt_threshold),
            || pb.inc(1),
        )
    };
    let calibration = calibrate(calibrate::Kind::Copy, &mut arena);
    let fill_calibration = calibrate(calibrate::Kind::Fill, &mut arena);
    print(print_calibration(&calibration));
    print(print_calibration(&fill_calibration));

    pb.set_message("6. fill bandwidth");
    let mut fill_ops = vec![Op::Memset];
    fill_ops.extend(cachecopy::Mode::ALL.map(Op::Zero));
    let fill = measure::table(
        &fill_ops,
        &plan.fill_sizes,
        src.as_slice(),
        &mut arena,
        plan.samples,
        plan.sample_bytes,
        || pb.inc(1),
    );
    print(print_table(
        "6. Fill bandwidth (cachecopy::zero)",
        "memset (slice.fill(0))",
        &fill,
        arena.len(),
    ));
    pb.finish_and_clear();

    let report = Report {
        cachecopy: env!("CARGO_PKG_VERSION"),
        date,
        scale: match o.scale {
            Scale::Full => "full",
            Scale::Quick => "quick",
            Scale::Tiny => "tiny",
        },
        iterations: plan.samples,
        seconds: t0.elapsed().as_secs_f64(),
        machine,
        bandwidth,
        fill,
        seed,
        pollution,
        calibration,
        fill_calibration,
    };
    out(format!("Done in {:.0} s.\n", report.seconds));
    if let Some(path) = &o.json {
        write_json(&report, path)?;
        out(format!("JSON: {}\n", path.display()));
    }
    if let Some(path) = &o.svg {
        let m = &report.machine;
        let title = format!(
            "cachecopy {}: copy bandwidth per mode, {} ({}), {}",
            report.cachecopy,
            if m.brand.is_empty() {
                &m.vendor
            } else {
                &m.brand
            },
            m.active,
            report.date
        );
        plot::write_svg(&report.bandwidth, &title, m.nt_threshold, path)?;
        out(format!("SVG: {}\n", path.display()));
    }
    Ok(())
}

pub fn write_json(report: &Report, path: &Path) -> Result<(), String> {
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// Today's UTC date, `YYYY-MM-DD` (days-from-civil inverted, Howard Hinnant's algorithm).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil(secs / 86_400)
}

fn civil(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Three significant digits.
fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `median (min-max)`, with `~` when noisy.
fn range(s: &Summary) -> String {
    format!(
        "{}{} ({}-{})",
        if s.noisy { "~" } else { "" },
        num(s.median),
        num(s.min),
        num(s.max)
    )
}

fn ratio(s: &Summary) -> String {
    format!("{}{:.2}x", if s.noisy { "~" } else { "" }, s.median)
}

fn print_machine(m: &Machine) -> String {
    let mut s = String::from("1. Machine\n");
    let opt = |v: Option<usize>| v.map_or("?".to_string(), size);
    let _ = writeln!(
        s,
        "   CPU            {} {} ({}, {} CPUs{})",
        m.vendor,
        m.brand,
        m.arch,
        m.cpus,
        m.kernel
            .as_ref()
            .map(|k| format!(", Linux {k}"))
            .unwrap_or_default()
    );
    let _ = writeln!(s, "   features       {}", m.features.join(" "));
    let _ = writeln!(
        s,
        "   caches         line {} B, L1d {}, L2 {}, L3 {}{} ({})",
        m.line,
        opt(m.l1d),
        opt(m.l2),
        opt(m.l3),
        m.l3_shared_by
            .map(|n| format!(" shared by {n}"))
            .unwrap_or_default(),
        m.cache_source
    );
    let _ = writeln!(
        s,
        "   backends       {} (active: {})",
        m.backends.join(", "),
        m.active
    );
    let _ = writeln!(
        s,
        "   flush          {} (can run: {})",
        m.flush,
        m.flush_ops.join(", ")
    );
    let _ = writeln!(
        s,
        "   NT threshold   {} ({}); fills {}",
        size(m.nt_threshold),
        m.nt_threshold_source,
        size(m.fill_nt_threshold)
    );
    if let Some(t) = m.fill_rep_threshold {
        let _ = writeln!(s, "   rep stosb      Temporal fills from {}", size(t));
    }
    if let Some(b) = m.zero_block {
        let _ = writeln!(s, "   dc zva         Temporal zeroing in {b}-byte blocks");
    }
    match &m.glibc {
        Some(g) => {
            let _ = writeln!(
                s,
                "   glibc memcpy   streams from {} ({})",
                size(g.nt_threshold),
                g.how
            );
        }
        None => s.push_str("   glibc memcpy   threshold unknown (no glibc loader to ask)\n"),
    }
    s.push('\n');
    s
}

fn print_table(title: &str, baseline: &str, cells: &[Cell], arena: usize) -> String {
    let mut ops: Vec<&str> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    for c in cells {
        if !ops.contains(&c.op) {
            ops.push(c.op);
        }
        if !sizes.contains(&c.size) {
            sizes.push(c.size);
        }
    }
    let mut s = format!(
        "{title}, GB/s: median (min-max) over interleaved rounds; ratio = op / {baseline}, \
         paired per round; ~ = noisy (spread > {:.0} % of the median)\n",
        stats::NOISY_SPREAD * 100.0
    );
    for dest in [Dest::Hot, Dest::Cold] {
        let _ = writeln!(
            s,
            "   {} destination{}",
            match dest {
                Dest::Hot => "hot",
                Dest::Cold => "cold",
            },
            match dest {
                Dest::Hot => " (the same buffer every time)".to_string(),
                Dest::Cold => format!(" (scattered over a {} arena)", size(arena)),
            }
        );
        let rows: Vec<Vec<String>> = sizes
            .iter()
            .map(|&sz| {
                let mut row = vec![size(sz)];
                for op in &ops {
                    let c = cells
                        .iter()
                        .find(|c| c.size == sz && c.dest == dest && c.op == *op);
                    row.push(c.map_or(String::new(), |c| match &c.ratio {
                        None => range(&c.gbps),
                        Some(r) => format!("{} {}", range(&c.gbps), ratio(r)),
                    }));
                }
                row
            })
            .collect();
        let mut header = vec!["size".to_string()];
        header.extend(ops.iter().map(|o| o.to_string()));
        s.push_str(&grid(&header, &rows));
    }
    s.push('\n');
    s
}

/// Right-aligned columns, the first left-aligned.
fn grid(header: &[String], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::from("   ");
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i == 0 {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            } else {
                l.push_str("  ");
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            }
        }
        l.push('\n');
        l
    };
    let mut s = line(header);
    for r in rows {
        s.push_str(&line(r));
    }
    s
}

fn print_seed(seed: &seed::Seed) -> String {
    let mut s = format!(
        "3. The MSG_NTCOPY experiment (seeds/004 unix-nt-bench) in user space: a producer copies \
         1 MiB objects chunk by chunk into a ring, a consumer reads every chunk; {} per run, \
         Temporal and NonTemporal runs alternating\n",
        size(seed.bytes_per_run)
    );
    match seed.cpus {
        Some((a, b)) => {
            let _ = writeln!(
                s,
                "   producer pinned to CPU {a}, consumer to CPU {b} (on a VM the host decides \
                 which cores and caches these vCPUs share)"
            );
        }
        None => s.push_str("   only one CPU available: threads unpinned, figures say little\n"),
    }
    let header: Vec<String> = [
        "ring",
        "chunk",
        "Temporal Gb/s",
        "NonTemporal Gb/s",
        "NT/T",
        "seed NT/T",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = seed
        .rows
        .iter()
        .map(|r| {
            vec![
                size(r.ring),
                size(r.chunk),
                range(&r.temporal_gbps),
                range(&r.nontemporal_gbps),
                ratio(&r.ratio),
                format!("{:.2}x", r.seed_ratio),
            ]
        })
        .collect();
    s.push_str(&grid(&header, &rows));
    s.push_str(
        "   seed: AMD EPYC 7662 (Zen2), kernel copies into skbs, 1.43x with 512 KiB buffers on \
         cores sharing only L3, 1.32x with 128 KiB on cores sharing L2\n\n",
    );
    s
}

fn print_pollution(p: &pollution::Pollution) -> String {
    let mut s = format!(
        "4. Cache pollution: re-reading a victim working set after one {} copy into a cold \
         destination; µs median (min-max) and ÷ the re-read with no copy in between\n",
        size(p.copy)
    );
    let mut ops: Vec<&str> = Vec::new();
    let mut victims: Vec<usize> = Vec::new();
    for r in &p.rows {
        if !ops.contains(&r.op) {
            ops.push(r.op);
        }
        if !victims.contains(&r.victim) {
            victims.push(r.victim);
        }
    }
    let mut header = vec!["victim".to_string()];
    header.extend(ops.iter().map(|o| o.to_string()));
    let rows: Vec<Vec<String>> = victims
        .iter()
        .map(|&v| {
            let mut row = vec![size(v)];
            for op in &ops {
                let r = p.rows.iter().find(|r| r.victim == v && r.op == *op);
                row.push(r.map_or(String::new(), |r| {
                    let us = Summary {
                        median: r.reread_ns.median / 1e3,
                        min: r.reread_ns.min / 1e3,
                        max: r.reread_ns.max / 1e3,
                        noisy: r.reread_ns.noisy,
                    };
                    if r.op == "none" {
                        range(&us)
                    } else {
                        format!("{} {}", num(us.median), ratio(&r.slowdown))
                    }
                }));
            }
            row
        })
        .collect();
    s.push_str(&grid(&header, &rows));
    s.push('\n');
    s
}

fn print_calibration(c: &calibrate::Calibration) -> String {
    let mut s = String::from(match c.kind {
        calibrate::Kind::Copy => {
            "5. Auto calibration, copies: NonTemporal / Temporal, paired per round (above 1: \
             streaming wins)\n"
        }
        calibrate::Kind::Fill => {
            "5b. Auto calibration, fills (zero): NonTemporal / Temporal, paired per round\n"
        }
    });
    let sizes: Vec<usize> = {
        let mut v: Vec<usize> = c.points.iter().map(|p| p.size).collect();
        v.dedup();
        v.sort_unstable();
        v.dedup();
        v
    };
    let header: Vec<String> = ["size", "cold dst", "hot dst"].map(String::from).to_vec();
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .map(|&sz| {
            let get = |d: Dest| {
                c.points
                    .iter()
                    .find(|p| p.size == sz && p.dest == d)
                    .map_or(String::new(), |p| ratio(&p.ratio))
            };
            vec![size(sz), get(Dest::Cold), get(Dest::Hot)]
        })
        .collect();
    s.push_str(&grid(&header, &rows));
    let opt = |v: Option<usize>| v.map_or("none in range".to_string(), size);
    let _ = writeln!(
        s,
        "   crossover      cold destination {}, hot destination {}",
        opt(c.crossover_cold),
        opt(c.crossover_hot)
    );
    match c.recommended {
        Some(r) => {
            let _ = writeln!(
                s,
                "   recommended    {}={r}  ({}: from here streaming is no slower even into a \
                 cached destination)",
                c.kind.env(),
                size(r)
            );
        }
        None => s.push_str("   recommended    none: streaming never won in the measured range\n"),
    }
    let _ = writeln!(
        s,
        "   built-in       {} (cachecopy::{}())",
        size(c.builtin),
        match c.kind {
            calibrate::Kind::Copy => "nt_threshold",
            calibrate::Kind::Fill => "fill_nt_threshold",
        }
    );
    if let Some(g) = c.glibc {
        let _ = writeln!(
            s,
            "   glibc          {} (memcpy's own switch to streaming stores)",
            size(g)
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(19_782), "2024-02-29");
        assert_eq!(civil(20_000), "2024-10-04");
    }

    #[test]
    fn numbers() {
        assert_eq!(num(123.4), "123");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1.234), "1.23");
        let s = Summary::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(range(&s), "~2.00 (1.00-3.00)");
    }

    #[test]
    fn json_has_every_section() {
        let cell = Cell {
            size: 64,
            dest: Dest::Cold,
            op: "NonTemporal",
            gbps: Summary::of(&[2.0]).unwrap(),
            ratio: Summary::of(&[1.5]),
        };
        let v = serde_json::to_value(&cell).unwrap();
        assert_eq!(v["dest"], "cold");
        assert_eq!(v["op"], "NonTemporal");
        assert_eq!(v["gbps"]["median"], 2.0);
        assert_eq!(v["ratio"]["median"], 1.5);
        assert_eq!(v["gbps"]["noisy"], false);
    }

    #[test]
    fn plans_fit_their_budgets() {
        let o = |scale| Options {
            scale,
            json: None,
            svg: None,
            sizes: None,
            iterations: None,
        };
        let full = Plan::new(&o(Scale::Full));
        assert_eq!(full.sizes.first(), Some(&64));
        assert_eq!(full.sizes.last(), Some(&(256 * MIB)));
        let quick = Plan::new(&o(Scale::Quick));
        assert!(quick.steps() < full.steps());
        let mut custom = o(Scale::Quick);
        custom.sizes = Some(vec![100]);
        custom.iterations = Some(3);
        let p = Plan::new(&custom);
        assert_eq!((p.sizes, p.samples, p.seed_rounds), (vec![100], 3, 2));
    }
}
