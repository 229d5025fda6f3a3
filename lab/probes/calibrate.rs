//! Measures this machine's tunables once, installs what was decided for this process, and
//! prints the `CACHECOPY_TUNE` line that keeps it for the next process without measuring again.
//!
//! `cargo run --release -p cachecopy-probes --example calibrate`
//!
//! A program either calls `cachecopy::tune::calibrate()` once at start-up (within
//! `Calibration::BUDGET` of wall time, on buffers it maps and unmaps itself), sets
//! `CACHECOPY_TUNE=calibrate` so that the first copy does it, or sets the printed line in
//! its environment. A tunable whose measurement did not settle keeps its built-in rule.

use cachecopy::tune::calibrate::Calibration;

fn main() {
    let c: Calibration = cachecopy::tune::calibrate();
    println!("measured in {:.0} ms", c.elapsed.as_secs_f64() * 1e3);
    for (name, sweep) in [
        ("nt", &c.copy_sweep),
        ("fill_nt", &c.fill_sweep),
        ("rep_movsb", &c.rep_movsb_sweep),
        ("fill_rep", &c.fill_rep_sweep),
    ] {
        match sweep.decided {
            Some(bytes) if bytes > isize::MAX as usize => println!("{name:10} never"),
            Some(bytes) => println!("{name:10} from {bytes} bytes"),
            None => println!("{name:10} the built-in rule stays: {}", sweep.outcome),
        }
    }
    match c.engine {
        Some(engine) => println!("{:10} {engine}", "engine"),
        None => println!(
            "{:10} the rule's stays: {}",
            "engine", c.engine_check.outcome
        ),
    }

    c.apply();
    println!(
        "in force:  CACHECOPY_TUNE={}",
        *cachecopy::tune::Plan::current().tuning()
    );
    println!("to keep:   {c}");
}
