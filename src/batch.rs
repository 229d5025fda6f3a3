//! Batches: many copies, fills and checksum-copies, one fence.
//!
//! A store fence waits until every write-combining buffer has drained, so a streaming copy of one
//! 1500-byte frame that fences on return pays more for the fence than for the copy. Linux leaves
//! the fence of `__copy_user_nocache` to the end of the system call; PMDK has
//! `PMEM_F_MEM_NODRAIN` and `pmem_drain()`. Here [`batch`] runs a closure in which every
//! operation on the [`Batch`] it is handed stores without a fence, then fences once, when the
//! closure returns or unwinds.
//!
//! See [`Batch`] for the guarantees and examples.

use core::cell::Cell;
use core::marker::PhantomData;

use crate::copy::len_mismatch;
use crate::dispatch::engine::Engine;
use crate::dispatch::plan::{self, Plan};
use crate::dispatch::store::{copy_unfenced_on, csum_copy_unfenced_on, fill_unfenced_on};
use crate::dispatch::supported::Unsupported;
use crate::dispatch::table::Kernels;
use crate::iter::{self, Dest, Source};
use crate::mode::{Mode, Store};
use crate::{kernel, net};

/// The handle of one batch: every operation stores without a fence; [`batch`] fences once at
/// the end. `'scope` is the batch's lifetime: destinations are borrowed for all of it.
///
/// The scope is shaped like `std::thread::scope`: a destination handed to a batch operation
/// is borrowed for the whole scope (`&'scope mut`), so no safe code can read it, or send it to
/// another thread, before the fence has run (rust-lang/rust#114582: streaming stores are not
/// ordered by atomics). A `Batch` is neither `Send` nor `Sync`, so every unfenced store happens
/// on the thread that runs the fence. There is no guard object to leak: the fence belongs to
/// [`batch`] itself.
///
/// ```
/// use cachecopy::{batch, Mode};
///
/// let payload = vec![0x5au8; 1472];
/// let mut ring = vec![[0u8; 1536]; 64];
/// let sums = batch(Mode::NonTemporal, |b| {
///     ring.iter_mut()
///         .map(|slot| b.csum_and_copy(&mut slot[..1472], &payload))
///         .collect::<Vec<u32>>()
/// }); // one fence here, for all 64 frames
/// assert!(ring.iter().all(|slot| slot[..1472] == payload[..]));
/// assert_eq!(sums.len(), 64);
/// ```
///
/// A destination cannot be read before the scope ends:
/// ```compile_fail
/// let src = [1u8; 4096];
/// let mut dst = [0u8; 4096];
/// cachecopy::batch(cachecopy::Mode::NonTemporal, |b| {
///     b.copy(&mut dst, &src);
///     assert_eq!(dst[0], 1); // error: `dst` is still mutably borrowed by the batch
/// });
/// ```
///
/// Nor sent to another thread:
/// ```compile_fail
/// let src = [1u8; 4096];
/// let mut dst = [0u8; 4096];
/// cachecopy::batch(cachecopy::Mode::NonTemporal, |b| {
///     b.copy(&mut dst, &src);
///     std::thread::scope(|s| {
///         s.spawn(|| dst[0]); // error: `dst` is still mutably borrowed by the batch
///     });
/// });
/// ```
///
/// Nor can the batch itself go to another thread, whose stores this thread's fence would not
/// order:
/// ```compile_fail
/// let src = [1u8; 4096];
/// let mut dst = [0u8; 4096];
/// cachecopy::batch(cachecopy::Mode::NonTemporal, |b| {
///     std::thread::scope(|s| {
///         s.spawn(|| b.copy(&mut dst, &src)); // error: `Batch` is not `Sync`
///     });
/// });
/// ```
pub struct Batch<'scope, 'env: 'scope> {
    /// The plan of the batch (its bounds, flush instruction and knobs).
    p: &'static Plan,
    /// The kernels it runs: the plan's, or an engine's asked for by [`batch_with`].
    k: &'static Kernels,
    mode: Mode,
    /// The fence the batch's mode needs (the strongest any of its operations owes).
    fence: Store,
    /// Whether any operation left streamed stores or write-backs in flight.
    owed: Cell<bool>,
    /// Where the batch's streamed destinations have been, to fetch the next one's partial
    /// lines a destination ahead ([`Batch::ahead`]).
    ahead: Ahead,
    /// Invariance in `'scope` and `'env`, as `std::thread::Scope`, so neither can be shortened
    /// to let a destination go before the fence.
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

