//! Section 7: transmit frames. 1472-byte payloads are copied into the 1536-byte slots of a
//! frame ring, as a network stack builds frames for the device: call by call with `Temporal`,
//! call by call with `NonTemporal` (a fence per frame), and `NonTemporal` in batches of 64
//! frames (`cachecopy::batch`, one fence per batch). Two rings: one larger than the L2 (the
//! frames have left the core's cache when the slot comes round again) and one larger than the
//! last-level cache (they have left every cache). Each variant has a ring of its own, so each
//! sees the cache state it leaves itself, as a program that picked one mode would.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use crate::machine::Machine;
use crate::measure::Buf;
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, ratio, size};

use cachecopy::Mode;

/// Payload bytes per frame (a 1500-byte MTU less IPv4 and UDP headers).
pub const PAYLOAD: usize = 1472;
/// Bytes per ring slot.
pub const SLOT: usize = 1536;
/// Frames per batch in the batched variant.
pub const BATCH: usize = 64;

/// How a variant copies its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Temporal,
    NonTemporal,
    Batched,
}

impl Variant {
    const ALL: [Variant; 3] = [Variant::Temporal, Variant::NonTemporal, Variant::Batched];

    fn name(self) -> &'static str {
        match self {
            Variant::Temporal => "Temporal",
            Variant::NonTemporal => "NonTemporal",
            Variant::Batched => "NonTemporal batched",
        }
    }

    /// Copies `src` into the payload of every slot of `slots`.
    fn run(self, slots: &mut [u8], src: &[u8]) {
        match self {
            Variant::Temporal | Variant::NonTemporal => {
                let mode = if self == Variant::Temporal {
                    Mode::Temporal
                } else {
                    Mode::NonTemporal
                };
                for slot in slots.chunks_exact_mut(SLOT) {
                    cachecopy::copy(&mut slot[..PAYLOAD], src, mode);
                }
            }
            Variant::Batched => {
                for group in slots.chunks_mut(BATCH * SLOT) {
                    cachecopy::batch(Mode::NonTemporal, |b| {
                        for slot in group.chunks_exact_mut(SLOT) {
                            b.copy(&mut slot[..PAYLOAD], src);
                        }
                    });
                }
            }
        }
        black_box(slots);
    }
}

/// One ring size, every variant.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Bytes of each ring.
    pub ring: usize,
    /// Variant names, in the order of the figures below.
    pub variants: Vec<&'static str>,
    /// Nanoseconds per frame, per variant.
    pub ns_per_frame: Vec<Summary>,
    /// Time per frame ÷ `Temporal`'s, per round, per variant (below 1: faster).
    pub vs_temporal: Vec<Summary>,
}

/// Section 7's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Frames {
    /// Payload bytes per frame.
    pub payload: usize,
    /// Slot bytes per frame.
    pub slot: usize,
    /// Frames per batch.
    pub batch: usize,
    /// A row per ring size.
    pub rows: Vec<Row>,
}

/// The two ring sizes: 4 x the L2 (at least 8 MiB) and 4 x the last-level cache (at least
/// 96 MiB, at most 512 MiB: a VM may report its host's whole L3), rounded to whole batches;
/// `tiny` shrinks both to a few batches.
fn rings(machine: &Machine, tiny: bool) -> Vec<usize> {
    const MIB: usize = 1 << 20;
    let whole = |bytes: usize| bytes.div_ceil(BATCH * SLOT) * BATCH * SLOT;
    if tiny {
        return vec![whole(BATCH * SLOT * 2), whole(BATCH * SLOT * 4)];
    }
    let l2 = machine.l2.unwrap_or(MIB);
    let llc = machine.l3.unwrap_or(32 * MIB);
    vec![
        whole((4 * l2).max(8 * MIB)),
        whole((4 * llc).clamp(96 * MIB, 512 * MIB)),
    ]
}

/// Measures and prints section 7.
pub fn section(s: &mut Session) -> Frames {
    s.start("7. frames");
    let tiny = s.plan.sample_bytes < (1 << 20);
    let rings = rings(s.machine, tiny);
    let frames_per_sample = if tiny { 2 * BATCH } else { 16 * 1024 };
    let src = &s.src.as_slice()[..PAYLOAD];
    let rows = rings
        .iter()
        .map(|&ring| measure(ring, src, s.plan.samples.max(3), frames_per_sample))
        .collect();
    let frames = Frames {
        payload: PAYLOAD,
        slot: SLOT,
        batch: BATCH,
        rows,
    };
    s.print(&print(&frames));
    frames
}

