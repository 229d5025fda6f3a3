//! Section 8f: calls of changing size. Section 8 times loops of one size, where the branch
//! predictor learns the size class after a few calls; real programs change the size every
//! call. Here every call has the size, alignment and (for moves) overlap of the next entry of a
//! sequence drawn up front (`cachecopy_arena::mix`): the fleet-wide distributions of `memcpy`,
//! `memset` and `memmove` calls Google's Fleetbench publishes (Apache-2.0, shipped with its
//! notice), and sizes uniform in each class 0-64, 65-256, 257-1024 and 1025-4096 B.
//!
//! Each mix runs in three working sets: an L2-sized one (half the L2; every sample starts with
//! the variant's whole set read into the cache), an LLC-sized one (the variants' sets together
//! half the last-level cache, each at least four L2s, so calls miss the L2 and hit the LLC) and a
//! cold one (the report's arena, split between the variants: each call's lines are ones the
//! variant has not touched for a whole arena's worth of traffic). The addresses walk the set's
//! lines in a scattered order, at the offsets within a line the fleet's alignments give.
//!
//! Copies (`copy_raw`), fills (`fill_raw`) and moves (`move_raw`) in `Temporal` and `Auto` with
//! the mode a constant, and `Auto` with the mode a run-time value, against glibc's `memcpy`,
//! `memset` and `memmove` called through a pointer, and against AOCL-LibMem's where the user
//! names a build (`--libmem PATH` or `CACHECOPY_LIBMEM`; `cachecopy_arena::peer`), skipped with
//! a message otherwise. Every variant has its own buffers and its own instance of one loop
//! (`mix::replay`), so that all pay the same harness work per call and differ in the call alone
//! (the C functions through a pointer held in a register; the run-time mode one load); a round
//! times every variant once on the round's slice of the sequence, in a fresh order; each figure
//! is the median over rounds of ns per call, each ratio paired per round (the baseline's time ÷
//! ours). Every ratio is registered in the session's findings: against glibc, against LibMem
//! (held on AMD, where the targets ask for it), and `Auto` against a constant `Temporal`.
//! lab/findings/small-calls.md says what the figures are held to and keeps them.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use cachecopy::Mode;
use cachecopy_arena::mix::{per_call, replay, Call, Op, Sequence, Sizes};
use cachecopy_arena::peer::{self, MemcpyFn, MemsetFn, Peer};
use serde::Serialize;

use crate::findings::{Against, Place, What};
use crate::measure::{opaque, round_order, Buf, Dest};
use crate::plot::{Figure, Panel, Series, Style};
use crate::session::{took, Session};
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, ratio, size};

/// The section's name in findings and `--only`.
pub const SECTION: &str = "8f";

/// One timed variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// glibc's function, through a pointer.
    Glibc,
    /// LibMem's function of the same name.
    LibMem,
    /// cachecopy, the mode a constant.
    Const(Mode),
    /// cachecopy, the mode a run-time value.
    Run(Mode),
}

impl Variant {
    /// `memcpy`, `LibMem memcpy`, `copy Auto`, `copy Auto (run-time mode)`: findings' names.
    fn name(self, op: Op) -> String {
        match self {
            Variant::Glibc => op.libc().into(),
            Variant::LibMem => format!("LibMem {}", op.libc()),
            Variant::Const(m) => format!("{} {m}", op.name()),
            Variant::Run(m) => format!("{} {m} (run-time mode)", op.name()),
        }
    }

    /// A column's label.
    fn short(self) -> &'static str {
        match self {
            Variant::Glibc => "glibc",
            Variant::LibMem => "LibMem",
            Variant::Const(Mode::Temporal) => "T",
            Variant::Const(_) => "A",
            Variant::Run(_) => "A rt",
        }
    }
}

/// cachecopy's variants: `Temporal` and `Auto` with the mode a constant, `Auto` a run-time
/// value.
const OURS: [Variant; 3] = [
    Variant::Const(Mode::Temporal),
    Variant::Const(Mode::Auto),
    Variant::Run(Mode::Auto),
];

/// A working set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Set {
    L2,
    Llc,
    Cold,
}

impl Set {
    fn name(self) -> &'static str {
        match self {
            Set::L2 => "L2",
            Set::Llc => "LLC",
            Set::Cold => "cold",
        }
    }
}

