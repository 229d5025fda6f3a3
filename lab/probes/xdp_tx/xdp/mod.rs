//! A user-space transmit path: Ethernet + IPv4 + UDP frames built by cachecopy into the UMEM of
//! an AF_XDP socket (copy mode) on one end of a veth pair, received by an ordinary UDP socket
//! behind the other end, each end in a network namespace of its own.
//!
//! Shared by `lab/probes/xdp_tx` and `lab/probes/tests/xdp.rs`; see `lab/findings/af_xdp.md`.

pub mod chunks;
pub mod frame;
pub mod netns;
pub mod ring;
pub mod sys;
pub mod tx;

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, Scope};
use std::time::{Duration, Instant};

use cachecopy::iter::{IoVec, Source};
use cachecopy::Mode;

use frame::{Flow, Payloads};
use netns::{NetnsPair, SetupError};
use sys::{OpenError, XskConfig, XskKick};
use tx::{Outgoing, TxError, TxPath, TxStats};

/// How frames are built: the cache mode of the payload copy, and whether a whole batch is
/// built inside one [`cachecopy::batch`] (one fence per batch) or call by call (a fence per
/// streamed frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxMode {
    pub mode: Mode,
    pub batched: bool,
}

impl TxMode {
    /// Every mode call by call, then `NonTemporal` batched.
    pub fn all() -> Vec<TxMode> {
        let mut v: Vec<TxMode> = Mode::ALL.iter().map(|&m| m.into()).collect();
        v.push(TxMode {
            mode: Mode::NonTemporal,
            batched: true,
        });
        v
    }

    pub fn name(self) -> &'static str {
        match (self.mode, self.batched) {
            (m, false) => m.name(),
            (Mode::Temporal, true) => "Temporal batched",
            (Mode::NonTemporal, true) => "NonTemporal batched",
            (Mode::FlushCache, true) => "FlushCache batched",
            (Mode::Auto, true) => "Auto batched",
        }
    }
}

impl From<Mode> for TxMode {
    fn from(mode: Mode) -> TxMode {
        TxMode {
            mode,
            batched: false,
        }
    }
}

impl fmt::Display for TxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One run: every mode in `modes`, one after the other, over the same socket.
#[derive(Clone, Debug)]
pub struct Config {
    /// Datagrams per mode and round.
    pub frames: u64,
    /// Rounds: each runs every mode once, starting at a different mode each round, so warm-up
    /// and neighbours on the machine hit every mode alike; frames/s is the median of rounds.
    pub rounds: usize,
    /// Time bound for sending, per mode and round (sending stops early when it is reached).
    pub seconds: f64,
    /// Frames built per batch, one TX publish and kick each.
    pub batch: usize,
    pub modes: Vec<TxMode>,
    /// Payload lengths `max_payload - payload_spread + 1 ..= max_payload` bytes.
    pub max_payload: usize,
    pub payload_spread: usize,
    /// MTU of both veth ends.
    pub mtu: usize,
    pub xsk: XskConfig,
    /// At most this many datagrams between the sender and the receiver (UDP has no flow
    /// control: without it a sender faster than the receiving thread overflows its socket
    /// buffer, and a loss would say nothing about the frames).
    pub window: u64,
    /// Fault injection: these sequence numbers get a wrong UDP checksum (the receiving stack
    /// drops them; the run must report them lost).
    pub corrupt: Vec<u64>,
    /// Fault injection: the transmit thread panics once this many frames of the first mode are
    /// queued (to check that the namespaces are removed during unwinding).
    pub panic_after: Option<u64>,
    /// Set from outside (a signal handler) to stop sending early.
    pub stop: Option<&'static AtomicBool>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            frames: 20_000,
            rounds: 3,
            seconds: 5.0,
            batch: 64,
            modes: TxMode::all(),
            max_payload: 1472,
            payload_spread: 373,
            mtu: 1500,
            xsk: XskConfig::default(),
            window: 1024,
            corrupt: Vec::new(),
            panic_after: None,
            stop: None,
        }
    }
}

#[derive(Debug)]
pub enum Error {
    /// AF_XDP, network namespaces or root are missing here: nothing was tested.
    Skip(String),
    Setup(String),
    Tx {
        mode: TxMode,
        err: TxError,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Skip(r) => write!(f, "skipped: {r}"),
            Error::Setup(m) => write!(f, "setup: {m}"),
            Error::Tx { mode, err } => write!(f, "{mode}: {err}"),
        }
    }
}

impl std::error::Error for Error {}