/// `samples` rounds; each runs `per_sample` frames of every variant in a fresh order, each on
/// its own ring, continuing where that variant's last round stopped.
fn measure(ring: usize, src: &[u8], samples: usize, per_sample: usize) -> Row {
    let per_sample = per_sample.div_ceil(BATCH) * BATCH;
    let mut rings: Vec<(Buf, usize)> = Variant::ALL
        .iter()
        .map(|_| (Buf::new(ring, 0), 0))
        .collect();
    let step = |v: usize, rings: &mut Vec<(Buf, usize)>| {
        let (buf, next) = &mut rings[v];
        let slots = buf.len() / SLOT;
        let mut done = 0;
        while done < per_sample {
            let n = (per_sample - done).min(slots - *next);
            let range = *next * SLOT..(*next + n) * SLOT;
            Variant::ALL[v].run(&mut buf.as_mut_slice()[range], src);
            *next = (*next + n) % slots;
            done += n;
        }
    };
    // Every ring written once in its own mode, so each timed frame finds the state its own
    // variant left a ring ago.
    for v in 0..Variant::ALL.len() {
        let slots = rings[v].0.len() / SLOT;
        for _ in 0..slots.div_ceil(per_sample) {
            step(v, &mut rings);
        }
    }
    let mut ns = vec![Vec::new(); Variant::ALL.len()];
    for round in 0..samples {
        let mut order = [0usize, 1, 2];
        order.rotate_left(round % 3);
        if round % 2 == 1 {
            order.reverse();
        }
        for v in order {
            let t = Instant::now();
            step(v, &mut rings);
            ns[v].push(t.elapsed().as_nanos() as f64 / per_sample as f64);
        }
    }
    Row {
        ring,
        variants: Variant::ALL.iter().map(|v| v.name()).collect(),
        ns_per_frame: ns
            .iter()
            .map(|t| Summary::of(t).expect("samples ≥ 1"))
            .collect(),
        vs_temporal: ns
            .iter()
            .map(|t| paired_ratio(t, &ns[0]).expect("samples ≥ 1"))
            .collect(),
    }
}

/// Section 7's text: a row per ring, ns per frame and ÷ Temporal per variant.
fn print(f: &Frames) -> String {
    let mut s = format!(
        "7. Frames: {} B payloads into {} B slots of a frame ring, each variant on its own ring; \
         ns per frame, median, and ÷ Temporal (below 1: faster); batches of {} frames, one fence \
         each\n",
        f.payload, f.slot, f.batch
    );
    let mut header = vec!["ring".to_string()];
    if let Some(r) = f.rows.first() {
        header.extend(r.variants.iter().map(|v| v.to_string()));
    }
    let rows: Vec<Vec<String>> = f
        .rows
        .iter()
        .map(|r| {
            let mut cells = vec![size(r.ring)];
            for (t, q) in r.ns_per_frame.iter().zip(&r.vs_temporal) {
                cells.push(format!("{} {}", num(t.median), ratio(q)));
            }
            cells
        })
        .collect();
    s.push_str(&text::grid(&header, &rows));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_copies_every_frame() {
        let src: Vec<u8> = (0..PAYLOAD).map(|i| i as u8).collect();
        for v in Variant::ALL {
            let mut ring = vec![0u8; 3 * BATCH * SLOT];
            v.run(&mut ring, &src);
            for slot in ring.chunks_exact(SLOT) {
                assert_eq!(&slot[..PAYLOAD], &src[..], "{}", v.name());
                assert!(slot[PAYLOAD..].iter().all(|&b| b == 0), "{}", v.name());
            }
        }
    }

    #[test]
    fn a_row_has_every_variant_and_ratios_to_temporal() {
        let src = vec![1u8; PAYLOAD];
        let r = measure(2 * BATCH * SLOT, &src, 2, BATCH);
        assert_eq!(r.variants.len(), 3);
        assert_eq!(r.ns_per_frame.len(), 3);
        assert!((r.vs_temporal[0].median - 1.0).abs() < 1e-9);
        let t = print(&Frames {
            payload: PAYLOAD,
            slot: SLOT,
            batch: BATCH,
            rows: vec![r],
        });
        assert!(t.starts_with("7. Frames"), "{t}");
        assert!(t.contains("NonTemporal batched"), "{t}");
    }
}
