//! Tunables: the size thresholds the kernels and `Auto` read, their built-in defaults (derived
//! from the detected CPU, each rule with its evidence), and the environment overrides.
//!
//! The values live in relaxed atomics: every value is a valid setting, so a copy racing a
//! setter runs with the old or the new one, both correct. They start `UNSET` and are filled once
//! by dispatch's first call ([`init`]); before that no kernel runs (a kernel table is only handed
//! out after detection), so a kernel never sees `UNSET` except as "never" (`usize::MAX`).
//!
//! `CACHECOPY_TUNE=nt=16M,fill_nt=16M,rep_movsb=never,fill_rep=2K` sets every tunable in one
//! line (the one a `Calibration` writes); each row of [`FIELDS`] is one tunable: its name in the
//! line, its own variable (which wins over the field), its cell and its value syntax.
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

/// One tunable a `CACHECOPY_TUNE` line can set and a [`Calibration`](crate::Calibration) can
/// decide: its field name in the line, its own environment variable, its cell, and how its
/// value is read and written. One row per tunable ([`FIELDS`]); a new tunable (an engine
/// choice, say) is one more row here, one more value in `Calibration::values`, and one more
/// line in `init`.
pub(crate) struct Field {
    /// The name in `CACHECOPY_TUNE` (`nt` in `nt=16M`).
    pub(crate) name: &'static str,
    /// The variable that sets this tunable alone, and wins over the line's field.
    pub(crate) var: &'static core::ffi::CStr,
    /// Where the value lives.
    pub(crate) cell: &'static AtomicUsize,
    /// Reads a value (surrounding blanks already trimmed); `None`: not one.
    pub(crate) parse: fn(&[u8]) -> Option<usize>,
    /// Writes a value as `parse` reads it.
    // Used by `Calibration`'s line, which exists with `std` on Unix only.
    #[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))]
    pub(crate) show: fn(usize, &mut dyn core::fmt::Write) -> core::fmt::Result,
    /// What a value is, for the warning about a bad one.
    pub(crate) what: &'static str,
}

/// Every tunable, in the order `CACHECOPY_TUNE` lines are written.
pub(crate) static FIELDS: [Field; 4] = [
    Field {
        name: "nt",
        var: c"CACHECOPY_NT_THRESHOLD",
        cell: &COPY_NT,
        parse: parse_size,
        show: show_size,
        what: "a size",
    },
    Field {
        name: "fill_nt",
        var: c"CACHECOPY_FILL_NT_THRESHOLD",
        cell: &FILL_NT,
        parse: parse_size,
        show: show_size,
        what: "a size",
    },
    Field {
        name: "rep_movsb",
        var: c"CACHECOPY_REP_MOVSB_THRESHOLD",
        cell: &REP_MOVSB,
        parse: parse_size,
        show: show_size,
        what: "a size",
    },
    Field {
        name: "fill_rep",
        var: c"CACHECOPY_FILL_REP_THRESHOLD",
        cell: &FILL_REP,
        parse: parse_size,
        show: show_size,
        what: "a size",
    },
];

/// The engine's fields in `CACHECOPY_TUNE` (and `CACHECOPY_ENGINE`): which backend runs the
/// `temporal` job, the `stream` job, both (`body`), and the `edges` store. Dispatch applies
/// them (`dispatch::apply_engine_fields`); [`tune_line`] only skips them.
pub(crate) const ENGINE_FIELDS: [&str; 4] = ["temporal", "stream", "body", "edges"];

/// Indices into [`FIELDS`].
pub(crate) const NT: usize = 0;
pub(crate) const FILL: usize = 1;
pub(crate) const MOVSB: usize = 2;
pub(crate) const STOSB: usize = 3;

/// A size as `CACHECOPY_TUNE` writes it: decimal digits with an optional binary suffix `K`, `M`
/// or `G` (either case; 1024, 1024², 1024³), or `never` (`usize::MAX`). `None` for anything
/// else, and for a value that overflows `usize`. Parses in place: no allocation.
pub(crate) fn parse_size(v: &[u8]) -> Option<usize> {
    if v.eq_ignore_ascii_case(b"never") {
        return Some(usize::MAX);
    }
    let (digits, shift) = match v.last()?.to_ascii_uppercase() {
        b'K' => (&v[..v.len() - 1], 10),
        b'M' => (&v[..v.len() - 1], 20),
        b'G' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: usize = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(d - b'0'))?;
    }
    n.checked_mul(1 << shift)
}

/// Writes `bytes` as [`parse_size`] reads it: `never` for every threshold no length reaches
/// (above `isize::MAX`), else the largest suffix that divides it exactly (`16M`, `2K`, `1000`).
pub(crate) fn show_size(bytes: usize, w: &mut dyn core::fmt::Write) -> core::fmt::Result {
    if bytes > isize::MAX as usize {
        return w.write_str("never");
    }
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes != 0 && bytes.is_multiple_of(1 << shift) {
            return write!(w, "{}{suffix}", bytes >> shift);
        }
    }
    write!(w, "{bytes}")
}

