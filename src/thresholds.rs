//! The public face of the tunables in `crate::tune`: getters and setters of the thresholds.
//! Each first makes sure detection has run, so a value read is never the unset placeholder and
//! a value set is never overwritten by detection's defaults.

use core::sync::atomic::Ordering;

use crate::dispatch;
use crate::threshold_cells;

/// The size from which [`Mode::Auto`](crate::Mode::Auto) copies stream.
///
/// Set from the detected caches (see [`default_nt_threshold`](crate::default_nt_threshold)), from
/// `CACHECOPY_NT_THRESHOLD=bytes` or the `nt` field of `CACHECOPY_TUNE` (with `std`; the
/// variable wins), or by [`set_nt_threshold`].
///
/// ```
/// assert!(cachecopy::nt_threshold() >= 1 << 20);
/// ```
pub fn nt_threshold() -> usize {
    dispatch::active();
    threshold_cells::COPY_NT.load(Ordering::Relaxed)
}

/// Sets the size from which [`Mode::Auto`](crate::Mode::Auto) copies stream, for the whole
/// process. `0` streams every `Auto` copy; `usize::MAX` never does (as does every value above
/// `isize::MAX`; `usize::MAX - 1` reads back as `usize::MAX`).
pub fn set_nt_threshold(bytes: usize) {
    dispatch::active();
    threshold_cells::COPY_NT.store(threshold_cells::stored(bytes), Ordering::SeqCst);
    dispatch::refresh_bounds();
}

/// The size from which [`Mode::Auto`](crate::Mode::Auto) fills stream: the copy rule (see
/// [`nt_threshold`]), which measured right for fills too; `CACHECOPY_FILL_NT_THRESHOLD=bytes`
/// (else the `fill_nt` field of `CACHECOPY_TUNE`, else `CACHECOPY_NT_THRESHOLD`) or
/// [`set_fill_nt_threshold`] overrides it.
pub fn fill_nt_threshold() -> usize {
    dispatch::active();
    threshold_cells::FILL_NT.load(Ordering::Relaxed)
}

/// Sets the size from which [`Mode::Auto`](crate::Mode::Auto) fills stream (`usize::MAX`:
/// never; `usize::MAX - 1` reads back as `usize::MAX`).
pub fn set_fill_nt_threshold(bytes: usize) {
    dispatch::active();
    threshold_cells::FILL_NT.store(threshold_cells::stored(bytes), Ordering::SeqCst);
    dispatch::refresh_bounds();
}

/// The size from which [`Mode::Temporal`](crate::Mode::Temporal) fills (and `Auto` fills below
/// [`fill_nt_threshold`]) use the CPU's string store, x86 `rep stosb`, instead of vector stores.
///
/// Set on Intel CPUs with ERMS to 2 KiB (8 KiB on the Intel models measured, family 6 models
/// 167 and 207: lab/findings/performance.md), on other x86_64 CPUs with ERMS to twice the copy
/// threshold, where
/// `rep stosb` starts to win because it skips reading lines it overwrites whole; overridden by
/// `CACHECOPY_FILL_REP_THRESHOLD=bytes` or the `fill_rep` field of `CACHECOPY_TUNE` (with `std`)
/// or [`set_fill_rep_threshold`].
/// `usize::MAX` (never) without ERMS and on other architectures. Fills of at most eight
/// registers (256 B with AVX2) never use it, whatever the threshold: eight stores need no loop.
///
/// ```
/// let t = cachecopy::fill_rep_threshold();
/// if !cachecopy::cpu().features.erms {
///     assert_eq!(t, usize::MAX);
/// }
/// ```
pub fn fill_rep_threshold() -> usize {
    dispatch::active();
    threshold_cells::FILL_REP.load(Ordering::Relaxed)
}

/// Sets [`fill_rep_threshold`] for the whole process (glibc's equivalent tunable is
/// `glibc.cpu.x86_rep_stosb_threshold`, 2 KiB by default). Ignored where the string store is
/// not used (other architectures); on an x86_64 CPU without ERMS `rep stosb` still works, only
/// slower, so a value below `usize::MAX` is honoured there too. `usize::MAX - 1` reads back as
/// `usize::MAX` (both mean never).
pub fn set_fill_rep_threshold(bytes: usize) {
    dispatch::active();
    threshold_cells::FILL_REP.store(threshold_cells::stored(bytes), Ordering::Relaxed);
}

