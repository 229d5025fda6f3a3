//! The record of per-CPU choices: every choice a plan is built from (the engine's three fields,
//! the flush instruction, the `Auto` thresholds of copies and fills, the variants of the paths
//! that have one) in one value, [`Tuning`]: the built-in rules (`super::rules`) choose one per
//! CPU, the `CACHECOPY_TUNE` line refines it, all read by one parser over one table, [`FIELDS`].
//! A plan (`super::plan`) is built from a record; `calibrate()` returns one; the report prints
//! it; its `Display` is the tuning line.
//!
//! **A new tunable touches three places**: a field of [`Tuning`] with its row in [`FIELDS`] (its
//! name in the line, its kind and its accessors), its default in `super::rules::rule`, and what
//! the plan derives from it (`super::plan::Plan::build`). The parser, the line, the report and
//! the calibration's line follow the table.
//!
//! `CACHECOPY_TUNE` is the crate's one environment variable (with `std`; none in secure mode).
//! Reading it neither allocates nor locks (an allocator may be the first caller): the value is
//! parsed in place and a complaint is one `write(2)` from the stack (`super::env`).

use core::fmt;

use super::engine::{Backend, Edges, Engine};
use super::env::{env, warn};
use crate::cpu::FlushOp;
pub(crate) use crate::kernel::small::{EntryCopy, Small};
pub(crate) use crate::net::iter::FrameBuild;

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

/// Every per-CPU choice, in one record: what a [`Plan`](crate::tune::Plan) is built from.
///
/// The built-in rules choose one per CPU ([`Tuning::rule`], each rule citing its runs); at the
/// first call detection refines it by the `CACHECOPY_TUNE` line and builds the process's plan
/// from it ([`Plan::current`](crate::tune::Plan::current)`().tuning()` is that record);
/// [`calibrate`](crate::tune::calibrate()) measures one. In secure mode (a set-user-ID
/// program: the crate's documentation, "Environment") nothing is read and the record is the
/// rules'. Its `Display` is the `CACHECOPY_TUNE` value that sets every field to what it holds:
///
/// ```
/// let t = cachecopy::tune::Plan::current().tuning();
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
    /// 8): 1 reads them in order; 2, 4 or 8 take a line from each of that many pages in turn,
    /// so that memory serves that many streams at once.
    pub pages: usize,
    /// From this many bytes `Temporal` copies (and `Auto` copies stored temporally) whose
    /// backend has 256-bit registers run their loop on AVX-512 registers (`wide_copy=`;
    /// `usize::MAX`: never, the only value on a CPU without AVX-512 F and BW). The engine stays
    /// what it is for every other size and job.
    pub wide_copy: usize,
    /// How the C-shaped entries (`raw::c_entries`, the preload library's `memcpy` and
    /// `memmove`) copy 0 to 64 bytes (`entry_copy=plain` or `masked`); the crate's own calls
    /// always take the plain classes.
    pub entry_copy: EntryCopy,
    /// In which order a transmit frame's header lines are fetched before its payload streams
    /// (`frame=plain` or `header-down`).
    pub frame: FrameBuild,
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
    /// `plain`, or `masked` where this CPU runs the masked class.
    EntryCopy,
    /// `plain` or `header-down`.
    Frame,
}

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Size(usize),
    Backend(Backend),
    Edges(Edges),
    Flush(FlushOp),
    Small(Small),
    EntryCopy(EntryCopy),
    Frame(FrameBuild),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Size(n) => show_size(n, f),
            Value::Backend(b) => f.write_str(b.name()),
            Value::Edges(e) => f.write_str(e.name()),
            Value::Flush(op) => f.write_str(op.name()),
            Value::Small(s) => f.write_str(s.name()),
            Value::EntryCopy(c) => f.write_str(c.name()),
            Value::Frame(b) => f.write_str(b.name()),
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
    /// Whether this CPU runs the AVX pairs of small fills ([`Small::AvxPairs`]).
    pub(crate) pairs: bool,
}

