//! Dispatch: which code runs on this CPU, chosen once, then one indirect call per copy.
//!
//! The folder holds everything about that choice, bottom up: what an engine is ([`mod@engine`]:
//! `Backend`, `Edges`, `Engine`), the kernel tables this target compiles ([`table`]) and the one
//! mapping from a store kind to a table entry ([`store`]), the environment reader ([`mod@env`]),
//! the record of choices and its parser ([`tune`]), the built-in rules ([`rules`]), the plan
//! built from a record and published for the process ([`plan`]), and what this CPU runs, asked
//! of the plan ([`supported`]). Beside them, for the unit tests, the CPU zoo (`zoo`): every CPU
//! the project has met as a record, every rule checked for each.
//!
//! Every call loads the published plan once ([`plan::current`]) and reads everything from it:
//! its kernel table, its bounds, the knobs its kernels take. Nothing a call reads is mutable.

pub(crate) mod engine;
pub(crate) mod env;
pub(crate) mod plan;
pub(crate) mod rules;
pub(crate) mod store;
pub(crate) mod supported;
pub(crate) mod table;
pub(crate) mod tune;
// Every CPU the project met, as test data, with every rule checked for each (unit tests).
#[cfg(all(test, feature = "std"))]
mod zoo;

use crate::arch;
use crate::cpu::Cpu;
use engine::{Backend, Engine};

use table::NAMES;

/// Detects the CPU: features (with the OS state they need), cache geometry and the flush
/// instruction.
///
/// This executes CPUID (a VM exit under virtualization, microseconds each) every call; dispatch
/// itself detects once and keeps what it needs in the plan, so call this for reports, not in a
/// loop.
///
/// ```
/// let cpu = cachecopy::tune::cpu();
/// println!("{} {} line {} B, flush with {}", cpu.vendor(), cpu.brand(), cpu.caches.line, cpu.flush);
/// ```
pub fn cpu() -> Cpu {
    arch::detect()
}

/// The backends this CPU runs, best last (detecting on first use).
#[inline]
pub(crate) fn backends() -> &'static [Backend] {
    &NAMES[..plan::facts().backends as usize]
}

/// The engines this CPU runs (detecting on first use).
pub(crate) fn engines() -> &'static [Engine] {
    &table::SUPPORTED_ENGINES[..table::runnable_engines(backends().len())]
}
