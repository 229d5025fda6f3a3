//! `cachecopy`: what each copy mode is worth on this machine. `cargo run --release` runs
//! `cachecopy report`: first a screen of what to use here and what it is worth, then the
//! sections it rests on: the machine, copy and fill bandwidth per mode, the MSG_NTCOPY ring
//! experiment, cache pollution, the `Auto` calibration, frames, small calls, moves and where
//! cachecopy is slower than its baseline, as text, JSON, SVG and a page of HTML; `cachecopy
//! compare A B` lists the figures that moved between two runs' JSON; `--help` lists the flags.
//!
//! Each section is a module of `sections/` that measures and hands its text to the session
//! (`section`); beside them the infrastructure they share: `session` (what a run holds, and the
//! sections' text until the run ends), `plan` (what to measure), `machine` (section 1: what
//! the machine is), `measure` (timing), `stats`, `text` (formatting), `findings` (every figure
//! against its baseline), `glance` (the first screen, from the findings), `json`, `plot` and
//! `html` (the files), `cli` (the flags) and `compare` (the subcommand).

mod cli;
mod compare;
mod findings;
mod glance;
mod html;
mod json;
mod machine;
mod measure;
mod plan;
mod plot;
mod sections;
mod session;
mod stats;
mod text;

use std::time::Instant;

use cli::{Command, Options, Scale};
use glance::Glance;
use html::{Page, Plots};
use measure::Kind;
use sections::{bandwidth, calibrate, frames, mixes, moves, pollution, seed, slower, small};
use session::Session;
use text::out;

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
        Ok(Command::Engines { rule }) => {
            for e in machine::engines_to_test(rule) {
                println!("{e}");
            }
            0
        }
        Ok(Command::Compare(a, b)) => match compare::compare(&a, &b, 3.0) {
            Ok(text) => {
                out(&text);
                0
            }
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

/// The report: every section measures, its text kept; then the first screen (which needs
/// every figure), the sections' text, the closing section and the files asked for.
fn report(o: &Options) -> Result<(), String> {
    let t0 = Instant::now();
    let date = text::today();
    let version = env!("CARGO_PKG_VERSION");
    let machine = machine::detect();
    let mut s = Session::new(o, &machine);
    s.print(&machine::print(&machine));
    if let Some(only) = &o.only {
        return report_only(o, only, s, t0, date);
    }
    let bandwidth = bandwidth::section(&mut s, Kind::Copy);
    let seed = seed::section(&mut s);
    let pollution = pollution::section(&mut s);
    // One library calibration, shown beside both sweeps and kept by the line at the end.
    let lib = cachecopy::tune::calibrate();
    let calibration = calibrate::section(&mut s, Kind::Copy, &lib);
    let fill_calibration = calibrate::section(&mut s, Kind::Fill, &lib);
    let fill = bandwidth::section(&mut s, Kind::Fill);
    let frames = frames::section(&mut s, &lib);
    let small = small::section(&mut s);
    let mixes = mixes::section(&mut s, o.libmem.as_deref());
    moves::section(&mut s);
    let iterations = s.plan.samples;
    let (findings, text) = s.finish();

    let plots = vec![
        Plots {
            heading: "Copy and fill bandwidth (sections 2 and 6)".into(),
            about: "GB/s of each mode against the size of one call, glibc's in grey, into a hot \
                    destination (the same buffer every time) and a cold one (a slot of an arena \
                    larger than the caches); the vertical line is where Auto starts streaming."
                .into(),
            figures: vec![
                bandwidth::figure(
                    Kind::Copy,
                    &bandwidth,
                    machine.nt_threshold,
                    "2. Copy bandwidth: cachecopy::copy per mode against glibc memcpy".into(),
                ),
                bandwidth::figure(
                    Kind::Fill,
                    &fill,
                    machine.fill_nt_threshold,
                    "6. Fill bandwidth: cachecopy::zero per mode against glibc memset".into(),
                ),
            ],
        },
        small_plots(small),
        mix_plots(&mixes),
    ];
    let glance = Glance::new(
        title(o, &date),
        glance::machine_line(&machine),
        glance::llc(&machine),
        findings.all(),
        Some(lib.to_string()),
        None,
    );
    emit(o, &glance, &text, &findings, plots)?;

    let report = json::Report {
        cachecopy: version,
        date,
        scale: o.scale.name(),
        iterations,
        seconds: t0.elapsed().as_secs_f64(),
        machine,
        bandwidth,
        fill,
        seed,
        pollution,
        calibration,
        fill_calibration,
        frames,
        mixes,
        verdicts: (&findings).into(),
    };
    json::done(&report, report.seconds, o.json.as_deref())?;
    if let Some(path) = &o.svg {
        plot::write(&report, path)?;
        out(&format!("SVG: {}\n", path.display()));
    }
    if let Some(path) = &o.html {
        out(&format!("HTML: {}\n", path.display()));
    }
    // Last, alone on its line: what a service's unit file needs (`Environment=` + this line).
    out(&format!(
        "\nTo keep what cachecopy::tune::calibrate() found (sections 5, 5b and 7c; a tunable it left \
         out keeps its built-in rule), set:\n{lib}\n"
    ));
    Ok(())
}

/// The first screen's title: `cachecopy 0.1.0 report, 2026-12-07 (--quick)`.
fn title(o: &Options, date: &str) -> String {
    let mut flags = Vec::new();
    if o.scale != Scale::Full {
        flags.push(format!("--{}", o.scale.name()));
    }
    if let Some(only) = &o.only {
        flags.push(format!("--only {}", only.join(",")));
    }
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" ({})", flags.join(" "))
    };
    format!(
        "cachecopy {} report, {date}{flags}",
        env!("CARGO_PKG_VERSION")
    )
}