impl Runs<'_> {
    /// Whether this CPU runs the small fills `s`.
    pub(crate) fn small(&self, s: Small) -> bool {
        match s {
            Small::Plain => true,
            Small::MaskedFills => self.masks,
            Small::AvxPairs => self.pairs,
        }
    }

    /// Whether this CPU runs the C entries' small copies `c` (masked: what masked fills need).
    pub(crate) fn entry_copy(&self, c: EntryCopy) -> bool {
        match c {
            EntryCopy::Plain => true,
            EntryCopy::Masked => self.masks,
        }
    }

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
                .filter(|&s| runs.small(s))
                .map(Value::Small),
            Kind::Pages => match v {
                b"1" | b"2" | b"4" | b"8" => Some(Value::Size(usize::from(v[0] - b'0'))),
                _ => None,
            },
            Kind::Wide => parse_size(v)
                .filter(|&n| n == usize::MAX || runs.avx512())
                .map(Value::Size),
            Kind::EntryCopy => name
                .and_then(EntryCopy::from_name)
                .filter(|&c| runs.entry_copy(c))
                .map(Value::EntryCopy),
            Kind::Frame => name.and_then(FrameBuild::from_name).map(Value::Frame),
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
            Kind::Small => {
                f.write_str("a small-fill variant this CPU runs (")?;
                list(
                    f,
                    &mut Small::ALL
                        .into_iter()
                        .filter(|&s| self.1.small(s))
                        .map(Small::name),
                )
            }
            Kind::Pages => f.write_str("1, 2, 4 or 8"),
            Kind::Wide if self.1.avx512() => {
                f.write_str("a size (digits with K, M or G, or never)")
            }
            Kind::Wide => f.write_str("never (this CPU does not run AVX-512)"),
            Kind::EntryCopy => {
                f.write_str("a small-copy variant of the C entries this CPU runs (")?;
                list(
                    f,
                    &mut EntryCopy::ALL
                        .into_iter()
                        .filter(|&c| self.1.entry_copy(c))
                        .map(EntryCopy::name),
                )
            }
            Kind::Frame => f.write_str("plain or header-down"),
        }
    }
}

/// One tunable: its name in `CACHECOPY_TUNE`, its kind, and where it lives in the record. One
/// row per tunable ([`FIELDS`]).
pub(crate) struct Field {
    /// The name in the line (`nt` in `nt=16M`).
    pub(crate) name: &'static str,
    kind: Kind,
    /// Stores a value of `kind` into the record.
    set: fn(&mut Tuning, Value),
    /// The value in the record; `None` for a field the line does not write (`body`, which
    /// `temporal` and `stream` say).
    get: Option<fn(&Tuning) -> Value>,
}

/// Indices into [`FIELDS`].
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
pub(crate) const NT: usize = 0;
#[cfg_attr(not(all(feature = "std", unix)), allow(dead_code))] // the calibration's mask
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

/// A size row of [`FIELDS`]: `size!(name, the record's field)`.
macro_rules! size {
    ($name:literal, $field:ident) => {
        Field {
            name: $name,
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
            kind: Kind::Backend,
            set: |t, v| t.engine.$job = v.backend(t.engine.$job),
            get: Some(|t| Value::Backend(t.engine.$job)),
        }
    };
}

