//! Section 8: small calls, where network stacks and allocators make most of theirs (headers,
//! ACKs, small datagrams, small `calloc`/`realloc`, IP header checksums).
//!
//! Nanoseconds per call at 1 B to 1 KiB, the length opaque to the compiler (`measure::opaque` per
//! call), into a hot destination (the same buffer every call) and a cold one (a new slot of the
//! arena's scattered walk every call), at destination offsets 0, 5 and 24 (a buffer behind a
//! header): `copy_raw` (8a) and `fill_raw` (8b) in `Temporal` and `Auto`, each with the mode a
//! constant and a run-time value (`measure::opaque_mode` per call: a per-socket policy), against
//! glibc `memcpy` and `memset`, both called for real through a pointer the compiler cannot see
//! through (as a call through the PLT), never inlined or turned into a builtin; 8c is `Auto`
//! against a constant `Temporal` from the same rounds. 8d is `net::csum_partial` against a
//! kernel-style scalar loop (8-byte words, end-around carry), 20 B to 64 KiB.
//!
//! 8e is the safe slice call in a loop of calls, as a program writes it: `cachecopy::copy`,
//! `fill` and `zero` against `copy_from_slice` and `fill` (glibc `memcpy` and `memset`), the
//! length loop-invariant (the compiler may hoist what depends on it), source and destination at
//! the same offset in their pages, as ring slots of 2 or 4 KiB are (their low 12 address bits
//! equal, which section 8a's source avoids), 1 B to 4 KiB, hot.
//!
//! Every variant has its own buffers and its own non-inlined timing function; the variants of
//! one size run interleaved, in a fresh order every round, and each ratio is paired per round
//! (the baseline's time ÷ ours: above 1, ours is faster). Every ratio is registered in the
//! session's findings.

use std::hint::black_box;
use std::time::Instant;

use cachecopy::Mode;
use cachecopy_arena::csum::kernel_loop;
use cachecopy_arena::each_dest;

use crate::findings::{Place, What};
use crate::measure::{opaque, opaque_mode, opaque_ptr, round_order, Buf, Dest};
use crate::plot::{Figure, Panel, Series, Style};
use crate::session::{took, Session};
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, ratio, size};

/// The sizes of the copy and fill tables.
const SIZES: [usize; 17] = [
    1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
];
/// The checksum sizes: IPv4 and IPv6 headers, a minimal frame, the table path's cut-over
/// (512 B) and just past it (576 B: the smallest datagram every IPv4 host takes), a full
/// Ethernet payload, a page, and 64 KiB (a GSO segment's worth).
const CSUM_SIZES: [usize; 14] = [
    20, 40, 64, 128, 256, 512, 576, 1024, 1472, 2048, 4096, 9000, 16384, 65536,
];
/// The sizes of the safe-slice loop (8e): to 4 KiB, where small-call benchmarks end.
const SLICE_SIZES: [usize; 13] = [1, 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096];
/// How far into its page the source of every 8a-8d call starts (see [`section`]).
const SRC_SKEW: usize = 2048 + 64;
/// Destination offsets: aligned, odd, and behind a 24-byte header.
const OFFSETS: [usize; 3] = [0, 5, 24];
/// Above this size a sample makes proportionally fewer calls (the checksums to 64 KiB, the
/// slices to 4 KiB), so that a sample stays near the time of one at this size.
const CALLS_AT: usize = 1024;

/// `memcpy`'s and `memset`'s C signatures.
use cachecopy_arena::peer::{MemcpyFn, MemsetFn};

/// How a mode reaches the call: a constant the compiler sees, or a run-time value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Const,
    Run,
}

/// One timed call of 8a-8d.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Memcpy,
    Copy(Mode, Form),
    Memset,
    Fill(Mode, Form),
    KernelLoop,
    Csum,
}

/// `copy Auto`, `fill Temporal (run-time mode)`.
fn op_name(what: &str, m: Mode, f: Form) -> String {
    match f {
        Form::Const => format!("{what} {m}"),
        Form::Run => format!("{what} {m} (run-time mode)"),
    }
}

/// `A`, `T rt`: a column's label.
fn short(m: Mode, f: Form) -> String {
    let m = match m {
        Mode::Temporal => "T",
        Mode::Auto => "A",
        Mode::NonTemporal => "NT",
        Mode::FlushCache => "FC",
    };
    match f {
        Form::Const => m.to_string(),
        Form::Run => format!("{m} rt"),
    }
}

