//! The per-CPU record: every choice dispatch makes per CPU (the engine's three fields, the
//! flush instruction, the `Auto` thresholds of copies and fills, the `rep movsb` / `rep stosb`
//! thresholds) in one value, [`Tuning`], built once at detection: the built-in rules
//! (`super::rules`), then the `CACHECOPY_TUNE` line, then the single variables, all read by one
//! parser over one table, [`FIELDS`]. Dispatch publishes the record beside the kernel table;
//! `calibrate()` returns one; the report prints it; its `Display` is the tuning line.
//!
//! **A new tunable touches one place**: a field of [`Tuning`] with its row in [`FIELDS`] (its
//! name in the line, its own variable if any, its kind and its accessors), and its default in
//! `super::rules::rule`. The parser, the line, the report and the calibration's line follow the
//! table.
//!
//! The thresholds are published in atomic cells ([`crate::threshold_cells`]).
//!
//! Reading the environment neither allocates nor locks (an allocator may be the first caller):
//! the values are parsed in place and a complaint is one `write(2)` from the stack (`super::env`).

use core::ffi::CStr;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::engine::{Backend, Edges, Engine};
use super::env::{env, warn};
use crate::cpu::FlushOp;
use crate::threshold_cells::{
    stored, COPY_NT, FILL_NT, FILL_REP, MASKED_FILL_WINDOWS, REP_MOVSB, STREAM_PAGES, UNSET,
};

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

/// Every per-CPU choice, in one record: what dispatch runs on this CPU.
///
/// Built once at detection from the built-in rules (each citing its run, `lab/machines/`),
/// then the `CACHECOPY_TUNE` line, then the single variables (`CACHECOPY_NT_THRESHOLD`,
/// `CACHECOPY_FILL_NT_THRESHOLD`, `CACHECOPY_REP_MOVSB_THRESHOLD`,
/// `CACHECOPY_FILL_REP_THRESHOLD`, `CACHECOPY_BACKEND`), then `CACHECOPY_ENGINE`; a variable wins
/// over its field of the line. In secure mode (a set-user-ID program: crate docs,
/// "Environment") no variable is read and the record is the rules'. [`tuning()`](crate::tuning())
/// reads the one in force; [`calibrate`](crate::calibrate()) measures one. Its `Display` is the
/// `CACHECOPY_TUNE` value that sets every field to what it holds:
///
/// ```
/// let t = cachecopy::tuning();
/// assert_eq!(t.engine, cachecopy::engine());
/// assert_eq!(t.nt, cachecopy::nt_threshold());
/// println!("CACHECOPY_TUNE={t}"); // nt=8M,fill_nt=8M,rep_movsb=never,fill_rep=16M,temporal=avx2,...
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Tuning {
    /// Which backend runs each job and how partial lines are written (`temporal=`, `stream=`,
    /// `body=` both jobs, `edges=`).
    pub engine: Engine,
    /// The instruction `FlushCache` copies write lines back with (`flush=`).
    pub flush: FlushOp,
    /// From this many bytes `Auto` copies stream (`nt=`).
    pub nt: usize,
    /// From this many bytes `Auto` fills stream (`fill_nt=`).
    pub fill_nt: usize,
    /// From this many bytes `Temporal` copies use x86 `rep movsb` (`rep_movsb=`; `usize::MAX`:
    /// never).
    pub rep_movsb: usize,
    /// From this many bytes `Temporal` fills use x86 `rep stosb` (`fill_rep=`).
    pub fill_rep: usize,
    /// How fills of 0 to 64 bytes are made at the call site (`small=plain` or `masked-fills`).
    pub small: Small,
    /// How many 4 KiB pages of the source a streamed copy reads at once (`pages=`: 1, 2, 4 or
    /// 8); see [`set_stream_pages`](crate::set_stream_pages).
    pub pages: usize,
    /// From this many bytes `Temporal` copies (and `Auto` copies stored temporally) whose
    /// backend has 256-bit registers run their loop on AVX-512 registers (`wide_copy=`;
    /// `usize::MAX`: never, the only value on a CPU without AVX-512 F and BW). The engine stays
    /// what it is for every other size and job.
    pub wide_copy: usize,
}

