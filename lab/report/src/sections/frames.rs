//! Section 7: transmit frames, built the way a network stack builds them: a 42-byte Ethernet +
//! IPv4 + UDP header at the start of a 1536-byte ring slot and the 1472-byte payload at offset
//! 42 behind it (`cachecopy_arena::frame`), and, as a second row, a line-aligned payload with
//! no header.
//!
//! Variants, each on a page-aligned ring of its own (so each sees the cache state it leaves
//! itself, as a program that picked one way would): `Temporal` copies of header and payload;
//! per-call `NonTemporal` (a fence per frame); the same two copies batched 64 frames per fence
//! (`cachecopy::batch`); a batched gather of `[header, payload]` (`Batch::copy_from_iter`); and
//! the two references, glibc `memcpy` of header and payload and the limit, a plain loop
//! streaming the frame's whole lines from a prebuilt image. Three rings: one batch (96 KiB, in
//! the L2: the builders' CPU cost, since no line comes from memory), one larger than the L2,
//! one larger than the last-level cache. Every figure is a median of ns per frame over
//! interleaved rounds, with its ratio to glibc and to the limit paired per round.
//!
//! Section 7b runs the batched copies, the gather and `Temporal` on every engine the CPU offers
//! (`cachecopy::tune::Engine::supported`, each register set alone, AVX-512 with either edge store),
//! beside the limit on the larger ring: the evidence behind the engine rule (`lab/findings/engine.md`).
//!
//! Section 7d moves the payload through every offset of `cachecopy_arena::frame::OFFSETS` (0,
//! 14, 42, 54, 64, 66, 128; the header right in front of it, headroom before, the payload
//! running to the slot's end from 64 on: `frame::Place`) on the hot ring and the larger one:
//! plain frames (two copies), gathered ones, and frames checksummed by the CPU
//! (`Batch::csum_frame_from_iter`), each beside its `Temporal` build, glibc and the limit.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use cachecopy::iter::{IoVec, Source};
use cachecopy::tune::Engine;
use cachecopy::Mode;
use cachecopy_arena::frame::{self, Place, Shape, BATCH, HEADER, PAYLOAD, SLOT};

use crate::findings::{self, Findings, What};
use crate::machine::Machine;
use crate::measure::{Buf, Dest};
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, ratio, size};

/// How a variant builds its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// glibc `memcpy` of header and payload.
    Glibc,
    /// The frame's whole lines streamed from an image: the limit.
    Limit,
    /// `Temporal` copies of header and payload.
    Temporal(Engine),
    /// `NonTemporal` copies, a fence per frame.
    NonTemporal(Engine),
    /// `NonTemporal` copies, 64 frames per fence.
    Batched(Engine),
    /// A `NonTemporal` gather of `[header, payload]`, 64 frames per fence.
    Gather(Engine),
    /// `csum_frame_from_iter` in `Temporal`: the payload gathered and summed, the header from
    /// its sum.
    TemporalCsum(Engine),
    /// `Batch::csum_frame_from_iter`, 64 frames per fence.
    Csum(Engine),
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Glibc => "glibc memcpy",
            Variant::Limit => "limit",
            Variant::Temporal(_) => "Temporal",
            Variant::NonTemporal(_) => "NonTemporal",
            Variant::Batched(_) => "NT batched",
            Variant::Gather(_) => "NT gather",
            Variant::TemporalCsum(_) => "Temporal csum",
            Variant::Csum(_) => "NT csum",
        }
    }

    /// Builds a frame at `place` in every slot of `slots` (whole batches): bytes
    /// `place.start()..place.end()` of each slot, nothing else (the limit streams whole lines).
    fn run(self, place: Place, slots: &mut [u8], p: &Pieces) {
        let (h, start, end) = (place.header(), place.start(), place.end());
        let hdr = &p.hdr[..h];
        let payload = &p.payload[..place.payload()];
        match self {
            Variant::Glibc => {
                for slot in slots.chunks_exact_mut(SLOT) {
                    let (a, b) = slot[start..end].split_at_mut(h);
                    frame::memcpy(a, hdr);
                    frame::memcpy(b, payload);
                }
            }
            Variant::Limit => {
                let image = place.image(&p.hdr, &p.payload);
                let base = place.first_line();
                for group in slots.chunks_mut(BATCH * SLOT) {
                    for slot in group.chunks_exact_mut(SLOT) {
                        frame::stream_lines(&mut slot[base..base + image.len()], &image);
                    }
                    frame::fence();
                }
            }
            Variant::Temporal(e) | Variant::NonTemporal(e) => {
                let mode = if matches!(self, Variant::Temporal(_)) {
                    Mode::Temporal
                } else {
                    Mode::NonTemporal
                };
                for slot in slots.chunks_exact_mut(SLOT) {
                    let (a, b) = slot[start..end].split_at_mut(h);
                    cachecopy::raw::copy_with_engine(e, a, hdr, mode).expect("a supported engine");
                    cachecopy::raw::copy_with_engine(e, b, payload, mode).expect("supported");
                }
            }
            Variant::Batched(e) => {
                for group in slots.chunks_mut(BATCH * SLOT) {
                    cachecopy::raw::batch_with(e, Mode::NonTemporal, |b| {
                        for slot in group.chunks_exact_mut(SLOT) {
                            let (a, rest) = slot[start..end].split_at_mut(h);
                            b.copy(a, hdr);
                            b.copy(rest, payload);
                        }
                    })
                    .expect("a supported engine");
                }
            }
            Variant::Gather(e) => {
                let segs = [IoVec::new(hdr), IoVec::new(payload)];
                let segs = if h == 0 { &segs[1..] } else { &segs[..] };
                for group in slots.chunks_mut(BATCH * SLOT) {
                    cachecopy::raw::batch_with(e, Mode::NonTemporal, |b| {
                        for slot in group.chunks_exact_mut(SLOT) {
                            let f = &mut slot[start..end];
                            let n = b.copy_from_iter(f, &mut Source::iovec(segs));
                            debug_assert_eq!(n, end - start);
                        }
                    })
                    .expect("a supported engine");
                }
            }
            Variant::TemporalCsum(e) | Variant::Csum(e) => {
                let segs = [IoVec::new(payload)];
                let mode = if matches!(self, Variant::Csum(_)) {
                    Mode::NonTemporal
                } else {
                    Mode::Temporal
                };
                for group in slots.chunks_mut(BATCH * SLOT) {
                    cachecopy::raw::batch_with(e, mode, |b| {
                        for slot in group.chunks_exact_mut(SLOT) {
                            let f = &mut slot[start..end];
                            let header =
                                |hd: &mut [u8], _: usize, sum: u32| write_header(hd, hdr, sum);
                            b.csum_frame_from_iter(f, h, &mut Source::iovec(&segs), header);
                        }
                    })
                    .expect("a supported engine");
                }
            }
        }
        black_box(slots);
    }
}