/// Runs `f` with a [`Batch`] whose operations store with the cache policy `mode` and do not
/// fence, then fences once (when `f` returns, and also when it unwinds), and returns what `f`
/// returned. A batch in which nothing streamed (empty, `Temporal`, or `Auto` and `NonTemporal`
/// operations all below their thresholds) costs no fence.
///
/// - `NonTemporal`: every operation streams its whole lines; one store fence at the end.
/// - `FlushCache`: every operation streams and writes back as it goes; one completion fence at
///   the end, after which every destination byte is in memory.
/// - `Auto`: resolved per operation against its size (a move also against its distance), as
///   outside a batch.
/// - `Temporal`: as outside a batch (nothing to fence).
///
/// See [`Batch`] for an example and for why destinations stay borrowed.
#[inline]
pub fn batch<'env, F, R>(mode: Mode, f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Batch<'scope, 'env>) -> R,
{
    let p = plan::active();
    batch_on(p, &p.kernels, mode, f)
}

/// [`batch`] with exactly `engine` (to compare engines: see [`Engine::supported`]).
///
/// # Errors
/// [`Unsupported`] when this CPU cannot run one of `engine`'s backends; `f` is not called then.
///
/// ```
/// use cachecopy::raw::batch_with;
/// use cachecopy::tune::{Backend, Engine};
/// use cachecopy::Mode;
/// let mut dst = [0u8; 4096];
/// let e = Engine::uniform(Backend::Generic);
/// batch_with(e, Mode::NonTemporal, |b| b.copy(&mut dst, &[7u8; 4096])).unwrap();
/// assert!(dst.iter().all(|&x| x == 7));
/// ```
#[inline]
pub fn batch_with<'env, F, R>(engine: Engine, mode: Mode, f: F) -> Result<R, Unsupported>
where
    F: for<'scope> FnOnce(&'scope Batch<'scope, 'env>) -> R,
{
    let p = plan::active();
    Ok(batch_on(p, engine.kernels(p)?, mode, f))
}

/// [`batch`] on the plan `p` with the kernels `k` (which must run on this CPU: the plan's or a
/// checked engine's).
#[inline]
pub(crate) fn batch_on<'env, F, R>(p: &'static Plan, k: &'static Kernels, mode: Mode, f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Batch<'scope, 'env>) -> R,
{
    // The strongest store kind any operation of the batch may use: the one a call of every
    // length resolves to.
    let fence = mode.strongest(p.tuning.flush);
    let b = Batch {
        p,
        k,
        mode,
        fence,
        owed: Cell::new(false),
        ahead: Ahead::default(),
        scope: PhantomData,
        env: PhantomData,
    };
    let _fence_on_exit = FenceOnExit(&b);
    f(&b)
}

/// Runs the batch's fence when dropped: on return and on unwind. Private to [`batch`], which
/// owns it, so it cannot be leaked.
struct FenceOnExit<'a, 'scope, 'env>(&'a Batch<'scope, 'env>);

impl Drop for FenceOnExit<'_, '_, '_> {
    fn drop(&mut self) {
        if self.0.owed.get() {
            // SAFETY: the fence's flush op is the plan's, which runs here.
            unsafe { self.0.fence.fence() };
        }
    }
}

/// The last streamed destination of a batch and the step from the one before it.
#[derive(Default)]
struct Ahead {
    /// Address of the last destination (`0`: none yet).
    last: Cell<usize>,
    /// Its address minus the previous one's.
    step: Cell<usize>,
    /// Its length and header bytes.
    shape: Cell<(usize, usize)>,
}

/// Fetches the lines a streamed destination of `len` bytes at `d` writes with ordinary stores:
/// those of its first `head` bytes (a frame's header), and the partial lines at the two ends of
/// the rest. A hint: it never faults and writes nothing, whatever the address.
#[inline(always)]
fn prefetch_ordinary_lines(d: *mut u8, len: usize, head: usize) {
    // SAFETY: prefetches only, of any address.
    unsafe { crate::arch::prefetch_write(d, head) };
    kernel::prefetch_ends(d.wrapping_add(head), len - head);
}