/// How the dispatched entry points fill 0 to 64 bytes at the call site (`fill_raw` and every
/// entry built on it; copies and moves always take the plain classes): see
/// `lab/findings/small-calls.md` for the runs behind each CPU's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Small {
    /// Size classes on the baseline register (SSE2 on x86_64, NEON on aarch64, the word
    /// elsewhere): a few compares pick the class, each then a straight line of loads and
    /// stores.
    Plain,
    /// Fills take one AVX-512 byte-masked store for every length from 0 to 64 bytes (no
    /// compare between those lengths, so nothing to mispredict when the size changes every
    /// call); copies keep the plain classes (a masked load waits for earlier stores into its
    /// page, so a copy out of bytes just written, a header built on the stack, ran slower).
    /// Needs AVX-512 F and BW and BMI2; inline assembly at the call site, so the caller needs
    /// no target feature.
    MaskedFills,
}

impl Small {
    /// `"plain"` or `"masked-fills"`, as `CACHECOPY_TUNE`'s `small=` spells them.
    pub fn name(self) -> &'static str {
        match self {
            Small::Plain => "plain",
            Small::MaskedFills => "masked-fills",
        }
    }

    /// The choice with this name (ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Small> {
        [Small::Plain, Small::MaskedFills]
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// The `threshold_cells::MASKED_FILL_BELOW` bound of this choice.
    pub(crate) fn fill_bound(self) -> usize {
        match self {
            Small::Plain => 0,
            Small::MaskedFills => MASKED_FILL_WINDOWS,
        }
    }

    /// The choice with this `threshold_cells::MASKED_FILL_BELOW` bound.
    pub(crate) fn from_fill_bound(bound: usize) -> Small {
        if bound == 0 {
            Small::Plain
        } else {
            Small::MaskedFills
        }
    }
}

impl fmt::Display for Small {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What one field's value is, and how it is read and written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A size: digits with an optional `K`, `M` or `G`, or `never` ([`parse_size`]).
    Size,
    /// A backend this CPU runs, by [`Backend::name`].
    Backend,
    /// `masked` or `overlap`.
    Edges,
    /// A flush instruction this CPU runs, by [`FlushOp::name`].
    Flush,
    /// `plain`, or `masked-fills` and `masked` where this CPU runs the masked class.
    Small,
    /// A number of pages: 1, 2, 4 or 8.
    Pages,
    /// A size, or `never`; a size only where this CPU runs AVX-512.
    Wide,
}

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Size(usize),
    Backend(Backend),
    Edges(Edges),
    Flush(FlushOp),
    Small(Small),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Size(n) => show_size(n, f),
            Value::Backend(b) => f.write_str(b.name()),
            Value::Edges(e) => f.write_str(e.name()),
            Value::Flush(op) => f.write_str(op.name()),
            Value::Small(s) => f.write_str(s.name()),
        }
    }
}

/// What this CPU runs, for checking a field's value: the runnable backends and the flush
/// instructions it executes.
pub(crate) struct Runs<'a> {
    pub(crate) backends: &'a [Backend],
    /// One bit per [`FlushOp::index`].
    pub(crate) flush: u8,
    /// Whether this CPU runs the masked small class ([`Small::MaskedFills`]).
    pub(crate) masks: bool,
}

impl Runs<'_> {
    /// Whether this CPU runs the AVX-512 backend (what [`Kind::Wide`] asks).
    fn avx512(&self) -> bool {
        self.backends.contains(&Backend::Avx512)
    }
}