/// The header of a checksummed frame: `hdr` with the payload's folded sum in place of its last
/// two bytes (where a UDP header keeps its checksum), written with stores of fixed sizes (a
/// copy of a length the compiler cannot see calls the C library's `memcpy`, whose short copies
/// may store one register reaching past the header into the payload's first line, which the
/// frame has just streamed: lab/findings/engine.md, "The frame's store stream").
fn write_header(dst: &mut [u8], hdr: &[u8], sum: u32) {
    fn put<const N: usize>(dst: &mut [u8], hdr: &[u8]) {
        let d: &mut [u8; N] = dst.try_into().expect("the header's length");
        *d = hdr.try_into().expect("the header's length");
    }
    match dst.len() {
        0 => return,
        14 => put::<14>(dst, hdr),
        HEADER => put::<HEADER>(dst, hdr),
        n => panic!("no header of {n} bytes"),
    }
    let n = dst.len();
    dst[n - 2..].copy_from_slice(&cachecopy::net::csum_fold(sum).to_ne_bytes());
}

/// The bytes every variant copies.
struct Pieces {
    hdr: Vec<u8>,
    payload: Vec<u8>,
}

impl Pieces {
    fn new(src: &[u8]) -> Pieces {
        Pieces {
            hdr: src[PAYLOAD..PAYLOAD + HEADER].to_vec(),
            payload: src[..PAYLOAD].to_vec(),
        }
    }
}

/// One ring size and frame shape, every variant.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Bytes of each ring.
    pub ring: usize,
    /// The frame shape.
    pub shape: String,
    /// Variant names, in the order of the figures below.
    pub variants: Vec<String>,
    /// Nanoseconds per frame, per variant.
    pub ns_per_frame: Vec<Summary>,
    /// Time per frame ÷ glibc `memcpy`'s, per round, per variant (below 1: faster).
    pub vs_glibc: Vec<Summary>,
    /// Time per frame ÷ the limit's, per round, per variant (1: at the limit).
    pub vs_limit: Vec<Summary>,
    /// Each variant's ns per frame, round by round (for ratios between variants).
    #[serde(skip)]
    pub rounds: Vec<Vec<f64>>,
}

impl Row {
    /// Variant `a`'s speed ÷ variant `b`'s (`b`'s time ÷ `a`'s), paired per round.
    fn speedup(&self, a: usize, b: usize) -> Summary {
        paired_ratio(&self.rounds[b], &self.rounds[a]).expect("samples ≥ 1")
    }
}

/// 7c: one candidate, one job, one working set of `cachecopy::tune::calibrate()`'s engine check.
#[derive(Clone, Debug, Serialize)]
pub struct Evidence {
    /// `cold ring`, `hot ring` or `calls` (`cachecopy::tune::calibrate::WorkingSet`).
    pub set: String,
    /// Median of the candidate's time ÷ the rule's (below 1: faster).
    pub ratio: f64,
    /// Rounds it was faster, of `rounds`.
    pub faster: u32,
    pub rounds: u32,
    /// `faster`, `same`, `slower` or `unsettled` (`cachecopy::tune::calibrate::Verdict`).
    pub verdict: String,
}