impl Call {
    fn name(self) -> String {
        match self {
            Call::Memcpy => "memcpy".into(),
            Call::Memset => "memset".into(),
            Call::Copy(m, f) => op_name("copy", m, f),
            Call::Fill(m, f) => op_name("fill", m, f),
            Call::KernelLoop => "scalar loop".into(),
            Call::Csum => "csum_partial".into(),
        }
    }

    /// Runs the call once per destination in `dsts`, from `src`, `len` bytes; ns per call.
    /// Every arm is a closure of its own, so every variant is timed in a function of its own
    /// (see [`each`]); the constant modes are literals in their closures.
    fn time(self, dsts: &[*mut u8], src: *const u8, len: usize) -> f64 {
        use Form::{Const, Run};
        use Mode::{Auto, Temporal};
        // SAFETY (every arm): each destination and the source are valid for `len` bytes (see
        // `measure`), in distinct buffers.
        match self {
            Call::Memcpy => {
                let f: MemcpyFn = black_box(libc::memcpy as MemcpyFn);
                each_dest(dsts, |d| unsafe {
                    f(d.cast(), src.cast(), opaque(len));
                })
            }
            Call::Memset => {
                let f: MemsetFn = black_box(libc::memset as MemsetFn);
                each_dest(dsts, |d| unsafe {
                    f(d.cast(), opaque(0x5a) as i32, opaque(len));
                })
            }
            Call::Copy(Temporal, Const) => each_dest(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), Temporal)
            }),
            Call::Copy(Auto, Const) => each_dest(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), Auto)
            }),
            Call::Copy(Temporal, Run) => each_dest(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), opaque_mode(Temporal))
            }),
            Call::Copy(Auto, Run) => each_dest(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), opaque_mode(Auto))
            }),
            Call::Copy(m, _) => each_dest(dsts, |d| unsafe {
                cachecopy::copy_raw(d, src, opaque(len), opaque_mode(m))
            }),
            Call::Fill(Temporal, Const) => each_dest(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), Temporal)
            }),
            Call::Fill(Auto, Const) => each_dest(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), Auto)
            }),
            Call::Fill(Temporal, Run) => each_dest(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), opaque_mode(Temporal))
            }),
            Call::Fill(Auto, Run) => each_dest(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), opaque_mode(Auto))
            }),
            Call::Fill(m, _) => each_dest(dsts, |d| unsafe {
                cachecopy::fill_raw(d, opaque(0x5a) as u8, opaque(len), opaque_mode(m))
            }),
            Call::KernelLoop => each_dest(dsts, |_| {
                // SAFETY: `src` is valid for `len` bytes.
                let data = unsafe { std::slice::from_raw_parts(src, opaque(len)) };
                opaque(kernel_loop(data) as usize);
            }),
            Call::Csum => each_dest(dsts, |_| {
                // SAFETY: as above.
                let data = unsafe { std::slice::from_raw_parts(src, opaque(len)) };
                opaque(cachecopy::net::csum_partial(data, 0) as usize);
            }),
        }
    }
}

/// One call of the safe-slice loop (8e).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slice {
    /// `dst.copy_from_slice(&src)`: glibc `memcpy`.
    StdCopy,
    Copy(Mode, Form),
    /// `dst.fill(b)`: glibc `memset`.
    StdFill,
    Fill(Mode, Form),
    /// `dst.fill(0)`: glibc `memset`.
    StdZero,
    Zero(Mode, Form),
}

impl Slice {
    fn name(self) -> String {
        match self {
            Slice::StdCopy => "copy_from_slice".into(),
            Slice::StdFill => "fill".into(),
            Slice::StdZero => "fill(0)".into(),
            Slice::Copy(m, f) => op_name("copy", m, f),
            Slice::Fill(m, f) => op_name("fill", m, f),
            Slice::Zero(m, f) => op_name("zero", m, f),
        }
    }