impl Kind {
    /// Reads a value of this kind (surrounding blanks already trimmed) that this CPU runs.
    fn parse(self, v: &[u8], runs: &Runs<'_>) -> Option<Value> {
        let name = core::str::from_utf8(v).ok();
        match self {
            Kind::Size => parse_size(v).map(Value::Size),
            Kind::Backend => name
                .and_then(Backend::from_name)
                .filter(|b| runs.backends.contains(b))
                .map(Value::Backend),
            Kind::Edges => name.and_then(Edges::from_name).map(Value::Edges),
            Kind::Flush => FlushOp::ALL
                .into_iter()
                .find(|op| name.is_some_and(|n| op.name().eq_ignore_ascii_case(n)))
                .filter(|op| runs.flush & (1 << op.index()) != 0)
                .map(Value::Flush),
            Kind::Small => name
                .and_then(Small::from_name)
                .filter(|&s| s == Small::Plain || runs.masks)
                .map(Value::Small),
            Kind::Pages => match v {
                b"1" | b"2" | b"4" | b"8" => Some(Value::Size(usize::from(v[0] - b'0'))),
                _ => None,
            },
            Kind::Wide => parse_size(v)
                .filter(|&n| n == usize::MAX || runs.avx512())
                .map(Value::Size),
        }
    }
}

/// What a field of `kind` takes, for the warning about a bad one.
struct Expected<'a>(Kind, &'a Runs<'a>);

impl fmt::Display for Expected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, names: &mut dyn Iterator<Item = &str>| {
            for (i, n) in names.enumerate() {
                write!(f, "{}{n}", if i > 0 { ", " } else { "" })?;
            }
            f.write_str(")")
        };
        match self.0 {
            Kind::Size => f.write_str("a size (digits with K, M or G, or never)"),
            Kind::Backend => {
                f.write_str("a backend this CPU supports (")?;
                list(f, &mut self.1.backends.iter().map(|b| b.name()))
            }
            Kind::Edges => f.write_str("masked or overlap"),
            Kind::Flush => {
                f.write_str("a flush instruction this CPU runs (")?;
                let runs = self.1.flush;
                list(
                    f,
                    &mut FlushOp::ALL
                        .into_iter()
                        .filter(|op| runs & (1 << op.index()) != 0)
                        .map(FlushOp::name),
                )
            }
            Kind::Small if self.1.masks => f.write_str("plain or masked-fills"),
            Kind::Small => f.write_str("plain (this CPU does not run the masked class)"),
            Kind::Pages => f.write_str("1, 2, 4 or 8"),
            Kind::Wide if self.1.avx512() => {
                f.write_str("a size (digits with K, M or G, or never)")
            }
            Kind::Wide => f.write_str("never (this CPU does not run AVX-512)"),
        }
    }
}

/// One tunable: its name in `CACHECOPY_TUNE`, its own variable, its kind, and where it lives in
/// the record. One row per tunable ([`FIELDS`]).
pub(crate) struct Field {
    /// The name in the line (`nt` in `nt=16M`).
    pub(crate) name: &'static str,
    /// The variable that sets this tunable alone and wins over the line's field.
    var: Option<&'static CStr>,
    /// Another field this field's variable also sets where neither the line nor that field's
    /// own variable did (`CACHECOPY_NT_THRESHOLD` sets fills too).
    var_also: Option<usize>,
    kind: Kind,
    /// Stores a value of `kind` into the record.
    set: fn(&mut Tuning, Value),
    /// The value in the record; `None` for a field the line does not write (`body`, which
    /// `temporal` and `stream` say).
    get: Option<fn(&Tuning) -> Value>,
}

/// Indices into [`FIELDS`].
pub(crate) const NT: usize = 0;
pub(crate) const FILL: usize = 1;
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
pub(crate) const MOVSB: usize = 2;
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
pub(crate) const STOSB: usize = 3;
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
pub(crate) const TEMPORAL: usize = 4;
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
pub(crate) const STREAM: usize = 5;
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
pub(crate) const EDGES: usize = 7;