impl Evidence {
    fn of(e: &cachecopy::tune::calibrate::Evidence) -> Evidence {
        Evidence {
            set: e.set.to_string(),
            ratio: e.ratio,
            faster: e.faster,
            rounds: e.rounds,
            verdict: e.verdict.to_string(),
        }
    }
}

/// 7c: one candidate of `cachecopy::tune::calibrate()`'s engine check.
#[derive(Clone, Debug, Serialize)]
pub struct EngineTrial {
    /// The candidate engine.
    pub engine: String,
    /// The `Temporal` job on each working set.
    pub temporal: Vec<Evidence>,
    /// The streamed job (`NonTemporal`, batched) on each working set.
    pub stream: Vec<Evidence>,
    /// What became of it for each job, with the reason (`cachecopy::tune::calibrate::Decision`).
    pub decision: (String, String),
}

/// 7c: what `cachecopy::tune::calibrate()` measured of the engine.
#[derive(Clone, Debug, Serialize)]
pub struct EngineCheck {
    /// The CPU's rule.
    pub rule: String,
    /// The engine it decided, or `None` (the rule stays).
    pub decided: Option<String>,
    /// Why.
    pub outcome: String,
    pub trials: Vec<EngineTrial>,
}

impl EngineCheck {
    fn of(c: &cachecopy::tune::calibrate::Calibration) -> EngineCheck {
        let k = &c.engine_check;
        EngineCheck {
            rule: k.rule.to_string(),
            decided: c.engine.map(|e| e.to_string()),
            outcome: k.outcome.to_string(),
            trials: k
                .trials()
                .iter()
                .map(|t| EngineTrial {
                    engine: t.engine.to_string(),
                    temporal: t.temporal_on.iter().map(Evidence::of).collect(),
                    stream: t.stream_on.iter().map(Evidence::of).collect(),
                    decision: (t.decision.0.to_string(), t.decision.1.to_string()),
                })
                .collect(),
        }
    }
}

/// Section 7's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Frames {
    /// Header bytes in front of the payload (the `Header` shape).
    pub header: usize,
    /// Payload bytes per frame.
    pub payload: usize,
    /// Slot bytes per frame.
    pub slot: usize,
    /// Frames per batch.
    pub batch: usize,
    /// The active engine.
    pub engine: String,
    /// A row per ring size and shape (active engine).
    pub rows: Vec<Row>,
    /// 7b: the larger ring, header shape, a row per engine.
    pub engines: Vec<Row>,
    /// 7d: the hot ring, then the larger one, a row per payload offset (active engine).
    pub offsets: Vec<Row>,
    /// 7c: `cachecopy::tune::calibrate()`'s engine check.
    pub check: EngineCheck,
}

/// The three ring sizes: one batch (the hot ring: 96 KiB, inside every L2 measured, so no line
/// comes from memory and each builder's figure is its CPU cost, or the write limit for a
/// streaming one if that is higher: streaming stores go to memory wherever the line is), 4 x
/// the L2 (at least 8 MiB) and 4 x the last-level cache (at least 96 MiB, at most 512 MiB: a VM
/// may report its host's whole L3), rounded to whole batches; `tiny` shrinks the last two to a
/// few batches.
fn rings(machine: &Machine, tiny: bool) -> Vec<usize> {
    const MIB: usize = 1 << 20;
    let whole = |bytes: usize| bytes.div_ceil(BATCH * SLOT) * BATCH * SLOT;
    let hot = BATCH * SLOT;
    if tiny {
        return vec![hot, whole(BATCH * SLOT * 2), whole(BATCH * SLOT * 4)];
    }
    let l2 = machine.l2.unwrap_or(MIB);
    let llc = machine.l3.unwrap_or(32 * MIB);
    vec![
        hot,
        whole((4 * l2).max(8 * MIB)),
        whole((4 * llc).clamp(96 * MIB, 512 * MIB)),
    ]
}

/// The engines 7b compares: each vector register set alone (AVX-512 with both edge stores),
/// and the active engine if it mixes them. The word backend is left out (it has no vector
/// stores; section 2 measures it).
fn engines() -> Vec<Engine> {
    let mut v: Vec<Engine> = Engine::candidates().collect();
    if !v.contains(&cachecopy::tune::Plan::current().tuning().engine) {
        v.push(cachecopy::tune::Plan::current().tuning().engine);
    }
    v
}

