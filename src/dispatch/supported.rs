//! What this CPU runs: the backends and engines it supports, each engine's table, and the error
//! a call that asks for one it does not run gets ([`Unsupported`]). Answered from what detection
//! published (`super`), which these queries trigger on first use.

use core::fmt;

use super::engine::{self, Backend, Engine};
use super::table::{self, Kernels, BACKENDS, POSITION};
use crate::cpu::FlushOp;
use crate::dispatch;

impl Backend {
    /// The backend of the active engine's streaming job ([`Engine::stream`]); see
    /// [`engine()`](crate::engine()) for every job. The engine's rule for this CPU picks it,
    /// unless `CACHECOPY_BACKEND` or `CACHECOPY_ENGINE` chose another (with `std`).
    ///
    /// ```
    /// assert!(cachecopy::Backend::supported().contains(&cachecopy::Backend::active()));
    /// ```
    pub fn active() -> Backend {
        dispatch::active().engine.stream
    }

    /// Every backend this CPU can run, best last.
    pub fn supported() -> &'static [Backend] {
        dispatch::backends()
    }

    /// This backend's kernels, if this CPU runs it.
    /// One table lookup (this sits on the path of every `copy_with`, `fill_with` and cursor op).
    #[inline]
    pub(crate) fn kernels(self) -> Result<&'static Kernels, Unsupported> {
        let i = POSITION[self as usize] as usize;
        if i < dispatch::backends().len() {
            Ok(BACKENDS[i])
        } else {
            Err(Unsupported(Unsupportable::Backend(self)))
        }
    }
}

/// Returned by the `*_with` functions when this CPU cannot run the requested backend or flush
/// instruction. Nothing was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsupported(pub(crate) Unsupportable);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsupportable {
    Backend(Backend),
    Flush(FlushOp),
}

impl Engine {
    /// The engines worth comparing on this CPU (the report's section 7b, `calibrate()`'s
    /// engine check, `lab/probes/store_probe.rs`): each vector register set it runs alone, AVX-512
    /// with either edge store. The word backend is left out (no vector stores).
    ///
    /// ```
    /// let c: Vec<_> = cachecopy::Engine::candidates().collect();
    /// assert!(c.iter().all(|e| e.temporal == e.stream && cachecopy::Engine::supported().contains(e)));
    /// ```
    pub fn candidates() -> impl Iterator<Item = Engine> {
        engine::candidates(dispatch::backends())
    }

    /// Every engine this CPU runs: each pair of supported backends for the two jobs, with each
    /// edge store that differs (AVX-512: masked and overlapping). For tests and comparisons.
    pub fn supported() -> &'static [Engine] {
        dispatch::engines()
    }

    /// This engine's table, if this CPU runs it.
    #[inline]
    pub(crate) fn kernels(self) -> Result<&'static Kernels, Unsupported> {
        let n = dispatch::backends().len();
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
        }
    }
}

impl core::error::Error for Unsupported {}