    /// `n` calls on `len` bytes at `dst` (from `src`); ns per call. The destination pointer is
    /// opaque at every call (so no call can be merged with the next), the length is not: it is
    /// the same every call, as in a loop over equal slots, and the compiler may hoist what
    /// depends on it.
    fn time(self, dst: *mut u8, src: *const u8, len: usize, n: usize) -> f64 {
        use Form::{Const, Run};
        use Mode::{Auto, Temporal};
        // SAFETY: `dst` is valid for writes and `src` for reads of `len` bytes, in distinct
        // buffers (see `measure_slices`), and nothing else accesses them during the loop.
        let d = || unsafe { std::slice::from_raw_parts_mut(opaque_ptr(dst), len) };
        // SAFETY: as above.
        let s = unsafe { std::slice::from_raw_parts(src, len) };
        let b = || opaque(0x5a) as u8;
        match self {
            Slice::StdCopy => repeat(n, || d().copy_from_slice(s)),
            Slice::Copy(Temporal, Const) => repeat(n, || cachecopy::copy(d(), s, Temporal)),
            Slice::Copy(Auto, Const) => repeat(n, || cachecopy::copy(d(), s, Auto)),
            Slice::Copy(Temporal, Run) => {
                repeat(n, || cachecopy::copy(d(), s, opaque_mode(Temporal)))
            }
            Slice::Copy(Auto, Run) => repeat(n, || cachecopy::copy(d(), s, opaque_mode(Auto))),
            Slice::Copy(m, _) => repeat(n, || cachecopy::copy(d(), s, opaque_mode(m))),
            Slice::StdFill => repeat(n, || d().fill(b())),
            Slice::Fill(Temporal, Const) => repeat(n, || cachecopy::fill(d(), b(), Temporal)),
            Slice::Fill(Auto, Const) => repeat(n, || cachecopy::fill(d(), b(), Auto)),
            Slice::Fill(Temporal, Run) => {
                repeat(n, || cachecopy::fill(d(), b(), opaque_mode(Temporal)))
            }
            Slice::Fill(Auto, Run) => repeat(n, || cachecopy::fill(d(), b(), opaque_mode(Auto))),
            Slice::Fill(m, _) => repeat(n, || cachecopy::fill(d(), b(), opaque_mode(m))),
            Slice::StdZero => repeat(n, || d().fill(0)),
            Slice::Zero(Temporal, Const) => repeat(n, || cachecopy::zero(d(), Temporal)),
            Slice::Zero(Auto, Const) => repeat(n, || cachecopy::zero(d(), Auto)),
            Slice::Zero(Temporal, Run) => repeat(n, || cachecopy::zero(d(), opaque_mode(Temporal))),
            Slice::Zero(Auto, Run) => repeat(n, || cachecopy::zero(d(), opaque_mode(Auto))),
            Slice::Zero(m, _) => repeat(n, || cachecopy::zero(d(), opaque_mode(m))),
        }
    }
}

/// Times `n` calls of `f`; ns per call. Not inlined, as [`each`].
#[inline(never)]
fn repeat(n: usize, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n.max(1) as f64
}

/// What one measurement holds: per size, per column (destination and offset), per call, the
/// ns per call of every round.
struct Grid {
    sizes: Vec<usize>,
    cols: Vec<(Dest, usize)>,
    /// Call names, in the order of the innermost vectors' owners.
    names: Vec<String>,
    /// `[size][column][call]`: ns per call, one per round.
    ns: Vec<Vec<Vec<Vec<f64>>>>,
}

impl Grid {
    /// A grid of `sizes` by `cols` for the calls `names`, nothing measured yet.
    fn new(sizes: &[usize], cols: &[(Dest, usize)], names: Vec<String>) -> Grid {
        Grid {
            sizes: sizes.to_vec(),
            cols: cols.to_vec(),
            names,
            ns: Vec::new(),
        }
    }

    /// `base`'s time ÷ `ours`', paired per round.
    fn ratio(&self, size: usize, col: usize, base: usize, ours: usize) -> Summary {
        let c = &self.ns[size][col];
        paired_ratio(&c[base], &c[ours]).expect("rounds ≥ 1")
    }

    fn median(&self, size: usize, col: usize, call: usize) -> f64 {
        Summary::of(&self.ns[size][col][call])
            .expect("rounds ≥ 1")
            .median
    }

    /// `64 B hot +5`.
    fn shape(&self, size: usize, col: usize) -> String {
        let (dest, offset) = self.cols[col];
        format!("{} {} +{offset}", text::size(self.sizes[size]), dest.name())
    }
}

