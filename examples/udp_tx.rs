//! UDP transmit without checksum offload: each datagram is gathered from the user's iovecs with
//! one fused checksum-and-copy into a frame with reserved headroom, then the UDP and IPv4 headers
//! are pushed in front (no payload copy) and every checksum is verified.
//!
//! Then prints frames per second for Temporal, per-call NonTemporal and batched NonTemporal
//! builds (64 frames per [`cachecopy::batch`], one fence per batch, the way `sendmmsg` users
//! build their frames), beside glibc `memcpy` of the same bytes and the limit (the frame's whole
//! lines streamed from a prebuilt image), measured in shuffled rounds of the same run. The
//! frames live in page-aligned transmit rings of 1536-byte slots that are reused slot by slot,
//! as a NIC or AF_XDP ring is: each new frame overwrites memory last written a whole ring ago.
//! Headers (Ethernet, IPv4, UDP: 42 bytes) sit at offset 0 and the payload at offset 42, as a
//! stack builds them; a second row puts the payload on a line boundary. The first rows build
//! the same frames into a ring of one batch that stays in the L2, in ns per frame: the CPU's
//! cost beside the memory's limit.
//!
//! `cargo run --release --example udp_tx`

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::{IoVec, Source};
use cachecopy::net::{
    csum_add, csum_and_copy_from_iter, csum_fold, csum_frame_from_iter, csum_partial,
    csum_tcpudp_magic, Frame,
};
use cachecopy::Mode;
use cachecopy_arena::{frame, Buf};

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
    // overwrites the slot written a whole ring ago. The frame is laid out as a stack builds it:
    // Ethernet + IPv4 + UDP headers (42 bytes) at offset 0, the payload at offset 42 behind
    // them; the second shape puts the payload on a line boundary (offset 64, headers at 22).
    // 8192 frames (12 MiB) are larger than any L2 and fit an L3; 65536 (96 MiB) are larger
    // than a 32 MiB L3 (the AMD VMs), and may fit the 260-300 MiB one the Intel VM reports.
    println!(
        "{} B frames (42 B headers + {payload} B payload from {} iovecs, fused checksum-and-copy) \
         into page-aligned rings of 1536 B slots, each variant on its own ring, medians of 21 \
         shuffled rounds; engine: {}",
        payload + frame::HEADER,
        iov.len(),
        cachecopy::engine()
    );
    println!(
        "  glibc: memcpy of the same bytes (no checksum); limit: the frame's whole lines streamed \
         from a prebuilt image (the memory's write limit)"
    );
    // The CPU's own limit beside the memory's: the same builds into a ring of one batch (96 KiB,
    // inside every L2 here), where no line has to come from memory. Streaming stores still go
    // to memory wherever the line is, so a streamed build there reads the larger of its CPU
    // cost and the write limit: at the limit, streaming sets the pace; above it, the CPU does.
    for at in [frame::HEADER, 64] {
        let [t, nt, bnt, glibc, limit, after] = throughput(&iov, payload, HOT, at);
        let ns = |rate: f64| 1e9 / rate;
        println!(
            "  ring {HOT:>5} (hot, {} KiB), payload at {at:>2}, ns per frame: Temporal {:.0} (the \
             CPU's cost, {:.2}x the limit's ns), NonTemporal {:.0}, batched NonTemporal {:.0} \
             ({:.2}x the limit's ns); glibc {:.0}, limit {:.0}; batched NonTemporal with the \
             headers written after the payload {:.0}",
            (HOT * frame::SLOT) >> 10,
            ns(t),
            limit / t,
            ns(nt),
            ns(bnt),
            limit / bnt,
            ns(glibc),
            ns(limit),
            ns(after)
        );
    }
    for ring_len in [8192usize, 65536] {
        for at in [frame::HEADER, 64] {
            let r = throughput(&iov, payload, ring_len, at);
            let [t, nt, bnt, glibc, limit, after] = r;
            println!(
                "  ring {ring_len:>5}, payload at {at:>2}: Temporal {t:>9.0} frames/s, NonTemporal \
                 {nt:>9.0} ({:.2}x), batched NonTemporal {bnt:>9.0} ({:.2}x Temporal, {:.2}x glibc, \
                 {:.2}x limit); glibc {glibc:>9.0}, limit {limit:>9.0}; batched NonTemporal with \
                 the headers written after the payload {after:>9.0} ({:.2}x Temporal)",
                nt / t,
                bnt / t,
                bnt / glibc,
                bnt / limit,
                after / t
            );
        }
    }
}

