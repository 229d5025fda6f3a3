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
/// From this many bytes `Temporal` copies use the CPU's string move (x86 `rep movsb`);
/// `usize::MAX` (and `UNSET`, before detection) means never. Read by `kernel::copy_temporal`.
pub(crate) static REP_MOVSB: AtomicUsize = AtomicUsize::new(UNSET);

/// `CACHECOPY_NT_THRESHOLD=calibrate` asked for a calibration at detection; taken (once) by
/// dispatch when its table is published.
static CALIBRATE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Whether a calibration was asked for and not yet taken: true for exactly one caller.
#[cfg(all(feature = "std", unix))]
pub(crate) fn take_calibration_request() -> bool {
    CALIBRATE.swap(false, Ordering::Relaxed)
}

/// Sets every tunable still `UNSET` from the environment or from `cpu`'s defaults. Racing
/// callers compute the same values; a value a setter stored first is kept (setters store
/// through [`stored`], so never `UNSET`).
pub(crate) fn init(cpu: &Cpu) {
    let (copy_default, fill_default) = default_thresholds(cpu);
    let calibrate = env(c"CACHECOPY_NT_THRESHOLD")
        .is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"calibrate"));
    if calibrate {
        CALIBRATE.store(true, Ordering::Relaxed);
    }
    let both = if calibrate {
        None
    } else {
        env_bytes(c"CACHECOPY_NT_THRESHOLD")
    };
    let copy = both.unwrap_or(copy_default);
    let fill = env_bytes(c"CACHECOPY_FILL_NT_THRESHOLD")
        .or(both)
        .unwrap_or(fill_default);
    let fill_rep =
        env_bytes(c"CACHECOPY_FILL_REP_THRESHOLD").unwrap_or_else(|| default_fill_rep(cpu));
    let rep_movsb =
        env_bytes(c"CACHECOPY_REP_MOVSB_THRESHOLD").unwrap_or_else(|| default_rep_movsb(cpu));
    for (cell, value) in [
        (&COPY_NT, copy),
        (&FILL_NT, fill),
        (&FILL_REP, fill_rep),
        (&REP_MOVSB, rep_movsb),
    ] {
        let _ = cell.compare_exchange(UNSET, stored(value), Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// The NT thresholds `Auto` uses when nothing overrides them: `(copy, fill)`, by CPU family,
/// from the detected caches. Each rule cites the measurement it rests on (`docs/machines/`).
///
/// - **Intel with a non-inclusive L3** (server parts since Skylake-SP): copy from the L2 size,
///   fill from twice it. A line a copy evicts from the L2 is written to the L3 as a victim, so
///   temporal copies pay L3 write bandwidth from about the L2 size on, however large the L3.
///   Measured on the Intel Xeon VM (family 6 model 207, L2 2 MiB, a reported 260 MiB L3): the
///   hot-destination crossover is 2 MiB for copies and 4 MiB for fills (`cachecopy report`,
///   sections 5 and 5b, docs/machines/intel-xeon-f6m207.md); `L3 / 4` would be 65 MiB there,
///   where streaming already runs 1.5-1.7x.
/// - **Everything else** (AMD, Intel with an inclusive L3, other vendors): a quarter of one
///   last-level cache instance, at least twice the L2. A copy of `len` bytes brings `2 * len`
///   into the caches; from `L3 / 4` that is half the L3. Measured on the AMD Zen3 VM (one
///   32 MiB L3 per CCX from CPUID 0x8000001D): the hot crossover is 8 MiB for copies and
///   5-6 MiB for fills, so both use 8 MiB (docs/machines/amd-epyc-zen3.md). The cache figures
///   come from CPUID leaf 4 or 0x8000001D, never the legacy 0x80000006 (which glibc uses and
///   which reports 256 MiB on that VM).
/// - An implausible report (an L3 smaller than the L2, or none at all) gets the safe floor
///   instead: 4 MiB without figures, never below 1 MiB.
fn default_thresholds(cpu: &Cpu) -> (usize, usize) {
    const FLOOR: usize = 1 << 20;
    const FALLBACK: usize = 4 << 20;
    let c = &cpu.caches;
    let l3 = c.l3.filter(|&l3| l3 >= c.l2.unwrap_or(0));
    if let (true, Some(false), Some(l2)) = (cpu.is_intel(), c.l3_inclusive, c.l2) {
        return (l2.max(FLOOR), (2 * l2).max(FLOOR));
    }
    let copy = match (c.l2, l3) {
        (l2, Some(l3)) => (l3 / 4).max(2 * l2.unwrap_or(0)),
        (Some(l2), None) => 2 * l2,
        _ => FALLBACK,
    }
    .max(FLOOR);
    (copy, copy)
}

/// The copy threshold the crate derives from `cpu` when nothing overrides it (see the rules
/// on `default_thresholds` in `src/tune.rs`): the L2 size on Intel parts with a non-inclusive
/// L3, else a quarter of one last-level cache instance and at least twice the L2; never below
/// 1 MiB, 4 MiB without cache figures.
///
/// ```
/// let cpu = cachecopy::cpu();
/// assert!(cachecopy::default_nt_threshold(&cpu) >= 1 << 20);
/// ```
pub fn default_nt_threshold(cpu: &Cpu) -> usize {
    default_thresholds(cpu).0
}

/// The size from which `Temporal` fills use `rep stosb` when nothing overrides it.
///
/// - Intel with ERMS: 2 KiB, glibc's `x86_rep_stosb_threshold`. A string store writes whole
///   lines without reading them for ownership; the vector loop ran 0.72-0.84x of glibc's
///   `memset` (which uses `rep stosb`) from 16 KiB on the Intel Xeon VM
///   (docs/machines/intel-xeon-f6m207.md).
/// - AMD and other x86_64 CPUs with ERMS: twice the copy threshold. On the Zen3 VM the vector
///   loop is ahead below 12 MiB (2x at 4-16 KiB, the string store's start-up) and `rep stosb`
///   from 16 MiB (docs/machines/amd-epyc-zen3.md).
/// - Builds with the word backend only (soft-float targets, `cachecopy_integer_only`), with
///   ERMS: from [`WORD_FILL_REP`] bytes, since the loop there stores 8 bytes at a time.
/// - No ERMS, other architectures: never (`usize::MAX`).
fn default_fill_rep(cpu: &Cpu) -> usize {
    if !(cfg!(target_arch = "x86_64") && cpu.features.erms) {
        usize::MAX
    } else if cfg!(any(cachecopy_integer_only, not(target_feature = "sse2"))) {
        WORD_FILL_REP
    } else if cpu.is_intel() {
        2 << 10
    } else {
        default_thresholds(cpu).1.saturating_mul(2)
    }
}

/// The size from which `Temporal` copies use `rep movsb` when nothing overrides it.
///
/// - Intel with ERMS: 2 KiB (glibc: 2112 B on the Xeon VM). The vector loop ran 0.81-0.87x of
///   glibc's `memcpy` into a cold destination from 16 KiB, and a bare `rep movsb` 0.99-1.04x
///   from 4 KiB to 64 MiB (docs/machines/intel-xeon-f6m207.md): fast-string stores skip the
///   read-for-ownership of lines they overwrite whole.
/// - AMD: never. On Zen3 the vector loop beats glibc, and `rep movsb` slows down for some
///   source and destination alignments (glibc BZ 30994; glibc 2.40 stopped using it on Zen3
///   and later).
/// - No ERMS, unknown vendors, other architectures: never (`usize::MAX`).
fn default_rep_movsb(cpu: &Cpu) -> usize {
    if cfg!(target_arch = "x86_64") && cpu.features.erms && cpu.is_intel() {
        2 << 10
    } else {
        usize::MAX
    }
}

/// From this many bytes a word-backend `Temporal` fill uses `rep stosb` (with ERMS). Measured on
/// the Xeon VM (Ice Lake-class, ERMS+FSRM; interleaved medians, hot destination, word loop time
/// ÷ `rep stosb` time): 0.72 at 256 B, 0.91 at 640 B, 1.10 at 768 B, 1.4-1.6 at 1 KiB, 4.8 at
/// 4-16 KiB, 1.3-1.5 at 64 KiB-1 MiB, 1.06-1.29 at 4-64 MiB. Linux's `memset` uses it at every
/// size on ERMS CPUs; glibc from 2 KiB against vector loops.
const WORD_FILL_REP: usize = 1024;

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
