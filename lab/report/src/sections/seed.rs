//! Section 3: the MSG_NTCOPY experiment (seeds/004, `unix-nt-bench`) in user space. A producer
//! thread copies 1 MiB objects chunk by chunk into a shared ring; a consumer thread on another
//! CPU reads every chunk. Temporal versus non-temporal producer copies, interleaved run by run.

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use cachecopy::Mode;
use serde::Serialize;

use crate::machine::Machine;
use crate::measure::Buf;
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, range, ratio, size};

/// The object the producer copies over and over, chunk by chunk: 1 MiB, as in the seed.
pub const OBJECT: usize = 1 << 20;

/// The seed's result for the closest setup (AMD EPYC 7662, 1 MiB objects): its `MSG_NTCOPY`
/// throughput over the plain copy's, with 512 KiB buffers on CPUs sharing only the L3 and with
/// 128 KiB buffers on CPUs sharing the L2 (the thread's own figures, below).
pub fn seed_ratio(chunk: usize) -> f64 {
    if chunk >= 512 << 10 {
        112_935.0 / 78_928.0
    } else {
        88_768.0 / 67_377.0
    }
}

/// One setup's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Bytes of the ring.
    pub ring: usize,
    /// Bytes per copy into the ring.
    pub chunk: usize,
    /// Gb/s (10^9 bits per second, the seed's unit).
    pub temporal_gbps: Summary,
    /// Gb/s with NonTemporal producer copies.
    pub nontemporal_gbps: Summary,
    /// NonTemporal ÷ Temporal, per round.
    pub ratio: Summary,
    /// The seed's NonTemporal ÷ Temporal for the closest setup ([`seed_ratio`]).
    pub seed_ratio: f64,
}

/// Section 3's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Seed {
    /// The CPUs the producer and consumer were pinned to, when pinning worked.
    pub cpus: Option<(usize, usize)>,
    /// Bytes through the ring per run.
    pub bytes_per_run: usize,
    /// Every (ring, chunk) setup.
    pub rows: Vec<Row>,
}

/// A raw view of the ring both threads use; each chunk is owned by one side at a time.
#[derive(Clone, Copy)]
struct RingPtr(*mut u8);
// SAFETY: the pointer is only dereferenced under the head/tail protocol in `run`, which gives
// each chunk to exactly one thread at a time with Release/Acquire hand-offs.
unsafe impl Send for RingPtr {}
// SAFETY: as above.
unsafe impl Sync for RingPtr {}

/// Measures and prints section 3.
pub fn section(s: &mut Session) -> Seed {
    s.start("3. seed experiment");
    let p = &s.plan;
    let seed = run(&p.rings, &p.chunks, p.seed_bytes, p.seed_rounds, s.ticker());
    let mut text = print(&seed);
    text.insert_str(text.len() - 1, &why(&seed, s.machine));
    s.print(&text);
    seed
}

/// Why streaming should win or lose here, per ring: a temporal chunk reaches the consumer
/// through the cache level both share, if the ring fits it; a streamed chunk always goes
/// through memory. So streaming wins when no shared level holds the ring (it saves the
/// write-back of lines the consumer will re-fetch from memory anyway, and the pollution), and
/// loses when one does.
fn why(seed: &Seed, m: &Machine) -> String {
    let shared_l3 = m.l3.filter(|_| m.l3_shared_by.is_some_and(|n| n >= 2));
    let mut s = String::new();
    for ring in text::distinct(seed.rows.iter().map(|r| r.ring)) {
        let line = match shared_l3 {
            Some(l3) if ring <= l3 => format!(
                "   ring {}: fits the L3 ({}) reported shared by both vCPUs: where it really holds \
                 the ring, temporal chunks reach the consumer through it and streamed ones go \
                 through memory, and streaming loses (a VM's L3 may be shared with other tenants \
                 too)\n",
                size(ring),
                size(l3)
            ),
            Some(l3) => format!(
                "   ring {}: larger than the shared L3 ({}): every chunk comes back from memory \
                 either way, and streaming saves the write-back and the pollution: expect it to \
                 win\n",
                size(ring),
                size(l3)
            ),
            None => format!(
                "   ring {}: no cache level reported shared by both vCPUs: chunks come back from \
                 memory either way: expect streaming to win\n",
                size(ring)
            ),
        };
        s.push_str(&line);
    }
    s
}

