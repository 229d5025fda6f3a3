//! The transmit path over a UMEM, a TX ring and a completion ring, independent of where they
//! live: [`super::sys::Xsk`] puts them on an AF_XDP socket, the tests on the heap with a fake
//! kernel.
//!
//! Frames are built in batches: [`TxPath::queue`] reserves TX slots and chunks for a whole
//! batch, builds every frame, then publishes the batch with one release store; [`TxPath::kick`]
//! then asks the kernel to send (one `sendto` per 32 descriptors in copy mode). A batch scope
//! (`cachecopy::batch`, being built) wraps exactly the build loop in `queue`: its one store
//! fence then lands before the one publishing store.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cachecopy::iter::Source;
use cachecopy::net::csum_and_copy_from_iter;

use super::TxMode;

use super::chunks::{ChunkError, ChunkPool};
use super::frame::{self, Flow, FrameError, FrameOpts};
use super::ring::{Consumer, Desc, Producer};

/// A UMEM: `len` bytes at `ptr`, kept mapped by `owner`.
pub struct Umem {
    ptr: *mut u8,
    len: usize,
    _owner: Arc<dyn Send + Sync>,
}

impl Umem {
    /// # Safety
    /// `ptr..ptr + len` is writable memory kept alive by `owner`, accessed by nobody else but
    /// the kernel reading chunks whose descriptors are on the TX ring (the `ChunkPool` protocol).
    pub unsafe fn from_raw(ptr: *mut u8, len: usize, owner: Arc<dyn Send + Sync>) -> Self {
        Umem {
            ptr,
            len,
            _owner: owner,
        }
    }

    /// A UMEM on the heap (tests).
    pub fn heap(len: usize) -> Self {
        let buf: Box<[u8]> = vec![0u8; len].into_boxed_slice();
        let owner = Arc::new(HeapUmem(std::sync::Mutex::new(buf)));
        let ptr = owner.0.lock().expect("fresh").as_mut_ptr();
        // SAFETY: the boxed slice never moves and lives as long as `owner`; only this `Umem`
        // and its readers use the pointer.
        unsafe { Self::from_raw(ptr, len, owner) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The bytes of a frame the kernel (or a fake one) may be reading: a copy, for checking.
    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        assert!(addr as usize + len <= self.len, "outside the UMEM");
        // SAFETY: inside the UMEM (checked); a plain read of bytes nobody writes concurrently
        // (in flight chunks are never written by us).
        unsafe { std::slice::from_raw_parts(self.ptr.add(addr as usize), len).to_vec() }
    }

    /// # Safety
    /// The chunk at `addr` is `Building` in the pool: nobody else reads or writes it.
    #[allow(clippy::mut_from_ref)]
    unsafe fn chunk_mut(&self, addr: u64, size: usize) -> &mut [u8] {
        assert!(addr as usize + size <= self.len, "chunk outside the UMEM");
        // SAFETY: inside the UMEM (checked); exclusive per the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(addr as usize), size) }
    }
}

struct HeapUmem(std::sync::Mutex<Box<[u8]>>);

/// Tells the kernel there is something on the TX ring (`sendto(MSG_DONTWAIT)`).
pub trait Kick {
    /// `Err` with [`io::ErrorKind::WouldBlock`] (or `EBUSY`/`ENOBUFS`) means "try again later".
    fn kick(&mut self) -> io::Result<()>;
}

/// One frame to send: its sequence number and the cursor over its payload pieces.
pub struct Outgoing<'a> {
    pub seq: u64,
    pub payload: Source<'a>,
    pub corrupt_udp_checksum: bool,
}

#[derive(Debug)]
pub enum TxError {
    /// Frame `index` of the batch cannot be built; nothing of the batch was queued.
    Frame {
        index: usize,
        seq: u64,
        err: FrameError,
    },
    /// The kernel returned a completion the pool cannot account for.
    Completion(ChunkError),
    /// `sendto` failed for a reason other than back-pressure.
    Kick(io::Error),
    /// Frames still queued or in flight when the deadline passed.
    Lagging { queued: u32, in_flight: usize },
}

