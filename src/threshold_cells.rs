//! The published thresholds, one atomic cell each, read relaxed (the kernels read two of them;
//! dispatch derives each mode's bound from the `Auto` two, `dispatch::copy_below`): every value
//! is a valid setting, so a copy racing a setter runs with the old or the new one, both
//! correct. They start `UNSET` and are filled once by dispatch's first call; before that no
//! kernel runs (a kernel table is only handed out after detection), so a kernel never sees
//! `UNSET` except as "never" (`usize::MAX`).
//!
//! A leaf below every layer that reads them, so the kernels reach their two without an arrow
//! climbing to the record that writes them ([`crate::dispatch::tune`]).

use core::sync::atomic::AtomicUsize;

/// Not yet initialised (also "never" for a threshold: no length reaches it).
///
/// Not `usize::MAX`: that is a value callers set ("never"), and a first call still detecting on
/// another thread would take it for unset and overwrite it with its default. Every threshold
/// above `isize::MAX` means never (no length exceeds `isize::MAX`), so this one value is stored
/// as `usize::MAX` instead ([`stored`]).
pub(crate) const UNSET: usize = usize::MAX - 1;

/// What a cell holds for a threshold of `bytes`: `bytes`, except `UNSET` (an equivalent
/// "never") becomes `usize::MAX`.
pub(crate) const fn stored(bytes: usize) -> usize {
    if bytes == UNSET {
        usize::MAX
    } else {
        bytes
    }
}
/// From this many bytes `Auto` copies stream.
pub(crate) static COPY_NT: AtomicUsize = AtomicUsize::new(UNSET);
/// From this many bytes `Auto` fills stream.
pub(crate) static FILL_NT: AtomicUsize = AtomicUsize::new(UNSET);
/// From this many bytes `Temporal` fills use the CPU's string store (x86 `rep stosb`);
/// `usize::MAX` (and `UNSET`, before detection) means never. Read by `kernel::fill_temporal`.
pub(crate) static FILL_REP: AtomicUsize = AtomicUsize::new(UNSET);
/// From this many bytes `Temporal` copies use the CPU's string move (x86 `rep movsb`);
/// `usize::MAX` (and `UNSET`, before detection) means never. Read by `kernel::copy_temporal`.
pub(crate) static REP_MOVSB: AtomicUsize = AtomicUsize::new(UNSET);

/// From this many bytes a `Temporal` copy whose backend has 256-bit registers runs its loop on
/// AVX-512 registers (`kernel::copy_temporal`); `usize::MAX` means never, and is all it holds
/// on a CPU that does not run AVX-512 F and BW (`dispatch::publish` stores nothing else there),
/// so a kernel reading any other value may run AVX-512 code.
pub(crate) static WIDE_COPY: AtomicUsize = AtomicUsize::new(usize::MAX);

/// How many 4 KiB pages of the source a streamed copy reads at once (`kernel::copy_nontemporal`):
/// 2, 4 or 8; any other value (1, and `UNSET` before detection) reads them in order.
pub(crate) static STREAM_PAGES: AtomicUsize = AtomicUsize::new(UNSET);

/// Whether a short fill at the call site (`kernel::small`) takes the masked class: it does when
/// its destination's offset in its 4 KiB page is below this bound. 0 (never) unless the
/// record's `Small` chose masked fills on a CPU that runs them, then
/// [`MASKED_FILL_WINDOWS`]: a 64-byte window at that offset stays in its page (a masked-off
/// byte on the next page, were it not mapped, would cost a microcode assist). One load and one
/// compare on every short fill, which is why the choice and the page test share it. Read
/// relaxed: every value is correct on a CPU that runs the masked class (detection sets it only
/// there), so a call racing the store runs either class.
pub(crate) static MASKED_FILL_BELOW: AtomicUsize = AtomicUsize::new(0);
/// [`MASKED_FILL_BELOW`] with masked fills on: the page offsets whose 64-byte window stays in
/// the page.
pub(crate) const MASKED_FILL_WINDOWS: usize = 4096 - 63;
