//! The timing engine: every variant of one size measured round by round, interleaved, so drift
//! hits all alike, into hot or cold destinations of the shared arena (`cachecopy-arena`, the
//! benches' too).

use std::hint::black_box;
use std::time::Instant;

use cachecopy::Mode;
pub use cachecopy_arena::{Arena, Buf, Dest};

use crate::stats::{paired_ratio, Summary};

/// One operation the report times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `<[u8]>::copy_from_slice`: glibc `memcpy`.
    Memcpy,
    /// `cachecopy::copy` in a mode.
    Copy(Mode),
    /// `<[u8]>::fill(0)`: glibc `memset`.
    Memset,
    /// `cachecopy::zero` in a mode.
    Zero(Mode),
}

impl Op {
    /// The name tables and the JSON use: `memcpy`, `memset` or the mode's.
    pub fn name(self) -> &'static str {
        match self {
            Op::Memcpy => "memcpy",
            Op::Memset => "memset",
            Op::Copy(m) | Op::Zero(m) => m.name(),
        }
    }

    /// Runs once over `dst` (and `src[..dst.len()]`).
    #[inline]
    pub fn run(self, dst: &mut [u8], src: &[u8]) {
        let src = &src[..dst.len()];
        match self {
            Op::Memcpy => dst.copy_from_slice(black_box(src)),
            Op::Copy(m) => cachecopy::copy(dst, black_box(src), m),
            Op::Memset => dst.fill(black_box(0)),
            Op::Zero(m) => cachecopy::zero(dst, m),
        }
        black_box(dst);
    }
}

/// What a section measures: copies or fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `cachecopy::copy` against `copy_from_slice` (glibc `memcpy`); `Auto` switches at
    /// the plan's `nt` (`CACHECOPY_TUNE=nt=`).
    Copy,
    /// `cachecopy::zero` against `fill(0)` (glibc `memset`); `Auto` switches at
    /// the plan's `fill_nt` (`CACHECOPY_TUNE=fill_nt=`).
    Fill,
}

impl Kind {
    /// This kind's operation in `mode`.
    pub fn op(self, mode: Mode) -> Op {
        match self {
            Kind::Copy => Op::Copy(mode),
            Kind::Fill => Op::Zero(mode),
        }
    }

    /// The baseline, then every mode: the columns of a bandwidth table.
    pub fn ops(self) -> Vec<Op> {
        let baseline = match self {
            Kind::Copy => Op::Memcpy,
            Kind::Fill => Op::Memset,
        };
        let mut ops = vec![baseline];
        ops.extend(Mode::ALL.map(|m| self.op(m)));
        ops
    }

    /// The field of the plan's record (and of `CACHECOPY_TUNE`) that sets this kind's threshold.
    pub fn field(self) -> &'static str {
        match self {
            Kind::Copy => "nt",
            Kind::Fill => "fill_nt",
        }
    }

    /// The field of the record that sets this kind's threshold, and its value in the plan now.
    pub fn threshold(self) -> (&'static str, usize) {
        let t = cachecopy::tune::Plan::current().tuning();
        match self {
            Kind::Copy => ("nt", t.nt),
            Kind::Fill => ("fill_nt", t.fill_nt),
        }
    }
}

/// Serializes a [`Dest`] as its name, `"hot"` or `"cold"` (the JSON's spelling).
pub fn serialize_dest<S: serde::Serializer>(dest: &Dest, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(dest.name())
}

pub use cachecopy_arena::opaque;

/// `p`, opaque as [`opaque`] makes a length: the compiler cannot tell it from any other pointer,
/// so a loop of calls cannot be merged or hoisted, and it stays in a register. Its provenance is
/// kept (only the address goes through [`opaque`]).
#[inline(always)]
pub fn opaque_ptr<T>(p: *mut T) -> *mut T {
    p.with_addr(opaque(p.addr()))
}