/// What one mode did.
#[derive(Clone, Debug)]
pub struct ModeReport {
    pub mode: TxMode,
    pub sent: u64,
    pub intact: u64,
    /// Datagrams that arrived but are not what their sequence number names.
    pub corrupt: u64,
    pub corrupt_examples: Vec<String>,
    pub duplicates: u64,
    /// Sequence numbers sent and never received intact.
    pub missing: Vec<u64>,
    /// From the first frame built to the last datagram received, summed over rounds.
    pub elapsed: Duration,
    /// Frames received intact per second, one entry per round.
    pub rates: Vec<f64>,
    pub tx: TxStats,
    /// Sending stopped because the receiver made no progress for a second.
    pub stalled: bool,
    /// Sending stopped early (the time bound or a signal); `sent` < the frames asked for.
    pub cut_short: bool,
    pub receiver_error: Option<String>,
}

impl ModeReport {
    pub fn lost(&self) -> u64 {
        self.missing.len() as u64
    }

    /// Datagrams received intact per second, end to end: the median of the rounds.
    pub fn frames_per_sec(&self) -> f64 {
        let mut r = self.rates.clone();
        r.sort_by(f64::total_cmp);
        r.get(r.len() / 2).copied().unwrap_or(0.0)
    }

    /// Adds another round of the same mode.
    fn merge(&mut self, o: ModeReport) {
        let base = self.sent;
        self.sent += o.sent;
        self.intact += o.intact;
        self.corrupt += o.corrupt;
        self.corrupt_examples.extend(o.corrupt_examples);
        self.corrupt_examples.truncate(5);
        self.duplicates += o.duplicates;
        // Sequence numbers restart every round: report them as round-wide offsets.
        self.missing.extend(o.missing.iter().map(|q| base + q));
        self.elapsed += o.elapsed;
        self.rates.extend(o.rates);
        self.tx.queued += o.tx.queued;
        self.tx.completed += o.tx.completed;
        self.tx.batches += o.tx.batches;
        self.tx.kicks += o.tx.kicks;
        self.tx.kicks_busy += o.tx.kicks_busy;
        self.tx.backpressure += o.tx.backpressure;
        self.tx.build += o.tx.build;
        self.tx.kick += o.tx.kick;
        self.stalled |= o.stalled;
        self.cut_short |= o.cut_short;
        self.receiver_error = self.receiver_error.take().or(o.receiver_error);
    }

    /// Every datagram sent arrived intact, once.
    pub fn ok(&self) -> bool {
        self.intact == self.sent
            && self.missing.is_empty()
            && self.corrupt == 0
            && self.duplicates == 0
            && self.receiver_error.is_none()
    }
}

#[derive(Debug)]
pub struct Report {
    /// The namespaces the run created (and removed).
    pub netns: [String; 2],
    pub modes: Vec<ModeReport>,
    /// The kernel's `XDP_STATISTICS` for the socket: descriptors it refused.
    pub tx_invalid_descs: u64,
}

/// Sets up the namespaces, runs every mode, removes the namespaces (also on error and panic).
pub fn run(cfg: &Config) -> Result<Report, Error> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error::Skip(
            "not root (network namespaces and AF_XDP need CAP_SYS_ADMIN and CAP_NET_RAW)".into(),
        ));
    }
    netns::remove_stale();
    let pair = NetnsPair::create(cfg.mtu).map_err(|e| match e {
        SetupError::Unavailable(m) => Error::Skip(m),
        SetupError::Failed(m) => Error::Setup(m),
    })?;
    let netns = pair.names();
    // The scope joins every thread (closing their sockets) before `pair` is dropped, on every
    // path: return, error, or a panic unwinding through here.
    let out = thread::scope(|s| {
        let (p, c) = (&pair, cfg);
        let h = s.spawn(move || transmit(s, p, c));
        match h.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    drop(pair);
    let (modes, tx_invalid_descs) = out?;
    Ok(Report {
        netns,
        modes,
        tx_invalid_descs,
    })
}

/// The transmit thread: enters the TX namespace, opens the socket, runs each mode.
fn transmit<'scope>(
    s: &'scope Scope<'scope, '_>,
    pair: &'scope NetnsPair,
    cfg: &'scope Config,
) -> Result<(Vec<ModeReport>, u64), Error> {
    netns::enter(&pair.tx.netns)
        .map_err(|e| Error::Setup(format!("entering {}: {e}", pair.tx.netns)))?;
    let mut tx = sys::open(pair.tx.ifname, cfg.xsk).map_err(|e| match e {
        OpenError::Unsupported(e) => Error::Skip(format!("AF_XDP sockets unavailable: {e}")),
        OpenError::Failed(what, e) => Error::Setup(format!("AF_XDP {what}: {e}")),
    })?;
    let payloads = Arc::new(Payloads::new(cfg.max_payload, cfg.payload_spread));
    let mut reports: Vec<Option<ModeReport>> = vec![None; cfg.modes.len()];
    let nm = cfg.modes.len();
    'rounds: for (run, (round, k)) in (0..cfg.rounds.max(1))
        .flat_map(|r| (0..nm).map(move |k| (r, k)))
        .enumerate()
    {
        let i = (round + k) % nm;
        let mode = cfg.modes[i];
        let flow = Flow {
            src_mac: pair.tx.mac,
            dst_mac: pair.rx.mac,
            src_ip: pair.tx.ip,
            dst_ip: pair.rx.ip,
            sport: 40000,
            // A port per run: a late datagram of one run cannot be counted for the next.
            dport: 40100 + (run % 1000) as u16,
            mtu: pair.mtu,
        };
        let r = run_mode(s, pair, cfg, &mut tx, &flow, &payloads, mode, run == 0)?;
        match &mut reports[i] {
            Some(acc) => acc.merge(r),
            slot => *slot = Some(r),
        }
        if cfg.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
            break 'rounds;
        }
    }
    let reports = reports.into_iter().flatten().collect();
    let st = tx
        .kicker()
        .statistics()
        .map_err(|e| Error::Setup(format!("XDP_STATISTICS: {e}")))?;
    Ok((reports, st.tx_invalid_descs))
}