/// How many rounds, and calls per timed sample.
#[derive(Clone, Copy, Debug)]
struct Budget {
    rounds: usize,
    calls: usize,
}

/// Replays `calls` through `f` in the buffer at `base` (`mix::replay`, the one loop every
/// variant runs in); ns per call.
fn each(base: *mut u8, calls: &[Call], f: impl FnMut(*mut u8, *const u8, usize)) -> f64 {
    let t = Instant::now();
    replay(base, calls, f);
    t.elapsed().as_nanos() as f64 / calls.len().max(1) as f64
}

/// The C functions a variant calls through pointers: glibc's or LibMem's.
#[derive(Clone, Copy)]
struct CFns {
    memcpy: MemcpyFn,
    memset: MemsetFn,
    memmove: MemcpyFn,
}

impl CFns {
    fn glibc() -> CFns {
        CFns {
            memcpy: libc::memcpy as MemcpyFn,
            memset: libc::memset as MemsetFn,
            memmove: libc::memmove as MemcpyFn,
        }
    }

    fn of(p: &Peer) -> CFns {
        CFns {
            memcpy: p.memcpy,
            memset: p.memset,
            memmove: p.memmove,
        }
    }
}

/// Times `v` doing `op` over `calls` in the buffer at `base`; ns per call. Every arm runs
/// the same loop (`each`); what a closure captures it holds by value (the C function's
/// pointer, the fill's byte), so the arms differ in the call alone. The run-time mode is the
/// one value a call loads ([`per_call`]), as a per-socket policy is read.
///
/// # Safety
/// Every call's ranges (`Call::dst`/`src` + `len`) lie in the `region` bytes at `base`, which
/// nothing else accesses meanwhile; copies' ranges do not overlap.
unsafe fn time(v: Variant, op: Op, base: *mut u8, calls: &[Call], c: Option<CFns>) -> f64 {
    use Mode::{Auto, Temporal};
    let byte = opaque(0x5a) as u8;
    // The library's arms: `$call` with `$m` the mode, `Temporal` or `Auto` a constant (every
    // `Const` mode but `Temporal` runs as `Auto`) or loaded per call (`Run`).
    macro_rules! lib {
        (|$d:ident, $s:pat, $n:ident, $m:ident| $call:expr) => {
            match v {
                Variant::Const(Temporal) => each(base, calls, move |$d, $s, $n| {
                    let $m = Temporal;
                    $call
                }),
                Variant::Const(_) => each(base, calls, move |$d, $s, $n| {
                    let $m = Auto;
                    $call
                }),
                Variant::Run(r) => each(base, calls, move |$d, $s, $n| {
                    let $m = per_call(&r);
                    $call
                }),
                Variant::Glibc | Variant::LibMem => unreachable!("the C functions' arm"),
            }
        };
    }
    // SAFETY (every arm): the caller's contract: each range lies in the buffer; `memcpy` and
    // `copy_raw` get disjoint ranges, `memmove` and `move_raw` allow overlap.
    unsafe {
        match (op, v) {
            (_, Variant::Glibc | Variant::LibMem) => {
                let f = black_box(c.expect("C functions for glibc and LibMem"));
                let (memcpy, memset, memmove) = (f.memcpy, f.memset, f.memmove);
                match op {
                    Op::Copy => each(base, calls, move |d, s, n| {
                        memcpy(d.cast(), s.cast(), n);
                    }),
                    Op::Fill => each(base, calls, move |d, _, n| {
                        memset(d.cast(), i32::from(byte), n);
                    }),
                    Op::Move => each(base, calls, move |d, s, n| {
                        memmove(d.cast(), s.cast(), n);
                    }),
                }
            }
            (Op::Copy, _) => lib!(|d, s, n, m| cachecopy::copy_raw(d, s, n, m)),
            (Op::Fill, _) => lib!(|d, _, n, m| cachecopy::fill_raw(d, byte, n, m)),
            (Op::Move, _) => lib!(|d, s, n, m| cachecopy::move_raw(d, s, n, m)),
        }
    }
}

/// Reads one byte of every line of `buf`, so that a set that fits the L2 starts each sample
/// there, whatever the variants before it left.
fn touch(buf: &[u8]) {
    let mut sum = 0u8;
    for line in buf.chunks(64) {
        sum = sum.wrapping_add(line[0]);
    }
    black_box(sum);
}

