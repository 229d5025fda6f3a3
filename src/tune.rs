//! Tunables: the size thresholds the kernels and `Auto` read, their built-in defaults (derived
//! from the detected CPU, each rule with its evidence), and the environment overrides.
//!
//! The values live in relaxed atomics: every value is a valid setting, so a copy racing a
//! setter runs with the old or the new one, both correct. They start `UNSET` and are filled once
//! by dispatch's first call ([`init`]); before that no kernel runs (a kernel table is only handed
//! out after detection), so a kernel never sees `UNSET` except as "never" (`usize::MAX`).
//!
//! Reading the environment neither allocates nor locks (an allocator may be the first caller):
//! `getenv` returns a pointer into the process environment, the value is parsed in place, and a
//! complaint about a bad value is formatted on the stack and written with one `write(2)`.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::cpu::Cpu;

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

/// Sets every tunable still `UNSET` from the environment or from `cpu`'s defaults. Racing
/// callers compute the same values; a value a setter stored first is kept (setters store
/// through [`stored`], so never `UNSET`).
pub(crate) fn init(cpu: &Cpu) {
    let (copy_default, fill_default) = default_thresholds(cpu);
    let both = env_bytes(c"CACHECOPY_NT_THRESHOLD");
    let copy = both.unwrap_or(copy_default);
    let fill = env_bytes(c"CACHECOPY_FILL_NT_THRESHOLD")
        .or(both)
        .unwrap_or(fill_default);
    let fill_rep =
        env_bytes(c"CACHECOPY_FILL_REP_THRESHOLD").unwrap_or_else(|| default_fill_rep(cpu));
    for (cell, value) in [(&COPY_NT, copy), (&FILL_NT, fill), (&FILL_REP, fill_rep)] {
        let _ = cell.compare_exchange(UNSET, stored(value), Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// The NT thresholds `Auto` uses when nothing overrides them, from the detected caches.
///
/// Copy: a quarter of one last-level cache instance (at least twice the L2 and 1 MiB). A copy
/// of `len` bytes brings `2 * len` into the caches with ordinary stores; from `L3 / 4` up that is
/// half the L3, so the copy evicts most of what its neighbours (and its own destination, by the
/// time it is read) had cached, and streaming wins. On the AMD Zen3 VM the measured
/// hot-destination crossover is `L3 / 4` (docs/machines/amd-epyc-zen3.md). The cache figures
/// come from CPUID leaf 4 or 0x8000001D, never the legacy 0x80000006 (which glibc uses). Without
/// cache figures: 4 MiB.
///
/// Fill: the same rule; the fill crossover was measured on its own and agrees
/// (docs/machines/amd-epyc-zen3.md, section 5b).
fn default_thresholds(cpu: &Cpu) -> (usize, usize) {
    const FALLBACK: usize = 4 << 20;
    let c = &cpu.caches;
    let copy = match (c.l2, c.l3) {
        (l2, Some(l3)) => (l3 / 4).max(2 * l2.unwrap_or(0)),
        (Some(l2), None) => 2 * l2,
        _ => FALLBACK,
    }
    .max(1 << 20);
    (copy, copy)
}

/// The copy threshold the crate derives from `cpu`'s caches when nothing overrides it: a quarter
/// of one last-level cache instance, at least twice the L2 and at least 1 MiB (4 MiB without
/// cache figures).
///
/// ```
/// let cpu = cachecopy::cpu();
/// assert!(cachecopy::default_nt_threshold(&cpu) >= 1 << 20);
/// ```
pub fn default_nt_threshold(cpu: &Cpu) -> usize {
    default_thresholds(cpu).0
}

/// The size from which `Temporal` fills use `rep stosb` on x86_64 CPUs with ERMS (fast
/// strings), when nothing overrides it: twice the copy threshold.
///
/// `rep stosb` writes whole lines without first reading them for ownership once the fill is
/// large; the vector loop pays that read for every line that is not cached. On the Zen3 VM the
/// vector loop is ahead below 12 MiB and `rep stosb` from 16 MiB (docs/machines/amd-epyc-zen3.md).
/// Other CPUs and architectures: never (`usize::MAX`).
fn default_fill_rep(cpu: &Cpu) -> usize {
    if cfg!(target_arch = "x86_64") && cpu.features.erms {
        default_thresholds(cpu).1.saturating_mul(2)
    } else {
        usize::MAX
    }
}

/// The value of environment variable `name`, as bytes (with `std`; `None` without it). Neither
/// allocates nor locks.
#[allow(unused_variables)]
pub(crate) fn env(name: &core::ffi::CStr) -> Option<&'static [u8]> {
    cfg_if::cfg_if! {
        if #[cfg(all(feature = "std", unix, not(miri)))] {
            // SAFETY: `name` is NUL-terminated; `getenv` returns null or a pointer to a
            // NUL-terminated string in the process environment. Like every reader of the
            // environment, this relies on no thread calling `setenv` concurrently (Rust's
            // `std::env::set_var` is `unsafe` for that reason).
            unsafe {
                let p = libc::getenv(name.as_ptr());
                if p.is_null() {
                    None
                } else {
                    Some(core::ffi::CStr::from_ptr(p).to_bytes())
                }
            }
        } else if #[cfg(feature = "std")] {
            // No libc `getenv` (Windows) or no FFI (Miri): std's reader. It allocates the
            // value, which leaks here on purpose so the slice can be 'static: once per
            // variable per process, at detection.
            let v = std::env::var(name.to_str().ok()?).ok()?;
            Some(std::boxed::Box::leak(v.into_boxed_str()).as_bytes())
        } else {
            None
        }
    }
}

