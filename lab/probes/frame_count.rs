//! One checksummed frame's cost on the CPU: builds `udp_tx`'s frames (a 1472-byte payload
//! gathered from 1200-, 13-, 1- and 258-byte iovecs, summed on the way, the header written from
//! the sum) at one payload offset, `ROUNDS` batches of 64 through `Batch::csum_frame_from_iter`
//! into a ring that by default is one batch long and stays in the L2, checks every frame, and
//! prints the wall time and this thread's CPU time per frame. The CPU time is the figure to read
//! on a shared machine: the wall time also counts the time other processes held the core.
//!
//! Its uses (lab/findings/checksums.md, "Zen 2: where the frame's time goes"):
//! - Instructions per frame: run it under `valgrind --tool=callgrind` at two round counts and
//!   divide the difference of the totals by the difference of the frames.
//! - Which source addresses cost: `SRC_AT` copies the four iovecs to that offset of four pages
//!   of their own (by default, or with `-`, they stay where the allocator put them).
//! - Which ring addresses cost: `RING_AT` starts the ring that many bytes (a multiple of 64)
//!   past a page boundary.
//! - A cold ring: `SLOTS` slots (a multiple of 64; 8192 is `udp_tx`'s 12 MiB ring), filled batch
//!   after batch, each slot last written a ring ago.
//!
//! `cargo run --release -p cachecopy-probes --example frame_count -- OFFSET ROUNDS [nt|t]
//! [SRC_AT [RING_AT [SLOTS]]]` (`nt`, the default: batched `NonTemporal`; `t`: `Temporal`).

use std::hint::black_box;
use std::time::Instant;

use cachecopy::iter::{IoVec, Source};
use cachecopy::Mode;
use cachecopy_arena::frame::{self, Place};
use cachecopy_arena::Buf;

/// The iovecs' lengths: `udp_tx`'s message.
const PIECES: [usize; 4] = [1200, 13, 1, 258];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "frame_count OFFSET ROUNDS [nt|t] [SRC_AT [RING_AT [SLOTS]]]";
    let num = |i: usize| -> Option<usize> {
        args.get(i)
            .filter(|a| *a != "-")
            .map(|a| a.parse().expect(usage))
    };
    let (at, rounds) = (num(0).expect(usage), num(1).expect(usage));
    let mode = match args.get(2).map(String::as_str) {
        None | Some("nt") => Mode::NonTemporal,
        Some("t") => Mode::Temporal,
        Some(_) => panic!("{usage}"),
    };
    let src_at = num(3);
    let ring_at = num(4).unwrap_or(0);
    let slots = num(5).unwrap_or(frame::BATCH);
    assert!(
        slots > 0 && slots % frame::BATCH == 0,
        "SLOTS {slots}: a multiple of {}",
        frame::BATCH
    );
    assert!(
        rounds >= slots / frame::BATCH,
        "ROUNDS {rounds}: at least one per batch of the ring, so that every slot is built"
    );
    assert!(
        ring_at % 64 == 0 && ring_at < 4096,
        "RING_AT {ring_at}: a multiple of 64 below 4096"
    );

    let owned: Vec<Vec<u8>> = PIECES
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n).map(|i| (i * 31 + k * 7 + 1) as u8).collect())
        .collect();
    let mut pages = Buf::new(PIECES.len() * 4096, 0);
    let iov: Vec<IoVec<'_>> = match src_at {
        None => owned.iter().map(|v| IoVec::new(v)).collect(),
        Some(m) => {
            assert!(
                m + PIECES[0] <= 4096,
                "SRC_AT {m}: the pieces must fit a page"
            );
            let base = pages.as_mut_slice();
            for (k, v) in owned.iter().enumerate() {
                base[4096 * k + m..][..v.len()].copy_from_slice(v);
            }
            let base = pages.as_slice();
            owned
                .iter()
                .enumerate()
                .map(|(k, v)| IoVec::new(&base[4096 * k + m..][..v.len()]))
                .collect()
        }
    };
    let flat: Vec<u8> = owned.concat();

    let place = Place::at(at);
    let (head, start, end) = (place.header(), place.start(), place.end());
    let mut ring_buf = Buf::new(slots * frame::SLOT + 4096, 0xa5);
    let ring = &mut ring_buf.as_mut_slice()[ring_at..][..slots * frame::SLOT];
    let mut total = 0u32;
    let (t, cpu) = (Instant::now(), thread_cpu_ns());
    for round in 0..rounds {
        let group = round % (slots / frame::BATCH) * frame::BATCH * frame::SLOT;
        let group = &mut ring[group..][..frame::BATCH * frame::SLOT];
        cachecopy::batch(mode, |b| {
            for slot in group.chunks_exact_mut(frame::SLOT) {
                let (_, s) = b.csum_frame_from_iter(
                    &mut slot[start..end],
                    head,
                    &mut Source::iovec(&iov),
                    write_header,
                );
                total = total.wrapping_add(s);
            }
        });
        black_box(&mut *ring);
    }
    let frames = (rounds * frame::BATCH) as f64;
    let cpu = (thread_cpu_ns() - cpu) as f64 / frames;
    let wall = t.elapsed().as_nanos() as f64 / frames;
    // Every frame holds the payload and the header written from its sum.
    let len = place.payload();
    for slot in ring.chunks_exact(frame::SLOT) {
        assert_eq!(&slot[place.offset()..end], &flat[..len]);
        let mut want = vec![0u8; head];
        write_header(
            &mut want,
            len,
            cachecopy::net::csum_partial(&flat[..len], 0),
        );
        assert_eq!(&slot[start..place.offset()], &want[..]);
    }
    println!("{at}: {wall:.1} ns per frame, {cpu:.1} ns on the CPU ({total})");
}

/// A header from the payload's length and sum, written as `udp_tx` writes its 42 bytes: 8-byte
/// stores of a value in registers, the last one overlapping the one before when the length is
/// not a multiple of 8.
fn write_header(hdr: &mut [u8], len: usize, sum: u32) {
    let w = ((len as u64) << 16 | sum as u64).to_le_bytes();
    let mut i = 0;
    while i + 8 <= hdr.len() {
        hdr[i..i + 8].copy_from_slice(&w);
        i += 8;
    }
    if i < hdr.len() {
        let from = hdr.len().max(8) - 8;
        let n = hdr.len() - from;
        hdr[from..].copy_from_slice(&w[..n]);
    }
}

/// This thread's CPU time in nanoseconds: the time it ran, not the time other processes held
/// the core.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
