//! The engine: which register set runs each job, and which store writes the partial lines, per
//! CPU, chosen by what was measured rather than by register width.
//!
//! A [`Backend`] is a register set the one algorithm is instantiated for. An [`Engine`] says which
//! backend runs each job and how the ragged parts are written:
//! - `temporal`: `Temporal` copies and fills and the checksum loops (ordinary stores);
//! - `stream`: the streamed bodies of `NonTemporal` and `FlushCache` copies, fills,
//!   checksum-copies and every cursor and batch piece;
//! - `edges`: on AVX-512, whether the partial lines at the ends of a streamed destination and
//!   copies shorter than a register are written with one byte-masked store ([`Edges::Masked`])
//!   or with overlapping unmasked stores of the widest register that fits ([`Edges::Overlap`];
//!   every other register set has only that).
//!
//! The engine is a field of the per-CPU plan, chosen at detection
//! ([`engine_rule`](super::rules::engine_rule)), overridable by the `temporal`, `stream`, `body`
//! and `edges` fields of `CACHECOPY_TUNE`, printed by the report; the plan holds the table
//! composed for it: no engine branch sits inside a kernel. The rules and the runs behind them
//! are in [`engine_rule`](super::rules::engine_rule)'s documentation and
//! `lab/findings/engine.md`.

use core::fmt;

use crate::cpu::Features;

/// A copy backend: the register set the one algorithm is instantiated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable 64-bit words in general-purpose registers (x86_64 streams them with `movnti`;
    /// aarch64 moves them in `ldp`/`stp x` pairs and streams with `stnp x, x`). The only backend
    /// on soft-float targets and under `--cfg cachecopy_integer_only`.
    Generic,
    /// x86_64 SSE2, 16-byte registers.
    Sse2,
    /// x86_64 AVX2, 32-byte registers.
    Avx2,
    /// x86_64 AVX-512 F+BW, 64-byte registers and byte-masked moves.
    Avx512,
    /// aarch64 Advanced SIMD.
    Neon,
}

impl Backend {
    /// Every backend any target knows, in declaration order.
    pub(crate) const ALL: [Backend; 5] = [
        Backend::Generic,
        Backend::Sse2,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
    ];

    /// Lower-case name, as the `body`, `temporal` and `stream` fields of `CACHECOPY_TUNE` take it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Generic => "generic",
            Backend::Sse2 => "sse2",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }

    /// The backend with this [`name`](Backend::name) (ignoring ASCII case), if any target knows
    /// it.
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(name))
    }

    /// Whether a CPU with `features` runs this backend's entry points.
    pub(crate) fn runs_on(self, features: &Features) -> bool {
        match self {
            Backend::Generic => true,
            Backend::Sse2 => features.sse2,
            Backend::Avx2 => features.avx2,
            Backend::Avx512 => features.avx512f && features.avx512bw,
            Backend::Neon => features.neon,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an engine writes partial lines and copies shorter than one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edges {
    /// One AVX-512 byte-masked store (`vmovdqu8 zmm{k}`): a single instruction that touches
    /// exactly the bytes asked for. Only AVX-512 has it.
    Masked,
    /// Two overlapping unmasked stores of the widest register that fits (32, 16, 8, 4, 2 bytes),
    /// re-writing some bytes of the range twice and none outside it. The only kind other
    /// register sets have.
    Overlap,
}

impl Edges {
    /// `"masked"` or `"overlap"`, as the `edges` field of `CACHECOPY_TUNE` spells them.
    pub fn name(self) -> &'static str {
        match self {
            Edges::Masked => "masked",
            Edges::Overlap => "overlap",
        }
    }

    /// The kind with this name (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Edges> {
        [Edges::Masked, Edges::Overlap]
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Edges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which backend runs each job, and how partial lines are written.
///
/// - `temporal`: `Temporal` copies and fills and the checksum loops (ordinary stores);
/// - `stream`: the streamed bodies of `NonTemporal` and `FlushCache` copies, fills,
///   checksum-copies and every cursor and batch piece;
/// - `edges`: on AVX-512, whether the partial lines at the ends of a streamed destination and
///   copies shorter than a register are written with one byte-masked store ([`Edges::Masked`])
///   or with overlapping unmasked stores of the widest register that fits ([`Edges::Overlap`]).
///
/// Each CPU's plan holds one, chosen at detection by a rule chosen by measurement, not by
/// register width ([`Engine::rule`]; the runs behind each rule are in `lab/findings/engine.md`); the
/// `CACHECOPY_TUNE` fields `temporal=`, `stream=`, `body=` (both jobs) and `edges=` override it,
/// and the plan runs the table composed for it: no engine branch sits inside a kernel.
/// `Plan::current().tuning().engine` says which is in force;
/// [`raw::copy_with_engine`](crate::raw::copy_with_engine) and
/// [`raw::batch_with`](crate::raw::batch_with) run any other this CPU supports.
///
/// ```
/// use cachecopy::tune::{Backend, Edges, Engine};
///
/// let e = Engine::new(Backend::Avx2, Backend::Avx512, Edges::Overlap);
/// assert_eq!(e.to_string(), "temporal avx2, stream avx512, edges overlap");
/// // Edges matter only where a job runs on AVX-512; elsewhere they are always `Overlap`.
/// assert_eq!(Engine::new(Backend::Sse2, Backend::Avx2, Edges::Masked).edges, Edges::Overlap);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Engine {
    /// Runs `Temporal` copies and fills and the checksum loops.
    pub temporal: Backend,
    /// Runs the streamed bodies (`NonTemporal`, `FlushCache`, cursor and batch pieces).
    pub stream: Backend,
    /// How partial lines and short copies are written on AVX-512 (`Overlap` elsewhere).
    pub edges: Edges,
}

impl Engine {
    /// An engine with these choices; `edges` becomes [`Edges::Overlap`] unless a job runs on
    /// AVX-512 (no other register set has byte masks).
    pub const fn new(temporal: Backend, stream: Backend, edges: Edges) -> Engine {
        let masks = matches!(temporal, Backend::Avx512) || matches!(stream, Backend::Avx512);
        Engine {
            temporal,
            stream,
            edges: if masks { edges } else { Edges::Overlap },
        }
    }

    /// Every job on `backend`, with its own edge store: masked on AVX-512, overlapping
    /// elsewhere (the engine a [`copy_with`](crate::raw::copy_with) of that backend runs).
    pub const fn uniform(backend: Backend) -> Engine {
        Engine::new(backend, backend, Edges::Masked)
    }
}

impl From<Backend> for Engine {
    /// [`Engine::uniform`].
    fn from(backend: Backend) -> Engine {
        Engine::uniform(backend)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "temporal {}, stream {}, edges {}",
            self.temporal, self.stream, self.edges
        )
    }
}

/// The engines worth comparing on a CPU that runs the backends `runnable`: each vector
/// register set alone, AVX-512 with either edge store. The word backend is left out: it has
/// no vector stores and never wins (the report's copy bandwidth measures it).
pub(crate) fn candidates(runnable: &[Backend]) -> impl Iterator<Item = Engine> + '_ {
    runnable
        .iter()
        .filter(|&&b| b != Backend::Generic)
        .flat_map(|&b| {
            let masked = Engine::new(b, b, Edges::Masked);
            let overlap = Engine::new(b, b, Edges::Overlap);
            [Some(masked), (overlap != masked).then_some(overlap)]
        })
        .flatten()
}