/// One measured cell: per variant, ns per call of every round.
struct Cell {
    op: Op,
    sizes: Sizes,
    set: Set,
    set_bytes: usize,
    mean_len: f64,
    /// Indexed as the section's variants.
    ns: Vec<Vec<f64>>,
}

/// What the JSON keeps of a cell.
#[derive(Serialize)]
pub struct Row {
    /// `copy`, `fill`, `move`.
    op: &'static str,
    /// `fleet`, `0-64 B`, ...
    sizes: String,
    /// `l2`, `llc`, `cold`.
    set: Set,
    /// Bytes of each variant's buffer.
    set_bytes: usize,
    /// The mean length of the calls.
    mean_len: f64,
    /// Per variant (`memcpy`, `LibMem memcpy`, `copy Temporal`, ...): ns per call.
    ns: Vec<(String, Summary)>,
}

/// Section 8f in the JSON.
#[derive(Serialize)]
pub struct Mixes {
    /// Where LibMem came from, or why it was skipped.
    pub libmem: String,
    /// Rounds and calls per sample.
    pub rounds: usize,
    pub calls_per_sample: usize,
    pub rows: Vec<Row>,
    /// A plot per operation (`figure`).
    #[serde(skip)]
    pub figures: Vec<Figure>,
}

/// Times every variant on `seq` in the buffers `bufs` (one per variant), round by round.
fn measure(
    op: Op,
    seq: &Sequence,
    variants: &[Variant],
    bufs: &mut [&mut [u8]],
    fns: &[Option<CFns>],
    warm: bool,
    b: Budget,
) -> Vec<Vec<f64>> {
    let mut ns = vec![Vec::with_capacity(b.rounds); variants.len()];
    for round in 0..=b.rounds {
        let calls = &seq.calls[round * b.calls..(round + 1) * b.calls];
        for i in round_order(variants.len(), round) {
            let buf = &mut *bufs[i];
            assert!(buf.len() >= seq.region);
            if warm {
                touch(buf);
            }
            // SAFETY: `Sequence` keeps every call inside `seq.region` bytes, which `buf` holds
            // and nothing else uses; copies' ranges lie in separate halves.
            let t = unsafe { time(variants[i], op, buf.as_mut_ptr(), calls, fns[i]) };
            // Round 0 warms code, predictors and TLBs: not kept.
            if round > 0 {
                ns[i].push(t);
            }
        }
    }
    ns
}