impl fmt::Display for TxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxError::Frame { index, seq, err } => {
                write!(f, "frame {index} of the batch (datagram {seq}): {err}")
            }
            TxError::Completion(e) => write!(f, "completion ring: {e}"),
            TxError::Kick(e) => write!(f, "sendto on the AF_XDP socket: {e}"),
            TxError::Lagging { queued, in_flight } => write!(
                f,
                "completions lagging: {queued} descriptors still on the TX ring, {in_flight} \
                 chunks not completed by the deadline"
            ),
        }
    }
}

impl std::error::Error for TxError {}

#[derive(Clone, Copy, Debug, Default)]
pub struct TxStats {
    pub queued: u64,
    pub completed: u64,
    pub batches: u64,
    /// `sendto` calls.
    pub kicks: u64,
    /// `sendto` calls the kernel answered with EAGAIN/EBUSY/ENOBUFS.
    pub kicks_busy: u64,
    /// `queue` calls that found no room (TX ring full or no chunk free).
    pub backpressure: u64,
    /// Time spent building frames (the copies and checksums).
    pub build: Duration,
    /// Time spent in `sendto`: in copy mode the kernel's whole path, from copying each frame
    /// out of its chunk into an skb (the first read of what we wrote) to the receiving socket.
    pub kick: Duration,
}

pub struct TxPath<K> {
    // Field order is drop order: the socket closes first, then its rings, then the UMEM.
    kicker: K,
    tx: Producer<Desc>,
    comp: Consumer<u64>,
    pool: ChunkPool,
    umem: Umem,
    pub stats: TxStats,
}

impl<K: Kick> TxPath<K> {
    pub fn new(
        kicker: K,
        tx: Producer<Desc>,
        comp: Consumer<u64>,
        umem: Umem,
        chunk_size: u32,
    ) -> Self {
        let chunks = (umem.len() / chunk_size as usize) as u32;
        TxPath {
            kicker,
            tx,
            comp,
            pool: ChunkPool::new(chunks, chunk_size),
            umem,
            stats: TxStats::default(),
        }
    }

    pub fn kicker(&self) -> &K {
        &self.kicker
    }

    /// The kicker, to script a fake one in tests.
    pub fn kicker_mut_for_test(&mut self) -> &mut K {
        &mut self.kicker
    }

    pub fn pool(&self) -> &ChunkPool {
        &self.pool
    }

    pub fn umem(&self) -> &Umem {
        &self.umem
    }

    /// Descriptors on the TX ring the kernel has not taken yet.
    pub fn queued(&mut self) -> u32 {
        self.tx.pending()
    }

    /// Takes every completion off the completion ring and frees its chunk.
    pub fn reap(&mut self) -> Result<usize, TxError> {
        let (first, n) = self.comp.peek(u32::MAX);
        for i in 0..n {
            let addr = self.comp.read(first.wrapping_add(i));
            if let Err(e) = self.pool.complete(addr) {
                // Consume up to and including the bad entry: the good ones are accounted for,
                // the bad one is reported once, not again on every later reap.
                self.comp.release(i + 1);
                self.stats.completed += i as u64;
                return Err(TxError::Completion(e));
            }
        }
        self.comp.release(n);
        self.stats.completed += n as u64;
        Ok(n as usize)
    }