#[derive(Default)]
struct RxShared {
    stop: AtomicBool,
    /// Datagrams received, intact or not.
    arrived: AtomicU64,
}

/// Stops the receiver when the sender leaves, however it leaves.
struct StopOnDrop(Arc<RxShared>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Release);
    }
}

#[derive(Default)]
struct RxResult {
    seen: Vec<bool>,
    intact: u64,
    corrupt: u64,
    corrupt_examples: Vec<String>,
    duplicates: u64,
    last: Option<Instant>,
    error: Option<String>,
}

/// Waits until `arrived >= need`; false when nothing arrives for a second.
fn wait_arrivals(shared: &RxShared, need: u64, idle: Duration) -> bool {
    let mut last = shared.arrived.load(Ordering::Acquire);
    let mut since = Instant::now();
    while last < need {
        // Sleep, not spin: the receiving thread needs the other core.
        thread::sleep(Duration::from_micros(20));
        let now = shared.arrived.load(Ordering::Acquire);
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= idle {
            return false;
        }
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn run_mode<'scope>(
    s: &'scope Scope<'scope, '_>,
    pair: &'scope NetnsPair,
    cfg: &'scope Config,
    tx: &mut TxPath<XskKick>,
    flow: &Flow,
    payloads: &Arc<Payloads>,
    mode: TxMode,
    first: bool,
) -> Result<ModeReport, Error> {
    let shared = Arc::new(RxShared::default());
    let (ready_tx, ready_rx) = mpsc::channel();
    let rx = {
        let (shared, payloads) = (shared.clone(), payloads.clone());
        let (port, frames) = (flow.dport, cfg.frames);
        let hard = Duration::from_secs_f64(cfg.seconds) + Duration::from_secs(30);
        s.spawn(move || receive(&pair.rx, port, frames, &payloads, &shared, ready_tx, hard))
    };
    let stop_rx = StopOnDrop(shared.clone());
    // The window never exceeds what the receiving socket can buffer (a 1.5 KB datagram takes
    // up to 4 KiB of it), so flow control alone keeps it from overflowing.
    let window = match ready_rx.recv() {
        Ok(Ok(rcvbuf)) => cfg.window.min((rcvbuf as u64 / 4096).max(16)),
        Ok(Err(e)) => return Err(Error::Setup(e)),
        Err(_) => match rx.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(_) => return Err(Error::Setup("the receiver quit before it was ready".into())),
        },
    };
    let txe = |err| Error::Tx { mode, err };

    let stats0 = tx.stats;
    let batch = cfg.batch.clamp(1, cfg.xsk.tx_ring as usize);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let (mut seq, mut stalled, mut cut_short) = (0u64, false, false);
    while seq < cfg.frames {
        if Instant::now() >= deadline || cfg.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
            cut_short = true;
            break;
        }
        let n = (cfg.frames - seq).min(batch as u64);
        // Flow control: keep at most `window` datagrams in flight to the receiver.
        let need = (seq + n).saturating_sub(window);
        if !wait_arrivals(&shared, need, Duration::from_secs(1)) {
            stalled = true;
            break;
        }
        // The application's datagrams, each in four scattered pieces.
        let heads: Vec<[u8; 8]> = (seq..seq + n).map(Payloads::head).collect();
        let pieces: Vec<[IoVec<'_>; 4]> = (seq..)
            .zip(&heads)
            .map(|(q, h)| payloads.pieces(q, h))
            .collect();
        let mut out: Vec<Outgoing<'_>> = (seq..)
            .zip(&pieces)
            .map(|(q, p)| Outgoing {
                seq: q,
                payload: Source::iovec(p),
                corrupt_udp_checksum: cfg.corrupt.contains(&q),
            })
            .collect();
        let mut done = 0;
        while done < out.len() {
            let queued = tx.queue(flow, &mut out[done..], mode).map_err(txe)?;
            done += queued;
            tx.kick().map_err(txe)?;
            if queued == 0 {
                // Back-pressure: the TX ring is full or every chunk is in flight.
                if Instant::now() >= deadline + Duration::from_secs(5) {
                    let (queued, in_flight) = (tx.queued(), tx.pool().in_flight());
                    return Err(txe(TxError::Lagging { queued, in_flight }));
                }
                thread::sleep(Duration::from_micros(50));
            }
        }
        seq += n;
        if first && cfg.panic_after.is_some_and(|p| seq >= p) {
            panic!("xdp_tx: induced panic after {seq} frames (fault injection)");
        }
    }
    tx.drain(Instant::now() + Duration::from_secs(5))
        .map_err(txe)?;
    // Everything sent has been handed to the receiving stack; wait for the socket to deliver.
    wait_arrivals(&shared, seq, Duration::from_millis(500));
    drop(stop_rx);
    let r = match rx.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let elapsed = r.last.map_or_else(|| start.elapsed(), |t| t - start);
    let rate = r.intact as f64 / elapsed.as_secs_f64().max(1e-9);
    let mut stats = tx.stats;
    stats.queued -= stats0.queued;
    stats.completed -= stats0.completed;
    stats.batches -= stats0.batches;
    stats.kicks -= stats0.kicks;
    stats.kicks_busy -= stats0.kicks_busy;
    stats.backpressure -= stats0.backpressure;
    stats.build -= stats0.build;
    stats.kick -= stats0.kick;
    Ok(ModeReport {
        mode,
        sent: seq,
        intact: r.intact,
        corrupt: r.corrupt,
        corrupt_examples: r.corrupt_examples,
        duplicates: r.duplicates,
        missing: (0..seq).filter(|&q| !r.seen[q as usize]).collect(),
        elapsed,
        rates: vec![rate],
        tx: stats,
        stalled,
        cut_short,
        receiver_error: r.error,
    })
}