/// Every tunable, in the order the line is written.
pub(crate) static FIELDS: [Field; 14] = [
    size!("nt", nt),
    size!("fill_nt", fill_nt),
    size!("rep_movsb", rep_movsb),
    size!("fill_rep", fill_rep),
    backend!("temporal", temporal),
    backend!("stream", stream),
    // Both jobs; not written (`temporal` and `stream` say it).
    Field {
        name: "body",
        kind: Kind::Backend,
        set: |t, v| {
            let b = v.backend(t.engine.stream);
            (t.engine.temporal, t.engine.stream) = (b, b);
        },
        get: None,
    },
    Field {
        name: "edges",
        kind: Kind::Edges,
        set: |t, v| t.engine.edges = v.edges(t.engine.edges),
        get: Some(|t| Value::Edges(t.engine.edges)),
    },
    Field {
        name: "flush",
        kind: Kind::Flush,
        set: |t, v| t.flush = v.flush(t.flush),
        get: Some(|t| Value::Flush(t.flush)),
    },
    Field {
        name: "small",
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
        kind: Kind::Pages,
        set: |t, v| t.pages = v.size(),
        get: Some(|t| Value::Size(t.pages)),
    },
    Field {
        name: "wide_copy",
        kind: Kind::Wide,
        set: |t, v| t.wide_copy = v.size(),
        get: Some(|t| Value::Size(t.wide_copy)),
    },
    Field {
        name: "entry_copy",
        kind: Kind::EntryCopy,
        set: |t, v| {
            if let Value::EntryCopy(c) = v {
                t.entry_copy = c;
            }
        },
        get: Some(|t| Value::EntryCopy(t.entry_copy)),
    },
    Field {
        name: "frame",
        kind: Kind::Frame,
        set: |t, v| {
            if let Value::Frame(b) = v {
                t.frame = b;
            }
        },
        get: Some(|t| Value::Frame(t.frame)),
    },
];

/// Every field the line writes.
pub(crate) const ALL: u16 = (1 << FIELDS.len()) - 1;

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
    /// Refines the built-in record `self` by the `CACHECOPY_TUNE` line, in place (no copy of the
    /// record: in integer-only builds LLVM would copy it with vector registers). A bad field is
    /// reported once per process and ignored; the others are kept. Returns whether the line
    /// asked for a calibration at first use (a `calibrate` field). Without `std`, and in secure
    /// mode, nothing is read. No allocation, no lock.
    pub(crate) fn read_env(&mut self, runs: &Runs<'_>) -> bool {
        let Some(raw) = env(c"CACHECOPY_TUNE") else {
            return false;
        };
        let (_, calibrate) = self.read_line(raw, "CACHECOPY_TUNE", ALL, runs);
        calibrate
    }

    /// Applies the comma-separated `name=value` fields of `raw` that `allowed` (a mask over
    /// [`FIELDS`]) names: blanks around names and values ignored, empty fields skipped, a later
    /// field overriding an earlier one. A field with an unknown name, no `=` or a bad value is
    /// reported (once per process; `what` names the variable) and ignored. Returns the fields
    /// set, and whether a bare `calibrate` field was among them. Parsed in place: no allocation.
    pub(crate) fn read_line(
        &mut self,
        raw: &[u8],
        what: &str,
        allowed: u16,
        runs: &Runs<'_>,
    ) -> (u16, bool) {
        self.apply_line(raw, allowed, runs, |field, bad| {
            struct Why<'a, 'b>(Bad, &'a Runs<'b>);
            impl fmt::Display for Why<'_, '_> {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    self.0.write(f, self.1)
                }
            }
            bad_field(what, field, format_args!("{}", Why(bad, runs)));
            true
        })
    }

    /// The one walk over a line's fields: applies each good one, hands each bad one (its text
    /// and what was wrong) to `bad`, which says whether to go on. Returns the fields set and
    /// whether a bare `calibrate` field was met.
    fn apply_line(
        &mut self,
        raw: &[u8],
        allowed: u16,
        runs: &Runs<'_>,
        mut bad: impl FnMut(&[u8], Bad) -> bool,
    ) -> (u16, bool) {
        let (mut set, mut calibrate) = (0, false);
        for field in raw.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
            if field.is_empty() {
                continue;
            }
            if field.eq_ignore_ascii_case(b"calibrate") {
                calibrate = true;
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
            let why = match found {
                None => Bad::Name(allowed),
                Some((i, f)) => match f.kind.parse(value, runs) {
                    Some(v) => {
                        (f.set)(self, v);
                        set |= 1 << i;
                        continue;
                    }
                    None => Bad::Value(f.kind),
                },
            };
            if !bad(field, why) {
                break;
            }
        }
        (set, calibrate)
    }

    /// This record with the fields of a `CACHECOPY_TUNE` line applied (`nt=16M,small=plain`:
    /// comma-separated `name=value` fields, names and values as the record's `Display` writes
    /// them, a size with an optional `K`, `M` or `G`, or `never`), each value checked against
    /// what this CPU runs.
    ///
    /// # Errors
    /// [`BadField`] for the first field with an unknown name, no value, or a value this CPU
    /// cannot take (a `calibrate` field too: only the environment's line measures).
    ///
    /// ```
    /// use cachecopy::tune::Plan;
    /// let t = Plan::current().tuning().with_line("nt=16M, fill_nt=never").unwrap();
    /// assert_eq!((t.nt, t.fill_nt), (16 << 20, usize::MAX));
    /// let e = t.with_line("nt=lots").unwrap_err();
    /// assert_eq!(e.to_string(), r#"field "nt=lots": expected a size (digits with K, M or G, or never)"#);
    /// ```
    pub fn with_line(mut self, line: &str) -> Result<Tuning, BadField> {
        let facts = super::plan::facts();
        let runs = facts.runs();
        let mut first = None;
        let (_, calibrate) = self.apply_line(line.as_bytes(), ALL, &runs, |field, why| {
            first = Some(BadField::new(field, why, &runs));
            false
        });
        match first {
            Some(e) => Err(e),
            None if calibrate => Err(BadField::new(b"calibrate", Bad::Calibrate, &runs)),
            None => Ok(self),
        }
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
}

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