/// How many rounds and calls per sample.
struct Budget {
    rounds: usize,
    hot_calls: usize,
    cold_calls: usize,
}

impl Budget {
    /// Calls per sample at `len` bytes.
    fn calls(&self, dest: Dest, len: usize) -> usize {
        let n = match dest {
            Dest::Hot => self.hot_calls,
            Dest::Cold => self.cold_calls,
        };
        (n * CALLS_AT / len.max(CALLS_AT)).max(1)
    }
}

/// Measures `calls` at every size, destination and offset of `cols`, interleaved per round.
fn measure(
    s: &mut Session,
    calls: &[Call],
    sizes: &[usize],
    cols: &[(Dest, usize)],
    b: &Budget,
) -> Grid {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    // Each variant its own hot source and destination, 4 KiB apart from the others'.
    let src_len = (SRC_SKEW + largest).next_multiple_of(4096) + 4096;
    let mut hot: Vec<(Buf, Buf)> = calls
        .iter()
        .map(|_| (Buf::new(src_len, 0x5a), Buf::new(4096, 0)))
        .collect();
    let mut dsts: Vec<*mut u8> = Vec::new();
    let mut grid = Grid::new(sizes, cols, calls.iter().map(|c| c.name()).collect());
    for &len in sizes {
        let mut by_col = Vec::new();
        for &(dest, offset) in cols {
            let n = b.calls(dest, len);
            let mut ns = vec![Vec::with_capacity(b.rounds); calls.len()];
            for round in 0..=b.rounds {
                for i in round_order(calls.len(), round) {
                    let (src, dst) = &mut hot[i];
                    let src = src.as_slice()[SRC_SKEW..].as_ptr();
                    dsts.clear();
                    match dest {
                        Dest::Hot => {
                            let d = dst.as_mut_slice()[offset..].as_mut_ptr();
                            dsts.resize(n, d);
                        }
                        Dest::Cold => {
                            for _ in 0..n {
                                let slot = s.arena.cold(len + offset);
                                dsts.push(slot[offset..].as_mut_ptr());
                            }
                        }
                    }
                    let t = calls[i].time(&dsts, src, len);
                    // Round 0 warms code, TLB and dispatch up; it is not kept.
                    if round > 0 {
                        ns[i].push(t);
                    }
                }
            }
            by_col.push(ns);
        }
        grid.ns.push(by_col);
    }
    grid
}

/// Measures the safe-slice calls (8e): hot, every variant its own source and destination,
/// both `offset` bytes into their pages.
fn measure_slices(calls: &[Slice], sizes: &[usize], b: &Budget) -> Grid {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let len = (largest + OFFSETS[2]).next_multiple_of(4096);
    let mut bufs: Vec<(Buf, Buf)> = calls
        .iter()
        .map(|_| (Buf::new(len, 0x5a), Buf::new(len, 0)))
        .collect();
    let cols: Vec<(Dest, usize)> = OFFSETS.iter().map(|&o| (Dest::Hot, o)).collect();
    let mut grid = Grid::new(sizes, &cols, calls.iter().map(|c| c.name()).collect());
    for &size in sizes {
        let n = b.calls(Dest::Hot, size);
        let mut by_col = Vec::new();
        for &(_, offset) in &cols {
            let mut ns = vec![Vec::with_capacity(b.rounds); calls.len()];
            for round in 0..=b.rounds {
                for i in round_order(calls.len(), round) {
                    let (src, dst) = &mut bufs[i];
                    let src = src.as_slice()[offset..].as_ptr();
                    let dst = dst.as_mut_slice()[offset..offset + size].as_mut_ptr();
                    let t = calls[i].time(dst, src, size, n);
                    if round > 0 {
                        ns[i].push(t);
                    }
                }
            }
            by_col.push(ns);
        }
        grid.ns.push(by_col);
    }
    grid
}

/// A ratio column of a table: its label, the grid, the column of the grid (destination and
/// offset), and the calls whose times make the ratio (baseline ÷ ours).
struct Col<'g> {
    head: String,
    grid: &'g Grid,
    col: usize,
    base: usize,
    ours: usize,
}

