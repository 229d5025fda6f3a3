//! Section 9: moves whose ranges overlap (`cachecopy::copy_within`) against glibc's `memmove`
//! (`slice::copy_within`). Small moves hot (1 B - 4 KiB, by a third of their length plus one
//! byte); near moves cold (64 KiB to 48 MiB, by one page: a consumed front reclaimed, where
//! every destination line was read as source a moment before, so streaming it cannot win; from
//! 32 MiB past the NT threshold of every CPU in the references: Intel 2 MiB, Zen 3 8 MiB, Zen 4
//! 16 MiB), each down (destination below the source) and up; and one far cold move (the
//! destination half the arena away, past the last-level cache, within one mapping), where the
//! ranges do not overlap and streaming should win. Every variant moves in its own buffers;
//! rounds interleave the variants in a fresh order; each cell is the median over rounds and the
//! ratio to `memmove` paired per round. Every ratio is registered in the session's findings
//! (`Auto` also against the better of `Temporal` and `NonTemporal`).

use std::hint::black_box;
use std::time::Instant;

use cachecopy::Mode;

use crate::findings::{speeds, Findings, Place, What};
use crate::measure::{round_order, Buf, Dest};
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, ratio, size};

/// The variants, `memmove` first (the reference of every ratio).
const VARIANTS: [Option<Mode>; 4] = [
    None,
    Some(Mode::Temporal),
    Some(Mode::NonTemporal),
    Some(Mode::Auto),
];

fn name(v: Option<Mode>) -> &'static str {
    v.map_or("memmove", Mode::name)
}

/// One move of `buf[src..src + len]` to `dest`.
#[inline]
fn run(v: Option<Mode>, buf: &mut [u8], src: usize, len: usize, dest: usize) {
    let src = black_box(src);
    match v {
        None => buf.copy_within(src..src + len, dest),
        Some(m) => cachecopy::copy_within(buf, src..src + len, dest, m),
    }
    black_box(buf);
}

/// `(src, dest)` of a move by `dist` bytes, down or up, in a buffer of `len + dist` bytes.
fn ends(down: bool, dist: usize) -> (usize, usize) {
    if down {
        (dist, 0)
    } else {
        (0, dist)
    }
}

/// One table: per size and direction, each variant's per-round figures (ns per move).
struct Table {
    sizes: Vec<usize>,
    /// `[size][direction (down, up)][variant]`: ns per move, one per round.
    ns: Vec<[Vec<Vec<f64>>; 2]>,
}

/// Small moves, each variant in its own hot 8 KiB buffer, `runs` moves per sample.
fn hot(sizes: &[usize], samples: usize, mut tick: impl FnMut()) -> Table {
    let mut bufs: Vec<Buf> = VARIANTS.iter().map(|_| Buf::new(8 << 10, 0x3c)).collect();
    let mut ns = Vec::new();
    for &len in sizes {
        let dist = len / 3 + 1;
        let runs = (256 << 10) / (len + 64);
        let mut cell: [Vec<Vec<f64>>; 2] = [vec![Vec::new(); 4], vec![Vec::new(); 4]];
        for (d, down) in [true, false].into_iter().enumerate() {
            let (src, dest) = ends(down, dist);
            for (i, &v) in VARIANTS.iter().enumerate() {
                run(v, bufs[i].as_mut_slice(), src, len, dest); // warm-up
            }
            for round in 0..samples {
                for i in round_order(VARIANTS.len(), round) {
                    let buf = bufs[i].as_mut_slice();
                    let t = Instant::now();
                    for _ in 0..runs {
                        run(VARIANTS[i], buf, src, len, dest);
                    }
                    cell[d][i].push(t.elapsed().as_nanos().max(1) as f64 / runs as f64);
                }
            }
        }
        ns.push(cell);
        tick();
    }
    Table {
        sizes: sizes.to_vec(),
        ns,
    }
}