/// Runs every (ring, chunk) setup, `rounds` times per mode, alternating the modes.
fn run(
    rings: &[usize],
    chunks: &[usize],
    bytes_per_run: usize,
    rounds: usize,
    mut tick: impl FnMut(),
) -> Seed {
    let cpus = two_cpus();
    let src = Buf::new(OBJECT, 0);
    let mut src = src;
    for (i, b) in src.as_mut_slice().iter_mut().enumerate() {
        *b = (i * 7 + i / 4096) as u8;
    }
    let expected: u64 = checksum(src.as_slice());
    let mut rows = Vec::new();
    for &ring_len in rings {
        let mut ring = Buf::new(ring_len, 0);
        for &chunk in chunks {
            let mut t = Vec::new();
            let mut nt = Vec::new();
            for round in 0..rounds {
                // Alternate which mode goes first each round.
                let order = if round % 2 == 0 {
                    [Mode::Temporal, Mode::NonTemporal]
                } else {
                    [Mode::NonTemporal, Mode::Temporal]
                };
                for mode in order {
                    let (secs, sum) =
                        once(&mut ring, src.as_slice(), chunk, bytes_per_run, mode, cpus);
                    let objects = (bytes_per_run / OBJECT) as u64;
                    assert_eq!(
                        sum,
                        expected.wrapping_mul(objects),
                        "consumer read wrong bytes ({mode:?}, ring {ring_len}, chunk {chunk})"
                    );
                    let gbps = bytes_per_run as f64 * 8.0 / secs / 1e9;
                    if mode == Mode::Temporal {
                        t.push(gbps)
                    } else {
                        nt.push(gbps)
                    }
                }
                tick();
            }
            rows.push(Row {
                ring: ring_len,
                chunk,
                temporal_gbps: Summary::of(&t).expect("rounds ≥ 1"),
                nontemporal_gbps: Summary::of(&nt).expect("rounds ≥ 1"),
                ratio: paired_ratio(&nt, &t).expect("rounds ≥ 1"),
                seed_ratio: seed_ratio(chunk),
            });
        }
    }
    Seed {
        cpus,
        bytes_per_run,
        rows,
    }
}

/// One run: returns (seconds, the consumer's checksum of everything it read).
fn once(
    ring: &mut Buf,
    object: &[u8],
    chunk: usize,
    bytes: usize,
    mode: Mode,
    cpus: Option<(usize, usize)>,
) -> (f64, u64) {
    let chunk = chunk.min(OBJECT).min(ring.len());
    let slots = ring.len() / chunk;
    let total = bytes / chunk;
    let per_object = OBJECT / chunk;
    let base = RingPtr(ring.as_mut_slice().as_mut_ptr());
    let head = AtomicUsize::new(0); // chunks produced
    let tail = AtomicUsize::new(0); // chunks consumed
    let start = Barrier::new(3);
    let (head, tail, start) = (&head, &tail, &start);
    std::thread::scope(|s| {
        s.spawn(move || {
            if let Some((cpu, _)) = cpus {
                pin(cpu);
            }
            let base = base;
            start.wait();
            for k in 0..total {
                while k - tail.load(Ordering::Acquire) >= slots {
                    std::hint::spin_loop();
                }
                let part = &object[(k % per_object) * chunk..][..chunk];
                // SAFETY: slot `k % slots` lies inside the ring (slots * chunk ≤ len); the
                // consumer finished it (tail > k - slots, Acquire) and does not touch it until
                // `head` passes k (Release below); `part` is a separate buffer.
                unsafe {
                    cachecopy::copy_raw(base.0.add((k % slots) * chunk), part.as_ptr(), chunk, mode)
                };
                head.store(k + 1, Ordering::Release);
            }
        });
        let consumer = s.spawn(move || {
            if let Some((_, cpu)) = cpus {
                pin(cpu);
            }
            let base = base;
            start.wait();
            let mut sum = 0u64;
            for k in 0..total {
                while head.load(Ordering::Acquire) <= k {
                    std::hint::spin_loop();
                }
                // SAFETY: the producer published chunk k (Acquire above) and will not write
                // its slot again until `tail` passes k.
                let data =
                    unsafe { std::slice::from_raw_parts(base.0.add((k % slots) * chunk), chunk) };
                sum = sum.wrapping_add(checksum(data));
                tail.store(k + 1, Ordering::Release);
            }
            sum
        });
        start.wait();
        let t0 = Instant::now();
        let sum = consumer.join().expect("consumer thread");
        (t0.elapsed().as_secs_f64(), black_box(sum))
    })
}

