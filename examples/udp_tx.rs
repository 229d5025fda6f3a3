//! UDP transmit without checksum offload: each datagram is gathered from the user's iovecs with
//! one fused checksum-and-copy into a frame with reserved headroom, then the UDP and IPv4 headers
//! are pushed in front (no payload copy) and every checksum is verified.
//!
//! Prints frames per second for Temporal, per-call NonTemporal and batched NonTemporal copies
//! (64 frames per [`cachecopy::batch`], one fence per batch, the way `sendmmsg` users build
//! their frames), measured in shuffled rounds of the same run. The frames live in a transmit
//! ring that is reused slot by slot, as a NIC or AF_XDP ring is: each new frame overwrites memory
//! last written a whole ring ago.
//!
//! `cargo run --release --example udp_tx`

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::{IoVec, Source};
use cachecopy::net::{
    csum_add, csum_and_copy_from_iter, csum_fold, csum_partial, csum_tcpudp_magic, Frame,
};
use cachecopy::Mode;

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

    // Transmit rings: each new frame overwrites the slot written a whole ring ago. 8192 frames
    // (12 MiB) are larger than any L2 and fit an L3; 65536 (96 MiB) are larger than a 32 MiB L3
    // (AMD Zen3 VM), and fit the 260 MiB one the Intel Xeon VM reports.
    println!(
        "{} B datagrams from {} iovecs, fused checksum-and-copy into a reused ring, medians of 21 \
         shuffled rounds:",
        payload + 28,
        iov.len()
    );
    for ring_len in [8192usize, 65536] {
        let [t, nt, bnt] = throughput(&iov, payload, ring_len);
        println!(
            "  ring {ring_len:>5}: Temporal {t:>9.0} frames/s, NonTemporal {nt:>9.0} ({:.3}x), \
             batched NonTemporal {bnt:>9.0} ({:.3}x)",
            nt / t,
            bnt / t
        );
    }
}

/// Frames per batch: one fence per this many frames.
const BATCH: usize = 64;

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

/// Median frames per second of (Temporal, NonTemporal, batched NonTemporal), each round running
/// the three in a fresh order. Each variant has a ring of its own, as a program that picked one
/// mode would: sharing one ring would make every variant pay for the cache state the previous
/// one left (streaming into lines a temporal round left cached costs more than either mode's
/// steady state, and a temporal round after a streaming one misses on every line).
fn throughput(iov: &[IoVec<'_>], payload: usize, ring_len: usize) -> [f64; 3] {
    const PER_ROUND: usize = 16_384;
    let mut rings: [(Vec<Frame>, usize); 3] = core::array::from_fn(|_| {
        let ring = (0..ring_len)
            .map(|_| Frame::with_room(HEADROOM, payload, 0))
            .collect();
        (ring, 0)
    });
    let mut id = 0u16;
    let mut run = |variant: usize| {
        let (ring, next) = &mut rings[variant];
        let t = Instant::now();
        let mut done = 0;
        while done < PER_ROUND {
            let n = BATCH.min(ring_len - *next);
            let slots = &mut ring[*next..*next + n];
            let mode = [Mode::Temporal, Mode::NonTemporal, Mode::NonTemporal][variant];
            id = id.wrapping_add(n as u16);
            fill_group(slots, iov, id, mode, variant == 2);
            for f in slots.iter_mut() {
                black_box(&f[..]);
                f.pull(28).expect("headers pushed"); // the slot is free again
            }
            *next = (*next + n) % ring_len;
            done += n;
        }
        done as f64 / t.elapsed().as_secs_f64()
    };
    // Write every ring once in its own mode, so every timed frame recycles memory of the same
    // age and state.
    for v in 0..3 {
        for _ in 0..ring_len.div_ceil(PER_ROUND) {
            run(v);
        }
    }
    let mut rates: [Vec<f64>; 3] = Default::default();
    for round in 0..21u64 {
        // A fresh order every round, so no variant always follows the same neighbour.
        let mut order = [0usize, 1, 2];
        order.rotate_left((round % 3) as usize);
        if round % 2 == 1 {
            order.reverse();
        }
        for v in order {
            rates[v].push(run(v));
        }
    }
    rates.map(|mut v| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    })
}