/// `m`, unknown to the compiler at every call: the mode as a run-time value (a per-socket
/// policy read from a field), not a constant it can fold into the call. Its index goes through
/// [`opaque`] and comes back as one load from [`Mode::ALL`], as a policy's field is read: a
/// `match` on the integer put three compares and branches of the harness's own into every timed
/// call, which the library's figures then carried (lab/findings/small-calls.md, "The run-time mode").
#[inline(always)]
pub fn opaque_mode(m: Mode) -> Mode {
    const _: () = assert!(Mode::ALL.len() == 4);
    Mode::ALL[opaque(m as usize) & 3]
}

/// How many runs make one timed sample of `size` bytes: about `sample_bytes` of traffic, at
/// least one run.
pub fn runs_per_sample(size: usize, sample_bytes: usize) -> usize {
    sample_bytes.div_ceil(size.max(1)).clamp(1, 1 << 16)
}

/// Times `ops` on `size` bytes with destinations `dest`, every destination `offset` bytes past
/// its slot's start (0, or `--dst-offset`: a buffer behind a header): `samples` rounds, each
/// round every op once in a fresh order ([`round_order`]), each sample `runs` operations.
/// Returns GB/s (10^9 bytes per second) per op, per round.
#[allow(clippy::too_many_arguments)]
pub fn interleaved_at(
    ops: &[Op],
    size: usize,
    offset: usize,
    dest: Dest,
    src: &[u8],
    arena: &mut Arena,
    samples: usize,
    runs: usize,
) -> Vec<Vec<f64>> {
    let mut arena = At(arena, offset);
    let arena = &mut arena;
    let mut out = vec![Vec::with_capacity(samples); ops.len()];
    for &op in ops {
        op.run(arena.dest(dest, size), src); // warm-up: code, TLB, dispatch
    }
    for round in 0..samples {
        // A fresh order every round, so no op always runs first or always after the same
        // neighbour, whose state it would otherwise inherit (lab/report/README.md, "How to read it").
        for i in round_order(ops.len(), round) {
            if dest == Dest::Hot {
                // The previous op left this buffer in its own state (streamed or flushed out
                // of cache, or cached): one untimed run puts it in this op's steady state.
                ops[i].run(arena.dest(dest, size), src);
            }
            let t = Instant::now();
            for _ in 0..runs {
                ops[i].run(arena.dest(dest, size), src);
            }
            let ns = t.elapsed().as_nanos().max(1) as f64;
            out[i].push((size * runs) as f64 / ns);
        }
    }
    out
}

/// An arena whose destinations start `.1` bytes into their slots.
struct At<'a>(&'a mut Arena, usize);

impl At<'_> {
    fn dest(&mut self, dest: Dest, size: usize) -> &mut [u8] {
        &mut self.0.dest(dest, size + self.1)[self.1..]
    }
}