/// The receiving thread: an ordinary UDP socket in the RX namespace; checks every byte.
fn receive(
    end: &netns::End,
    port: u16,
    frames: u64,
    payloads: &Payloads,
    shared: &RxShared,
    ready: mpsc::Sender<Result<usize, String>>,
    hard: Duration,
) -> RxResult {
    let open = || -> io::Result<(UdpSocket, usize)> {
        netns::enter(&end.netns)?;
        let sock = UdpSocket::bind((Ipv4Addr::from(end.ip), port))?;
        sock.set_read_timeout(Some(Duration::from_millis(20)))?;
        sys::set_rcvbuf(&sock, 8 << 20)?;
        let rcvbuf = sys::rcvbuf(&sock)?;
        Ok((sock, rcvbuf))
    };
    let sock = match open() {
        Ok((s, rcvbuf)) => {
            let _ = ready.send(Ok(rcvbuf));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(format!("UDP receiver in {}: {e}", end.netns)));
            return RxResult::default();
        }
    };
    let mut r = RxResult {
        seen: vec![false; frames as usize],
        ..RxResult::default()
    };
    let mut buf = vec![0u8; 1 << 16];
    let end_by = Instant::now() + hard;
    loop {
        match sock.recv(&mut buf) {
            Ok(n) => {
                r.last = Some(Instant::now());
                match payloads.verify(&buf[..n], frames) {
                    Ok(seq) if r.seen[seq as usize] => r.duplicates += 1,
                    Ok(seq) => {
                        r.seen[seq as usize] = true;
                        r.intact += 1;
                    }
                    Err(m) => {
                        r.corrupt += 1;
                        if r.corrupt_examples.len() < 5 {
                            r.corrupt_examples.push(m.to_string());
                        }
                    }
                }
                shared.arrived.fetch_add(1, Ordering::Release);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if shared.stop.load(Ordering::Acquire) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                r.error = Some(format!("recv: {e}"));
                break;
            }
        }
        if Instant::now() >= end_by {
            r.error = Some(format!("receiver gave up after {hard:?}"));
            break;
        }
    }
    r
}