/// The largest power of two at most `n` (`n` ≥ 1).
fn floor_pow2(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// Measures and prints section 8f; returns what the JSON keeps.
pub fn section(s: &mut Session, libmem: Option<&Path>) -> Mixes {
    let t0 = s.start("8f. calls of changing size");
    let b = s.plan.by_scale(
        Budget {
            rounds: 2,
            calls: 64,
        },
        Budget {
            rounds: 7,
            calls: 2048,
        },
        Budget {
            rounds: 21,
            calls: 8192,
        },
    );
    let (peer, libmem_note) = match peer::libmem(libmem) {
        Ok(Some(l)) => (Some(l.peer), format!("LibMem: {}", l.path.display())),
        Ok(None) => (
            None,
            format!(
                "LibMem: skipped (no --libmem PATH or {}=PATH to an AOCL-LibMem build; \
                 lab/findings/small-calls.md says how to build one)",
                peer::ENV
            ),
        ),
        Err(e) => (None, format!("LibMem: skipped ({e})")),
    };
    let mut variants = vec![Variant::Glibc];
    if peer.is_some() {
        variants.push(Variant::LibMem);
    }
    variants.extend(OURS);
    let fns: Vec<Option<CFns>> = variants
        .iter()
        .map(|v| match v {
            Variant::Glibc => Some(CFns::glibc()),
            Variant::LibMem => peer.as_ref().map(CFns::of),
            _ => None,
        })
        .collect();
    let nv = variants.len();

    // The working sets (see the module docs).
    let l2 = s.machine.l2.unwrap_or(1 << 20);
    let llc = s.machine.l3.unwrap_or(16 * l2);
    let tiny = s.plan.by_scale(true, false, false);
    let (l2_set, llc_set) = if tiny {
        (64 << 10, 256 << 10)
    } else {
        (floor_pow2(l2 / 2), floor_pow2((llc / (2 * nv)).max(4 * l2)))
    };
    let cold_set = (s.arena.len() / nv).min(u32::MAX as usize) & !4095;
    let mut sets = vec![(Set::L2, l2_set), (Set::Llc, llc_set)];
    if cold_set >= 4096 {
        sets.push((Set::Cold, cold_set));
    }

    let mixes = Sizes::all();
    let mut cells = Vec::new();
    for &(set, bytes) in &sets {
        // Each variant its own buffers: its own allocation for the L2 and LLC sets, its own
        // part of the arena for the cold one.
        let mut own: Vec<Buf> = match set {
            Set::Cold => Vec::new(),
            _ => (0..nv).map(|_| Buf::new(bytes, 0x3c)).collect(),
        };
        let mut bufs: Vec<&mut [u8]> = match set {
            Set::Cold => {
                let whole = s.arena.len();
                s.arena.hot(whole).chunks_mut(bytes).take(nv).collect()
            }
            _ => own.iter_mut().map(Buf::as_mut_slice).collect(),
        };
        for op in Op::ALL {
            for (k, &sizes) in mixes.iter().enumerate() {
                let seed = (k as u64) << 8 | op as u64;
                let seq = Sequence::new(op, sizes, bytes, (b.rounds + 1) * b.calls, seed);
                let ns = measure(op, &seq, &variants, &mut bufs, &fns, set == Set::L2, b);
                cells.push(Cell {
                    op,
                    sizes,
                    set,
                    set_bytes: bytes,
                    mean_len: seq.mean_len(),
                    ns,
                });
            }
        }
    }

    let mut t = format!(
        "8f. Calls of changing size: each call the next of a sequence drawn up front (sizes, \
         alignments and overlaps: the fleet-wide distributions Fleetbench publishes, Apache-2.0; \
         or sizes uniform in a class), {} rounds of {} calls, every variant in its own buffers; \
         ns per call of glibc (median), then glibc's time ÷ ours, paired per round (above 1.00x: \
         ours is faster); T = Temporal, A = Auto, the mode a constant; A rt = Auto, the mode a \
         run-time value; A rt/T = Temporal's time ÷ A rt's; with LibMem: LibMem = glibc's time ÷ \
         LibMem's, T/LM (...) = LibMem's time ÷ ours. Working sets, per variant: L2 {} \
         (read into the cache before every sample), LLC {} (all variants' together {} of the \
         {} LLC), cold {} (parts of the report's {} arena); engine: {}\n   {libmem_note}\n",
        b.rounds,
        b.calls,
        size(l2_set),
        size(llc_set),
        size(llc_set * nv),
        size(llc),
        size(cold_set),
        size(s.arena.len()),
        cachecopy::tune::Plan::current().tuning().engine,
    );
    for op in Op::ALL {
        let plural = match op {
            Op::Copy => "copies",
            Op::Fill => "fills",
            Op::Move => "moves",
        };
        t.push_str(&format!(
            "   {plural} ({}_raw against glibc {}{}):\n",
            op.name(),
            op.libc(),
            if peer.is_some() { " and LibMem's" } else { "" }
        ));
        t.push_str(&table(
            &cells.iter().filter(|c| c.op == op).collect::<Vec<_>>(),
            &variants,
        ));
    }
    t.push_str(&targets(&cells, &variants));
    t.push_str(&took(t0));
    s.print(&t);

    let amd = s.machine.vendor == "AuthenticAMD";
    register(s, &cells, &variants, amd);
    Mixes {
        libmem: libmem_note,
        rounds: b.rounds,
        calls_per_sample: b.calls,
        figures: Op::ALL
            .into_iter()
            .map(|op| figure(op, &cells, &variants))
            .collect(),
        rows: cells
            .iter()
            .map(|c| Row {
                op: c.op.name(),
                sizes: c.sizes.to_string(),
                set: c.set,
                set_bytes: c.set_bytes,
                mean_len: c.mean_len,
                ns: variants
                    .iter()
                    .zip(&c.ns)
                    .map(|(v, ns)| (v.name(c.op), Summary::of(ns).expect("rounds ≥ 1")))
                    .collect(),
            })
            .collect(),
    }
}

/// One operation's plot: ns per call against the calls' mean size, a panel per working set, a
/// line per variant through the uniform classes, the fleet's mix a hollow square at its mean.
fn figure(op: Op, cells: &[Cell], variants: &[Variant]) -> Figure {
    let sets = text::distinct(
        cells
            .iter()
            .filter(|c| c.op == op)
            .map(|c| (c.set, c.set_bytes)),
    );
    let panels = sets
        .into_iter()
        .map(|(set, bytes)| {
            let of_set: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.op == op && c.set == set)
                .collect();
            let series = variants
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let at = |c: &&Cell| {
                        let ns = Summary::of(&c.ns[i]).expect("rounds ≥ 1").median;
                        (c.mean_len.round() as usize, ns)
                    };
                    let (name, style) = match v {
                        Variant::Glibc => (format!("glibc {}", op.libc()), Style::Baseline),
                        Variant::LibMem => (format!("LibMem {}", op.libc()), Style::LibMem),
                        Variant::Const(m) => (m.name().to_string(), Style::of_mode(m.name())),
                        Variant::Run(m) => (format!("{m}, run-time mode"), Style::AutoRt),
                    };
                    Series {
                        name,
                        style,
                        points: of_set
                            .iter()
                            .filter(|c| c.sizes != Sizes::Fleet)
                            .map(at)
                            .collect(),
                        extra: of_set
                            .iter()
                            .filter(|c| c.sizes == Sizes::Fleet)
                            .map(at)
                            .collect(),
                    }
                })
                .collect();
            Panel {
                caption: match set {
                    Set::L2 => format!("L2 set, {} (cached)", size(bytes)),
                    Set::Llc => format!("LLC set, {} (in the L3)", size(bytes)),
                    Set::Cold => format!("cold set, {}", size(bytes)),
                },
                series,
            }
        })
        .collect();
    let (title, what) = match op {
        Op::Copy => (
            "8f. Copies of changing size: copy_raw against glibc memcpy",
            "copy",
        ),
        Op::Fill => (
            "8f. Fills of changing size: fill_raw against glibc memset",
            "fill",
        ),
        Op::Move => (
            "8f. Moves of changing size: move_raw against glibc memmove",
            "move",
        ),
    };
    Figure {
        title: title.into(),
        x_desc: format!("mean {what} size of the class (log scale)"),
        y_desc: "ns per call, median (log scale; lower is faster)".into(),
        panels,
        mark: None,
        extra: Some("the fleet's mix,\nat its mean size".into()),
    }
}