/// The order of round `round`: a permutation of `0..n`, a Fisher-Yates shuffle driven by a
/// SplitMix64 stream seeded with the round (deterministic, so runs are comparable).
pub fn round_order(n: usize, round: usize) -> Vec<usize> {
    let mut state = (round as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// One figure of a bandwidth table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Cell {
    /// Bytes per operation.
    pub size: usize,
    /// Where the destination was.
    #[serde(serialize_with = "serialize_dest")]
    pub dest: Dest,
    /// [`Op::name`].
    pub op: &'static str,
    /// GB/s.
    pub gbps: Summary,
    /// This op ÷ the table's baseline (memcpy or memset), per round; `None` for the baseline.
    pub ratio: Option<Summary>,
    /// GB/s per round, in round order (the pairs behind any ratio to another op).
    #[serde(skip)]
    pub samples: Vec<f64>,
}

/// A bandwidth table: `ops[0]` is the baseline the others are divided by.
#[allow(clippy::too_many_arguments)]
pub fn table(
    ops: &[Op],
    sizes: &[usize],
    offset: usize,
    src: &[u8],
    arena: &mut Arena,
    samples: usize,
    sample_bytes: usize,
    mut tick: impl FnMut(),
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for dest in Dest::ALL {
        for &size in sizes {
            let runs = runs_per_sample(size, sample_bytes);
            let r = interleaved_at(ops, size, offset, dest, src, arena, samples, runs);
            for (i, op) in ops.iter().enumerate() {
                cells.push(Cell {
                    size,
                    dest,
                    op: op.name(),
                    gbps: Summary::of(&r[i]).expect("samples ≥ 1"),
                    ratio: (i > 0).then(|| paired_ratio(&r[i], &r[0]).expect("samples ≥ 1")),
                    samples: r[i].clone(),
                });
            }
            tick();
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_serialize_as_the_json_always_had_them() {
        let cell = Cell {
            size: 64,
            dest: Dest::Cold,
            op: "NonTemporal",
            gbps: Summary::of(&[2.0]).unwrap(),
            ratio: Summary::of(&[1.5]),
            samples: vec![2.0],
        };
        let v = serde_json::to_value(&cell).unwrap();
        assert_eq!(v["dest"], "cold");
        assert_eq!(v["op"], "NonTemporal");
        assert_eq!(v["gbps"]["median"], 2.0);
        assert_eq!(v["ratio"]["median"], 1.5);
        assert_eq!(v["gbps"]["noisy"], false);
        assert_eq!(serde_json::to_value(Kind::Fill).unwrap(), "fill");
    }

    #[test]
    fn kinds_list_the_baseline_then_every_mode() {
        let names = |k: Kind| k.ops().into_iter().map(Op::name).collect::<Vec<_>>();
        let modes = ["Temporal", "NonTemporal", "FlushCache", "Auto"];
        assert_eq!(names(Kind::Copy)[0], "memcpy");
        assert_eq!(names(Kind::Fill)[0], "memset");
        assert_eq!(names(Kind::Copy)[1..], modes);
        assert_eq!(Kind::Fill.ops()[1], Op::Zero(Mode::Temporal));
    }

    #[test]
    fn ops_do_what_they_say() {
        let src: Vec<u8> = (0..100u8).collect();
        for op in [
            Op::Memcpy,
            Op::Copy(Mode::NonTemporal),
            Op::Copy(Mode::Auto),
        ] {
            let mut d = vec![0u8; 100];
            op.run(&mut d, &src);
            assert_eq!(d, src, "{op:?}");
        }
        for op in [Op::Memset, Op::Zero(Mode::FlushCache)] {
            let mut d = vec![9u8; 100];
            op.run(&mut d, &src);
            assert!(d.iter().all(|&b| b == 0), "{op:?}");
        }
    }

    #[test]
    fn round_orders_are_permutations_and_vary() {
        let mut firsts = std::collections::HashSet::new();
        let mut after_first = std::collections::HashSet::new();
        for round in 0..64 {
            let o = round_order(5, round);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![0, 1, 2, 3, 4], "round {round}: {o:?}");
            firsts.insert(o[0]);
            if let Some(p) = o.iter().position(|&i| i == 4) {
                if p > 0 {
                    after_first.insert(o[p - 1]);
                }
            }
        }
        assert_eq!(firsts.len(), 5, "every op starts some round");
        assert_eq!(
            after_first.len(),
            4,
            "op 4 follows every other op in some round"
        );
        assert_eq!(round_order(1, 3), vec![0]);
        assert!(round_order(0, 3).is_empty());
    }

    #[test]
    fn opaque_values_come_back_unchanged() {
        for m in Mode::ALL {
            assert_eq!(opaque_mode(m), m);
        }
        let mut x = 7u8;
        assert_eq!(opaque_ptr(&mut x as *mut u8), &mut x as *mut u8);
        assert_eq!(opaque(42), 42);
    }

    #[test]
    fn runs_cover_the_sample() {
        assert_eq!(runs_per_sample(64, 4096), 64);
        assert_eq!(runs_per_sample(1 << 30, 4096), 1);
        assert_eq!(runs_per_sample(3, 10), 4);
    }
}