/// A size row of [`FIELDS`]: `size!(name, its variable, the record's field, var_also)`.
macro_rules! size {
    ($name:literal, $var:literal, $field:ident, $also:expr) => {
        Field {
            name: $name,
            var: Some($var),
            var_also: $also,
            kind: Kind::Size,
            set: |t, v| t.$field = v.size(),
            get: Some(|t| Value::Size(t.$field)),
        }
    };
}

/// A backend row of [`FIELDS`]: `backend!(name, the engine's field)`.
macro_rules! backend {
    ($name:literal, $job:ident) => {
        Field {
            name: $name,
            var: None,
            var_also: None,
            kind: Kind::Backend,
            set: |t, v| t.engine.$job = v.backend(t.engine.$job),
            get: Some(|t| Value::Backend(t.engine.$job)),
        }
    };
}

/// Every tunable, in the order the line is written.
pub(crate) static FIELDS: [Field; 12] = [
    size!("nt", c"CACHECOPY_NT_THRESHOLD", nt, Some(FILL)),
    size!("fill_nt", c"CACHECOPY_FILL_NT_THRESHOLD", fill_nt, None),
    size!(
        "rep_movsb",
        c"CACHECOPY_REP_MOVSB_THRESHOLD",
        rep_movsb,
        None
    ),
    size!("fill_rep", c"CACHECOPY_FILL_REP_THRESHOLD", fill_rep, None),
    backend!("temporal", temporal),
    backend!("stream", stream),
    // Both jobs; not written (`temporal` and `stream` say it). `CACHECOPY_BACKEND` is its
    // variable.
    Field {
        name: "body",
        var: Some(c"CACHECOPY_BACKEND"),
        var_also: None,
        kind: Kind::Backend,
        set: |t, v| {
            let b = v.backend(t.engine.stream);
            (t.engine.temporal, t.engine.stream) = (b, b);
        },
        get: None,
    },
    Field {
        name: "edges",
        var: None,
        var_also: None,
        kind: Kind::Edges,
        set: |t, v| t.engine.edges = v.edges(t.engine.edges),
        get: Some(|t| Value::Edges(t.engine.edges)),
    },
    Field {
        name: "flush",
        var: None,
        var_also: None,
        kind: Kind::Flush,
        set: |t, v| t.flush = v.flush(t.flush),
        get: Some(|t| Value::Flush(t.flush)),
    },
    Field {
        name: "small",
        var: None,
        var_also: None,
        kind: Kind::Small,
        set: |t, v| {
            if let Value::Small(s) = v {
                t.small = s;
            }
        },
        get: Some(|t| Value::Small(t.small)),
    },
    Field {
        name: "pages",
        var: None,
        var_also: None,
        kind: Kind::Pages,
        set: |t, v| t.pages = v.size(),
        get: Some(|t| Value::Size(t.pages)),
    },
    Field {
        name: "wide_copy",
        var: None,
        var_also: None,
        kind: Kind::Wide,
        set: |t, v| t.wide_copy = v.size(),
        get: Some(|t| Value::Size(t.wide_copy)),
    },
];

/// Every field the line writes.
pub(crate) const ALL: u16 = (1 << FIELDS.len()) - 1;

/// The engine's fields, the only ones `CACHECOPY_ENGINE` takes.
const ENGINE: u16 = 0b1111 << TEMPORAL;

impl Value {
    /// The size (a size field's value; [`Kind::parse`] only hands a field its own kind).
    fn size(self) -> usize {
        match self {
            Value::Size(n) => n,
            _ => usize::MAX,
        }
    }

    /// The backend, or `keep` (as [`Value::size`]).
    fn backend(self, keep: Backend) -> Backend {
        match self {
            Value::Backend(b) => b,
            _ => keep,
        }
    }

    /// The edge store, or `keep`.
    fn edges(self, keep: Edges) -> Edges {
        match self {
            Value::Edges(e) => e,
            _ => keep,
        }
    }

