//! UDP transmit without checksum offload: each datagram is gathered from the user's iovecs with
//! one fused checksum-and-copy into a frame with reserved headroom, then the UDP and IPv4 headers
//! are pushed in front (no payload copy) and every checksum is verified.
//!
//! Then prints the time per frame of Temporal, per-call NonTemporal and batched NonTemporal
//! builds (64 frames per [`cachecopy::batch`], one fence per batch, the way `sendmmsg` users
//! build their frames), beside glibc `memcpy` of the same bytes and the limit (the frame's whole
//! lines streamed from a prebuilt image), measured in shuffled rounds of the same run. The
//! frames live in page-aligned transmit rings of 1536-byte slots that are reused slot by slot,
//! as a NIC or AF_XDP ring is: each new frame overwrites memory last written a whole ring ago.
//! Every payload offset of `cachecopy_arena::frame::OFFSETS` is measured (0, 14, 42, 54, 64, 66
//! and 128): the 42-byte Ethernet + IPv4 + UDP header right in front of the payload (an
//! Ethernet header alone at 14, none at 0), the slot's bytes before it left alone as headroom,
//! the payload 1472 bytes or what fits the slot (`frame::Place`). The first table builds the
//! frames into a ring of one batch that stays in the L2: the CPU's cost beside the memory's
//! limit.
//!
//! `cargo run --release -p cachecopy-probes --example udp_tx`

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::{IoVec, Source};
use cachecopy::net::{
    csum_add, csum_and_copy_from_iter, csum_fold, csum_frame_from_iter, csum_partial,
    csum_tcpudp_magic, Frame,
};
use cachecopy::Mode;
use cachecopy_arena::frame::{self, Place};
use cachecopy_arena::Buf;

const SRC: [u8; 4] = [192, 168, 1, 10];
const DST: [u8; 4] = [192, 168, 1, 20];
/// Ethernet (14) + IPv4 (20) + UDP (8), rounded up so the payload starts line-aligned-ish.
const HEADROOM: usize = 64;
const UDP: u8 = 17;