/// `fleet, L2 1 MiB`: a cell's shape in findings.
fn shape(c: &Cell) -> String {
    format!("{}, {} {}", c.sizes, c.set.name(), size(c.set_bytes))
}

/// The index of `v` in `variants`.
fn at(variants: &[Variant], v: Variant) -> Option<usize> {
    variants.iter().position(|&x| x == v)
}

/// The text table of one operation's cells.
fn table(cells: &[&Cell], variants: &[Variant]) -> String {
    let g = at(variants, Variant::Glibc).expect("glibc is measured");
    let lm = at(variants, Variant::LibMem);
    let t = at(variants, Variant::Const(Mode::Temporal)).expect("listed");
    let rt = at(variants, Variant::Run(Mode::Auto)).expect("listed");
    let ours: Vec<usize> = OURS.iter().filter_map(|&v| at(variants, v)).collect();
    let mut header: Vec<String> = ["sizes", "set", "mean B", "glibc ns"]
        .map(String::from)
        .to_vec();
    header.extend(ours.iter().map(|&i| variants[i].short().to_string()));
    if lm.is_some() {
        header.push("LibMem ns".into());
        header.push("LibMem".into());
        header.extend(ours.iter().map(|&i| format!("{}/LM", variants[i].short())));
    }
    header.push("A rt/T".into());
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let med = |i: usize| Summary::of(&c.ns[i]).expect("rounds ≥ 1").median;
            let r = |base: usize, i: usize| {
                ratio(&paired_ratio(&c.ns[base], &c.ns[i]).expect("rounds ≥ 1"))
            };
            let mut row = vec![
                c.sizes.to_string(),
                format!("{} {}", c.set.name(), size(c.set_bytes)),
                format!("{:.0}", c.mean_len),
                num(med(g)),
            ];
            row.extend(ours.iter().map(|&i| r(g, i)));
            if let Some(lm) = lm {
                row.push(num(med(lm)));
                row.push(r(g, lm));
                row.extend(ours.iter().map(|&i| r(lm, i)));
            }
            row.push(r(t, rt));
            row
        })
        .collect();
    text::left_grid(&header, &rows, 2)
}

