//! Cache policies as types, so a copy's mode can be fixed at compile time.
//!
//! Every cursor operation in [`crate::iter`] takes its mode as any [`Select`]:
//! - a marker type ([`Temporal`], [`NonTemporal`], [`FlushCache`], [`Auto`]): the mode is a
//!   constant, the call compiles to exactly one per-segment loop and no mode branch at all;
//! - a run-time [`Mode`]: one branch per call picks one of the same loops (never one per
//!   segment: the objection to `MSG_NTCOPY`'s per-segment `if`);
//! - [`CursorDefault`]: the cursor's own default, set once with
//!   [`Cursor::set_mode`](crate::iter::Cursor::set_mode) (the `tx-nocache-copy` idea: choose per
//!   socket or queue, override per call).
//!
//! ```
//! use cachecopy::iter::{copy_from_iter, IoVec, Source};
//! use cachecopy::policy::{CursorDefault, NonTemporal};
//! use cachecopy::Mode;
//!
//! let (a, b) = ([1u8; 3], [2u8; 2]);
//! let segs = [IoVec::new(&a), IoVec::new(&b)];
//! let mut frame = [0u8; 5];
//!
//! let mut src = Source::iovec(&segs);
//! copy_from_iter(&mut frame, &mut src, NonTemporal); // fixed at compile time
//! src.revert(5);
//! copy_from_iter(&mut frame, &mut src, Mode::Auto); // chosen at run time
//! src.revert(5);
//! src.set_mode(Mode::NonTemporal);
//! copy_from_iter(&mut frame, &mut src, CursorDefault); // the cursor's default
//! assert_eq!(frame, [1, 1, 1, 2, 2]);
//! ```

use crate::mode::Mode;

mod sealed {
    pub trait Sealed {}
}

/// A cache policy known at compile time. Implemented by the four marker types only.
pub trait Policy:
    sealed::Sealed + Copy + Default + core::fmt::Debug + Send + Sync + 'static
{
    /// The mode this marker stands for.
    const MODE: Mode;
}

/// What a cursor operation accepts as its mode: a [`Policy`] marker, a run-time [`Mode`], or
/// [`CursorDefault`]. Sealed.
pub trait Select: sealed::Sealed + Copy {
    /// The mode of one call on a cursor whose default is `cursor`.
    #[doc(hidden)]
    fn select(self, cursor: Mode) -> Mode;
}

macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident => $mode:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Policy for $name {
            const MODE: Mode = Mode::$mode;
        }
        impl Select for $name {
            #[inline(always)]
            fn select(self, _cursor: Mode) -> Mode {
                Mode::$mode
            }
        }
    )*};
}

markers! {
    /// [`Mode::Temporal`] at compile time.
    Temporal => Temporal;
    /// [`Mode::NonTemporal`] at compile time.
    NonTemporal => NonTemporal;
    /// [`Mode::FlushCache`] at compile time.
    FlushCache => FlushCache;
    /// [`Mode::Auto`] at compile time (the size test still runs once per call).
    Auto => Auto;
}

/// Use the cursor's default mode ([`Cursor::mode`](crate::iter::Cursor::mode)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CursorDefault;

impl sealed::Sealed for CursorDefault {}
impl Select for CursorDefault {
    #[inline(always)]
    fn select(self, cursor: Mode) -> Mode {
        cursor
    }
}

impl sealed::Sealed for Mode {}
impl Select for Mode {
    #[inline(always)]
    fn select(self, _cursor: Mode) -> Mode {
        self
    }
}