/// One datagram: the payload gathered from `iov` and summed while copying, then the headers.
fn build(iov: &[IoVec<'_>], sport: u16, dport: u16, id: u16, mode: Mode) -> Frame {
    let mut src = Source::iovec(iov);
    let (mut f, payload_sum) = Frame::csum_copy_from_iter(HEADROOM, &mut src, 0, mode);
    push_headers(&mut f, payload_sum, sport, dport, id);
    f
}

/// Pushes the UDP and IPv4 headers in front of the payload `f` holds, whose partial sum is
/// `payload_sum`.
fn push_headers(f: &mut Frame, payload_sum: u32, sport: u16, dport: u16, id: u16) {
    let udp_len = (f.len() + 8) as u16;

    let udp = f.push(8).expect("headroom reserved");
    udp[0..2].copy_from_slice(&sport.to_be_bytes());
    udp[2..4].copy_from_slice(&dport.to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    udp[6..8].copy_from_slice(&[0, 0]);
    let sum = csum_add(payload_sum, csum_partial(udp, 0));
    let check = match csum_tcpudp_magic(SRC, DST, udp_len, UDP, sum) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        c => c,
    };
    udp[6..8].copy_from_slice(&check.to_ne_bytes());

    let total = (udp_len as usize + 20) as u16;
    let ip = f.push(20).expect("headroom reserved");
    ip.copy_from_slice(&[
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, UDP, 0, 0, SRC[0], SRC[1], SRC[2], SRC[3], DST[0],
        DST[1], DST[2], DST[3],
    ]);
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    let check = csum_fold(csum_partial(ip, 0));
    ip[10..12].copy_from_slice(&check.to_ne_bytes());
}

/// Both checksums verify to zero and the payload is the concatenated iovecs.
fn verify(f: &Frame, iov: &[IoVec<'_>]) {
    let (ip, udp) = f.split_at(20);
    assert_eq!(csum_fold(csum_partial(ip, 0)), 0, "IPv4 header checksum");
    assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, f.len());
    let udp_len = udp.len() as u16;
    assert_eq!(
        csum_tcpudp_magic(SRC, DST, udp_len, UDP, csum_partial(udp, 0)),
        0,
        "UDP checksum"
    );
    let payload: Vec<u8> = iov
        .iter()
        .flat_map(|s| s.as_slice().iter().copied())
        .collect();
    assert_eq!(udp[8..], payload[..]);
}

fn main() {
    // A user's message in uneven pieces (odd lengths put later segments at odd offsets).
    let owned: Vec<Vec<u8>> = [1200usize, 13, 1, 258]
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n).map(|i| (i * 31 + k * 7 + 1) as u8).collect())
        .collect();
    let iov: Vec<IoVec<'_>> = owned.iter().map(|v| IoVec::new(v)).collect();
    let payload: usize = iov.iter().map(|s| s.len()).sum();

    for mode in Mode::ALL {
        for i in 0..2_000u16 {
            // Vary the split so segment boundaries land at every parity.
            let cut = i as usize % owned[0].len();
            let (a, b) = owned[0].split_at(cut);
            let parts = [IoVec::new(a), IoVec::new(b), iov[1], iov[2], iov[3]];
            verify(&build(&parts, 5000 + i, 53, i, mode), &parts);
        }
        // The same through a batch of reused frames.
        let mut ring: Vec<Frame> = (0..BATCH)
            .map(|_| Frame::with_room(HEADROOM, payload, 0))
            .collect();
        for round in 0..8u16 {
            fill_group(&mut ring, &iov, round, mode, true);
            for f in &mut ring {
                verify(f, &iov);
                f.pull(28).expect("headers pushed");
            }
        }
    }
    println!(
        "verified {} datagrams of {payload} payload bytes: IPv4 and UDP checksums are 0",
        4 * (2000 + 8 * BATCH)
    );

    // Transmit rings of 1536-byte slots, page-aligned, as a NIC or AF_XDP ring: each new frame
    // overwrites the slot written a whole ring ago. 8192 frames (12 MiB) are larger than any L2
    // and fit an L3; 65536 (96 MiB) are larger than a 32 MiB L3 (the AMD VMs), and may fit the
    // hundreds of MiB an Intel VM reports.
    println!(
        "{} B frames ({} B headers + {payload} B payload from {} iovecs, fused checksum-and-copy) \
         into page-aligned rings of {} B slots, each variant on its own ring, medians of {ROUNDS} \
         shuffled rounds; engine: {}",
        payload + frame::HEADER,
        frame::HEADER,
        iov.len(),
        frame::SLOT,
        cachecopy::tune::Plan::current().tuning().engine
    );
    println!(
        "  payload at: its offset in the slot; the {} B header right in front of it (an Ethernet \
         header alone at 14, none at 0), the slot's bytes before the header untouched; from 64 on \
         the payload is what fits the slot ({} B at 66, {} B at 128) and ends at the slot's end",
        frame::HEADER,
        Place::at(66).payload(),
        Place::at(128).payload()
    );
    println!(
        "  glibc: memcpy of the same bytes (no checksum); limit: the frame's whole lines streamed \
         from a prebuilt image (the memory's write limit); after: batched NonTemporal with the \
         headers written after the batch's fence (the way before csum_frame_from_iter)"
    );
    // The CPU's own limit beside the memory's: the same builds into a ring of one batch (96 KiB,
    // inside every L2 here), where no line has to come from memory. Streaming stores still go
    // to memory wherever the line is, so a streamed build there reads the larger of its CPU
    // cost and the write limit: at the limit, streaming sets the pace; above it, the CPU does.
    for ring_len in [HOT, 8192, 65536] {
        let hot = ring_len == HOT;
        if hot {
            println!(
                "  ring {ring_len} (hot, {} KiB): ns per frame, median; batched NonTemporal's \
                 time ÷ the limit's, paired per round (target: at most 1.20x)",
                (HOT * frame::SLOT) >> 10
            );
        } else {
            println!(
                "  ring {ring_len} ({} MiB): ns per frame, median; batched NonTemporal's speed \
                 ÷ Temporal's, glibc's and the limit's, paired per round (targets: at least \
                 1.30x Temporal, 0.70x the limit)",
                (ring_len * frame::SLOT) >> 20
            );
        }
        println!(
            "    at  Temporal  NonTemporal  batched  glibc  limit  after  {}",
            if hot {
                "batched ÷ limit (time)"
            } else {
                "batched × Temporal  × glibc  × limit"
            }
        );
        for place in Place::all() {
            let m = throughput(&iov, ring_len, place);
            let ns = |v: usize| format!("{:.0}", 1e9 / m.rate[v]);
            let flag = |ok: bool| if ok { "" } else { " (short)" };
            let tail = if hot {
                let r = 1.0 / m.ratio(BATCHED, LIMIT);
                format!("{r:.2}x{}", flag(r <= 1.2))
            } else {
                let (t, g, l) = (
                    m.ratio(BATCHED, TEMPORAL),
                    m.ratio(BATCHED, GLIBC),
                    m.ratio(BATCHED, LIMIT),
                );
                format!(
                    "{t:.2}x{}  {g:.2}x  {l:.2}x{}",
                    flag(t >= 1.3),
                    flag(l >= 0.7)
                )
            };
            println!(
                "    {:>3}  {:>8}  {:>11}  {:>7}  {:>5}  {:>5}  {:>5}  {tail}",
                place.offset(),
                ns(TEMPORAL),
                ns(NONTEMPORAL),
                ns(BATCHED),
                ns(GLIBC),
                ns(LIMIT),
                ns(AFTER),
            );
        }
    }
}

