//! The cache mode: what a caller asks for ([`Mode`]), its name, the list of every mode, and how
//! one call resolves it into the store kind the kernels run ([`Store`]).
//!
//! This is the one home of the mode: the plain copies, the cursors, the checksum copies and the
//! report all resolve and name it here, so `Auto`'s rule and the short-copy rule cannot drift
//! apart between them.

use core::fmt;
use core::str::FromStr;

use crate::cpu::FlushOp;
use crate::dispatch::plan::index;
pub(crate) use crate::dispatch::plan::Bounds;
pub(crate) use crate::dispatch::store::Store;
use crate::kernel::STREAM_MIN;

/// The cache policy of one copy or fill.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Ordinary stores: the destination ends up in cache. Use when it is read soon.
    #[default]
    Temporal,
    /// Streaming stores that bypass the cache for whole lines, then a store fence. Use when the
    /// CPU will not read the destination again soon (transmit buffers, large moves).
    NonTemporal,
    /// Like `NonTemporal`, and every destination line is written back to memory before return.
    /// Use for persistent memory and for buffers another agent reads from memory.
    FlushCache,
    /// `NonTemporal` from `nt` (copies) or
    /// `fill_nt` (fills) bytes up, `Temporal` below: the thresholds of the plan in force
    /// ([`Tuning::nt`](crate::tune::Tuning::nt)).
    /// A move ([`copy_within`](crate::copy_within), [`move_raw`](crate::move_raw)) streams only
    /// when its source and destination also lie at least `nt_threshold` bytes apart: nearer, each
    /// destination line was read as source moments before and is still in cache, where a
    /// streaming store saves no read and costs an invalidation.
    Auto,
}

// `stores_temporally` indexes the bounds by the discriminant.
const _: () = assert!(
    Mode::Temporal as usize == index::TEMPORAL
        && Mode::NonTemporal as usize == index::NONTEMPORAL
        && Mode::FlushCache as usize == index::FLUSH_CACHE
        && Mode::Auto as usize == index::AUTO
);

impl Mode {
    /// Every mode, in declaration order.
    ///
    /// ```
    /// assert_eq!(cachecopy::Mode::ALL.len(), 4);
    /// ```
    pub const ALL: [Mode; 4] = [
        Mode::Temporal,
        Mode::NonTemporal,
        Mode::FlushCache,
        Mode::Auto,
    ];

    /// The mode's name as written in code and accepted by [`FromStr`]: `"Temporal"`,
    /// `"NonTemporal"`, `"FlushCache"` or `"Auto"`.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Temporal => "Temporal",
            Mode::NonTemporal => "NonTemporal",
            Mode::FlushCache => "FlushCache",
            Mode::Auto => "Auto",
        }
    }

    /// The store kind of one call moving `len` bytes in total, against `below`, the operation's
    /// bounds in the plan of the call (its `copy_below` for copies, `fill_below` for fills), and
    /// the plan's flush instruction `flush`.
    /// Below `STREAM_MIN` (1 KiB) every mode but `FlushCache` stores temporally: a streamed store plus
    /// its fence costs more than the whole short copy, and a cursor call must not stream its
    /// pieces when the call is short. `Auto` streams from its threshold (never below
    /// `STREAM_MIN`).
    #[inline(always)]
    pub(crate) fn resolve(self, len: usize, below: &Bounds, flush: FlushOp) -> Store {
        if self.stores_temporally(len, below) {
            Store::Temporal
        } else {
            self.streaming(flush)
        }
    }

    /// Whether a call of `len` bytes in this mode stores temporally under the bounds `below`.
    /// Below `STREAM_MIN` every bound but `FlushCache`'s lies at or above it (`Temporal`: never
    /// streams; `NonTemporal`: `STREAM_MIN`; `Auto`: at least `STREAM_MIN`), so there the answer
    /// is one compare of `len` with a constant, no load: a compare fed by a load cost a constant
    /// `Auto` against `Temporal` in a loop of short calls where the compare with a constant did
    /// not (lab/findings/small-calls.md, the later "Auto and a run-time mode" section). From
    /// `STREAM_MIN` up, one load of the mode's bound and one compare, with no match on the
    /// mode, so a mode read at run time costs what a constant one does. A constant `Temporal`
    /// compares nothing (folded at the call site).
    #[inline(always)]
    pub(crate) fn stores_temporally(self, len: usize, below: &Bounds) -> bool {
        if len < STREAM_MIN {
            return self != Mode::FlushCache;
        }
        self == Mode::Temporal || len < below[self as usize]
    }

    /// The store kind of this mode where it does not store temporally: `FlushCache`'s
    /// write-back with the plan's flush instruction `flush`, else streaming.
    #[inline(always)]
    pub(crate) fn streaming(self, flush: FlushOp) -> Store {
        match self {
            Mode::FlushCache => Store::Flush(flush),
            _ => Store::NonTemporal,
        }
    }

    /// The strongest store kind a call of any length in this mode can use: what a batch in
    /// this mode fences for.
    #[inline(always)]
    pub(crate) fn strongest(self, flush: FlushOp) -> Store {
        match self {
            Mode::Temporal => Store::Temporal,
            m => m.streaming(flush),
        }
    }

    /// The store kind of one move of `len` bytes from `src` to `dst` (the ranges may overlap).
    /// `Auto` resolves on the shorter of the length and the distance between the two: a
    /// destination line of a move by `d` bytes was read as source `d` bytes earlier, so it is
    /// as hot as the destination of a `d`-byte copy, and streaming into it pays an invalidation
    /// and saves no read until `d` passes the threshold (lab/findings/moves.md, "Auto"). Disjoint
    /// ranges (distance at least the length) resolve as a copy of `len` bytes. `NonTemporal`
    /// and `FlushCache` do what the caller asked, at any distance.
    #[inline(always)]
    pub(crate) fn resolve_move(
        self,
        dst: *mut u8,
        src: *const u8,
        len: usize,
        below: &Bounds,
        flush: FlushOp,
    ) -> Store {
        let n = if self == Mode::Auto {
            let (d, s) = (dst as usize, src as usize);
            len.min(d.abs_diff(s))
        } else {
            len
        };
        self.resolve(n, below, flush)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned by `Mode::from_str` for a name that is no mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownMode;

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a cache mode (Temporal, NonTemporal, FlushCache, Auto)")
    }
}

impl core::error::Error for UnknownMode {}

impl FromStr for Mode {
    type Err = UnknownMode;

    /// A mode by [`name`](Mode::name), ignoring ASCII case.
    ///
    /// ```
    /// assert_eq!("nontemporal".parse(), Ok(cachecopy::Mode::NonTemporal));
    /// ```
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or(UnknownMode)
    }
}

#[cfg(all(test, feature = "std"))]
mod tests;