/// What was wrong with a field of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bad {
    /// No field of the mask has this name.
    Name(u16),
    /// A value the field's kind does not take on this CPU.
    Value(Kind),
    /// `calibrate`, where no measurement can follow.
    Calibrate,
}

impl Bad {
    /// Writes what the field should have been.
    fn write(self, f: &mut dyn fmt::Write, runs: &Runs<'_>) -> fmt::Result {
        match self {
            Bad::Name(mask) => write!(f, "expected one of {}", Names(mask)),
            Bad::Value(kind) => write!(f, "expected {}", Expected(kind, runs)),
            Bad::Calibrate => f.write_str("only CACHECOPY_TUNE measures at first use"),
        }
    }
}

/// A field of a tuning line that [`Tuning::with_line`] could not take: its text (up to 48
/// bytes of it) and what it should have been. Its `Display` says both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BadField {
    text: [u8; 48],
    len: u8,
    why: Bad,
    runs: (u8, u8, bool, bool),
}

impl BadField {
    fn new(field: &[u8], why: Bad, runs: &Runs<'_>) -> BadField {
        let mut text = [0; 48];
        let len = field.len().min(48);
        text[..len].copy_from_slice(&field[..len]);
        BadField {
            text,
            len: len as u8,
            why,
            runs: (
                runs.backends.len() as u8,
                runs.flush,
                runs.masks,
                runs.pairs,
            ),
        }
    }

    /// The field as written (cut at 48 bytes).
    pub fn field(&self) -> &str {
        core::str::from_utf8(&self.text[..usize::from(self.len)]).unwrap_or("(not UTF-8)")
    }
}

impl fmt::Display for BadField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, flush, masks, pairs) = self.runs;
        let runs = Runs {
            backends: &super::table::NAMES[..usize::from(n)],
            flush,
            masks,
            pairs,
        };
        write!(f, "field {:?}: ", self.field())?;
        self.why.write(f, &runs)
    }
}

impl fmt::Debug for BadField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl core::error::Error for BadField {}

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