/// Frames per batch: one fence per this many frames.
const BATCH: usize = 64;
/// Frames in the hot ring: one batch (96 KiB), so it stays in the L2 of every CPU measured and
/// fences as often as the large rings.
const HOT: usize = BATCH;
/// Timed rounds per figure.
const ROUNDS: usize = 21;

/// Gathers and sums one payload into every frame of `frames`, then pushes their headers.
///
/// `batched`: inside one [`cachecopy::batch`] (one fence for all; the payload slices stay
/// borrowed until it, so the headers come after). Otherwise one fenced call per frame.
///
/// The payload slices are looked up for the whole group first, as a driver walks its
/// descriptor ring: each `Frame` points to its buffer through an `Arc`, last touched a ring ago,
/// and looking them up one by one between copies serialises those misses (temporal stores hide
/// them behind the hardware prefetcher, streaming stores do not).
fn fill_group(frames: &mut [Frame], iov: &[IoVec<'_>], id: u16, mode: Mode, batched: bool) {
    let mut sums = [0u32; BATCH];
    let mut payloads: Vec<&mut [u8]> = frames.iter_mut().map(|f| f.data_mut()).collect();
    if batched {
        cachecopy::batch(mode, |b| {
            for (p, sum) in payloads.iter_mut().zip(&mut sums) {
                *sum = b
                    .csum_and_copy_from_iter(core::mem::take(p), &mut Source::iovec(iov))
                    .1;
            }
        });
    } else {
        for (p, sum) in payloads.iter_mut().zip(&mut sums) {
            *sum = csum_and_copy_from_iter(p, &mut Source::iovec(iov), mode).1;
        }
    }
    drop(payloads);
    for (i, (f, sum)) in frames.iter_mut().zip(sums).enumerate() {
        push_headers(f, sum, 40000, 9, id.wrapping_add(i as u16));
    }
}

/// Writes the headers of a frame whose `len`-byte payload (partial sum `payload_sum`) sits
/// right behind `hdr`: Ethernet, IPv4 and UDP when `hdr` holds 42 bytes, Ethernet alone when
/// it holds 14, nothing when it is empty.
///
/// The 42 bytes are built as six 64-bit words in registers and written with six 8-byte stores
/// (the last overlapping), and both checksums are summed from those words, not read back from
/// the frame: a load of bytes that narrower stores have just written cannot be forwarded from
/// the store queue and waits until they reach the cache, behind every streaming store the
/// batch has queued, so a header written field by field and then summed from memory stalls the
/// batch once per frame (lab/findings/engine.md, "The frame's store stream").
fn write_headers(hdr: &mut [u8], len: usize, payload_sum: u32, id: u16) {
    const MAC: [u8; 12] = [0x02, 0, 0, 0, 0, 0x20, 0x02, 0, 0, 0, 0, 0x10];
    match hdr.len() {
        0 => return,
        14 => {
            hdr[..12].copy_from_slice(&MAC);
            hdr[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
            return;
        }
        n => assert_eq!(n, frame::HEADER, "an Ethernet + IPv4 + UDP header"),
    }
    let word = |b: [u8; 8]| u64::from_le_bytes(b);
    let be = |x: u16| x.to_be_bytes();
    let udp_len = (len + 8) as u16;
    let [tl0, tl1] = be(udp_len + 20);
    let [id0, id1] = be(id);
    let [ul0, ul1] = be(udp_len);
    let [sp0, sp1] = be(40000);
    let [dp0, dp1] = be(9);
    // Bytes 0..8, 8..16, ...: MACs, EtherType, IPv4 (version, length, id, flags, TTL,
    // protocol, checksum, addresses), UDP (ports, length, checksum).
    let w0 = word([
        MAC[0], MAC[1], MAC[2], MAC[3], MAC[4], MAC[5], MAC[6], MAC[7],
    ]);
    let w1 = word([MAC[8], MAC[9], MAC[10], MAC[11], 0x08, 0x00, 0x45, 0]);
    let w2 = word([tl0, tl1, id0, id1, 0x40, 0, 64, UDP]);
    let w3 = |check: [u8; 2]| {
        word([
            check[0], check[1], SRC[0], SRC[1], SRC[2], SRC[3], DST[0], DST[1],
        ])
    };
    let w4 = word([DST[2], DST[3], sp0, sp1, dp0, dp1, ul0, ul1]);
    let w5 = |check: [u8; 2]| word([sp0, sp1, dp0, dp1, ul0, ul1, check[0], check[1]]);
    // The IPv4 header is bytes 14..34: the top quarter of w1, w2, w3, the bottom quarter of
    // w4; summed as 64-bit words, whose 16-bit lanes are its native-endian words.
    let ip_sum = fold64(&[w1 >> 48, w2, w3([0, 0]), w4 & 0xffff]);
    let ip_check = csum_fold(ip_sum).to_ne_bytes();
    let udp_sum = csum_add(payload_sum, fold64(&[w5([0, 0])]));
    let udp_check = match csum_tcpudp_magic(SRC, DST, udp_len, UDP, udp_sum) {
        0 => 0xffff, // RFC 768: a computed zero is sent as all ones
        c => c,
    }
    .to_ne_bytes();
    let words = [w0, w1, w2, w3(ip_check), w4];
    for (i, w) in words.into_iter().enumerate() {
        hdr[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    hdr[34..42].copy_from_slice(&w5(udp_check).to_le_bytes());
}

/// The end-around sum of `words` as a 32-bit partial checksum (congruent modulo 2^16 - 1 to
/// the sum of their 16-bit lanes).
fn fold64(words: &[u64]) -> u32 {
    let mut s = 0u64;
    for &w in words {
        let (x, carry) = s.overflowing_add(w);
        s = x + carry as u64;
    }
    let (x, carry) = (s as u32).overflowing_add((s >> 32) as u32);
    x + carry as u32
}

/// The frame at `place` in `slot` carries the first bytes of `payload` and, with a UDP header,
/// both checksums verify; the slot's bytes outside the frame are still `untouched`.
fn verify_slot(slot: &[u8], place: Place, payload: &[u8], untouched: u8) {
    let (at, len) = (place.offset(), place.payload());
    assert_eq!(&slot[at..at + len], &payload[..len]);
    assert!(slot[..place.start()].iter().all(|&b| b == untouched));
    assert!(slot[place.end()..].iter().all(|&b| b == untouched));
    if place.header() == 14 {
        assert_eq!(slot[at - 2..at], 0x0800u16.to_be_bytes());
    }
    if place.header() != frame::HEADER {
        return;
    }
    let ip = &slot[at - 28..at - 8];
    assert_eq!(csum_fold(csum_partial(ip, 0)), 0, "IPv4 header checksum");
    let udp = &slot[at - 8..at + len];
    let udp_len = udp.len() as u16;
    assert_eq!(
        csum_tcpudp_magic(SRC, DST, udp_len, UDP, csum_partial(udp, 0)),
        0,
        "UDP checksum"
    );
}

/// The variants of [`build_group`], by index.
const TEMPORAL: usize = 0;
const NONTEMPORAL: usize = 1;
const BATCHED: usize = 2;
const GLIBC: usize = 3;
const LIMIT: usize = 4;
const AFTER: usize = 5;
const VARIANTS: usize = 6;

/// One group of frames (at most [`BATCH`] slots) built by variant `v` at `place`: `TEMPORAL`,
/// `NONTEMPORAL` (a fence per frame) and `BATCHED` (one batch) through `csum_frame_from_iter`
/// (headers from the payload's sum, the line they share with the payload written once);
/// `GLIBC` `memcpy` of header and payload; `LIMIT`; `AFTER` as `BATCHED` with the headers
/// written after the batch's fence.
fn build_group(v: usize, slots: &mut [u8], iov: &[IoVec<'_>], place: Place, id: u16, image: &[u8]) {
    let (head, start, end) = (place.header(), place.start(), place.end());
    let frames = slots.chunks_exact_mut(frame::SLOT).enumerate();
    let header = |i: usize| {
        move |hdr: &mut [u8], len: usize, sum: u32| {
            write_headers(hdr, len, sum, id.wrapping_add(i as u16))
        }
    };
    match v {
        TEMPORAL | NONTEMPORAL => {
            let mode = if v == TEMPORAL {
                Mode::Temporal
            } else {
                Mode::NonTemporal
            };
            for (i, slot) in frames {
                let f = &mut slot[start..end];
                csum_frame_from_iter(f, head, &mut Source::iovec(iov), mode, header(i));
            }
        }
        BATCHED => cachecopy::batch(Mode::NonTemporal, |b| {
            for (i, slot) in frames {
                b.csum_frame_from_iter(
                    &mut slot[start..end],
                    head,
                    &mut Source::iovec(iov),
                    header(i),
                );
            }
        }),
        GLIBC => {
            let at = place.offset();
            let base = place.first_line();
            for slot in slots.chunks_exact_mut(frame::SLOT) {
                frame::memcpy(&mut slot[start..at], &image[start - base..at - base]);
                let mut off = at;
                for seg in iov {
                    let n = seg.len().min(end - off);
                    frame::memcpy(&mut slot[off..off + n], &seg.as_slice()[..n]);
                    off += n;
                }
            }
        }
        LIMIT => {
            let base = place.first_line();
            for slot in slots.chunks_exact_mut(frame::SLOT) {
                frame::stream_lines(&mut slot[base..base + image.len()], image);
            }
            frame::fence();
        }
        _ => {
            // The payload gathered in one batch, the headers written after its fence (they need
            // the payload's sum), so a line the two share is written twice: streamed in part,
            // then read back for the header.
            let at = place.offset();
            let mut sums = [0u32; BATCH];
            cachecopy::batch(Mode::NonTemporal, |b| {
                for (slot, sum) in slots.chunks_exact_mut(frame::SLOT).zip(&mut sums) {
                    *sum = b
                        .csum_and_copy_from_iter(&mut slot[at..end], &mut Source::iovec(iov))
                        .1;
                }
            });
            for (i, slot) in slots.chunks_exact_mut(frame::SLOT).enumerate() {
                header(i)(&mut slot[start..at], end - at, sums[i]);
            }
        }
    }
}

/// What [`throughput`] measured: each variant's median frames per second and every round's.
struct Measured {
    rate: [f64; VARIANTS],
    rounds: [Vec<f64>; VARIANTS],
}

impl Measured {
    /// The median over rounds of `a`'s speed ÷ `b`'s, paired per round.
    fn ratio(&self, a: usize, b: usize) -> f64 {
        let mut r: Vec<f64> = self.rounds[a]
            .iter()
            .zip(&self.rounds[b])
            .map(|(x, y)| x / y)
            .collect();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    }
}

/// Frames per second of the variants of [`build_group`] at `place`, each round running them in
/// a fresh order. Each variant has a page-aligned ring of its own, as a program that picked one
/// way would: sharing one ring would make every variant pay for the cache state the previous
/// one left (streaming into lines a temporal round left cached costs more than either mode's
/// steady state, and a temporal round after a streaming one misses on every line).
fn throughput(iov: &[IoVec<'_>], ring_len: usize, place: Place) -> Measured {
    const PER_ROUND: usize = 16_384;
    const UNTOUCHED: u8 = 0xa5;
    let flat: Vec<u8> = iov
        .iter()
        .flat_map(|s| s.as_slice().iter().copied())
        .collect();
    let len = place.payload();
    // The image the limit streams: the whole frame as built, padded to whole lines.
    let mut hdr = vec![0u8; frame::HEADER];
    write_headers(
        &mut hdr[..place.header()],
        len,
        csum_partial(&flat[..len], 0),
        0,
    );
    let image = place.image(&hdr, &flat);
    let mut rings: Vec<(Buf, usize)> = (0..VARIANTS)
        .map(|_| (Buf::new(ring_len * frame::SLOT, UNTOUCHED), 0))
        .collect();
    let mut id = 0u16;
    let mut run = |v: usize| {
        let (ring, next) = &mut rings[v];
        let t = Instant::now();
        let mut done = 0;
        while done < PER_ROUND {
            let n = BATCH.min(ring_len - *next);
            let slots = &mut ring.as_mut_slice()[*next * frame::SLOT..(*next + n) * frame::SLOT];
            id = id.wrapping_add(n as u16);
            build_group(v, slots, iov, place, id, &image);
            black_box(slots);
            *next = (*next + n) % ring_len;
            done += n;
        }
        done as f64 / t.elapsed().as_secs_f64()
    };
    // Write every ring once in its own way, so every timed frame recycles memory of the same
    // age and state.
    for v in 0..VARIANTS {
        for _ in 0..ring_len.div_ceil(PER_ROUND) {
            run(v);
        }
    }
    let mut rounds: [Vec<f64>; VARIANTS] = Default::default();
    for round in 0..ROUNDS {
        // A fresh order every round, so no variant always follows the same neighbour.
        for v in cachecopy_arena::rotated_order(VARIANTS, round) {
            rounds[v].push(run(v));
        }
    }
    // Every variant built real frames: the payload intact, checksums that verify, nothing
    // outside the frame written (the limit streams whole lines, headroom and padding included).
    for (v, (ring, _)) in rings.iter().enumerate() {
        for s in [0, ring_len / 2, ring_len - 1] {
            let slot = &ring.as_slice()[s * frame::SLOT..(s + 1) * frame::SLOT];
            if v == LIMIT {
                let base = place.first_line();
                assert_eq!(&slot[base..base + image.len()], &image[..]);
            } else {
                verify_slot(slot, place, &flat, UNTOUCHED);
            }
        }
    }
    let rate = rounds.clone().map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    });
    Measured { rate, rounds }
}