/// Measures and prints section 7; `lib` is the run's `cachecopy::tune::calibrate()` (7c).
pub fn section(s: &mut Session, lib: &cachecopy::tune::calibrate::Calibration) -> Frames {
    s.start("7. frames");
    let tiny = s.plan.sample_bytes < (1 << 20);
    let rings = rings(s.machine, tiny);
    let per_sample = if tiny { 2 * BATCH } else { 16 * 1024 };
    let samples = s.plan.samples.max(3);
    let p = Pieces::new(s.src.as_slice());
    let e = cachecopy::tune::Plan::current().tuning().engine;
    let main = {
        use Variant::{Batched, Gather, Glibc, Limit, NonTemporal, Temporal};
        [
            Glibc,
            Limit,
            Temporal(e),
            NonTemporal(e),
            Batched(e),
            Gather(e),
        ]
    };
    let mut rows = Vec::new();
    for &ring in &rings {
        for shape in Shape::ALL {
            rows.push(measure(
                &mut Vec::new(),
                ring,
                shape.place(),
                shape.name(),
                &main,
                &p,
                samples,
                per_sample,
            ));
        }
    }
    // All engines in one measurement, interleaved round by round, each variant on its own
    // ring (measured one engine after another, the rows compared conditions minutes apart).
    // The ring is the larger one, at most 192 MiB: 14 rings of it are mapped at once.
    let big =
        (*rings.last().expect("three rings")).min(192 << 20) / (BATCH * SLOT) * (BATCH * SLOT);
    let big = big.max(BATCH * SLOT);
    let candidates = engines();
    let mut vs = vec![Variant::Glibc, Variant::Limit];
    for &e in &candidates {
        vs.extend([
            Variant::Temporal(e),
            Variant::Batched(e),
            Variant::Gather(e),
        ]);
    }
    let header = Shape::Header;
    let all = measure(
        &mut Vec::new(),
        big,
        header.place(),
        header.name(),
        &vs,
        &p,
        samples,
        per_sample,
    );
    let engines = candidates
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let pick = |v: &Vec<Summary>| {
                let mut out = vec![v[0], v[1]];
                out.extend_from_slice(&v[2 + 3 * k..5 + 3 * k]);
                out
            };
            let mut variants = vec![e.to_string()];
            variants
                .extend([0, 1, 2 + 3 * k, 3 + 3 * k, 4 + 3 * k].map(|i| all.variants[i].clone()));
            Row {
                ring: all.ring,
                shape: Shape::Header.name().to_string(),
                variants,
                ns_per_frame: pick(&all.ns_per_frame),
                vs_glibc: pick(&all.vs_glibc),
                vs_limit: pick(&all.vs_limit),
                rounds: Vec::new(),
            }
        })
        .collect();
    // 7d: every payload offset, on the hot ring and the larger one, each builder beside its
    // `Temporal` build, glibc and the limit.
    let sweep = offset_variants(e);
    let mut offsets = Vec::new();
    for ring in [rings[0], big] {
        let mut bufs = Vec::new();
        for place in Place::all() {
            let name = place.name();
            let row = measure(
                &mut bufs, ring, place, &name, &sweep, &p, samples, per_sample,
            );
            offsets.push(row);
        }
    }
    let frames = Frames {
        header: HEADER,
        payload: PAYLOAD,
        slot: SLOT,
        batch: BATCH,
        engine: e.to_string(),
        rows,
        engines,
        offsets,
        check: EngineCheck::of(lib),
    };
    register(&frames, &mut s.findings);
    s.print(&print(&frames));
    frames
}

/// 7d's variants: each builder of `e` beside its `Temporal` build, glibc and the limit.
fn offset_variants(e: Engine) -> [Variant; 7] {
    use Variant::{Batched, Csum, Gather, Glibc, Limit, Temporal, TemporalCsum};
    [
        Glibc,
        Limit,
        Temporal(e),
        Batched(e),
        Gather(e),
        TemporalCsum(e),
        Csum(e),
    ]
}