/// A table: a row per size, the `ns` columns (label, grid, column, call: its median ns), then
/// the ratio columns; and a line with the lowest ratio.
fn table(ns: &[(String, &Grid, usize, usize)], cols: &[Col], sizes: &[usize]) -> String {
    let mut header = vec!["size".to_string()];
    header.extend(ns.iter().map(|(h, ..)| format!("{h} ns")));
    header.extend(cols.iter().map(|c| c.head.clone()));
    let mut lowest: Option<(f64, usize, &str)> = None;
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &len)| {
            let mut row = vec![size(len)];
            row.extend(ns.iter().map(|(_, g, c, call)| num(g.median(k, *c, *call))));
            for c in cols {
                let r = c.grid.ratio(k, c.col, c.base, c.ours);
                if lowest.is_none_or(|(w, ..)| r.median < w) {
                    lowest = Some((r.median, len, &c.head));
                }
                row.push(ratio(&r));
            }
            row
        })
        .collect();
    let mut t = text::grid(&header, &rows);
    if let Some((w, at, head)) = lowest {
        t.push_str(&format!(
            "   lowest ratio: {w:.2}x at {} ({head})\n",
            size(at)
        ));
    }
    t
}

/// The ratio columns of one variant against the baseline, at every offset of `dest`.
fn cols_of<'g>(grid: &'g Grid, dest: Dest, label: &str, base: usize, ours: usize) -> Vec<Col<'g>> {
    grid.cols
        .iter()
        .enumerate()
        .filter(|(_, (d, _))| *d == dest)
        .map(|(col, (_, o))| Col {
            head: format!("{label} +{o}"),
            grid,
            col,
            base,
            ours,
        })
        .collect()
}

/// The column of `grid` at `dest`, offset 0.
fn col0(grid: &Grid, dest: Dest) -> usize {
    grid.cols
        .iter()
        .position(|&c| c == (dest, 0))
        .expect("offset 0 measured")
}

/// The variants of a copy or fill table (8a, 8b), after the baseline.
const VARIANTS: [(Mode, Form); 4] = [
    (Mode::Temporal, Form::Const),
    (Mode::Auto, Form::Const),
    (Mode::Temporal, Form::Run),
    (Mode::Auto, Form::Run),
];

/// 8a or 8b: per destination, a table of every variant's ratio to glibc at every offset.
fn kind_tables(grid: &Grid, base_name: &str) -> String {
    let mut t = String::new();
    for dest in Dest::ALL {
        t.push_str(&format!(
            "   {} destination{}\n",
            dest.name(),
            match dest {
                Dest::Hot => " (the same buffer every call)",
                Dest::Cold => " (a new slot of the arena's scattered walk every call)",
            }
        ));
        let c0 = col0(grid, dest);
        let ns = [
            (base_name.to_string(), grid, c0, 0),
            ("T".to_string(), grid, c0, 1),
        ];
        let cols: Vec<Col> = VARIANTS
            .iter()
            .enumerate()
            .flat_map(|(k, &(m, f))| cols_of(grid, dest, &short(m, f), 0, k + 1))
            .collect();
        t.push_str(&table(&ns, &cols, &grid.sizes));
    }
    t
}

/// Registers a copy or fill grid: every variant against glibc (the first screen counts those
/// with the mode a constant), `Auto` (constant and run-time) against a constant `Temporal` (8c).
fn register_kind(s: &mut Session, section: &str, grid: &Grid, base: &str, what: What) {
    for k in 0..grid.sizes.len() {
        for c in 0..grid.cols.len() {
            for v in 1..grid.names.len() {
                let r = grid.ratio(k, c, 0, v);
                let f = s
                    .findings
                    .add(section, &grid.names[v], base, grid.shape(k, c), r);
                if let (m, Form::Const) = VARIANTS[v - 1] {
                    f.place = Place::glibc(what, m.name(), grid.sizes[k], grid.cols[c].0);
                }
            }
        }
    }
    let t = VARIANTS
        .iter()
        .position(|&v| v == (Mode::Temporal, Form::Const))
        .expect("listed")
        + 1;
    for k in 0..grid.sizes.len() {
        for c in 0..grid.cols.len() {
            for (v, &(m, _)) in VARIANTS.iter().enumerate() {
                if m == Mode::Auto {
                    let r = grid.ratio(k, c, t, v + 1);
                    s.findings
                        .add("8c", &grid.names[v + 1], "Temporal", grid.shape(k, c), r);
                }
            }
        }
    }
}