    /// Builds and queues as many frames from the front of `frames` as there are free TX slots
    /// and chunks (after reaping completions), in `mode`, and publishes them; returns how many.
    /// `Ok(0)` is back-pressure: kick, wait, and offer the rest again.
    ///
    /// Every frame is checked first: if any cannot be built, nothing is queued and the error
    /// names it.
    pub fn queue(
        &mut self,
        flow: &Flow,
        frames: &mut [Outgoing<'_>],
        mode: impl Into<TxMode>,
    ) -> Result<usize, TxError> {
        let chunk = self.pool.chunk_size() as usize;
        for (index, f) in frames.iter().enumerate() {
            if let Err(err) = frame::frame_len(flow, f.payload.count(), chunk) {
                return Err(TxError::Frame {
                    index,
                    seq: f.seq,
                    err,
                });
            }
        }
        self.reap()?;
        let n = frames
            .len()
            .min(self.pool.available())
            .min(self.tx.free(frames.len() as u32) as usize);
        if n == 0 {
            if !frames.is_empty() {
                self.stats.backpressure += 1;
            }
            return Ok(0);
        }
        let first = self.tx.reserve(n as u32).expect("free slots counted above");
        let t = Instant::now();
        let mode: TxMode = mode.into();
        let (umem, pool, tx) = (&self.umem, &mut self.pool, &mut self.tx);
        if mode.batched {
            // One fence for the whole batch; the descriptors are published after it.
            cachecopy::batch(mode.mode, |b| {
                for (i, f) in frames[..n].iter_mut().enumerate() {
                    put_frame(umem, pool, tx, first, i, chunk, flow, f, |rest, src| {
                        b.csum_and_copy_from_iter(rest, src)
                    });
                }
            });
        } else {
            for (i, f) in frames[..n].iter_mut().enumerate() {
                put_frame(umem, pool, tx, first, i, chunk, flow, f, |rest, src| {
                    csum_and_copy_from_iter(rest, src, mode.mode)
                });
            }
        }
        self.stats.build += t.elapsed();
        self.tx.submit();
        self.stats.queued += n as u64;
        self.stats.batches += 1;
        Ok(n)
    }

    /// Kicks the kernel until it has taken every queued descriptor or stops making progress
    /// (copy mode sends at most 32 per call, and answers EAGAIN when the completion ring has
    /// no room). Reaps completions between kicks. Returns the descriptors still queued.
    pub fn kick(&mut self) -> Result<u32, TxError> {
        let mut queued = self.tx.pending();
        while queued > 0 {
            self.stats.kicks += 1;
            let t = Instant::now();
            let r = self.kicker.kick();
            self.stats.kick += t.elapsed();
            match r {
                Ok(()) => {}
                Err(e) if is_busy(&e) => self.stats.kicks_busy += 1,
                Err(e) => return Err(TxError::Kick(e)),
            }
            self.reap()?;
            let now = self.tx.pending();
            if now >= queued {
                return Ok(now);
            }
            queued = now;
        }
        Ok(0)
    }

    /// Kicks and reaps until every frame is sent and completed, or `deadline`.
    pub fn drain(&mut self, deadline: Instant) -> Result<(), TxError> {
        loop {
            let queued = self.kick()?;
            self.reap()?;
            let in_flight = self.pool.in_flight();
            if queued == 0 && in_flight == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(TxError::Lagging { queued, in_flight });
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// Builds frame `i` of a batch into a fresh chunk, its payload copied by `copy`, and writes its
/// descriptor at `first + i` (published later, by the caller).
#[allow(clippy::too_many_arguments)]
fn put_frame<'u>(
    umem: &'u Umem,
    pool: &mut ChunkPool,
    tx: &mut Producer<Desc>,
    first: u32,
    i: usize,
    chunk: usize,
    flow: &Flow,
    f: &mut Outgoing<'_>,
    copy: impl FnOnce(&'u mut [u8], &mut Source<'_>) -> (usize, u32),
) {
    let addr = pool.alloc().expect("free chunks counted above");
    // SAFETY: `alloc` just made the chunk `Building`: the kernel has no descriptor for it and
    // we hold no other reference to it.
    let buf = unsafe { umem.chunk_mut(addr, chunk) };
    let opts = FrameOpts {
        ip_id: f.seq as u16,
        corrupt_udp_checksum: f.corrupt_udp_checksum,
    };
    let len =
        frame::build_with(buf, flow, &mut f.payload, opts, copy).expect("lengths checked above");
    tx.write(
        first.wrapping_add(i as u32),
        Desc {
            addr,
            len: len as u32,
            options: 0,
        },
    );
    pool.submitted(addr).expect("the chunk was Building");
}

fn is_busy(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock
        || matches!(
            e.raw_os_error(),
            Some(libc::EBUSY | libc::ENOBUFS | libc::EAGAIN)
        )
}