/// The lowest of `ratios` (baseline index, ours index) over `cells`: the ratio and where.
fn lowest(
    cells: &[&Cell],
    pairs: &[(usize, usize)],
    variants: &[Variant],
) -> Option<(f64, String)> {
    cells
        .iter()
        .flat_map(|c| {
            pairs.iter().map(move |&(base, i)| {
                let r = paired_ratio(&c.ns[base], &c.ns[i])
                    .expect("rounds ≥ 1")
                    .median;
                (r, format!("{} {}", variants[i].name(c.op), shape(c)))
            })
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The lines that hold the section to its targets (lab/findings/small-calls.md): on the fleet's
/// mixes ≥ 1.10x glibc with the mode a constant and ≥ 1.0x with a run-time mode, every uniform
/// class ≥ 1.0x, and on AMD ≥ 1.0x LibMem; each line the lowest figure and where.
fn targets(cells: &[Cell], variants: &[Variant]) -> String {
    let g = at(variants, Variant::Glibc).expect("glibc is measured");
    let konst: Vec<(usize, usize)> = [Mode::Temporal, Mode::Auto]
        .iter()
        .filter_map(|&m| at(variants, Variant::Const(m)))
        .map(|i| (g, i))
        .collect();
    let rt = [(g, at(variants, Variant::Run(Mode::Auto)).expect("listed"))];
    let all: Vec<(usize, usize)> = OURS
        .iter()
        .filter_map(|&v| at(variants, v))
        .map(|i| (g, i))
        .collect();
    let fleet: Vec<&Cell> = cells.iter().filter(|c| c.sizes == Sizes::Fleet).collect();
    let uniform: Vec<&Cell> = cells.iter().filter(|c| c.sizes != Sizes::Fleet).collect();
    let mut lines = vec![
        (
            "fleet mixes, mode a constant, vs glibc",
            1.10,
            lowest(&fleet, &konst, variants),
        ),
        (
            "fleet mixes, run-time mode, vs glibc",
            1.0,
            lowest(&fleet, &rt, variants),
        ),
        (
            "uniform classes, every variant, vs glibc",
            1.0,
            lowest(&uniform, &all, variants),
        ),
    ];
    if let Some(lm) = at(variants, Variant::LibMem) {
        let vs: Vec<(usize, usize)> = all.iter().map(|&(_, i)| (lm, i)).collect();
        let every: Vec<&Cell> = cells.iter().collect();
        lines.push((
            "every mix, every variant, vs LibMem",
            1.0,
            lowest(&every, &vs, variants),
        ));
    }
    let mut out = String::from(
        "   targets (issue 40; lab/findings/small-calls.md): the lowest figure of each\n",
    );
    for (what, goal, low) in lines {
        if let Some((r, wh)) = low {
            let verdict = if r >= goal { "met" } else { "SHORT" };
            out.push_str(&format!(
                "   {what:<42} >= {goal:.2}x: {verdict:<5} lowest {r:.2}x ({wh})\n"
            ));
        }
    }
    out
}

/// Where the first screen counts a cell's figure of `v`: the mode a constant, in the L2 set (a
/// hot destination) or the cold one, at the calls' mean size; the LLC set lies between.
fn place(c: &Cell, v: Variant) -> Option<Place> {
    let Variant::Const(m) = v else {
        return None;
    };
    let what = match c.op {
        Op::Copy => What::Copy,
        Op::Fill => What::Fill,
        Op::Move => What::Move,
    };
    let dest = match c.set {
        Set::L2 => Dest::Hot,
        Set::Llc => return None,
        Set::Cold => Dest::Cold,
    };
    Place::glibc(what, m.name(), c.mean_len.round() as usize, dest)
}

/// Registers every ratio: each of ours against glibc and LibMem (held to LibMem on AMD only),
/// and `Auto` against a constant `Temporal`.
fn register(s: &mut Session, cells: &[Cell], variants: &[Variant], amd: bool) {
    let g = at(variants, Variant::Glibc).expect("glibc is measured");
    let lm = at(variants, Variant::LibMem);
    let t = at(variants, Variant::Const(Mode::Temporal)).expect("listed");
    for c in cells {
        let shape = shape(c);
        for v in OURS {
            let i = at(variants, v).expect("listed");
            let r = |base: usize| paired_ratio(&c.ns[base], &c.ns[i]).expect("rounds ≥ 1");
            let place = place(c, v);
            s.findings
                .add(SECTION, v.name(c.op), c.op.libc(), &shape, r(g))
                .place = place.clone();
            if let Some(lm) = lm {
                let f = s.findings.add(
                    SECTION,
                    v.name(c.op),
                    Variant::LibMem.name(c.op),
                    &shape,
                    r(lm),
                );
                f.target = amd;
                f.place = place.map(|p| Place {
                    against: Against::LibMem,
                    ..p
                });
            }
            if i != t {
                s.findings
                    .add(SECTION, v.name(c.op), "Temporal", &shape, r(t));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant does its job: copies and moves land the source's bytes, fills the byte,
    /// nothing outside the calls' ranges changes.
    #[test]
    fn every_variant_does_its_job() {
        let mut vs = vec![Variant::Glibc];
        vs.extend(OURS);
        for op in Op::ALL {
            let seq = Sequence::new(op, Sizes::Uniform(0, 300), 8192, 200, 3);
            for &v in &vs {
                let mut buf: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 1) as u8).collect();
                let mut want = buf.clone();
                for c in &seq.calls {
                    let (d, s, n) = (c.dst as usize, c.src as usize, c.len as usize);
                    match op {
                        Op::Copy | Op::Move => want.copy_within(s..s + n, d),
                        Op::Fill => want[d..d + n].fill(0x5a),
                    }
                }
                let fns = (v == Variant::Glibc).then(CFns::glibc);
                // SAFETY: the sequence stays in its 8192-byte region, which `buf` holds.
                let ns = unsafe { time(v, op, buf.as_mut_ptr(), &seq.calls, fns) };
                assert!(ns >= 0.0);
                assert!(buf == want, "{op:?} {v:?}");
            }
        }
    }

    #[test]
    fn names_and_sets() {
        assert_eq!(
            Variant::Run(Mode::Auto).name(Op::Fill),
            "fill Auto (run-time mode)"
        );
        assert_eq!(Variant::LibMem.name(Op::Move), "LibMem memmove");
        assert_eq!(
            Variant::Const(Mode::Temporal).name(Op::Copy),
            "copy Temporal"
        );
        assert_eq!(floor_pow2(48 << 20), 32 << 20);
        assert_eq!(floor_pow2(1), 1);
    }

    #[test]
    fn targets_say_met_or_short_with_the_lowest_figure() {
        let vs = vec![
            Variant::Glibc,
            Variant::Const(Mode::Temporal),
            Variant::Const(Mode::Auto),
            Variant::Run(Mode::Auto),
        ];
        let cell = |sizes, ns: [f64; 4]| Cell {
            op: Op::Copy,
            sizes,
            set: Set::L2,
            set_bytes: 1 << 20,
            mean_len: 100.0,
            ns: ns.iter().map(|&x| vec![x]).collect(),
        };
        let cells = [
            cell(Sizes::Fleet, [12.0, 10.0, 10.0, 12.0]),
            cell(Sizes::Uniform(0, 64), [10.0, 10.0, 12.5, 10.0]),
        ];
        let t = targets(&cells, &vs);
        assert!(
            t.contains("mode a constant, vs glibc     >= 1.10x: met   lowest 1.20x"),
            "{t}"
        );
        assert!(
            t.contains("run-time mode, vs glibc       >= 1.00x: met   lowest 1.00x"),
            "{t}"
        );
        assert!(
            t.contains("SHORT lowest 0.80x (copy Auto 0-64 B, L2 1 MiB)"),
            "{t}"
        );
        assert!(!t.contains("LibMem"), "{t}");
        let tab = table(&cells.iter().collect::<Vec<_>>(), &vs);
        assert!(tab.contains("A rt/T"), "{tab}");
        assert!(tab.contains("0-64 B"), "{tab}");
    }
}