/// Section 8's plots, under their heading.
fn small_plots(figures: Vec<plot::Figure>) -> Plots {
    Plots {
        heading: "Small calls (sections 8a and 8b)".into(),
        about: "Nanoseconds per call (lower is faster) against the size of the call, the length \
                opaque to the compiler, glibc's function called through a pointer; the mode a \
                constant at the call site, or a run-time value."
            .into(),
        figures,
    }
}

/// Section 8f's plots, under their heading.
fn mix_plots(mixes: &mixes::Mixes) -> Plots {
    Plots {
        heading: "Calls of changing size (section 8f)".into(),
        about: "Nanoseconds per call (lower is faster) when every call has the next size of a \
                sequence: sizes uniform in 0-64, 65-256, 257-1024 and 1025-4096 B (the lines, \
                at each class's mean size) or drawn from the fleet-wide distribution Fleetbench \
                publishes (the hollow squares), in a working set that fits the L2, one that \
                fits the last-level cache, and a cold one."
            .into(),
        figures: mixes.figures.clone(),
    }
}

/// Prints the first screen, the sections' text and the closing section, and writes the page
/// if `--html` asked for one.
fn emit(
    o: &Options,
    glance: &Glance,
    text: &str,
    findings: &findings::Findings,
    plots: Vec<Plots>,
) -> Result<(), String> {
    let whole = format!("{}{text}{}", glance.text(), slower::section(findings));
    out(&whole);
    if let Some(path) = &o.html {
        let mut slower = findings.slower();
        slower.sort_by(|a, b| a.section.cmp(&b.section));
        let plots = plots
            .into_iter()
            .filter(|p| !p.figures.is_empty())
            .collect();
        let page = Page {
            glance,
            plots,
            slower,
            text: &whole,
        };
        html::write(&page, path)?;
    }
    Ok(())
}

/// `--only`: the sections named (each needs only the session), then the closing section; the
/// JSON holds the machine, sections 7 and 8f if they ran, and the findings.
fn report_only(
    o: &Options,
    only: &[String],
    mut s: Session,
    t0: Instant,
    date: String,
) -> Result<(), String> {
    let mut mixes = None;
    let mut frames = None;
    let mut small = Vec::new();
    let mut tune = None;
    for name in only {
        match name.as_str() {
            "7" => {
                let lib = cachecopy::tune::calibrate();
                frames = Some(frames::section(&mut s, &lib));
                tune = Some(lib.to_string());
            }
            "8" => small = small::section(&mut s),
            "8f" => mixes = Some(mixes::section(&mut s, o.libmem.as_deref())),
            "9" => moves::section(&mut s),
            other => return Err(format!("--only: no section {other}")),
        }
    }
    let machine = s.machine.clone();
    let (findings, text) = s.finish();
    let mut plots = vec![small_plots(small)];
    if let Some(m) = &mixes {
        plots.push(mix_plots(m));
    }
    let glance = Glance::new(
        title(o, &date),
        glance::machine_line(&machine),
        glance::llc(&machine),
        findings.all(),
        tune,
        Some(only.to_vec()),
    );
    emit(o, &glance, &text, &findings, plots)?;
    let report = json::Only {
        cachecopy: env!("CARGO_PKG_VERSION"),
        date,
        scale: o.scale.name(),
        only: only.to_vec(),
        seconds: t0.elapsed().as_secs_f64(),
        machine,
        frames,
        mixes,
        verdicts: (&findings).into(),
    };
    json::done(&report, report.seconds, o.json.as_deref())?;
    if let Some(path) = &o.html {
        out(&format!("HTML: {}\n", path.display()));
    }
    Ok(())
}
