//! `cachecopy`: what each copy mode is worth on this machine. `cargo run --release` runs
//! `cachecopy report`: the machine, copy and fill bandwidth per mode, the MSG_NTCOPY ring
//! experiment, cache pollution, the `Auto` calibration, frames, small calls, moves and where
//! cachecopy is slower than its baseline, as text, JSON and SVG; `cachecopy compare A B` lists
//! the figures that moved between two runs' JSON; `--help` lists the flags.
//!
//! Each section is a module of `sections/` that measures and prints (`section`); beside them the
//! infrastructure they share: `session` (what a run holds), `plan` (what to measure),
//! `machine` (section 1: what the machine is), `measure` (timing), `stats`, `text`
//! (formatting), `findings` (every figure against its baseline), `json` and `plot` (the
//! files), `cli` (the flags) and `compare` (the subcommand).

mod cli;
mod compare;
mod findings;
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

/// The report: the sections in order, each measuring and printing, then the files asked for.
fn report(o: &Options) -> Result<(), String> {
    let t0 = Instant::now();
    let date = text::today();
    let scale = match o.scale {
        Scale::Full => String::new(),
        s => format!(" (--{})", s.name()),
    };
    let version = env!("CARGO_PKG_VERSION");
    out(&format!("cachecopy {version} report, {date}{scale}\n\n"));

    let machine = machine::section();
    let mut s = Session::new(o, &machine);
    if let Some(only) = &o.only {
        return report_only(o, only, s, t0, date);
    }
    let bandwidth = bandwidth::section(&mut s, Kind::Copy);
    let seed = seed::section(&mut s);
    let pollution = pollution::section(&mut s);
    // One library calibration, shown beside both sweeps and kept by the line at the end.
    let lib = cachecopy::calibrate();
    let calibration = calibrate::section(&mut s, Kind::Copy, &lib);
    let fill_calibration = calibrate::section(&mut s, Kind::Fill, &lib);
    let fill = bandwidth::section(&mut s, Kind::Fill);
    let frames = frames::section(&mut s, &lib);
    small::section(&mut s);
    let mixes = mixes::section(&mut s, o.libmem.as_deref());
    moves::section(&mut s);
    let iterations = s.plan.samples;
    let findings = s.finish();
    out(&slower::section(&findings));

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
    // Last, alone on its line: what a service's unit file needs (`Environment=` + this line).
    out(&format!(
        "\nTo keep what cachecopy::calibrate() found (sections 5, 5b and 7c; a tunable it left \
         out keeps its built-in rule), set:\n{lib}\n"
    ));
    Ok(())
}

/// `--only`: the sections named (each needs only the session), then the closing section; the
/// JSON holds the machine, section 8f's table if it ran, and the findings.
fn report_only(
    o: &Options,
    only: &[String],
    mut s: Session,
    t0: Instant,
    date: String,
) -> Result<(), String> {
    let mut mixes = None;
    let mut frames = None;
    for name in only {
        match name.as_str() {
            "7" => {
                frames = Some(frames::section(&mut s, &cachecopy::calibrate()));
            }
            "8" => small::section(&mut s),
            "8f" => mixes = Some(mixes::section(&mut s, o.libmem.as_deref())),
            "9" => moves::section(&mut s),
            other => return Err(format!("--only: no section {other}")),
        }
    }
    let machine = s.machine.clone();
    let findings = s.finish();
    out(&slower::section(&findings));
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
    Ok(())
}