/// The byte count in environment variable `name`; a value that is not one is ignored with one
/// line on stderr.
pub(crate) fn env_bytes(name: &core::ffi::CStr) -> Option<usize> {
    let raw = env(name)?;
    match core::str::from_utf8(raw).ok().map(str::trim) {
        Some(v) => match v.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                warn(format_args!(
                    "cachecopy: ignoring {}={v:?}: not a byte count",
                    name.to_str().unwrap_or("?")
                ));
                None
            }
        },
        None => {
            warn(format_args!(
                "cachecopy: ignoring {}: not UTF-8",
                name.to_str().unwrap_or("?")
            ));
            None
        }
    }
}

/// Prints one line on stderr, once per process, however many threads race detection. The line
/// is formatted into a stack buffer (cut at 512 bytes) and written with one `write(2)`: no
/// allocation and no lock.
#[allow(unused_variables)]
pub(crate) fn warn(msg: core::fmt::Arguments<'_>) {
    #[cfg(feature = "std")]
    {
        use core::sync::atomic::AtomicBool;
        static WARNED: AtomicBool = AtomicBool::new(false);
        if WARNED.swap(true, Ordering::Relaxed) {
            return;
        }
        let mut line = Line {
            buf: [0; 512],
            len: 0,
        };
        let _ = core::fmt::write(&mut line, msg);
        let _ = core::fmt::Write::write_str(&mut line, "\n");
        line.emit();
    }
}

/// A fixed stack buffer that keeps what fits.
#[cfg(feature = "std")]
struct Line {
    buf: [u8; 512],
    len: usize,
}

#[cfg(feature = "std")]
impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

#[cfg(feature = "std")]
impl Line {
    fn emit(&self) {
        cfg_if::cfg_if! {
            if #[cfg(all(unix, not(miri)))] {
                // SAFETY: writes `len` initialised bytes of our own buffer to fd 2; a failed or
                // short write only loses the warning.
                let _ = unsafe { libc::write(2, self.buf.as_ptr().cast(), self.len) };
            } else {
                use std::io::Write;
                let _ = std::io::stderr().write_all(&self.buf[..self.len]);
            }
        }
    }
}