/// Large moves by one page, each into a cold slot of the arena (so each variant's buffer is
/// one nobody touched recently), `runs` moves per sample.
fn cold(s: &mut Session, sizes: &[usize], samples: usize, mut tick: impl FnMut()) -> Table {
    let page = 4096;
    let mut ns = Vec::new();
    for &len in sizes {
        let runs = ((16 << 20) / len).clamp(1, 64);
        let mut cell: [Vec<Vec<f64>>; 2] = [vec![Vec::new(); 4], vec![Vec::new(); 4]];
        for (d, down) in [true, false].into_iter().enumerate() {
            let (src, dest) = ends(down, page);
            for round in 0..samples {
                for i in round_order(VARIANTS.len(), round) {
                    let mut total = 0u128;
                    for _ in 0..runs {
                        let buf = s.arena.dest(Dest::Cold, len + page);
                        let t = Instant::now();
                        run(VARIANTS[i], buf, src, len, dest);
                        total += t.elapsed().as_nanos();
                    }
                    cell[d][i].push(total.max(1) as f64 / runs as f64);
                }
            }
        }
        ns.push(cell);
        tick();
    }
    Table {
        sizes: sizes.to_vec(),
        ns,
    }
}

/// Long-distance moves: `len` bytes moved by `dist` (half the arena, at least twice the
/// last-level cache by the arena's sizing rule) inside the arena, down and up. Each move starts
/// at the next of the `dist / len` positions of the lower half in turn, so a position comes back
/// only after the whole arena has been touched: source and destination are cold. Returns the
/// table and the distance.
fn far(s: &mut Session, samples: usize, mut tick: impl FnMut()) -> (Table, usize) {
    let dist = (s.arena.len() / 2) & !63;
    let len = (16 << 20).min(dist / 4).max(1);
    // `positions * len + dist <= 2 * dist`: every window lies in the arena.
    let positions = (dist / len).max(1);
    let runs = 2;
    let whole = s.arena.len();
    let buf = s.arena.hot(whole);
    let mut next = 0;
    let mut cell: [Vec<Vec<f64>>; 2] = [vec![Vec::new(); 4], vec![Vec::new(); 4]];
    for (d, down) in [true, false].into_iter().enumerate() {
        for round in 0..samples {
            for i in round_order(VARIANTS.len(), round) {
                let mut total = 0u128;
                for _ in 0..runs {
                    let at = next % positions * len;
                    next += 1;
                    let (src, dest) = ends(down, dist);
                    let window = &mut buf[at..at + len + dist];
                    let t = Instant::now();
                    run(VARIANTS[i], window, src, len, dest);
                    total += t.elapsed().as_nanos();
                }
                cell[d][i].push(total.max(1) as f64 / runs as f64);
            }
        }
    }
    tick();
    (
        Table {
            sizes: vec![len],
            ns: vec![cell],
        },
        dist,
    )
}

/// The text of one table: per size, `memmove`'s figure (ns hot, GB/s cold) then each mode's
/// ratio to it (speed: > 1 is faster), down then up.
fn print(t: &Table, gbs: bool) -> String {
    let mut header = vec!["size".to_string()];
    for dir in ["down", "up"] {
        header.push(format!("memmove {dir} {}", if gbs { "GB/s" } else { "ns" }));
        for &v in &VARIANTS[1..] {
            header.push(format!("{} {dir}", name(v)));
        }
    }
    let rows: Vec<Vec<String>> = t
        .sizes
        .iter()
        .zip(&t.ns)
        .map(|(&len, cell)| {
            let mut row = vec![size(len)];
            for dir in cell {
                let base = Summary::of(&dir[0]).expect("samples >= 1");
                row.push(if gbs {
                    num(len as f64 / base.median)
                } else {
                    num(base.median)
                });
                for times in &dir[1..] {
                    // Speed ratio: memmove's time over the mode's, per round.
                    let r = paired_ratio(&dir[0], times).expect("samples >= 1");
                    row.push(ratio(&r));
                }
            }
            row
        })
        .collect();
    text::grid(&header, &rows)
}

