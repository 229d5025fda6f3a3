//! The AF_XDP transmit path of `lab/probes/xdp_tx` (the same module, not a copy).
//!
//! Unit tests (no root, no kernel): the rings, the chunk pool and the TX path run on heap rings
//! with this file playing the kernel, for back-pressure, lagging completions, frames too large
//! for a chunk or the MTU, and bad completions. End-to-end tests (`e2e_*`) create namespaces and
//! an AF_XDP socket; without root, namespaces or AF_XDP they print `SKIPPED: <reason>` and pass.
#![cfg(target_os = "linux")]

#[allow(dead_code)]
#[path = "../xdp_tx/xdp/mod.rs"]
mod xdp;

use std::collections::{BTreeSet, VecDeque};
use std::io;
use std::ops::Range;
use std::sync::Mutex;

use cachecopy::iter::{IoVec, Source};
use cachecopy::Mode;

use xdp::chunks::{ChunkError, ChunkPool, ChunkState};
use xdp::frame::{self, Flow, FrameError, Mismatch, Payloads};
use xdp::ring::{heap_ring, Consumer, Desc, Producer};
use xdp::tx::{Kick, Outgoing, TxError, TxPath, Umem};

const CHUNK: u32 = 2048;

fn flow(mtu: usize) -> Flow {
    Flow {
        src_mac: [2, 0xcc, 0, 0, 0, 1],
        dst_mac: [2, 0xcc, 0, 0, 0, 2],
        src_ip: [169, 254, 77, 1],
        dst_ip: [169, 254, 77, 2],
        sport: 40000,
        dport: 40100,
        mtu,
    }
}

/// `sendto` as scripted: each kick pops an errno (0 = success), then succeeds.
#[derive(Default)]
struct FakeKick {
    script: VecDeque<i32>,
    calls: usize,
}

impl Kick for FakeKick {
    fn kick(&mut self) -> io::Result<()> {
        self.calls += 1;
        match self.script.pop_front() {
            Some(e) if e != 0 => Err(io::Error::from_raw_os_error(e)),
            _ => Ok(()),
        }
    }
}

/// The kernel's ends of the two rings.
struct FakeKernel {
    tx: Consumer<Desc>,
    comp: Producer<u64>,
}

impl FakeKernel {
    /// Takes up to `max` descriptors off the TX ring.
    fn take(&mut self, max: u32) -> Vec<Desc> {
        let (first, n) = self.tx.peek(max);
        let v = (0..n)
            .map(|i| self.tx.read(first.wrapping_add(i)))
            .collect();
        self.tx.release(n);
        v
    }

    /// Posts completions.
    fn complete(&mut self, addrs: &[u64]) {
        let first = self
            .comp
            .reserve(addrs.len() as u32)
            .expect("completion ring has room");
        for (i, &a) in addrs.iter().enumerate() {
            self.comp.write(first.wrapping_add(i as u32), a);
        }
        self.comp.submit();
    }
}

/// A TX path on heap rings (indices starting just below 2^32, so they wrap during the test).
fn rig(tx_ring: u32, comp_ring: u32, chunks: u32) -> (TxPath<FakeKick>, FakeKernel) {
    let start = u32::MAX - 5;
    let (tx_p, tx_c) = heap_ring::<Desc>(tx_ring, start);
    let (comp_p, comp_c) = heap_ring::<u64>(comp_ring, start);
    let path = TxPath::new(
        FakeKick::default(),
        tx_p,
        comp_c,
        Umem::heap((chunks * CHUNK) as usize),
        CHUNK,
    );
    (
        path,
        FakeKernel {
            tx: tx_c,
            comp: comp_p,
        },
    )
}