/// `samples` rounds; each runs `per_sample` frames of every variant in a fresh order, each on
/// its own ring, continuing where that variant's last round stopped. The first two variants
/// must be glibc and the limit (the ratios' bases). The rings are those in `bufs` (one per
/// variant, `ring` bytes each), made first if there are none (`&mut Vec::new()`: fresh rings):
/// 7d measures every offset on the same rings instead of faulting in fresh ones each time. Each
/// ring is written once in its variant's way before the timed rounds.
#[allow(clippy::too_many_arguments)]
fn measure(
    bufs: &mut Vec<Buf>,
    ring: usize,
    place: Place,
    name: &str,
    variants: &[Variant],
    p: &Pieces,
    samples: usize,
    per_sample: usize,
) -> Row {
    assert_eq!(variants[..2], [Variant::Glibc, Variant::Limit]);
    let per_sample = per_sample.div_ceil(BATCH) * BATCH;
    if bufs.len() != variants.len() || bufs.iter().any(|b| b.len() != ring) {
        *bufs = variants.iter().map(|_| Buf::new(ring, 0)).collect();
    }
    let mut rings: Vec<(&mut Buf, usize)> = bufs.iter_mut().map(|b| (b, 0)).collect();
    let mut step = |v: usize| {
        let (buf, next) = &mut rings[v];
        let slots = buf.len() / SLOT;
        let mut done = 0;
        while done < per_sample {
            let n = (per_sample - done).min(slots - *next);
            let range = *next * SLOT..(*next + n) * SLOT;
            variants[v].run(place, &mut buf.as_mut_slice()[range], p);
            *next = (*next + n) % slots;
            done += n;
        }
    };
    // Every ring written once in its own way, so each timed frame finds the state its own
    // variant left a ring ago.
    let slots = ring / SLOT;
    for v in 0..variants.len() {
        for _ in 0..slots.div_ceil(per_sample) {
            step(v);
        }
    }
    let n = variants.len();
    let mut ns = vec![Vec::new(); n];
    for round in 0..samples {
        for v in cachecopy_arena::rotated_order(n, round) {
            let t = Instant::now();
            step(v);
            ns[v].push(t.elapsed().as_nanos() as f64 / per_sample as f64);
        }
    }
    let summary = |t: &Vec<f64>| Summary::of(t).expect("samples ≥ 1");
    Row {
        ring,
        shape: name.to_string(),
        variants: variants.iter().map(|v| v.name().to_string()).collect(),
        ns_per_frame: ns.iter().map(summary).collect(),
        vs_glibc: ns
            .iter()
            .map(|t| paired_ratio(t, &ns[0]).expect("samples ≥ 1"))
            .collect(),
        vs_limit: ns
            .iter()
            .map(|t| paired_ratio(t, &ns[1]).expect("samples ≥ 1"))
            .collect(),
        rounds: ns,
    }
}

/// A row's cells after `lead`: glibc's and the limit's ns per frame, then each variant's.
fn row_cells(r: &Row, mut lead: Vec<String>) -> Vec<String> {
    lead.push(num(r.ns_per_frame[0].median));
    lead.push(num(r.ns_per_frame[1].median));
    lead.extend((2..r.ns_per_frame.len()).map(|i| cell(r, i)));
    lead
}

/// A cell: ns per frame, ÷ glibc, ÷ the limit.
fn cell(r: &Row, i: usize) -> String {
    format!(
        "{} {} {}",
        num(r.ns_per_frame[i].median),
        ratio(&r.vs_glibc[i]),
        ratio(&r.vs_limit[i])
    )
}

/// Section 7's text: a row per ring and shape, then 7b, a row per engine.
fn print(f: &Frames) -> String {
    let mut s = format!(
        "7. Frames: a {} B header and a {} B payload at offset {} (and, second, an aligned payload \
         alone) into the {} B slots of a page-aligned ring, each variant on its own ring; ns per \
         frame, median, then ÷ glibc memcpy and ÷ the limit (a plain loop streaming the frame's \
         whole lines), paired per round; batches of {} frames, one fence each; engine: {}. The \
         first ring is one batch, {}, inside the L2: no line comes from memory, so each figure \
         there is the builder's CPU cost beside the others' (a streaming builder's: the larger of \
         its CPU cost and the memory's write limit, since streaming stores go to memory wherever \
         the line is)\n",
        f.header,
        f.payload,
        f.header,
        f.slot,
        f.batch,
        f.engine,
        size(f.batch * f.slot)
    );
    let mut header = vec!["ring".to_string(), "shape".to_string()];
    if let Some(r) = f.rows.first() {
        header.push(format!("{} ns", r.variants[0]));
        header.push(format!("{} ns", r.variants[1]));
        header.extend(
            r.variants[2..]
                .iter()
                .map(|v| format!("{v}: ns ÷glibc ÷limit")),
        );
    }
    let rows: Vec<Vec<String>> = f
        .rows
        .iter()
        .map(|r| row_cells(r, vec![size(r.ring), short(&r.shape).to_string()]))
        .collect();
    s.push_str(&text::grid(&header, &rows));
    if let Some(first) = f.engines.first() {
        s.push_str(&format!(
            "\n7b. Engines on frames: a {} ring, header + payload at {}, every engine and job on a \
             ring of its own, all interleaved in the same rounds (ns ÷glibc ÷limit)\n",
            size(first.ring),
            f.header
        ));
        let mut header = vec!["engine".to_string()];
        header.push(format!("{} ns", first.variants[1]));
        header.push(format!("{} ns", first.variants[2]));
        header.extend(first.variants[3..].iter().cloned());
        let rows: Vec<Vec<String>> = f
            .engines
            .iter()
            .map(|r| row_cells(r, vec![r.variants[0].clone()]))
            .collect();
        s.push_str(&text::grid(&header, &rows));
    }
    s.push_str(&print_offsets(f));
    s.push_str(&print_check(&f.check));
    s
}

