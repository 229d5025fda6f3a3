//! The cache mode: what a caller asks for ([`Mode`]), its name, the list of every mode, and how
//! one call resolves it into the store kind the kernels run ([`Store`]).
//!
//! This is the one home of the mode: the plain copies, the cursors, the checksum copies and the
//! report all resolve and name it here, so `Auto`'s rule and the short-copy rule cannot drift
//! apart between them.

use core::fmt;
use core::str::FromStr;

pub(crate) use crate::backend::store::Store;
use crate::dispatch;
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
    /// `NonTemporal` from [`nt_threshold`](crate::nt_threshold) (copies) or
    /// [`fill_nt_threshold`](crate::fill_nt_threshold) (fills) bytes up, `Temporal` below.
    Auto,
}

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

    /// The store kind of one call moving `len` bytes in total, with `threshold` the `Auto`
    /// threshold of the operation (copy or fill). Below [`STREAM_MIN`] every mode but
    /// `FlushCache` stores temporally: a streamed store plus its fence costs more than the
    /// whole short copy, and a cursor call must not stream its pieces when the call is short.
    #[inline(always)]
    pub(crate) fn resolve(self, len: usize, threshold: fn() -> usize) -> Store {
        match self {
            Mode::Temporal => Store::Temporal,
            Mode::FlushCache => Store::Flush(dispatch::flush_op()),
            Mode::NonTemporal if len >= STREAM_MIN => Store::NonTemporal,
            // `len` first: below `STREAM_MIN` the threshold is not even loaded.
            Mode::Auto if len >= STREAM_MIN && len >= threshold() => Store::NonTemporal,
            Mode::NonTemporal | Mode::Auto => Store::Temporal,
        }
    }
}

impl Mode {
    /// Whether a call of `len` bytes in this mode stores temporally whatever the thresholds
    /// say: `Temporal`, or any mode but `FlushCache` below [`STREAM_MIN`]. One compare on `len`
    /// for a mode known at the call site; [`Mode::resolve`] agrees with it.
    #[inline(always)]
    pub(crate) fn always_temporal(self, len: usize) -> bool {
        self == Mode::Temporal || (self != Mode::FlushCache && len < STREAM_MIN)
    }

    /// Whether [`Mode::resolve`] gives `Store::Temporal` for `len` bytes under the threshold
    /// `threshold()` (loaded only for `Auto` from [`STREAM_MIN`]), without `FlushCache`'s flush
    /// op lookup: for a dispatched entry that tail-jumps into the temporal kernel when it can.
    #[inline(always)]
    pub(crate) fn resolves_temporal(self, len: usize, threshold: impl FnOnce() -> usize) -> bool {
        match self {
            Mode::Temporal => true,
            Mode::FlushCache => false,
            Mode::NonTemporal => len < STREAM_MIN,
            Mode::Auto => len < STREAM_MIN || len < threshold(),
        }
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
