//! `cachecopy`: what each copy mode is worth on this machine. `cargo run --release` runs
//! `cachecopy report`; `--help` lists the flags.

mod report;

fn main() {
    std::process::exit(report::main());
}