    /// The flush instruction, or `keep`.
    fn flush(self, keep: FlushOp) -> FlushOp {
        match self {
            Value::Flush(op) => op,
            _ => keep,
        }
    }
}

impl Tuning {
    /// Refines the built-in record `self` by the environment, in place (no copy of the record:
    /// in integer-only builds LLVM would copy it with vector registers), in this order (a later setting
    /// wins): the `CACHECOPY_TUNE` line; the single variables, each of which wins over its own
    /// field (`CACHECOPY_NT_THRESHOLD` also sets fills where neither the line's `fill_nt` nor
    /// `CACHECOPY_FILL_NT_THRESHOLD` does; `CACHECOPY_BACKEND` is `body=`); then
    /// `CACHECOPY_ENGINE`, field by field. A bad value is reported once per process and
    /// ignored; the others are kept. Returns whether `CACHECOPY_NT_THRESHOLD=calibrate` asked
    /// for a calibration. Without `std` nothing is read. No allocation, no lock.
    pub(crate) fn read_env(&mut self, runs: &Runs<'_>) -> bool {
        let mut calibrate = false;
        let mut line = 0;
        if let Some(raw) = env(c"CACHECOPY_TUNE") {
            line = self.read_line(raw, "CACHECOPY_TUNE", ALL, runs);
        }
        let mut by_var = 0u16;
        for (i, f) in FIELDS.iter().enumerate() {
            let Some((var, raw)) = f.var.and_then(|var| Some((var, env(var)?))) else {
                continue;
            };
            if i == NT && raw.trim_ascii().eq_ignore_ascii_case(b"calibrate") {
                calibrate = true;
                continue;
            }
            let value = raw.trim_ascii();
            match f.kind.parse(value, runs) {
                Some(v) => {
                    (f.set)(self, v);
                    by_var |= 1 << i;
                    if let Some(j) = f.var_also.filter(|&j| (line | by_var) & (1 << j) == 0) {
                        (FIELDS[j].set)(self, v);
                    }
                }
                None => match core::str::from_utf8(value) {
                    Ok(v) => warn(format_args!(
                        "cachecopy: ignoring {}={v:?}: expected {}",
                        var.to_str().unwrap_or("?"),
                        Expected(f.kind, runs)
                    )),
                    Err(_) => warn(format_args!(
                        "cachecopy: ignoring {}: not UTF-8",
                        var.to_str().unwrap_or("?")
                    )),
                },
            }
        }
        if let Some(raw) = env(c"CACHECOPY_ENGINE") {
            self.read_line(raw, "CACHECOPY_ENGINE", ENGINE, runs);
        }
        let e = self.engine;
        self.engine = Engine::new(e.temporal, e.stream, e.edges);
        calibrate
    }

