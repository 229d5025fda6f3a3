//! One run of the report: the plan, the machine, the source buffer and destination arena that
//! every section measures with, the findings they register, the sections' text (kept until the
//! run ends: the first screen, printed before it, needs every figure), and the progress bar that
//! shows the run is alive meanwhile.

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

use crate::cli::{Options, Scale};
use crate::findings::Findings;
use crate::machine::Machine;
use crate::measure::{Arena, Buf};
use crate::plan::Plan;

/// What the sections share.
pub struct Session<'m> {
    /// What to measure.
    pub plan: Plan,
    /// What section 1 found.
    pub machine: &'m Machine,
    /// The source of every copy: as large as the largest one.
    pub src: Buf,
    /// Every destination, hot and cold.
    pub arena: Arena,
    /// `--dst-offset`: how far past its slot's start every copy and fill destination begins.
    pub dst_offset: usize,
    /// Every figure measured against a baseline, for the closing section and the JSON.
    pub findings: Findings,
    progress: ProgressBar,
    /// The sections' text so far.
    text: String,
}

impl<'m> Session<'m> {
    /// Plans the run `o` asks for and allocates its buffers. The arena follows the shared sizing
    /// rule (`cachecopy_arena::cold_footprint`) from the last-level cache, except with `--tiny`,
    /// which exercises every path without measuring anything worth keeping: two slots suffice.
    pub fn new(o: &Options, machine: &'m Machine) -> Session<'m> {
        let plan = Plan::new(o);
        let progress = ProgressBar::new(plan.steps());
        progress.set_style(
            ProgressStyle::with_template("{msg:<28} [{bar:32}] {pos}/{len} {elapsed}")
                .expect("static template")
                .progress_chars("=> "),
        );
        progress.set_message("allocating buffers");
        let largest = plan.largest() + o.dst_offset;
        let src = Buf::new(largest, 0x5a);
        let arena = if o.scale == Scale::Tiny {
            Arena::with_len(2 * largest)
        } else {
            Arena::new(machine.l3.or(machine.l2), largest)
        };
        Session {
            plan,
            machine,
            src,
            arena,
            dst_offset: o.dst_offset,
            findings: Findings::default(),
            progress,
            text: String::new(),
        }
    }

    /// Shows what is being measured now (on the bar, or where there is no terminal to draw it
    /// on, as a line on stderr); returns when, for a section that prints how long it took
    /// ([`took`]).
    pub fn start(&self, what: &'static str) -> Instant {
        self.progress.set_message(what);
        if self.progress.is_hidden() {
            eprintln!("cachecopy: measuring {what}");
        }
        Instant::now()
    }

    /// Adds a section's text to what the run prints after the first screen.
    pub fn print(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// A callback that advances the progress bar one step. It owns a handle to the bar and
    /// borrows nothing, so it can be passed along with `&mut self.arena`.
    pub fn ticker(&self) -> impl FnMut() + 'static {
        let progress = self.progress.clone();
        move || progress.inc(1)
    }

    /// Clears the progress bar: the sections are done. Returns the findings and the sections'
    /// text.
    pub fn finish(self) -> (Findings, String) {
        self.progress.finish_and_clear();
        (self.findings, self.text)
    }
}

/// The closing line of a section that prints how long it took, from `t0` ([`Session::start`]).
pub fn took(t0: Instant) -> String {
    format!("   ({:.1} s)\n\n", t0.elapsed().as_secs_f64())
}