/// Adds every mode's ratio to `memmove` (`Temporal` and `Auto` held to it) and `Auto`'s to the
/// better of `Temporal` and `NonTemporal`, per size and direction; `shape` names a size, `dest`
/// is where the table's moves land.
fn register(out: &mut Findings, t: &Table, dest: Dest, shape: impl Fn(usize) -> String) {
    for (&len, cell) in t.sizes.iter().zip(&t.ns) {
        for (dir, times) in ["down", "up"].iter().zip(cell) {
            let shape = format!("{}, {dir}", shape(len));
            for (v, mode) in VARIANTS.iter().enumerate().skip(1) {
                let r = paired_ratio(&times[0], &times[v]).expect("samples >= 1");
                let f = out.add("9", format!("move {}", name(*mode)), "memmove", &shape, r);
                f.target = *mode != Some(Mode::NonTemporal);
                f.place = Place::glibc(What::Move, name(*mode), len, dest);
            }
            out.add_vs_better(
                "9",
                "move Auto",
                shape,
                &speeds(&times[3]),
                ("Temporal", &speeds(&times[1])),
                ("NonTemporal", &speeds(&times[2])),
            );
        }
    }
}

/// Measures and prints section 9.
pub fn section(s: &mut Session) {
    s.start("9. moves");
    let samples = s.plan.samples.max(2);
    // Cold sizes: those of which the arena holds at least 8 slots, so a move never lands in a
    // slot touched recently, and those larger than the last-level cache of which it holds two
    // (no line of such a move survives the other slot's).
    let llc = s.machine.l3.or(s.machine.l2).unwrap_or(32 << 20);
    let arena = s.arena.len();
    let cold_sizes: Vec<usize> = [64 << 10, 1 << 20, 4 << 20, 16 << 20, 32 << 20, 48 << 20]
        .into_iter()
        .filter(|&n| n + 4096 <= arena / 8 || (n > llc && n + 4096 <= arena / 2))
        .collect();
    let hot_sizes: Vec<usize> = (0..=12).map(|k| 1usize << k).collect();
    let tick = s.ticker();
    let h = hot(&hot_sizes, samples, tick);
    let tick = s.ticker();
    let c = cold(s, &cold_sizes, samples, tick);
    let tick = s.ticker();
    let (f, dist) = far(s, samples, tick);
    let mut out = String::from(
        "9. Moves (overlapping ranges, cachecopy::copy_within) against glibc memmove \
         (slice::copy_within): memmove's figure, then each mode's speed ÷ memmove's \
         (> 1 faster), median of interleaved rounds\n",
    );
    out.push_str("   hot, by len/3 + 1 bytes (ns per move):\n");
    out.push_str(&print(&h, false));
    out.push_str(
        "   cold, near: by one page (a consumed front reclaimed: each destination line was read \
         as source a moment before; from 32 MiB past every reference CPU's NT threshold; GB/s \
         moved):\n",
    );
    out.push_str(&print(&c, true));
    out.push_str(&format!(
        "   cold, far: by {} (past the last-level cache, one mapping; GB/s moved):\n",
        size(dist)
    ));
    out.push_str(&print(&f, true));
    out.push('\n');
    s.print(&out);
    register(&mut s.findings, &h, Dest::Hot, |n| {
        format!("{} hot, by {}", size(n), size(n / 3 + 1))
    });
    register(&mut s.findings, &c, Dest::Cold, |n| {
        format!("{} cold, by 4 KiB", size(n))
    });
    register(&mut s.findings, &f, Dest::Cold, |n| {
        format!("{} cold, far: by {}", size(n), size(dist))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_timed_and_printed() {
        let t = hot(&[1, 100], 2, || {});
        assert!(t
            .ns
            .iter()
            .all(|c| c.iter().all(|d| d.iter().all(|v| v.len() == 2))));
        let text = print(&t, false);
        assert!(text.contains("memmove down ns"), "{text}");
        assert!(text.contains("Auto up"), "{text}");
        assert!(text.contains("100 B"), "{text}");
        let mut f = Findings::default();
        register(&mut f, &t, Dest::Hot, |n| format!("{n} hot"));
        // Per size and direction: three modes against memmove, Auto against the better mode.
        assert_eq!(f.all().len(), 2 * 2 * 4);
        assert!(f.all().iter().any(|x| x.shape == "100 hot, up"
            && x.op == "move Auto"
            && x.baseline == "the better mode"));
        assert!(f
            .all()
            .iter()
            .all(|x| x.target == (x.op != "move NonTemporal")));
    }
}
