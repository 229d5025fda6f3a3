//! What this CPU runs: the backends and engines it supports, each engine's table, and the error
//! a call that asks for one it does not run gets ([`Unsupported`]). Answered from the facts of
//! the published plan (`super::plan`), which these queries detect on first use.

use core::fmt;

use super::engine::{self, Backend, Engine};
use super::table::{self, Kernels, BACKENDS, POSITION};
use crate::cpu::FlushOp;
use crate::dispatch;
use crate::dispatch::plan::{self, Plan};

impl Backend {
    /// Every backend this CPU can run, best last.
    ///
    /// ```
    /// use cachecopy::tune::{Backend, Plan};
    /// assert!(Backend::supported().contains(&Plan::current().tuning().engine.stream));
    /// ```
    pub fn supported() -> &'static [Backend] {
        dispatch::backends()
    }

    /// This backend's kernels, if this CPU runs it (as the plan `p` in hand knows it).
    /// One table lookup (this sits on the path of every `copy_with`, `fill_with` and cursor op).
    #[inline]
    pub(crate) fn kernels(self, p: &Plan) -> Result<&'static Kernels, Unsupported> {
        let i = POSITION[self as usize] as usize;
        if i < usize::from(plan::facts_of(p).backends) {
            Ok(BACKENDS[i])
        } else {
            Err(Unsupported(Unsupportable::Backend(self)))
        }
    }
}

/// Returned when this CPU cannot run what was asked: a backend or flush instruction (the
/// `raw::*_with` functions: nothing was written then), or a choice of a plan's record
/// ([`Plan::new`](crate::tune::Plan::new)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported(pub(crate) Unsupportable);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsupportable {
    Backend(Backend),
    Flush(FlushOp),
    /// A small-fill variant (masked fills: AVX-512 F and BW, BMI2; AVX pairs: AVX2).
    Small(crate::dispatch::tune::Small),
    /// A small-copy variant of the C entries (masked: AVX-512 F and BW, BMI2).
    EntryCopy(crate::dispatch::tune::EntryCopy),
    /// AVX-512 loops for large copies.
    Wide,
    /// A number of pages a streamed copy cannot read at once.
    Pages(usize),
}

impl Engine {
    /// The engines worth comparing on this CPU (the report's engines on frames, `calibrate()`'s
    /// engine check, `lab/probes/store_probe.rs`): each vector register set it runs alone, AVX-512
    /// with either edge store. The word backend is left out (no vector stores).
    ///
    /// ```
    /// let c: Vec<_> = cachecopy::tune::Engine::candidates().collect();
    /// assert!(c.iter().all(|e| e.temporal == e.stream && cachecopy::tune::Engine::supported().contains(e)));
    /// ```
    pub fn candidates() -> impl Iterator<Item = Engine> {
        engine::candidates(dispatch::backends())
    }

    /// Every engine this CPU runs: each pair of supported backends for the two jobs, with each
    /// edge store that differs (AVX-512: masked and overlapping). For tests and comparisons.
    pub fn supported() -> &'static [Engine] {
        dispatch::engines()
    }

    /// This engine's table, if this CPU runs it (as the plan `p` in hand knows it).
    #[inline]
    pub(crate) fn kernels(self, p: &Plan) -> Result<&'static Kernels, Unsupported> {
        let n = usize::from(plan::facts_of(p).backends);
        for b in [self.temporal, self.stream] {
            if POSITION[b as usize] as usize >= n {
                return Err(Unsupported(Unsupportable::Backend(b)));
            }
        }
        table::composed(self).ok_or(Unsupported(Unsupportable::Backend(self.stream)))
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unsupportable::Backend(b) => write!(f, "the {b} backend is not supported by this CPU"),
            Unsupportable::Flush(op) => {
                write!(f, "the {op} instruction is not supported by this CPU")
            }
            Unsupportable::Small(s) => write!(f, "small={s} is not supported by this CPU"),
            Unsupportable::EntryCopy(c) => {
                write!(f, "entry_copy={c} is not supported by this CPU")
            }
            Unsupportable::Wide => {
                f.write_str("AVX-512 loops for large copies are not supported by this CPU")
            }
            Unsupportable::Pages(n) => write!(f, "pages={n}: a streamed copy reads 1, 2, 4 or 8"),
        }
    }
}

impl core::error::Error for Unsupported {}