    /// Applies the comma-separated `name=value` fields of `raw` that `allowed` (a mask over
    /// [`FIELDS`]) names: blanks around names and values ignored, empty fields skipped, a later
    /// field overriding an earlier one. A field with an unknown name, no `=` or a bad value is
    /// reported (once per process; `what` names the variable) and ignored. Returns the fields
    /// set. Parsed in place: no allocation.
    pub(crate) fn read_line(
        &mut self,
        raw: &[u8],
        what: &str,
        allowed: u16,
        runs: &Runs<'_>,
    ) -> u16 {
        let mut set = 0;
        for field in raw.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
            if field.is_empty() {
                continue;
            }
            let (name, value) = match field.iter().position(|&b| b == b'=') {
                Some(eq) => (field[..eq].trim_ascii(), field[eq + 1..].trim_ascii()),
                None => (field, &b""[..]),
            };
            let found = FIELDS
                .iter()
                .enumerate()
                .find(|(i, f)| allowed & (1 << i) != 0 && f.name.as_bytes() == name);
            let Some((i, f)) = found else {
                bad_field(
                    what,
                    field,
                    format_args!("expected one of {}", Names(allowed)),
                );
                continue;
            };
            match f.kind.parse(value, runs) {
                Some(v) => {
                    (f.set)(self, v);
                    set |= 1 << i;
                }
                None => bad_field(
                    what,
                    field,
                    format_args!("expected {}", Expected(f.kind, runs)),
                ),
            }
        }
        set
    }

    /// Writes `name=value` for each field of `which` (a mask over [`FIELDS`]) the line writes,
    /// comma-separated, in the table's order; what `read_line` reads back.
    pub(crate) fn write_line(&self, which: u16, f: &mut dyn fmt::Write) -> fmt::Result {
        let mut first = true;
        for (i, field) in FIELDS.iter().enumerate() {
            let Some(get) = field.get.filter(|_| which & (1 << i) != 0) else {
                continue;
            };
            write!(
                f,
                "{}{}={}",
                if first { "" } else { "," },
                field.name,
                get(self)
            )?;
            first = false;
        }
        Ok(())
    }

    /// This record with the fields of `which` taken from `other`.
    #[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's
    pub(crate) fn with(mut self, other: &Tuning, which: u16) -> Tuning {
        for (i, field) in FIELDS.iter().enumerate() {
            if let Some(get) = field.get.filter(|_| which & (1 << i) != 0) {
                (field.set)(&mut self, get(other));
            }
        }
        self
    }

    /// The published thresholds (what the getters read, setters included).
    pub(crate) fn load_thresholds(&mut self) {
        for (cell, v) in CELLS.iter().zip(self.thresholds_mut()) {
            *v = cell.load(Ordering::Relaxed);
        }
    }

    /// Publishes the thresholds. `first`: only into cells still `UNSET` (detection racing a
    /// setter keeps the setter's value); else over whatever they hold.
    pub(crate) fn store_thresholds(mut self, first: bool) {
        for (cell, v) in CELLS.iter().zip(self.thresholds_mut()) {
            // Sequentially consistent, as the setters' stores: dispatch's `refresh_bounds`
            // keeps `Auto`'s bounds in step with them after every writer.
            if first {
                let _ =
                    cell.compare_exchange(UNSET, stored(*v), Ordering::SeqCst, Ordering::SeqCst);
            } else {
                cell.store(stored(*v), Ordering::SeqCst);
            }
        }
    }

    fn thresholds_mut(&mut self) -> [&mut usize; 5] {
        [
            &mut self.nt,
            &mut self.fill_nt,
            &mut self.rep_movsb,
            &mut self.fill_rep,
            &mut self.pages,
        ]
    }
}

/// The cells of the thresholds (and of the pages a streamed copy reads at once), in the
/// record's order.
static CELLS: [&AtomicUsize; 5] = [&COPY_NT, &FILL_NT, &REP_MOVSB, &FILL_REP, &STREAM_PAGES];

/// `nt=8M,fill_nt=8M,rep_movsb=never,fill_rep=16M,temporal=avx2,stream=avx2,edges=overlap,flush=clwb`:
/// every field, as `CACHECOPY_TUNE` reads it back. Writes into any `fmt::Write` without
/// allocating.
impl fmt::Display for Tuning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_line(ALL, f)
    }
}

/// The names of the fields of a mask, for the warning about an unknown one.
struct Names(u16);

impl fmt::Display for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (i, field) in FIELDS.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                write!(f, "{}{}", if first { "" } else { ", " }, field.name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// The warning about one bad field of `what` (a variable holding a line).
fn bad_field(what: &str, field: &[u8], why: fmt::Arguments<'_>) {
    match core::str::from_utf8(field) {
        Ok(f) => warn(format_args!(
            "cachecopy: ignoring {what} field {f:?}: {why}"
        )),
        Err(_) => warn(format_args!(
            "cachecopy: ignoring a {what} field: not UTF-8"
        )),
    }
}