impl<'scope> Batch<'scope, '_> {
    /// Before a streamed operation on `len` bytes at `d` (of which the first `head` are a
    /// frame's header), fetches the lines the *next* such operation will write with ordinary
    /// stores, when the batch's destinations are evenly spaced: the last two steps between
    /// them equal and the shape the same, as ring slots are. Each operation prefetches its own
    /// partial lines when it starts, but a line from memory can take longer than the frame's
    /// streaming (lab/findings/engine.md, "The frame's store stream"); a frame ahead it is in the cache
    /// when its ordinary stores come. The lines predicted are those of a destination disjoint
    /// from this one (the batch's destinations are exclusive borrows), and none is fetched
    /// until the spacing has repeated.
    /// Returns whether it fetched.
    #[inline(always)]
    fn ahead(&self, d: *mut u8, len: usize, head: usize, store: Store) -> bool {
        if store == Store::Temporal {
            return false;
        }
        let a = &self.ahead;
        let step = (d as usize).wrapping_sub(a.last.get());
        let repeats = a.last.get() != 0 && step == a.step.get() && a.shape.get() == (len, head);
        if repeats {
            prefetch_ordinary_lines(d.wrapping_add(step), len, head);
        }
        a.last.set(d as usize);
        a.step.set(step);
        a.shape.set((len, head));
        repeats
    }

    /// The batch's cache policy.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Records what an operation with store kind `store` left to fence.
    #[inline(always)]
    fn owe(&self, store: Store) {
        if store != Store::Temporal {
            self.owed.set(true);
        }
    }

    /// Copies `src` into `dst` ([`crate::copy()`] without the fence). `dst` stays borrowed until
    /// the batch has fenced.
    ///
    /// # Panics
    /// When the lengths differ; nothing is written then.
    #[inline]
    #[track_caller]
    pub fn copy(&self, dst: &'scope mut [u8], src: &[u8]) {
        if dst.len() != src.len() {
            len_mismatch("Batch::copy", dst.len(), src.len());
        }
        let store = self
            .mode
            .resolve(src.len(), &self.p.copy_below, self.p.tuning.flush);
        let _ = self.ahead(dst.as_mut_ptr(), dst.len(), 0, store);
        // SAFETY: two live slices of equal length (`&mut` cannot overlap `&`); the batch fences
        // on this thread before `dst` is released.
        unsafe { copy_unfenced_on(self.k, dst.as_mut_ptr(), src.as_ptr(), src.len(), store) };
        self.owe(store);
    }

    /// Sets every byte of `dst` to `byte` ([`crate::fill`] without the fence).
    #[inline]
    pub fn fill(&self, dst: &'scope mut [u8], byte: u8) {
        let len = dst.len();
        if len <= kernel::INLINE_FILL && self.mode != Mode::FlushCache {
            // SAFETY: a live slice; ordinary stores owe no fence.
            unsafe { kernel::fill_inline(dst.as_mut_ptr(), byte, len) };
            return;
        }
        let store = self
            .mode
            .resolve(len, &self.p.fill_below, self.p.tuning.flush);
        let _ = self.ahead(dst.as_mut_ptr(), len, 0, store);
        // SAFETY: a live slice; the batch fences before `dst` is released.
        unsafe { fill_unfenced_on(self.k, dst.as_mut_ptr(), byte, len, store) };
        self.owe(store);
    }

    /// Zeroes `dst` ([`Batch::fill`] with `0`).
    #[inline]
    pub fn zero(&self, dst: &'scope mut [u8]) {
        self.fill(dst, 0)
    }

    /// Copies `src` into `dst` and returns the RFC 1071 partial sum of the bytes
    /// ([`net::csum_and_copy`] without the fence).
    ///
    /// # Panics
    /// When the lengths differ; nothing is written then.
    #[inline]
    #[track_caller]
    pub fn csum_and_copy(&self, dst: &'scope mut [u8], src: &[u8]) -> u32 {
        if dst.len() != src.len() {
            len_mismatch("Batch::csum_and_copy", dst.len(), src.len());
        }
        let (k, len) = (self.k, src.len());
        let store = self
            .mode
            .resolve(len, &self.p.copy_below, self.p.tuning.flush);
        let _ = self.ahead(dst.as_mut_ptr(), len, 0, store);
        // SAFETY: two live slices of equal length; `k` runs here; the batch fences.
        let sum = unsafe { csum_copy_unfenced_on(k, dst.as_mut_ptr(), src.as_ptr(), len, store) };
        self.owe(store);
        sum
    }

    /// Gathers from `src` into `dst` ([`iter::copy_from_iter`] in the batch's mode, without the
    /// fence); returns the bytes copied.
    #[inline]
    pub fn copy_from_iter(&self, dst: &'scope mut [u8], src: &mut Source<'_>) -> usize {
        let len = dst.len().min(src.count());
        self.ahead(
            dst.as_mut_ptr(),
            len,
            0,
            self.mode
                .resolve(len, &self.p.copy_below, self.p.tuning.flush),
        );
        let (n, store) = iter::copy_from_iter_unfenced(self.p, self.k, dst, src, self.mode);
        self.owe(store);
        n
    }

    /// Scatters `src` into `dst`'s segments ([`iter::copy_to_iter`] without the fence); returns
    /// the bytes copied. The segments stay borrowed until the batch has fenced.
    #[inline]
    pub fn copy_to_iter(&self, src: &[u8], dst: &mut Dest<'scope>) -> usize {
        let (n, store) = iter::copy_to_iter_unfenced(self.p, self.k, src, dst, self.mode);
        self.owe(store);
        n
    }

    /// Copies up to `len` bytes from cursor to cursor ([`iter::copy_iter`] without the fence).
    #[inline]
    pub fn copy_iter(&self, dst: &mut Dest<'scope>, src: &mut Source<'_>, len: usize) -> usize {
        let (n, store) = iter::copy_iter_unfenced(self.p, self.k, dst, src, len, self.mode);
        self.owe(store);
        n
    }

    /// Zeroes the next `len` bytes of `dst` ([`iter::zero_iter`] without the fence).
    #[inline]
    pub fn zero_iter(&self, dst: &mut Dest<'scope>, len: usize) -> usize {
        let (n, store) = iter::zero_iter_unfenced(self.p, self.k, dst, len, self.mode);
        self.owe(store);
        n
    }

    /// Gathers from `src` into `dst` while summing ([`net::csum_and_copy_from_iter`] without
    /// the fence); returns `(bytes copied, partial sum)`.
    #[inline]
    pub fn csum_and_copy_from_iter(
        &self,
        dst: &'scope mut [u8],
        src: &mut Source<'_>,
    ) -> (usize, u32) {
        let len = dst.len().min(src.count());
        self.ahead(
            dst.as_mut_ptr(),
            len,
            0,
            self.mode
                .resolve(len, &self.p.copy_below, self.p.tuning.flush),
        );
        // SAFETY: an exclusive slice, so it overlaps no source segment; the batch fences.
        let (n, sum, store) = unsafe {
            net::csum_and_copy_from_iter_unfenced(
                self.p,
                self.k,
                dst.as_mut_ptr(),
                dst.len(),
                src,
                self.mode,
            )
        };
        self.owe(store);
        (n, sum)
    }

    /// Builds a transmit frame in `frame`, header and payload, each line written once
    /// ([`net::csum_frame_from_iter`] without the fence); returns `(payload bytes, payload
    /// partial sum)`. `header(header_bytes, payload_len, payload_sum)` runs inside the call.
    ///
    /// # Panics
    /// As [`net::csum_frame_from_iter`]: `head > frame.len()`.
    #[inline]
    pub fn csum_frame_from_iter(
        &self,
        frame: &'scope mut [u8],
        head: usize,
        src: &mut Source<'_>,
        header: impl FnOnce(&mut [u8], usize, u32),
    ) -> (usize, u32) {
        net::check_frame_head(frame.len(), head);
        let len = head + (frame.len() - head).min(src.count());
        let _ = self.ahead(
            frame.as_mut_ptr(),
            len,
            head,
            self.mode
                .resolve(len, &self.p.copy_below, self.p.tuning.flush),
        );
        // SAFETY: an exclusive slice, so it overlaps no source segment; `head` checked; the
        // batch fences.
        let (n, sum, store) = unsafe {
            net::csum_frame_from_iter_unfenced(
                (self.p, self.k),
                frame.as_mut_ptr(),
                frame.len(),
                head,
                src,
                self.mode,
                header,
            )
        };
        self.owe(store);
        (n, sum)
    }

    /// Scatters `src` into `dst` while summing ([`net::csum_and_copy_to_iter`] without the
    /// fence); returns `(bytes copied, partial sum)`.
    #[inline]
    pub fn csum_and_copy_to_iter(&self, src: &[u8], dst: &mut Dest<'scope>) -> (usize, u32) {
        let (n, sum, store) =
            net::csum_and_copy_to_iter_unfenced(self.p, self.k, src, dst, self.mode);
        self.owe(store);
        (n, sum)
    }
}

mod moves;
#[cfg(all(test, feature = "std"))]
mod tests;