/// 8a's or 8b's plot: ns per call against size at destination offset 0, a line per variant
/// (glibc's grey), a panel per destination.
fn figure(grid: &Grid, title: &str, what: &str) -> Figure {
    let panels = Dest::ALL
        .into_iter()
        .map(|dest| {
            let col = col0(grid, dest);
            let series = (0..grid.names.len())
                .map(|call| {
                    let (name, style) = match call.checked_sub(1).map(|v| VARIANTS[v]) {
                        None => (format!("glibc {}", grid.names[0]), Style::Baseline),
                        Some((m, Form::Const)) => (m.name().to_string(), Style::of_mode(m.name())),
                        Some((m, Form::Run)) => (
                            format!("{m}, run-time mode"),
                            if m == Mode::Auto {
                                Style::AutoRt
                            } else {
                                Style::TemporalRt
                            },
                        ),
                    };
                    Series {
                        name,
                        style,
                        points: (0..grid.sizes.len())
                            .map(|k| (grid.sizes[k], grid.median(k, col, call)))
                            .collect(),
                        extra: Vec::new(),
                    }
                })
                .collect();
            Panel {
                caption: match dest {
                    Dest::Hot => "hot destination (the same buffer every call)".into(),
                    Dest::Cold => "cold destination (a new slot every call)".into(),
                },
                series,
            }
        })
        .collect();
    Figure {
        title: title.into(),
        x_desc: format!("{what} size (log scale)"),
        y_desc: "ns per call, median (log scale; lower is faster)".into(),
        panels,
        mark: None,
        extra: None,
    }
}