/// The fields of `CACHECOPY_TUNE` (`name=value,name=value`, blanks around names and values
/// ignored, empty fields skipped, a later field overriding an earlier one of the same name), one
/// value per row of [`FIELDS`]. A field with an unknown name, no `=` or a bad value is reported
/// (once per process, [`warn`]) and ignored; the others are kept. No allocation: the line is
/// split in place.
pub(crate) fn tune_line(line: &[u8]) -> [Option<usize>; FIELDS.len()] {
    let mut out = [None; FIELDS.len()];
    for raw in line.split(|&b| b == b',') {
        let field = raw.trim_ascii();
        if field.is_empty() {
            continue;
        }
        let Some(eq) = field.iter().position(|&b| b == b'=') else {
            bad_field(field, "not name=value");
            continue;
        };
        let (name, value) = (field[..eq].trim_ascii(), field[eq + 1..].trim_ascii());
        let Some(i) = FIELDS.iter().position(|f| f.name.as_bytes() == name) else {
            // The engine's fields are read by dispatch (`apply_engine_fields`).
            if !ENGINE_FIELDS.iter().any(|f| f.as_bytes() == name) {
                bad_field(
                    field,
                    "unknown name (known: nt, fill_nt, rep_movsb, fill_rep, temporal, stream, \
                     body, edges)",
                );
            }
            continue;
        };
        match (FIELDS[i].parse)(value) {
            Some(v) => out[i] = Some(v),
            None => bad_field(field, FIELDS[i].what),
        }
    }
    out
}

/// The warning about one bad `CACHECOPY_TUNE` field.
fn bad_field(field: &[u8], why: &str) {
    match core::str::from_utf8(field) {
        Ok(f) => warn(format_args!(
            "cachecopy: ignoring CACHECOPY_TUNE field {f:?}: {why}"
        )),
        Err(_) => warn(format_args!(
            "cachecopy: ignoring a CACHECOPY_TUNE field: not UTF-8"
        )),
    }
}

/// Sets every tunable still `UNSET` from the environment or from `cpu`'s defaults. Racing
/// callers compute the same values; a value a setter stored first is kept (setters store
/// through [`stored`], so never `UNSET`).
///
/// Which setting wins, per tunable: its own variable (`CACHECOPY_FILL_NT_THRESHOLD` for fills),
/// then its `CACHECOPY_TUNE` field, then (fills only) `CACHECOPY_NT_THRESHOLD`, then the
/// built-in rule.
pub(crate) fn init(cpu: &Cpu) {
    let (copy_default, fill_default) = default_thresholds(cpu);
    let calibrate = env(c"CACHECOPY_NT_THRESHOLD")
        .is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(b"calibrate"));
    if calibrate {
        CALIBRATE.store(true, Ordering::Relaxed);
    }
    let line = env(c"CACHECOPY_TUNE").map_or([None; FIELDS.len()], tune_line);
    let both = if calibrate {
        None
    } else {
        env_bytes(FIELDS[NT].var)
    };
    let copy = both.or(line[NT]).unwrap_or(copy_default);
    let fill = env_bytes(FIELDS[FILL].var)
        .or(line[FILL])
        .or(both)
        .unwrap_or(fill_default);
    let rep_movsb = env_bytes(FIELDS[MOVSB].var)
        .or(line[MOVSB])
        .unwrap_or_else(|| default_rep_movsb(cpu));
    let fill_rep = env_bytes(FIELDS[STOSB].var)
        .or(line[STOSB])
        .unwrap_or_else(|| default_fill_rep(cpu));
    let values = [copy, fill, rep_movsb, fill_rep];
    for (field, value) in FIELDS.iter().zip(values) {
        let _ =
            field
                .cell
                .compare_exchange(UNSET, stored(value), Ordering::Relaxed, Ordering::Relaxed);
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
/// - **Everything else** (AMD, Intel with an inclusive L3, other vendors): a fraction of one
///   last-level cache instance, at least twice the L2. A copy of `len` bytes brings `2 * len`
///   into the caches; from `L3 / 4` that is half the L3, from `L3 / 2` all of it. No single
///   fraction fits the AMD parts measured, which have the same 32 MiB L3 per CCX (CPUID
///   0x8000001D) and crossovers 2x apart, so the rule follows the core generation, told apart by
///   its L2 size:
///   - L2 below 1 MiB (Zen 3 and earlier, 512 KiB): `L3 / 4`. Measured on the Zen 3 VM: the hot
///     crossover is 8 MiB for copies and 5-6 MiB for fills, so both use 8 MiB
///     (docs/machines/amd-epyc-zen3.md).
///   - L2 of 1 MiB and more (Zen 4 and Zen 5): `L3 / 2`. Measured on the Zen 4 VM (family 25
///     model 17, L2 1 MiB): the hot crossover is 16 MiB for copies and for fills; at 8 MiB
///     streaming runs 0.68x (copies) and 0.92x (fills) of ordinary stores
///     (docs/machines/amd-epyc-zen4-f25m17.md).
///
///   Parts with a stacked L3 (Milan-X, Genoa-X: 96 MiB per CCX) were not measured; there
///   `calibrate()` decides (docs/performance.md, "Calibration"). The cache figures come from
///   CPUID leaf 4 or 0x8000001D, never the legacy 0x80000006 (which glibc uses and which reports
///   256-320 MiB on these VMs).
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
        (Some(l2), Some(l3)) if l2 >= 1 << 20 => (l3 / 2).max(2 * l2),
        (l2, Some(l3)) => (l3 / 4).max(2 * l2.unwrap_or(0)),
        (Some(l2), None) => 2 * l2,
        _ => FALLBACK,
    }
    .max(FLOOR);
    (copy, copy)
}

/// The copy threshold the crate derives from `cpu` when nothing overrides it (see the rules
/// on `default_thresholds` in `src/tune.rs`): the L2 size on Intel parts with a non-inclusive
/// L3; else a quarter of one last-level cache instance (half of it with an L2 of 1 MiB or more,
/// as on AMD Zen 4), at least twice the L2; never below 1 MiB, 4 MiB without cache figures.
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