/// The size from which [`Mode::Temporal`](crate::Mode::Temporal) copies (and `Auto` copies
/// below [`nt_threshold`]) use the CPU's string move, x86 `rep movsb`, instead of vector
/// stores.
///
/// Set to 2 KiB on Intel CPUs with ERMS (8 KiB on the Intel models measured, family 6 models
/// 167 and 207: lab/findings/performance.md), where fast-string stores skip reading the lines they
/// overwrite; `usize::MAX` (never) on AMD, where the vector loop is faster, without ERMS and on
/// other architectures. Overridden by `CACHECOPY_REP_MOVSB_THRESHOLD=bytes` or the `rep_movsb`
/// field of `CACHECOPY_TUNE` (with `std`) or [`set_rep_movsb_threshold`]. Copies of at most
/// eight registers (256 B with AVX2; glibc clamps its tunable there too) never use it, nor do
/// copies whose destination lies 1 to 255 bytes ahead of the source modulo 4 KiB (4K aliasing).
///
/// ```
/// let t = cachecopy::rep_movsb_threshold();
/// if !cachecopy::cpu().features.erms {
///     assert_eq!(t, usize::MAX);
/// }
/// ```
pub fn rep_movsb_threshold() -> usize {
    dispatch::active();
    threshold_cells::REP_MOVSB.load(Ordering::Relaxed)
}

/// Sets [`rep_movsb_threshold`] for the whole process (glibc's equivalent tunable is
/// `glibc.cpu.x86_rep_movsb_threshold`). Ignored on other architectures; on an x86_64 CPU
/// without ERMS `rep movsb` still works, only slower, so a value below `usize::MAX` is honoured
/// there too.
pub fn set_rep_movsb_threshold(bytes: usize) {
    dispatch::active();
    threshold_cells::REP_MOVSB.store(threshold_cells::stored(bytes), Ordering::Relaxed);
}

/// How many 4 KiB pages of the source a streamed copy (`NonTemporal`, and `Auto` from
/// [`nt_threshold`]) reads at once: 1 reads them in order; 2, 4 or 8 take a line from each of
/// that many pages in turn, so that memory serves that many streams at once. The rule is per CPU
/// (4 on the Intel model where runs compared them, 1 elsewhere: lab/findings/performance.md, "Reading
/// pages at once"). Overridden by the `pages` field of `CACHECOPY_TUNE` (with `std`) or
/// [`set_stream_pages`].
///
/// ```
/// assert!([1, 2, 4, 8].contains(&cachecopy::stream_pages()));
/// ```
pub fn stream_pages() -> usize {
    dispatch::active();
    threshold_cells::STREAM_PAGES.load(Ordering::Relaxed)
}

/// Sets [`stream_pages`] for the whole process. A copy racing the call reads with the old or the
/// new value, both correct.
///
/// # Panics
/// If `pages` is not 1, 2, 4 or 8.
///
/// ```
/// let before = cachecopy::stream_pages();
/// cachecopy::set_stream_pages(4);
/// assert_eq!(cachecopy::stream_pages(), 4);
/// cachecopy::set_stream_pages(before);
/// ```
pub fn set_stream_pages(pages: usize) {
    assert!(
        matches!(pages, 1 | 2 | 4 | 8),
        "set_stream_pages: {pages} is not 1, 2, 4 or 8"
    );
    dispatch::active();
    threshold_cells::STREAM_PAGES.store(pages, Ordering::Relaxed);
}

/// The unit tests' hold on the process-wide thresholds: `dispatch::TEST_THRESHOLDS` locked, and
/// the [`nt_threshold`] and [`fill_nt_threshold`] in force when taken set back when dropped
/// (also when a test fails), before the lock is released.
#[cfg(all(test, feature = "std"))]
pub(crate) struct HeldThresholds {
    nt: usize,
    fill_nt: usize,
    _lock: std::sync::MutexGuard<'static, ()>,
}

#[cfg(all(test, feature = "std"))]
impl HeldThresholds {
    /// Waits for the other tests that set thresholds, then holds them.
    pub(crate) fn take() -> HeldThresholds {
        let lock = dispatch::TEST_THRESHOLDS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        HeldThresholds {
            nt: nt_threshold(),
            fill_nt: fill_nt_threshold(),
            _lock: lock,
        }
    }
}

#[cfg(all(test, feature = "std"))]
impl Drop for HeldThresholds {
    fn drop(&mut self) {
        set_nt_threshold(self.nt);
        set_fill_nt_threshold(self.fill_nt);
    }
}