/// 7d's text: a table per ring, a row per payload offset.
fn print_offsets(f: &Frames) -> String {
    let mut s = String::new();
    let hot = f.batch * f.slot;
    let mut rings: Vec<usize> = f.offsets.iter().map(|r| r.ring).collect();
    rings.dedup();
    for ring in rings {
        let rows: Vec<&Row> = f.offsets.iter().filter(|r| r.ring == ring).collect();
        s.push_str(&format!(
            "\n7d. Frames at every payload offset, {} ring{}: the header right in front of the \
             payload (Ethernet alone at 14, none at 0), the slot's bytes before it left alone, \
             the payload {} B or what fits the slot (from 64 on it ends at the slot's end); plain \
             frames (two copies), gathered ([header, payload]) and checksummed by the CPU \
             (csum_frame_from_iter, the header from the payload's sum); ns per frame, then the \
             streamed builder's speed × its Temporal build's and × the limit's (targets: 1.30x \
             and 0.70x; on the hot ring, where no line comes from memory, its time ÷ the \
             limit's, target 1.20x), paired per round\n",
            size(ring),
            if ring == hot { " (hot)" } else { "" },
            f.payload
        ));
        let header = [
            "payload at",
            "glibc ns",
            "limit ns",
            "Temporal",
            "NT batched",
            "NT gather",
            "Temporal csum",
            "NT csum",
        ];
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                // 0 glibc, 1 limit, 2 Temporal, 3 batched, 4 gather, 5 Temporal csum, 6 csum.
                let ns = |i: usize| num(r.ns_per_frame[i].median);
                let streamed = |i: usize, t: usize| {
                    if ring == hot {
                        format!("{} {}", ns(i), ratio(&r.vs_limit[i]))
                    } else {
                        format!(
                            "{} {} {}",
                            ns(i),
                            ratio(&r.speedup(i, t)),
                            ratio(&r.speedup(i, 1))
                        )
                    }
                };
                vec![
                    r.shape.clone(),
                    ns(0),
                    ns(1),
                    ns(2),
                    streamed(3, 2),
                    streamed(4, 2),
                    ns(5),
                    streamed(6, 5),
                ]
            })
            .collect();
        s.push_str(&text::left_grid(&header, &cells, 1));
    }
    s
}

/// 7c's text: per candidate and job, each working set it was judged on (its time ÷ the rule
/// engine's, median of paired rounds, and the rounds it was faster), and what became of it.
fn print_check(c: &EngineCheck) -> String {
    let mut s = format!(
        "\n7c. calibrate()'s engine check: each candidate's time ÷ the rule's engine's ({}) per \
         job and working set (cold ring: frames into slots flushed before each sample; hot ring: \
         the same 64 slots again and again; calls: copies and fills at destination offsets 0 \
         and 5 into a hot destination, Temporal also checksums of 576 and 1472 B, geometric \
         mean), median of 9 paired rounds, rounds faster, verdict; a candidate is taken for a \
         job only if faster (sign test, 5 % at the median) on one working set and slower (sign \
         test, or 3 % at the median) on none\n",
        c.rule
    );
    let mut header = vec!["engine".to_string(), "job".to_string()];
    let sets: Vec<String> = c
        .trials
        .first()
        .map(|t| t.temporal.iter().map(|e| e.set.clone()).collect())
        .unwrap_or_default();
    header.extend(sets.iter().cloned());
    header.push("decision".to_string());
    let mut rows = Vec::new();
    for t in &c.trials {
        for (job, ev, d) in [
            ("Temporal", &t.temporal, &t.decision.0),
            ("NT batched", &t.stream, &t.decision.1),
        ] {
            let mut row = vec![
                if job == "Temporal" {
                    t.engine.clone()
                } else {
                    String::new()
                },
                job.to_string(),
            ];
            row.extend(
                ev.iter()
                    .map(|e| format!("{:.2}x {}/{} {}", e.ratio, e.faster, e.rounds, e.verdict)),
            );
            row.push(d.clone());
            rows.push(row);
        }
    }
    s.push_str(&text::grid(&header, &rows));
    let decided = match &c.decided {
        Some(e) if *e == c.rule => format!("{e}: the rule stays ({})", c.outcome),
        Some(e) => format!("{e} ({}; the line keeps the jobs that changed)", c.outcome),
        None => format!("nothing: the rule stays ({})", c.outcome),
    };
    s.push_str(&format!("   decided        {decided}\n"));
    s.push('\n');
    s
}

/// The shape's name in a table cell.
fn short(shape: &str) -> &'static str {
    if shape == Shape::Header.name() {
        "hdr 42 + payload"
    } else {
        "aligned payload"
    }
}

/// The ways of building a frame a user chooses between: [`Variant::name`]s.
const BUILDERS: [&str; 4] = ["Temporal", "NonTemporal", "NT batched", "NT gather"];