/// Frames per batch: one fence per this many frames.
const BATCH: usize = 64;
/// Frames in the hot ring: one batch (96 KiB), so it stays in the L2 of every CPU measured and
/// fences as often as the large rings.
const HOT: usize = BATCH;

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

/// Writes the Ethernet, IPv4 and UDP headers of a frame whose `len`-byte payload (partial sum
/// `payload_sum`) sits right behind `hdr` (42 bytes).
fn write_headers(hdr: &mut [u8], len: usize, payload_sum: u32, id: u16) {
    let udp_len = (len + 8) as u16;
    hdr[..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x20, 0x02, 0, 0, 0, 0, 0x10]);
    hdr[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let (ip, udp) = hdr[14..].split_at_mut(20);
    udp[0..2].copy_from_slice(&40000u16.to_be_bytes());
    udp[2..4].copy_from_slice(&9u16.to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    udp[6..8].copy_from_slice(&[0, 0]);
    let sum = csum_add(payload_sum, csum_partial(udp, 0));
    let check = match csum_tcpudp_magic(SRC, DST, udp_len, UDP, sum) {
        0 => 0xffff,
        c => c,
    };
    udp[6..8].copy_from_slice(&check.to_ne_bytes());
    ip.copy_from_slice(&[
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, UDP, 0, 0, SRC[0], SRC[1], SRC[2], SRC[3], DST[0],
        DST[1], DST[2], DST[3],
    ]);
    ip[2..4].copy_from_slice(&(udp_len + 20).to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    let check = csum_fold(csum_partial(ip, 0));
    ip[10..12].copy_from_slice(&check.to_ne_bytes());
}

/// The frame in `slot` (payload at `at`) carries `payload` and both checksums verify.
fn verify_slot(slot: &[u8], at: usize, payload: &[u8]) {
    let ip = &slot[at - 28..at - 8];
    assert_eq!(csum_fold(csum_partial(ip, 0)), 0, "IPv4 header checksum");
    let udp = &slot[at - 8..at + payload.len()];
    let udp_len = udp.len() as u16;
    assert_eq!(
        csum_tcpudp_magic(SRC, DST, udp_len, UDP, csum_partial(udp, 0)),
        0,
        "UDP checksum"
    );
    assert_eq!(&slot[at..at + payload.len()], payload);
}

/// One group of frames (at most [`BATCH`] slots) built by variant `v` with the payload at `at`:
/// 0 Temporal, 1 NonTemporal per call, 2 NonTemporal in one batch (each through
/// `csum_frame_from_iter`: headers from the payload's sum, the line they share with the payload
/// written once), 3 glibc `memcpy` of headers and payload, 4 the limit, 5 as 2 with the headers
/// written after the batch's fence (the way before `csum_frame_from_iter`).
fn build_group(v: usize, slots: &mut [u8], iov: &[IoVec<'_>], at: usize, id: u16, image: &[u8]) {
    let len: usize = iov.iter().map(|s| s.len()).sum();
    // Each frame: the payload gathered and summed, then the headers written from its sum,
    // `csum_frame_from_iter` writing the line the two share once.
    let frames = slots.chunks_exact_mut(frame::SLOT).enumerate();
    let header = |i: usize| {
        move |hdr: &mut [u8], len: usize, sum: u32| {
            write_headers(hdr, len, sum, id.wrapping_add(i as u16))
        }
    };
    match v {
        0 | 1 => {
            let mode = [Mode::Temporal, Mode::NonTemporal][v];
            for (i, slot) in frames {
                let f = &mut slot[at - frame::HEADER..at + len];
                csum_frame_from_iter(f, frame::HEADER, &mut Source::iovec(iov), mode, header(i));
            }
        }
        2 => cachecopy::batch(Mode::NonTemporal, |b| {
            for (i, slot) in frames {
                let f = &mut slot[at - frame::HEADER..at + len];
                b.csum_frame_from_iter(f, frame::HEADER, &mut Source::iovec(iov), header(i));
            }
        }),
        3 => {
            for slot in slots.chunks_exact_mut(frame::SLOT) {
                frame::memcpy(
                    &mut slot[at - frame::HEADER..at],
                    &image[at - frame::HEADER..at],
                );
                let mut off = at;
                for seg in iov {
                    frame::memcpy(&mut slot[off..off + seg.len()], seg.as_slice());
                    off += seg.len();
                }
            }
        }
        4 => {
            for slot in slots.chunks_exact_mut(frame::SLOT) {
                frame::stream_lines(&mut slot[..image.len()], image);
            }
            frame::fence();
        }
        _ => {
            // The way before `csum_frame_from_iter`: the payload gathered in one batch, the
            // headers written after its fence (they need the payload's sum), so the line the
            // two share is written twice: streamed in part, then read back for the header.
            let mut sums = [0u32; BATCH];
            cachecopy::batch(Mode::NonTemporal, |b| {
                for (slot, sum) in slots.chunks_exact_mut(frame::SLOT).zip(&mut sums) {
                    let p = &mut slot[at..at + len];
                    *sum = b.csum_and_copy_from_iter(p, &mut Source::iovec(iov)).1;
                }
            });
            for (i, slot) in slots.chunks_exact_mut(frame::SLOT).enumerate() {
                header(i)(&mut slot[at - frame::HEADER..at], len, sums[i]);
            }
        }
    }
}

/// Median frames per second of the six variants of [`build_group`], each round running the six
/// in a fresh order. Each variant has a page-aligned ring of its
/// own, as a program that picked one way would: sharing one ring would make every variant pay
/// for the cache state the previous one left (streaming into lines a temporal round left cached
/// costs more than either mode's steady state, and a temporal round after a streaming one
/// misses on every line).
fn throughput(iov: &[IoVec<'_>], payload: usize, ring_len: usize, at: usize) -> [f64; 6] {
    const PER_ROUND: usize = 16_384;
    const N: usize = 6;
    let flat: Vec<u8> = iov
        .iter()
        .flat_map(|s| s.as_slice().iter().copied())
        .collect();
    // The image the limit streams: the whole frame as built, padded to whole lines.
    let mut image = vec![0u8; (at + payload).div_ceil(64) * 64];
    image[at..at + payload].copy_from_slice(&flat);
    write_headers(
        &mut image[at - frame::HEADER..at],
        payload,
        csum_partial(&flat, 0),
        0,
    );
    let mut rings: Vec<(Buf, usize)> = (0..N)
        .map(|_| (Buf::new(ring_len * frame::SLOT, 0), 0))
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
            build_group(v, slots, iov, at, id, &image);
            black_box(slots);
            *next = (*next + n) % ring_len;
            done += n;
        }
        done as f64 / t.elapsed().as_secs_f64()
    };
    // Write every ring once in its own way, so every timed frame recycles memory of the same
    // age and state.
    for v in 0..N {
        for _ in 0..ring_len.div_ceil(PER_ROUND) {
            run(v);
        }
    }
    let mut rates: [Vec<f64>; N] = Default::default();
    for round in 0..21u64 {
        // A fresh order every round, so no variant always follows the same neighbour.
        let mut order: Vec<usize> = (0..N).collect();
        order.rotate_left((round % N as u64) as usize);
        if round % 2 == 1 {
            order.reverse();
        }
        for v in order {
            rates[v].push(run(v));
        }
    }
    // Every variant built real frames: both checksums verify, the payload is intact.
    for (ring, _) in &rings {
        for s in [0, ring_len / 2, ring_len - 1] {
            verify_slot(
                &ring.as_slice()[s * frame::SLOT..(s + 1) * frame::SLOT],
                at,
                &flat,
            );
        }
    }
    rates.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    })
}