/// Runs `f` over datagrams `seqs` of `p`, each gathered from its four pieces.
fn with_frames<R>(p: &Payloads, seqs: Range<u64>, f: impl FnOnce(&mut [Outgoing<'_>]) -> R) -> R {
    let heads: Vec<[u8; 8]> = seqs.clone().map(Payloads::head).collect();
    let pieces: Vec<[IoVec<'_>; 4]> = seqs
        .clone()
        .zip(&heads)
        .map(|(q, h)| p.pieces(q, h))
        .collect();
    let mut out: Vec<Outgoing<'_>> = seqs
        .zip(&pieces)
        .map(|(seq, pc)| Outgoing {
            seq,
            payload: Source::iovec(pc),
            corrupt_udp_checksum: false,
        })
        .collect();
    f(&mut out)
}

/// The frame a descriptor names parses, both checksums verify, and it carries datagram `seq`.
fn check_frame(path: &TxPath<FakeKick>, d: &Desc, p: &Payloads, seq: u64) {
    let bytes = path.umem().read(d.addr, d.len as usize);
    let f = frame::parse(&bytes).unwrap_or_else(|| panic!("frame of {seq} does not parse"));
    assert!(f.ip_checksum_ok, "IPv4 checksum of {seq}");
    assert!(f.udp_checksum_ok, "UDP checksum of {seq}");
    assert_eq!(f.dst_mac, flow(1500).dst_mac);
    assert_eq!(p.verify(f.payload, u64::MAX), Ok(seq));
}

// ------------------------------------------------------------------ rings and the chunk pool

#[test]
fn ring_wraps_and_keeps_order() {
    let (mut p, mut c) = heap_ring::<u64>(8, u32::MAX - 3);
    for round in 0..10u64 {
        let n = (round % 8 + 1) as u32;
        let first = p.reserve(n).expect("room");
        for i in 0..n {
            p.write(first.wrapping_add(i), round * 100 + i as u64);
        }
        // Not visible before submit.
        assert_eq!(c.peek(u32::MAX).1, 0);
        p.submit();
        let (first, got) = c.peek(u32::MAX);
        assert_eq!(got, n);
        for i in 0..n {
            assert_eq!(c.read(first.wrapping_add(i)), round * 100 + i as u64);
        }
        c.release(n);
        assert_eq!(p.free(8), 8, "every slot is free again");
    }
}

#[test]
fn ring_full_refuses_reservation_until_consumer_releases() {
    let (mut p, mut c) = heap_ring::<u64>(4, 0);
    let first = p.reserve(3).unwrap();
    for i in 0..3 {
        p.write(first + i, i as u64);
    }
    p.submit();
    assert_eq!(p.reserve(2), None, "only one slot is free");
    assert!(p.reserve(1).is_some());
    p.submit();
    assert_eq!(p.reserve(1), None);
    let (_, n) = c.peek(2);
    assert_eq!(n, 2);
    c.release(2);
    assert_eq!(p.free(1), 2);
}

#[test]
#[should_panic(expected = "is not reserved")]
fn writing_an_unreserved_slot_panics() {
    let (mut p, _c) = heap_ring::<u64>(4, 0);
    p.write(0, 1);
}

#[test]
fn chunk_pool_hands_out_each_chunk_once_until_completed() {
    let mut pool = ChunkPool::new(4, CHUNK);
    let got: BTreeSet<u64> = (0..4).map(|_| pool.alloc().unwrap()).collect();
    assert_eq!(got, BTreeSet::from([0, 2048, 4096, 6144]));
    assert_eq!(pool.alloc(), None, "every chunk is taken");
    for &a in &got {
        pool.submitted(a).unwrap();
    }
    assert_eq!(pool.in_flight(), 4);
    assert_eq!(pool.alloc(), None, "in flight chunks are not free");
    pool.complete(4096).unwrap();
    assert_eq!(
        pool.alloc(),
        Some(4096),
        "only the completed chunk comes back"
    );
    assert_eq!(pool.alloc(), None);
    pool.give_back(4096).unwrap();
    assert_eq!(pool.state(4096), Ok(ChunkState::Free));
}

#[test]
fn chunk_pool_refuses_impossible_transitions() {
    let mut pool = ChunkPool::new(4, CHUNK);
    assert_eq!(pool.complete(100), Err(ChunkError::NotAChunk { addr: 100 }));
    assert_eq!(
        pool.complete(4 * 2048),
        Err(ChunkError::NotAChunk { addr: 8192 })
    );
    assert_eq!(
        pool.complete(0),
        Err(ChunkError::BadTransition {
            addr: 0,
            state: ChunkState::Free,
            to: ChunkState::Free
        }),
        "a completion for a chunk never sent"
    );
    let a = pool.alloc().unwrap();
    assert!(pool.complete(a).is_err(), "built but not submitted");
    pool.submitted(a).unwrap();
    pool.complete(a).unwrap();
    assert!(pool.complete(a).is_err(), "a second completion");
    assert_eq!(pool.available(), 4);
}

// ------------------------------------------------------------------ frames

#[test]
fn frames_built_in_every_mode_carry_every_byte_and_valid_checksums() {
    let p = Payloads::new(1472, 373);
    for mode in Mode::ALL {
        let (mut path, mut k) = rig(64, 64, 64);
        let mut seq = 0;
        // Under Miri (which interprets every byte): 72 frames, still past the 64-entry rings.
        while seq < if cfg!(miri) { 72 } else { 300 } {
            let n = with_frames(&p, seq..seq + 48, |f| path.queue(&flow(1500), f, mode)).unwrap();
            assert!(n > 0);
            for (i, d) in k.take(u32::MAX).iter().enumerate() {
                assert_eq!(d.len as usize, frame::HEADERS + p.len_of(seq + i as u64));
                check_frame(&path, d, &p, seq + i as u64);
                k.complete(&[d.addr]);
            }
            seq += n as u64;
        }
        path.reap().unwrap();
        assert_eq!(path.pool().in_flight(), 0, "{mode}");
        assert_eq!(path.stats.queued, seq);
    }
}

#[test]
fn a_corrupted_checksum_breaks_the_udp_checksum_only() {
    let p = Payloads::new(1200, 1);
    let (mut path, mut k) = rig(8, 8, 8);
    let heads = [Payloads::head(3)];
    let pieces = p.pieces(3, &heads[0]);
    let mut out = [Outgoing {
        seq: 3,
        payload: Source::iovec(&pieces),
        corrupt_udp_checksum: true,
    }];
    assert_eq!(
        path.queue(&flow(1500), &mut out, Mode::NonTemporal)
            .unwrap(),
        1
    );
    let d = k.take(1)[0];
    let bytes = path.umem().read(d.addr, d.len as usize);
    let f = frame::parse(&bytes).unwrap();
    assert!(f.ip_checksum_ok);
    assert!(!f.udp_checksum_ok);
    assert_eq!(p.verify(f.payload, 10), Ok(3));
}

#[test]
fn payload_verification_catches_damage() {
    let p = Payloads::new(1472, 373);
    let good = p.expected(41);
    assert_eq!(p.verify(&good, 42), Ok(41));
    assert_eq!(
        p.verify(&good, 41),
        Err(Mismatch::SeqOutOfRange { seq: 41 })
    );
    let mut bad = good.clone();
    bad[700] ^= 1;
    assert!(matches!(
        p.verify(&bad, 42),
        Err(Mismatch::Byte {
            seq: 41,
            offset: 700,
            ..
        })
    ));
    assert!(matches!(
        p.verify(&good[..good.len() - 1], 42),
        Err(Mismatch::Length { seq: 41, .. })
    ));
    assert_eq!(p.verify(&good[..5], 42), Err(Mismatch::TooShort { len: 5 }));
    // The four pieces are the expected payload, cut at seq-dependent places.
    for seq in 0..200 {
        let h = Payloads::head(seq);
        let cat = p.pieces(seq, &h).map(|v| v.as_slice()).concat();
        assert_eq!(cat, p.expected(seq));
    }
}

#[test]
fn payload_larger_than_the_mtu_is_refused() {
    let f = flow(1500);
    assert_eq!(frame::frame_len(&f, 1472, 2048), Ok(1514));
    assert_eq!(
        frame::frame_len(&f, 1473, 2048),
        Err(FrameError::ExceedsMtu {
            payload: 1473,
            max_payload: 1472
        })
    );
    // Through the TX path: nothing is queued, no chunk is used, the cursor is untouched.
    let (mut path, mut k) = rig(8, 8, 8);
    let big = vec![7u8; 1473];
    let small = vec![1u8; 100];
    let mut out = [
        Outgoing {
            seq: 0,
            payload: Source::ubuf(&small),
            corrupt_udp_checksum: false,
        },
        Outgoing {
            seq: 1,
            payload: Source::ubuf(&big),
            corrupt_udp_checksum: false,
        },
    ];
    match path.queue(&f, &mut out, Mode::Temporal) {
        Err(TxError::Frame {
            index: 1,
            seq: 1,
            err: FrameError::ExceedsMtu { payload: 1473, .. },
        }) => {}
        other => panic!("expected ExceedsMtu for frame 1, got {other:?}"),
    }
    assert_eq!(path.queued(), 0);
    assert_eq!(path.pool().available(), 8);
    assert_eq!(out[1].payload.count(), 1473);
    assert!(k.take(8).is_empty());
}

#[test]
fn frame_larger_than_a_chunk_is_refused() {
    // A jumbo MTU lets a 3000-byte payload through the MTU check; the 2 KiB chunk cannot hold it.
    let f = flow(9000);
    assert_eq!(
        frame::frame_len(&f, 3000, 2048),
        Err(FrameError::FrameTooLarge {
            frame: 3042,
            chunk: 2048
        })
    );
    assert_eq!(frame::frame_len(&f, 2048 - 42, 2048), Ok(2048));
    let (mut path, mut k) = rig(8, 8, 8);
    let big = vec![7u8; 3000];
    let mut out = [Outgoing {
        seq: 9,
        payload: Source::ubuf(&big),
        corrupt_udp_checksum: false,
    }];
    assert!(matches!(
        path.queue(&f, &mut out, Mode::NonTemporal),
        Err(TxError::Frame {
            index: 0,
            err: FrameError::FrameTooLarge {
                frame: 3042,
                chunk: 2048
            },
            ..
        })
    ));
    assert_eq!(path.pool().available(), 8);
    assert!(k.take(8).is_empty());
}

// ------------------------------------------------------------------ back-pressure

#[test]
fn tx_ring_full_is_backpressure_not_loss() {
    let p = Payloads::new(1472, 373);
    let (mut path, mut k) = rig(8, 64, 64);
    let f = flow(1500);
    with_frames(&p, 0..20, |out| {
        assert_eq!(
            path.queue(&f, out, Mode::Temporal).unwrap(),
            8,
            "the TX ring holds 8"
        );
        assert_eq!(path.queue(&f, &mut out[8..], Mode::Temporal).unwrap(), 0);
        assert_eq!(path.stats.backpressure, 1);
        // The kernel takes 5: exactly 5 more fit.
        let taken = k.take(5);
        assert_eq!(path.queue(&f, &mut out[8..], Mode::Temporal).unwrap(), 5);
        for (i, d) in taken.iter().enumerate() {
            check_frame(&path, d, &p, i as u64);
        }
        let rest = k.take(u32::MAX);
        assert_eq!(rest.len(), 8);
        for (i, d) in rest.iter().enumerate() {
            check_frame(&path, d, &p, 5 + i as u64);
        }
        assert_eq!(path.queue(&f, &mut out[13..], Mode::Temporal).unwrap(), 7);
    });
    assert_eq!(path.pool().in_flight(), 20);
}

#[test]
fn lagging_completions_stop_chunk_reuse_and_never_touch_frames_in_flight() {
    let p = Payloads::new(1472, 373);
    let (mut path, mut k) = rig(64, 64, 16);
    let f = flow(1500);
    with_frames(&p, 0..40, |out| {
        assert_eq!(
            path.queue(&f, out, Mode::NonTemporal).unwrap(),
            16,
            "16 chunks"
        );
        let descs = k.take(u32::MAX);
        assert_eq!(descs.len(), 16);
        let before: Vec<Vec<u8>> = descs
            .iter()
            .map(|d| path.umem().read(d.addr, d.len as usize))
            .collect();
        // The kernel has every descriptor but completes none: no chunk may be reused.
        assert_eq!(
            path.queue(&f, &mut out[16..], Mode::NonTemporal).unwrap(),
            0
        );
        assert_eq!(path.kick().unwrap(), 0);
        // It completes three, out of order.
        let done = [descs[5].addr, descs[0].addr, descs[9].addr];
        k.complete(&done);
        assert_eq!(
            path.queue(&f, &mut out[16..], Mode::NonTemporal).unwrap(),
            3
        );
        let reused: BTreeSet<u64> = k.take(u32::MAX).iter().map(|d| d.addr).collect();
        assert_eq!(
            reused,
            BTreeSet::from(done),
            "only completed chunks are reused"
        );
        // Every frame still in flight is byte for byte what was queued.
        for (i, d) in descs.iter().enumerate() {
            if !done.contains(&d.addr) {
                assert_eq!(
                    path.umem().read(d.addr, d.len as usize),
                    before[i],
                    "frame {i}"
                );
                check_frame(&path, d, &p, i as u64);
            }
        }
    });
    assert_eq!(path.stats.backpressure, 1);
    assert_eq!(path.pool().in_flight(), 16);
}

#[test]
fn completion_of_a_chunk_not_in_flight_is_an_error() {
    let p = Payloads::new(1200, 1);
    let (mut path, mut k) = rig(8, 8, 8);
    with_frames(&p, 0..2, |out| path.queue(&flow(1500), out, Mode::Temporal)).unwrap();
    let d = k.take(2);
    k.complete(&[d[1].addr, d[1].addr]);
    match path.reap() {
        Err(TxError::Completion(ChunkError::BadTransition { addr, .. })) => {
            assert_eq!(addr, d[1].addr)
        }
        other => panic!("a repeated completion must fail, got {other:?}"),
    }
    assert_eq!(path.pool().in_flight(), 1, "the first completion counted");
    k.complete(&[123]);
    assert!(matches!(
        path.reap(),
        Err(TxError::Completion(ChunkError::NotAChunk { addr: 123 }))
    ));
}

#[test]
fn kick_busy_is_retried_and_a_hard_error_is_reported() {
    let p = Payloads::new(1200, 1);
    let (mut path, _k) = rig(8, 8, 8);
    with_frames(&p, 0..2, |out| path.queue(&flow(1500), out, Mode::Temporal)).unwrap();
    for e in [libc::EAGAIN, libc::EBUSY, libc::ENOBUFS] {
        path.kicker_mut_for_test().script.push_back(e);
        assert_eq!(path.kick().unwrap(), 2, "errno {e} is back-pressure");
    }
    assert_eq!(path.stats.kicks_busy, 3);
    path.kicker_mut_for_test().script.push_back(libc::ENETDOWN);
    match path.kick() {
        Err(TxError::Kick(e)) => assert_eq!(e.raw_os_error(), Some(libc::ENETDOWN)),
        other => panic!("ENETDOWN must fail, got {other:?}"),
    }
}

#[test]
fn drain_reports_lagging_completions_by_the_deadline() {
    let p = Payloads::new(1200, 1);
    let (mut path, mut k) = rig(8, 8, 8);
    with_frames(&p, 0..6, |out| path.queue(&flow(1500), out, Mode::Temporal)).unwrap();
    let d = k.take(4);
    k.complete(&[d[0].addr]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(20);
    match path.drain(deadline) {
        Err(TxError::Lagging { queued, in_flight }) => {
            assert_eq!((queued, in_flight), (2, 5));
        }
        other => panic!("expected Lagging, got {other:?}"),
    }
}

// ------------------------------------------------------------------ end to end (root)

/// The end-to-end tests run one at a time (two cores; and each checks that no namespace of
/// this process is left behind).
static E2E: Mutex<()> = Mutex::new(());

/// Namespaces of this process (`ccxdp-<pid>-*`).
fn our_netns() -> Vec<String> {
    let prefix = format!("{}{}-", xdp::netns::PREFIX, std::process::id());
    std::fs::read_dir("/var/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// No namespace or veth of ours is left, and the initial namespace never had a veth end.
fn assert_clean() {
    assert_eq!(our_netns(), Vec::<String>::new(), "namespaces left behind");
    let out = std::process::Command::new("ip")
        .args(["-o", "link"])
        .output()
        .unwrap();
    let links = String::from_utf8_lossy(&out.stdout);
    assert!(
        !links.contains(" xdp0") && !links.contains(" xdp1"),
        "a veth end in the initial namespace:\n{links}"
    );
}

fn small(modes: &[Mode], frames: u64) -> xdp::Config {
    xdp::Config {
        frames,
        rounds: 1,
        modes: modes.iter().map(|&m| m.into()).collect(),
        ..xdp::Config::default()
    }
}

/// Runs `cfg`; `None` (after printing why) where root, namespaces or AF_XDP are missing.
fn run_or_skip(cfg: &xdp::Config) -> Option<Result<xdp::Report, xdp::Error>> {
    match xdp::run(cfg) {
        Err(xdp::Error::Skip(reason)) => {
            eprintln!("SKIPPED: {reason}");
            None
        }
        r => Some(r),
    }
}

/// Runs `cfg` alone (under `E2E`), hands its result to `check`, then asserts that nothing of
/// the run is left behind; does neither where the run is skipped (see `run_or_skip`).
fn e2e(cfg: xdp::Config, check: impl FnOnce(Result<xdp::Report, xdp::Error>)) {
    let _g = E2E.lock().unwrap_or_else(|e| e.into_inner());
    let Some(r) = run_or_skip(&cfg) else { return };
    check(r);
    assert_clean();
}

#[test]
fn e2e_every_frame_arrives_intact_in_every_mode() {
    let cfg = xdp::Config {
        modes: xdp::TxMode::all(),
        ..small(&[], 3000)
    };
    e2e(cfg, |r| {
        let r = r.expect("the run succeeds");
        assert_eq!(
            r.modes.len(),
            5,
            "every mode call by call, and NonTemporal batched"
        );
        for m in &r.modes {
            assert_eq!(
                (m.sent, m.intact, m.lost(), m.corrupt),
                (3000, 3000, 0, 0),
                "{}",
                m.mode
            );
            assert!(m.ok(), "{m:?}");
            assert_eq!(m.tx.completed, 3000, "every chunk came back");
        }
        assert_eq!(r.tx_invalid_descs, 0);
        for ns in &r.netns {
            assert!(!xdp::netns::exists(ns), "{ns} still exists");
        }
    });
}

#[test]
fn e2e_datagrams_with_a_bad_checksum_are_dropped_and_reported_lost() {
    let cfg = xdp::Config {
        corrupt: vec![0, 7, 1000, 1999],
        ..small(&[Mode::Temporal, Mode::NonTemporal], 2000)
    };
    e2e(cfg, |r| {
        let r = r.expect("the run completes");
        for m in &r.modes {
            assert_eq!(m.missing, vec![0, 7, 1000, 1999], "{}", m.mode);
            assert_eq!((m.sent, m.intact, m.corrupt), (2000, 1996, 0), "{}", m.mode);
            assert!(!m.ok());
        }
    });
}

#[test]
fn e2e_payload_over_the_mtu_fails_cleanly() {
    let cfg = xdp::Config {
        max_payload: 1473,
        payload_spread: 1,
        ..small(&[Mode::NonTemporal], 100)
    };
    e2e(cfg, |r| match r {
        Err(xdp::Error::Tx {
            mode:
                xdp::TxMode {
                    mode: Mode::NonTemporal,
                    batched: false,
                },
            err:
                TxError::Frame {
                    err:
                        FrameError::ExceedsMtu {
                            payload: 1473,
                            max_payload: 1472,
                        },
                    ..
                },
        }) => {}
        other => panic!("expected ExceedsMtu, got {other:?}"),
    });
}

#[test]
fn e2e_frame_larger_than_a_chunk_fails_cleanly_on_a_jumbo_link() {
    // MTU 9000 lets a 3000-byte payload through; the 2 KiB chunk cannot hold its frame.
    let cfg = xdp::Config {
        mtu: 9000,
        max_payload: 3000,
        payload_spread: 1,
        ..small(&[Mode::Temporal], 100)
    };
    e2e(cfg, |r| match r {
        Err(xdp::Error::Tx {
            err:
                TxError::Frame {
                    index: 0,
                    seq: 0,
                    err:
                        FrameError::FrameTooLarge {
                            frame: 3042,
                            chunk: 2048,
                        },
                },
            ..
        }) => {}
        other => panic!("expected FrameTooLarge, got {other:?}"),
    });
}

#[test]
fn e2e_a_panic_mid_run_removes_the_namespaces() {
    let _g = E2E.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = xdp::Config {
        panic_after: Some(500),
        ..small(&[Mode::Temporal], 2000)
    };
    let r = std::panic::catch_unwind(|| run_or_skip(&cfg));
    match r {
        Ok(None) => return,
        Ok(Some(r)) => panic!("the induced panic did not happen: {r:?}"),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            assert!(msg.contains("induced panic"), "{msg}");
        }
    }
    assert_clean();
}