/// Runs section 8 and prints it; returns the plots of 8a and 8b.
pub fn section(s: &mut Session) -> Vec<Figure> {
    let t0 = s.start("8. small calls");
    let b = s.plan.by_scale(
        Budget {
            rounds: 2,
            hot_calls: 50,
            cold_calls: 10,
        },
        Budget {
            rounds: 9,
            hot_calls: 4000,
            cold_calls: 400,
        },
        Budget {
            rounds: 31,
            hot_calls: 20_000,
            cold_calls: 2000,
        },
    );
    let cols: Vec<(Dest, usize)> = Dest::ALL
        .into_iter()
        .flat_map(|d| OFFSETS.map(|o| (d, o)))
        .collect();
    let mut copies = vec![Call::Memcpy];
    copies.extend(VARIANTS.map(|(m, f)| Call::Copy(m, f)));
    let copy = measure(s, &copies, &SIZES, &cols, &b);
    let mut fills = vec![Call::Memset];
    fills.extend(VARIANTS.map(|(m, f)| Call::Fill(m, f)));
    let fill = measure(s, &fills, &SIZES, &cols, &b);
    let sums = [Call::KernelLoop, Call::Csum];
    let csum = measure(s, &sums, &CSUM_SIZES, &[(Dest::Hot, 0)], &b);
    let slice_variants = [
        (Mode::Temporal, Form::Const),
        (Mode::Auto, Form::Const),
        (Mode::Auto, Form::Run),
    ];
    let slices: Vec<Grid> = [
        (Slice::StdCopy, Slice::Copy as fn(Mode, Form) -> Slice),
        (Slice::StdFill, Slice::Fill),
        (Slice::StdZero, Slice::Zero),
    ]
    .into_iter()
    .map(|(base, ours)| {
        let mut calls = vec![base];
        calls.extend(slice_variants.map(|(m, f)| ours(m, f)));
        measure_slices(&calls, &SLICE_SIZES, &b)
    })
    .collect();

    let mut t = format!(
        "8. Small calls: ns per call (median of {} interleaved rounds of {} calls hot, {} cold, \
         fewer above {}), the length opaque; ratio = the baseline's time ÷ ours, paired per \
         round (above 1.00x: ours is faster); columns: the variant, then the destination's \
         offset; T = Temporal, A = Auto, the mode a constant; T rt, A rt = the mode a run-time \
         value (opaque at every call, as a per-socket policy); engine: {}\n",
        b.rounds,
        b.hot_calls,
        b.cold_calls,
        size(CALLS_AT),
        cachecopy::tune::Plan::current().tuning().engine
    );
    t.push_str("\n8a. copy_raw vs glibc memcpy (ns columns: offset 0)\n");
    t.push_str(&kind_tables(&copy, "memcpy"));
    t.push_str("\n8b. fill_raw vs glibc memset (ns columns: offset 0)\n");
    t.push_str(&kind_tables(&fill, "memset"));

    // 8c: Auto against a constant Temporal, hot; the cold figures go to the findings alone.
    t.push_str(
        "\n8c. Auto against Temporal: a constant Temporal's time ÷ Auto's (the mode a constant, \
         A, or a run-time value, A rt), same rounds as 8a and 8b, hot destination\n",
    );
    let cols8c: Vec<Col> = [(&copy, "copy"), (&fill, "fill")]
        .into_iter()
        .flat_map(|(grid, what)| {
            [(1, 2, "A"), (1, 4, "A rt")]
                .into_iter()
                .flat_map(move |(base, ours, label)| {
                    cols_of(grid, Dest::Hot, &format!("{what} {label}"), base, ours)
                })
        })
        .collect();
    t.push_str(&table(&[], &cols8c, &SIZES));
    let cold_worst = [(&copy, "copy"), (&fill, "fill")]
        .into_iter()
        .flat_map(|(g, what)| {
            let c = col0(g, Dest::Cold);
            (c..c + OFFSETS.len()).flat_map(move |col| {
                (0..g.sizes.len()).flat_map(move |k| {
                    [(2, "A"), (4, "A rt")]
                        .map(|(v, l)| (g.ratio(k, col, 1, v).median, g.shape(k, col), what, l))
                })
            })
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((w, shape, what, l)) = cold_worst {
        t.push_str(&format!(
            "   cold destinations (in section 10 and the JSON): lowest ratio {w:.2}x at {shape} \
             ({what} {l})\n"
        ));
    }

    t.push_str(
        "\n8d. net::csum_partial vs a kernel-style scalar loop (8-byte words, end-around carry), \
         source hot and aligned\n",
    );
    let c0 = col0(&csum, Dest::Hot);
    t.push_str(&table(
        &[
            ("scalar loop".to_string(), &csum, c0, 0),
            ("csum_partial".to_string(), &csum, c0, 1),
        ],
        &[Col {
            head: "hot +0".into(),
            grid: &csum,
            col: c0,
            base: 0,
            ours: 1,
        }],
        &CSUM_SIZES,
    ));

    t.push_str(
        "\n8e. Safe slice calls in a loop (cachecopy::copy/fill/zero(&mut dst, ...) against \
         dst.copy_from_slice(&src), dst.fill(b), dst.fill(0): glibc memcpy and memset), the \
         length the same every call, source and destination page-aligned plus the column's \
         offset (the same offset in their pages, as ring slots of 2 or 4 KiB are), hot; ns \
         columns: offset 0\n",
    );
    for (grid, what) in slices.iter().zip(["copy", "fill", "zero"]) {
        t.push_str(&format!("   {what} (against {})\n", grid.names[0]));
        let ns = [
            (grid.names[0].clone(), grid, 0, 0),
            ("T".to_string(), grid, 0, 1),
        ];
        let cols: Vec<Col> = slice_variants
            .iter()
            .enumerate()
            .flat_map(|(k, &(m, f))| cols_of(grid, Dest::Hot, &short(m, f), 0, k + 1))
            .collect();
        t.push_str(&table(&ns, &cols, &grid.sizes));
    }
    t.push_str(&took(t0));
    s.print(&t);

    register_kind(s, "8a", &copy, "memcpy", What::Copy);
    register_kind(s, "8b", &fill, "memset", What::Fill);
    let figures = vec![
        figure(
            &copy,
            "8a. Small copies: copy_raw against glibc memcpy, destination offset 0",
            "copy",
        ),
        figure(
            &fill,
            "8b. Small fills: fill_raw against glibc memset, destination offset 0",
            "fill",
        ),
    ];
    for k in 0..csum.sizes.len() {
        let r = csum.ratio(k, 0, 0, 1);
        s.findings.add(
            "8d",
            "csum_partial",
            "kernel-style loop",
            text::size(csum.sizes[k]),
            r,
        );
    }
    for grid in &slices {
        for k in 0..grid.sizes.len() {
            for c in 0..grid.cols.len() {
                let shape = format!("{}, same page offset", grid.shape(k, c));
                for v in 1..grid.names.len() {
                    let base = if grid.names[0] == "copy_from_slice" {
                        "memcpy"
                    } else {
                        "memset"
                    };
                    let r = grid.ratio(k, c, 0, v);
                    s.findings.add("8e", &grid.names[v], base, &shape, r);
                }
                for v in 2..grid.names.len() {
                    let r = grid.ratio(k, c, 1, v);
                    s.findings.add("8e", &grid.names[v], "Temporal", &shape, r);
                }
            }
        }
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_loop_is_the_internet_checksum() {
        // RFC 1071's example words 0001 f203 f4f5 f6f7, summed big-endian: ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let fold = |s: u32| {
            let s = (s >> 16) + (s & 0xffff);
            ((s >> 16) + s) as u16
        };
        assert_eq!(fold(kernel_loop(&data)).swap_bytes(), 0xddf2);
        // Odd tails and long buffers agree with the library.
        let long: Vec<u8> = (0..1473u32).map(|i| (i * 31 + 7) as u8).collect();
        for n in [0, 1, 7, 9, 20, 40, 1473] {
            let ours = fold(kernel_loop(&long[..n]));
            let lib = fold(cachecopy::net::csum_partial(&long[..n], 0));
            assert_eq!(ours, lib, "{n} bytes");
        }
    }

    #[test]
    fn every_call_does_its_job() {
        let src: Vec<u8> = (0..64u8).collect();
        let mut copies = vec![Call::Memcpy];
        copies.extend(VARIANTS.map(|(m, f)| Call::Copy(m, f)));
        copies.push(Call::Copy(Mode::NonTemporal, Form::Const));
        for call in copies {
            let mut d = vec![0u8; 64];
            call.time(&[d.as_mut_ptr()], src.as_ptr(), 64);
            assert_eq!(d, src, "{call:?}");
        }
        let mut fills = vec![Call::Memset];
        fills.extend(VARIANTS.map(|(m, f)| Call::Fill(m, f)));
        for call in fills {
            let mut d = vec![0u8; 64];
            call.time(&[d.as_mut_ptr()], src.as_ptr(), 64);
            assert!(d.iter().all(|&b| b == 0x5a), "{call:?}");
        }
    }

    #[test]
    fn every_slice_call_does_its_job_and_nothing_else() {
        let src: Vec<u8> = (0..100u8).collect();
        let mut all = vec![Slice::StdCopy, Slice::StdFill, Slice::StdZero];
        for (m, f) in VARIANTS {
            all.extend([Slice::Copy(m, f), Slice::Fill(m, f), Slice::Zero(m, f)]);
        }
        for call in all {
            let mut d = [0xeeu8; 102];
            call.time(d[1..].as_mut_ptr(), src.as_ptr(), 100, 3);
            let want: Vec<u8> = match call {
                Slice::StdCopy | Slice::Copy(..) => src.clone(),
                Slice::StdFill | Slice::Fill(..) => vec![0x5a; 100],
                Slice::StdZero | Slice::Zero(..) => vec![0; 100],
            };
            assert_eq!(d[1..101], want[..], "{call:?}");
            assert_eq!((d[0], d[101]), (0xee, 0xee), "{call:?}");
            assert!(!call.name().is_empty());
        }
    }

    #[test]
    fn tables_show_every_variant_and_the_lowest_ratio() {
        let grid = Grid {
            sizes: vec![8, 64],
            cols: vec![(Dest::Hot, 0), (Dest::Hot, 5), (Dest::Cold, 0)],
            names: vec!["memcpy".into(), "copy Temporal".into()],
            ns: vec![
                vec![vec![vec![2.0], vec![1.0]]; 3],
                vec![vec![vec![2.0], vec![4.0]]; 3],
            ],
        };
        let c0 = col0(&grid, Dest::Hot);
        let t = table(
            &[("memcpy".into(), &grid, c0, 0)],
            &cols_of(&grid, Dest::Hot, "T", 0, 1),
            &grid.sizes,
        );
        assert!(t.contains("memcpy ns"), "{t}");
        assert!(t.contains("T +5"), "{t}");
        assert!(!t.contains("cold"), "{t}");
        assert!(t.contains("lowest ratio: 0.50x at 64 B (T +0)"), "{t}");
        assert_eq!(grid.shape(1, 2), "64 B cold +0");
    }
}