/// Registers sections 7 and 7b (frames into rings, each variant against glibc `memcpy` of the
/// same pieces): `Temporal` and the batched `NonTemporal` copies and gather held to it, per-frame
/// `NonTemporal` (a fence per frame, the cost batching avoids) kept for `compare` only. On the
/// hot ring (one batch, in the L2) only `Temporal` is held: there glibc's stores stay in the
/// cache while a streaming builder's go to memory, so its figure is the larger of its CPU cost
/// and the write limit, and loses to glibc by design. 7b's rows name their engine.
///
/// The first screen counts section 7's frames on the hot ring as into a hot destination and
/// those on the largest ring (past the last-level cache) as into a cold one.
pub fn register(f: &Frames, out: &mut Findings) {
    let hot = f.batch * f.slot;
    let largest = f.rows.iter().map(|r| r.ring).max().unwrap_or(0);
    let mut add = |section: &str, row: &Row, names: &[String], engine: &str| {
        let dest = if section != "7" {
            None
        } else if row.ring == hot {
            Some(Dest::Hot)
        } else if row.ring == largest {
            Some(Dest::Cold)
        } else {
            None
        };
        // `names[i]` goes with the figures' `i`; 0 and 1 are glibc and the limit.
        for (i, name) in names.iter().enumerate().skip(2) {
            let (Some(r), Some(_)) = (row.vs_glibc.get(i), row.ns_per_frame.get(i)) else {
                continue;
            };
            let shape = format!("{} ring, {}", text::size(row.ring), row.shape);
            let op = format!("frames {name}{engine}");
            let held = name == "Temporal" || (row.ring > hot && name != "NonTemporal");
            let finding = out.add(section, op, "memcpy", shape, r.recip());
            finding.target = held;
            let mode = BUILDERS.into_iter().find(|b| b == name);
            if let (Some(dest), Some(mode)) = (dest, mode) {
                finding.place =
                    findings::Place::glibc(What::Frame, mode, f.header + f.payload, dest);
            }
        }
    };
    for row in &f.rows {
        add("7", row, &row.variants, "");
    }
    for row in &f.engines {
        let Some((engine, names)) = row.variants.split_first() else {
            continue;
        };
        add("7b", row, names, &format!(" ({engine})"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces() -> Pieces {
        let src: Vec<u8> = (0..PAYLOAD + HEADER).map(|i| (i * 11 + 5) as u8).collect();
        Pieces::new(&src)
    }

    #[test]
    fn every_variant_builds_every_frame_and_nothing_else() {
        let p = pieces();
        let e = cachecopy::tune::Plan::current().tuning().engine;
        let mut all = vec![Variant::Glibc, Variant::Limit];
        for e in engines().into_iter().chain([e]) {
            all.extend([
                Variant::Temporal(e),
                Variant::NonTemporal(e),
                Variant::Batched(e),
                Variant::Gather(e),
                Variant::TemporalCsum(e),
                Variant::Csum(e),
            ]);
        }
        for place in Place::all() {
            let image = place.image(&p.hdr, &p.payload);
            let (base, start, at, end) = (
                place.first_line(),
                place.start(),
                place.offset(),
                place.end(),
            );
            let sum = cachecopy::net::csum_partial(&p.payload[..place.payload()], 0);
            for v in &all {
                let mut ring = Buf::new(3 * BATCH * SLOT, 0xee);
                v.run(place, ring.as_mut_slice(), &p);
                for slot in ring.as_slice().chunks_exact(SLOT) {
                    let (from, to) = if *v == Variant::Limit {
                        (base, base + image.len())
                    } else {
                        (start, end)
                    };
                    let mut want = image[from - base..to - base].to_vec();
                    if matches!(v, Variant::TemporalCsum(_) | Variant::Csum(_)) && at > start {
                        let fold = cachecopy::net::csum_fold(sum).to_ne_bytes();
                        want[at - from - 2..at - from].copy_from_slice(&fold);
                    }
                    assert_eq!(&slot[from..to], &want[..], "{v:?} {place:?}");
                    assert!(slot[..from].iter().all(|&b| b == 0xee), "{v:?} {place:?}");
                    assert!(slot[to..].iter().all(|&b| b == 0xee), "{v:?} {place:?}");
                }
            }
        }
    }

    /// Section 7's record of `rows` and `engines`, on the active engine.
    fn frames_of(rows: Vec<Row>, engines: Vec<Row>) -> Frames {
        Frames {
            header: HEADER,
            payload: PAYLOAD,
            slot: SLOT,
            batch: BATCH,
            engine: cachecopy::tune::Plan::current().tuning().engine.to_string(),
            rows,
            engines,
            offsets: Vec::new(),
            check: EngineCheck::of(&cachecopy::tune::calibrate()),
        }
    }

    /// The two references, then the active engine's `Temporal`, batched and (with `gather`)
    /// gathered frames.
    fn variants(gather: bool) -> Vec<Variant> {
        let e = cachecopy::tune::Plan::current().tuning().engine;
        let mut vs = vec![
            Variant::Glibc,
            Variant::Limit,
            Variant::Temporal(e),
            Variant::Batched(e),
        ];
        if gather {
            vs.push(Variant::Gather(e));
        }
        vs
    }

    #[test]
    fn a_row_has_every_variant_and_ratios_to_the_references() {
        let p = pieces();
        let e = cachecopy::tune::Plan::current().tuning().engine;
        let h = Shape::Header;
        let r = measure(
            &mut Vec::new(),
            2 * BATCH * SLOT,
            h.place(),
            h.name(),
            &variants(false),
            &p,
            2,
            BATCH,
        );
        assert_eq!(r.variants.len(), 4);
        assert!((r.vs_glibc[0].median - 1.0).abs() < 1e-9);
        assert!((r.vs_limit[1].median - 1.0).abs() < 1e-9);
        let mut b = r.clone();
        b.variants.insert(0, e.to_string());
        let t = print(&frames_of(vec![r], vec![b]));
        assert!(t.starts_with("7. Frames"), "{t}");
        assert!(t.contains("NT batched: ns ÷glibc ÷limit"), "{t}");
        assert!(t.contains("7b. Engines on frames"), "{t}");
        assert!(t.contains("7c. calibrate()'s engine check"), "{t}");
    }

    #[test]
    fn the_offset_sweep_prints_a_table_per_ring_and_a_row_per_offset() {
        let p = pieces();
        let e = cachecopy::tune::Plan::current().tuning().engine;
        let sweep = offset_variants(e);
        let mut offsets = Vec::new();
        for ring in [BATCH * SLOT, 2 * BATCH * SLOT] {
            for place in Place::all() {
                offsets.push(measure(
                    &mut Vec::new(),
                    ring,
                    place,
                    &place.name(),
                    &sweep,
                    &p,
                    2,
                    BATCH,
                ));
            }
        }
        let mut f = frames_of(Vec::new(), Vec::new());
        f.offsets = offsets;
        let t = print_offsets(&f);
        assert_eq!(
            t.matches("7d. Frames at every payload offset").count(),
            2,
            "{t}"
        );
        assert!(t.contains("ring (hot)"), "{t}");
        for place in Place::all() {
            assert_eq!(t.matches(&place.name()).count(), 2, "{t}");
        }
        assert!(t.contains("NT csum"), "{t}");
    }

    #[test]
    fn the_hot_ring_holds_only_temporal_to_glibc() {
        let p = pieces();
        let vs = variants(true);
        let h = Shape::Header;
        let hot = measure(
            &mut Vec::new(),
            BATCH * SLOT,
            h.place(),
            h.name(),
            &vs,
            &p,
            2,
            BATCH,
        );
        let cold = measure(
            &mut Vec::new(),
            2 * BATCH * SLOT,
            h.place(),
            h.name(),
            &vs,
            &p,
            2,
            BATCH,
        );
        let f = frames_of(vec![hot, cold], Vec::new());
        let mut out = crate::findings::Findings::default();
        register(&f, &mut out);
        let held: Vec<(String, bool)> = out
            .all()
            .iter()
            .map(|x| (format!("{} {}", x.shape, x.op), x.target))
            .collect();
        let want = |ring: usize, op: &str, target: bool| {
            let key = format!("{} ring, {} frames {op}", size(ring), Shape::Header.name());
            assert!(held.contains(&(key.clone(), target)), "{key}: {held:?}");
        };
        want(BATCH * SLOT, "Temporal", true);
        want(BATCH * SLOT, "NT batched", false);
        want(BATCH * SLOT, "NT gather", false);
        want(2 * BATCH * SLOT, "Temporal", true);
        want(2 * BATCH * SLOT, "NT batched", true);
        want(2 * BATCH * SLOT, "NT gather", true);
    }

    #[test]
    fn the_engine_check_shows_each_working_set_and_the_reason() {
        let ev = |set: &str, ratio, faster, verdict: &str| Evidence {
            set: set.into(),
            ratio,
            faster,
            rounds: 9,
            verdict: verdict.into(),
        };
        let sets = |v: [(f64, u32, &str); 2]| {
            vec![
                ev("cold ring", v[0].0, v[0].1, v[0].2),
                ev("hot ring", v[1].0, v[1].1, v[1].2),
            ]
        };
        let c = EngineCheck {
            rule: "temporal avx512, stream avx512, edges overlap".into(),
            decided: Some("temporal avx512, stream avx512, edges overlap".into()),
            outcome: "decided".into(),
            trials: vec![EngineTrial {
                engine: "temporal sse2, stream sse2, edges overlap".into(),
                temporal: sets([(0.83, 7, "faster"), (1.5, 0, "slower")]),
                stream: sets([(1.47, 0, "slower"), (1.0, 4, "same")]),
                decision: (
                    "not taken: slower on the hot ring".into(),
                    "not taken: slower on the cold ring".into(),
                ),
            }],
        };
        let t = print_check(&c);
        assert!(t.contains("cold ring") && t.contains("hot ring"), "{t}");
        assert!(t.contains("0.83x 7/9 faster"), "{t}");
        assert!(t.contains("1.50x 0/9 slower"), "{t}");
        assert!(t.contains("not taken: slower on the hot ring"), "{t}");
        assert!(t.contains("NT batched"), "{t}");
        assert!(t.contains("the rule stays"), "{t}");
    }
}