/// Reads every byte: a wrapping sum of the native-endian words (vectorizes to one add per
/// 32 bytes, far below the copy's cost).
fn checksum(data: &[u8]) -> u64 {
    data.chunks_exact(8)
        .map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")))
        .fold(0u64, u64::wrapping_add)
}

/// The first two CPUs this process may run on, when there are two.
fn two_cpus() -> Option<(usize, usize)> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the call writes at most its size.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        set
    };
    let mut cpus = (0..libc::CPU_SETSIZE as usize).filter(|&c| {
        // SAFETY: `c` is below CPU_SETSIZE.
        unsafe { libc::CPU_ISSET(c, &set) }
    });
    Some((cpus.next()?, cpus.next()?))
}

/// Pins the calling thread to `cpu` (best effort: an error leaves it unpinned).
fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; `cpu` < CPU_SETSIZE (from `two_cpus`);
    // pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Section 3's text: a row per setup, beside the seed's ratio.
fn print(seed: &Seed) -> String {
    let mut s = format!(
        "3. The MSG_NTCOPY experiment (seeds/004 unix-nt-bench) in user space: a producer copies \
         1 MiB objects chunk by chunk into a ring, a consumer reads every chunk; {} per run, \
         Temporal and NonTemporal runs alternating\n",
        size(seed.bytes_per_run)
    );
    match seed.cpus {
        Some((a, b)) => {
            let _ = writeln!(
                s,
                "   producer pinned to CPU {a}, consumer to CPU {b} (on a VM the host decides \
                 which cores and caches these vCPUs share)"
            );
        }
        None => s.push_str("   only one CPU available: threads unpinned, figures say little\n"),
    }
    let header = [
        "ring",
        "chunk",
        "Temporal Gb/s",
        "NonTemporal Gb/s",
        "NT/T",
        "seed NT/T",
    ];
    let rows: Vec<Vec<String>> = seed
        .rows
        .iter()
        .map(|r| {
            vec![
                size(r.ring),
                size(r.chunk),
                range(&r.temporal_gbps),
                range(&r.nontemporal_gbps),
                ratio(&r.ratio),
                format!("{:.2}x", r.seed_ratio),
            ]
        })
        .collect();
    s.push_str(&text::grid(&header, &rows));
    s.push_str(
        "   seed: AMD EPYC 7662 (Zen2), kernel copies into skbs, 1.43x with 512 KiB buffers on \
         cores sharing only L3, 1.32x with 128 KiB on cores sharing L2\n\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_delivers_every_byte_in_both_modes() {
        let s = run(&[256 << 10], &[128 << 10, 64 << 10], 4 * OBJECT, 1, || {});
        assert_eq!(s.rows.len(), 2);
        for r in &s.rows {
            assert!(r.temporal_gbps.median > 0.0 && r.nontemporal_gbps.median > 0.0);
        }
        let t = print(&s);
        assert!(t.starts_with("3. The MSG_NTCOPY experiment"), "{t}");
        assert!(t.contains("256 KiB  128 KiB"), "{t}");
    }

    #[test]
    fn seed_ratios() {
        assert!((seed_ratio(512 << 10) - 1.43).abs() < 0.01);
        assert!((seed_ratio(128 << 10) - 1.32).abs() < 0.01);
    }
}
